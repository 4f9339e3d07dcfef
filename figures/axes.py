"""What the figures call things: a parameter in words (axis titles, picker labels), a method's name, and
the grid of panels that small multiples are laid out in. Pure; nothing here imports streamlit.

``_label`` and ``_grid_shape`` are shared by the figure modules of this package only."""
from __future__ import annotations

import math
import re
from typing import Sequence

from .labels import METHOD_LABELS

__all__ = ["PARAM_AXIS", "BOTTOM_LEGEND", "SYMBOLS", "describe_param", "param_label", "param_symbol", "axis_title",
           "pages_of", "wrap",
           "log_ticks", "alt_text", "titled", "top_title", "TITLE_PAD", "TITLE_LINE"]

#: A horizontal legend at the figure's bottom (container coordinates), under the x-axis title and never on it:
#: beside a plot in a half-width column a legend on the right would take most of its width.
BOTTOM_LEGEND = {"orientation": "h", "yref": "container", "yanchor": "bottom", "y": 0.0, "x": 0}

#: What each parameter is, for axis titles.
PARAM_AXIS = {
    "theta": "success probability θ (share of records equal to 1)",
    "lam": "Poisson rate λ (events per record)",
    "mu": "mean μ of a record (record units)",
    "p": "cell probability",
    "sigma2": "noise variance σ² of y given x",
}


def _label(method: str) -> str:
    """A method's name in legends and titles (the method's own name when it has no label)."""
    return METHOD_LABELS.get(method, method)


def _grid_shape(k: int, max_cols: int = 2) -> tuple[int, int]:
    """(rows, columns) of a grid of ``k`` panels at most ``max_cols`` wide."""
    cols = max(1, min(k, max_cols))
    return math.ceil(k / cols), cols


def describe_param(param: str) -> str | None:
    """What a parameter is, in words: ``pi[1]`` -> "P(class y = 1)", ``p[0][1][2]`` (naive-Bayes
    log-linear) -> "P(x1 = 2 | y = 1)", ``beta[0]`` -> "intercept", ``beta[2]`` -> "coefficient of
    x2"; the one-parameter models' names from :data:`PARAM_AXIS`; None when unknown."""
    base, idx = param.split("[")[0], [int(i) for i in re.findall(r"\[(\d+)\]", param)]
    if base == "pi" and len(idx) == 1:
        return f"P(class y = {idx[0]})"
    if base == "p" and len(idx) == 3:
        return f"P(x{idx[0] + 1} = {idx[2]} | y = {idx[1]})"
    if base == "beta" and len(idx) == 1:
        return "intercept" if idx[0] == 0 else f"coefficient of x{idx[0]}"
    return PARAM_AXIS.get(base)


def param_label(param: str) -> str:
    """A picker label: the name and what it is (``p[0][1][0] · P(x1 = 0 | y = 1)``, ``sigma2 · noise variance σ² of
    y given x``); a Dirichlet cell's "cell probability" says nothing its name does not, and a one-parameter model
    has no picker."""
    what = describe_param(param)
    generic = "[" in param and what == PARAM_AXIS.get(param.split("[")[0])
    return f"{param} · {what}" if what and param not in SYMBOLS and not generic else param


#: the one-parameter models' parameters as prose and figures write them (the engine's names are theta, lam, mu)
SYMBOLS = {"theta": "θ", "lam": "λ", "mu": "μ"}


def param_symbol(param: str) -> str:
    """θ, λ, μ for the one-parameter models' parameters; any other parameter by its name (beta[1], p[0][1][2])."""
    return SYMBOLS.get(param, param)


def axis_title(param: str) -> str:
    """An axis title that says what the parameter is and its unit, in lines short enough for a phone; a
    one-parameter model's description already holds its symbol ("Poisson rate λ …", not "lam: Poisson rate λ")."""
    what = describe_param(param)
    if what and param in SYMBOLS:
        return wrap(what)
    return wrap(f"{param}: {what}") if what else param


def wrap(text: str, width: int = 42) -> str:
    """``text`` broken into lines of at most ``width`` characters at spaces (plotly's ``<br>``), and after
    each "; ": plotly does not wrap a title or a legend entry, and on a 390 px phone a long one is cut."""
    if text is None:
        return text
    parts = str(text).split("; ")
    lines = []
    for k, part in enumerate(parts):
        line, mine = "", []
        for word in part.split(" "):
            if line and len(line) + 1 + len(word) > width:
                mine.append(line)
                line = word
            else:
                line = f"{line} {word}" if line else word
        mine.append(line + (";" if k < len(parts) - 1 else ""))
        lines += mine
    return "<br>".join(lines)


def pages_of(names: Sequence[str], per_page: int = 12) -> list[list[str]]:
    """``names`` cut into pages of at most ``per_page`` panels (small multiples of many parameters)."""
    names = list(names)
    if per_page < 1:
        raise ValueError(f"per_page = {per_page!r} is invalid: must be at least 1")
    return [names[i:i + per_page] for i in range(0, len(names), per_page)] or [[]]



#: a figure title's first line starts this far below the figure's top; each line is TITLE_LINE high (plotly's
#: title font, 17 px, at its line spacing of 1.3)
TITLE_PAD = 12
TITLE_LINE = 22


def top_title(text: str) -> dict:
    """A figure's ``layout.title`` hung from the top of the figure (its first line ``TITLE_PAD`` below it, the others
    under it). plotly's default puts the first line's baseline at the middle of the top margin and the other lines
    below it, so a title of four lines or more ran into the plot whatever the margin (Compare's six-line title of
    OpenDP's mean crossed the y axis's top tick)."""
    return {"text": text, "y": 1.0, "yref": "container", "yanchor": "top", "pad": {"t": TITLE_PAD}}


def titled(title: str) -> tuple[dict, int]:
    """A figure title wrapped for a phone (:func:`wrap`), hung from the figure's top (:func:`top_title`), and the
    top margin its lines need (22 px a line over 38): at 390 px an unwrapped title ("Calibration: KS distance of U
    from Uniform(0, 1) (theta)", "RJMCMC (unknown n): acceptance rate per record sweep (within the current n)") was
    cut at the figure's edge."""
    text = wrap(title)
    return top_title(text), 38 + TITLE_LINE * (1 + text.count("<br>"))

#: mantissas of a log axis's ticks, finest first: the finest that gives at most ``max_ticks`` ticks is used
#: a figure's plot area on a 390 px phone (px across, px up) and a label's size there (plotly's 12 px font:
#: about 6.5 px a character, 4 px from its point): labels are spaced for the phone, where "ε = 10", "ε = 4.64" and
#: "ε = 2.15" stacked on each other, so they clear each other on every wider screen (the same span, more pixels)
PHONE_PLOT_PX = (270.0, 260.0)
CHAR_PX, PAD_PX = 6.5, 4.0
_LOG_MANTISSAS = ((1, 1.5, 2, 3, 5, 7), (1, 2, 5), (1, 3), (1,))


def log_ticks(values: Sequence[float], max_ticks: int = 8) -> list[float] | None:
    """Tick values for a log axis showing ``values``: m × 10^k for the finest mantissas m (1, 1.5, 2, 3, 5, 7,
    then 1, 2, 5, then 1, 3, then 1) that put at most ``max_ticks`` ticks between the smallest and the largest
    positive value (widened by 5% of the span on a log scale either side, about plotly's autorange). plotly's own
    ticks on a log axis under a decade are linear steps that can leave half of it bare (a posterior sd from 0.053
    to 0.21 had ticks at 0.1, 0.15 and 0.2 only, none near the confidential sd 0.067 or a target 0.081). None
    (plotly's ticks) when fewer than two values fall in the span or the values span more decades than
    ``max_ticks``."""
    v = [float(x) for x in values if x is not None and math.isfinite(float(x)) and float(x) > 0]
    if not v:
        return None
    lo, hi = min(v), max(v)
    pad = (hi / lo) ** 0.05  # about what plotly's autorange adds on either side
    lo, hi = lo / pad, hi * pad
    first, last = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    for mantissas in _LOG_MANTISSAS:
        ticks = [float(f"{m * 10.0 ** k:.6g}") for k in range(first, last + 1) for m in mantissas]
        ticks = [t for t in ticks if lo <= t <= hi]
        if len(ticks) <= max_ticks:
            return ticks if len(ticks) >= 2 else None
    return None


#: legend entries an alt text names before it says how many more there are
ALT_NAMES = 8


def _plain(text) -> str:
    """A plotly label as plain text: line breaks as spaces, no HTML tags, spaces collapsed."""
    text = re.sub(r"<br\s*/?>", " ", str(text or ""), flags=re.I)
    return " ".join(re.sub(r"<[^>]+>", "", text).split())


def alt_text(fig) -> str:
    """A short description of a figure for screen readers (``st.plotly_chart(alt=...)``): its title, what is
    plotted against what (the first panel's axis titles) and its legend entries, e.g. "Laplace noise, scale b =
    3.333; pure 0.3-DP (sensitivity 1). posterior density against theta: success probability θ (share of records
    equal to 1). Shown: Naive, DA-MCMC, …". Without it a chart has no accessible name at all."""
    layout = fig.layout
    parts = []
    title = _plain(layout.title.text) if layout.title is not None else ""
    if title:
        parts.append(title.rstrip("."))
    x = _plain(layout.xaxis.title.text) if layout.xaxis is not None and layout.xaxis.title is not None else ""
    y = _plain(layout.yaxis.title.text) if layout.yaxis is not None and layout.yaxis.title is not None else ""
    if x and y:
        parts.append(f"{y} against {x}")
    names: list[str] = []
    for trace in fig.data:
        name = _plain(getattr(trace, "name", None))
        if name and trace.showlegend is not False and name not in names:
            names.append(name)
    if names:
        more = len(names) - ALT_NAMES
        shown = ", ".join(names[:ALT_NAMES]) + (f" and {more} more" if more > 0 else "")
        parts.append(f"Shown: {shown}")
    return ". ".join(parts) + "." if parts else "A figure"
