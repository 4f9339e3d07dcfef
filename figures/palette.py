"""One colour and one line style per method, the same on every page and in every export, and the figure template.

Colours are the Okabe–Ito palette (Okabe & Ito 2008) with two of Tol's muted colours, chosen to stay distinct under the common
colour-vision deficiencies, and every method also has its own line style, so no two curves differ by
hue alone (naive in vermillion and long dashes, the exact posterior in blue and solid). They read on
both the light and the dark theme: no black or white. Figures carry no template of their own, so
``st.plotly_chart``'s Streamlit theme (which follows the browser's light or dark setting) styles the
background, fonts and grid.
"""
from __future__ import annotations

__all__ = ["METHOD_COLORS", "METHOD_DASHES", "TRUTH_COLOR", "CHAIN_COLORS", "BOUND_COLOR", "color_of", "dash_of"]

METHOD_COLORS = {
    "naive": "#D55E00",            # vermillion: the analysis that fails
    "da_mcmc": "#009E73",          # bluish green
    "abc_rejection": "#CC79A7",    # reddish purple
    "ops": "#E69F00",              # orange: a different release altogether
    "exact": "#0072B2",            # blue: the exact posterior
    "pseudo_marginal": "#56B4E9",  # sky blue
    "auto": "#332288",             # indigo (Tol): the best exact method
    "rjmcmc": "#8c564b",           # brown: the posterior that also learns n
    "mcem": "#e377c2",             # pink: the maximum-likelihood estimate
    "bernstein_sheldon": "#882255",  # wine (Tol): the fast approximation
    "confidential": "#8c8c8c",     # grey: what the data alone would say
}
#: plotly dash of each method's curve (the confidential-data posterior is dotted)
METHOD_DASHES = {
    "naive": "longdash", "exact": "solid", "auto": "solid", "da_mcmc": "dash", "abc_rejection": "dashdot",
    "pseudo_marginal": "longdashdot", "bernstein_sheldon": "dash", "rjmcmc": "solid", "confidential": "dot",
}
TRUTH_COLOR = "#bcbd22"   # olive: the true parameter of a simulation
BOUND_COLOR = "#D55E00"   # the exp(-ε) acceptance bound
#: one colour per chain; never the bound's vermillion (a chain's minimum line in it read as the exp(-ε) bound)
CHAIN_COLORS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#8c564b", "#332288", "#e377c2")


def dash_of(method: str) -> str:
    """The method's line style ("dash" for anything unknown)."""
    return METHOD_DASHES.get(method, "dash")


def color_of(method: str) -> str:
    """The method's colour (grey for anything unknown, e.g. a custom label)."""
    return METHOD_COLORS.get(method, "#7f7f7f")
