"""The scenario sidebar shared by the Compare, Privacy budget and Diagnostics pages.

:func:`scenario_inputs` renders the widgets, reads them into a frozen :class:`~ui.params.scenario.Scenario`,
validates it in the order a reader fills it in (model, mechanism, data, methods) through the
engine, and puts each ``ValueError`` message in an ``st.error`` directly under the section whose
field it names. The widgets keep what the user typed; only the results wait for a valid input.

State: the canonical scenario lives in ``st.session_state[keys.SCENARIO]``; widget keys are seeded
from it when missing (first visit, after a page switch, after a preset), and the scenario is
mirrored into the URL query string so a copied link reopens it.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any, Mapping

import numpy as np
import streamlit as st

from . import keys
from .compute import files, method_runs, problems
from .compute.records import Prepared, spec_json
from .params.defaults import default_truth, default_truth_p, record_columns, regression_defaults
from .params.labels import (BUDGET_LABELS, DATA_LABELS, MECHANISM_LABELS, METHOD_LABELS, MODEL_LABELS, N_BUDGET_LABELS,
                            N_PRIOR_LABELS, PRIOR_LABELS, SIZE_LABELS)
from .params.parsing import parse_numbers
from .params.query import from_query, to_query
from .params.scenario import (DATA_SOURCES, DEFAULT_PRIORS, METHODS, MECHANISMS, MODELS, N_BUDGET_FORMS, N_MECHANISMS,
                              N_PRIORS, PRIOR_KINDS, SAMPLE_SIZES, Scenario, budget_forms)
from .params.spec import method_settings, to_spec_dict
from .presets import DEMO

__all__ = ["Inputs", "scenario_inputs", "load_scenario", "current_scenario"]

SECTIONS = ("model", "size", "mechanism", "data", "methods")


@dataclass(frozen=True)
class Inputs:
    """What a page needs from the sidebar."""

    scenario: Scenario
    records: np.ndarray | None
    errors: Mapping[str, str] = field(default_factory=dict)
    prepared: Prepared | None = None
    spec_text: str | None = None

    @property
    def ok(self) -> bool:
        return not self.errors and self.prepared is not None


# --------------------------------------------------------------------------- canonical state
def current_scenario() -> Scenario:
    """The session's scenario: from the URL on a session's first run, else the demo."""
    state = st.session_state
    if keys.SCENARIO not in state:
        scenario = DEMO
        try:
            linked = from_query(st.query_params.to_dict())
            if linked is not None:
                scenario = linked
        except ValueError as exc:
            state[keys.LINK_NOTE] = f"The link's scenario could not be read ({exc}); showing the demo instead."
        state[keys.SCENARIO] = scenario
    return state[keys.SCENARIO]


def load_scenario(scenario: Scenario) -> None:
    """Make ``scenario`` current and re-seed every sidebar widget from it (presets)."""
    state = st.session_state
    for key in [k for k in state if keys.is_scenario_widget(str(k))]:
        del state[key]
    state[keys.SCENARIO] = scenario


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


def _seed(key: str, value: Any) -> None:
    if key not in st.session_state:
        st.session_state[key] = value


def _seed_all(s: Scenario) -> None:
    _seed(keys.W_MODEL, s.model)
    _seed(keys.W_N, int(s.n))
    for model in MODELS:
        prior = s.prior_dict if model == s.model else DEFAULT_PRIORS[model]
        for name, default in DEFAULT_PRIORS[model].items():
            value = prior.get(name, default)
            kind = PRIOR_KINDS.get((model, name), "float")
            if name == "upper":
                _seed(keys.prior_key(model, "use_upper"), value is not None)
                _seed(keys.prior_key(model, name), int(value) if value is not None else 10)
            elif kind in ("text", "matrix", "bounds"):
                _seed(keys.prior_key(model, name), str(value))
            else:
                _seed(keys.prior_key(model, name), int(value) if kind == "int" else float(value))
        truth = s.truth if model == s.model else default_truth(model, prior)
        if model == "naive_bayes_loglinear":
            _seed(keys.truth_key(model), truth)
            _seed(keys.W_TRUTH_P, s.truth_p if model == s.model else default_truth_p(model, prior))
            _seed(keys.W_FROM_PRIOR, bool(s.from_prior) if model == s.model else False)
        elif model in ("dirichlet_multinomial", "linear_regression"):
            _seed(keys.truth_key(model), truth)
        else:
            try:
                _seed(keys.truth_key(model), float(parse_numbers("truth", truth)[0]))
            except ValueError:
                _seed(keys.truth_key(model), float(default_truth(model)))
        _seed(keys.s_dp_key(model), s.s_dp if model == s.model else "")
    _seed(keys.W_MECHANISM, s.mechanism)
    for mech in MECHANISMS:
        forms = budget_forms(mech)
        _seed(keys.budget_form_key(mech), s.budget_form if (mech == s.mechanism and s.budget_form in forms) else forms[0])
    _seed(keys.W_EPSILON, float(s.epsilon))
    _seed(keys.W_RHO, float(s.rho))
    _seed(keys.W_DELTA, float(s.delta))
    _seed(keys.W_TRUTH_PROB, float(s.truth_prob))
    _seed(keys.W_SENS_OVERRIDE, s.sensitivity is not None)
    _seed(keys.W_SENSITIVITY, float(s.sensitivity) if s.sensitivity is not None else 1.0)
    _seed(keys.W_DATA, s.data)
    _seed(keys.W_SEED, int(s.seed))
    _seed(keys.W_CSV_COLUMN, s.csv_column)
    for m in METHODS:
        _seed(keys.method_key(m), m in s.methods)
    _seed(keys.W_CHAINS, int(s.chains))
    _seed(keys.W_DRAWS, int(s.draws))
    _seed(keys.W_WARMUP, int(s.warmup))
    _seed(keys.W_ABC_SECONDS, float(s.abc_max_seconds))
    _seed(keys.W_ABC_PROPOSALS, int(s.abc_max_proposals))
    _seed(keys.W_OPS_K, int(s.ops_k))
    _seed(keys.W_SAMPLE_SIZE, s.sample_size)
    _seed(keys.W_N_PRIOR, s.n_prior)
    _seed(keys.W_N_PRIOR_MEAN, float(s.n_prior_mean))
    _seed(keys.W_N_PRIOR_DISPERSION, float(s.n_prior_dispersion))
    _seed(keys.W_N_MECHANISM, s.n_mechanism)
    _seed(keys.W_N_BUDGET_FORM, s.n_budget_form)
    _seed(keys.W_N_EPSILON, float(s.n_epsilon))
    _seed(keys.W_N_SCALE, float(s.n_scale))
    _seed(keys.W_N_DP, s.n_dp)


# --------------------------------------------------------------------------- widget sections
def _model_section(records) -> tuple[str, int, tuple]:
    st.subheader("Model", divider="gray")
    model = st.selectbox("Model", MODELS, key=keys.W_MODEL, format_func=MODEL_LABELS.get)
    unknown = st.session_state.get(keys.W_SAMPLE_SIZE) == "unknown"
    if records is not None:
        st.caption(f"n = {len(records):,} records, from the uploaded file")
        n = int(st.session_state[keys.W_N])
    elif unknown and st.session_state.get(keys.W_DATA) == "s_dp":
        n = int(st.session_state[keys.W_N])  # a typed release has no known n: only n_dp
    else:
        label = "true n (simulates the records; the analyses see only n_dp)" if unknown else \
            "n (number of confidential records)"
        n = int(st.number_input(label, min_value=1, step=1, key=keys.W_N))
    prior = []
    if model == "naive_bayes_loglinear":
        c1, c2 = st.columns(2)
        levels = int(c1.number_input(PRIOR_LABELS["class_levels"], step=1, key=keys.prior_key(model, "class_levels"),
                                     on_change=_levels_changed, args=("class_levels",),
                                     help="I ≥ 2 classes; y takes the values 0 … I−1."))
        alpha = float(c2.number_input("Dirichlet α (every row)", step=0.5, format="%g",
                                      key=keys.prior_key(model, "alpha"),
                                      help="Dirichlet(α, …, α) prior on π and on every row p[k][i]; must be > 0."))
        features = st.text_input(PRIOR_LABELS["feature_levels"], key=keys.prior_key(model, "feature_levels"),
                                 on_change=_levels_changed, args=("feature_levels",),
                                 help="K features, one number of levels J_k ≥ 2 each, e.g. 2, 3, 2. The release "
                                      "is the K two-way tables (class × feature) with Laplace(2K/ε) noise.")
        prior += [("class_levels", levels), ("feature_levels", features), ("alpha", alpha)]
    elif model == "linear_regression":
        prior += _regression_prior(model)
    elif model == "dirichlet_multinomial":
        alpha = st.text_input("Dirichlet prior α (one per cell, k = how many)", key=keys.prior_key(model, "alpha"),
                              help="e.g. 1, 1, 1, 1 for a flat prior on 4 cells")
        prior.append(("alpha", alpha))
    else:
        cols = st.columns(2)
        names = [k for k in DEFAULT_PRIORS[model] if k != "upper"]
        for i, name in enumerate(names):
            with cols[i % 2]:
                prior.append((name, float(st.number_input(PRIOR_LABELS[name], key=keys.prior_key(model, name),
                                                          step=0.1, format="%g"))))
        if "upper" in DEFAULT_PRIORS[model]:
            use = st.checkbox("Clamp records (bounded sensitivity)", key=keys.prior_key(model, "use_upper"))
            upper = None
            if use:
                upper = int(st.number_input(PRIOR_LABELS["upper"], min_value=1, step=1,
                                            key=keys.prior_key(model, "upper")))
            prior.append(("upper", upper))
    return model, n, tuple(prior)


def _regression_prior(model: str) -> list:
    """linear_regression's inputs (paper 000 Sec. 5): p, the predictors' known mean and covariance, the
    known noise sd, the clamp bounds and the prior sd of every coefficient."""
    c1, c2 = st.columns(2)
    p = int(c1.number_input("predictors p", step=1, key=keys.prior_key(model, "p"), on_change=_p_changed,
                            help="Coefficients β0 (intercept), β1, …, βp; 1 ≤ p ≤ 10."))
    sigma = float(c2.number_input("noise sd σ (known)", step=0.1, format="%g", key=keys.prior_key(model, "sigma"),
                                  help="y | x ~ N(β0 + xᵀβ, σ²); must be > 0."))
    x_mean = st.text_input("predictor mean m (p numbers)", key=keys.prior_key(model, "x_mean"),
                           help="x ~ N(m, Σ) with m and Σ known, e.g. 0.9, -1.17.")
    x_cov = st.text_input("predictor covariance Σ (rows separated by ;)", key=keys.prior_key(model, "x_cov"),
                          help="p × p, symmetric positive definite, e.g. 1, 0; 0, 1.")
    c3, c4, c5 = st.columns(3)
    lo = c3.text_input("clamp low", key=keys.prior_key(model, "lo"),
                       help="One number for every column, or p + 1 numbers (x1, …, xp, y).")
    hi = c4.text_input("clamp high", key=keys.prior_key(model, "hi"),
                       help="One number for every column, or p + 1 numbers (x1, …, xp, y); above the low one.")
    prior_sd = float(c5.number_input("prior sd of β", step=0.5, format="%g", key=keys.prior_key(model, "prior_sd"),
                                     help="βj ~ N(0, sd²) independently; must be > 0."))
    return [("p", p), ("x_mean", x_mean), ("x_cov", x_cov), ("sigma", sigma), ("lo", lo), ("hi", hi),
            ("prior_sd", prior_sd)]


def _p_changed() -> None:
    """A new number of predictors needs a mean, a covariance and true coefficients of the new size: put in
    the defaults for it (paper 000 Sec. 5's at p = 2)."""
    state, model = st.session_state, "linear_regression"
    try:
        p = int(state.get(keys.prior_key(model, "p")))
    except (TypeError, ValueError):
        return
    if not 1 <= p <= 10:
        return  # the engine's message names the allowed range
    d = regression_defaults(p)
    state[keys.prior_key(model, "x_mean")], state[keys.prior_key(model, "x_cov")] = d["x_mean"], d["x_cov"]
    state[keys.truth_key(model)] = d["truth"]


def _levels_changed(field: str) -> None:
    """Changing I or the feature levels changes how many true probabilities there are: put in the
    default ones for the new shape (π only depends on I), unless the new levels do not parse yet."""
    state, model = st.session_state, "naive_bayes_loglinear"
    prior = {name: state.get(keys.prior_key(model, name)) for name in ("class_levels", "feature_levels")}
    if record_columns(model, prior) is None:
        return
    if field == "class_levels":
        state[keys.truth_key(model)] = default_truth(model, prior)
    state[keys.W_TRUTH_P] = default_truth_p(model, prior)


def _size_changed() -> None:
    """Switching to an unknown n switches RJMCMC on (it is the method that answers that question), and
    back to a known n switches it off (it cannot run there)."""
    st.session_state[keys.method_key("rjmcmc")] = st.session_state.get(keys.W_SAMPLE_SIZE) == "unknown"


def _size_section() -> dict:
    st.subheader("Sample size", divider="gray")
    size = st.radio("Sample size n", SAMPLE_SIZES, key=keys.W_SAMPLE_SIZE, format_func=SIZE_LABELS.get,
                    horizontal=True, on_change=_size_changed,
                    help="Unknown: the number of records is private too, and released as a noisy n_dp "
                         "(unbounded DP, paper 002).")
    out: dict[str, Any] = {"sample_size": size}
    if size != "unknown":
        return out
    c1, c2 = st.columns(2)
    out["n_prior"] = c1.selectbox("prior on n", N_PRIORS, key=keys.W_N_PRIOR, format_func=N_PRIOR_LABELS.get)
    out["n_prior_mean"] = float(c2.number_input("prior mean of n", key=keys.W_N_PRIOR_MEAN, step=1.0, format="%g"))
    if out["n_prior"] == "negative_binomial":
        out["n_prior_dispersion"] = float(st.number_input(
            "dispersion r (variance = mean + mean²/r)", key=keys.W_N_PRIOR_DISPERSION, step=1.0, format="%g"))
    c3, c4 = st.columns(2)
    out["n_mechanism"] = c3.selectbox("noise on n", N_MECHANISMS, key=keys.W_N_MECHANISM,
                                      format_func=MECHANISM_LABELS.get)
    out["n_budget_form"] = c4.radio("stated as", N_BUDGET_FORMS, key=keys.W_N_BUDGET_FORM,
                                    format_func=N_BUDGET_LABELS.get, horizontal=True)
    if out["n_budget_form"] == "scale":
        out["n_scale"] = float(st.number_input("noise scale on n", key=keys.W_N_SCALE, step=0.5, format="%g",
                                               help="Laplace scale b of the noise added to n; must be > 0."))
    else:
        out["n_epsilon"] = float(st.number_input("ε for n", key=keys.W_N_EPSILON, step=0.1, format="%g",
                                                 help="Budget spent on releasing n (sensitivity 1); must be > 0."))
    return out


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


def _data_section(model: str) -> dict:
    st.subheader("Data", divider="gray")
    source = st.radio("Data source", DATA_SOURCES, key=keys.W_DATA, format_func=DATA_LABELS.get)
    out: dict[str, Any] = {"data": source}
    if source == "simulate":
        if model == "naive_bayes_loglinear":
            out["from_prior"] = st.checkbox("Draw the true π and p from the prior", key=keys.W_FROM_PRIOR)
            if not out["from_prior"]:
                out["truth"] = st.text_input("True class probabilities π (sum to 1)", key=keys.truth_key(model))
                out["truth_p"] = st.text_input(
                    "True feature probabilities p[k][i][j]", key=keys.W_TRUTH_P,
                    help="All K tables in order, each row-major over (class i, level j), j fastest: "
                         "p[0][0][0], p[0][0][1], …, p[0][1][0], … Every row p[k][i] sums to 1.")
        elif model == "dirichlet_multinomial":
            out["truth"] = st.text_input("True cell probabilities p (sum to 1)", key=keys.truth_key(model))
        elif model == "linear_regression":
            out["truth"] = st.text_input("True coefficients β0, β1, …, βp", key=keys.truth_key(model),
                                         help="p + 1 numbers: the intercept first.")
        else:
            out["truth"] = repr(float(st.number_input(f"True {_truth_symbol(model)}", key=keys.truth_key(model),
                                                      step=0.05, format="%g")))
    elif source == "s_dp":
        out["s_dp"] = st.text_input("Released s_dp", key=keys.s_dp_key(model),
                                    placeholder="e.g. 10.4  or  104, 120, 74, 102",
                                    help="The privatized statistic: one number, or one per cell for "
                                         "the Dirichlet-multinomial model; for the naive-Bayes log-linear "
                                         "model the K tables n_ij^k in order, each row-major over (class i, "
                                         "level j); for linear regression the d normalised entries "
                                         "(x̃ᵀỹ, ỹᵀỹ, the unique entries of x̃ᵀx̃ without the constant).")
        if st.session_state.get(keys.W_SAMPLE_SIZE) == "unknown":
            out["n_dp"] = st.text_input("Released n_dp (noisy number of records)", key=keys.W_N_DP,
                                        placeholder="e.g. 21.4", help="One number; negative is possible (it is noise).")
    else:
        st.file_uploader("CSV of confidential records (header row, one record per row)", type=["csv"],
                         key=keys.W_CSV, on_change=_upload_changed)
        columns = record_columns(model, _widget_prior(model))
        if model == "naive_bayes_loglinear":
            st.caption("Columns " + (", ".join(columns) if columns else "y, x1, …, xK") + ": integer levels "
                       "from 0 (y < I, x_k < J_k), one record per row.")
        elif model == "linear_regression":
            st.caption("Columns " + ", ".join(columns) + ": the predictors and the response, one record per "
                       "row (the engine clamps and normalises them before the release).")
        else:
            out["csv_column"] = st.text_input("Column (blank if the file has one column)", key=keys.W_CSV_COLUMN)
        kept = st.session_state.get(keys.UPLOAD)
        if kept is not None and st.session_state.get(keys.W_CSV) is None:
            st.caption(f"Using {kept['name']} ({len(kept['records']):,} records).")
    out["seed"] = int(st.number_input("Seed", min_value=0, step=1, key=keys.W_SEED,
                                      help="Same scenario and seed give identical results."))
    return out


def _truth_symbol(model: str) -> str:
    return {"beta_binomial": "θ (theta)", "poisson_gamma": "λ (lam)", "normal_known_sd": "μ (mu)"}[model]


def _widget_prior(model: str | None) -> dict:
    """The model's prior fields as their widgets hold them (before the model section is drawn)."""
    if model not in DEFAULT_PRIORS:
        return {}
    return {name: st.session_state.get(keys.prior_key(model, name), default)
            for name, default in DEFAULT_PRIORS[model].items()}


def _upload_changed() -> None:
    if st.session_state.get(keys.W_CSV) is None:
        st.session_state.pop(keys.UPLOAD, None)


def _read_upload() -> tuple[np.ndarray | None, str | None]:
    """Parse the uploaded CSV before any widget is drawn, so n and the data section agree.

    A valid upload is remembered in ``keys.UPLOAD``: the uploader widget itself forgets its file
    when the user switches pages."""
    state = st.session_state
    if state.get(keys.W_DATA) != "csv":
        return None, None
    uploaded = state.get(keys.W_CSV)
    if uploaded is None:
        kept = state.get(keys.UPLOAD)
        return (kept["records"], None) if kept is not None else (None, None)
    model = state.get(keys.W_MODEL)
    columns = record_columns(model, _widget_prior(model))
    if model == "naive_bayes_loglinear" and columns is None:
        return None, None  # the feature levels do not parse: the model section says why
    try:
        records = files.parse_upload(uploaded.getvalue(), columns or state.get(keys.W_CSV_COLUMN, ""))
    except ValueError as exc:
        state.pop(keys.UPLOAD, None)
        return None, str(exc)
    state[keys.UPLOAD] = {"name": uploaded.name, "size": uploaded.size, "records": records}
    return records, None


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


# --------------------------------------------------------------------------- validation
def _section_of(message: str) -> str:
    head = message.split(" = ", 1)[0].split(" ", 1)[0]
    if head.startswith("model.n_prior") or head.startswith("n_mechanism"):
        return "size"
    if head.startswith("model"):
        return "model"
    if head.startswith("mechanism"):
        return "mechanism"
    if head.startswith("method"):
        return "methods"
    return "data"


def _validate(s: Scenario, records, upload_error: str | None) -> tuple[dict, Prepared | None, str | None,
                                                                       str | None]:
    errors: dict[str, str] = {}
    noise = None
    if upload_error:
        errors["data"] = upload_error
    try:
        problems.check_model(s, records)
    except ValueError as exc:
        errors["model"] = str(exc)
    if "model" in errors and _section_of(errors["model"]) == "size":
        errors["size"] = errors.pop("model")
    if "model" not in errors and "size" not in errors:
        try:
            noise = problems.describe_mechanism(s, records)
        except ValueError as exc:
            section = _section_of(str(exc))
            errors[section if section in ("model", "size") else "mechanism"] = str(exc)
    if s.unknown_n and "size" not in errors:
        try:
            problems.describe_size_mechanism(s)
        except ValueError as exc:
            errors["size"] = str(exc)
    for m in s.methods:
        try:
            problems.validate_method(method_settings(s, m))
        except ValueError as exc:
            errors.setdefault("methods", str(exc))
    if errors:
        return errors, None, None, noise
    try:
        text = spec_json(to_spec_dict(s, records))
        return errors, problems.prepare(text), text, noise
    except ValueError as exc:
        errors[_section_of(str(exc))] = str(exc)
        return errors, None, None, noise


def _sync_query(s: Scenario) -> None:
    q = to_query(s)
    if st.query_params.to_dict() != q:
        st.query_params.from_dict(q)


def _reseed_on_page_switch(page: str) -> None:
    """Streamlit ties a widget's state to the page that drew it; on a page switch the sidebar
    widgets would come back at their defaults, so drop them and seed again from the scenario."""
    state = st.session_state
    if state.get(keys.LAST_PAGE, page) != page:
        for key in [k for k in state if keys.is_scenario_widget(str(k)) and k != keys.W_CSV]:
            del state[key]
    state[keys.LAST_PAGE] = page


def scenario_inputs(page: str, *, show_methods: bool = True) -> Inputs:
    """Render the sidebar and return the validated scenario (errors shown next to the inputs).

    ``page`` names the calling page; a change of page re-seeds the widgets from the scenario.
    """
    base = current_scenario()
    _reseed_on_page_switch(page)
    _seed_all(base)
    slots: dict[str, Any] = {}
    with st.sidebar:
        note = st.session_state.pop(keys.LINK_NOTE, None)
        if note:
            st.warning(note)
        records, upload_error = _read_upload()
        model, n, prior = _model_section(records)
        slots["model"] = st.empty()
        size = _size_section()
        slots["size"] = st.empty()
        mech = _mechanism_section(model)
        slots["noise"] = st.empty()
        slots["mechanism"] = st.empty()
        data = _data_section(model)
        slots["data"] = st.empty()
        methods = _methods_section() if show_methods else {}
        slots["methods"] = st.empty()
    values = {"model": model, "n": n, "prior": prior, **size, **mech, **data, **methods}
    scenario = _replace(base, values)
    st.session_state[keys.SCENARIO] = scenario
    _sync_query(scenario)
    errors, prepared, text, noise = _validate(scenario, records, upload_error)
    if noise:
        slots["noise"].caption(f"Implied noise: {noise}")
    if scenario.unknown_n and "size" not in errors:
        slots["size"].caption(f"Noise on n: {problems.describe_size_mechanism(scenario)}")
    if prepared is not None and prepared.supported_methods is not None and show_methods:
        labels = [METHOD_LABELS[m] for m in prepared.supported_methods]
        listed = labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " and " + labels[-1]
        slots["methods"].caption(f"{MODEL_LABELS.get(scenario.model, scenario.model)} runs {listed}; the other "
                                 "methods are skipped for it.")
    for section in SECTIONS:
        if section in errors:
            slots[section].error(errors[section], icon="⚠️")
    return Inputs(scenario=scenario, records=records, errors=errors, prepared=prepared, spec_text=text)


def _replace(base: Scenario, values: Mapping[str, Any]) -> Scenario:
    names = {f.name for f in fields(Scenario)}
    return replace(base, **{k: v for k, v in values.items() if k in names})
