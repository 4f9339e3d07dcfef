"""Method runs: one method on one spec, every switched-on method of a scenario, the posterior given
the confidential records, and the posterior pmf of an unknown n read off an RJMCMC run.

Each run opens an ``st.status`` box whose final label is the run's log line ("(cached)" on a cache hit,
see :mod:`ui.compute.progress`); a run over the server's work budget is not started
(:mod:`ui.compute.budget`) and its :class:`~ui.compute.records.MethodRun` says why. A ``ValueError`` is the
engine's word for input a method cannot take: its message is the run's line. Anything else a run or its pricing
raises is a fault of the lab: its traceback goes to the server's log, the page gets one line naming the method, and
it is not cached.
"""
from __future__ import annotations

import json
import logging
import math
import time
from typing import Any, Mapping, Sequence

import numpy as np
import streamlit as st

import engine

from figures.labels import METHOD_LABELS, result_label
from .. import narrative
from ..params.messages import why_not_run
from ..params.scenario import Scenario
from ..params.spec import method_settings, to_spec_dict
from .budget import BUDGETED_METHODS, _cost_cached, work_budget_s
from .problems import _problem
from .progress import _Progress, _fresh
from .records import RESULT_TTL_S, MethodRun, _payload, _run_record, spec_json

__all__ = ["run_method", "run_methods", "scenario_key", "confidential", "n_pmf"]

_LOG = logging.getLogger(__name__)


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
    except engine.NoneAccepted as exc:  # ABC's limits, in the words of their boxes
        words = narrative.none_accepted(exc.proposals, exc.stopped_by, exc.far, int(settings.get("draws", 0)))
        return {"error": words, "log": f"{label}: not run — {words}"}
    except ValueError as exc:  # the log in the sidebar's words ("OPS spends a pure ε budget …", not spec keys)
        return {"error": str(exc), "log": f"{label}: not run — {why_not_run(str(exc))}"}
    except engine.Cancelled:
        if progress.interrupt is not None:
            raise progress.interrupt from None
        raise
    except Exception:  # a fault of the lab: never cached, said in the run log by _run_logged
        if progress.interrupt is not None:
            raise progress.interrupt from None
        raise
    if progress.interrupt is not None:  # stopped for a newer run: never cache a partial result
        raise progress.interrupt
    label = result_label(result)  # what it turned out to be: "Exact (numerical)", "… given plug-in n = 21"
    bar.progress(1.0, text=f"{label}: done")
    size = f"estimate after {result.info.get('iterations', 0)} iterations" if result.info.get("estimator") else \
        f"{result.draws.shape[0]} × {result.draws.shape[1]:,} draws"
    return {**_payload(result), "log": f"{label}: {size} in {time.perf_counter() - t0:.2f} s"}


def _fault(name: str, exc: Exception) -> dict:
    """A run that raised something other than a ValueError (the engine's word for bad input): a fault of the lab.
    Its traceback goes to the server's log; the page gets one run-log line naming the method."""
    _LOG.error("%s failed on this scenario", name, exc_info=exc)
    words = (f"an unexpected error in the lab ({type(exc).__name__}: {exc}); the other methods are unaffected. "
             "Please report it with the page's link")
    return {"error": words, "log": f"{METHOD_LABELS[name]}: failed — {words}"}


def _run_logged(spec_text: str, settings_text: str, name: str) -> dict:
    """:func:`_run_cached` in a status box whose label ends as the run's log line; a result another
    run computed earlier (this session's or another's: the cache is shared) says "(cached)"."""
    with st.status(f"{METHOD_LABELS[name]}: running…", expanded=False) as status:
        _fresh.value = False
        try:
            payload = _run_cached(spec_text, settings_text)
        except Exception as exc:  # noqa: BLE001 - not bad input but a fault: one line, the method's, not a traceback
            payload = _fault(name, exc)
        cached = "" if _fresh.value else " (cached)"
        unsettled = "error" not in payload and MethodRun(name, convergence=payload.get("convergence")).untrusted
        status.update(label=payload["log"] + cached + (" — not converged, see the warning above" if unsettled else ""),
                      state="error" if "error" in payload else "complete", expanded=False)
        if unsettled:
            _warning_mark(status)
    return payload


#: the icon of a run that finished but whose numbers are not to be trusted (not converged, too few draws)
WARNING_MARK = ":material/warning:"


def _warning_mark(status) -> None:
    """Give a finished ``st.status`` box the warning mark instead of the green ✓: st.status knows only running,
    complete (✓) and error (✗), and a run that has not converged is neither a success nor a failure. Its state stays
    complete; the icon is the box's own field, which ``update`` resends with the label."""
    proto = getattr(status, "_current_proto", None)
    if proto is None:  # another Streamlit: the label still says it
        return
    proto.expandable.icon = WARNING_MARK
    status.update(label=proto.expandable.label)


def run_method(spec_text: str, settings: Mapping[str, Any]) -> MethodRun:
    """Run (or fetch from the cache) one method on one spec, unless its estimated cost is over the
    server's work budget (:func:`work_budget_s`): then it is not run and ``over_budget`` says what it
    would cost and which settings fit. The budget gates the estimate of ``auto``'s first attempt and is
    its ``max_seconds``: a fallback or a rerun runs only if its estimate fits in what is left of it."""
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
        except Exception as exc:  # noqa: BLE001 - pricing it failed: a fault, said as the run's line (_fault)
            fault = _fault(settings["name"], exc)
            st.status(fault["log"], state="error", expanded=False)  # its run-log line, as a failed run's
            return MethodRun(method=settings["name"], error=fault["error"])
        if cost["seconds"] > budget:
            return MethodRun(method=settings["name"], over_budget={**cost, "budget": budget})
    if budget is not None and settings["name"] == "auto" and "max_seconds" not in settings:
        settings = {**settings, "max_seconds": budget}  # its fallbacks and rerun fit in what the first leaves
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


def n_pmf(result: engine.Result) -> tuple[np.ndarray, np.ndarray]:
    """The posterior pmf of n from an RJMCMC result (engine.n_pmf)."""
    return engine.n_pmf(result)
