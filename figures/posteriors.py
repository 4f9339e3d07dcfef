"""The posterior figures of the Compare page (and the Privacy budget page's single-ε view).

Figures
    :func:`posterior_densities`   marginal posteriors per parameter, all methods overlaid, with a
                                  point estimator (MCEM's MLE) as a marker and 90% bar under them
    :func:`n_pmf_plot`            posterior pmf of an unknown n against n_dp and the truth

A posterior that ignores the privacy noise (naive, confidential) can be a spike far taller than the
private posteriors, or lie far from them: :func:`y_cap` and :func:`x_window` keep the axes on the
private posteriors and label what is off them. Pure; nothing here imports streamlit.
"""
from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .axes import BOTTOM_LEGEND, TITLE_LINE, _grid_shape, _label, axis_title, param_symbol, titled, top_title, wrap
from .kde import density_curve
from .labels import result_label as method_name
from .labels import summary_number
from .palette import BOUND_COLOR, NEUTRAL_COLOR, TRUTH_COLOR, color_of, dash_of

__all__ = ["posterior_densities", "n_pmf_plot", "y_cap", "x_window", "REFERENCE_METHODS", "SPIKE_FACTOR", "FAR_FACTOR",
           "NUMBER_TICKS",
           "OPS_WIDE_FACTOR"]

#: The posteriors that ignore the privacy noise: spikes at small ε (see :func:`y_cap`).
REFERENCE_METHODS = frozenset({"naive", "confidential"})
#: A reference curve this many times taller than every private posterior gets the y-axis capped.
SPIKE_FACTOR = 2.5
#: A reference curve wholly this many private-posterior widths away gets the x-axis kept to the private ones.
FAR_FACTOR = 2.0
#: OPS's released draws spread this many times wider than the private posteriors (and the truth) do not set the
#: x-axis: at small ε and large n they span most of the prior and squeezed every posterior into a spike.
OPS_WIDE_FACTOR = 4.0


#: tick labels as powers of ten (5×10⁻⁵), not plotly's SI prefixes: a density of 50μ on a page whose parameter is
#: μ read as the parameter, and 20M as a unit
NUMBER_TICKS = {"exponentformat": "power"}


def _is_estimator(result) -> bool:
    return bool(result.info.get("estimator"))


def _peak(kind: str, x: np.ndarray, y: np.ndarray) -> float:
    if kind == "histogram":
        bins = int(np.clip(np.sqrt(np.size(x)), 5, 30))
        return float(np.histogram(x, bins=bins, density=True)[0].max()) if x.size else 0.0
    return float(np.max(y)) if y.size else 0.0


def _rug_trace(r, param: str, axes: dict, seen: set) -> dict:
    """Draws too few for a curve (ABC stopped by its limits): one tick per draw on the x-axis."""
    x = np.asarray(r.draws[:, :, r.param_names.index(param)], float).reshape(-1)
    count = f"{x.size:,} draw{'' if x.size == 1 else 's'}"
    return {"type": "scatter", "x": x, "y": np.zeros(x.size), "mode": "markers", "cliponaxis": False,
            "marker": {"color": color_of(r.method), "symbol": "line-ns-open", "size": 16, "line": {"width": 2}},
            "name": f"{method_name(r)}: {count}, too few for a curve", "legendgroup": r.method,
            "showlegend": r.method not in seen, "hovertemplate": "%{x:.4g}<extra>" + method_name(r) + "</extra>",
            "meta": {"kind": "rug", "method": r.method, "param": param, "converged": False}, **axes}


def _density_traces(results, confidential, param: str, axes: dict, seen: set, not_converged,
                    too_few=frozenset(), support=None) -> tuple[list, dict]:
    """Trace dicts of one subplot and each trace's peak height (keyed by method; a rug has none)."""
    traces, peaks = [], {}
    entries = [(r, False) for r in results] + ([(confidential, True)] if confidential is not None else [])
    for r, is_conf in entries:
        if param not in r.param_names or _is_estimator(r):
            continue
        if not is_conf and r.method in too_few:
            traces.append(_rug_trace(r, param, axes, seen))
            seen.add(r.method)
            continue
        method = "confidential" if is_conf else r.method
        kind, x, y = density_curve(r, param, support)
        if method == "ops" and kind == "kde":  # k released draws: a histogram, not a lumpy KDE of few points
            kind, x, y = "histogram", r.flat(param), np.empty(0)
        stalled = method in not_converged
        name = "Confidential-data posterior" if is_conf else method_name(r) + (" (not converged)" if stalled else "")
        if method == "ops":
            name = f"OPS: {r.n_chains * r.n_draws:,} released posterior draws<br>(a private release, wider by design)"
        common = {"name": name, "legendgroup": method, "showlegend": method not in seen,
                  "meta": {"kind": kind, "method": method, "param": param, "converged": not stalled}, **axes}
        color = color_of(method)
        # a hover names the curve, the parameter and the density (it showed "(0.4174245, 3.11869)")
        who = ("Confidential data" if is_conf else _label(method)) + (" (not converged)" if stalled else "")
        symbol = param_symbol(param)
        if kind == "histogram":
            bins = int(np.clip(np.sqrt(np.size(x)), 5, 30))  # 100 released draws: 10 bins, not 30 ragged ones
            traces.append({"type": "histogram", "x": x, "histnorm": "probability density", "nbinsx": bins,
                           "opacity": 0.25 if stalled else 0.45, "marker": {"color": color},
                           "hovertemplate": f"{who}<br>{symbol} in %{{x}}<br>density %{{y:.3g}}<extra></extra>",
                           **common})
        else:
            dash = dash_of(method)  # one style per method (a not-converged run is faded and says so in the legend)
            traces.append({"type": "scatter", "x": x, "y": y, "mode": "lines", "opacity": 0.45 if stalled else 1.0,
                           "line": {"color": color, "dash": dash, "width": 2},
                           "hovertemplate": f"{who}<br>{symbol} = %{{x:.4g}}<br>density %{{y:.3g}}<extra></extra>",
                           **common})
        peaks[method] = _peak(kind, x, y)
        seen.add(method)
    return traces, peaks


def y_cap(peaks: Mapping[str, float]) -> float | None:
    """The y-axis top of a density panel, or None to let plotly fit everything.

    The naive and the confidential-data posteriors ignore the privacy noise, so at small ε they are
    spikes far taller than every private posterior (n = 20,000, ε = 0.001: naive peaks near 120, the
    exact posterior near 6) and would flatten those onto the axis. When one is more than
    ``SPIKE_FACTOR`` times the tallest private-posterior peak, the axis is capped at 1.15 × that peak
    and each clipped curve is labelled with its height; a milder difference is drawn as it is.
    """
    private = [v for m, v in peaks.items() if m not in REFERENCE_METHODS and v > 0]
    if not private:
        return None
    tallest = max(private)
    towering = any(v > SPIKE_FACTOR * tallest for m, v in peaks.items() if m in REFERENCE_METHODS)
    return 1.15 * tallest if towering else None


#: pixels a note on a density panel takes ("Naive: peak density 119, off scale ↑"), one line of annotation text
NOTE_LINE = 18
#: pixels above small multiples' first row for plotly's toolbar (its buttons are about 25 px tall)
MODEBAR_ROOM = 28
#: pixels a legend entry takes where the legend stacks its entries one a line (a phone)
LEGEND_LINE = 22


#: The x-axis shows the central ``1 - 2 * TAIL`` of every curve's mass and the truth, padded by ``PAD`` of
#: its width on each side (a normal curve, or its KDE, then has about 1% beyond either end); a curve with more than
#: ``LABEL_MASS`` of its mass beyond the axis (a long tail) is labelled with how much and on which side.
PAD = 0.10
TAIL = 0.025
LABEL_MASS = 0.02


def _cdf(trace: Mapping) -> tuple[np.ndarray, np.ndarray] | None:
    """(x, F(x)) of a density trace: its curve integrated by the trapezoid rule (a histogram: its
    draws' empirical distribution)."""
    x = np.asarray(trace["x"], float)
    if x.size == 0:
        return None
    if trace["type"] == "histogram":
        xs = np.sort(x)
        return xs, np.arange(1, xs.size + 1) / xs.size
    y = np.clip(np.asarray(trace["y"], float), 0.0, None)
    if x.size < 2 or not np.any(y > 0):
        return x, np.linspace(0.0, 1.0, x.size)
    f = np.concatenate([[0.0], np.cumsum(0.5 * (y[1:] + y[:-1]) * np.diff(x))])
    if not (np.isfinite(f[-1]) and f[-1] > 0):
        return x, np.linspace(0.0, 1.0, x.size)
    return x, f / f[-1]


def _span(trace: Mapping) -> tuple[float, float] | None:
    """Where a density trace has its mass: its central ``1 - 2 * TAIL`` interval."""
    cdf = _cdf(trace)
    if cdf is None:
        return None
    x, f = cdf
    return float(np.interp(TAIL, f, x)), float(np.interp(1.0 - TAIL, f, x))


def _mass_outside(trace: Mapping, lo: float, hi: float) -> tuple[float, float]:
    """The share of a trace's mass left of ``lo`` and right of ``hi``."""
    cdf = _cdf(trace)
    if cdf is None:
        return 0.0, 0.0
    x, f = cdf
    return float(np.interp(lo, x, f, left=0.0, right=1.0)), float(1.0 - np.interp(hi, x, f, left=0.0, right=1.0))


def _private_range(spans: Mapping[str, tuple[float, float] | None], truth: float | None,
                   leave_out: str | None = None) -> tuple[float, float] | None:
    """(lo, hi) of the private posteriors' spans (every method but the reference ones and ``leave_out``) and the
    true value, or None when there is no such span."""
    private = [v for m, v in spans.items() if m not in REFERENCE_METHODS and m != leave_out and v is not None]
    if not private:
        return None
    lo, hi = min(a for a, _ in private), max(b for _, b in private)
    if truth is not None and math.isfinite(truth):
        lo, hi = min(lo, truth), max(hi, truth)
    return lo, hi


def framing_spans(spans: Mapping[str, tuple[float, float] | None],
                  truth: float | None = None) -> dict[str, tuple[float, float] | None]:
    """The spans that set a panel's x-axis: all of them, but OPS's when its released draws spread more than
    ``OPS_WIDE_FACTOR`` times as wide as the other private posteriors and the truth together (k draws at ε/k
    each: at small ε nearly the prior). It is then drawn where it falls on the axis and labelled with the share
    of its draws beyond it, like any tail."""
    ops = spans.get("ops")
    others = _private_range(spans, truth, leave_out="ops")
    if ops is None or others is None:
        return dict(spans)
    lo, hi = others
    if hi > lo and ops[1] - ops[0] > OPS_WIDE_FACTOR * (hi - lo):
        return {m: v for m, v in spans.items() if m != "ops"}
    return dict(spans)


def x_window(spans: Mapping[str, tuple[float, float]], truth: float | None = None) -> tuple[float, float] | None:
    """The x-axis range of a density panel, or None to let plotly fit everything.

    The naive and confidential posteriors ignore the privacy noise; a naive posterior can sit far from
    every private posterior (the clamped regression's naive β from a noisy, nearly singular x̃ᵀx̃ can be
    hundreds of units away), and fitting both would squeeze the private curves into spikes. When a
    reference curve lies wholly more than ``FAR_FACTOR`` widths outside the span of the private
    posteriors (and the true value), the axis shows that span (5% padding) and the caller labels the
    curve that is off the axis; otherwise everything is drawn.
    """
    private = _private_range(spans, truth)
    if private is None:
        return None
    lo, hi = private
    width = hi - lo if hi > lo else max(abs(hi), 1.0)
    far = [m for m, v in spans.items() if m in REFERENCE_METHODS and v is not None
           and (v[1] < lo - FAR_FACTOR * width or v[0] > hi + FAR_FACTOR * width)]
    if not far:
        return None
    return lo - 0.05 * width, hi + 0.05 * width


def posterior_densities(results: Sequence, *, true_params: Mapping[str, float] | None = None,
                        confidential=None, params: Sequence[str] | None = None,
                        title: str | None = None, not_converged=(), too_few=(), columns: int = 2,
                        panel_height: int = 300, supports: Mapping[str, tuple] | None = None) -> go.Figure:
    """Marginal posterior of each parameter, one subplot per parameter, methods overlaid.

    Grid densities (exact, naive, confidential) are solid lines; draws-only methods (DA-MCMC, ABC,
    OPS, pseudo-marginal) are a Gaussian KDE (dashed), or a histogram when they have fewer than 50
    draws. The true parameter (simulation) is a dashed vertical line and the confidential-data
    posterior p(theta | x) a dotted grey line. Methods named in ``not_converged`` are drawn faded
    (dash-dot) with "(not converged)" in the legend. Methods named in ``too_few`` (independent draws
    fewer than the 400 a density needs: ABC stopped by its limits) are no curve at all, which would be
    a spike flattening every other one, but one tick per draw on the x-axis, with their count in the
    legend; they set neither axis. When the naive or confidential curve is a spike
    that would flatten the others, the y-axis is capped (:func:`y_cap`) and the clipped peak labelled.
    Colours are fixed per method (:mod:`figures.palette`). A point estimator (``info["estimator"]``: MCEM's
    maximum-likelihood estimate) has no density: it is a marker at the estimate with a horizontal bar
    over its 90% Wald interval (``info["mle"][param]``: estimate, q5, q95), drawn just below y = 0 so
    it sits under the posterior curves. Methods run at a plug-in n say so in the legend.

    When a reference curve lies far outside every private posterior (:func:`x_window`), the x-axis is
    kept to the private posteriors and the true value, and the curve off the axis is labelled with
    where it is. ``columns`` and ``panel_height`` lay out the panels (small multiples: more columns,
    lower panels). ``supports`` maps a parameter to its range (lo, hi) (the model's ``param_support``): its
    KDEs stay inside it (:func:`figures.kde.binned_kde`), a probability's curve never reaching below 0.
    """
    results = [r for r in results if r is not None]
    estimators = [r for r in results if _is_estimator(r)]
    if not results and confidential is None:
        raise ValueError("results = [] is invalid: posterior_densities needs at least one Result")
    names = list(params or (results[0] if results else confidential).param_names)
    rows, cols = _grid_shape(len(names), columns)
    not_converged = set(not_converged)
    seen: set[str] = set()
    traces, layout = [], {}
    for j, param in enumerate(names):
        suffix = "" if j == 0 else str(j + 1)
        axes = {"xaxis": f"x{suffix}", "yaxis": f"y{suffix}"}
        panel, peaks = _density_traces(results, confidential, param, axes, seen, not_converged, set(too_few),
                                       (supports or {}).get(param))
        traces += panel
        cap = y_cap(peaks)
        top = cap if cap is not None else max(peaks.values(), default=1.0) or 1.0
        marks = _estimate_traces(estimators, param, -0.06 * top, axes, seen)
        traces += marks
        if true_params and param in true_params:
            v = float(true_params[param])
            traces.append({"type": "scatter", "x": [v, v], "y": [0.0, top * 1.05], "mode": "lines",
                           "line": {"color": TRUTH_COLOR, "dash": "dash", "width": 2}, "name": "True value",
                           "legendgroup": "truth", "showlegend": "truth" not in seen,
                           "meta": {"kind": "truth", "method": "truth", "param": param}, **axes})
            seen.add("truth")
        yaxis = {"title": {"text": "posterior density"}, "rangemode": "tozero", **NUMBER_TICKS}
        if marks:  # room below zero for the estimators' bars
            yaxis["range"] = [-0.06 * top * (len(marks) + 1), cap if cap is not None else top * 1.08]
        if cap is not None:
            yaxis["range"] = [yaxis.get("range", [0.0])[0], cap]
            for method, height in peaks.items():
                if height > cap:
                    curve = next(t for t in panel if t["meta"]["method"] == method)
                    at = float(curve["x"][int(np.argmax(curve["y"]))]) if curve["type"] == "scatter" else \
                        float(np.median(curve["x"]))
                    label = "Confidential" if method == "confidential" else _label(method)
                    stacked = sum(1 for a in layout.get("annotations", []) if a.get("name", "").startswith("clipped:")
                                  and a.get("xref") == axes["xaxis"])
                    layout.setdefault("annotations", []).append(
                        {"x": at, "y": cap, "xref": axes["xaxis"], "yref": axes["yaxis"], "yanchor": "top",
                         "yshift": -NOTE_LINE * stacked,  # one line each: two labels at one peak do not overprint
                         "text": f"{label}: peak density {height:.3g}, off scale ↑", "showarrow": False,
                         "font": {"color": color_of(method)}, "name": f"clipped:{method}:{height!r}"})
        layout[f"xaxis{suffix}"] = {"title": {"text": axis_title(param)}, **NUMBER_TICKS}
        spans = {t["meta"]["method"]: _span(t) for t in panel if t["meta"]["kind"] != "rug"}
        truth = float(true_params[param]) if true_params and param in true_params else None
        framing = framing_spans(spans, truth)
        window = x_window(framing, truth)
        if window is None:  # every curve's central mass and the truth, not the KDE grid's empty ends
            ends = [v for v in framing.values() if v is not None] + ([(truth, truth)] if truth is not None else [])
            if ends:
                lo, hi = min(a for a, _ in ends), max(b for _, b in ends)
                pad = PAD * (hi - lo) if hi > lo else max(abs(hi), 1.0) * PAD
                layout[f"xaxis{suffix}"]["range"] = [lo - pad, hi + pad]
        else:
            layout[f"xaxis{suffix}"]["range"] = list(window)
        support = (supports or {}).get(param)
        if support is not None and "range" in layout[f"xaxis{suffix}"]:  # no axis past what the parameter can take
            lo, hi = layout[f"xaxis{suffix}"]["range"]  # (θ = 1.07 at ε = 0.1: the padding ran past θ = 1)
            layout[f"xaxis{suffix}"]["range"] = [max(lo, float(support[0])), min(hi, float(support[1]))]
        shown = layout[f"xaxis{suffix}"].get("range")
        if shown is not None:
            for t in (t for t in panel if t["meta"]["kind"] != "rug"):
                left, right = _mass_outside(t, *shown)
                method = t["meta"]["method"]
                if method in REFERENCE_METHODS and window is not None:
                    continue  # labelled below as wholly off the axis
                for side, mass in (("left", left), ("right", right)):
                    if mass <= LABEL_MASS:
                        continue
                    label = "Confidential" if method == "confidential" else _label(method)
                    share = f"{100 * mass:.0f}% of its {'draws' if t['type'] == 'histogram' else 'mass'} beyond"
                    layout.setdefault("annotations", []).append(
                        {"x": shown[0] if side == "left" else shown[1], "y": 0.5 * top, "xref": axes["xaxis"],
                         "yref": axes["yaxis"], "xanchor": "left" if side == "left" else "right",
                         "showarrow": False, "font": {"color": color_of(method)},
                         "text": f"← {label}: {share}" if side == "left" else f"{label}: {share} →",
                         "name": f"beyond:{method}:{side}:{mass!r}"})
        if window is not None:
            for t in (t for t in panel if t["meta"]["kind"] != "rug"):
                a, b = spans[t["meta"]["method"]] or (math.nan, math.nan)
                if t["meta"]["method"] not in REFERENCE_METHODS or window[0] <= b and a <= window[1]:
                    continue
                method, right = t["meta"]["method"], a > window[1]
                x = np.asarray(t["x"], float)
                centre = float(np.median(x)) if t["type"] == "histogram" else float(x[int(np.argmax(t["y"]))])
                label = "Confidential" if method == "confidential" else _label(method)
                layout.setdefault("annotations", []).append(
                    {"x": window[1] if right else window[0], "y": 0.9 * top, "xref": axes["xaxis"],
                     "yref": axes["yaxis"], "xanchor": "right" if right else "left", "showarrow": False,
                     "text": f"{label}: off the axis, at {summary_number(centre)} {'→' if right else '←'}",
                     "font": {"color": color_of(method)}, "name": f"offaxis:{method}:{centre!r}"})
        layout[f"yaxis{suffix}"] = yaxis
    # A single panel's notes (a clipped peak, mass beyond the axis, a curve off it) go above the plot, one line
    # each, where no curve runs, and the top margin grows for them: inside, a peak's label was centred on its own
    # spike and crossed the other spikes and the exact posterior's top, and "Naive: off the axis" sat on the
    # curves' tops (390 px). Small multiples put a panel's clipped-peak and off-axis notes above it too, one line
    # each, centred on the panel (at its spike a label ran into the next panel's), with the panel's title lifted
    # over them and the gap above its row grown to hold them: inside the panel, under its top, they crossed the
    # dashed lines, the curves and the y-axis ticks, and overprinted one another in a browser's font.
    above = 0
    lines: dict[str, int] = {}  # small multiples: each panel's (x axis's) notes
    if len(names) == 1:
        for a in layout.get("annotations", []):
            if a["name"].split(":")[0] in ("clipped", "beyond", "offaxis"):
                a.update(y=1.0, yref=f"{a['yref']} domain", yanchor="bottom", yshift=2 + NOTE_LINE * above)
                above += 1
    else:
        for a in layout.get("annotations", []):
            if a["name"].split(":")[0] in ("clipped", "offaxis"):
                panel = a["xref"]
                line = lines.get(panel, 0)
                a.update(x=0.5, xref=f"{panel} domain", xanchor="center", y=1.0, yref=f"{a['yref']} domain",
                         yanchor="bottom", yshift=2 + NOTE_LINE * line, font={**a["font"], "size": 11})
                lines[panel] = line + 1
    # each row's band of notes: the first row's in the top margin, the others' in the gap above their row
    notes = [lines.get(f"x{'' if j == 0 else j + 1}", 0) for j in range(len(names))]
    row_notes = [max(notes[r * cols:(r + 1) * cols], default=0) for r in range(rows)]
    first, rest = NOTE_LINE * row_notes[0], NOTE_LINE * max(row_notes[1:], default=0)
    text = wrap(title) if title else None
    title_lines = 1 + text.count("<br>") if text else 0
    # the legend sits at the bottom of the figure (container coordinates), under the x-axis title, never on it;
    # titles are wrapped (figures.axes.wrap) so a phone shows them whole
    # the title hangs from the figure's top (figures.axes.top_title), any notes sit at the margin's bottom
    head = top_title(text) if text else None
    # small multiples without a title: room above the first row's panel titles for plotly's toolbar, which
    # appears on hover at the top right and covered the last panel's title
    toolbar = MODEBAR_ROOM if len(names) > 1 and not text else 0
    # the legend under the plot takes its height from the figure's: on a 390 px phone its entries stack one a line,
    # and seven of them left the plot 130 px; each entry past four adds a line's height to the figure
    entries = len({t["name"] for t in traces if t.get("showlegend", True) is not False and t.get("name")})
    legend = LEGEND_LINE * max(0, entries - 4)
    height = max(400, panel_height * rows + 140) + 60 + toolbar + legend
    top_margin = 40 + TITLE_LINE * title_lines + NOTE_LINE * above + toolbar
    if len(names) > 1:  # plotly's gap between rows (0.3 / rows of the plot's height) grown by the notes' band
        plot = height - top_margin - 50
        gap = 0.3 / rows * plot + rest
        spacing = {"vertical_spacing": gap / (plot + rest * (rows - 1))} if rows > 1 else {}
        fig = make_subplots(rows=rows, cols=cols, subplot_titles=names, **spacing)
        for title_note, k in zip(fig.layout.annotations, notes):  # a panel's title over its notes
            if k:
                title_note.update(yshift=2 + NOTE_LINE * k)
        height, top_margin = height + first + rest * (rows - 1), top_margin + first
    else:
        fig = go.Figure()
    fig.add_traces(traces)
    annotations = list(fig.layout.annotations) + layout.pop("annotations", [])
    fig.update_layout(barmode="overlay", title=head, height=height,
                      margin={"l": 60, "r": 20, "t": top_margin, "b": 50},
                      annotations=annotations,
                      legend=BOTTOM_LEGEND,
                      **layout)
    return fig


def _estimate_traces(estimators, param: str, y: float, axes: dict, seen: set) -> list:
    """A marker at each estimator's estimate with a horizontal bar over its 90% interval, stacked
    downwards from ``y`` (one row per estimator)."""
    traces = []
    for i, r in enumerate(estimators):
        m = r.info.get("mle", {}).get(param)
        if m is None:
            continue
        est, lo, hi = float(m["estimate"]), float(m["q5"]), float(m["q95"])
        method = r.method
        traces.append({
            "type": "scatter", "x": [est], "y": [y * (i + 1)], "mode": "markers",
            "marker": {"color": color_of(method), "symbol": "diamond", "size": 11},
            "error_x": {"type": "data", "symmetric": False, "array": [hi - est], "arrayminus": [est - lo],
                        "color": color_of(method), "thickness": 2.5, "width": 6},
            "name": method_name(r) + ": estimate, 90% interval", "legendgroup": method,
            "showlegend": method not in seen,
            "hovertemplate": f"{_label(method)}<br>estimate %{{x:.4g}}<br>90%: [{lo:.4g}, {hi:.4g}]<extra></extra>",
            "meta": {"kind": "estimate", "method": method, "param": param, "estimate": est, "q5": lo, "q95": hi},
            **axes})
        seen.add(method)
    return traces


def n_pmf_plot(values, probs, *, n_dp: float | None, true_n: int | None = None, plug_in: int | None = None,
               method: str = "rjmcmc", converged: bool = True) -> go.Figure:
    """Posterior pmf of the unknown number of records n (bars, drawn by ``method``), with the released noisy
    size n_dp (solid line; none for a histogram whose total is not released), the plug-in size the known-n
    methods assume (dotted) and, for a simulation, the true n (dashed). ``values``/``probs`` come from
    ``engine.n_pmf``. ``converged``: the chain's verdict; where it failed the bars are faded and the title and
    legend say "not converged", as the density figure's curves do (the title gave a posterior mean of 53.7 from a
    chain with R-hat 1.13 and an ESS of 20, and nothing said so)."""
    values, probs = np.asarray(values, float), np.asarray(probs, float)
    if values.size == 0 or values.shape != probs.shape:
        raise ValueError("values = [] is invalid: n_pmf_plot needs the posterior pmf of n (values and "
                         "probabilities of equal length)")
    top = float(probs.max()) * 1.1
    fig = go.Figure()
    stalled = "" if converged else " (not converged)"
    fig.add_trace(go.Bar(x=values, y=probs, name=f"posterior probability of each n{stalled}",
                         marker={"color": color_of(method)}, opacity=1.0 if converged else 0.4,
                         hovertemplate="n = %{x}<br>probability %{y:.3g}<extra></extra>",
                         meta={"kind": "n_pmf", "method": method, "param": "n", "converged": bool(converged)}))
    # sizes as counts are written, 1,000,000 (":.4g" wrote 1e+06, and 1.235e+06 for 1,234,567)
    lines = [] if n_dp is None else [("n_dp", float(n_dp), f"released n_dp = {n_dp:,.7g}", BOUND_COLOR, "solid")]
    if plug_in is not None:
        lines.append(("plug_in", float(plug_in), f"plug-in n = {int(plug_in):,}", NEUTRAL_COLOR, "dot"))
    if true_n is not None:
        lines.append(("truth", float(true_n), f"true n = {int(true_n):,}", TRUTH_COLOR, "dash"))
    for kind, x, name, color, dash in lines:
        fig.add_trace(go.Scatter(x=[x, x], y=[0.0, top], mode="lines", name=name,
                                 line={"color": color, "dash": dash, "width": 2.5},
                                 meta={"kind": kind, "param": "n", "value": x}))
    mean = float(np.sum(values * probs))
    shown = f"{mean:,.0f}" if mean >= 1e4 else f"{mean:.4g}"
    title, top = titled(f"Number of records n: posterior mean {shown}{stalled}")
    fig.update_layout(height=400, title=title, xaxis_title="number of records n",
                      yaxis={"title": "posterior probability", "rangemode": "tozero"}, legend=BOTTOM_LEGEND,
                      bargap=0.05, margin={"l": 60, "r": 20, "t": top, "b": 50})
    return fig
