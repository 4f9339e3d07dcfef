"""One colour and one line style per method, the same on every page and in every export, and the figure template.

Colours are the Okabe–Ito palette (Okabe & Ito 2008) with some of Tol's muted colours, chosen to stay distinct
under the common colour-vision deficiencies, and every method also has its own line style, so no two curves differ by
hue alone (naive in vermillion and long dashes, the exact posterior in blue and solid). Every colour a figure
draws with reads on both the light and the dark theme: its contrast (WCAG 2 relative luminance) against each
theme's background (``BACKGROUNDS``) is at least ``MIN_CONTRAST`` = 3:1, WCAG's minimum for graphics a reader
needs, which takes a relative luminance between about 0.12 and 0.30. No black or white, and darker or paler
variants where Okabe–Ito's and Tol's own fall outside that band: Tol's indigo and wine were 1.5 and 2.1:1 on
the dark background (the best-method curve all but vanished), orange, sky blue, pink and olive 2.0–2.7:1 on
white.
Figures carry no template of their own, so ``st.plotly_chart``'s Streamlit theme (which follows the browser's
light or dark setting) styles the background, fonts and grid.
"""
from __future__ import annotations

import colorsys

__all__ = ["METHOD_COLORS", "METHOD_DASHES", "TRUTH_COLOR", "CHAIN_COLORS", "BOUND_COLOR", "NEUTRAL_COLOR",
           "BACKGROUNDS", "MIN_CONTRAST", "COLOR_WORDS", "color_of", "dash_of", "contrast_ratio", "color_word",
           "hue_name"]

METHOD_COLORS = {
    "naive": "#D55E00",            # vermillion: the analysis that fails
    "da_mcmc": "#009E73",          # bluish green
    "abc_rejection": "#CC79A7",    # reddish purple
    "ops": "#BF8700",              # amber (Okabe–Ito orange, darker): a different release altogether
    "exact": "#0072B2",            # blue: the exact posterior
    "pseudo_marginal": "#2E95D3",  # sky blue (Okabe–Ito's, deeper)
    "auto": "#7A5CE6",             # violet: the best exact method
    "rjmcmc": "#8c564b",           # brown: the posterior that also learns n
    "mcem": "#CC6677",             # rose (Tol): the maximum-likelihood estimate
    "bernstein_sheldon": "#AA4499",  # purple (Tol): the fast approximation
    "confidential": "#8c8c8c",     # grey: what the data alone would say
}
#: plotly dash of each method's curve (the confidential-data posterior is dotted)
METHOD_DASHES = {
    "naive": "longdash", "exact": "solid", "auto": "solid", "da_mcmc": "dash", "abc_rejection": "dashdot",
    "pseudo_marginal": "longdashdot", "bernstein_sheldon": "dash", "rjmcmc": "solid", "confidential": "dot",
}
TRUTH_COLOR = "#999933"   # olive (Tol): the true parameter of a simulation
BOUND_COLOR = "#D55E00"   # the exp(-ε) acceptance bound
#: one colour per chain; never the bound's vermillion (a chain's minimum line in it read as the exp(-ε) bound)
CHAIN_COLORS = ("#0072B2", "#BF8700", "#009E73", "#CC79A7", "#2E95D3", "#8c564b", "#7A5CE6", "#CC6677")
#: a reference line or marker that is no method (a uniform law, a prior mean, an even split): mid grey
NEUTRAL_COLOR = "#7f7f7f"
#: the backgrounds of Streamlit's light and dark themes, which the figures are drawn on (Streamlit 1.67's, as the
#: browser draws the page and the plot: tests/test_browser.py checks the dark one)
BACKGROUNDS = {"light": "#ffffff", "dark": "#171614"}
MIN_CONTRAST = 3.0

#: what the pages' explanations call a colour ("the green curve"): one plain word per colour they name, the word a
#: reader would use for what the screen shows (Okabe–Ito's vermillion #D55E00 renders orange, as its legend swatch
#: does: "the red dashed curve" named nothing a reader saw)
COLOR_WORDS = {"#D55E00": "orange", "#009E73": "green", "#0072B2": "blue", "#8c8c8c": "grey", "#7f7f7f": "grey",
               "#999933": "olive"}


def dash_of(method: str) -> str:
    """The method's line style ("dash" for anything unknown)."""
    return METHOD_DASHES.get(method, "dash")


def color_of(method: str) -> str:
    """The method's colour (grey for anything unknown, e.g. a custom label)."""
    return METHOD_COLORS.get(method, NEUTRAL_COLOR)


def _luminance(color: str) -> float:
    """WCAG 2 relative luminance of "#rrggbb", "#rgb" or "rgb(r, g, b)" / "rgba(r, g, b, a)" (alpha ignored)."""
    c = color.strip().lower()
    if c.startswith("#"):
        h = c[1:]
        if len(h) == 3:
            h = "".join(ch * 2 for ch in h)
        if len(h) != 6:
            raise ValueError(f"color = {color!r} is invalid: expected #rrggbb, #rgb, rgb(...) or rgba(...)")
        channels = [int(h[i:i + 2], 16) for i in (0, 2, 4)]
    elif c.startswith("rgb"):
        channels = [float(v) for v in c[c.index("(") + 1:c.index(")")].split(",")[:3]]
    else:
        raise ValueError(f"color = {color!r} is invalid: expected #rrggbb, #rgb, rgb(...) or rgba(...)")
    linear = [v / 255 / 12.92 if v / 255 <= 0.04045 else ((v / 255 + 0.055) / 1.055) ** 2.4 for v in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast_ratio(a: str, b: str) -> float:
    """WCAG 2 contrast ratio (L1 + 0.05) / (L2 + 0.05) of two colours, L1 the lighter: 1 to 21."""
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def color_word(color: str) -> str:
    """The plain word an explanation uses for ``color`` ("green" for the da_mcmc colour); a colour without one is
    a ValueError, so that a text never names a colour no figure draws."""
    try:
        return COLOR_WORDS[color]
    except KeyError:
        raise ValueError(f"color = {color!r} is invalid for color_word: it has no word; name one of "
                         f"{sorted(COLOR_WORDS)} or add it to COLOR_WORDS") from None


def hue_name(color: str) -> str:
    """The colour family of "#rrggbb" by its HSV hue (grey when nearly unsaturated, olive for a dark yellow): red
    below 20° or from 330°, then orange to 45°, yellow to 70°, green to 170°, blue to 260°, purple to 330°. What
    the test of ``COLOR_WORDS`` holds each word to. Orange starts at 20°: vermillion (#D55E00, 26.5°) reads
    orange on screen, and was called red while the boundary sat at 30°."""
    h = color.lstrip("#")
    r, g, b = (int(h[i:i + 2], 16) / 255 for i in (0, 2, 4))
    hue, sat, val = colorsys.rgb_to_hsv(r, g, b)
    deg = 360 * hue
    if sat < 0.15:
        return "grey"
    if 45 <= deg < 70:
        return "olive" if val < 0.7 else "yellow"
    for limit, name in ((20, "red"), (45, "orange"), (170, "green"), (260, "blue"), (330, "purple")):
        if deg < limit:
            return name
    return "red"
