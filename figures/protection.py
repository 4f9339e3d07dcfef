"""What epsilon protects, drawn: the figures of ``engine.risk``.

Figures
    :func:`tradeoff_figure`    the optimal attack's trade-off curve against the guarantee's curve
    :func:`belief_figure`      the informed adversary's posterior belief, as a distribution over releases
    :func:`record_figure`      the realistic adversary's view of one record: posterior vs prior P(record = v)

They read the dictionary :func:`engine.risk` returns (the content of risk.json); the privacy/utility frontier
over a sweep of ε is :func:`figures.frontier.frontier_figure`. Every trace carries ``meta = {"kind": ...}``.
Pure; nothing here imports streamlit.
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from engine.protection.report import directed_percent, share_decimals

from .axes import BOTTOM_LEGEND, CHAR_PX, PAD_PX, PHONE_PLOT_PX, wrap
from .palette import BOUND_COLOR, METHOD_COLORS

__all__ = ["tradeoff_figure", "power_label_box", "belief_figure", "belief_line_names", "record_figure",
           "bound_name",
           "guarantee_curve",
           "mechanism_curve_name", "percent", "percent_at_least", "percent_at_most", "budget_number", "stated_budget",
           "pair_shift", "own_shift"]

ATTACK_COLOR = METHOD_COLORS["da_mcmc"]   # bluish green: what the best attack achieves
GUESS_COLOR = "#8c8c8c"                   # grey: a coin flip / the prior
POSTERIOR_COLOR = METHOD_COLORS["exact"]  # blue: the posterior after the release
MECHANISM_COLOR = METHOD_COLORS["exact"]  # blue, dotted: a Gaussian's own curve (the trade-off figure has no posterior)

#: What the best attack is on, in the legend ("best attack on Laplace noise", not the engine's key "laplace").
_ATTACKED = {"laplace": "Laplace noise", "gaussian": "Gaussian noise", "discrete_laplace": "discrete Laplace noise",
             "discrete_gaussian": "discrete Gaussian noise", "randomized_response": "randomized response"}


def _digits(p: float, apart_from: float | None = None) -> int:
    """Decimals for a share in percent on the page: none from 1% to 99%, one outside, more where that would write
    it as 0%, 100% or ``apart_from`` (:func:`engine.protection.report.share_decimals`)."""
    return share_decimals(p, 0 if 1.0 <= 100.0 * float(p) <= 99.0 else 1, apart_from)


def percent(p: float, apart_from: float | None = None) -> str:
    """A probability as a whole percentage; below 1% or above 99% with one decimal (so 99.6% is not 100%), and
    with more where it would read as 0% or 100% or, given ``apart_from`` (the guess before the release), as that
    (:func:`_digits`). The one rounding of a share on What it protects: the sentence and the legends say the same
    number (the sentence read "90% or more" above a legend "(89.5%)")."""
    return f"{100.0 * float(p):.{_digits(p, apart_from)}f}%"


def _directed_percent(p: float, up: bool) -> str:
    """:func:`percent` where that rounding keeps a bound true, else rounded the safe way at the same decimals (up
    for "at most", down for "at least"; a whole percentage that does not hold falls to one decimal), with more
    decimals where the safe way reaches 100% or 0% for a share strictly between
    (:func:`engine.protection.report.directed_percent`, which the command line's line takes too)."""
    return directed_percent(p, 0 if 1.0 <= 100.0 * float(p) <= 99.0 else 1, up)


def percent_at_least(p: float) -> str:
    """A share said as "X or more" (a quantile the belief reaches in some releases): :func:`percent` unless it rounds
    up past the value, then one decimal rounded down. logistic(0.5 + 1.645) = 89.52% read "90% or more"; now
    "89.5% or more"."""
    return _directed_percent(p, up=False)


def percent_at_most(p: float) -> str:
    """A share said as "at most X" / "at or below X" (95% of releases stay at or below their 95% quantile):
    :func:`percent` unless it rounds down past the value, then one decimal rounded up."""
    return _directed_percent(p, up=True)


def budget_number(v: float) -> str:
    """A budget (ε, ρ, μ) to four significant digits, as the mechanism's own line states it ("pure 0.3333-DP"):
    the sentence and the legend said ε = 0.333 under it."""
    return f"{float(v):.4g}"


def stated_budget(g: dict) -> str:
    """A guarantee's budget as the sentence states one: ``ε = 1``, ``ρ = 0.5``, ``(ε, δ) = (1, 1e-05)``."""
    if g.get("kind") == "pure":
        return f"ε = {budget_number(g['epsilon'])}"
    if g.get("kind") == "approx":
        return f"(ε, δ) = ({budget_number(g['epsilon'])}, {g['delta']:.2g})"
    if g.get("kind") == "gdp":
        return f"μ = {budget_number(g['mu'])}"
    return f"ρ = {budget_number(g['rho'])}"


def pair_shift(risk: dict) -> dict | None:
    """Where the budget is the attacked pair's, not the one stated (``risk["guarantee"]["pair"]``, from
    :func:`engine.protection.report.pair_guarantee`: n known, one record replaced moves the statistic by d > Δ):
    ``{"shift", "sensitivity", "ratio", "norm", "statistic", "stated"}``, ``stated`` the stated guarantee; None
    elsewhere."""
    g = risk.get("guarantee") or {}
    if not g.get("pair") or not g.get("stated"):
        return None
    return {**g["pair"], "stated": g["stated"]}


def _shift_words(p: dict) -> str:
    """``6 = 2Δ`` (with the norm for a vector: ``2 (L1) = 2Δ``)."""
    norm = f" ({p['norm']})" if p.get("norm") else ""
    return f"{budget_number(p['shift'])}{norm} = {budget_number(p['ratio'])}Δ"


def own_shift(risk: dict) -> tuple[float, float] | None:
    """A Gaussian's own curve drawn at the attacked pair's L2 shift d where d is not the sensitivity Δ
    (``risk["mechanism_curve"]``'s ``shift`` and ``sensitivity``; beyond rounding): ``(d, Δ)``; None where they are
    equal or not known."""
    own = risk.get("mechanism_curve") or {}
    d, sens = own.get("shift"), own.get("sensitivity")
    if d is None or sens is None or abs(d - sens) <= 1e-9 * sens:
        return None
    return float(d), float(sens)


def guarantee_curve(risk: dict) -> dict:
    """The curve the page draws as the guarantee: the stated (ε, δ) curve of a release stated so
    (``risk["stated_bound"]``), else ``risk["bound"]``."""
    return risk.get("stated_bound") or risk["bound"]


def bound_name(risk: dict) -> str:
    """The guarantee curve's legend entry, in the budget the sentence states: ``what ε-DP allows (ε = 1)``; a release
    stated in (ε, δ) (diffprivlib's Gaussians, the lab's Gaussian in its (ε, δ) form) draws that statement's curve,
    ``what (ε, δ)-DP allows (ε = 1, δ = 1e-05)`` (it drew a ρ-zCDP curve, ρ = 0.0213, that no one had set or
    explained). A Gaussian stated by ρ draws the curve ρ-zCDP itself allows, ``what ρ-zCDP allows (ρ = Δ²/(2σ²) =
    0.5)``; its own μ-GDP curve is drawn apart (:func:`mechanism_curve_name`). The legend read "what ρ-zCDP allows
    (…; exactly μ = Δ/σ = 1 Gaussian DP)" on the μ-GDP curve, which is the Gaussian's own, not what ρ-zCDP
    allows: μ-GDP implies μ²/2-zCDP, not the reverse. A curve that is μ-GDP as a guarantee (two Gaussians composed,
    not stated by ρ): ``what μ-GDP (Gaussian DP) allows (μ = 1.414)``. Where the budget is the attacked pair's
    (:func:`pair_shift`: an OpenDP sum, stated for add/remove-one at Δ = 3, with one record replaced moving it by 6),
    the entry says so and names the stated one, in three lines: ``what ε-DP allows (ε = 2<br>for one record replaced,
    a change of 6 = 2Δ;<br>stated ε = 1 at Δ = 3)``; it read "what ε-DP allows (ε = 1)" over an attack up to 0.39
    below it."""
    b, g = guarantee_curve(risk), risk.get("guarantee") or {}
    p = pair_shift(risk)
    # the budget of one record replaced (n known) where that moves the statistic by d > Δ, and the one stated
    why = "" if p is None else (f"<br>for one record replaced, a change of {_shift_words(p)};<br>stated "
                                f"{stated_budget(p['stated'])} at Δ = {budget_number(p['sensitivity'])}")
    if b["kind"] == "epsilon_dp":
        if b.get("delta"):
            return f"what (ε, δ)-DP allows (ε = {budget_number(b['epsilon'])}, δ = {b['delta']:.2g}{why})"
        return f"what ε-DP allows (ε = {budget_number(b['epsilon'])}{why})"
    single = not g.get("composed_of")  # a composed budget (statistic and size) is a sum, not one noise's Δ²/(2σ²)
    if b["kind"] == "zcdp":
        what = ("ρ = d²/(2σ²) = " if p else "ρ = Δ²/(2σ²) = ") if single else "ρ = "
        return f"what ρ-zCDP allows ({what}{budget_number(b['rho'])}{why})"
    return f"what μ-GDP (Gaussian DP) allows (μ = {budget_number(b['mu'])}{why})"


def mechanism_curve_name(risk: dict) -> str | None:
    """The legend entry of a Gaussian's own curve where the release states (ε, δ) or ρ (``risk["mechanism_curve"]``),
    named as the noise's own and by what sets it: ``this Gaussian's own curve, set by its σ (μ = Δ/σ = 0.2681;
    ρ-zCDP, the Gaussian's own budget: ρ = Δ²/(2σ²) = 0.03593)``, in three lines; stated by ρ (the ρ is the dashed
    curve's), ``this Gaussian's own curve: exactly μ-GDP, μ = Δ/σ = 1 (the best attack lies on it)``. None without
    one. Where the attacked pair's L2 shift d is not Δ (:func:`own_shift`; linear_regression's default Δ = √24 is
    above the largest change a record makes, 4), the curve is at μ = d/σ and the entry says d and Δ: it read
    "μ = Δ/σ = 1 (the best attack lies on it)" over an attack at μ = 0.816."""
    own = risk.get("mechanism_curve")
    if not own:
        return None
    g = risk.get("guarantee") or {}
    at = own_shift(risk)
    # the pair's own L2 shift d where it is not Δ: the largest change one record makes, which sets the attack's μ
    d = "Δ" if at is None else "d"
    where = "" if at is None else (f"<br>(d = {budget_number(at[0])}, the largest change one record<br>makes; "
                                   f"Δ = {budget_number(at[1])})")
    if g.get("kind") in ("zcdp", "gdp"):
        who, mu = "this Gaussian's", f"μ = {d}/σ"
        if g.get("composed_of"):
            who, mu = "the two Gaussians' (statistic and size)", "μ"
        return (f"{who} own curve: exactly<br>μ-GDP, {mu} = {budget_number(own['mu'])}{where}<br>(the best attack "
                "lies on it)")
    return (f"this Gaussian's own curve, set by its σ<br>(μ = {d}/σ = {budget_number(own['mu'])}; ρ-zCDP, the "
            f"Gaussian's<br>own budget: ρ = {d}²/(2σ²) = {budget_number(own['rho'])}){where}")


def tradeoff_figure(risk: dict) -> go.Figure:
    """The trade-off curve beta(alpha) of the optimal attack, the guarantee's curve and a coin flip
    (beta = 1 - alpha), with the attack's power at 5% false positives marked."""
    t, b = risk["tradeoff"], guarantee_curve(risk)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[0, 1], y=[1, 0], mode="lines", name="guessing (no information)", legendrank=1,
                             line={"color": GUESS_COLOR, "dash": "dot"}, meta={"kind": "guess"}))
    attacked = risk.get("attack_on") or _ATTACKED.get(risk["mechanism"], "this release")  # OpenDP's mean: its pair
    if risk.get("noise") in _ATTACKED:  # a clipped release (a dp-wizard bin's count): "this release" named nothing
        attacked = f"{_ATTACKED[risk['noise']]}, clipped"
    fig.add_trace(go.Scatter(x=t["alpha"], y=t["beta"], mode="lines", name=f"best attack on {attacked}",
                             line={"color": ATTACK_COLOR, "width": 3}, meta={"kind": "tradeoff"}, legendrank=3,
                             hovertemplate="false positives %{x:.3f}<br>misses %{y:.3f}<extra>best attack</extra>"))
    # the guarantee's dashes over the attack's line: where the attack reaches the bound (Laplace at its kink, the
    # Gaussian mechanism along all of its mu-GDP curve) both stay visible
    fig.add_trace(go.Scatter(x=b["alpha"], y=b["beta"], mode="lines", name=bound_name(risk),
                             line={"color": BOUND_COLOR, "dash": "dash"}, meta={"kind": "bound", "bound": b["kind"]},
                             legendrank=2,
                             hovertemplate="false positives %{x:.3f}<br>misses at least %{y:.3f}<extra>guarantee</extra>"))
    own = risk.get("mechanism_curve")
    if own:  # a Gaussian stated in (ε, δ): its own, tighter curve, dotted over the attack's line it bounds
        fig.add_trace(go.Scatter(x=own["alpha"], y=own["beta"], mode="lines", name=mechanism_curve_name(risk),
                                 line={"color": MECHANISM_COLOR, "dash": "dot", "width": 4}, legendrank=4,
                                 meta={"kind": "mechanism_curve", "mu": own["mu"], "rho": own["rho"]},
                                 hovertemplate="false positives %{x:.3f}<br>misses at least %{y:.3f}"
                                               "<extra>the Gaussian's own curve</extra>"))
    power = risk["power_at_5pct"]
    label = f"power {percent(power)}"
    fig.add_trace(go.Scatter(x=[0.05], y=[1 - power], mode="markers", name="at 5% false positives", text=[label],
                             marker={"color": ATTACK_COLOR, "size": 10}, meta={"kind": "power_at_5pct", "power": power},
                             legendrank=5, hovertemplate="%{text}<extra>at 5% false positives</extra>"))
    # the label below every curve (drawn "top right" of the point it sat across the diagonal, the guarantee's dashes
    # and the attack's line), an arrow to its point
    x0, _, _, y0 = power_label_box(risk, label)
    arrow = y0 <= 1 - power  # under the curves: an arrow from the label's corner to the point
    where = {"x": 0.05, "y": 1 - power, "ax": x0, "ay": y0, "axref": "x", "ayref": "y"} if arrow else {"x": x0, "y": y0}
    fig.add_annotation(**where, xanchor="left", yanchor="top", text=label, showarrow=arrow, arrowhead=0,
                       arrowcolor=ATTACK_COLOR, standoff=6, font={"color": ATTACK_COLOR}, name="power_at_5pct")
    # a square plot: the axes share a scale (scaleanchor), and where the space is wider or taller than square
    # the plot narrows ("constrain": "domain") instead of widening an axis beyond the error rates' [0, 1]
    fig.update_layout(xaxis={"title": wrap("type I error α (false positives)"), "range": [0, 1],
                             "constrain": "domain"},
                      yaxis={"title": wrap("type II error β (missed detections)"), "range": [0, 1],
                             "scaleanchor": "x", "constrain": "domain"},
                      legend=BOTTOM_LEGEND, margin={"t": 30})
    return fig


def power_label_box(risk: dict, label: str) -> tuple[float, float, float, float]:
    """Where the trade-off figure's power label sits, (x0, x1, y0, y1) in the axes' units: its top left corner just
    right of the 5% point and as high as it can be while its box, as wide as the label on a phone's plot
    (:data:`PHONE_PLOT_PX`), stays under every curve drawn (the attack, the guarantee, the Gaussian's own, the
    diagonal) over its width. Where the curves leave no room under them (an attack that catches nearly everyone),
    above the diagonal near the top, where no curve goes (every trade-off curve lies at or below 1 - α)."""
    w = (len(label) * CHAR_PX + PAD_PX) / PHONE_PLOT_PX[0]
    x0, x1 = 0.07, 0.07 + w
    grid = np.linspace(x0, x1, 50)
    curves = [risk["tradeoff"], guarantee_curve(risk)] + ([risk["mechanism_curve"]] if risk.get("mechanism_curve")
                                                          else [])
    low = min(1.0 - x1, *(float(np.min(np.interp(grid, c["alpha"], c["beta"]))) for c in curves))
    top = min(1.0 - risk["power_at_5pct"], low - 0.02)
    if top - LABEL_GAP < 0.01:
        x0, x1 = 0.1, 0.1 + w
        top = 1.0 - x0 + 0.01 + LABEL_GAP
    return x0, x1, top - LABEL_GAP, top


def _belief_range(edges: np.ndarray, prob: np.ndarray, marks: list[float]) -> list[float]:
    """The belief axis (%) zoomed to the bins that hold releases and the lines drawn (the prior's 50% always), with
    a bin's width or 5% of the span as padding, within [0, 100]: at the defaults every release lands between 43%
    and 57%, and a fixed 0-100% axis drew the bars as a sliver (a phone showed only the ticks 0 and 50)."""
    held = np.nonzero(prob > 0)[0]
    ends = [float(edges[held[0]]), float(edges[held[-1] + 1])] if held.size else []
    lo, hi = min(ends + marks), max(ends + marks)
    pad = max(float(np.max(np.diff(edges))) if edges.size > 1 else 0.0, 0.05 * (hi - lo), 0.01)
    return [100 * max(0.0, lo - pad), 100 * min(1.0, hi + pad)]


def belief_figure(risk: dict) -> go.Figure:
    """Histogram of the informed adversary's posterior belief in the true value (prior 50%), with the
    prior, the 95% quantile and the largest possible belief (absent where unbounded); the axis zoomed to them.
    Where the 95% quantile rounds to the largest belief (pure DP puts an atom of releases at the ceiling: at least
    5% of them reach it) one line says both, so no legend entry names a line hidden under another. Each legend
    entry states what its line is (:func:`belief_line_names`)."""
    ia = risk["informed_adversary"]
    edges = np.asarray(ia["histogram"]["edges"])
    prob = np.asarray(ia["histogram"]["probability"])
    fig = go.Figure()
    fig.add_trace(go.Bar(x=(100 * (edges[:-1] + edges[1:]) / 2).tolist(), y=prob.tolist(),
                         width=(100 * np.diff(edges)).tolist(),
                         name="share of releases", marker={"color": ATTACK_COLOR}, meta={"kind": "belief_histogram"},
                         legendrank=1,
                         hovertemplate="belief %{x:.1f}%<br>share of releases %{y:.3f}<extra></extra>"))
    top_belief, q95 = ia["max"], ia["q95"]
    names = belief_line_names(ia)
    merged = "q95" not in names and top_belief is not None
    # the solid line first, the dashed and dotted ones over it; the legend keeps the reading order
    lines = [("max", top_belief, BOUND_COLOR, "solid", 4), ("prior", ia["prior"], GUESS_COLOR, "dot", 2),
             ("q95", None if merged else q95, POSTERIOR_COLOR, "dash", 3)]
    top = float(prob.max()) if prob.size else 1.0
    for key, value, color, dash, rank in lines:
        if value is None:
            continue
        meta = {"kind": key, "value": value, **({"q95": q95, "at_max": ia.get("at_max")} if merged and key == "max"
                                                 else {})}
        fig.add_trace(go.Scatter(x=[100 * value] * 2, y=[0, 1.05 * top], mode="lines", name=names[key],
                                 legendrank=rank, line={"color": color, "dash": dash}, meta=meta,
                                 hovertemplate=f"{names[key]}<br>at {100 * value:.1f}%<extra></extra>"))
    marks = [v for v in (ia["prior"], q95, top_belief) if v is not None]
    fig.update_layout(xaxis={"title": wrap("their belief in the true value after the release (%)"),
                             "range": _belief_range(edges, prob, marks)},
                      yaxis={"title": wrap("share of releases")}, bargap=0.05, legend=BOTTOM_LEGEND,
                      margin={"t": 30})
    return fig


def belief_line_names(ia: dict) -> dict:
    """The belief figure's legend entries, each saying what its line is (``ia``: ``risk["informed_adversary"]``):

    ``prior``   ``before the release (50%)``;
    ``q95``     the 95% quantile, the smallest belief at or below which at least 95% of releases leave the guess:
                ``95% of releases at or below (62%)``;
    ``max``     the largest belief (pure DP): ``never above (73%)``. Where the 95% quantile rounds to it, pure DP's
                atom of releases at the ceiling holds at least 5% of them: the one line says how many reach it,
                ``never above (58%), reached by 58% of releases`` (``q95`` then has no entry). It read "95% of
                releases below and none above (58%)" while 58% of the releases sat at 58%.
    """
    names = {"prior": f"before the release ({percent(ia['prior'])})"}
    top, q95, share = ia.get("max"), ia.get("q95"), ia.get("at_max")
    ceiling = None if top is None else percent(top, apart_from=ia["prior"])  # 50.2% at ε = 0.01, not 50%
    k = None if top is None else _digits(top, ia["prior"])
    if top is None or q95 is None or f"{100 * q95:.{k}f}" != f"{100 * top:.{k}f}":
        if q95 is not None:
            names["q95"] = f"95% of releases at or below ({percent_at_most(q95)})"
        if top is not None:
            names["max"] = f"never above ({ceiling})"
        return names
    if share is not None and share >= 0.0005:  # an atom that shows at one decimal
        names["max"] = f"never above ({ceiling}), reached by {percent(share)} of releases"
    else:  # the 95% quantile only rounds to the ceiling: the 5% of releases at or above it end within rounding
        names["max"] = f"never above ({ceiling}), at least 5% of releases within rounding of it"
    return names


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


#: the height of a label's line with its margin on a phone's plot, as a share of the y span (the power's label)
LABEL_GAP = 0.07
