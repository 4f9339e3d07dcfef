"""One-posterior sampling (OPS): the privacy claim checked on the release density itself.

OPS releases k draws from a tempered, truncated posterior; the engine claims the whole release is
epsilon-DP, i.e. one draw is (epsilon / k)-DP: for every pair of neighbouring record sets x, x'
(one record replaced) and every theta, |log p(theta | x) - log p(theta | x')| <= epsilon / k.
These tests evaluate ``ops_release_log_pdf`` on a fine theta grid over the truncation set for every
neighbouring pair that matters (the density depends on the records only through their clamped
sum, so the pairs are indexed by that sum and the change one record can make to it).
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import engine
from engine.models import make_model
from engine.methods.ops import ops_setup, ops_release_log_pdf

BUDGETS = [(1.0, 1), (1.0, 10), (0.1, 100), (5.0, 3)]
SLACK = 1e-9  # rounding in log densities, not a statistical margin


def _grid(setup, size=4001):
    lo, hi = setup["truncation"]
    return np.linspace(lo, hi, size)


def _worst_ratio(model, pairs, setup):
    theta = _grid(setup)
    worst = 0.0
    for x, x2 in pairs:
        d = ops_release_log_pdf(model, x, theta, setup) - ops_release_log_pdf(model, x2, theta, setup)
        assert np.all(np.isfinite(d))
        worst = max(worst, float(np.max(np.abs(d))))
    return worst


@pytest.mark.parametrize("epsilon, k", BUDGETS)
@pytest.mark.parametrize("prior", [(1.0, 1.0), (0.5, 3.0)])
def test_beta_binomial_ops_is_epsilon_dp(epsilon, k, prior):
    n = 20
    model = make_model("beta_binomial", {"n": n, "a": prior[0], "b": prior[1]})
    setup = ops_setup(model, epsilon, k)
    # neighbours: s ones vs s + 1 ones, for every s in 0..n-1 (one record flipped from 0 to 1)
    pairs = []
    for s in range(n):
        x = np.array([1] * s + [0] * (n - s))
        x2 = x.copy()
        x2[s] = 1
        pairs.append((x, x2))
    worst = _worst_ratio(model, pairs, setup)
    assert worst * k <= epsilon + SLACK, f"max |log ratio| x k = {worst * k:.6g} > epsilon = {epsilon}"
    # the check is not vacuous: the bound is within a factor of 4 of tight
    assert worst * k > epsilon / 4


@pytest.mark.parametrize("epsilon, k", BUDGETS)
def test_poisson_gamma_ops_is_epsilon_dp(epsilon, k):
    n, upper = 6, 4
    model = make_model("poisson_gamma", {"n": n, "alpha": 2.0, "beta": 1.0, "upper": upper})
    setup = ops_setup(model, epsilon, k)
    # the density depends on sum(min(x, upper)); one record moves that sum by any d in 1..upper
    pairs, seen = [], set()
    for total in range(n * upper + 1):
        x = np.zeros(n, dtype=int)
        for i in range(total):
            x[i % n] += 1
        for i, v in itertools.product(range(n), range(upper + 3)):  # values above upper are clamped
            x2 = x.copy()
            x2[i] = v
            key = (int(np.minimum(x, upper).sum()), int(np.minimum(x2, upper).sum()))
            if key not in seen:  # only the clamped sums matter; evaluate each pair of sums once
                seen.add(key)
                pairs.append((x, x2))
    worst = _worst_ratio(model, pairs, setup)
    assert worst * k <= epsilon + SLACK, f"max |log ratio| x k = {worst * k:.6g} > epsilon = {epsilon}"
    assert worst * k > epsilon / 4


@pytest.mark.parametrize("epsilon, k", BUDGETS)
def test_normal_known_sd_ops_is_epsilon_dp(epsilon, k):
    n, lo, hi = 8, -2.0, 2.0
    model = make_model("normal_known_sd", {"n": n, "sd": 1.0, "lo": lo, "hi": hi, "prior_sd": 3.0})
    setup = ops_setup(model, epsilon, k)
    rng = np.random.default_rng(0)
    pairs = []
    for base in (np.full(n, lo), np.full(n, hi), np.zeros(n), rng.uniform(-3, 3, n)):
        for v in (lo, hi, 0.0, -5.0, 5.0):  # the extreme replacements and clamped values
            x2 = base.copy()
            x2[0] = v
            pairs.append((base, x2))
    worst = _worst_ratio(model, pairs, setup)
    assert worst * k <= epsilon + SLACK, f"max |log ratio| x k = {worst * k:.6g} > epsilon = {epsilon}"
    assert worst * k > epsilon / 4


def test_ops_setup_budget_split():
    model = make_model("beta_binomial", {"n": 10})
    setup = ops_setup(model, 2.0, 8)
    assert setup["epsilon_per_draw"] == pytest.approx(0.25)
    assert setup["tau"] == pytest.approx(2.0 / (2 * 8 * np.log(0.9 / 0.1)))


def _simulated(model, mechanism, simulate, seed=5):
    return engine.prepare({"seed": seed, "model": model, "mechanism": mechanism, "data": {"simulate": simulate}})


@pytest.mark.parametrize("model, simulate", [
    ({"name": "beta_binomial", "n": 40}, {"theta": 0.3}),
    ({"name": "poisson_gamma", "n": 40, "upper": 5}, {"lam": 2.0}),
    ({"name": "dirichlet_multinomial", "n": 40, "alpha": [1, 1, 1]}, {"p": [0.2, 0.3, 0.5]}),
    ({"name": "normal_known_sd", "n": 40}, {"mu": 0.5}),
])
def test_ops_releases_k_draws_inside_the_truncation(model, simulate):
    problem = _simulated(model, {"name": "laplace", "epsilon": 1.0}, simulate)
    result = engine.run_method(problem, {"name": "ops", "k": 25}, 1)
    assert result.draws.shape == (1, 25, len(result.param_names))
    lo, hi = result.info["truncation"]
    assert np.all(result.draws >= lo) and np.all(result.draws <= hi)
    assert result.info["epsilon_total"] == pytest.approx(1.0)


def test_ops_needs_records():
    problem = engine.prepare({"model": {"name": "beta_binomial", "n": 10}, "mechanism": {"name": "laplace", "epsilon": 1.0},
                              "data": {"s_dp": [4.2]}})
    with pytest.raises(ValueError, match="^data"):
        engine.run_method(problem, {"name": "ops"}, 0)


def test_ops_needs_bounded_poisson_records():
    problem = _simulated({"name": "poisson_gamma", "n": 10}, {"name": "laplace", "epsilon": 1.0}, {"lam": 2.0})
    with pytest.raises(ValueError, match="^model.upper"):
        engine.run_method(problem, {"name": "ops"}, 0)


def test_ops_needs_a_pure_epsilon():
    problem = _simulated({"name": "beta_binomial", "n": 10}, {"name": "gaussian", "sigma": 1.0}, {"theta": 0.4})
    with pytest.raises(ValueError, match="^mechanism"):
        engine.run_method(problem, {"name": "ops"}, 0)
    # an explicit budget makes it run
    result = engine.run_method(problem, {"name": "ops", "epsilon": 1.0, "k": 5}, 0)
    assert result.draws.shape == (1, 5, 1)
