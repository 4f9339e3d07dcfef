"""The optimal attack on one person, exactly: the Neyman–Pearson trade-off between two neighbours.

Setting (Dong, Roth & Su 2019, "Gaussian differential privacy", §2). Two datasets differ in one
record: the target's value is ``x0`` or ``x1`` and everything else is fixed. The release then has law
``P0`` or ``P1``. A test of ``H0: x0`` against ``H1: x1`` has type I error ``alpha = E_P0[phi]`` and
type II error ``beta = 1 - E_P1[phi]``; the *trade-off function*

    T(P0, P1)(alpha) = inf { beta_phi : alpha_phi <= alpha }

is the lowest type II error any attack can reach at false-positive rate ``alpha``. By the
Neyman–Pearson lemma the infimum is attained by the likelihood-ratio test: reject ``H0`` when the
privacy loss ``L = log dP1/dP0`` exceeds a threshold ``c``, and with probability ``gamma`` when
``L = c``. So

    alpha(c, gamma) = P0(L > c) + gamma P0(L = c),   beta(c, gamma) = P1(L < c) + (1 - gamma) P1(L = c).

For a release with finitely many outcomes ``w`` (``p0(w)``, ``p1(w)``), ordering the outcomes by
``L(w)`` from the largest and adding them to the rejection region one at a time gives the vertices
``(sum p0, 1 - sum p1)``; the randomised tests on the boundary outcome fill the segments between
them. The curve is therefore the piecewise-linear lower convex hull through those vertices
(:class:`FiniteExperiment`): convex (slopes ``-e^L`` decrease in size as ``L`` falls), decreasing, from
``(0, 1 - P1(p0 = 0))`` to ``(1, 0)``.

Neighbours (:func:`~engine.protection.pairs.neighbours`, every model): the two record values whose
statistics are furthest apart in the mechanism's norm, i.e. the shift ``d = t(x1) - t(x0)`` of the
released statistic at the sensitivity (for an unknown n, add/remove-one: ``d = t(x)`` and the released
size moves by one, an extra coordinate with the size mechanism's noise). With coordinate-wise independent
noise ``P1`` is ``P0`` shifted by ``d``, coordinate by coordinate:

* **Gaussian** ``N(0, sigma^2 I)``: ``L = <d, y>/sigma^2 - |d|^2/(2 sigma^2)`` is normal with mean
  ``-/+ mu^2/2`` and sd ``mu = |d|_2 / sigma`` under ``P0``/``P1``, so
  ``beta(alpha) = Phi(Phi^-1(1 - alpha) - mu)`` (DRS19, Eq. 2.3) — exactly, no discretisation.
* **Discrete Gaussian**: ``L`` is the same affine function of the integer ``m = <d, y>``, whose law
  under ``P0`` is the convolution of the scaled noise pmfs; under ``P1`` ``m`` is shifted by ``|d|^2``.
  A finite experiment on ``m`` (tails beyond ``1e-18`` lumped into the end outcomes: a garbling of
  that mass only).
* **Discrete Laplace** (pmf ``e^{-|k|/t}/Z``): per coordinate ``L_j = (|y| - |y - d_j|)/t`` takes the
  ``|d_j| + 1`` values ``(2k - |d_j|)/t``; outcomes with equal ``L`` are merged (a sufficient
  reduction, lossless), and the coordinates combine as a product experiment.
* **Randomized response**: the target's own report ``z``, ``p0 = Q[x0, .]``, ``p1 = Q[x1, .]``.
* **Laplace** ``Lap(0, b)``, one coordinate, ``d > 0``: ``L = -eps`` on ``y <= 0`` (``P0`` mass 1/2),
  ``L = +eps`` on ``y >= d`` (mass ``e^-eps/2``), ``L = (2y - d)/b`` continuous in between
  (``eps = d/b``). Exactly (DRS19 §2, the Laplace example; the likelihood ratio is monotone in
  ``y``, so the optimal tests are thresholds on ``y``): with ``F`` the cdf of ``Lap(0, 1)``,
  ``beta(alpha) = F(F^-1(1 - alpha) - eps)`` for ``Lap(0, 1)`` shifted by ``eps``, i.e.

      beta = 1 - e^eps alpha                 for alpha < e^-eps / 2,
      beta = e^-eps / (4 alpha)              for e^-eps / 2 <= alpha <= 1/2,
      beta = e^-eps (1 - alpha)              for alpha > 1/2          (:func:`laplace_tradeoff`).

  The continuous middle is cut into ``M`` bins of equal width in ``y`` (hence in ``L``) with exact
  ``P0``/``P1`` masses. Grouping outcomes is a garbling, so the computed curve is never below the true
  one; and because every bin boundary is a level set of ``L`` the computed vertices *are* points of
  the true curve, the segments its chords. A convex curve lies below its chord over ``[a, b]`` by at
  most ``(b - a)(f'(b) - f'(a))/4``, with ``f' = -e^L`` at the bin edges: that maximum over bins is
  ``max_error``: about ``p0(bin) e^L (2 eps / M) / 4 <= eps^2 / (4 M^2)`` (1.6e-8 at eps = 1 with the
  default ``M = 4000``).
* **Several Laplace coordinates** (dirichlet_multinomial's two counts, the nine sums of
  linear_regression, the 2K cells of naive_bayes_loglinear, a statistic and its noisy size) and any mix
  of laws: the privacy loss is a sum of independent per-coordinate losses, each with atoms and a
  continuous part; :mod:`.lattice` computes the product exactly up to a *stated* error: an optimistic
  curve (merged cells of a loss lattice: a garbling, never below the truth) and a pessimistic one (each
  cell's pieces split onto its two ends: never above), both by convolution; the curve reported is the
  optimistic one and ``max_error`` the largest gap between the two.

Clipped releases (``clip = [lo, hi]``; :class:`engine.mechanisms.clipped.Clipped`). The clipped
release is a post-processing of the unclipped one, so its curve lies on or above the unclipped curve.
Its law is exact with two atoms: ``P_i(y = lo) = F(lo - s_i)``, ``P_i(y = hi) = 1 - F(hi - s_i)`` and the
noise density between; the likelihood ratio still increases with ``y``. Against Laplace noise a bound
outside ``[s0, s1]`` costs the attacker nothing (the loss is already flat there: merging equal losses is
lossless); a bound between the neighbours caps the loss at the atom's ``log F(lo - s1) / F(lo - s0)``.
The curve depends on where the pair sits, which the rest of the data decide (a clip narrower than the
statistic's range: Gaussian noise clipped to [3, 9] with n = 20, the curve of the one placement once shown,
s0 = 6, lay up to 0.013 above the lowest). For one clipped coordinate the informed adversary faces every
placement ``s0`` the model allows, and :class:`ClippedWorst` reports the pointwise lowest curve over all of them
in closed form (the clipped curve is the unclipped one between the atoms' masses and two chords outside), the
largest loss over them and the beliefs of the most powerful placement; several coordinates are each centred
(:func:`_position`). diffprivlib's bounded domain (``LaplaceBoundedDomain``) has the density ``f(y - s_i) /
Z(s_i)`` on ``[lo, hi]``: the Laplace loss plus ``log Z(s0) - log Z(s1)``,
still increasing in ``y``, so the optimal tests are thresholds on ``y``, in closed form. There the placement
matters most at the domain's ends (the normalisers differ most), so one such coordinate is not placed once:
the informed adversary faces whatever placement the data make, and :class:`BoundedDomainWorst` reports the
pointwise lowest curve over every placement, the largest loss over them (diffprivlib's eps, reached at an end)
and the beliefs of the most powerful placement. One discrete clipped coordinate is a finite law, exactly
(``max_error = 0``).

Why binary randomized response lies *on* the epsilon-DP curve, and Laplace only touches it.
An epsilon-DP mechanism has ``e^-eps <= dP1/dP0 <= e^eps`` wherever it matters, so every test obeys
``1 - beta <= e^eps alpha`` and ``beta >= e^-eps (1 - alpha)`` (and symmetrically): the bound
``f_eps(alpha) = max(0, 1 - e^eps alpha, e^-eps (1 - alpha))`` (Wasserman & Zhou 2010; DRS19 Eq. 2.2)
is two line segments with slopes ``-e^eps`` and ``-e^-eps`` meeting at ``alpha* = 1/(1 + e^eps)``.
Binary randomized response has two outcomes with likelihood ratios exactly ``e^eps`` and ``e^-eps``
and ``P0(z = x1) = 1/(1 + e^eps)``: its vertices are ``(0, 1)``, ``(alpha*, alpha*)``, ``(1, 0)``, the
very vertices of ``f_eps``, so the two curves coincide (binary RR is the extremal eps-DP pair; Kairouz,
Oh & Viswanath 2015). Laplace noise has the ratios ``e^{+-eps}`` only on its tails (masses ``e^-eps/2``
and ``1/2``), so its curve follows the slope ``-e^eps`` only for ``alpha < e^-eps/2`` and the slope
``-e^-eps`` only for ``alpha > 1/2``; in between its likelihood ratio takes every value in
``(e^-eps, e^eps)``, the curve bends smoothly (``e^-eps/(4 alpha)``) and lies strictly above the kink
of ``f_eps``: at ``alpha*`` it is ``e^-eps (1 + e^eps)/4 = (1 + e^-eps)/4 > 1/(1 + e^eps)`` for every
``eps > 0`` (AM-GM: ``(1 + e^eps)(1 + e^-eps) > 4``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special, stats

from ..core.validation import fail
from ..mechanisms import (DiscreteGaussian, DiscreteLaplace, Gaussian, Laplace, RandomizedResponse,
                          discrete_gaussian_log_normalizer, discrete_laplace_log_pmf)
from ..mechanisms.clipped import BoundedLaplace, Clipped
from .lattice import continuous_pieces, finite_pieces, lattice_product
from .lattice import log_conv as _log_conv
from .pairs import RISK_MODELS, Neighbours, base_mechanism, neighbours, noise_law

__all__ = ["FiniteExperiment", "GaussianExperiment", "Neighbours", "neighbours", "experiment",
           "epsilon_dp_tradeoff", "epsilon_dp_ceiling", "gdp_tradeoff", "zcdp_delta", "zcdp_tradeoff",
           "laplace_tradeoff", "alpha_grid", "RISK_MODELS", "LAPLACE_BINS", "BoundedDomainWorst",
           "ClippedWorst"]

#: Bins of the continuous middle of one unclipped Laplace coordinate (several coordinates: :mod:`.lattice`).
LAPLACE_BINS = 4000
_TAIL = 1e-18


def alpha_grid(points: int = 201) -> np.ndarray:
    """The type I errors at which curves are reported: ``points`` equally spaced values on [0, 1]."""
    return np.linspace(0.0, 1.0, points)


def epsilon_dp_tradeoff(alpha, epsilon: float, delta: float = 0.0) -> np.ndarray:
    """The (epsilon, delta)-DP curve ``max(0, 1 - delta - e^eps alpha, e^-eps (1 - delta - alpha))``."""
    a = np.asarray(alpha, dtype=float)
    big = math.exp(min(epsilon, 700.0))  # beyond e^700 every alpha > 1e-304 already gives 0
    return np.maximum.reduce([np.zeros_like(a), 1.0 - delta - big * a, math.exp(-epsilon) * (1.0 - delta - a)])


def epsilon_dp_ceiling(epsilon: float) -> float:
    """The largest belief an eps-DP release lets someone who knows everyone else reach from 50/50 about one person:
    ``e^eps / (1 + e^eps)`` (the likelihood ratio of the two neighbours is at most ``e^eps``). For a package of
    pure-DP releases, at their total eps (basic composition), what all of them together allow."""
    return float(special.expit(epsilon))


def gdp_tradeoff(alpha, mu: float) -> np.ndarray:
    """The mu-GDP curve ``Phi(Phi^-1(1 - alpha) - mu)`` (DRS19 Eq. 2.3)."""
    a = np.asarray(alpha, dtype=float)
    return stats.norm.cdf(stats.norm.isf(a) - mu)


def zcdp_delta(rho: float, epsilon: float) -> float:
    """The delta of (epsilon, delta)-DP implied by rho-zCDP (Canonne, Kamath & Steinke 2020, Cor. 13):
    ``inf_{a > 1} exp((a - 1)(a rho - epsilon) + a log(1 - 1/a)) / (a - 1)``, the infimum found by
    bisection on the derivative of the exponent, as in Steinke's ``cdp2adp`` (:func:`_zcdp_deltas` derives it and
    takes many epsilons at once; one value in plain floats is twenty times faster than through arrays)."""
    if epsilon < 0:
        return 1.0
    lo, hi = 1.01, (epsilon + 1.0) / (2.0 * rho) + 2.0
    for _ in range(200):
        a = 0.5 * (lo + hi)
        if (2 * a - 1) * rho - epsilon + math.log1p(-1.0 / a) < 0:
            lo = a
        else:
            hi = a
    a = 0.5 * (lo + hi)
    log_delta = (a - 1) * (a * rho - epsilon) + a * math.log1p(-1.0 / a) - math.log(a - 1.0)
    return 1.0 if log_delta >= 0 else math.exp(log_delta)


def _zcdp_deltas(rho: float, epsilon: np.ndarray) -> np.ndarray:
    """:func:`zcdp_delta` at every epsilon of an array at once: the same bisection on ``a``, each step an array
    operation. The exponent ``g(a) = (a - 1)(a rho - epsilon) + a log(1 - 1/a) - log(a - 1)`` has the derivative

        g'(a) = (2a - 1) rho - epsilon + log(1 - 1/a) + 1/(a - 1) - 1/(a - 1) = (2a - 1) rho - epsilon + log(1 - 1/a),

    increasing in ``a`` (``g`` is convex), so the minimiser is where its sign changes, bracketed by ``a = 1.01`` and
    ``(epsilon + 1) / (2 rho) + 2`` (where ``g' > 0``). At most 200 halvings, as before; they stop once no bracket
    moves (the midpoint then equals an end in floating point, a fixed point of every later step, so the result is
    the one 200 steps give). Negative epsilon: 1."""
    eps = np.asarray(epsilon, dtype=float)
    lo = np.full(eps.shape, 1.01)
    hi = (eps + 1.0) / (2.0 * rho) + 2.0
    for _ in range(200):
        a = 0.5 * (lo + hi)
        below = (2 * a - 1) * rho - eps + np.log1p(-1.0 / a) < 0
        new_lo, new_hi = np.where(below, a, lo), np.where(below, hi, a)
        if np.array_equal(new_lo, lo) and np.array_equal(new_hi, hi):
            break
        lo, hi = new_lo, new_hi
    a = 0.5 * (lo + hi)
    log_delta = (a - 1) * (a * rho - eps) + a * np.log1p(-1.0 / a) - np.log(a - 1.0)
    with np.errstate(over="ignore"):
        return np.where((eps < 0) | (log_delta >= 0), 1.0, np.exp(np.minimum(log_delta, 0.0)))


def zcdp_tradeoff(alpha, rho: float, points: int = 600) -> np.ndarray:
    """The curve every rho-zCDP mechanism stays above: rho-zCDP implies (epsilon, delta(epsilon))-DP
    for every epsilon >= 0 (:func:`zcdp_delta`), so beta(alpha) >= the largest of those
    (epsilon, delta)-DP curves. Taken over ``points`` values of epsilon from 0 to where delta < 1e-15
    (a finite set: the envelope is at most the exact one, hence still a valid bound). All of it as arrays: the
    deltas of the ``points`` epsilons in one bisection (:func:`_zcdp_deltas`), then the (points x alpha) table of
    ``max(0, 1 - delta - e^eps alpha, e^-eps (1 - delta - alpha))`` (:func:`epsilon_dp_tradeoff`) and its largest
    row entry per alpha; it was one Python bisection and one curve per epsilon, 40 ms of every zCDP ``risk()``."""
    a = np.asarray(alpha, dtype=float)
    top = rho + 2.0 * math.sqrt(rho * math.log(1e15)) + 1.0
    eps = np.linspace(0.0, top, points)
    delta = _zcdp_deltas(rho, eps)[:, None]
    big, small = np.exp(np.minimum(eps, 700.0))[:, None], np.exp(-eps)[:, None]
    flat = a.reshape(1, -1)
    table = np.maximum(1.0 - delta - big * flat, small * (1.0 - delta - flat))
    return np.maximum(table.max(axis=0), 0.0).reshape(a.shape)


def laplace_tradeoff(alpha, epsilon: float) -> np.ndarray:
    """Closed form of the Laplace mechanism's curve at shift/scale ``epsilon`` (module docstring)."""
    a = np.asarray(alpha, dtype=float)
    e = math.exp(-epsilon)
    with np.errstate(divide="ignore"):
        mid = e / (4.0 * np.where(a > 0, a, 1.0))
    return np.where(a < e / 2, 1.0 - a / e, np.where(a <= 0.5, mid, e * (1.0 - a)))


class FiniteExperiment:
    """Outcomes with log probabilities under the two neighbours; the optimal curve is their hull.

    ``max_error``: the largest amount by which the computed curve can lie above the true one
    (0 for exact finite laws; the chord bound for one binned Laplace coordinate; the gap to the
    pessimistic product for several coordinates, :mod:`.lattice`). ``unbounded``: the true privacy
    loss has no bound (Gaussian-type noise), whatever the truncated support shows."""

    exact_max_loss = None

    def __init__(self, log_p0, log_p1, max_error: float = 0.0, unbounded: bool = False):
        self.unbounded = unbounded
        lp0 = np.asarray(log_p0, dtype=float).ravel()
        lp1 = np.asarray(log_p1, dtype=float).ravel()
        keep = np.isfinite(lp0) | np.isfinite(lp1)
        lp0, lp1 = lp0[keep], lp1[keep]
        lp0 -= special.logsumexp(lp0)
        lp1 -= special.logsumexp(lp1)
        with np.errstate(invalid="ignore"):
            loss = np.where(np.isfinite(lp0), lp1 - lp0, np.inf)  # p0 = 0: infinite likelihood ratio
        order = np.argsort(-loss, kind="stable")
        self.loss = loss[order]
        self.p0, self.p1 = np.exp(lp0[order]), np.exp(lp1[order])
        self.max_error = float(max_error)
        a = np.concatenate([[0.0], np.cumsum(self.p0)])
        # outcomes possible under P0 whose probability underflows (e^-1250) still leave alpha = 0 itself:
        # give them the smallest positive alphas, so beta(0) = 1 - P1(outcomes impossible under P0) exactly
        possible = np.concatenate([[False], np.cumsum(np.isfinite(lp0[order])) > 0])
        tiny = np.arange(a.size) * 5e-324
        a = np.where(possible & (a < tiny), tiny, a)
        tail1 = np.cumsum(self.p1[::-1])[::-1]  # P1 of the outcomes not yet rejected: exact where small
        b = np.concatenate([[1.0], tail1[1:] / tail1[0], [0.0]])
        a = np.minimum(a, 1.0)
        a[-1], b[-1] = 1.0, 0.0
        b = np.clip(b, 0.0, 1.0)
        # several vertices at one alpha (outcomes impossible under P0): keep the lowest beta; a vertex
        # within rounding (1e-14) of alpha = 1 is the end point itself
        last = np.concatenate([(a[1:] > a[:-1]) & (a[:-1] < 1.0 - 1e-14), [True]])
        self.alpha_vertices, self.beta_vertices = a[last], np.minimum.accumulate(b)[last]

    def tradeoff(self, alpha) -> np.ndarray:
        """beta(alpha) of the optimal (randomised) test."""
        return np.interp(np.asarray(alpha, dtype=float), self.alpha_vertices, self.beta_vertices)

    def max_loss(self) -> float:
        """The largest privacy loss with positive probability (inf when unbounded or P0-impossible outcomes);
        ``exact_max_loss`` when the outcomes were merged (:mod:`.lattice`) and the bound is known exactly."""
        if self.unbounded:
            return math.inf
        if self.exact_max_loss is not None:
            return self.exact_max_loss
        mass = (self.p0 + self.p1) > 0
        return float(np.max(np.abs(self.loss[mass])))

    def belief_law(self):
        """(beliefs, probabilities): the 50/50 adversary's posterior probability of the true value,
        the truth drawn 50/50 and the release from it; merged over equal beliefs."""
        with np.errstate(invalid="ignore", divide="ignore"):
            b1 = np.where(np.isinf(self.loss), 1.0, special.expit(self.loss))
        beliefs = np.concatenate([b1, 1.0 - b1])
        probs = np.concatenate([0.5 * self.p1, 0.5 * self.p0])
        order = np.argsort(beliefs, kind="stable")
        return beliefs[order], probs[order]

    def belief_histogram(self, edges) -> np.ndarray:
        """Probability of a belief in each bin (edges[i], edges[i+1]] (the first bin closed on the left)."""
        b, p = self.belief_law()
        idx = np.clip(np.searchsorted(np.asarray(edges, dtype=float), b, side="left") - 1, 0, len(edges) - 2)
        return np.bincount(idx, weights=p, minlength=len(edges) - 1) / p.sum()

    def belief_share_at_least(self, belief: float, tol: float = 1e-6) -> float:
        """The share of releases after which the belief in the truth is ``belief`` or more (to ``tol``: a clipped
        or several-coordinate release merges its outcomes on a loss lattice, whose cells sit a few 1e-8 below the
        exact loss). At the largest belief (pure DP), the share of releases that reach the ceiling, often most of
        them (discrete Laplace at t = 3 on a two-valued record: 58%)."""
        b, p = self.belief_law()
        return float(p[b >= belief - tol].sum() / p.sum())

    def belief_quantile(self, q) -> np.ndarray:
        """Quantiles of the belief law (the smallest belief whose cdf reaches q). For binned Laplace noise an
        outcome's belief is its bin's, within ``eps / (4 M)`` of the beliefs inside the bin (expit' <= 1/4);
        the two tails, where the maximum sits, are exact."""
        b, p = self.belief_law()
        cdf = np.cumsum(p)
        cdf /= cdf[-1]
        idx = np.searchsorted(cdf, np.asarray(q, dtype=float) - 1e-13, side="left")
        return b[np.minimum(idx, b.size - 1)]


@dataclass(frozen=True)
class GaussianExperiment:
    """Gaussian noise: ``L ~ N(+mu^2/2, mu^2)`` under ``P1`` with ``mu = |d|_2 / sigma``; closed forms."""

    mu: float
    max_error = 0.0
    unbounded = True

    def tradeoff(self, alpha) -> np.ndarray:
        return gdp_tradeoff(alpha, self.mu)

    def max_loss(self) -> float:
        return math.inf

    def belief_histogram(self, edges) -> np.ndarray:
        """P(belief in (edges[i], edges[i+1]]): the belief is expit(L), L ~ N(mu^2/2, mu^2)."""
        e = np.asarray(edges, dtype=float)
        with np.errstate(divide="ignore"):
            cdf = stats.norm.cdf((special.logit(e) - self.mu**2 / 2) / self.mu)
        return np.diff(cdf)

    def belief_quantile(self, q) -> np.ndarray:
        """The belief in the truth is expit(L), L ~ N(mu^2/2, mu^2) under either truth (symmetry)."""
        return special.expit(self.mu**2 / 2 + self.mu * stats.norm.ppf(np.asarray(q, dtype=float)))


def experiment(model, mechanism, pair: Neighbours | None = None, n_mechanism=None):
    """The two laws of the release for the neighbouring pair (module docstring); with ``n_mechanism``
    (an unknown n) the release is the pair (s_dp, n_dp) and the neighbours add or remove one record."""
    if mechanism is None:
        fail("mechanism", None, "the privacy risk needs the engine mechanism that made the release (a custom "
             "log_mechanism alone has no noise law to attack)")
    pair = pair or neighbours(model, mechanism, unknown_n=n_mechanism is not None)
    if isinstance(mechanism, RandomizedResponse):
        lq = mechanism.log_Q
        return FiniteExperiment(lq[pair.x0], lq[pair.x1])
    d = np.asarray(pair.shift, dtype=float)
    keep = d != 0
    coords = [(mechanism, float(dj), j) for dj, j in zip(d[keep], np.flatnonzero(keep))]
    if pair.size_shift:
        coords.append((n_mechanism, float(pair.size_shift), None))
    plain = all(noise_law(m) in (Laplace, Gaussian, DiscreteLaplace, DiscreteGaussian) or _on_lattice(m)
                for m, _, _ in coords)
    if plain:
        fast = _plain_experiment(coords)
        if fast is not None:
            return fast
    ranges = _ranges(model, pair)
    clipped = [j for j, (m, _, _) in enumerate(coords) if isinstance(m, (Clipped, BoundedLaplace))]
    positions = [_position(m, abs(dj), ranges.get(j), model) if i in clipped else 0.0
                 for i, (m, dj, j) in enumerate(coords)]
    if len(coords) == 1 and isinstance(coords[0][0], BoundedLaplace):  # every placement: the worst (docstring)
        m, dj, j = coords[0]
        return _bounded_domain_worst(coords, _placements(m, min(abs(dj), m.upper - m.lower), ranges.get(j), model,
                                                         positions[0]))
    if len(coords) == 1 and clipped:  # one clipped coordinate: every placement, the worst (ClippedWorst)
        return _clipped_worst(coords, ranges.get(coords[0][2]), model, positions[0])
    return _coordinates_experiment(coords, positions)


def _coordinates_experiment(coords, positions):
    """The product experiment of independent coordinates, each pair placed at ``positions`` (the first
    neighbour's statistic; it matters only against a clip or a bounded domain)."""
    builders, exact_parts, bound = [], [], 0.0
    for (mech, dj, _), s0 in zip(coords, positions):
        base = base_mechanism(mech)
        lo, hi = (mech.lower, mech.upper) if isinstance(mech, (Clipped, BoundedLaplace)) else (-math.inf, math.inf)
        if isinstance(mech, BoundedLaplace):  # statistics are clamped into the domain first: at most hi - lo apart
            dj = min(abs(dj), hi - lo)
        if isinstance(base, (DiscreteLaplace, DiscreteGaussian)):
            lp0, lp1 = _discrete_coordinate(base, s0, abs(dj), lo, hi)
            exact_parts.append((lp0, lp1))
            builders.append(lambda h, lp0=lp0, lp1=lp1: finite_pieces(lp0, lp1))
            part = _clip_atom_loss(base, s0, abs(dj), lo, hi) if isinstance(base, DiscreteGaussian) else \
                _finite_max(lp0, lp1)
            bound = None if bound is None or math.isinf(part) else bound + part
        elif isinstance(base, (Laplace, Gaussian, BoundedLaplace)):
            kind = "gaussian" if isinstance(base, Gaussian) else "laplace"
            bounded = isinstance(mech, BoundedLaplace)
            builders.append(lambda h, kind=kind, sc=base.scale, s0=s0, dj=abs(dj), lo=lo, hi=hi, bd=bounded:
                            continuous_pieces(kind, sc, s0, dj, h, lo, hi, bd))
            if bound is not None:
                part = _clip_atom_loss(base, s0, abs(dj), lo, hi) if kind == "gaussian" else \
                    _continuous_max(kind, base.scale, s0, abs(dj), lo, hi, bounded)
                bound = None if math.isinf(part) else bound + part
        else:
            what = mech.describe() if hasattr(mech, "describe") else getattr(mech, "name", mech)
            fail("mechanism", what, "has no trade-off curve here: the curves are computed for noise added to the "
                 "statistic itself (Laplace, Gaussian and their discrete forms, clipped or on a bounded domain); its "
                 "stated budget still bounds every attack")
    if len(coords) > 1 and any(isinstance(base_mechanism(m), (Gaussian, DiscreteGaussian)) for m, _, _ in coords):
        # several coordinates are each centred (_position): a Gaussian clip's atom loss there is the centred pair's,
        # far below what other placements reach (ClippedWorst, "The ceiling"), so no ceiling is claimed
        bound = None
    if len(exact_parts) == len(coords) == 1:  # one discrete coordinate (clipped): its finite law, exactly
        lp0, lp1 = exact_parts[0]
        out = FiniteExperiment(lp0, lp1, unbounded=bound is None)
        out.exact_max_loss = bound  # the atoms' (a far bound's atom is lumped with the tail in lp0, lp1)
    else:
        out = lattice_product(builders, FiniteExperiment, loss_bound=bound)
    out.positions = tuple(float(v) for v in positions)
    return out


#: placements of a bounded-domain pair evaluated in closed form: every whole number up to this many, else a grid
MAX_PLACEMENTS = 2001


def _placements(mech, d: float, span, model, centre: float) -> np.ndarray:
    """Every placement ``s0`` of a bounded-domain pair (s0, s0 + d) the model allows: both statistics in the
    domain and in the statistic's range. Whole numbers for an integer statistic (all of them, up to
    ``MAX_PLACEMENTS``); otherwise ``MAX_PLACEMENTS`` equally spaced values (rounded for an integer statistic). Both
    ends and the centre always. Placements more than ``40 b`` from both ends of the domain are all one: there
    ``Z0 = Z1 = 1`` to ``e^-40`` and the pair sees plain Laplace noise, so one of them stands for all."""
    rlo, rhi = span if span is not None else (-math.inf, math.inf)
    first, last = max(rlo, mech.lower), min(rhi - d, mech.upper - d)
    if not (math.isfinite(first) and math.isfinite(last)) or last <= first:
        return np.array([float(centre)])
    integer = getattr(model, "integer_statistic", False)
    if integer:
        first, last = float(math.ceil(first)), float(math.floor(last))
    if integer and last - first < MAX_PLACEMENTS:
        grid = np.arange(first, last + 1.0)
    else:
        grid = np.linspace(first, last, MAX_PLACEMENTS)
        grid = np.round(grid) if integer else grid
    grid = np.unique(np.concatenate([grid, [first, last, float(centre)]]))
    # far from both ends (40 b: the normalisers equal 1 to e^-40) every placement has one and the same law: keep one
    far = (grid - mech.lower > 40.0 * mech.scale) & (mech.upper - grid - d > 40.0 * mech.scale)
    return grid[~far | (np.cumsum(far) == 1)]


def _laplace_cdf(x, b: float):
    """The cdf of Lap(0, b): ``e^{x/b} / 2`` below 0, ``1 - e^{-x/b} / 2`` above (one exponential per value)."""
    x = np.asarray(x, dtype=float)
    half = 0.5 * np.exp(-np.abs(x) / b)
    return np.where(x < 0, half, 1.0 - half)


def _laplace_ppf(u, b: float):
    """The inverse of :func:`_laplace_cdf` on (0, 1) (one logarithm per value)."""
    u = np.clip(np.asarray(u, dtype=float), 1e-300, 1.0 - 1e-16)
    low = u < 0.5
    mag = -b * np.log(2.0 * np.where(low, u, 1.0 - u))
    return np.where(low, -mag, mag)


class _WorstOfPlacements:
    """What :class:`BoundedDomainWorst` and :class:`ClippedWorst` share: the beliefs of the informed adversary are
    those at one placement, ``worst`` (an experiment of its own, chosen as each class says), while the curve and
    the ceiling are over every placement."""

    worst = None

    def belief_histogram(self, edges) -> np.ndarray:
        return self.worst.belief_histogram(edges)

    def belief_share_at_least(self, belief: float, tol: float = 1e-6) -> float:
        return self.worst.belief_share_at_least(belief, tol)

    def belief_quantile(self, q) -> np.ndarray:
        return self.worst.belief_quantile(q)


class BoundedDomainWorst(_WorstOfPlacements):
    """diffprivlib's bounded domain against the informed adversary: the worst of every placement of the pair.

    The adversary knows everyone else, so where the pair sits (``s0``, the others' statistic) is whatever the
    data make it, and a statement about one person must hold at every placement the model allows. A mechanism
    is f-DP when ``T(P_s0, P_s1) >= f`` for every pair of neighbours (Dong, Roth & Su 2019, Def. 2.3), so the
    tightest such ``f`` is the pointwise infimum over placements,

        beta(alpha) = min_{s0} beta_{s0}(alpha),

    at each ``alpha`` the placement that lets the best attack catch most. It is reported as it is, not its
    convex hull: a chord between two placements' curves would be a test that randomises over *datasets*, which
    no attacker of one fixed dataset can run. Likewise the ceiling is the largest loss over placements and
    values, ``max_{s0} sup_y |L_{s0}(y)|``.

    Each placement in closed form. On ``[lo, hi]`` the law is ``p_i(y) = f(y - s_i) / Z_i``, ``Z_i = F(hi - s_i) -
    F(lo - s_i)`` (``F`` the cdf of ``Lap(0, b)``), so ``L(y) = (|y - s0| - |y - s1|) / b + log Z0 - log Z1``
    increases with ``y``; the optimal tests are thresholds ``y > t`` (flat stretches of ``L`` give the segments
    the randomised tests would), with no atoms. Hence, exactly,

        alpha = (F(hi - s0) - F(t - s0)) / Z0,   t = s0 + F^-1(F(hi - s0) - alpha Z0),
        beta  = (F(t - s1) - F(lo - s1)) / Z1,

    and ``sup_y |L| = max(|L(lo)|, |L(hi)|)`` (``L`` is monotone). At an end of the domain (``s0 = lo`` or
    ``s1 = hi``) the normalisers differ most and ``|L|`` reaches ``d / b + |log Z0 / Z1|``: the very quantity
    diffprivlib's scale sets to eps (Holohan et al. 2020), so the ceiling is ``e^eps / (1 + e^eps)`` whereas the
    centred pair showed only ``d / b`` plus a little. All placements (:func:`_placements`) are evaluated at once,
    a (placements x alpha) array: exact for an integer statistic; on a grid of ``MAX_PLACEMENTS`` (ends
    included, where the loss peaks) for a continuous one.

    Beliefs (quantiles, histogram, share at the ceiling) and ``positions`` are those of the placement whose attack
    is most powerful at ``FALSE_POSITIVE_RATE`` (ties: the larger loss), computed on the loss lattice
    (``worst``); the power ``1 - beta(0.05)`` of the envelope is that placement's power."""

    FALSE_POSITIVE_RATE = 0.05
    unbounded = False

    def __init__(self, scale: float, lower: float, upper: float, d: float, placements, coords):
        self.scale, self.lower, self.upper, self.d = float(scale), float(lower), float(upper), float(d)
        self.placements = np.asarray(placements, dtype=float)
        s0, s1 = self.placements, self.placements + self.d
        self._z0 = _laplace_cdf(upper - s0, scale) - _laplace_cdf(lower - s0, scale)
        self._z1 = _laplace_cdf(upper - s1, scale) - _laplace_cdf(lower - s1, scale)
        const = np.log(self._z0) - np.log(self._z1)
        at_lo = (np.abs(lower - s0) - np.abs(lower - s1)) / scale + const
        at_hi = (np.abs(upper - s0) - np.abs(upper - s1)) / scale + const
        self.losses = np.maximum(np.abs(at_lo), np.abs(at_hi))
        power = 1.0 - self.placement_tradeoffs(self.FALSE_POSITIVE_RATE)[:, 0]
        order = np.lexsort((self.losses, np.round(power, 12)))
        self.worst_position = float(self.placements[order[-1]])
        self.worst = _coordinates_experiment(coords, [self.worst_position])
        self.positions = (self.worst_position,)
        self.max_error = 1e-12  # closed forms: rounding only

    def placement_tradeoffs(self, alpha) -> np.ndarray:
        """beta of every placement (rows) at ``alpha`` (columns), exactly (class docstring)."""
        a = np.atleast_1d(np.asarray(alpha, dtype=float))[None, :]
        s0 = self.placements[:, None]
        b = self.scale
        u = _laplace_cdf(self.upper - s0, b) - a * self._z0[:, None]
        t = np.clip(s0 + _laplace_ppf(u, b), self.lower, self.upper)
        t = np.where(a <= 0, self.upper, np.where(a >= 1, self.lower, t))
        beta = (_laplace_cdf(t - s0 - self.d, b) - _laplace_cdf(self.lower - s0 - self.d, b)) / self._z1[:, None]
        return np.clip(beta, 0.0, 1.0)

    def tradeoff(self, alpha) -> np.ndarray:
        """The pointwise lowest beta over all placements (class docstring)."""
        out = self.placement_tradeoffs(alpha).min(axis=0)
        return out if np.ndim(alpha) else out[0]

    def max_loss(self) -> float:
        return float(self.losses.max())


def _bounded_domain_worst(coords, placements) -> BoundedDomainWorst:
    mech, dj, _ = coords[0]
    return BoundedDomainWorst(mech.scale, mech.lower, mech.upper, min(abs(dj), mech.upper - mech.lower), placements,
                              coords)


class ClippedWorst(_WorstOfPlacements):
    """One clipped coordinate against the informed adversary: the worst of every placement of the pair, in closed form.

    The release is ``y = min(max(s + U, lo), hi)`` (:class:`engine.mechanisms.clipped.Clipped`) with ``U`` Laplace,
    Gaussian or their discrete (lattice) forms. As for the bounded domain (:class:`BoundedDomainWorst`), the
    adversary faces whatever placement ``s0`` (the others' statistic; ``s1 = s0 + d``) the data make, so the curve
    reported is the pointwise infimum ``beta(alpha) = min_{s0} beta_{s0}(alpha)`` over every placement the model
    allows (DRS19 Def. 2.3; not its convex hull: a chord between placements would randomise over datasets), the
    ceiling the largest loss over them.

    One placement in closed form. All four noises are log-concave, so the unclipped pair has a likelihood ratio
    ``f(y - s1) / f(y - s0)`` nondecreasing in ``y`` (monotone likelihood ratio). The clip maps every ``y <= lo`` to
    the atom ``lo`` and every ``y >= hi`` to the atom ``hi``; the atoms' ratios

        r_lo = P1(U <= lo - s1) / P0(U <= lo - s0) = F(lo - s1) / F(lo - s0),   r_hi = S(hi - s1) / S(hi - s0)

    are averages of the ratio over ``y <= lo`` (``y >= hi``), so the clipped release still has a ratio
    nondecreasing along ``lo, (lo, hi), hi``: the Neyman–Pearson tests are thresholds on ``y``, randomised at an
    atom. A threshold ``t`` inside ``(lo, hi)`` rejects ``{U + s > t}``, the very event the unclipped test rejects, so
    between ``alpha = a_hi = S(hi - s0)`` and ``alpha = 1 - a_lo`` (``a_lo = F(lo - s0)``) the clipped curve *is* the
    unclipped one, ``T(alpha)``, which does not depend on ``s0`` (a shift); on a lattice the two ends are vertices of
    ``T`` (the tests 'y >= hi' and 'y > lo'), so this holds for the piecewise-linear discrete curves too. Below
    ``a_hi`` the test rejects the atom ``hi`` with probability ``alpha / a_hi``; above ``1 - a_lo`` it rejects
    everything but the atom ``lo`` and that with the remaining probability:

        beta_{s0}(alpha) = 1 - alpha r_hi                     alpha <= a_hi,
                         = T(alpha)                           a_hi <= alpha <= 1 - a_lo,
                         = (1 - alpha) r_lo                   alpha >= 1 - a_lo,

    the two chords of ``T`` from ``(0, 1)`` and to ``(1, 0)``. ``T``: ``Phi(Phi^-1(1 - alpha) - d / sigma)``
    (Gaussian), :func:`laplace_tradeoff` (Laplace, exact), the exact finite curves of :func:`_plain_experiment`
    (discrete). Every placement is an array operation: four tail probabilities per placement, ``T`` once.

    Which placements. ``s0`` ranges over the statistic's range (whole numbers for an integer statistic or lattice
    noise) within ``40`` noise sd plus ``2 d`` of the clip: beyond, the pair sits on an atom with probability
    ``1 - e^-56``, indistinguishable from 1 in double precision, so its hi (lo) chord covers every ``alpha`` but
    is less steep (steeper) than the nearer placements' (below). The infimum at each ``alpha`` is found exactly,
    not on a grid: ``a_hi(s0)`` rises with ``s0`` and ``a_lo(s0)`` falls, so the placements on the hi chord (``a_hi >
    alpha``) are all those above some ``h``, those on the lo chord all below some ``l < h``, and those between sit
    on ``T``, the lowest any placement reaches. On the hi chord the slope ``r_hi = S(x - d) / S(x)``, ``x = hi -
    s0``, is largest at the lowest placement (log-concave noise has a log-concave tail ``S``, so ``log S(x - d) -
    log S(x)`` rises with ``x``); on the lo chord ``r_lo = F(x - d) / F(x)``, ``x = lo - s0``, is smallest at the
    highest. So the infimum is at ``h`` or the placement just below it: for continuous noise ``h = hi - q(alpha)``
    (``q = S^-1(alpha)``; clamped to the range; for an integer statistic its floor and the next), for
    lattice noise the lowest whole placement with ``a_hi > alpha`` (a search in the placements' ``a_hi``). Those
    are evaluated at each ``alpha``, with the listed placements (every whole number up to ``MAX_PLACEMENTS``, else
    an even grid, the ends and the centred one included) for the ceiling and the beliefs.

    Beliefs (quantiles, histogram, share at the ceiling) and ``positions`` are those of the placement most powerful
    at ``FALSE_POSITIVE_RATE`` (ties: the larger loss for Laplace-type noise; then, and for Gaussian-type noise
    only, the one nearest the centred placement), from the loss
    lattice (``worst``); the envelope's power at 5% is that placement's.

    The ceiling ``sup |L|`` over outcomes and placements. At one placement the loss is nondecreasing along ``lo, (lo,
    hi), hi`` (above), so its extremes are the atoms': ``log r_lo <= L <= log r_hi`` (``r_lo <= 1 <= r_hi``: ``F(x - d)
    <= F(x)``), and ``max |L| = max(log r_hi, -log r_lo)``. Inside, the Gaussian's ``L(y) = (d / sigma^2)(y - s0 - d /
    2)`` stays between the limits at ``y -> lo`` and ``y -> hi``, which the atoms' averages exceed; a bound that is
    open leaves that side's loss unbounded for Gaussian-type noise (``L -> +-inf`` with ``y``) and ``d / b`` for
    Laplace-type. Over placements, with ``x = hi - s0``, ``log r_hi = log S(x - d) - log S(x)`` rises with ``x`` (the
    log-concave tail, above), so it is largest at the lowest placement; ``-log r_lo = log F(x) - log F(x - d)``, ``x =
    lo - s0``, falls with ``x`` (``log F`` concave), so it is largest at the highest. Hence

        ceiling = max(log r_hi(s_first), -log r_lo(s_last)),

    ``s_first``, ``s_last`` the ends of the statistic's whole range (``feasible``; not only the listed placements,
    which stop 40 sd from the clip: for Gaussian noise ``log r_hi`` keeps growing like ``d x / sigma^2`` beyond, for
    Laplace noise it is ``d / b`` there already). A Gaussian-type clip is therefore bounded when both bounds and
    both ends of the range are finite (normal_known_sd, beta_binomial, poisson_gamma with ``upper``), and reported
    unbounded otherwise (a one-sided clip; a Poisson sum with no ``upper`` can sit arbitrarily far above ``lo``). The
    ceiling's placement may be far from the most powerful one: its belief can be near 100% on an atom of
    vanishing probability, so ``at_max`` (from ``worst``) is then about 0, as it should be."""

    FALSE_POSITIVE_RATE = 0.05

    def __init__(self, mech, d: float, placements, span, integer: bool, coords, centre: float, feasible=None):
        self.mech, self.base, self.d = mech, base_mechanism(mech), float(d)
        self.lower, self.upper = float(mech.lower), float(mech.upper)
        self.first, self.last = span
        self.feasible = tuple(float(v) for v in (span if feasible is None else feasible))
        self.integer = integer and math.isfinite(span[0]) and math.isfinite(span[1])
        self._whole = None
        self.placements = np.asarray(placements, dtype=float)
        law = noise_law(self.base)
        self.continuous = law in (Gaussian, Laplace) and getattr(self.base, "granularity", None) is None
        gaussian_type = issubclass(law, (Gaussian, DiscreteGaussian))
        if law is Gaussian:
            mu = self.d / self.base.scale
            self._unclipped = lambda a: gdp_tradeoff(a, mu)
        elif law is Laplace and self.continuous:
            eps = self.d / self.base.scale
            self._unclipped = lambda a: laplace_tradeoff(a, eps)
        else:
            plain = _plain_experiment([(self.base, self.d, 0)])
            self._unclipped = plain.tradeoff
        self._atoms = self._atom_logs(self.placements)
        la_lo, lc_lo, la_hi, lc_hi = self._atoms
        open_loss = math.inf if gaussian_type else self.d / self.base.scale
        self.losses = self._losses(self._atoms, open_loss)
        self.ceiling = float(self.losses.max())
        if gaussian_type:  # the ends of the whole range (class docstring, "The ceiling"); inf where one is open
            ends = self.feasible
            if integer:
                ends = (math.ceil(ends[0]), math.floor(ends[1])) if all(map(math.isfinite, ends)) else ends
            whole = all(math.isfinite(v) for v in (*ends, self.lower, self.upper))
            at_ends = self._losses(self._atom_logs(np.array(ends, dtype=float)), open_loss) if whole else [math.inf]
            self.ceiling = max(self.ceiling, float(np.max(at_ends)))
        self.unbounded = math.isinf(self.ceiling)
        power = 1.0 - self.placement_tradeoffs(self.FALSE_POSITIVE_RATE)[:, 0]
        near = -np.abs(self.placements - centre)
        # ties on power: the larger loss for Laplace-type noise (its atom at the ceiling); for Gaussian-type noise the
        # loss grows with the distance from the clip (class docstring), so the one nearest the centred placement
        tie = np.zeros_like(self.losses) if gaussian_type else self.losses
        order = np.lexsort((near, np.nan_to_num(tie, posinf=1e300), np.round(power, 12)))
        self.worst_position = float(self.placements[order[-1]])
        self.worst = _coordinates_experiment(coords, [self.worst_position])
        self.positions = (self.worst_position,)
        self.max_error = 1e-12 if self.continuous else 0.0  # closed forms: rounding; finite laws: exact

    @staticmethod
    def _losses(atoms, open_loss: float) -> np.ndarray:
        """``max(log r_hi, -log r_lo)`` placement by placement (class docstring, "The ceiling"); ``open_loss`` on an
        open side."""
        la_lo, lc_lo, la_hi, lc_hi = atoms
        with np.errstate(invalid="ignore"):
            loss_lo = np.where(np.isfinite(la_lo), np.abs(lc_lo - la_lo), open_loss)
            loss_hi = np.where(np.isfinite(la_hi), np.abs(lc_hi - la_hi), open_loss)
        return np.maximum(loss_lo, loss_hi)

    def _atom_logs(self, s0):
        """log P0, log P1 of the atoms at ``lo`` and at ``hi`` (``-inf`` on an open side), placement by placement."""
        s0 = np.asarray(s0, dtype=float)
        log_cdf = self.base.log_cdf
        if isinstance(self.base, DiscreteGaussian):  # its log_cdf sums point by point: one table for all placements
            args = np.concatenate([np.ravel(b - s0 - x) for b in (self.lower, -self.upper) for x in (0.0, self.d)
                                   if math.isfinite(b)] + [np.zeros(1)])
            g = getattr(self.base, "granularity", None) or 1.0
            if np.all(np.round(args / g) == args / g):
                log_cdf = _discrete_gaussian_log_cdf(self.base.scale / g, g, args)
        with np.errstate(divide="ignore", invalid="ignore"):
            if math.isfinite(self.lower):
                la_lo, lc_lo = log_cdf(self.lower - s0), log_cdf(self.lower - s0 - self.d)
            else:
                la_lo = lc_lo = np.full(s0.shape, -np.inf)
            if math.isfinite(self.upper):  # P(U >= r) = P(U <= -r) (symmetric noise)
                la_hi, lc_hi = log_cdf(-(self.upper - s0)), log_cdf(-(self.upper - s0 - self.d))
            else:
                la_hi = lc_hi = np.full(s0.shape, -np.inf)
        return (np.asarray(la_lo, float).reshape(s0.shape), np.asarray(lc_lo, float).reshape(s0.shape),
                np.asarray(la_hi, float).reshape(s0.shape), np.asarray(lc_hi, float).reshape(s0.shape))

    def _curves(self, atoms, a, unclipped):
        """beta_{s0}(alpha) (class docstring) for atom logs and alphas that broadcast together."""
        la_lo, lc_lo, la_hi, lc_hi = atoms
        with np.errstate(invalid="ignore", over="ignore"):
            r_hi = np.exp(np.where(np.isfinite(la_hi), lc_hi - la_hi, 0.0))
            r_lo = np.exp(np.where(np.isfinite(la_lo), lc_lo - la_lo, 0.0))
            a_hi, a_lo = np.exp(la_hi), np.exp(la_lo)
            beta = np.where(a < a_hi, 1.0 - a * r_hi, np.where(a > 1.0 - a_lo, (1.0 - a) * r_lo, unclipped))
        return np.clip(beta, 0.0, 1.0)

    def placement_tradeoffs(self, alpha) -> np.ndarray:
        """beta of every listed placement (rows) at ``alpha`` (columns), exactly (class docstring)."""
        a = np.atleast_1d(np.asarray(alpha, dtype=float))
        atoms = tuple(x[:, None] for x in self._atoms)
        return self._curves(atoms, a[None, :], self._unclipped(a)[None, :])

    def _exact_placements(self, a) -> list:
        """Where the infimum over all placements sits at each alpha (class docstring, "Which placements")."""
        if self.continuous:
            with np.errstate(divide="ignore", invalid="ignore"):
                q = -self.base.scale * (stats.norm.ppf(a) if isinstance(self.base, Gaussian) else
                                        np.where(a < 0.5, np.log(2 * np.maximum(a, 1e-300)), -np.log(2 * (1 - a))))
                s = np.clip(self.upper - q, self.first, self.last) if math.isfinite(self.upper) else \
                    np.full(np.shape(a), self.last)
            if not self.integer:
                return [s]
            return [np.clip(np.floor(s) + k, math.ceil(self.first), math.floor(self.last)) for k in (0.0, 1.0)]
        if self._whole is None:  # lattice noise: every whole placement's a_hi, once
            whole = np.arange(math.ceil(self.first), math.floor(self.last) + 1.0)
            self._whole = (whole, np.exp(self._atom_logs(whole)[2]))
        whole, a_hi = self._whole
        h = np.searchsorted(a_hi, a, side="right")  # the lowest placement with a_hi > alpha (a_hi rises with s0)
        return [whole[np.clip(h - 1, 0, whole.size - 1)], whole[np.clip(h, 0, whole.size - 1)]]

    def tradeoff(self, alpha) -> np.ndarray:
        """The pointwise lowest beta over all placements (class docstring)."""
        a = np.atleast_1d(np.asarray(alpha, dtype=float))
        unclipped = self._unclipped(a)
        out = self._curves(tuple(x[:, None] for x in self._atoms), a[None, :], unclipped[None, :]).min(axis=0)
        for s in self._exact_placements(a):
            out = np.minimum(out, self._curves(self._atom_logs(s), a, unclipped))
        return out if np.ndim(alpha) else out[0]

    def max_loss(self) -> float:
        """The ceiling over outcomes and every placement of the statistic's range (class docstring)."""
        return self.ceiling



def _discrete_gaussian_log_cdf(t: float, g: float, args):
    """``r -> log P(g K <= r)`` for ``K`` discrete Gaussian of scale ``t`` on the multiples ``r`` of ``g`` in ``args``:
    the lower tails ``log P(K <= m)``, ``m <= -1``, by one cumulative log-sum over the pmf (from 40 t + 40 below the
    lowest, where the terms are under e^-800 of the largest), the upper half by symmetry, ``log1p(-P(K <= -j - 1))``
    (as :meth:`engine.mechanisms.DiscreteGaussian.log_cdf`, in one pass instead of one sum per value)."""
    j = np.round(np.asarray(args, dtype=float) / g).astype(np.int64)
    low = -int(np.max(np.abs(j))) - 1
    k = np.arange(low - int(40.0 * t) - 40, 0)
    tails = np.logaddexp.accumulate(-(k.astype(float) ** 2) / (2.0 * t * t)) - discrete_gaussian_log_normalizer(t)

    def log_cdf(r):
        jr = np.round(np.asarray(r, dtype=float) / g).astype(np.int64)
        m = np.where(jr < 0, jr, -jr - 1)
        lt = tails[m - k[0]]
        with np.errstate(divide="ignore"):
            return np.where(jr < 0, lt, np.log1p(-np.exp(lt)))
    return log_cdf

def _clipped_worst(coords, span, model, centre: float) -> ClippedWorst:
    """Placements of one clipped pair (ClippedWorst docstring): whole numbers for an integer statistic or lattice
    noise, else an even grid (ends and centre included); for continuous noise also the exact one at 5%."""
    mech, dj, _ = coords[0]
    d = abs(dj)
    base = base_mechanism(mech)
    rlo, rhi = span if span is not None else (-math.inf, math.inf)
    reach = 40.0 * base.noise_sd + 2.0 * d
    first = max(rlo, mech.lower - d - reach) if math.isfinite(mech.lower) else rlo
    last = min(rhi - d, mech.upper + reach) if math.isfinite(mech.upper) else rhi - d
    integer = getattr(model, "integer_statistic", False) or isinstance(base, (DiscreteLaplace, DiscreteGaussian))
    if not (math.isfinite(first) and math.isfinite(last)) or last < first:
        grid = np.array([float(centre)])
        first = last = float(centre)
    elif integer and math.floor(last) - math.ceil(first) < MAX_PLACEMENTS:
        grid = np.arange(math.ceil(first), math.floor(last) + 1.0)
    else:
        grid = np.linspace(first, last, MAX_PLACEMENTS)
        grid = np.round(grid) if integer else grid
    extra = [first, last, float(centre)]
    feasible = (rlo, rhi - d)  # the whole range, for the ceiling (ClippedWorst docstring)
    out = ClippedWorst(mech, d, np.unique(np.concatenate([grid, extra])), (first, last), integer, coords, centre,
                       feasible)
    five = [np.atleast_1d(s)[0] for s in out._exact_placements(np.array([ClippedWorst.FALSE_POSITIVE_RATE]))]
    if any(float(s) not in set(out.placements.tolist()) for s in five):  # the exact most powerful placement
        out = ClippedWorst(mech, d, np.unique(np.concatenate([out.placements, five])), (first, last), integer,
                           coords, centre, feasible)
    return out


def _on_lattice(mech) -> bool:
    return getattr(mech, "granularity", None) is not None and not isinstance(mech, Clipped)


def _plain_experiment(coords):
    """Unclipped noise with closed forms or exact finite products: all Gaussian (mu = |d / sigma|_2),
    one discrete Gaussian law on every coordinate (the convolution on <d, y>), discrete Laplace (a product
    merged over equal losses), one Laplace coordinate (the binned curve with its chord bound). None: use
    the lattice sandwich."""
    mechs = [m for m, _, _ in coords]
    d = np.array([dj for _, dj, _ in coords])
    scaled = []
    for m, dj, _ in coords:  # lattice noise g V: V on Z with scale / g and shift d / g
        g = getattr(m, "granularity", None) if isinstance(m, (DiscreteGaussian, DiscreteLaplace)) else None
        if g is not None:
            if not float(np.round(dj / g)) == dj / g:
                fail("mechanism.sensitivity", dj, f"lattice noise needs shifts that are multiples of {g:g}")
            scaled.append((dj / g, m.scale / g))
        else:
            scaled.append((dj, m.scale))
    if all(noise_law(m) is Gaussian for m in mechs):
        return GaussianExperiment(float(np.sqrt(np.sum((d / np.array([m.scale for m in mechs])) ** 2))))
    if all(isinstance(m, DiscreteGaussian) for m in mechs) and len({s for _, s in scaled}) == 1:
        return _discrete_gaussian(np.array([x for x, _ in scaled]), scaled[0][1])
    if all(isinstance(m, DiscreteLaplace) for m in mechs):
        return _product([_discrete_laplace(x, t) for x, t in scaled])
    if len(coords) == 1 and noise_law(mechs[0]) is Laplace:
        return _product([_laplace(abs(d[0]), mechs[0].scale, LAPLACE_BINS)])
    return None


def _ranges(model, pair) -> dict:
    """Statistic range per coordinate (for where a clipped pair may sit); the size coordinate: [0, inf)."""
    out = {None: (0.0, math.inf)}
    rng = getattr(model, "statistic_range", None)
    if rng is not None:
        lo, hi = rng
        for j in range(len(np.atleast_1d(lo))):
            out[j] = (float(np.atleast_1d(lo)[j]), float(np.atleast_1d(hi)[j]))
    return out


def _position(mech, d: float, span, model) -> float:
    """Where the pair (s0, s0 + d) sits against a clip or a bounded domain (module docstring, "Clipped
    releases"): as far from a one-sided clip's bound as the statistic allows; centred in a two-sided clip
    (or bounded domain), within the statistic's range; whole numbers for an integer statistic."""
    lo, hi = mech.lower, mech.upper
    rlo, rhi = span if span is not None else (-math.inf, math.inf)
    first, last = rlo, rhi - d  # feasible s0
    if isinstance(mech, BoundedLaplace):  # both neighbours' statistics inside the domain (else clamped into it)
        first, last = max(first, lo), min(last, hi - d)
        if first > last:
            first = last = lo
    if math.isfinite(lo) and math.isfinite(hi):
        want = (lo + hi - d) / 2.0
    elif math.isfinite(lo):
        want = math.inf
    else:
        want = -math.inf
    s0 = min(max(want, first), last)
    if not math.isfinite(s0):  # the statistic can sit arbitrarily far from the one bound: far enough to not bind
        ref = lo if math.isfinite(lo) else hi
        far = 80.0 * base_mechanism(mech).noise_sd + 2 * d
        s0 = ref + far if math.isfinite(lo) else ref - far - d
    if getattr(model, "integer_statistic", False) or isinstance(base_mechanism(mech), (DiscreteLaplace, DiscreteGaussian)):
        s0 = float(min(max(round(s0), math.ceil(first) if math.isfinite(first) else round(s0)),
                       math.floor(last) if math.isfinite(last) else round(s0)))
    return float(s0)


#: lattice points one discrete coordinate's law is summed over (about a second per million, twice)
MAX_LATTICE_POINTS = 20_000_000


def _check_lattice(points: int, field: str, scale: float) -> None:
    if points > MAX_LATTICE_POINTS:  # summed point by point: sigma = 1e8 ran out of memory after minutes
        fail(field, scale, f"spreads the release over {points:,} lattice points; the trade-off curve sums at most "
             f"{MAX_LATTICE_POINTS:,} (a noise scale up to about 1e6 on a unit lattice)")


def _discrete_coordinate(base, s0: float, d: float, lo: float, hi: float):
    """The exact law of one integer (or lattice) coordinate for statistics s0 and s0 + d, clipped to
    [lo, hi]: interior pmf, the clip's atoms (cdf and sf beyond the bounds); where a side is open, the
    tail beyond 1e-18 of mass is lumped into the end outcome (a garbling of that mass only; for discrete
    Laplace noise every value beyond s0 (s0 + d) has the same loss, so nothing is lost there)."""
    g = getattr(base, "granularity", None) or 1.0
    width = (42.0 * base.scale if isinstance(base, DiscreteLaplace) else 9.5 * base.scale) + 2 * g
    s1 = s0 + d
    first = max(lo, math.floor((s0 - width) / g) * g)
    last = min(hi, math.ceil((s1 + width) / g) * g)
    points = int(round((last - first) / g)) + 1
    _check_lattice(points, "mechanism.scale" if isinstance(base, DiscreteLaplace) else "mechanism.sigma", base.scale)
    v = first + g * np.arange(points)
    inner = v[1:-1]

    def law(s):
        mid = base.noise_log_prob(inner - s)
        return np.concatenate([[float(base.log_cdf(first - s))], mid, [float(base.log_sf(last - s))]])

    return law(s0), law(s1)


def _clip_atom_loss(base, s0: float, d: float, lo: float, hi: float) -> float:
    """The largest privacy loss of one Gaussian-type coordinate clipped to [lo, hi] at placement s0: the atoms'
    ``max(log S(hi - s1) - log S(hi - s0), log F(lo - s0) - log F(lo - s1))`` (:class:`ClippedWorst`, "The
    ceiling"); inf where a bound is open (the loss inside grows without bound with the release)."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return math.inf
    s1 = s0 + d
    top = float(base.log_cdf(-(hi - s1))) - float(base.log_cdf(-(hi - s0)))
    bottom = float(base.log_cdf(lo - s0)) - float(base.log_cdf(lo - s1))
    return max(top, bottom)


def _finite_max(lp0, lp1) -> float:
    ok = np.isfinite(lp0) & np.isfinite(lp1)
    return float(np.max(np.abs(lp1[ok] - lp0[ok])))


def _continuous_max(kind: str, b: float, s0: float, d: float, lo: float, hi: float, bounded: bool) -> float:
    """The largest privacy loss of one Laplace coordinate, read off its pieces: eps unclipped; clipped, the
    atoms' losses (a clip between the neighbours leaves less than eps); a bounded domain, eps plus the
    normalisers' log ratio at most."""
    p = continuous_pieces(kind, b, s0, d, 1.0, lo, hi, bounded)
    mass = np.isfinite(p.log_p0) | np.isfinite(p.log_p1)
    return float(max(np.max(np.abs(p.loss_lo[mass])), np.max(np.abs(p.loss_hi[mass]))))


def _product(parts):
    """Independent coordinates: outcome pairs, log probabilities add; after each factor, outcomes with equal
    privacy loss (to 1e-10) are merged, a sufficient reduction that keeps products of many discrete
    coordinates small. Error bounds: one coordinate keeps its own (products of binned coordinates go
    through :mod:`.lattice` instead)."""
    lp0, lp1 = parts[0][0], parts[0][1]
    for q0, q1, _ in parts[1:]:
        lp0 = (lp0[:, None] + q0[None, :]).ravel()
        lp1 = (lp1[:, None] + q1[None, :]).ravel()
        lp0, lp1 = _merge_equal_losses(lp0, lp1)
    errors = [p[2] for p in parts]
    err = 0.0 if all(e == 0 for e in errors) else (errors[0] if len(errors) == 1 else math.nan)
    return FiniteExperiment(lp0, lp1, max_error=err)


def _merge_equal_losses(lp0, lp1):
    """Merge outcomes with the same likelihood ratio (log space: sums by logaddexp)."""
    with np.errstate(invalid="ignore"):
        loss = np.where(np.isfinite(lp0), np.where(np.isfinite(lp1), lp1 - lp0, -np.inf), np.inf)
    key = np.where(np.isfinite(loss), np.round(loss, 10), loss)
    uniq, inv = np.unique(key, return_inverse=True)
    if uniq.size == key.size:
        return lp0, lp1
    m0, m1 = np.full(uniq.size, -np.inf), np.full(uniq.size, -np.inf)
    np.logaddexp.at(m0, inv, lp0)
    np.logaddexp.at(m1, inv, lp1)
    return m0, m1


def _laplace(d: float, b: float, bins: int):
    """One Laplace coordinate shifted by d > 0: the two tails and ``bins`` equal bins of (0, d)."""
    eps = d / b
    y = np.linspace(0.0, d, bins + 1)
    # P0 mass of [y_j, y_j+1] = (e^{-y_j/b} - e^{-y_j+1/b}) / 2; P1 likewise with d - y.
    lp0_mid = math.log(0.5) - y[:-1] / b + np.log(-np.expm1(-(y[1:] - y[:-1]) / b))
    lp1_mid = math.log(0.5) - (d - y[1:]) / b + np.log(-np.expm1(-(y[1:] - y[:-1]) / b))
    lp0 = np.concatenate([[math.log(0.5)], lp0_mid, [math.log(0.5) - eps]])
    lp1 = np.concatenate([[math.log(0.5) - eps], lp1_mid, [math.log(0.5)]])
    edge_loss = (2.0 * y - d) / b
    chord = float(np.max(np.exp(lp0_mid + edge_loss[1:]) - np.exp(lp0_mid + edge_loss[:-1])) / 4.0)
    return lp0, lp1, chord


def _discrete_laplace(d: float, t: float):
    """One discrete-Laplace coordinate shifted by the integer d: its |d| + 1 distinct losses."""
    ad = int(round(abs(d)))
    # y <= 0 (or >= d): loss -|d|/t (+|d|/t); 0 < y < d one outcome each.
    lam = 1.0 / t
    log_z = float(discrete_laplace_log_pmf(0, t))  # log P0(y = 0)
    inner = np.arange(1, ad)
    # P0(y <= 0) = p(0) / (1 - e^-lam); P0(y >= d) = p(d) / (1 - e^-lam)
    log_geo = -math.log(-math.expm1(-lam))
    lp0 = np.concatenate([[log_z + log_geo], log_z - inner * lam, [log_z - ad * lam + log_geo]])
    lp1 = lp0[::-1].copy()
    return lp0, lp1, 0.0


def _discrete_gaussian(d: np.ndarray, sigma: float):
    """m = <d, y> under P0 (convolution of the scaled pmfs), P1: m shifted by |d|^2."""
    if not np.all(np.equal(np.round(d), d)):
        fail("mechanism.sensitivity", d.tolist(), "discrete noise needs whole-number shifts")
    d = d.astype(np.int64)
    half = int(math.ceil(9.5 * sigma)) + 2  # P(|Y| > half) < 1e-19
    _check_lattice(2 * half * max(1, int(np.abs(d).sum())) + 1, "mechanism.sigma", sigma)
    k = np.arange(-half, half + 1)
    log_pmf = -(k**2) / (2.0 * sigma**2) - discrete_gaussian_log_normalizer(sigma)
    if d.size == 1:  # one coordinate: in log space, so that e^-1250 stays a positive probability
        dj = int(abs(d[0]))
        with np.errstate(divide="ignore"):
            lp0 = np.concatenate([log_pmf, np.full(dj, -np.inf)])
            lp1 = np.concatenate([np.full(dj, -np.inf), log_pmf])
        return FiniteExperiment(lp0, lp1, unbounded=True)
    # several coordinates: in log space while the support is small (narrow noise: pmf values underflow),
    # in linear space (direct or FFT) when it is wide (there every kept value is above e^-46)
    log_space = half <= 600
    law = np.array([0.0 if log_space else 1.0])
    for dj in d:
        with np.errstate(divide="ignore"):
            scaled = np.full(2 * half * abs(int(dj)) + 1, -np.inf if log_space else 0.0)
        scaled[::abs(int(dj))] = (log_pmf if log_space else np.exp(log_pmf))[::1 if dj > 0 else -1]
        if log_space:
            law = _log_conv(law, scaled)
        else:
            law = np.convolve(law, scaled) if law.size * scaled.size < 4e7 else _fft_conv(law, scaled)
    with np.errstate(divide="ignore"):
        log_law = law if log_space else np.log(np.clip(law, 0.0, None))
    pad = np.full(int(np.sum(d * d)), -np.inf)
    lp0, lp1 = np.concatenate([log_law, pad]), np.concatenate([pad, log_law])
    return FiniteExperiment(lp0, lp1, unbounded=True)


def _fft_conv(a, b):
    from scipy import signal  # scipy.signal is slow to import; used only for wide noise

    return signal.fftconvolve(a, b)
