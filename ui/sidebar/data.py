"""The sidebar's Data section: simulate (the true parameters), a typed release, or a CSV of records, and
the seed; under them, a dp-wizard package's statistics to load (:mod:`ui.sidebar.dpwizard`). An uploaded CSV is
parsed before any widget is drawn (:func:`_read_upload`), so n and this section agree; a valid upload is remembered
in ``keys.UPLOAD`` (its bytes too, so the Column box can re-read it after a page switch, which empties the uploader).

Under the uploader: the Column box, a choice among the file's columns (those holding numbers first) kept in the
scenario's ``csv_column`` (the link's ``column``); and what the model does to the records before the release
(:func:`_clamp_note`): how many lie outside the clamp bounds, or beyond the sensitivity where nothing clamps them.
Without a file in this session (a link made from an upload carries no file) the section says so."""
from __future__ import annotations

from typing import Any

import numpy as np
import streamlit as st

from engine.core.data import MAX_BYTES, MAX_RECORDS, outside
from engine.models.linear_regression import MAX_P, LinearRegression
from figures.labels import DATA_LABELS

from .. import keys
from ..compute import files
from ..narrative import plain_number
from ..params.defaults import default_truth, record_columns
from ..params.messages import CLAMP_LABEL
from ..params.parsing import parse_number, parse_numbers
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


#: the data section's message when the source is an upload and this session has none: a link made from an upload
#: opened elsewhere said "the uploaded file is not usable" to someone who had uploaded nothing
NO_FILE = ("No file has been uploaded in this session. A link made from an uploaded file does not carry the file (its "
           "records stay where they were uploaded): upload it above to see the result, or switch the data source. "
           "Everything else in the link is kept.")
#: the same where the session did not open on such a link: the source was just switched to an upload
CHOOSE_FILE = "No file yet: upload a CSV file of records above (a header row, then one record per row)."


def _data_section(model: str, records=None, prior: tuple = (), mech: dict | None = None) -> tuple[dict, Any]:
    """The section's widgets and the place for its error: under the release, the file or the true values (an error
    about a typed s_dp showed below the seed and the dp-wizard expander, away from its box). ``records`` (a valid
    upload), ``prior`` (the model section's (name, value) pairs) and ``mech`` (the mechanism section's values) say
    what the model does to the uploaded records."""
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
            column = _column_box()
            if column is not None:
                out["csv_column"] = column
        kept = st.session_state.get(keys.UPLOAD)
        if kept is not None and st.session_state.get(keys.W_CSV) is None:
            st.caption(f"Using {kept['name']} ({len(kept['records']):,} records).")
        if records is not None:
            _clamp_note(model, records, dict(prior), mech or {})
    slot = st.empty()
    out["seed"] = int(number_box("Seed", keys.W_SEED, section="data", fallback=last_value("seed"), integer=True,
                                 help="A whole number ≥ 0; the same scenario and seed give identical results."))
    dpwizard_upload()
    return out, slot


def _upload_bytes() -> bytes | None:
    """The bytes of the file in the uploader, else of the last valid upload (the uploader forgets its file on a page
    switch), else None."""
    uploaded = st.session_state.get(keys.W_CSV)
    if uploaded is not None:
        return uploaded.getvalue()
    return (st.session_state.get(keys.UPLOAD) or {}).get("data")


def _column_box() -> str | None:
    """The Column box: a choice among the uploaded file's columns, those whose every cell is a number first (the
    others marked). Returns the column ("" for none chosen), or None where there is no file to choose from (the
    scenario then keeps the link's column, used once a file is uploaded)."""
    raw = _upload_bytes()
    columns = None
    if raw is not None:
        try:
            columns = files.upload_columns(raw)
        except ValueError:
            columns = None  # the file itself is unusable: its message is the section's error
    if columns is None:
        linked = st.session_state.get(keys.W_CSV_COLUMN)
        if linked:
            st.caption(f"Column {linked} (from the link), once the file is uploaded.")
        return None
    if st.session_state.get(keys.W_CSV_COLUMN) not in columns.columns:  # _read_upload has set it; a safeguard
        st.session_state[keys.W_CSV_COLUMN] = columns.columns[0] if len(columns.columns) == 1 else None
    chosen = st.selectbox("Column with the records", columns.ordered, key=keys.W_CSV_COLUMN,
                          format_func=lambda c: c if c in columns.numeric else f"{c} (not all numbers)",
                          placeholder="Choose the column that holds the records",
                          help="The file's columns, those whose every cell is a number first.")
    return chosen or ""


def _clamp_note(model: str, records: np.ndarray, prior: dict, mech: dict) -> None:
    """What the model does to the uploaded records before the release, said under the uploader: how many lie outside
    normal_known_sd's clamp bounds (a warning when most do: the analysis then sees another data set), or above
    poisson_gamma's clamp; without that clamp, how many exceed the sensitivity the noise is calibrated to, for whom the
    release is not ε-DP."""
    if model == "linear_regression":
        _regression_clamp_note(records, prior)
        return
    if getattr(records, "ndim", 1) != 1 or not len(records):
        return
    if model == "normal_known_sd":
        lo, hi = prior.get("lo"), prior.get("hi")
        if lo is None or hi is None:
            return
        o = outside(records, float(lo), float(hi))
        span = f"[{_num(lo)}, {_num(hi)}]"
        values = f"the file's values run from {_num(o.min)} to {_num(o.max)}"
        if not o.count:
            st.caption(f"All {o.n:,} records lie inside the clamp bounds {span}; {values}.")
            return
        text = (f"{o.count:,} of {o.n:,} records lie outside {span} and are clamped to it; {values}.")
        if 2 * o.count > o.n:
            st.warning(f"{text} Most records are changed before the release, so the results describe clamped data, "
                       "not the file: set clamp low and clamp high (Model section) to the range the records can take "
                       "(the noise grows with clamp high − clamp low).", icon="⚠️")
        else:
            st.caption(text)
    elif model == "poisson_gamma":
        upper = prior.get("upper")
        if upper is not None:
            o = outside(records, None, float(upper))
            if o.count:
                text = (f"{o.count:,} of {o.n:,} records exceed the clamp {_num(upper)} and count as {_num(upper)}; "
                        f"the file's largest is {_num(o.max)}.")
                (st.warning if 2 * o.count > o.n else st.caption)(text)
            return
        # a library release's own Δ, else the one typed over the model's, else the model's default without a clamp
        sensitivity = float(mech.get("noise_sensitivity") or mech.get("sensitivity") or 1.0)
        o = outside(records, None, sensitivity)
        if o.count:
            st.warning(f"{o.count:,} record{' exceeds' if o.count == 1 else 's exceed'} the sensitivity "
                       f"{_num(sensitivity)} the noise is calibrated to (the file's largest is {_num(o.max)}): for "
                       f"{'it' if o.count == 1 else 'them'} the release is not ε-DP. Tick “{CLAMP_LABEL}” in "
                       "the Model section, at the largest value a record may count.", icon="⚠️")


def _regression_clamp_note(records: np.ndarray, prior: dict) -> None:
    """linear_regression's clamp note: per column (x1, …, xp, y), how many uploaded records lie outside its clamp
    bounds (one bound for every column, or p + 1), with the column's range; a warning where most records are clamped.
    Says nothing while the bounds do not parse (the Model section shows that error)."""
    if getattr(records, "ndim", 1) != 2 or not len(records):
        return
    width = records.shape[1]
    try:
        lo = parse_numbers("clamp low", prior.get("lo"))
        hi = parse_numbers("clamp high", prior.get("hi"))
    except ValueError:
        return
    lo, hi = (b * width if len(b) == 1 else b for b in (lo, hi))
    if len(lo) != width or len(hi) != width:
        return
    names = [f"x{j + 1}" for j in range(width - 1)] + ["y"]
    columns = [(name, outside(records[:, j], lo[j], hi[j])) for j, name in enumerate(names)]
    n = len(records)
    changed = int(np.count_nonzero(((records < np.asarray(lo)) | (records > np.asarray(hi))).any(axis=1)))
    spans = "; ".join(f"{name} [{_num(o.lo)}, {_num(o.hi)}]" for name, o in columns)
    if not changed:
        st.caption(f"All {n:,} records lie inside the clamp bounds ({spans}).")
        return
    parts = "; ".join(f"{name}: {o.count:,} outside [{_num(o.lo)}, {_num(o.hi)}], the file's {name} from "
                      f"{_num(o.min)} to {_num(o.max)}" for name, o in columns if o.count)
    text = f"{changed:,} of {n:,} records have a value outside the clamp bounds and are clamped to them ({parts})."
    if 2 * changed > n:
        st.warning(f"{text} Most records are changed before the release, so the results describe clamped data, not "
                   "the file: set clamp low and clamp high (Model section) to the range the columns can take (the "
                   "noise grows with clamp high − clamp low).", icon="⚠️")
    else:
        st.caption(text)


def _num(v) -> str:
    """A bound or a record as people write it: 10,050, −3 (a minus sign, not a hyphen), 0.25."""
    return plain_number(float(v), 6).replace("-", "−")


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
    kept = state.get(keys.UPLOAD)
    if uploaded is not None:
        state.pop(keys.LINKED_UPLOAD, None)
    if uploaded is None and kept is None:
        return None, NO_FILE if state.get(keys.LINKED_UPLOAD) else CHOOSE_FILE
    raw = uploaded.getvalue() if uploaded is not None else kept.get("data")
    if raw is None:
        return kept["records"], None
    model = state.get(keys.W_MODEL)
    columns = record_columns(model, _widget_prior(model))
    if model == "naive_bayes_loglinear" and columns is None:
        return None, None  # the feature levels do not parse: the model section says why
    try:
        if columns is None:  # one column: the Column box's, if the file has it; else its only one, or none chosen
            header = files.upload_columns(raw).columns
            if state.get(keys.W_CSV_COLUMN) not in header:
                state[keys.W_CSV_COLUMN] = header[0] if len(header) == 1 else None
        read = files.read_upload(raw, columns or state.get(keys.W_CSV_COLUMN) or "")
    except ValueError as exc:
        if uploaded is not None:
            state.pop(keys.UPLOAD, None)
        return None, str(exc)
    name, size = (uploaded.name, uploaded.size) if uploaded is not None else (kept["name"], kept["size"])
    state[keys.UPLOAD] = {"name": name, "size": size, "records": read.records, "data": raw,
                          "blank_lines": read.blank_lines}
    return read.records, None
