"""The neighbouring pair at the sensitivity: which two records, and how far apart their statistics are.

Replace-one neighbours (n known): the target's record is ``x0`` in one dataset and ``x1`` in the other,
every other record the same, so the released statistic moves by ``d = t(x1) - t(x0)``; the pair chosen is
the one whose ``d`` is largest in the mechanism's norm (L1 for Laplace-type noise, L2 for Gaussian-type,
where the Gaussian curve depends on ``|d|_2`` only):

beta_binomial
    ``(0, 1)``, ``d = 1``.
dirichlet_multinomial
    categories 0 and 1: ``d = e_1 - e_0`` (two counts move).
normal_known_sd
    ``(lo, hi)``, ``d = hi - lo``.
poisson_gamma
    ``(0, upper)`` for the clamped Poisson; unclamped records have no largest gap, so the mechanism's
    stated ``sensitivity`` is used (the guarantee holds only for records that far apart).
linear_regression
    L1: the normalised records ``a = (-1, .., -1)`` and ``b = (1/(m+1), .., 1/(m+1))`` (m = p + 1
    columns), which attain the exact L1 sensitivity ``(p + 1)(p + 3)^2 / (2 (p + 2))`` derived in
    :class:`engine.models.linear_regression.LinearRegression` (the release's default Delta, the paper's
    ``p^2 + 3p + 3``, is larger: the mechanism is calibrated to a bound the data cannot reach, and the
    curve shows the protection actually given). L2: the two vertices of ``[-1, 1]^m`` whose statistic
    vectors are furthest apart (the model's docstring records that the L2 maximum is found at vertices;
    :func:`regression_pair` enumerates all of them).
naive_bayes_loglinear
    ``(y = 0, x = 0..0)`` and ``(y = 1, x = 0..0)``: a one moves from cell (k, 0, 0) to cell (k, 1, 0) of
    each of the K tables, ``|d|_1 = 2K``, ``|d|_2 = sqrt(2K)``, both the sensitivities.
custom models
    a :class:`engine.models.custom.CustomModel` has no record space the lab can search, so it cannot
    give its extreme records. Its mechanism's ``sensitivity`` then stands for the displacement: for
    Gaussian-type noise the curve depends on ``|d|_2`` only, so ``|d|_2 = sensitivity`` is exactly the
    worst case the guarantee allows; for a one-dimensional statistic ``d = sensitivity`` likewise. For
    Laplace-type noise on a vector the curve depends on how ``|d|_1`` is spread over the coordinates,
    which a custom model cannot tell: refused with that reason.

Add/remove-one neighbours (an unknown n, ``model.n_prior``): one dataset has the target's record, the
other does not; the statistic moves by ``t(x)`` and the released size ``n_dp`` by 1. The worst record
maximises ``|t(x)|``: ``1`` (beta_binomial), ``upper`` or the sensitivity (poisson_gamma),
``max(|lo|, |hi|)`` (normal_known_sd). ``size_shift = 1`` marks the size coordinate.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from ..core.validation import fail
from ..mechanisms import DiscreteGaussian, Gaussian, RandomizedResponse
from ..mechanisms.clipped import BoundedLaplace, Clipped
from ..mechanisms.libraries import StatedDiscreteGaussian, StatedGaussian

__all__ = ["Neighbours", "neighbours", "RISK_MODELS", "base_mechanism", "noise_law", "regression_pair"]

#: Models whose neighbouring records are known here (custom models: from the mechanism's sensitivity).
RISK_MODELS = ("beta_binomial", "poisson_gamma", "dirichlet_multinomial", "normal_known_sd", "linear_regression",
               "naive_bayes_loglinear", "custom")


@dataclass(frozen=True)
class Neighbours:
    """The two values of the target's record and the shift ``d`` they make in the released statistic
    (for randomized response, the two categories); ``size_shift``: 1 when n_dp moves too (add/remove)."""

    x0: object
    x1: object
    shift: tuple
    note: str = ""
    size_shift: float = 0.0

    def as_dict(self) -> dict:
        out = {"x0": self.x0, "x1": self.x1, "shift": list(self.shift)}
        if self.size_shift:
            out["size_shift"] = self.size_shift
        if self.note:
            out["note"] = self.note
        return out


def base_mechanism(mechanism):
    """The noise law under a clip (the clip is post-processing of it)."""
    return mechanism.base if isinstance(mechanism, Clipped) else mechanism


def noise_law(mechanism) -> type:
    """The class of the noise a mechanism adds: its own, or, for a library's Gaussian that only restates its
    guarantee (diffprivlib's ``Gaussian``, ``GaussianAnalytic``, ``GaussianDiscrete``), the noise law it subclasses,
    so that its curve takes the same closed form or exact sum (it went through the loss lattice, which at
    sigma = 53 asked for petabytes)."""
    if isinstance(mechanism, (StatedGaussian, StatedDiscreteGaussian)):
        return DiscreteGaussian if isinstance(mechanism, DiscreteGaussian) else Gaussian
    return type(mechanism)


def _l2(mechanism) -> bool:
    return isinstance(base_mechanism(mechanism), (Gaussian, DiscreteGaussian))


def neighbours(model, mechanism, unknown_n: bool = False, size_released: bool = True) -> Neighbours:
    """The neighbouring record values at the sensitivity (module docstring); ValueError where none can be given.
    ``unknown_n``: add/remove-one neighbours; ``size_released``: the noisy size n_dp moves with them (False for a
    histogram whose total is private and not released: only its cells move)."""
    name = getattr(model, "name", None)
    if mechanism is None:
        fail("mechanism", None, "the privacy risk needs the engine mechanism that made the release (a custom "
             "log_mechanism alone has no noise law to attack)")
    if name not in RISK_MODELS:
        fail("model.name", name, "the privacy risk is computed for " + ", ".join(RISK_MODELS))
    if isinstance(mechanism, RandomizedResponse):
        return _rr_neighbours(mechanism)
    if unknown_n:
        return _add_remove(model, mechanism, size_released)
    if name == "beta_binomial":
        return Neighbours(0, 1, (1.0,))
    if name == "dirichlet_multinomial":
        d = np.zeros(model.k)
        d[0], d[1] = -1.0, 1.0
        return Neighbours(0, 1, tuple(d.tolist()))
    if name == "normal_known_sd":
        return Neighbours(model.lo, model.hi, (model.hi - model.lo,))
    if name == "poisson_gamma":
        if model.upper is not None:
            return Neighbours(0, int(model.upper), (float(model.upper),))
        gap = float(mechanism.sensitivity)
        return Neighbours(0, int(gap) if gap.is_integer() else gap, (gap,),
                          note="records are unbounded (no model.upper): neighbours taken at the mechanism's sensitivity")
    if name == "linear_regression":
        return regression_pair(model, l2=_l2(mechanism))
    if name == "naive_bayes_loglinear":
        return _naive_bayes_pair(model)
    return _custom_pair(model, mechanism)


def _add_remove(model, mechanism, size_released: bool = True) -> Neighbours:
    name = model.name
    if name == "dirichlet_multinomial":  # a histogram: the record adds one to its cell, and to nothing else
        shift = np.zeros(model.k)
        shift[0] = 1.0
        return Neighbours(None, 0, tuple(shift.tolist()), size_shift=1.0 if size_released else 0.0,
                          note="add/remove-one: one dataset has the record, the other not; its cell moves by one"
                               + (" and the released size by one" if size_released else
                                  " (the total is private and not released apart from the cells)"))
    if name == "beta_binomial":
        value = 1
    elif name == "poisson_gamma":
        value = int(model.upper) if model.upper is not None else float(mechanism.sensitivity)
    elif name == "normal_known_sd":
        value = model.hi if abs(model.hi) >= abs(model.lo) else model.lo
    else:
        fail("model.n_prior", "given", f"{name} does not support an unknown n")
    return Neighbours(None, value, (float(abs(value)),), size_shift=1.0,
                      note="add/remove-one: one dataset has the record, the other not; the statistic moves by the "
                           "record's value and the released size by one")


def regression_pair(model, l2: bool = False) -> Neighbours:
    """The two regression records furthest apart in L1 (closed form) or L2 (over the cube's vertices)."""
    m = model.p + 1
    if not l2:
        a, b = np.full(m, -1.0), np.full(m, 1.0 / (m + 1))
    else:
        verts = np.array(list(itertools.product((-1.0, 1.0), repeat=m)))
        t = _regression_t(model, verts)
        sq = np.sum(t * t, axis=1)
        dist = sq[:, None] + sq[None, :] - 2.0 * t @ t.T
        i, j = np.unravel_index(int(np.argmax(dist)), dist.shape)
        a, b = verts[i], verts[j]
    recs = _denormalise(model, np.vstack([a, b]))
    t = model.record_statistics(recs)
    d = t[1] - t[0]
    norm = "L2" if l2 else "L1"
    return Neighbours(recs[0].tolist(), recs[1].tolist(), tuple(float(v) for v in d),
                      note=f"the two records (x1..xp, y) whose statistic vectors are furthest apart in {norm}: "
                           f"{norm} distance {np.linalg.norm(d, 2 if l2 else 1):.4g}")


def _denormalise(model, z):
    lo, hi = np.asarray(model.lo, float), np.asarray(model.hi, float)
    return lo + (np.asarray(z, float) + 1.0) * (hi - lo) / 2.0


def _regression_t(model, z):
    return model.record_statistics(_denormalise(model, z))


def _naive_bayes_pair(model) -> Neighbours:
    d = np.zeros(model.stat_dim)
    for off, jk in zip(model.offsets, model.feature_levels):
        d[off] -= 1.0  # cell (k, y = 0, x_k = 0)
        d[off + jk] += 1.0  # cell (k, y = 1, x_k = 0)
    zeros = [0] * len(model.feature_levels)
    return Neighbours([0] + zeros, [1] + zeros, tuple(d.tolist()),
                      note="records (y, x_1..x_K): the class changes, every feature stays; one count moves in each table")


def _custom_pair(model, mechanism) -> Neighbours:
    sens = float(mechanism.sensitivity)
    dim = _custom_dim(model)
    if dim == 1 or _l2(mechanism):
        return Neighbours(None, None, (sens,),
                          note="a custom model cannot give its extreme records: the displacement is the mechanism's "
                               f"sensitivity {sens:g} (" + ("its L2 norm; the Gaussian curve depends on nothing else)"
                                                          if dim != 1 else "one coordinate)"))
    fail("model", "custom", f"a custom model cannot give its two extreme records, and with {mechanism.name} noise on "
         f"its {dim} statistic entries the curve depends on how the L1 sensitivity {sens:g} is spread over them: "
         "the privacy risk is computed for custom models with a one-entry statistic or Gaussian-type noise")


def _custom_dim(model) -> int:
    """Entries of a custom model's statistic, from one record it draws at its initial theta."""
    rng = np.random.default_rng(0)  # a fixed, local stream: only the shape of t(x) is used
    recs = model.draw_records(rng, np.asarray(model.init_theta, float), 1)  # the pieces checked (engine.models.custom)
    return int(model.contributions(recs).shape[1])


def _rr_neighbours(mech: RandomizedResponse) -> Neighbours:
    """The pair of categories whose report laws are furthest apart: largest privacy loss, then largest
    total variation (every pair for k-ary; the most distant bit patterns for the coin scheme)."""
    lq, q = mech.log_Q, mech.Q
    best, pair = None, (0, 1)
    for i in range(mech.k):
        for j in range(i + 1, mech.k):
            key = (round(float(np.max(np.abs(lq[i] - lq[j]))), 12), round(0.5 * float(np.abs(q[i] - q[j]).sum()), 12))
            if best is None or key > best:
                best, pair = key, (i, j)
    return Neighbours(pair[0], pair[1], ())


def is_bounded_domain(mechanism) -> bool:
    return isinstance(mechanism, BoundedLaplace)
