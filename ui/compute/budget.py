"""The server's work budget, and the cached estimates of what a run or a sweep would cost here.

A run (or sweep) whose estimated cost is over :func:`work_budget_s` is not started: the page says what
it would cost and offers the settings that fit (``engine.fit_to_budget``, ``engine.fit_sweep_to_budget``).
"""
from __future__ import annotations

import json
import os

import streamlit as st

import engine

from .problems import _problem

__all__ = ["work_budget_s", "BUDGETED_METHODS", "DEFAULT_WORK_BUDGET_S"]

BUDGETED_METHODS = frozenset({"da_mcmc", "pseudo_marginal", "abc_rejection", "auto", "rjmcmc"})
DEFAULT_WORK_BUDGET_S = 20.0
#: the settings offered to fit a run are fitted to this share of the budget: the estimates are off by a third either
#: way (bench/cost_accuracy.py), and a run offered as fitting took 25 s of a 20 s budget in an audit
FIT_MARGIN = 0.8


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
    cost = engine.estimate_cost(problem, settings, ceiling=budget)
    fit = engine.fit_to_budget(problem, settings, FIT_MARGIN * budget) if cost.seconds > budget else None
    return {"seconds": cost.seconds, "units": cost.units, "unit": cost.unit, "detail": cost.detail, "fit": fit,
            "at_least": cost.at_least}


@st.cache_data(show_spinner=False, max_entries=256, ttl=3600)
def _sweep_cost_cached(spec_text: str, grid_text: str, methods_text: str, budget: float) -> dict:
    spec, grid, methods = json.loads(spec_text), json.loads(grid_text), json.loads(methods_text)
    cost = engine.estimate_sweep_cost(spec, grid, methods)
    fit = engine.fit_sweep_to_budget(spec, grid, methods, budget) if cost.seconds > budget else None
    return {"seconds": cost.seconds, "units": cost.units, "unit": cost.unit, "detail": cost.detail, "fit": fit}
