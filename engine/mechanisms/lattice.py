"""OpenDP's float noise on a granularity: discrete Laplace and discrete Gaussian on the lattice g Z.

OpenDP 0.16 samples float Laplace and Gaussian noise exactly on a lattice of step g = 2^k (``k`` of
``make_laplace`` / ``make_gaussian``; by default the finest, 2^-1074, where every double is a lattice
point and the noise is the continuous law up to floating point). With ``k`` set, the statistic is
first rounded to the nearest multiple of g, then g V is added, V the integer noise of scale
``scale / g``:

    s_dp = round_g(s) + g V,   P(V = j) ∝ exp(-|j| g / scale)          (laplace)
                                         exp(-(j g)^2 / (2 scale^2))   (gaussian)

so p(s_dp | s) ∝ exp(-|s_dp - round_g(s)| / scale) on the lattice: for a statistic already on the
lattice (an integer statistic with g <= 1) the shape is the compiled kernels' -|r|/scale or
-r^2/(2 scale^2), normalised over g Z. Rounding both neighbours' statistics can move them apart by up
to g, so OpenDP's privacy map charges the sensitivity Delta + g: epsilon = (Delta + g) / scale,
rho = (Delta + g)^2 / (2 scale^2) (checked against OpenDP's ``map`` in tests/test_interop.py).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .additive import (DiscreteGaussian, DiscreteLaplace, discrete_gaussian_log_normalizer, discrete_laplace_log_pmf,
                       sample_discrete_gaussian, sample_discrete_laplace, sensitivity_text)

__all__ = ["LatticeLaplace", "LatticeGaussian"]


def _round_to(s, g: float):
    return np.round(np.asarray(s, dtype=float) / g) * g


@dataclass(frozen=True)
class LatticeLaplace(DiscreteLaplace):
    """Laplace noise on g Z (OpenDP float ``make_laplace`` with ``k``); ``scale`` in the statistic's units."""

    granularity: float = 1.0
    discrete = False  # releases are multiples of g, not whole numbers

    def noise_log_prob(self, r):
        j = np.round(np.asarray(r, dtype=float) / self.granularity)
        return discrete_laplace_log_pmf(j, self.scale / self.granularity)

    def sample(self, rng, s):
        s = _round_to(s, self.granularity)
        return s + self.sample_noise(rng, s.shape)

    def sample_noise(self, rng, size):
        return self.granularity * sample_discrete_laplace(rng, self.scale / self.granularity, size)

    def log_cdf(self, r):
        return DiscreteLaplace(scale=self.scale / self.granularity).log_cdf(np.round(np.asarray(r, float) / self.granularity))

    @property
    def guarantee(self) -> dict:
        return {"kind": "pure", "epsilon": (self.sensitivity + self.granularity) / self.scale}

    @property
    def noise_sd(self) -> float:
        q = math.exp(-self.granularity / self.scale)
        return self.granularity * math.sqrt(2.0 * q) / (1.0 - q)

    def describe(self) -> str:
        return (f"Laplace noise on the lattice {self.granularity:g} Z, scale {self.scale:.4g}; pure "
                f"{self.guarantee['epsilon']:.4g}-DP (sensitivity {sensitivity_text(self.sensitivity)} + granularity)")


@dataclass(frozen=True)
class LatticeGaussian(DiscreteGaussian):
    """Gaussian noise on g Z (OpenDP float ``make_gaussian`` with ``k``); ``scale`` is sigma."""

    granularity: float = 1.0
    discrete = False

    def noise_log_prob(self, r):
        j = np.round(np.asarray(r, dtype=float) / self.granularity)
        t = self.scale / self.granularity
        return -(j**2) / (2.0 * t**2) - discrete_gaussian_log_normalizer(t)

    def sample(self, rng, s):
        s = _round_to(s, self.granularity)
        return s + self.sample_noise(rng, s.shape)

    def sample_noise(self, rng, size):
        return self.granularity * sample_discrete_gaussian(rng, self.scale / self.granularity, size)

    def log_cdf(self, r):
        return DiscreteGaussian(scale=self.scale / self.granularity).log_cdf(np.round(np.asarray(r, float) / self.granularity))

    @property
    def guarantee(self) -> dict:
        return {"kind": "zcdp", "rho": (self.sensitivity + self.granularity) ** 2 / (2.0 * self.scale**2)}

    def describe(self) -> str:
        return (f"Gaussian noise on the lattice {self.granularity:g} Z, sigma = {self.scale:.4g}; "
                f"{self.guarantee['rho']:.4g}-zCDP (L2 sensitivity {sensitivity_text(self.sensitivity)} + granularity)")
