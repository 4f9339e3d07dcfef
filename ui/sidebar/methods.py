"""The sidebar's Methods section: which methods run, and their settings (chains, draws, ABC's limits, OPS's k)."""
from __future__ import annotations

import streamlit as st

from figures.labels import METHOD_LABELS

from .. import keys
from ..params.scenario import METHODS


def _methods_section() -> dict:
    st.subheader("Methods", divider="gray")
    chosen = tuple(m for m in METHODS if st.toggle(METHOD_LABELS[m], key=keys.method_key(m)))
    with st.expander("Method settings"):
        c1, c2, c3 = st.columns(3)
        chains = int(c1.number_input("chains", min_value=1, max_value=16, step=1, key=keys.W_CHAINS))
        draws = int(c2.number_input("draws", min_value=10, step=500, key=keys.W_DRAWS))
        warmup = int(c3.number_input("warmup", min_value=0, step=100, key=keys.W_WARMUP))
        abc_s = float(st.number_input("ABC: stop after (seconds)", min_value=0.5, step=1.0, key=keys.W_ABC_SECONDS))
        abc_p = int(st.number_input("ABC: at most this many proposals", min_value=1000, step=1_000_000,
                                    key=keys.W_ABC_PROPOSALS))
        ops_k = int(st.number_input("OPS: number of released samples k", min_value=1, step=10, key=keys.W_OPS_K))
    return {"methods": chosen, "chains": chains, "draws": draws, "warmup": warmup, "abc_max_seconds": abc_s,
            "abc_max_proposals": abc_p, "ops_k": ops_k}
