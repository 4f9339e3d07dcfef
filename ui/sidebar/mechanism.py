"""The sidebar's Privacy mechanism section: the mechanism, its budget in the form chosen, the sensitivity."""
from __future__ import annotations

from typing import Any

import streamlit as st

from figures.labels import BUDGET_LABELS, MECHANISM_LABELS

from .. import keys
from ..params.scenario import MECHANISMS, budget_forms


def _mechanism_section(model: str) -> dict:
    st.subheader("Privacy mechanism", divider="gray")
    mech = st.selectbox("Mechanism", MECHANISMS, key=keys.W_MECHANISM, format_func=MECHANISM_LABELS.get)
    forms = budget_forms(mech)
    form_key = keys.budget_form_key(mech)
    if st.session_state.get(form_key) not in forms:
        st.session_state[form_key] = forms[0]
    form = forms[0]
    if len(forms) > 1:
        form = st.radio("Budget stated as", forms, key=form_key, format_func=BUDGET_LABELS.get, horizontal=True)
    out: dict[str, Any] = {"mechanism": mech, "budget_form": form}
    if form in ("epsilon", "k_ary", "epsilon_delta"):
        out["epsilon"] = float(st.number_input("ε (epsilon)", key=keys.W_EPSILON, step=0.1, format="%g",
                                               help="Privacy-loss budget; must be > 0. Smaller = more noise."))
    if form == "epsilon_delta":
        out["delta"] = float(st.number_input("δ (delta)", key=keys.W_DELTA, format="%g", step=1e-6,
                                             help="Must be strictly between 0 and 1."))
    if form == "rho":
        out["rho"] = float(st.number_input("ρ (rho, zCDP)", key=keys.W_RHO, step=0.1, format="%g",
                                           help="Zero-concentrated DP budget; must be > 0."))
    if form == "coin":
        out["truth_prob"] = float(st.number_input(
            "P(first coin says: answer truthfully)", key=keys.W_TRUTH_PROB, step=0.05, format="%g",
            help="0.5 = fair coin: each answer is kept with probability 3/4 (dapper Example 1)."))
    out["sensitivity"] = None
    if mech != "randomized_response":
        with st.expander("Sensitivity"):
            if st.checkbox("Override the model's sensitivity", key=keys.W_SENS_OVERRIDE):
                out["sensitivity"] = float(st.number_input("sensitivity Δ", key=keys.W_SENSITIVITY, step=0.5,
                                                           format="%g"))
    return out
