"""What a study will cost before it starts: epsilon sweeps, calibration studies and the papers' presets.

Studies add up their runs: an epsilon sweep (:func:`estimate_sweep_cost`) costs the sum over its
cells (each epsilon's own problem, so ABC's acceptance and the exact posterior's work are priced at
that epsilon), and a calibration study (:func:`estimate_calibration_cost`) costs M replicates x (the
methods' costs on the study's problem + the confidential reference posterior, timed once; a cheap
replicate is timed whole once, so its bookkeeping counts too).
:func:`fit_sweep_to_budget` and :func:`fit_calibration_to_budget` give the largest study within a
budget: fewer epsilon points (then fewer draws), fewer replicates. A paper preset
(:func:`estimate_preset_cost`) is priced from its fixed settings (:func:`engine.studies.presets.preset_plan`)
with the same estimators: its single runs, its calibration studies, or its replicate releases.

Each sums :func:`engine.cost.estimate_cost` (the price of one run, below the API) over the runs the
study would make.
"""
from __future__ import annotations

import math
import time

import numpy as np

from ..api import confidential_posterior, prepare, run_method
from ..core.results import Problem
from ..core.validation import instance, positive, positive_int
from ..cost import Cost, duration, estimate_cost, fit_to_budget, listed, machine_rates, summary_seconds
from ..methods import METHOD_WORDS
from ..methods.exact import exact_mixture
from ..numerics.diagnostics import summary
from . import calibration, presets, replicates  # called through their modules: a study runs what is priced
from .runner import spawn_seeds
from .sweep import check_epsilons, epsilon_spec

__all__ = ["estimate_sweep_cost", "fit_sweep_to_budget", "estimate_calibration_cost", "fit_calibration_to_budget",
           "estimate_replicates_cost", "estimate_preset_cost"]

_SCALABLE = ("da_mcmc", "pseudo_marginal", "abc_rejection", "auto", "rjmcmc", "bernstein_sheldon")

#: the parts of a cost as its description names them: the methods in their words (engine.methods.METHOD_WORDS: "one
#: DA-MCMC chain", which read "one da_mcmc chain"), the confidential reference of a calibration study
_WORDS = {**METHOD_WORDS, "confidential": "the confidential reference"}


def _word(name: str) -> str:
    return _WORDS.get(name, name)


def _sweep_cells(spec: dict, epsilons, methods, rates: dict | None) -> dict:
    """{(epsilon, method name): seconds} of every cell; a cell the engine refuses costs nothing. The
    exact posterior is timed (:func:`estimate_cost`) at the grid's two ends only and every cell is
    priced at the larger (its work follows the noise scale, which is monotone in epsilon, so the dearest
    cell is normally at an end; a planning estimate), so pricing a sweep does not evaluate it at every
    epsilon."""
    grid = [float(e) for e in check_epsilons(epsilons)]  # before the machine's rates are measured
    rates = rates or machine_rates()
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
    """The cost of :func:`engine.epsilon_sweep` (``spec``, ``epsilons``, ``methods``): the sum of
    :func:`estimate_cost` over its cells, each on the problem prepared at its epsilon."""
    cells = _sweep_cells(spec, epsilons, methods, rates)
    worst = max(cells, key=cells.get) if cells else None
    detail = f"{len(epsilons)} ε values × {len(methods)} methods"  # a list: _sweep_cells checked it
    if worst is not None:
        detail += f"; the costliest cell is {_word(worst[1])} at ε = {worst[0]:g} ({duration(cells[worst])})"
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
    max_seconds = positive("max_seconds", max_seconds)  # as fit_to_budget: a budget of 0 or less fits nothing
    grid = [float(e) for e in check_epsilons(epsilons)]
    rates = rates or machine_rates()
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


PILOT_REPLICATE_S = 0.5  # replicates estimated below this are also timed whole (bookkeeping included)
PILOT_REPEATS = 2  # a timed pilot runs this often and keeps its fastest time (see _timed_warm)


def _timed_warm(fn, repeats: int = PILOT_REPEATS) -> float:
    """The fastest of ``repeats`` timed calls of ``fn``. The first call in a process pays one-time costs
    (numba dispatch and compilation of a new signature, scipy's lazy set-up, first-touch caches) that can
    be ten times a warm call's time (0.25 s against 0.02 s for the Calibration page's default replicate);
    timed once and multiplied by M, they made the estimate of a 400-replicate study 35.5 s where the study
    took a few. The study pays them once, and the pilot has already paid them."""
    return min(_timed(fn) for _ in range(max(1, repeats)))


def _method_seconds(problem: Problem, methods, reference: bool, reference_draws: int, rates: dict) -> dict:
    """Seconds per replicate of each method (:func:`estimate_cost`) and of the confidential reference (timed)."""
    per = {}
    for m in methods:
        table = {"name": m} if isinstance(m, str) else dict(m)
        try:
            per[table["name"]] = estimate_cost(problem, table, rates).seconds
        except ValueError:
            per[table["name"]] = 0.0  # the study records the refusal per row
    if reference and problem.records is not None:
        per["confidential"] = _timed(lambda: confidential_posterior(problem, seed=0, draws=reference_draws))
    return per


def _replicate_seconds(spec: dict, methods, reference: bool, reference_draws: int, mmd_draws: int, sbc_draws: int,
                       rates: dict | None) -> dict:
    """Seconds per replicate by part: each method's :func:`estimate_cost` on the spec's problem, the
    confidential reference timed once, and, for a cheap replicate (under ``PILOT_REPLICATE_S``), the
    rest of one timed replicate (simulation, quantiles, SBC ranks, MMD, R-hat) as ``bookkeeping``. The
    pilot replicate is timed warm (:func:`_timed_warm`) and the parts are priced again after it, so no
    one-time cost of a first call is counted M times."""
    rates = rates or machine_rates()
    problem = prepare(spec)
    per = _method_seconds(problem, methods, reference, reference_draws, rates)
    if sum(per.values()) < PILOT_REPLICATE_S:
        cfg = calibration.calibration_config(spec, methods, sbc_draws=sbc_draws, mmd_draws=mmd_draws,
                                             reference=reference, reference_draws=reference_draws)
        unit = (cfg, 0, spawn_seeds(0, 1)[0])
        whole = _timed_warm(lambda: calibration._calibration_unit(unit))
        per = _method_seconds(problem, methods, reference, reference_draws, rates)  # now warm too
        per["bookkeeping"] = max(0.0, whole - sum(per.values()))
    return per


def estimate_calibration_cost(spec: dict, methods, replicates: int, *, reference: bool = True,
                              reference_draws: int = 2000, mmd_draws: int = 300, sbc_draws: int = 99,
                              rates: dict | None = None) -> Cost:
    """The cost of :func:`engine.studies.calibration_study` (same keywords): M x (the sum of
    :func:`estimate_cost` of every method on the problem ``spec`` prepares, with its simulated records,
    + the confidential reference posterior, timed once; a replicate cheaper than half a second is
    timed whole once, and what the parts miss is added as bookkeeping). Each replicate draws its own
    theta; the spec's is taken as typical."""
    replicates = positive_int("replicates", replicates, 1, 10_000_000)  # as calibration_study takes it
    per = _replicate_seconds(spec, methods, reference, reference_draws, mmd_draws, sbc_draws, rates)
    one = sum(per.values())
    worst = max(per, key=per.get) if per else "-"
    return Cost("calibration", float(replicates), "replicates", replicates * one,
                f"{replicates:,} replicates × {duration(one)} each; {_word(worst)} costs the most "
                f"({duration(per.get(worst, 0.0))} a replicate)")


def fit_calibration_to_budget(cost: Cost, max_seconds: float, *, min_replicates: int = 10) -> int | None:
    """The largest M <= the study's whose calibration ``cost`` (:func:`estimate_calibration_cost`) fits
    ``max_seconds`` (the cost is linear in M); None when even ``min_replicates`` do not (then a method's
    per-replicate cost is the problem, not M)."""
    instance("cost", cost, Cost, "must be the Cost that engine.estimate_calibration_cost returns")
    max_seconds = positive("max_seconds", max_seconds)  # as fit_sweep_to_budget ("x" was a TypeError)
    replicates = int(cost.units)
    per = cost.seconds / max(replicates, 1)
    if per <= 0:
        return replicates
    m = min(replicates, int(max_seconds / per))
    return m if m >= min_replicates else None


def estimate_replicates_cost(spec: dict, epsilons, replicates_per_epsilon: int, method: dict,
                             rates: dict | None = None) -> Cost:
    """The cost of :func:`engine.studies.epsilon_replicates` on fixed data (``spec``'s records): per epsilon,
    R x :func:`estimate_cost` of ``method`` on the problem prepared at that epsilon (a fresh release costs
    what the sweep's one release costs), + per replicate the bookkeeping of one timed replicate at the
    grid's first epsilon when that replicate is estimated under ``PILOT_REPLICATE_S``."""
    rates = rates or machine_rates()
    grid = [float(e) for e in epsilons]
    count = int(replicates_per_epsilon)
    per = {}
    for e in grid:
        try:
            per[e] = estimate_cost(prepare(epsilon_spec(spec, e)), dict(method), rates).seconds
        except ValueError:
            per[e] = 0.0  # the study records the refusal per row
    bookkeeping = 0.0
    if grid and per[grid[0]] < PILOT_REPLICATE_S:
        problem = prepare(spec)
        if problem.records is not None:
            cfg = {"spec": spec, "method": dict(method), "data": "fixed", "records": problem.records.tolist(),
                   "theta": [math.nan] * len(problem.model.param_names)}
            whole = _timed_warm(lambda: replicates._replicate_unit((cfg, grid[0], 0, spawn_seeds(0, 1)[0])))
            bookkeeping = max(0.0, whole - per[grid[0]])
    seconds = sum(count * (v + bookkeeping) for v in per.values())
    return Cost("epsilon_replicates", float(count * len(grid)), "releases", seconds,
                f"{len(grid)} ε values × {count:,} fresh releases × one {_word(method['name'])} run each")


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
    count = plan["replicates"] + plan["fresh_replicates"]
    per = {float(e): estimate_cost(prepare(epsilon_spec(plan["spec"], float(e))), plan["method"], rates).seconds
           for e in plan["epsilons"]}
    first = float(plan["epsilons"][0])
    bookkeeping = 0.0
    if per[first] < PILOT_REPLICATE_S:
        model = prepare(plan["spec"]).model
        cfg = {"spec": plan["spec"], "method": plan["method"], "data": "fresh", "records": None,
               "theta": model.theta_from(plan["spec"]["data"]["simulate"]).tolist()}
        whole = _timed_warm(lambda: replicates._replicate_unit((cfg, first, 0, spawn_seeds(0, 1)[0])))
        bookkeeping = max(0.0, whole - per[first])
    seconds = sum(count * (v + bookkeeping) for v in per.values())
    detail = (f"{len(per)} ε values × {count:,} releases ({plan['replicates']:,} on fixed data, "
              f"{plan['fresh_replicates']:,} on fresh) × one {_word(plan['method']['name'])} chain of "
              f"{plan['method']['warmup'] + plan['method']['draws']:,} iterations")
    return seconds, detail


def _single_run_analysis(name: str, problem: Problem, plan: dict, kept: list) -> dict:
    """Seconds of what a single-run preset does with its draws, timed on small pieces: the summary
    table (ESS and R-hat, linear in the draws) timed on a naive run of 1,000 draws (computed afresh, not the
    summaries' memo) and scaled to the draws in ``kept`` (those whose summary :func:`estimate_cost` has not priced);
    for gong2020_count, the KS test of the ABC draws against the exact mixture's CDF
    (linear in the draws: one CDF evaluation per draw) timed on 1,000 points."""
    probe = 1000
    naive = run_method(problem, {"name": "naive", "chains": 1, "draws": probe}, 1)
    per_draw = _timed(lambda: summary(naive, verdict=False, memo=False)) / probe
    out = {"summaries": per_draw * float(sum(kept))}
    if name == "gong2020_count":
        mix = exact_mixture(problem)
        points = np.linspace(1.0, 80.0, probe)
        abc = next(r for r in plan["runs"] if r["name"] == "abc_rejection")
        out["ks_test"] = _timed(lambda: mix.cdf(0, points)) / probe * abc["chains"] * abc["draws"]
    return out


#: the parts of a single-run preset's cost as its description names them
_PART_WORDS = {**METHOD_WORDS, "ks_test": "KS test", "confidential": "confidential-data posterior"}


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
    if name not in presets.PRESET_TITLES:
        raise ValueError(f"preset = {name!r} is invalid: must be one of " + ", ".join(presets.PRESET_TITLES))
    plan = presets.preset_plan(name, bool(quick))
    rates = rates or machine_rates()
    size = "quick size" if quick else "full size"
    if name in ("gong2020_count", "eng_admissions"):
        problem = prepare(plan["spec"]) if name == "gong2020_count" else presets.admissions_problem(plan)
        parts = {r["name"]: estimate_cost(problem, r, rates).seconds for r in plan["runs"]}
        # the draws whose summary estimate_cost has not priced already (a chain's is in its run's price)
        kept = [r["chains"] * r["draws"] for r in plan["runs"] if not summary_seconds(problem, r, rates)]
        if "confidential_draws" in plan:
            parts["confidential"] = _timed(lambda: confidential_posterior(problem, seed=1,
                                                                          draws=plan["confidential_draws"]))
            kept.append(plan["confidential_draws"])
        runs = list(parts)
        parts.update(_single_run_analysis(name, problem, plan, kept))
        worst = max(parts, key=parts.get)
        def words(names):  # each as a person writes it, listed
            return listed(_PART_WORDS.get(v, v.replace("_", " ")) for v in names)
        # "the summaries cost", "the KS test costs", "the OPS costs" (a plural part, not a key ending in s)
        verb = "cost" if worst == "summaries" else "costs"
        return Cost(name, float(len(runs)), "runs", float(sum(parts.values())),
                    f"{size}: the runs {words(runs)}, then the {words([p for p in parts if p not in runs])}; "
                    f"the {words([worst])} {verb} the most ({duration(parts[worst])})")
    if name == "bernstein2018_binomial":
        cells = {(n, e): estimate_calibration_cost(plan["spec"](n, e), plan["methods"], plan["replicates"],
                                                   reference_draws=plan["study"]["reference_draws"],
                                                   mmd_draws=plan["study"]["mmd_draws"], rates=rates).seconds
                 for n, e in plan["cells"]}
        worst = max(cells, key=cells.get)
        return Cost(name, float(len(cells) * plan["replicates"]), "replicates", float(sum(cells.values())),
                    f"{size}: {len(cells)} (n, ε) cells × {plan['replicates']:,} replicates of "
                    + ", ".join(_word(m["name"]) for m in plan["methods"])
                    + f" + the confidential reference; the costliest cell is n = {worst[0]:,}, ε = {worst[1]:g} "
                    f"({duration(cells[worst])})")
    seconds, detail = _replicates_seconds(plan, rates)
    units = float(len(plan["epsilons"]) * (plan["replicates"] + plan["fresh_replicates"]))
    return Cost(name, units, "replicates", seconds, f"{size}: {detail}")
