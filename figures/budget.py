"""The Privacy budget page's figures: what a sweep over the budget shows, one colour per method.

Figures
    :func:`interval_plot`         90% posterior intervals against the privacy budget
    :func:`sd_plot`               posterior sd against the privacy budget, with the exact sd, its floor and the
                                  prior sd
    :func:`releases_plot`         posterior means and intervals of R fresh releases per budget
    :func:`mean_split_plot`       a mean released as (sum, count): posterior sd against the share of ε on the sum
    :func:`with_scenario`         a copy of a figure titled for a download: its title and the scenario under it

The page's privacy/utility frontier is :func:`figures.frontier.frontier_figure`.

The first two read the tidy table of ``engine.epsilon_sweep`` and circle the cells whose MCMC run did not
converge; the third reads ``engine.studies.epsilon_replicates``. Pure; nothing here imports streamlit.
"""
from __future__ import annotations

from typing import Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from .axes import (BOTTOM_LEGEND, CHAR_PX, PAD_PX, PHONE_PLOT_PX, TITLE_LINE, _label, log_ticks, param_symbol, titled,
                   top_title, wrap)
from .palette import NEUTRAL_COLOR, TRUTH_COLOR, color_of
from .labels import summary_number
from .posteriors import FAR_FACTOR, REFERENCE_METHODS

__all__ = ["interval_plot", "sd_plot", "releases_plot", "mean_split_plot", "with_scenario", "tick_labels"]


def _budget_axis(symbol: str, budgets) -> dict:
    """Log axis labelled at the grid values themselves (plotly's own minor labels read 2, 5, 2...), each value a tick
    and a grid line, its label left blank where it would overlap a neighbour's on a phone (:func:`tick_labels`)."""
    ticks = sorted({float(b) for b in budgets})
    axis = {"type": "log", "title": f"privacy budget {symbol} (log scale)"}
    if 0 < len(ticks) <= 12:
        axis |= {"tickvals": ticks, "ticktext": tick_labels(ticks)}
    return axis


def tick_labels(ticks, plot_px: float = PHONE_PLOT_PX[0]) -> list[str]:
    """The labels of a log axis's ``ticks`` (sorted, > 0), "" for those that would overlap a label already placed on
    a plot ``plot_px`` wide (a phone's: wider screens give the same span more pixels). The default grid with the
    sidebar's ε = 0.3 added put "0.215" and "0.3" 20 px apart at 390 px, one over the other. Placed first: powers
    of ten, then the shorter labels (0.3 before 0.215), then left to right; a label is about :data:`CHAR_PX` a
    character, and two labels need half their widths and :data:`PAD_PX` between their centres. The span is the
    ticks' own with 5% on each side (plotly's log autorange pads about that much)."""
    texts = [f"{t:g}" for t in ticks]
    if len(ticks) < 2:
        return texts
    logs = np.log10(ticks)
    span = (logs[-1] - logs[0]) * 1.1 or 1.0
    px = (logs - logs[0]) / span * plot_px
    half = [len(s) * CHAR_PX / 2 for s in texts]
    order = sorted(range(len(ticks)), key=lambda i: (not float(logs[i]).is_integer(), len(texts[i]), i))
    placed: list[int] = []
    for i in order:
        if all(abs(px[i] - px[j]) >= half[i] + half[j] + PAD_PX for j in placed):
            placed.append(i)
    return [s if i in placed else "" for i, s in enumerate(texts)]


def _name(method: str, labels: Mapping[str, str] | None) -> str:
    """A method's name in the legend: as its runs call themselves where ``labels`` says, else its label."""
    return (labels or {}).get(method) or _label(method)


def _mark_not_converged(fig: go.Figure, rows: pd.DataFrame, column: str, nudges: bool = False,
                        labels: Mapping[str, str] | None = None) -> None:
    """Circle-x markers on the sweep cells whose MCMC run has not converged (``converged`` False)."""
    if "converged" not in rows or rows["converged"].all():
        return
    for i, (method, g) in enumerate(rows.groupby("method", sort=False)):
        bad = g[~g["converged"].astype(bool)]
        if bad.empty:
            continue
        x = bad["budget"].to_numpy() * ((1.0 + 0.04 * (i - 1)) if nudges else 1.0)
        fig.add_trace(go.Scatter(x=x, y=bad[column], mode="markers", name=f"{_name(method, labels)}: not converged",
                                 marker={"symbol": "circle-x-open", "size": 16, "color": color_of(method),
                                         "line": {"width": 2}},
                                 hovertemplate="not converged: R-hat > 1.01 or ESS < 400<extra></extra>",
                                 meta={"kind": "not_converged", "method": method}))


def interval_plot(table: pd.DataFrame, param: str, *, symbol: str = "ε", budget: str = "epsilon",
                  truth: float | None = None, labels: Mapping[str, str] | None = None) -> go.Figure:
    """Posterior mean with its 90% interval (q5..q95) against the budget, one colour per method.

    ``table`` is tidy, as ``engine.epsilon_sweep`` returns it: columns method, ``budget``
    (default ``epsilon``), param, mean, q5, q95. Methods are nudged sideways by a few percent on
    the log axis so their bars do not hide each other. ``labels`` ({method: name}) names a method as its runs
    call themselves (``ui.compute.sweeps.Sweep.labels``: "Exact (numerical)" on a grid), else by its label.
    """
    rows = table[table["param"] == param].rename(columns={budget: "budget"})
    fig = go.Figure()
    for i, (method, g) in enumerate(rows.groupby("method", sort=False)):
        g = g.sort_values("budget")
        nudge = 1.0 + 0.04 * (i - 1)
        fig.add_trace(go.Scatter(
            x=g["budget"].to_numpy() * nudge, y=g["mean"], mode="markers+lines", name=_name(method, labels),
            line={"color": color_of(method), "width": 1},
            error_y={"type": "data", "symmetric": False, "array": (g["q95"] - g["mean"]).to_numpy(),
                     "arrayminus": (g["mean"] - g["q5"]).to_numpy()},
            customdata=np.c_[g["budget"], g["q5"], g["q95"]],
            hovertemplate=f"{symbol} = %{{customdata[0]:.3g}}<br>mean %{{y:.4g}}<br>"
                          "90%: [%{customdata[1]:.4g}, %{customdata[2]:.4g}]<extra></extra>",
            meta={"kind": "interval", "method": method, "param": param}))
    _mark_not_converged(fig, rows, "mean", nudges=True, labels=labels)
    if truth is not None and not rows.empty:
        fig.add_trace(go.Scatter(x=[rows["budget"].min() * 0.9, rows["budget"].max() * 1.1], y=[truth, truth],
                                 mode="lines", name="True value", line={"color": TRUTH_COLOR, "dash": "dash"},
                                 meta={"kind": "truth", "param": param}))
    fig.update_layout(height=460, title=f"{param_symbol(param)}: 90% posterior interval vs {symbol}",
                      xaxis=_budget_axis(symbol, rows["budget"]), yaxis_title=param_symbol(param),
                      margin={"l": 60, "r": 20, "t": 60, "b": 50}, legend=BOTTOM_LEGEND)
    _frame_private(fig, rows, truth, labels)
    return fig


def _frame_private(fig: go.Figure, rows: pd.DataFrame, truth: float | None,
                   labels: Mapping[str, str] | None = None) -> None:
    """Where a reference posterior's intervals (naive's, which ignore the noise: the clamped regression's naive β
    reaches thousands) lie more than ``FAR_FACTOR`` widths beyond the private methods' intervals and the truth, the
    y-axis shows those (10% padding) and a note says how far the reference ones reach, as Compare's figure does;
    otherwise plotly fits everything."""
    private = rows[~rows["method"].isin(REFERENCE_METHODS)]
    reference = rows[rows["method"].isin(REFERENCE_METHODS)]
    if private.empty or reference.empty:
        return
    lo, hi = float(private["q5"].min()), float(private["q95"].max())
    if truth is not None and np.isfinite(truth):
        lo, hi = min(lo, truth), max(hi, truth)
    width = hi - lo if hi > lo else max(abs(hi), 1.0)
    low, high = float(reference["q5"].min()), float(reference["q95"].max())
    if low >= lo - FAR_FACTOR * width and high <= hi + FAR_FACTOR * width:
        return
    fig.update_yaxes(range=[lo - 0.1 * width, hi + 0.1 * width])
    names = " and ".join(_name(m, labels) for m in reference["method"].unique())
    reach = f"{summary_number(low)} to {summary_number(high)}"
    fig.add_annotation(text=f"{names}: intervals reach {reach}, beyond the axis",
                       xref="paper", yref="paper", x=0.0, y=1.0, xanchor="left", yanchor="bottom", showarrow=False,
                       font={"size": 12})


def _log_tickvals(values) -> dict:
    """``tickvals`` / ``ticktext`` of a log axis over ``values`` (:func:`figures.axes.log_ticks`), or nothing."""
    ticks = log_ticks(values)
    return {"tickvals": ticks, "ticktext": [f"{t:g}" for t in ticks]} if ticks else {}


def sd_plot(table: pd.DataFrame, param: str, *, symbol: str = "ε", budget: str = "epsilon",
            target: float | None = None, exact_sd: dict | None = None,
            confidential_sd: float | None = None, prior_sd: float | None = None,
            labels: Mapping[str, str] | None = None) -> go.Figure:
    """Posterior sd against the budget (log-log), one line per method, with the target sd dashed.

    ``exact_sd`` ({budget: sd}, from the exact posterior's moments) is drawn dotted in the exact posterior's colour: the
    sd the advice under the figure reads, free of Monte Carlo error. ``confidential_sd`` (the sd of the
    confidential-data posterior, the limit of the exact posterior as the budget grows) is drawn as a grey floor: no
    exact posterior goes below it, though the naive one, which ignores the noise, can. ``prior_sd`` (the
    parameter's sd before any data) is drawn as a dotted grey ceiling and anchors the y-axis: it then spans at
    least a factor of 10 down from the highest line, so sds that barely move from the prior (the regression's
    coefficients at n = 100 move 20%) look as flat as they are instead of filling the figure. ``labels`` as in
    :func:`interval_plot`."""
    rows = table[table["param"] == param].rename(columns={budget: "budget"})
    fig = go.Figure()
    if prior_sd is not None and not rows.empty:
        fig.add_trace(go.Scatter(x=[rows["budget"].min(), rows["budget"].max()], y=[prior_sd] * 2, mode="lines",
                                 name=f"prior sd = {prior_sd:.2g} (before any data)",
                                 line={"color": NEUTRAL_COLOR, "dash": "dot", "width": 2},
                                 hovertemplate="prior sd %{y:.2g}<extra></extra>",
                                 meta={"kind": "prior_sd", "param": param, "value": float(prior_sd)}))
    if exact_sd:
        xs = sorted(exact_sd)
        fig.add_trace(go.Scatter(x=xs, y=[exact_sd[x] for x in xs], mode="lines",
                                 name="exact sd (computed, not from draws)",
                                 line={"color": color_of("exact"), "dash": "dot", "width": 2},
                                 hovertemplate=f"{symbol} = %{{x:.3g}}<br>exact sd %{{y:.4g}}<extra></extra>",
                                 meta={"kind": "exact_sd", "param": param}))
    if confidential_sd is not None and not rows.empty:
        fig.add_trace(go.Scatter(x=[rows["budget"].min(), rows["budget"].max()], y=[confidential_sd] * 2, mode="lines",
                                 name=f"confidential-data sd = {confidential_sd:.3g} (no exact posterior goes below)",
                                 line={"color": NEUTRAL_COLOR, "width": 3},
                                 meta={"kind": "confidential_sd", "param": param, "value": float(confidential_sd)}))
    for method, g in rows.groupby("method", sort=False):
        g = g.sort_values("budget")
        fig.add_trace(go.Scatter(x=g["budget"], y=g["sd"], mode="markers+lines", name=_name(method, labels),
                                 line={"color": color_of(method)},
                                 meta={"kind": "sd", "method": method, "param": param}))
    _mark_not_converged(fig, rows, "sd", labels=labels)
    if target is not None and not rows.empty:
        fig.add_trace(go.Scatter(x=[rows["budget"].min(), rows["budget"].max()], y=[target, target], mode="lines",
                                 name=f"target sd = {target:g}", line={"color": TRUTH_COLOR, "dash": "dash"},
                                 meta={"kind": "target", "param": param, "value": float(target)}))
    shown = [y for t in fig.data for y in (t.y if t.y is not None else ())]
    yaxis = {"type": "log", "title": "posterior sd (log scale)", **_log_tickvals(shown)}
    if prior_sd is not None and not rows.empty:
        yaxis |= _decade_below_the_top(shown)
    fig.update_layout(height=460, title=f"{param_symbol(param)}: posterior sd vs {symbol}",
                      xaxis=_budget_axis(symbol, rows["budget"]), yaxis=yaxis,
                      margin={"l": 60, "r": 20, "t": 60, "b": 50}, legend=BOTTOM_LEGEND)
    return fig


def _decade_below_the_top(values) -> dict:
    """A log y-axis ``range`` (and its ticks) from the largest of ``values`` down at least a factor of 10, padded
    as plotly's autorange pads (5% of the span in log either side, as :func:`figures.axes.log_ticks` assumes)."""
    v = [float(y) for y in values if y is not None and np.isfinite(y) and y > 0]
    if not v:
        return {}
    hi = max(v)
    lo = min(min(v), hi / 10.0)
    pad = (hi / lo) ** 0.05
    return {"range": [float(np.log10(lo / pad)), float(np.log10(hi * pad))], **_log_tickvals([lo, hi])}


def releases_plot(table: pd.DataFrame, param: str, *, symbol: str = "ε", truth: float | None = None) -> go.Figure:
    """R fresh releases per budget (``engine.studies.epsilon_replicates`` rows, data fixed): each release's
    posterior mean with its 90% interval, spread sideways around its budget so they do not hide each
    other, and the confidential-data posterior mean E[theta | x] that they approach as the budget grows.
    The spread of the means at one budget is the release noise a single sweep hides."""
    rows = table[(table["param"] == param) & table["post_mean"].notna()].copy()
    fig = go.Figure()
    reps = sorted(rows["replicate"].unique()) if not rows.empty else []
    spread = {r: 1.0 + 0.12 * ((i + 0.5) / max(len(reps), 1) - 0.5) for i, r in enumerate(reps)}
    if not rows.empty:
        x = rows["epsilon"].to_numpy() * rows["replicate"].map(spread).to_numpy()
        fig.add_trace(go.Scatter(
            x=x, y=rows["post_mean"], mode="markers", name="one release: mean and 90% interval",
            marker={"color": "#1f77b4", "size": 6, "opacity": 0.8},
            error_y={"type": "data", "symmetric": False, "array": (rows["q95"] - rows["post_mean"]).to_numpy(),
                     "arrayminus": (rows["post_mean"] - rows["q5"]).to_numpy(), "thickness": 1, "width": 0,
                     "color": "rgba(31,119,180,0.35)"},
            customdata=np.c_[rows["epsilon"], rows["replicate"]],
            hovertemplate=f"{symbol} = %{{customdata[0]:.3g}}, release %{{customdata[1]}}<br>mean %{{y:.4g}}"
                          "<extra></extra>",
            meta={"kind": "release", "param": param}))
        conf = rows.groupby("epsilon")["confidential_mean"].first()
        lo, hi = float(rows["epsilon"].min()) * 0.9, float(rows["epsilon"].max()) * 1.1
        fig.add_trace(go.Scatter(x=[lo, hi], y=[float(conf.iloc[0])] * 2, mode="lines",
                                 name="confidential-data posterior mean", line={"color": NEUTRAL_COLOR, "width": 3},
                                 meta={"kind": "confidential_mean", "param": param}))
        if truth is not None:
            fig.add_trace(go.Scatter(x=[lo, hi], y=[truth, truth], mode="lines", name="True value",
                                     line={"color": TRUTH_COLOR, "dash": "dash"}, meta={"kind": "truth", "param": param}))
    title, top = titled(f"{param_symbol(param)}: {len(reps)} fresh releases per {symbol}")
    fig.update_layout(height=440, title=title,
                      xaxis=_budget_axis(symbol, rows["epsilon"] if not rows.empty else []),
                      yaxis_title=param_symbol(param),
                      legend=BOTTOM_LEGEND,
                      margin={"l": 60, "r": 20, "t": top, "b": 50})
    return fig


def mean_split_plot(curve, *, fraction_sum: float, posterior_sd: float, even_sd: float, even_fraction: float = 0.5,
                    epsilon: float | None = None) -> go.Figure:
    """A mean released as (noisy sum, noisy count): the posterior sd of the mean against the share of ε spent on
    the sum (``engine.mean_budget_split``'s ``curve``, log y), the best split and dp-wizard's even split marked.

    ``curve`` is ((fraction, sd), ...); ``fraction_sum`` / ``posterior_sd`` the optimum, ``even_sd`` the sd at
    ``even_fraction`` (OpenDP's ``dp.mean``: one half each)."""
    xs, ys = [float(c[0]) for c in curve], [float(c[1]) for c in curve]
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines+markers", name="posterior sd of the mean",
                             line={"color": color_of("exact")}, marker={"size": 5},
                             hovertemplate="share on the sum %{x:.0%}<br>posterior sd %{y:.4g}<extra></extra>",
                             meta={"kind": "curve"}))
    fig.add_trace(go.Scatter(x=[float(even_fraction)], y=[float(even_sd)], mode="markers",
                             name=f"dp-wizard's even split ({even_fraction:.0%}): sd {even_sd:.4g}",
                             marker={"symbol": "square", "size": 12, "color": NEUTRAL_COLOR},
                             meta={"kind": "even", "fraction": float(even_fraction), "sd": float(even_sd)}))
    fig.add_trace(go.Scatter(x=[float(fraction_sum)], y=[float(posterior_sd)], mode="markers",
                             name=f"best split ({fraction_sum:.0%} on the sum): sd {posterior_sd:.4g}",
                             marker={"symbol": "star", "size": 16, "color": "#D55E00"},
                             meta={"kind": "best", "fraction": float(fraction_sum), "sd": float(posterior_sd)}))
    at = f" at ε = {epsilon:g}" if epsilon is not None else ""
    title, top = titled(f"A mean released as (sum, count){at}: posterior sd by split")
    fig.update_layout(height=440, title=title,
                      xaxis={"title": "share of ε spent on the noisy sum", "tickformat": ".0%", "range": [0, 1]},
                      yaxis={"type": "log", "title": "posterior sd of the mean (log scale)",
                             **_log_tickvals(ys + [float(even_sd), float(posterior_sd)])},
                      legend=BOTTOM_LEGEND,
                      margin={"l": 60, "r": 20, "t": top, "b": 50})
    return fig


def with_scenario(fig: go.Figure, title: str, scenario: str, width: int = 70) -> go.Figure:
    """A copy of ``fig`` for a download, which must stand alone: ``title`` on top and, under it in smaller type,
    ``scenario`` (model, n, mechanism and sensitivity, data source), both wrapped at ``width`` characters; the
    top margin grows with the lines. The figure on the page is left as it is (the sidebar says the scenario)."""
    head, sub = wrap(title, width), wrap(scenario.replace("; ", " · "), width)  # wrap breaks after each "; "
    lines = 1 + head.count("<br>") + 1 + sub.count("<br>")
    out = go.Figure(fig)  # figures.export.for_export moves a hung title down for the files' plotly.js
    out.update_layout(title={**top_title(head), "subtitle": {"text": sub, "font": {"size": 12}}},
                      margin={"t": 38 + TITLE_LINE * lines})
    return out
