"""What a run will cost before it starts: work units, the seconds they imply here, and the largest
settings that fit a budget (issue "Hosted for a class").

Work per method (chains run in parallel on min(chains, cores) cores):

=================  =================================================  ===========================
method             work units                                         unit cost measured on
=================  =================================================  ===========================
da_mcmc            chains x (warmup + draws) x n record updates       the model's compiled sweep
pseudo_marginal    chains x (warmup + draws) x M statistic draws,     the model's compiled
                   M from the sampler's own pilot at the moment       statistic sampler (x n for
                   estimate (1 with randomized response: exact        the normal model)
                   likelihood); naive_bayes_loglinear: iterations     (fixed + cells + cells x
                   (no n); linear_regression: M particles of n        blocks, and regression's
                   records                                            records: the normal model's
                                                                      sweep, measured ratios)
abc_rejection      draws wanted / acceptance rate proposals, the      a pilot of 20,000 proposals
                   rate from a pilot; capped by max_proposals and     on this problem (time and
                   max_seconds                                        acceptance)
exact              one evaluation of the exact posterior: measured    a timed run with 10 draws
                   (it takes well under a second for every built-in   (exact is cheap, so the
                   model; the time is what the estimate reports)      pilot is the run itself)
rjmcmc             chains x (warmup + draws) x (n + jumps) record       the model's compiled sweep
                   updates, n = max(plug-in n, prior mean of n)
mcem               E-step draws of a typical run (geometric ramp to   the model's compiled sweep
                   draws, three iterations there) x n record updates  (MCMC E-step) or statistic
                   (MCMC E-step), or x 1 statistic draw (importance)  draw (importance)
bernstein_sheldon  chains x (warmup + draws) iterations, O(1) in n    a timed 20,000-iteration chain
                   (x k^2 / 4 for k cells)                            (:func:`bernstein_sheldon_rate`)
naive, ops         conjugate draws: negligible                        -
auto               the cost of the method it would pick               as above
=================  =================================================  ===========================

Unit costs are measured once per process by timing the compiled kernels on small problems
(:func:`machine_rates`, about a quarter of a second, cached), so the seconds are this machine's.
The estimate is for planning (a factor of two either way is fine); a run can still be stopped
through its progress callback (:mod:`engine.core.chains`).

The price of sweeps, calibration studies and the papers' presets, which add up these single runs,
is :mod:`engine.studies.cost`.
"""
from __future__ import annotations

import functools
import math
import os
import time
from dataclasses import dataclass, replace

import numpy as np

from .core.chains import chain_threads
from .core.results import Problem
from .core.validation import positive
from .kernels import da_mcmc as da_kernels
from .kernels import pseudo_marginal as pm_kernels
from .mechanisms import make_mechanism
from .mechanisms.ratio import OpenDPMean
from .methods import mcem, validate_method
from .methods.abc_rejection import abc_rejection
from .methods.auto import choose, settings_for
from .methods.bernstein_sheldon import chain_1d
from .methods.da_mcmc import ancillary_work, burn_passes, da_mcmc, shift_work, tail_work
from .methods.exact import exact
from .methods.mean_ratio import planned_work
from .methods.pseudo_marginal import _clean, _setup, choose_particles, moment_estimate, pseudo_marginal
from .methods.rjmcmc import check_unknown_n, default_jumps, size_weights
from .models.custom import CustomModel, PythonRunner, log_eta_function
from .models import make_model

__all__ = ["Cost", "estimate_cost", "summary_seconds", "fit_to_budget", "machine_rates", "bernstein_sheldon_rate",
           "BudgetExceeded", "duration", "listed"]

_PILOT_PROPOSALS = 20_000
#: linear_regression: one record update of the DA-MCMC sweep (p normals, the record's two O(d) terms, d = stat_dim)
#: priced at _REGRESSION_RECORD x (1 + d) record updates of the normal model's sweep (the rate machine_rates measures);
#: one record of a pseudo-marginal particle (a fused loop, no accept step) at _REGRESSION_PARTICLE x (1 + d). Measured
#: here (2026-11-27, p = 2: 97 ns a sweep record in cache, 112 at n = 10^6, 47 ns a particle record with the chain's
#: own work, against 37 ns for the normal model): with the refresh and the shift moves priced from the sweep record,
#: auto's settings came out at 0.65-1.12 of the runs from n = 10^3 to 10^6 over two runs (1.67 where the shift moves
#: dominate at wide noise, n = 10^5, eps = 0.1) and the pseudo-marginal chain at 0.82-1.12 (bench/cost_accuracy.py, in
#: bench/results; tests/test_cost_accuracy.py prices those cells again). Before (1 + d) whole updates: 2.4-5 and
#: 5-8 times the runs, past the factor of two this estimate allows, so a hosted app refused regression runs that fit
#: its budget and offered a fit with a third of the draws that did.
_REGRESSION_RECORD = 0.36
_REGRESSION_PARTICLE = 0.13
#: ... and each pseudo-marginal iteration's own work besides its particles (17 us: 450 normal record updates)
_REGRESSION_PM_ITERATION = 450.0
#: naive_bayes_loglinear's pseudo-marginal iteration (the table chain): (fixed, per cell, per cell x block) in normal
#: record updates. Measured 2026-11-27 over six designs from 2 classes x (2) to 5 x (3, 3, 3, 3, 3) (17 to 387 us an
#: iteration, 37 ns a normal record update): 8 us + 1.88 us a cell + 0.126 us a cell x block, 0.97-1.42 of the runs
#: (bench/cost_accuracy.py). Before, 300 ns a cell x block scaled by the Dirichlet statistic draw: 0.6-4.3 times.
_LOGLINEAR_PM = (217.0, 51.0, 3.4)
#: normal_known_sd's DA-MCMC: its three translation moves an iteration (engine.kernels.da_mcmc.normal_shift, three
#: passes without a random draw per record) over the sweep alone; measured 2026-11-28: 6% at n = 10^3, 9% at 4 x 10^4,
#: 23% at 10^6 (memory-bound)
_NORMAL_SHIFTS_SHARE = 0.15
_REFRESH_SHARE = 1.0  # linear_regression: a clamped record's raw y redrawn, over a sweep record (measured 0.45 in
                      # cache, 3.1 at n = 10^6 where the clamped records are scattered over the array; a few per
                      # cent of either run)


class BudgetExceeded(ValueError):
    """A run whose estimated cost is over the budget asked for (a ValueError: bad input)."""


@dataclass(frozen=True)
class Cost:
    """The estimated cost of one run."""

    method: str
    units: float
    unit: str
    seconds: float
    detail: str
    #: a floor, not an estimate: the cheapest the run could be was already over the ``ceiling`` asked for, so the
    #: costly part of the estimate (the pseudo-marginal particle pilot) was not run
    at_least: bool = False

    def describe(self) -> str:
        return (f"{'at least' if self.at_least else 'about'} {duration(self.seconds)} ({self.units:,.3g} {self.unit}; "
                f"{self.detail})")


def listed(items) -> str:
    """Items as a person lists them: "a", "a and b", "a, b and c"."""
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def duration(seconds: float) -> str:
    """Seconds as a person reads them: 0.25 s, 40 s, 12 min, 3.5 h."""
    if seconds < 1:
        return f"{seconds:.2g} s"
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def _time(fn, repeats=2) -> float:
    best = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


@functools.lru_cache(maxsize=1)
def machine_rates() -> dict:
    """Seconds per record update (DA-MCMC sweep) and per statistic draw (pseudo-marginal), per model,
    measured here on small problems with the compiled kernels (first call compiles or loads them)."""
    specs = {
        "beta_binomial": ({"name": "beta_binomial", "n": 40_000}, [12_000.0]),
        "poisson_gamma": ({"name": "poisson_gamma", "n": 40_000}, [120_000.0]),
        "normal_known_sd": ({"name": "normal_known_sd", "n": 40_000}, [4_000.0]),
        "dirichlet_multinomial": ({"name": "dirichlet_multinomial", "n": 40_000, "alpha": [1.0, 1.0, 1.0]},
                                  [10_000.0, 20_000.0, 10_000.0]),
    }
    rates = {}
    for name, (model, s_dp) in specs.items():
        m = make_model(name, model)
        problem = Problem(model=m, mechanism=make_mechanism("laplace", {"epsilon": 1.0},
                                                            default_sensitivity=m.default_sensitivity()),
                          s_dp=np.array(s_dp))
        da_mcmc(problem, np.random.default_rng(0), chains=1, draws=1, warmup=0, parallel=False)  # load kernels
        iters = 8
        if name == "normal_known_sd":  # the unit the other models' constants are in: the sweep's record update alone
            t_rec = _normal_sweep_rate(problem, iters)
        else:
            t_rec = _time(lambda: da_mcmc(problem, np.random.default_rng(0), chains=1, draws=iters, warmup=0,
                                          parallel=False)) / (iters * 40_000)
        setup = _setup(problem)
        theta = _clean(setup, moment_estimate(problem))
        draws = 20 if name == "normal_known_sd" else 20_000
        out = np.empty(draws)
        rng = np.random.default_rng(1)
        t_stat = _time(lambda: pm_kernels.log_eta_draws(setup.code, rng, theta, setup.par, setup.sdp, setup.kernel,
                                                         setup.scale, draws, out)) / draws
        if name == "normal_known_sd":
            t_stat /= 40_000  # per record draw of the clamped sum
        rates[name] = {"record_update_s": t_rec, "statistic_draw_s": t_stat}
    rates["cores"] = os.cpu_count() or 1
    return rates


def _normal_sweep_rate(problem: Problem, iters: int) -> float:
    """Seconds per record update of the normal model's DA-MCMC sweep without its translation moves: the unit
    :data:`_REGRESSION_RECORD`, :data:`_LOGLINEAR_PM` and the rest were measured in (37 ns then), which the moves
    (:data:`_NORMAL_SHIFTS_SHARE` more) would have moved."""
    model, mech = problem.model, problem.mechanism
    rng = np.random.default_rng(0)
    x0 = np.asarray(model.sample_records(rng, np.array([0.1])), dtype=float)
    outs = (np.empty((iters, 1)), np.empty(iters), np.empty(iters))

    def sweep():
        da_kernels.normal_chain(rng, x0.copy(), 0.0, 0.0, model.sd, model.lo, model.hi, model.prior_mean,
                                model.prior_sd, float(problem.s_dp[0]), int(mech.kernel), float(mech.scale),
                                float(mech.noise_sd), False, iters, *outs)

    return _time(sweep) / (iters * model.n)


#: a custom model's pilot: the records of the one sweep timed (the run's own n where smaller), and particles drawn
_CUSTOM_PILOT_RECORDS = 300
_CUSTOM_PILOT_PARTICLES = 5


def _custom_record_s(problem: Problem) -> float:
    """Seconds per record update of a custom model's DA-MCMC (:class:`engine.models.custom.PythonRunner`), measured:
    one sweep of the model with at most :data:`_CUSTOM_PILOT_RECORDS` records (its pieces are the user's Python, 3-4
    us a record with one-line pieces and anything above: a rate of the compiled models x 50 priced them 6-10 times
    too low). A model whose pieces refuse the pilot's smaller n is timed at its own n."""
    model = problem.model
    out = (np.empty((1, len(model.param_names))), np.empty(1), np.empty(1))

    def sweep(m) -> float:
        runner = PythonRunner(Problem(model=m, mechanism=problem.mechanism, s_dp=problem.s_dp))
        rng = np.random.default_rng(0)
        state = runner.init_state(rng)
        t0 = time.perf_counter()
        runner.advance(rng, state, 1, *out)
        return (time.perf_counter() - t0) / m.n

    if model.n > _CUSTOM_PILOT_RECORDS:
        try:
            return sweep(replace(model, n=_CUSTOM_PILOT_RECORDS))
        except ValueError:
            pass
    return sweep(model)


def _custom_pm_s(problem: Problem) -> tuple[float, float]:
    """(seconds per particle, seconds per iteration besides its particles) of a custom model's pseudo-marginal
    chain, measured: :data:`_CUSTOM_PILOT_PARTICLES` particles (n records drawn, their statistic, log eta) at the
    model's ``init_theta``, and one chain of 10 iterations at one particle, less its particles (the prior, the
    proposal and the step, in Python: 0.3 ms an iteration at n = 20, where the particles priced alone were 0.03)."""
    model = problem.model
    log_eta = log_eta_function(problem)
    theta = np.asarray(model.init_theta, float)
    rng = np.random.default_rng(0)
    t0 = time.perf_counter()
    for _ in range(_CUSTOM_PILOT_PARTICLES):
        log_eta(model.contributions(model.draw_records(rng, theta), problem.s_dp.size).sum(axis=0))
    particle = (time.perf_counter() - t0) / _CUSTOM_PILOT_PARTICLES
    runs = []
    for draws in (2, 12):
        t0 = time.perf_counter()
        pseudo_marginal(problem, np.random.default_rng(0), chains=1, draws=draws, warmup=0, particles=1,
                        parallel=False)
        runs.append(time.perf_counter() - t0)
    return particle, max(0.0, (runs[1] - runs[0]) / 10 - particle)


@functools.lru_cache(maxsize=1)
def bernstein_sheldon_rate() -> float:
    """Seconds per iteration of the compiled bernstein_sheldon chain (beta_binomial + laplace), measured here."""
    par = np.array([1000.0, 1.0, 1.0])
    iters = 20_000
    out = np.empty(iters)
    track = np.empty(iters)
    rng = np.random.default_rng(0)

    def once():
        chain_1d(rng, 0, par, 300.0, True, 1.0, np.array([300.0, 300.0, 2.0]), iters, out, track)

    once()  # compile or load from the cache
    return _time(once) / iters


def _parallel(chains: int, rates: dict) -> int:
    """Chains that run at once: no more than the cores, nor than DPL_CHAIN_THREADS allows a run."""
    return max(1, min(chains, rates["cores"], chain_threads()))


#: the last (problem, cap, particles) the estimate chose: fit_to_budget prices the same problem three times more, and
#: each choice runs pilot particles of n records (at n = 10^6 regression records, about 5 s a choice)
_last_particles: tuple = (None, None, None)


def _particles(problem: Problem, setup, cap: int) -> int:
    """The pseudo-marginal sampler's particle count for ``problem`` (its own seeded choice, so the same every
    time), chosen once for consecutive estimates of the same problem object."""
    global _last_particles
    last = _last_particles
    if last[0] is problem and last[1] == cap:
        return last[2]
    m = choose_particles(np.random.default_rng(0), setup, _clean(setup, moment_estimate(problem)), cap)[0]
    _last_particles = (problem, cap, m)
    return m


#: the R-hat, ESS and MCSE of one kept draw of one parameter (:func:`engine.numerics.diagnostics.summary`), in
#: beta_binomial record updates: 0.65 µs against 26 ns here (the log-linear model's 80 parameters over 4 x 5,000
#: draws, 1.04 s; ``bench/summary.py``); more where a chain's autocorrelation is long (Geyer's sum runs over more lags)
_SUMMARY_VALUE = 25.0
#: the samplers whose draws get R-hat and ESS (a chain's verdict); independent draws get quantiles only. ``auto`` is
#: priced as the method it picks, whose summary is its verdict's, which the result's summary then reuses (the
#: summaries' memo, :data:`engine.numerics.diagnostics._TABLES`)
_CHAINS = ("da_mcmc", "pseudo_marginal", "rjmcmc", "bernstein_sheldon")


def estimate_cost(problem: Problem, method: dict, rates: dict | None = None, ceiling: float | None = None) -> Cost:
    """The cost of running ``method`` (a [method] table) on ``problem``, before running it, and of its draws'
    summary: a chain's R-hat and ESS over every parameter (``auto``'s verdict, in the run, for its chains). That is
    small against the run but for many parameters: the log-linear model at the paper's size (80 parameters) spent
    0.3 s sampling and 1.0 s on its summary (2.98 s before the summary was one pass, and computed once per set of
    draws), and was priced at the 0.3 s.

    ``ceiling`` (seconds; none by default): where the pseudo-marginal sampler's particle count M is not given
    and would be piloted (pilot particles of n simulated records: about 5 s at 10^6 regression records), the
    run is first priced at one particle an iteration, the least it can cost; when that floor is already over
    ``ceiling`` it is returned (``at_least``) without the pilot. A budget check needs no more than that."""
    summary_s = summary_seconds(problem, method, rates)
    if ceiling is not None:  # the run's floor is over the ceiling when it is over what the summary leaves of it
        ceiling = max(positive("ceiling", ceiling) - summary_s, 1e-300)
    cost = _run_cost(problem, method, rates, ceiling)
    return replace(cost, seconds=cost.seconds + summary_s) if summary_s else cost


def summary_seconds(problem: Problem, method: dict, rates: dict | None = None) -> float:
    """The part of :func:`estimate_cost` that is the draws' summary, one thread's work (chains' R-hat and ESS, priced
    at :data:`_SUMMARY_VALUE` a kept draw of a parameter); 0 for independent draws and for ``auto`` (priced as the
    method it picks)."""
    settings = validate_method(method)
    if settings["name"] not in _CHAINS or not getattr(problem.model, "param_names", None):
        return 0.0
    rates = rates or machine_rates()
    values = settings["chains"] * settings["draws"] * (len(problem.model.param_names) + (problem.unknown_n is not None))
    return values * _SUMMARY_VALUE * rates["beta_binomial"]["record_update_s"]


def _run_cost(problem: Problem, method: dict, rates: dict | None = None, ceiling: float | None = None) -> Cost:
    """:func:`estimate_cost` without the summary."""
    if ceiling is not None:
        ceiling = positive("ceiling", ceiling)
    settings = validate_method(method)
    name = settings["name"]
    model = problem.model
    chains, draws, warmup = settings["chains"], settings["draws"], settings["warmup"]
    if name == "da_mcmc":  # thin iterations per kept draw
        draws *= settings.get("thin", 1)
    iters = chains * (warmup + draws)
    if name == "bernstein_sheldon":  # its own rate: no need to time the record sweeps
        k = getattr(model, "k", None) if getattr(model, "name", "") == "dirichlet_multinomial" else None
        factor = max(1.0, k * k / 4.0) if k else 1.0
        cores = min((rates or {}).get("cores") or os.cpu_count() or 1, chain_threads())
        secs = iters * factor * bernstein_sheldon_rate() / max(1, min(chains, cores)) + 0.01
        return Cost(name, float(iters), "iterations", secs, f"{chains} chains x {warmup + draws:,} iterations, "
                                                             "each O(1) in n")
    rates = rates or machine_rates()
    family = rates.get(getattr(model, "name", ""), rates["beta_binomial"])
    if name == "auto":
        picked, _, numbers = choose(problem, np.random.default_rng(0))
        table = {k: v for k, v in method.items() if k != "max_seconds"}  # auto's own key: the fallbacks' budget
        inner = estimate_cost(problem, {**table, "name": picked, **settings_for(picked, problem, numbers)}, rates,
                              ceiling)
        return Cost("auto", inner.units, inner.unit, inner.seconds, f"auto picks {picked}: {inner.detail}",
                    inner.at_least)
    if name == "da_mcmc":
        units = float(iters) * model.n
        custom = isinstance(model, CustomModel)
        per = _custom_record_s(problem) if custom else family["record_update_s"]
        if getattr(model, "name", "") == "normal_known_sd":  # and its three translation moves an iteration
            per *= 1.0 + _NORMAL_SHIFTS_SHARE
        if getattr(model, "name", "") == "naive_bayes_loglinear":  # a record is 1 + K categorical draws
            per = rates["dirichlet_multinomial"]["record_update_s"] * (1 + model.n_features)
        if getattr(model, "name", "") == "linear_regression":  # p normals, two O(d) record terms, d = stat_dim
            per = rates["normal_known_sd"]["record_update_s"] * (_REGRESSION_RECORD * (1 + model.stat_dim))
            m = settings.get("records_per_iteration")
            # the clamped records' raw y refreshed every iteration (all of them unless capped), each about
            # REFRESH_SHARE of a record update
            clamped = settings.get("clamped_per_iteration")
            if clamped is None:
                setup = _setup(problem)
                clamped = model.clamped_fraction(_clean(setup, moment_estimate(problem))) * model.n
            refresh_s = chains * (warmup + draws) * float(clamped) * _REFRESH_SHARE * per / _parallel(chains, rates)
            # the shift moves' split and record evaluations, in record updates per iteration (shift_work)
            refresh_s += chains * (warmup + draws) * shift_work(problem, int(settings.get("shifts", 0))) * per / _parallel(
                chains, rates)
            anc = int(settings.get("ancillary_moves", 0))  # and the ancillary moves' (ancillary_work)
            refresh_s += chains * (warmup + draws) * ancillary_work(problem, anc) * per / _parallel(chains, rates)
            tail = int(settings.get("tail_records", 0))  # and the tail moves' (tail_work)
            refresh_s += chains * (warmup + draws) * tail_work(problem, tail) * per / _parallel(chains, rates)
            if m is not None and m < model.n:  # partial sweeps; warm-up makes burn_passes full passes at least
                passes = burn_passes(problem, int(settings.get("shifts", 0)), anc)
                units = chains * (draws * float(m) + warmup * max(float(m), min(model.n, passes * model.n
                                                                                / max(warmup, 1))))
                secs = units * per / _parallel(chains, rates) + refresh_s
                moves = (f" and {anc} ancillary moves" if anc else "") + (f" and a tail scan of {tail:,} records"
                                                                          if tail else "")
                return Cost(name, units, "record updates", secs, f"{chains} chains x {warmup + draws:,} iterations x "
                                                                    f"{m:,} of n = {model.n:,} records{moves}")
        if getattr(model, "name", "") == "linear_regression":
            units_s = units * per / _parallel(chains, rates) + refresh_s
        else:  # a custom model's chains run Python, which holds the GIL: one at a time
            units_s = units * per / (1 if custom else _parallel(chains, rates))
        secs = units_s
        return Cost(name, units, "record updates", secs, f"{chains} chains x {warmup + draws:,} iterations x "
                                                            f"n = {model.n:,} records")
    if name == "pseudo_marginal" and getattr(model, "name", "") == "naive_bayes_loglinear":
        # whatever n (engine.methods.loglinear_pm): a fixed part, a part per cell and one per cell x block, in
        # record updates of the normal model's sweep (_LOGLINEAR_PM; auto ranks with its own constant)
        blocks = 1 + model.class_levels * model.n_features
        fixed, per_cell, per_cell_block = _LOGLINEAR_PM
        per_iter = rates["normal_known_sd"]["record_update_s"] * (fixed + model.stat_dim * (per_cell + per_cell_block
                                                                                             * blocks))
        secs = iters * per_iter / _parallel(chains, rates)
        return Cost(name, float(iters), "iterations", secs, f"{chains} chains x {warmup + draws:,} iterations, "
                                                             f"each O(cells x blocks) = {model.stat_dim} x {blocks}")
    if name == "pseudo_marginal" and isinstance(problem.mechanism, OpenDPMean):
        # OpenDP's mean (engine.methods.mean_ratio): M particles of n simulated clamped normal records per iteration
        m, n = planned_work(problem, settings)
        units = float(iters) * m * max(n, 1)
        secs = units * rates["normal_known_sd"]["record_update_s"] / _parallel(chains, rates)
        return Cost(name, units, "record draws", secs, f"{chains} chains x {warmup + draws:,} iterations x "
                                                          f"M = {m:,} particles x n ~ {n:,} records")
    if name == "pseudo_marginal":
        setup = _setup(problem)
        per_draw = family["statistic_draw_s"] * setup.pilot_cost
        fixed = 0.0
        lanes = _parallel(chains, rates)
        if isinstance(model, CustomModel):  # a particle is the pieces' Python calls; one chain at a time (the GIL)
            (per_draw, fixed), lanes = _custom_pm_s(problem), 1
        if getattr(model, "name", "") == "linear_regression":  # n simulated records in one fused loop
            normal = rates["normal_known_sd"]["record_update_s"]
            per_draw = normal * _REGRESSION_PARTICLE * (1 + model.stat_dim) * model.n
            fixed = normal * _REGRESSION_PM_ITERATION  # the proposal, its mixture density and the step

        def seconds(m: int) -> float:  # M particles an iteration
            return (float(iters) * m * per_draw + iters * fixed) / lanes

        m = settings.get("particles")
        if m is None and ceiling is not None and seconds(1) > ceiling:  # the floor: one particle an iteration
            return Cost(name, float(iters), "statistic draws", seconds(1), f"{chains} chains x {warmup + draws:,} "
                        "iterations x at least one particle (the particle count was not piloted)", True)
        if m is None:
            m = _particles(problem, setup, settings.get("max_particles", 20_000))
        return Cost(name, float(iters) * m, "statistic draws", seconds(m), f"{chains} chains x {warmup + draws:,} "
                    f"iterations x M = {m:,} particles")
    if name == "rjmcmc":
        if getattr(problem, "unknown_n", None) is None:
            return Cost(name, 0.0, "record updates", 0.0, "rjmcmc needs an unknown n; it will refuse this problem")
        try:
            check_unknown_n(problem, name)
        except ValueError as exc:
            return Cost(name, 0.0, "record updates", 0.0, f"it will refuse this problem: {exc}")
        jumps = settings.get("jumps") or default_jumps(problem)
        # the chains start at and stay near the n that n_dp and the prior on n make likely (size_weights), not the
        # plug-in n: a Poisson(20) prior with n_dp = 1e6 was priced at n = 1e6 (250 s) for chains at n ~ 54
        size = _likely_size(problem)
        units = float(iters) * (size + jumps)
        secs = units * family["record_update_s"] / _parallel(chains, rates)
        return Cost(name, units, "record updates", secs, f"{chains} chains x {warmup + draws:,} iterations x "
                                                            f"(n ~ {size:,.0f} records + {jumps} jumps)")
    if name == "mcem":
        return _mcem_cost(problem, settings, family)
    if name == "abc_rejection":
        return _abc_cost(problem, settings)
    if name == "exact":
        t0 = time.perf_counter()
        # built afresh (an estimate times an evaluation, however often it is asked) and kept for the run that follows
        exact(problem, np.random.default_rng(0), draws=10, chains=1, grid_size=settings.get("grid_size", 400),
              memo=False)
        secs = time.perf_counter() - t0 + 2e-7 * chains * draws
        return Cost(name, 1.0, "exact evaluation", secs, "measured: one evaluation of the exact posterior")
    return Cost(name, float(chains * draws), "conjugate draws", 1e-7 * chains * draws + 0.01, "closed-form draws")


def _likely_size(problem: Problem) -> float:
    """The n an unknown-n chain (rjmcmc, mcem's E-step) starts at and stays near: the mean of n given n_dp and the
    prior on n alone (:func:`engine.methods.rjmcmc.size_weights`), at least 1."""
    grid, weight = size_weights(problem.unknown_n)  # the weights sum to 1
    return max(float(weight @ grid), 1.0)


def _mcem_cost(problem: Problem, settings: dict, family: dict) -> Cost:
    size = problem.model.n if problem.unknown_n is None else _likely_size(problem)
    kind = mcem.estep_kind(problem, np.random.default_rng(0), settings.get("estep", "auto"),
                           mcem._start(problem))
    m = mcem.expected_draws(settings["draws"], settings.get("max_iter", 60))
    if kind == "importance":
        return Cost("mcem", m, "statistic draws", m * family["statistic_draw_s"] + 0.01,
                    f"importance-sampled E-steps, about {m:,.0f} draws in all")
    units = (m + settings["warmup"]) * size
    return Cost("mcem", units, "record updates", units * family["record_update_s"] + 0.01,
                f"MCMC E-steps, about {m:,.0f} sweeps of n ~ {size:,.0f} records")


def _abc_cost(problem: Problem, settings: dict) -> Cost:
    wanted = settings["chains"] * settings["draws"]
    max_prop = settings.get("max_proposals", 20_000_000)
    max_sec = settings.get("max_seconds", 30.0)
    t0 = time.perf_counter()
    try:
        pilot = abc_rejection(problem, np.random.default_rng(0), draws=10**9, max_proposals=_PILOT_PROPOSALS,
                              max_seconds=5.0, batch_size=_PILOT_PROPOSALS)
        rate = pilot.info["accepted"] / pilot.info["proposals"]
        per = (time.perf_counter() - t0) / pilot.info["proposals"]
    except ValueError:  # nothing accepted in the pilot: the acceptance rate is below 1 / 20,000
        rate, per = 0.0, (time.perf_counter() - t0) / _PILOT_PROPOSALS
    need = wanted / rate if rate > 0 else math.inf
    proposals = min(need, max_prop)
    secs = min(proposals * per, max_sec)
    why = (f"acceptance rate {rate:.3g} from a pilot of {_PILOT_PROPOSALS:,} proposals" if rate > 0 else
           f"no proposal accepted in a pilot of {_PILOT_PROPOSALS:,}: the run will stop at its budget")
    return Cost("abc_rejection", proposals, "proposals", secs, why)


def fit_to_budget(problem: Problem, method: dict, max_seconds: float, rates: dict | None = None) -> dict | None:
    """The largest settings of ``method`` whose estimate is within ``max_seconds``: draws (and warm-up in
    proportion, keeping at least 100) scaled down, then chains down to 2; None if even 2 chains x 100
    draws do not fit (or the method has no draw count to scale)."""
    max_seconds = positive("max_seconds", max_seconds)
    settings = validate_method(method)
    cost = estimate_cost(problem, settings, rates, ceiling=max_seconds)
    if cost.seconds <= max_seconds:
        return settings
    if settings["name"] not in ("da_mcmc", "pseudo_marginal", "abc_rejection", "auto", "rjmcmc", "bernstein_sheldon"):
        return None
    # the least the loop below could offer (2 chains, 100 draws, warm-up kept at least 100): when even its floor
    # is over the budget, no settings fit, and the pilot of the particle count is not needed to say so (only a
    # pseudo-marginal estimate, auto's included, pilots or has a floor)
    if cost.at_least:
        smallest = {**settings, "chains": min(settings["chains"], 2), "draws": 100,
                    "warmup": min(settings["warmup"], 100)}
        if estimate_cost(problem, smallest, rates, ceiling=max_seconds).at_least:
            return None
    for chains in sorted({settings["chains"], min(settings["chains"], 2)}, reverse=True):
        trial = {**settings, "chains": chains}
        base = estimate_cost(problem, {**trial, "draws": 1000, "warmup": 0}, rates).seconds / 1000.0
        per_iter = max(base, 1e-12)
        # a hair under the budget: where it is a whole number of iterations (the app fits to 0.8 of a budget
        # that is itself a run's estimate) the estimate of exactly that many came out one rounding over it
        iters = int(max_seconds / per_iter * (1.0 - 1e-9))
        ratio = settings["warmup"] / max(settings["warmup"] + settings["draws"], 1)
        warmup = min(settings["warmup"], max(100, int(iters * ratio)))
        draws = min(settings["draws"], iters - warmup)
        if draws >= 100:
            out = {**trial, "draws": int(draws), "warmup": int(warmup)}
            if "max_seconds" in settings or settings["name"] == "abc_rejection":
                out["max_seconds"] = float(max_seconds)
            return out
    return None
