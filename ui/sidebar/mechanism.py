"""The sidebar's Privacy mechanism section: how the release was made (the lab's own simulation, or a library's
release in its own terms: :mod:`ui.sidebar.release`), then the mechanism, its budget in the form chosen, the
sensitivity. A switch of mechanism or of release carries the budget over (:mod:`ui.params.carry`), and says so
under the box once."""
from __future__ import annotations

from typing import Any

import streamlit as st

from figures.labels import BUDGET_LABELS, MECHANISM_LABELS

from .. import keys
from ..glossary import GLOSSARY
from ..params.scenario import MECHANISMS, Scenario, budget_forms
from .numbers import last_value, number_box
from .release import budget_note, carry_form, carry_to_lab, library_form, release_choice


def _mechanism_section(model: str, base: Scenario | None = None) -> dict:
    """``base``: the scenario as read so far (this run's model, prior and size), for a library form's Δ."""
    st.subheader("Privacy mechanism", divider="gray")
    release = release_choice()
    if release != "lab":
        return library_form(release, base)
    mech = st.selectbox("Mechanism", MECHANISMS, key=keys.W_MECHANISM, format_func=MECHANISM_LABELS.get,
                        on_change=carry_to_lab)  # the budget carries over (ui.params.carry)
    forms = budget_forms(mech)
    form_key = keys.budget_form_key(mech)
    if st.session_state.get(form_key) not in forms:
        st.session_state[form_key] = forms[0]
    form = forms[0]
    if len(forms) > 1:
        form = st.radio("Budget stated as", forms, key=form_key, format_func=BUDGET_LABELS.get, horizontal=True,
                        on_change=carry_form, args=(mech,))  # the same noise, restated (ui.params.carry)
    out: dict[str, Any] = {"release": "lab", "mechanism": mech, "budget_form": form}
    if form in ("epsilon", "k_ary", "epsilon_delta"):
        out["epsilon"] = float(number_box("ε (epsilon)", keys.W_EPSILON, section="mechanism",
                                          fallback=last_value("epsilon"),
                                          help=GLOSSARY["epsilon"]))
    if form == "epsilon_delta":
        out["delta"] = float(number_box("δ (delta)", keys.W_DELTA, section="mechanism", fallback=last_value("delta"),
                                        help=GLOSSARY["delta"]))
    if form == "rho":
        out["rho"] = float(number_box("ρ (rho, zCDP)", keys.W_RHO, section="mechanism", fallback=last_value("rho"),
                                      help=GLOSSARY["rho"]))
    if form == "coin":
        out["truth_prob"] = float(number_box(
            "P(first coin says: answer truthfully)", keys.W_TRUTH_PROB, section="mechanism",
            fallback=last_value("truth_prob"),
            help="0.5 = fair coin: each answer is kept with probability 3/4 (dapper Example 1)."))
    budget_note()
    out["sensitivity"] = None
    if mech != "randomized_response":
        with st.expander("Sensitivity"):
            st.caption(GLOSSARY["sensitivity"])
            if st.checkbox("Override the model's sensitivity", key=keys.W_SENS_OVERRIDE):
                last = last_value("sensitivity")
                out["sensitivity"] = float(number_box("sensitivity Δ", keys.W_SENSITIVITY, section="mechanism",
                                                      fallback=1.0 if last is None else last))
    return out
