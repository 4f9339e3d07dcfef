"""The sidebar's Model section: the model, n and the prior's fields (a regression's predictors, a
log-linear model's levels), and the callbacks that refit the defaults when the model's shape changes."""
from __future__ import annotations

import streamlit as st

from figures.labels import MODEL_LABELS, PRIOR_LABELS

from .. import keys
from ..params.messages import CLAMP_LABEL
from ..params.defaults import default_truth, default_truth_p, record_columns, resize_regression
from ..params.scenario import DEFAULT_PRIORS, METHODS, MODELS, SIGMA_PRIOR_DEFAULTS, Scenario, default_methods
from .numbers import number_box, read_number


def _last(model: str, name: str):
    """The scenario's last valid value of a prior field (what a box that does not parse falls back to)."""
    s = st.session_state.get(keys.SCENARIO)
    prior = s.prior_dict if s is not None and s.model == model else {}
    value = prior.get(name, DEFAULT_PRIORS[model].get(name))
    return SIGMA_PRIOR_DEFAULTS.get(name, 10) if value is None else value


#: what a clamp bound does, under its box (a file of incomes ran at [−3, 3], every record set to 3, unsaid)
CLAMP_HELP = {
    "lo": "Records below this value are set to it before the release (clamped); the sensitivity, and so the noise, "
          "is clamp high − clamp low. Set the bounds to the range your records can take.",
    "hi": "Records above this value are set to it before the release (clamped); the sensitivity, and so the noise, "
          "is clamp high − clamp low. Set the bounds to the range your records can take.",
}

#: the model box's names, short enough for the sidebar ("Linear regression (Ju et al. 2022 §" was cut): a
#: longer name is written under the box
SHORT_MODEL_LABELS = {**MODEL_LABELS, "dirichlet_multinomial": "Dirichlet-multinomial (p)",
                      "naive_bayes_loglinear": "Naive-Bayes log-linear", "linear_regression": "Linear regression"}


def _model_changed() -> None:
    """A switch of model whose method boxes are the old model's defaults gets the new model's
    (:func:`ui.params.scenario.default_methods`: no ABC rejection for a release of many numbers, where it spent its
    10 s on a handful of draws or none); boxes the person changed stay as they are."""
    state = st.session_state
    old = (state.get(keys.SCENARIO) or Scenario()).model
    new = state.get(keys.W_MODEL, old)
    on = {m for m in METHODS if state.get(keys.method_key(m))}
    if new != old and on == set(default_methods(old)):
        for m in METHODS:
            state[keys.method_key(m)] = m in default_methods(new)


def _model_section(records) -> tuple[str, int, tuple]:
    st.subheader("Model", divider="gray")
    model = st.selectbox("Model", MODELS, key=keys.W_MODEL, format_func=lambda m: SHORT_MODEL_LABELS.get(m, m),
                         on_change=_model_changed)
    if MODEL_LABELS[model] != SHORT_MODEL_LABELS[model]:  # the full name, which the box cut short
        st.caption(MODEL_LABELS[model])
    unknown = st.session_state.get(keys.W_SAMPLE_SIZE) == "unknown"
    last_n = int(st.session_state[keys.SCENARIO].n) if keys.SCENARIO in st.session_state else 40
    if records is not None:
        blank = int((st.session_state.get(keys.UPLOAD) or {}).get("blank_lines", 0))
        skipped = f" ({blank:,} blank line{'' if blank == 1 else 's'} skipped)" if blank else ""
        st.caption(f"n = {len(records):,} records, from the uploaded file{skipped}")
        n = int(read_number(keys.W_N, last_n, integer=True))
    elif unknown and st.session_state.get(keys.W_DATA) == "s_dp":
        n = int(read_number(keys.W_N, last_n, integer=True))  # a typed release has no known n: only n_dp
    else:
        label = "true n (simulates the records; the analyses see only n_dp)" if unknown else \
            "n (number of confidential records)"
        n = int(number_box(label, keys.W_N, section="model", fallback=last_n, integer=True,
                           help="A whole number of records, e.g. 2000 or 2e6."))
    prior = []
    if model == "naive_bayes_loglinear":
        c1, c2 = st.columns(2)
        levels = int(number_box(PRIOR_LABELS["class_levels"], keys.prior_key(model, "class_levels"), section="model",
                                fallback=_last(model, "class_levels"), integer=True, container=c1,
                                on_change=_levels_changed, args=("class_levels",),
                                help="I ≥ 2 classes; y takes the values 0 … I−1."))
        alpha = float(number_box("Dirichlet prior α (every row)", keys.prior_key(model, "alpha"), section="model",
                                 fallback=_last(model, "alpha"), container=c2,
                                 help="Dirichlet(α, …, α) prior on π and on every row p[k][i]; must be > 0."))
        features = st.text_input(PRIOR_LABELS["feature_levels"], key=keys.prior_key(model, "feature_levels"),
                                 on_change=_levels_changed, args=("feature_levels",),
                                 help="K features, one number of levels J_k ≥ 2 each, e.g. 2, 3, 2. The release "
                                      "is the K two-way tables (class × feature) with Laplace(2K/ε) noise.")
        _shape_note()
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
            prior.append((name, float(number_box(PRIOR_LABELS[name], keys.prior_key(model, name), section="model",
                                                 fallback=_last(model, name), container=cols[i % 2],
                                                 help=CLAMP_HELP.get(name)))))
        if "upper" in DEFAULT_PRIORS[model]:
            use = st.checkbox(CLAMP_LABEL, key=keys.prior_key(model, "use_upper"))
            upper = None
            if use:
                upper = int(number_box(PRIOR_LABELS["upper"], keys.prior_key(model, "upper"), section="model",
                                       fallback=_last(model, "upper"), integer=True,
                                       help="Records above this value count as this value; a whole number ≥ 1."))
            prior.append(("upper", upper))
    return model, n, tuple(prior)


def _regression_prior(model: str) -> list:
    """linear_regression's inputs (paper 000 Sec. 5): p, the predictors' known mean and covariance, the
    known noise sd, the clamp bounds and the prior sd of every coefficient."""
    c1, c2 = st.columns(2)
    p = int(number_box("predictors p", keys.prior_key(model, "p"), section="model", fallback=_last(model, "p"),
                       integer=True, container=c1, on_change=_p_changed,
                       help="Coefficients β0 (intercept), β1, …, βp, named beta[0], …, beta[p] in the results; "
                            "1 ≤ p ≤ 10."))
    _shape_note()
    unknown = bool(st.session_state.get(keys.prior_key(model, "sigma_unknown")))
    sigma = float(number_box("true noise sd σ" if unknown else "noise sd σ", keys.prior_key(model, "sigma"),
                             section="model", fallback=_last(model, "sigma"), container=c2,
                             help=("The σ the simulation draws y with (an upload or a typed release does not use it); "
                                   "the posterior has σ² as a parameter." if unknown else
                                   "Known: y | x ~ N(β0 + xᵀβ, σ²); must be > 0 (tick σ unknown below to give it "
                                   "a prior instead).")))
    x_mean = st.text_input("predictor mean m (p numbers)", key=keys.prior_key(model, "x_mean"),
                           help="x ~ N(m, Σ) with m and Σ known, e.g. 0.9, -1.17.")
    x_cov = st.text_input("predictor covariance Σ (rows separated by ;)", key=keys.prior_key(model, "x_cov"),
                          help="p × p, symmetric positive definite, e.g. 1, 0; 0, 1.")
    c3, c4 = st.columns(2)  # three columns broke each label over two lines
    lo = c3.text_input("clamp low", key=keys.prior_key(model, "lo"),
                       help="One number for every column, or p + 1 numbers (x1, …, xp, y).")
    hi = c4.text_input("clamp high", key=keys.prior_key(model, "hi"),
                       help="One number for every column, or p + 1 numbers (x1, …, xp, y); above the low one.")
    prior_sd = float(number_box("prior sd of β", keys.prior_key(model, "prior_sd"), section="model",
                                fallback=_last(model, "prior_sd"), container=st.columns(2)[0],
                                help="βj ~ N(0, sd²) independently; must be > 0."))
    a = b = None
    if st.checkbox("σ unknown: a parameter σ² with an inverse-gamma prior", key=keys.prior_key(model, "sigma_unknown"),
                   help="σ² ~ InvGamma(a, scale b), mean b / (a − 1) for a > 1; the posterior then has sigma2 as a "
                        "parameter beside β."):
        c6, c7 = st.columns(2)
        a = float(number_box("σ² prior a (shape)", keys.prior_key(model, "sigma_a"), section="model",
                             fallback=_last(model, "sigma_a"), container=c6, help="Must be > 0."))
        b = float(number_box("σ² prior b (scale)", keys.prior_key(model, "sigma_b"), section="model",
                             fallback=_last(model, "sigma_b"), container=c7, help="Must be > 0."))
    return [("p", p), ("x_mean", x_mean), ("x_cov", x_cov), ("sigma", sigma), ("lo", lo), ("hi", hi),
            ("prior_sd", prior_sd)] + ([("sigma_a", a), ("sigma_b", b)] if a is not None else [])


def _shape_note() -> None:
    """What a change of p (regression) or of the levels (log-linear) kept, said once under its boxes."""
    note = st.session_state.pop(keys.P_RESIZED, None)
    if note:
        st.caption(note)


def _p_changed() -> None:
    """A new number of predictors needs a mean, a covariance and true coefficients of the new size: keep what
    was typed for the predictors that stay and put in the defaults for new ones (all defaults, paper 000 Sec. 5's
    at p = 2, when what was typed does not parse), and say so under the box."""
    state, model = st.session_state, "linear_regression"
    p = read_number(keys.prior_key(model, "p"), 0, integer=True)
    if not 1 <= p <= 10:
        return  # the engine's message names the allowed range
    keys_ = (keys.prior_key(model, "x_mean"), keys.prior_key(model, "x_cov"), keys.truth_key(model))
    d, kept = resize_regression(p, *(state.get(k, "") for k in keys_))
    state[keys_[0]], state[keys_[1]], state[keys_[2]] = d["x_mean"], d["x_cov"], d["truth"]
    if kept == 0:
        state[keys.P_RESIZED] = (f"p = {p}: the mean m, the covariance Σ and the true β are the defaults for {p} "
                                 "predictors (what was there did not fit together).")
    elif kept < p:
        state[keys.P_RESIZED] = (f"p = {p}: m, Σ and the true β keep the first {kept} predictors' values; x{kept + 1}"
                                 + (f"…x{p}" if p > kept + 1 else "") + " take the defaults (mean 0, variance 1, "
                                 "independent of the others).")
    else:
        state[keys.P_RESIZED] = f"p = {p}: m, Σ and the true β keep the first {p} predictors' values."


def _levels_changed(field: str) -> None:
    """Changing I or the feature levels changes how many true probabilities there are: put in the
    default ones for the new shape (π only depends on I), unless the new levels do not parse yet."""
    state, model = st.session_state, "naive_bayes_loglinear"
    prior = {"class_levels": read_number(keys.prior_key(model, "class_levels"), 0, integer=True),
             "feature_levels": state.get(keys.prior_key(model, "feature_levels"))}
    if record_columns(model, prior) is None:
        return
    if field == "class_levels":
        state[keys.truth_key(model)] = default_truth(model, prior)
    state[keys.W_TRUTH_P] = default_truth_p(model, prior)
    state[keys.P_RESIZED] = ("New shape: the true " + ("π and p are" if field == "class_levels" else "p is")
                             + " now the defaults for it (every entry a new size needs; edit them under Data).")
