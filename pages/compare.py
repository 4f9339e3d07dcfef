"""Compare page (landing): every method's posterior for one privatized release, side by side."""
import streamlit as st

from engine.methods import READS_RECORDS
from figures import budget, export, posteriors
from figures.axes import alt_text, param_symbol
from figures.labels import METHOD_LABELS, MODEL_LABELS, summary_number
from ui import downloads, keys, narrative, picker, tables, terms
from ui.compute import files, method_runs, sweeps
from ui.params.messages import why_not_run
from ui.params.spec import best_method
from ui.routing import ensure_routed
from ui.sidebar import controls
from ui.sidebar.inputs import scenario_inputs

#: release entries written out in the line above the figure; a longer release is listed in an expander
RELEASE_SHOWN = 12

ensure_routed()

st.title("Compare posteriors from privatized data")
st.caption("Naive analysis, exact data-augmentation MCMC (Ju et al. 2022), ABC rejection (Gong 2020), "
           "one-posterior sampling, the pseudo-marginal sampler and the exact posterior, for the same release s_dp.")
with st.expander("What am I looking at?"):
    st.markdown(
        "A data curator released **s_dp**, a statistic of confidential records plus random noise calibrated to the "
        "privacy budget ε (smaller ε, more noise). Each curve is a posterior for the parameter given only that "
        "release. **Naive** pretends s_dp is the exact statistic: it is too narrow and often centred in the wrong "
        "place. The **exact** methods (closed form, DA-MCMC, ABC rejection, pseudo-marginal; *Exact (best method)* "
        "picks the cheapest) account for the noise and agree with each other. **OPS** is a private release of "
        "posterior draws, wider by design. The dashed vertical line is the true value of the simulation; the "
        "dotted grey curve is what the confidential records themselves would say. The table gives each method's "
        "mean, sd and 90% interval (q5–q95) with its convergence verdict: a sampler's numbers count only when "
        "R-hat ≤ 1.01 and ESS ≥ 400.\n\n"
        "With an unknown n (*Sample size* → *unknown (private)*) the number of records was released too, as a noisy "
        "**n_dp**. **RJMCMC (unknown n)** treats n as a parameter under your prior on it, and a second figure shows "
        "its posterior probability of each n against n_dp and the plug-in n = round(n_dp); every other method runs "
        "at that plug-in n and says so in its name (\"at plug-in n = N\"): exact only given that n.")
terms.terms_expander(("s_dp", "epsilon", "delta", "rho", "zcdp", "sensitivity", "naive", "exact", "ops", "independent",
                      "rhat", "ess", "q5_q95"))
note = st.session_state.pop(keys.PRESET_NOTE, None)
if note:
    st.success(note)

inputs = scenario_inputs("compare", show_noise=False)  # the figure's title states it
if not inputs.ok:
    st.warning("Results wait for a valid scenario: fix the input marked in the sidebar. Your entries are kept.")
    st.stop()

s, prepared = inputs.scenario, inputs.prepared
# a log-linear release is 30-80 numbers: a wall above the figure, so the first RELEASE_SHOWN and how many
release = narrative.release_text(prepared.s_dp, RELEASE_SHOWN)
truth = ""
if prepared.true_params:
    shown = list(prepared.true_params.items())
    truth = " · true " + ", ".join(f"{param_symbol(k)} = {v:.4g}" for k, v in shown[:4]) + \
        (f", … ({len(shown)} parameters; the figure marks the true value of the one picked)" if len(shown) > 4 else "")
if not prepared.unknown_n:
    size = f"n = {prepared.n:,}"
elif prepared.n_dp is None and s.model == "dirichlet_multinomial":
    size = f"n unknown and not released (plug-in n = {prepared.n:,}, the released cells' total)"
elif prepared.n_dp is None:  # OpenDP's mean: its noisy length, inside the ratio, is n's one trace
    size = "n unknown and not released apart from the mean's noisy length"
else:
    size = f"n unknown: released **n_dp = {prepared.n_dp:,.7g}** (plug-in n = {prepared.n:,})"  # 1,000,000, not 1e+06
st.markdown(f"**{MODEL_LABELS[s.model]}**, {size} · release **s_dp = {release}**{truth}")
if len(prepared.s_dp) > RELEASE_SHOWN:
    with st.expander(f"The whole release: {len(prepared.s_dp)} numbers"):
        st.code(", ".join(f"{v:.6g}" for v in prepared.s_dp), language=None, wrap_lines=True)

if prepared.implausible_text:
    st.warning(prepared.implausible_text, icon=":material/report:")
results_area = st.container()
st.subheader("Run log", divider="gray")
skipped = {m: prepared.unavailable_reason(m) for m in s.methods if prepared.unavailable_reason(m)}
wanted = prepared.runnable(s.methods)
runs = controls.stoppable_runs(s, inputs.records, wanted)
for m, run in runs.items():
    if run.over_budget:
        cost, fit = run.over_budget, run.over_budget["fit"]
        st.info(narrative.over_budget(m, cost), icon=":material/timer:")
        if fit:
            offer = (f"stop ABC after {fit['max_seconds']:g} s" if m == "abc_rejection" else
                     f"{fit['chains']} chains × {fit['draws']:,} draws (warm-up {fit.get('warmup', 0):,})")
            st.button(f"Use settings that fit: {offer}", key=f"{keys.W_FIT_BUDGET}_{m}",
                      on_click=controls.apply_method_settings, args=(m, fit))
            if m != "abc_rejection" and (few := narrative.too_few_to_converge(fit)):
                st.caption(few)
        else:
            st.caption("Even 2 chains × 100 draws do not fit: reduce n, or use Exact (best method).")
conf = method_runs.confidential(s, inputs.records)
for m, why in skipped.items():
    st.caption(f"{METHOD_LABELS[m]}: {why}.")

ok = {m: r for m, r in runs.items() if r.ok}
with results_area:
    if not ok:
        st.info("No method produced draws for this scenario; see the run log below.")
        st.stop()
    headline_slot = st.empty()
    stalled = narrative.convergence_warning(ok)
    if stalled:
        st.warning(stalled, icon=":material/hourglass_empty:")
    over = [tables.run_label(m, r) for m, r in runs.items() if r.over_budget]
    if over:  # its curve is missing from the figure: say so here, not only in the run log below
        each = "it" if len(over) == 1 else "each"
        st.info(f"Not in the figure: {narrative.listed(over)}, over this server's work budget. The run log below "
                f"says what {each} would cost and offers settings that fit.", icon=":material/timer:")
    names = list(prepared.param_names)
    multi = len(names) > 1
    picked = picker.parameter_picker(names, keys.W_PARAM_COMPARE)
    sentence = narrative.headline(ok, prepared.true_params, param=picked)  # about the parameter the figure shows
    if sentence:
        headline_slot.markdown(f"##### {sentence}")
    conf_result = conf.result if conf is not None and conf.ok else None
    not_converged = {m for m, r in ok.items() if r.stalled}
    too_few = {m for m, r in ok.items() if r.too_few}
    fig = posteriors.posterior_densities([r.result for r in ok.values()], true_params=prepared.true_params,
                                         confidential=conf_result, title=prepared.mechanism_title,
                                         params=[picked] if multi else names, not_converged=not_converged,
                                         too_few=too_few, supports=prepared.param_support)
    # an upload's confidential-data posterior and OPS's draws are computed from the records themselves, not from
    # the release: shown to whoever holds the records (this page), kept out of the files unless asked for
    share_direct = s.data != "csv" or bool(st.session_state.get(keys.W_SHARE_DIRECT, False))
    shared = ok if share_direct else {m: r for m, r in ok.items() if m not in READS_RECORDS}
    # the files stand alone on a slide: titled with what they show and the scenario, as the Privacy budget page's
    # (the figure on the page keeps the mechanism as its title: the line above it and the sidebar say the rest);
    # made when a file is asked for (downloads.file_figure), not on every rerun
    given = narrative.release_text(prepared.s_dp) if len(prepared.s_dp) <= 4 else \
        f"a release of {len(prepared.s_dp)} numbers"

    def titled_file_figure():
        shared_fig = fig if share_direct else posteriors.posterior_densities(
            [r.result for r in shared.values()], true_params=prepared.true_params, confidential=None,
            title=prepared.mechanism_title, params=[picked] if multi else names, not_converged=not_converged,
            too_few=too_few, supports=prepared.param_support)
        return budget.with_scenario(
            shared_fig, f"Posterior of {param_symbol(picked)} per method given s_dp = {given}; "
            f"{prepared.mechanism_title}", sweeps.scenario_words(s, inputs.records, prepared.n))

    file_fig = downloads.file_figure(fig, titled_file_figure)
    # every file's name starts with the scenario: the n posterior's and the small multiples' were the same
    # "n_posterior.png" and "posterior_all_parameters.png" for every scenario, and overwrote each other
    stem = files.download_stem(s, prepared.n, prepared.s_dp)
    # the figure shows one parameter of several: its files say which (beta_1's overwrote beta_0's)
    posterior_name = f"{stem}_posterior" + (f"_{files.name_part(picked)}" if multi else "")
    # an upload's files that hold what the records show directly are named apart from those that may be shared
    # (with the box ticked and not, both were …_draws.csv and …_posterior.png)
    with_direct = "_with_confidential" if s.data == "csv" and share_direct else ""
    posterior_name += with_direct
    st.plotly_chart(fig, key=keys.POSTERIOR_CHART, width="stretch", alt=alt_text(fig),
                    config=downloads.chart_config(posterior_name, camera=share_direct))
    n_source = next((m for m in ("rjmcmc", "exact", "pseudo_marginal", "auto")
                     if m in ok and "n" in ok[m].result.param_names), None)
    if n_source:  # the unknown n's own posterior, against what was released and the truth
        values, probs = method_runs.n_pmf(ok[n_source].result)
        n_fig = posteriors.n_pmf_plot(values, probs, n_dp=prepared.n_dp, plug_in=prepared.n, true_n=prepared.n_true,
                                      method=n_source, converged=not ok[n_source].stalled)
        # its file stands alone as the posterior's does: the method that drew n, the mechanism and the scenario
        n_title = f"{export.page_title(n_fig)}, by {tables.run_label(n_source, ok[n_source])}; " \
                  f"{prepared.mechanism_title}"
        downloads.chart(n_fig, key=keys.N_PMF_CHART, name=f"{stem}_n_posterior", for_file=lambda: budget.with_scenario(
            n_fig, n_title, sweeps.scenario_words(s, inputs.records, prepared.n)))
    if "mcem" in ok:
        st.caption(narrative.mle_caption(ok["mcem"].result.info))
    if "pseudo_marginal" in ok and ok["pseudo_marginal"].result.info.get("particles_capped"):
        st.caption(f"{tables.run_label('pseudo_marginal', ok['pseudo_marginal'])}: "
                   f"{ok['pseudo_marginal'].result.info['note']}")
    if "auto" in ok and (best := ok["auto"].result.info).get("picked"):  # its run told apart from the table's row
        st.caption(narrative.auto_caption(best, ok[best["picked"]].result.info if best["picked"] in ok else None))
    for m, run in runs.items():
        if not run.ok and not run.over_budget:
            st.caption(f"{tables.run_label(m, run)} not shown: {why_not_run(run.error)}")
    table = tables.comparison_table({**ok, **({"confidential": conf} if conf is not None and conf.ok else {})})
    if multi:
        if not st.toggle(f"Every parameter in the table ({len(names)})", value=len(names) <= 4,
                         key=keys.table_all_key(s.model)):
            table = table[(table["parameter"] == picked) | ~table["parameter"].isin(names)]
    formats = {c: summary_number for c in ("mean", "sd", "q5", "q95")} | {"R-hat": tables.rhat_at_most,
                                                                          "acceptance": tables.acceptance_text}
    formats |= {"ESS bulk": tables.ess_short, "ESS tail": tables.ess_short}
    # fits a 1,280 px desktop with the sidebar open without scrolling: the two ESS in one column, the draws and
    # the sampler's time (one per method; the time column was the last, cut there) in the caption
    shown = tables.joined(tables.formatted(table, formats), "ESS bulk", "ESS tail", "ESS bulk / tail")
    runs_note = tables.draws_and_time_per_method(table)
    # one parameter: the figure names it, and its column pushed the last one out of a 1,400 px window
    several = multi or table["parameter"].nunique() > 1  # RJMCMC adds n beside a one-parameter model's θ
    shown = shown.drop(columns=["draws", "wall time (s)"] + ([] if several else ["parameter"]))
    st.dataframe(shown, hide_index=True, width="stretch", height="content",
                 column_config=terms.text_columns({c: "" for c in shown.columns
                                                   if c in formats or c == "ESS bulk / tail"},
                                                  pinned=("method", "parameter") if multi else ("method",)))
    estimate = (f" For {tables.run_label('mcem', ok.get('mcem'))}, an estimator, mean is the estimate, sd its "
                "standard error and q5 and q95 its 90% Wald interval." if "mcem" in ok else "")
    st.caption(f"Draws and the sampler's wall-clock time on this server behind the rows: {runs_note} (the run log's "
               "time for a method also counts the summaries and diagnostics computed from its draws). "
               f"q5 and q95 bound the 90% central posterior interval.{estimate} R-hat needs at least two chains; "
               "a sampler has converged when R-hat ≤ 1.01 and bulk and tail ESS ≥ 400. Acceptance is DA-MCMC's mean "
               "acceptance probability per record sweep, the pseudo-marginal sampler's share of accepted moves, "
               "or ABC's accepted share.")
    if multi:
        multiples = st.expander("Every parameter: small multiples", key=keys.W_MULTIPLES, on_change="rerun")
        if multiples.open:  # drawn only when open: one panel per parameter is a big figure
            page = picker.multiples_page(names, container=multiples)
            def multiples_figure(runs, confidential):
                return posteriors.posterior_densities(
                    [r.result for r in runs.values()], true_params=prepared.true_params, confidential=confidential,
                    params=page, not_converged=not_converged, too_few=too_few, columns=picker.MULTIPLES_COLUMNS,
                    panel_height=230, supports=prepared.param_support)

            shown_multiples = multiples_figure(ok, conf_result)

            def multiples_file():  # titled with the scenario, as the posterior's file (it had no title at all)
                return budget.with_scenario(
                    shown_multiples if share_direct else multiples_figure(shared, None),
                    f"Posterior of each parameter per method given s_dp = {given}; {prepared.mechanism_title}",
                    sweeps.scenario_words(s, inputs.records, prepared.n))

            downloads.chart(shown_multiples, key=keys.MULTIPLES_CHART,
                            name=f"{stem}_posterior_all_parameters{with_direct}", container=multiples,
                            for_file=multiples_file, camera=share_direct)

    st.subheader("Downloads", divider="gray")
    if s.data == "csv":
        direct = narrative.listed(["the confidential-data posterior"] + [tables.run_label(m, r) for m, r in ok.items()
                                                                          if m in READS_RECORDS])
        st.checkbox(f"Put what the records show directly in the files ({direct})", key=keys.W_SHARE_DIRECT,
                    help="Off: the draws, the NetCDF file and the figures hold only what the methods read from the "
                         "release s_dp, which ε covers. On: they also hold the posterior computed from the uploaded "
                         "records themselves (its mean gives back the confidential statistic) and OPS's draws (a "
                         "second release of the records, with its own privacy cost); share them only where the "
                         "records may go. The page shows them either way.")
    results = [r.result for r in shared.values()] + ([conf.result] if conf is not None and conf.ok and share_direct
                                                      else [])
    # one row that sizes each control to its label and wraps on a narrow window (fixed fifths cut the labels)
    row = st.container(horizontal=True, gap="small", vertical_alignment="bottom")
    row.download_button(tables.draws_csv_label(results), data=lambda: tables.draws_csv(results),
                        file_name=f"{stem}{with_direct}_draws.csv",
                        mime="text/csv", on_click="ignore", width="content")
    # the table in full (the page rounds it), its verdicts with it; what the files may hold, as the draws
    table_runs = {**shared, **({"confidential": conf} if conf is not None and conf.ok and share_direct else {})}
    row.download_button("Summary table (CSV)", data=lambda: tables.summary_csv(table_runs),
                        file_name=f"{stem}{with_direct}_summary.csv", mime="text/csv", on_click="ignore",
                        width="content")
    if shared:
        if st.session_state.get(keys.W_NETCDF_METHOD) not in shared:  # the exact posterior first, not naive
            st.session_state[keys.W_NETCDF_METHOD] = best_method(shared, s.unknown_n)
        chosen = row.selectbox("Method for the NetCDF file", list(shared), key=keys.W_NETCDF_METHOD,
                               format_func=lambda m: tables.run_label(m, shared[m]), width=220)
        netcdf = shared[chosen].result
        row.download_button(f"{tables.run_label(chosen, shared[chosen])} InferenceData (NetCDF)",
                            data=lambda: files.netcdf_bytes(netcdf), file_name=f"{stem}_{chosen}.nc",
                            mime="application/x-netcdf", on_click="ignore", width="content")
    records = inputs.records
    with_records = False
    if s.data == "csv":
        with_records = row.checkbox("Put the confidential records in the TOML", key=keys.W_TOML_RECORDS,
                                    help="Off: the TOML holds the release s_dp (what may leave the building), "
                                         "the mechanism and the settings. On: it also holds every uploaded "
                                         "record in plain text; share it only where the records may go.")
    row.download_button("Scenario (TOML)" + (" with the records" if with_records else ""),
                        data=lambda: files.scenario_toml(s, records, s_dp=prepared.s_dp, n_dp=prepared.n_dp,
                                                         include_records=with_records),
                        # the confidential records' file apart from the shareable one (both were {stem}.toml)
                        file_name=f"{stem}_with_records.toml" if with_records else f"{stem}.toml",
                        mime="application/toml", on_click="ignore", width="content")
    row.download_button("Figure (HTML)", data=lambda: export.html_text(file_fig()),
                        file_name=f"{posterior_name}.html", mime="text/html", on_click="ignore", width="content")
    if export.static_export_available():
        row.download_button("Figure (PNG)", data=lambda: export.png_bytes(file_fig()),
                            file_name=f"{posterior_name}.png",
                            mime="image/png", on_click="ignore", width="content")
    else:
        row.caption("PNG: the camera icon on the figure")
    if s.data == "csv":
        st.caption("The page address holds this scenario's settings but not the uploaded records: whoever opens "
                   "the link is asked to upload the file. The TOML holds the release, not the records, unless you "
                   "tick the box above.")
    else:
        st.caption("The page address holds this scenario: copy it to share.")
