"""What the lab calls each choice and each result, in words: the sidebar's options, the legends, the tables.

Pure constants and a few formatters; nothing here imports streamlit.
"""
from __future__ import annotations

import numpy as np

__all__ = [
    "METHOD_LABELS",
    "MODEL_LABELS",
    "MECHANISM_LABELS",
    "BUDGET_LABELS",
    "DATA_LABELS",
    "SIZE_LABELS",
    "N_PRIOR_LABELS",
    "N_BUDGET_LABELS",
    "PRIOR_LABELS",
    "result_label",
    "info_label",
    "format_p",
    "summary_number",
    "acceptance_text",
    "TERM_HELP",
]

METHOD_LABELS = {
    "naive": "Naive",
    "da_mcmc": "DA-MCMC",
    "abc_rejection": "ABC rejection",
    "ops": "OPS",
    "exact": "Exact (closed form)",
    "pseudo_marginal": "Pseudo-marginal",
    "auto": "Exact (best method)",
    "bernstein_sheldon": "Bernstein–Sheldon (approximate)",
    "rjmcmc": "RJMCMC (unknown n)",
    "mcem": "MLE (Monte Carlo EM)",
    "confidential": "Confidential data",
}
MODEL_LABELS = {
    "beta_binomial": "Beta-binomial (proportion θ)",
    "poisson_gamma": "Poisson-gamma (rate λ)",
    "dirichlet_multinomial": "Dirichlet-multinomial (cell probabilities p)",
    "normal_known_sd": "Normal with known sd (mean μ)",
    "naive_bayes_loglinear": "Naive-Bayes log-linear (Ju et al. 2022 §4)",
    "linear_regression": "Linear regression (Ju et al. 2022 §5)",
}
MECHANISM_LABELS = {
    "laplace": "Laplace",
    "gaussian": "Gaussian",
    "discrete_laplace": "Discrete Laplace",
    "discrete_gaussian": "Discrete Gaussian",
    "randomized_response": "Randomized response",
}
BUDGET_LABELS = {
    "epsilon": "ε (pure DP)",
    "rho": "ρ (zero-concentrated DP)",
    "epsilon_delta": "(ε, δ) approximate DP",
    "k_ary": "k-ary, set ε",
    "coin": "coin flips (dapper Example 1)",
}
DATA_LABELS = {"simulate": "Simulate records", "csv": "Upload CSV of records", "s_dp": "Enter the release s_dp"}
SIZE_LABELS = {"known": "known", "unknown": "unknown (private)"}
N_PRIOR_LABELS = {"poisson": "Poisson", "negative_binomial": "Negative binomial"}
N_BUDGET_LABELS = {"epsilon": "ε", "scale": "noise scale"}
PRIOR_LABELS = {
    "a": "prior a (Beta)", "b": "prior b (Beta)", "alpha": "prior shape α (Gamma)", "beta": "prior rate β (Gamma)",
    "upper": "clamp records at", "sd": "record sd (known)", "lo": "clamp low", "hi": "clamp high",
    "prior_mean": "prior mean of μ", "prior_sd": "prior sd of μ",
    "class_levels": "classes I (levels of y)", "feature_levels": "levels of each feature (one number per feature)",
}


def result_label(result) -> str:
    """The legend and table name of an engine Result: its method's label and, for a method that needs
    a known n run on an unknown-n release, the plug-in size it ran at (``info["plug_in_n"]``).

    ``exact`` says what it is: "Exact (numerical)" for an adaptive-grid posterior (``info["representation"]``
    is ``grid``: the clamped models) rather than "closed form"; and at a plug-in n it is no longer the exact
    posterior, so "Closed form given plug-in n = 21" (and "Best method given plug-in n = 21" for ``auto``), not
    "Exact … at plug-in n", which contradicted itself. The size is written with thousands separators, as the
    figures' "plug-in n = 1,000,000" line and the sentences write it (a file name drops them, :func:`name_part`)."""
    return info_label(result.method, result.info)


def info_label(method: str, info) -> str:
    """:func:`result_label` of a run known by its method and ``info`` alone (Exact (best method)'s
    ``picked_info``, the info of the run it picked)."""
    n = info.get("plug_in_n")
    grid = method == "exact" and info.get("representation") == "grid"
    if n is None:
        return "Exact (numerical)" if grid else METHOD_LABELS.get(method, method)
    given = {"exact": "Numerical posterior" if grid else "Closed form", "auto": "Best method"}.get(method)
    if given is not None:
        return f"{given} given plug-in n = {int(n):,}"
    return f"{METHOD_LABELS.get(method, method)} at plug-in n = {int(n):,}"


#: one-sentence definitions of the terms the pages use, for tooltips (``help=``) where the term appears
TERM_HELP = {
    "R-hat": "R-hat compares the spread within each chain with the spread between chains; near 1 the chains agree. "
             "Above 1.01 they have not yet settled on one distribution.",
    "ESS": "Effective sample size: how many independent draws the correlated chain is worth. Below 400 the "
           "interval ends and the sd are unreliable.",
    "KS": "Kolmogorov–Smirnov test: the largest gap D between the quantiles' empirical CDF and the diagonal of a "
          "uniform; its p-value is the chance of a gap at least this large if the method were calibrated.",
    "SBC": "Simulation-based calibration (Talts et al. 2018): the rank of the true value among L thinned draws; "
           "a calibrated method gives every rank 0..L the same chance, so the histogram is flat.",
    "MMD": "Maximum mean discrepancy: a distance between two samples' distributions (0 when they are equal); "
           "here between a method's draws and the confidential-data posterior's.",
    "coverage": "How often the central c% interval contains the true value over the replicates; a calibrated "
                "method covers c% of the time (error bars: 95% Wilson intervals).",
    "confidential": "The posterior from the confidential records themselves, p(θ | x), without noise: what no "
                    "private release can beat.",
    "sd": "Posterior standard deviation: the width of what the data say about the parameter.",
}


def summary_number(v: float) -> str:
    """A posterior summary as every table and figure label writes it: four significant digits, and from 1,000 on
    the whole number with thousands separators (-46,730, not -4.673e+04)."""
    return f"{v:,.0f}" if 999.95 <= abs(v) < 1e15 else f"{v:.4g}"


def acceptance_text(v: float) -> str:
    """An acceptance rate as every table, sentence and figure label writes it (Compare's acceptance column,
    Diagnostics' metrics and its acceptance figure): four significant digits and never an exponent (0.9309,
    0.287, 0.00001359, not 1.359e-05); "—" where there is none (NaN)."""
    v = float(v)
    if v != v or v in (float("inf"), float("-inf")):
        return "—"
    return np.format_float_positional(v, precision=4, unique=False, fractional=False, trim="-")


def format_p(p) -> str:
    """A p-value as every page and figure writes it: two significant digits from 0.001 on (0.35, 0.0012), and
    "< 0.001" below (4.9e-06 read as an exponent a newcomer does not parse; 0 is never claimed); "—" when there
    is none."""
    try:
        value = float(p)
    except (TypeError, ValueError):
        return "—"
    if value != value:
        return "—"
    if value < 0.001:
        return "< 0.001"
    return f"{value:.2g}"
