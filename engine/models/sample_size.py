"""An unknown sample size: its prior, the mechanism that releases it, and the plug-in size.

Under *unbounded* differential privacy (neighbouring databases differ by adding or deleting one
record) the number of records n is itself private. The curator releases a noisy size
n_dp = n + u_n next to s_dp = s(x) + u, and the analysis treats n as a parameter with a prior
(paper 002, Sec. 2.3):

    p(theta, n, x | s_dp, n_dp) ∝ p(theta) p(n) prod_{i<=n} f(x_i | theta) eta(s_dp | s(x)) eta_n(n_dp | n).

Priors on n (``model.n_prior``), on {0, 1, 2, ...}:

``{ name = "poisson", mean = mu }``
    p(n) = e^-mu mu^n / n!; p(n + 1) / p(n) = mu / (n + 1).
``{ name = "negative_binomial", mean = mu, dispersion = r }``
    p(n) = Gamma(n + r) / (Gamma(r) n!) q^n (1 - q)^r with q = mu / (mu + r): mean mu, variance
    mu + mu^2 / r (r -> infinity gives the Poisson); p(n + 1) / p(n) = q (n + r) / (n + 1).

The size mechanism (``[n_mechanism]``, the keys of ``[mechanism]``) is additive noise on n with
sensitivity 1 by default (adding or deleting a record moves n by one). Methods that need a known n
run at the naive plug-in n = round(n_dp), clamped to [1, 10^7] (:func:`plug_in_n`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
from scipy import stats

from ..core.validation import fail, finite, positive
from ..mechanisms import make_mechanism
from .base import MAX_N

__all__ = ["SizePrior", "UnknownSize", "make_size_prior", "check_n_prior", "make_size_mechanism", "plug_in_n",
           "plug_in_total", "check_n_dp", "PRIOR_NAMES", "MAX_PRIOR_MEAN", "UNKNOWN_N_MODELS"]

PRIOR_NAMES = ("poisson", "negative_binomial")
MAX_PRIOR_MEAN = 1_000_000.0
#: The models that take an unknown n (rjmcmc, mcem and the plug-in baselines; the Dirichlet-multinomial as a histogram
#: whose total is private, paper 002 App. B, answered by Exact).
UNKNOWN_N_MODELS = ("beta_binomial", "poisson_gamma", "normal_known_sd", "dirichlet_multinomial")
_SIZE_MECHANISMS = ("laplace", "gaussian", "discrete_laplace", "discrete_gaussian")


@dataclass(frozen=True)
class SizePrior:
    """Prior on the number of records: Poisson(mean) or negative binomial(mean, dispersion)."""

    name: str
    mean: float
    dispersion: float | None = None

    def __post_init__(self):  # made directly (engine.SizePrior) as well as from a spec's table (make_size_prior)
        if self.name not in PRIOR_NAMES:
            fail("SizePrior.name", self.name, "must be one of " + ", ".join(PRIOR_NAMES))
        if positive("SizePrior.mean", self.mean) > MAX_PRIOR_MEAN:
            fail("SizePrior.mean", self.mean, f"must be at most {MAX_PRIOR_MEAN:,.0f}")
        if self.name == "negative_binomial":
            positive("SizePrior.dispersion", self.dispersion)
        elif self.dispersion is not None:
            fail("SizePrior.dispersion", self.dispersion, "is for negative_binomial only")

    @property
    def code(self) -> int:
        """0 = Poisson, 1 = negative binomial (the compiled kernels' switch)."""
        return 0 if self.name == "poisson" else 1

    @property
    def sd(self) -> float:
        var = self.mean if self.name == "poisson" else self.mean + self.mean**2 / self.dispersion
        return math.sqrt(var)

    def _dist(self):
        if self.name == "poisson":
            return stats.poisson(self.mean)
        r = self.dispersion
        return stats.nbinom(r, r / (r + self.mean))

    def log_pmf(self, n) -> np.ndarray:
        return self._dist().logpmf(np.asarray(n))

    def sample(self, rng: np.random.Generator, size=None):
        if self.name == "poisson":
            return rng.poisson(self.mean, size=size)
        r = self.dispersion
        return rng.negative_binomial(r, r / (r + self.mean), size=size)

    def quantile(self, q: float) -> int:
        return int(self._dist().ppf(q))

    def log_ratio_up(self, n) -> np.ndarray:
        """log p(n + 1) - log p(n) for n >= 0 (what an add move's acceptance ratio uses)."""
        n = np.asarray(n, dtype=float)
        if self.name == "poisson":
            return math.log(self.mean) - np.log(n + 1.0)
        r = self.dispersion
        return np.log(n + r) - np.log(n + 1.0) + math.log(self.mean / (self.mean + r))

    def as_dict(self) -> dict:
        d = {"name": self.name, "mean": self.mean}
        if self.dispersion is not None:
            d["dispersion"] = self.dispersion
        return d


@dataclass(frozen=True)
class UnknownSize:
    """What an unknown-n problem adds: the prior on n, the size mechanism and the released n_dp."""

    prior: SizePrior
    mechanism: Any
    n_dp: float | None

    @property
    def plug_in(self) -> int | None:
        return None if self.n_dp is None else plug_in_n(self.n_dp)

    def log_likelihood(self, n) -> np.ndarray:
        """log eta_n(n_dp | n) for each n (normalised); 0 when no size is released."""
        if self.mechanism is None:
            return np.zeros(np.shape(n))
        return self.mechanism.noise_log_prob(self.n_dp - np.asarray(n, dtype=float))


def plug_in_n(n_dp: float) -> int:
    """The naive plug-in size round(n_dp), clamped to [1, 10^7]."""
    return int(min(max(round(finite("n_dp", n_dp)), 1), MAX_N))


def plug_in_total(s_dp) -> int:
    """A histogram's plug-in size: the released cells' total (negative cells as 0), clamped to [1, 10^7]."""
    return plug_in_n(float(np.sum(np.maximum(np.asarray(s_dp, dtype=float), 0.0))))


def make_size_prior(value: Any) -> SizePrior:
    """Validate ``model.n_prior`` (a table with name, mean and, for negative_binomial, dispersion)."""
    field = "model.n_prior"
    if not isinstance(value, Mapping):
        fail(field, value, 'must be a table: { name = "poisson", mean = .. } or '
             '{ name = "negative_binomial", mean = .., dispersion = .. }')
    name = value.get("name")
    if name not in PRIOR_NAMES:
        fail(f"{field}.name", name, "must be one of " + ", ".join(PRIOR_NAMES))
    allowed = {"name", "mean"} | ({"dispersion"} if name == "negative_binomial" else set())
    extra = set(value) - allowed
    if extra:
        key = sorted(extra)[0]
        fail(f"{field}.{key}", value[key], f"is not a key of the {name} prior; allowed: " + ", ".join(sorted(allowed)))
    if "mean" not in value:
        fail(f"{field}.mean", None, "is required: the prior mean of n, a number > 0")
    mean = positive(f"{field}.mean", value["mean"])
    if mean > MAX_PRIOR_MEAN:
        fail(f"{field}.mean", value["mean"], f"must be at most {MAX_PRIOR_MEAN:,.0f}")
    if name == "poisson":
        return SizePrior("poisson", mean)
    if "dispersion" not in value:
        fail(f"{field}.dispersion", None, "is required for negative_binomial: r > 0 (variance = mean + mean^2 / r)")
    return SizePrior("negative_binomial", mean, positive(f"{field}.dispersion", value["dispersion"]))


def check_n_prior(value: Any, model_name: str) -> SizePrior:
    """Validate ``model.n_prior`` for the model ``model_name``: the prior itself (:func:`make_size_prior`), then that
    the model can treat its n as unknown. The spec and the app's sidebar both refuse it in these words."""
    prior = make_size_prior(value)
    if model_name not in UNKNOWN_N_MODELS:
        fail("model.n_prior", value, f"is for an unknown n, which {model_name} does not support (its n must be "
             "known); the models that do: " + ", ".join(UNKNOWN_N_MODELS))
    return prior


def make_size_mechanism(table: Any):
    """Validate ``[n_mechanism]`` (the keys of [mechanism] but clip; sensitivity defaults to 1)."""
    if not isinstance(table, Mapping):
        fail("n_mechanism", table, "must be a table with name and a noise scale or budget")
    name = table.get("name")
    if name not in _SIZE_MECHANISMS:
        fail("n_mechanism.name", name, "must be one of " + ", ".join(_SIZE_MECHANISMS))
    if "clip" in table:  # the size's likelihood (rjmcmc's compiled kernel, histogram_total) is the unclipped law
        fail("n_mechanism.clip", table["clip"], "is not supported on the size's noise: the samplers' likelihood of "
             "n_dp is the unclipped noise law (a clipped release has point masses at its bounds that they do not "
             "model); leave clip out and give n_dp as released before any clipping (it may be negative)")
    params = {k: v for k, v in table.items() if k != "name"}
    try:
        return make_mechanism(name, params, default_sensitivity=1.0)
    except ValueError as exc:  # the same checks as [mechanism], reported against [n_mechanism]
        msg = str(exc)
        raise ValueError("n_" + msg if msg.startswith("mechanism") else msg) from None


def check_n_dp(mechanism, value: Any) -> float:
    """``data.n_dp``: a finite number (negative is fine: it is noise), whole for discrete noise."""
    if value is None:
        fail("data.n_dp", None, "is required with model.n_prior: the released noisy number of records")
    v = finite("data.n_dp", value)
    if getattr(mechanism, "discrete", False) and not float(v).is_integer():
        fail("data.n_dp", value, f"{mechanism.name} releases whole numbers; n_dp must be an integer")
    sd = float(getattr(mechanism, "noise_sd", 0.0))
    if v > MAX_N + 20.0 * sd:  # n is at most MAX_N: a release this far above it is not noise on a count
        fail("data.n_dp", value, f"lies more than 20 noise sds ({sd:.3g} each) above the largest n the engine "
             f"analyses ({MAX_N:,})")
    return v
