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
                   likelihood)
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

Studies add up their runs: an epsilon sweep (:func:`estimate_sweep_cost`) costs the sum over its
cells (each epsilon's own problem, so ABC's acceptance and the exact posterior's work are priced at
that epsilon), and a calibration study (:func:`estimate_calibration_cost`) costs M replicates x (the
methods' costs on the study's problem + the confidential reference posterior, timed once; a cheap
replicate is timed whole once, so its bookkeeping counts too).
:func:`fit_sweep_to_budget` and :func:`fit_calibration_to_budget` give the largest study within a
budget: fewer epsilon points (then fewer draws), fewer replicates. A paper preset
(:func:`estimate_preset_cost`) is priced from its fixed settings (:func:`engine.studies.presets.preset_plan`)
with the same estimators: its single runs, its calibration studies, or its replicate releases.

Unit costs are measured once per process by timing the compiled kernels on small problems
(:func:`machine_rates`, about a quarter of a second, cached), so the seconds are this machine's.
The estimate is for planning (a factor of two either way is fine); a run can still be stopped
through its progress callback (:mod:`engine.chains`).
"""
from __future__ import annotations

import functools
import math
import os
import time
from dataclasses import dataclass

import numpy as np

from .chains import chain_threads
from .methods.pseudo_marginal import _clean, _setup, choose_particles, moment_estimate
from .results import Problem

__all__ = ["Cost", "estimate_cost", "fit_to_budget", "machine_rates", "bernstein_sheldon_rate", "BudgetExceeded",
           "estimate_sweep_cost", "fit_sweep_to_budget", "estimate_calibration_cost", "fit_calibration_to_budget",
           "estimate_preset_cost"]

_PILOT_PROPOSALS = 20_000


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

    def describe(self) -> str:
        return f"about {_duration(self.seconds)} ({self.units:,.3g} {self.unit}; {self.detail})"


def _duration(seconds: float) -> str:
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
    from . import pm_kernels
    from .mechanisms import make_mechanism
    from .methods.da_mcmc import da_mcmc
    from .models import make_model

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


@functools.lru_cache(maxsize=1)
def bernstein_sheldon_rate() -> float:
    """Seconds per iteration of the compiled bernstein_sheldon chain (beta_binomial + laplace), measured here."""
    from .methods.bernstein_sheldon import chain_1d

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


def estimate_cost(problem: Problem, method: dict, rates: dict | None = None) -> Cost:
    """The cost of running ``method`` (a [method] table) on ``problem``, before running it."""
    from .spec import validate_method

    settings = validate_method(method)
    name = settings["name"]
    model = problem.model
    chains, draws, warmup = settings["chains"], settings["draws"], settings["warmup"]
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
        from .methods.auto import choose

        picked, _, _ = choose(problem, np.random.default_rng(0))
        inner = estimate_cost(problem, {**method, "name": picked}, rates)
        return Cost("auto", inner.units, inner.unit, inner.seconds, f"auto picks {picked}: {inner.detail}")
    if name == "da_mcmc":
        units = float(iters) * model.n
        per = family["record_update_s"] * (50.0 if getattr(model, "name", "custom") == "custom" else 1.0)
        if getattr(model, "name", "") == "naive_bayes_loglinear":  # a record is 1 + K categorical draws
            per = rates["dirichlet_multinomial"]["record_update_s"] * (1 + model.n_features)
        if getattr(model, "name", "") == "linear_regression":  # p normals, two O(d) record terms, d = stat_dim
            per = rates["normal_known_sd"]["record_update_s"] * (1 + model.stat_dim)
        secs = units * per / _parallel(chains, rates)
        return Cost(name, units, "record updates", secs, f"{chains} chains x {warmup + draws:,} iterations x "
                                                            f"n = {model.n:,} records")
    if name == "pseudo_marginal":
        setup = _setup(problem)
        m = settings.get("particles")
        if m is None:
            m = choose_particles(np.random.default_rng(0), setup, _clean(setup, moment_estimate(problem)),
                                 settings.get("max_particles", 20_000))[0]
        per_draw = family["statistic_draw_s"] * setup.pilot_cost
        if getattr(model, "name", "") == "linear_regression":  # n simulated records, each priced like a DA-MCMC update
            per_draw = rates["normal_known_sd"]["record_update_s"] * (1 + model.stat_dim) * model.n
        units = float(iters) * m
        secs = units * per_draw / _parallel(chains, rates)
        return Cost(name, units, "statistic draws", secs, f"{chains} chains x {warmup + draws:,} iterations x "
                                                              f"M = {m:,} particles")
    if name == "rjmcmc":
        from .methods.rjmcmc import default_jumps

        if getattr(problem, "unknown_n", None) is None:
            return Cost(name, 0.0, "record updates", 0.0, "rjmcmc needs an unknown n; it will refuse this problem")
        jumps = settings.get("jumps") or default_jumps(problem)
        size = max(model.n, problem.unknown_n.prior.mean)
        units = float(iters) * (size + jumps)
        secs = units * family["record_update_s"] / _parallel(chains, rates)
        return Cost(name, units, "record updates", secs, f"{chains} chains x {warmup + draws:,} iterations x "
                                                            f"(n ~ {size:,.0f} records + {jumps} jumps)")
    if name == "mcem":
        return _mcem_cost(problem, settings, family)
    if name == "abc_rejection":
        return _abc_cost(problem, settings)
    if name == "exact":
        from .methods.exact import exact

        t0 = time.perf_counter()
        exact(problem, np.random.default_rng(0), draws=10, chains=1, grid_size=settings.get("grid_size", 400))
        secs = time.perf_counter() - t0 + 2e-7 * chains * draws
        return Cost(name, 1.0, "exact evaluation", secs, "measured: one evaluation of the exact posterior")
    return Cost(name, float(chains * draws), "conjugate draws", 1e-7 * chains * draws + 0.01, "closed-form draws")


def _mcem_cost(problem: Problem, settings: dict, family: dict) -> Cost:
    from .methods import mcem

    size = problem.model.n if problem.unknown_n is None else max(problem.model.n, problem.unknown_n.prior.mean)
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
    from .methods.abc_rejection import abc_rejection

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
    from .spec import validate_method

    settings = validate_method(method)
    cost = estimate_cost(problem, settings, rates)
    if cost.seconds <= max_seconds:
        return settings
    if settings["name"] not in ("da_mcmc", "pseudo_marginal", "abc_rejection", "auto", "rjmcmc", "bernstein_sheldon"):
        return None
    for chains in sorted({settings["chains"], min(settings["chains"], 2)}, reverse=True):
        trial = {**settings, "chains": chains}
        base = estimate_cost(problem, {**trial, "draws": 1000, "warmup": 0}, rates).seconds / 1000.0
        per_iter = max(base, 1e-12)
        iters = int(max_seconds / per_iter)
        ratio = settings["warmup"] / max(settings["warmup"] + settings["draws"], 1)
        warmup = min(settings["warmup"], max(100, int(iters * ratio)))
        draws = min(settings["draws"], iters - warmup)
        if draws >= 100:
            out = {**trial, "draws": int(draws), "warmup": int(warmup)}
            if "max_seconds" in settings or settings["name"] == "abc_rejection":
                out["max_seconds"] = float(max_seconds)
            return out
    return None


# --------------------------------------------------------------------------- studies
_SCALABLE = ("da_mcmc", "pseudo_marginal", "abc_rejection", "auto", "rjmcmc", "bernstein_sheldon")


def _sweep_cells(spec: dict, epsilons, methods, rates: dict | None) -> dict:
    """{(epsilon, method name): seconds} of every cell; a cell the engine refuses costs nothing. The
    exact posterior is timed (:func:`estimate_cost`) at the grid's two ends only and every cell is
    priced at the larger (its work follows the noise scale, which is monotone in epsilon, so the dearest
    cell is normally at an end; a planning estimate), so pricing a sweep does not evaluate it at every
    epsilon."""
    from .api import prepare
    from .study import epsilon_spec

    rates = rates or machine_rates()
    grid = [float(e) for e in epsilons]
    ends = {grid[0], grid[-1]} if grid else set()
    cells = {}
    for e in grid:
        try:
            problem = prepare(epsilon_spec(spec, e))
        except ValueError:
            problem = None  # the sweep reports the cell as skipped
        for m in methods:
            if m["name"] == "exact" and e not in ends:
                continue
            try:
                cells[(e, m["name"])] = 0.0 if problem is None else estimate_cost(problem, m, rates).seconds
            except ValueError:
                cells[(e, m["name"])] = 0.0
    for m in methods:
        if m["name"] == "exact" and grid:
            worst = max(cells[(e, "exact")] for e in ends)
            cells.update({(e, "exact"): worst for e in grid})
    return cells


def estimate_sweep_cost(spec: dict, epsilons, methods, rates: dict | None = None) -> Cost:
    """The cost of :func:`engine.study.epsilon_sweep` (``spec``, ``epsilons``, ``methods``): the sum of
    :func:`estimate_cost` over its cells, each on the problem prepared at its epsilon."""
    cells = _sweep_cells(spec, epsilons, methods, rates)
    worst = max(cells, key=cells.get) if cells else None
    detail = f"{len(epsilons)} ε values × {len(methods)} methods"
    if worst is not None:
        detail += f"; the costliest cell is {worst[1]} at ε = {worst[0]:g} ({_duration(cells[worst])})"
    return Cost("epsilon_sweep", float(len(cells)), "runs", float(sum(cells.values())), detail)


def _spread(values: list, k: int) -> list:
    """k of ``values`` evenly spread over their positions, first and last included."""
    idx = sorted({int(round(i)) for i in np.linspace(0, len(values) - 1, k)})
    return [values[i] for i in idx]


def fit_sweep_to_budget(spec: dict, epsilons, methods, max_seconds: float, rates: dict | None = None) -> dict | None:
    """The largest sweep within ``max_seconds``: ``{"epsilons": [...], "methods": [...]}``.

    First fewer epsilon points, spread evenly over the grid with both ends kept (down to 3, or the
    grid's size if smaller); then, on that grid, the draws of the sampling methods scaled down by one
    common factor (they share the app's chain settings) with :func:`fit_to_budget`. None when even
    that does not fit (the cheap methods alone are over, or a sampler would need fewer than 100 draws).
    """
    rates = rates or machine_rates()
    grid = [float(e) for e in epsilons]
    methods = [dict(m) for m in methods]
    cells = _sweep_cells(spec, grid, methods, rates)

    def total(points):
        return sum(cells[(e, m["name"])] for e in points for m in methods)

    if total(grid) <= max_seconds:
        return {"epsilons": grid, "methods": methods}
    floor = min(3, len(grid))
    for k in range(len(grid) - 1, floor - 1, -1):
        points = _spread(grid, k)
        if total(points) <= max_seconds:
            return {"epsilons": points, "methods": methods}
    points = _spread(grid, floor)
    fixed = sum(cells[(e, m["name"])] for e in points for m in methods if m["name"] not in _SCALABLE)
    scalable = total(points) - fixed
    if fixed >= max_seconds or scalable <= 0:
        return None
    ratio = (max_seconds - fixed) / scalable
    from .api import prepare
    from .study import epsilon_spec

    fitted = []
    for m in methods:
        if m["name"] not in _SCALABLE:
            fitted.append(m)
            continue
        e = max(points, key=lambda x: cells[(x, m["name"])])  # its costliest epsilon sets the draws
        try:
            fit = fit_to_budget(prepare(epsilon_spec(spec, e)), m, cells[(e, m["name"])] * ratio, rates)
        except ValueError:
            fit = m
        if fit is None:
            return None
        fitted.append(fit)
    if sum(_sweep_cells(spec, points, fitted, rates).values()) > max_seconds * 1.05:  # the fit's own check
        return None
    return {"epsilons": points, "methods": fitted}


PILOT_REPLICATE_S = 0.5  # replicates estimated below this are also timed once (bookkeeping included)


def _replicate_seconds(spec: dict, methods, reference: bool, reference_draws: int, mmd_draws: int, sbc_draws: int,
                       rates: dict | None) -> dict:
    """Seconds per replicate by part: each method's :func:`estimate_cost` on the spec's problem, the
    confidential reference timed once, and, for a cheap replicate (under ``PILOT_REPLICATE_S``), the
    rest of one timed replicate (simulation, quantiles, SBC ranks, MMD, R-hat) as ``bookkeeping``."""
    from .api import confidential_posterior, prepare
    from .studies.calibration import _calibration_unit, calibration_config
    from .studies.runner import spawn_seeds

    rates = rates or machine_rates()
    problem = prepare(spec)
    per = {}
    for m in methods:
        table = {"name": m} if isinstance(m, str) else dict(m)
        try:
            per[table["name"]] = estimate_cost(problem, table, rates).seconds
        except ValueError:
            per[table["name"]] = 0.0  # the study records the refusal per row
    if reference and problem.records is not None:
        t0 = time.perf_counter()
        confidential_posterior(problem, seed=0, draws=reference_draws)
        per["confidential"] = time.perf_counter() - t0
    if sum(per.values()) < PILOT_REPLICATE_S:
        cfg = calibration_config(spec, methods, sbc_draws=sbc_draws, mmd_draws=mmd_draws, reference=reference,
                                 reference_draws=reference_draws)
        t0 = time.perf_counter()
        _calibration_unit((cfg, 0, spawn_seeds(0, 1)[0]))
        per["bookkeeping"] = max(0.0, time.perf_counter() - t0 - sum(per.values()))
    return per


def estimate_calibration_cost(spec: dict, methods, replicates: int, *, reference: bool = True,
                              reference_draws: int = 2000, mmd_draws: int = 300, sbc_draws: int = 99,
                              rates: dict | None = None) -> Cost:
    """The cost of :func:`engine.studies.calibration_study` (same keywords): M x (the sum of
    :func:`estimate_cost` of every method on the problem ``spec`` prepares, with its simulated records,
    + the confidential reference posterior, timed once; a replicate cheaper than half a second is
    timed whole once, and what the parts miss is added as bookkeeping). Each replicate draws its own
    theta; the spec's is taken as typical."""
    per = _replicate_seconds(spec, methods, reference, reference_draws, mmd_draws, sbc_draws, rates)
    one = sum(per.values())
    worst = max(per, key=per.get) if per else "-"
    return Cost("calibration", float(replicates), "replicates", replicates * one,
                f"{replicates:,} replicates × {_duration(one)} each; {worst} costs the most "
                f"({_duration(per.get(worst, 0.0))} a replicate)")


def fit_calibration_to_budget(cost: Cost, max_seconds: float, *, min_replicates: int = 10) -> int | None:
    """The largest M <= the study's whose calibration ``cost`` (:func:`estimate_calibration_cost`) fits
    ``max_seconds`` (the cost is linear in M); None when even ``min_replicates`` do not (then a method's
    per-replicate cost is the problem, not M)."""
    replicates = int(cost.units)
    per = cost.seconds / max(replicates, 1)
    if per <= 0:
        return replicates
    m = min(replicates, int(max_seconds / per))
    return m if m >= min_replicates else None


# --------------------------------------------------------------------------- paper presets
def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _replicates_seconds(plan: dict, rates: dict) -> tuple[float, str]:
    """Seconds of the Ju et al. replicate releases (:func:`engine.studies.epsilon_replicates`, data
    fixed then fresh): per epsilon, :func:`estimate_cost` of the method on the problem prepared at that
    epsilon, x (fixed + fresh) replicates; a replicate estimated under ``PILOT_REPLICATE_S`` is also
    timed whole once (fresh data at the first epsilon: simulation, release, confidential means,
    quantiles), and what the estimate misses is added to every replicate as bookkeeping."""
    from .api import prepare
    from .studies.replicates import _replicate_unit
    from .studies.runner import spawn_seeds
    from .study import epsilon_spec

    count = plan["replicates"] + plan["fresh_replicates"]
    per = {float(e): estimate_cost(prepare(epsilon_spec(plan["spec"], float(e))), plan["method"], rates).seconds
           for e in plan["epsilons"]}
    first = float(plan["epsilons"][0])
    bookkeeping = 0.0
    if per[first] < PILOT_REPLICATE_S:
        model = prepare(plan["spec"]).model
        cfg = {"spec": plan["spec"], "method": plan["method"], "data": "fresh", "records": None,
               "theta": model.theta_from(plan["spec"]["data"]["simulate"]).tolist()}
        whole = _timed(lambda: _replicate_unit((cfg, first, 0, spawn_seeds(0, 1)[0])))
        bookkeeping = max(0.0, whole - per[first])
    seconds = sum(count * (v + bookkeeping) for v in per.values())
    detail = (f"{len(per)} ε values × {count:,} releases ({plan['replicates']:,} on fixed data, "
              f"{plan['fresh_replicates']:,} on fresh) × one {plan['method']['name']} chain of "
              f"{plan['method']['warmup'] + plan['method']['draws']:,} iterations")
    return seconds, detail


def _single_run_analysis(name: str, problem: Problem, plan: dict, kept: list) -> dict:
    """Seconds of what a single-run preset does with its draws, timed on small pieces: the summary
    table (ESS and R-hat, linear in the draws) timed on a naive run of 1,000 draws and scaled to every
    result's draws; for gong2020_count, the KS test of the ABC draws against the exact mixture's CDF
    (linear in the draws: one CDF evaluation per draw) timed on 1,000 points."""
    from .api import run_method
    from .diagnostics import summary

    probe = 1000
    naive = run_method(problem, {"name": "naive", "chains": 1, "draws": probe}, 1)
    per_draw = _timed(lambda: summary(naive, verdict=False)) / probe
    out = {"summaries": per_draw * float(sum(kept))}
    if name == "gong2020_count":
        from .methods.exact import exact_mixture

        mix = exact_mixture(problem)
        points = np.linspace(1.0, 80.0, probe)
        abc = next(r for r in plan["runs"] if r["name"] == "abc_rejection")
        out["ks_test"] = _timed(lambda: mix.cdf(0, points)) / probe * abc["chains"] * abc["draws"]
    return out


def estimate_preset_cost(name: str, quick: bool = True, rates: dict | None = None) -> Cost:
    """The cost of :func:`engine.studies.presets.run_preset` (``name``, ``quick``) before running it,
    from the preset's fixed settings (:func:`engine.studies.presets.preset_plan`):

    * ``gong2020_count``, ``eng_admissions``: the sum of :func:`estimate_cost` of its runs on the
      paper's problem (for the admissions table, + the confidential posterior, timed once);
    * ``bernstein2018_binomial``: the sum over its (n, epsilon) cells of
      :func:`estimate_calibration_cost` (M replicates x the methods + the reference posterior);
    * ``ju2022_loglinear``: the replicate releases, per epsilon (fixed + fresh) x the chain's
      :func:`estimate_cost`, plus the bookkeeping of one timed release.

    ``units`` are the preset's runs (single-run presets) or replicates; ``seconds`` are this machine's
    (:func:`machine_rates`) for the page's in-process run, one replicate after another."""
    from .studies.presets import PRESET_TITLES, preset_plan

    if name not in PRESET_TITLES:
        raise ValueError(f"preset = {name!r} is invalid: must be one of " + ", ".join(PRESET_TITLES))
    plan = preset_plan(name, bool(quick))
    rates = rates or machine_rates()
    size = "quick size" if quick else "full size"
    if name in ("gong2020_count", "eng_admissions"):
        from .api import confidential_posterior, prepare
        from .studies.presets import admissions_problem

        problem = prepare(plan["spec"]) if name == "gong2020_count" else admissions_problem(plan)
        parts = {r["name"]: estimate_cost(problem, r, rates).seconds for r in plan["runs"]}
        kept = [r["chains"] * r["draws"] for r in plan["runs"]]
        if "confidential_draws" in plan:
            parts["confidential"] = _timed(lambda: confidential_posterior(problem, seed=1,
                                                                          draws=plan["confidential_draws"]))
            kept.append(plan["confidential_draws"])
        runs = list(parts)
        parts.update(_single_run_analysis(name, problem, plan, kept))
        worst = max(parts, key=parts.get)
        return Cost(name, float(len(runs)), "runs", float(sum(parts.values())),
                    f"{size}: " + ", ".join(runs) + " and " + ", ".join(p.replace("_", " ") for p in parts
                                                                        if p not in runs)
                    + f"; {worst.replace('_', ' ')} costs the most ({_duration(parts[worst])})")
    if name == "bernstein2018_binomial":
        cells = {(n, e): estimate_calibration_cost(plan["spec"](n, e), plan["methods"], plan["replicates"],
                                                   reference_draws=plan["study"]["reference_draws"],
                                                   mmd_draws=plan["study"]["mmd_draws"], rates=rates).seconds
                 for n, e in plan["cells"]}
        worst = max(cells, key=cells.get)
        return Cost(name, float(len(cells) * plan["replicates"]), "replicates", float(sum(cells.values())),
                    f"{size}: {len(cells)} (n, ε) cells × {plan['replicates']:,} replicates of "
                    + ", ".join(m["name"] for m in plan["methods"]) + " + the confidential reference; the costliest "
                    f"cell is n = {worst[0]:,}, ε = {worst[1]:g} ({_duration(cells[worst])})")
    seconds, detail = _replicates_seconds(plan, rates)
    units = float(len(plan["epsilons"]) * (plan["replicates"] + plan["fresh_replicates"]))
    return Cost(name, units, "replicates", seconds, f"{size}: {detail}")
