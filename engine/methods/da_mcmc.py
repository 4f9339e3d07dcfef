"""Data-augmentation MCMC: the privacy-aware Metropolis-within-Gibbs sampler (Ju et al. 2022, Alg. 1).

The target is the joint posterior p(theta, x | s_dp) ∝ p(theta) f(x | theta) eta(s_dp | x)
(their eq. 4), whose theta-marginal is the exact private posterior p(theta | s_dp). One
iteration draws theta | x from the conjugate posterior (the privacy mechanism drops out because
s_dp is independent of theta given x), then sweeps the records: x_i* ~ f(. | theta) is accepted
with probability min{1, eta(s_dp | x_i*, x_-i) / eta(s_dp | x)} (eq. 5). Proposing from the model
makes the prior-times-proposal terms cancel, so only the mechanism ratio remains; for a pure
epsilon-DP mechanism the ratio is at least exp(-epsilon) (Prop. 3.1), and record additivity makes
each step O(1) (Prop. 3.2).

Built-in models run the compiled chains of :mod:`engine.kernels.da_mcmc` (linear_regression those of
:mod:`engine.kernels.da_mcmc`: O(p^2) record-additive updates of the released statistic and of the
raw X^T X, X^T y, and a conjugate normal draw of beta); custom models
(:class:`engine.models.custom.CustomModel`) run :class:`engine.models.custom.PythonRunner`, the same algorithm in
plain Python. Chains are independent streams ``rng.spawn(chains)`` and run on threads (the
compiled kernels release the GIL), so chain c's draws do not depend on how many chains run.

Partial sweeps (``records_per_iteration = m``, linear_regression). Where the noise is narrow next to
the statistic's spread, the records can only move along the thin set {x : s(x) ≈ s_dp}, and beta | x
is nearly the same law whichever such x the chain holds: the conditional mean b(x) of beta varies
across that set by the noise's share of the posterior variance only. Writing
I = Var(beta | s_dp) / Var(beta | x) (the inflation; 1 when the noise is negligible), the law of
total variance gives Var(b(x)) = (1 - 1/I) Var(beta | s_dp). A sweep of m < n records moves b by a
fraction (m / n) / I of its range per iteration (the DA rate of convergence is the fraction of
missing information, 1 - 1/I per full sweep), so beta_t = b_t + (conditional noise) is an AR(1)
component of weight 1 - 1/I and lag-one correlation rho = 1 - (m/n)/I plus white noise, whose
integrated autocorrelation time is 1 + 2 (1 - 1/I) rho / (1 - rho) ≈ 1 + 2 (I - 1) n / m.
Record updates per effective draw are then m + 2 (I - 1) n instead of n (2 I - 1): far fewer than n
when I - 1 is small. Exactness does not depend on m (:func:`engine.kernels.da_mcmc.regression_window_chain`:
every record move and the beta draw leave p(beta, x | s_dp) invariant, and a fixed scan that
visits every record composes them). Warm-up iterations sweep at least ``BURN_PASSES`` x n / warmup
records each (that many full passes in all), so the records reach the release before the kept
iterations; the kernel kept afterwards is fixed.

The clamped records' raw y (``clamped_per_iteration``, linear_regression). Part of what slows the
chain at narrow noise is the raw y of the records whose y is clamped, which the release cannot see
(t(r) reads hi or lo whatever y is beyond the bound) but the conjugate draw of beta reads. A record move
renews it only when a whole new record is accepted, rarely when the noise is narrow, so beta | x held on
to stale raw y's for many iterations. Every iteration now also redraws the raw y of the clamped records
from N(beta_0 + x^T beta_1:, sigma^2) truncated to their side of the bound (a Gibbs step of the augmented
posterior: the noise term is constant on that side and cancels; derived in
:func:`engine.kernels.da_mcmc.censored_refresh`), at O(1) each, leaving s unchanged: the data
augmentation of the Tobit model (Chib 1992). What it cannot remove is the rest of I:
I_c = Var(beta | s_dp) / E Var(beta | x, [y]) (the censored-data posterior,
:meth:`engine.models.linear_regression.LinearRegression.censored_covariance`), the noise's share and
the share of what the release does not say about the censored records (how many, and their x), which
record moves still pay O(n) for. Measured (bench/regression_refresh.py, README's live-map section): at
n = 10^6, epsilon = 10, Laplace, m = 20,000 the autocorrelation time fell from 23 to 9.5; at n = 10^4,
where the noise dominates I, it did not move. ``clamped_per_iteration = k`` refreshes k clamped
records drawn uniformly from the current clamped set (random-scan Gibbs, still exact); the default
refreshes all of them every iteration; 0 turns the move off (Algorithm 1 alone).

Shift moves (``shifts = k``, linear_regression). The conjugate draw of beta holds the raw records, so
beta moves only as far as Var(beta | x, y) lets it; where the noise is wide next to the statistic's
sampling spread, the posterior is I times wider and Algorithm 1 needs about 2 I sweeps per effective draw
(I = 15,833 at n = 10^4, epsilon = 0.01). The other parametrisation of the same latent records holds
their residuals e_i = (y_i - beta_0 - x_i^T beta_1:) / sigma instead: given e, beta is pinned only by the
noise, Var(beta | x, e, s_dp), which is nearly the posterior itself where the noise is wide. Each
iteration now also makes k Metropolis moves (beta, y) -> (beta + delta, y + X delta) on the joint target,
leaving the residuals unchanged (a translation: Jacobian 1, symmetric Gaussian proposal; the record
densities cancel and the ratio is prior times noise, derived in :func:`engine.kernels.da_mcmc.shift_moves`),
so the chain alternates the two parametrisations: the interweaving of Yu & Meng (2011), which mixes
well wherever either one does. The proposal is (2.38^2 / (p + 1)) x the normal surrogate's
Cov(beta | x, e, s_dp) (:meth:`engine.models.linear_regression.LinearRegression.shift_covariance`) at the
moment estimate, fixed before the chains start. A move writes no record: the y's are stored as y - X D with
D the moves' running total. It costs one pass over the records whose clamp status a shift in an ellipsoid
box of SHIFT_BOX posterior standard deviations could change (the rest enter as a polynomial in the shift).
The chain keeps that split from iteration to iteration (the sweep and the refresh reclassify the records
they change, at O(1) each), so no step costs O(n) but a move that leaves the box, after which the records
are split again around it (:func:`engine.kernels.da_mcmc.shift_moves`). The box is refitted after warm-up to
the chain's own spread (``_warmup_fit``; it sets the cost only, never the statistic).
Where J = Var(beta | s_dp) / Var(beta | x, e, s_dp) < SHIFT_IND_J, half the moves after warm-up propose
beta' from a t mixture fitted to the chain's second half of warm-up instead (``shift_independence``; an
independence Metropolis-Hastings step in the coordinates (beta, e), the q ratio in the acceptance), with
delayed acceptance (Christen & Fox 2005) on the normal law of the mixture's main component, which rejects
most proposals far from the posterior before any record is evaluated; and warm-up makes at least
SHIFT_BURN_PASSES passes over the records instead of BURN_PASSES, the shifts carrying beta and every y.

With ``orbit_moves = k`` (linear_regression; not with ``shifts``, whose moves it contains) each iteration makes
k orbit moves after the refresh: every record and beta moved at once by one lower-triangular affine map of
(1, x, y), an involutive Metropolis step whose Jacobian and cost are derived in :mod:`engine.kernels.orbit`.
They change the records' sums T and beta together, the direction the Gibbs cycle crawls along at narrow
noise (at n = 10^4, Laplace epsilon = 10, 100 records per iteration, 4 x 2,000 draws: bulk ESS 1,198 with 100
moves an iteration, 8 without, 173 with 10 shift moves). The proposal covariance and the box are fitted ORBIT_FITS times over warm-up
from the chain's own (T, beta) (``orbit_fit``). ``auto`` does not pick them yet (README, issue 23).

The normal mean (normal_known_sd) makes the one-parameter case of the shift moves every iteration, always:
three translation moves (mu, x) -> (mu + d, x + d) after mu's draw, of steps min(2.4 noise sd / n, prior sd),
the prior sd and their geometric mean (:func:`engine.kernels.da_mcmc.normal_shift`, derived there; each is
one pass over the records without a random draw per record). At n = 40, Laplace epsilon = 0.3, bulk ESS of
mu went from 205 to 1,795 at the defaults; at n = 10^5, epsilon = 0.01 from 136 to 537 per 4 x 500 draws,
for 12-19% more time.
"""
from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass

import numpy as np
from scipy import special

from ..core.chains import kept, run_chains
from ..core.results import Problem, Result
from ..core.validation import fail, positive_int
from ..kernels import da_mcmc as kernels
from ..kernels.da_mcmc import regression_chain, regression_window_chain
from ..kernels.orbit import frame, frame_map, frame_size, free_index, orbit_chain
from ..mechanisms import RandomizedResponse
from ..mechanisms.clipped import compiled_noise
from ..models.custom import CustomModel
from .base import Method
from .pseudo_marginal import moment_estimate, noise_variance

__all__ = ["da_mcmc", "ChainState", "acceptance_bound", "METHOD", "BURN_PASSES"]

BURN_PASSES = 6  # full passes over the records that warm-up makes at least, with partial sweeps
#: The same with shift moves where J < SHIFT_IND_J (wide noise): the shifts carry beta and every y to the
#: posterior, and the records start from the model's law, which the wide noise barely tilts.
SHIFT_BURN_PASSES = 2
#: The same with ancillary moves, which carry beta and the records' frame to the posterior themselves.
ANC_BURN_PASSES = 1


@dataclass
class ChainState:
    """Mutable state of one chain between blocks (records, statistic, running sums)."""

    x: np.ndarray
    s: float
    sum_x: float
    counts: np.ndarray | None = None
    class_counts: np.ndarray | None = None
    xtx: np.ndarray | None = None
    xty: np.ndarray | None = None
    yty: np.ndarray | None = None
    sig: np.ndarray | None = None
    start: int = 0  # the next window's first record (partial sweeps)
    shift_ind: tuple | None = None  # the shift moves' independence component, fitted after warm-up
    shift_fit: tuple | None = None  # the shift moves' box, its centre and the delayed acceptance surrogate, after it
    orbit_t: np.ndarray | None = None  # T's free entries per warm-up iteration (orbit moves' fit)
    orbit_fit: tuple | None = None  # the orbit moves' (proposal Cholesky factor, box), once fitted
    orbit_counts: np.ndarray | None = None  # orbit moves proposed, accepted, evaluated outside the box, past stage 1
    orbit_hist: list | None = None  # (T's free entries, beta) per iteration since the last orbit fit, in warm-up
    orbit_delayed: int | None = None  # the orbit moves' delayed acceptance on (1) or off (0), set at the first call
    anc_fit: tuple | None = None  # the ancillary moves' (random-walk Cholesky factor, box, t mixture or None)
    anc_counts: np.ndarray | None = None  # ancillary moves: t proposed, accepted, walk proposed, accepted, out of box
    anc_hist: list | None = None  # the frame coordinates per warm-up iteration (ancillary moves' fits)
    anc_beta: np.ndarray | None = None  # beta from block to block of the orbit kernel (with ancillary moves)
    tail_state: np.ndarray | None = None  # tail moves: (records scanned an iteration, threshold range, next start)
    tail_counts: np.ndarray | None = None  # tail moves: records moved, accepted


def acceptance_bound(problem: Problem) -> float | None:
    """exp(-epsilon) when Prop. 3.1 applies: a pure epsilon-DP mechanism whose sensitivity covers
    the model's true sensitivity (per-record randomized response always qualifies)."""
    mech, model = problem.mechanism, problem.model
    if isinstance(model, CustomModel):
        return math.exp(-model.epsilon) if model.epsilon is not None else None
    eps = getattr(mech, "epsilon", None)
    if eps is None:
        return None
    if isinstance(mech, RandomizedResponse):
        return math.exp(-eps)
    true = getattr(model, "true_sensitivity", None)
    if true is None or mech.sensitivity < true - 1e-12:
        return None
    return math.exp(-eps)


#: The most shift moves per iteration a spec may ask for.
MAX_SHIFTS = 100
#: Orbit moves per iteration, at most (``orbit_moves``).
MAX_ORBIT = 1000
#: The orbit moves' box: an ellipsoid of ORBIT_BOX standard deviations for each row of E (``orbit_fit``).
ORBIT_BOX = 10.0
#: Fits of the orbit moves over warm-up (at its j / ORBIT_FITS, j = 1..ORBIT_FITS).
ORBIT_FITS = 4
#: The ancillary moves' t mixture after warm-up (``fit_ancillary``): a share ANC_IND_PROB of the moves, nu = ANC_NU,
#: the second half of warm-up's covariance of the frame coordinates widened by ANC_WIDEN, and the same centre with
#: ANC_DEFENSIVE_WIDEN x that scale as a defensive component of weight ANC_DEFENSIVE (Hesterberg 1995).
ANC_IND_PROB = 0.5
ANC_NU = 7.0
ANC_WIDEN = 1.2
ANC_DEFENSIVE = 0.1
ANC_DEFENSIVE_WIDEN = 3.0
#: The ancillary moves' box: an ellipsoid of ANC_BOX standard deviations for each row of G (``ancillary_box``).
ANC_BOX = 10.0
#: ... and after warm-up, centred at the fitted frame (the chain keeps near it; over warm-up it is centred where each
#: stretch starts): at n = 10^6, Laplace epsilon = 0.1, 2,000 iterations in 3.6 s against 4.5 s at ANC_BOX.
ANC_BOX_KEPT = 8.0
#: An ancillary move's fixed work and one record evaluated by it, in record updates of the sweep (about 16 us and
#: 10 ns against a record update of 200 ns as engine.cost prices it, n = 10^6; ``ancillary_work``). The share was
#: 0.115 (23 ns) until the unsafe records' statistic was written out with scalars (orbit._add_stats, p = 2).
ANC_MOVE_RECORDS = 80.0
ANC_UNSAFE_SHARE = 0.05
#: Draws of S ~ Wishart behind the ancillary moves' first random walk (``frame_start``); a fixed stream.
ANC_WISHART_DRAWS = 400
#: The tail moves' threshold (``tail_records``, engine.kernels.orbit): c = lo_y + h sd_y, h uniform on TAIL_RANGE
#: each iteration (sd_y the sd of y given beta). At the paper's design (y's bound 1.94 sd below its mean) the tails
#: hold 2.6% to 15% of the records; at n = 10^6, Gaussian epsilon = 0.1, they renew the clamped records' count and
#: x sums ten times as fast per iteration (README's live-map section).
TAIL_RANGE = (-0.3, 0.9)
#: A record the tail moves scan, and one they move, in record updates of the sweep (``tail_work``; measured at
#: n = 10^6, Gaussian epsilon = 0.1, one chain: 100,000 records scanned and 5,960 moved an iteration, 8.2 ms).
TAIL_SCAN_SHARE = 0.05
TAIL_MOVE_SHARE = 6.0
#: The orbit moves' delayed acceptance is on where at most this share of the chain's first records has y clamped
#: (its first stage ignores what clamping does to a move; with 20% clamped it cost a third of the mixing).
ORBIT_DA_CLAMPED = 0.05
#: The shift proposal's covariance is (SHIFT_RW^2 / (p + 1)) x the surrogate's Cov(beta | x, e, s_dp): the
#: random-walk Metropolis scale 2.38 / sqrt(d) for d = p + 1 coefficients (Roberts, Gelman & Gilks 1997).
SHIFT_RW = 2.38
#: One record evaluated by a shift move, as a share of a record update of the sweep (measured at n = 10^6,
#: p = 2: about 4 and 106 ns).
UNSAFE_SHARE = 0.04
#: The shift moves' box half-width, in posterior standard deviations (``shift_box``).
SHIFT_BOX = 7.0
#: The shift moves' independence component (``shift_independence``): used where J < SHIFT_IND_J, for a share
#: SHIFT_IND_PROB of the moves; t with SHIFT_IND_NU degrees of freedom, the surrogate's covariance widened by
#: SHIFT_IND_WIDEN, and the prior as a defensive component of weight SHIFT_IND_DEFENSIVE.
SHIFT_IND_J = 1.5
SHIFT_IND_PROB = 0.5
SHIFT_IND_NU = 5.0
SHIFT_IND_WIDEN = 1.3
SHIFT_IND_DEFENSIVE = 0.1
#: Records behind the normal surrogate when it scales the shift moves' proposals (no acceptance ratio depends on
#: it; 20,000 for auto's cost model, fewer here so that a small problem's run does not wait on it).
SURROGATE_DRAWS = 4000
#: The kernels' arrays for no independence component (warm-up, or J >= SHIFT_IND_J).
NO_IND = (kernels.NO_IND_MEANS, kernels.NO_IND_CHOLS, kernels.NO_IND_LOG_W, SHIFT_IND_NU, 0.0)


def shift_proposal(problem: Problem, centre=None, cov=None) -> np.ndarray:
    """Cholesky factor of the shift moves' proposal covariance (:func:`engine.kernels.da_mcmc.shift_moves`):
    (SHIFT_RW^2 / (p + 1)) x :meth:`engine.models.linear_regression.LinearRegression.shift_covariance` at the moment
    estimate of beta (``centre``; a function of the release only, fixed before the chains start, so the move
    stays a Metropolis step with a fixed symmetric proposal); ``cov``, that covariance when the caller has it."""
    model = problem.model
    if cov is None:
        centre = moment_estimate(problem) if centre is None else centre
        cov = model.shift_covariance(centre, noise_variance(problem), SURROGATE_DRAWS)
    return np.ascontiguousarray(np.linalg.cholesky(0.5 * (cov + cov.T)) * (SHIFT_RW / math.sqrt(model.p + 1)))


def _shift_covariances(problem: Problem) -> tuple:
    """(Cov(beta | x, e, s_dp), Cov(beta | s_dp)) of the normal surrogate at the moment estimate, with
    SURROGATE_DRAWS records: what the shift moves' proposal, box and mode are set from."""
    model = problem.model
    centre = moment_estimate(problem)
    noise_var = noise_variance(problem)
    held = model.shift_covariance(centre, noise_var, SURROGATE_DRAWS)
    priv, _ = model.surrogate_covariances(centre, noise_var, SURROGATE_DRAWS)
    return held, priv


def _mixed(held, priv) -> bool:
    """J = Var(beta | s_dp) / Var(beta | x, e, s_dp) below SHIFT_IND_J for every coefficient: the shift moves get
    their independence component after warm-up, and warm-up makes SHIFT_BURN_PASSES passes."""
    return bool(np.max(np.diag(priv)[:held.shape[0]] / np.diag(held)) < SHIFT_IND_J)


def burn_passes(problem: Problem, shifts: int, ancillary: int = 0) -> int:
    """The full passes over the records that DA-MCMC's warm-up makes at least with partial sweeps: BURN_PASSES,
    SHIFT_BURN_PASSES with shift moves where J < SHIFT_IND_J (``_mixed``), ANC_BURN_PASSES with ancillary moves."""
    if ancillary > 0:
        return ANC_BURN_PASSES
    if shifts > 0 and getattr(problem.model, "name", "") == "linear_regression" and _mixed(*_shift_covariances(
            problem)):
        return SHIFT_BURN_PASSES
    return BURN_PASSES


def shift_box(priv) -> np.ndarray:
    """The shift moves' box (:func:`engine.kernels.da_mcmc.shift_moves`): the ellipsoid of SHIFT_BOX posterior
    standard deviations, as the lower Cholesky factor of SHIFT_BOX^2 x the surrogate's Cov(beta | s_dp)
    (``priv``). The chain keeps one split of the records for as long as the moves' running total stays in the
    box, and beta, hence that total, ranges over the posterior; the box sets only the cost (the records the moves
    evaluate one by one, and how often they are split again), never the statistic."""
    priv = np.asarray(priv, float)
    return np.ascontiguousarray(np.linalg.cholesky(0.5 * (priv + priv.T)) * SHIFT_BOX)


def _warmup_fit(problem: Problem, theta_half) -> tuple:
    """(mean, cov) of beta from a chain's second half of warm-up ``theta_half``: the warm-up's mean, and the
    normal surrogate's Cov(beta | s_dp) there with each coordinate widened to the warm-up's own spread where that
    is larger."""
    model = problem.model
    q = model.p + 1
    theta_half = np.asarray(theta_half, float)
    mean = theta_half.mean(axis=0)
    priv, _ = model.surrogate_covariances(mean, noise_variance(problem), SURROGATE_DRAWS)
    priv = priv[:q, :q]
    spread = np.atleast_2d(np.cov(theta_half[:, :q], rowvar=False))
    widen = np.sqrt(np.maximum(1.0, np.diag(spread) / np.diag(priv)))
    cov = priv * np.outer(widen, widen)
    return mean[:q], 0.5 * (cov + cov.T)


def shift_independence(problem: Problem, mean, cov) -> tuple:
    """(means, chols, log weights, nu, p_ind) of the shift moves' independence component
    (:func:`engine.kernels.da_mcmc.shift_moves`), from a chain's second half of warm-up (its ``_warmup_fit``,
    ``mean`` and ``cov``), and the normal surrogate (mean, Cholesky factor) of its delayed acceptance. Where
    J = Var(beta | s_dp) / Var(beta | x, e, s_dp) is below SHIFT_IND_J (the noise so wide that the residuals
    hardly matter), beta | e is nearly the posterior and a random walk spends about ten moves, each a pass over
    the records, per independent draw; after warm-up a share SHIFT_IND_PROB of the moves proposes beta' from
    a t mixture instead: centred at the warm-up's mean with the normal surrogate's Cov(beta | s_dp) there,
    each coordinate widened to the warm-up's own spread where that is larger (``_warmup_fit``), times
    SHIFT_IND_WIDEN (weight 1 - SHIFT_IND_DEFENSIVE), and the prior N(0, tau^2 I) as a defensive component
    (Hesterberg 1995), which keeps q(beta) / q(beta') bounded where the posterior is wider or less normal than
    the fit. The delayed acceptance's surrogate is the normal law of the first component's location and scale:
    a proposal it finds far less likely than the current beta (most from the defensive component) is rejected
    before any record is evaluated. The kept iterations run a fixed kernel (warm-up is discarded), and any such
    q and surrogate leave the target invariant: the fit only decides the acceptance rate and the cost. (The
    naive posterior, which ignores the noise, is no centre: at n = 10^4, Gaussian epsilon = 0.1 its mean sits
    8 posterior sd away.)"""
    model = problem.model
    q = model.p + 1
    main = np.linalg.cholesky(cov) * SHIFT_IND_WIDEN
    wide = np.eye(q) * model.prior_sd
    chols = np.ascontiguousarray(np.stack([main, wide]))
    means = np.ascontiguousarray(np.stack([mean, np.zeros(q)]))
    log_w = np.array([math.log(1.0 - SHIFT_IND_DEFENSIVE), math.log(SHIFT_IND_DEFENSIVE)]) - np.array(
        [float(np.sum(np.log(np.diag(c)))) for c in chols])
    return (means, chols, log_w, SHIFT_IND_NU, SHIFT_IND_PROB), (np.ascontiguousarray(mean),
                                                                 np.ascontiguousarray(main))


def ancillary_work(problem: Problem, moves: int, centre=None) -> float:
    """Work of one iteration's ancillary moves, in record updates of the sweep: per move, ANC_MOVE_RECORDS (the
    frame, the map and the class sums) plus the records near a clamp bound evaluated one by one, ANC_UNSAFE_SHARE
    of an update each, counted as for the shift moves' box (``shift_work``). Measured at n = 10^6, Laplace
    epsilon = 0.1: 20 moves an iteration, about 0.4 ms (2.5 ms before ``_add_stats``). 0 when ``moves`` is 0."""
    if not moves:
        return 0.0
    unsafe = shift_work(problem, 1, centre) / UNSAFE_SHARE
    return moves * (ANC_MOVE_RECORDS + ANC_UNSAFE_SHARE * unsafe)


def tail_work(problem: Problem, records: int, centre=None) -> float:
    """Work of one iteration's tail moves, in record updates of the sweep: the records scanned, TAIL_SCAN_SHARE of an
    update each, and the records moved, TAIL_MOVE_SHARE each; the share moved is the tails' mass under y's normal law
    at ``centre`` averaged over the threshold's range (16 midpoints). 0 when ``records`` is 0."""
    if not records:
        return 0.0
    model = problem.model
    beta = np.asarray(moment_estimate(problem) if centre is None else centre, float)[:model.p + 1]
    mu = beta[0] + float(np.dot(model.x_mean, beta[1:]))
    cov = model.chol @ model.chol.T
    sd = math.sqrt(float(beta[1:] @ cov @ beta[1:]) + model.sigma ** 2)
    lo, hi = model.lo[model.p], model.hi[model.p]
    mid = 0.5 * (lo + hi)
    h = TAIL_RANGE[0] + (np.arange(16) + 0.5) / 16 * (TAIL_RANGE[1] - TAIL_RANGE[0])
    c_lo, c_hi = np.minimum(lo + h * sd, mid), np.maximum(hi - h * sd, mid)
    share = float(np.mean(special.ndtr((c_lo - mu) / sd) + special.ndtr((mu - c_hi) / sd)))
    return records * (TAIL_SCAN_SHARE + TAIL_MOVE_SHARE * share)


def shift_work(problem: Problem, shifts: int, centre=None) -> float:
    """Work of one iteration's shift moves, in record updates of the sweep: per move, the records evaluated one
    by one (UNSAFE_SHARE of an update each, :meth:`engine.models.linear_regression.LinearRegression.unsafe_fraction`
    of the n records, for the box ``shift_box``). The split itself is built once per call and kept, so it is not
    counted. 0 when ``shifts`` is 0."""
    if not shifts:
        return 0.0
    model = problem.model
    centre = moment_estimate(problem) if centre is None else centre
    priv, _ = model.surrogate_covariances(centre, noise_variance(problem), SURROGATE_DRAWS)
    unsafe = model.unsafe_fraction(centre, shift_box(priv[:model.p + 1, :model.p + 1]))
    return model.n * shifts * UNSAFE_SHARE * unsafe


def orbit_fit(problem: Problem, t_hist, theta_hist) -> tuple | None:
    """The orbit moves' proposal Cholesky factor and box (:mod:`engine.kernels.orbit`) from a stretch of
    a chain: the covariance C of (T's free entries, beta) over it, carried to the moves' coordinates (E, D) by
    the linearisation dT = E T + T E^T at the stretch's mean T, scaled by 2.38 / sqrt(dim) (the random-walk
    scale of Roberts, Gelman & Gilks 1997); the box of row r of G: the ellipsoid of ORBIT_BOX standard
    deviations of that row of E under C (its Cholesky factor, ``box[r]``). None when the stretch is too short
    to fit C."""
    model = problem.model
    q = model.p + 1
    k = q + 1
    free = free_index(model.p)
    d = len(free) + q
    t_hist = np.asarray(t_hist, float)
    if t_hist.shape[0] < 2 * d:
        return None
    h = np.concatenate([t_hist, np.asarray(theta_hist, float)[:, :q]], axis=1)
    cov = np.atleast_2d(np.cov(h, rowvar=False))
    tm = np.zeros((k, k))
    tm[0, 0] = model.n
    for (a, b), v in zip(free, t_hist.mean(axis=0)):
        tm[a, b] = tm[b, a] = v
    lin = np.zeros((len(free), len(free)))
    for c, (a, b) in enumerate(free):
        e = np.zeros((k, k))
        e[a, b] = 1.0
        dt = e @ tm + tm @ e.T
        lin[:, c] = [dt[i, j] for i, j in free]
    jac = np.eye(d)
    try:
        jac[:len(free), :len(free)] = np.linalg.inv(lin)
    except np.linalg.LinAlgError:
        return None
    ce = _floored(jac @ cov @ jac.T)
    if ce is None:
        return None
    chol = _rw_chol(ce)
    box = np.zeros((k, k, k))
    for r in range(1, k):
        idx = [c for c, (a, _) in enumerate(free) if a == r]  # row r's entries, columns 0..r in order
        box[r, :r + 1, :r + 1] = ORBIT_BOX * np.linalg.cholesky(ce[np.ix_(idx, idx)])
    return np.ascontiguousarray(chol), box


def _frame_of(rec: np.ndarray, beta: np.ndarray, sigma: float) -> np.ndarray:
    """The frame coordinates (:func:`engine.kernels.orbit.frame`) of records ``rec`` at beta and sigma."""
    z = np.column_stack([np.ones(rec.shape[0]), rec])
    k = z.shape[1]
    th = np.empty(frame_size(k - 2))
    if not frame(np.eye(k), np.tril(z.T @ z), np.asarray(beta, float), float(sigma), np.empty((k, k)),
                 np.empty((k, k)), th):
        fail("data", "records", "have fewer than p + 2 distinct (x, y) rows: the ancillary moves need their scatter")
    return th


def frame_start(problem: Problem) -> np.ndarray:
    """The covariance of the ancillary moves' first random walk (before warm-up fits one): block-diagonal, the
    normal surrogate's Cov(beta | s_dp) for beta, Sigma_w / n for w-bar and, for L, the covariance of its entries
    over ANC_WISHART_DRAWS draws of S ~ Wishart_q(n - 1, Sigma_w) (the model's law of the scatter; a fixed stream,
    so the walk is a function of the release alone). Any symmetric walk leaves the target invariant; this one is
    only a starting scale."""
    from scipy import stats
    model = problem.model
    q = model.p + 1
    _, priv = _shift_covariances(problem)
    cov_w = np.eye(q)
    cov_w[:model.p, :model.p] = np.asarray(model.x_cov, float)
    draws = stats.wishart(df=model.n - 1, scale=cov_w).rvs(ANC_WISHART_DRAWS, random_state=np.random.default_rng(0))
    low = np.linalg.cholesky(draws)  # one LAPACK call per draw, as each alone would give
    rows, cols = np.tril_indices(q)
    # L's entries in the frame's order (row by row, the diagonal as its log), C-ordered as np.cov's sums need
    ent = np.ascontiguousarray(low[:, rows, cols])
    diag = rows == cols
    ent[:, diag] = np.array([[math.log(v) for v in row] for row in ent[:, diag]])
    d = frame_size(model.p)
    cov = np.zeros((d, d))
    cov[:q, :q] = priv[:q, :q]
    cov[q:2 * q, q:2 * q] = cov_w / model.n
    cov[2 * q:, 2 * q:] = np.cov(ent, rowvar=False)
    return cov


def ancillary_box(mean: np.ndarray, cov: np.ndarray, sigma: float, radius: float = ANC_BOX) -> np.ndarray:
    """The ancillary moves' box (:mod:`engine.kernels.orbit`'s split): for each row r of G, the ellipsoid of ``radius``
    standard deviations of that row of G' = frame_map(mean, theta') under theta' ~ N(mean, cov), linearised at the
    mean (central differences). It sets the cost of a move only, never its value."""
    d = mean.size
    k = (math.isqrt(8 * d + 9) - 1) // 2  # d = 2q + q (q + 1) / 2 with q = k - 1
    eye = np.eye(k)
    jac = np.zeros((k, k, d))
    for j in range(d):
        h = 1e-3 * math.sqrt(max(cov[j, j], 1e-300))
        up, down, gu, gd = mean.copy(), mean.copy(), np.empty((k, k)), np.empty((k, k))
        up[j] += h
        down[j] -= h
        frame_map(mean, up, sigma, eye, gu)
        frame_map(mean, down, sigma, eye, gd)
        jac[:, :, j] = (gu - gd) / (2.0 * h)
    box = np.zeros((k, k, k))
    for r in range(1, k):
        jr = jac[r, :r + 1, :]
        cr = jr @ cov @ jr.T
        cr = 0.5 * (cr + cr.T) + np.eye(r + 1) * 1e-12 * max(float(np.max(np.diag(cr))), 1e-300)
        box[r, :r + 1, :r + 1] = radius * np.linalg.cholesky(cr)
    return box


def _floored(cov: np.ndarray) -> np.ndarray | None:
    """``cov`` symmetrised with its eigenvalues floored at 1e-12 of the largest (a degenerate direction keeps a tiny
    step); None when they are not finite or none is positive."""
    w, v = np.linalg.eigh(0.5 * (cov + cov.T))
    if not np.all(np.isfinite(w)) or w[-1] <= 0.0:
        return None
    return (v * np.maximum(w, w[-1] * 1e-12)) @ v.T


def _rw_chol(cov: np.ndarray) -> np.ndarray:
    """(2.38 / sqrt(d)) x the Cholesky factor of a floored covariance (``_floored``): the random-walk scale of
    Roberts, Gelman & Gilks (1997)."""
    return np.ascontiguousarray(np.linalg.cholesky(0.5 * (cov + cov.T)) * (2.38 / math.sqrt(cov.shape[0])))


def _rr_reports(problem: Problem) -> np.ndarray:
    """Per-record reported categories consistent with the released counts (order is irrelevant
    because records are exchangeable)."""
    model = problem.model
    counts = np.rint(problem.s_dp).astype(np.int64)
    if model.k == 2 and counts.size == 1:
        counts = np.array([model.n - counts[0], counts[0]])
    return np.repeat(np.arange(counts.size), counts).astype(np.int64)


class _Runner:
    """Binds a problem to the compiled kernel that serves it."""

    def __init__(self, problem: Problem, window: int | None = None, refresh: int = -1, shifts: int = 0,
                 orbit: int = 0, ancillary: int = 0, tail: int = 0):
        self.problem = problem
        self.tail = tail  # records the tail moves scan per iteration (linear_regression with orbit or ancillary moves)
        self.tail_totals = np.zeros(2, dtype=np.int64)  # ... their records moved and accepted over all chains
        self.lock = threading.Lock()
        self.ancillary = ancillary  # ancillary moves per iteration (linear_regression; engine.kernels.orbit)
        self.orbit = orbit  # orbit moves per iteration (linear_regression; engine.kernels.orbit)
        self.shifts = shifts  # shift moves of beta with the records' y per iteration (linear_regression)
        self.shift_l = kernels.NO_SHIFT
        self.shift_box = kernels.NO_BOX  # the shift moves' box during warm-up (shift_box)
        self.shift_mixed = False  # an independence component after warm-up (fit_shift)
        self.window = window  # records per iteration (linear_regression), None = all n
        self.burn_passes = BURN_PASSES  # full passes over the records in warm-up, at least (partial sweeps)
        self.refresh = refresh  # clamped records' raw y refreshed per iteration (linear_regression), -1 = all
        model, mech = problem.model, problem.mechanism
        self.rr = isinstance(mech, RandomizedResponse)
        self.z = _rr_reports(problem) if self.rr else np.zeros(1, dtype=np.int64)
        # a float scale, or a tuple for a bounded domain or a lattice release on its clip bound (compiled_noise)
        self.kernel, self.scale = (0, 1.0) if self.rr else compiled_noise(mech)
        if model.name == "beta_binomial":
            self._prepare_bernoulli()
        elif model.name == "linear_regression":
            self.chol = model.chol
            self.x_prec = np.linalg.inv(np.asarray(model.x_cov, float))  # Sigma^-1, for the orbit moves
            if ancillary > 0:  # w = (x, e): mean (m, 0), precision blockdiag(Sigma^-1, 1); the first walk's scale
                q = model.p + 1
                self.mu_w = np.concatenate([np.asarray(model.x_mean, float), [0.0]])
                self.p_w = np.eye(q)
                self.p_w[:model.p, :model.p] = self.x_prec
                self.anc_cov0 = frame_start(problem)
                self.burn_passes = ANC_BURN_PASSES
            if shifts > 0:
                held, priv = _shift_covariances(problem)
                self.shift_l = shift_proposal(problem, cov=held)
                self.shift_mixed = _mixed(held, priv)
                if self.shift_mixed:
                    self.burn_passes = SHIFT_BURN_PASSES
                self.shift_box = shift_box(priv[:model.p + 1, :model.p + 1])
        elif self.rr:
            self.log_q = mech.log_Q
        else:
            self.log_q = np.zeros((1, 1))

    def _prepare_bernoulli(self):
        model, mech = self.problem.model, self.problem.mechanism
        n = model.n
        if self.rr:
            lq = mech.log_Q
            # rr_acc[z, x*] = min(1, Q[x*, z] / Q[1 - x*, z]), from log Q so that it stays finite
            self.rr_acc = np.array([[math.exp(min(0.0, lq[x, zz] - lq[1 - x, zz])) for x in (0, 1)] for zz in (0, 1)])
            self.acc_up = self.acc_down = np.zeros(1)
        else:
            s = np.arange(n + 1, dtype=float)
            lp = mech.noise_log_prob(self.problem.s_dp[0] - s)
            up = np.zeros(n + 1)
            down = np.zeros(n + 1)
            up[:-1] = np.exp(np.minimum(lp[1:] - lp[:-1], 0.0))
            down[1:] = np.exp(np.minimum(lp[:-1] - lp[1:], 0.0))
            self.acc_up, self.acc_down = up, down
            self.rr_acc = np.zeros((2, 2))

    def init_state(self, rng: np.random.Generator) -> ChainState:
        """Start from theta drawn from the naive posterior and x ~ f(. | theta)."""
        model = self.problem.model
        theta0 = model.posterior_sample(rng, model.project(self.problem.s_dp), 1)[0]
        if model.name == "linear_regression" and np.any(np.abs(theta0[:model.p + 1]) > 3.0 * model.prior_sd):
            # at small epsilon the naive posterior can sit far out in the prior's tail (a nearly singular
            # noisy x~^T x~), where DA-MCMC would spend many sweeps walking back: start from the prior
            theta0 = model.sample_prior(rng, 1)[0]
        x = model.sample_records(rng, theta0)
        if model.name == "dirichlet_multinomial":
            counts = np.bincount(x, minlength=model.k).astype(float)
            return ChainState(x=x, s=0.0, sum_x=0.0, counts=counts)
        if model.name == "naive_bayes_loglinear":
            class_counts = np.bincount(x[:, 0], minlength=model.class_levels).astype(float)
            return ChainState(x=np.ascontiguousarray(x), s=0.0, sum_x=0.0, counts=model.statistic(x),
                              class_counts=class_counts)
        if model.name == "linear_regression":  # statistics are (re)computed by the kernel at every call
            q = model.p + 1
            sig = np.array([math.sqrt(theta0[q]) if model.unknown_sigma else model.sigma])
            return ChainState(x=np.ascontiguousarray(x, dtype=float), s=0.0, sum_x=0.0, counts=np.empty(model.stat_dim),
                              xtx=np.empty((q, q)), xty=np.empty(q), yty=np.empty(1), sig=sig)
        if model.name == "normal_known_sd":
            return ChainState(x=x.astype(float), s=float(model.statistic(x)[0]), sum_x=float(x.sum()))
        # Bernoulli records fit in one byte: a smaller array keeps n = 10^6 sweeps in cache
        dtype = np.int8 if model.name == "beta_binomial" else np.int64
        return ChainState(x=x.astype(dtype), s=float(model.statistic(x)[0]), sum_x=float(np.sum(x)))

    def fit_orbit(self, st: ChainState) -> None:
        """At each ORBIT_FITS-th of warm-up: the orbit moves' proposal and box from the second half of the
        iterations since the last fit (``orbit_fit``); until the first fit the chain makes no orbit move.
        Neither changes the target: the proposal is a symmetric law fixed for the next stretch, the box sets
        the cost only."""
        hist, st.orbit_hist = st.orbit_hist or [], []
        if not hist:
            return
        t_hist = np.concatenate([h[0] for h in hist])
        th = np.concatenate([h[1] for h in hist])
        half = t_hist.shape[0] // 2
        fitted = orbit_fit(self.problem, t_hist[half:], th[half:])
        if fitted is not None:
            st.orbit_fit = fitted

    def fit_ancillary(self, st: ChainState, final: bool) -> None:
        """At each ORBIT_FITS-th of warm-up: the ancillary moves' random walk (2.38 / sqrt(d) x the covariance of the
        frame coordinates over the second half of warm-up so far) and box (``ancillary_box``); at warm-up's end also
        the t mixture of the independence proposals (centred at that stretch's mean). None of them changes the
        target: the walk is symmetric and fixed for the next stretch, the t mixture fixed for the kept iterations,
        and the box sets the cost only."""
        hist = np.concatenate(st.anc_hist)
        half = hist[hist.shape[0] // 2:]
        half = half[np.all(np.isfinite(half), axis=1)]
        d = hist.shape[1]
        if half.shape[0] < 2 * d:
            return
        mean, cov = half.mean(axis=0), np.cov(half, rowvar=False)
        floored = _floored(cov)
        if floored is None:
            return
        rw = _rw_chol(floored)
        box = ancillary_box(mean, cov, float(st.sig[0]), ANC_BOX_KEPT if final else ANC_BOX)
        ind = None
        if final:
            main = rw * (math.sqrt(d) / 2.38) * ANC_WIDEN
            chols = np.ascontiguousarray(np.stack([main, main * ANC_DEFENSIVE_WIDEN]))
            log_w = np.array([math.log(1.0 - ANC_DEFENSIVE), math.log(ANC_DEFENSIVE)]) - np.array(
                [float(np.sum(np.log(np.diag(c)))) for c in chols])
            ind = (np.ascontiguousarray(np.stack([mean, mean])), chols, log_w, ANC_NU, ANC_IND_PROB)
        st.anc_fit = (rw, box, ind)

    def _ancillary_args(self, st: ChainState) -> tuple:
        """orbit_chain's ancillary arguments and the box, the first walk's set up from the chain's own frame."""
        model = self.problem.model
        d = frame_size(model.p)
        if st.anc_counts is None:
            st.anc_counts = np.zeros(5, dtype=np.int64)
        if st.anc_fit is None:
            q = model.p + 1
            beta = moment_estimate(self.problem)[:q]
            mean = _frame_of(st.x, beta, st.sig[0])
            st.anc_fit = (_rw_chol(_floored(self.anc_cov0)), ancillary_box(mean, self.anc_cov0, float(st.sig[0])), None)
        rw, box, ind = st.anc_fit
        means, chols, log_w, nu, mix = ind or (np.zeros((1, d)), np.eye(d)[None], np.zeros(1), ANC_NU, 0.0)
        return (self.ancillary, float(mix), means, chols, log_w, float(nu), rw, self.mu_w, self.p_w), box

    def _tail_args(self, st: ChainState) -> np.ndarray:
        """orbit_chain's tail-move state (records scanned an iteration, the threshold's range in sd of y, the next
        window's start), kept by the chain from block to block; its counts (records moved, accepted) likewise."""
        if st.tail_state is None:
            st.tail_state = np.array([float(self.tail), TAIL_RANGE[0], TAIL_RANGE[1], float(st.start)])
            st.tail_counts = np.zeros(2, dtype=np.int64)
        return st.tail_state

    def fit_shift(self, st: ChainState, theta_half) -> None:
        """After warm-up: the shift moves' box (SHIFT_BOX standard deviations of ``_warmup_fit``'s covariance) and
        its centre (the warm-up's mean) from this chain's second half of warm-up, and, where the noise is wide
        enough for it (``shift_mixed``), the independence component with its delayed acceptance surrogate
        (``shift_independence``). None of them changes the target: the box and centre set the cost only."""
        if self.shifts > 0 and theta_half.shape[0] >= 2:
            mean, cov = _warmup_fit(self.problem, theta_half)
            da = (kernels.NO_MID, kernels.NO_BOX)
            if self.shift_mixed:
                st.shift_ind, da = shift_independence(self.problem, mean, cov)
            st.shift_fit = (shift_box(cov), np.ascontiguousarray(mean), *da)

    def _shift_args(self, st: ChainState) -> tuple:
        """The kernels' shift arguments after ``shift_l``: the independence component, the box, its centre and the
        delayed acceptance surrogate. Before the warm-up fit: the runner's box, re-centred where the moves are (the
        chain is still on its way to the posterior, so no fixed centre fits), and no surrogate."""
        fit = st.shift_fit or (self.shift_box, kernels.NO_MID, kernels.NO_MID, kernels.NO_BOX)
        return (*(st.shift_ind or NO_IND), *fit)

    def advance(self, rng, st: ChainState, n_iter: int, out_theta, out_acc, out_frac, window=None) -> None:
        model = self.problem.model
        sdp = self.problem.s_dp
        mode = 1 if self.rr else 0
        if model.name == "beta_binomial":
            st.s = float(kernels.bernoulli_chain(rng, st.x, int(st.s), model.a, model.b, mode, self.acc_up,
                                                 self.acc_down, self.z, self.rr_acc, n_iter, out_theta, out_acc, out_frac))
        elif model.name == "dirichlet_multinomial":
            kernels.categorical_chain(rng, st.x, st.counts, np.asarray(model.alpha), mode,
                                      np.asarray(sdp, float) if not self.rr else np.zeros(model.k),
                                      self.kernel, self.scale, self.z, self.log_q, n_iter, out_theta, out_acc, out_frac)
        elif model.name == "naive_bayes_loglinear":
            kernels.loglinear_chain(rng, st.x, st.counts, st.class_counts, np.asarray(model.feature_levels, np.int64),
                                    model.offsets, float(model.alpha), np.asarray(sdp, float), self.kernel,
                                    self.scale, n_iter, out_theta, out_acc, out_frac)
        elif model.name == "linear_regression" and (self.orbit > 0 or self.ancillary > 0):
            sig_a, sig_b = model.sigma_prior or (0.0, 0.0)
            q = model.p + 1
            if st.orbit_counts is None:
                st.orbit_counts = np.zeros(4, dtype=np.int64)
            if st.orbit_delayed is None:  # fixed for the run from the chain's first records (module docstring)
                y = st.x[:, model.p]
                share = float(np.mean((y <= model.lo[model.p]) | (y >= model.hi[model.p])))
                st.orbit_delayed = int(share <= ORBIT_DA_CLAMPED)
            out_t = np.empty((n_iter, len(free_index(model.p))))
            out_w = np.empty((n_iter, frame_size(model.p)))
            if st.anc_beta is None:  # NaN: the kernel's first iteration draws beta | records
                st.anc_beta = np.full(q, np.nan)
            chol, box = st.orbit_fit or (np.eye(out_t.shape[1] + q), np.zeros((q + 1, q + 1, q + 1)))
            anc = (0, 0.0, np.zeros((1, 1)), np.ones((1, 1, 1)), np.zeros(1), ANC_NU, np.eye(out_w.shape[1]),
                   np.zeros(q), np.eye(q))
            if self.ancillary > 0:
                anc, box = self._ancillary_args(st)
            st.start = int(orbit_chain(
                rng, st.x, st.counts, st.sig, self.chol, np.asarray(model.x_mean, float),
                self.x_prec, model.prior_sd, float(sig_a), float(sig_b),
                np.asarray(model.lo, float), np.asarray(model.hi, float), np.asarray(sdp, float), self.kernel,
                self.scale, st.start, model.n if window is None else int(window), n_iter, out_theta, out_acc, out_frac,
                out_t, int(self.refresh), self.orbit if st.orbit_fit else 0, chol, box, st.orbit_counts,
                st.orbit_delayed, *anc, out_w, st.anc_counts if st.anc_counts is not None else np.zeros(5, np.int64),
                st.anc_beta, self._tail_args(st), st.tail_counts))
            if st.orbit_hist is not None:
                st.orbit_hist.append((out_t, np.array(out_theta[:, :q])))
            if st.anc_hist is not None:
                st.anc_hist.append(out_w)
        elif model.name == "linear_regression" and window is not None and window < model.n:
            sig_a, sig_b = model.sigma_prior or (0.0, 0.0)
            st.start = int(regression_window_chain(
                rng, st.x, st.counts, st.xtx, st.xty, st.yty, st.sig, self.chol, np.asarray(model.x_mean, float),
                model.prior_sd, float(sig_a), float(sig_b), np.asarray(model.lo, float), np.asarray(model.hi, float),
                np.asarray(sdp, float), self.kernel, self.scale, st.start, int(window), n_iter, out_theta, out_acc,
                out_frac, int(self.refresh), int(self.shifts), self.shift_l, *self._shift_args(st)))
        elif model.name == "linear_regression":
            sig_a, sig_b = model.sigma_prior or (0.0, 0.0)
            regression_chain(rng, st.x, st.counts, st.xtx, st.xty, st.yty, st.sig, self.chol,
                             np.asarray(model.x_mean, float), model.prior_sd, float(sig_a), float(sig_b),
                             np.asarray(model.lo, float), np.asarray(model.hi, float), np.asarray(sdp, float),
                             self.kernel, self.scale, n_iter, out_theta, out_acc, out_frac, int(self.refresh),
                             int(self.shifts), self.shift_l, *self._shift_args(st))
        elif model.name == "poisson_gamma":
            upper = -1 if model.upper is None else int(model.upper)
            s, sx = kernels.poisson_chain(rng, st.x, int(st.s), int(st.sum_x), model.alpha, model.beta, upper,
                                          float(sdp[0]), self.kernel, self.scale, n_iter, out_theta, out_acc, out_frac)
            st.s, st.sum_x = float(s), float(sx)
        else:
            s, sx = kernels.normal_chain(rng, st.x, st.s, st.sum_x, model.sd, model.lo, model.hi, model.prior_mean,
                                         model.prior_sd, float(sdp[0]), self.kernel, self.scale,
                                         float(self.problem.mechanism.noise_sd), True, n_iter,
                                         out_theta, out_acc, out_frac)
            st.s, st.sum_x = float(s), float(sx)


def _run_chain(runner, rng, warmup, draws, block, progress, c, tick, stop):
    n_par = len(runner.problem.model.param_names)
    total = warmup + draws
    theta = np.empty((total, n_par))
    acc = np.empty(total)
    frac = np.empty(total)
    st = runner.init_state(rng)
    done = 0
    windows = _windows(runner, warmup)
    fit = getattr(runner, "shifts", 0) > 0  # a block ends at warm-up's end, where the shift moves are refitted
    # ... and at each ORBIT_FITS-th of it, where the orbit or ancillary moves are fitted
    orbit = getattr(runner, "orbit", 0) > 0 or getattr(runner, "ancillary", 0) > 0
    stops = sorted({warmup * j // ORBIT_FITS for j in range(1, ORBIT_FITS + 1)} if orbit
                   else {warmup} if fit else set())
    if orbit:
        st.orbit_hist = []
        st.anc_hist = []
    while done < total and not stop.is_set():
        ahead = [x - done for x in stops if x > done]
        if windows is None:  # full sweeps: blocks as they always were
            m = min(block, total - done, ahead[0] if ahead else total)
            runner.advance(rng, st, m, theta[done:done + m], acc[done:done + m], frac[done:done + m])
        else:
            window, size = windows[0] if done < warmup else windows[1]
            m = min(size, total - done, warmup - done if done < warmup else total, ahead[0] if ahead else total)
            runner.advance(rng, st, m, theta[done:done + m], acc[done:done + m], frac[done:done + m], window)
        done += m
        if orbit and done in stops:
            if runner.orbit > 0:
                runner.fit_orbit(st)
            if runner.ancillary > 0:
                runner.fit_ancillary(st, done == warmup)
            if done == warmup:
                st.orbit_hist = st.anc_hist = None
        if fit and done == warmup:
            runner.fit_shift(st, theta[warmup // 2:warmup])
        progress[c] = done
        tick()
    if getattr(st, "tail_counts", None) is not None:
        with runner.lock:
            runner.tail_totals += st.tail_counts
    return theta, acc, frac


def _windows(runner, warmup):
    """((records per warm-up iteration, block), (records per kept iteration, block)), or None for full
    sweeps throughout. Warm-up sweeps at least ``burn_passes`` x n / warmup records per iteration (BURN_PASSES,
    or SHIFT_BURN_PASSES where the shift moves carry the chain)."""
    m = getattr(runner, "window", None)  # a custom model's runner sweeps all records
    n = runner.problem.model.n
    if m is None or m >= n:
        return None
    m_warm = min(n, max(m, math.ceil(getattr(runner, "burn_passes", BURN_PASSES) * n / max(warmup, 1))))
    return tuple((w, max(1, 4_000_000 // w)) for w in (m_warm, m))


def da_mcmc(problem: Problem, rng: np.random.Generator, *, chains: int = 4, draws: int = 1000,
            warmup: int = 500, on_progress=None, parallel: bool = True,
            records_per_iteration: int | None = None, clamped_per_iteration: int | None = None,
            thin: int = 1, shifts: int = 0, orbit_moves: int = 0, ancillary_moves: int = 0,
            tail_records: int = 0) -> Result:
    """Draw from p(theta | s_dp) by data augmentation (Ju et al. 2022, Algorithm 1).

    Parameters
    ----------
    problem : Problem
        Model, mechanism and release ``s_dp``.
    rng : numpy.random.Generator
        Parent stream; chain c runs on ``rng.spawn(chains)[c]``.
    chains, draws, warmup : int
        Number of chains, kept iterations per chain, and discarded iterations per chain.
    on_progress : callable(done, total), optional
        Called from the calling thread as iterations complete; returning ``False`` stops the run at
        the next block, keeping the draws made so far (``info["stopped"] = "cancelled"``; see
        :mod:`engine.core.chains`).
    records_per_iteration : int, optional
        linear_regression only: records swept per iteration (1..n; default all n), the partial sweeps
        of the module docstring.
    clamped_per_iteration : int, optional
        linear_regression only: clamped records whose raw y is redrawn per iteration (the Tobit refresh
        of the module docstring); default all of them, 0 none.
    shifts : int
        linear_regression only: shift moves of beta with the records' y per iteration (module docstring).
    orbit_moves : int
        linear_regression only: orbit moves per iteration (:mod:`engine.kernels.orbit`: every record moved by
        one lower-triangular affine map and beta with it, at a cost that does not grow with n), fitted
        ORBIT_FITS times over warm-up to the chain's spread; not combined with ``shifts``.
    ancillary_moves : int
        linear_regression only: ancillary moves per iteration (:mod:`engine.kernels.orbit`: the frame (beta,
        w-bar, L) of w = (x, e) moved with the records' ancillary configuration held, by a random walk fitted
        ORBIT_FITS times over warm-up and after it half by independence proposals); not combined with ``shifts`` or
        ``orbit_moves``.
    tail_records : int
        linear_regression with ``orbit_moves`` or ``ancillary_moves`` only: records scanned per iteration by the
        tail moves (:mod:`engine.kernels.orbit`: a record whose y lies beyond a threshold near a clamp bound gets a
        new record from the model restricted to that tail), 0..n, default 0.
    thin : int
        Iterations per kept draw after warm-up (default 1): the chain runs ``draws x thin`` iterations
        and keeps every ``thin``-th, so a chain whose iterations are cheap but strongly autocorrelated
        reaches its effective sample size (and an R-hat near 1) without ``draws x thin`` draws to store.
        Keeping a subsequence of a chain's states changes nothing in its stationary law.

    Returns
    -------
    Result
        ``sample_stats`` has ``acceptance_rate`` and ``accepted_fraction``; ``info`` has
        ``epsilon_bound`` (exp(-epsilon) or None), ``min_acceptance_per_chain``,
        ``mean_acceptance``, ``compiled`` and ``wall_time_s``.
    """
    t0 = time.perf_counter()
    model = problem.model
    custom = isinstance(model, CustomModel)
    n = model.n
    if records_per_iteration is not None:
        if getattr(model, "name", None) != "linear_regression":
            fail("method.records_per_iteration", records_per_iteration,
                 "is a key of da_mcmc for linear_regression only (partial sweeps of its records)")
        if not 1 <= int(records_per_iteration) <= n:
            fail("method.records_per_iteration", records_per_iteration, f"must be an integer from 1 to n = {n:,}")
    if clamped_per_iteration is not None:
        if getattr(model, "name", None) != "linear_regression":
            fail("method.clamped_per_iteration", clamped_per_iteration,
                 "is a key of da_mcmc for linear_regression only (the raw y of its clamped records)")
        if not 0 <= int(clamped_per_iteration) <= n:
            fail("method.clamped_per_iteration", clamped_per_iteration, f"must be an integer from 0 to n = {n:,}")
    refresh = -1 if clamped_per_iteration is None else int(clamped_per_iteration)
    if shifts and getattr(model, "name", None) != "linear_regression":
        fail("method.shifts", shifts, "is a key of da_mcmc for linear_regression only (moves of beta with its "
             "records' y)")
    if not 0 <= int(shifts) <= MAX_SHIFTS:
        fail("method.shifts", shifts, f"must be an integer from 0 to {MAX_SHIFTS} (shift moves per iteration)")
    if orbit_moves and getattr(model, "name", None) != "linear_regression":
        fail("method.orbit_moves", orbit_moves, "is a key of da_mcmc for linear_regression only (moves of all its "
             "records and beta by one affine map)")
    if not 0 <= int(orbit_moves) <= MAX_ORBIT:
        fail("method.orbit_moves", orbit_moves, f"must be an integer from 0 to {MAX_ORBIT} (orbit moves per iteration)")
    if orbit_moves and shifts:
        fail("method.orbit_moves", orbit_moves, "does not combine with shifts (the orbit moves include them): set "
             "one of the two")
    if ancillary_moves and getattr(model, "name", None) != "linear_regression":
        fail("method.ancillary_moves", ancillary_moves, "is a key of da_mcmc for linear_regression only (moves of "
             "its records' frame with beta)")
    if not 0 <= int(ancillary_moves) <= MAX_ORBIT:
        fail("method.ancillary_moves", ancillary_moves,
             f"must be an integer from 0 to {MAX_ORBIT} (ancillary moves per iteration)")
    if ancillary_moves and (shifts or orbit_moves):
        fail("method.ancillary_moves", ancillary_moves, "does not combine with shifts or orbit_moves (it moves beta "
             "and every record itself): set one of them")
    if tail_records and getattr(model, "name", None) != "linear_regression":
        fail("method.tail_records", tail_records, "is a key of da_mcmc for linear_regression only (moves of the "
             "records near its y clamp)")
    if not 0 <= int(tail_records) <= n:
        fail("method.tail_records", tail_records, f"must be an integer from 0 to n = {n:,} (records the tail moves "
             "scan per iteration)")
    if tail_records and not (orbit_moves or ancillary_moves):
        fail("method.tail_records", tail_records, "runs with orbit_moves or ancillary_moves only (the tail moves "
             "live in their kernel): set one of them")
    if not 1 <= int(thin):
        fail("method.thin", thin, "must be an integer >= 1 (iterations per kept draw)")
    thin = int(thin)
    iters = draws * thin  # post-warm-up iterations; every thin-th is kept
    runner = model.bind(problem) if custom else _Runner(problem, records_per_iteration, refresh, int(shifts),
                                                       int(orbit_moves), int(ancillary_moves), int(tail_records))
    block = max(1, min(warmup + iters, int(4_000_000 // max(n, 1))))
    if custom:
        block = max(1, min(warmup + iters, 20_000 // max(n, 1)))
    streams = rng.spawn(chains)
    progress = np.zeros(chains, dtype=np.int64)
    outs, stopped = run_chains(
        lambda c, tick, stop: _run_chain(runner, streams[c], warmup, iters, block, progress, c, tick, stop),
        chains, warmup + iters, progress, on_progress, parallel=parallel and not custom)
    keep, n_kept = kept(progress, warmup, iters)
    sl = slice(warmup + thin - 1, warmup + n_kept, thin)
    n_kept = n_kept // thin
    theta = np.stack([outs[c][0][sl] for c in keep])
    acc = np.stack([outs[c][1][sl] for c in keep])
    frac = np.stack([outs[c][2][sl] for c in keep])
    return Result(
        method="da_mcmc",
        param_names=tuple(model.param_names),
        draws=theta,
        s_dp=problem.s_dp,
        sample_stats={"acceptance_rate": acc, "accepted_fraction": frac},
        info={
            "epsilon_bound": acceptance_bound(problem),
            "min_acceptance_per_chain": [float(a.min()) for a in acc] if acc.size else [],
            "mean_acceptance": float(acc.mean()) if acc.size else float("nan"),
            "chains": len(keep), "draws": n_kept, "warmup": warmup,
            "stopped": "cancelled" if stopped else None,
            "compiled": not custom,
            "mcmc": True,
            "wall_time_s": time.perf_counter() - t0,
            **({"records_per_iteration": int(records_per_iteration)} if records_per_iteration else {}),
            **({"clamped_per_iteration": int(clamped_per_iteration)} if clamped_per_iteration is not None else {}),
            **({"thin": thin} if thin > 1 else {}),
            **({"shifts": int(shifts)} if shifts else {}),
            **({"orbit_moves": int(orbit_moves)} if orbit_moves else {}),
            **({"ancillary_moves": int(ancillary_moves)} if ancillary_moves else {}),
            **({"tail_records": int(tail_records),
                "tail_moves": {"moved": int(runner.tail_totals[0]),
                               "accepted": float(runner.tail_totals[1] / max(runner.tail_totals[0], 1))}}
               if tail_records else {}),
        },
    )


def _run(problem, rng, settings, on_progress):
    settings.pop("grid_size", None)
    return da_mcmc(problem, rng, on_progress=on_progress, **settings)


def _validate(table, out):
    if "records_per_iteration" in table:
        out["records_per_iteration"] = positive_int("method.records_per_iteration", table["records_per_iteration"],
                                                    1, 10_000_000)
    if "clamped_per_iteration" in table:
        out["clamped_per_iteration"] = positive_int("method.clamped_per_iteration", table["clamped_per_iteration"],
                                                    0, 10_000_000)
    if "thin" in table:
        out["thin"] = positive_int("method.thin", table["thin"], 1, 10_000)
        iterations = out["warmup"] + out["draws"] * out["thin"]
        if iterations > MAX_ITERATIONS:  # a chain stores every iteration before it keeps every thin-th
            fail("method.thin", table["thin"], f"makes warmup + draws x thin = {iterations:,} iterations a chain; "
                 f"at most {MAX_ITERATIONS:,} (lower draws or thin)")
    if "shifts" in table:
        out["shifts"] = positive_int("method.shifts", table["shifts"], 0, MAX_SHIFTS)
    if "orbit_moves" in table:
        out["orbit_moves"] = positive_int("method.orbit_moves", table["orbit_moves"], 0, MAX_ORBIT)
    if "ancillary_moves" in table:
        out["ancillary_moves"] = positive_int("method.ancillary_moves", table["ancillary_moves"], 0, MAX_ORBIT)
    if "tail_records" in table:
        out["tail_records"] = positive_int("method.tail_records", table["tail_records"], 0, 10_000_000)


#: iterations a chain may run (warm-up and kept, before thinning): the most ``draws`` and ``warmup`` allow unthinned
MAX_ITERATIONS = 20_000_000


METHOD = Method(name="da_mcmc", claim="exact", paper="Ju, Gong, Awan & Rao 2022, Alg. 1", run=_run, mcmc=True,
                keys=frozenset({"records_per_iteration", "clamped_per_iteration", "thin", "shifts",
                                "orbit_moves", "ancillary_moves", "tail_records"}),
                validate=_validate)
