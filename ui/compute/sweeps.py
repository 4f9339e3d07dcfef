"""The epsilon sweep of the Privacy budget page: every method at every epsilon of a grid.

A sweep runs in one ``st.status`` box with one progress bar; it is cached whole. While it runs, the box's
label (all a collapsed box shows) says how many runs are done and about how long is left
(:class:`_SweepProgress`). Stopped (the Stop button, a newer input), it is never cached: the cells it finished
are handed to the session's next run (:class:`~ui.compute.progress.SessionHandover`), which shows them marked
as stopped.

The sd figure's prior reference (:func:`prior_sds`) is each parameter's prior sd in closed form
(:func:`engine.studies.replicates.prior_sd`).

What a downloaded figure or table says about where it came from: :func:`scenario_words` (model, n, mechanism with
its sensitivity, data source: the figures' subtitle), :func:`sweep_stem` (the files' names, as Compare's
``ui.compute.files.download_stem``) and :func:`sweep_csv` (the sweep's table with each run's convergence verdict).
"""
from __future__ import annotations

import hashlib
import json
import math
import threading
import time
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd
import streamlit as st

import engine
from engine.cost import duration
from engine.mechanisms.additive import sensitivity_text
from engine.studies.cost import estimate_replicates_cost
from engine.studies.replicates import epsilon_replicates, prior_sd
from engine.studies.sweep import EpsilonAdvice, epsilon_for_target_sd, epsilon_spec, epsilon_sweep, exact_interval, \
    smallest_epsilon_meeting
from figures.labels import MECHANISM_LABELS, METHOD_LABELS, MODEL_LABELS, result_label

from ..params.scenario import Scenario
from ..params.spec import method_settings, to_spec_dict
from .budget import _sweep_cost_cached, work_budget_s
from .files import scenario_digest
from .problems import _problem
from .progress import SessionHandover, _fresh, _Progress
from .records import RESULT_TTL_S, MethodRun, _payload, _run_record, spec_json

__all__ = ["Sweep", "sweep", "sweep_key", "stopped_sweep", "forget_stopped_sweep", "smallest_epsilon",
           "SmallestEpsilon", "epsilon_advice", "exact_half_width", "fresh_releases", "spec_text_of", "grid_spec",
           "grid_spec_text", "prior_sds", "progress_words", "scenario_words", "sweep_stem", "sweep_csv",
           "SWEEP_CSV_COLUMNS", "grid_checked"]


@dataclass(frozen=True)
class Sweep:
    """An epsilon sweep (engine.epsilon_sweep): a tidy table (epsilon, method, param, mean,
    sd, q5, q95, r_hat, ess_bulk, wall_time_s), the runs behind it per epsilon, and the cells that
    did not run with the engine's reason. ``log`` is what happened (computed, from the cache, or
    stopped); ``stopped`` marks the cells a stopped sweep finished (never cached); ``over_budget``
    (then nothing ran) says what it would cost and which grid and settings fit."""

    table: pd.DataFrame
    runs: Mapping[float, Mapping[str, MethodRun]]
    skipped: Mapping[str, str]
    log: str = ""
    stopped: bool = False
    over_budget: Mapping[str, Any] | None = None

    @property
    def labels(self) -> dict[str, str]:
        """{method: its name as its runs call themselves} (:func:`figures.labels.result_label`), for the legends:
        "Exact (numerical)" where the exact posterior is a grid at every ε (the clamped models, a normal mean), as
        the Compare page names it, not "Exact (closed form)". A method whose runs name themselves differently (a
        mixture at one ε, a grid at another) is "Exact" for ``exact``, its label otherwise."""
        seen: dict[str, set[str]] = {}
        for by_method in self.runs.values():
            for method, run in by_method.items():
                if run.ok:
                    seen.setdefault(method, set()).add(result_label(run.result))
        return {m: next(iter(names)) if len(names) == 1 else ("Exact" if m == "exact" else METHOD_LABELS.get(m, m))
                for m, names in seen.items()}


def _sweep_payload(frame: pd.DataFrame, results: Mapping) -> dict:
    return {"table": frame.to_dict(orient="split"), "skipped": dict(frame.attrs.get("skipped", {})),
            "runs": [(eps, name, _payload(r)) for (eps, name), r in results.items()],
            "wall_time_s": float(frame.attrs.get("wall_time_s", 0.0)),
            "cells_done": int(frame.attrs.get("cells_done", 0)), "cells_total": int(frame.attrs.get("cells_total", 0))}


_stopped_sweep = threading.local()  # the cells a stopped sweep finished, handed to sweep() past the cache


def progress_words(done: int, total: int, elapsed_s: float, estimate_s: float | None) -> str:
    """"5 of 14 runs done, about 40 s left": where the sweep's cost estimate is known, the time left is the larger
    of what the estimate leaves (``estimate_s - elapsed_s``) and what the finished runs' pace predicts
    (``elapsed_s / done`` per run left). The estimate alone is off by a factor of a few on a busy server (the
    regression preset's sweep was estimated at 8 s and took 58 s), and the pace alone reads a first run that
    costs nothing (naive's) as the price of all; the larger of the two is never the first's mistake for long.
    A sweep past its estimate before any run finished says so instead of counting down below zero."""
    words = f"{done:,} of {total:,} runs done"
    if estimate_s is None or not estimate_s > 0 or done >= total:
        return words
    left = estimate_s - elapsed_s
    if done > 0:
        left = max(left, elapsed_s / done * (total - done))
    if left <= 0:
        return f"{words}, taking longer than its estimate of {duration(estimate_s)}"
    return f"{words}, about {duration(max(left, 1.0))} left"


class _BarAndLabel:
    """The sweep's progress bar and its status box's label moved together (the box is collapsed: its label is
    what one sees). A status update made inside the cached sweep is not replayed on a cache hit; the caller sets
    the box's final label either way."""

    def __init__(self, bar, status, prefix: str):
        self.bar, self.status, self.prefix = bar, status, prefix

    def progress(self, value: float, text: str) -> None:
        self.bar.progress(value, text=text)
        if self.status is not None:
            self.status.update(label=f"{self.prefix}: {text}")


class _SweepProgress(_Progress):
    """:class:`~ui.compute.progress._Progress` whose words are :func:`progress_words` (runs done, time left)."""

    def __init__(self, bar, estimate_s: float | None, clock=time.monotonic):
        super().__init__(bar, "runs")
        self.estimate_s, self.clock, self.start = estimate_s, clock, clock()

    def text(self, done: int, total: int) -> str:
        return progress_words(done, total, self.clock() - self.start, self.estimate_s)


@st.cache_data(show_spinner=False, max_entries=32, max_size="512MiB", ttl=RESULT_TTL_S)
def _sweep_cached(spec_text: str, grid_text: str, methods_text: str, _status=None, _label: str = "",
                  _estimate_s: float | None = None) -> dict:
    """The sweep, drawing its progress bar inside the caller's status box (replayed on a cache hit) and counting
    the runs done in the box's label (``_label``: what precedes the count), with the time left where
    ``_estimate_s`` (the sweep's cost estimate) is known; the underscored arguments are not part of the cache key.
    A sweep stopped by the Stop button or a newer input re-raises Streamlit's signal, so it is never
    cached; what it finished goes to ``_stopped_sweep`` for the page to show as stopped."""
    _fresh.value = True
    grid, methods = json.loads(grid_text), json.loads(methods_text)
    bar = st.progress(0.0, text="runs")
    progress = _SweepProgress(_BarAndLabel(bar, _status, _label), _estimate_s)
    frame, results = epsilon_sweep(json.loads(spec_text), grid, methods, on_progress=progress)
    if progress.interrupt is not None or frame.attrs.get("stopped"):
        _stopped_sweep.value = _sweep_payload(frame, results)
        raise progress.interrupt if progress.interrupt is not None else engine.Cancelled("sweep stopped")
    bar.progress(1.0, text=f"runs: {len(grid) * len(methods)} / {len(grid) * len(methods)}")
    return _sweep_payload(frame, results)


def spec_text_of(scenario: Scenario, records, epsilon: float | None = None) -> str:
    """The scenario's spec as canonical JSON (a cache key), at ``epsilon`` when given (the budget of its
    mechanism set to it, as the sweep does)."""
    spec = to_spec_dict(scenario, records)
    return spec_json(engine.epsilon_spec(spec, float(epsilon)) if epsilon is not None else spec)


#: the budget a grid computation's spec states in its cache key. Each computation over the grid (the sweep, its
#: cost, the exact advice, fresh releases, the frontier) sets the budget per grid value with engine.epsilon_spec,
#: which keeps only the mechanism's name, sensitivity, scheme and k: the sidebar's own ε changes none of their
#: results, so it is not in their keys ("Use ε in the sidebar" reran the whole sweep)
KEY_EPSILON = 1.0


def grid_spec(scenario: Scenario, records) -> dict:
    """The scenario's spec as every computation over an ε grid reads it: its budget set to :data:`KEY_EPSILON`."""
    return epsilon_spec(to_spec_dict(scenario, records), KEY_EPSILON)


def grid_spec_text(scenario: Scenario, records) -> str:
    """:func:`grid_spec` as canonical JSON (a cache key)."""
    return spec_json(grid_spec(scenario, records))


def sweep_key(scenario: Scenario, records, grid: Sequence[float], methods: Sequence[str]) -> str:
    """What identifies one sweep: the Stop button remembers it as stopped."""
    return json.dumps([grid_spec(scenario, records), [float(g) for g in grid],
                       [method_settings(scenario, m) for m in methods]], sort_keys=True, default=str)


def _sweep_from(out: Mapping, log: str, stopped: bool = False) -> Sweep:
    split = out["table"]
    table = pd.DataFrame(split["data"], index=split["index"], columns=split["columns"])
    runs: dict[float, dict[str, MethodRun]] = {}
    for eps, name, payload in out["runs"]:
        runs.setdefault(float(eps), {})[name] = _run_record(name, payload)
    if not table.empty:  # each cell's convergence verdict travels with its numbers
        table["converged"] = [not runs.get(float(e), {}).get(m, MethodRun(m)).untrusted
                              for e, m in zip(table["epsilon"], table["method"])]
    return Sweep(table=table, runs=runs, skipped=out["skipped"], log=log, stopped=stopped)


SWEEP_HANDOVER = SessionHandover()


def stopped_sweep(scenario: Scenario, records, grid: Sequence[float], methods: Sequence[str]) -> Sweep | None:
    """The cells this session's stopped sweep finished (marked stopped), if that sweep is this one."""
    kept = SWEEP_HANDOVER.take(SWEEP_HANDOVER.session())
    if not kept or kept["key"] != sweep_key(scenario, records, grid, methods):
        return None
    return _sweep_from(kept, f"Sweep stopped: {kept['cells_done']} of {kept['cells_total']} runs finished",
                       stopped=True)


def forget_stopped_sweep() -> None:
    """"Run again": drop what the stopped sweep kept."""
    SWEEP_HANDOVER.forget(SWEEP_HANDOVER.session())


@st.cache_data(show_spinner=False, max_entries=64, ttl=RESULT_TTL_S)
def grid_checked(spec_text: str, grid_text: str, _spec: Mapping[str, Any]) -> bool:
    """True once the scenario ``spec_text`` (its dict ``_spec``) prepares at every ε of ``grid_text`` (a JSON list);
    raises the engine's ValueError for the first that does not. Cached (a refusal is not): every rerun of the
    Privacy budget page asks, and each ε is a spec to encode and prepare, with an upload's records inline (the
    records' JSON once per grid value per rerun, where it is now once per scenario and grid)."""
    for eps in json.loads(grid_text):
        _problem(spec_json(epsilon_spec(_spec, float(eps))))
    return True


def sweep(scenario: Scenario, records, grid: Sequence[float], methods: Sequence[str]) -> Sweep:
    """Run ``methods`` at every epsilon of ``grid`` on the scenario (engine.epsilon_sweep), unless
    its estimated cost (engine.estimate_sweep_cost) is over the server's work budget: then nothing runs
    and ``over_budget`` holds the cost and the largest grid and settings that fit. The budget gates the
    estimate of auto's first attempts; each ε's fallback or rerun runs only if it fits in that ε's share of it
    (auto's ``max_seconds``), so the whole sweep stays within about twice the budget.

    Raises the engine's ValueError if the scenario is invalid at some epsilon."""
    spec = grid_spec(scenario, records)
    text = spec_json(spec)
    grid_text = json.dumps([float(g) for g in grid])
    grid_checked(text, grid_text, _spec=spec)  # a bad grid value fails here, before anything runs
    chosen = [method_settings(scenario, m) for m in methods]
    budget = work_budget_s()
    if budget is not None:  # auto's fallbacks and reruns in each cell within the cells' share of the budget
        chosen = [{**m, "max_seconds": budget / len(grid)} if m["name"] == "auto" and "max_seconds" not in m else m
                  for m in chosen]
    methods_text = json.dumps(chosen)
    estimate = None
    if budget is not None:
        cost = _sweep_cost_cached(text, grid_text, methods_text, budget)
        if cost["seconds"] > budget:
            return Sweep(table=pd.DataFrame(), runs={}, skipped={}, over_budget={**cost, "budget": budget})
        estimate = float(cost["seconds"])
    runs = len(grid) * len(chosen)
    label = f"Sweeping {len(grid)} ε values × {len(chosen)} methods"
    with st.status(f"{label}: {progress_words(0, runs, 0.0, estimate)}", expanded=False) as status:
        _fresh.value, _stopped_sweep.value = False, None
        session = SWEEP_HANDOVER.session()
        done = SWEEP_HANDOVER.start(session)
        try:
            out = _sweep_cached(text, grid_text, methods_text, _status=status, _label=label, _estimate_s=estimate)
        except BaseException:  # stopped (Stop button, newer input): hand over what finished, uncached
            kept = getattr(_stopped_sweep, "value", None)
            if kept is not None:
                SWEEP_HANDOVER.keep(session, {"key": sweep_key(scenario, records, grid, methods), **kept})
            raise
        finally:
            done.set()
        how = f"computed in {out['wall_time_s']:.2f} s" if _fresh.value else "from cache"
        log = f"Sweep: {runs} runs {how}"
        status.update(label=log, state="complete", expanded=False)
    return _sweep_from(out, log)


@dataclass(frozen=True)
class SmallestEpsilon:
    """:func:`smallest_epsilon`'s answer: ``epsilon``, the smallest grid value whose converged run meets the target
    (None if none does), and ``skipped``, the smaller grid values (all of them when ``epsilon`` is None) whose run
    met it but has not converged (R-hat > 1.01 or ESS < 400), so its sd is not to be trusted."""

    epsilon: float | None
    skipped: tuple[float, ...] = ()


def smallest_epsilon(sweep_: Sweep, param: str, target_sd: float, method: str = "exact") -> SmallestEpsilon:
    """Smallest epsilon on the grid whose ``method`` posterior sd of ``param`` is at most the target, among runs
    that have converged (the sweep table's ``converged``); the ones that met it unconverged below it are named."""
    table = sweep_.table
    if table.empty or not ((table["method"] == method) & (table["param"] == param)).any():
        return SmallestEpsilon(None)  # the method's runs all failed, or it was not swept: no epsilon known to meet it
    if "converged" not in table:
        return SmallestEpsilon(smallest_epsilon_meeting(table, target_sd, method=method, param=param))
    converged = table[table["converged"].astype(bool)]
    has = ((converged["method"] == method) & (converged["param"] == param)).any()
    best = smallest_epsilon_meeting(converged, target_sd, method=method, param=param) if has else None
    ours = table[(table["method"] == method) & (table["param"] == param) & ~table["converged"].astype(bool)]
    met = ours[ours["sd"] <= target_sd]["epsilon"]
    skipped = sorted({float(e) for e in met if best is None or float(e) < best})
    return SmallestEpsilon(best, tuple(skipped))


@st.cache_data(show_spinner=False, max_entries=256, ttl=RESULT_TTL_S)
def _advice_cached(spec_text: str, grid_text: str, target: float, param: str) -> dict | None:
    try:
        advice = epsilon_for_target_sd(json.loads(spec_text), json.loads(grid_text), target, param)
    except ValueError:
        return None  # no exact form for this scenario: the page answers from a sampler's sd, and says so
    return {**advice.__dict__, "sds": [[e, v] for e, v in advice.sds.items()]}


def epsilon_advice(scenario: Scenario, records, grid: Sequence[float], param: str, target: float) -> EpsilonAdvice | None:
    """The smallest epsilon of ``grid`` meeting the target sd, from the exact posterior
    (``engine.studies.sweep.epsilon_for_target_sd``); None where the scenario has no exact form.
    ``target`` must already be checked (> 0)."""
    out = _advice_cached(grid_spec_text(scenario, records), json.dumps([float(g) for g in grid]),
                         float(target), param)
    if out is None:
        return None
    return EpsilonAdvice(**{**out, "sds": {float(e): float(v) for e, v in out["sds"]}})


@st.cache_data(show_spinner=False, max_entries=128, ttl=RESULT_TTL_S)
def _interval_cached(spec_text: str, epsilon: float, param: str) -> list[float] | None:
    try:
        return list(exact_interval(json.loads(spec_text), epsilon, param))
    except ValueError:
        return None  # no exact form: the page says what its ± is instead


def exact_half_width(scenario: Scenario, records, epsilon: float, param: str) -> float | None:
    """Half the width of the exact posterior's 90% central interval (q5 to q95, no Monte Carlo error) of ``param``
    at ``epsilon`` (``engine.studies.sweep.exact_interval``); None where the scenario has no exact form. A skewed
    posterior's is not 1.645 sd (n = 1000 at ε = 0.01: 0.148, not 0.164)."""
    out = _interval_cached(grid_spec_text(scenario, records), float(epsilon), param)
    return None if out is None else (out[1] - out[0]) / 2


@st.cache_data(show_spinner=False, max_entries=128, ttl=RESULT_TTL_S)
def _prior_sds_cached(spec_text: str) -> dict:
    """{param: its prior sd} in closed form (engine.studies.replicates.prior_sd); a parameter whose prior has no
    finite variance (an inverse-gamma sigma^2 with shape <= 2) is left out."""
    model = _problem(spec_text).model
    return {name: float(sd) for name, sd in zip(model.param_names, prior_sd(model)) if math.isfinite(sd) and sd > 0}


def prior_sds(scenario: Scenario, records) -> dict[str, float]:
    """Each parameter's prior sd (its sd before any data), for the sd figure's reference line."""
    return dict(_prior_sds_cached(spec_json(to_spec_dict(scenario, records))))


@st.cache_data(show_spinner=False, max_entries=32, max_size="256MiB", ttl=RESULT_TTL_S)
def _replicates_cached(spec_text: str, grid_text: str, count: int, method_text: str) -> dict:
    """R fresh releases per epsilon on the fixed records (engine.studies.epsilon_replicates), with a
    progress bar; a run stopped by a newer input re-raises Streamlit's signal, so it is never cached."""
    bar = st.progress(0.0, text="releases")
    progress = _Progress(bar, "releases")
    table = epsilon_replicates(json.loads(spec_text), json.loads(grid_text), count, method=json.loads(method_text),
                               data="fixed", on_progress=progress)
    if progress.interrupt is not None:
        raise progress.interrupt
    bar.empty()
    return {"table": table.to_dict(orient="split")}


@st.cache_data(show_spinner=False, max_entries=128, ttl=3600)
def _replicates_cost_cached(spec_text: str, grid_text: str, count: int, method_text: str) -> dict:
    cost = estimate_replicates_cost(json.loads(spec_text), json.loads(grid_text), count, json.loads(method_text))
    return {"seconds": cost.seconds, "detail": cost.detail}


def fresh_releases(scenario: Scenario, records, grid: Sequence[float], count: int, method: str) -> dict:
    """``count`` fresh releases per epsilon of ``grid`` on the scenario's records, one ``method`` run each:
    ``{"table": DataFrame}`` (engine.studies.epsilon_replicates rows), or ``{"over_budget": {...}}`` (nothing
    ran) when the estimate is over the server's work budget."""
    spec = grid_spec(scenario, records)
    text, grid_text = spec_json(spec), json.dumps([float(g) for g in grid])
    method_text = json.dumps(method_settings(scenario, method), sort_keys=True)
    budget = work_budget_s()
    if budget is not None:
        cost = _replicates_cost_cached(text, grid_text, int(count), method_text)
        if cost["seconds"] > budget:
            return {"over_budget": {**cost, "budget": budget}}
    out = _replicates_cached(text, grid_text, int(count), method_text)["table"]
    return {"table": pd.DataFrame(out["data"], index=out["index"], columns=out["columns"])}


def scenario_words(scenario: Scenario, records, n: int) -> str:
    """The scenario a sweep's figure comes from, for its subtitle: "Beta-binomial (proportion θ), n = 100; Laplace
    noise, sensitivity 1; simulated records (truth 0.3, seed 3)"; the log-linear model's truth box is its π ("true π
    = 0.5, 0.5"), the regression's its β. No ε: the sweep varies it; a truth longer than 30 characters (many
    parameters), the log-linear model's p, or a typed release's, is left to the scenario's TOML and link."""
    mechanism = _problem(spec_text_of(scenario, records)).mechanism
    sensitivity = getattr(mechanism, "sensitivity", None)
    noise = MECHANISM_LABELS.get(scenario.mechanism, scenario.mechanism)
    noise += " noise" if scenario.mechanism != "randomized_response" else ""
    if sensitivity is not None and scenario.mechanism != "randomized_response":  # a coin per record: none
        l2 = "L2 " if scenario.mechanism in ("gaussian", "discrete_gaussian") else ""  # as the mechanism says it
        noise += f", {l2}sensitivity {sensitivity_text(float(sensitivity))}"
    # the truth box of a model of several parameters holds one vector of them: named, the log-linear model's π is not
    # its whole truth (p, a long list, is left to the TOML with any long truth)
    named = {"naive_bayes_loglinear": "true π = ", "linear_regression": "true β = "}.get(scenario.model, "truth ")
    truth = ("truth from the prior, " if scenario.model == "naive_bayes_loglinear" and scenario.from_prior
             else f"{named}{scenario.truth}, " if len(str(scenario.truth)) <= 30 else "")  # a long list: its link
    data = {"simulate": f"simulated records ({truth}seed {scenario.seed})",
            "csv": "uploaded records" + (f" (column {scenario.csv_column})" if scenario.csv_column else ""),
            "s_dp": f"the release s_dp = {scenario.s_dp} typed in" if len(str(scenario.s_dp)) <= 30
            else "a release s_dp typed in"}.get(scenario.data, scenario.data)
    return f"{MODEL_LABELS.get(scenario.model, scenario.model)}, n = {n:,}; {noise}; {data}"


def sweep_stem(scenario: Scenario, n: int, grid: Sequence[float], records=None) -> str:
    """The start of a Privacy budget download's name: model, mechanism, n, data source, the ε grid's ends and six hex
    digits of the scenario and the grid (:func:`ui.compute.files.scenario_digest`: another seed, truth or prior gave
    the same name), e.g. ``beta_binomial_laplace_n100_simulate_eps0.1-10_1a2b3c`` (Compare's names carry the one ε
    it runs at). An upload's ``records`` enter the digits too: the scenario does not hold them, and two uploads of
    the same size were one name."""
    span = f"eps{min(grid):g}-{max(grid):g}" if len(grid) > 1 else f"eps{grid[0]:g}"
    uploaded = () if scenario.data != "csv" or records is None else (
        hashlib.sha256(np.ascontiguousarray(records, dtype=float).tobytes()).hexdigest(),)
    digest = scenario_digest(scenario, tuple(float(g) for g in grid), *uploaded)
    return f"{scenario.model}_{scenario.mechanism}_n{n}_{scenario.data}_{span}_{digest}"


#: the sweep's CSV: one row per ε, method and parameter, each run's convergence verdict with its numbers
SWEEP_CSV_COLUMNS = ("epsilon", "method", "param", "mean", "sd", "q5", "q95", "r_hat", "ess_bulk", "converged")


def sweep_csv(sweep_: Sweep, mechanism: str | None = None) -> str:
    """The sweep's table as CSV (:data:`SWEEP_CSV_COLUMNS` that it has), sorted by parameter (in the model's order, as
    the runs list them), method and ε. For
    Gaussian noise (``mechanism``) a ``rho`` column after ``epsilon`` says the budget each row ran at, ρ = ε²/2
    (:func:`engine.studies.sweep.epsilon_spec`): the file's ε alone read as an (ε, δ) budget (round-trip audit s23).
    A ``method_name`` column after ``method`` gives the legends' name (:attr:`Sweep.labels`)."""
    table = sweep_.table
    columns = [c for c in SWEEP_CSV_COLUMNS if c in table]
    rows = table[columns]
    if "param" in rows:  # the model's order, as the runs list it (sorted by name, p[..] came before pi[..])
        rows = rows.assign(param=pd.Categorical(rows["param"], categories=list(dict.fromkeys(rows["param"])),
                                                ordered=True))
    rows = rows.sort_values([c for c in ("param", "method", "epsilon") if c in columns], kind="stable")
    if "param" in rows:
        rows = rows.assign(param=rows["param"].astype(str))
    if mechanism in ("gaussian", "discrete_gaussian") and "epsilon" in rows:
        rows.insert(rows.columns.get_loc("epsilon") + 1, "rho", rows["epsilon"] ** 2 / 2.0)
    if "method" in rows:  # the legends' name beside the CLI's id ("auto" is "Exact (best method)" on the page)
        names = sweep_.labels
        rows.insert(rows.columns.get_loc("method") + 1, "method_name",
                    rows["method"].map(lambda m: names.get(m, METHOD_LABELS.get(m, m))))
    return rows.to_csv(index=False)
