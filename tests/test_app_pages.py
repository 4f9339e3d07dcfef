"""AppTest smoke tests: every page with its defaults, and with bad input (the error names the field,
the value and what is allowed, sits in the sidebar, keeps the entry, and the page carries on)."""

import json
import re

import plotly.graph_objects as go
import pytest
from streamlit.testing.v1 import AppTest

from app_support import assert_charts_fit_a_phone, open_app, press_back, record_downloads

from figures.labels import METHOD_LABELS
from ui import keys
from ui.params.parsing import format_number
from ui.params.query import from_query, to_query
from ui.params.scenario import MECHANISMS, MODELS, Scenario
from ui.presets import EPSILON_ONE, PRESETS

TIMEOUT = 120  # the first DA-MCMC run may compile the numba kernels
PAGES = ("pages/compare.py", "pages/privacy_budget.py", "pages/diagnostics.py", "pages/learn.py")


def _open(page: str = "pages/compare.py", query: dict | None = None) -> AppTest:
    return open_app(page, query, TIMEOUT)


def _texts(elements) -> list[str]:
    return [e.value for e in elements]


def _scenario_line(at: AppTest) -> str:
    """The Compare page's statement of the scenario: its line (model, n, release, truth) and the posterior
    figure's title (the mechanism, stated once on the page: issue 20 item 14)."""
    line = next(t for t in _texts(at.markdown) if "release **s_dp" in t)
    title = json.loads(at.get("plotly_chart")[0].proto.spec)["layout"]["title"]["text"].replace("<br>", " ")
    return f"{line} | {title}"


def test_the_mechanism_is_stated_once_on_compare():
    at = _open()
    mechanism = "Laplace noise, scale b = 3.333; pure 0.3-DP (sensitivity 1)"
    assert _scenario_line(at).endswith(f"| {mechanism}")
    texts = _texts(at.markdown) + _texts(at.caption) + _texts(at.sidebar.caption)
    assert not [t for t in texts if "scale b = 3.333" in t]
    at.switch_page("pages/diagnostics.py").run()  # a page without the figure keeps it in the sidebar
    assert any(mechanism in t for t in _texts(at.sidebar.caption))


def test_a_gaussian_is_stated_with_the_pages_symbols():
    """The figure's title and the sidebar's implied noise read "sigma = 1; 0.5-zCDP" beside boxes labelled σ and ρ:
    the same symbols now, and ρ named as the budget it is."""
    from dataclasses import replace

    at = _open(query=to_query(replace(Scenario(), mechanism="gaussian", budget_form="rho", rho=0.5)))
    _assert_clean(at)
    assert _scenario_line(at).endswith("| Gaussian noise, σ = 1; zCDP with ρ = 0.5 (L2 sensitivity 1)")
    at.switch_page("pages/diagnostics.py").run()
    assert any("σ = 1; zCDP with ρ = 0.5" in t for t in _texts(at.sidebar.caption))


def test_every_figure_has_a_name_for_screen_readers():
    """st.plotly_chart gives a chart no accessible name unless it is told one (``alt``): a figure carries its
    title, its axes and its legend in words (figures.axes.alt_text). The other pages' charts are checked in
    test_page_renders_with_defaults and on What it protects."""
    from figures.axes import alt_text

    at = _open()
    (chart,) = at.get("plotly_chart")
    alt = chart.proto.alt
    assert alt.startswith("Laplace noise, scale b = 3.333; pure 0.3-DP (sensitivity 1). posterior density against "
                          "success probability θ"), alt
    assert "Shown: Naive, DA-MCMC, ABC rejection, OPS: 100 released posterior draws (a private release" in alt, alt
    assert "Exact (best method)" in alt and "<br>" not in alt
    fig = go.Figure(go.Scatter(x=[0], y=[0], name="a<br>b"))
    fig.add_traces([go.Scatter(x=[0], y=[0], name=str(i)) for i in range(12)])
    assert alt_text(fig) == "Shown: a b, 0, 1, 2, 3, 4, 5, 6 and 5 more."
    assert alt_text(go.Figure()) == "A figure"


def _assert_clean(at: AppTest) -> None:
    assert not at.exception, _texts(at.exception)
    assert not at.error, _texts(at.error)


# --------------------------------------------------------------------------- defaults
@pytest.mark.parametrize("page", PAGES)
def test_page_renders_with_defaults(page):
    at = _open(page)
    _assert_clean(at)
    assert at.title[0].value
    assert_charts_fit_a_phone(at)
    if page == "pages/compare.py":
        assert len(at.get("plotly_chart")) == 1
        table = at.dataframe[0].value
        assert {"Naive", "DA-MCMC", "ABC rejection", "OPS", "Exact (best method)", "Confidential data"} == \
            set(table["method"])
        assert set(table["converged"]) <= {"yes", "yes (independent)"}
        assert len(at.download_button) == 6  # draws, summary table, InferenceData, scenario, figure HTML and PNG
        line = _scenario_line(at)
        assert "pure 0.3-DP" in line and "true θ = 0.3" in line
        texts = _texts(at.markdown)
        assert any(t.startswith("##### Naive is") and "misses θ = 0.3" in t for t in texts)  # the demo's point
    elif page == "pages/privacy_budget.py":
        assert len(at.get("plotly_chart")) == 4  # interval, sd, the privacy/utility frontier, posterior at one epsilon
        # the sd is the exact posterior's own (a mixture or, for the clamped models, a grid: not "closed form")
        assert any("Smallest ε on the grid" in s and "computed from the exact posterior itself, not estimated from "
                   "draws" in s for s in _texts(at.success))
    elif page == "pages/diagnostics.py":
        assert len(at.get("plotly_chart")) == 3  # acceptance, trace, rank
        assert any(m.label == "exp(-ε) bound" and m.value == "0.7408" for m in at.metric)  # exp(-0.3), as acceptance
        assert any("its mean (dashed) and its lowest sweep (dotted)" in c for c in _texts(at.caption))
        assert any("has converged" in t for t in _texts(at.success))  # the verdict at the top
    else:
        assert {b.key for b in at.button} >= {keys.preset_key(p.name) for p in PRESETS}


# --------------------------------------------------------------------------- bad input
def _set_epsilon_zero(at):
    at.text_input(key=keys.W_EPSILON).set_value(str(0.0)).run()


def _set_s_dp(text):
    def act(at):
        at.radio(key=keys.W_DATA).set_value("s_dp").run()
        at.text_input(key=keys.s_dp_key("beta_binomial")).input(text).run()
    return act


def _upload(content: bytes):
    def act(at):
        at.radio(key=keys.W_DATA).set_value("csv").run()
        at.file_uploader(key=keys.W_CSV).set_value(("records.csv", content, "text/csv")).run()
    return act


def _set_theta(value):
    def act(at):
        at.text_input(key=keys.truth_key("beta_binomial")).set_value(str(value)).run()
    return act


def _set_grid(text):
    def act(at):
        at.text_input(key=keys.W_GRID).input(text).run()
    return act


#: Issue 20 item 12: errors in the page's language (the box's label, what is allowed, what was entered), not spec
#: fields; an uploaded file's bad value with its line.
BAD_INPUTS = [
    ("pages/compare.py", _set_epsilon_zero, "ε (epsilon) must be a finite number > 0 (you entered 0)."),
    ("pages/compare.py", _upload(b"x\n1\nyes\n0\n"), "Line 3 of the uploaded file (column x) holds yes: must be a number."),
    ("pages/compare.py", _upload(b""), "The uploaded file is empty"),
    ("pages/compare.py", _upload(b"x\n0\n2\n"), "Line 3 of the uploaded file (record 2) holds 2: Beta-binomial records "
                                                 "must be 0 or 1."),
    ("pages/compare.py", _set_s_dp("3, 4"), "Released s_dp must be a list of finite numbers of length 1 (you entered "
                                            "2 numbers: 3, 4)."),  # as typed, and how many
    ("pages/compare.py", _set_s_dp("three"), "Released s_dp must be a number, e.g. 23.5 (you entered three)."),
    ("pages/compare.py", _set_theta(1.5), "True θ (theta) must be in [0, 1] (you entered 1.5)."),
    ("pages/compare.py", _set_theta("0,5"), 'True θ (theta) = "0,5" is not a number: write it with a point for decimals, e.g. 0.5'),
    ("pages/privacy_budget.py", _set_grid("0.5, abc"), "ε grid = '0.5, abc' is invalid: must be a list of "
                                                       "numbers"),
    ("pages/privacy_budget.py", _set_epsilon_zero, "ε (epsilon) must be a finite number > 0"),
    ("pages/diagnostics.py", _set_s_dp("1, 2, 3"), "Released s_dp must be a list of finite numbers of length 1"),
]


@pytest.mark.parametrize("page, act, message", BAD_INPUTS,
                         ids=[f"{p.split('/')[1][:-3]}-{m.split(' ')[0]}-{i}" for i, (p, _, m) in
                              enumerate(BAD_INPUTS)])
def test_bad_input_shows_error_and_page_survives(page, act, message):
    at = _open(page)
    act(at)
    assert not at.exception, _texts(at.exception)
    errors = _texts(at.error)
    assert any(message in e for e in errors), errors
    # the error sits next to the inputs (sidebar), the page keeps its title and navigation works on
    assert any(message in e.value for e in at.sidebar.error) or page == "pages/privacy_budget.py"
    assert at.title[0].value
    at.switch_page("pages/learn.py").run()
    _assert_clean(at)


def test_bad_entry_is_kept_and_fixing_it_brings_results_back():
    at = _open()
    _set_epsilon_zero(at)
    assert at.text_input(key=keys.W_EPSILON).value == "0.0"
    assert not at.get("plotly_chart")
    at.text_input(key=keys.W_EPSILON).set_value(str(2.0)).run()
    _assert_clean(at)
    assert "pure 2-DP" in _scenario_line(at) and len(at.get("plotly_chart")) == 1


def test_each_box_says_what_is_wrong_with_its_own_text():
    """ε's box held "0,5" under "ε (epsilon) must be a finite number > 0 (you entered -1)", the -1 typed before it;
    and while n's box held "4o", a bad ε said nothing."""
    at = _open()
    at.text_input(key=keys.W_EPSILON).input("-1").run()
    assert any("(you entered -1)" in e for e in _texts(at.sidebar.error)), _texts(at.sidebar.error)
    at.text_input(key=keys.W_EPSILON).input("0,5").run()
    errors = _texts(at.sidebar.error)
    assert any(e.startswith('ε (epsilon) = "0,5" is not a number') for e in errors), errors
    assert not any("(you entered -1)" in e for e in errors), errors
    at.text_input(key=keys.W_EPSILON).input("-1").run()
    at.text_input(key=keys.W_N).input("4o").run()
    errors = _texts(at.sidebar.error)
    assert any('"4o" is not a' in e for e in errors) and any("(you entered -1)" in e for e in errors), errors
    assert at.text_input(key=keys.W_N).value == "4o" and at.text_input(key=keys.W_EPSILON).value == "-1"


def test_the_comparison_fits_a_desktop_and_names_its_time_for_what_it_measures():
    """At 1,400 px the ESS header read "ESS bulk / t" and the last column was cut: a one-parameter model's table no
    longer repeats its parameter on every row. At 1,280 px the last column, the sampler's time, was cut again: the
    time moved to the caption beside the draws, one per method, and says what it measures (the sampler's own, below
    the run log's, which also counts the summaries)."""
    at = _open()
    _assert_clean(at)
    table = at.dataframe[0].value
    columns = list(table.columns)
    assert "parameter" not in columns and columns[-1] == "acceptance", columns
    assert not {"sampler (s)", "wall time (s)", "draws"} & set(columns), columns
    caption = next(c.value for c in at.caption if c.value.startswith("Draws and the sampler's wall-clock time"))
    assert "run log" in caption
    for method in table["method"]:
        assert f"{method}: " in caption and re.search(rf"{re.escape(method)}: [\d,]+ draws, \d+\.\d{{3}} s", caption), \
            (method, caption)
    from ui.terms import text_columns
    # its header is 80 px of text with 8 px of padding each side (measured at 1,280 px): 100 holds it, "small" cut it
    assert text_columns({"ESS bulk / tail": ""})["ESS bulk / tail"]["width"] >= 96


def test_the_released_statistics_help_writes_the_log_linear_tables_as_the_paper_does():
    """The tooltip read "the K tables n_ij^k", code for the paper's notation; it writes it as it writes x̃ᵀỹ, in
    Unicode."""
    at = _open()
    at.radio(key=keys.W_DATA).set_value("s_dp").run()
    tip = at.text_input(key=keys.s_dp_key("beta_binomial")).help
    assert "the K tables nᵢⱼ⁽ᵏ⁾ in order (k = 1, …, K)" in tip and "n_ij" not in tip


def test_a_release_error_sits_under_its_box():
    """A lecturer typed s_dp = twelve: the message showed below the seed and the dp-wizard expander, away from the
    box outlined in red. It now follows the box, above the seed."""
    at = _open()
    _set_s_dp("twelve")(at)
    order = []

    def walk(node):
        for child in getattr(node, "children", {}).values():
            order.append((type(child).__name__, getattr(child, "label", None) or getattr(child, "value", None)))
            walk(child)

    walk(at.sidebar)
    at_box = order.index(("TextInput", "Released s_dp"))
    kind, text = order[at_box + 1]
    assert kind == "Error" and str(text).startswith("Released s_dp must be a number"), order[at_box:at_box + 3]
    assert order.index(("TextInput", "Seed")) > at_box + 1


def test_text_entry_is_kept_after_error():
    at = _open()
    _set_s_dp("1, two")(at)
    assert at.text_input(key=keys.s_dp_key("beta_binomial")).value == "1, two"
    assert any("Released s_dp must be a number, e.g. 23.5 (two is not a number)" in e and "(you entered 1, two)" in e
               for e in _texts(at.sidebar.error))


# --------------------------------------------------------------------------- data sources and links
def test_valid_csv_upload_sets_n_and_runs():
    at = _open()
    _upload(b"admitted\n" + b"\n".join([b"1", b"0", b"0"] * 10) + b"\n")(at)
    _assert_clean(at)
    assert "n = 30 records, from the uploaded file" in _texts(at.sidebar.caption)
    assert "Confidential data" in set(at.dataframe[0].value["method"])


def test_an_uploads_downloads_leave_out_what_the_records_show_directly():
    """An audit uploaded 500 records (139 ones) and downloaded the draws: 4,000 rows of the confidential-data
    posterior, whose mean 0.278968 gives back 0.278968 × 502 − 1 = 139.04, the exact count, and OPS's draws, a
    second release of the records. The files now hold only what reads the release, unless the box is ticked; the
    page shows both either way, and the figure's own camera button (which would save them) is removed."""
    at = _open()
    _upload(b"employed\n" + b"\n".join([b"1"] * 14 + [b"0"] * 36) + b"\n")(at)
    _assert_clean(at)
    assert {"Confidential data", "OPS"} <= set(at.dataframe[0].value["method"])
    box = at.checkbox(key=keys.W_SHARE_DIRECT)
    assert box.value is False and "the confidential-data posterior and OPS" in box.label
    netcdf = at.selectbox(key=keys.W_NETCDF_METHOD)
    assert "ops" not in netcdf.options and "OPS" not in netcdf.options and len(netcdf.options) >= 2
    config = json.loads(at.get("plotly_chart")[0].proto.config)
    assert "toImage" in config["modeBarButtonsToRemove"]
    box.check().run()
    assert "OPS" in at.selectbox(key=keys.W_NETCDF_METHOD).options
    assert "toImage" not in json.loads(at.get("plotly_chart")[0].proto.config)["modeBarButtonsToRemove"]


def test_every_figure_keeps_only_the_camera_and_the_reset_in_its_toolbar():
    """Phone audit s23: a touch screen shows plotly's toolbar always, and its eight buttons covered the figure's
    title at 390 px; each was also a Tab stop. Every figure on Compare keeps the camera and the axes' reset only."""
    from ui.downloads import TOOLBAR_REMOVED
    at = _open()
    _assert_clean(at)
    charts = at.get("plotly_chart")
    assert charts
    for c in charts:
        removed = json.loads(c.proto.config)["modeBarButtonsToRemove"]
        assert set(TOOLBAR_REMOVED) <= set(removed) and "resetScale2d" not in removed, removed


def test_an_uploads_titled_figure_file_leaves_out_what_the_records_show_directly(monkeypatch):
    """Audit s21 item 6: the Compare files now carry a title and the scenario (figures.budget.with_scenario); for an
    upload they still hold only what reads the release, and the scenario names no record."""
    from figures import budget

    files, titled = [], budget.with_scenario
    monkeypatch.setattr(budget, "with_scenario", lambda fig, *a, **k: files.append(titled(fig, *a, **k)) or files[-1])
    downloads = record_downloads(monkeypatch)
    at = _open()
    _upload(b"employed\n" + b"\n".join([b"1"] * 14 + [b"0"] * 36) + b"\n")(at)
    _assert_clean(at)
    assert not files  # titled for a click, not on every rerun
    downloads["Figure (HTML)"][-1]()
    data = files[-1].to_dict()
    assert data["layout"]["title"]["subtitle"]["text"].replace("<br>", " ").startswith(
        "Beta-binomial (proportion θ), n = 50 · Laplace noise, sensitivity 1 · uploaded records")
    methods = {t["meta"]["method"] for t in data["data"]}
    assert "naive" in methods and not methods & {"ops", "confidential"}, methods


def test_simulated_records_are_no_secret_in_the_downloads():
    at = _open()
    assert not [c for c in at.checkbox if c.key == keys.W_SHARE_DIRECT]
    assert "OPS" in at.selectbox(key=keys.W_NETCDF_METHOD).options


def test_link_reopens_the_scenario():
    gong = next(p for p in PRESETS if p.name == "gong").scenario
    at = _open(query=to_query(gong))
    _assert_clean(at)
    assert "s_dp = 37.4**" in _scenario_line(at) and "scale b = 5" in _scenario_line(at)
    assert at.selectbox(key=keys.W_MODEL).value == "poisson_gamma"
    assert not any("OPS" in c for c in _texts(at.caption))  # the preset leaves OPS off (a release, no records)


def test_no_preset_of_a_release_switches_on_a_method_that_needs_the_records():
    """Gong's count opened with OPS on and the run log's "OPS: needs the confidential records (simulate or upload a
    CSV)" under a figure without its curve, where Learn says OPS runs only on simulated or uploaded data."""
    from engine.methods import READS_RECORDS

    assert not [p.name for p in PRESETS if p.scenario.data == "s_dp" and READS_RECORDS & set(p.scenario.methods)]


def test_scenario_is_written_to_the_link():
    at = _open()
    at.text_input(key=keys.W_EPSILON).set_value(str(0.5)).run()
    assert at.query_params["epsilon"] == ["0.5"] or at.query_params["epsilon"] == "0.5"
    assert from_query(dict(at.query_params)).epsilon == 0.5


def test_back_returns_to_the_scenario_before_a_change():
    """A lecturer pressed Back after changing ε from 0.1 to 1: the URL went back but the page kept ε = 1, and wrote
    it into the URL again, twice over. Back (the URL moved under the page, then a rerun) now loads what it holds."""
    at = _open()
    before = {k: list(v) if isinstance(v, list) else v for k, v in at.query_params.items()}
    at.text_input(key=keys.W_EPSILON).set_value("2").run()
    assert "pure 2-DP" in _scenario_line(at)
    press_back(at, before)
    _assert_clean(at)
    assert at.text_input(key=keys.W_EPSILON).value == format_number(Scenario().epsilon)
    assert "pure 0.3-DP" in _scenario_line(at)
    at.text_input(key=keys.W_EPSILON).set_value("1").run()  # and the sidebar goes on from there
    assert "pure 1-DP" in _scenario_line(at)


def test_an_edit_sent_with_the_url_before_the_last_run_is_kept():
    """Thirty students changed ε twice in quick succession: the second change reached the server with the URL
    from before the first (the browser had not yet received the first run's new link), the page took that URL
    for Back and returned to the value before both changes, and the student's latest ε was lost. A rerun
    that carries a widget edit is an edit, whatever URL comes with it; a rerun with the widgets as the page
    left them and another URL is Back or Forward."""
    at = _open()
    stale = {k: list(v) if isinstance(v, list) else v for k, v in at.query_params.items()}
    at.text_input(key=keys.W_EPSILON).set_value("2").run()
    assert "pure 2-DP" in _scenario_line(at)
    at.query_params.clear()
    at.query_params.update(stale)  # the URL the browser still had when it sent the second change
    at.text_input(key=keys.W_EPSILON).set_value("3").run()
    _assert_clean(at)
    assert at.text_input(key=keys.W_EPSILON).value == "3"
    assert "pure 3-DP" in _scenario_line(at)
    assert from_query(dict(at.query_params)).epsilon == 3.0
    press_back(at, stale)  # and Back from there still goes back
    assert at.text_input(key=keys.W_EPSILON).value == format_number(Scenario().epsilon)


def test_a_box_in_error_is_not_written_into_the_link():
    """ε = -1 was written into the URL: a link copied then opened on "Results wait for a valid scenario"."""
    at = _open()
    at.text_input(key=keys.W_EPSILON).set_value("-1").run()
    assert at.sidebar.error and from_query(dict(at.query_params)).epsilon == Scenario().epsilon


def test_unreadable_link_falls_back_to_demo_with_a_warning():
    at = _open(query={"model": "beta_binomial", "epsilon": "lots"})
    assert not at.exception
    assert any("link parameter epsilon = 'lots' is invalid" in w for w in _texts(at.warning))
    assert at.text_input(key=keys.W_EPSILON).value == format_number(Scenario().epsilon)


@pytest.mark.parametrize("preset", PRESETS, ids=lambda p: p.name)
def test_learn_preset_loads_into_the_compare_widgets(preset):
    at = _open("pages/learn.py")
    at.button(key=keys.preset_key(preset.name)).click().run()
    _assert_clean(at)
    assert any(preset.title in s for s in _texts(at.success))
    assert at.selectbox(key=keys.W_MODEL).value == preset.scenario.model
    assert at.selectbox(key=keys.W_MECHANISM).value == preset.scenario.mechanism
    assert len(at.get("plotly_chart")) == 1
    methods = set(at.dataframe[0].value["method"])
    runnable = [m for m in preset.scenario.methods if not (m == "ops" and preset.scenario.data == "s_dp")]
    assert {METHOD_LABELS[m] for m in runnable} <= methods  # every method it switches on that can run, ran
    # issue 20 item 7: a teaching preset opens on converged results, not an alarm on arrival
    assert not [w for w in _texts(at.warning) if "Not converged" in w or "Too few draws" in w], _texts(at.warning)
    assert set(at.dataframe[0].value["converged"]) <= {"yes", "yes (independent)", "— (estimator)"}


def test_the_papers_flagship_examples_open_at_the_papers_sizes():
    """Paper 000 runs both its examples at N = 100 (Sec. 4 and Sec. 5); the regression blurb called that "a quick
    size" although it is the paper's own."""
    by_name = {p.name: p for p in PRESETS}
    for name in ("regression", "loglinear"):
        preset = by_name[name]
        assert preset.scenario.n == 100 and preset.title.endswith("the paper's size"), preset.title
        assert "at the paper's size: 100 records" in preset.blurb and "quick size" not in preset.blurb
    # in a reader's words: the paper by its authors (not the lab's file name "Paper 000"), ε and θ as the pages write
    # them, no pointer into the test suite
    for preset in PRESETS:
        for word in ("Paper 000", "epsilon", "theta", "sigma =", "rho =", "its tests"):
            assert word not in preset.blurb, (preset.name, word)


def test_a_long_release_is_cut_short_above_the_figure_and_listed_whole_below_it():
    """The log-linear preset releases 75 numbers (5 classes x 5 features x 3 levels): the line above the figure
    writes 12 and says how many there are; an expander lists them all (the line used to be a wall of 75)."""
    at = _open("pages/learn.py")
    at.button(key=keys.preset_key("loglinear")).click().run()
    _assert_clean(at)
    line = next(m for m in _texts(at.markdown) if "release **s_dp = (" in m)
    listed = line.split("s_dp = (")[1].split(")**")[0]
    assert listed.endswith("… (75 numbers in all, listed below)"), line
    assert len(listed.split(", …")[0].split(", ")) == 12, line
    (whole,) = [e for e in at.expander if e.label == "The whole release: 75 numbers"]
    assert len(whole.code[0].value.split(", ")) == 75
    # a short release is written out whole, with no expander
    at = _open()
    assert not [e for e in at.expander if e.label.startswith("The whole release")]


def test_exact_without_closed_form_is_quiet():
    at = _open()
    at.toggle(key=keys.method_key("exact")).set_value(True).run()
    # three-cell tables under randomized response: no closed form or grid (every one-parameter model has one)
    at.selectbox(key=keys.W_MODEL).set_value("dirichlet_multinomial").run()
    at.selectbox(key=keys.W_MECHANISM).set_value("randomized_response").run()
    _assert_clean(at)
    assert any("Exact (closed form): no closed form" in c for c in _texts(at.caption))
    assert "Exact (closed form)" not in set(at.dataframe[0].value["method"])


# the combinations the engine refuses, with the reason it gives
_REFUSED = {
    ("poisson_gamma", "randomized_response"): "randomized_response needs categorical records",
    ("normal_known_sd", "randomized_response"): "randomized_response needs categorical records",
    ("normal_known_sd", "discrete_laplace"): "discrete noise needs an integer statistic",
    ("normal_known_sd", "discrete_gaussian"): "discrete noise needs an integer statistic",
    ("naive_bayes_loglinear", "randomized_response"): "randomized_response needs categorical records",
    ("linear_regression", "randomized_response"): "randomized_response needs categorical records",
    ("linear_regression", "discrete_laplace"): "discrete noise needs an integer statistic",
    ("linear_regression", "discrete_gaussian"): "discrete noise needs an integer statistic",
}


def test_every_model_and_mechanism_combination():
    at = _open()
    at.toggle(key=keys.method_key("abc_rejection")).set_value(False)  # slow by design at small noise
    for model in MODELS:
        for mechanism in MECHANISMS:
            at.selectbox(key=keys.W_MODEL).set_value(model)
            at.selectbox(key=keys.W_MECHANISM).set_value(mechanism)
            at.run()
            assert not at.exception, (model, mechanism, _texts(at.exception))
            refused = _REFUSED.get((model, mechanism))
            if refused:
                assert any(refused in e and e.startswith("mechanism.name") for e in _texts(at.sidebar.error))
            else:
                assert not at.error, (model, mechanism, _texts(at.error))
                assert len(at.get("plotly_chart")) == 1, (model, mechanism)
                assert "DA-MCMC" in set(at.dataframe[0].value["method"]), (model, mechanism)


def test_an_implausible_release_is_named_and_abc_is_not_run():
    """Issue 20 item 5: s_dp = 1e9 with n = 40 ran, and ABC burned its whole budget before failing."""
    at = _open()
    _set_s_dp("1e9")(at)
    _assert_clean(at)
    warning = next(w for w in _texts(at.warning) if "noise standard deviations" in w)
    assert warning.startswith("The release s_dp = 1,000,000,000 lies 212,000,000 noise standard deviations (noise sd "
                              "4.71)")
    assert "n = 40 records" in warning and "ABC rejection is not run" in warning
    assert any(c.startswith("ABC rejection: not run: the release lies") for c in _texts(at.caption))
    assert "ABC rejection" not in set(at.dataframe[0].value["method"])
    assert "Exact (best method)" in set(at.dataframe[0].value["method"])


def test_the_diagnostics_verdict_separates_thousands_like_the_rest_of_the_page():
    """It read "bulk ESS ≥ 586, tail ESS ≥ 2029" beside "2 × 2,000 draws" (the log-linear model at n = 500)."""
    at = _open("pages/diagnostics.py", {"model": "naive_bayes_loglinear", "n": "500", "mech": "laplace",
                                        "budget": "epsilon", "epsilon": "1"})
    _assert_clean(at)
    verdict = next(t for t in _texts(at.success) if "has converged" in t)
    tail = int(verdict.split("tail ESS ≥ ")[1].split(" ")[0].replace(",", ""))
    assert tail >= 1000 and f"tail ESS ≥ {tail:,} " in verdict, verdict


def test_abc_that_accepts_nothing_says_so_in_the_method_settings_words():
    """ABC rejection at n = 10,000 (linear regression) said "method.max_proposals = 20000000 is invalid for this
    release: abc_rejection accepted 0 of 35600 proposals (stopped by max_seconds) ... Raise max_proposals /
    max_seconds or use da_mcmc": a spec file's field, a limit the user never set as the culprit, and engine keys.
    It now names the box that stopped it and what the count means."""
    at = _open(query={"model": "linear_regression", "n": "100", "abc_p": "10", "methods": "naive,abc_rejection"})
    _assert_clean(at)
    caption = next(c for c in _texts(at.caption) if c.startswith("ABC rejection not shown"))
    assert caption == ("ABC rejection not shown: it accepted none of 10 proposals before its limit of proposals (ABC: "
                       "at most this many proposals): fewer than 1 in 10 simulated releases land close enough to s_dp "
                       "here, so its 4,000 draws would take more than 40,000 proposals on average. Raise both limits "
                       "in Method settings, or read Exact (best method) or DA-MCMC, which simulate no releases.")
    for engine_word in ("method.max_proposals", "abc_rejection", "da_mcmc", "is invalid"):
        assert engine_word not in caption


def test_a_method_that_refuses_the_model_says_why_in_the_sidebars_words():
    """Poisson-gamma without a clamp said "OPS not shown: model.upper = None is invalid for ops: OPS needs bounded
    records (set model.upper)": a spec key and Python's None."""
    at = _open(query={"model": "poisson_gamma", "n": "50", "methods": "naive,ops"})
    _assert_clean(at)
    caption = next(c for c in _texts(at.caption) if c.startswith("OPS not shown"))
    assert caption == ("OPS not shown: OPS needs bounded records (tick “Clamp records (bounded sensitivity)” in the "
                       "sidebar)"), caption


def test_refusals_are_reworded_and_other_messages_kept():
    from ui.params.messages import why_not_run
    assert why_not_run("method.name = 'exact' is invalid for model x: no exact form; use da_mcmc or "
                       "pseudo_marginal") == "No exact form; use DA-MCMC or Pseudo-marginal"
    assert why_not_run("mechanism.epsilon = 0.0 is invalid: must be a finite number > 0") == (
        "ε (epsilon) must be a finite number > 0 (you entered 0).")
    assert why_not_run("it stopped") == "it stopped"


@pytest.mark.parametrize("preset", EPSILON_ONE, ids=lambda p: p.name)
def test_what_epsilon_one_means_opens_each_mechanism_family_on_what_it_protects(preset):
    """Issue 21, Learn: one preset per mechanism family, each opening the What it protects page at ε = 1."""
    at = _open("pages/learn.py")
    at.button(key=keys.preset_key(preset.name)).click().run()
    _assert_clean(at)
    assert at.title[0].value == "What it protects"
    assert at.selectbox(key=keys.W_MECHANISM).value == preset.scenario.mechanism
    sentence = next(t for t in _texts(at.markdown) if t.startswith("##### "))
    start = "##### At ρ = 0.5" if preset.scenario.mechanism == "gaussian" else "##### At ε = 1,"
    assert sentence.startswith(start), sentence
    if preset.scenario.mechanism != "gaussian":
        assert "to at most 73%" in sentence
    assert len(at.get("plotly_chart")) == 3


def test_privacy_budget_shows_the_frontier_and_reads_out_the_chosen_epsilon():
    """Issue 21: the protection side (informed adversary's q95, the best attack's power) against the exact
    posterior sd over the ε grid, and the chosen ε's numbers in one computed sentence."""
    import engine
    from ui.params.spec import to_spec_dict

    at = _open("pages/privacy_budget.py")
    _assert_clean(at)
    chart = next(c for c in at.get("plotly_chart") if c.proto.id and "frontier" in str(c.key))
    spec = json.loads(chart.proto.spec)
    kinds = [t["meta"]["kind"] for t in spec["data"]]
    assert kinds[:2] == ["q95", "power_at_5pct"] and "chosen" in kinds
    value = at.select_slider(key=keys.W_STEP).value
    assert value == 0.3  # the sidebar's ε = 0.3, which the default grid now holds (0.1, 0.215, 0.3, 0.464, …)
    sentence = next(t for t in _texts(at.markdown) if t.startswith("##### At ε ="))
    risk = engine.risk(engine.epsilon_spec(to_spec_dict(Scenario()), float(value)))
    assert sentence.startswith(f"##### At ε = {value:.3g}, someone who knew everyone else could move a 50% guess "
                               f"about one person to at most {100 * risk['informed_adversary']['max']:.0f}%")
    assert f"detects it {100 * risk['power_at_5pct']:.0f}% of the time" in sentence
    assert "; θ is known to ±" in sentence


def test_the_pages_own_number_boxes_refuse_what_they_cannot_read():
    """Issue 20 item 4 on the pages' own boxes: '0,05' typed as T and 'abc' as Calibration's ε are refused
    next to the box, with the text kept, never read as 5 or as the old value."""
    at = _open("pages/privacy_budget.py")
    box = next(t for t in at.text_input if t.key == keys.W_TARGET_SD)
    box.set_value("0,05").run()
    errors = _texts(at.error)
    assert any(e.startswith('Target posterior sd T for θ = "0,05" is not a number: write it with a point for '
                            "decimals, e.g. 0.05") for e in errors), errors
    assert next(t for t in at.text_input if t.key == keys.W_TARGET_SD).value == "0,05"
    at.switch_page("pages/calibration.py").run()
    at.text_input(key=keys.W_CAL_EPSILON).set_value("abc").run()
    assert any(e.startswith('ε (Gaussian: ρ = ε²/2) = "abc" is not a number') for e in _texts(at.error))
    at.text_input(key=keys.W_CAL_M).set_value("5").run()
    assert at.text_input(key=keys.W_CAL_EPSILON).value == "abc"


def test_diagnostics_names_a_regressions_parameters_not_theta():
    """After the regression preset Diagnostics said "Pseudo-marginal acceptance: 0.287 of proposed moves of θ":
    a regression has β and no θ. The page passes the run's parameters to the sentence."""
    at = _open("pages/diagnostics.py", {"model": "linear_regression", "n": "100", "methods": "pseudo_marginal",
                                        "chains": "2", "draws": "300", "warmup": "200"})
    _assert_clean(at)
    line = next(c for c in _texts(at.caption) if c.startswith("Pseudo-marginal acceptance"))
    assert "of proposed moves of the parameters" in line and "θ" not in line, line


def test_compare_and_diagnostics_write_the_same_ess_and_acceptance():
    """Default DA-MCMC showed ESS "829 / 766" on Compare but "bulk ESS ≥ 830" on Diagnostics, and acceptance 0.9309
    on Compare but 0.931 on Diagnostics: both pages now round an ESS down and give an acceptance four digits."""
    at = _open("pages/compare.py")
    _assert_clean(at)
    row = at.dataframe[0].value.set_index("method").loc["DA-MCMC"]
    bulk, tail = row["ESS bulk / tail"].split(" / ")
    at.switch_page("pages/diagnostics.py").run()
    _assert_clean(at)
    assert at.segmented_control(key=keys.W_DIAG_METHOD).value == "da_mcmc"
    verdict = next(t for t in _texts(at.success) if "has converged" in t)
    assert f"bulk ESS ≥ {bulk}, tail ESS ≥ {tail} " in verdict, (row["ESS bulk / tail"], verdict)
    table = at.dataframe[0].value
    assert (table["ESS bulk"].iloc[0], table["ESS tail"].iloc[0]) == (bulk, tail), table
    assert any(m.label == "mean acceptance" and m.value == row["acceptance"] for m in at.metric), row["acceptance"]


def test_the_run_log_says_why_a_method_did_not_run_in_words():
    """OPS on Gaussian noise: the run log read "OPS: not run — mechanism.name = 'gaussian' is invalid for ops
    without method.epsilon: …" (spec keys a sidebar never shows). It now gives the reason as the page's other
    "not shown" notes do."""
    at = open_app("pages/compare.py", {"model": "beta_binomial", "mech": "gaussian", "budget": "rho", "rho": "0.5",
                                       "methods": "naive,ops"}, timeout=120)
    assert not at.exception, [e.value for e in at.exception]
    line = next(s.label for s in at.status if s.label.startswith("OPS"))
    assert line.startswith("OPS: not run — OPS spends a pure"), line
    assert "mechanism.name" not in line and "method.epsilon" not in line, line


def test_the_headline_of_a_regression_judges_every_coefficient():
    """The browser audit's regression: the headline said naive's "90% interval covers beta[0] = -1.79" while its
    intervals for beta[1] and beta[2] miss the truth by far; it now counts the misses of every coefficient and
    labels the sentence on beta[0] as the parameter shown."""
    at = _open(query={"model": "linear_regression", "n": "200", "mech": "laplace", "budget": "epsilon",
                      "epsilon": "1.0", "data": "simulate", "truth": "-1.79, -2.89, -0.66", "seed": "7",
                      "methods": "naive,auto"})
    assert not at.exception, [e.value for e in at.exception]
    line = next(t for t in _texts(at.markdown) if t.startswith("##### "))
    assert line.startswith("##### Naive's 90% intervals miss the truth for 2 of 3 coefficients; "), line
    # naive's offset from the exact posterior, not from the truth (audit s21 item 5: the noise is every method's)
    assert " for beta[0] (the parameter shown) and centred 0.91 away from the mean of the exact posterior: its 90% " \
           "interval covers beta[0] = -1.79" in line, line


def test_the_best_methods_da_mcmc_is_told_apart_from_the_da_mcmc_row():
    """Regression records, n = 300: the note said Exact (best method) ran DA-MCMC "and DA-MCMC did better" while the
    DA-MCMC row had not converged; Exact (best method)'s run has shift moves the row's has not, and the note says so."""
    at = _open(query={"model": "linear_regression", "n": "300", "mech": "laplace", "budget": "epsilon",
                      "epsilon": "1.0", "data": "simulate", "seed": "7", "methods": "naive,da_mcmc,auto"})
    assert not at.exception, [e.value for e in at.exception]
    note = next(c for c in _texts(at.caption) if c.startswith("Exact (best method) ran **DA-MCMC**"))
    assert "Its DA-MCMC is a run of its own, with settings of its own (10 shift moves of β per iteration" in note, note
    assert note.endswith("not the DA-MCMC row's (no shift moves)."), note


def test_the_diagnostics_failures_write_each_ess_as_the_table_does():
    """Regression at n = 200 (DA-MCMC): the text said "bulk ESS of beta[2] is 5 … tail ESS of beta[2] is 17" (the
    engine's nearest) beside the table's and the banner's 4 and 16 (rounded down): the text now words each ESS
    with the table's function."""
    at = _open("pages/diagnostics.py", {"model": "linear_regression", "n": "200", "mech": "laplace",
                                        "budget": "epsilon", "epsilon": "1.0", "data": "simulate",
                                        "truth": "-1.79, -2.89, -0.66", "seed": "7"})
    _assert_clean(at)
    assert at.segmented_control(key=keys.W_DIAG_METHOD).value == "da_mcmc"
    text = next(t for t in _texts(at.warning) if " Failed: " in t)
    table = at.dataframe[0].value
    failed = [r for r in text.split(" Failed: ")[1].rstrip(".").split("; ") if " ESS of " in r]
    assert failed, text
    for reason in failed:  # "bulk ESS of beta[2] is 4 < 400"
        kind, rest = reason.split(" ESS of ")
        name, value = rest.split(" is ")
        assert value.split(" < ")[0] == table.loc[name, f"ESS {kind}"], (reason, table)
