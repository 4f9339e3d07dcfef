"""The sidebar's dp-wizard upload (in the Data section): a dp-wizard results package (.zip) read by the engine,
its analysable statistics listed (and what cannot be analysed named, with why), and the one picked loaded
into the sidebar.

``engine.import_dpwizard`` runs on the upload (:func:`ui.compute.release.import_package`, cached); each histogram
bin is a spec of its own (a Poisson count with a Gamma prior, the OpenDP release clamped at 0). "Load into the
sidebar" makes that spec the session's scenario (:func:`ui.params.release.scenario_from_spec`,
:func:`ui.sidebar.state.load_scenario`), so Compare shows its posterior. An upload that is not a dp-wizard
package gets one message under the uploader.

State: the last upload's import lives in ``st.session_state[keys.DPWIZARD]`` (not a scenario widget): the
uploader forgets its file on a page switch and loading a statistic re-seeds the scenario widgets, but the
list stays.
"""
from __future__ import annotations

import streamlit as st

from .. import keys
from ..compute.release import import_package
from ..params.release import scenario_from_spec
from ..params.scenario import Scenario
from .state import load_scenario

__all__ = ["dpwizard_upload"]


def _read() -> dict | None:
    """The kept import, refreshed when a new file is in the uploader."""
    state = st.session_state
    uploaded = state.get(keys.W_DPWIZARD)
    kept = state.get(keys.DPWIZARD)
    if uploaded is not None and (kept is None or (kept["name"], kept["size"]) != (uploaded.name, uploaded.size)):
        kept = {"name": uploaded.name, "size": uploaded.size, "result": None, "error": None}
        try:
            kept["result"] = import_package(uploaded.getvalue(), uploaded.name)
        except ValueError as exc:  # "PACKAGE = 'x.zip' is invalid: must be ..." -> "must be ..."
            message = str(exc)
            kept["error"] = message.split(" is invalid: ", 1)[-1] if message.startswith("PACKAGE = ") else message
        state[keys.DPWIZARD] = kept
    return kept


def _load(spec: dict) -> None:
    load_scenario(scenario_from_spec(spec, st.session_state.get(keys.SCENARIO) or Scenario()))


def _bin_label(stat: dict, entry: dict) -> str:
    return f"{stat['column']}: count in {entry['bin']} (released {entry['released']:g})"


def dpwizard_upload() -> None:
    """The upload, the list of statistics, the pick and the load button (inside an expander)."""
    kept = st.session_state.get(keys.DPWIZARD)
    with st.expander("From a dp-wizard package", expanded=kept is not None):
        st.file_uploader("dp-wizard results package (.zip)", type=["zip"], key=keys.W_DPWIZARD,
                         help="The zip of dp-wizard's results panel: the plan (.yaml), the report (.csv) and the "
                              "notebook. The lab rebuilds each release's noise from the plan and loads one "
                              "statistic at a time into this sidebar.")
        kept = _read()
        if kept is None:
            return
        if kept["error"]:
            st.error(f"{kept['name']} is not a dp-wizard package the lab can read: {kept['error']}", icon="⚠️")
            return
        summary, specs = kept["result"]["summary"], kept["result"]["specs"]
        st.caption(f"{kept['name']}: total ε = {summary.get('epsilon')}, {summary.get('contributions')} "
                   "contribution(s) per person.")
        labels: dict[str, str] = {}
        for stat in summary["statistics"]:
            if stat.get("analysed"):
                st.caption(f"**{stat['column']}** ({stat['statistic']}): {stat['mapping']} Scale from "
                           f"{stat['scale_source']}.")
                if stat.get("histogram_spec") in specs:
                    labels[stat["histogram_spec"]] = (f"{stat['column']}: the whole histogram, its total private "
                                                      f"(p over {len(stat['bins'])} bins, and n)")
                labels.update({e["spec"]: _bin_label(stat, e) for e in stat["bins"] if e["spec"] in specs})
                if stat.get("statistic") == "Mean" and stat.get("spec") in specs:
                    labels[stat["spec"]] = (f"{stat['column']}: the mean (released {stat['released_mean']:.4g}), "
                                            "n private")
            else:
                st.caption(f"**{stat['column']}** ({stat['statistic']}), not analysed: {stat['why']}")
        if not labels:
            st.info("The package holds no statistic the lab can analyse exactly (listed above with why).")
            return
        if st.session_state.get(keys.W_DPWIZARD_PICK) not in labels:
            st.session_state[keys.W_DPWIZARD_PICK] = next(iter(labels))
        pick = st.selectbox("Statistic", list(labels), key=keys.W_DPWIZARD_PICK, format_func=labels.get)
        st.button("Load into the sidebar", key=keys.W_DPWIZARD_LOAD, on_click=_load, args=(specs[pick],),
                  help="Replaces the scenario with this statistic's: its model and prior, the release in OpenDP's "
                       "terms and the released count.")
