"""Audit s26: the papers' flagship models (Ju et al. 2022's naive-Bayes log-linear model, §4, and linear regression,
§5) opened by a statistics lecturer on Compare, Diagnostics and Privacy budget. Runs are kept small (n = 40,
2 chains x 300 draws)."""
import io

import numpy as np
import pandas as pd

from app_support import open_app

from ui import keys
from ui.compute import sweeps
from ui.params.defaults import default_truth, default_truth_p
from ui.params.query import to_query
from ui.params.scenario import DEFAULT_PRIORS, Scenario

TIMEOUT = 180  # the first run of a model may compile its kernels
M = "naive_bayes_loglinear"
PRIOR = DEFAULT_PRIORS[M]
LOGLINEAR = Scenario(model=M, n=40, prior=tuple(PRIOR.items()), truth=default_truth(M, PRIOR),
                     truth_p=default_truth_p(M, PRIOR), methods=("naive",), chains=2, draws=300, warmup=100)


def _clean(at) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def test_diagnostics_does_not_call_the_table_chain_a_likelihood_estimate():
    """Diagnostics said of the log-linear model's pseudo-marginal sampler "1 statistic draw per likelihood estimate
    in every chain": that sampler estimates no likelihood (engine.methods.loglinear_pm carries one set of tables and
    moves it with the parameters), and its acceptance is that of coupled moves of each probability vector with the
    tables; its table refreshes' acceptance was not shown. The same line under Exact (best method), which picks
    that sampler."""
    from dataclasses import replace

    at = open_app("pages/diagnostics.py", to_query(replace(LOGLINEAR, methods=("pseudo_marginal",))), timeout=TIMEOUT)
    _clean(at)
    line = next(c.value for c in at.caption if c.value.startswith("Pseudo-marginal acceptance"))
    assert "likelihood estimate" not in line and "statistic draw" not in line, line
    assert "of the coupled moves of each probability vector (π, and every row of p) with the tables (target 0.3)" \
        in line, line
    assert "of the table refreshes" in line and "it estimates no likelihood" in line, line

    from ui.narrative import pseudo_marginal_caption  # auto's result carries the pick's info under picked_info
    auto = {"mean_acceptance": 0.31, "target_acceptance": 0.3, "particles": [1, 1],
            "picked_info": {"likelihood": "augmented", "refresh_acceptance": 0.28}}
    assert pseudo_marginal_caption(auto, ("pi[0]", "pi[1]")).startswith(
        "Pseudo-marginal acceptance: 0.31 of the coupled moves of each probability vector")
    assert "0.28 of the table refreshes" in pseudo_marginal_caption(auto, ("pi[0]", "pi[1]"))
    regression = {"mean_acceptance": 0.287, "particles": [1, 1], "likelihood": "estimated"}  # unchanged elsewhere
    assert pseudo_marginal_caption(regression, ("beta[0]", "beta[1]")).endswith(
        "1 statistic draw per likelihood estimate in every chain.")


def test_a_bad_row_of_the_true_p_is_named_in_the_sidebars_words():
    """A row of the true p that is not a probability vector read "data.simulate.p[0][0] must be non-negative …":
    the spec's field, not the box ("True feature probabilities p[k][i][j]"), and no word of which row it is."""
    at = open_app(query=to_query(LOGLINEAR), timeout=TIMEOUT)
    _clean(at)
    typed = "0.5, 0.5, 1.5, -0.5, 0.5, 0.5, 0.5, 0.5"
    at.text_input(key=keys.W_TRUTH_P).input(typed).run()
    assert not at.exception
    errors = [e.value for e in at.sidebar.error]
    assert errors and not any("data.simulate" in e for e in errors), errors
    assert ("True probabilities p, row p[0][1] (the levels of x1 given y = 1) must be non-negative and sum to 1 "
            "(a probability vector) (you entered 2 numbers: 1.5, -0.5).") in errors, errors
    assert at.text_input(key=keys.W_TRUTH_P).value == typed  # what was typed stays


def test_the_sweep_csv_lists_the_parameters_in_the_models_order():
    """The Privacy budget page's sweep CSV sorted its rows by the parameter's name: the log-linear model's p[..]
    rows came before pi[..], and a regression with p = 10 listed beta[10] between beta[1] and beta[2]."""
    names = [f"beta[{j}]" for j in range(11)]
    rows = [{"epsilon": e, "method": m, "param": p, "mean": 0.0, "sd": 1.0, "q5": -1.6, "q95": 1.6, "r_hat": 1.0,
             "ess_bulk": 500.0, "converged": True} for e in (1.0, 0.1) for m in ("naive", "auto") for p in names]
    frame = pd.read_csv(io.StringIO(sweeps.sweep_csv(sweeps.Sweep(table=pd.DataFrame(rows), runs={}, skipped={}))))
    assert list(dict.fromkeys(frame["param"])) == names
    first = frame[frame["param"] == "beta[0]"]
    assert list(zip(first["method"], first["epsilon"])) == [("auto", 0.1), ("auto", 1.0), ("naive", 0.1),
                                                            ("naive", 1.0)]  # method, then ε, as before
    loglinear = ["pi[0]", "pi[1]", "p[0][0][0]", "p[0][0][1]"]
    table = pd.DataFrame({"epsilon": 1.0, "method": "naive", "param": loglinear, "mean": np.zeros(4)})
    frame = pd.read_csv(io.StringIO(sweeps.sweep_csv(sweeps.Sweep(table=table, runs={}, skipped={}))))
    assert list(frame["param"]) == loglinear


def test_the_picker_says_what_sigma2_is_as_it_says_what_each_beta_is():
    """With σ unknown the regression's picker read "beta[0] · intercept", "beta[1] · coefficient of x1", … and then
    a bare "sigma2": the one parameter a newcomer cannot guess went without its words (the axis title had them)."""
    from figures.axes import param_label
    from ui.params.scenario import REGRESSION_BETA

    R = "linear_regression"
    reg = Scenario(model=R, n=40, prior=tuple(DEFAULT_PRIORS[R].items()), truth=REGRESSION_BETA, epsilon=3.0,
                   methods=("naive",), chains=2, draws=300, warmup=100)
    at = open_app(query=to_query(reg), timeout=TIMEOUT)
    at.checkbox(key=keys.prior_key(R, "sigma_unknown")).check().run()
    _clean(at)
    options = at.selectbox(key=keys.W_PARAM_COMPARE).options
    assert options[-1] == "sigma2 · noise variance σ² of y given x", options
    assert options[0] == "beta[0] · intercept"
    # unchanged: a Dirichlet cell (its words say nothing its name does not) and the one-parameter models' names
    assert [param_label(p) for p in ("p[1]", "theta", "lam", "mu", "n")] == ["p[1]", "theta", "lam", "mu", "n"]


def test_a_downloads_scenario_line_names_the_truth_of_a_model_of_several_parameters():
    """Every download of the log-linear model said "simulated records (truth 0.5, 0.5, seed 7)": that is π alone,
    unnamed, read as the model's whole truth (its p was nowhere); the regression's three numbers were not named β."""
    from dataclasses import replace

    from ui.params.scenario import REGRESSION_BETA

    line = sweeps.scenario_words(LOGLINEAR, None, 40)
    assert line.endswith("simulated records (true π = 0.5, 0.5, seed 7)"), line
    R = "linear_regression"
    reg = Scenario(model=R, n=40, prior=tuple(DEFAULT_PRIORS[R].items()), truth=REGRESSION_BETA, epsilon=3.0)
    assert sweeps.scenario_words(reg, None, 40).endswith("(true β = -1.79, -2.89, -0.66, seed 7)")
    assert sweeps.scenario_words(replace(LOGLINEAR, from_prior=True), None, 40).endswith(
        "(truth from the prior, seed 7)")
    one = Scenario(model="beta_binomial", truth="0.3", n=40)  # a one-parameter model: as before
    assert sweeps.scenario_words(one, None, 40).endswith("simulated records (truth 0.3, seed 7)")


def test_a_count_box_refusing_a_value_does_not_suggest_one_it_refuses_too():
    """"classes I (levels of y) = "2.5" is not a whole number: it counts something, e.g. 2000" and "predictors p = "2.5"
    … e.g. 2000": classes I takes 2..1000 and predictors p 1..10, so the example was refused in turn."""
    import pytest

    from ui.params.parsing import parse_number

    with pytest.raises(ValueError) as info:
        parse_number("predictors p", "2.5", integer=True)
    assert str(info.value) == 'predictors p = "2.5" is not a whole number: it counts something, e.g. 2 or 3'
    with pytest.raises(ValueError) as info:
        parse_number("classes I (levels of y)", "", integer=True)
    assert str(info.value) == "classes I (levels of y) is empty: type a whole number"
    at = open_app(query=to_query(LOGLINEAR), timeout=TIMEOUT)
    at.text_input(key=keys.prior_key(M, "class_levels")).input("2.5").run()
    assert not at.exception
    errors = [e.value for e in at.sidebar.error]
    assert 'classes I (levels of y) = "2.5" is not a whole number: it counts something, e.g. 2 or 3' in errors, errors
    assert at.text_input(key=keys.prior_key(M, "class_levels")).value == "2.5"


def test_diagnostics_words_on_mixing_name_no_theta_for_a_model_without_one():
    """Diagnostics' caption and "What am I looking at?" said "every record update is accepted while θ moves slowly"
    and "not how well θ mixes" on the log-linear model and the regression, which have no θ."""
    at = open_app("pages/diagnostics.py", to_query(LOGLINEAR), timeout=TIMEOUT)
    _clean(at)
    intro = at.caption[0].value
    assert "θ" not in intro and "accepted while the parameters move slowly" in intro, intro
    expander = next(m.value for m in at.markdown if m.value.startswith("A Markov chain's draws"))
    assert "θ" not in expander and "not how well the parameters mix" in expander, expander
