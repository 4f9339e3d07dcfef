"""Figure builders of figures/, fed hand-built Results and inspected through fig.to_dict()."""
import base64
import math
import os

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from engine.core.results import Result
from figures.budget import interval_plot, sd_plot
from figures.diagnostics import acceptance_plot, rank_plot, trace_plot
from figures.labels import acceptance_text
from figures.kde import binned_kde, kde_scale
from figures.palette import METHOD_COLORS
from figures.posteriors import MODEBAR_ROOM, NOTE_LINE, n_pmf_plot, posterior_densities, y_cap


def _result(method, draws, params=("theta",), **kw):
    draws = np.asarray(draws, float)
    if draws.ndim == 2:
        draws = draws[:, :, None]
    return Result(method=method, param_names=tuple(params), draws=draws, s_dp=np.array([10.4]), **kw)


def _decode(obj):
    """fig.to_dict() stores numeric arrays as base64 typed arrays; turn them back into ndarrays."""
    if isinstance(obj, dict) and "bdata" in obj:
        arr = np.frombuffer(base64.b64decode(obj["bdata"]), dtype=np.dtype(obj["dtype"]))
        return arr.reshape([int(n) for n in str(obj["shape"]).split(",")]) if "shape" in obj else arr
    if isinstance(obj, dict):
        return {k: _decode(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)) and obj and not isinstance(obj[0], (dict, str)):
        return np.asarray(obj)
    if isinstance(obj, list):
        return [_decode(v) for v in obj]
    return obj


def _traces(fig, kind=None, param=None):
    data = [_decode(t) for t in fig.to_dict()["data"]]
    return [t for t in data if (kind is None or t.get("meta", {}).get("kind") == kind)
            and (param is None or t.get("meta", {}).get("param") == param)]


@pytest.fixture
def rng():
    return np.random.default_rng(20240607)


def test_posterior_densities_overlays_methods_truth_and_confidential(rng):
    grid = np.linspace(0.0, 1.0, 101)
    naive = _result("naive", rng.beta(11, 21, (1, 400)), density={"theta": (grid, stats.beta.pdf(grid, 11, 21))})
    da = _result("da_mcmc", rng.beta(10, 20, (2, 1000)))
    ops = _result("ops", rng.uniform(0.1, 0.9, (1, 20)))
    conf = _result("confidential", rng.beta(9, 23, (1, 400)), density={"theta": (grid, stats.beta.pdf(grid, 9, 23))})

    fig = posterior_densities([naive, da, ops], true_params={"theta": 0.3}, confidential=conf)

    by_method = {t["meta"]["method"]: t for t in _traces(fig)}
    assert set(by_method) == {"naive", "da_mcmc", "ops", "confidential", "truth"}
    # the method's own grid density is drawn as given, in the method's own line style (issue 20 item 16:
    # naive and exact differ by colour and by dash)
    assert by_method["naive"]["meta"]["kind"] == "density"
    np.testing.assert_allclose(by_method["naive"]["x"], grid)
    np.testing.assert_allclose(by_method["naive"]["y"], stats.beta.pdf(grid, 11, 21))
    assert by_method["naive"]["line"]["dash"] == "longdash"
    # draws become a KDE that integrates to ~1 and peaks near the draws' mode
    kde = by_method["da_mcmc"]
    assert kde["meta"]["kind"] == "kde" and kde["line"]["dash"] == "dash"
    x, y = np.asarray(kde["x"]), np.asarray(kde["y"])
    assert np.trapezoid(y, x) == pytest.approx(1.0, abs=0.02)
    assert x[np.argmax(y)] == pytest.approx(9 / 28, abs=0.04)
    # too few draws for a KDE: a normalised histogram
    assert by_method["ops"]["type"] == "histogram" and by_method["ops"]["histnorm"] == "probability density"
    assert len(by_method["ops"]["x"]) == 20
    # confidential posterior dotted, truth a vertical dashed line spanning the tallest curve
    assert by_method["confidential"]["line"]["dash"] == "dot"
    truth = by_method["truth"]
    assert list(truth["x"]) == [0.3, 0.3]
    tallest = max(np.max(by_method[m]["y"]) for m in ("naive", "da_mcmc", "confidential"))
    assert truth["y"][0] == 0.0 and truth["y"][1] >= tallest


def test_posterior_densities_one_panel_per_parameter_and_legend_once(rng):
    params = ("p[0]", "p[1]", "p[2]")
    a = _result("da_mcmc", rng.dirichlet([3, 4, 5], (2, 300)).reshape(2, 300, 3), params)
    b = _result("abc_rejection", rng.dirichlet([3, 4, 5], (1, 300)).reshape(1, 300, 3), params)

    fig = posterior_densities([a, b], true_params={"p[0]": 0.25, "p[1]": 0.35, "p[2]": 0.4})
    layout = fig.to_dict()["layout"]

    assert {"xaxis", "xaxis2", "xaxis3"} <= set(layout)
    titles = [layout[k]["title"]["text"] for k in ("xaxis", "xaxis2", "xaxis3")]
    assert titles == [f"{p}: cell probability" for p in params]  # the parameter and what it measures
    for p in params:
        assert {t["meta"]["method"] for t in _traces(fig, param=p)} == {"da_mcmc", "abc_rejection", "truth"}
    shown = [t["meta"]["method"] for t in _traces(fig) if t.get("showlegend")]
    assert sorted(shown) == ["abc_rejection", "da_mcmc", "truth"]


def test_density_ticks_are_powers_of_ten_not_si_prefixes(rng):
    """A normal model on incomes drew its density axis 0, 50μ, 100μ, … under an x axis "mean μ of a record"."""
    fig = posterior_densities([_result("naive", rng.normal(1e5, 2e4, size=(2, 500)), params=("mu",))])
    assert fig.layout.yaxis.exponentformat == "power" and fig.layout.xaxis.exponentformat == "power"


def test_posterior_densities_needs_a_result():
    with pytest.raises(ValueError, match="at least one Result"):
        posterior_densities([])


def test_trace_plot_one_line_per_chain_and_parameter(rng):
    draws = rng.normal(size=(3, 50, 2))
    fig = trace_plot(_result("da_mcmc", draws, ("mu", "tau")))

    traces = _traces(fig, "trace")
    assert len(traces) == 6
    for t in traces:
        c, j = t["meta"]["chain"], ("mu", "tau").index(t["meta"]["param"])
        np.testing.assert_allclose(t["y"], draws[c, :, j])
        np.testing.assert_array_equal(t["x"], np.arange(50))


def test_diagnostics_axes_write_the_parameter_as_every_other_figure_does(rng):
    """An audit saw the trace's axis "theta" and the rank plot's "rank of theta" beside Compare's θ."""
    result = _result("da_mcmc", rng.normal(size=(2, 50)))
    assert trace_plot(result).layout.yaxis.title.text == "θ"
    assert rank_plot(result).layout.xaxis.title.text == "rank of θ"


def test_trace_plot_thins_long_chains(rng):
    fig = trace_plot(_result("da_mcmc", rng.normal(size=(1, 10_000))), max_points=1000)
    (trace,) = _traces(fig, "trace")
    assert len(trace["x"]) == 1000 and trace["x"][1] - trace["x"][0] == 10


def test_acceptance_plot_bound_mean_and_min_per_chain(rng):
    acc = rng.uniform(0.4, 1.0, (2, 200))
    result = _result("da_mcmc", rng.normal(size=(2, 200)), sample_stats={"acceptance_rate": acc},
                     info={"epsilon_bound": math.exp(-1.0)})
    fig = acceptance_plot(result)

    (bound,) = _traces(fig, "bound")
    assert list(bound["y"]) == [pytest.approx(math.exp(-1.0))] * 2
    for c in range(2):
        (mean,) = [t for t in _traces(fig, "acceptance_mean") if t["meta"]["chain"] == c]
        (low,) = [t for t in _traces(fig, "acceptance_min") if t["meta"]["chain"] == c]
        assert mean["y"][0] == pytest.approx(acc[c].mean())
        assert low["y"][0] == pytest.approx(acc[c].min())
        assert low["name"].endswith(f"min = {acceptance_text(acc[c].min())}")  # as Diagnostics' metrics write it
    assert fig.to_dict()["layout"]["yaxis"]["range"] == [0, 1.02]


def test_every_acceptance_line_keeps_3_to_1_on_both_themes(rng):
    """Phone audit s23: the chains' acceptance lines were drawn at opacity 0.6, which blends each chain colour into
    the background: every one fell under 3:1 on the light or the dark theme (chain 0's blue 2.0:1 on the dark)."""
    from figures.palette import BACKGROUNDS, MIN_CONTRAST, contrast_ratio

    acc = rng.uniform(0.4, 1, (8, 50))
    result = _result("da_mcmc", rng.normal(size=(8, 50)), sample_stats={"acceptance_rate": acc},
                     info={"epsilon_bound": math.exp(-1.0)})
    for t in acceptance_plot(result).to_dict()["data"]:
        alpha = t.get("opacity", 1.0)
        rgb = [int(t["line"]["color"][i:i + 2], 16) for i in (1, 3, 5)]
        for bg in BACKGROUNDS.values():
            back = [int(bg[i:i + 2], 16) for i in (1, 3, 5)]
            seen = "#" + "".join(f"{round(alpha * a + (1 - alpha) * b):02x}" for a, b in zip(rgb, back))
            assert contrast_ratio(seen, bg) >= MIN_CONTRAST, (t["name"], seen, bg)


def test_acceptance_plot_bound_has_a_colour_no_chain_has(rng):
    """The exp(-ε) bound is a solid line like a chain's, and each chain's minimum is a line across the plot:
    with the bound in a chain's colour (the fourth of the default four chains was vermillion, the bound's
    colour) that chain's minimum read as the bound."""
    acc = rng.uniform(0.4, 1.0, (8, 50))
    result = _result("da_mcmc", rng.normal(size=(8, 50)), sample_stats={"acceptance_rate": acc},
                     info={"epsilon_bound": math.exp(-1.0)})
    fig = acceptance_plot(result)
    (bound,) = _traces(fig, "bound")
    chains = {t["line"]["color"] for t in _traces(fig, "acceptance")}
    assert len(chains) == 8 and bound["line"]["color"] not in chains


def test_acceptance_plot_without_bound_and_without_stats(rng):
    result = _result("da_mcmc", rng.normal(size=(1, 20)), sample_stats={"acceptance_rate": np.ones((1, 20))},
                     info={"epsilon_bound": None})
    assert _traces(acceptance_plot(result), "bound") == []
    with pytest.raises(ValueError, match="acceptance_rate"):
        acceptance_plot(_result("naive", rng.normal(size=(1, 20))))


def test_rank_plot_counts_every_draw_once(rng):
    draws = rng.normal(size=(4, 500))
    draws[3] += 2.0  # a chain stuck elsewhere piles up at high ranks
    fig = rank_plot(_result("da_mcmc", draws), bins=10)

    ranks = _traces(fig, "rank")
    assert len(ranks) == 4
    for t in ranks:
        assert int(np.sum(t["meta"]["counts"], dtype=np.int64)) == 500
        # drawn as steps over the bins' whole width: 11 edges from rank 0.5 to 2,000.5, the last count repeated
        counts = list(t["meta"]["counts"])
        assert list(t["y"]) == counts + counts[-1:]
        assert t["x"][0] == 0.5 and t["x"][-1] == 2000.5 and len(t["x"]) == 11 and t["line"]["shape"] == "hv"
    # every bin holds 200 of the ranks 1..2000, so a pooled histogram is exactly flat
    assert sum(np.asarray(t["meta"]["counts"]) for t in ranks).tolist() == [200] * 10
    (expected,) = _traces(fig, "rank_expected")
    assert expected["y"][0] == pytest.approx(50.0)
    stuck = next(t for t in ranks if t["meta"]["chain"] == 3)
    assert list(stuck["meta"]["counts"])[-1] > 3 * expected["y"][0]


def _sweep_table():
    rows = []
    for eps in (0.1, 1.0, 10.0):
        for method, sd in (("naive", 0.05), ("exact", 0.3 / (1 + eps))):
            rows.append({"method": method, "epsilon": eps, "param": "theta", "mean": 0.3, "sd": sd,
                         "q5": 0.3 - 1.6 * sd, "q50": 0.3, "q95": 0.3 + 1.6 * sd})
    return pd.DataFrame(rows)


def test_interval_plot_error_bars_are_the_90_percent_interval():
    table = _sweep_table()
    fig = interval_plot(table, "theta", symbol="ε", truth=0.3)

    exact = next(t for t in _traces(fig, "interval") if t["meta"]["method"] == "exact")
    rows = table[table["method"] == "exact"].sort_values("epsilon")
    np.testing.assert_allclose(exact["error_y"]["array"], rows["q95"] - rows["mean"])
    np.testing.assert_allclose(exact["error_y"]["arrayminus"], rows["mean"] - rows["q5"])
    np.testing.assert_allclose(np.asarray(exact["x"]) / rows["epsilon"].to_numpy(), exact["x"][0] / 0.1)
    layout = fig.to_dict()["layout"]
    assert layout["xaxis"]["type"] == "log" and "ε" in layout["xaxis"]["title"]["text"]
    assert list(layout["xaxis"]["ticktext"]) == ["0.1", "1", "10"]
    assert list(_traces(fig, "truth")[0]["y"]) == [0.3, 0.3]


def test_sd_plot_log_axes_and_target_line():
    fig = sd_plot(_sweep_table().rename(columns={"epsilon": "rho"}), "theta", symbol="ρ", budget="rho",
                  target=0.1)

    lines = {t["meta"]["method"]: t for t in _traces(fig, "sd")}
    assert set(lines) == {"naive", "exact"}
    np.testing.assert_allclose(lines["exact"]["y"], [0.3 / 1.1, 0.3 / 2, 0.3 / 11])
    (target,) = _traces(fig, "target")
    assert list(target["y"]) == [0.1, 0.1]
    layout = fig.to_dict()["layout"]
    assert layout["xaxis"]["type"] == "log" and layout["yaxis"]["type"] == "log"
    assert "ρ" in layout["xaxis"]["title"]["text"]


def _spike_scenario(rng):
    """n = 20,000 at ε = 0.001 in miniature: naive and confidential are spikes (peak ~120), the private
    posteriors are wide (peak ~6)."""
    grid = np.linspace(0.0, 1.0, 2001)
    naive = _result("naive", rng.beta(6000, 14000, (1, 400)),
                    density={"theta": (grid, stats.norm.pdf(grid, 0.3, 1 / 300))})
    exact = _result("exact", rng.normal(0.3, 0.065, (1, 4000)),
                    density={"theta": (grid, stats.norm.pdf(grid, 0.3, 0.065))})
    da = _result("da_mcmc", rng.normal(0.29, 0.06, (2, 2000)))
    conf = _result("confidential", rng.normal(0.3, 0.003, (1, 400)),
                   density={"theta": (grid, stats.norm.pdf(grid, 0.3, 0.003))})
    return naive, exact, da, conf


def test_a_spike_does_not_flatten_the_private_posteriors(rng):
    naive, exact, da, conf = _spike_scenario(rng)
    fig = posterior_densities([naive, exact, da], confidential=conf, true_params={"theta": 0.3})
    layout = fig.to_dict()["layout"]
    by_method = {t["meta"]["method"]: t for t in _traces(fig)}
    exact_peak = float(np.max(by_method["exact"]["y"]))
    da_peak = float(np.max(by_method["da_mcmc"]["y"]))
    top = layout["yaxis"]["range"][1]
    # every private posterior keeps its shape: its peak sits between 70% and 100% of the axis height
    assert max(exact_peak, da_peak) <= top <= 1.2 * max(exact_peak, da_peak)
    assert exact_peak / top > 0.7
    # each clipped spike is labelled with its real height, in its own colour
    clipped = {a["name"].split(":")[1]: a for a in layout["annotations"] if a.get("name", "").startswith("clipped:")}
    assert set(clipped) == {"naive", "confidential"}
    assert float(clipped["naive"]["name"].split(":")[2]) == pytest.approx(float(np.max(by_method["naive"]["y"])))
    assert clipped["naive"]["text"] == "Naive: peak density 120, off scale ↑"  # a height, not an x position
    assert clipped["naive"]["font"]["color"] == METHOD_COLORS["naive"]
    # above the plot, where no curve runs (inside, each label was centred on its own spike and crossed the other
    # one's and the exact posterior's peak at 390 px), one line each, with the top margin grown to hold both
    for k, name in enumerate(("naive", "confidential")):
        a = clipped[name]
        assert (a["yref"], a["y"], a["yanchor"], a["yshift"]) == ("y domain", 1.0, "bottom", 2 + 18 * k), a
    assert layout["margin"]["t"] == 40 + 2 * 18
    # small multiples put them above each panel too, one line each, under its lifted subplot title
    multi = posterior_densities([naive, exact, da], confidential=conf, true_params={"theta": 0.3},
                                params=["theta", "theta"]).to_dict()["layout"]
    inside = [a for a in multi["annotations"] if a.get("name", "").startswith("clipped:")]
    assert len(inside) == 4 and all(a["yref"] in ("y domain", "y2 domain") and a["yanchor"] == "bottom"
                                    for a in inside)
    for panel in ("x domain", "x2 domain"):
        assert sorted(a["yshift"] for a in inside if a["xref"] == panel) == [2, 20]
    # room for plotly's toolbar above the first row's titles, and for the two lines of notes under them
    assert multi["margin"]["t"] == 40 + MODEBAR_ROOM + 2 * 18


def test_no_cap_when_nothing_towers(rng):
    grid = np.linspace(0.0, 1.0, 201)
    naive = _result("naive", rng.beta(11, 21, (1, 400)), density={"theta": (grid, stats.beta.pdf(grid, 11, 21))})
    exact = _result("exact", rng.beta(9, 19, (1, 400)), density={"theta": (grid, stats.beta.pdf(grid, 9, 19))})
    layout = posterior_densities([naive, exact]).to_dict()["layout"]
    assert "range" not in layout["yaxis"]
    assert not [a for a in layout.get("annotations", []) if a.get("name", "").startswith("clipped:")]
    # with only the naive spike there is nothing to protect: no cap either
    assert y_cap({"naive": 120.0}) is None and y_cap({"naive": 120.0, "exact": 6.0}) == pytest.approx(6.9)
    assert y_cap({"naive": 5.2, "exact": 3.3}) is None  # the landing demo: taller, not a spike


def test_not_converged_methods_are_faded_and_say_so(rng):
    da = _result("da_mcmc", rng.normal(0.3, 0.05, (2, 500)))
    ops = _result("ops", rng.normal(0.3, 0.05, (1, 500)))
    fig = posterior_densities([da, ops], not_converged={"da_mcmc"})
    by_method = {t["meta"]["method"]: t for t in _traces(fig)}
    assert by_method["da_mcmc"]["name"] == "DA-MCMC (not converged)"
    assert by_method["da_mcmc"]["meta"]["converged"] is False and by_method["da_mcmc"]["opacity"] < 1
    assert by_method["da_mcmc"]["line"]["dash"] == "dash"  # its own style, faded
    assert by_method["ops"]["name"].startswith("OPS: 500 released posterior draws")
    assert by_method["ops"]["meta"]["converged"] is True


def test_too_few_independent_draws_are_ticks_not_a_spike(rng):
    """Issue 20 item 1: ABC with 2 draws was a density ~1000 high that flattened every other curve. Now
    its draws are ticks on the axis, named with their count, and the y-axis follows the real posteriors."""
    exact = _result("exact", rng.normal(0.3, 0.05, (1, 4000)))
    abc = _result("abc_rejection", [[0.31, 0.3102]])
    fig = posterior_densities([exact, abc], too_few={"abc_rejection"})
    rug = _traces(fig, kind="rug")
    assert len(rug) == 1 and rug[0]["name"] == "ABC rejection: 2 draws, too few for a curve"
    assert list(rug[0]["x"]) == [0.31, 0.3102] and list(rug[0]["y"]) == [0.0, 0.0]
    assert not [t for t in _traces(fig) if t["meta"]["method"] == "abc_rejection" and t["meta"]["kind"] != "rug"]
    truth_free_top = max(float(np.max(t["y"])) for t in _traces(fig) if t["meta"]["kind"] != "rug")
    assert truth_free_top < 10  # the exact density's own height (about 8), not a spike
    small = posterior_densities([exact, abc], too_few={"abc_rejection"}, columns=3, panel_height=230)
    assert _traces(small, kind="rug")  # the small multiples draw it the same way


def test_the_axis_follows_the_curves_mass_and_labels_a_long_tail(rng):
    """Issue 20 item 16: the normal model's axis spanned -25..42 (the KDE grids' empty ends and a long
    tail). The axis shows every curve's central 95% (padded by 10%); a tail beyond it is labelled."""
    body = _result("da_mcmc", rng.normal(0.0, 1.0, (2, 4000)))
    fig = posterior_densities([body])
    lo, hi = fig.to_dict()["layout"]["xaxis"]["range"]
    assert -2.5 < lo < -2.2 and 2.2 < hi < 2.5  # +-1.96 sd padded by 10% of 3.92 sd
    assert not [a for a in fig.to_dict()["layout"].get("annotations", []) if a.get("name", "").startswith("beyond:")]
    tail = np.concatenate([rng.normal(0.0, 1.0, 9400), rng.uniform(3.0, 30.0, 600)])  # 6% spread out to 30
    fig = posterior_densities([body, _result("exact", tail.reshape(1, -1))])
    lo, hi = fig.to_dict()["layout"]["xaxis"]["range"]
    assert hi < 30
    beyond = [a for a in fig.to_dict()["layout"]["annotations"] if a.get("name", "").startswith("beyond:exact:right")]
    assert len(beyond) == 1 and beyond[0]["text"].startswith("Exact (closed form): ") and \
        beyond[0]["text"].endswith("% of its mass beyond →")
    # above the single panel at its right edge, not on the curves halfway up
    assert (beyond[0]["yref"], beyond[0]["y"], beyond[0]["yanchor"], beyond[0]["x"]) == ("y domain", 1.0, "bottom", hi)


def test_ops_is_its_released_draws_and_says_why_it_is_wide(rng):
    ops = _result("ops", rng.normal(0.3, 0.1, (1, 100)))
    trace = next(t for t in _traces(posterior_densities([ops])) if t["meta"]["method"] == "ops")
    assert trace["type"] == "histogram"  # k draws are the release itself: no lumpy KDE of 100 points
    assert trace["name"] == "OPS: 100 released posterior draws<br>(a private release, wider by design)"


def test_ops_spread_over_the_prior_does_not_squeeze_the_posteriors(rng):
    """At n = 20,000 and ε = 0.01 OPS's 100 draws (ε/100 each) spread over most of [0, 1] and set the axis: the
    exact, DA-MCMC and confidential posteriors (sd 0.01) were spikes in 2% of its width. Now they fill the axis and
    OPS is drawn where it falls, labelled with the share of its draws beyond each end."""
    grid = np.linspace(0.0, 1.0, 4001)
    exact = _result("exact", rng.normal(0.3, 0.01, (1, 4000)),
                    density={"theta": (grid, stats.norm.pdf(grid, 0.3, 0.01))})
    da = _result("da_mcmc", rng.normal(0.3, 0.01, (2, 2000)))
    ops = _result("ops", rng.uniform(0.05, 0.9, (1, 100)))
    layout = posterior_densities([exact, da, ops], true_params={"theta": 0.3}).to_dict()["layout"]
    lo, hi = layout["xaxis"]["range"]
    assert 0.25 < lo < 0.29 and 0.31 < hi < 0.35, (lo, hi)
    beyond = {a["name"].split(":")[2]: a for a in layout["annotations"] if a.get("name", "").startswith("beyond:ops:")}
    assert set(beyond) == {"left", "right"}
    left = float(np.mean(ops.draws[0, :, 0] < lo))
    assert beyond["left"]["text"] == f"← OPS: {100 * left:.0f}% of its draws beyond"
    assert beyond["right"]["text"].endswith("% of its draws beyond →")
    # OPS a few times wider than the posteriors (its usual width) still frames the axis with them
    near = _result("ops", rng.normal(0.3, 0.02, (1, 100)))
    lo, hi = posterior_densities([exact, da, near], true_params={"theta": 0.3}).to_dict()["layout"]["xaxis"]["range"]
    assert lo <= float(np.quantile(near.draws, 0.025)) and hi >= float(np.quantile(near.draws, 0.975))


def test_naive_and_exact_differ_by_colour_and_dash_and_clipped_labels_do_not_overprint(rng):
    """Issue 20 item 16: naive (red) and exact (orange) looked alike; 'Naive peaks at 2.52' and
    'Confidential peaks at 2.52' printed over each other."""
    from figures.palette import METHOD_COLORS, dash_of

    assert METHOD_COLORS["naive"] != METHOD_COLORS["exact"] and dash_of("naive") != dash_of("exact")
    assert len(set(METHOD_COLORS.values())) == len(METHOD_COLORS)
    grid = np.linspace(0.0, 1.0, 401)
    spike = stats.norm.pdf(grid, 0.5, 0.005)
    naive = _result("naive", rng.normal(0.5, 0.005, (1, 400)), density={"theta": (grid, spike)})
    conf = _result("confidential", rng.normal(0.5, 0.005, (1, 400)), density={"theta": (grid, spike)})
    exact = _result("exact", rng.normal(0.5, 0.1, (1, 4000)))
    layout = posterior_densities([naive, exact], confidential=conf).to_dict()["layout"]
    clipped = [a for a in layout["annotations"] if a.get("name", "").startswith("clipped:")]
    assert len(clipped) == 2 and {a["yshift"] for a in clipped} == {2, 20}  # one line each, above the plot


def test_an_exported_html_page_has_the_figures_title(rng):
    """Audit s21 item 23: the HTML downloads had no <title> (a browser tab read the file's path)."""
    import plotly.graph_objects as go

    from figures import export
    from figures.budget import with_scenario

    fig = posterior_densities([_result("da_mcmc", rng.normal(0.3, 0.05, (2, 500)))],
                              title="Laplace noise, scale b = 3.333; pure 0.3-DP (sensitivity 1)")
    titled = with_scenario(fig, "Posterior of θ & μ at ε = 0.3", "Beta-binomial (proportion θ), n = 40; simulated")
    head = export.html_text(titled).split("</head>")[0]  # plotly.js has a <title> of its own, in an SVG
    assert head.count("<title>") == 1
    assert "<title>Posterior of θ &amp; μ at ε = 0.3 · Beta-binomial (proportion θ), n = 40 · simulated</title>" \
        in head, head
    assert "<title>Laplace noise, scale b = 3.333; pure 0.3-DP (sensitivity 1)</title>" in export.html_text(fig)
    assert "<title>Plotly figure</title>" in export.html_text(go.Figure())


def test_exports_are_drawn_on_white(rng, monkeypatch):
    """A PNG or HTML download has no Streamlit theme around it: it took plotly's default template (a blue-grey
    plot area, #E5ECF6) instead of what the app shows. Both now leave on plotly_white; the figure on the page
    keeps no template of its own."""
    import kaleido

    from figures import export

    fig = posterior_densities([_result("da_mcmc", rng.normal(0.3, 0.05, (2, 500)))])
    default_bg = fig.layout.template.layout.plot_bgcolor
    out = export.for_export(fig)
    assert out.layout.template.layout.plot_bgcolor == "white" and default_bg != "white"
    assert fig.layout.template.layout.plot_bgcolor == default_bg  # the page's figure is left as it was
    assert '"plot_bgcolor":"white"' in export.html_text(fig).replace(" ", "")
    seen = []
    monkeypatch.setattr(export, "_browser", lambda: "/usr/bin/chromium")
    monkeypatch.setitem(export._STATE, "server", True)
    monkeypatch.setattr(kaleido, "calc_fig_sync", lambda f, opts: seen.append(f) or b"\x89PNG fake")
    assert export.png_bytes(fig) == b"\x89PNG fake"
    assert seen[0].layout.template.layout.plot_bgcolor == "white"


@pytest.mark.skipif(not os.path.exists("/usr/bin/chromium"), reason="PNG export needs Debian's chromium")
def test_an_exported_title_hung_from_the_top_is_not_cut(tmp_path):
    """Compare's PNG (and its HTML, the same plotly.js) drew the first line of its title cut in half at the top: the
    files' plotly.js hangs a title a line higher than the app's. The rows of pixels above the title stay white."""
    import io

    from PIL import Image

    import plotly.graph_objects as go

    from figures import export
    from figures.axes import titled

    for size in (None, 24):
        title, top = titled("Laplace noise, scale b = 3.333;<br>pure 0.3-DP (sensitivity 1) and a long second part")
        fig = go.Figure(go.Scatter(x=[0, 1], y=[0, 1]), layout={"title": title, "margin": {"t": top}, "height": 400})
        fig.update_layout(title_font_size=size)
        image = np.asarray(Image.open(io.BytesIO(export.png_bytes(fig, scale=1))).convert("L"))
        ink = np.flatnonzero((image < 200).any(axis=1))
        assert ink[0] >= 6, (size, ink[:5])  # the first dark row: the title's, below the top edge
        assert export.for_export(fig).layout.title.pad.t == 12 + (size or 17)


def test_log_axes_have_ticks_across_their_whole_span():
    """The privacy budget's sd figure on the demo: sds from 0.053 to 0.21 had plotly's ticks at 0.1, 0.15 and 0.2
    only, the lower half of the axis (the confidential sd 0.067, a target 0.081) bare."""
    from figures.axes import log_ticks
    from figures.budget import mean_split_plot

    assert log_ticks([0.053, 0.21]) == [0.05, 0.07, 0.1, 0.15, 0.2]
    assert log_ticks([0.01, 0.5]) == [0.01, 0.02, 0.05, 0.1, 0.2, 0.5]  # 1-2-5 over more than a decade
    assert log_ticks([1e-4, 10.0]) == [1e-4, 1e-3, 0.01, 0.1, 1.0, 10.0]
    assert log_ticks([0.066, 0.072]) is None and log_ticks([]) is None and log_ticks([1e-12, 1e3]) is None
    table = pd.DataFrame({"epsilon": [0.1, 1.0, 10.0] * 2, "method": ["naive"] * 3 + ["exact"] * 3,
                          "param": ["theta"] * 6, "mean": [0.4] * 6, "sd": [0.053, 0.06, 0.067, 0.21, 0.08, 0.068],
                          "q5": [0.3] * 6, "q95": [0.5] * 6})
    axis = sd_plot(table, "theta", confidential_sd=0.067, target=0.081).to_dict()["layout"]["yaxis"]
    assert axis["type"] == "log" and axis["tickvals"] == [0.05, 0.07, 0.1, 0.15, 0.2]
    assert axis["ticktext"] == ["0.05", "0.07", "0.1", "0.15", "0.2"]
    curve = [(f, 0.02 + 0.5 * (f - 0.6) ** 2) for f in np.linspace(0.05, 0.95, 19)]
    axis = mean_split_plot(curve, fraction_sum=0.6, posterior_sd=0.02, even_sd=0.025).to_dict()["layout"]["yaxis"]
    assert axis["tickvals"][0] <= 0.02 and axis["tickvals"][-1] >= 0.1 and len(axis["tickvals"]) >= 4


def test_sd_plot_floor_is_a_floor_for_exact_posteriors_only():
    """The default scenario's naive sd (0.053 at ε = 0.1) sits below the confidential-data sd: the legend said
    "(no ε goes below)" with 0.06705. It says which posteriors stay above it, rounded to three digits."""
    table = pd.DataFrame({"epsilon": [0.1, 1.0, 10.0] * 2, "method": ["naive"] * 3 + ["exact"] * 3,
                          "param": ["theta"] * 6, "mean": [0.4] * 6, "sd": [0.053, 0.06, 0.067, 0.21, 0.08, 0.068],
                          "q5": [0.3] * 6, "q95": [0.5] * 6})
    (floor,) = _traces(sd_plot(table, "theta", confidential_sd=0.0670512), "confidential_sd")
    assert floor["name"] == "confidential-data sd = 0.0671 (no exact posterior goes below)"
    assert floor["meta"]["value"] == 0.0670512


def test_sd_plot_prior_line_anchors_the_axis():
    """The regression preset's sds (1.58 to 1.98 under a prior sd of 2) filled the log axis, so a 20% change looked
    steep. With the prior sd given, it is drawn as a line and the axis spans a decade down from it: the sweep's
    curves take a tenth of the height, under the prior they barely leave."""
    sds = [1.98, 1.96, 1.9, 1.82, 1.72, 1.65, 1.62]
    grid = [0.1, 0.215, 0.464, 1.0, 2.15, 4.64, 10.0]
    table = pd.DataFrame({"epsilon": grid, "method": "exact", "param": "beta[0]", "sd": sds, "mean": -1.0,
                          "q5": -4.0, "q95": 2.0})
    fig = sd_plot(table, "beta[0]", target=1.8, prior_sd=1.998)
    (prior,) = _traces(fig, "prior_sd")
    assert list(prior["y"]) == [1.998, 1.998] and list(prior["x"]) == [0.1, 10.0]
    assert prior["name"] == "prior sd = 2 (before any data)"
    axis = fig.to_dict()["layout"]["yaxis"]
    lo, hi = axis["range"]
    assert lo <= math.log10(0.1998) and hi >= math.log10(1.998)
    assert (math.log10(max(sds)) - math.log10(min(sds))) / (hi - lo) < 0.15
    assert axis["tickvals"][0] <= 0.2 and axis["tickvals"][-1] == 2
    assert "range" not in sd_plot(table, "beta[0]", target=1.8).to_dict()["layout"]["yaxis"]  # no prior: as before


def test_every_method_keeps_one_colour_on_every_figure(rng):
    """The palette is one module: the density, interval and sd figures colour a method alike."""
    from figures import palette

    da = _result("da_mcmc", rng.normal(0.3, 0.05, (2, 500)))
    table = pd.DataFrame({"epsilon": [0.5, 1.0], "method": ["da_mcmc", "da_mcmc"], "param": ["theta", "theta"],
                          "mean": [0.3, 0.31], "sd": [0.05, 0.04], "q5": [0.2, 0.23], "q95": [0.4, 0.38]})
    colours = {t["line"]["color"] for fig in (posterior_densities([da]), interval_plot(table, "theta"),
                                              sd_plot(table, "theta")) for t in _traces(fig)
               if t.get("meta", {}).get("method") == "da_mcmc"}
    assert colours == {palette.METHOD_COLORS["da_mcmc"]}
    assert len(set(palette.METHOD_COLORS.values())) == len(palette.METHOD_COLORS)


def test_every_colour_reads_on_the_light_and_the_dark_theme():
    """Streamlit follows the browser's light or dark setting and the figures have no background of their own:
    every colour they draw with needs WCAG's 3:1 against both backgrounds. On the dark one the best method's
    indigo curve was 1.5:1 and the sd figure's exact line, the ECDF's diagonal and the papers' reference lines
    were black; on the light one the true value's olive was 2.0:1. The palette and every colour literal in the
    figure modules (rgba fills by their colour) are checked, and the WCAG formula against known ratios."""
    import re
    from pathlib import Path

    from figures import palette

    assert palette.contrast_ratio("#000000", "#ffffff") == pytest.approx(21.0)
    assert palette.contrast_ratio("#777", "#fff") == pytest.approx(4.48, abs=0.01)  # WCAG's grey at the AA line
    assert palette.contrast_ratio("rgba(0, 0, 0, 0.5)", "#000000") == pytest.approx(1.0)
    with pytest.raises(ValueError, match="color = 'red' is invalid"):
        palette.contrast_ratio("red", "#fff")
    named = {**{f"METHOD_COLORS[{m!r}]": c for m, c in palette.METHOD_COLORS.items()},
             **{f"CHAIN_COLORS[{i}]": c for i, c in enumerate(palette.CHAIN_COLORS)},
             "TRUTH_COLOR": palette.TRUTH_COLOR, "BOUND_COLOR": palette.BOUND_COLOR,
             "NEUTRAL_COLOR": palette.NEUTRAL_COLOR}
    root = Path(palette.__file__).parent
    literal = re.compile(r"#[0-9a-fA-F]{6}\b|#[0-9a-fA-F]{3}\b|rgba?\(\s*\d[^)]*\)")
    for path in sorted(root.glob("*.py")):
        for line_no, line in enumerate(path.read_text().splitlines(), 1):
            if line.startswith("BACKGROUNDS ="):  # the backgrounds themselves
                continue
            for m in literal.finditer(line.split("  #")[0]):
                named[f"{path.name}:{line_no} {m.group()}"] = m.group()
    assert len(named) > 30
    low = {where: {theme: round(palette.contrast_ratio(c, bg), 2) for theme, bg in palette.BACKGROUNDS.items()}
           for where, c in named.items()
           if min(palette.contrast_ratio(c, bg) for bg in palette.BACKGROUNDS.values()) < palette.MIN_CONTRAST}
    assert not low, low


def test_sweep_cells_that_did_not_converge_are_marked():
    table = pd.DataFrame({"epsilon": [0.1, 1.0, 0.1, 1.0], "method": ["da_mcmc", "da_mcmc", "exact", "exact"],
                          "param": ["theta"] * 4, "mean": [0.3, 0.31, 0.29, 0.3], "sd": [0.1, 0.04, 0.12, 0.04],
                          "q5": [0.1, 0.25, 0.1, 0.24], "q95": [0.5, 0.37, 0.5, 0.36],
                          "converged": [False, True, True, True]})
    for fig, column in ((interval_plot(table, "theta"), "mean"), (sd_plot(table, "theta"), "sd")):
        marks = _traces(fig, kind="not_converged")
        assert [t["meta"]["method"] for t in marks] == ["da_mcmc"]
        assert list(marks[0]["y"]) == [table[column][0]]
    assert not _traces(sd_plot(table.assign(converged=True), "theta"), kind="not_converged")


@pytest.mark.parametrize("draws", ["normal", "skewed", "bimodal", "few", "heavy"])
def test_binned_kde_is_scipys_kde(rng, draws):
    """The fast binned KDE equals scipy's gaussian_kde at the same bandwidth (Scott's factor on the robust scale,
    min(sd, shorth / 1.349): figures.kde.kde_scale) to 1% of the peak."""
    x = {"normal": rng.normal(0.3, 0.05, 8000), "skewed": rng.beta(1.2, 30, 4000),
         "bimodal": np.r_[rng.normal(0, 1, 3000), rng.normal(6, 0.5, 1000)], "few": rng.normal(0, 1, 60),
         "heavy": rng.standard_t(2, 8000)}[draws]
    grid, pdf = binned_kde(x)
    reference = stats.gaussian_kde(x, bw_method=kde_scale(x) * x.size ** -0.2 / x.std(ddof=1))(grid)
    assert np.max(np.abs(pdf - reference)) <= 0.01 * reference.max()


def test_a_heavy_tailed_posteriors_curve_keeps_its_peak(rng):
    """A heavy tail sets the sd, and a bandwidth from the sd was wider than the peak: DA-MCMC's curve of the normal
    mean at n = 40, ε = 0.3 stood at half the exact density's height. Draws of that shape, 80% N(1.7, 0.5^2) and a
    flat 20% over [3, 25] (peak density 0.638, sd 5.6): the curve's peak within 10% of it, where the sd's bandwidth
    drew it below 60%; and for normal draws the robust scale is the sd (within 5%). DA-MCMC's own draws of that
    posterior put 37.6% in [1.2, 2.2] against the exact 37.4%: the curve was wrong, not the sampler."""
    x = np.r_[rng.normal(1.7, 0.5, 6400), rng.uniform(3.0, 25.0, 1600)]
    grid, pdf = binned_kde(x)
    peak = 0.8 * stats.norm(1.7, 0.5).pdf(1.7)
    assert abs(pdf.max() - peak) < 0.1 * peak, pdf.max()
    wide = stats.gaussian_kde(x)(np.linspace(1.2, 2.2, 101)).max()  # the sd's bandwidth, as it was
    assert wide < 0.6 * peak, wide
    normal = rng.normal(0.0, 1.0, 8000)
    assert kde_scale(normal) == pytest.approx(normal.std(ddof=1), rel=0.05)


def test_binned_kde_keeps_a_bounded_parameter_inside_its_range(rng):
    """Draws of a probability piled against 0: with the range given the curve starts at 0 (not one bandwidth
    below it), still integrates to 1 over [0, 1] (the mirrored kernels put back the mass the bound cut), and at
    the bound it is the reflection estimate, scipy's KDE of the draws and their mirror images, doubled."""
    x = rng.beta(1.0, 12.0, 8000)
    grid, pdf = binned_kde(x, lower=0.0, upper=1.0)
    assert grid[0] == 0.0 and grid[-1] <= 1.0
    assert np.trapezoid(pdf, grid) == pytest.approx(1.0, abs=2e-3)
    plain_grid, plain = binned_kde(x)
    assert plain_grid[0] < 0.0  # the unbounded curve reaches below 0
    mirrored = stats.gaussian_kde(np.r_[x, -x], bw_method=kde_scale(x) * x.size ** -0.2 / np.r_[x, -x].std(ddof=1))
    reference = 2.0 * mirrored(grid)
    assert np.max(np.abs(pdf - reference)) <= 0.01 * reference.max()
    # draws outside the range (a custom model's parameter): no bound is imposed
    y = rng.normal(0.1, 0.2, 2000)
    assert binned_kde(y, lower=0.0, upper=1.0)[0][0] < 0.0


def test_posterior_curves_stay_inside_the_parameters_range(rng):
    da = _result("da_mcmc", rng.beta(1.0, 15.0, (2, 2000)))
    free = posterior_densities([da])
    bounded = posterior_densities([da], supports={"theta": (0.0, 1.0)})
    assert min(_traces(free, kind="kde")[0]["x"]) < 0.0
    assert min(_traces(bounded, kind="kde")[0]["x"]) == 0.0


def test_the_x_axis_stops_at_the_parameters_range(rng):
    """Audit s21 item 21: at ε = 0.1 the demo's posteriors pile up near θ = 1 and the padded x-axis ran to θ = 1.07,
    values θ cannot take."""
    da = _result("da_mcmc", rng.beta(12.0, 1.5, (2, 2000)))
    free = posterior_densities([da], true_params={"theta": 0.3}).to_dict()["layout"]["xaxis"]["range"]
    assert free[1] > 1.0
    shown = posterior_densities([da], true_params={"theta": 0.3},
                                supports={"theta": (0.0, 1.0)}).to_dict()["layout"]["xaxis"]["range"]
    assert shown[1] == 1.0 and 0.0 < shown[0] < 0.3  # the truth still in view
    lam = _result("da_mcmc", rng.gamma(2.0, 0.05, (2, 2000)), params=("lam",))
    open_ended = posterior_densities([lam], supports={"lam": (0.0, math.inf)}).to_dict()["layout"]["xaxis"]["range"]
    assert open_ended[0] == 0.0 and math.isfinite(open_ended[1])


def test_hovering_a_curve_names_the_method_the_parameter_and_the_density(rng):
    """Audit s21 item 14: a hover on the Compare figure showed "(0.4174245, 3.11869)", unlabelled."""
    runs = [_result("naive", rng.beta(20.0, 25.0, (1, 2000))), _result("da_mcmc", rng.beta(8.0, 10.0, (2, 2000))),
            _result("ops", rng.beta(5.0, 5.0, (1, 100)))]
    fig = posterior_densities(runs, true_params={"theta": 0.3}, not_converged={"da_mcmc"}).to_dict()
    hover = {t["meta"]["method"]: t.get("hovertemplate") for t in fig["data"] if t["meta"]["kind"] != "truth"}
    assert hover["naive"] == "Naive<br>θ = %{x:.4g}<br>density %{y:.3g}<extra></extra>", hover
    assert hover["da_mcmc"].startswith("DA-MCMC (not converged)<br>θ = %{x:.4g}<br>density"), hover
    assert hover["ops"] == "OPS<br>θ in %{x}<br>density %{y:.3g}<extra></extra>", hover  # a histogram's bin


def test_the_models_name_the_ranges_of_their_parameters():
    from engine.models.beta_binomial import BetaBinomial
    from engine.models.dirichlet_multinomial import DirichletMultinomial
    from engine.models.linear_regression import LinearRegression
    from engine.models.naive_bayes_loglinear import NaiveBayesLoglinear
    from engine.models.poisson_gamma import PoissonGamma
    models = [BetaBinomial(n=10), PoissonGamma(n=10), DirichletMultinomial(n=10, alpha=(1.0, 1.0, 1.0)),
              NaiveBayesLoglinear(n=10), LinearRegression(n=10), LinearRegression(n=10, sigma_prior=(2.0, 2.0))]
    for m in models:
        assert set(m.param_support) <= set(m.param_names), m.name
    assert models[0].param_support == {"theta": (0.0, 1.0)} and models[1].param_support["lam"][0] == 0.0
    assert set(models[3].param_support) == set(models[3].param_names)
    assert models[4].param_support == {} and models[5].param_support == {"sigma2": (0.0, float("inf"))}


# --------------------------------------------------------------------------- unknown n and the MLE (issue 9)
def _mle(estimate, se, param="theta", **info):
    z = stats.norm.ppf(0.95)
    mle = {param: {"estimate": estimate, "se": se, "q5": estimate - z * se, "q95": estimate + z * se}}
    return _result("mcem", [[estimate]], params=(param,), info={"estimator": True, "mle": mle, **info})


def test_the_mle_is_a_marker_with_its_90_percent_bar_under_the_curves(rng):
    da = _result("da_mcmc", rng.beta(10, 20, (2, 1000)))
    mle = _mle(0.31, 0.08)
    fig = posterior_densities([da, mle], true_params={"theta": 0.3})

    assert {t["meta"]["method"] for t in _traces(fig, kind="kde")} == {"da_mcmc"}  # no density for an estimator
    assert not [t for t in _traces(fig) if t["meta"]["method"] == "mcem" and t["meta"]["kind"] != "estimate"]
    (mark,) = _traces(fig, kind="estimate")
    assert mark["meta"]["method"] == "mcem" and list(mark["x"]) == [0.31]
    z = stats.norm.ppf(0.95)
    np.testing.assert_allclose([mark["error_x"]["arrayminus"][0], mark["error_x"]["array"][0]], [z * 0.08, z * 0.08])
    assert mark["y"][0] < 0  # below the curves, inside the visible range
    lo, hi = fig.layout.yaxis.range
    assert lo < mark["y"][0] < 0 < hi
    assert mark["marker"]["color"] == METHOD_COLORS["mcem"]
    assert "MLE" in mark["name"]


def test_an_mle_alone_still_draws(rng):
    fig = posterior_densities([_mle(3.0, 0.5, param="lam")])
    (mark,) = _traces(fig, kind="estimate")
    assert mark["meta"]["param"] == "lam" and list(mark["x"]) == [3.0]


def test_methods_run_at_the_plug_in_n_say_so_in_the_legend(rng):
    da = _result("da_mcmc", rng.beta(10, 20, (2, 500)), info={"plug_in_n": 21, "note": "n unknown"})
    rj = _result("rjmcmc", np.stack([rng.beta(10, 20, (2, 500)), rng.poisson(21, (2, 500))], axis=2),
                 params=("theta", "n"))
    fig = posterior_densities([rj, da], params=["theta"])
    names = {t["meta"]["method"]: t["name"] for t in _traces(fig)}
    assert names == {"rjmcmc": "RJMCMC (unknown n)", "da_mcmc": "DA-MCMC at plug-in n = 21"}
    assert not _traces(fig, param="n")  # n has its own figure


def test_n_pmf_plot_shows_the_pmf_against_n_dp_the_plug_in_and_the_truth():
    values, probs = np.array([18, 19, 20, 21, 22]), np.array([0.1, 0.2, 0.4, 0.2, 0.1])
    fig = n_pmf_plot(values, probs, n_dp=21.4, plug_in=21, true_n=20)
    (bars,) = _traces(fig, kind="n_pmf")
    np.testing.assert_array_equal(bars["x"], values)
    np.testing.assert_allclose(bars["y"], probs)
    assert bars["marker"]["color"] == METHOD_COLORS["rjmcmc"]
    marks = {t["meta"]["kind"]: t for t in _traces(fig) if t["meta"]["kind"] != "n_pmf"}
    assert set(marks) == {"n_dp", "plug_in", "truth"}
    assert list(marks["n_dp"]["x"]) == [21.4, 21.4] and list(marks["truth"]["x"]) == [20.0, 20.0]
    assert max(marks["truth"]["y"]) >= probs.max()
    assert "20" in fig.layout.title.text  # the posterior mean 20.0
    # a typed release has no truth
    assert {t["meta"]["kind"] for t in _traces(n_pmf_plot(values, probs, n_dp=21.4))} == {"n_pmf", "n_dp"}
    with pytest.raises(ValueError, match="values"):
        n_pmf_plot([], [], n_dp=3.0)


def test_rjmcmc_acceptance_plot_is_named_for_rjmcmc(rng):
    acc = rng.uniform(0.8, 1.0, (2, 50))
    rj = _result("rjmcmc", np.stack([rng.beta(3, 5, (2, 50)), rng.poisson(20, (2, 50))], axis=2), params=("theta", "n"),
                 sample_stats={"acceptance_rate": acc}, info={"epsilon_bound": None})
    fig = acceptance_plot(rj)
    assert fig.layout.title.text.replace("<br>", " ").startswith("RJMCMC (unknown n)")
    assert not _traces(fig, kind="bound")


def test_diagnostics_and_budget_figures_fit_a_phone(rng):
    """At 390 px the Diagnostics figures' titles were cut ("RJMCMC (unknown n): acceptance rate per record sweep
    (within the current n)") and their legends on the right took half the width (thirteen entries on the acceptance
    plot of four chains). Every title comes in lines of at most 42 characters with the top margin for them, every
    legend sits below the plot, and the acceptance plot's legend names the chains and the bound only."""
    from figures.diagnostics import mcem_history
    from figures.posteriors import n_pmf_plot

    acc = rng.uniform(0.8, 1.0, (4, 50))
    rj = _result("rjmcmc", np.stack([rng.beta(3, 5, (4, 50)), rng.poisson(20, (4, 50))], axis=2),
                 params=("theta", "n"), sample_stats={"acceptance_rate": acc}, info={"epsilon_bound": 0.6})
    history = [{"iteration": i, "theta": 0.3 + 0.01 / i, "mc_draws": 100 * i, "score": 1.0 / i, "score_mcse": 0.1}
               for i in range(1, 6)]
    mle = {"theta": {"estimate": 0.3, "q5": 0.2, "q95": 0.4}}
    em = _result("mcem", rng.normal(0.3, 0.01, (1, 10)), info={"history": history, "estimator": "mle", "mle": mle})
    from figures.budget import mean_split_plot, releases_plot

    releases = pd.DataFrame({"epsilon": [0.5, 0.5, 1.0, 1.0], "replicate": [0, 1, 0, 1], "param": ["theta"] * 4,
                             "post_mean": [0.3, 0.32, 0.31, 0.3], "q5": [0.2] * 4, "q95": [0.4] * 4,
                             "confidential_mean": [0.3] * 4})
    curve = [(f, 0.02 + 0.5 * (f - 0.6) ** 2) for f in np.linspace(0.05, 0.95, 19)]
    figures = {"acceptance": acceptance_plot(rj), "trace": trace_plot(rj), "rank": rank_plot(rj),
               "mcem": mcem_history(em), "n": n_pmf_plot([19, 20, 21], [0.2, 0.5, 0.3], n_dp=20.4, plug_in=20),
               # the budget page's two figures whose legends hung at y = -0.2 of the plot, where the x title is
               "releases": releases_plot(releases, "theta", truth=0.3),
               "mean split": mean_split_plot(curve, fraction_sum=0.6, posterior_sd=0.02, even_sd=0.025, epsilon=1.0)}
    for name, fig in figures.items():
        layout = fig.to_dict()["layout"]
        lines = layout["title"]["text"].split("<br>")
        assert max(map(len, lines)) <= 42 and layout["margin"]["t"] >= 38 + 22 * len(lines), (name, lines)
        assert layout["legend"]["orientation"] == "h" and layout["legend"]["yref"] == "container", name
    shown = [t["name"] for t in figures["acceptance"].to_dict()["data"] if t.get("showlegend", True)]
    assert shown == ["chain 0", "chain 1", "chain 2", "chain 3", "exp(-ε) bound = 0.6"], shown
    title = figures["acceptance"].layout.title.text.replace("<br>", " ")
    assert title == "RJMCMC (unknown n): acceptance rate per record sweep (within the current n)", title


def test_titles_and_axis_titles_are_wrapped_for_a_phone(rng):
    """Issue 20 item 17: at 390 px the figure title and the axis title were cut, and the legend sat on the
    axis title. Titles come in lines of at most 42 characters; the legend is anchored to the figure's bottom."""
    from figures.axes import wrap

    fig = posterior_densities([_result("da_mcmc", rng.normal(0.3, 0.05, (2, 500)))],
                              title="Laplace noise, scale b = 3.333; pure 0.3-DP (sensitivity 1)")
    layout = fig.to_dict()["layout"]
    assert layout["title"]["text"] == "Laplace noise, scale b = 3.333;<br>pure 0.3-DP (sensitivity 1)"
    assert all(len(line) <= 42 for line in layout["xaxis"]["title"]["text"].split("<br>"))
    assert layout["legend"]["yref"] == "container" and layout["legend"]["yanchor"] == "bottom"
    assert wrap("a " * 40).count("<br>") >= 1 and wrap("short") == "short"


def test_the_budget_intervals_frame_the_private_methods_when_naive_runs_off():
    """Privacy budget at the regression preset: naive's intervals (down to -5,700) set the y-axis, and the exact
    intervals and the truth were a flat line at 0. The axis now frames the private methods and says how far naive
    reaches; where naive is near them, plotly fits everything as before."""
    import pandas as pd

    from figures.budget import interval_plot

    table = pd.DataFrame({"method": ["naive", "naive", "auto", "auto"], "epsilon": [0.1, 1.0, 0.1, 1.0],
                          "param": ["beta[1]"] * 4, "mean": [-3000.0, 20.0, 0.1, 0.2],
                          "q5": [-5700.0, -10.0, -3.0, -2.0], "q95": [-100.0, 50.0, 3.0, 2.0]})
    fig = interval_plot(table, "beta[1]", truth=0.5)
    assert fig.layout.yaxis.range == (-3.6, 3.6)
    assert [a.text for a in fig.layout.annotations] == ["Naive: intervals reach -5,700 to 50, beyond the axis"]
    near = table.assign(mean=[0.0, 0.0, 0.1, 0.2], q5=[-4.0, -4.0, -3.0, -2.0], q95=[4.0, 4.0, 3.0, 2.0])
    fig = interval_plot(near, "beta[1]", truth=0.5)
    assert fig.layout.yaxis.range is None and not fig.layout.annotations


def test_one_parameter_axes_and_budget_titles_write_the_symbol_not_the_engine_name():
    """Gong's axis read "lam: Poisson rate λ", the Privacy budget's titles "theta: 90% posterior interval"."""
    from figures.axes import axis_title, param_symbol
    assert axis_title("lam") == "Poisson rate λ (events per record)"
    assert axis_title("beta[1]").startswith("beta[1]: coefficient of x1")
    assert [param_symbol(p) for p in ("theta", "lam", "mu", "beta[0]")] == ["θ", "λ", "μ", "beta[0]"]
    table = pd.DataFrame({"method": ["exact"] * 2, "param": ["theta"] * 2, "epsilon": [0.5, 1.0],
                          "mean": [0.4, 0.4], "sd": [0.1, 0.05], "q5": [0.2, 0.3], "q95": [0.6, 0.5],
                          "converged": [True, True]})
    fig = interval_plot(table, "theta").to_dict()["layout"]
    assert fig["title"]["text"].startswith("θ: 90% posterior interval") and fig["yaxis"]["title"]["text"] == "θ"


def test_a_long_legend_gets_room_of_its_own_below_the_plot():
    """Compare on a 390 px phone: seven legend entries, one a line, left the plot 130 px of a 460 px figure."""
    from figures.posteriors import LEGEND_LINE
    rng = np.random.default_rng(0)

    def result(method):
        return Result(method=method, param_names=("theta",), draws=rng.beta(3, 5, size=(2, 300, 1)),
                      s_dp=np.array([1.0]))

    few = posterior_densities([result(m) for m in ("naive", "exact")], true_params={"theta": 0.3})
    methods = ("naive", "da_mcmc", "abc_rejection", "pseudo_marginal", "exact")
    many = posterior_densities([result(m) for m in methods], true_params={"theta": 0.3}, confidential=result("exact"))
    entries = len({t.name for t in many.data if t.showlegend is not False and t.name})
    assert entries == 7 and many.layout.height - few.layout.height == (entries - 4) * LEGEND_LINE


def test_a_long_title_hangs_from_the_top_and_its_margin_holds_every_line(rng):
    """plotly puts a title's first baseline at the middle of the top margin and the other lines below it: the
    six-line title of OpenDP's mean (dp-wizard's mean of hours) ran into the y axis's top tick at any margin. Every
    figure title now hangs from the figure's top, and the top margin holds its lines with room to spare."""
    import plotly.graph_objects as go

    from figures.axes import TITLE_LINE, TITLE_PAD, titled

    mean = ("OpenDP mean on [0, 40]: (clamped sum + Laplace b = 240) / max(n + discrete Laplace t = 6, 0); pure "
            "0.3333-DP under add/remove-one (0.1667 for the sum, 0.1667 for the length)")
    one = [_result("pseudo_marginal", rng.normal(11.2, 1.0, (2, 500)), params=("mu",))]
    head, top = titled(mean)
    figures = {"posterior": posterior_densities(one, title=mean), "titled": go.Figure(layout={"title": head,
                                                                                               "margin": {"t": top}}),
               "short": posterior_densities(one, title="Laplace noise, scale b = 3.333"),
               "n": n_pmf_plot([19, 20, 21], [0.2, 0.5, 0.3], n_dp=20.4, plug_in=20)}
    for name, fig in figures.items():
        layout = fig.to_dict()["layout"]
        title = layout["title"]
        lines = title["text"].count("<br>") + 1
        assert (title["yref"], title["yanchor"], title["y"], title["pad"]["t"]) == ("container", "top", 1.0,
                                                                                    TITLE_PAD), name
        # the last line's bottom (a line's height each, from TITLE_PAD) at least 16 px above the plot
        assert layout["margin"]["t"] >= TITLE_PAD + TITLE_LINE * lines + 16, (name, lines, layout["margin"])
    assert figures["posterior"].layout.title.text.count("<br>") == 5


def test_small_multiples_stack_their_peak_notes_above_each_panel_under_its_title(rng):
    """Audit (Compare's small multiples, regression at n = 200): "Naive peaks at 1.8 ↑" sat on "Confidential peaks at
    2.18 ↑", on the dashed lines and against the panel's title, and "peaks at 2.99" read like an x position. Each
    panel's notes now stand above it, one line each, centred on it, under its lifted title, worded as a density; the
    gap above a row grows by their band so the panels keep their height."""
    naive, exact, da, conf = _spike_scenario(rng)
    names = ["theta"] * 4  # 3 columns: two rows, two clipped peaks in every panel
    fig = posterior_densities([naive, exact, da], confidential=conf, params=names, columns=3).to_dict()["layout"]
    notes = [a for a in fig["annotations"] if a.get("name", "").startswith("clipped:")]
    titles = [a for a in fig["annotations"] if a.get("text") == "theta"]
    assert len(notes) == 8 and len(titles) == 4
    for j, title in enumerate(titles):
        panel = f"x{'' if j == 0 else j + 1} domain"
        mine = sorted((a for a in notes if a["xref"] == panel), key=lambda a: a["yshift"])
        assert [a["yshift"] for a in mine] == [2, 2 + NOTE_LINE], mine  # one line each: never on one another
        assert all((a["y"], a["yanchor"], a["x"], a["xanchor"]) == (1.0, "bottom", 0.5, "center") for a in mine)
        assert title["yshift"] >= mine[-1]["yshift"] + NOTE_LINE  # the panel's title over its notes
    worded = {"peak density 120, off scale ↑", "peak density 133, off scale ↑"}  # naive's and confidential's height
    assert {a["text"].split(": ")[1] for a in notes} == worded

    def rows_px(layout):  # each row's panel height and the gap between the rows, in pixels
        plot = layout["height"] - layout["margin"]["t"] - layout["margin"]["b"]
        top, low = layout["yaxis"]["domain"], layout["yaxis4"]["domain"]
        return round((top[1] - top[0]) * plot, 6), round((low[1] - low[0]) * plot, 6), (top[0] - low[1]) * plot

    bare = posterior_densities([exact, da], params=names, columns=3).to_dict()["layout"]
    assert not [a for a in bare.get("annotations", []) if a.get("name", "").startswith("clipped:")]
    high, low, gap = rows_px(fig)
    assert (high, low) == rows_px(bare)[:2] and gap == pytest.approx(rows_px(bare)[2] + 2 * NOTE_LINE)
    assert fig["margin"]["t"] == bare["margin"]["t"] + 2 * NOTE_LINE


def test_a_downloads_figure_is_made_once_and_only_when_asked_for():
    """A titled copy of a figure for its files (figures.budget.with_scenario, 39 ms for the Compare figure) was made
    for every figure on every rerun; ui.downloads.file_figure makes it on the first click and keeps it for both
    buttons."""
    import plotly.graph_objects as go

    from ui.downloads import file_figure

    shown, titled, calls = go.Figure(), go.Figure(layout={"title": {"text": "for the file"}}), []
    assert not callable(shown)  # a figure is told from a function that makes one
    assert file_figure(shown)() is shown and file_figure(shown, titled)() is titled
    made = file_figure(shown, lambda: calls.append(1) or titled)
    assert not calls
    assert made() is titled and made() is titled and calls == [1]


def test_budget_axis_labels_do_not_overlap_on_a_phone():
    """The default grid with the sidebar's ε = 0.3 put "0.215" and "0.3" 20 px apart on a 390 px phone, one label
    over the other. Every value keeps its tick; a label that would overlap one already placed (powers of ten first,
    then shorter labels) is left blank, and the labels kept clear each other at the phone's plot width."""
    from figures.axes import CHAR_PX, PAD_PX, PHONE_PLOT_PX
    from figures.budget import tick_labels

    grid = [0.1, 0.215, 0.3, 0.464, 1.0, 2.15, 4.64, 10.0]
    assert tick_labels(grid) == ["0.1", "", "0.3", "", "1", "2.15", "4.64", "10"]
    assert tick_labels([0.1, 0.215, 0.464, 1.0, 2.15, 4.64, 10.0]) == ["0.1", "0.215", "0.464", "1", "2.15",
                                                                        "4.64", "10"]  # the default grid: all fit
    for ticks in (grid, list(np.geomspace(0.01, 10, 12)), [0.09, 0.1, 0.11, 1.0]):
        labels = tick_labels(ticks)
        assert all(labels[i] for i, t in enumerate(ticks) if float(np.log10(t)).is_integer())  # powers of ten kept
        logs = np.log10(ticks)
        px = (logs - logs[0]) / ((logs[-1] - logs[0]) * 1.1) * PHONE_PLOT_PX[0]
        kept = [i for i, s in enumerate(labels) if s]
        for a, b in zip(kept, kept[1:]):
            assert px[b] - px[a] >= (len(labels[a]) + len(labels[b])) * CHAR_PX / 2 + PAD_PX, (ticks, labels)
    fig = interval_plot(_sweep_table(), "theta", symbol="ε", truth=0.3)
    assert list(fig.to_dict()["layout"]["xaxis"]["tickvals"]) == [0.1, 1.0, 10.0]
