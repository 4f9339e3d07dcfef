"""AppTest smoke tests: every page with its defaults, and with bad input (the error names the field,
the value and what is allowed, sits in the sidebar, keeps the entry, and the page carries on)."""

import pytest
from streamlit.testing.v1 import AppTest

from app_support import open_app

from figures.labels import METHOD_LABELS
from ui import keys
from ui.params.query import from_query, to_query
from ui.params.scenario import MECHANISMS, MODELS, Scenario
from ui.presets import PRESETS

TIMEOUT = 120  # the first DA-MCMC run may compile the numba kernels
PAGES = ("pages/compare.py", "pages/privacy_budget.py", "pages/diagnostics.py", "pages/learn.py")


def _open(page: str = "pages/compare.py", query: dict | None = None) -> AppTest:
    return open_app(page, query, TIMEOUT)


def _texts(elements) -> list[str]:
    return [e.value for e in elements]


def _scenario_line(at: AppTest) -> str:
    """The Compare page's one-line statement of the scenario (model, n, release, truth, mechanism)."""
    return next(t for t in _texts(at.markdown) if "release **s_dp" in t)


def _assert_clean(at: AppTest) -> None:
    assert not at.exception, _texts(at.exception)
    assert not at.error, _texts(at.error)


# --------------------------------------------------------------------------- defaults
@pytest.mark.parametrize("page", PAGES)
def test_page_renders_with_defaults(page):
    at = _open(page)
    _assert_clean(at)
    assert at.title[0].value
    if page == "pages/compare.py":
        assert len(at.get("plotly_chart")) == 1
        table = at.dataframe[0].value
        assert {"Naive", "DA-MCMC", "ABC rejection", "OPS", "Exact (best method)", "Confidential data"} == \
            set(table["method"])
        assert set(table["converged"]) <= {"yes", "i.i.d."}
        assert len(at.download_button) == 5  # draws, InferenceData, scenario, figure HTML and PNG
        texts = _texts(at.markdown)
        assert any("pure 0.3-DP" in t and "true theta = 0.3" in t for t in texts)
        assert any(t.startswith("##### Naive is") and "misses θ = 0.3" in t for t in texts)  # the demo's point
    elif page == "pages/privacy_budget.py":
        assert len(at.get("plotly_chart")) == 3  # interval, sd, posterior at one epsilon
        assert any("Smallest ε on the grid" in s for s in _texts(at.success))
    elif page == "pages/diagnostics.py":
        assert len(at.get("plotly_chart")) == 3  # acceptance, trace, rank
        assert any(m.label == "exp(-ε) bound" and m.value == "0.741" for m in at.metric)
        assert any("has converged" in t for t in _texts(at.success))  # the verdict at the top
    else:
        assert {b.key for b in at.button} >= {keys.preset_key(p.name) for p in PRESETS}


# --------------------------------------------------------------------------- bad input
def _set_epsilon_zero(at):
    at.number_input(key=keys.W_EPSILON).set_value(0.0).run()


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
        at.number_input(key=keys.truth_key("beta_binomial")).set_value(value).run()
    return act


def _set_grid(text):
    def act(at):
        at.text_input(key=keys.W_GRID).input(text).run()
    return act


BAD_INPUTS = [
    ("pages/compare.py", _set_epsilon_zero, "mechanism.epsilon = 0.0 is invalid: must be a finite number > 0"),
    ("pages/compare.py", _upload(b"x\n1\nyes\n0\n"), "data.csv line 3 column 'x' = 'yes' is invalid: must be a number"),
    ("pages/compare.py", _upload(b""), "data.csv = 'uploaded file' is invalid: is empty"),
    ("pages/compare.py", _upload(b"x\n0\n2\n"), "data.records = 2.0 is invalid: beta_binomial records must be 0 or 1"),
    ("pages/compare.py", _set_s_dp("3, 4"), "data.s_dp = [3.0, 4.0] is invalid: must be a list of finite numbers of "
                                            "length 1"),
    ("pages/compare.py", _set_s_dp("three"), "data.s_dp = 'three' is invalid: must be a list of numbers"),
    ("pages/compare.py", _set_theta(1.5), "data.simulate.theta = 1.5 is invalid: must be in [0, 1]"),
    ("pages/privacy_budget.py", _set_grid("0.5, abc"), "ε grid = '0.5, abc' is invalid: must be a list of "
                                                       "numbers"),
    ("pages/privacy_budget.py", _set_epsilon_zero, "mechanism.epsilon = 0.0 is invalid"),
    ("pages/diagnostics.py", _set_s_dp("1, 2, 3"), "data.s_dp = [1.0, 2.0, 3.0] is invalid"),
]


@pytest.mark.parametrize("page, act, message", BAD_INPUTS,
                         ids=[f"{p.split('/')[1][:-3]}-{m.split(' = ')[0]}-{i}" for i, (p, _, m) in
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
    assert at.number_input(key=keys.W_EPSILON).value == 0.0
    assert not at.get("plotly_chart")
    at.number_input(key=keys.W_EPSILON).set_value(2.0).run()
    _assert_clean(at)
    assert "pure 2-DP" in _scenario_line(at) and len(at.get("plotly_chart")) == 1


def test_text_entry_is_kept_after_error():
    at = _open()
    _set_s_dp("1, two")(at)
    assert at.text_input(key=keys.s_dp_key("beta_binomial")).value == "1, two"
    assert any("data.s_dp = '1, two' is invalid" in e for e in _texts(at.sidebar.error))


# --------------------------------------------------------------------------- data sources and links
def test_valid_csv_upload_sets_n_and_runs():
    at = _open()
    _upload(b"admitted\n" + b"\n".join([b"1", b"0", b"0"] * 10) + b"\n")(at)
    _assert_clean(at)
    assert "n = 30 records, from the uploaded file" in _texts(at.sidebar.caption)
    assert "Confidential data" in set(at.dataframe[0].value["method"])


def test_link_reopens_the_scenario():
    gong = next(p for p in PRESETS if p.name == "gong").scenario
    at = _open(query=to_query(gong))
    _assert_clean(at)
    assert "s_dp = [37.4]" in _scenario_line(at) and "scale b = 5" in _scenario_line(at)
    assert at.selectbox(key=keys.W_MODEL).value == "poisson_gamma"
    assert any("OPS: needs the confidential records" in c for c in _texts(at.caption))


def test_scenario_is_written_to_the_link():
    at = _open()
    at.number_input(key=keys.W_EPSILON).set_value(0.5).run()
    assert at.query_params["epsilon"] == ["0.5"] or at.query_params["epsilon"] == "0.5"
    assert from_query(dict(at.query_params)).epsilon == 0.5


def test_unreadable_link_falls_back_to_demo_with_a_warning():
    at = _open(query={"model": "beta_binomial", "epsilon": "lots"})
    assert not at.exception
    assert any("link parameter epsilon = 'lots' is invalid" in w for w in _texts(at.warning))
    assert at.number_input(key=keys.W_EPSILON).value == Scenario().epsilon


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
