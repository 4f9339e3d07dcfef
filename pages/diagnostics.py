"""Diagnostics page: is a sampler's output trustworthy? Traces, ranks, R-hat/ESS, acceptance."""
import math

import streamlit as st

from figures import diagnostics, export
from figures.budget import with_scenario
from figures.labels import METHOD_LABELS, summary_number
from ui import downloads, keys, narrative, picker, tables, terms
from ui.compute import files, sweeps
from ui.params.messages import why_not_run
from ui.routing import ensure_routed
from ui.sidebar import controls
from ui.sidebar.inputs import scenario_inputs

ensure_routed()

st.title("Diagnostics")
st.caption("Is a sampler's output trustworthy? A chain's draws count when its R-hat and effective sample size "
           "(ESS) pass the verdict below. DA-MCMC's acceptance rate of record updates never falls below exp(−ε) "
           "for a pure ε-DP mechanism (Ju et al. 2022, Prop. 3.1), but a high rate does not mean the chain mixes: "
           "at small ε nearly every record update is accepted while the parameters move slowly. ABC rejection is "
           "exact but slows as its acceptance rate falls.")
with st.expander("What am I looking at?"):
    st.markdown(
        "A Markov chain's draws are only as good as its mixing. The **verdict** at the top applies the rule of "
        "Vehtari et al. (2021): every parameter needs rank-normalised split **R-hat ≤ 1.01** (the chains agree) "
        "and bulk and tail **effective sample size ≥ 400** (enough independent information for the mean and the "
        "interval ends). **Traces** should look like one fuzzy band per parameter with the chains overlapping; "
        "**rank plots** should be flat for every chain. For DA-MCMC the **acceptance** of each record sweep "
        "should stay above the exp(−ε) line, as Proposition 3.1 of Ju et al. guarantees; it says how freely "
        "the records move, not how well the parameters mix (that is R-hat and ESS). Methods with independent draws "
        "(closed form, ABC, naive, OPS) have no chain to mix: they need only enough draws (at least 400, as the ESS "
        "rule asks of a chain).")

terms.terms_expander(("rhat", "ess", "independent", "epsilon", "exact"))

inputs = scenario_inputs("diagnostics")
if not inputs.ok:
    st.warning("Diagnostics wait for a valid scenario: fix the input marked in the sidebar. Your entries are kept.")
    st.stop()
s, prepared = inputs.scenario, inputs.prepared

choices = prepared.runnable(m for m in ("rjmcmc", "da_mcmc", "pseudo_marginal", "auto", "abc_rejection", "naive",
                                        "exact", "ops", "mcem")
                            if m in s.methods)
if not choices:
    st.info("Switch on a method in the sidebar (DA-MCMC has the most to diagnose).")
    st.stop()
if st.session_state.get(keys.W_DIAG_METHOD) not in choices:
    st.session_state[keys.W_DIAG_METHOD] = choices[0]
method = st.segmented_control("Method", choices, key=keys.W_DIAG_METHOD, format_func=METHOD_LABELS.get)
method = method or choices[0]
run = controls.stoppable_runs(s, inputs.records, [method])[method]
if run.over_budget:
    st.info(narrative.over_budget(method, run.over_budget) + " The Compare page offers the largest settings that fit.",
            icon=":material/timer:")
    st.stop()
if not run.ok:
    st.error(f"{tables.run_label(method, run)} produced no draws: {why_not_run(run.error)}")
    st.stop()
result = run.result
name = tables.run_label(method, run)
# the files leave the page: each is named for its scenario (it was "da_mcmc_trace.png" for every scenario, so a
# second one overwrote the first) and carries the mechanism with its budget and the scenario under its title
stem = files.download_stem(s, prepared.n, prepared.s_dp)
scenario_line = sweeps.scenario_words(s, inputs.records, prepared.n)


def chart(fig, key: str, name: str) -> None:
    """``fig`` with its downloads, named ``{stem}_{name}`` and titled, in the files, with the scenario."""
    downloads.chart(fig, key=key, name=f"{stem}_{name}", for_file=lambda: with_scenario(
        fig, f"{export.page_title(fig)}; {prepared.mechanism_title}", scenario_line))

  # "Exact (numerical)" for a grid posterior, "… given plug-in n = 21"

if result.info.get("estimator") and result.info.get("history"):  # Monte Carlo EM: an estimate, no chains
    info = result.info
    if info.get("converged"):
        st.success(f"{name} stopped by its rule after {info['iterations']} iterations: "
                   f"{info['stopping_rule']}.", icon=":material/check_circle:")
    else:
        st.warning(f"{name} did not meet its stopping rule ({info['stopping_rule']}) in "
                   f"{info['iterations']} iterations: raise its iteration limit in Method settings.",
                   icon=":material/hourglass_empty:")
    st.subheader("The EM path", divider="gray")
    st.caption(f"E-step: {info.get('estep', '—')}; Monte Carlo error of the estimate {info.get('mc_se', float('nan')):.3g}. "
               "The dashed line and band are the final MLE and its 90% Wald interval (Louis's standard error).")
    chart(diagnostics.mcem_history(result), keys.MCEM_CHART, f"{method}_history")
    st.stop()

verdict = run.convergence or {}
if run.too_few:
    st.warning(narrative.convergence_warning({method: run}, figure=False), icon=":material/hourglass_empty:")
elif not verdict.get("applicable"):
    st.success(f"{name}: {verdict.get('draws', 0):,} independent draws, enough for a density and a "
               "90% interval (at least 400 are needed). Independent draws need no R-hat: there is no chain to mix.",
               icon=":material/check_circle:")
elif verdict.get("converged"):
    st.success(f"{name} has converged: R-hat ≤ {tables.rhat_at_most(verdict['r_hat_max'])}, bulk ESS ≥ "
               f"{tables.ess_full(verdict['ess_bulk_min'])}, tail ESS ≥ {tables.ess_full(verdict['ess_tail_min'])} "
               "(needs R-hat ≤ 1.01, ESS ≥ 400).",
               icon=":material/check_circle:")
else:
    st.warning(narrative.convergence_warning({method: run}, figure=False, switched_on=s.methods) + " Failed: "
               + "; ".join(verdict.get("reasons", [])) + ".",
               icon=":material/hourglass_empty:")

st.subheader("R-hat and effective sample size", divider="gray")
summary = run.summary.rename(columns={"r_hat": "R-hat", "ess_bulk": "ESS bulk", "ess_tail": "ESS tail",
                                      "mcse_mean": "MCSE", "mcse_q5": "MCSE q5", "mcse_q95": "MCSE q95"})
# ESS rounded down and R-hat up as on Compare and in the verdict (ui.tables.ess_full, rhat_at_most): 381.6 reads
# 381 and a failing 1.01004 reads 1.011 everywhere
formats = {c: summary_number for c in ("mean", "sd", "q5", "q50", "q95")} | {
    "R-hat": tables.rhat_at_most, "ESS bulk": tables.ess_full, "ESS tail": tables.ess_full, "MCSE": summary_number,
    "MCSE q5": summary_number, "MCSE q95": summary_number}  # Monte Carlo standard errors: mean, 5%, 95% quantiles
st.dataframe(tables.formatted(summary, formats), width="stretch", height="content",
             column_config=terms.text_columns(formats))
st.download_button("Table (CSV)", data=lambda: tables.diagnostics_csv(method, run),
                   file_name=f"{stem}_{method}_diagnostics.csv", mime="text/csv", on_click="ignore")
if math.isnan(run.summary["r_hat"].max()):
    st.caption("R-hat needs at least two chains (the verdict splits a single chain into halves).")

if "accepted_fraction" in result.sample_stats:  # a DA-MCMC record sweep (also when auto picked it)
    st.subheader("Acceptance per record sweep", divider="gray")
    acc = result.sample_stats["acceptance_rate"]
    bound = result.info.get("epsilon_bound")
    m1, m2, m3 = st.columns(3)
    m1.metric("mean acceptance", tables.acceptance_text(float(acc.mean())))  # as Compare's acceptance column
    m2.metric("lowest chain minimum", tables.acceptance_text(float(acc.min())))
    m3.metric("exp(-ε) bound", "—" if bound is None else tables.acceptance_text(bound))
    if run.stalled:
        what = narrative.moved(result.param_names)
        st.caption(f"Acceptance {tables.acceptance_text(float(acc.mean()))}, yet the verdict above fails: the "
                   f"acceptance rate says how often a record's proposed value is kept, not how far {what} "
                   f"{'move' if what == 'the parameters' else 'moves'}. When the noise is wide, records move freely "
                   f"and {what} slowly; the pseudo-marginal sampler moves {what} directly.")
    if bound is None and method != "rjmcmc":
        st.caption("No exp(-ε) bound here: the mechanism is not pure ε-DP, or its sensitivity does not cover "
                   "the model's records.")
    chart(diagnostics.acceptance_plot(result), keys.ACCEPTANCE_CHART, f"{method}_acceptance")
    st.caption("Each chain in its colour, with its mean (dashed) and its lowest sweep (dotted); hover a line for "
               "its value, click a chain in the legend to hide its three lines.")

if "add_acceptance" in result.info:  # reversible jump: the moves that change n
    st.subheader("Jumps in n (add / delete a record)", divider="gray")
    j1, j2, j3 = st.columns(3)
    j1.metric("add acceptance", tables.acceptance_text(result.info["add_acceptance"]))
    j2.metric("delete acceptance", tables.acceptance_text(result.info["delete_acceptance"]))
    j3.metric("jumps per iteration", f"{result.info['jumps']:,}")
    st.caption("Per chain: add " + ", ".join(map(tables.acceptance_text, result.info["add_acceptance_per_chain"]))
               + " · delete " + ", ".join(map(tables.acceptance_text, result.info["delete_acceptance_per_chain"]))
               + ". The trace of n is the last panel under Traces; rates near 0 mean n barely moves.")

if "mean_acceptance" in result.info and "accepted_fraction" not in result.sample_stats:
    st.caption(narrative.pseudo_marginal_caption(result.info, result.param_names))

if "proposals" in result.info:
    st.subheader("ABC rejection", divider="gray")
    abc = tables.abc_report(result)
    a1, a2, a3, a4 = st.columns(4)
    a1.metric("proposals", f"{abc['proposals']:,}")
    a2.metric("accepted", f"{abc['accepted']:,}")
    a3.metric("acceptance rate", tables.acceptance_text(abc["acceptance_rate"]))
    a4.metric("stopped by", abc["stopped_by"])
    if abc["stopped_by"] != "draws":
        st.warning(f"ABC stopped by {abc['stopped_by']} with {abc['accepted']:,} of {abc['requested']:,} "
                   "requested draws; raise its limits in Method settings for more.")

st.subheader("Traces", divider="gray")
names = list(prepared.param_names)
shown = list(result.param_names)
if len(names) > 1:  # one parameter at a time, the same pick as on Compare
    shown = [picker.parameter_picker(names, keys.W_PARAM_DIAG)]
picked = f"_{files.name_part(shown[0])}" if len(names) > 1 else ""  # one parameter of many: the name says which
chart(diagnostics.trace_plot(result, params=shown), keys.TRACE_CHART, f"{method}{picked}_trace")
st.subheader("Rank plots", divider="gray")
ranked = [p for p in shown if not (p == "n" and result.info.get("unknown_n"))]  # n: ties
chart(diagnostics.rank_plot(result, params=ranked), keys.RANK_CHART, f"{method}{picked}_ranks")
st.caption("Ranks of all draws pooled, histogrammed per chain: flat bars near the dashed line mean the chains "
           "explore the same distribution (Vehtari et al. 2021).")
if len(ranked) < len(shown):
    st.caption("n is left out: a whole number has many tied draws, which make rank histograms spiky; its R-hat "
               "and ESS are in the table above.")
