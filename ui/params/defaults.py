"""The defaults that follow from a model and its prior: the true parameters a simulation starts from, the
predictors' mean and covariance of a regression with p predictors, and the CSV columns of a record.

The sidebar puts these into its boxes when the model or its shape changes; the URL form fills in what
a link leaves out. Nothing here imports streamlit.
"""
from __future__ import annotations

from typing import Any, Mapping

from .parsing import format_number, parse_matrix, parse_numbers
from .scenario import DEFAULT_PRIORS, REGRESSION_BETA

__all__ = ["default_truth", "default_truth_p", "regression_defaults", "record_columns"]


def _simplex_text(k: int, weights=None) -> str:
    """``k`` probabilities as text, 4 decimals, the last one closing the sum to exactly 1."""
    w = [1.0] * k if weights is None else [float(v) for v in weights]
    shares = [round(v / sum(w), 4) for v in w[:-1]]
    return ", ".join([f"{v:g}" for v in shares] + [f"{round(1.0 - sum(shares), 4):g}"])


def _levels(prior: Mapping[str, Any] | None) -> tuple[int, list[int]] | None:
    """(I, [J_k]) of a naive-Bayes log-linear prior, or None when its fields do not parse."""
    d = {**DEFAULT_PRIORS["naive_bayes_loglinear"], **dict(prior or {})}
    try:
        levels = [int(v) for v in parse_numbers("model.feature_levels", d["feature_levels"])]
        big_i = int(d["class_levels"])
    except (TypeError, ValueError):
        return None
    if big_i < 2 or not levels or min(levels) < 2 or big_i * sum(levels) > 10_000:
        return None
    return big_i, levels


def default_truth(model: str, prior: Mapping[str, Any] | None = None) -> str:
    """A sensible true parameter for simulation, as the text the widget shows (naive_bayes_loglinear:
    equal class probabilities pi)."""
    if model == "beta_binomial":
        return "0.3"
    if model == "poisson_gamma":
        return "3.0"
    if model == "normal_known_sd":
        return "0.5"
    if model == "naive_bayes_loglinear":
        shape = _levels(prior)
        return _simplex_text(shape[0] if shape else 2)
    if model == "linear_regression":
        return regression_defaults(_regression_p(prior))["truth"]
    try:
        k = len(parse_numbers("model.alpha", (prior or {}).get("alpha", DEFAULT_PRIORS[model]["alpha"])))
    except ValueError:
        k = 3
    return _simplex_text(k)


def default_truth_p(model: str, prior: Mapping[str, Any] | None = None) -> str:
    """naive_bayes_loglinear: true feature probabilities p[k][i][j] as flat text (table k, class i,
    level j fastest), each row weighted 1 + ((i + j) mod J_k) so that the classes differ; "" for
    other models."""
    if model != "naive_bayes_loglinear":
        return ""
    big_i, levels = _levels(prior) or (2, [2, 2])
    rows = [_simplex_text(jk, [1 + (i + j) % jk for j in range(jk)]) for jk in levels for i in range(big_i)]
    return ", ".join(rows)


def _regression_p(prior: Mapping[str, Any] | None) -> int:
    try:
        p = int((prior or {}).get("p", DEFAULT_PRIORS["linear_regression"]["p"]))
    except (TypeError, ValueError):
        return 2
    return p if 1 <= p <= 10 else 2


def regression_defaults(p: int) -> dict[str, str]:
    """linear_regression's widgets for ``p`` predictors: x_mean, x_cov and the true beta as text. At
    p = 2 the paper's (000 Sec. 5) values; otherwise standard normal predictors and coefficients
    alternating 1, -1, ...; the intercept 0.5."""
    if p == 2:
        return {"x_mean": DEFAULT_PRIORS["linear_regression"]["x_mean"],
                "x_cov": DEFAULT_PRIORS["linear_regression"]["x_cov"], "truth": REGRESSION_BETA}
    return {"x_mean": ", ".join(["0"] * p),
            "x_cov": "; ".join(", ".join("1" if i == j else "0" for j in range(p)) for i in range(p)),
            "truth": ", ".join(["0.5"] + ["1" if j % 2 else "-1" for j in range(1, p + 1)])}


def resize_regression(p: int, x_mean: Any, x_cov: Any, truth: Any) -> tuple[dict[str, str], int]:
    """linear_regression's widgets for ``p`` predictors keeping what was typed: the first min(p, old p) entries of
    the mean m, that block of Σ and those coefficients (with the intercept), the defaults of
    :func:`regression_defaults` for new predictors (the new rows and columns of Σ zero off the diagonal, so it
    stays positive definite). Returns the texts and how many predictors were kept: 0 (all defaults) when what was
    typed does not parse or its sizes disagree."""
    d = regression_defaults(p)
    try:
        m, cov, beta = (parse_numbers("m", x_mean), parse_matrix("Σ", x_cov), parse_numbers("β", truth))
    except ValueError:
        return d, 0
    old = len(m)
    if len(cov) != old or any(len(row) != old for row in cov) or len(beta) != old + 1:
        return d, 0
    k = min(old, p)
    dm, dcov, dbeta = parse_numbers("m", d["x_mean"]), parse_matrix("Σ", d["x_cov"]), parse_numbers("β", d["truth"])
    new_m = m[:k] + dm[k:]
    new_cov = [[cov[i][j] if i < k and j < k else (dcov[i][j] if i == j else 0.0) for j in range(p)] for i in range(p)]
    new_beta = beta[:k + 1] + dbeta[k + 1:]
    text = {"x_mean": ", ".join(format_number(v) for v in new_m),
            "x_cov": "; ".join(", ".join(format_number(v) for v in row) for row in new_cov),
            "truth": ", ".join(format_number(v) for v in new_beta)}
    return text, k


def record_columns(model: str, prior: Mapping[str, Any] | None = None) -> tuple[str, ...] | None:
    """The CSV columns of a multi-column record (naive_bayes_loglinear: y, x1..xK; linear_regression:
    x1..xp, y), else None (one column, chosen by the Column box). None too when the feature levels do
    not parse yet."""
    if model == "linear_regression":
        return tuple(f"x{j + 1}" for j in range(_regression_p(prior))) + ("y",)
    if model != "naive_bayes_loglinear":
        return None
    shape = _levels(prior)
    if shape is None:
        return None
    return ("y",) + tuple(f"x{k + 1}" for k in range(len(shape[1])))
