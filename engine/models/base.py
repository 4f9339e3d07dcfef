"""What the models share: the largest n, and the check of multi-column records."""
from __future__ import annotations

import numpy as np

from ..core.data import MAX_RECORDS
from ..core.validation import fail

__all__ = ["MAX_N", "Marginal", "record_rows"]

#: The largest n: the one limit of :data:`engine.core.data.MAX_RECORDS` (a CSV's records obey it too).
MAX_N = MAX_RECORDS


def record_rows(records, cols, field: str, what: str) -> np.ndarray:
    """Multi-column records as a float array with one row per record and one column per name in
    ``cols``; anything else is a ValueError naming ``field`` ("must be rows of 3 <what> (x1, x2, y)")."""
    allowed = f"must be rows of {len(cols)} {what} ({', '.join(cols)})"
    try:
        r = np.asarray(records, dtype=float)
    except (TypeError, ValueError):
        fail(field, records, allowed)
    if r.ndim != 2 or r.shape[1] != len(cols) or r.shape[0] == 0:
        fail(field, records.tolist() if isinstance(records, np.ndarray) and r.size <= 50 else records, allowed)
    return r


class Marginal:
    """``dist(*args)``, scipy's frozen distribution, without freezing it: freezing builds a new distribution object
    and formats its docstring, about 1 ms, which for the log-linear model's 80 Beta marginals was half of a naive
    run (160 ms) and 15 of the 37 s of its quick study (the replicates' confidential means). The methods a marginal is asked for (cdf, ppf, pdf, logpdf, sf, isf, mean, std, var, median,
    interval, support) call scipy's shared ``dist`` with the same arguments, as the frozen one does, so they give
    the same numbers; anything else freezes it once and asks that."""

    __slots__ = ("dist", "args", "_frozen")

    def __init__(self, dist, *args):
        self.dist, self.args, self._frozen = dist, args, None

    def cdf(self, x):
        return self.dist.cdf(x, *self.args)

    def ppf(self, q):
        return self.dist.ppf(q, *self.args)

    def pdf(self, x):
        return self.dist.pdf(x, *self.args)

    def logpdf(self, x):
        return self.dist.logpdf(x, *self.args)

    def sf(self, x):
        return self.dist.sf(x, *self.args)

    def isf(self, q):
        return self.dist.isf(q, *self.args)

    def mean(self):
        return self.dist.mean(*self.args)

    def std(self):
        return self.dist.std(*self.args)

    def var(self):
        return self.dist.var(*self.args)

    def median(self):
        return self.dist.median(*self.args)

    def interval(self, confidence):
        return self.dist.interval(confidence, *self.args)

    def support(self):
        return self.dist.support(*self.args)

    def __getattr__(self, name):  # rvs, moment, entropy, ...: the frozen distribution's own
        if self._frozen is None:
            self._frozen = self.dist(*self.args)
        return getattr(self._frozen, name)

    def __repr__(self):
        return f"Marginal({self.dist.name}{self.args})"
