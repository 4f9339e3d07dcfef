"""Pure figure builders: engine Results (or tidy sweep tables) in, ``plotly.graph_objects.Figure`` out.

Nothing here touches streamlit or the engine's samplers; tests build Results by hand and inspect
``fig.to_dict()``. Every trace carries ``meta = {"kind": ..., "method": ..., "param": ...}`` so a
test (or a reader of the exported HTML) can tell what a curve is without relying on colours.

Figures
    :func:`posterior_densities`   marginal posteriors per parameter, all methods overlaid, with a
                                  point estimator (MCEM's MLE) as a marker and 90% bar under them
    :func:`n_pmf_plot`            posterior pmf of an unknown n against n_dp and the truth
    :func:`trace_plot`            draws per chain (Ju et al. 2022, Fig. 1b style mixing check)
    :func:`acceptance_plot`       DA-MCMC acceptance per sweep vs the exp(-epsilon) bound
                                  (Ju et al. 2022, Prop. 3.1)
    :func:`rank_plot`             rank histograms per chain (Vehtari et al. 2021)
    :func:`mcem_history`          Monte Carlo EM: the estimate and the score per iteration
                                  (paper 002, Alg. 2)
    :func:`interval_plot`         90% posterior intervals against the privacy budget
    :func:`sd_plot`               posterior sd against the privacy budget
"""
from __future__ import annotations

import math
import re
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots
from scipy import stats

from .palette import BOUND_COLOR, CHAIN_COLORS, METHOD_COLORS, TRUTH_COLOR, color_of
from .params.labels import METHOD_LABELS, result_label as method_name

__all__ = [
    "METHOD_COLORS",
    "posterior_densities",
    "n_pmf_plot",
    "method_name",
    "trace_plot",
    "acceptance_plot",
    "rank_plot",
    "mcem_history",
    "interval_plot",
    "sd_plot",
    "density_curve",
    "axis_title",
    "describe_param",
    "param_label",
    "pages_of",
    "y_cap",
    "x_window",
    "binned_kde",
]

#: The posteriors that ignore the privacy noise: spikes at small ε (see :func:`y_cap`).
REFERENCE_METHODS = frozenset({"naive", "confidential"})
#: A reference curve this many times taller than every private posterior gets the y-axis capped.
SPIKE_FACTOR = 2.5
#: A reference curve wholly this many private-posterior widths away gets the x-axis kept to the private ones.
FAR_FACTOR = 2.0
#: What each parameter is, for axis titles.
PARAM_AXIS = {
    "theta": "success probability θ (share of records equal to 1)",
    "lam": "Poisson rate λ (events per record)",
    "mu": "mean μ of a record (record units)",
    "p": "cell probability",
}
_KDE_MIN_DRAWS = 50
_GRID = 256


def _label(method: str) -> str:
    return METHOD_LABELS.get(method, method)


def _is_estimator(result) -> bool:
    return bool(result.info.get("estimator"))


def _grid_shape(k: int, max_cols: int = 2) -> tuple[int, int]:
    cols = max(1, min(k, max_cols))
    return math.ceil(k / cols), cols


def _cell(j: int, cols: int) -> dict:
    return {"row": j // cols + 1, "col": j % cols + 1}


def _subplots(titles: Sequence[str], height_per_row: int = 300, **kw) -> tuple[go.Figure, int]:
    rows, cols = _grid_shape(len(titles))
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=list(titles) if len(titles) > 1 else None, **kw)
    fig.update_layout(height=max(360, height_per_row * rows + 80),
                      margin={"l": 60, "r": 20, "t": 60, "b": 50})
    return fig, cols


def density_curve(result, param: str) -> tuple[str, np.ndarray, np.ndarray]:
    """How a result's marginal of ``param`` is drawn: ("density", grid, pdf) from the method's own
    grid density, ("kde", grid, pdf) from a Gaussian KDE of the draws, or ("histogram", draws,
    empty) when there are too few or identical draws for a KDE."""
    if result.density is not None and param in result.density:
        grid, pdf = result.density[param]
        return "density", np.asarray(grid, float), np.asarray(pdf, float)
    x = result.flat(param)
    x = x[np.isfinite(x)]
    if x.size < _KDE_MIN_DRAWS or np.ptp(x) == 0:
        return "histogram", x, np.empty(0)
    grid, pdf = binned_kde(x)
    return "kde", grid, pdf


def binned_kde(x: np.ndarray, points: int = _GRID) -> tuple[np.ndarray, np.ndarray]:
    """Gaussian KDE with Scott's bandwidth (scipy's ``gaussian_kde`` default), evaluated on ``points``
    points from min − bw to max + bw, by linear binning onto a fine grid and one convolution.

    Binning to 2048 cells moves each draw by at most half a cell, far below the bandwidth (the grid is
    at most 2 × range + 2 bw wide, bw ≥ range / 2048 for any sample the app draws), so the curve is
    scipy's to well under a percent of its peak (tests/test_plots.py checks it) at a fraction of the
    cost: O(draws + cells log cells) instead of O(draws × points) — this runs on every ε change.
    """
    x = np.asarray(x, float)
    bw = float(x.std(ddof=1) * x.size ** (-0.2))
    lo, hi = x.min() - bw, x.max() + bw
    cells = 2048
    pad = int(np.ceil(4 * bw / ((hi - lo) / (cells - 1))))
    fine = np.linspace(lo, hi, cells)
    step = fine[1] - fine[0]
    pos = (x - lo) / step
    left = np.clip(np.floor(pos).astype(int), 0, cells - 2)
    frac = pos - left
    counts = np.bincount(left, 1.0 - frac, cells) + np.bincount(left + 1, frac, cells)
    offsets = np.arange(-pad, pad + 1) * step
    kernel = np.exp(-0.5 * (offsets / bw) ** 2) / (bw * np.sqrt(2 * np.pi))
    pdf_fine = np.convolve(counts, kernel, mode="same") / x.size
    grid = np.linspace(lo, hi, points)
    return grid, np.interp(grid, fine, pdf_fine)


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
    """A picker label: the name and what it is (``p[0][1][0] · P(x1 = 0 | y = 1)``)."""
    what = describe_param(param)
    return f"{param} · {what}" if what and "[" in param and what != PARAM_AXIS.get(param.split("[")[0]) else param


def axis_title(param: str) -> str:
    """An axis title that says what the parameter is and its unit."""
    what = describe_param(param)
    return f"{param}: {what}" if what else param


def pages_of(names: Sequence[str], per_page: int = 12) -> list[list[str]]:
    """``names`` cut into pages of at most ``per_page`` panels (small multiples of many parameters)."""
    names = list(names)
    if per_page < 1:
        raise ValueError(f"per_page = {per_page!r} is invalid: must be at least 1")
    return [names[i:i + per_page] for i in range(0, len(names), per_page)] or [[]]


def _peak(kind: str, x: np.ndarray, y: np.ndarray) -> float:
    if kind == "histogram":
        return float(np.histogram(x, bins=30, density=True)[0].max()) if x.size else 0.0
    return float(np.max(y)) if y.size else 0.0


def _density_traces(results, confidential, param: str, axes: dict, seen: set, not_converged) -> tuple[list, dict]:
    """Trace dicts of one subplot and each trace's peak height (keyed by method)."""
    traces, peaks = [], {}
    entries = [(r, False) for r in results] + ([(confidential, True)] if confidential is not None else [])
    for r, is_conf in entries:
        if param not in r.param_names or _is_estimator(r):
            continue
        method = "confidential" if is_conf else r.method
        kind, x, y = density_curve(r, param)
        stalled = method in not_converged
        name = "Confidential-data posterior" if is_conf else method_name(r) + (" (not converged)" if stalled else "")
        common = {"name": name, "legendgroup": method, "showlegend": method not in seen,
                  "meta": {"kind": kind, "method": method, "param": param, "converged": not stalled}, **axes}
        color = color_of(method)
        if kind == "histogram":
            traces.append({"type": "histogram", "x": x, "histnorm": "probability density", "nbinsx": 30,
                           "opacity": 0.25 if stalled else 0.45, "marker": {"color": color}, **common})
        else:
            dash = "dot" if is_conf else ("dashdot" if stalled else ("solid" if kind == "density" else "dash"))
            traces.append({"type": "scatter", "x": x, "y": y, "mode": "lines", "opacity": 0.45 if stalled else 1.0,
                           "line": {"color": color, "dash": dash, "width": 2}, **common})
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


def _span(trace: Mapping) -> tuple[float, float] | None:
    """Where a density trace has its mass: the x range where the curve is above 1/1000 of its peak
    (a histogram: its draws' range)."""
    x = np.asarray(trace["x"], float)
    if x.size == 0:
        return None
    if trace["type"] == "histogram":
        return float(x.min()), float(x.max())
    y = np.asarray(trace["y"], float)
    keep = y >= 1e-3 * y.max() if y.size and y.max() > 0 else np.ones(x.size, bool)
    return float(x[keep].min()), float(x[keep].max())


def x_window(spans: Mapping[str, tuple[float, float]], truth: float | None = None) -> tuple[float, float] | None:
    """The x-axis range of a density panel, or None to let plotly fit everything.

    The naive and confidential posteriors ignore the privacy noise; a naive posterior can sit far from
    every private posterior (the clamped regression's naive β from a noisy, nearly singular x̃ᵀx̃ can be
    hundreds of units away), and fitting both would squeeze the private curves into spikes. When a
    reference curve lies wholly more than ``FAR_FACTOR`` widths outside the span of the private
    posteriors (and the true value), the axis shows that span (5% padding) and the caller labels the
    curve that is off the axis; otherwise everything is drawn.
    """
    private = [v for m, v in spans.items() if m not in REFERENCE_METHODS and v is not None]
    if not private:
        return None
    lo, hi = min(a for a, _ in private), max(b for _, b in private)
    if truth is not None and math.isfinite(truth):
        lo, hi = min(lo, truth), max(hi, truth)
    width = hi - lo if hi > lo else max(abs(hi), 1.0)
    far = [m for m, v in spans.items() if m in REFERENCE_METHODS and v is not None
           and (v[1] < lo - FAR_FACTOR * width or v[0] > hi + FAR_FACTOR * width)]
    if not far:
        return None
    return lo - 0.05 * width, hi + 0.05 * width


def posterior_densities(results: Sequence, *, true_params: Mapping[str, float] | None = None,
                        confidential=None, params: Sequence[str] | None = None,
                        title: str | None = None, not_converged=(), columns: int = 2,
                        panel_height: int = 300) -> go.Figure:
    """Marginal posterior of each parameter, one subplot per parameter, methods overlaid.

    Grid densities (exact, naive, confidential) are solid lines; draws-only methods (DA-MCMC, ABC,
    OPS, pseudo-marginal) are a Gaussian KDE (dashed), or a histogram when they have fewer than 50
    draws. The true parameter (simulation) is a dashed vertical line and the confidential-data
    posterior p(theta | x) a dotted grey line. Methods named in ``not_converged`` are drawn faded
    (dash-dot) with "(not converged)" in the legend. When the naive or confidential curve is a spike
    that would flatten the others, the y-axis is capped (:func:`y_cap`) and the clipped peak labelled.
    Colours are fixed per method (:mod:`ui.palette`). A point estimator (``info["estimator"]``: MCEM's
    maximum-likelihood estimate) has no density: it is a marker at the estimate with a horizontal bar
    over its 90% Wald interval (``info["mle"][param]``: estimate, q5, q95), drawn just below y = 0 so
    it sits under the posterior curves. Methods run at a plug-in n say so in the legend.

    When a reference curve lies far outside every private posterior (:func:`x_window`), the x-axis is
    kept to the private posteriors and the true value, and the curve off the axis is labelled with
    where it is. ``columns`` and ``panel_height`` lay out the panels (small multiples: more columns,
    lower panels).
    """
    results = [r for r in results if r is not None]
    estimators = [r for r in results if _is_estimator(r)]
    if not results and confidential is None:
        raise ValueError("results = [] is invalid: posterior_densities needs at least one Result")
    names = list(params or (results[0] if results else confidential).param_names)
    rows, cols = _grid_shape(len(names), columns)
    if len(names) > 1:
        fig = make_subplots(rows=rows, cols=cols, subplot_titles=names)
    else:
        fig = go.Figure()
    not_converged = set(not_converged)
    seen: set[str] = set()
    traces, layout = [], {}
    for j, param in enumerate(names):
        suffix = "" if j == 0 else str(j + 1)
        axes = {"xaxis": f"x{suffix}", "yaxis": f"y{suffix}"}
        panel, peaks = _density_traces(results, confidential, param, axes, seen, not_converged)
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
        yaxis = {"title": {"text": "posterior density"}, "rangemode": "tozero"}
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
                    layout.setdefault("annotations", []).append(
                        {"x": at, "y": cap, "xref": axes["xaxis"], "yref": axes["yaxis"], "yanchor": "top",
                         "text": f"{label} peaks at {height:.3g} ↑", "showarrow": False,
                         "font": {"color": color_of(method)}, "name": f"clipped:{method}:{height!r}"})
        layout[f"xaxis{suffix}"] = {"title": {"text": axis_title(param)}}
        spans = {t["meta"]["method"]: _span(t) for t in panel}
        truth = float(true_params[param]) if true_params and param in true_params else None
        window = x_window(spans, truth)
        if window is not None:
            layout[f"xaxis{suffix}"]["range"] = list(window)
            for t in panel:
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
                     "text": f"{label}: off the axis, at {centre:.4g} {'→' if right else '←'}",
                     "font": {"color": color_of(method)}, "name": f"offaxis:{method}:{centre!r}"})
        layout[f"yaxis{suffix}"] = yaxis
    fig.add_traces(traces)
    annotations = list(fig.layout.annotations) + layout.pop("annotations", [])
    fig.update_layout(barmode="overlay", title=title, height=max(400, panel_height * rows + 140),
                      margin={"l": 60, "r": 20, "t": 60, "b": 50}, annotations=annotations,
                      legend={"orientation": "h", "yanchor": "top", "y": -0.18, "x": 0}, **layout)
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


def n_pmf_plot(values, probs, *, n_dp: float, true_n: int | None = None, plug_in: int | None = None) -> go.Figure:
    """Posterior pmf of the unknown number of records n (bars), with the released noisy size n_dp
    (solid line), the plug-in size round(n_dp) the known-n methods assume (dotted) and, for a
    simulation, the true n (dashed). ``values``/``probs`` come from ``engine.n_pmf``."""
    values, probs = np.asarray(values, float), np.asarray(probs, float)
    if values.size == 0 or values.shape != probs.shape:
        raise ValueError("values = [] is invalid: n_pmf_plot needs the posterior pmf of n (values and "
                         "probabilities of equal length)")
    top = float(probs.max()) * 1.1
    fig = go.Figure()
    fig.add_trace(go.Bar(x=values, y=probs, name="posterior pmf of n", marker={"color": color_of("rjmcmc")},
                         hovertemplate="n = %{x}<br>probability %{y:.3g}<extra></extra>",
                         meta={"kind": "n_pmf", "method": "rjmcmc", "param": "n"}))
    lines = [("n_dp", float(n_dp), f"released n_dp = {n_dp:.4g}", BOUND_COLOR, "solid")]
    if plug_in is not None:
        lines.append(("plug_in", float(plug_in), f"plug-in n = {int(plug_in)}", "#7f7f7f", "dot"))
    if true_n is not None:
        lines.append(("truth", float(true_n), f"true n = {int(true_n)}", TRUTH_COLOR, "dash"))
    for kind, x, name, color, dash in lines:
        fig.add_trace(go.Scatter(x=[x, x], y=[0.0, top], mode="lines", name=name,
                                 line={"color": color, "dash": dash, "width": 2.5},
                                 meta={"kind": kind, "param": "n", "value": x}))
    mean = float(np.sum(values * probs))
    fig.update_layout(height=360, title=f"Posterior of the number of records n (mean {mean:.4g})",
                      xaxis_title="number of records n",
                      yaxis={"title": "posterior probability", "rangemode": "tozero"},
                      bargap=0.05, margin={"l": 60, "r": 20, "t": 60, "b": 50})
    return fig


def _thin(n: int, max_points: int) -> np.ndarray:
    step = max(1, math.ceil(n / max_points))
    return np.arange(0, n, step)


def trace_plot(result, params: Sequence[str] | None = None, max_points: int = 2000) -> go.Figure:
    """Draws against iteration, one line per chain, one subplot per parameter (thinned to at most
    ``max_points`` per chain for the browser)."""
    names = list(params or result.param_names)
    fig, cols = _subplots(names)
    idx = _thin(result.n_draws, max_points)
    for j, param in enumerate(names):
        p = result.param_names.index(param)
        for c in range(result.n_chains):
            fig.add_trace(go.Scatter(x=idx, y=result.draws[c, idx, p], mode="lines", name=f"chain {c}",
                                     legendgroup=f"chain {c}", showlegend=j == 0,
                                     line={"width": 1, "color": CHAIN_COLORS[c % len(CHAIN_COLORS)]},
                                     meta={"kind": "trace", "chain": c, "param": param}), **_cell(j, cols))
        fig.update_xaxes(title_text="draw", **_cell(j, cols))
        fig.update_yaxes(title_text=param, **_cell(j, cols))
    fig.update_layout(title=f"{_label(result.method)}: trace per chain")
    return fig


def acceptance_plot(result, max_points: int = 2000) -> go.Figure:
    """Mean Metropolis acceptance probability of each record sweep, per chain, with each chain's
    mean (dashed) and minimum (dotted) and the exp(-epsilon) lower bound of Ju et al. (2022,
    Prop. 3.1) when the engine reports one (``info["epsilon_bound"]``)."""
    if "acceptance_rate" not in result.sample_stats:
        raise ValueError(f"result.method = {result.method!r} is invalid for acceptance_plot: "
                         "it needs sample_stats['acceptance_rate'] (DA-MCMC)")
    acc = np.asarray(result.sample_stats["acceptance_rate"], float)
    fig = go.Figure()
    n_chains, n_draws = acc.shape
    idx = _thin(n_draws, max_points)
    for c in range(n_chains):
        color = CHAIN_COLORS[c % len(CHAIN_COLORS)]
        group = f"chain {c}"
        fig.add_trace(go.Scatter(x=idx, y=acc[c, idx], mode="lines", name=f"chain {c}", legendgroup=group,
                                 line={"width": 1, "color": color}, opacity=0.6,
                                 meta={"kind": "acceptance", "chain": c}))
        for stat, value, dash in (("mean", acc[c].mean(), "dash"), ("min", acc[c].min(), "dot")):
            fig.add_trace(go.Scatter(x=[0, n_draws - 1], y=[float(value)] * 2, mode="lines",
                                     name=f"chain {c} {stat} = {value:.3f}", legendgroup=group,
                                     line={"width": 2, "color": color, "dash": dash},
                                     meta={"kind": f"acceptance_{stat}", "chain": c, "value": float(value)}))
    bound = result.info.get("epsilon_bound")
    if bound is not None:
        fig.add_trace(go.Scatter(x=[0, n_draws - 1], y=[float(bound)] * 2, mode="lines",
                                 name=f"exp(-ε) bound = {bound:.3f}", line={"width": 2.5, "color": BOUND_COLOR},
                                 meta={"kind": "bound", "value": float(bound)}))
    title = "DA-MCMC acceptance rate per sweep" if result.method != "rjmcmc" else \
        f"{_label(result.method)}: acceptance rate per record sweep (within the current n)"
    fig.update_layout(height=380, title=title,
                      xaxis_title="sweep (draw)", yaxis_title="mean acceptance probability",
                      yaxis_range=[0, 1.02], margin={"l": 60, "r": 20, "t": 60, "b": 50})
    return fig


def mcem_history(result) -> go.Figure:
    """Monte Carlo EM's path (``info["history"]``): per iteration the estimate of each parameter, with
    the final MLE and its 90% Wald interval as a line and a band, and the Monte Carlo score with
    ±2 Monte Carlo standard errors against 0, which is the stopping rule (``info["stopping_rule"]``).
    Hovering a point shows the E-step size (Monte Carlo draws) of that iteration."""
    history = result.info.get("history")
    if not history:
        raise ValueError(f"result.method = {result.method!r} is invalid for mcem_history: "
                         "it needs info['history'] (Monte Carlo EM)")
    names = [p for p in result.param_names if p in history[0]]
    it = [h["iteration"] for h in history]
    draws = [h.get("mc_draws") for h in history]
    fig = make_subplots(rows=len(names) + 1, cols=1, shared_xaxes=True, vertical_spacing=0.08,
                        subplot_titles=[f"estimate of {p}" for p in names] + ["score (d/dθ log-likelihood)"])
    color = color_of("mcem")
    for row, p in enumerate(names, start=1):
        fig.add_trace(go.Scatter(x=it, y=[h[p] for h in history], mode="lines+markers", name=p,
                                 line={"color": color}, customdata=draws,
                                 hovertemplate="iteration %{x}: %{y:.5g}<br>%{customdata} Monte Carlo draws<extra></extra>",
                                 meta={"kind": "mcem_estimate", "param": p}), row=row, col=1)
        mle = result.info.get("mle", {}).get(p)
        if mle:  # after the trace: plotly drops shapes on a subplot that has no data yet
            values = [h[p] for h in history] + [mle["estimate"]]
            pad = 0.1 * (max(values) - min(values)) or 0.01 * abs(mle["estimate"]) or 0.01
            fig.add_hrect(y0=mle["q5"], y1=mle["q95"], fillcolor=color, opacity=0.12, line_width=0, row=row, col=1)
            fig.add_hline(y=mle["estimate"], line={"color": color, "dash": "dash"}, row=row, col=1,
                          annotation_text=f"MLE {mle['estimate']:.4g}, 90% interval {mle['q5']:.3g} – {mle['q95']:.3g}"
                          + ("; wider than this axis" if mle["q5"] < min(values) - pad or
                             mle["q95"] > max(values) + pad else ""),
                          annotation_position="bottom right")
            fig.update_yaxes(range=[max(mle["q5"], min(values) - pad), min(mle["q95"], max(values) + pad)],
                             row=row, col=1)
    score = [h.get("score", float("nan")) for h in history]
    err = [2 * h.get("score_mcse", float("nan")) for h in history]
    fig.add_trace(go.Scatter(x=it, y=score, mode="markers", name="score ± 2 MC se", customdata=draws,
                             error_y={"type": "data", "array": err, "visible": True}, marker={"color": color},
                             hovertemplate="iteration %{x}: %{y:.3g}<br>%{customdata} Monte Carlo draws<extra></extra>",
                             meta={"kind": "mcem_score"}), row=len(names) + 1, col=1)
    fig.add_hline(y=0.0, line={"color": BOUND_COLOR, "dash": "dot"}, row=len(names) + 1, col=1)
    fig.update_xaxes(title_text="EM iteration", row=len(names) + 1, col=1)
    fig.update_xaxes(dtick=1)
    fig.update_layout(height=220 * (len(names) + 1) + 80, showlegend=False,
                      title="Monte Carlo EM: the estimate settles, the score reaches 0 within its Monte Carlo error",
                      margin={"l": 60, "r": 20, "t": 80, "b": 50})
    return fig


def rank_plot(result, params: Sequence[str] | None = None, bins: int = 20) -> go.Figure:
    """Rank histogram of each chain (ranks over all chains pooled); flat histograms near the
    dashed expected count mean the chains sample the same distribution."""
    names = list(params or result.param_names)
    fig, cols = _subplots(names)
    n_chains, n_draws = result.n_chains, result.n_draws
    edges = np.linspace(0, n_chains * n_draws, bins + 1)
    centers = 0.5 * (edges[:-1] + edges[1:])
    for j, param in enumerate(names):
        x = result.draws[:, :, result.param_names.index(param)]
        ranks = stats.rankdata(x.reshape(-1), method="average").reshape(x.shape)
        for c in range(n_chains):
            counts, _ = np.histogram(ranks[c], bins=edges)
            fig.add_trace(go.Scatter(x=centers, y=counts, mode="lines", line_shape="hvh", name=f"chain {c}",
                                     legendgroup=f"chain {c}", showlegend=j == 0,
                                     line={"color": CHAIN_COLORS[c % len(CHAIN_COLORS)]},
                                     meta={"kind": "rank", "chain": c, "param": param}), **_cell(j, cols))
        expected = n_draws / bins
        fig.add_trace(go.Scatter(x=[edges[0], edges[-1]], y=[expected, expected], mode="lines",
                                 name="uniform", legendgroup="uniform", showlegend=j == 0,
                                 line={"color": "#7f7f7f", "dash": "dash"},
                                 meta={"kind": "rank_expected", "param": param, "value": expected}),
                      **_cell(j, cols))
        fig.update_xaxes(title_text=f"rank of {param}", **_cell(j, cols))
        fig.update_yaxes(title_text="count", rangemode="tozero", **_cell(j, cols))
    fig.update_layout(title=f"{_label(result.method)}: rank plot per chain")
    return fig


def _budget_axis(symbol: str, budgets) -> dict:
    """Log axis labelled at the grid values themselves (plotly's own minor labels read 2, 5, 2...)."""
    ticks = sorted({float(b) for b in budgets})
    axis = {"type": "log", "title": f"privacy budget {symbol} (log scale)"}
    if 0 < len(ticks) <= 12:
        axis |= {"tickvals": ticks, "ticktext": [f"{t:g}" for t in ticks]}
    return axis


def _mark_not_converged(fig: go.Figure, rows: pd.DataFrame, column: str, nudges: bool = False) -> None:
    """Circle-x markers on the sweep cells whose MCMC run has not converged (``converged`` False)."""
    if "converged" not in rows or rows["converged"].all():
        return
    for i, (method, g) in enumerate(rows.groupby("method", sort=False)):
        bad = g[~g["converged"].astype(bool)]
        if bad.empty:
            continue
        x = bad["budget"].to_numpy() * ((1.0 + 0.04 * (i - 1)) if nudges else 1.0)
        fig.add_trace(go.Scatter(x=x, y=bad[column], mode="markers", name=f"{_label(method)}: not converged",
                                 marker={"symbol": "circle-x-open", "size": 16, "color": color_of(method),
                                         "line": {"width": 2}},
                                 hovertemplate="not converged: R-hat > 1.01 or ESS < 400<extra></extra>",
                                 meta={"kind": "not_converged", "method": method}))


def interval_plot(table: pd.DataFrame, param: str, *, symbol: str = "ε", budget: str = "epsilon",
                  truth: float | None = None) -> go.Figure:
    """Posterior mean with its 90% interval (q5..q95) against the budget, one colour per method.

    ``table`` is tidy, as ``engine.study.epsilon_sweep`` returns it: columns method, ``budget``
    (default ``epsilon``), param, mean, q5, q95. Methods are nudged sideways by a few percent on
    the log axis so their bars do not hide each other.
    """
    rows = table[table["param"] == param].rename(columns={budget: "budget"})
    fig = go.Figure()
    for i, (method, g) in enumerate(rows.groupby("method", sort=False)):
        g = g.sort_values("budget")
        nudge = 1.0 + 0.04 * (i - 1)
        fig.add_trace(go.Scatter(
            x=g["budget"].to_numpy() * nudge, y=g["mean"], mode="markers+lines", name=_label(method),
            line={"color": color_of(method), "width": 1},
            error_y={"type": "data", "symmetric": False, "array": (g["q95"] - g["mean"]).to_numpy(),
                     "arrayminus": (g["mean"] - g["q5"]).to_numpy()},
            customdata=np.c_[g["budget"], g["q5"], g["q95"]],
            hovertemplate=f"{symbol} = %{{customdata[0]:.3g}}<br>mean %{{y:.4g}}<br>"
                          "90%: [%{customdata[1]:.4g}, %{customdata[2]:.4g}]<extra></extra>",
            meta={"kind": "interval", "method": method, "param": param}))
    _mark_not_converged(fig, rows, "mean", nudges=True)
    if truth is not None and not rows.empty:
        fig.add_trace(go.Scatter(x=[rows["budget"].min() * 0.9, rows["budget"].max() * 1.1], y=[truth, truth],
                                 mode="lines", name="True value", line={"color": TRUTH_COLOR, "dash": "dash"},
                                 meta={"kind": "truth", "param": param}))
    fig.update_layout(height=400, title=f"{param}: 90% posterior interval vs {symbol}",
                      xaxis=_budget_axis(symbol, rows["budget"]), yaxis_title=param,
                      margin={"l": 60, "r": 20, "t": 60, "b": 50})
    return fig


def sd_plot(table: pd.DataFrame, param: str, *, symbol: str = "ε", budget: str = "epsilon",
            target: float | None = None) -> go.Figure:
    """Posterior sd against the budget (log-log), one line per method, with the target sd dashed."""
    rows = table[table["param"] == param].rename(columns={budget: "budget"})
    fig = go.Figure()
    for method, g in rows.groupby("method", sort=False):
        g = g.sort_values("budget")
        fig.add_trace(go.Scatter(x=g["budget"], y=g["sd"], mode="markers+lines", name=_label(method),
                                 line={"color": color_of(method)},
                                 meta={"kind": "sd", "method": method, "param": param}))
    _mark_not_converged(fig, rows, "sd")
    if target is not None and not rows.empty:
        fig.add_trace(go.Scatter(x=[rows["budget"].min(), rows["budget"].max()], y=[target, target], mode="lines",
                                 name=f"target sd = {target:g}", line={"color": TRUTH_COLOR, "dash": "dash"},
                                 meta={"kind": "target", "param": param, "value": float(target)}))
    fig.update_layout(height=400, title=f"{param}: posterior sd vs {symbol}",
                      xaxis=_budget_axis(symbol, rows["budget"]),
                      yaxis={"type": "log", "title": "posterior sd (log scale)"},
                      margin={"l": 60, "r": 20, "t": 60, "b": 50})
    return fig
