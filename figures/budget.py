"""The Privacy budget page's figures: what a sweep over the budget shows, one colour per method.

Figures
    :func:`interval_plot`         90% posterior intervals against the privacy budget
    :func:`sd_plot`               posterior sd against the privacy budget

Both read the tidy table of ``engine.epsilon_sweep`` and circle the cells whose MCMC run did not
converge. Pure; nothing here imports streamlit.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from .axes import _label
from .palette import TRUTH_COLOR, color_of

__all__ = ["interval_plot", "sd_plot"]


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

    ``table`` is tidy, as ``engine.epsilon_sweep`` returns it: columns method, ``budget``
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
