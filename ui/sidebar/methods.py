"""The sidebar's Methods section: which methods run, and their settings (chains, draws, ABC's limits, OPS's k)."""
from __future__ import annotations

import streamlit as st

from figures.labels import METHOD_LABELS

from .. import keys
from ..glossary import GLOSSARY, METHOD_HELP
from ..params.scenario import METHODS
from .numbers import last_value, number_box


def _methods_section() -> dict:
    st.subheader("Methods", divider="gray")
    chosen = tuple(m for m in METHODS if st.toggle(METHOD_LABELS[m], key=keys.method_key(m), help=METHOD_HELP[m]))
    with st.expander("Method settings"):
        c1, c2, c3 = st.columns(3)
        box = {"section": "methods", "integer": True}
        chains = int(number_box("chains", keys.W_CHAINS, fallback=last_value("chains"), container=c1, **box,
                                help="Independent chains, 1 to 16; R-hat compares them."))
        draws = int(number_box("draws", keys.W_DRAWS, fallback=last_value("draws"), container=c2, **box,
                               help="Draws kept per chain, at least 10."))
        warmup = int(number_box("warmup", keys.W_WARMUP, fallback=last_value("warmup"), container=c3, **box,
                                help="Draws discarded at the start of each chain, 0 or more."))
        abc_s = float(number_box("ABC: stop after (seconds)", keys.W_ABC_SECONDS, section="methods",
                                 fallback=last_value("abc_max_seconds"), help="ABC rejection stops after this many "
                                 "seconds with the draws it has (at least 0.5)."))
        abc_p = int(number_box("ABC: at most this many proposals", keys.W_ABC_PROPOSALS, fallback=last_value(
            "abc_max_proposals"), **box, help="ABC rejection stops after this many proposals (at least 1000)."))
        ops_k = int(number_box("OPS: number of released samples k", keys.W_OPS_K, fallback=last_value("ops_k"), **box,
                               help=GLOSSARY["ops"]))
    return {"methods": chosen, "chains": chains, "draws": draws, "warmup": warmup, "abc_max_seconds": abc_s,
            "abc_max_proposals": abc_p, "ops_k": ops_k}
