"""The Privacy budget page after a new-user audit: the sd figure's floor says which posteriors stay above it, its
prior sd anchors the axis, each not-converged note sits with the figure that marks them its way, and a frontier
read from draws says why it can fold back."""
import json
import math

import numpy as np
import pandas as pd
import pytest
from app_support import open_app

from engine.models import make_model
from engine.studies.replicates import prior_mean, prior_sd

from ui import keys
from ui.compute import sweeps
from ui.params.scenario import Scenario
from ui.presets import REGRESSION


def _in_order(node):
    """The page's elements in the order they are drawn (blocks opened depth-first)."""
    children = getattr(node, "children", None)
    if children:
        for k in sorted(children):
            yield from _in_order(children[k])
    else:
        yield node


def _chart(at, key):
    return json.loads(next(c for c in at.get("plotly_chart") if c.proto.id and key in str(c.key)).proto.spec)


def test_prior_sds_are_the_models_prior_in_closed_form():
    """Regression: beta[j] ~ N(0, prior_sd^2), prior_sd = 2; Beta(1, 1): 1/sqrt(12); and every model's closed form
    against the sd of 400,000 draws of its own prior sampler (5 Monte Carlo standard errors, sd / sqrt(2N), which
    holds for these light-tailed priors within a few percent)."""
    assert sweeps.prior_sds(REGRESSION, None) == {"beta[0]": 2.0, "beta[1]": 2.0, "beta[2]": 2.0}
    (theta,) = sweeps.prior_sds(Scenario(), None).values()
    assert theta == pytest.approx(1 / math.sqrt(12), rel=1e-12)
    size = 400_000
    rng = np.random.default_rng(3)
    specs = [{"name": "beta_binomial", "n": 5, "a": 2.0, "b": 5.0}, {"name": "poisson_gamma", "n": 5, "alpha": 3.0,
             "beta": 2.0}, {"name": "dirichlet_multinomial", "n": 5, "alpha": [1.0, 2.0, 4.0]},
             {"name": "normal_known_sd", "n": 5, "sd": 1.0, "prior_mean": 1.0, "prior_sd": 3.0},
             {"name": "naive_bayes_loglinear", "n": 5, "class_levels": 3, "feature_levels": [2, 4], "alpha": 1.5},
             {"name": "linear_regression", "n": 5, "p": 1, "prior_sd": 1.5, "sigma_prior": {"a": 4.0, "b": 3.0}}]
    for spec in specs:
        model = make_model(spec["name"], spec)
        closed = prior_sd(model)
        drawn = np.std(np.asarray(model.sample_prior(rng, size), float).reshape(size, -1), axis=0)
        kurtosis_room = 3 if spec["name"] == "linear_regression" else 1  # sigma^2's inverse-gamma tail (a = 4)
        assert np.all(np.abs(drawn / closed - 1) < 5 * kurtosis_room / math.sqrt(2 * size)), (spec, closed, drawn)
    sigma = make_model("linear_regression", specs[-1])  # the replicate table's prior mean of sigma^2 read 0
    assert prior_mean(sigma)[-1] == pytest.approx(3.0 / (4.0 - 1.0))
    heavy = make_model("linear_regression", {"name": "linear_regression", "n": 5, "p": 1,
                                             "sigma_prior": {"a": 2.0, "b": 1.0}})
    assert math.isnan(prior_sd(heavy)[-1])  # InvGamma(2, 1) has no finite variance


def test_the_sd_figure_and_the_not_converged_notes_on_the_default_page():
    at = open_app("pages/privacy_budget.py", timeout=180)
    assert not at.exception, [e.value for e in at.exception]
    # DA-MCMC is not swept by default where an exact method runs (the demo's naive and Exact (best method)): added
    assert at.multiselect(key=keys.W_SWEEP_METHODS).value == ["naive", "auto"]
    at.multiselect(key=keys.W_SWEEP_METHODS).set_value(["naive", "da_mcmc", "auto"]).run()
    at.select_slider(key=keys.W_STEP).set_value(0.215).run()
    by_kind = {t["meta"]["kind"]: t for t in _chart(at, keys.SD_CHART)["data"]}
    assert by_kind["confidential_sd"]["name"].endswith("(no exact posterior goes below)")
    assert by_kind["prior_sd"]["meta"]["value"] == pytest.approx(1 / math.sqrt(12), rel=1e-12)  # Beta(1, 1)'s sd
    # the demo's DA-MCMC has not converged at ε = 0.1 and 0.215, the slider's ε: circled x on the interval and sd
    # figures, "(not converged)" in the legend of the densities at that ε; each note beside its own figure
    order = list(_in_order(at.main))
    place = {name: next(i for i, e in enumerate(order) if e.type == "plotly_chart" and key in str(e.key))
             for name, key in (("sd", keys.SD_CHART), ("frontier", keys.FRONTIER_CHART), ("step", keys.STEP_CHART))}
    captions = [(i, e.value) for i, e in enumerate(order) if e.type == "caption"]
    circled = [i for i, text in captions if text.startswith("Circled x")]
    assert len(circled) == 1 and place["sd"] < circled[0] < place["frontier"], captions
    note = [(i, text) for i, text in captions if "(not converged) in the legend" in text]
    assert len(note) == 1 and note[0][0] > place["step"] and "Circled" not in note[0][1], captions
    assert note[0][1].startswith("DA-MCMC (not converged) in the legend: its run at ε = 0.215 has not converged")
    step = _chart(at, keys.STEP_CHART)
    assert any(t.get("name") == "DA-MCMC (not converged)" for t in step["data"])
    assert not any("circle-x" in str((t.get("marker") or {}).get("symbol")) for t in step["data"])


def test_a_frontier_read_from_draws_says_why_it_can_fold_back():
    """Three-cell tables under randomized response have no exact posterior: the frontier's sd is each ε's naive
    draws' sd, and a sentence says neighbouring ε's within Monte Carlo error can cross."""
    at = open_app("pages/privacy_budget.py", timeout=180)
    at.multiselect(key=keys.W_SWEEP_METHODS).set_value(["naive"])
    at.selectbox(key=keys.W_MODEL).set_value("dirichlet_multinomial")
    at.selectbox(key=keys.W_MECHANISM).set_value("randomized_response").run()
    assert not at.exception, [e.value for e in at.exception]
    captions = [c.value for c in at.caption]
    assert any("estimated from its own run's draws" in c and "Monte Carlo error" in c for c in captions), captions
    assert not any(c.startswith("±: half the width of the exact posterior's") for c in captions)
    assert "prior_sd" in {t["meta"]["kind"] for t in _chart(at, keys.SD_CHART)["data"]}  # Dirichlet's marginals


def _sweep_of(rows):
    """A sweep whose table holds (epsilon, method, param, sd, converged) rows."""
    table = pd.DataFrame(rows, columns=["epsilon", "method", "param", "sd", "converged"])
    return sweeps.Sweep(table=table, runs={}, skipped={})


def test_the_smallest_epsilon_skips_runs_that_have_not_converged():
    """Audit: the box named ε = 1 from an Exact (best method) run marked not converged in both figures. A run that
    has not converged is passed over (and named); none left meeting T is said as none."""
    rows = [(0.5, "auto", "beta[0]", 1.2, False), (1.0, "auto", "beta[0]", 1.5, False),
            (2.0, "auto", "beta[0]", 1.6, True), (4.0, "auto", "beta[0]", 0.9, True),
            (0.5, "auto", "beta[1]", 3.0, True), (1.0, "naive", "beta[0]", 0.1, True)]
    pick = sweeps.smallest_epsilon(_sweep_of(rows), "beta[0]", 1.8, method="auto")
    assert pick == sweeps.SmallestEpsilon(2.0, (0.5, 1.0))
    assert sweeps.smallest_epsilon(_sweep_of(rows), "beta[0]", 1.55, method="auto") == sweeps.SmallestEpsilon(4.0, (
        0.5, 1.0))
    assert sweeps.smallest_epsilon(_sweep_of(rows), "beta[0]", 0.5, method="auto") == sweeps.SmallestEpsilon(None)
    unconverged = [r for r in rows if not r[4]]  # every run meeting T unconverged: none is the answer, both named
    assert sweeps.smallest_epsilon(_sweep_of(unconverged), "beta[0]", 1.8, method="auto") == sweeps.SmallestEpsilon(
        None, (0.5, 1.0))
    trusted = [r[:4] + (True,) for r in rows]
    assert sweeps.smallest_epsilon(_sweep_of(trusted), "beta[0]", 1.8, method="auto") == sweeps.SmallestEpsilon(0.5)
