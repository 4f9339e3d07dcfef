"""``auto`` serves every model: naive_bayes_loglinear and custom models are compared by their cost per
effective draw, with the same fallback and the same ``info`` as the one-statistic models."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import engine
from engine.cost import estimate_cost
from engine.methods.auto import choose

LOGLINEAR = {"name": "naive_bayes_loglinear", "class_levels": 3, "feature_levels": [3, 3]}


def _loglinear(n, epsilon, seed=1):
    return engine.prepare({"seed": seed, "model": {**LOGLINEAR, "n": n}, "mechanism": {"name": "laplace",
                                                                                       "epsilon": epsilon},
                           "data": {"simulate": {"from_prior": True}}})


def test_loglinear_rule_prices_both_chains():
    """Many records, or wide noise: the pseudo-marginal chain (no n in its cost); few records and narrow
    noise: DA-MCMC's sweep of 100 records is cheaper."""
    for n, eps in ((10_000, 1.0), (1_000_000, 10.0), (100, 0.1)):
        picked, why, numbers = choose(_loglinear(n, eps), np.random.default_rng(0))
        assert picked == "pseudo_marginal" and "not with the number of records" in why, (n, eps, why)
        assert numbers["pseudo_marginal_ns_per_ess"] <= numbers["da_mcmc_ns_per_ess"]
    picked, why, numbers = choose(_loglinear(100, 10.0), np.random.default_rng(0))
    assert picked == "da_mcmc" and numbers["da_mcmc_ns_per_ess"] < numbers["pseudo_marginal_ns_per_ess"]
    # the pseudo-marginal price does not grow with n
    small, big = (estimate_cost(_loglinear(n, 1.0), {"name": "pseudo_marginal"}) for n in (100, 100_000))
    assert small.units == big.units and small.seconds == pytest.approx(big.seconds)


def test_loglinear_auto_runs_and_reports():
    problem = _loglinear(100_000, 0.1)
    result = engine.run_method(problem, {"name": "auto", "chains": 4, "draws": 1000, "warmup": 400}, 3)
    info = result.info
    assert result.method == "auto" and info["picked"] == "pseudo_marginal" and info["mcmc"] is True
    assert info["attempts"][0]["method"] == "pseudo_marginal" and "number of table cells" in info["why"]
    verdict = engine.summary(result).attrs["convergence"]
    assert verdict["converged"], verdict
    again = engine.run_method(problem, {"name": "auto", "chains": 4, "draws": 1000, "warmup": 400}, 3)
    np.testing.assert_array_equal(result.draws, again.draws)


def test_loglinear_fallback_tries_the_other_chain():
    result = engine.run_method(_loglinear(200, 1.0), {"name": "auto", "chains": 2, "draws": 30, "warmup": 30}, 4)
    methods = [a["method"] for a in result.info["attempts"]]
    assert len(methods) == 3 and set(methods[:2]) == {"pseudo_marginal", "da_mcmc"}
    assert result.info["attempts"][2]["draws"] == 120 and "reran" in result.info["why"]


def _custom(n, eps, log_prior=True, a=2.0, b=3.0):
    return engine.CustomModel(
        n=n, param_names=("theta",),
        latent_sampler=lambda rng, th, size: (rng.random(size) < th[0]).astype(np.int64),
        posterior_sampler=lambda rng, x, th: np.array([rng.beta(a + x.sum(), b + x.size - x.sum())]),
        record_statistic=lambda x: np.asarray(x, float).reshape(-1, 1),
        init_theta=(0.4,),
        log_mechanism=lambda s_dp, s: -eps * abs(float(s_dp[0]) - float(s[0])),
        prior_sampler=lambda rng, size: rng.beta(a, b, size),
        log_prior=(lambda th: stats.beta.logpdf(th[0], a, b) if 0 < th[0] < 1 else -math.inf) if log_prior else None,
        epsilon=eps,
    )


def test_custom_models_go_to_pseudo_marginal_when_it_exists_and_pays():
    wide = engine.Problem(model=_custom(200, 0.05), mechanism=None, s_dp=np.array([83.0]))
    picked, why, numbers = choose(wide, np.random.default_rng(0))
    assert picked == "pseudo_marginal" and numbers["particles_needed"] <= 2 and "log_prior" in why
    narrow = engine.Problem(model=_custom(200, 5.0), mechanism=None, s_dp=np.array([83.0]))
    assert choose(narrow, np.random.default_rng(0))[0] == "da_mcmc"
    no_prior = engine.Problem(model=_custom(200, 0.05, log_prior=False), mechanism=None, s_dp=np.array([83.0]))
    picked, why, _ = choose(no_prior, np.random.default_rng(0))
    assert picked == "da_mcmc" and "without log_prior" in why
    result = engine.run_method(wide, {"name": "auto", "chains": 2, "draws": 600, "warmup": 300}, 5)
    assert result.info["picked"] == "pseudo_marginal" and result.info["attempts"][0]["method"] == "pseudo_marginal"
    # the exact posterior of this Beta-Bernoulli model with Laplace(1/eps) noise on the sum, on a grid of s
    s = np.arange(201)
    lw = stats.betabinom.logpmf(s, 200, 2.0, 3.0) - 0.05 * np.abs(83.0 - s)
    w = np.exp(lw - lw.max())
    w /= w.sum()
    mean = float(np.sum(w * (2.0 + s) / 205.0))
    draws = result.draws[:, :, 0]
    ess = float(engine.summary(result)["ess_bulk"].iloc[0])
    assert abs(draws.mean() - mean) < 4.5 * draws.std() / math.sqrt(ess)


def test_a_switched_pick_says_the_rule_chose_the_other_first():
    """The CLI printed "auto picked pseudo_marginal: DA-MCMC is cheaper per effective draw here: …": the rule's reason
    was the first choice's, read as the pick's. A pick that differs from the rule's first choice now says so first."""
    spec = {"seed": 7, "model": {"name": "naive_bayes_loglinear", "n": 30, "class_levels": 2, "feature_levels": [2, 2]},
            "mechanism": {"name": "laplace", "epsilon": 1.0}, "data": {"simulate": {"from_prior": True}},
            "method": {"name": "auto", "chains": 2, "draws": 300, "warmup": 100}}
    info = engine.run(spec).info
    first = info["attempts"][0]["method"]
    assert info["picked"] != first, info["why"]  # the case this test is about
    assert info["why"].startswith(f"first {first}, as the rule chose: DA-MCMC is cheaper per effective draw here"), \
        info["why"]
