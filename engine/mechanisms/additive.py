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

Each mechanism is a frozen record: ``sample`` and ``log_prob`` (in log space), ``noise_sd``, its
``scale`` (b or t for Laplace-type noise, sigma for Gaussian-type) and the ``guarantee`` it gives.
``kernel`` is the code the compiled samplers use for the shape of the log-density
(:func:`engine.kernels.shared.log_noise`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from .budgets import analytic_gaussian_epsilon


def whole_root(v: float, rel_tol: float = 1e-12) -> int | None:
    """The whole number k (1 < k <= 10 000, not a perfect square) whose square root is ``v``, or None.

    One test for every place that writes a number as √k. ``rel_tol`` says how near ``math.sqrt(k)`` must be:
    a description forgives the last bits of a sensitivity computed some other way (1e-12); a box the user
    edits passes 0, equality, so its text ``√k`` reads back (``math.sqrt(k)``) to the very same float. A
    value outside (0, 101), NaN included, has no such k (and is not squared: 1e200 ** 2 overflows)."""
    v = float(v)
    if not 0 < v < 101:
        return None
    k = round(v ** 2)
    if 1 < k <= 10_000 and math.isqrt(k) ** 2 != k and math.isclose(math.sqrt(k), v, rel_tol=rel_tol):
        return k
    return None


def sensitivity_text(v: float) -> str:
    """A sensitivity as a description writes it: the square root of a whole number as √k (the L2 sensitivity of
    a cell change is √2, which read 1.41421), anything else to six significant digits."""
    k = whole_root(v)
    return f"√{k}" if k is not None else f"{float(v):g}"

__all__ = ["Laplace", "Gaussian", "DiscreteLaplace", "DiscreteGaussian", "ABS_KERNEL", "SQUARE_KERNEL",
           "discrete_laplace_log_pmf", "discrete_gaussian_log_normalizer", "sample_discrete_laplace",
           "sample_discrete_gaussian", "whole_root", "sensitivity_text"]

# Kernel codes used by the compiled sweep: only the shape of log-density differences matters there.
ABS_KERNEL = 0  # log eta(r) = -|r| / scale + const  (laplace, discrete_laplace)
SQUARE_KERNEL = 1  # log eta(r) = -r^2 / (2 scale^2) + const  (gaussian, discrete_gaussian)


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

    def log_cdf(self, r):
        """log P(U <= r) for the noise U (a clipped release at its lower bound: r = lower - s)."""
        raise NotImplementedError

    def log_sf(self, r):
        """log P(U >= r) = log P(U <= -r) by symmetry (a clipped release at its upper bound)."""
        return self.log_cdf(-np.asarray(r, dtype=float))

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

    def log_cdf(self, r):
        """P(U <= r) = e^(r/b) / 2 for r < 0, 1 - e^(-r/b) / 2 otherwise."""
        r = np.asarray(r, dtype=float)
        return np.where(r < 0, r / self.scale - math.log(2.0), np.log1p(-0.5 * np.exp(-np.abs(r) / self.scale)))

    @property
    def guarantee(self) -> dict:
        return {"kind": "pure", "epsilon": self.sensitivity / self.scale}

    @property
    def noise_sd(self) -> float:
        return math.sqrt(2.0) * self.scale

    def describe(self) -> str:
        return f"Laplace noise, scale b = {self.scale:.4g}; pure {self.sensitivity / self.scale:.4g}-DP (sensitivity {sensitivity_text(self.sensitivity)})"


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

    def log_cdf(self, r):
        """With q = e^(-1/t): P(U <= r) = q^(-r) / (1 + q) for r < 0, 1 - q^(r + 1) / (1 + q) for r >= 0
        (r an integer: the sum of the geometric tail (1 - q) / (1 + q) q^|k|)."""
        r = np.asarray(r, dtype=float)
        log1q = math.log1p(math.exp(-1.0 / self.scale))
        neg = r / self.scale - log1q
        pos = np.log1p(-np.exp(-(np.abs(r) + 1.0) / self.scale - log1q))
        return np.where(r < 0, neg, pos)

    @property
    def guarantee(self) -> dict:
        return {"kind": "pure", "epsilon": self.sensitivity / self.scale}

    @property
    def noise_sd(self) -> float:
        q = math.exp(-1.0 / self.scale)
        return math.sqrt(2.0 * q) / (1.0 - q)

    def describe(self) -> str:
        return f"discrete Laplace noise, scale t = {self.scale:.4g}; pure {self.sensitivity / self.scale:.4g}-DP (sensitivity {sensitivity_text(self.sensitivity)})"


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

    def log_cdf(self, r):
        return special.log_ndtr(np.asarray(r, dtype=float) / self.scale)

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
        return txt + f" (L2 sensitivity {sensitivity_text(self.sensitivity)})"


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

    def log_cdf(self, r):
        """log P(U <= r) for integer r: the pmf summed over k <= r (k within r - 40 sigma - 40, below
        which the terms are under e^-800 of the largest)."""
        r = np.asarray(r, dtype=float)
        out = np.empty(r.shape)
        log_z = discrete_gaussian_log_normalizer(self.scale)
        width = int(40.0 * self.scale) + 40
        for idx, v in np.ndenumerate(r):
            m = -v if v < 0 else v + 1.0  # P(U <= v) = T(-v) for v < 0, 1 - T(v + 1) for v >= 0
            k = m + np.arange(width + 1)
            log_t = float(special.logsumexp(-(k**2) / (2.0 * self.scale**2))) - log_z
            out[idx] = log_t if v < 0 else math.log1p(-math.exp(log_t))
        return out

    @property
    def guarantee(self) -> dict:
        return {"kind": "zcdp", "rho": self.sensitivity**2 / (2.0 * self.scale**2)}

    @property
    def noise_sd(self) -> float:
        return self.scale  # the variance is below sigma^2; sigma is a tight upper bound

    def describe(self) -> str:
        return (f"discrete Gaussian noise, sigma = {self.scale:.4g}; "
                f"{self.guarantee['rho']:.4g}-zCDP (L2 sensitivity {sensitivity_text(self.sensitivity)})")
