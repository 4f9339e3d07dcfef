"""The normal model with a known sd (``normal_known_sd``): n Normal(mu, sd) records clamped to [lo, hi],
a Normal(prior_mean, prior_sd) prior, s = the clamped sum.

:mod:`engine.models` is the registry that names every model, with the table of their records,
statistics, priors and sensitivities.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
from scipy import stats

from ..core.validation import MODEL_NUMBER_RANGE, fail, finite, known_keys, model_positive, record_field

__all__ = ["NormalKnownSD", "INFO", "KEYS", "build"]

#: Parameters, prior keys and their defaults (for the spec loader, the README and the app).
INFO = {"params": ("mu",),
        "prior": {"sd": 1.0, "lo": -3.0, "hi": 3.0, "prior_mean": 0.0, "prior_sd": 10.0}}
#: The [model] keys besides n.
KEYS = {"sd", "lo", "hi", "prior_mean", "prior_sd"}


@dataclass(frozen=True)
class NormalKnownSD:
    """n Normal(mu, sd) records clamped to [lo, hi]; Normal(prior_mean, prior_sd) prior; s = clamped sum."""

    n: int
    sd: float = 1.0
    lo: float = -3.0
    hi: float = 3.0
    prior_mean: float = 0.0
    prior_sd: float = 10.0

    name = "normal_known_sd"
    param_names = ("mu",)
    stat_dim = 1
    k = None
    integer_statistic = False
    support = (-np.inf, np.inf)

    def default_sensitivity(self, l2: bool = False) -> float:
        return self.hi - self.lo

    @property
    def true_sensitivity(self) -> float | None:
        return self.hi - self.lo

    @property
    def statistic_range(self):
        return np.array([self.n * self.lo]), np.array([self.n * self.hi])

    def sample_prior(self, rng, size):
        return rng.normal(self.prior_mean, self.prior_sd, size=size)[:, None]

    def sample_records(self, rng, theta, n=None):
        return rng.normal(float(theta[0]), self.sd, size=n or self.n)

    def statistic(self, records):
        return np.array([float(np.sum(np.clip(records, self.lo, self.hi)))])

    def check_records(self, records, field="records"):
        r = np.asarray(records, dtype=float)
        if not np.all(np.isfinite(r)):
            i = int(np.flatnonzero(~np.isfinite(r))[0])
            fail(record_field(field, i), r[i].item(), "normal_known_sd records must be finite numbers")
        return r

    def suff(self, records):
        return np.array([float(np.sum(records))])

    def posterior_params(self, suff):
        prec = 1.0 / self.prior_sd**2 + self.n / self.sd**2
        mean = (self.prior_mean / self.prior_sd**2 + float(suff[0]) / self.sd**2) / prec
        return mean, 1.0 / math.sqrt(prec)

    def posterior_sample(self, rng, suff, size):
        m, s = self.posterior_params(suff)
        return rng.normal(m, s, size=size)[:, None]

    def posterior_marginals(self, suff):
        m, s = self.posterior_params(suff)
        return {"mu": stats.norm(m, s)}

    def project(self, s_dp):
        lo, hi = self.statistic_range
        return np.clip(np.asarray(s_dp, float), lo, hi)

    def sample_statistic(self, rng, theta):
        mu = theta[:, 0]
        out = np.empty(mu.size)
        chunk = max(1, 2_000_000 // self.n)
        for i in range(0, mu.size, chunk):
            m = mu[i : i + chunk]
            x = rng.normal(m[:, None], self.sd, size=(m.size, self.n))
            out[i : i + chunk] = np.clip(x, self.lo, self.hi).sum(axis=1)
        return out[:, None]

    def theta_from(self, value, field="data.simulate"):
        known_keys(field, value, ("mu",))
        v = value.get("mu")
        if v is None:
            fail(field, dict(value), "normal_known_sd needs mu")
        return np.array([finite(f"{field}.mu", v)])

    def prior_dict(self):
        return {"sd": self.sd, "lo": self.lo, "hi": self.hi, "prior_mean": self.prior_mean, "prior_sd": self.prior_sd}


def _location(field: str, value) -> float:
    """A bound or the prior mean: a finite number within +-MODEL_NUMBER_RANGE[1], as sd and prior_sd are bounded.
    Beyond it the clamped sums, the default sensitivity max(|lo|, |hi|) and the exact method's quadrature over
    (x - prior_mean)^2 overflow (prior_mean = 1e300 gave scipy overflow warnings and sd = null)."""
    v = finite(field, value)
    top = MODEL_NUMBER_RANGE[1]
    if abs(v) > top:
        fail(field, value, f"must be a number from {-top:g} to {top:g} (beyond them the posterior under- or "
             "overflows in double precision)")
    return v


def build(n: int, params: Mapping[str, Any]) -> NormalKnownSD:
    """The model from its [model] table (``n`` already checked by :func:`engine.models.make_model`)."""
    d = INFO["prior"]
    sd = model_positive("model.sd", params.get("sd", d["sd"]))
    lo = _location("model.lo", params.get("lo", d["lo"]))
    hi = _location("model.hi", params.get("hi", d["hi"]))
    if not hi > lo:
        fail("model.hi", hi, f"must be greater than model.lo = {lo}")
    prior_mean = _location("model.prior_mean", params.get("prior_mean", d["prior_mean"]))
    return NormalKnownSD(n=n, sd=sd, lo=lo, hi=hi, prior_mean=prior_mean,
                         prior_sd=model_positive("model.prior_sd", params.get("prior_sd", d["prior_sd"])))
