"""What acts on the sidebar's state from a page: the Stop button beside the runs (and Run again), and
"use settings that fit" for a run over the server's work budget. Nothing the user entered is lost."""
from __future__ import annotations

from typing import Any, Mapping

import streamlit as st

from .. import keys
from ..compute import method_runs

__all__ = ["request_stop", "clear_stop", "stoppable_runs", "apply_method_settings"]


def request_stop(scenario_key: str) -> None:
    """Stop button callback: remember the scenario whose run was stopped (the run in progress ends at
    its next block, see ui.compute.progress._Progress); nothing the user entered changes."""
    st.session_state[keys.STOPPED_RUN] = scenario_key


def clear_stop() -> None:
    """"Run again": forget the stop."""
    st.session_state.pop(keys.STOPPED_RUN, None)


def stoppable_runs(s, records, wanted) -> dict:
    """``method_runs.run_methods`` with a Stop button beside it (Compare and Diagnostics): a stopped
    scenario shows "You stopped this run" and a Run again button instead of running (and the page
    stops there); nothing the user entered changes."""
    scenario_key = method_runs.scenario_key(s, records)
    if st.session_state.get(keys.STOPPED_RUN) == scenario_key:
        st.info("You stopped this run. Change an input, or run it again.", icon=":material/stop_circle:")
        st.button("Run again", key=keys.W_STOP + "_again", on_click=clear_stop)
        st.stop()
    stop_slot = st.empty()
    stop_slot.button("Stop", key=keys.W_STOP, icon=":material/stop_circle:", on_click=request_stop,
                     args=(scenario_key,), help="Stop the runs in progress; what you entered stays.")
    runs = method_runs.run_methods(s, records, wanted)
    stop_slot.empty()
    return runs


def apply_method_settings(method: str, settings: Mapping[str, Any]) -> None:
    """"Use settings that fit": put a method's chains, draws and warm-up into the Method settings widgets
    (for ABC rejection, whose draws are chains × draws of the others, only its time limit)."""
    if method == "abc_rejection":
        st.session_state[keys.W_ABC_SECONDS] = float(settings.get("max_seconds", st.session_state[keys.W_ABC_SECONDS]))
        return
    st.session_state[keys.W_CHAINS] = int(settings["chains"])
    st.session_state[keys.W_DRAWS] = int(settings["draws"])
    if "warmup" in settings:
        st.session_state[keys.W_WARMUP] = int(settings["warmup"])
