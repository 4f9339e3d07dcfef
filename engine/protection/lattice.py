"""Trade-off curves of releases with several independent coordinates, with a computed error bound.

The problem. Between two neighbours the release has independent coordinates ``j = 1..m`` (the entries
of a statistic vector, or the statistic and the noisy size ``n_dp``), each with its own pair of laws
``(P0_j, P1_j)``. The pair of the whole release is the product, and its privacy loss is the sum
``L = sum_j L_j`` of independent per-coordinate losses. For Laplace noise each ``L_j`` has two atoms
(``-/+ eps_j`` on the two tails) and a continuous part between them, so the law of the sum has no
closed form beyond one coordinate; clipped releases add atoms at the bounds, a bounded domain a constant.

The sandwich. Fix a lattice of loss levels ``k h`` (``k`` integer). Cut each coordinate's outcome space
into *pieces* whose loss lies in one lattice cell ``[k h, (k + 1) h]`` (a piece of a continuous law is
the interval of releases between two level sets of ``L_j``; an atom, or an outcome of a discrete law, is
a piece of its own). From the pieces, two finite experiments per coordinate:

* **optimistic** (``E+``): all pieces of a cell merged into one outcome. Merging outcomes is a garbling
  (post-processing), so ``T(E+) >= T(true)`` pointwise (Blackwell; Dong, Roth & Su 2019, Lemma 2.9).
* **pessimistic** (``E-``): each piece ``(a, c)`` = (P0 mass, P1 mass), whose likelihood ratio
  ``c / a`` lies in ``[e^{kh}, e^{(k+1)h}]``, split into two outcomes at the cell's ends, ``a_lo``
  with ratio ``e^{kh}`` and ``a_hi`` with ratio ``e^{(k+1)h}``, ``a_lo + a_hi = a`` and
  ``a_lo e^{kh} + a_hi e^{(k+1)h} = c``. Merging the two gives the piece back, so the piece is a
  garbling of its split; and any distribution of likelihood ratios inside the cell with the same two
  masses is too (its ROC path from ``(0, 0)`` to ``(a, c)`` has slopes in ``[e^{kh}, e^{(k+1)h}]``
  and so lies under the two-segment path of the split). Hence ``T(E-) <= T(true)``. A piece whose loss
  range is unbounded (a Gaussian tail beyond the last level) splits into an outcome at the finite end
  and one of infinite (or minus infinite) loss, which only one of the two laws can produce.

Products. If every coordinate's pair is a garbling of (respectively, garbles) another, so is the
product (the product of the kernels), so ``T(E-_1 x .. x E-_m) <= T(true) <= T(E+_1 x .. x E+_m)``.
Both products are still reduced to the lattice: outcomes of ``E-`` lie *on* the lattice, and those with
equal total loss ``K h`` carry equal likelihood ratio, so merging them loses nothing; outcomes of
``E+`` are merged by their total cell index ``K = sum_j k_j`` (one more garbling, still ``>= T(true)``).
Under ``P0`` the index law of the product is the convolution of the per-coordinate index laws, and the
same holds under ``P1``: two convolutions per experiment, on arrays of a few thousand entries.

The curve reported is ``T(E+)``: never below the true curve, like the binned one-coordinate Laplace
curve of :mod:`.tradeoff`; ``max_error`` is the largest gap ``T(E+) - T(E-)`` (both curves are piecewise
linear, so the gap is largest at a vertex of one of them), an upper bound on how far the reported
curve lies above the truth. Its size is O(h^2) per cell: with the default 3000 cells over the whole
loss range it is below 1e-7 at eps = 1 for one to nine Laplace coordinates (2.8e-8 for one, 7.2e-8 for
linear_regression's nine; tests/test_risk.py bounds it by 1e-6).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special, stats

__all__ = ["Pieces", "lattice_product", "continuous_pieces", "finite_pieces", "DEFAULT_CELLS"]

#: Cells of the loss lattice over the sum of the coordinates' loss ranges.
DEFAULT_CELLS = 3000
_GAUSS_SPAN = 9.0  # a Gaussian coordinate's lattice covers its mean loss +- 9 sd; beyond, tails (exact, unbounded)


@dataclass(frozen=True)
class Pieces:
    """One coordinate's pieces: log P0 and log P1 masses, and the loss range ``[lo, hi]`` of each
    (``lo == hi`` for a point loss; ``-inf`` / ``inf`` ends for unbounded tails)."""

    log_p0: np.ndarray
    log_p1: np.ndarray
    loss_lo: np.ndarray
    loss_hi: np.ndarray
    unbounded: bool = False  # the true loss of this coordinate has no bound (Gaussian-type noise)

    def span(self) -> tuple[float, float]:
        """The finite range of losses the lattice must cover."""
        finite = np.concatenate([self.loss_lo[np.isfinite(self.loss_lo)], self.loss_hi[np.isfinite(self.loss_hi)]])
        return float(finite.min()), float(finite.max())


def finite_pieces(log_p0, log_p1) -> Pieces:
    """A discrete coordinate: every outcome is a piece with a point loss (inf where P0 cannot produce it)."""
    lp0, lp1 = np.asarray(log_p0, float), np.asarray(log_p1, float)
    keep = np.isfinite(lp0) | np.isfinite(lp1)
    lp0, lp1 = lp0[keep], lp1[keep]
    with np.errstate(invalid="ignore"):
        loss = np.where(np.isfinite(lp0), np.where(np.isfinite(lp1), lp1 - lp0, -np.inf), np.inf)
    return Pieces(lp0, lp1, loss, loss)


def _log_interval(dist, u, v):
    """log P(u < U <= v) for a symmetric law (stable in both tails): through the cdf below 0, the sf above."""
    u, v = np.asarray(u, float), np.asarray(v, float)
    low = v <= 0  # whole interval in the lower half: cdf(v) - cdf(u)
    with np.errstate(divide="ignore", invalid="ignore"):
        lc_v, lc_u = dist.logcdf(v), dist.logcdf(u)
        ls_u, ls_v = dist.logsf(u), dist.logsf(v)
        by_cdf = lc_v + np.log1p(-np.exp(lc_u - lc_v))
        by_sf = ls_u + np.log1p(-np.exp(ls_v - ls_u))
        mid = np.log(np.maximum(1.0 - np.exp(lc_u) - np.exp(ls_v), 0.0))  # straddles 0: both tails are small
    high = u >= 0
    return np.where(low, by_cdf, np.where(high, by_sf, mid))


def continuous_pieces(kind: str, scale: float, s0: float, d: float, h: float, lower: float = -math.inf,
                      upper: float = math.inf, bounded: bool = False) -> Pieces:
    """Pieces of one coordinate with additive ``kind`` noise (``"laplace"`` or ``"gaussian"``) for the
    neighbours' statistics ``s0`` and ``s1 = s0 + d`` (``d > 0``), cut at the level sets ``L = k h``.

    Laplace: ``L(y) = (|y - s0| - |y - s1|) / b``: ``-eps`` for ``y <= s0``, ``+eps`` for ``y >= s1``,
    ``(2 y - s0 - s1) / b`` between. Gaussian: ``L(y) = d (2 y - s0 - s1) / (2 sigma^2)``. Both increase
    with ``y``, so the cut points are ``L^-1(k h)``.

    Clip (``lower`` / ``upper`` finite, ``bounded = False``; :class:`engine.mechanisms.clipped.Clipped`):
    releases inside the bounds keep the density, so the loss there is unchanged; the bounds are atoms
    of masses ``P_i(U <= lower - s_i)`` and ``P_i(U >= upper - s_i)``, each a piece with its point loss.
    Bounded domain (``bounded = True``; diffprivlib's ``LaplaceBoundedDomain``,
    :class:`engine.mechanisms.clipped.BoundedLaplace`): ``p_i(y) = f(y - s_i) / Z_i`` on ``[lower,
    upper]`` with ``Z_i = F(upper - s_i) - F(lower - s_i)`` (the neighbours' statistics lie inside the
    domain), so the loss is the unbounded one plus the constant ``log Z0 - log Z1`` and there are no
    atoms: the optimal test is still a threshold on ``y``, with that shifted loss."""
    if not d > 0:
        raise ValueError(f"d = {d!r} is invalid: the shift between the neighbours must be > 0")
    s1 = s0 + d
    dist = stats.laplace(scale=scale) if kind == "laplace" else stats.norm(scale=scale)
    const = 0.0
    if bounded:
        z0 = float(_log_interval(dist, lower - s0, upper - s0))
        z1 = float(_log_interval(dist, lower - s1, upper - s1))
        const = z0 - z1
    if kind == "laplace":
        eps = d / scale
        levels_lo, levels_hi = -eps + const, eps + const

        def inverse(level):  # y with L(y) + const = level, on (s0, s1)
            return ((level - const) * scale + s0 + s1) / 2.0

        def loss(y):
            return (np.abs(y - s0) - np.abs(y - s1)) / scale + const
        fixed = [s0, s1]  # the loss is flat beyond them: no cut there but the ends of the slope
    else:
        mu = d / scale
        levels_lo = -mu * mu / 2 - _GAUSS_SPAN * mu + const
        levels_hi = mu * mu / 2 + _GAUSS_SPAN * mu + const

        def inverse(level):
            return (level - const) * scale * scale / d + (s0 + s1) / 2.0

        def loss(y):
            return d * (2.0 * y - s0 - s1) / (2.0 * scale * scale) + const
        fixed = []
    ks = np.arange(math.ceil(levels_lo / h), math.floor(levels_hi / h) + 1)
    cuts = np.concatenate([inverse(ks * h), fixed, [lower, upper]])
    cuts = np.unique(cuts[(cuts >= lower) & (cuts <= upper)])
    if kind != "laplace":  # the lattice's first and last levels: beyond them the Gaussian loss is unbounded
        cuts = np.unique(np.concatenate([[lower], cuts, [upper]]))
    u, v = cuts[:-1], cuts[1:]
    lp0 = _log_interval(dist, u - s0, v - s0)
    lp1 = _log_interval(dist, u - s1, v - s1)
    with np.errstate(invalid="ignore"):
        lo_loss, hi_loss = loss(u), loss(v)
    if kind != "laplace":  # intervals reaching -inf / inf: their loss reaches the tail level only at one end
        lo_loss = np.where(np.isinf(u), -np.inf, lo_loss)
        hi_loss = np.where(np.isinf(v), np.inf, hi_loss)
    else:
        lo_loss = np.where(np.isinf(u), -d / scale + const, lo_loss)
        hi_loss = np.where(np.isinf(v), d / scale + const, hi_loss)
    parts = [(lp0, lp1, lo_loss, hi_loss)]
    if bounded:
        parts = [(lp0 - z0, lp1 - z1, lo_loss, hi_loss)]
    else:
        for bound, tail in ((lower, dist.logcdf), (upper, dist.logsf)):
            if math.isfinite(bound):  # the clip's atom: everything that fell beyond the bound
                a, c = float(tail(bound - s0)), float(tail(bound - s1))
                point = c - a
                parts.append((np.array([a]), np.array([c]), np.array([point]), np.array([point])))
    lp0, lp1, lo_loss, hi_loss = (np.concatenate(x) for x in zip(*parts))
    if kind != "laplace" and ks.size:  # beyond the first / last level (tails, far clip atoms): unbounded pieces
        first, last = ks[0] * h, ks[-1] * h
        below, above = hi_loss <= first + 1e-9 * h, lo_loss >= last - 1e-9 * h
        lo_loss, hi_loss = np.where(below, -np.inf, lo_loss), np.where(below, first, hi_loss)
        lo_loss, hi_loss = np.where(above, last, lo_loss), np.where(above, np.inf, hi_loss)
    keep = np.isfinite(lp0) | np.isfinite(lp1)
    return Pieces(lp0[keep], lp1[keep], lo_loss[keep], hi_loss[keep], unbounded=kind != "laplace")


def _cells(p: Pieces, h: float, k0: int, size: int):
    """Per-coordinate index laws on cells k0 .. k0 + size - 1 (optimistic) and on lattice points
    k0 .. k0 + size (pessimistic), plus the pessimistic masses at -inf (P0 only) and +inf (P1 only)."""
    a, c = np.exp(p.log_p0), np.exp(p.log_p1)
    lo = np.where(np.isfinite(p.loss_lo), p.loss_lo, -np.inf)
    hi = np.where(np.isfinite(p.loss_hi), p.loss_hi, np.inf)
    # each piece's cell [k h, (k + 1) h]; a point loss on a level belongs to the cell above it
    with np.errstate(invalid="ignore"):
        k_lo = np.where(np.isfinite(lo), np.floor(lo / h + 1e-9), np.nan)
        k_hi = np.where(np.isfinite(hi), np.ceil(hi / h - 1e-9), np.nan)
    k_lo = np.where(np.isnan(k_lo), k_hi - 1, k_lo)  # lower tail: cell below its finite end
    k_hi = np.where(np.isnan(k_hi), k_lo + 1, k_hi)
    k_hi = np.maximum(k_hi, k_lo + 1)
    if np.any(k_hi - k_lo > 1):
        raise ValueError("a piece straddles a lattice level: the cuts must include every level")
    opt0, opt1 = np.zeros(size), np.zeros(size)
    cell = (k_lo - k0).astype(np.int64)
    np.add.at(opt0, np.clip(cell, 0, size - 1), a)
    np.add.at(opt1, np.clip(cell, 0, size - 1), c)
    pes0, pes1 = np.zeros(size + 1), np.zeros(size + 1)
    inf0 = inf1 = 0.0
    r_lo, r_hi = np.exp(k_lo * h), np.exp(k_hi * h)
    below, above = np.isinf(lo) & (lo < 0), np.isinf(hi) & (hi > 0)
    both = ~below & ~above
    # finite cell: a_hi = (c - a e^{kh}) / (e^{(k+1)h} - e^{kh}), within [0, a]
    a_hi = np.clip(np.where(both, (c - a * r_lo) / (r_hi - r_lo), 0.0), 0.0, a)
    a_lo = a - a_hi
    # lower tail (ratio in [0, e^{hi}]): (a - c e^{-hi}, 0) at -inf and (c e^{-hi}, c) at hi
    tail_lo_a = np.where(below, np.minimum(c / r_hi, a), 0.0)
    inf0 += float(np.sum(np.where(below, a - tail_lo_a, 0.0)))
    # upper tail (ratio in [e^{lo}, inf)): (a, a e^{lo}) at lo and (0, c - a e^{lo}) at +inf
    tail_hi_c = np.where(above, np.minimum(a * r_lo, c), 0.0)
    inf1 += float(np.sum(np.where(above, c - tail_hi_c, 0.0)))
    at_lo = (k_lo - k0).astype(np.int64)
    at_hi = (k_hi - k0).astype(np.int64)
    np.add.at(pes0, np.clip(at_lo, 0, size), np.where(both, a_lo, np.where(above, a, 0.0)))
    np.add.at(pes1, np.clip(at_lo, 0, size), np.where(both, a_lo * r_lo, np.where(above, tail_hi_c, 0.0)))
    np.add.at(pes0, np.clip(at_hi, 0, size), np.where(both, a_hi, np.where(below, tail_lo_a, 0.0)))
    np.add.at(pes1, np.clip(at_hi, 0, size), np.where(both, a_hi * r_hi, np.where(below, c, 0.0)))
    return opt0, opt1, pes0, pes1, inf0, inf1


@dataclass(frozen=True)
class LatticeCurves:
    """The two reduced products: optimistic (reported, never below the truth) and pessimistic (never above)."""

    optimistic: tuple  # (log P0, log P1) per total cell index
    pessimistic: tuple  # (log P0, log P1) per lattice point, with the +-inf atoms appended
    h: float


def _loss_width(coordinates) -> float:
    """The sum of the coordinates' loss ranges, read off pieces cut at a rough step ``h``, taken finer until the
    ranges span many steps: a Gaussian coordinate's range (+-9 sd of its loss) ends at the lattice levels it is cut
    at, so a range narrower than the step (sigma = 40 against a shift of 1: about +-0.23) collapsed onto one level,
    the width to 1e-12 and the lattice to 1e15 cells (a MemoryError instead of a curve)."""
    step = 1.0
    while True:
        width = sum(max(hi - lo, 1e-12) for lo, hi in (build(step).span() for build in coordinates))
        if width >= 50.0 * step or step < 1e-9:
            return width
        step = min(step / 100.0, width / 50.0) if width > 1e-9 else step / 100.0


def lattice_curves(coordinates, cells: int = DEFAULT_CELLS) -> LatticeCurves:
    """Build the optimistic and pessimistic products of ``coordinates`` (a list of :class:`Pieces`
    *builders*: callables ``h -> Pieces``, since the cuts depend on the step) on a lattice of about
    ``cells`` cells over the sum of their loss ranges."""
    width = _loss_width(coordinates)
    h = width / cells
    pieces = [build(h) for build in coordinates]
    o0, o1 = np.array([1.0]), np.array([1.0])
    e0, e1 = np.array([1.0]), np.array([1.0])
    fin0 = fin1 = 1.0  # P0 (P1) probability that no coordinate took its -inf (+inf) atom
    k_opt = k_pes = 0
    for p in pieces:
        lo, hi = p.span()
        k0 = int(math.floor(lo / h + 1e-9)) - 1
        size = int(math.ceil(hi / h - 1e-9)) - k0 + 1
        a0, a1, b0, b1, inf0, inf1 = _cells(p, h, k0, size)
        o0, o1 = np.convolve(o0, a0), np.convolve(o1, a1)
        e0, e1 = np.convolve(e0, b0), np.convolve(e1, b1)
        k_opt += k0
        k_pes += k0
        fin0 *= 1.0 - inf0
        fin1 *= 1.0 - inf1
    with np.errstate(divide="ignore"):
        opt = (np.log(np.clip(o0, 0, None)), np.log(np.clip(o1, 0, None)))
        pes = (np.log(np.concatenate([np.clip(e0, 0, None), [1.0 - fin0, 0.0]])),
               np.log(np.concatenate([np.clip(e1, 0, None), [0.0, 1.0 - fin1]])))
    return LatticeCurves(opt, pes, h)


def lattice_product(coordinates, experiment_class, loss_bound: float | None = None, cells: int = DEFAULT_CELLS):
    """The optimistic product as an ``experiment_class`` (:class:`.tradeoff.FiniteExperiment`) whose
    ``max_error`` is the largest gap to the pessimistic one. ``loss_bound``: the exact largest privacy
    loss when known (pure DP: the sum of the coordinates' eps), which the merged cells would understate."""
    curves = lattice_curves(coordinates, cells)
    unbounded = loss_bound is None
    pes = experiment_class(*curves.pessimistic)
    opt = experiment_class(*curves.optimistic, unbounded=unbounded)
    grid = np.union1d(opt.alpha_vertices, pes.alpha_vertices)
    gap = float(np.max(opt.tradeoff(grid) - pes.tradeoff(grid)))
    out = experiment_class(*curves.optimistic, max_error=max(gap, 0.0) + 1e-12, unbounded=unbounded)
    if loss_bound is not None:
        out.exact_max_loss = float(loss_bound)
    out.lower = pes
    return out


def log_conv(la, lb):
    """log of the convolution of exp(la) and exp(lb) (small supports, term by term in log space)."""
    n = la.size + lb.size - 1
    i = np.arange(la.size)[:, None]
    k = np.arange(n)[None, :]
    j = k - i
    ok = (j >= 0) & (j < lb.size)
    terms = np.where(ok, la[:, None] + lb[np.clip(j, 0, lb.size - 1)], -np.inf)
    with np.errstate(invalid="ignore"):
        return special.logsumexp(terms, axis=0)
