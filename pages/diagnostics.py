"""Diagnostics page: is a sampler's output trustworthy? Traces, ranks, R-hat/ESS, acceptance."""
import math

import streamlit as st

from ui import compute, keys, plots, tables
from ui.params import METHOD_LABELS
from ui.routing import ensure_routed
from ui.sidebar import scenario_inputs

ensure_routed()

st.title("Diagnostics")
st.caption("DA-MCMC mixes well when its acceptance rate stays high; for a pure ε-DP mechanism it never "
           "falls below exp(-ε) (Ju et al. 2022, Prop. 3.1). ABC rejection is exact but slows as its "
           "acceptance rate falls.")

inputs = scenario_inputs("diagnostics")
if not inputs.ok:
    st.warning("Diagnostics wait for a valid scenario: fix the input marked in the sidebar. Your entries are kept.")
    st.stop()
s, prepared = inputs.scenario, inputs.prepared

choices = prepared.runnable(m for m in ("da_mcmc", "abc_rejection", "naive", "exact", "ops") if m in s.methods)
if not choices:
    st.info("Switch on a method in the sidebar (DA-MCMC has the most to diagnose).")
    st.stop()
if st.session_state.get(keys.W_DIAG_METHOD) not in choices:
    st.session_state[keys.W_DIAG_METHOD] = choices[0]
method = st.segmented_control("Method", choices, key=keys.W_DIAG_METHOD, format_func=METHOD_LABELS.get)
method = method or choices[0]
run = compute.run_methods(s, inputs.records, [method])[method]
if not run.ok:
    st.error(f"{METHOD_LABELS[method]} produced no draws: {run.error}")
    st.stop()
result = run.result

st.subheader("R-hat and effective sample size", divider="gray")
summary = run.summary.rename(columns={"r_hat": "R-hat", "ess_bulk": "ESS bulk", "ess_tail": "ESS tail"})
formats = {c: "{:.4g}" for c in ("mean", "sd", "q5", "q50", "q95")} | {"R-hat": "{:.3f}", "ESS bulk": "{:.0f}",
                                                                      "ESS tail": "{:.0f}"}
st.dataframe(tables.formatted(summary, formats), width="stretch",
             column_config={c: st.column_config.TextColumn(c, alignment="right") for c in formats})
worst = run.summary["r_hat"].max()
if math.isnan(worst):
    st.caption("R-hat needs at least two chains.")
elif worst > 1.01:
    st.warning(f"R-hat up to {worst:.3f} (> 1.01): the chains disagree; run longer or more chains.")
else:
    st.caption(f"R-hat ≤ {worst:.3f}: the chains agree.")

if "acceptance_rate" in result.sample_stats:
    st.subheader("Acceptance per record sweep", divider="gray")
    acc = result.sample_stats["acceptance_rate"]
    bound = result.info.get("epsilon_bound")
    m1, m2, m3 = st.columns(3)
    m1.metric("mean acceptance", f"{float(acc.mean()):.3f}")
    m2.metric("lowest chain minimum", f"{float(acc.min()):.3f}")
    m3.metric("exp(-ε) bound", "—" if bound is None else f"{bound:.3f}")
    if bound is None:
        st.caption("No exp(-ε) bound here: the mechanism is not pure ε-DP, or its sensitivity does not cover "
                   "the model's records.")
    st.plotly_chart(plots.acceptance_plot(result), key=keys.ACCEPTANCE_CHART, width="stretch")

if "proposals" in result.info:
    st.subheader("ABC rejection", divider="gray")
    abc = tables.abc_report(result)
    a1, a2, a3, a4 = st.columns(4)
    a1.metric("proposals", f"{abc['proposals']:,}")
    a2.metric("accepted", f"{abc['accepted']:,}")
    a3.metric("acceptance rate", f"{abc['acceptance_rate']:.3g}")
    a4.metric("stopped by", abc["stopped_by"])
    if abc["stopped_by"] != "draws":
        st.warning(f"ABC stopped by {abc['stopped_by']} with {abc['accepted']:,} of {abc['requested']:,} "
                   "requested draws; raise its limits in Method settings for more.")

st.subheader("Traces", divider="gray")
st.plotly_chart(plots.trace_plot(result), key=keys.TRACE_CHART, width="stretch")
st.subheader("Rank plots", divider="gray")
st.plotly_chart(plots.rank_plot(result), key=keys.RANK_CHART, width="stretch")
st.caption("Ranks of all draws pooled, histogrammed per chain: flat bars near the dashed line mean the chains "
           "explore the same distribution (Vehtari et al. 2021).")
