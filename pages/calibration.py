"""Calibration page: prove that exact methods are calibrated and naive ones are not; the papers' presets."""
import streamlit as st

from figures import export, studies as study_plots
from figures.budget import with_scenario
from figures.labels import MECHANISM_LABELS, METHOD_LABELS, MODEL_LABELS, TERM_HELP
from ui import downloads, keys, narrative, studies
from ui.compute.files import name_part
from ui.routing import ensure_routed
from ui.sidebar.numbers import number_field

ensure_routed()

st.title("Calibration")
st.caption("Repeat M times: θ from the prior, records from the model, a fresh private release, every method. A "
           "calibrated method puts the true θ at a uniformly distributed quantile U of its draws (Cook, Gelman & "
           "Rubin; Bernstein & Sheldon 2018, Sec. 4): its ECDF follows the diagonal, its KS test passes and its "
           "intervals cover at their nominal rate. The confidential-data posterior is the reference.")
with st.expander("What am I looking at?"):
    st.markdown(
        "One posterior is a picture; calibration is proof. Each replicate draws a true θ from the prior, fresh "
        "records and a fresh release, and records where θ falls among each method's draws (its quantile U). "
        "**ECDF of U**: a calibrated method follows the diagonal; naive's S-shape means its intervals are too "
        "narrow. **KS**: the distance from the diagonal with its p-value. **Coverage**: how often the 50/80/90/95% "
        "intervals contain θ, with binomial error bars — a calibrated method sits on the nominal line. **MMD**: "
        "how far each method's draws are from the confidential-data posterior (smaller is more useful). **SBC "
        "ranks** (Talts et al.): flat histograms for a calibrated sampler. *The papers' results* reproduces "
        "published figures at a quick size, with the paper's numbers beside ours.")

MODELS = tuple(studies.PRIORS)
MECHANISMS = ("laplace", "discrete_laplace", "gaussian", "discrete_gaussian")
METHODS = ("naive", "exact", "da_mcmc", "pseudo_marginal", "abc_rejection", "ops")
state = st.session_state
defaults = studies.CalibrationInputs()
for key, value in ((keys.W_CAL_MODEL, defaults.model), (keys.W_CAL_MECHANISM, defaults.mechanism),
                   (keys.W_CAL_EPSILON, defaults.epsilon), (keys.W_CAL_N, defaults.n),
                   (keys.W_CAL_METHODS, list(defaults.methods)), (keys.W_CAL_M, defaults.replicates)):
    state.setdefault(key, value)

tab_study, tab_presets = st.tabs(["Your study", "The papers' results"])

with tab_study:
    st.caption("A study has its own inputs, not the other pages' scenario: it draws θ from a fixed prior M times and "
               "runs every method each time, which this page does for "
               + narrative.listed([MODEL_LABELS.get(m, m) for m in MODELS]) + ".")
    c1, c2, c3, c4 = st.columns(4)
    c1.selectbox("Model (prior fixed)", MODELS, key=keys.W_CAL_MODEL, format_func=lambda m: MODEL_LABELS.get(m, m))
    c2.selectbox("Mechanism", MECHANISMS, key=keys.W_CAL_MECHANISM, format_func=lambda m: MECHANISM_LABELS.get(m, m))
    epsilon = number_field("ε (Gaussian: ρ = ε²/2)", keys.W_CAL_EPSILON, container=c3, lower=0.001, upper=100.0)
    n = number_field("n records", keys.W_CAL_N, container=c4, integer=True, lower=1, upper=5000)
    c5, c6 = st.columns([3, 1])
    c5.multiselect("Methods", METHODS, key=keys.W_CAL_METHODS, format_func=lambda m: METHOD_LABELS.get(m, m))
    m_box = number_field("Replicates M", keys.W_CAL_M, container=c6, integer=True, lower=10, upper=2000,
                         help="How many times the study draws a true θ, records and a release, and runs every method.")
    if None in (epsilon, n, m_box):
        state.pop(keys.STUDY_REQUEST, None)  # a click with a box in error runs nothing, now or later
        st.stop()  # the box says what is wrong; what was typed stays
    inputs = studies.CalibrationInputs(model=state[keys.W_CAL_MODEL], mechanism=state[keys.W_CAL_MECHANISM],
                                       epsilon=float(epsilon), n=int(n), methods=tuple(state[keys.W_CAL_METHODS]),
                                       replicates=int(m_box))

    # The buttons ask for a study; the run their click starts reads it from the boxes as they are then. A value
    # typed just before the click reaches the server with it, after the page drew the button: inputs bound to the
    # button at drawing ran the study before that value (5 of 6 quick clicks, audit s24 races).
    def _request():
        state[keys.STUDY_REQUEST] = True

    def _stop():  # its click reruns the page; Streamlit stops the running study at its next replicate
        state.pop(keys.STUDY_REQUEST, None)

    def _use_fit(m: int):
        state[keys.W_CAL_M] = m
        state[keys.STUDY_REQUEST] = True

    st.button("Run study", key=keys.W_CAL_RUN, type="primary", on_click=_request, disabled=not inputs.methods)
    table, stopped = None, None
    interrupted = state.pop(keys.STUDY_RUNNING, None)  # set while a study runs, cleared when it ends on its own
    if interrupted is not None:  # so a Stop click or a newer input cut the last one short
        state[keys.STUDY_STOPPED] = interrupted
    request = inputs if state.pop(keys.STUDY_REQUEST, None) else None
    cost = studies.over_budget(request) if request is not None else None
    if cost is not None:
        st.info(f"The study was not run: it {narrative.would_take(cost)}.", icon=":material/timer:")
        if cost["fit"]:
            st.button(f"Run with settings that fit: M = {cost['fit']} replicates", key=keys.W_CAL_FIT,
                      on_click=_use_fit, args=(cost["fit"],))
        else:
            st.caption(f"Even M = {studies.MIN_REPLICATES} replicates do not fit: switch off the costliest method "
                       "or lower n.")
    elif request is not None:
        state.pop(keys.STUDY_STOPPED, None)
        state[keys.STUDY_RUNNING] = request
        stop_slot = st.empty()
        stop_slot.button("Stop", key=keys.W_CAL_CANCEL, on_click=_stop, icon=":material/stop_circle:",
                         help="Stops after the replicate in progress; finished replicates are shown and kept, and "
                              "Run resumes from them.")
        try:
            table = studies.run_calibration(request)  # a stopped study raises Streamlit's signal: never cached
        except ValueError as exc:
            st.error(str(exc), icon="⚠️")
        state.pop(keys.STUDY_RUNNING, None)  # reached only when the study ended on its own
        stop_slot.empty()
        if table is not None:
            state[keys.STUDY_RESULT] = request
    elif state.get(keys.STUDY_STOPPED) is not None:
        stopped = state[keys.STUDY_STOPPED]
        table = studies.finished_replicates(stopped)  # waits for the stopped study to write what it finished
        done = 0 if table is None else table["replicate"].nunique()
        st.warning(f"Study stopped after {done} of {stopped.replicates} replicates"
                   + (": showing those (not cached). Press Run study to resume from them." if done else "."),
                   icon=":material/stop_circle:")
    elif state.get(keys.STUDY_RESULT) is not None:
        table = studies.run_calibration(state[keys.STUDY_RESULT])  # from the cache: instant
    if table is None:
        if cost is None:  # over budget, the message above already says what happened and what fits
            st.info("Pick the study and press **Run study**; nothing runs until you do.")
    else:
        shown = stopped or state[keys.STUDY_RESULT]
        if shown != inputs:
            st.caption("Showing the last study run; the inputs above have changed since (press Run to update).")
        errors = table[table["error"].fillna("") != ""]
        for method, msg in errors.drop_duplicates("method")[["method", "error"]].itertuples(index=False):
            st.caption(f"{study_plots.method_label(method)} did not run: {msg}")
        summary = studies.summary(table)
        params = list(table["param"].unique())
        param = st.selectbox("Parameter", params) if len(params) > 1 else params[0]
        left, right = st.columns(2)

        def chart(fig, key: str, name: str, container=None) -> None:
            """``fig`` with its downloads, named for the study shown and titled, in the files, with it (every
            study's files were calibration_ecdf_theta.png and so on, and said nothing of the study)."""
            downloads.chart(fig, key=key, name=f"{shown.stem()}_{name}", container=container,
                            for_file=lambda: with_scenario(fig, export.page_title(fig), shown.words()))

        left.caption("ECDF of U: a calibrated method follows the diagonal.",
                     help="U is where the true θ falls among a method's draws (its posterior quantile); over the "
                          "replicates it is uniform for a calibrated method, so its empirical CDF is the diagonal.")
        chart(study_plots.ecdf_plot(table, param), keys.CAL_ECDF_CHART, f"ecdf_{name_part(param)}", container=left)
        right.caption("Coverage of the central intervals.", help=TERM_HELP["coverage"])
        chart(study_plots.coverage_plot(summary, param), keys.CAL_COVERAGE_CHART, f"coverage_{name_part(param)}",
              container=right)
        left.caption("KS distance of U from uniform, with its p-value.", help=TERM_HELP["KS"])
        chart(study_plots.ks_plot(summary, param), keys.CAL_KS_CHART, f"ks_{name_part(param)}", container=left)
        if table["mmd2"].notna().any():
            right.caption("MMD² to the confidential-data posterior.", help=TERM_HELP["MMD"])
            chart(study_plots.mmd_plot(table), keys.CAL_MMD_CHART, "mmd", container=right)
        st.caption("SBC rank histograms: flat for a calibrated method; the grey band holds 99% of a calibrated "
                   "method's bin counts.", help=TERM_HELP["SBC"])
        chart(study_plots.sbc_plot(table, param), keys.CAL_SBC_CHART, f"sbc_{name_part(param)}")
        st.dataframe(studies.summary_table(summary), hide_index=True, column_config=studies.SUMMARY_HELP)
        row = st.container(horizontal=True, gap="small")
        row.download_button("Download the summary (CSV)", studies.summary_csv(summary),
                            file_name=f"{shown.stem()}_summary.csv", mime="text/csv", key=keys.W_CAL_SUMMARY_DOWNLOAD)
        row.download_button("Download the replicate table (CSV)", studies.replicate_csv(table),
                            file_name=f"{shown.stem()}.csv", mime="text/csv", key=keys.W_CAL_DOWNLOAD)

with tab_presets:
    st.caption("Each preset reproduces a paper's result at its quick size (the CLI's `python -m engine study PRESET` "
               "runs the full size). It is computed once on this server and then shared by every session.")
    name = st.selectbox("Preset", list(studies.PRESET_TITLES), key=keys.W_CAL_PRESET,
                        format_func=studies.PRESET_TITLES.get)

    def _request_preset():
        state[keys.PRESET_REQUEST] = state[keys.W_CAL_PRESET]

    def _stop_preset():  # its click reruns the page; Streamlit stops the running preset at its next progress update
        state.pop(keys.PRESET_REQUEST, None)

    finished = studies.preset_finished(name)
    # priced before the button is drawn: over the budget a click could only refuse, so there is none
    over = None if finished else studies.preset_over_budget(name)
    if over is None:
        st.button("Show preset" if finished else "Run preset", key=keys.W_CAL_PRESET_RUN, on_click=_request_preset,
                  help="Already computed on this server: shown at once." if finished else None)
    interrupted = state.pop(keys.PRESET_RUNNING, None)  # set while a preset runs, cleared when it ends on its own
    if interrupted is not None:  # so a Stop click or a newer input cut it short
        state[keys.PRESET_STOPPED] = interrupted
    request = state.pop(keys.PRESET_REQUEST, None)
    result = None
    if finished and (request == name or state.get(keys.PRESET_RESULT) == name):
        result = studies.run_preset_cached(name)  # in the cache: at once, whatever it cost (no budget check)
        state[keys.PRESET_RESULT] = name
    elif finished:
        st.caption("Computed on this server already: **Show preset** shows it at once.")
    elif over is not None:
        st.info(f"Not computed on this server, and too long to start from this page: its quick size would take "
                f"{over['text']} here, over this server's budget of {over['budget']:g} s per run. Produce it "
                "offline with the command below (its tables as CSV and the comparison with the paper in the "
                "output directory). Or the operator can raise the budget (`DPL_WORK_BUDGET_S`, or `work_budget_s` "
                "in `.streamlit/secrets.toml`; README, \"Hosting for a class\"): a preset is computed once and "
                "then shared by every session.", icon=":material/timer:")
        st.code(studies.preset_cli(name), language="bash")
    else:
        cost = studies.preset_cost(name)
        if request == name:
            state.pop(keys.PRESET_STOPPED, None)
            state[keys.PRESET_RUNNING] = name
            st.caption(f"Computing it once for every session: estimated {cost['text']}.")
            stop_slot = st.empty()
            stop_slot.button("Stop", key=keys.W_CAL_PRESET_CANCEL, on_click=_stop_preset,
                             icon=":material/stop_circle:",
                             help="Stops the preset at its next block of work; nothing of it is kept.")
            result = studies.run_preset_cached(name)  # a stopped preset raises Streamlit's signal: never cached
            state.pop(keys.PRESET_RUNNING, None)  # reached only when the preset ended on its own
            stop_slot.empty()
            state[keys.PRESET_RESULT] = name
        elif state.get(keys.PRESET_STOPPED) == name:
            studies.wait_for_stopped_preset()  # the stopped run has unwound: nothing of it is left running
            st.warning("Preset stopped; nothing kept (a preset is cached only when it finishes). Press Run preset "
                       "to start it again.", icon=":material/stop_circle:")
        else:
            st.caption(f"Not computed on this server yet: its quick size takes {cost['text']} here.")
    if result is not None:
        st.code(result.text, language=None, wrap_lines=True)
        for fname, fig in study_plots.preset_figures(result).items():
            downloads.chart(fig, key=keys.preset_chart_key(name, fname), name=f"{name}_{fname}")
        for tname, t in result.tables.items():
            st.download_button(f"{tname}.csv", t.to_csv(index=False).encode(), file_name=f"{name}_{tname}.csv",
                               mime="text/csv", key=f"pw_cal_dl_{name}_{tname}")
