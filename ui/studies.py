"""Cached wrappers around engine.studies for the Calibration page (its session-state keys are in :mod:`ui.keys`).

Caching
    ``st.cache_data`` keys a calibration study on the canonical JSON of its inputs
    (:class:`CalibrationInputs`), so reopening the same study is instant; a preset is keyed on its
    name. Studies run in process (:class:`engine.studies.InlineExecutor`: the page's studies are
    sized for seconds, and a process pool would cost more to start than it saves) and each finished
    replicate moves an ``st.progress`` bar.

Work budget
    Before a requested study runs, :func:`over_budget` prices it (``engine.estimate_calibration_cost``:
    M replicates x the methods' costs + the reference posterior); above the server's work budget
    (:func:`ui.compute.budget.work_budget_s`) it does not run and the page offers the largest M that fits.

Stop and preemption
    The Run button sets ``keys.STUDY_REQUEST``; the rerun its click starts runs the study the boxes then hold
    (a value typed just before the click included), on that rerun only (a widget change never starts one). The
    Stop button beside the progress bar, or any newer input, triggers a rerun: Streamlit stops the script at the
    next progress update, ``run_units`` cancels what had not started, and the replicates that finished stay in a
    store directory keyed by the study. The study is then never cached; the page shows the finished replicates
    marked as stopped (:func:`finished_replicates`), and pressing Run again resumes from them.

Paper presets
    A preset runs at its quick size, once per server: its result is cached by name and shared by every
    session. A preset that already finished is shown at once on a click (**Show preset**), whatever
    its cost and with no budget check: the cache has no "peek", so :func:`preset_finished` reads a
    small server-wide registry of the presets this process finished (filled by the cached function
    itself, so only a complete run is registered; at most one entry per preset). Any other preset is
    priced first (:func:`preset_cost`: ``engine.studies.cost.estimate_preset_cost``); over the work budget the
    page draws no Run button (a click could only refuse) but the CLI command that produces it offline
    (:func:`preset_cli`) and the setting the operator can raise.
    Within budget it runs with a progress bar and a Stop button, as a study does; a stopped preset
    raises Streamlit's signal out of the cached function (``engine.studies.presets.PresetStopped``
    underneath), so nothing of it is kept or cached and Run starts it afresh. If the cache is ever
    cleared by hand the registry is not, so a registered preset would then be recomputed without a
    budget check.

Workers
    The page's studies run in the session's own thread (:class:`engine.studies.InlineExecutor`), never
    in a process pool: one study is one worker, and the chains inside a replicate run on at most
    ``DPL_CHAIN_THREADS`` threads (:func:`engine.core.chains.chain_threads`), the same cap as every other
    run, so thirty sessions studying at once do not oversubscribe a 2-core server.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, replace

import numpy as np
import pandas as pd
import streamlit as st

import engine
from engine.studies import InlineExecutor, calibration_study, calibration_summary, load_table
from engine.studies.cost import estimate_preset_cost
from engine.studies.presets import PRESET_TITLES, PresetResult, PresetStopped, run_preset

from figures.labels import MECHANISM_LABELS, MODEL_LABELS, TERM_HELP, format_p
from figures.studies import method_label, param_symbol

from .compute.budget import work_budget_s
from .compute.progress import SessionHandover, _Progress

__all__ = ["CalibrationInputs", "run_calibration", "run_preset_cached", "PRESET_TITLES", "over_budget",
           "finished_replicates", "study_executor", "preset_cost", "preset_over_budget", "preset_finished", "preset_cli",
           "wait_for_stopped_preset", "mmd_text", "summary_table",
           "replicate_csv", "summary_csv"]

#: priors of the calibration page's models (theta is drawn from them)
PRIORS = {"beta_binomial": {"a": 2.0, "b": 2.0}, "poisson_gamma": {"alpha": 4.0, "beta": 1.0},
          "dirichlet_multinomial": {"alpha": [2.0, 2.0, 2.0]}}
METHOD_SIZES = {"naive": {"chains": 1, "draws": 1000}, "exact": {"chains": 1, "draws": 1000, "grid_size": 10},
                "da_mcmc": {"chains": 2, "draws": 500, "warmup": 300},
                "pseudo_marginal": {"chains": 2, "draws": 500, "warmup": 300},
                "abc_rejection": {"chains": 1, "draws": 500, "max_seconds": 5}, "ops": {"truncation": 0.1}}


@dataclass(frozen=True)
class CalibrationInputs:
    """What the page's widgets say: model, mechanism, epsilon, n, methods and M."""

    model: str = "beta_binomial"
    mechanism: str = "laplace"
    epsilon: float = 0.2
    n: int = 50
    methods: tuple[str, ...] = ("naive", "exact", "da_mcmc")
    replicates: int = 100

    def spec(self) -> dict:
        mech = {"name": self.mechanism}
        if self.mechanism in ("gaussian", "discrete_gaussian"):
            mech["rho"] = self.epsilon**2 / 2.0
        else:
            mech["epsilon"] = self.epsilon
        simulate = {"beta_binomial": {"theta": 0.5}, "poisson_gamma": {"lam": 4.0},
                    "dirichlet_multinomial": {"p": [1 / 3, 1 / 3, 1 / 3]}}[self.model]
        return {"seed": 1, "model": {"name": self.model, "n": int(self.n), **PRIORS[self.model]}, "mechanism": mech,
                "data": {"simulate": simulate}}

    def method_tables(self) -> list[dict]:
        return [{"name": m, **METHOD_SIZES.get(m, {})} for m in self.methods]

    def key(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    def budget_text(self) -> str:
        """The budget as the study ran it: ε, and for Gaussian noise the ρ = ε²/2 it ran at: "ε = 1 (ρ = 0.5)"."""
        gaussian = self.mechanism in ("gaussian", "discrete_gaussian")
        return f"ε = {self.epsilon:g}" + (f" (ρ = {self.epsilon ** 2 / 2:g})" if gaussian else "")

    def stem(self) -> str:
        """The start of the study's files' names, which say which study they hold (every study's table was
        calibration.csv, and a second download overwrote the first): model, mechanism, budget, n and M, e.g.
        ``calibration_beta_binomial_gaussian_rho0.5_n50_M100``; Gaussian noise is named by the ρ it ran at."""
        gaussian = self.mechanism in ("gaussian", "discrete_gaussian")
        budget = f"rho{self.epsilon ** 2 / 2:g}" if gaussian else f"eps{self.epsilon:g}"
        return f"calibration_{self.model}_{self.mechanism}_{budget}_n{self.n}_M{self.replicates}"

    def words(self) -> str:
        """The study under a downloaded figure's title (the file leaves the page and its inputs): "Beta-binomial
        (proportion θ), n = 50 · Laplace noise, ε = 0.2 · 100 replicates, truth from the prior"."""
        return (f"{MODEL_LABELS.get(self.model, self.model)}, n = {self.n:,}; "
                f"{MECHANISM_LABELS.get(self.mechanism, self.mechanism)} noise, {self.budget_text()}; "
                f"{self.replicates:,} replicates, truth from the prior")


def _store(key: str) -> str:
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return os.path.join(tempfile.gettempdir(), "dpl-calibration", digest)


class _Bar:
    def __init__(self, bar):
        self.bar = bar

    def __call__(self, done, total):
        self.bar.progress(done / total if total else 1.0, text=f"replicates: {done} / {total}")


def study_executor() -> InlineExecutor:
    """The page's executor: the session's own thread (see Workers in the module docstring)."""
    return InlineExecutor()


def _inputs(key: str) -> CalibrationInputs:
    return CalibrationInputs(**{k: tuple(v) if isinstance(v, list) else v for k, v in json.loads(key).items()})


MMD_DRAWS = 200


@st.cache_data(show_spinner=False, max_entries=64, ttl=3600)
def _replicate_cost_cached(key: str) -> dict:
    """One replicate's cost (keyed without M, so a study and its fitted M are priced alike)."""
    inputs = _inputs(key)
    cost = engine.estimate_calibration_cost(inputs.spec(), inputs.method_tables(), 1, mmd_draws=MMD_DRAWS)
    return {"seconds": cost.seconds, "detail": cost.detail}


MIN_REPLICATES = 10  # the page's smallest M


def over_budget(inputs: CalibrationInputs) -> dict | None:
    """None when the study fits the server's work budget (or there is none); else its cost in seconds,
    the detail, the budget and ``fit``, the largest M that fits (None when even M = 10 does not)."""
    budget = work_budget_s()
    if budget is None:
        return None
    try:
        one = _replicate_cost_cached(replace(inputs, replicates=1).key())
    except ValueError:
        return None  # the study itself reports what is wrong
    m = inputs.replicates
    cost = engine.Cost("calibration", float(m), "replicates", m * one["seconds"],
                       f"{m:,} replicates × " + one["detail"].split(" × ", 1)[1])
    if cost.seconds <= budget:
        return None
    return {"seconds": cost.seconds, "detail": cost.detail, "budget": budget,
            "fit": engine.fit_calibration_to_budget(cost, budget, min_replicates=MIN_REPLICATES)}


def finished_replicates(inputs: CalibrationInputs) -> pd.DataFrame | None:
    """The replicates a stopped study finished (read from its store, never cached), or None. Waits for
    this session's stopped study to finish unwinding first (it writes its last replicates to the store
    as it stops, possibly while this newer run already runs: :class:`ui.compute.progress.SessionHandover`)."""
    STUDY_HANDOVER.take(STUDY_HANDOVER.session())
    store = _store(inputs.key())
    if not os.path.isdir(store) or not any(f.startswith("part-") for f in os.listdir(store)):
        return None
    table = load_table(store)
    return table.sort_values(["replicate", "method", "param"], kind="stable").reset_index(drop=True)


@st.cache_data(show_spinner=False, max_entries=16, ttl=3600)
def _calibration_cached(key: str) -> dict:
    inputs = _inputs(key)
    bar = st.progress(0.0, text="replicates")
    table = calibration_study(inputs.spec(), inputs.method_tables(), inputs.replicates, executor=study_executor(),
                              on_progress=_Bar(bar), store=_store(key), mmd_draws=MMD_DRAWS)
    bar.empty()
    return {"table": table.to_dict(orient="split")}


STUDY_HANDOVER = SessionHandover()


def run_calibration(inputs: CalibrationInputs) -> pd.DataFrame:
    """The study's tidy table (engine.studies.calibration_study), from the cache when it ran before.

    Raises the engine's ValueError for an invalid combination (e.g. exact without a closed form is
    recorded per row in ``error`` instead)."""
    done = STUDY_HANDOVER.start(STUDY_HANDOVER.session())
    try:
        out = _calibration_cached(inputs.key())["table"]
    finally:
        done.set()
    return pd.DataFrame(out["data"], columns=out["columns"])


def summary(table: pd.DataFrame) -> pd.DataFrame:
    return calibration_summary(table)


#: the Calibration page's summary table: engine column -> the page's heading
SUMMARY_COLUMNS = {"method": "Method", "param": "Parameter", "M": "M", "failed": "Failed runs", "ks_stat": "KS D",
                   "ks_pvalue": "KS p-value", "coverage_50": "50% coverage", "coverage_80": "80% coverage",
                   "coverage_90": "90% coverage", "coverage_95": "95% coverage", "mmd2_mean": "Mean MMD²"}
SUMMARY_HELP = {"KS D": st.column_config.NumberColumn("KS D", help=TERM_HELP["KS"], format="%.3f"),
                "KS p-value": st.column_config.TextColumn("KS p-value", help=TERM_HELP["KS"]),
                "Parameter": st.column_config.TextColumn(
                    "Parameter", help="The parameter the row is about; a one-parameter model's symbol is followed by "
                                     "its name in the replicate table's CSV, in brackets."),
                "Mean MMD²": st.column_config.TextColumn(
                    "Mean MMD²", help=TERM_HELP["MMD"] + " The confidential-data posterior is the reference, so its "
                                                        "row has none (—)."),
                **{f"{c}% coverage": st.column_config.NumberColumn(f"{c}% coverage", help=TERM_HELP["coverage"],
                                                                   format="%.3f") for c in (50, 80, 90, 95)}}


def mmd_text(v) -> str:
    """A mean MMD² as the summary table writes it: three significant digits, never an exponent (0.427 and
    0.0251, not 4.27e-1 and 2.51e-2); "—" where there is none (the confidential-data posterior is the reference)."""
    try:
        value = float(v)
    except (TypeError, ValueError):
        return "—"
    if not math.isfinite(value):
        return "—"
    return np.format_float_positional(value, precision=3, unique=False, fractional=False, trim="k")


def replicate_csv(table: pd.DataFrame) -> bytes:
    """A study's replicate table as the CSV the page offers: its columns as the engine writes them (the CLI's
    calibration.csv), with ``method_name``, the page's name of each method, after ``method`` ("confidential" is
    "Confidential data" in the page's table and figures)."""
    return _csv_with_method_names(table)


def summary_csv(summary_: pd.DataFrame) -> bytes:
    """A study's summary as the CSV the page offers: the CLI's ``calibration_summary.csv`` (every number in full),
    with ``method_name``, the page's name of each method, after ``method``."""
    return _csv_with_method_names(summary_)


def _csv_with_method_names(frame: pd.DataFrame) -> bytes:
    """``frame`` as CSV with ``method_name`` (:func:`method_label`) inserted after ``method``."""
    out = frame.copy()
    out.insert(out.columns.get_loc("method") + 1, "method_name", out["method"].map(method_label))
    return out.to_csv(index=False).encode()


def summary_table(summary_: pd.DataFrame) -> pd.DataFrame:
    """The summary as the page shows it: the page's method labels and headings, a one-parameter model's
    parameter by its symbol with the CSV's name in brackets ("θ (theta)"), p-values written by
    :func:`figures.labels.format_p` (as on the KS figure: never rounded to 0) and MMD² by :func:`mmd_text`."""
    out = summary_[list(SUMMARY_COLUMNS)].copy()
    out["method"] = out["method"].map(method_label)
    out["param"] = out["param"].map(lambda p: f"{param_symbol(p)} ({p})" if param_symbol(p) != p else p)
    out["ks_pvalue"] = out["ks_pvalue"].map(format_p)
    out["mmd2_mean"] = out["mmd2_mean"].map(mmd_text)
    return out.rename(columns=SUMMARY_COLUMNS)


class _PresetBar(_Progress):
    """The preset's progress in percent (the engine reports it per mille over the preset's stages)."""

    def text(self, done: int, total: int) -> str:
        return f"{self.label}: {100 * done / total:.0f}%"


class _FinishedPresets:
    """The presets this server process finished (their results are in the cache), at most ``bound``."""

    def __init__(self, bound: int):
        self.bound = bound
        self._lock = threading.Lock()
        self._names: dict[str, float] = {}

    def add(self, name: str) -> None:
        with self._lock:
            self._names.pop(name, None)
            self._names[name] = time.time()
            while len(self._names) > self.bound:
                self._names.pop(next(iter(self._names)))

    def __contains__(self, name: str) -> bool:
        with self._lock:
            return name in self._names


FINISHED_PRESETS = _FinishedPresets(bound=len(PRESET_TITLES))
PRESET_HANDOVER = SessionHandover()


def preset_finished(name: str) -> bool:
    """True when the preset's quick run finished on this server (then it comes from the cache at once)."""
    return name in FINISHED_PRESETS


@st.cache_data(show_spinner=False, max_entries=8, ttl=3600)
def preset_cost(name: str) -> dict:
    """The quick run's estimated cost here (``engine.studies.cost.estimate_preset_cost``): seconds and detail,
    its methods named in words by the engine ("one DA-MCMC chain")."""
    cost = estimate_preset_cost(name, quick=True)
    return {"seconds": cost.seconds, "detail": cost.detail, "text": cost.describe()}


def preset_over_budget(name: str) -> dict | None:
    """None when the preset's quick run fits the server's work budget (or there is none); else its
    cost (``seconds``, ``detail``, ``text``) and the ``budget``."""
    budget = work_budget_s()
    if budget is None:
        return None
    cost = preset_cost(name)
    return None if cost["seconds"] <= budget else {**cost, "budget": budget}


def preset_cli(name: str) -> str:
    """The command that produces the preset offline (tables as CSV and the comparison text in DIR)."""
    return f"python -m engine study {name} --quick --out study-{name}"


@st.cache_data(show_spinner=False, max_entries=8)
def _preset_cached(name: str) -> dict:
    """The preset's quick run. A run stopped (Stop, a newer input) re-raises Streamlit's signal, or
    PresetStopped, out of here: it is never cached nor registered as finished."""
    label = f"Running {PRESET_TITLES[name]} (quick size)"
    bar = st.progress(0.0, text=label)
    progress = _PresetBar(bar, label)
    try:
        result = run_preset(name, quick=True, executor=InlineExecutor(), on_progress=progress)
    except PresetStopped:
        if progress.interrupt is not None:
            raise progress.interrupt from None
        raise
    if progress.interrupt is not None:  # the signal came as the run finished: the user moved on, keep nothing
        raise progress.interrupt
    bar.empty()
    FINISHED_PRESETS.add(name)
    return {"name": result.name, "title": result.title, "quick": result.quick, "text": result.text,
            "checks": dict(result.checks), "data": dict(result.data),
            "tables": {k: v.to_dict(orient="split") for k, v in result.tables.items()}}


def wait_for_stopped_preset() -> None:
    """Wait (bounded) until this session's stopped preset has finished unwinding, so the page's
    "nothing kept" is true when it is shown and the server's cores are free again."""
    PRESET_HANDOVER.take(PRESET_HANDOVER.session())


def run_preset_cached(name: str):
    """A preset's quick run (engine.studies.presets.run_preset) as a PresetResult, cached by name.
    Raises Streamlit's stop signal (or PresetStopped) when it is stopped before it finishes."""
    done = PRESET_HANDOVER.start(PRESET_HANDOVER.session())
    try:
        d = _preset_cached(name)
    finally:
        done.set()
    tables = {k: pd.DataFrame(v["data"], columns=v["columns"]) for k, v in d["tables"].items()}
    return PresetResult(d["name"], d["title"], d["quick"], tables, d["text"], d["checks"], d["data"])
