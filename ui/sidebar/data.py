"""The sidebar's Data section: simulate (the true parameters), a typed release, or a CSV of records, and
the seed; under them, a dp-wizard package's statistics to load (:mod:`ui.sidebar.dpwizard`). An uploaded CSV is parsed before any widget is drawn (:func:`_read_upload`), so n and this
section agree; a valid upload is remembered in ``keys.UPLOAD``."""
from __future__ import annotations

from typing import Any

import numpy as np
import streamlit as st

from engine.core.data import MAX_BYTES, MAX_RECORDS
from engine.models.linear_regression import MAX_P, LinearRegression
from figures.labels import DATA_LABELS

from .. import keys
from ..compute import files
from ..params.defaults import default_truth, record_columns
from ..params.parsing import parse_number
from ..params.scenario import DATA_SOURCES, DEFAULT_PRIORS
from .dpwizard import dpwizard_upload
from .numbers import last_value, number_box


def _is_number(text) -> bool:
    try:
        float(text)
    except (TypeError, ValueError):
        return False
    return True


def _regression_order() -> str:
    """The order of a regression release for the p in the sidebar's box, in the engine's own names
    (``LinearRegression.stat_labels``): the help named the entries but not their order, which only the error of a
    release of the wrong length spelled out (column by column: sum x1, sum x1*x1, sum x2, sum x1*x2, …)."""
    try:
        p = int(parse_number("p", st.session_state.get(keys.prior_key("linear_regression", "p"), 2), integer=True))
    except ValueError:
        return ""
    if not 1 <= p <= MAX_P:
        return ""
    return f", for p = {p} in this order: " + ", ".join(LinearRegression(n=1, p=p).stat_labels())


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
                                         help="p + 1 numbers: the intercept first. The results name them "
                                              "beta[0] (the intercept), beta[1], …, beta[p].")
        else:
            last = st.session_state.get(keys.SCENARIO)
            fallback = float(last.truth) if last is not None and last.model == model and _is_number(last.truth) \
                else float(default_truth(model))
            out["truth"] = repr(float(number_box(f"True {_truth_symbol(model)}", keys.truth_key(model), section="data",
                                                 fallback=fallback)))
    elif source == "s_dp":
        out["s_dp"] = st.text_input("Released s_dp", key=keys.s_dp_key(model),
                                    placeholder="e.g. 10.4  or  104, 120, 74, 102",
                                    help="The privatized statistic: one number, or one per cell for "
                                         "the Dirichlet-multinomial model; for the naive-Bayes log-linear "
                                         "model the K tables nᵢⱼ⁽ᵏ⁾ in order (k = 1, …, K), each row-major "
                                         "over (class i, level j); for linear regression the d normalised entries "
                                         "(x̃ᵀỹ, ỹᵀỹ, the unique entries of x̃ᵀx̃ without the constant)"
                                         + (_regression_order() if model == "linear_regression" else "") + ".")
        if st.session_state.get(keys.W_SAMPLE_SIZE) == "unknown" and st.session_state.get(keys.W_N_MECHANISM) != "none":
            out["n_dp"] = st.text_input("Released n_dp (noisy number of records)", key=keys.W_N_DP,
                                        placeholder="e.g. 21.4", help="One number; negative is possible (it is noise).")
    else:
        st.file_uploader("CSV of confidential records (header row, one record per row)", type=["csv"],
                         key=keys.W_CSV, on_change=_upload_changed)
        st.caption(f"At most {MAX_BYTES // (1024 * 1024)} MB and {MAX_RECORDS:,} records. A larger file is refused by "
                   "the uploader itself, with a red mark on the file. The records stay on this server: they are not "
                   "in the page's link, nor in the TOML download unless you ask for them.")
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
    out["seed"] = int(number_box("Seed", keys.W_SEED, section="data", fallback=last_value("seed"), integer=True,
                                 help="A whole number ≥ 0; the same scenario and seed give identical results."))
    dpwizard_upload()
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
