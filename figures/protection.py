"""What epsilon protects, drawn: the figures of ``engine.risk`` and of the privacy/utility frontier.

Figures
    :func:`tradeoff_figure`    the optimal attack's trade-off curve against the guarantee's curve
    :func:`belief_figure`      the informed adversary's posterior belief, as a distribution over releases
    :func:`record_figure`      the realistic adversary's view of one record: posterior vs prior P(record = v)
    :func:`frontier_figure`    protection against utility over a sweep of epsilon (plain arrays in)

The first three read the dictionary :func:`engine.risk` returns (the content of risk.json); the
frontier takes plain arrays so any page can call it. Every trace carries ``meta = {"kind": ...}``.
Pure; nothing here imports streamlit.
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from .axes import BOTTOM_LEGEND, wrap
from .palette import BOUND_COLOR, METHOD_COLORS, TRUTH_COLOR

__all__ = ["tradeoff_figure", "belief_figure", "record_figure", "frontier_figure"]

ATTACK_COLOR = METHOD_COLORS["da_mcmc"]   # bluish green: what the best attack achieves
GUESS_COLOR = "#8c8c8c"                   # grey: a coin flip / the prior
POSTERIOR_COLOR = METHOD_COLORS["exact"]  # blue: the posterior after the release

#: What the best attack is on, in the legend ("best attack on Laplace noise", not the engine's key "laplace").
_ATTACKED = {"laplace": "Laplace noise", "gaussian": "Gaussian noise", "discrete_laplace": "discrete Laplace noise",
             "discrete_gaussian": "discrete Gaussian noise", "randomized_response": "randomized response"}
_BOUND_NAMES = {"epsilon_dp": "what ε-DP allows (ε = {epsilon:.3g})", "gdp": "what μ-GDP allows (μ = {mu:.3g})",
                "zcdp": "what ρ-zCDP allows (ρ = {rho:.3g})"}


def tradeoff_figure(risk: dict) -> go.Figure:
    """The trade-off curve beta(alpha) of the optimal attack, the guarantee's curve and a coin flip
    (beta = 1 - alpha), with the attack's power at 5% false positives marked."""
    t, b = risk["tradeoff"], risk["bound"]
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[0, 1], y=[1, 0], mode="lines", name="guessing (no information)", legendrank=1,
                             line={"color": GUESS_COLOR, "dash": "dot"}, meta={"kind": "guess"}))
    attacked = risk.get("attack_on") or _ATTACKED.get(risk["mechanism"], "this release")  # OpenDP's mean: its pair
    fig.add_trace(go.Scatter(x=t["alpha"], y=t["beta"], mode="lines", name=f"best attack on {attacked}",
                             line={"color": ATTACK_COLOR, "width": 3}, meta={"kind": "tradeoff"}, legendrank=3,
                             hovertemplate="false positives %{x:.3f}<br>misses %{y:.3f}<extra>best attack</extra>"))
    # the guarantee's dashes over the attack's line: where the attack reaches the bound (Laplace at its kink, the
    # Gaussian mechanism along all of its mu-GDP curve) both stay visible
    fig.add_trace(go.Scatter(x=b["alpha"], y=b["beta"], mode="lines", name=_BOUND_NAMES[b["kind"]].format(**b),
                             line={"color": BOUND_COLOR, "dash": "dash"}, meta={"kind": "bound", "bound": b["kind"]},
                             legendrank=2,
                             hovertemplate="false positives %{x:.3f}<br>misses at least %{y:.3f}<extra>guarantee</extra>"))
    power = risk["power_at_5pct"]
    fig.add_trace(go.Scatter(x=[0.05], y=[1 - power], mode="markers+text", name="at 5% false positives",
                             text=[f"power {power:.0%}"], textposition="top right",
                             marker={"color": ATTACK_COLOR, "size": 10}, meta={"kind": "power_at_5pct", "power": power},
                             legendrank=4))
    # a square plot: the axes share a scale (scaleanchor), and where the space is wider or taller than square
    # the plot narrows ("constrain": "domain") instead of widening an axis beyond the error rates' [0, 1]
    fig.update_layout(xaxis={"title": wrap("type I error α (false positives)"), "range": [0, 1],
                             "constrain": "domain"},
                      yaxis={"title": wrap("type II error β (missed detections)"), "range": [0, 1],
                             "scaleanchor": "x", "constrain": "domain"},
                      legend=BOTTOM_LEGEND, margin={"t": 30})
    return fig


def belief_figure(risk: dict) -> go.Figure:
    """Histogram of the informed adversary's posterior belief in the true value (prior 50%), with the
    50%, 95% and 99% quantiles and the largest possible belief (absent where unbounded)."""
    ia = risk["informed_adversary"]
    edges = np.asarray(ia["histogram"]["edges"])
    prob = np.asarray(ia["histogram"]["probability"])
    fig = go.Figure()
    fig.add_trace(go.Bar(x=(100 * (edges[:-1] + edges[1:]) / 2).tolist(), y=prob.tolist(), width=(100 * np.diff(edges)).tolist(),
                         name="share of releases", marker={"color": ATTACK_COLOR}, meta={"kind": "belief_histogram"},
                         legendrank=1,
                         hovertemplate="belief %{x:.1f}%<br>share of releases %{y:.3f}<extra></extra>"))
    # the solid line first, the dashed and dotted ones over it: where the 95% quantile is the largest belief (a
    # two-valued record at small epsilon) both stay visible; the legend keeps the reading order
    lines = [("max", ia["max"], BOUND_COLOR, "solid", "never above", 4),
             ("prior", ia["prior"], GUESS_COLOR, "dot", "before the release", 2),
             ("q95", ia["q95"], POSTERIOR_COLOR, "dash", "95% of releases below", 3)]
    top = float(prob.max()) if prob.size else 1.0
    for key, value, color, dash, label, rank in lines:
        if value is None:
            continue
        fig.add_trace(go.Scatter(x=[100 * value] * 2, y=[0, 1.05 * top], mode="lines",
                                 name=f"{label} ({100 * value:.1f}%)", legendrank=rank,
                                 line={"color": color, "dash": dash}, meta={"kind": key, "value": value}))
    fig.update_layout(xaxis={"title": wrap("their belief in the true value after the release (%)"),
                             "range": [0, 100]},
                      yaxis={"title": wrap("share of releases")}, bargap=0.05, legend=BOTTOM_LEGEND,
                      margin={"t": 30})
    return fig


def record_figure(realistic: dict) -> go.Figure:
    """Prior and posterior P(record = v) side by side for every value v of one person's record."""
    fig = go.Figure()
    if not realistic.get("available"):
        fig.add_annotation(text=realistic.get("reason", "not available"), showarrow=False, x=0.5, y=0.5,
                           xref="paper", yref="paper")
        fig.update_layout(meta={"kind": "unavailable"})
        return fig
    x = list(realistic.get("labels") or [str(v) for v in realistic["values"]])  # "3+": a clamp's top value
    fig.add_trace(go.Bar(x=x, y=realistic["prior"], name="before the release (prior)", marker={"color": GUESS_COLOR},
                         meta={"kind": "prior"}, hovertemplate="value %{x}: %{y:.3f}<extra>prior</extra>"))
    fig.add_trace(go.Bar(x=x, y=realistic["posterior"], name="after the release (posterior)",
                         marker={"color": POSTERIOR_COLOR}, meta={"kind": "posterior"},
                         hovertemplate="value %{x}: %{y:.3f}<extra>posterior</extra>"))
    fig.update_layout(barmode="group", xaxis={"title": wrap("value of one person's record"), "type": "category"},
                      yaxis={"title": wrap("probability"), "rangemode": "tozero"}, legend=BOTTOM_LEGEND,
                      margin={"t": 30})
    return fig


#: a point's label is drawn when it is at least this share of an axis's span from the last labelled point
LABEL_GAP = 0.07


def _spaced_labels(x, y, labels, x_span: float, y_span: float, taken: list) -> list:
    """``labels`` with those of crowded points blanked: from the last point (the largest epsilon) down, a label is
    kept when its point is at least LABEL_GAP of the x or of the y span away from every point labelled so far (this
    line's and, in ``taken``, the other line's; the kept points are added to it), so labels never pile up where the
    points do. Each point keeps its label in the hover."""
    out = [""] * len(labels)
    for i in range(len(labels) - 1, -1, -1):
        if all(max(abs(x[i] - a) / x_span, abs(y[i] - b) / y_span) >= LABEL_GAP for a, b in taken):
            out[i] = labels[i]
            taken.append((x[i], y[i]))
    return out


def _label_positions(x, y, x_span: float, y_span: float, where: str, eps=None, chosen: float | None = None
                     ) -> list[str]:
    """Each point's label position: ``where`` (above or below the point), or to its right where the line runs
    steeply through the point (an axis-scaled slope above 2 on both sides): at large ε the sd stops shrinking
    while the attacker's share still climbs, and labels centred above or below sat on the near-vertical line.
    The ``chosen`` ε's label moves to the right of ``where`` too, off the circle drawn round its point."""
    out = []
    for i in range(len(x)):
        slopes = [abs((y[j] - y[i]) / y_span) / max(abs((x[j] - x[i]) / x_span), 1e-12)
                  for j in (i - 1, i + 1) if 0 <= j < len(x)]
        if slopes and min(slopes) > 2:
            out.append("middle right")
        elif chosen is not None and eps is not None and np.isclose(eps[i], chosen):
            out.append(where.replace("center", "right"))
        else:
            out.append(where)
    return out


def frontier_figure(epsilon, q95, power, utility, *, utility_label: str = "posterior sd",
                    chosen: float | None = None) -> go.Figure:
    """The privacy/utility frontier over a sweep of epsilon.

    x: ``utility`` (e.g. the exact posterior's sd or 90% interval width: smaller is more useful);
    y: the protection side, the informed adversary's 95% belief ``q95`` and the optimal attack's
    ``power`` at 5% false positives (both probabilities: smaller is more private). One point per
    epsilon, labelled with it; ``chosen`` circles the point of that epsilon."""
    eps = np.asarray(epsilon, dtype=float)
    arrays = [np.asarray(a, dtype=float) for a in (q95, power, utility)]
    if any(a.shape != eps.shape for a in arrays):
        raise ValueError(f"frontier_figure: epsilon, q95, power and utility must have one value per epsilon "
                         f"(lengths {[eps.size] + [a.size for a in arrays]})")
    order = np.argsort(eps)
    eps, (q95, power, utility) = eps[order], [a[order] for a in arrays]
    labels = [f"ε = {e:g}" for e in eps]
    span = float(np.ptp(utility)) if utility.size and np.ptp(utility) > 0 else 1.0
    taken = []
    fig = go.Figure()
    # the belief's labels above its line, the power's below its own: where the two lines meet (large epsilon)
    # the labels do not sit on each other
    for y, name, color, kind, where in (
            (q95, "informed adversary's belief (95% of releases below)", POSTERIOR_COLOR, "q95", "top center"),
            (power, "best attack's power at 5% false positives", ATTACK_COLOR, "power_at_5pct", "bottom center")):
        fig.add_trace(go.Scatter(x=utility.tolist(), y=y.tolist(), mode="lines+markers+text",
                                 text=_spaced_labels(utility, y, labels, span, 1.05, taken),
                                 textposition=_label_positions(utility, y, span, 1.05, where, eps, chosen),
                                 customdata=labels, name=name, line={"color": color}, cliponaxis=False,
                                 meta={"kind": kind, "epsilon": eps.tolist()},
                                 hovertemplate=("%{customdata}<br>" + utility_label
                                                + " %{x:.4g}<br>%{y:.3f}<extra></extra>")))
    if chosen is not None:
        hit = np.nonzero(np.isclose(eps, chosen))[0]
        if hit.size:
            i = int(hit[0])
            fig.add_trace(go.Scatter(x=[float(utility[i])] * 2, y=[float(q95[i]), float(power[i])], mode="markers",
                                     name=f"chosen ε = {eps[i]:g}", marker={"size": 16, "symbol": "circle-open",
                                                                           "color": TRUTH_COLOR, "line": {"width": 3}},
                                     meta={"kind": "chosen", "epsilon": float(eps[i])}))
    fig.update_layout(xaxis={"title": wrap(f"{utility_label} — smaller: more useful")},
                      yaxis={"title": wrap("what an attacker achieves — smaller: more private"), "range": [0, 1.05]},
                      legend=BOTTOM_LEGEND, margin={"t": 30})
    return fig
