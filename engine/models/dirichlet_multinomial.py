"""The Dirichlet-multinomial model (``dirichlet_multinomial``): n categorical records over k cells, a
Dirichlet(alpha) prior, s = the k cell counts.

:mod:`engine.models` is the registry that names every model, with the table of their records,
statistics, priors and sensitivities.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
from scipy import stats

from ..core.validation import fail, known_keys, number_list, record_field
from .base import Marginal

__all__ = ["DirichletMultinomial", "INFO", "KEYS", "build"]

#: Parameters, prior keys and their defaults (for the spec loader, the README and the app).
INFO = {"params": ("p",), "prior": {"alpha": [1.0, 1.0, 1.0]}}
#: The [model] keys besides n.
KEYS = {"alpha"}


@dataclass(frozen=True)
class DirichletMultinomial:
    """n categorical records over k cells, Dirichlet(alpha) prior; s = the k cell counts."""

    n: int
    alpha: tuple = (1.0, 1.0, 1.0)

    name = "dirichlet_multinomial"
    integer_statistic = True
    support = (0.0, 1.0)

    @property
    def k(self) -> int:
        return len(self.alpha)

    @property
    def stat_dim(self) -> int:
        return self.k

    @property
    def param_names(self):
        return tuple(f"p[{j}]" for j in range(self.k))

    @property
    def param_support(self):
        """Each parameter's range, for drawing its density (figures.kde): a probability's [0, 1]."""
        return {name: (0.0, 1.0) for name in self.param_names}

    def default_sensitivity(self, l2: bool = False) -> float:
        """Replacing one record moves one count down and another up: L1 = 2, L2 = sqrt(2)."""
        return math.sqrt(2.0) if l2 else 2.0

    @property
    def true_sensitivity(self) -> float | None:
        return 2.0

    @property
    def statistic_range(self):
        return np.zeros(self.k), np.full(self.k, float(self.n))

    def sample_prior(self, rng, size):
        return rng.dirichlet(np.asarray(self.alpha), size=size)

    def sample_records(self, rng, theta, n=None):
        return rng.choice(self.k, size=n or self.n, p=np.asarray(theta) / np.sum(theta)).astype(np.int64)

    def statistic(self, records):
        return np.bincount(np.asarray(records, dtype=np.int64), minlength=self.k).astype(float)

    def categories(self, records):
        return np.asarray(records, dtype=np.int64)

    def check_records(self, records, field="records"):
        r = np.asarray(records, dtype=float)
        bad = (r < 0) | (r > self.k - 1) | (np.round(r) != r)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            fail(record_field(field, i), r[i].item(),
                 f"dirichlet_multinomial records must be category indices 0..{self.k - 1}")
        return r.astype(np.int64)

    def suff(self, records):
        return self.statistic(records)

    def posterior_sample(self, rng, suff, size):
        return rng.dirichlet(np.asarray(self.alpha) + np.asarray(suff, float), size=size)

    def posterior_marginals(self, suff):
        a = np.asarray(self.alpha) + np.asarray(suff, float)
        return {f"p[{j}]": Marginal(stats.beta, a[j], a.sum() - a[j]) for j in range(self.k)}

    def project(self, s_dp):
        """Euclidean projection of s_dp onto {c >= 0, sum c = n} (Duchi et al. 2008)."""
        v = np.asarray(s_dp, float)
        u = np.sort(v)[::-1]
        css = np.cumsum(u) - self.n
        idx = np.arange(1, v.size + 1)
        rho = np.nonzero(u - css / idx > 0)[0][-1]
        tau = css[rho] / (rho + 1.0)
        return np.maximum(v - tau, 0.0)

    def sample_statistic(self, rng, theta):
        return rng.multinomial(self.n, theta).astype(float)

    def theta_from(self, value, field="data.simulate"):
        known_keys(field, value, ("p",))
        v = value.get("p")
        if v is None:
            fail(field, dict(value), f"dirichlet_multinomial needs p = [..] with {self.k} probabilities")
        p = number_list(f"{field}.p", v, self.k)
        if (p < 0).any() or abs(p.sum() - 1.0) > 1e-6:
            fail(f"{field}.p", list(v), "must be non-negative and sum to 1")
        return p / p.sum()

    def prior_dict(self):
        return {"alpha": list(self.alpha)}


def build(n: int, params: Mapping[str, Any]) -> DirichletMultinomial:
    """The model from its [model] table (``n`` already checked by :func:`engine.models.make_model`)."""
    alpha = number_list("model.alpha", params.get("alpha", [1.0, 1.0, 1.0]))
    if alpha.size < 2 or alpha.size > 64 or (alpha <= 0).any():
        fail("model.alpha", params.get("alpha"), "must be a list of 2 to 64 numbers > 0 (one per cell)")
    return DirichletMultinomial(n=n, alpha=tuple(float(a) for a in alpha))
