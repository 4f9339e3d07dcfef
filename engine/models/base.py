"""What the models share: the largest n, and the check of multi-column records."""
from __future__ import annotations

import numpy as np

from ..core.data import MAX_RECORDS
from ..core.validation import fail

__all__ = ["MAX_N", "dirichlet_means", "record_rows"]

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


def dirichlet_means(a) -> np.ndarray:
    """The means of Dirichlet(a)'s Beta(a_j, A - a_j) marginals (A = sum a), in scipy's own arithmetic
    a_j / (a_j + (A - a_j)), so bitwise ``stats.beta(a_j, A - a_j).mean()``."""
    a = np.asarray(a, float)
    return a / (a + (a.sum() - a))
