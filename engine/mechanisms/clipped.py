"""Releases whose law is not plain additive noise: clipped (clamped) releases and a bounded domain.

Clipping
--------
A clipped release is ``s_dp = min(max(s + U, lower), upper)`` with ``U`` any additive noise (either
bound may be open, +-inf). Clipping is post-processing, so the guarantee is the noise's. The law of
s_dp given s has a density (or pmf) inside the bounds and point masses on them:

    p(s_dp | s) = f(s_dp - s)          lower < s_dp < upper
                = P(U <= lower - s)    s_dp = lower     (everything that fell at or below the bound)
                = P(U >= upper - s)    s_dp = upper.

As a function of r = s_dp - s it is f(r), F(r) = P(U <= r) or S(r) = P(U >= r): which one depends on
s_dp only, and s_dp is fixed once released. :meth:`Clipped.bind_release` records that ``side`` (-1 lower,
0 inside, +1 upper; 2 when a vector release has coordinates on different sides), and the bound
record's ``noise_log_prob(r)`` and compiled ``kernel`` code (:func:`engine.kernels.shared.log_noise`,
codes 2..9) are then the exact likelihood of the release: every sampler that conditions on s_dp
through log eta(s_dp - s) (DA-MCMC, pseudo-marginal, reversible jump, ABC) is exact with no further
change. :class:`engine.core.results.Problem` binds the mechanism to its release on construction.
OpenDP's dataframe counts, which cannot go below 0, are ``clip = [0, inf]``; diffprivlib's
``LaplaceTruncated`` and ``GeometricTruncated`` are clips at their ``lower`` and ``upper``.

Bounded domain
--------------
diffprivlib's ``LaplaceBoundedDomain`` (Holohan et al. 2020) clamps s into [lower, upper] and then
redraws s + U until it falls in [lower, upper]; the release's density is the renormalised

    p(s_dp | s) = f(s_dp - s~) / (F(upper - s~) - F(lower - s~)),   s~ = min(max(s, lower), upper),

whose normaliser depends on s, so it is not a function of s_dp - s alone. Bound to a one-number release
(:meth:`BoundedLaplace.bind_release`), it is a function of r = s_dp - s and of d_lo = lower - s_dp,
d_hi = upper - s_dp: the compiled kernel code 10 with ``scale = (b, d_lo, d_hi)``
(:func:`engine.kernels.shared.log_bounded_domain`), so DA-MCMC and the pseudo-marginal sampler analyse it
like any other release; ``exact`` uses :meth:`BoundedLaplace.release_log_prob`.

The compiled samplers
---------------------
:func:`compiled_noise` gives the (kernel code, scale) a compiled sampler takes: the mechanism's own ``kernel``
and ``scale``, except for the two releases that need three numbers (a tuple ``scale``): the bounded domain, and
a lattice release (OpenDP's float noise with ``k``) sitting on its clip bound, (scale, g, 0) with the
lattice family's tail code. A mechanism's ``kernel`` property keeps refusing those two, so a sampler that has
not been taught the tuple (ABC, reversible jump, Bernstein-Sheldon) still says so in one line.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..core.validation import fail
from .additive import DiscreteGaussian, DiscreteLaplace, Gaussian, Laplace

__all__ = ["Clipped", "BoundedLaplace", "clip_bounds", "compiled_noise", "BOUNDED_DOMAIN_KERNEL"]

BOUNDED_DOMAIN_KERNEL = 10  # engine.kernels.shared.BOUNDED_DOMAIN

# kernel code at the lower bound for each noise family; the upper bound is the next code
_TAIL_CODE = {Laplace: 2, Gaussian: 4, DiscreteLaplace: 6, DiscreteGaussian: 8}


def _tail_code(base) -> int:
    for cls in type(base).__mro__:
        if cls in _TAIL_CODE:
            return _TAIL_CODE[cls]
    raise ValueError(f"mechanism.name = {base.name!r} is invalid for clip: additive noise only")


def clip_bounds(field: str, value) -> tuple[float, float]:
    """``clip = [lower, upper]``: two numbers, either one open (TOML ``inf`` / ``-inf``, or the strings
    "inf", "-inf", or an empty string), lower < upper."""
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        fail(field, value, "must be [lower, upper], e.g. [0, inf] (TOML's inf for an open side)")
    out = []
    for v, open_side in zip(value, (-math.inf, math.inf)):
        if isinstance(v, str) and v.strip().lower() in ("", "inf", "+inf", "-inf", "infinity", "-infinity"):
            v = open_side if v.strip() == "" else float(v)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or math.isnan(v):
            fail(field, value, "must be [lower, upper] with numbers (inf or -inf for an open side)")
        out.append(float(v))
    lo, hi = out
    if lo == math.inf or hi == -math.inf or not lo < hi:
        fail(field, value, "must have lower < upper (-inf below, inf above for an open side)")
    return lo, hi


@dataclass(frozen=True)
class Clipped:
    """An additive mechanism whose release is clipped to [lower, upper] (module docstring)."""

    base: object
    lower: float = -math.inf
    upper: float = math.inf
    side: int = 0

    name = "clipped"
    release_law = True  # exact uses release_log_prob instead of a window around s_dp

    def __post_init__(self):
        _tail_code(self.base)

    @property
    def discrete(self) -> bool:
        return self.base.discrete

    @property
    def scale(self) -> float:
        return self.base.scale

    @property
    def sensitivity(self) -> float:
        return self.base.sensitivity

    @property
    def noise_sd(self) -> float:
        return self.base.noise_sd

    @property
    def guarantee(self) -> dict:
        return self.base.guarantee

    @property
    def epsilon(self):
        return self.base.epsilon

    @property
    def kernel(self) -> int:
        if self.side == 2:
            raise ValueError(f"data.s_dp is invalid for this sampler: a clipped release with entries both on and "
                             f"inside the bounds [{self.lower:g}, {self.upper:g}]; use method exact")
        if self.side == 0:
            return self.base.kernel
        if getattr(self.base, "granularity", 1.0) != 1.0:
            raise ValueError("data.s_dp is invalid for this sampler: a release on a lattice finer than the integers, "
                             "sitting on its clip bound; use method exact")
        return _tail_code(self.base) + (0 if self.side < 0 else 1)

    def sample(self, rng: np.random.Generator, s) -> np.ndarray:
        return np.clip(self.base.sample(rng, s), self.lower, self.upper)

    def bind_release(self, s_dp) -> "Clipped":
        """This mechanism as seen from the release s_dp: which side of the bounds it sits on."""
        s = np.asarray(s_dp, dtype=float)
        if np.any(s < self.lower) or np.any(s > self.upper):
            fail("data.s_dp", s.tolist(), f"must lie within the clip [{self.lower:g}, {self.upper:g}]")
        sides = {int(v) for v in np.where(s <= self.lower, -1, np.where(s >= self.upper, 1, 0)).ravel()}
        return replace(self, side=sides.pop() if len(sides) == 1 else 2)

    def release_log_prob(self, s_dp, s):
        """log p(s_dp | s) elementwise (s_dp and s broadcast): density inside, tail mass on a bound."""
        s_dp = np.asarray(s_dp, dtype=float)
        r = s_dp - np.asarray(s, dtype=float)
        inside = self.base.noise_log_prob(r)
        out = np.where(s_dp <= self.lower, self.base.log_cdf(r), inside)
        return np.where(s_dp >= self.upper, self.base.log_sf(r), out)

    def noise_log_prob(self, r):
        """log p(s_dp | s) as a function of r = s_dp - s, for the side this record is bound to."""
        if self.side == 2:
            self.kernel  # raises: the side differs between coordinates
        if self.side == 0:
            return self.base.noise_log_prob(r)
        return self.base.log_cdf(r) if self.side < 0 else self.base.log_sf(r)

    def log_prob(self, s_dp, s) -> np.ndarray:
        return np.sum(self.release_log_prob(s_dp, s), axis=-1)

    def describe(self) -> str:
        return f"{self.base.describe()}; release clipped to [{self.lower:g}, {self.upper:g}] (point masses at the bounds)"


@dataclass(frozen=True)
class BoundedLaplace:
    """diffprivlib's ``LaplaceBoundedDomain``: Laplace noise of scale b, redrawn until the release lies in
    [lower, upper] (module docstring). ``epsilon`` and ``delta`` are the guarantee diffprivlib states."""

    scale: float
    lower: float
    upper: float
    sensitivity: float = 1.0
    epsilon_stated: float = 0.0
    delta: float = 0.0
    released: float | None = None  # the one-number release this record is bound to (bind_release)

    name = "bounded_laplace"
    release_law = True
    discrete = False

    @property
    def kernel(self):
        raise ValueError("mechanism LaplaceBoundedDomain is invalid for this sampler: its normaliser depends on s; "
                         "use method exact, da_mcmc or pseudo_marginal")

    def bind_release(self, s_dp) -> "BoundedLaplace":
        """This mechanism as seen from the release: a one-number release is kept (the compiled samplers' d_lo and
        d_hi, and ``noise_log_prob`` as a function of r); a vector release only checked."""
        s = np.asarray(s_dp, dtype=float)
        if np.any(s < self.lower) or np.any(s > self.upper):
            fail("data.s_dp", s.tolist(), f"must lie within the bounded domain [{self.lower:g}, {self.upper:g}]")
        return replace(self, released=float(s.ravel()[0]) if s.size == 1 else None)

    def compiled(self) -> tuple[int, tuple]:
        """(kernel code 10, (b, lower - s_dp, upper - s_dp)) for the compiled samplers."""
        if self.released is None:
            fail("release.mechanism", "LaplaceBoundedDomain", "is invalid for this sampler on a release of several "
                 "numbers (each entry's normaliser has its own bounds relative to it); use method exact")
        return BOUNDED_DOMAIN_KERNEL, (float(self.scale), self.lower - self.released, self.upper - self.released)

    @property
    def noise_sd(self) -> float:
        return math.sqrt(2.0) * self.scale

    @property
    def guarantee(self) -> dict:
        if self.delta > 0:
            return {"kind": "approx", "epsilon": self.epsilon_stated, "delta": self.delta}
        return {"kind": "pure", "epsilon": self.epsilon_stated}

    @property
    def epsilon(self):
        return self.epsilon_stated if self.delta == 0 else None

    def _base(self) -> Laplace:
        return Laplace(scale=self.scale, sensitivity=self.sensitivity)

    def sample(self, rng: np.random.Generator, s) -> np.ndarray:
        s = np.clip(np.asarray(s, dtype=float), self.lower, self.upper)
        out = np.empty(s.shape)
        todo = np.ones(s.shape, dtype=bool)
        while todo.any():
            draw = s[todo] + rng.laplace(0.0, self.scale, size=int(todo.sum()))
            ok = (draw >= self.lower) & (draw <= self.upper)
            idx = np.flatnonzero(todo)[ok]
            out.flat[idx] = draw[ok]
            todo.flat[idx] = False
        return out

    def release_log_prob(self, s_dp, s):
        base = self._base()
        s_dp = np.asarray(s_dp, dtype=float)
        st = np.clip(np.asarray(s, dtype=float), self.lower, self.upper)
        hi, lo = base.log_cdf(self.upper - st), base.log_cdf(self.lower - st)
        log_mass = hi + np.log1p(-np.exp(lo - hi))  # log(F(upper - s~) - F(lower - s~))
        inside = (s_dp >= self.lower) & (s_dp <= self.upper)
        return np.where(inside, base.noise_log_prob(s_dp - st) - log_mass, -np.inf)

    def noise_log_prob(self, r):
        """log p(s_dp | s) at s = s_dp - r, for the release this record is bound to."""
        if self.released is None:
            self.compiled()  # raises: no function of r alone without the release
        return self.release_log_prob(self.released, self.released - np.asarray(r, dtype=float))

    def log_prob(self, s_dp, s) -> np.ndarray:
        return np.sum(self.release_log_prob(s_dp, s), axis=-1)

    def describe(self) -> str:
        return (f"Laplace noise, scale b = {self.scale:.4g}, on the bounded domain [{self.lower:g}, {self.upper:g}] "
                f"(redrawn until inside: the density is renormalised and depends on s)")


def compiled_noise(mech) -> tuple[int, Any]:
    """(kernel code, scale) for a compiled sampler (module docstring): a float scale, or a tuple of three for a
    bounded domain or a lattice release on its clip bound. Raises ``ValueError`` where no code exists."""
    if isinstance(mech, BoundedLaplace):
        return mech.compiled()
    if isinstance(mech, Clipped) and mech.side in (-1, 1):
        g = getattr(mech.base, "granularity", 1.0)
        if g != 1.0:
            return _tail_code(mech.base) + (0 if mech.side < 0 else 1), (float(mech.base.scale), float(g), 0.0)
    if getattr(mech, "kernel", None) is None:  # not additive noise (OpenDP's mean: sum / length, a law that involves n)
        raise ValueError(f"mechanism = {mech.describe()} is invalid for this sampler: it is not additive noise on "
                         "the statistic; use a method that knows its law (" + ", ".join(getattr(mech, "methods", ()))
                         + ")")
    return int(mech.kernel), float(mech.scale)
