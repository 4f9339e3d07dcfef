"""Privacy mechanisms: frozen records that know their noise distribution and their guarantee.

Additive mechanisms release ``s_dp = s + u`` with ``u`` drawn coordinate-wise i.i.d.:

============================  ===========================  ==============================
name                          noise (``scale`` meaning)     guarantee
============================  ===========================  ==============================
``laplace``                   Lap(0, b), density            pure epsilon-DP, epsilon = Delta_1 / b
                              exp(-|u|/b) / (2b)
``gaussian``                  N(0, sigma^2)                 rho-zCDP, rho = Delta_2^2 / (2 sigma^2);
                                                            (epsilon, delta)-DP by the analytic
                                                            Gaussian mechanism (Balle & Wang 2018)
``discrete_laplace``          pmf exp(-|k|/t) / Z,          pure epsilon-DP, epsilon = Delta_1 / t
                              Z = coth(1 / (2t))
``discrete_gaussian``         pmf exp(-k^2/(2 sigma^2))/Z   rho-zCDP, rho = Delta_2^2 / (2 sigma^2)
                                                            (Canonne, Kamath & Steinke 2020)
============================  ===========================  ==============================

``randomized_response`` is per record: record category ``x`` is released as ``z`` with
probability ``Q[x, z]``; it is pure epsilon-DP with
``epsilon = max_z log(max_x Q[x, z] / min_x Q[x, z])``.

Conversions between noise scale and budget are one function each way
(:func:`scale_from_budget`, :func:`budget_from_scale`); :func:`make_mechanism` accepts either.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
from scipy import optimize, special

from .validation import fail, positive, positive_int, probability_open

__all__ = [
    "Laplace",
    "Gaussian",
    "DiscreteLaplace",
    "DiscreteGaussian",
    "RandomizedResponse",
    "MECHANISM_NAMES",
    "make_mechanism",
    "scale_from_budget",
    "budget_from_scale",
    "analytic_gaussian_sigma",
    "analytic_gaussian_epsilon",
    "discrete_laplace_log_pmf",
    "discrete_gaussian_log_normalizer",
    "sample_discrete_laplace",
    "sample_discrete_gaussian",
]

MECHANISM_NAMES = ("laplace", "gaussian", "discrete_laplace", "discrete_gaussian", "randomized_response")

# Kernel codes used by the compiled sweep: only the shape of log-density differences matters there.
ABS_KERNEL = 0  # log eta(r) = -|r| / scale + const  (laplace, discrete_laplace)
SQUARE_KERNEL = 1  # log eta(r) = -r^2 / (2 scale^2) + const  (gaussian, discrete_gaussian)


# --------------------------------------------------------------------------- conversions
def analytic_gaussian_delta(epsilon: float, sigma: float, sensitivity: float) -> float:
    """delta(epsilon) of the Gaussian mechanism (Balle & Wang 2018, Theorem 8).

    delta = Phi(D/(2 sigma) - eps sigma/D) - exp(eps) Phi(-D/(2 sigma) - eps sigma/D),
    evaluated with ``log_ndtr`` so that large epsilon does not overflow.
    """
    a = sensitivity / (2.0 * sigma)
    c = epsilon * sigma / sensitivity
    first = special.ndtr(a - c)
    second = math.exp(epsilon + special.log_ndtr(-a - c))
    return max(first - second, 0.0)


def analytic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float) -> float:
    """Smallest sigma for which the Gaussian mechanism is (epsilon, delta)-DP (Balle & Wang 2018)."""

    def excess(log_sigma: float) -> float:
        return analytic_gaussian_delta(epsilon, math.exp(log_sigma), sensitivity) - delta

    lo, hi = math.log(sensitivity) - 30.0, math.log(sensitivity) + 30.0
    return math.exp(optimize.brentq(excess, lo, hi, xtol=1e-12, rtol=1e-12))


def analytic_gaussian_epsilon(sigma: float, delta: float, sensitivity: float) -> float:
    """Smallest epsilon with delta(epsilon) <= delta for a given sigma (inverse of the above)."""
    if analytic_gaussian_delta(0.0, sigma, sensitivity) <= delta:
        return 0.0

    def excess(eps: float) -> float:
        return analytic_gaussian_delta(eps, sigma, sensitivity) - delta

    hi = 1.0
    while excess(hi) > 0:
        hi *= 2.0
    return optimize.brentq(excess, 0.0, hi, xtol=1e-12, rtol=1e-12)


def scale_from_budget(name: str, sensitivity: float, epsilon=None, rho=None, delta=None) -> float:
    """Noise scale (b, t or sigma) that spends exactly the given budget.

    laplace / discrete_laplace: b = t = Delta / epsilon.
    gaussian / discrete_gaussian with rho: sigma = Delta / sqrt(2 rho).
    gaussian with (epsilon, delta): the analytic Gaussian mechanism's sigma.
    """
    if name in ("laplace", "discrete_laplace"):
        return sensitivity / epsilon
    if name in ("gaussian", "discrete_gaussian"):
        if rho is not None:
            return sensitivity / math.sqrt(2.0 * rho)
        return analytic_gaussian_sigma(epsilon, delta, sensitivity)
    raise ValueError(f"mechanism.name = {name!r} has no noise scale")


def budget_from_scale(name: str, sensitivity: float, scale: float, delta=None) -> dict:
    """The budget a noise scale implies: {'epsilon': ..} or {'rho': .., ['epsilon', 'delta']}."""
    if name in ("laplace", "discrete_laplace"):
        return {"epsilon": sensitivity / scale}
    if name in ("gaussian", "discrete_gaussian"):
        out = {"rho": sensitivity**2 / (2.0 * scale**2)}
        if name == "gaussian" and delta is not None:
            out["epsilon"] = analytic_gaussian_epsilon(scale, delta, sensitivity)
            out["delta"] = delta
        return out
    raise ValueError(f"mechanism.name = {name!r} has no noise scale")


# --------------------------------------------------------------------------- discrete noise
def discrete_laplace_log_pmf(k, t: float):
    """log pmf of the discrete Laplace: -|k|/t - log coth(1/(2t)), computed as
    -|k|/t + log(-expm1(-1/t)) - log1p(exp(-1/t)) (stable for tiny and huge t)."""
    lam = 1.0 / t
    return -np.abs(k) * lam + np.log(-np.expm1(-lam)) - np.log1p(np.exp(-lam))


def discrete_gaussian_log_normalizer(sigma: float) -> float:
    """log Z, Z = sum_k exp(-k^2 / (2 sigma^2)).

    For sigma >= 1 the Poisson summation formula gives
    Z = sigma sqrt(2 pi) (1 + 2 sum_{m>=1} exp(-2 pi^2 sigma^2 m^2)); the correction is below
    1e-8 already at sigma = 1, so a few terms are exact to machine precision. For small sigma
    the direct sum converges after a handful of terms.
    """
    if sigma >= 1.0:
        m = np.arange(1, 6)
        corr = 2.0 * np.exp(-2.0 * math.pi**2 * sigma**2 * m**2).sum()
        return math.log(sigma) + 0.5 * math.log(2.0 * math.pi) + math.log1p(corr)
    k = np.arange(-60, 61)
    return float(special.logsumexp(-(k**2) / (2.0 * sigma**2)))


def sample_discrete_laplace(rng: np.random.Generator, t: float, size) -> np.ndarray:
    """Exact discrete Laplace draws as the difference of two geometric variables on {0, 1, ...}
    with success probability 1 - exp(-1/t)."""
    p = -math.expm1(-1.0 / t)
    return (rng.geometric(p, size=size) - rng.geometric(p, size=size)).astype(np.int64)


def sample_discrete_gaussian(rng: np.random.Generator, sigma: float, size) -> np.ndarray:
    """Exact discrete Gaussian draws (Canonne, Kamath & Steinke 2020, Algorithm 3).

    Propose Y ~ discrete Laplace with t = floor(sigma) + 1 and accept with probability
    exp(-(|Y| - sigma^2/t)^2 / (2 sigma^2)); repeat for the rejected positions.
    """
    shape = (size,) if isinstance(size, (int, np.integer)) else tuple(size)
    total = int(np.prod(shape))
    out = np.empty(total, dtype=np.int64)
    t = math.floor(sigma) + 1.0
    filled = 0
    while filled < total:
        need = total - filled
        m = max(int(need * 1.5) + 16, 64)
        y = sample_discrete_laplace(rng, t, m)
        log_acc = -((np.abs(y) - sigma**2 / t) ** 2) / (2.0 * sigma**2)
        keep = y[np.log(rng.random(m)) < log_acc][:need]
        out[filled : filled + keep.size] = keep
        filled += keep.size
    return out.reshape(shape)


# --------------------------------------------------------------------------- additive mechanisms
@dataclass(frozen=True)
class _Additive:
    """Coordinate-wise i.i.d. additive noise; subclasses define the noise law."""

    scale: float
    sensitivity: float = 1.0

    name = "additive"
    kernel = ABS_KERNEL
    discrete = False

    def noise_log_prob(self, r):
        raise NotImplementedError

    def sample_noise(self, rng: np.random.Generator, size):
        raise NotImplementedError

    def sample(self, rng: np.random.Generator, s) -> np.ndarray:
        """Release ``s + u`` for a statistic ``s`` (any shape)."""
        s = np.asarray(s, dtype=float)
        return s + self.sample_noise(rng, s.shape)

    def log_prob(self, s_dp, s) -> np.ndarray:
        """log eta(s_dp | s), summed over the last axis (the statistic's coordinates)."""
        r = np.asarray(s_dp, dtype=float) - np.asarray(s, dtype=float)
        return np.sum(self.noise_log_prob(r), axis=-1)

    @property
    def epsilon(self) -> float | None:
        """Pure-DP epsilon, or None for mechanisms without a pure guarantee."""
        return self.guarantee.get("epsilon") if self.guarantee.get("kind") == "pure" else None

    @property
    def noise_sd(self) -> float:
        raise NotImplementedError


@dataclass(frozen=True)
class Laplace(_Additive):
    """Laplace mechanism (Dwork et al. 2006): pure epsilon-DP with epsilon = Delta_1 / b."""

    name = "laplace"
    kernel = ABS_KERNEL

    def noise_log_prob(self, r):
        return -np.abs(r) / self.scale - math.log(2.0 * self.scale)

    def sample_noise(self, rng, size):
        return rng.laplace(0.0, self.scale, size=size)

    @property
    def guarantee(self) -> dict:
        return {"kind": "pure", "epsilon": self.sensitivity / self.scale}

    @property
    def noise_sd(self) -> float:
        return math.sqrt(2.0) * self.scale

    def describe(self) -> str:
        return f"Laplace noise, scale b = {self.scale:.4g}; pure {self.sensitivity / self.scale:.4g}-DP (sensitivity {self.sensitivity:g})"


@dataclass(frozen=True)
class DiscreteLaplace(_Additive):
    """Discrete Laplace (two-sided geometric) mechanism: pmf exp(-|k|/t)/Z; epsilon = Delta_1/t."""

    name = "discrete_laplace"
    kernel = ABS_KERNEL
    discrete = True

    def noise_log_prob(self, r):
        r = np.asarray(r, dtype=float)
        out = discrete_laplace_log_pmf(r, self.scale)
        return np.where(np.equal(np.round(r), r), out, -np.inf)

    def sample_noise(self, rng, size):
        return sample_discrete_laplace(rng, self.scale, size)

    @property
    def guarantee(self) -> dict:
        return {"kind": "pure", "epsilon": self.sensitivity / self.scale}

    @property
    def noise_sd(self) -> float:
        q = math.exp(-1.0 / self.scale)
        return math.sqrt(2.0 * q) / (1.0 - q)

    def describe(self) -> str:
        return f"discrete Laplace noise, scale t = {self.scale:.4g}; pure {self.sensitivity / self.scale:.4g}-DP (sensitivity {self.sensitivity:g})"


@dataclass(frozen=True)
class Gaussian(_Additive):
    """Gaussian mechanism: rho-zCDP with rho = Delta_2^2/(2 sigma^2); with ``delta`` set, also the
    (epsilon, delta)-DP of the analytic Gaussian mechanism. ``scale`` is sigma."""

    delta: float | None = None
    name = "gaussian"
    kernel = SQUARE_KERNEL

    @property
    def sigma(self) -> float:
        return self.scale

    def noise_log_prob(self, r):
        return -0.5 * (np.asarray(r) / self.scale) ** 2 - math.log(self.scale) - 0.5 * math.log(2 * math.pi)

    def sample_noise(self, rng, size):
        return rng.normal(0.0, self.scale, size=size)

    @property
    def guarantee(self) -> dict:
        g = {"kind": "zcdp", "rho": self.sensitivity**2 / (2.0 * self.scale**2)}
        if self.delta is not None:
            g = {"kind": "approx", "epsilon": analytic_gaussian_epsilon(self.scale, self.delta, self.sensitivity),
                 "delta": self.delta, "rho": g["rho"]}
        return g

    @property
    def noise_sd(self) -> float:
        return self.scale

    def describe(self) -> str:
        g = self.guarantee
        txt = f"Gaussian noise, sigma = {self.scale:.4g}; {g['rho']:.4g}-zCDP"
        if self.delta is not None:
            txt += f", ({g['epsilon']:.4g}, {self.delta:g})-DP"
        return txt + f" (L2 sensitivity {self.sensitivity:g})"


@dataclass(frozen=True)
class DiscreteGaussian(_Additive):
    """Discrete Gaussian mechanism (Canonne, Kamath & Steinke 2020): rho = Delta_2^2/(2 sigma^2)."""

    name = "discrete_gaussian"
    kernel = SQUARE_KERNEL
    discrete = True

    @property
    def sigma(self) -> float:
        return self.scale

    def noise_log_prob(self, r):
        r = np.asarray(r, dtype=float)
        out = -(r**2) / (2.0 * self.scale**2) - discrete_gaussian_log_normalizer(self.scale)
        return np.where(np.equal(np.round(r), r), out, -np.inf)

    def sample_noise(self, rng, size):
        return sample_discrete_gaussian(rng, self.scale, size)

    @property
    def guarantee(self) -> dict:
        return {"kind": "zcdp", "rho": self.sensitivity**2 / (2.0 * self.scale**2)}

    @property
    def noise_sd(self) -> float:
        return self.scale  # the variance is below sigma^2; sigma is a tight upper bound

    def describe(self) -> str:
        return (f"discrete Gaussian noise, sigma = {self.scale:.4g}; "
                f"{self.guarantee['rho']:.4g}-zCDP (L2 sensitivity {self.sensitivity:g})")


# --------------------------------------------------------------------------- randomized response
@dataclass(frozen=True)
class RandomizedResponse:
    """Per-record randomized response with transition matrix ``Q[x, z] = P(report z | true x)``.

    Two constructions (see :func:`make_mechanism`):

    * ``k``-ary randomized response from ``epsilon``: ``Q[x, x] = e^eps / (e^eps + k - 1)``,
      every other entry ``1 / (e^eps + k - 1)``.
    * the coin scheme of Eng et al. (dapper, Example 1): each of ``log2(k)`` binary attributes is
      reported truthfully when a first coin (heads with probability ``truth_prob``) says so, and
      otherwise replaced by a fair coin; so a bit is kept with probability
      ``p = truth_prob + (1 - truth_prob)/2`` and ``Q[x, z] = p^(m - d) (1 - p)^d`` with ``d`` the
      Hamming distance between the bit patterns of the category indices.

    The matrix is stored as log probabilities, so that a huge epsilon (e^-eps underflows to 0)
    still gives finite acceptance ratios and the exact guarantee
    ``epsilon = max_z (max_x log Q[x, z] - min_x log Q[x, z])``.

    The release is the vector of reported categories; because records are exchangeable its
    counts per category are sufficient, so ``s_dp`` is the vector of reported counts.
    """

    log_transition: tuple  # k x k nested tuple of log Q[x, z]; rows sum to 1 in probability
    scheme: str = "k_ary"

    name = "randomized_response"
    discrete = True
    sensitivity = 1.0

    @property
    def log_Q(self) -> np.ndarray:
        return np.asarray(self.log_transition, dtype=float)

    @property
    def Q(self) -> np.ndarray:
        return np.exp(self.log_Q)

    @property
    def k(self) -> int:
        return len(self.log_transition)

    @property
    def guarantee(self) -> dict:
        lq = self.log_Q
        return {"kind": "pure", "epsilon": float(np.max(lq.max(axis=0) - lq.min(axis=0)))}

    @property
    def epsilon(self) -> float:
        return self.guarantee["epsilon"]

    def sample_records(self, rng: np.random.Generator, categories) -> np.ndarray:
        """Report each record's category through Q (inverse-CDF on each row)."""
        categories = np.asarray(categories, dtype=np.int64)
        cdf = np.cumsum(self.Q, axis=1)
        u = rng.random(categories.shape)
        z = (u[..., None] > cdf[categories]).sum(axis=-1)
        return np.minimum(z, self.k - 1)

    def count_log_likelihood(self, z_counts, true_count, n: int) -> np.ndarray:
        """log P(reported number of ones = z1 | s true ones), for k = 2 and every s given.

        With s true ones among n records the reported number of ones is
        Bin(s, Q[1,1]) + Bin(n - s, Q[0,1]); its pmf at z1 is the convolution
        sum_j Bin(j; s, Q[1,1]) Bin(z1 - j; n - s, Q[0,1]), evaluated in log space in blocks of s.
        Cost O(len(s) * z1): callers cap n (``MAX_RR_TABLE_N``).
        """
        if self.k != 2:
            raise ValueError("randomized_response: count likelihood implemented for k = 2 only")
        z1 = int(round(np.asarray(z_counts, dtype=float).reshape(-1)[-1]))
        s_all = np.asarray(true_count, dtype=np.int64).reshape(-1)
        lq = self.log_Q
        j = np.arange(0, z1 + 1, dtype=float)
        out = np.empty(s_all.size)
        block = max(1, 4_000_000 // (z1 + 1))
        for lo in range(0, s_all.size, block):
            s = s_all[lo:lo + block].astype(float)[:, None]
            m = n - s
            a = _log_binom_pmf(j[None, :], s, lq[1, 1], lq[1, 0])
            b = _log_binom_pmf(z1 - j[None, :], m, lq[0, 1], lq[0, 0])
            out[lo:lo + block] = special.logsumexp(a + b, axis=1)
        return out.reshape(np.shape(true_count))

    def describe(self) -> str:
        what = "coin-flip" if self.scheme == "coin" else f"{self.k}-ary"
        return f"{what} randomized response per record; pure {self.epsilon:.4g}-DP"


MAX_RR_TABLE_N = 5000  # largest n for which the k = 2 count likelihood is tabulated (ABC, exact_mixture)


def _log_binom_pmf(j, m, log_p, log_1mp):
    """log Bin(j; m, p) from log p and log(1 - p); -inf outside 0 <= j <= m, stable at p in {0, 1}."""
    with np.errstate(invalid="ignore"):
        ok = (j >= 0) & (j <= m)
        jj, mm = np.where(ok, j, 0.0), np.broadcast_to(m, np.broadcast(j, m).shape)
        mm = np.where(ok, mm, 0.0)
        coef = special.gammaln(mm + 1) - special.gammaln(jj + 1) - special.gammaln(mm - jj + 1)
        t1 = np.where(jj > 0, jj * log_p, 0.0)
        t2 = np.where(mm - jj > 0, (mm - jj) * log_1mp, 0.0)
        return np.where(ok, coef + t1 + t2, -np.inf)


def _k_ary_log_transition(epsilon: float, k: int) -> tuple:
    # log keep = -log(1 + (k-1) e^-eps), log other = -eps + log keep: finite for any eps > 0
    log_keep = -math.log1p((k - 1) * math.exp(-epsilon))
    log_other = -epsilon + log_keep
    return tuple(tuple(log_keep if i == j else log_other for j in range(k)) for i in range(k))


def _coin_log_transition(truth_prob: float, k: int) -> tuple:
    m = int(round(math.log2(k)))
    if 2**m != k:
        fail("mechanism.scheme", "coin", f"needs a number of categories that is a power of 2 (got k = {k})")
    log_keep = math.log(truth_prob + (1.0 - truth_prob) / 2.0)
    log_flip = math.log((1.0 - truth_prob) / 2.0)
    return tuple(tuple((m - bin(x ^ z).count("1")) * log_keep + bin(x ^ z).count("1") * log_flip
                       for z in range(k)) for x in range(k))


# --------------------------------------------------------------------------- factory
_ADDITIVE = {"laplace": Laplace, "gaussian": Gaussian, "discrete_laplace": DiscreteLaplace,
             "discrete_gaussian": DiscreteGaussian}
_KNOWN_KEYS = {
    "laplace": {"scale", "epsilon", "sensitivity"},
    "discrete_laplace": {"scale", "epsilon", "sensitivity"},
    "gaussian": {"sigma", "rho", "epsilon", "delta", "sensitivity"},
    "discrete_gaussian": {"sigma", "rho", "sensitivity"},
    "randomized_response": {"epsilon", "scheme", "truth_prob", "k"},
}


def make_mechanism(name: str, params: Mapping[str, Any] | None = None, *, default_sensitivity: float = 1.0,
                   k: int = 2, integer_sensitivity: bool = False):
    """Build a mechanism from its spec table (``[mechanism]`` without ``name``).

    Noise is given either directly (``scale`` for laplace/discrete_laplace, ``sigma`` for
    gaussian/discrete_gaussian) or by budget: ``epsilon`` (laplace, discrete_laplace),
    ``rho`` (gaussian, discrete_gaussian) or ``epsilon`` + ``delta`` (gaussian), with
    ``sensitivity`` defaulting to the model's. Randomized response takes ``epsilon`` (k-ary) or
    ``scheme = "coin"`` with ``truth_prob`` (default 0.5); ``k`` comes from the model.
    """
    from .validation import choice

    params = dict(params or {})
    choice("mechanism.name", name, MECHANISM_NAMES)
    unknown = set(params) - _KNOWN_KEYS[name] - {"name"}
    if unknown:
        fail(f"mechanism.{sorted(unknown)[0]}", params[sorted(unknown)[0]],
             f"is not a key of {name}; allowed keys: " + ", ".join(sorted(_KNOWN_KEYS[name])))
    if name == "randomized_response":
        return _make_rr(params, k)

    sens = positive("mechanism.sensitivity", params.get("sensitivity", default_sensitivity))
    scale_key = "scale" if name in ("laplace", "discrete_laplace") else "sigma"
    given = [key for key in (scale_key, "epsilon", "rho") if key in params]
    if len(given) != 1:
        budgets = {"laplace": "epsilon", "discrete_laplace": "epsilon",
                   "gaussian": "rho, or epsilon with delta", "discrete_gaussian": "rho"}[name]
        fail("mechanism", {k_: params[k_] for k_ in given} or params,
             f"{name} needs exactly one of {scale_key} (noise scale) or {budgets} (budget)")
    delta = None
    if "delta" in params:
        delta = probability_open("mechanism.delta", params["delta"])
    if scale_key in params:
        scale = positive(f"mechanism.{scale_key}", params[scale_key])
    elif "epsilon" in params:
        eps = positive("mechanism.epsilon", params["epsilon"])
        if name == "gaussian":
            if delta is None:
                fail("mechanism.delta", None, "gaussian with epsilon needs delta in (0, 1); or give rho")
            scale = analytic_gaussian_sigma(eps, delta, sens)
        elif name == "discrete_gaussian":
            fail("mechanism.epsilon", params["epsilon"], "discrete_gaussian takes rho or sigma")
        else:
            scale = sens / eps
    else:
        if name not in ("gaussian", "discrete_gaussian"):
            fail("mechanism.rho", params["rho"], f"{name} takes epsilon or scale")
        rho = positive("mechanism.rho", params["rho"])
        scale = sens / math.sqrt(2.0 * rho)
    if integer_sensitivity and name in ("discrete_laplace", "discrete_gaussian") and not float(sens).is_integer():
        fail("mechanism.sensitivity", sens, "must be a whole number for discrete noise on counts")
    if not math.isfinite(scale) or scale <= 0:
        fail(f"mechanism.{scale_key}", scale, "the budget implies a noise scale that is not a positive finite number")
    if name == "gaussian":
        return Gaussian(scale=scale, sensitivity=sens, delta=delta)
    if delta is not None:
        fail("mechanism.delta", delta, f"{name} does not use delta")
    return _ADDITIVE[name](scale=scale, sensitivity=sens)


def _make_rr(params: dict, k: int) -> RandomizedResponse:
    scheme = params.get("scheme", "coin" if "truth_prob" in params else "k_ary")
    if scheme not in ("k_ary", "coin"):
        fail("mechanism.scheme", scheme, "must be one of k_ary, coin")
    if "k" in params and positive_int("mechanism.k", params["k"], 2) != k:
        fail("mechanism.k", params["k"], f"must equal the model's number of categories ({k})")
    if scheme == "coin":
        if "epsilon" in params:
            fail("mechanism.epsilon", params["epsilon"], "the coin scheme's budget follows from truth_prob; give one of them")
        tp = probability_open("mechanism.truth_prob", params.get("truth_prob", 0.5))
        return RandomizedResponse(log_transition=_coin_log_transition(tp, k), scheme="coin")
    if "epsilon" not in params:
        fail("mechanism.epsilon", None, "randomized_response needs epsilon > 0 (or scheme = \"coin\")")
    eps = positive("mechanism.epsilon", params["epsilon"])
    return RandomizedResponse(log_transition=_k_ary_log_transition(eps, k), scheme="k_ary")


def check_release_value(mech, s_dp: np.ndarray, field: str = "data.s_dp") -> None:
    """Discrete mechanisms release integers: s_dp must be whole numbers."""
    if getattr(mech, "discrete", False) and not np.all(np.equal(np.round(s_dp), s_dp)):
        fail(field, s_dp.tolist(), f"{mech.name} releases whole numbers; every entry must be an integer")
    finite_all = np.all(np.isfinite(s_dp))
    if not finite_all:
        fail(field, s_dp.tolist(), "must be finite numbers")


