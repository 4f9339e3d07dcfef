"""``auto``: the exact method that is cheapest for this scenario ("Exact (best method)" in the app).

Every candidate is exact; they differ only in cost, and each has a regime where it is slow:

* ``exact`` (closed form or numerical grid) costs no Markov chain at all: i.i.d. draws. It is used
  whenever :func:`engine.methods.exact.has_closed_form` says it exists for the model and mechanism.
* ``da_mcmc`` (Ju et al. 2022, Alg. 1) costs n record updates per iteration and moves theta in steps
  of the confidential posterior's width sd_x, inside a private posterior of width
  sd_p ≈ sqrt(sd_x^2 + (noise sd / n)^2) (in the parameter's own units, statistic per record).
  A random walk whose steps are sd_x inside a target of width sd_p needs about (sd_p / sd_x)^2
  iterations per effective draw, so its cost per effective draw is about
  n t_record (sd_p / sd_x)^2.
* ``pseudo_marginal`` costs M statistic draws per iteration, with M ≈ CV^2 / 1.2^2 where CV^2 is the
  squared coefficient of variation of eta(s_dp - s) over s ~ p(s | theta) at the naive estimate
  (measured by a pilot, :func:`engine.methods.pseudo_marginal.choose_particles`), and a tuned random
  walk delivers about one effective draw per 5 iterations in one dimension: cost about
  5 M t_statistic (more in higher dimension, 5 d).

Rule: exact when available; otherwise the cheaper of the two chains by the estimates above (unit
costs t_record and t_statistic per model are measured constants of the compiled kernels, see
``_UNIT_COST_NS``; only their ratio matters). The rule is cheap: a pilot of a few thousand
statistic draws. Fallback: if the chosen chain's convergence verdict fails (R-hat > 1.01 or ESS <
400, :func:`engine.numerics.diagnostics.convergence`), the other chain runs too, and if neither converges the
better one reruns with four times the draws; the result is the converged run (or the one with the
largest minimum ESS), and ``info`` says what was picked, why, and every attempt with its verdict.
Where the closed form exists but refuses the release (a mixture too large to evaluate: a release far in the
prior predictive's tail with a prior the window's bounds cannot certify), the two chains are compared as if it did
not exist, and the refusal is the first of ``attempts``.
naive_bayes_loglinear compares DA-MCMC (n (K + 1) categorical draws per sweep, times the same
inflation) with its pseudo-marginal chain on the tables (:mod:`engine.methods.loglinear_pm`), whose
iteration costs O(cells x blocks) whatever n is (``_choose_loglinear``). Custom models go to the
pseudo-marginal sampler when they give ``log_prior`` and the pilot says one or two particles suffice
(the noise is wide), else to DA-MCMC (the only chain that needs no prior density). Models that list
their methods without ``exact`` or ``pseudo_marginal`` go to DA-MCMC. A release that lists the methods able
to analyse it (``mechanism.methods``) goes to the one exact method among them (OpenDP's mean: the pseudo-marginal
chain on (mu, n), :mod:`engine.methods.mean_ratio`; its fallback is the rerun, there being no other chain).
linear_regression (whose statistic is not one number per record) compares record work per effective draw
(``_choose_regression``): DA-MCMC sweeping a window of m of the n records per iteration
(m + 2 (I - 1) n updates per effective draw, I the inflation of the posterior variance over the
raw-record conditional's, from a normal surrogate of the statistic's law; m from
:func:`regression_window`, at n >= 500,000 no larger than the m that balances the records against the rest of an
iteration's work, :func:`_balanced_window`) against the pseudo-marginal sampler with its mixed independence /
random-walk proposal (M particles of n simulated records, about 4 iterations per effective draw);
the picked chain runs with those settings (:func:`settings_for`); with an unknown sigma^2 (no
surrogate) one or two particles decide, as before. DA-MCMC for linear_regression also redraws the raw
y of the clamped records every iteration (:func:`engine.kernels.da_mcmc.censored_refresh`), so its
inflation is taken over the censored-data posterior (:meth:`LinearRegression.censored_covariance`)
and its price per iteration includes those refreshes (``clamped_per_iteration``, capped at the
window's size, and at 1,000 where n >= 500,000: :func:`_refreshed`); where its iterations are cheap
(small n) it keeps one draw in ``thin``, about half its
estimated autocorrelation time, while the spec defaults' run stays under 2 s of one core's work (at
n = 100 and narrow noise 2000 draws per chain held about 100 effective draws each: R-hat 1.01 to 1.03
over seeds). The fallback is the same for every model: the other chain when the model has it (not
when a regression or custom particle would take more than 50 x n simulated records), then the better
one with four times the draws (for linear_regression the better per unit of the rule's cost: at
n = 100, Laplace epsilon = 10, DA-MCMC thinned by 7 had more effective draws than the pseudo-marginal
chain but cost 5.5 x as much per kept draw, and its 4 x rerun took 10 s where the other's took 1.9 s). A fallback is skipped, and ``why`` and ``attempts`` say so, when the
rule's estimate of the cost of its run is over ``FALLBACK_RATIO`` (10) times the first attempt's
(linear_regression, whose rule prices an iteration of both chains in record work: at n = 10^4,
Gaussian epsilon = 1, a 50-particle pseudo-marginal fallback cost 16 x the DA-MCMC run it followed,
and the whole fallback 1,700 s; the other models keep their fallbacks, and their draws), or when its estimated wall time (the first attempt's measured time scaled
by the estimates' ratio, or four times it for the rerun) is over what is left of ``max_seconds``, the
work budget (a [method] key of ``auto``; none by default).
"""
from __future__ import annotations

import math
import time

import numpy as np

from ..core.results import Problem, Result
from ..core.validation import positive
from ..mechanisms.ratio import OpenDPMean
from ..models.custom import CustomModel
from ..numerics.diagnostics import convergence
from .base import Method
from .da_mcmc import SHIFT_IND_J, ancillary_work, da_mcmc, shift_work, tail_work
from .exact import exact, has_closed_form
from .pseudo_marginal import _clean, _setup, choose_particles, moment_estimate, noise_variance, pseudo_marginal

__all__ = ["auto", "choose", "settings_for", "regression_window", "METHOD", "LOGLINEAR_NS_PER_CELL_BLOCK",
           "FALLBACK_RATIO"]

# nanoseconds per record update (da_mcmc sweep) and per statistic draw (pseudo-marginal), per model;
# measured with bench/run.py on the project's machine (only ratios enter the rule)
_UNIT_COST_NS = {
    "beta_binomial": (5.0, 70.0),
    "poisson_gamma": (15.0, 60.0),
    "normal_known_sd": (25.0, 25.0),   # x n: the normal statistic is a sum of n record draws
    "dirichlet_multinomial": (20.0, 70.0),
    "naive_bayes_loglinear": (30.0, 0.0),  # per record and feature (the pseudo-marginal chain: below)
    "linear_regression": (250.0, 80.0),    # per record: a DA-MCMC update; a record of a particle
}
_REFRESH_NS = 250.0               # linear_regression: one clamped record's raw y redrawn (censored_refresh): 110 ns
                                  # in cache, about a record update (~250 ns) at n = 10^6 (random access)
_REFRESH_CAP = 1000               # linear_regression: clamped records refreshed per iteration at most,
_REFRESH_CAP_N = 500_000          # where n >= this (the records out of cache; see _refreshed)
_BALANCE_N = 500_000              # linear_regression, narrow noise: from this n the window balances the other work
_THIN_BUDGET_NS = 2e9             # linear_regression: DA-MCMC thins while 10,000 kept draws cost less than this
_THIN_REFERENCE_DRAWS = 10_000    # the spec defaults' 4 chains x (2000 draws + 500 warm-up)
FALLBACK_RATIO = 10.0             # a fallback estimated dearer than this per effective draw is skipped
SHIFT_NARROW_J = 50.0             # linear_regression: J at and above which the shift plan keeps the sweeps' own window
SHIFT_NARROW_GAIN = 0.8           # and its autocorrelation time over the sweeps' alone (measured: 1,809 / 2,328 ESS)
_MIN_WINDOW = 100                 # linear_regression: DA-MCMC sweeps at least this many records per iteration
_SHIFT_MIN_WINDOW = 1000          # the same with shift moves (at most n)
_SHIFT_WIDE_IAT = 2.5             # linear_regression, J < SHIFT_IND_J: autocorrelation time 2.5 + 0.4 f n / m
_SHIFT_WIDE_SLOPE = 0.4
_SHIFT_BALANCE = 4.0              # J < SHIFT_IND_J: the moves may cost up to this many times the records' floor
_SHIFT_ITER_RECORDS = 1000.0      # linear_regression, J < SHIFT_IND_J: work per iteration besides the moves, in record
                                  # updates, when m is balanced against it (fitted at n = 10^6)
_SHIFT_SWEEP_SHARE = 1.2          # a record update with shift moves (it keeps the split): 127 against 106 ns at 10^6
_PILOT_SKIP_N = 100_000           # linear_regression: from this n, no pseudo-marginal pilot where DA-MCMC is cheaper
                                  # than one particle (the pilot simulates n records per draw: seconds at 10^6)
_REGRESSION_PM_ITER_PER_ESS = 4.0  # measured with proposal = "mixed" where one particle suffices
_ANC_MIN_N = 100_000              # linear_regression, J < SHIFT_IND_J: from this n the ancillary moves are priced
_ANC_MOVES = 20                   # their plan: moves, records and clamped records refreshed per iteration
_ANC_WINDOW = 200
_ANC_REFRESH = 100
_ANC_IAT = 1.2                    # autocorrelation time (bulk ESS 6,000-7,500 of 8,000 draws, J < SHIFT_IND_J)
_ANC_MARGIN = 3.0                 # picked only where this many times cheaper than the shift plan's estimate
_HOPELESS_PARTICLES = 50          # a regression or custom particle is n simulated records: past this many the
                                  # pseudo-marginal fallback is not tried (auto)
_PILOT_MARGIN = 4.0               # the regression pilot stops past this many times the particles at which the
                                  # two estimates meet (choose_particles' ``enough``)
_ANC_TAIL_J = 5.0                 # SHIFT_IND_J <= J < this: the ancillary plan adds the tail moves (tail_records)
_ANC_TAIL_SHARE = 0.02            # ... scanning this share of the n records an iteration
_ANC_TAIL_IAT = 4.3               # ... autocorrelation time (beta_1's bulk ESS 1,861-4,095 of 8,000, README)
_CANDIDATES = ("exact", "pseudo_marginal", "da_mcmc")  # the exact methods auto picks among
LOGLINEAR_NS_PER_CELL_BLOCK = 300.0  # one iteration of the log-linear pseudo-marginal chain, per cell x block
_LOGLINEAR_ITER_PER_ESS = 8.0


def _serves(model, method: str) -> bool:
    """Whether a model that lists its methods (``model.methods``) supports ``method`` (a custom model: the
    pseudo-marginal sampler only with ``log_prior``, and no exact closed form)."""
    if isinstance(model, CustomModel):
        return method == "da_mcmc" or (method == "pseudo_marginal" and model.log_prior is not None)
    allowed = getattr(model, "methods", None)
    return allowed is None or method in allowed


def _release_serves(problem: Problem, method: str) -> bool:
    """Whether the model (:func:`_serves`) and the release, where it lists the methods able to analyse it
    (``mechanism.methods``: OpenDP's mean, whose law involves n), both support ``method``."""
    allowed = getattr(problem.mechanism, "methods", None)
    return _serves(problem.model, method) and (allowed is None or method in allowed)


def _choose_listed(problem: Problem) -> tuple[str, str, dict]:
    """A release that lists its methods (``mechanism.methods``): the one exact method among them that the model
    serves (OpenDP's mean: the pseudo-marginal chain on (mu, n), :mod:`engine.methods.mean_ratio`). Raises
    ValueError where there is none, or more than one (no rule prices them yet)."""
    mech = problem.mechanism
    found = [m for m in _CANDIDATES if m in mech.methods and _serves(problem.model, m)]
    if len(found) != 1:
        raise ValueError(f"method.name = 'auto' is invalid for {mech.describe()}: it picks one of "
                         f"{', '.join(_CANDIDATES)}, and this release is analysed by "
                         + (", ".join(m for m in mech.methods if m != "auto") or "none of them"))
    if isinstance(mech, OpenDPMean):
        chain = "on (mu, n)" if problem.unknown_n is not None else "on mu at the known n"
        why = ("OpenDP's mean is a noisy sum over a noisy length, whose law involves n: the pseudo-marginal chain "
               f"{chain} is the one exact method for it")
    else:
        why = f"this release ({mech.name}) is analysed exactly by {found[0]} only"
    return found[0], why, {}


def _noise_sd_per_record(problem: Problem) -> float:
    sd = getattr(problem.mechanism, "noise_sd", None)
    return float(sd) / problem.model.n if sd else 0.0


def choose(problem: Problem, rng: np.random.Generator, allow_exact: bool = True) -> tuple[str, str, dict]:
    """(method, reason, numbers behind it) by the rule in the module docstring (``allow_exact=False``
    compares the two chains even where the exact posterior exists)."""
    model = problem.model
    if isinstance(model, CustomModel):
        return _choose_custom(problem, rng)
    if getattr(problem.mechanism, "methods", None) is not None:
        return _choose_listed(problem)
    if model.name == "naive_bayes_loglinear":
        return _choose_loglinear(problem, rng)
    if not _serves(model, "pseudo_marginal") and not _serves(model, "exact"):
        return "da_mcmc", f"{model.name} has neither a closed form nor a pseudo-marginal sampler: DA-MCMC", {}
    if model.name == "linear_regression":  # the cost rule below reads one statistic per record
        return _choose_regression(problem, rng)
    if allow_exact and has_closed_form(problem):
        return "exact", "the exact posterior is available in closed form or on a numerical grid: independent draws, no Markov chain", {}
    setup = _setup(problem)
    m, cv2 = choose_particles(rng, setup, _clean(setup, moment_estimate(problem)), cap=10**7)
    naive = model.posterior_sample(rng, model.project(problem.s_dp), 400)
    sd_x = float(np.mean(np.std(naive, axis=0)))
    sd_noise = _noise_sd_per_record(problem)
    if setup.exact_likelihood:  # randomized response: the likelihood is exact, no particles needed
        m, sd_noise = 1, max(sd_noise, sd_x)
    inflation = (sd_x**2 + sd_noise**2) / max(sd_x**2, 1e-300)
    t_rec, t_stat = _UNIT_COST_NS.get(model.name, (20.0, 70.0))
    if model.name == "normal_known_sd":
        t_stat *= model.n
    if model.name == "poisson_gamma" and model.upper is not None:
        t_stat *= model.upper + 1
    cost_da = model.n * t_rec * inflation
    cost_pm = 5.0 * setup.d * m * t_stat
    numbers = {"particles_needed": m, "cv2": cv2, "da_mcmc_ns_per_ess": cost_da, "pseudo_marginal_ns_per_ess": cost_pm}
    sweeps = f"{_sweeps(inflation)} of all n = {model.n:,} records"
    particles = ("its likelihood is exact here, with no simulated statistics to estimate it" if setup.exact_likelihood
                 else f"it needs {_many(m, 'simulated statistic')} per step for a precise likelihood estimate")
    if cost_pm <= cost_da:
        why = (f"the pseudo-marginal sampler is cheaper per effective draw here: about {_time_of(cost_pm)} against "
               f"{_time_of(cost_da)} for DA-MCMC ({sweeps} per effective draw); {particles}")
        return "pseudo_marginal", why, numbers
    why = (f"DA-MCMC is cheaper per effective draw here: about {_time_of(cost_da)} ({sweeps}) against "
           f"{_time_of(cost_pm)} for the pseudo-marginal sampler ({particles})")
    return "da_mcmc", why, numbers


def _choose_loglinear(problem: Problem, rng: np.random.Generator) -> tuple[str, str, dict]:
    """naive_bayes_loglinear: DA-MCMC (n (K + 1) categorical draws per sweep, (sd_p / sd_x)^2 sweeps per
    effective draw, as for the one-statistic models) against its pseudo-marginal chain
    (:mod:`engine.methods.loglinear_pm`: about ``LOGLINEAR_NS_PER_CELL_BLOCK`` x cells x blocks per
    iteration whatever n is, and about ``_LOGLINEAR_ITER_PER_ESS`` iterations per effective draw, the
    worst measured over the noise regimes)."""
    model = problem.model
    naive = model.posterior_sample(rng, model.project(problem.s_dp), 400)
    sd_x = float(np.mean(np.std(naive, axis=0)))
    sd_noise = _noise_sd_per_record(problem)
    inflation = (sd_x**2 + sd_noise**2) / max(sd_x**2, 1e-300)
    blocks = 1 + model.class_levels * model.n_features
    cost_da = model.n * (1 + model.n_features) * _UNIT_COST_NS["naive_bayes_loglinear"][0] * inflation
    cost_pm = _LOGLINEAR_ITER_PER_ESS * LOGLINEAR_NS_PER_CELL_BLOCK * model.stat_dim * blocks
    numbers = {"particles_needed": 1, "da_mcmc_ns_per_ess": cost_da, "pseudo_marginal_ns_per_ess": cost_pm,
               "inflation": inflation}
    sweeps = f"{_sweeps(inflation)} of all n = {model.n:,} records"
    tables = "its cost grows with the number of table cells, not with the number of records"
    if cost_pm <= cost_da:
        return "pseudo_marginal", (f"the pseudo-marginal chain on the tables is cheaper per effective draw here: "
                                   f"about {_time_of(cost_pm)} against {_time_of(cost_da)} for DA-MCMC ({sweeps} "
                                   f"per effective draw); {tables}"), numbers
    return "da_mcmc", (f"DA-MCMC is cheaper per effective draw here: about {_time_of(cost_da)} ({sweeps}) against "
                       f"{_time_of(cost_pm)} for the pseudo-marginal chain on the tables ({tables})"), numbers


def _sweeps(count: float) -> str:
    """"1 sweep", "2.5 sweeps"."""
    shown = f"{count:.3g}"
    return f"{shown} sweep" + ("" if shown == "1" else "s")


def _many(count: int, noun: str) -> str:
    """"1 data set", "40 data sets", "1,200 simulated statistics"."""
    return f"{count:,} {noun}" + ("" if count == 1 else "s")


def _factor(x: float) -> str:
    """A ratio as a person writes it: 1.15, 41.4, 7,510 (not 7.51e+03)."""
    return f"{float(f'{x:.3g}'):,.0f}" if x >= 1000 else f"{x:.3g}"


def _time_of(ns: float) -> str:
    """A cost per effective draw in nanoseconds as a person reads it: 1.9 ms, 85 µs, under 1 µs (not 0.0 ms)."""
    if ns >= 1e6:
        return f"{ns / 1e6:,.1f} ms"
    return f"{ns / 1e3:,.0f} µs" if ns >= 1e3 else "under 1 µs"


def _refreshed(n: int, clamped: float, window: float) -> float:
    """Clamped records whose raw y DA-MCMC redraws per iteration (``clamped_per_iteration``): every one, at most
    as many as the window holds, and at most _REFRESH_CAP where n >= _REFRESH_CAP_N. There each refresh is a
    random record, a cache miss (370 ns measured at n = 10^6 against 105 for a record of the window), and the
    chain's slow direction is not the clamped records' y but which records are clamped, which only the record
    sweeps move (bench at n = 10^6, Laplace epsilon = 10, 20,000 records and 10 shifts an iteration: the count of
    clamped records had 0.021 effective draws per 5 iterations, beta[1] 0.24). Measured there with 4 x 2,000
    draws: refreshing 1,000 an iteration gave 34 bulk ESS/s, all 25,000 gave 10, none 17.5; at Laplace
    epsilon = 1 (17,495 records, 10 shifts) 13.5 against 6.3 with 17,495 refreshed; at Gaussian epsilon = 0.1
    (31,889 records, 30 shifts) 15.2 against 6.3 with all refreshed."""
    cap = _REFRESH_CAP if n >= _REFRESH_CAP_N else math.inf
    return float(min(clamped, float(window), cap))


def regression_window(n: int, inflation: float) -> int:
    """Records per DA-MCMC iteration for linear_regression: m = 2 (I - 1) n / 3, at least min(n, 100),
    at most n, so that the integrated autocorrelation time 1 + 2 (I - 1) n / m of the partial sweeps
    (:mod:`engine.methods.da_mcmc`) is about 4 whatever n and I."""
    return int(min(n, max(min(n, _MIN_WINDOW), math.ceil(2.0 * (inflation - 1.0) * n / 3.0))))


def _balanced_window(n: int, inflation: float, fixed_ns: float, t_rec: float) -> int:
    """The narrow-noise window (:func:`regression_window`), at n >= _BALANCE_N no larger than the m that
    balances the records against the work every iteration does besides them.

    With ``fixed_ns`` of such work (shift moves, clamped records' refreshes) and ``t_rec`` per record, the
    cost per effective draw is (t_rec m + fixed_ns)(1 + 2 (I - 1) n / m), least at
    m* = sqrt(2 (I - 1) n fixed_ns / t_rec); :func:`regression_window` aims at an autocorrelation time of 4
    instead, which at n = 10^6 asks for windows of 10^5 to 6 x 10^5 records an iteration. Measured at n = 10^6
    (4 chains x 2,000 draws, 1,000 refreshes and 10 shifts an iteration; beta_1's bulk ESS per second, the
    slowest coefficient): Laplace epsilon = 10 (m* = 26,065 against 169,792) 34 at m = 20,000, 23 at 50,000;
    Gaussian epsilon = 1 (m* = 49,387 against 594,400) 12.3 at 60,000, 8.5 at 150,000; Gaussian epsilon = 10
    (m* = 20,285 against 103,804) 10.6 at 20,000, 7.6 at 50,000, 11.7 at 103,804, a run a fifth as long. At
    n = 10^4 (records in cache, an iteration's other costs not in the price) the smaller window did worse
    (Gaussian epsilon = 10: :func:`_shift_plan`), so below _BALANCE_N the window is left as it was."""
    m = regression_window(n, inflation)
    if n < _BALANCE_N:
        return m
    balanced = math.ceil(math.sqrt(2.0 * max(0.0, inflation - 1.0) * n * fixed_ns / t_rec))  # I < 1: rounding only
    return int(min(m, max(min(n, _SHIFT_MIN_WINDOW), balanced)))


def _shift_plan(problem: Problem, centre, noise_var: float, priv, t_rec: float, clamped: float,
                infl: float) -> dict:
    """DA-MCMC with shift moves (:func:`engine.kernels.da_mcmc.shift_moves`) for linear_regression: shifts per
    iteration, records per iteration, and the estimated cost per effective draw.

    J = Var(beta | s_dp) / Var(beta | x, e, s_dp) (the largest over the coefficients, normal surrogate:
    :meth:`engine.models.linear_regression.LinearRegression.shift_covariance`) is how much of the posterior
    the residuals hold fixed while beta shifts; the share f = 1 - 1/J of the posterior variance moves only
    as the record sweeps renew the residuals, m of n per iteration. As for the partial sweeps alone, this
    gives an autocorrelation time of about 1.5 + f n / m (fitted to the grid measured at n = 10^4 over
    Laplace and Gaussian noise, epsilon 0.01 to 10, bench/results/shift_grid_2026-11-26.jsonl: within a
    factor of 1.5). With an iteration costing
    m record updates plus the shift moves' work C (:func:`engine.methods.da_mcmc.shift_work`), the cost
    per effective draw (m + C)(1.5 + f n / m) is least at m = sqrt(C f n / 1.5), kept within
    [min(n, 1000), n]. Where J >= SHIFT_NARROW_J (50) the shifts barely move beta and the chain
    is the record sweeps' own: m and the autocorrelation time 1 + 2 (I - 1) n / m of the partial sweeps
    (:func:`regression_window`, at n >= _BALANCE_N balanced against the moves' and refreshes' work by
    :func:`_balanced_window`; I the inflation over the censored-data posterior; at n = 10^4, Gaussian
    epsilon = 10, J = 115, I = 1.9, m = 3,367 by the formula above gave bulk ESS 818 to 1,657 over seeds,
    m = 6,000 gave 2,328 at a like cost per effective draw and a steadier estimate), with the shifts' share of
    the noise taken off: SHIFT_NARROW_GAIN x that time (there, m = 6,000: bulk ESS 2,328 with 10 shifts, 1,809
    without). Shifts: 30 where the two halves of the interweaving share the work
    (SHIFT_IND_J <= J < 10: the grid's autocorrelation time fell by up to 3 from 10 shifts to 30), else 10
    (J >= 10: the conjugate half does most of it). Where J < SHIFT_IND_J half the moves propose from the fitted
    independence law (:func:`engine.methods.da_mcmc.shift_independence`), so a few moves decorrelate beta given
    the residuals (at n = 10^4, Gaussian epsilon = 0.1, 10 shifts gave 1,771 ESS/s and 30 gave 926): there the
    number of moves, from 3 to 10, is about 4 min(n, 1000) over one move's work, so that the moves cost no more
    than four times the records' floor (10 at n = 10^4; 3 at n = 10^6, Laplace epsilon = 0.01, 9 at Gaussian
    epsilon = 0.01, where 9 gave 663 / 374 / 351 bulk ESS/s over seeds 1-3 against 486 / 226 / 302 with 3),
    and the autocorrelation time is modelled as 2.5 + 0.4 f n / m instead, so that
    m = sqrt(0.4 f n (C + 1,000) / 2.5), the 1,000 record updates an iteration's fixed work (fitted at
    n = 10^6, bulk ESS of 8,000 draws: Gaussian epsilon = 0.01, f = 0.03,
    m = 1,000 / 4,483 / 11,956 gave 14.8 / 5.0 / 3.6; Laplace epsilon = 0.01, f = 0.003, m = 1,000 and 3,407 both
    about 2.4; epsilon = 0.1, f = 0.17, m = 10,641 gave 12). At n = 10^6, Laplace epsilon = 0.01, one move
    evaluates some 50,000 records near a clamp bound, and 3 moves with 1,000 records per iteration gave 3,365
    bulk ESS in 6 s against 5,400 in 16 s with 6 moves. There the clamped records' raw y are all refreshed
    where the window holds as many (at n = 10^4, Laplace epsilon = 0.1, seed 2, tail ESS/s 478 without, 1,289
    with, at 10 moves) and none where the clamped set is larger (``clamped_per_iteration`` = 0): at n = 10^6
    the refresh is a random record each, a cache miss, and m of them cost 2.3 ms an iteration for no gain at
    Laplace epsilon = 0.01."""
    model = problem.model
    n = model.n
    vn = model.shift_covariance(centre, noise_var)
    inflation = float(np.max(np.diag(priv) / np.diag(vn)))
    f = max(0.0, 1.0 - 1.0 / inflation)
    shifts = 30 if SHIFT_IND_J <= inflation < 10.0 else 10
    lo_m = min(n, _SHIFT_MIN_WINDOW)
    if inflation < SHIFT_IND_J:  # balance the moves' work against the records' (see the docstring)
        move = shift_work(problem, 1, centre)
        shifts = int(min(10, max(3, round(_SHIFT_BALANCE * lo_m / max(move, 1.0)))))
        work = shifts * move  # shift_work is linear in the number of moves
    else:
        work = shift_work(problem, shifts, centre)
    if inflation >= SHIFT_NARROW_J:  # the shifts barely move beta: the record sweeps' own window and rate
        m = _balanced_window(n, infl, t_rec * work + _REFRESH_NS * _refreshed(n, clamped, n), t_rec)
        iat = SHIFT_NARROW_GAIN * (2.0 * infl - 1.0 if m >= n else 1.0 + 2.0 * (infl - 1.0) * n / m)
    elif inflation < SHIFT_IND_J:  # the independence moves set a floor; the residuals add to it (docstring)
        fixed = work + _SHIFT_ITER_RECORDS
        m = int(min(n, max(lo_m, math.ceil(math.sqrt(_SHIFT_WIDE_SLOPE * f * n * fixed / _SHIFT_WIDE_IAT)))))
        iat = _SHIFT_WIDE_IAT + _SHIFT_WIDE_SLOPE * f * n / m
    else:
        m = int(min(n, max(lo_m, math.ceil(math.sqrt(work * f * n / 1.5)))))
        iat = 1.5 + f * n / m
    # where J < SHIFT_IND_J: every clamped record when the window holds as many (cheap, and it lifts tail ESS),
    # none when it would be random picks over a larger clamped set (a cache miss each at n = 10^6)
    refresh = (clamped if clamped <= m else 0.0) if inflation < SHIFT_IND_J else _refreshed(n, clamped, m)
    no_refresh = inflation < SHIFT_IND_J and clamped > m
    per_iter = t_rec * (_SHIFT_SWEEP_SHARE * m + work) + _REFRESH_NS * refresh
    return {"shifts": shifts, "records_per_iteration": m, "iat": iat, "ns_per_iteration": per_iter,
            "ns_per_ess": per_iter * iat, "inflation": inflation, "no_refresh": no_refresh}


def _ancillary_plan(problem: Problem, centre, shift: dict) -> dict | None:
    """DA-MCMC with ancillary moves (:mod:`engine.kernels.orbit`: beta and the frame of w = (x, e) moved with the
    records' configuration held) for linear_regression at n >= _ANC_MIN_N where J < SHIFT_IND_J (wide noise: the
    frame carries nearly all of the posterior's spread, and the configuration, renewed by _ANC_WINDOW records an
    iteration, little of it). Measured at n = 10^6, 4 x 2,000 draws, _ANC_MOVES moves, _ANC_WINDOW records and
    _ANC_REFRESH refreshes an iteration: bulk ESS 6,000-7,500 (autocorrelation time about _ANC_IAT); a run took
    9 s at Laplace epsilon = 0.1, 15 s at Gaussian epsilon = 0.01 and 34 s at Laplace epsilon = 0.01 (13, 47 and
    152 s before the kernel's unsafe records and refresh candidates were read faster), where a move evaluates the
    records near the clamp bound one by one (4,700 to 63,000 of them): the moves' work is
    :func:`engine.methods.da_mcmc.ancillary_work`, in record updates. Of the live map's cells at n = 10^6 the plan
    is picked at Laplace epsilon = 0.1 and Gaussian epsilon = 0.01 and 0.1; at Laplace epsilon = 0.01 the shift
    chain's estimate stays under three times the plan's (it ran 7.8 s, the plan 34 s with a tenth of its tail ESS).
    Where SHIFT_IND_J <= J < _ANC_TAIL_J the records the clamp reaches hold part of beta_1's spread, so the plan
    adds the tail moves, a scan of _ANC_TAIL_SHARE n records an iteration (``tail_work``), which renew them (with
    the release and chains from seeds 1, 2, 3: Gaussian epsilon = 0.1 at n = 10^6, J = 3.4, beta_1's bulk ESS 1,861
    / 4,095 / 2,238 of 8,000 in 19-20 s, against 343 / 500 / 103 and R-hat up to 1.028 without them; Laplace epsilon
    = 1 at n = 10^5, J = 2.6, 453-719 bulk ESS/s against 116-429). From _ANC_TAIL_J on, none: at Laplace epsilon = 1
    and n = 10^6 (J = 13) the ancillary chain did not converge in two of three runs, tail moves or not. None where
    they do not apply."""
    n = problem.model.n
    if n < _ANC_MIN_N or shift["inflation"] >= _ANC_TAIL_J:
        return None
    tail = int(_ANC_TAIL_SHARE * n) if shift["inflation"] >= SHIFT_IND_J else 0
    iat = _ANC_TAIL_IAT if tail else _ANC_IAT
    t_rec, _ = _UNIT_COST_NS["linear_regression"]
    per_iter = t_rec * (_ANC_WINDOW + ancillary_work(problem, _ANC_MOVES, centre) + tail_work(problem, tail, centre)) \
        + _REFRESH_NS * _ANC_REFRESH
    return {"ancillary_moves": _ANC_MOVES, "records_per_iteration": _ANC_WINDOW, "refresh": _ANC_REFRESH,
            "tail_records": tail, "iat": iat, "ns_per_iteration": per_iter, "ns_per_ess": per_iter * iat}


def _choose_regression(problem: Problem, rng: np.random.Generator) -> tuple[str, str, dict]:
    """linear_regression: DA-MCMC with partial sweeps against the pseudo-marginal sampler with its
    mixed (independence + random-walk) proposal, by record work per effective draw.

    * DA-MCMC, m records per iteration: about m (1 + 2 (I - 1) n / m) record updates per effective
      draw (:mod:`engine.methods.da_mcmc`), I the inflation Var(beta | s_dp) / Var(beta | s) of the
      normal surrogate (:meth:`engine.models.linear_regression.LinearRegression.surrogate_covariances`,
      the largest over the coefficients), m from :func:`regression_window`; full sweeps (m = n) have
      integrated autocorrelation time 2 I - 1.
    * pseudo-marginal: M particles of n simulated records per iteration (M from the pilot), about
      ``_REGRESSION_PM_ITER_PER_ESS`` iterations per effective draw with the mixed proposal.

    Unit costs per record (``_UNIT_COST_NS``): a DA-MCMC update, a simulated record."""
    model = problem.model
    setup = _setup(problem)
    centre = _clean(setup, moment_estimate(problem))
    n = model.n
    _, t_sim = _UNIT_COST_NS["linear_regression"]
    one_particle = t_sim * n * _REGRESSION_PM_ITER_PER_ESS  # the pseudo-marginal cost per effective draw at M = 1
    da = None if model.unknown_sigma else _regression_da_plan(problem, centre)
    if da is not None and n >= _PILOT_SKIP_N and da["cost_da"] < one_particle:
        return _regression_verdict(problem, da, None, None)  # below even one particle's cost: no pilot
    # the pilot may stop where its count could not matter: past _HOPELESS_PARTICLES (the fallback's limit) and
    # _PILOT_MARGIN times the count at which the two estimates meet (sigma known), both (choose_particles' enough)
    meet = 0.0 if da is None else da["cost_da"] / one_particle
    m, cv2 = choose_particles(rng, setup, centre, cap=10**7, enough=int(max(_HOPELESS_PARTICLES, _PILOT_MARGIN * meet)))
    if model.unknown_sigma:  # no surrogate for sigma^2: one or two particles decide, as before
        numbers = {"particles_needed": m, "cv2": cv2}
        if m <= 2:
            return "pseudo_marginal", (f"the noise is wide next to the statistic's spread: the pilot found "
                                       f"{_many(m, 'simulated data set')} of n = {n:,} records per step enough for a "
                                       "precise likelihood estimate (the rule runs the pseudo-marginal sampler at "
                                       "one or two)"), numbers
        return "da_mcmc", (f"the noise is narrow next to the statistic's spread: the pseudo-marginal sampler would "
                           f"need about {_many(m, 'simulated data set')} of n = {n:,} records per step for a precise "
                           "likelihood estimate (the rule runs it at one or two)"), numbers
    return _regression_verdict(problem, da, m, cv2)


def _regression_da_plan(problem: Problem, centre) -> dict:
    """DA-MCMC's plan and estimated cost for linear_regression with sigma known (``_choose_regression``)."""
    model = problem.model
    n = model.n
    noise_var = noise_variance(problem)
    priv, _ = model.surrogate_covariances(centre, noise_var)
    infl = float(np.max(np.diag(priv) / np.diag(model.censored_covariance(centre))))
    t_rec, _ = _UNIT_COST_NS["linear_regression"]
    clamped = float(model.clamped_fraction(centre)) * n
    window = _balanced_window(n, infl, _REFRESH_NS * _refreshed(n, clamped, n), t_rec)
    refresh = _refreshed(n, clamped, window)
    iat = 2.0 * infl - 1.0 if window >= n else 1.0 + 2.0 * (infl - 1.0) * n / window
    per_iter = t_rec * window + _REFRESH_NS * refresh
    cost_da = per_iter * iat
    # cheap but strongly autocorrelated iterations (small n, narrow noise): run thin iterations per kept draw,
    # about half the autocorrelation time, as long as the spec defaults' run stays within _THIN_BUDGET_NS
    thin = int(min(math.ceil(iat / 2.0), max(1, _THIN_BUDGET_NS // (per_iter * _THIN_REFERENCE_DRAWS))))
    shift = _shift_plan(problem, centre, noise_var, priv, t_rec, clamped, infl)
    if shift["ns_per_ess"] < cost_da:  # the shift moves pay: DA-MCMC runs with them
        window, iat, per_iter = shift["records_per_iteration"], shift["iat"], shift["ns_per_iteration"]
        refresh = _refreshed(n, clamped, window)
        cost_da = shift["ns_per_ess"]
        thin = int(min(math.ceil(iat / 2.0), max(1, _THIN_BUDGET_NS // (per_iter * _THIN_REFERENCE_DRAWS))))
    # the ancillary moves where they beat that plan's estimate by _ANC_MARGIN (it runs high where J is near 1: at
    # Gaussian epsilon = 0.01 it estimates 12 ms an effective draw, the shift chain ran at 3.4 ms a core, the
    # ancillary one at 13 (estimated 8.3); at Laplace epsilon = 0.1, 32 ms against the ancillary chain's 3.8
    # estimated, 3.3 run)
    anc = _ancillary_plan(problem, centre, shift)
    if anc is not None and anc["ns_per_ess"] * _ANC_MARGIN < cost_da:
        window, iat, per_iter = anc["records_per_iteration"], anc["iat"], anc["ns_per_iteration"]
        cost_da, refresh, thin = anc["ns_per_ess"], anc["refresh"], 1
    else:
        anc = None
    return {"infl": infl, "window": window, "iat": iat, "per_iter": per_iter, "cost_da": cost_da, "thin": thin,
            "clamped": clamped, "refresh": refresh, "shift": shift, "ancillary": anc}


def _regression_verdict(problem: Problem, da: dict, m, cv2) -> tuple[str, str, dict]:
    """``_choose_regression``'s pick, why and numbers from DA-MCMC's plan ``da`` and the pilot's particles ``m``
    (None: no pilot, DA-MCMC's estimate being below one particle's cost; the pseudo-marginal cost is then that
    floor)."""
    n = problem.model.n
    t_rec, t_sim = _UNIT_COST_NS["linear_regression"]
    infl, window, per_iter, cost_da, thin = da["infl"], da["window"], da["per_iter"], da["cost_da"], da["thin"]
    clamped, refreshed, shift = da["clamped"], da["refresh"], da["shift"]
    cost_pm = t_sim * n * (m or 1) * _REGRESSION_PM_ITER_PER_ESS
    numbers = {"particles_needed": m, "cv2": cv2, "inflation": infl, "records_per_iteration": int(window),
               "clamped_expected": clamped, "da_mcmc_ns_per_ess": cost_da, "pseudo_marginal_ns_per_ess": cost_pm,
               "da_mcmc_ns_per_iteration": per_iter * thin, "pseudo_marginal_ns_per_iteration": t_sim * n * (m or 1),
               "shift_inflation": shift["inflation"]}
    if refreshed < clamped:
        numbers["clamped_per_iteration"] = int(max(1, refreshed))
    if da["ancillary"]:
        numbers["ancillary_moves"] = da["ancillary"]["ancillary_moves"]
        if da["ancillary"]["tail_records"]:
            numbers["tail_records"] = da["ancillary"]["tail_records"]
    elif shift["ns_per_ess"] <= cost_da:
        numbers["shifts"] = shift["shifts"]
        if shift["no_refresh"]:  # the clamped set outnumbers the window: no refresh (_shift_plan)
            numbers["clamped_per_iteration"] = 0
    if thin > 1:
        numbers["thin"] = thin
    if cost_pm <= cost_da:
        return "pseudo_marginal", (f"the pseudo-marginal sampler is cheaper per effective draw here: about "
                                   f"{_time_of(cost_pm)} against {_time_of(cost_da)} for DA-MCMC; it simulates "
                                   f"{_many(m, 'data set')} of n = {n:,} records per step and draws most of its "
                                   "proposals from an approximation of the posterior fitted in warm-up"), numbers
    sweep = (f"{window:,} of the n = {n:,} records per iteration" if window < n else f"all n = {n:,} records per "
             "iteration") + (f" with {numbers['shifts']} shift moves of β and the records' y" if "shifts" in numbers
                             else "") + (f" with {numbers['ancillary_moves']} moves of β and of every record's frame"
                                         if "ancillary_moves" in numbers else "") + (
        f" and tail moves of the records near y's clamp bound ({numbers['tail_records']:,} scanned)"
        if "tail_records" in numbers else "") + (
        f", keeping one iteration in {thin}" if thin > 1 else "")
    versus = (f"{_time_of(cost_pm)} for the pseudo-marginal sampler, which needs {_many(m, 'simulated data set')} "
              f"of n = {n:,} records per step" if m else
              f"at least {_time_of(cost_pm)} for the pseudo-marginal sampler (one simulated data set of n = {n:,} "
              "records per step)")
    return "da_mcmc", (f"DA-MCMC is cheaper per effective draw here: about {_time_of(cost_da)}, sweeping {sweep}, "
                       f"against {versus}; the noise leaves β's posterior variance {_factor(infl)} times what the "
                       "confidential records would give"), numbers


def _choose_custom(problem: Problem, rng: np.random.Generator) -> tuple[str, str, dict]:
    """A custom model: DA-MCMC unless its log_prior lets the pseudo-marginal sampler run and the pilot says
    one or two particles (each n simulated records) estimate the likelihood precisely (the noise is wide, so
    DA-MCMC's steps of the confidential posterior's width would crawl); the cost of one pseudo-marginal
    iteration is then that of one DA-MCMC sweep, with many fewer iterations per effective draw."""
    model = problem.model
    if model.log_prior is None:
        return "da_mcmc", "a custom model without log_prior: DA-MCMC is the chain that needs no prior density", {}
    setup = _setup(problem)
    m, cv2 = choose_particles(rng, setup, np.asarray(model.init_theta, float), cap=10**7)
    numbers = {"particles_needed": m, "cv2": cv2}
    if m <= 2:
        return "pseudo_marginal", (f"a custom model with log_prior and wide noise: the pilot found "
                                   f"{_many(m, 'simulated data set')} of n = {model.n:,} records per step enough for "
                                   "a precise likelihood estimate (the rule runs the pseudo-marginal sampler at one "
                                   "or two), and its chain moves on the private posterior's own scale"), numbers
    return "da_mcmc", (f"a custom model whose noise is narrow next to the statistic's spread: the pseudo-marginal "
                       f"sampler would need about {_many(m, 'simulated data set')} of n = {model.n:,} records per "
                       "step for a precise likelihood estimate (the rule runs it at one or two)"), numbers


def settings_for(name: str, problem: Problem, numbers: dict) -> dict:
    """The picked method's own settings: linear_regression's DA-MCMC sweeps ``records_per_iteration``
    records per iteration and its pseudo-marginal sampler uses the mixed proposal."""
    if problem.model.name != "linear_regression" or isinstance(problem.model, CustomModel):
        return {}
    if name == "da_mcmc":
        out = {}
        if numbers.get("records_per_iteration", problem.model.n) < problem.model.n:
            out["records_per_iteration"] = int(numbers["records_per_iteration"])
        if "clamped_per_iteration" in numbers:
            out["clamped_per_iteration"] = int(numbers["clamped_per_iteration"])
        if numbers.get("thin", 1) > 1:
            out["thin"] = int(numbers["thin"])
        if numbers.get("shifts"):
            out["shifts"] = int(numbers["shifts"])
        if numbers.get("ancillary_moves"):
            out["ancillary_moves"] = int(numbers["ancillary_moves"])
        if numbers.get("tail_records"):
            out["tail_records"] = int(numbers["tail_records"])
        return out
    if name == "pseudo_marginal" and not problem.model.unknown_sigma:
        return {"proposal": "mixed"}
    return {}


def _attempt(name, problem, rng, chains, draws, warmup, on_progress, settings=None):
    t0 = time.perf_counter()
    settings = settings or {}
    if name == "exact":
        result = exact(problem, rng, draws=draws, chains=chains)
    elif name == "pseudo_marginal":
        result = pseudo_marginal(problem, rng, chains=chains, draws=draws, warmup=warmup, on_progress=on_progress,
                                 **settings)
    else:
        result = da_mcmc(problem, rng, chains=chains, draws=draws, warmup=warmup, on_progress=on_progress,
                         **settings)
    verdict = convergence(result)
    record = {"method": name, "chains": chains, "draws": draws, "warmup": warmup, **settings,
              "converged": verdict.converged, "r_hat_max": verdict.r_hat_max,
              "ess_bulk_min": verdict.ess_bulk_min, "ess_tail_min": verdict.ess_tail_min,
              "wall_time_s": time.perf_counter() - t0}
    return result, verdict, record


def _score(verdict) -> float:
    if not verdict.applicable:
        return math.inf
    return min(verdict.ess_bulk_min, verdict.ess_tail_min) if np.isfinite(verdict.ess_bulk_min) else -1.0


def _estimate_ratio(numbers: dict, name: str, first: str) -> float | None:
    """The rule's cost of a run of ``name`` over that of a run of ``first`` with the same chains and draws,
    i.e. the ratio of their costs per iteration (None when the rule has no estimate for both, e.g. an
    unknown sigma^2)."""
    a, b = numbers.get(f"{name}_ns_per_iteration"), numbers.get(f"{first}_ns_per_iteration")
    if a is None or b is None or not b > 0:
        return None
    return float(a) / float(b)


def _skip_reason(ratio: float | None, first_wall: float, spent: float, max_seconds: float | None) -> str | None:
    """Why a fallback is not run: its estimate per effective draw over FALLBACK_RATIO x the first attempt's,
    or its estimated wall time (the first attempt's, scaled by ``ratio``) over what is left of the budget."""
    if ratio is not None and ratio > FALLBACK_RATIO:
        return f"a run of it would cost about {ratio:,.0f} times the first attempt's (the limit is {FALLBACK_RATIO:g})"
    if max_seconds is not None:
        need = first_wall * (ratio if ratio is not None else 1.0)
        if need > max_seconds - spent:
            return _over_budget(need, max_seconds - spent, max_seconds)
    return None


def _over_budget(need: float, left: float, max_seconds: float) -> str:
    """A skipped run's reason: its estimated seconds against what is left of ``max_seconds`` (a second and
    more to the second, less to two significant digits: "0.17 s", not "0 s")."""
    def secs(x: float) -> str:
        return f"{x:,.0f}" if x >= 1 else f"{x:.2g}"
    return f"estimated {secs(need)} s, over the {secs(max(0.0, left))} s left of max_seconds = {max_seconds:g}"


def auto(problem: Problem, rng: np.random.Generator, *, chains: int = 4, draws: int = 1000, warmup: int = 500,
         on_progress=None, max_seconds: float | None = None, **_ignored) -> Result:
    """Run the cheapest exact method for this scenario, with the fallback of the module docstring.

    Returns the chosen run's draws as a Result with ``method = "auto"``; ``info`` has ``picked``,
    ``why``, ``rule`` (the cost estimates), ``attempts`` (each run with its verdict and time; a skipped
    fallback as ``{"method", "converged": None, "skipped": reason}``) and the picked method's own info under
    ``picked_info``; ``info["mcmc"]`` tells the convergence verdict whether the draws form a Markov chain.
    ``max_seconds``: the work budget the fallbacks must fit in (none by default).
    """
    t0 = time.perf_counter()
    rule_rng, run_rng = rng.spawn(2)
    picked, why, numbers = choose(problem, rule_rng)
    first = picked
    streams = iter(run_rng.spawn(4))
    attempts = []
    try:
        result, verdict, record = _attempt(picked, problem, next(streams), chains, draws, warmup, on_progress,
                                           settings_for(picked, problem, numbers))
    except ValueError as refused:  # the closed form exists but cannot be evaluated here (a mixture too large)
        if picked != "exact":
            raise
        attempts.append({"method": "exact", "converged": None, "skipped": str(refused)})
        picked, why, numbers = choose(problem, rule_rng, allow_exact=False)
        why = f"exact refused this release ({refused}), so the chains were compared: {why}"
        first = picked
        result, verdict, record = _attempt(picked, problem, next(streams), chains, draws, warmup, on_progress,
                                           settings_for(picked, problem, numbers))
    first_wall = record["wall_time_s"]
    attempts.append(record)
    best = (result, verdict)
    if verdict.applicable and not verdict.converged:
        other = "da_mcmc" if picked == "pseudo_marginal" else "pseudo_marginal"
        # a regression (or custom) particle is n simulated records: past _HOPELESS_PARTICLES of them the other chain
        # cannot do better; no pilot at all (particles_needed None) where DA-MCMC's estimate was below even one
        # particle's cost
        need = numbers.get("particles_needed", 0)
        hopeless = ((isinstance(problem.model, CustomModel) or problem.model.name == "linear_regression")
                    and (need is None or need > _HOPELESS_PARTICLES))
        skip = None
        if _release_serves(problem, other) and hopeless:
            skip = (f"the pilot asks for {_many(need, 'simulated data set')} of n = {problem.model.n:,} records per "
                    f"step (the limit is {_HOPELESS_PARTICLES})" if need is not None else
                    "DA-MCMC's estimated cost per effective draw is below that of one simulated data set of "
                    f"n = {problem.model.n:,} records per step")
            attempts.append({"method": other, "converged": None, "skipped": skip})
            why += f"; {picked} did not converge at {draws} draws per chain, and {other} was skipped: {skip}"
        elif _release_serves(problem, other):
            ratio = _estimate_ratio(numbers, other, first) if problem.model.name == "linear_regression" else None
            skip = _skip_reason(ratio, first_wall, time.perf_counter() - t0, max_seconds)
            if skip is not None:
                attempts.append({"method": other, "converged": None, "skipped": skip})
                why += f"; {picked} did not converge at {draws} draws per chain, and {other} was skipped: {skip}"
        ran_other = _release_serves(problem, other) and not hopeless and skip is None
        if ran_other:
            why += f"; {picked} did not converge at {draws} draws per chain, so {other} ran as well"
            r2, v2, rec2 = _attempt(other, problem, next(streams), chains, draws, warmup, on_progress,
                                    settings_for(other, problem, numbers))
            attempts.append(rec2)
            # neither converged: the better one is the one with more effective draws per unit of cost (the
            # rule's cost per iteration, linear_regression) or, without prices, more effective draws
            ratio = _estimate_ratio(numbers, other, first) if problem.model.name == "linear_regression" else None
            if v2.converged or _score(v2) / (ratio or 1.0) > _score(best[1]):
                best, picked = (r2, v2), other
            why += f" and {picked} did better"
        else:
            next(streams)  # keep the stream of the rerun below the same either way
        if not best[1].converged:
            ratio = _estimate_ratio(numbers, picked, first) if problem.model.name == "linear_regression" else None
            rerun_wall = 4.0 * first_wall * (ratio if ratio is not None else 1.0)
            skip = None
            left = None if max_seconds is None else max_seconds - (time.perf_counter() - t0)
            if left is not None and rerun_wall > left:
                skip = _over_budget(rerun_wall, left, max_seconds)
            if skip is None:
                r3, v3, rec3 = _attempt(picked, problem, next(streams), chains, 4 * draws, warmup, on_progress,
                                        settings_for(picked, problem, numbers))
                attempts.append(rec3)
                rerun = f"{picked} reran with {4 * draws} draws per chain"
                if ran_other:
                    why += f"; neither converged, so {rerun}"
                elif _release_serves(problem, other):  # skipped: the reason is said above
                    why += f"; {rerun}"
                else:
                    why += (f"; {picked} did not converge at {draws} draws per chain and {other} does not serve "
                            f"this scenario, so {rerun}")
                if v3.converged or _score(v3) > _score(best[1]):
                    best = (r3, v3)
            else:
                attempts.append({"method": picked, "draws": 4 * draws, "converged": None, "skipped": skip})
                why += f"; the rerun of {picked} with {4 * draws} draws per chain was skipped: {skip}"
    result, verdict = best
    if picked != first:  # the rule's reason is the first choice's: say whose it is before the pick's own
        why = f"first {first}, as the rule chose: {why}"
    info = {"picked": picked, "why": why, "rule": numbers, "attempts": attempts,
            "mcmc": verdict.applicable, "picked_info": {k: v for k, v in result.info.items()
                                                        if isinstance(v, (int, float, str, bool, list, type(None)))},
            "wall_time_s": time.perf_counter() - t0}
    for key in ("epsilon_bound", "particles", "mean_acceptance", "target_acceptance"):
        if key in result.info:
            info[key] = result.info[key]
    return Result(method="auto", param_names=result.param_names, draws=result.draws, s_dp=result.s_dp,
                  sample_stats=dict(result.sample_stats), info=info, density=result.density)


def _run(problem, rng, settings, on_progress):
    settings.pop("grid_size", None)
    return auto(problem, rng, on_progress=on_progress, **settings)


def _validate(table, out):
    if "max_seconds" in table:
        out["max_seconds"] = positive("method.max_seconds", table["max_seconds"])


METHOD = Method(name="auto", claim="exact", paper="picks exact, da_mcmc or pseudo_marginal by cost (this project)",
                run=_run, keys=frozenset({"max_seconds"}), validate=_validate)
