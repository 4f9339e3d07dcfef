"""The privacy/utility frontier over a sweep of ε (the Privacy budget page's "Choose ε" figure).

:func:`frontier_figure` draws, for every ε of the grid, the exact posterior's sd (or another utility) across and
what an attacker achieves up: the informed adversary's 95% belief and the best attack's power at 5% false
positives; ``chosen`` circles one ε. Each ε is labelled once, as an annotation placed by :func:`frontier_labels`
in the pixels of a phone's plot (the narrowest and shortest it is drawn): each ε's label sits beside its belief
point; labels that would overlap there are stacked apart (at least a label's height) and joined to their points
by a leader line. A wider or taller plot only moves the points further apart, so labels that clear each other on
a phone clear each other there too. Every point keeps its ε in the hover. Plain arrays in; every trace carries
``meta = {"kind": ...}``. Pure; nothing here imports streamlit.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from .axes import BOTTOM_LEGEND, wrap
from .palette import NEUTRAL_COLOR, TRUTH_COLOR
from .protection import ATTACK_COLOR, CHAR_PX, PAD_PX, PHONE_PLOT_PX, POSTERIOR_COLOR

__all__ = ["frontier_figure", "frontier_labels", "FrontierLabel", "LABEL_PX", "OFFSET_PX", "Y_TOP", "X_PAD"]


#: a label's height and its offset from its point, in pixels; the frontier's y axis spans 0..Y_TOP
LABEL_PX, OFFSET_PX, Y_TOP = 16.0, 10.0, 1.05
#: the x axis's padding either side, as a share of the points' span: the chosen ε's circle (16 px) stays inside
X_PAD = 0.08


@dataclass(frozen=True)
class FrontierLabel:
    """One ε's label: on ``line`` (0 the belief, 1 the attack's power) at point ``index``; ``dx``, ``dy`` its
    offset from the point in pixels (up positive), ``side`` "left" or "right" of the point; ``leader`` when it
    was moved off its own place and a line joins it to its point."""

    line: int
    index: int
    text: str
    dx: float
    dy: float
    side: str
    leader: bool


def _boxes_overlap(a, b) -> bool:
    return a[0] < b[1] and b[0] < a[1] and a[2] < b[3] and b[2] < a[3]


def frontier_labels(x, belief, power, epsilon, plot_px=PHONE_PLOT_PX) -> list[FrontierLabel]:
    """Where the frontier's ε labels go, in a plot of ``plot_px`` (width, height) pixels over the x range the
    figure sets (the points' span padded by :data:`X_PAD`) and y 0..:data:`Y_TOP`.

    Every ε is labelled once, beside its belief point (above and to the right; to the left in the right quarter,
    where a label would run past the plot's edge), lifted clear of a line that runs through it there (at the right
    end the line coming in struck "ε = 0.1" through). Labels whose boxes would overlap are moved apart: from the
    highest point down, each to the free place nearest its own (a label's height above or below one already
    placed), clear of the lines and inside the plot; where there is none, stacked below the ones above. A label
    moved more than 2 px, or lifted more than its height, gets a leader. Then each power point is labelled below it
    (else beside it, where a point near the axis leaves no room below) where that box overlaps no label and no
    line runs through it; the others have their ε in the hover."""
    x, belief, power = (np.asarray(a, dtype=float) for a in (x, belief, power))
    width, height = float(plot_px[0]), float(plot_px[1])
    lo, hi = _padded_range(x)
    px = (x - lo) / (hi - lo) * width

    def py(v):
        return np.asarray(v, dtype=float) / Y_TOP * height

    texts = [f"ε = {e:g}" for e in epsilon]
    wide = [len(t) * CHAR_PX + PAD_PX for t in texts]
    side = ["left" if px[i] + OFFSET_PX + wide[i] > width else "right" for i in range(x.size)]

    def box(i, y_px, dy, s):
        x0 = px[i] + OFFSET_PX if s == "right" else px[i] - OFFSET_PX - wide[i]
        return x0, x0 + wide[i], y_px + dy, y_px + dy + LABEL_PX

    top, low = py(belief), py(power)
    segments = [(px[k], h[k], px[k + 1], h[k + 1]) for h in (top, low) for k in range(x.size - 1)
                if np.isfinite([px[k], h[k], px[k + 1], h[k + 1]]).all()]

    def crossing(b) -> float | None:
        """The highest a line runs through box ``b`` (its height over the box's x range, where that range of
        heights meets the box's), else None."""
        highest = None
        for xa, ya, xb, yb in segments:
            l, r = max(min(xa, xb), b[0]), min(max(xa, xb), b[1])
            if l > r:
                continue
            at = [ya + (yb - ya) * ((u - xa) / (xb - xa) if xb != xa else 0.0) for u in (l, r)]
            if min(at) <= b[3] and max(at) >= b[2]:
                highest = max(at) if highest is None else max(highest, max(at))
        return highest

    default = OFFSET_PX - LABEL_PX / 2  # the label's bottom edge above its point
    dy = {}
    for i in range(x.size):  # lifted clear of a line that runs through it (ε = 0.1's, on the line coming in)
        dy[i] = default
        for _ in range(4):
            through = crossing(box(i, top[i], dy[i], side[i]))
            if through is None or through + 2 - top[i] + LABEL_PX > height - top[i]:
                break
            dy[i] = through + 2 - top[i]
        if crossing(box(i, top[i], dy[i], side[i])) is not None:
            dy[i] = default  # no place clear of the lines above it: where it was
    lifted = dict(dy)
    order = sorted(range(x.size), key=lambda i: -top[i])
    placed: list[int] = []
    for i in order:  # from the highest point down, each where it is free nearest to its own place
        def free(c, i=i):
            b = box(i, top[i], c, side[i])
            return crossing(b) is None and not any(_boxes_overlap(b, box(j, top[j], dy[j], side[j])) for j in placed)

        tries = [dy[i]] + [top[j] + dy[j] + d - top[i] for j in placed for d in (LABEL_PX, -LABEL_PX)]
        inside = [c for c in tries if top[i] + c >= 0 and top[i] + c + LABEL_PX <= height]
        ok = sorted((c for c in inside if free(c)), key=lambda c: abs(c - lifted[i]))
        if ok:
            dy[i] = ok[0]
        else:  # no free place: the top one inside the plot, then each below any it would overlap
            dy[i] = min(dy[i], height - LABEL_PX - top[i])
            for j in placed:
                if _boxes_overlap(box(i, top[i], dy[i], side[i]), box(j, top[j], dy[j], side[j])):
                    dy[i] = min(dy[i], top[j] + dy[j] - LABEL_PX - top[i])
        placed.append(i)
    # a leader where another label moved it, or a line lifted it more than a label's height
    out = [FrontierLabel(0, i, texts[i], OFFSET_PX if side[i] == "right" else -OFFSET_PX, dy[i] + LABEL_PX / 2,
                         side[i], abs(lifted[i] - dy[i]) > 2 or dy[i] - default > LABEL_PX) for i in range(x.size)]
    taken = [box(i, top[i], dy[i], side[i]) for i in range(x.size)]
    for i in sorted(range(x.size), key=lambda i: -epsilon[i]):
        for dy_power in (-OFFSET_PX - LABEL_PX, OFFSET_PX - LABEL_PX / 2):  # below its point, else beside it
            place = box(i, low[i], dy_power, side[i])
            if place[2] >= 0 and not any(_boxes_overlap(place, b) for b in taken) and crossing(place) is None:
                taken.append(place)
                out.append(FrontierLabel(1, i, texts[i], OFFSET_PX if side[i] == "right" else -OFFSET_PX,
                                         dy_power + LABEL_PX / 2, side[i], False))
                break
    return out


def frontier_figure(epsilon, q95, power, utility, *, utility_label: str = "posterior sd",
                    chosen: float | None = None) -> go.Figure:
    """The privacy/utility frontier over a sweep of epsilon.

    x: ``utility`` (e.g. the exact posterior's sd or 90% interval width: smaller is more useful);
    y: the protection side, the informed adversary's 95% belief ``q95`` and the optimal attack's
    ``power`` at 5% false positives (both probabilities: smaller is more private). One point per
    epsilon, labelled with it by :func:`frontier_labels` (annotations named "label <line> <index>"); ``chosen``
    circles the point of that epsilon. The x axis is padded (:data:`X_PAD`) so the chosen ε's circle and the
    labels at the ends stay inside the plot (at 390 px the ε = 0.1 labels and circle were cut)."""
    eps = np.asarray(epsilon, dtype=float)
    arrays = [np.asarray(a, dtype=float) for a in (q95, power, utility)]
    if any(a.shape != eps.shape for a in arrays):
        raise ValueError(f"frontier_figure: epsilon, q95, power and utility must have one value per epsilon "
                         f"(lengths {[eps.size] + [a.size for a in arrays]})")
    order = np.argsort(eps)
    eps, (q95, power, utility) = eps[order], [a[order] for a in arrays]
    labels = [f"ε = {e:g}" for e in eps]
    lines = ((q95, "informed adversary's belief (95% of releases at or below)", POSTERIOR_COLOR, "q95"),
             (power, "best attack's power at 5% false positives", ATTACK_COLOR, "power_at_5pct"))
    fig = go.Figure()
    for y, name, color, kind in lines:
        fig.add_trace(go.Scatter(x=utility.tolist(), y=y.tolist(), mode="lines+markers", customdata=labels,
                                 name=name, line={"color": color}, cliponaxis=False,
                                 meta={"kind": kind, "epsilon": eps.tolist()},
                                 hovertemplate=("%{customdata}<br>" + utility_label + " %{x:.4g}<br>%{y:.3f} "
                                                "(smaller: more private)<extra></extra>")))
    if chosen is not None:
        hit = np.nonzero(np.isclose(eps, chosen))[0]
        if hit.size:
            i = int(hit[0])
            fig.add_trace(go.Scatter(x=[float(utility[i])] * 2, y=[float(q95[i]), float(power[i])], mode="markers",
                                     name=f"chosen ε = {eps[i]:g}", cliponaxis=False,
                                     marker={"size": 16, "symbol": "circle-open", "color": TRUTH_COLOR,
                                             "line": {"width": 3}},
                                     meta={"kind": "chosen", "epsilon": float(eps[i])}))
    fig.update_layout(xaxis={"title": wrap(f"{utility_label} — smaller: more useful")},
                      # one line: the title's second line ran over the ticks on a phone; "smaller: more private" is
                      # in each point's hover and in the page's explanation
                      yaxis={"title": wrap("what an attacker achieves"), "range": [0, Y_TOP]},
                      legend=BOTTOM_LEGEND, margin={"t": 30})
    if not eps.size:
        return fig
    for lab in frontier_labels(utility, q95, power, eps):
        x, y = float(utility[lab.index]), float((q95, power)[lab.line][lab.index])
        if not (np.isfinite(x) and np.isfinite(y)):
            continue  # a missing sd (draws-based): no point to label
        anchor = "left" if lab.side == "right" else "right"
        common = {"x": x, "y": y, "text": lab.text, "xanchor": anchor, "yanchor": "middle", "font": {"size": 12},
                  "name": f"label {lab.line} {lab.index}"}
        if lab.leader:
            fig.add_annotation(**common, showarrow=True, ax=lab.dx, ay=-lab.dy, axref="pixel", ayref="pixel",
                               arrowhead=0, arrowwidth=1, arrowcolor=NEUTRAL_COLOR, standoff=4)
        else:
            fig.add_annotation(**common, showarrow=False, xshift=lab.dx, yshift=lab.dy)
    fig.update_xaxes(range=list(_padded_range(utility)))
    return fig


def _padded_range(x) -> tuple[float, float]:
    """The frontier's x range: the finite values' span padded by :data:`X_PAD` either side (a single value, or
    equal ones, by that share of the value; none: 0..1). An sd read from draws can be missing (NaN)."""
    finite = np.asarray(x, dtype=float)
    finite = finite[np.isfinite(finite)]
    if not finite.size:
        return 0.0, 1.0
    lo, hi = float(finite.min()), float(finite.max())
    span = hi - lo if hi > lo else max(abs(hi), 1e-12)
    return lo - X_PAD * span, hi + X_PAD * span
