"""The multi-parameter models in the app: the naive-Bayes log-linear model in the Compare sidebar (its
inputs, validation next to the input, CSV of y,x1..xK, the URL round trip), the parameter picker that
chooses the marginal of the main figures (Compare, Diagnostics, Privacy budget) and the small multiples
of every parameter. Runs are kept small (n = 40, 2 chains x 300 draws)."""
import json
import math
from dataclasses import replace

import pytest
from streamlit.testing.v1 import AppTest

from app_support import open_app, press_back

import engine
from figures.axes import describe_param, pages_of, param_label
from figures.posteriors import posterior_densities, x_window
from ui import keys, picker, tables
from ui.params.defaults import default_truth, default_truth_p, record_columns
from ui.params.parsing import parse_matrix, parse_numbers
from ui.params.query import from_query, to_query
from ui.params.scenario import DEFAULT_METHODS, DEFAULT_PRIORS, METHODS, REGRESSION_BETA, Scenario
from ui.params.spec import to_spec_dict

TIMEOUT = 120  # the first DA-MCMC run of a model may compile its kernels
M = "naive_bayes_loglinear"
PRIOR = DEFAULT_PRIORS[M]
LOGLINEAR = Scenario(model=M, n=40, prior=tuple(PRIOR.items()), truth=default_truth(M, PRIOR),
                     truth_p=default_truth_p(M, PRIOR), methods=("naive", "da_mcmc"), chains=2, draws=300,
                     warmup=100)
NAMES = ["pi[0]", "pi[1]"] + [f"p[{k}][{i}][{j}]" for k in range(2) for i in range(2) for j in range(2)]


def _open(query: dict | None = None) -> AppTest:
    return open_app(query=query, timeout=TIMEOUT)


def _open_model(model: str) -> AppTest:
    """The landing page switched to ``model`` from the sidebar, with few draws and ABC off (fast), clean."""
    at = _open()
    at.text_input(key=keys.W_DRAWS).set_value(str(300))
    at.text_input(key=keys.W_WARMUP).set_value(str(100))
    at.toggle(key=keys.method_key("abc_rejection")).set_value(False)
    at.selectbox(key=keys.W_MODEL).set_value(model).run()
    _clean(at)
    return at


def _clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def _chart_params(chart) -> list[str]:
    """The parameters a posterior figure draws (every trace carries meta.param), in order of appearance."""
    seen = []
    for trace in json.loads(chart.proto.spec)["data"]:
        p = trace.get("meta", {}).get("param")
        if p is not None and p not in seen:
            seen.append(p)
    return seen


def _query(at: AppTest) -> dict:
    return {k: (v[-1] if isinstance(v, list) else v) for k, v in dict(at.query_params).items()}


# --------------------------------------------------------------------------- the sidebar
def test_compare_page_on_loglinear_defaults():
    at = _open_model(M)
    # the model's own inputs, seeded with the engine's defaults
    assert at.text_input(key=keys.prior_key(M, "class_levels")).value == "2"
    assert at.text_input(key=keys.prior_key(M, "feature_levels")).value == "2, 2"
    assert at.text_input(key=keys.prior_key(M, "alpha")).value == "2"
    assert at.text_input(key=keys.truth_key(M)).value == "0.5, 0.5"
    line = next(m.value for m in at.markdown if "release **s_dp" in m.value)
    assert line.startswith("**Naive-Bayes log-linear (Ju et al. 2022 §4)**, n = 40")
    assert "true pi[0] = 0.5" in line and "(10 parameters; the figure marks the true value of the one picked)" in line
    # Laplace(2K / epsilon) on every cell: K = 2 features, epsilon = 0.3
    title = json.loads(at.get("plotly_chart")[0].proto.spec)["layout"]["title"]["text"]  # stated once: the figure
    assert "scale b = 13.33" in title and "sensitivity 4" in title
    # the methods the engine supports ran; the others say why not
    table = at.dataframe[0].value
    assert set(table["method"]) == {"Naive", "DA-MCMC", "Exact (best method)", "Confidential data"}
    captions = [c.value for c in at.caption]
    for label in ("OPS",):
        assert (f"{label}: not available for the Naive-Bayes log-linear model (it supports DA-MCMC, Naive, "
                "Pseudo-marginal, Exact (best method)).") in captions
    assert any("runs DA-MCMC, Naive, Pseudo-marginal and Exact (best method); the other methods are skipped" in c.value
               for c in at.sidebar.caption)
    # one marginal in the main figure, the first parameter; the table follows the pick (10 > 4 parameters)
    charts = at.get("plotly_chart")
    assert len(charts) == 1 and _chart_params(charts[0]) == ["pi[0]"]
    assert at.selectbox(key=keys.W_PARAM_COMPARE).value == "pi[0]"
    assert set(table["parameter"]) == {"pi[0]"}


def test_bad_loglinear_field_is_shown_next_to_it_and_kept():
    at = _open(to_query(LOGLINEAR))
    _clean(at)
    at.text_input(key=keys.prior_key(M, "feature_levels")).input("2, 1").run()
    assert not at.exception
    message = "levels of each feature must be a non-empty list of at most 64 integers in 2..1000"
    assert any(message in e.value for e in at.sidebar.error), [e.value for e in at.sidebar.error]
    assert at.text_input(key=keys.prior_key(M, "feature_levels")).value == "2, 1"  # what was typed stays
    assert not at.get("plotly_chart")
    at.text_input(key=keys.prior_key(M, "feature_levels")).input("2, 3").run()  # fixed: results come back
    _clean(at)
    # the true p follows the new shape (2 x 2 + 2 x 3 probabilities), so the simulation runs at once
    assert len(parse_numbers("p", at.text_input(key=keys.W_TRUTH_P).value)) == 10
    assert any(c.value.startswith("New shape: the true p is now the defaults for it") for c in at.sidebar.caption)
    assert "pi[0]" in set(at.dataframe[0].value["parameter"])


def test_bad_true_probabilities_are_named():
    at = _open(to_query(LOGLINEAR))
    at.text_input(key=keys.W_TRUTH_P).input("0.5, 0.5, 0.5").run()
    assert not at.exception
    assert any(e.value.startswith("True probabilities p must be") for e in at.sidebar.error), [e.value for e in at.sidebar.error]
    assert at.text_input(key=keys.W_TRUTH_P).value == "0.5, 0.5, 0.5"


def test_csv_of_records_y_x1_xk():
    at = _open(to_query(replace(LOGLINEAR, data="csv")))
    assert any("Columns y, x1, x2: integer levels from 0" in c.value for c in at.sidebar.caption)
    rows = b"y,x1,x2\n" + b"\n".join([b"0,1,0", b"1,0,1", b"1,1,1"] * 10) + b"\n"
    at.file_uploader(key=keys.W_CSV).set_value(("records.csv", rows, "text/csv")).run()
    _clean(at)
    assert "n = 30 records, from the uploaded file" in [c.value for c in at.sidebar.caption]
    assert "Confidential data" in set(at.dataframe[0].value["method"])
    at.file_uploader(key=keys.W_CSV).set_value(("records.csv", b"y,x1,x2\n0,1,2\n", "text/csv")).run()
    assert any("Line 2 of the uploaded file (record 1, column x2) holds 2: must be an integer level 0..1." in e.value
               for e in at.sidebar.error)


# --------------------------------------------------------------------------- picker and small multiples
def test_parameter_picker_switches_the_figure_and_the_table():
    at = _open(to_query(LOGLINEAR))
    assert at.selectbox(key=keys.W_PARAM_COMPARE).options == [param_label(p) for p in NAMES]
    at.selectbox(key=keys.W_PARAM_COMPARE).set_value("p[1][0][1]").run()
    _clean(at)
    charts = at.get("plotly_chart")
    assert len(charts) == 1 and _chart_params(charts[0]) == ["p[1][0][1]"]
    layout = json.loads(charts[0].proto.spec)["layout"]
    assert layout["xaxis"]["title"]["text"] == "p[1][0][1]: P(x2 = 1 | y = 0)"
    assert set(at.dataframe[0].value["parameter"]) == {"p[1][0][1]"}
    at.toggle(key=keys.table_all_key(M)).set_value(True).run()
    table = at.dataframe[0].value
    assert list(table[table["method"] == "DA-MCMC"]["parameter"]) == NAMES
    # the pick follows to Diagnostics (trace and rank plots) and to the Privacy budget page
    at.switch_page("pages/diagnostics.py").run()
    _clean(at)
    assert at.selectbox(key=keys.W_PARAM_DIAG).value == "p[1][0][1]"
    traces = [c for c in at.get("plotly_chart") if "trace per chain" in json.dumps(json.loads(c.proto.spec)["layout"])]
    assert len(traces) == 1 and _chart_params(traces[0]) == ["p[1][0][1]"]
    at.selectbox(key=keys.W_PARAM_DIAG).set_value("pi[1]").run()
    assert all(_chart_params(c) in ([], ["pi[1]"]) for c in at.get("plotly_chart"))  # acceptance has no param
    at.switch_page("pages/privacy_budget.py").run()
    _clean(at)
    assert at.selectbox(key=keys.W_SWEEP_PARAM).value == "pi[1]"
    assert _chart_params(at.get("plotly_chart")[-1]) == ["pi[1]"]  # the posterior at one epsilon
    # the target-sd answer reads the exact sampler (DA-MCMC), not naive, when no closed form exists
    assert any("exact posterior sd of pi[1], estimated from DA-MCMC draws" in m.value
               for m in [*at.success, *at.warning])


def test_small_multiples_show_every_parameter_in_pages():
    at = _open(to_query(LOGLINEAR))
    assert len(at.get("plotly_chart")) == 1  # closed: nothing drawn
    at.session_state[keys.W_MULTIPLES] = True  # open the expander
    at.run()
    _clean(at)
    charts = at.get("plotly_chart")
    assert len(charts) == 2 and _chart_params(charts[1]) == NAMES
    methods = {t["meta"]["method"] for t in json.loads(charts[1].proto.spec)["data"] if "meta" in t}
    assert {"naive", "da_mcmc", "confidential", "truth"} <= methods
    # 3 classes and four 3-level features: 3 + 36 = 39 parameters, 12 panels a page
    # (AppTest does not report an expander's open state back as a browser does: open it again each run)
    at.text_input(key=keys.prior_key(M, "class_levels")).set_value(str(3))
    at.text_input(key=keys.prior_key(M, "feature_levels")).input("3, 3, 3, 3")
    at.session_state[keys.W_MULTIPLES] = True
    at.run()
    _clean(at)
    pages = at.selectbox(key=keys.W_MULTIPLES_PAGE)
    assert len(pages.options) == 4 and pages.options[0] == "pi[0] … p[0][2][2]"
    assert len(_chart_params(at.get("plotly_chart")[1])) == picker.PANELS_PER_PAGE
    pages.set_value(pages.options[3])
    at.session_state[keys.W_MULTIPLES] = True
    at.run()
    assert _chart_params(at.get("plotly_chart")[1]) == ["p[3][2][0]", "p[3][2][1]", "p[3][2][2]"]  # 36 + 3


def test_dirichlet_main_figure_shows_the_picked_cell():
    s = Scenario(model="dirichlet_multinomial", prior=(("alpha", "1, 1, 1"),), truth="0.2, 0.3, 0.5",
                 methods=("naive", "exact"))
    at = _open(to_query(s))
    _clean(at)
    assert _chart_params(at.get("plotly_chart")[0]) == ["p[0]"]  # the first parameter by default
    assert set(at.dataframe[0].value["parameter"]) == {"p[0]", "p[1]", "p[2]"}  # three cells: the whole table
    at.selectbox(key=keys.W_PARAM_COMPARE).set_value("p[2]").run()
    assert _chart_params(at.get("plotly_chart")[0]) == ["p[2]"]


def test_back_and_forward_move_the_picked_parameter_with_the_url():
    """A pick writes param= into the URL (an entry in the browser's history), but Back then did nothing: the
    picker kept its pick and wrote it into the URL again. Back now returns to the URL's pick, the first parameter
    where the URL has none, and Forward comes back; a rerun that is not Back leaves the pick alone."""
    s = Scenario(model="dirichlet_multinomial", prior=(("alpha", "1, 1, 1"),), truth="0.2, 0.3, 0.5",
                 methods=("naive", "exact"))
    at = _open(to_query(s))
    first = dict(at.query_params)
    at.selectbox(key=keys.W_PARAM_COMPARE).set_value("p[2]").run()
    second = dict(at.query_params)
    assert second == first | {keys.PARAM_QUERY: "p[2]"}
    press_back(at, first)
    _clean(at)
    assert at.selectbox(key=keys.W_PARAM_COMPARE).value == "p[0]"
    assert _chart_params(at.get("plotly_chart")[0]) == ["p[0]"] and keys.PARAM_QUERY not in at.query_params
    press_back(at, second)  # Forward
    assert at.selectbox(key=keys.W_PARAM_COMPARE).value == "p[2]" and at.query_params[keys.PARAM_QUERY] == "p[2]"
    at.selectbox(key=keys.W_PARAM_COMPARE).set_value("p[1]").run()
    at.query_params.clear()
    at.query_params.update(second)  # a rerun with an older URL that is not Back: the pick stands, written again
    at.run()
    assert at.selectbox(key=keys.W_PARAM_COMPARE).value == "p[1]" and at.query_params[keys.PARAM_QUERY] == "p[1]"


# --------------------------------------------------------------------------- the URL
@pytest.mark.parametrize("scenario", [
    LOGLINEAR,
    replace(LOGLINEAR, prior=(("class_levels", 3), ("feature_levels", "2, 4"), ("alpha", 0.5)),
            truth="0.2, 0.3, 0.5", truth_p=default_truth_p(M, {"class_levels": 3, "feature_levels": "2, 4"})),
    replace(LOGLINEAR, from_prior=True),
    replace(LOGLINEAR, data="s_dp", s_dp="10, 12, 9, 11, 8, 14, 13, 7"),
], ids=["defaults", "three_classes", "from_prior", "s_dp"])
def test_loglinear_link_round_trip(scenario):
    q = to_query(scenario)
    assert from_query(q) == scenario
    assert engine.spec_from_dict(to_spec_dict(scenario))  # the engine takes the spec as built
    at = _open(q)
    _clean(at)
    assert at.selectbox(key=keys.W_MODEL).value == M
    prior = dict(scenario.prior)
    assert at.text_input(key=keys.prior_key(M, "feature_levels")).value == prior["feature_levels"]
    assert at.text_input(key=keys.prior_key(M, "class_levels")).value == str(prior["class_levels"])
    assert _query(at) == q  # the page writes the same link back


def test_loglinear_spec_dict_is_the_engine_contract():
    spec = to_spec_dict(LOGLINEAR)
    assert spec["model"] == {"name": M, "n": 40, "class_levels": 2, "feature_levels": [2, 2], "alpha": 2.0}
    assert spec["data"] == {"simulate": {"pi": [0.5, 0.5], "p": [0.3333, 0.6667, 0.6667, 0.3333] * 2}}
    assert to_spec_dict(replace(LOGLINEAR, from_prior=True))["data"] == {"simulate": {"from_prior": True}}
    records = [[0, 1, 0], [1, 0, 1]]
    import numpy as np
    spec = to_spec_dict(replace(LOGLINEAR, data="csv"), records=np.array(records, float))
    assert spec["data"] == {"records": records} and spec["model"]["n"] == 2
    assert record_columns(M, {"class_levels": 2, "feature_levels": "2, 3, 2"}) == ("y", "x1", "x2", "x3")
    assert record_columns(M, {"class_levels": 2, "feature_levels": "2, x"}) is None
    assert record_columns("beta_binomial") is None


def test_pages_of_and_parameter_descriptions():
    assert pages_of(list("abcde"), 2) == [["a", "b"], ["c", "d"], ["e"]]
    assert pages_of([], 3) == [[]]
    with pytest.raises(ValueError, match="per_page = 0 is invalid"):
        pages_of(["a"], 0)
    assert describe_param("pi[2]") == "P(class y = 2)"
    assert describe_param("p[0][1][2]") == "P(x1 = 2 | y = 1)"
    assert describe_param("p[3]") == "cell probability"
    assert describe_param("beta[0]") == "intercept" and describe_param("beta[2]") == "coefficient of x2"
    assert param_label("theta") == "theta" and param_label("pi[0]") == "pi[0] · P(class y = 0)"


def test_naive_far_from_every_private_posterior_keeps_the_axis_on_them():
    import numpy as np
    from engine.core.results import Result

    assert x_window({"naive": (-820.0, -805.0), "da_mcmc": (-6.0, 5.0)}, truth=-1.79) == \
        pytest.approx((-6.55, 5.55))
    assert x_window({"naive": (-20.0, -10.0), "da_mcmc": (-6.0, 5.0)}) is None  # within two widths
    assert x_window({"naive": (-820.0, -805.0), "confidential": (0.0, 1.0)}) is None  # nothing private
    rng = np.random.default_rng(0)
    naive = Result(method="naive", param_names=("beta[0]",), draws=rng.normal(-812.0, 2.0, (2, 500, 1)),
                   s_dp=np.zeros(9))
    exact = Result(method="da_mcmc", param_names=("beta[0]",), draws=rng.normal(-0.6, 1.8, (2, 500, 1)),
                   s_dp=np.zeros(9))
    layout = posterior_densities([naive, exact], true_params={"beta[0]": -1.79}).to_dict()["layout"]
    lo, hi = layout["xaxis"]["range"]
    # the private posterior's central 95% (-0.6 -/+ 1.96 x 1.8) padded by 10% of its width, not -812
    assert -5.2 < lo < -4.5 and 3.0 < hi < 3.7
    note = next(a for a in layout["annotations"] if a["text"].startswith("Naive: off the axis"))
    assert note["text"].endswith("←") and -815 < float(note["name"].split(":")[2]) < -809
    # above the single panel, where no curve runs (at 0.9 of the axis height it sat on the curves' tops)
    assert (note["yref"], note["y"], note["yanchor"], note["xanchor"]) == ("y domain", 1.0, "bottom", "left"), note
    assert layout["margin"]["t"] == 40 + 18


# --------------------------------------------------------------------------- linear regression (paper 000 Sec. 5)
R = "linear_regression"
REG = Scenario(model=R, n=40, prior=tuple(DEFAULT_PRIORS[R].items()), truth=REGRESSION_BETA,
               epsilon=3.0, methods=("naive", "da_mcmc"), chains=2, draws=300, warmup=100)


def test_compare_page_on_regression_defaults():
    at = _open_model(R)
    # paper 000 Sec. 5's settings in the inputs
    assert at.text_input(key=keys.prior_key(R, "p")).value == "2"
    assert at.text_input(key=keys.prior_key(R, "x_mean")).value == "0.9, -1.17"
    assert at.text_input(key=keys.prior_key(R, "x_cov")).value == "1, 0; 0, 1"
    assert (at.text_input(key=keys.prior_key(R, "lo")).value, at.text_input(key=keys.prior_key(R, "hi")).value) == \
        ("-10", "10")
    assert at.text_input(key=keys.truth_key(R)).value == "-1.79, -2.89, -0.66"
    # Laplace(Delta / epsilon) with the paper's Delta = p^2 + 3p + 3 = 13
    assert "sensitivity 13" in json.loads(at.get("plotly_chart")[0].proto.spec)["layout"]["title"]["text"]
    assert {"Naive", "DA-MCMC", "Confidential data"} <= set(at.dataframe[0].value["method"])
    assert not any(c.value.startswith("ABC rejection: not available") for c in at.caption)  # it supports ABC
    assert any(c.value.startswith("OPS: not available for the Linear regression model") for c in at.caption)
    assert _chart_params(at.get("plotly_chart")[0]) == ["beta[0]"]
    at.selectbox(key=keys.W_PARAM_COMPARE).set_value("beta[2]").run()
    layout = json.loads(at.get("plotly_chart")[0].proto.spec)["layout"]
    assert layout["xaxis"]["title"]["text"] == "beta[2]: coefficient of x2"


def test_the_picked_parameter_travels_in_the_link():
    """The page says its address holds the scenario, but a link opened on beta[0] whatever was picked."""
    at = _open(to_query(REG))
    _clean(at)
    assert "param" not in _query(at)  # the first parameter, the default: the link as the scenario writes it
    at.selectbox(key=keys.W_PARAM_COMPARE).set_value("beta[2]").run()
    link = _query(at)
    assert link["param"] == "beta[2]" and {k: v for k, v in link.items() if k != "param"} == to_query(REG)
    reopened = _open(link)
    _clean(reopened)
    assert reopened.selectbox(key=keys.W_PARAM_COMPARE).value == "beta[2]"
    assert _chart_params(reopened.get("plotly_chart")[0]) == ["beta[2]"]
    reopened.selectbox(key=keys.W_PARAM_COMPARE).set_value("beta[0]").run()
    assert "param" not in _query(reopened)


def test_sigma_unknown_is_a_parameter_with_its_prior_from_the_sidebar():
    """The engine's sigma_prior (σ² a parameter, InvGamma(a, scale b)) was reachable from specs only."""
    at = _open(to_query(REG))
    _clean(at)
    at.checkbox(key=keys.prior_key(R, "sigma_unknown")).check().run()
    _clean(at)
    assert at.text_input(key=keys.prior_key(R, "sigma_a")).value == "3"
    assert "sigma2" in set(at.dataframe[0].value["parameter"])
    link = _query(at)
    assert (float(link["prior.sigma_a"]), float(link["prior.sigma_b"])) == (3.0, 4.0)
    s = from_query(link)
    spec = to_spec_dict(s)
    assert spec["model"]["sigma_prior"] == {"a": 3.0, "b": 4.0} and "sigma" not in spec["model"]
    assert spec["data"]["simulate"]["sigma2"] == pytest.approx(2.0)  # the σ box is the simulation's truth
    reopened = _open(link)
    assert reopened.checkbox(key=keys.prior_key(R, "sigma_unknown")).value
    at.text_input(key=keys.prior_key(R, "sigma_b")).input("-1").run()
    assert any(e.value.startswith("σ² prior b (scale) ") for e in at.sidebar.error), [e.value for e in at.sidebar.error]
    at.checkbox(key=keys.prior_key(R, "sigma_unknown")).uncheck().run()
    _clean(at)
    assert "prior.sigma_a" not in _query(at) and "sigma2" not in set(at.dataframe[0].value["parameter"])


def test_the_noise_sd_box_shows_root_two_not_sixteen_digits_and_reads_roots_back_exactly():
    """The regression's σ = √2 (Ju et al.'s σ² = 2) filled its box as 1.4142135623730951."""
    at = _open(to_query(REG))
    _clean(at)
    box = at.text_input(key=keys.prior_key(R, "sigma"))
    assert box.value == "√2"
    assert to_spec_dict(at.session_state[keys.SCENARIO])["model"]["sigma"] == math.sqrt(2)  # the same float
    box.input("sqrt(3)").run()
    _clean(at)
    assert to_spec_dict(at.session_state[keys.SCENARIO])["model"]["sigma"] == math.sqrt(3)
    assert at.text_input(key=keys.prior_key(R, "sigma")).value == "sqrt(3)"  # kept as typed


def test_the_sidebar_model_box_shows_names_that_fit_and_the_full_name_under_it():
    """The box cut "Linear regression (Ju et al. 2022 §5)" to "Linear regression (Ju et al. 2022 §"; the regression's
    three columns broke "clamp low", "clamp high" and "prior sd of β" over two lines each."""
    at = _open(to_query(REG))
    _clean(at)
    box = at.sidebar.selectbox(key=keys.W_MODEL)
    assert box.options == ["Beta-binomial (proportion θ)", "Poisson-gamma (rate λ)", "Dirichlet-multinomial (p)",
                           "Normal with known sd (mean μ)", "Naive-Bayes log-linear", "Linear regression"]
    assert all(len(o) <= 29 for o in box.options)
    assert "Linear regression (Ju et al. 2022 §5)" in [c.value for c in at.sidebar.caption]
    labels = [t.label for t in at.sidebar.text_input]
    assert {"noise sd σ", "clamp low", "clamp high", "prior sd of β"} <= set(labels), labels


def test_the_acceptance_column_never_writes_an_exponent():
    """The regression's DA-MCMC acceptance read 1.359e-05 in Compare's table."""
    at = _open(to_query(REG))
    _clean(at)
    shown = [v for v in at.dataframe[0].value["acceptance"] if v != "—"]
    assert shown and not any("e" in v for v in shown), shown
    assert tables.acceptance_text(1.359e-05) == "0.00001359" and tables.acceptance_text(0.93094) == "0.9309"


def test_bad_regression_fields_are_named_and_kept():
    at = _open(to_query(REG))
    _clean(at)
    at.text_input(key=keys.prior_key(R, "x_cov")).input("1, 2; 2, 1").run()
    assert not at.exception
    assert any(e.value.startswith("predictor covariance Σ ") and "not positive definite" in e.value for e in at.sidebar.error)
    assert at.text_input(key=keys.prior_key(R, "x_cov")).value == "1, 2; 2, 1"
    at.text_input(key=keys.prior_key(R, "x_cov")).input("1, 0; 0").run()
    assert any("predictor covariance Σ is not allowed: every row needs the same number of entries (you entered 1, 0; 0)" in e.value
               for e in at.sidebar.error)
    at.text_input(key=keys.prior_key(R, "x_cov")).input("1, 0; 0, 1")
    at.text_input(key=keys.prior_key(R, "hi")).input("10, 10, -20").run()
    assert any(e.value.startswith("clamp high ") and "column y has lo = -10, hi = -20" in e.value
               for e in at.sidebar.error), [e.value for e in at.sidebar.error]
    at.text_input(key=keys.prior_key(R, "hi")).input("10").run()
    _clean(at)


def test_regression_p_sets_the_sizes_and_csv_columns():
    at = _open(to_query(REG))
    at.text_input(key=keys.prior_key(R, "x_cov")).input("2, 0.5; 0.5, 1").run()
    at.text_input(key=keys.prior_key(R, "p")).set_value(str(3)).run()
    _clean(at)
    # what was typed for x1, x2 is kept (it was reset to the defaults without a word); x3 gets the defaults
    assert at.text_input(key=keys.prior_key(R, "x_mean")).value == "0.9, -1.17, 0"
    assert at.text_input(key=keys.prior_key(R, "x_cov")).value == "2, 0.5, 0; 0.5, 1, 0; 0, 0, 1"
    assert at.text_input(key=keys.truth_key(R)).value == "-1.79, -2.89, -0.66, 1"
    assert "p = 3: m, Σ and the true β keep the first 2 predictors' values; x3 take the defaults (mean 0, " \
        "variance 1, independent of the others)." in [c.value for c in at.sidebar.caption]
    assert list(at.selectbox(key=keys.W_PARAM_COMPARE).options)[-1] == "beta[3] · coefficient of x3"
    at.radio(key=keys.W_DATA).set_value("csv").run()
    assert any(c.value.startswith("Columns x1, x2, x3, y:") for c in at.sidebar.caption)
    rows = b"x1,x2,x3,y\n" + b"\n".join([b"0.5,-1,0.2,1.5", b"1.1,0.3,-0.4,-2", b"-0.2,0.8,1.0,0.1"] * 10) + b"\n"
    at.file_uploader(key=keys.W_CSV).set_value(("records.csv", rows, "text/csv")).run()
    _clean(at)
    assert "n = 30 records, from the uploaded file" in [c.value for c in at.sidebar.caption]
    at.radio(key=keys.W_DATA).set_value("simulate").run()
    at.text_input(key=keys.prior_key(R, "p")).set_value(str(1)).run()
    assert at.text_input(key=keys.prior_key(R, "x_cov")).value == "2"
    assert at.text_input(key=keys.truth_key(R)).value == "-1.79, -2.89"
    at.text_input(key=keys.prior_key(R, "x_mean")).input("0.9, oops").run()  # does not parse: the defaults, said
    at.text_input(key=keys.prior_key(R, "p")).set_value(str(2)).run()
    assert at.text_input(key=keys.prior_key(R, "x_mean")).value == "0.9, -1.17"
    assert any(c.value.startswith("p = 2: the mean m, the covariance Σ and the true β are the defaults")
               for c in at.sidebar.caption)


@pytest.mark.parametrize("scenario", [
    REG,
    replace(REG, prior=(("p", 1), ("x_mean", "0"), ("x_cov", "2"), ("sigma", 0.5), ("lo", "-5, -8"), ("hi", "5, 8"),
                        ("prior_sd", 3.0)), truth="0.5, -1"),
    replace(REG, data="s_dp", s_dp="1, 2, 3, 4, 5, 6, 7, 8, 9"),
], ids=["paper", "p1_bounds_per_column", "s_dp"])
def test_regression_link_round_trip(scenario):
    q = to_query(scenario)
    assert from_query(q) == scenario
    engine.spec_from_dict(to_spec_dict(scenario))
    at = _open(q)
    _clean(at)
    assert at.selectbox(key=keys.W_MODEL).value == R
    assert at.text_input(key=keys.prior_key(R, "hi")).value == dict(scenario.prior)["hi"]
    assert _query(at) == q


def test_regression_spec_dict_is_the_engine_contract():
    spec = to_spec_dict(REG)
    assert spec["model"] == {"name": R, "n": 40, "p": 2, "x_mean": [0.9, -1.17], "x_cov": [[1.0, 0.0], [0.0, 1.0]],
                             "sigma": pytest.approx(2 ** 0.5), "lo": -10.0, "hi": 10.0, "prior_sd": 2.0}
    assert spec["data"] == {"simulate": {"beta": [-1.79, -2.89, -0.66]}}
    per_column = replace(REG, prior=(("p", 2), ("lo", "-1, -2, -3"), ("hi", "1, 2, 3")))
    assert to_spec_dict(per_column)["model"]["lo"] == [-1.0, -2.0, -3.0]
    assert parse_matrix("model.x_cov", "1 0.5\n0.5 1") == [[1.0, 0.5], [0.5, 1.0]]
    with pytest.raises(ValueError, match=r"^model\.x_cov = '1, x; 0, 1' is invalid: must be rows of numbers"):
        parse_matrix("model.x_cov", "1, x; 0, 1")


def test_a_typed_regression_release_is_told_its_order_before_a_mistake():
    """The Released s_dp help named the regression's entries (x̃ᵀỹ, ỹᵀỹ, …) but not their order, which only the
    error of a release of the wrong length spelled out (column by column, not the row-major order one guesses).
    The help now lists it for the p in the box, in the engine's names, and follows a change of p."""
    at = open_app("pages/compare.py", {**to_query(REG), "data": "s_dp", "s_dp": "1, 2, 3, 4, 5, 6, 7, 8, 9"},
                  timeout=120)
    assert not at.exception, [e.value for e in at.exception]
    order = ", ".join(engine.make_model(R, {"n": 40, "p": 2}).stat_labels())
    assert order.startswith("sum y, sum x1*y, sum x2*y, sum y^2, sum x1, sum x1*x1, sum x2, sum x1*x2")
    assert at.sidebar.text_input(key=keys.s_dp_key(R)).help.endswith(f", for p = 2 in this order: {order}.")
    at.text_input(key=keys.prior_key(R, "p")).set_value("1").run()
    assert at.sidebar.text_input(key=keys.s_dp_key(R)).help.endswith(
        ", for p = 1 in this order: sum y, sum x1*y, sum y^2, sum x1, sum x1*x1.")


def test_abc_starts_off_for_a_release_of_many_numbers():
    """ABC rejection was on by default for linear regression, where it accepts about one proposal in a million: 9
    draws in its 10 s at n = 200, none at n = 10,000, on every first run of the flagship model. A switch to such a
    model (or a link without methods) now starts it off; boxes the person set stay as they were."""
    assert "abc_rejection" not in from_query({"model": R}).methods
    assert "abc_rejection" not in from_query({"model": "naive_bayes_loglinear"}).methods
    assert "abc_rejection" in from_query({"model": "beta_binomial"}).methods
    assert "abc_rejection" in from_query({"model": R, "methods": "naive,abc_rejection"}).methods
    # ABC stops after 1 s (not 10): the last run below is regression's ABC, on by the person's choice
    at = open_app("pages/compare.py", {"model": "beta_binomial", "n": "40", "methods": ",".join(DEFAULT_METHODS),
                                       "abc_s": "1"}, timeout=120)
    at.selectbox(key=keys.W_MODEL).set_value(R).run(timeout=300)
    assert not at.exception, [e.value for e in at.exception]
    on = {m for m in METHODS if at.toggle(key=keys.method_key(m)).value}
    assert on == set(DEFAULT_METHODS) - {"abc_rejection"}
    assert "abc_rejection" not in at.session_state[keys.SCENARIO].methods
    at.selectbox(key=keys.W_MODEL).set_value("beta_binomial").run(timeout=300)
    assert at.toggle(key=keys.method_key("abc_rejection")).value  # back to that model's defaults
    at.toggle(key=keys.method_key("ops")).set_value(False).run(timeout=300)
    at.selectbox(key=keys.W_MODEL).set_value(R).run(timeout=300)
    assert at.toggle(key=keys.method_key("abc_rejection")).value  # the person's own choice: left alone
