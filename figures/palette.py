"""One colour per method, the same on every page and in every export, and the figure template.

Colours are the Tableau-10 hues (distinguishable for the common colour-vision deficiencies when
paired with the line styles the figures also vary) and read on both the light and the dark theme:
no black or white. Figures carry no template of their own, so ``st.plotly_chart``'s Streamlit theme
(which follows the browser's light or dark setting) styles the background, fonts and grid.
"""
from __future__ import annotations

__all__ = ["METHOD_COLORS", "TRUTH_COLOR", "CHAIN_COLORS", "BOUND_COLOR", "color_of"]

METHOD_COLORS = {
    "naive": "#d62728",            # red: the analysis that fails
    "da_mcmc": "#1f77b4",          # blue
    "abc_rejection": "#2ca02c",    # green
    "ops": "#9467bd",              # purple
    "exact": "#ff7f0e",            # orange
    "pseudo_marginal": "#17becf",  # teal
    "auto": "#e6550d",             # deep orange: the best exact method
    "rjmcmc": "#8c564b",           # brown: the posterior that also learns n
    "mcem": "#e377c2",             # pink: the maximum-likelihood estimate
    "bernstein_sheldon": "#5254a3",  # indigo: the fast approximation
    "confidential": "#8c8c8c",     # grey: what the data alone would say
}
TRUTH_COLOR = "#bcbd22"   # olive: the true parameter of a simulation
BOUND_COLOR = "#d62728"   # the exp(-ε) acceptance bound
CHAIN_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf")


def color_of(method: str) -> str:
    """The method's colour (grey for anything unknown, e.g. a custom label)."""
    return METHOD_COLORS.get(method, "#7f7f7f")
