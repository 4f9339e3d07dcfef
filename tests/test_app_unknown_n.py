"""AppTest tests of the unknown sample size and the MLE in the app (issue 9): the Compare sidebar's
known / unknown switch, RJMCMC's posterior of theta and pmf of n, MCEM's marker and table row, the
Diagnostics jump rates and trace of n, the Learn page's preset, bad input, and the link."""
import json
from dataclasses import replace

import pytest
from streamlit.testing.v1 import AppTest

from app_support import APP, assert_charts_fit_a_phone, open_app

from ui import keys, narrative
from ui.params.query import from_query, to_query
from ui.params.spec import to_spec_dict
from ui.presets import BAYES_VS_MLE, DEMO

TIMEOUT = 120  # the first RJMCMC / DA-MCMC run may compile the numba kernels
#: the demo without the slow ABC run, so each test here stays a few seconds
QUICK = replace(DEMO, methods=("naive", "da_mcmc"))


def _open(page: str = "pages/compare.py", scenario=QUICK) -> AppTest:
    return open_app(page, to_query(scenario), TIMEOUT)


def _texts(elements) -> list[str]:
    return [e.value for e in elements]


def _assert_clean(at: AppTest) -> None:
    assert not at.exception, _texts(at.exception)
    assert not at.error, _texts(at.error)


def _figure(at: AppTest, i: int) -> dict:
    return json.loads(at.get("plotly_chart")[i].proto.spec)


def _metas(fig: dict) -> list[dict]:
    return [t.get("meta", {}) for t in fig["data"]]


def _query(at: AppTest) -> dict:
    return {k: (v[-1] if isinstance(v, list) else v) for k, v in dict(at.query_params).items()}


def test_switching_to_an_unknown_n_runs_rjmcmc_and_draws_the_pmf_of_n():
    at = _open()
    at.radio(key=keys.W_SAMPLE_SIZE).set_value("unknown").run()
    _assert_clean(at)
    assert at.toggle(key=keys.method_key("rjmcmc")).value is True  # switched on with the unknown n
    line = next(t for t in _texts(at.markdown) if "release **s_dp" in t)
    assert "n unknown: released **n_dp = " in line and "true θ = 0.3, n = 40" in line
    assert any(c.startswith("Noise on n: Laplace noise") for c in _texts(at.sidebar.caption))
    table = at.dataframe[0].value
    plug_in = int(line.split("plug-in n = ")[1].split(")")[0])
    assert {"RJMCMC (unknown n)", f"Naive at plug-in n = {plug_in}", f"DA-MCMC at plug-in n = {plug_in}"} <= \
        set(table["method"])
    assert set(table[table["method"] == "RJMCMC (unknown n)"]["parameter"]) == {"theta", "n"}
    assert len(at.get("plotly_chart")) == 2
    assert_charts_fit_a_phone(at)
    densities, pmf = _figure(at, 0), _figure(at, 1)
    assert {m.get("method") for m in _metas(densities)} >= {"rjmcmc", "naive", "da_mcmc", "truth"}
    assert all(m.get("param") == "theta" for m in _metas(densities))  # n is not a density panel
    assert {m["kind"] for m in _metas(pmf)} == {"n_pmf", "n_dp", "plug_in", "truth"}
    truth = next(t for t in pmf["data"] if t["meta"]["kind"] == "truth")
    assert truth["x"] == [40.0, 40.0]  # simulation uses model.n as the true size
    # the sidebar asks for the true n (the records are simulated), not for a known n
    assert at.text_input(key=keys.W_N).label.startswith("true n")


def test_bad_prior_mean_shows_the_engine_error_next_to_the_input_and_keeps_it():
    at = _open()
    at.radio(key=keys.W_SAMPLE_SIZE).set_value("unknown").run()
    at.text_input(key=keys.W_N_PRIOR_MEAN).set_value(str(0.0)).run()
    assert not at.exception
    errors = _texts(at.sidebar.error)
    assert any(e.startswith("prior mean of n must be a finite number > 0 (you entered 0)") for e in errors), errors
    assert at.text_input(key=keys.W_N_PRIOR_MEAN).value == "0.0"
    assert not at.get("plotly_chart")
    assert any("Your entries are kept" in w for w in _texts(at.warning))
    at.text_input(key=keys.W_N_PRIOR_MEAN).set_value(str(35.0)).run()
    _assert_clean(at)
    assert len(at.get("plotly_chart")) == 2


@pytest.mark.parametrize("act, message", [
    (lambda at: at.text_input(key=keys.W_N_SCALE).set_value(str(-1.0)).run(), "noise scale on n must be a finite number > 0 (you entered -1)"),
    (lambda at: at.text_input(key=keys.W_N_DP).input("lots").run(), "Released n_dp must be"),
    (lambda at: at.selectbox(key=keys.W_MODEL).set_value("naive_bayes_loglinear").run(),
     "is for an unknown n, which Naive-Bayes log-linear does not support (its n must be known)"),
], ids=["n_mechanism", "n_dp", "loglinear"])
def test_other_bad_unknown_n_inputs_are_named(act, message):
    at = _open(scenario=BAYES_VS_MLE.scenario)
    act(at)
    assert not at.exception
    assert any(message in e for e in _texts(at.sidebar.error)), _texts(at.sidebar.error)


def test_the_mle_is_a_marker_and_a_table_row():
    at = _open(scenario=replace(BAYES_VS_MLE.scenario, seed=11))  # a seed of its own: a fresh run, a fresh log
    _assert_clean(at)
    table = at.dataframe[0].value
    row = table[table["method"] == "MLE (Monte Carlo EM)"]
    assert list(row["parameter"]) == ["theta"] and list(row["converged"]) == ["— (estimator)"]
    assert list(row["ESS bulk / tail"]) == ["— / —"]  # an estimate, not draws (the draws are in the caption)
    mark = next(t for t in _figure(at, 0)["data"] if t.get("meta", {}).get("kind") == "estimate")
    assert mark["meta"]["method"] == "mcem" and mark["y"][0] < 0
    assert float(row["mean"].iloc[0]) == pytest.approx(mark["x"][0], rel=1e-3)
    assert float(row["q5"].iloc[0]) == pytest.approx(mark["meta"]["q5"], rel=1e-3)
    # a typed release: n_dp against the pmf, no truth
    assert {m["kind"] for m in _metas(_figure(at, 1))} == {"n_pmf", "n_dp", "plug_in"}
    assert "Naive at plug-in n = 21" in set(table["method"])
    assert any(t.startswith("##### Naive is") and "the exact posterior (RJMCMC, n unknown)" in t
               for t in _texts(at.markdown))  # the headline compares naive with RJMCMC, not a plug-in run
    assert any(c.startswith("MLE (Monte Carlo EM): the diamond is the maximum-likelihood estimate")
               for c in _texts(at.caption))
    assert any(s.label.startswith("MLE (Monte Carlo EM): estimate after ") for s in at.status)  # the run log


def test_the_link_carries_the_unknown_n_and_reopens_it():
    at = _open()
    at.radio(key=keys.W_SAMPLE_SIZE).set_value("unknown").run()
    at.selectbox(key=keys.W_N_PRIOR).set_value("negative_binomial").run()
    at.text_input(key=keys.W_N_PRIOR_DISPERSION).set_value(str(4.0)).run()
    at.radio(key=keys.W_N_BUDGET_FORM).set_value("scale").run()
    at.text_input(key=keys.W_N_SCALE).set_value(str(3.0)).run()
    _assert_clean(at)
    q = _query(at)
    assert q["size"] == "unknown" and q["n_prior"] == "negative_binomial" and q["n_disp"] == "4.0"
    assert q["n_scale"] == "3.0" and "rjmcmc" in q["methods"].split(",")
    linked = from_query(q)
    assert linked.n_prior_dispersion == 4.0 and linked.n_budget_form == "scale" and linked.unknown_n
    reopened = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for k, v in q.items():
        reopened.query_params[k] = v
    reopened.run()
    _assert_clean(reopened)
    assert reopened.radio(key=keys.W_SAMPLE_SIZE).value == "unknown"
    assert reopened.text_input(key=keys.W_N_SCALE).value == "3"
    assert "scale b = 3" in " ".join(_texts(reopened.sidebar.caption))
    assert _query(reopened) == q


def test_diagnostics_shows_the_jump_rates_and_the_trace_of_n():
    at = _open("pages/diagnostics.py", scenario=BAYES_VS_MLE.scenario)
    _assert_clean(at)
    assert at.segmented_control(key=keys.W_DIAG_METHOD).value == "rjmcmc"
    labels = {m.label: m.value for m in at.metric}
    assert {"add acceptance", "delete acceptance", "jumps per iteration"} <= set(labels)
    assert 0.0 < float(labels["add acceptance"]) <= 1.0 and 0.0 < float(labels["delete acceptance"]) <= 1.0
    assert_charts_fit_a_phone(at)
    traces = next(f for f in (_figure(at, i) for i in range(len(at.get("plotly_chart"))))
                  if any(m.get("kind") == "trace" for m in _metas(f)))
    assert {m["param"] for m in _metas(traces)} == {"theta", "n"}
    ranks = next(f for f in (_figure(at, i) for i in range(len(at.get("plotly_chart"))))
                 if any(m.get("kind") == "rank" for m in _metas(f)))
    assert {m["param"] for m in _metas(ranks) if m.get("kind") == "rank"} == {"theta"}
    assert any(c.startswith("n is left out") for c in _texts(at.caption))


def test_diagnostics_shows_the_mcem_path_instead_of_chains():
    at = _open("pages/diagnostics.py", scenario=BAYES_VS_MLE.scenario)
    at.segmented_control(key=keys.W_DIAG_METHOD).set_value("mcem").run()
    _assert_clean(at)
    assert any("stopped by its rule" in t for t in _texts(at.success)), _texts(at.warning)
    figures = [_figure(at, i) for i in range(len(at.get("plotly_chart")))]
    assert len(figures) == 1  # the EM path only: an estimator has no traces or rank plots
    assert_charts_fit_a_phone(at)
    metas = _metas(figures[0])
    assert {m["param"] for m in metas if m.get("kind") == "mcem_estimate"} == {"theta"}
    score = next(t for t in figures[0]["data"] if t.get("meta", {}).get("kind") == "mcem_score")
    # the last iteration meets the rule the page names: |score| within 2 Monte Carlo se of 0
    assert abs(score["y"][-1]) <= score["error_y"]["array"][-1]


def test_learn_section_loads_the_bayes_vs_mle_preset():
    at = _open("pages/learn.py")
    assert any("Bayesian vs MLE answers from the same release" in t for t in _texts(at.subheader))
    at.button(key=keys.preset_key(BAYES_VS_MLE.name)).click().run()
    _assert_clean(at)
    assert at.radio(key=keys.W_SAMPLE_SIZE).value == "unknown"
    assert {"RJMCMC (unknown n)", "MLE (Monte Carlo EM)"} <= set(at.dataframe[0].value["method"])


def test_a_known_n_keeps_the_landing_link_and_spec():
    assert to_query(DEMO) == to_query(replace(DEMO, n_prior_mean=3.0, n_dp="7"))
    assert "n_mechanism" not in to_spec_dict(DEMO)
    spec = to_spec_dict(BAYES_VS_MLE.scenario)
    assert spec["model"] == {"name": "beta_binomial", "a": 1.0, "b": 1.0, "n_prior": {"name": "poisson", "mean": 20.0}}
    assert spec["n_mechanism"] == {"name": "laplace", "scale": 1.0} and spec["data"] == {"s_dp": [7.3], "n_dp": 21.4}
    assert from_query(to_query(BAYES_VS_MLE.scenario)) == BAYES_VS_MLE.scenario
    with pytest.raises(ValueError, match="link parameter size = 'maybe' is invalid"):
        from_query({**to_query(DEMO), "size": "maybe"})


def test_back_to_a_known_n_switches_rjmcmc_off_and_drops_the_labels():
    at = _open()
    at.radio(key=keys.W_SAMPLE_SIZE).set_value("unknown").run()
    at.radio(key=keys.W_SAMPLE_SIZE).set_value("known").run()
    _assert_clean(at)
    assert at.toggle(key=keys.method_key("rjmcmc")).value is False
    assert set(at.dataframe[0].value["method"]) == {"Naive", "DA-MCMC", "Confidential data"}
    assert len(at.get("plotly_chart")) == 1 and "size" not in _query(at)


def test_privacy_budget_sweeps_rjmcmc_as_the_exact_posterior_under_an_unknown_n():
    at = _open("pages/privacy_budget.py", scenario=BAYES_VS_MLE.scenario)
    _assert_clean(at)
    assert "rjmcmc" in at.multiselect(key=keys.W_SWEEP_METHODS).value
    assert any("exact posterior sd of θ" in s for s in _texts(at.success) + _texts(at.warning))
    figures = [_figure(at, i) for i in range(len(at.get("plotly_chart")))]
    assert any(m.get("kind") == "q95" for f in figures for m in _metas(f))  # the privacy side: add/remove-one now
    step = next(f for f in figures if any(m.get("kind") == "density" for m in _metas(f)))
    assert {m["param"] for m in _metas(step) if "param" in m} == {"theta"}


def test_the_mle_caption_says_when_the_wald_interval_or_convergence_is_in_doubt():
    plain = narrative.mle_caption({"converged": True, "at_boundary": False})
    assert "90% Wald interval" in plain and "edge" not in plain and "stopped" not in plain
    doubtful = narrative.mle_caption({"converged": False, "at_boundary": True, "iterations": 12})
    assert "edge of the parameter space" in doubtful and "stopped after 12 iterations" in doubtful


def test_an_uploaded_file_is_the_true_n_behind_n_dp():
    at = _open()
    at.radio(key=keys.W_DATA).set_value("csv").run()
    at.file_uploader(key=keys.W_CSV).set_value(("r.csv", b"x\n" + b"1\n0\n0\n" * 10, "text/csv")).run()
    at.radio(key=keys.W_SAMPLE_SIZE).set_value("unknown").run()
    _assert_clean(at)
    truth = next(t for t in _figure(at, 1)["data"] if t["meta"]["kind"] == "truth")
    assert truth["x"] == [30.0, 30.0]


def test_the_mle_with_a_known_n_is_a_row_and_a_marker_without_plug_in_labels():
    at = _open()
    at.toggle(key=keys.method_key("mcem")).set_value(True).run()
    _assert_clean(at)
    table = at.dataframe[0].value
    assert {"Naive", "DA-MCMC", "MLE (Monte Carlo EM)", "Confidential data"} == set(table["method"])
    assert [m["method"] for m in _metas(_figure(at, 0)) if m.get("kind") == "estimate"] == ["mcem"]
    assert len(at.get("plotly_chart")) == 1  # no pmf of n
    # its row's mean, sd, q5 and q95 are the estimate, its se and its Wald interval, not a posterior's
    assert any("For MLE (Monte Carlo EM), an estimator, mean is the estimate, sd its standard error" in c
               for c in (c.value for c in at.caption))


@pytest.mark.parametrize("n_prior", ["poisson", "negative_binomial"])
@pytest.mark.parametrize("n_mechanism, form", [("laplace", "epsilon"), ("discrete_laplace", "scale")])
@pytest.mark.parametrize("data", ["simulate", "s_dp"])
def test_every_unknown_n_form_round_trips_and_the_engine_accepts_it(n_prior, n_mechanism, form, data):
    import engine

    s = replace(QUICK, sample_size="unknown", n_prior=n_prior, n_prior_mean=30.0, n_prior_dispersion=5.0,
                n_mechanism=n_mechanism, n_budget_form=form, n_epsilon=0.7, n_scale=1.5, data=data, s_dp="12.5",
                n_dp="33")
    q = to_query(s)  # only the fields the scenario uses travel
    back = from_query(q)
    assert to_query(back) == q and to_spec_dict(back) == to_spec_dict(s)
    spec = to_spec_dict(s)
    problem = engine.prepare(spec)
    assert problem.unknown_n.prior.name == n_prior and problem.unknown_n.prior.mean == 30.0
    assert problem.unknown_n.mechanism.name == n_mechanism
    if data == "s_dp":
        assert "n" not in spec["model"] and problem.unknown_n.n_dp == 33.0 and problem.model.n == 33
    else:
        assert spec["model"]["n"] == 40 and problem.true_params["n"] == 40


def test_a_histogram_with_an_unknown_n_released_or_not():
    """The Dirichlet-multinomial with an unknown n (paper 002 App. B): with Laplace noise on n, then with n not
    released at all ("none"). Switching to an unknown n switches RJMCMC on, which refuses this model: its cost
    estimate says so instead of failing (it raised AttributeError on the missing size mechanism)."""
    at = _open(scenario=DEMO)
    at.selectbox(key=keys.W_MODEL).set_value("dirichlet_multinomial").run()
    at.radio(key=keys.W_SAMPLE_SIZE).set_value("unknown").run()
    _assert_clean(at)
    assert "none (only inside the statistic)" in at.selectbox(key=keys.W_N_MECHANISM).options
    assert any(c.startswith("Noise on n: Laplace noise") for c in _texts(at.caption))
    at.selectbox(key=keys.W_N_MECHANISM).set_value("none").run()
    _assert_clean(at)
    assert not any(c.startswith("Noise on n:") for c in _texts(at.caption))
    assert "Exact (best method)" in set(at.dataframe[0].value["method"])
    n_pmf = [_figure(at, i) for i in range(len(at.get("plotly_chart")))][1]
    assert [t["meta"]["kind"] for t in n_pmf["data"]][0] == "n_pmf" and n_pmf["data"][0]["meta"]["method"] == "auto"
