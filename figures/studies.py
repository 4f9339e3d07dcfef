"""Pure figure builders for studies (engine.studies tables in, ``plotly.graph_objects.Figure`` out).

Every trace carries ``meta = {"kind": ..., "method": ...}`` as in :mod:`figures`, so tests can read
a figure through ``fig.to_dict()``. The study command (``python -m engine study``) writes them too; ``import engine`` never
loads this module or plotly.

Calibration
    :func:`ecdf_plot`      ECDF of the posterior quantiles U per method against the diagonal
                           (Bernstein & Sheldon 2018, Fig. 1b)
    :func:`ks_plot`        KS statistic per method, with the 5% critical value
    :func:`coverage_plot`  coverage of central intervals with Wilson error bars against nominal
    :func:`sbc_plot`       SBC rank histograms with the binomial 99% band (Talts et al. 2018)
    :func:`mmd_plot`       MMD^2 to the confidential posterior per replicate
Presets
    :func:`preset_figures` name -> Figure for a :class:`engine.studies.presets.PresetResult`
"""
from __future__ import annotations

import math
import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots
from scipy import stats

from engine.studies.calibration import calibration_summary, ecdf, sbc_histogram

from .axes import BOTTOM_LEGEND, log_ticks, param_symbol, titled  # param_symbol: ui.studies' too
from .labels import METHOD_LABELS, format_p
from .palette import BOUND_COLOR, METHOD_COLORS, NEUTRAL_COLOR

__all__ = ["ecdf_plot", "ks_plot", "coverage_plot", "sbc_plot", "mmd_plot", "calibration_figures",
           "preset_figures", "method_color", "method_label", "param_symbol"]

_EXTRA_COLORS = {"prior": "#2ca02c"}  # every method has its colour in METHOD_COLORS
_EXTRA_LABELS = {"confidential": "Confidential data", "pseudo_marginal": "Pseudo-marginal", "auto": "Auto",
                 "prior": "Prior"}


def method_color(method: str) -> str:
    return METHOD_COLORS.get(method) or _EXTRA_COLORS.get(method, NEUTRAL_COLOR)


def method_label(method: str) -> str:
    return METHOD_LABELS.get(method) or _EXTRA_LABELS.get(method, method)


def _log_axis(values) -> dict:
    """``tickvals`` / ``ticktext`` of a log axis over ``values``, round ticks only: the powers of ten when two or
    more fall in the values' range, else 1, 2 and 5 times a power of ten (or, when fewer than two of those fall
    in it, :func:`figures.axes.log_ticks`' finer steps); labels written plainly (1,000 and 0.1, never 1e+3).
    plotly's own ticks labelled the minor ones too ("10 2 5 100 2 5 1000")."""
    v = [float(x) for x in values if x is not None and math.isfinite(float(x)) and float(x) > 0]
    if not v:
        return {}
    lo, hi = min(v), max(v)
    ticks = [10.0 ** k for k in range(math.ceil(math.log10(lo) - 1e-9), math.floor(math.log10(hi) + 1e-9) + 1)]
    if len(ticks) < 2:  # under a decade: 1, 2, 5 times a power of ten within the padded range, else finer steps
        pad = (hi / lo) ** 0.05  # about what plotly's autorange adds on either side (as figures.axes.log_ticks)
        decades = range(math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 1)
        steps = [float(f"{m * 10.0 ** k:.6g}") for k in decades for m in (1, 2, 5)]
        ticks = [t for t in steps if lo / pad <= t <= hi * pad]
        ticks = ticks if len(ticks) >= 2 else (log_ticks(v, max_ticks=6) or [])
    if not ticks:
        return {}
    text = [f"{t:,.0f}" if t >= 1 and float(t).is_integer() else np.format_float_positional(t, trim="-")
            for t in ticks]
    return {"tickvals": ticks, "ticktext": text}


def _layout(fig: go.Figure, title: str, height: int = 460) -> go.Figure:
    """The study figures' frame: in the app two of them share a row, so the legend goes below the plot
    (:data:`figures.axes.BOTTOM_LEGEND`), which keeps the plot most of its width."""
    text, top = titled(title)
    fig.update_layout(template="plotly_white", title=text, height=height, width=760,
                      margin={"l": 60, "r": 20, "t": top, "b": 50}, legend=BOTTOM_LEGEND)
    return fig


def _first_param(table: pd.DataFrame, param: str | None) -> str:
    return param if param is not None else str(table["param"].iloc[0])


# --------------------------------------------------------------------------- calibration
def ecdf_plot(table: pd.DataFrame, param: str | None = None, title: str | None = None) -> go.Figure:
    """ECDF of U per method with the diagonal (a calibrated method follows it)."""
    param = _first_param(table, param)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines",
                             line={"color": NEUTRAL_COLOR, "dash": "dash", "width": 1},
                             name="Uniform (calibrated)", meta={"kind": "diagonal", "method": "uniform"}))
    grid = np.linspace(0, 1, 201)
    for method in table["method"].unique():
        g, f = ecdf(table, method, param, grid)
        if np.isnan(f).all():
            continue
        fig.add_trace(go.Scatter(x=g, y=f, mode="lines", line={"color": method_color(method), "width": 2, "shape": "hv"},
                                 name=method_label(method), meta={"kind": "ecdf", "method": method, "param": param}))
    fig.update_xaxes(title_text=f"quantile U of the true {param_symbol(param)} among the draws", range=[0, 1])
    fig.update_yaxes(title_text="empirical CDF", range=[0, 1])
    return _layout(fig, title or f"Calibration: ECDF of posterior quantiles ({param_symbol(param)})")


def ks_plot(summary: pd.DataFrame, param: str | None = None, title: str | None = None) -> go.Figure:
    """KS statistic per method (bars, p-value as text) and the 5% critical value 1.358 / sqrt(M)."""
    param = _first_param(summary, param)
    s = summary[summary["param"] == param]
    fig = go.Figure()
    for _, r in s.iterrows():
        p_text = format_p(r["ks_pvalue"])
        p_text = f"p {p_text}" if p_text.startswith("<") else f"p = {p_text}"  # "p < 0.001", "p = 0.35"
        fig.add_trace(go.Bar(x=[method_label(r["method"])], y=[r["ks_stat"]], marker_color=method_color(r["method"]),
                             text=[p_text], textposition="outside", name=method_label(r["method"]),
                             meta={"kind": "ks", "method": r["method"], "param": param}, showlegend=False))
    if len(s):
        crit = stats.kstwo.ppf(0.95, int(s["M"].max()))
        fig.add_hline(y=crit, line={"color": NEUTRAL_COLOR, "dash": "dot"}, annotation_text="5% critical value")
    fig.update_yaxes(title_text="KS statistic D (lower is better)")
    return _layout(fig, title or f"Calibration: KS distance of U from Uniform(0, 1) ({param_symbol(param)})")


def coverage_plot(summary: pd.DataFrame, param: str | None = None, title: str | None = None) -> go.Figure:
    """Coverage of central 50/80/90/95% intervals per method with 95% Wilson error bars."""
    param = _first_param(summary, param)
    s = summary[summary["param"] == param]
    levels = sorted(int(c.split("_")[1]) for c in s.columns if c.startswith("coverage_") and c.count("_") == 1)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[0.45, 1.0], y=[0.45, 1.0], mode="lines", line={"color": NEUTRAL_COLOR, "dash": "dash",
                                                                                   "width": 1},
                             name="nominal", meta={"kind": "diagonal", "method": "nominal"}))
    for i, (_, r) in enumerate(s.iterrows()):
        x = np.array(levels) / 100 + (i - len(s) / 2) * 0.004
        y = np.array([r[f"coverage_{c}"] for c in levels])
        lo = np.array([r[f"coverage_{c}_lo"] for c in levels])
        hi = np.array([r[f"coverage_{c}_hi"] for c in levels])
        fig.add_trace(go.Scatter(x=x, y=y, mode="markers+lines", marker={"color": method_color(r["method"]), "size": 8},
                                 line={"color": method_color(r["method"]), "width": 1},
                                 error_y={"type": "data", "symmetric": False, "array": hi - y, "arrayminus": y - lo},
                                 name=method_label(r["method"]), meta={"kind": "coverage", "method": r["method"], "param": param}))
    fig.update_xaxes(title_text="nominal level of the central interval")
    fig.update_yaxes(title_text="coverage of the true value")
    return _layout(fig, title or f"Calibration: interval coverage ({param_symbol(param)})")


def sbc_plot(table: pd.DataFrame, param: str | None = None, bins: int = 10, title: str | None = None) -> go.Figure:
    """SBC rank histogram per method with the central 99% band of a Binomial(M, 1/bins) count.

    The band is a shape under the bars (a scatter trace lay on top of them and washed them out), named
    ``sbc_band <method>``, and each panel's y-range holds the band's upper edge as well as the tallest bar (the
    band's top had run out of the panel, greying all of it)."""
    param = _first_param(table, param)
    symbol = param_symbol(param)
    methods = [m for m in table["method"].unique()
               if table[(table["method"] == m) & (table["param"] == param)]["quantile"].notna().any()]
    cols = min(2, max(1, len(methods)))  # two a row: three left a 390 px phone 100 px panels, their titles run together
    rows = max(1, math.ceil(len(methods) / cols))
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=[method_label(m) for m in methods] or None)
    for i, m in enumerate(methods):
        edges, counts, expected = sbc_histogram(table, m, param, bins)
        centres = 0.5 * (edges[:-1] + edges[1:])
        cell = {"row": i // cols + 1, "col": i % cols + 1}
        total = int(counts.sum())
        top = float(counts.max()) if len(counts) else 0.0
        if total:
            p = float(np.max(expected)) / total  # bins of whole ranks: equal when L + 1 is a multiple of bins
            lo, hi = stats.binom.ppf([0.005, 0.995], total, p)
            top = max(top, float(hi))
            # a shape under the traces: plotly draws every bar below every scatter trace, whatever their order
            fig.add_shape(type="rect", x0=edges[0], x1=edges[-1], y0=lo, y1=hi, fillcolor="rgba(127,127,127,0.25)",
                          line={"width": 0}, layer="below", name=f"sbc_band {m}", **cell)
        fig.add_trace(go.Bar(x=centres, y=counts, width=np.diff(edges) * 0.95, marker_color=method_color(m),
                             name=method_label(m), showlegend=False, meta={"kind": "sbc", "method": m, "param": param}),
                      **cell)
        fig.update_yaxes(range=[0, 1.1 * top if top > 0 else 1], **cell)
        if cell["col"] == 1:
            fig.update_yaxes(title_text="replicates", **cell)
        if i + cols >= len(methods):  # the lowest panel of its column
            fig.update_xaxes(title_text=f"rank of the true {symbol} among the draws", **cell)
    text, top_margin = titled(title or f"SBC rank histograms ({symbol})")
    fig.update_layout(template="plotly_white", title=text, height=max(320, 260 * rows + 80), width=760,
                      margin={"l": 60, "r": 20, "t": top_margin + 10, "b": 50})
    return fig


def mmd_plot(table: pd.DataFrame, title: str | None = None) -> go.Figure:
    """MMD^2 to the confidential-data posterior, one box per method (one value per replicate)."""
    per = table.drop_duplicates(["replicate", "method"]) if "replicate" in table else table
    per = per[per["mmd2"].notna()]
    fig = go.Figure()
    for m in per["method"].unique():
        v = per[per["method"] == m]["mmd2"].to_numpy(dtype=float)
        fig.add_trace(go.Box(y=v, name=method_label(m), marker_color=method_color(m), boxmean=True,
                             meta={"kind": "mmd", "method": m}))
    fig.update_yaxes(title_text="unbiased MMD² to the confidential posterior")
    return _layout(fig, title or "Utility: MMD² to the confidential-data posterior (lower is closer)")


def calibration_figures(table: pd.DataFrame, param: str | None = None) -> dict[str, go.Figure]:
    """The calibration study's figures by name: ecdf, ks, coverage, sbc, mmd."""
    summary = calibration_summary(table)
    figs = {"ecdf": ecdf_plot(table, param), "ks": ks_plot(summary, param), "coverage": coverage_plot(summary, param),
            "sbc": sbc_plot(table, param)}
    if table["mmd2"].notna().any():
        figs["mmd"] = mmd_plot(table)
    return figs


# --------------------------------------------------------------------------- presets
def _gong(result) -> dict[str, go.Figure]:
    d = result.data
    grid, pdf = d["exact_density"]
    ng, npdf = d["naive_density"]
    x = np.linspace(5, 60, 400)
    fig = go.Figure()
    fig.add_trace(go.Histogram(x=d["abc_draws"], histnorm="probability density", nbinsx=80, opacity=0.4,
                               marker_color=method_color("abc_rejection"), name="ABC rejection (Alg. 3)",
                               meta={"kind": "histogram", "method": "abc_rejection"}))
    fig.add_trace(go.Scatter(x=grid, y=pdf, mode="lines", line={"color": method_color("exact"), "width": 2},
                             name="Exact posterior",
                             meta={"kind": "density", "method": "exact"}))
    fig.add_trace(go.Scatter(x=ng, y=npdf, mode="lines", line={"color": method_color("naive"), "dash": "dot", "width": 2},
                             name="Naive (s_dp as if confidential)", meta={"kind": "density", "method": "naive"}))
    shape, rate = d["prior"]
    fig.add_trace(go.Scatter(x=x, y=stats.gamma.pdf(x, shape, scale=1 / rate), mode="lines",
                             line={"color": method_color("prior"), "dash": "dashdot", "width": 2}, name="Prior Gamma(25, 1)",
                             meta={"kind": "density", "method": "prior"}))
    fig.update_xaxes(title_text="λ", range=[5, 60])
    fig.update_yaxes(title_text="density")
    return {"densities": _layout(fig, f"Gong (2020): s_dp = {d['s_dp']:g}, ε = 0.2")}


def _admissions(result) -> dict[str, go.Figure]:
    fig = go.Figure()
    for m, v in result.data["odds_ratio_draws"].items():
        v = np.asarray(v)
        v = v[np.isfinite(v) & (v > 0)]
        fig.add_trace(go.Histogram(x=np.log(v), histnorm="probability density", nbinsx=80, opacity=0.45,
                                   marker_color=method_color(m), name=method_label(m),
                                   meta={"kind": "histogram", "method": m}))
    orr = result.data["confidential_or"]
    fig.add_vline(x=math.log(orr), line={"color": method_color("confidential"), "dash": "dash"},
                  annotation_text=f"confidential table {orr:.2f}")
    ticks = [0.25, 0.5, 1, 2, 4, 8, 16, 32]
    fig.update_xaxes(title_text="odds ratio (men vs women admitted), log scale", tickvals=np.log(ticks),
                     ticktext=[f"{t:g}" for t in ticks])
    fig.update_layout(barmode="overlay")
    fig.update_yaxes(title_text="density of log odds ratio")
    return {"odds_ratio": _layout(fig, "dapper Example 1: odds-ratio posterior under randomized response")}


def _bernstein(result) -> dict[str, go.Figure]:
    summ, table = result.tables["calibration_summary"], result.tables["calibration"]
    eps_grid = sorted(summ["epsilon"].unique())
    fig = make_subplots(rows=1, cols=len(eps_grid), subplot_titles=[f"ε = {e:g}" for e in eps_grid], shared_yaxes=True)
    for i, e in enumerate(eps_grid):
        s = summ[summ["epsilon"] == e]
        for m in s["method"].unique():
            r = s[s["method"] == m].sort_values("n")
            fig.add_trace(go.Scatter(x=r["n"], y=r["ks_stat"], mode="lines+markers", name=method_label(m),
                                     line={"color": method_color(m)}, legendgroup=m, showlegend=i == 0,
                                     meta={"kind": "ks_vs_n", "method": m, "epsilon": e}), row=1, col=i + 1)
        fig.update_xaxes(type="log", title_text="n (individuals)", row=1, col=i + 1, **_log_axis(summ["n"]))
    fig.update_yaxes(title_text="KS statistic", row=1, col=1)
    _layout(fig, "Bernstein & Sheldon Fig. 1a: calibration (KS) vs n")
    cell = table[(table["n"] == 1000) & (table["epsilon"] == min(eps_grid))].drop(columns=["n", "epsilon"])
    out = {"ks_vs_n": fig, "ecdf_n1000": ecdf_plot(cell, "theta", title="Fig. 1b: ECDF of U at n = 1000, ε = 0.01")}
    mm = go.Figure()
    for e in eps_grid:
        s = summ[(summ["epsilon"] == e) & (summ["method"] != "confidential")]
        for m in s["method"].unique():
            r = s[s["method"] == m].sort_values("n")
            mm.add_trace(go.Scatter(x=r["n"], y=r["mmd2_mean"], mode="lines+markers", name=f"{method_label(m)}, ε = {e:g}",
                                    line={"color": method_color(m), "dash": "solid" if e == eps_grid[0] else "dot"},
                                    meta={"kind": "mmd_vs_n", "method": m, "epsilon": e}))
    mm.update_xaxes(type="log", title_text="n (individuals)", **_log_axis(summ["n"]))
    mm.update_yaxes(title_text="mean MMD² to the confidential posterior")
    out["mmd_vs_n"] = _layout(mm, "Fig. 1c: utility (MMD²) vs n")
    return out


def _ju(result) -> dict[str, go.Figure]:
    fixed, summ = result.tables["posterior_means"], result.tables["posterior_means_summary"]
    params = sorted(fixed["param"].unique())
    fig = make_subplots(rows=1, cols=len(params), subplot_titles=params, shared_yaxes=True)
    for j, p in enumerate(params):
        sub = fixed[fixed["param"] == p]
        fig.add_trace(go.Box(x=np.log10(sub["epsilon"]), y=sub["post_mean"],
                             marker_color=method_color("da_mcmc"), showlegend=False,
                             boxpoints="all", jitter=0.4, meta={"kind": "post_means", "method": "da_mcmc", "param": p}),
                      row=1, col=j + 1)
        s = summ[summ["param"] == p]
        fig.add_hline(y=float(s["confidential_mean"].iloc[0]), line={"color": method_color("confidential")},
                      row=1, col=j + 1)
        fig.add_hline(y=float(s["prior_mean"].iloc[0]), line={"color": method_color("prior"), "dash": "dash"},
                      row=1, col=j + 1)
        fig.update_xaxes(title_text="log10 ε", row=1, col=j + 1)
    fig.update_yaxes(title_text="posterior mean", row=1, col=1)
    fig.update_layout(width=1100)
    out = {"posterior_means": _layout(fig, "Ju et al. Fig. 1a: posterior means per release (solid: confidential, "
                                           "dashed: prior)")}
    out["posterior_means"].update_layout(width=1100)
    acc = fixed.drop_duplicates(["epsilon", "replicate"])
    a = go.Figure()
    a.add_trace(go.Scatter(x=acc["epsilon"], y=acc["acceptance_mean"], mode="markers", name="mean acceptance per chain",
                           marker={"color": method_color("da_mcmc")}, meta={"kind": "acceptance_mean"}))
    a.add_trace(go.Scatter(x=acc["epsilon"], y=acc["acceptance_min"], mode="markers", name="minimum acceptance per chain",
                           marker={"color": NEUTRAL_COLOR, "symbol": "triangle-down"},
                           meta={"kind": "acceptance_min"}))
    e = np.geomspace(acc["epsilon"].min(), acc["epsilon"].max(), 100)
    a.add_trace(go.Scatter(x=e, y=np.exp(-e), mode="lines", line={"color": BOUND_COLOR}, name="exp(−ε) (Prop. 3.1)",
                           meta={"kind": "bound"}))
    a.update_xaxes(type="log", title_text="ε", **_log_axis(acc["epsilon"]))
    a.update_yaxes(title_text="acceptance rate", range=[0, 1.02])
    out["acceptance"] = _layout(a, "Ju et al. Fig. 1b: DA-MCMC acceptance vs the exp(−ε) bound")
    cov = result.tables["coverage"]
    c = go.Figure()
    for p in params:
        s = cov[cov["param"] == p]
        c.add_trace(go.Scatter(x=s["epsilon"], y=s["coverage_ours"], mode="lines+markers", name=f"{p} ours",
                               meta={"kind": "coverage", "param": p, "source": "ours"}))
        c.add_trace(go.Scatter(x=s["epsilon"], y=s["coverage_paper"], mode="markers", marker={"symbol": "x"},
                               name=f"{p} paper", meta={"kind": "coverage", "param": p, "source": "paper"}))
    c.add_hline(y=0.9, line={"dash": "dot"})
    c.update_xaxes(type="log", title_text="ε", **_log_axis(cov["epsilon"]))
    c.update_yaxes(title_text="coverage of 90% intervals")
    out["coverage"] = _layout(c, "Ju et al. Table 1: coverage of 90% intervals (ours vs paper)")
    return out


_PRESET_FIGURES = {"gong2020_count": _gong, "eng_admissions": _admissions, "bernstein2018_binomial": _bernstein,
                   "ju2022_loglinear": _ju}


def preset_figures(result) -> dict[str, go.Figure]:
    """Figures of a preset's result by name (written as ``<name>.html`` / ``<name>.png``)."""
    return _PRESET_FIGURES[result.name](result)
