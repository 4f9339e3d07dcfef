"""The Diagnostics page's figures: how each chain of one sampler run mixed, and Monte Carlo EM's path.

Figures
    :func:`trace_plot`            draws per chain (Ju et al. 2022, Fig. 1b style mixing check)
    :func:`acceptance_plot`       DA-MCMC acceptance per sweep vs the exp(-epsilon) bound
                                  (Ju et al. 2022, Prop. 3.1)
    :func:`rank_plot`             rank histograms per chain (Vehtari et al. 2021)
    :func:`mcem_history`          Monte Carlo EM: the estimate and the score per iteration
                                  (paper 002, Alg. 2)

Pure; nothing here imports streamlit.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots
from scipy import stats

from .axes import BOTTOM_LEGEND, _grid_shape, param_symbol, titled
from .labels import acceptance_text, result_label  # a grid posterior is "Exact (numerical)", as the page says
from .palette import BOUND_COLOR, CHAIN_COLORS, color_of

__all__ = ["trace_plot", "acceptance_plot", "rank_plot", "mcem_history"]


def _cell(j: int, cols: int) -> dict:
    return {"row": j // cols + 1, "col": j % cols + 1}


def _frame(fig: go.Figure, title: str, **layout) -> go.Figure:
    """A diagnostics figure's title wrapped for a phone (:func:`figures.axes.titled`, the top margin holding its
    lines) and its legend below the plot (:data:`figures.axes.BOTTOM_LEGEND`): on the right it took half the width
    at 390 px."""
    text, top = titled(title)
    fig.update_layout(title=text, legend=BOTTOM_LEGEND, **layout)
    fig.update_layout(margin_t=top)
    return fig


def _subplots(titles: Sequence[str], height_per_row: int = 300, **kw) -> tuple[go.Figure, int]:
    rows, cols = _grid_shape(len(titles))
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=list(titles) if len(titles) > 1 else None, **kw)
    fig.update_layout(height=max(360, height_per_row * rows + 80),
                      margin={"l": 60, "r": 20, "t": 60, "b": 50})
    return fig, cols


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
        fig.update_yaxes(title_text=param_symbol(param), **_cell(j, cols))
    _frame(fig, f"{result_label(result)}: trace per chain")
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
                                 # opaque: at 0.6 every chain colour fell under 3:1 on either theme (chain 0's
                                 # blue 2.0:1 on the dark one, phone audit s23), its legend swatch with it
                                 line={"width": 1, "color": color},
                                 meta={"kind": "acceptance", "chain": c}))
        for stat, value, dash in (("mean", acc[c].mean(), "dash"), ("min", acc[c].min(), "dot")):
            fig.add_trace(go.Scatter(x=[0, n_draws - 1], y=[float(value)] * 2, mode="lines",
                                     name=f"chain {c} {stat} = {acceptance_text(value)}", legendgroup=group,
                                     showlegend=False,
                                     line={"width": 2, "color": color, "dash": dash},
                                     meta={"kind": f"acceptance_{stat}", "chain": c, "value": float(value)}))
    bound = result.info.get("epsilon_bound")
    if bound is not None:
        fig.add_trace(go.Scatter(x=[0, n_draws - 1], y=[float(bound)] * 2, mode="lines",
                                 name=f"exp(-ε) bound = {acceptance_text(bound)}",
                                 line={"width": 2.5, "color": BOUND_COLOR},
                                 meta={"kind": "bound", "value": float(bound)}))
    title = "DA-MCMC acceptance rate per sweep" if result.method != "rjmcmc" else \
        f"{result_label(result)}: acceptance rate per record sweep (within the current n)"
    # the legend names the chains and the bound; each chain's mean (dashed) and minimum (dotted) line goes with
    # its chain (one click hides all three) and says its value on hover (thirteen entries for four chains were
    # more legend than plot on a phone)
    _frame(fig, title, height=420, xaxis_title="sweep (draw)", yaxis_title="mean acceptance probability",
           yaxis_range=[0, 1.02], margin={"l": 60, "r": 20, "b": 50})
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
    _frame(fig, "Monte Carlo EM: the estimate settles, the score reaches 0 within its Monte Carlo error",
           height=220 * (len(names) + 1) + 80, showlegend=False, margin={"l": 60, "r": 20, "b": 50})
    return fig


def rank_plot(result, params: Sequence[str] | None = None, bins: int = 20) -> go.Figure:
    """Rank histogram of each chain (ranks over all chains pooled); flat histograms near the
    dashed expected count mean the chains sample the same distribution."""
    names = list(params or result.param_names)
    fig, cols = _subplots(names)
    n_chains, n_draws = result.n_chains, result.n_draws
    # ranks run 1..N: bins between half-integers hold equally many ranks (N / bins each when it divides)
    edges = np.linspace(0.5, n_chains * n_draws + 0.5, bins + 1)
    for j, param in enumerate(names):
        x = result.draws[:, :, result.param_names.index(param)]
        ranks = stats.rankdata(x.reshape(-1), method="average").reshape(x.shape)
        for c in range(n_chains):
            counts, _ = np.histogram(ranks[c], bins=edges)
            # a step over each bin's whole width: its count from its left edge to the next, the last bin closed at
            # the right edge by repeating its count (meta["counts"] holds the counts themselves)
            fig.add_trace(go.Scatter(x=edges, y=np.append(counts, counts[-1]), mode="lines", line_shape="hv",
                                     name=f"chain {c}", legendgroup=f"chain {c}", showlegend=j == 0,
                                     line={"color": CHAIN_COLORS[c % len(CHAIN_COLORS)]},
                                     meta={"kind": "rank", "chain": c, "param": param, "counts": counts.tolist()}),
                          **_cell(j, cols))
        expected = n_draws / bins
        fig.add_trace(go.Scatter(x=[edges[0], edges[-1]], y=[expected, expected], mode="lines",
                                 name="uniform", legendgroup="uniform", showlegend=j == 0,
                                 line={"color": "#7f7f7f", "dash": "dash"},
                                 meta={"kind": "rank_expected", "param": param, "value": expected}),
                      **_cell(j, cols))
        fig.update_xaxes(title_text=f"rank of {param_symbol(param)}", **_cell(j, cols))
        fig.update_yaxes(title_text="count", rangemode="tozero", **_cell(j, cols))
    _frame(fig, f"{result_label(result)}: rank plot per chain")
    return fig
