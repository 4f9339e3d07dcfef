"""Cached wrappers around the engine: the only place the app calls engine functions that compute.

Caching
    ``st.cache_data`` keys every run on the canonical JSON of the spec and of the ``[method]``
    table, so the Compare, Privacy budget and Diagnostics pages share runs. A
    :class:`engine.Result` holds read-only ``MappingProxyType`` fields, which cannot be pickled, so
    cached functions return a plain dict and :func:`_from_plain` rebuilds the Result outside the
    cache. Prepared problems are immutable and go through ``st.cache_resource`` (no copy).

Progress
    Each run opens an ``st.status`` box; the cached function draws an ``st.progress`` bar in it and
    passes the engine an ``on_progress(done, total)`` callback that moves the bar. Streamlit replays the
    bar on a cache hit; the box's final label (the run log line) is set outside the cache, so a hit
    says "(cached)": computed once, by whichever session asked first (the caches are shared and
    Streamlit computes one key once, other askers wait for it). Every cache has ``max_entries`` and
    a ``ttl`` where its entries are a session's results, and the caches of draws a ``max_size`` (pickled
    bytes: one run may hold 16 chains × 10⁷ draws), so a long day of use stays bounded.

Errors
    The engine raises ``ValueError`` naming the field; a failed method run is cached as its
    message (``MethodRun.error``) so the page can say why quietly and keep the other methods.
"""
from __future__ import annotations

import json
import math
import os
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd
import streamlit as st

import engine
from engine.data import load_records_csv
from engine.sample_size import make_size_mechanism, make_size_prior
from engine.spec import build_mechanism, validate_method as _validate_method
from engine.study import epsilon_spec, epsilon_sweep, smallest_epsilon_meeting

from .params.labels import METHOD_LABELS
from .params.scenario import UNKNOWN_N_MODELS, Scenario
from .params.spec import mechanism_table, method_settings, model_table, n_mechanism_table, to_spec_dict

__all__ = [
    "MethodRun",
    "Prepared",
    "METHOD_LABELS",
    "spec_json",
    "check_model",
    "describe_mechanism",
    "describe_size_mechanism",
    "validate_method",
    "n_pmf",
    "prepare",
    "run_method",
    "run_methods",
    "confidential",
    "parse_upload",
    "netcdf_bytes",
    "Sweep",
    "sweep",
    "sweep_key",
    "stopped_sweep",
    "forget_stopped_sweep",
    "SessionHandover",
    "smallest_epsilon",
]



# --------------------------------------------------------------------------- records
@dataclass(frozen=True)
class MethodRun:
    """One method's outcome: a Result with its summary table, or the engine's message."""

    method: str
    result: engine.Result | None = None
    summary: pd.DataFrame | None = None
    error: str | None = None
    convergence: Mapping[str, Any] | None = None  # engine.diagnostics.Convergence.as_dict()
    over_budget: Mapping[str, Any] | None = None  # not run: seconds, detail, budget and the settings that fit

    @property
    def ok(self) -> bool:
        return self.result is not None

    @property
    def stalled(self) -> bool:
        """An MCMC run whose convergence verdict failed (its numbers must not pass unflagged)."""
        v = self.convergence or {}
        return bool(v.get("applicable")) and not v.get("converged", True)


@dataclass(frozen=True)
class Prepared:
    """What the page shows about a prepared scenario."""

    s_dp: tuple[float, ...]
    true_params: Mapping[str, Any] | None
    has_records: bool
    mechanism_text: str
    param_names: tuple[str, ...]
    n: int
    epsilon: float | None
    exact_available: bool
    n_dp: float | None = None  # the released noisy size (unknown n); n is then the plug-in round(n_dp)
    n_true: int | None = None  # the true size behind n_dp when the app holds the records (simulation, CSV)
    model_name: str = ""
    supported_methods: tuple[str, ...] | None = None  # the model's own list (model.methods); None: all

    @property
    def unknown_n(self) -> bool:
        return self.n_dp is not None

    def unavailable_reason(self, method: str) -> str | None:
        """Why a method cannot run on this scenario, or None when it can."""
        if self.supported_methods is not None and method not in self.supported_methods:
            return (f"not available for the {self.model_name} model (it supports "
                    + ", ".join(METHOD_LABELS.get(m, m) for m in self.supported_methods) + ")")
        if method == "rjmcmc" and not self.unknown_n:
            return "needs an unknown sample size (set Sample size to unknown in the sidebar)"
        if method == "ops" and not self.has_records:
            return "needs the confidential records (simulate or upload a CSV)"
        if method == "exact" and not self.exact_available:
            return "no closed form for this model and mechanism"
        return None

    def runnable(self, methods) -> list[str]:
        """The methods, in the order given, that can run on this scenario."""
        return [m for m in methods if self.unavailable_reason(m) is None]


def spec_json(spec: Mapping[str, Any]) -> str:
    """Canonical JSON (sorted keys) so equal specs share a cache entry."""
    return json.dumps(spec, sort_keys=True, separators=(",", ":"))


def _plain(value):
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _to_plain(result: engine.Result) -> dict:
    return {
        "method": result.method,
        "param_names": tuple(result.param_names),
        "draws": np.array(result.draws),
        "s_dp": np.array(result.s_dp),
        "sample_stats": {k: np.array(v) for k, v in result.sample_stats.items()},
        "info": _plain(result.info),
        "density": None if result.density is None else
        {k: (np.array(g), np.array(p)) for k, (g, p) in result.density.items()},
    }


def _from_plain(d: Mapping[str, Any]) -> engine.Result:
    return engine.Result(**d)


def _run_record(method: str, payload: Mapping[str, Any]) -> MethodRun:
    if "error" in payload:
        return MethodRun(method=method, error=payload["error"])
    summary = pd.DataFrame(payload["summary"]["data"], index=payload["summary"]["index"],
                           columns=payload["summary"]["columns"])
    summary.attrs["convergence"] = payload["convergence"]
    return MethodRun(method=method, result=_from_plain(payload["result"]), summary=summary,
                     convergence=payload["convergence"])


def _payload(result: engine.Result) -> dict:
    table = engine.summary(result)
    return {"result": _to_plain(result), "summary": table.to_dict(orient="split"),
            "convergence": table.attrs["convergence"]}


# --------------------------------------------------------------------------- progress
class _Progress:
    """``on_progress(done, total)`` that moves an ``st.progress`` bar and stops the run when the session
    moves on.

    The bar moves at most every 2% or every 0.25 s. Touching it is also where Streamlit tells a script
    run that a newer one was requested (a new input, the Stop button): it raises its rerun/stop signal
    there. The callback catches that signal, keeps it in ``interrupt`` and returns ``False``, so the
    engine stops at its next block (:mod:`engine.chains`) instead of finishing a run nobody waits for;
    :func:`_run_cached` then re-raises the signal, so the stopped run is never cached and the newer run
    starts at once (preemption, not queueing).
    """

    def __init__(self, bar, label: str):
        self.bar, self.label = bar, label
        self.owner = threading.get_ident()
        self.last = -1.0
        self.last_time = time.monotonic()
        self.interrupt: BaseException | None = None

    def text(self, done: int, total: int) -> str:
        return f"{self.label}: {done:,} / {total:,}"

    def __call__(self, done: int, total: int) -> bool | None:
        if self.interrupt is not None:
            return False
        if threading.get_ident() != self.owner or total <= 0:
            return None  # Streamlit elements may only be touched from the script thread
        frac = min(max(done / total, 0.0), 1.0)
        now = time.monotonic()
        if frac - self.last < 0.02 and frac < 1.0 and now - self.last_time < 0.25:
            return None
        self.last, self.last_time = frac, now
        try:
            self.bar.progress(frac, text=self.text(done, total))
        except BaseException as signal:  # noqa: BLE001 - Streamlit's StopException / RerunException
            self.interrupt = signal
            return False
        return None


# --------------------------------------------------------------------------- work budget
RESULT_TTL_S = 3600  # cached runs and studies: a class's session; memory is freed after it
BUDGETED_METHODS = frozenset({"da_mcmc", "pseudo_marginal", "abc_rejection", "auto", "rjmcmc"})
DEFAULT_WORK_BUDGET_S = 20.0


def work_budget_s() -> float | None:
    """Seconds of work one run may take on this server: ``DPL_WORK_BUDGET_S`` in the environment, else
    ``work_budget_s`` in ``.streamlit/secrets.toml``, else 20. ``0`` or ``none`` switches it off."""
    raw = os.environ.get("DPL_WORK_BUDGET_S")
    if raw is None:
        try:
            raw = st.secrets.get("work_budget_s")
        except Exception:  # noqa: BLE001 - no secrets file is the normal case
            raw = None
    if raw is None:
        return DEFAULT_WORK_BUDGET_S
    if str(raw).strip().lower() in ("0", "none", "off", ""):
        return None
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"work budget DPL_WORK_BUDGET_S = {raw!r} is invalid: must be a number of seconds "
                         "(or 0 / none to switch it off)") from None
    return value if value > 0 else None


@st.cache_data(show_spinner=False, max_entries=512, ttl=3600)
def _cost_cached(spec_text: str, settings_text: str, budget: float) -> dict:
    problem, settings = _problem(spec_text), json.loads(settings_text)
    cost = engine.estimate_cost(problem, settings)
    fit = engine.fit_to_budget(problem, settings, budget) if cost.seconds > budget else None
    return {"seconds": cost.seconds, "units": cost.units, "unit": cost.unit, "detail": cost.detail, "fit": fit}


# --------------------------------------------------------------------------- validation stages
def _checked_model(scenario: Scenario, records=None):
    """The engine's model for the [model] table (with an unknown n: the prior on n is checked, and a
    typed release's missing n is stood in by the widget's n, which only the full spec replaces)."""
    table = model_table(scenario, records)
    n_prior = table.pop("n_prior", None)
    if n_prior is not None:
        make_size_prior(n_prior)
        if scenario.model not in UNKNOWN_N_MODELS:
            raise ValueError(f"model.n_prior = {n_prior!r} is invalid: {scenario.model} has fixed-n tables and does "
                             "not support an unknown n; use " + ", ".join(UNKNOWN_N_MODELS))
        table.setdefault("n", max(int(scenario.n), 1))
    return engine.make_model(table["name"], table)


def check_model(scenario: Scenario, records=None) -> None:
    """Raise the engine's ValueError if the [model] table is invalid."""
    _checked_model(scenario, records)


def describe_mechanism(scenario: Scenario, records=None) -> str:
    """The mechanism's own description (noise scale and guarantee); raises ValueError. With an
    unknown n the default sensitivity is the unbounded (add/delete one record) one."""
    return build_mechanism(mechanism_table(scenario), _checked_model(scenario, records),
                           unbounded=scenario.unknown_n).describe()


def describe_size_mechanism(scenario: Scenario) -> str:
    """The [n_mechanism]'s description (noise on the released size); raises ValueError."""
    return make_size_mechanism(n_mechanism_table(scenario)).describe()


def n_pmf(result: engine.Result) -> tuple[np.ndarray, np.ndarray]:
    """The posterior pmf of n from an RJMCMC result (engine.n_pmf)."""
    return engine.n_pmf(result)


def validate_method(settings: Mapping[str, Any]) -> dict:
    """The engine's check of a [method] table; raises ValueError naming the field."""
    return _validate_method(settings)


@st.cache_resource(show_spinner=False, max_entries=64, ttl=RESULT_TTL_S)
def _problem(spec_text: str) -> engine.Problem:
    return engine.prepare(json.loads(spec_text))


def prepare(spec_text: str) -> Prepared:
    """Validate and prepare a spec (simulation / upload / release); raises ValueError."""
    problem = _problem(spec_text)
    return Prepared(
        s_dp=tuple(float(v) for v in problem.s_dp),
        true_params=None if problem.true_params is None else dict(problem.true_params),
        has_records=problem.records is not None,
        mechanism_text=problem.mechanism.describe(),
        param_names=tuple(problem.model.param_names),
        n=int(problem.model.n),
        epsilon=getattr(problem.mechanism, "epsilon", None),
        exact_available=engine.has_closed_form(problem),
        n_dp=None if problem.unknown_n is None else float(problem.unknown_n.n_dp),
        n_true=None if problem.unknown_n is None or problem.records is None else int(problem.records.shape[0]),
        model_name=str(getattr(problem.model, "name", "")),
        supported_methods=None if getattr(problem.model, "methods", None) is None else tuple(problem.model.methods),
    )


# --------------------------------------------------------------------------- method runs
_fresh = threading.local()  # set by the body of _run_cached: this call computed (a cache miss)


@st.cache_data(show_spinner=False, max_entries=256, max_size="1GiB", ttl=RESULT_TTL_S)
def _run_cached(spec_text: str, settings_text: str) -> dict:
    """One run and its log line. Called inside the caller's ``st.status`` box: the progress bar made here
    is replayed into that box on a cache hit, and the caller sets the box's final label (a status
    update made in here would not be replayed, leaving a hit's box "running…" for ever)."""
    _fresh.value = True
    settings = json.loads(settings_text)
    seed = json.loads(spec_text)["seed"]
    label = METHOD_LABELS[settings["name"]]
    bar = st.progress(0.0, text=label)
    t0 = time.perf_counter()
    progress = _Progress(bar, label)
    try:
        result = engine.run_method(_problem(spec_text), settings, seed, on_progress=progress)
    except ValueError as exc:
        return {"error": str(exc), "log": f"{label}: not run — {exc}"}
    except engine.Cancelled:
        if progress.interrupt is not None:
            raise progress.interrupt from None
        raise
    if progress.interrupt is not None:  # stopped for a newer run: never cache a partial result
        raise progress.interrupt
    bar.progress(1.0, text=f"{label}: done")
    size = f"estimate after {result.info.get('iterations', 0)} iterations" if result.info.get("estimator") else \
        f"{result.draws.shape[0]} × {result.draws.shape[1]:,} draws"
    return {**_payload(result), "log": f"{label}: {size} in {time.perf_counter() - t0:.2f} s"}


def _run_logged(spec_text: str, settings_text: str, name: str) -> dict:
    """:func:`_run_cached` in a status box whose label ends as the run's log line; a result another
    run computed earlier (this session's or another's: the cache is shared) says "(cached)"."""
    with st.status(f"{METHOD_LABELS[name]}: running…", expanded=False) as status:
        _fresh.value = False
        payload = _run_cached(spec_text, settings_text)
        cached = "" if _fresh.value else " (cached)"
        status.update(label=payload["log"] + cached, state="error" if "error" in payload else "complete",
                      expanded=False)
    return payload


def run_method(spec_text: str, settings: Mapping[str, Any]) -> MethodRun:
    """Run (or fetch from the cache) one method on one spec, unless its estimated cost is over the
    server's work budget (:func:`work_budget_s`): then it is not run and ``over_budget`` says what it
    would cost and which settings fit."""
    try:
        _problem(spec_text)
    except ValueError as exc:
        return MethodRun(method=settings["name"], error=str(exc))
    budget = work_budget_s()
    self_limited = settings["name"] == "abc_rejection" and settings.get("max_seconds", math.inf) <= budget \
        if budget is not None else True  # ABC stops itself at its own time limit: no pilot needed
    if budget is not None and settings["name"] in BUDGETED_METHODS and not self_limited:
        try:
            cost = _cost_cached(spec_text, spec_json(settings), budget)
        except ValueError as exc:
            return MethodRun(method=settings["name"], error=str(exc))
        if cost["seconds"] > budget:
            return MethodRun(method=settings["name"], over_budget={**cost, "budget": budget})
    return _run_record(settings["name"], _run_logged(spec_text, spec_json(settings), settings["name"]))


def scenario_key(scenario: Scenario, records=None) -> str:
    """The canonical spec JSON of a scenario: what the Stop button remembers as stopped."""
    return spec_json(to_spec_dict(scenario, records))


def run_methods(scenario: Scenario, records=None, methods: Sequence[str] | None = None) -> dict[str, MethodRun]:
    """Every switched-on method of the scenario, in the order of ``scenario.methods``."""
    text = spec_json(to_spec_dict(scenario, records))
    chosen = scenario.methods if methods is None else methods
    return {m: run_method(text, method_settings(scenario, m)) for m in chosen}


@st.cache_data(show_spinner=False, max_entries=64, max_size="256MiB", ttl=RESULT_TTL_S)
def _confidential_cached(spec_text: str) -> dict:
    problem = _problem(spec_text)
    try:
        result = engine.confidential_posterior(problem, seed=json.loads(spec_text)["seed"])
    except ValueError as exc:
        return {"error": str(exc)}
    return _payload(result)


def confidential(scenario: Scenario, records=None) -> MethodRun | None:
    """The posterior given the confidential records (simulation / upload), else None."""
    text = spec_json(to_spec_dict(scenario, records))
    if _problem(text).records is None:
        return None
    return _run_record("confidential", _confidential_cached(text))


# --------------------------------------------------------------------------- uploads and exports
@st.cache_data(show_spinner=False, max_entries=16, ttl=600)  # uploads: up to 50 MB each
def _parse_upload_cached(data: bytes, column: str | tuple | None) -> np.ndarray:
    return load_records_csv(data, list(column) if isinstance(column, tuple) else column or None, field="data.csv")


def parse_upload(data: bytes, column: str | Sequence[str] | None) -> np.ndarray:
    """Records of an uploaded CSV (engine rules: UTF-8, header, numbers, at most 50 MB). ``column``
    names one column, or is a list of columns for multi-column records (``y, x1..xK``: a 2-D array)."""
    if isinstance(column, (list, tuple)):
        return _parse_upload_cached(bytes(data), tuple(column))
    return _parse_upload_cached(bytes(data), (column or "").strip() or None)


def netcdf_bytes(result: engine.Result) -> bytes:
    """The InferenceData of a result as NetCDF bytes (called lazily by the download button)."""
    idata = engine.to_inference_data(result)
    fd, path = tempfile.mkstemp(suffix=".nc")
    os.close(fd)
    try:
        idata.to_netcdf(path)
        with open(path, "rb") as fh:
            return fh.read()
    finally:
        os.unlink(path)


def scenario_toml(scenario: Scenario, records=None) -> str:
    """The scenario as a TOML spec the CLI reads back (engine.spec_to_toml)."""
    return engine.spec_to_toml(engine.spec_from_dict(to_spec_dict(scenario, records)))


# --------------------------------------------------------------------------- budget sweep
@dataclass(frozen=True)
class Sweep:
    """An epsilon sweep (engine.study.epsilon_sweep): a tidy table (epsilon, method, param, mean,
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


def _sweep_payload(frame: pd.DataFrame, results: Mapping) -> dict:
    return {"table": frame.to_dict(orient="split"), "skipped": dict(frame.attrs.get("skipped", {})),
            "runs": [(eps, name, _payload(r)) for (eps, name), r in results.items()],
            "wall_time_s": float(frame.attrs.get("wall_time_s", 0.0)),
            "cells_done": int(frame.attrs.get("cells_done", 0)), "cells_total": int(frame.attrs.get("cells_total", 0))}


_stopped_sweep = threading.local()  # the cells a stopped sweep finished, handed to sweep() past the cache


@st.cache_data(show_spinner=False, max_entries=32, max_size="512MiB", ttl=RESULT_TTL_S)
def _sweep_cached(spec_text: str, grid_text: str, methods_text: str) -> dict:
    """The sweep, drawing its progress bar inside the caller's status box (replayed on a cache hit).
    A sweep stopped by the Stop button or a newer input re-raises Streamlit's signal, so it is never
    cached; what it finished goes to ``_stopped_sweep`` for the page to show as stopped."""
    _fresh.value = True
    grid, methods = json.loads(grid_text), json.loads(methods_text)
    bar = st.progress(0.0, text="runs")
    progress = _Progress(bar, "runs")
    frame, results = epsilon_sweep(json.loads(spec_text), grid, methods, on_progress=progress)
    if progress.interrupt is not None or frame.attrs.get("stopped"):
        _stopped_sweep.value = _sweep_payload(frame, results)
        raise progress.interrupt if progress.interrupt is not None else engine.Cancelled("sweep stopped")
    bar.progress(1.0, text=f"runs: {len(grid) * len(methods)} / {len(grid) * len(methods)}")
    return _sweep_payload(frame, results)


@st.cache_data(show_spinner=False, max_entries=256, ttl=3600)
def _sweep_cost_cached(spec_text: str, grid_text: str, methods_text: str, budget: float) -> dict:
    spec, grid, methods = json.loads(spec_text), json.loads(grid_text), json.loads(methods_text)
    cost = engine.estimate_sweep_cost(spec, grid, methods)
    fit = engine.fit_sweep_to_budget(spec, grid, methods, budget) if cost.seconds > budget else None
    return {"seconds": cost.seconds, "units": cost.units, "unit": cost.unit, "detail": cost.detail, "fit": fit}


def sweep_key(scenario: Scenario, records, grid: Sequence[float], methods: Sequence[str]) -> str:
    """What identifies one sweep: the Stop button remembers it as stopped."""
    return json.dumps([to_spec_dict(scenario, records), [float(g) for g in grid],
                       [method_settings(scenario, m) for m in methods]], sort_keys=True, default=str)


def _sweep_from(out: Mapping, log: str, stopped: bool = False) -> Sweep:
    split = out["table"]
    table = pd.DataFrame(split["data"], index=split["index"], columns=split["columns"])
    runs: dict[float, dict[str, MethodRun]] = {}
    for eps, name, payload in out["runs"]:
        runs.setdefault(float(eps), {})[name] = _run_record(name, payload)
    if not table.empty:  # each cell's convergence verdict travels with its numbers
        table["converged"] = [not runs.get(float(e), {}).get(m, MethodRun(m)).stalled
                              for e, m in zip(table["epsilon"], table["method"])]
    return Sweep(table=table, runs=runs, skipped=out["skipped"], log=log, stopped=stopped)


class SessionHandover:
    """What a run stopped in one session hands to that session's next run, outside session state.

    Streamlit (``runner.fastReruns``, the default) starts the newer run at once on a new thread and
    asks the older one to stop; the older run notices at its next progress update and unwinds while
    the newer one already runs, and a session-state write made while unwinding raises Streamlit's stop
    again and is lost. So the stopped run leaves what it finished here, keyed by session, and marks
    itself done; the newer run waits (at most ``wait_s``) for that mark before reading. Bounded: the
    last ``max_sessions`` sessions' entries are kept."""

    def __init__(self, max_sessions: int = 32, wait_s: float = 15.0):
        self.max_sessions, self.wait_s = max_sessions, wait_s
        self._lock = threading.Lock()
        self._done: dict[str, threading.Event] = {}
        self._kept: dict[str, Any] = {}

    @staticmethod
    def session() -> str:
        from streamlit.runtime.scriptrunner import get_script_run_ctx

        ctx = get_script_run_ctx(suppress_warning=True)
        return ctx.session_id if ctx is not None else "-"

    def start(self, session: str) -> threading.Event:
        """A run of ``session`` begins: set the returned event when it ends, however it ends."""
        done = threading.Event()
        with self._lock:
            self._done.pop(session, None)
            self._done[session] = done
            while len(self._done) > 8 * self.max_sessions:
                self._done.pop(next(iter(self._done)))
        return done

    def keep(self, session: str, value: Any) -> None:
        with self._lock:
            self._kept.pop(session, None)
            self._kept[session] = value
            while len(self._kept) > self.max_sessions:
                self._kept.pop(next(iter(self._kept)))

    def take(self, session: str) -> Any:
        """What the session's last stopped run kept (after waiting for it to finish unwinding), or None."""
        with self._lock:
            done = self._done.get(session)
        if done is not None:
            done.wait(self.wait_s)
        with self._lock:
            return self._kept.get(session)

    def forget(self, session: str) -> None:
        with self._lock:
            self._kept.pop(session, None)


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


def sweep(scenario: Scenario, records, grid: Sequence[float], methods: Sequence[str]) -> Sweep:
    """Run ``methods`` at every epsilon of ``grid`` on the scenario (engine.study.epsilon_sweep), unless
    its estimated cost (engine.estimate_sweep_cost) is over the server's work budget: then nothing runs
    and ``over_budget`` holds the cost and the largest grid and settings that fit.

    Raises the engine's ValueError if the scenario is invalid at some epsilon."""
    spec = to_spec_dict(scenario, records)
    text = spec_json(spec)
    for eps in grid:  # a bad grid value fails here, before anything runs
        _problem(spec_json(epsilon_spec(spec, float(eps))))
    chosen = [method_settings(scenario, m) for m in methods]
    grid_text, methods_text = json.dumps([float(g) for g in grid]), json.dumps(chosen)
    budget = work_budget_s()
    if budget is not None:
        cost = _sweep_cost_cached(text, grid_text, methods_text, budget)
        if cost["seconds"] > budget:
            return Sweep(table=pd.DataFrame(), runs={}, skipped={}, over_budget={**cost, "budget": budget})
    runs = len(grid) * len(chosen)
    with st.status(f"Sweeping {len(grid)} ε values × {len(chosen)} methods: running…", expanded=False) as status:
        _fresh.value, _stopped_sweep.value = False, None
        session = SWEEP_HANDOVER.session()
        done = SWEEP_HANDOVER.start(session)
        try:
            out = _sweep_cached(text, grid_text, methods_text)
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


def smallest_epsilon(sweep_: Sweep, param: str, target_sd: float, method: str = "exact") -> float | None:
    """Smallest epsilon on the grid whose ``method`` posterior sd of ``param`` is at most the target."""
    if sweep_.table.empty:
        return None
    return smallest_epsilon_meeting(sweep_.table, target_sd, method=method, param=param)
