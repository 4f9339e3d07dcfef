"""The Poisson-gamma model (``poisson_gamma``): n Poisson(lam) records, a Gamma(alpha, rate beta) prior,
s = the sum of the records clamped at ``upper``.

:mod:`engine.models` is the registry that names every model, with the table of their records,
statistics, priors and sensitivities.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
from scipy import stats

from ..core.validation import fail, known_keys, model_positive, positive, positive_int, record_field

__all__ = ["PoissonGamma", "INFO", "KEYS", "build"]

#: Parameters, prior keys and their defaults (for the spec loader, the README and the app).
INFO = {"params": ("lam",), "prior": {"alpha": 1.0, "beta": 1.0, "upper": None}}
#: The [model] keys besides n.
KEYS = {"alpha", "beta", "upper"}


@dataclass(frozen=True)
class PoissonGamma:
    """n Poisson(lam) records, Gamma(alpha, rate beta) prior; s = sum of records clamped at ``upper``."""

    n: int
    alpha: float = 1.0
    beta: float = 1.0
    upper: int | None = None

    name = "poisson_gamma"
    param_names = ("lam",)
    #: each parameter's range, for drawing its density (figures.kde)
    param_support = {"lam": (0.0, float("inf"))}
    stat_dim = 1
    k = None
    integer_statistic = True
    support = (0.0, np.inf)

    def default_sensitivity(self, l2: bool = False) -> float:
        return float(self.upper) if self.upper is not None else 1.0

    @property
    def true_sensitivity(self) -> float | None:
        return float(self.upper) if self.upper is not None else None

    @property
    def statistic_range(self):
        hi = np.inf if self.upper is None else float(self.n * self.upper)
        return np.array([0.0]), np.array([hi])

    def sample_prior(self, rng, size):
        return rng.gamma(self.alpha, 1.0 / self.beta, size=size)[:, None]

    def sample_records(self, rng, theta, n=None):
        return rng.poisson(float(theta[0]), size=n or self.n).astype(np.int64)

    def _clamp(self, records):
        r = np.asarray(records)
        return r if self.upper is None else np.minimum(r, self.upper)

    def statistic(self, records):
        return np.array([float(np.sum(self._clamp(records)))])

    def check_records(self, records, field="records"):
        r = np.asarray(records, dtype=float)
        bad = (r < 0) | (np.round(r) != r)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            fail(record_field(field, i), r[i].item(), "poisson_gamma records must be whole numbers >= 0")
        return r.astype(np.int64)

    def suff(self, records):
        return np.array([float(np.sum(records))])

    def posterior_params(self, suff):
        return self.alpha + float(suff[0]), self.beta + self.n

    def posterior_sample(self, rng, suff, size):
        sh, rate = self.posterior_params(suff)
        return rng.gamma(sh, 1.0 / rate, size=size)[:, None]

    def posterior_marginals(self, suff):
        sh, rate = self.posterior_params(suff)
        return {"lam": stats.gamma(sh, scale=1.0 / rate)}

    def project(self, s_dp):
        lo, hi = self.statistic_range
        return np.clip(np.asarray(s_dp, float), lo, hi)

    def sample_statistic(self, rng, theta):
        lam = theta[:, 0]
        if self.upper is None:
            return rng.poisson(self.n * lam)[:, None].astype(float)
        # Sum of n clamped Poisson records: counts of each value 0..upper-1 and of ">= upper"
        # are multinomial(n, pmf), so s = sum_j j N_j + upper N_upper.
        j = np.arange(self.upper)
        pm = stats.poisson.pmf(j[None, :], lam[:, None])
        tail = np.clip(1.0 - pm.sum(axis=1, keepdims=True), 0.0, 1.0)
        pv = np.concatenate([pm, tail], axis=1)
        pv /= pv.sum(axis=1, keepdims=True)
        counts = rng.multinomial(self.n, pv)
        vals = np.append(j, self.upper).astype(float)
        return (counts @ vals)[:, None]

    def theta_from(self, value, field="data.simulate"):
        known_keys(field, value, ("lam",))
        v = value.get("lam")
        if v is None:
            fail(field, dict(value), "poisson_gamma needs lam")
        return np.array([positive(f"{field}.lam", v)])

    def prior_dict(self):
        d = {"alpha": self.alpha, "beta": self.beta}
        if self.upper is not None:
            d["upper"] = self.upper
        return d


def build(n: int, params: Mapping[str, Any]) -> PoissonGamma:
    """The model from its [model] table (``n`` already checked by :func:`engine.models.make_model`)."""
    upper = params.get("upper")
    if upper is not None:
        upper = positive_int("model.upper", upper, 1, 100_000)
    return PoissonGamma(n=n, alpha=model_positive("model.alpha", params.get("alpha", 1.0)),
                        beta=model_positive("model.beta", params.get("beta", 1.0)), upper=upper)
