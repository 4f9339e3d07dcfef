"""``auto`` picks an exact method by its cost rule, says why, and falls back when a chain does not converge."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import engine
from engine.methods.auto import choose
from engine.methods.pseudo_marginal import moment_estimate


def _problem(model, mechanism, data):
    return engine.prepare({"seed": 1, "model": model, "mechanism": mechanism, "data": data})


def test_closed_form_goes_to_exact():
    problem = _problem({"name": "beta_binomial", "n": 50}, {"name": "laplace", "epsilon": 0.5}, {"s_dp": [20]})
    picked, why, _ = choose(problem, np.random.default_rng(0))
    assert picked == "exact" and "closed form" in why
    result = engine.run_method(problem, {"name": "auto", "chains": 2, "draws": 500}, 3)
    assert result.method == "auto" and result.info["picked"] == "exact" and result.info["mcmc"] is False
    assert engine.summary(result).attrs["convergence"]["applicable"] is False


def test_wide_noise_goes_to_pseudo_marginal_and_narrow_noise_to_da_mcmc():
    """The rule between the two chains (exact set aside): clamped Poisson at scale 500 on n = 2000 needs
    one particle; at epsilon = 10 (scale 0.5) the estimator would need dozens."""
    wide = _problem({"name": "poisson_gamma", "n": 2000, "upper": 5}, {"name": "laplace", "scale": 500.0},
                    {"simulate": {"lam": 3.0}})
    narrow = _problem({"name": "poisson_gamma", "n": 2000, "upper": 5}, {"name": "laplace", "epsilon": 10.0},
                      {"simulate": {"lam": 3.0}})
    picked, why, numbers = choose(wide, np.random.default_rng(0), allow_exact=False)
    assert picked == "pseudo_marginal" and numbers["particles_needed"] == 1
    # the rule compares costs, and the reason says so (it said "the noise is wide", which the rule did not test)
    assert why.startswith("the pseudo-marginal sampler is cheaper per effective draw here: about ") and \
        why.endswith("; it needs 1 simulated statistic per step for a precise likelihood estimate"), why
    picked, why, numbers = choose(narrow, np.random.default_rng(0), allow_exact=False)
    assert picked == "da_mcmc" and numbers["particles_needed"] > 10
    assert why.startswith("DA-MCMC is cheaper per effective draw here: about ") and \
        f"it needs {numbers['particles_needed']:,} simulated statistics per step" in why, why


def test_randomized_response_table_goes_to_a_chain_and_reports_attempts():
    problem = engine.prepare(engine.scenario("admissions_rr"))
    result = engine.run_method(problem, {"name": "auto", "chains": 4, "draws": 1500, "warmup": 500}, 5)
    assert result.info["picked"] in ("pseudo_marginal", "da_mcmc") and result.info["mcmc"] is True
    assert result.info["attempts"][0]["method"] in ("pseudo_marginal", "da_mcmc")
    verdict = engine.summary(result).attrs["convergence"]
    assert verdict["applicable"]
    best = result.info["attempts"]
    assert any(a["converged"] for a in best) == verdict["converged"]


def test_fallback_runs_the_other_chain_when_the_first_does_not_converge():
    """Thirty draws cannot give 400 effective draws: every attempt fails the verdict, so auto tries the
    other chain and then the better one with four times the draws, and says so."""
    problem = engine.prepare(engine.scenario("admissions_rr"))  # randomized response on 4 cells: no exact
    result = engine.run_method(problem, {"name": "auto", "chains": 2, "draws": 30, "warmup": 30}, 4)
    methods = [a["method"] for a in result.info["attempts"]]
    assert len(methods) == 3 and set(methods[:2]) == {"pseudo_marginal", "da_mcmc"}
    assert result.info["attempts"][2]["draws"] == 120
    assert "did not converge" in result.info["why"] and "reran" in result.info["why"]


def test_same_seed_same_draws():
    problem = engine.prepare(engine.scenario("admissions_rr"))
    a = engine.run_method(problem, {"name": "auto", "chains": 2, "draws": 300}, 8)
    b = engine.run_method(problem, {"name": "auto", "chains": 2, "draws": 300}, 8)
    np.testing.assert_array_equal(a.draws, b.draws)


@pytest.mark.parametrize("model, truth", [
    ({"name": "poisson_gamma", "n": 500, "upper": 4}, 2.5),
    ({"name": "normal_known_sd", "n": 500, "sd": 1.0, "lo": -1.0, "hi": 2.0}, 0.7),
    ({"name": "beta_binomial", "n": 500}, 0.35),
])
def test_moment_estimate_inverts_the_statistic_mean(model, truth):
    """theta with E[s | theta] = s: checked by simulation of the statistic at the returned theta."""
    m = engine.make_model(model["name"], model)
    rng = np.random.default_rng(0)
    s = float(np.mean(m.sample_statistic(rng, np.full((4000, 1), truth))))
    problem = engine.Problem(model=m, mechanism=engine.make_mechanism("laplace", {"scale": 1.0}), s_dp=np.array([s]))
    est = float(moment_estimate(problem)[0])
    sd_s = float(np.std(m.sample_statistic(rng, np.full((4000, 1), truth)))) / np.sqrt(4000)
    # the estimate's statistic mean matches s to within a few of its own Monte Carlo errors
    s_back = float(np.mean(m.sample_statistic(np.random.default_rng(1), np.full((4000, 1), est))))
    assert abs(s_back - s) < 6 * sd_s * np.sqrt(2), (est, truth)
    assert stats.norm.cdf(0) == 0.5


def test_the_reasons_costs_read_in_the_unit_that_shows_them():
    """"about 0.0 ms per effective draw" (the regression's wide-noise pick at n = 100) and "1 sweeps"."""
    from engine.methods.auto import _sweeps, _time_of

    assert [_time_of(ns) for ns in (2.5e6, 1.94e6, 85_300.0, 40.0)] == ["2.5 ms", "1.9 ms", "85 µs", "under 1 µs"]
    assert [_sweeps(c) for c in (1.0, 1.0004, 2.5)] == ["1 sweep", "1 sweep", "2.5 sweeps"]
