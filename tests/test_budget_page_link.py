"""The Privacy budget page after a stakeholder audit: its own choices (target T, the ε grid, "Your ε") travel in
the link; "Your ε" says it explores ε on this page and offers to set the sidebar's; downloads stand alone (a
title with the scenario, scenario-named files, the sweep as CSV); the "Choose ε" labels never pile up or run
off the plot; the parameter is θ everywhere."""
import json
import math
import re
from dataclasses import replace

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest
from streamlit.testing.v1 import AppTest
from app_support import APP, press_back

from engine.studies.sweep import epsilon_spec
from figures.budget import with_scenario
from figures.frontier import LABEL_PX, X_PAD, Y_TOP, frontier_figure, frontier_labels
from figures.protection import CHAR_PX, PAD_PX, PHONE_PLOT_PX
from ui import keys
from ui.compute import sweeps
from ui.params.query import budget_page_from_query, budget_page_to_query
from ui.params.scenario import Scenario
from ui.params.spec import to_spec_dict

#: the audit's link: Beta-binomial, n = 100, Laplace at ε = 0.1, the default grid
LINK = {"model": "beta_binomial", "n": "100", "prior.a": "1.0", "prior.b": "1.0", "mech": "laplace",
        "budget": "epsilon", "epsilon": "0.1", "data": "simulate", "truth": "0.3", "seed": "3",
        "methods": "naive,da_mcmc,exact", "chains": "2", "draws": "2000", "warmup": "500"}
#: that link's frontier (engine.protection_sweep and the exact sd on the default grid): four ε share sd ≈ 0.043
EPS = [0.1, 0.215, 0.464, 1.0, 2.15, 4.64, 10.0]
SD = [0.10936, 0.07164, 0.05068, 0.04440, 0.04307, 0.04302, 0.04294]
Q95 = [0.52498, 0.55354, 0.61396, 0.73106, 0.89567, 0.99043, 0.99995]
POWER = [0.05526, 0.06199, 0.07952, 0.13591, 0.42924, 0.95171, 0.99977]


def _open_budget_page(query):
    """The app opened on the Privacy budget page from a link, as a browser opens /privacy_budget?…"""
    at = AppTest.from_file(APP, default_timeout=240)
    for k, v in query.items():
        at.query_params[k] = v
    at.switch_page("pages/privacy_budget.py")
    return at.run()


def _texts(elements):
    return [e.value for e in elements]


# ---- 1. the page's choices in the link ------------------------------------------------------------------
def test_page_choices_round_trip_through_the_query_string():
    q = budget_page_to_query(target=0.044, grid=(0.1, 0.3, 1.0), your_eps=0.3)
    assert q == {"target": "0.044", "grid": "0.1,0.3,1.0", "your_eps": "0.3"}
    values, problems = budget_page_from_query(q)
    assert values == {"target": 0.044, "grid": (0.1, 0.3, 1.0), "your_eps": 0.3} and problems == []
    assert budget_page_to_query() == {}  # a choice that is not valid now is left out


@pytest.mark.parametrize("query, refused", [({"target": "-1"}, "target"), ({"target": "nan"}, "target"),
                                            ({"target": "abc"}, "target"), ({"grid": "0.1,-2"}, "grid"),
                                            ({"grid": "0.1,abc"}, "grid"), ({"your_eps": "3"}, "your_eps"),
                                            ({"grid": "0.1,1", "your_eps": "0.5"}, "your_eps")])
def test_a_link_value_that_does_not_read_is_refused_alone(query, refused):
    values, problems = budget_page_from_query({**query, "target": query.get("target", "0.05")}, (0.1, 1.0, 10.0))
    assert refused not in values and len(problems) == 1
    assert problems[0].startswith(f"link parameter {refused} = ") and " is invalid: " in problems[0]
    if refused != "target":
        assert values["target"] == 0.05  # the others still apply


def test_a_link_opens_the_page_on_its_target_grid_and_epsilon_and_the_url_keeps_them():
    at = _open_budget_page({**LINK, "target": "0.05", "grid": "0.1,0.3,1,3,10", "your_eps": "1"})
    assert not at.exception, [e.value for e in at.exception]
    assert at.text_input(key=keys.W_GRID).value == "0.1, 0.3, 1, 3, 10"
    assert float(at.text_input(key=keys.W_TARGET_SD).value) == 0.05
    assert at.select_slider(key=keys.W_STEP).value == 1.0
    assert any("**ε = 1**" in t and "T = 0.05" in t for t in _texts(at.success))
    query = dict(at.query_params)
    assert (query["target"], query["grid"], query["your_eps"]) == ("0.05", "0.1,0.3,1.0,3.0,10.0", "1.0")
    assert query["epsilon"] == "0.1" and query["model"] == "beta_binomial"  # the scenario's keys unchanged

    # ---- 2. "Your ε" says it explores ε here; the sidebar's ε changes only by the button ----
    assert at.select_slider(key=keys.W_STEP).label == "Your ε (explored on this page only)"
    caption = next(c for c in _texts(at.caption) if c.startswith("The sentence and the figures below are at"))
    assert "**ε = 1**" in caption and "the sidebar still states ε = 0.1" in caption
    assert any(t.startswith("**Every posterior at ε = 1**") and "the sidebar states ε = 0.1" in t
               for t in _texts(at.markdown))
    use = at.button(key=keys.W_STEP + "_to_sidebar")
    assert use.label == "Use ε = 1 in the sidebar"
    use.click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state[keys.SCENARIO].epsilon == 1.0 and at.query_params["epsilon"] == "1.0"
    assert any(c.startswith("Your ε = 1 is the sidebar's ε") for c in _texts(at.caption))
    assert not [b for b in at.button if b.key == keys.W_STEP + "_to_sidebar"]
    # the sweep over the grid is the same at any sidebar ε: read from the cache, not run again
    labels = [s.label for s in at.status]
    assert any(label.startswith("Sweep: ") and label.endswith("runs from cache") for label in labels), labels

    # ---- 3. scenario-named files (the camera button's name; the PNG/HTML buttons use the same) ----
    names = {c.key: json.loads(c.proto.config)["toImageButtonOptions"]["filename"]
             for c in at.get("plotly_chart") if c.key}
    stem = names[keys.SD_CHART].removesuffix("_sd_vs_epsilon_theta")
    assert re.fullmatch(r"beta_binomial_laplace_n100_simulate_eps0\.1-10_[0-9a-f]{6}", stem), names  # + scenario digits
    assert names[keys.INTERVAL_CHART] == f"{stem}_interval_vs_epsilon_theta"
    assert names[keys.FRONTIER_CHART] == f"{stem}_privacy_utility_frontier_theta"
    assert any(b.label == "Sweep table (CSV)" for b in at.get("download_button"))

    # ---- 5. θ, not theta, on the page ----
    assert at.text_input(key=keys.W_TARGET_SD).label == "Target posterior sd T for θ"
    frontier = json.loads(next(c for c in at.get("plotly_chart") if c.key == keys.FRONTIER_CHART).proto.spec)
    assert "θ" in frontier["layout"]["xaxis"]["title"]["text"]
    shown = _texts(at.markdown) + _texts(at.caption) + _texts(at.success) + _texts(at.warning)
    assert not [t for t in shown if "theta" in t]


def test_a_link_value_that_does_not_read_is_said_and_not_written_back():
    at = _open_budget_page({**LINK, "target": "-3", "grid": "0.1,0.3,1,3,10", "your_eps": "7"})
    assert not at.exception, [e.value for e in at.exception]
    warnings = [w for w in _texts(at.warning) if w.startswith("The link's page settings could not all be read")]
    assert len(warnings) == 2, _texts(at.warning)
    assert "link parameter target = '-3' is invalid" in warnings[0]
    assert "link parameter your_eps = '7' is invalid: must be a value of the ε grid (0.1, 0.3, 1, 3, 10)" in \
        warnings[1]
    assert at.text_input(key=keys.W_GRID).value == "0.1, 0.3, 1, 3, 10"  # the grid read
    assert float(at.text_input(key=keys.W_TARGET_SD).value) > 0  # the page's default T, not -3
    assert at.query_params["target"] != "-3" and at.query_params["your_eps"] != "7"


# ---- 3. downloads that stand alone --------------------------------------------------------------------
def test_a_download_is_titled_with_its_scenario_and_the_page_figure_is_left_alone():
    fig = go.Figure(layout={"title": {"text": "θ: posterior sd vs ε"}})
    words = sweeps.scenario_words(Scenario(model="beta_binomial", n=100, epsilon=0.1, seed=3), None, 100)
    assert words == ("Beta-binomial (proportion θ), n = 100; Laplace noise, sensitivity 1; simulated records "
                     "(truth 0.3, seed 3)")
    saved = with_scenario(fig, "θ: posterior sd vs ε, per method", words)
    assert saved.layout.title.text == "θ: posterior sd vs ε, per method"
    subtitle = saved.layout.title.subtitle.text.replace("<br>", " ")
    assert subtitle == ("Beta-binomial (proportion θ), n = 100 · Laplace noise, sensitivity 1 · simulated records "
                        "(truth 0.3, seed 3)")
    assert fig.layout.title.text == "θ: posterior sd vs ε"  # the figure on the page keeps its own title
    assert saved.layout.margin.t >= 38 + 22 * 3


def test_download_names_and_the_sweep_csv():
    s = Scenario(model="beta_binomial", mechanism="laplace", data="simulate")
    stem = sweeps.sweep_stem(s, 100, (0.1, 0.215, 10.0))
    assert re.fullmatch(r"beta_binomial_laplace_n100_simulate_eps0\.1-10_[0-9a-f]{6}", stem), stem
    # six digits of the scenario and the grid: another seed, or another grid with the same ends, is another name
    assert sweeps.sweep_stem(replace(s, seed=8), 100, (0.1, 0.215, 10.0)) != stem
    assert sweeps.sweep_stem(s, 100, (0.1, 1.0, 10.0)) != stem
    table = pd.DataFrame({"epsilon": [1.0, 0.1], "method": ["exact", "exact"], "param": ["theta", "theta"],
                          "mean": [0.3, 0.31], "sd": [0.04, 0.1], "q5": [0.23, 0.15], "q95": [0.37, 0.47],
                          "r_hat": [np.nan, np.nan], "ess_bulk": [np.nan, np.nan], "wall_time_s": [0.1, 0.1],
                          "converged": [True, True]})
    text = sweeps.sweep_csv(sweeps.Sweep(table=table, runs={}, skipped={}))
    lines = text.splitlines()
    # method_name: the legends' name beside the CLI's id (audit s25; "auto" read nothing like "Exact (best method)")
    assert lines[0] == "epsilon,method,method_name,param,mean,sd,q5,q95,r_hat,ess_bulk,converged"
    assert lines[1].startswith("0.1,exact,Exact (closed form),theta,0.31,0.1,0.15,0.47")  # sorted by ε per method
    # Gaussian noise ran each row at rho = eps^2 / 2: the file says it (its epsilon alone read as an (ε, δ) budget)
    gauss = sweeps.sweep_csv(sweeps.Sweep(table=table, runs={}, skipped={}), "gaussian").splitlines()
    assert gauss[0] == "epsilon,rho,method,method_name,param,mean,sd,q5,q95,r_hat,ess_bulk,converged"
    assert gauss[1].startswith(f"0.1,{0.1 ** 2 / 2},exact,Exact (closed form),theta"), gauss[1]


# ---- 4. the "Choose ε" labels -------------------------------------------------------------------------
def _boxes(labels, x, ys, plot_px):
    """Each label's box in pixels of a plot of ``plot_px`` over the figure's ranges, as plotly draws it."""
    width, height = plot_px
    span = max(x) - min(x)
    lo, hi = min(x) - X_PAD * span, max(x) + X_PAD * span
    out = []
    for lab in labels:
        px = (x[lab.index] - lo) / (hi - lo) * width + lab.dx
        py = ys[lab.line][lab.index] / Y_TOP * height + lab.dy  # the label's middle, up from the x axis
        wide = len(lab.text) * CHAR_PX + PAD_PX
        x0 = px if lab.side == "right" else px - wide
        out.append((x0, x0 + wide, py - LABEL_PX / 2, py + LABEL_PX / 2))
    return out


@pytest.mark.parametrize("plot_px", [PHONE_PLOT_PX, (1000.0, 300.0)])
def test_every_epsilon_is_labelled_once_and_no_labels_overlap_or_leave_the_plot(plot_px):
    """The audit at 1280 px: ε = 10, 2.15 and 1 piled near sd ≈ 0.043 and ε = 4.64 had no label; at 390 px the
    ε = 0.1 labels ran past the right edge. The offsets are worked out for a phone's plot; a larger plot only
    moves the points apart, so the boxes stay clear there too."""
    labels = frontier_labels(SD, Q95, POWER, EPS)
    belief = [lab for lab in labels if lab.line == 0]
    assert sorted(lab.text for lab in belief) == sorted(f"ε = {e:g}" for e in EPS)  # 4.64 included
    boxes = _boxes(labels, SD, (Q95, POWER), plot_px)
    for k, a in enumerate(boxes):
        assert -1e-9 <= a[0] and a[1] <= plot_px[0] + 1e-9, (labels[k], a)  # inside the plot sideways
        assert a[3] <= plot_px[1] + 1e-9, (labels[k], a)
        for m, b in enumerate(boxes[:k]):
            assert not (a[0] < b[1] and b[0] < a[1] and a[2] < b[3] and b[2] < a[3]), (labels[k], labels[m])
    crowded = {lab.text for lab in belief if lab.leader}
    assert {"ε = 4.64"} <= crowded and "ε = 0.215" not in crowded  # moved ones get a leader, free ones do not


def test_the_frontier_keeps_its_traces_and_its_chosen_circle_inside_the_axis():
    fig = frontier_figure(EPS, Q95, POWER, SD, utility_label="exact posterior sd of θ", chosen=0.1)
    kinds = [t.meta["kind"] for t in fig.data]
    assert kinds[:2] == ["q95", "power_at_5pct"] and "chosen" in kinds
    assert all(t.text is None for t in fig.data[:2])  # labels are annotations, each ε once on the belief line
    lo, hi = fig.layout.xaxis.range
    span = max(SD) - min(SD)
    circle_px = 8 + 3  # the chosen marker's radius and line, against a phone's 270 px plot
    assert (hi - max(SD)) / (hi - lo) * PHONE_PLOT_PX[0] >= circle_px and min(SD) - lo >= X_PAD * span * 0.999
    on_belief = [a.text for a in fig.layout.annotations if any(math.isclose(a.y, q) for q in Q95)]
    assert sorted(on_belief) == sorted(f"ε = {e:g}" for e in EPS)
    assert math.isclose(fig.layout.yaxis.range[1], Y_TOP)


def test_an_uploads_sweep_says_its_files_show_more_than_one_release():
    """Every ε of the grid draws its own release of the uploaded records: the page's files are the curator's, not a
    release's (Compare's downloads keep what reads the records out unless asked)."""
    at = _open_budget_page({**LINK, "methods": "naive,exact"})
    assert not [c for c in _texts(at.caption) if c.startswith("From the uploaded records")]
    at.radio(key=keys.W_DATA).set_value("csv").run()
    at.file_uploader(key=keys.W_CSV).set_value(("r.csv", b"x\n" + b"1\n0\n0\n" * 20, "text/csv")).run()
    assert not at.exception, [e.value for e in at.exception]
    assert any(c.startswith("From the uploaded records: every ε of the grid drew its own release") for c in
               _texts(at.caption))


@pytest.mark.parametrize("fields", [
    {"mechanism": "laplace", "budget_form": "epsilon", "epsilon": 0.1},
    {"mechanism": "gaussian", "budget_form": "rho", "rho": 0.02},
    {"mechanism": "gaussian", "budget_form": "epsilon_delta", "epsilon": 0.5, "delta": 1e-5},
    {"mechanism": "randomized_response", "budget_form": "coin", "truth_prob": 0.5, "model": "beta_binomial"},
    {"mechanism": "discrete_laplace", "budget_form": "epsilon", "epsilon": 3.0, "model": "poisson_gamma"}])
def test_the_grid_computations_key_holds_every_cell_spec_and_not_the_sidebars_budget(fields):
    """The sweep, its cost, the advice, fresh releases and the frontier are keyed by the spec at KEY_EPSILON: every
    grid cell's spec (engine.epsilon_spec) is the one the scenario's own spec gives, and the sidebar's ε is not in
    the key."""
    s = Scenario(**{"model": "beta_binomial", **fields})
    for e in (0.05, 1.0, 7.5):
        assert epsilon_spec(sweeps.grid_spec(s, None), e) == epsilon_spec(to_spec_dict(s, None), e)
    other = {"epsilon": 2.0} if "epsilon" in fields else {"rho": 0.5} if "rho" in fields else {"truth_prob": 0.8}
    assert sweeps.grid_spec_text(replace(s, **other), None) == sweeps.grid_spec_text(s, None)


def test_back_restores_the_pages_own_choices_with_the_scenario():
    """Back restored the sidebar's scenario but left the page's target, grid and "Your ε" as they were: they were
    read from the link on a session's first run only."""
    at = _open_budget_page({**LINK, "target": "0.05", "grid": "0.1,0.3,1,3,10", "your_eps": "1"})
    before = dict(at.query_params)
    at.text_input(key=keys.W_GRID).set_value("0.2, 2, 20").run()
    at.select_slider(key=keys.W_STEP).set_value(20.0).run()
    assert not at.exception, [e.value for e in at.exception]
    assert (at.query_params["grid"], at.query_params["your_eps"]) == ("0.2,2.0,20.0", "20.0")
    press_back(at, before)
    assert not at.exception, [e.value for e in at.exception]
    assert at.text_input(key=keys.W_GRID).value == "0.1, 0.3, 1, 3, 10"
    assert at.select_slider(key=keys.W_STEP).value == 1.0
    assert float(at.text_input(key=keys.W_TARGET_SD).value) == 0.05
    assert dict(at.query_params) == before
    # Back to an entry with the grid alone: the others go back to the page's defaults
    press_back(at, {**LINK, "grid": "0.1,1,10"})
    assert not at.exception, [e.value for e in at.exception]
    assert at.text_input(key=keys.W_GRID).value == "0.1, 1, 10"
    assert at.select_slider(key=keys.W_STEP).value == 0.1  # the default: the sidebar's ε
    assert at.text_input(key=keys.W_TARGET_SD).value != "0.05"
    # a URL without any of them is a page switch (the navigation drops the query): the choices stay
    at.text_input(key=keys.W_GRID).set_value("0.2, 2, 20").run()
    at.query_params.clear()
    at.query_params.update(LINK)
    at.run()
    assert at.text_input(key=keys.W_GRID).value == "0.2, 2, 20"
    # and an ordinary rerun keeps what the user typed
    at.text_input(key=keys.W_GRID).set_value("0.5, 5").run()
    at.run()
    assert at.text_input(key=keys.W_GRID).value == "0.5, 5"


def test_a_page_choice_sent_with_the_url_before_the_last_run_is_kept():
    """The grid changed twice in quick succession, the second change carrying the URL from before the first: the
    page took it for Back and put the old grid back. An edit is kept whatever URL comes with it."""
    at = _open_budget_page({**LINK, "grid": "0.1,0.3,1,3,10"})
    stale = dict(at.query_params)
    at.text_input(key=keys.W_GRID).set_value("0.2, 2, 20").run()
    at.query_params.clear()
    at.query_params.update(stale)  # the URL the browser still had when it sent the second change
    at.text_input(key=keys.W_GRID).set_value("0.5, 5").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.text_input(key=keys.W_GRID).value == "0.5, 5"
    assert at.query_params["grid"] == "0.5,5.0"


def test_use_epsilon_in_the_sidebar_keeps_a_value_typed_just_before():
    """n typed into the sidebar (not yet sent) and then "Use ε = 1 in the sidebar" clicked: both reach the server in
    one rerun, and the button's action loaded the scenario of the run that drew it with the new ε, so n went back
    to 100 (5 of 5, audit s24 races). The click now sets the ε box alone."""
    at = _open_budget_page({**LINK, "grid": "0.1,0.3,1,3,10", "your_eps": "1"})
    at.text_input(key=keys.W_N).set_value("67")
    at.button(key=keys.W_STEP + "_to_sidebar").click().run()
    assert not at.exception, [e.value for e in at.exception]
    scenario = at.session_state[keys.SCENARIO]
    assert (scenario.n, scenario.epsilon) == (67, 1.0), (scenario.n, scenario.epsilon)
    assert (at.query_params["n"], at.query_params["epsilon"]) == ("67", "1.0")
    assert at.text_input(key=keys.W_N).value == "67"


def test_the_methods_to_sweep_travel_in_the_link():
    """A presenter removed DA-MCMC from the sweep and shared the link: it reopened with DA-MCMC and its "not
    converged" marks back."""
    q = budget_page_to_query(sweep=["naive", "auto"])
    assert q == {"sweep": "naive,auto"} and budget_page_from_query(q)[0]["sweep"] == ("naive", "auto")
    values, problems = budget_page_from_query({"sweep": "naive,bogus"})
    assert "sweep" not in values and problems[0].startswith("link parameter sweep = ")
    at = _open_budget_page({**LINK, "sweep": "naive,exact"})
    assert not at.exception, [e.value for e in at.exception]
    assert at.multiselect(key=keys.W_SWEEP_METHODS).value == ["naive", "exact"]
    at.multiselect(key=keys.W_SWEEP_METHODS).set_value(["exact"]).run()
    assert at.query_params["sweep"] == "exact"
    reopened = _open_budget_page(dict(at.query_params))
    assert reopened.multiselect(key=keys.W_SWEEP_METHODS).value == ["exact"]


def test_the_default_grid_holds_the_sidebars_epsilon_and_your_epsilon_follows_the_sidebar():
    """The demo's ε = 0.3 was not on the default grid: "Your ε" opened at 0.215 and the page's sentence disagreed
    with What it protects; and it stayed put when the sidebar's ε changed to a grid value."""
    demo = {**LINK, "epsilon": "0.3"}
    at = _open_budget_page(demo)
    assert not at.exception, [e.value for e in at.exception]
    assert at.text_input(key=keys.W_GRID).value == "0.1, 0.215, 0.3, 0.464, 1, 2.15, 4.64, 10"
    assert at.select_slider(key=keys.W_STEP).value == 0.3
    at.text_input(key=keys.W_EPSILON).set_value("1").run()
    assert at.select_slider(key=keys.W_STEP).value == 1.0  # on the grid: "Your ε" follows
    at.select_slider(key=keys.W_STEP).set_value(4.64).run()
    at.run()
    assert at.select_slider(key=keys.W_STEP).value == 4.64  # the user's own choice stays while the sidebar does
    at.text_input(key=keys.W_EPSILON).set_value("0.7").run()
    assert at.select_slider(key=keys.W_STEP).value == 4.64  # off the grid: it stays
    rho = _open_budget_page({**LINK, "mech": "gaussian", "budget": "rho", "rho": "0.08"})  # ε = √(2ρ) = 0.4
    assert "0.4" in rho.text_input(key=keys.W_GRID).value.split(", ")
    assert rho.select_slider(key=keys.W_STEP).value == 0.4


#: the demo's frontier (Beta-binomial n = 40, Laplace, seed 7) on the default log grid: "ε = 0.1" sat on its line
DEMO_SD = [0.211, 0.15971, 0.10274, 0.07872, 0.07043, 0.06914, 0.06708]


def _segments(x, ys, plot_px):
    """Both lines' segments in pixels of a plot of ``plot_px`` (the figure's x range, y 0..Y_TOP)."""
    width, height = plot_px
    span = max(x) - min(x)
    lo, hi = min(x) - X_PAD * span, max(x) + X_PAD * span
    u = [(v - lo) / (hi - lo) * width for v in x]
    return [(u[k], y[k] / Y_TOP * height, u[k + 1], y[k + 1] / Y_TOP * height) for y in ys for k in range(len(x) - 1)]


def _crosses(box, seg, steps=200):
    """Whether the segment passes through the box (sampled along the segment)."""
    xa, ya, xb, yb = seg
    return any(box[0] < xa + (xb - xa) * t < box[1] and box[2] < ya + (yb - ya) * t < box[3]
               for t in (k / steps for k in range(steps + 1)))


@pytest.mark.parametrize("sd", [SD, DEMO_SD], ids=["audit link", "demo"])
@pytest.mark.parametrize("plot_px", [PHONE_PLOT_PX, (800.0, 300.0)])
def test_no_line_runs_through_a_label(sd, plot_px):
    """The presenter's demo: the belief line coming in to ε = 0.1's point (the right end, its label on the left)
    struck "ε = 0.1" through, at 390 and at 1280 px. Every label, belief and power, is clear of both lines."""
    labels = frontier_labels(sd, Q95, POWER, EPS, plot_px)
    segments = _segments(sd, (Q95, POWER), plot_px)
    for lab, box in zip(labels, _boxes(labels, sd, (Q95, POWER), plot_px)):
        assert not any(_crosses(box, seg) for seg in segments), lab
    assert sorted(lab.text for lab in labels if lab.line == 0) == sorted(f"ε = {e:g}" for e in EPS)


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), float("inf"), "abc"])
def test_epsilon_spec_refuses_a_budget_that_is_not_positive(bad):
    """engine.epsilon_spec(spec, 0) returned a spec with ε = 0 without a word."""
    with pytest.raises(ValueError, match=r"^epsilon = .* is invalid: must be a finite number > 0$"):
        epsilon_spec(to_spec_dict(Scenario(), None), bad)


def test_epsilon_spec_leaves_its_spec_as_it_was_and_gives_a_new_mechanism_table():
    """epsilon_spec shares the spec's other tables (an upload's inline records were deep-copied for every ε of a grid
    and every rerun): the spec it reads stays as it was, and the copy's [mechanism] is its own."""
    spec = to_spec_dict(Scenario(), None)
    before = json.dumps(spec, sort_keys=True)
    out = epsilon_spec(spec, 2.0)
    assert json.dumps(spec, sort_keys=True) == before
    assert out["mechanism"] is not spec["mechanism"] and out["mechanism"]["epsilon"] == 2.0
    assert out["data"] is spec["data"]


def test_the_grid_is_checked_once_per_scenario_and_grid_not_on_every_rerun(monkeypatch):
    """A session 21 note: sweep() encoded and prepared the spec once per grid ε on every rerun (to refuse a bad ε
    before anything runs): with an upload, the records' JSON per ε per rerun. grid_checked is cached by the spec's
    text and the grid; a refusal still names the value on every rerun."""
    from ui.compute.records import spec_json

    spec, calls = sweeps.grid_spec(Scenario(model="beta_binomial", n=37, epsilon=0.3, seed=5), None), []
    monkeypatch.setattr(sweeps, "epsilon_spec", lambda spec, eps: calls.append(eps) or epsilon_spec(spec, eps))
    text, grid = spec_json(spec), json.dumps([0.1, 0.5, 2.0])
    assert sweeps.grid_checked(text, grid, _spec=spec) and sweeps.grid_checked(text, grid, _spec=spec)
    assert calls == [0.1, 0.5, 2.0]  # the second rerun asked the cache
    for _ in range(2):
        with pytest.raises(ValueError, match="epsilon"):
            sweeps.grid_checked(text, json.dumps([0.1, -1.0]), _spec=spec)
    assert calls == [0.1, 0.5, 2.0] + [0.1, -1.0] * 2


def test_the_sidebars_epsilon_and_a_links_your_eps_find_the_same_grid_point():
    """The page put the sidebar's ε = 1/3 on its grid as 0.333333 (6 significant digits, matched to 1e-6) while a
    link's your_eps was matched to 1e-9: a link carrying your_eps = 1/3 was told it was not a value of that grid.
    One lookup (ui.params.parsing.grid_value), one tolerance, for both."""
    import pathlib

    from ui.params.parsing import GRID_REL_TOL, grid_value

    grid = (0.1, 0.333333, 1.0)
    assert grid_value(1 / 3, grid) == 0.333333 and grid_value(0.3, grid) is None
    assert grid_value(None, grid) is None and grid_value(math.nan, grid) is None
    assert grid_value(0.333333 * (1 + GRID_REL_TOL / 2), grid) == 0.333333
    values, problems = budget_page_from_query({"grid": "0.1, 0.333333, 1", "your_eps": repr(1 / 3)})
    assert values["your_eps"] == 0.333333 and problems == [], problems
    page = (pathlib.Path(__file__).resolve().parents[1] / "pages" / "privacy_budget.py").read_text()
    assert "rel_tol" not in page and "grid_value(own" in page  # the page has no tolerance of its own


@pytest.mark.parametrize("model, exact", [("normal_known_sd", "Exact (numerical)"),
                                          ("beta_binomial", "Exact (closed form)")])
def test_the_sweeps_legends_name_exact_as_its_runs_do(model, exact):
    """The normal mean's exact posterior is a grid: Compare's legend said "Exact (numerical)", the Privacy budget
    page's legends "Exact (closed form)" for the same runs. The legends now name a method as its runs call
    themselves; the exact sd's dotted line is "computed, not from draws" (a mixture or a grid, never draws)."""
    query = ({**LINK, "sweep": "naive,exact", "target": "0.05"} if model == "beta_binomial" else
             {"model": "normal_known_sd", "n": "50", "mech": "laplace", "epsilon": "1", "methods": "naive,exact",
              "sweep": "naive,exact", "grid": "0.3,1,3", "target": "0.3"})
    at = _open_budget_page(query)
    assert not at.exception, [e.value for e in at.exception]
    charts = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    interval, sd = charts[0], charts[1]
    for fig in (interval, sd):
        names = [t.get("name") for t in fig["data"] if (t.get("meta") or {}).get("method") == "exact"]
        assert names and set(names) == {exact}, names
    dotted = [t["name"] for t in sd["data"] if (t.get("meta") or {}).get("kind") == "exact_sd"]
    assert dotted == ["exact sd (computed, not from draws)"], dotted


def test_fresh_releases_name_exact_as_the_sweeps_legends_do():
    """The fresh releases' caption (and their figure's title in its downloads) said "Exact (closed form)" for the
    normal mean's grid posterior, under legends that say "Exact (numerical)"; they now take the sweep's own label."""
    query = {"model": "normal_known_sd", "n": "50", "mech": "laplace", "epsilon": "1", "methods": "naive,exact",
             "sweep": "naive,exact", "grid": "0.3,3"}
    at = _open_budget_page(query)
    at.session_state[keys.W_FRESH_COUNT] = 3  # 3 releases an ε from the first run (the default 10 took 40 s more)
    at.toggle(key=keys.W_FRESH).set_value(True).run()
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    assert at.text_input(key=keys.W_FRESH_COUNT).value == "3"
    words = " ".join(_texts(at.caption))
    assert "one release's Exact (numerical) posterior mean" in words, words
    assert "closed form" not in " ".join(_texts(at.caption) + _texts(at.info))


def test_a_method_whose_runs_name_themselves_differently_gets_its_plain_name():
    """A beta-binomial whose exact posterior is a mixture at a large ε and a grid at a small one (the mixture too
    long): neither "closed form" nor "numerical" is true of the whole line."""
    from types import SimpleNamespace

    from ui.compute.records import MethodRun

    def run(method, info):
        return MethodRun(method=method, result=SimpleNamespace(method=method, info=info))

    runs = {0.1: {"exact": run("exact", {"representation": "grid"}), "naive": run("naive", {})},
            10.0: {"exact": run("exact", {"representation": "mixture"}), "naive": run("naive", {}),
                   "auto": MethodRun(method="auto", error="refused")}}
    labels = sweeps.Sweep(table=pd.DataFrame(), runs=runs, skipped={}).labels
    assert labels == {"exact": "Exact", "naive": "Naive"}
    runs[10.0]["exact"] = run("exact", {"representation": "grid"})
    assert sweeps.Sweep(table=pd.DataFrame(), runs=runs, skipped={}).labels["exact"] == "Exact (numerical)"
