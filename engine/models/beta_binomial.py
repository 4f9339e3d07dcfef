"""The beta-binomial model (``beta_binomial``): n Bernoulli(theta) records, a Beta(a, b) prior, s = the
number of ones.

:mod:`engine.models` is the registry that names every model, with the table of their records,
statistics, priors and sensitivities.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
from scipy import special, stats

from ..core.validation import fail, finite, known_keys, model_positive, record_field

__all__ = ["BetaBinomial", "INFO", "KEYS", "build", "log_beta_binomial_pmf"]

#: Parameters, prior keys and their defaults (for the spec loader, the README and the app).
INFO = {"params": ("theta",), "prior": {"a": 1.0, "b": 1.0}}
#: The [model] keys besides n.
KEYS = {"a", "b"}


@dataclass(frozen=True)
class BetaBinomial:
    """n Bernoulli(theta) records with a Beta(a, b) prior; s = number of ones."""

    n: int
    a: float = 1.0
    b: float = 1.0

    name = "beta_binomial"
    param_names = ("theta",)
    #: each parameter's range, for drawing its density (figures.kde)
    param_support = {"theta": (0.0, 1.0)}
    stat_dim = 1
    k = 2
    integer_statistic = True
    support = (0.0, 1.0)

    def default_sensitivity(self, l2: bool = False) -> float:
        return 1.0

    @property
    def statistic_range(self):
        return np.array([0.0]), np.array([float(self.n)])

    @property
    def true_sensitivity(self) -> float | None:
        return 1.0

    def sample_prior(self, rng, size):
        return rng.beta(self.a, self.b, size=size)[:, None]

    def sample_records(self, rng, theta, n=None):
        return (rng.random(n or self.n) < float(theta[0])).astype(np.int64)

    def statistic(self, records):
        return np.array([float(np.sum(records))])

    def categories(self, records):
        return np.asarray(records, dtype=np.int64)

    def check_records(self, records, field="records"):
        r = np.asarray(records, dtype=float)
        bad = ~np.isin(r, (0.0, 1.0))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            fail(record_field(field, i), r[i].item(), "beta_binomial records must be 0 or 1")
        return r.astype(np.int64)

    def suff(self, records):
        return np.array([float(np.sum(records))])

    def posterior_params(self, suff):
        s = float(suff[0])
        return self.a + s, self.b + self.n - s

    def posterior_sample(self, rng, suff, size):
        al, be = self.posterior_params(suff)
        return rng.beta(al, be, size=size)[:, None]

    def posterior_marginals(self, suff):
        return {"theta": stats.beta(*self.posterior_params(suff))}

    def project(self, s_dp):
        """The nearest value of the statistic's support [0, n] (naive method)."""
        return np.clip(np.asarray(s_dp, float), 0.0, self.n)

    def sample_statistic(self, rng, theta):
        return rng.binomial(self.n, theta[:, 0])[:, None].astype(float)

    def theta_from(self, value: Mapping[str, Any], field="data.simulate"):
        known_keys(field, value, ("theta",))
        v = value.get("theta")
        if v is None:
            fail(field, dict(value), "beta_binomial needs theta")
        v = finite(f"{field}.theta", v)
        if not 0.0 <= v <= 1.0:
            fail(f"{field}.theta", v, "must be in [0, 1]")
        return np.array([v])

    def prior_dict(self):
        return {"a": self.a, "b": self.b}


def build(n: int, params: Mapping[str, Any]) -> BetaBinomial:
    """The model from its [model] table (``n`` already checked by :func:`engine.models.make_model`)."""
    return BetaBinomial(n=n, a=model_positive("model.a", params.get("a", 1.0)),
                        b=model_positive("model.b", params.get("b", 1.0)))


def log_beta_binomial_pmf(s, n, a, b):
    """log BetaBinomial(s; n, a, b), the prior predictive of the number of ones."""
    s = np.asarray(s, float)
    return (special.gammaln(n + 1) - special.gammaln(s + 1) - special.gammaln(n - s + 1)
            + special.betaln(a + s, b + n - s) - special.betaln(a, b))
