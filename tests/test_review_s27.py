"""Session 27: what the suite's speed work changed in the engine, each checked against what it replaces."""
from __future__ import annotations

import numpy as np
import pytest

from engine.models import make_model


def _normal_problem(epsilon: float = 1.0, s_dp: float = 3.0):
    import engine

    return engine.prepare({"seed": 3, "model": {"name": "normal_known_sd", "n": 8},
                           "mechanism": {"name": "laplace", "epsilon": epsilon}, "data": {"s_dp": [s_dp]}})


def test_an_exact_run_priced_first_builds_its_grid_posterior_once_and_draws_the_same(monkeypatch):
    """The app prices an exact run by one evaluation and then runs it: the grid posterior was built twice (half of
    exact's time on a page). The estimate now builds it (afresh, however often it is asked: it times a build) and
    keeps it; the run reads it and draws bitwise what a fresh build draws."""
    import engine
    from engine.cost import estimate_cost
    from engine.methods import exact as exact_module

    problem = _normal_problem()
    exact_module._GRIDS.clear()
    built = []
    real = exact_module._build_grid_posterior
    monkeypatch.setattr(exact_module, "_build_grid_posterior", lambda *a: built.append(a) or real(*a))
    estimate_cost(problem, {"name": "exact"})
    estimate_cost(problem, {"name": "exact"})
    assert len(built) == 2  # an estimate times a build each time
    kept = engine.run_method(problem, {"name": "exact"}, 5)
    assert len(built) == 2
    exact_module._GRIDS.clear()
    fresh = engine.run_method(problem, {"name": "exact"}, 5)
    assert len(built) == 3
    np.testing.assert_array_equal(kept.draws, fresh.draws)
    assert {k: v for k, v in kept.info.items() if k != "wall_time_s"} == \
        {k: v for k, v in fresh.info.items() if k != "wall_time_s"}
    # another ε, another release, the noise-free (naive) posterior: each its own
    for other in (_normal_problem(epsilon=2.0), _normal_problem(s_dp=3.5)):
        engine.run_method(other, {"name": "exact"}, 5)
    assert len(built) == 5
    clamped = engine.prepare({"seed": 3, "model": {"name": "poisson_gamma", "n": 30, "upper": 4},
                              "mechanism": {"name": "laplace", "epsilon": 1.0}, "data": {"s_dp": [60.0]}})
    engine.run_method(clamped, {"name": "exact"}, 5)
    engine.run_method(clamped, {"name": "naive"}, 5)  # the clamped sum's noise-free posterior
    assert len(built) == 7
    engine.run_method(clamped, {"name": "naive"}, 6)
    assert len(built) == 7
    # the last _GRIDS.size are kept, the oldest dropped first
    def release(k):
        return engine.prepare({"seed": 3, "model": {"name": "poisson_gamma", "n": 30, "upper": 4},
                               "mechanism": {"name": "laplace", "epsilon": 1.0}, "data": {"s_dp": [40.0 + k]}})

    assert exact_module._GRIDS.size == 16
    monkeypatch.setattr(exact_module._GRIDS, "size", 3)
    for k in range(5):
        exact_module.grid_posterior_of(release(k))
    assert len(exact_module._GRIDS) == 3
    assert exact_module._grid_key(release(1), False, None) not in exact_module._GRIDS
    assert exact_module._grid_key(release(2), False, None) in exact_module._GRIDS


def test_the_mixture_cdf_is_scipys_beta_and_gamma_cdf_bitwise():
    """``_mixture_cdf`` calls the incomplete beta and gamma functions directly (the distributions' argument checks
    cost 0.2 ms a call, a hundred calls a quantile): the same numbers as stats.beta.cdf / stats.gamma.cdf with
    scale = 1 / rate, at and beyond the support's ends too."""
    from scipy import stats

    from engine.methods.exact import _mixture_cdf

    rng = np.random.default_rng(27)
    for m in (1, 7, 2500):
        w = rng.random(m)
        w /= w.sum()
        p1, p2 = rng.gamma(2.0, 50.0, m) + 1e-3, rng.gamma(2.0, 50.0, m) + 1e-3
        x = np.concatenate([rng.random(9), [0.0, 1.0, -0.5, 1.5, 1e-300]])
        for gamma, xs in ((False, x), (True, 10 * x)):
            expected = np.zeros(xs.shape)
            for lo in range(0, m, 2000):
                sl = slice(lo, lo + 2000)
                c = (stats.gamma.cdf(xs[None, :], p1[sl, None], scale=1.0 / p2[sl, None]) if gamma else
                     stats.beta.cdf(xs[None, :], p1[sl, None], p2[sl, None]))
                expected += w[sl] @ c
            np.testing.assert_array_equal(_mixture_cdf(gamma, w, p1, p2, xs), expected)


@pytest.mark.parametrize("name, params", [
    ("naive_bayes_loglinear", {"n": 60, "class_levels": 3, "feature_levels": [3, 2]}),
    ("dirichlet_multinomial", {"n": 60, "alpha": [1.0, 2.0, 0.5]})])
def test_a_marginal_answers_as_scipys_frozen_distribution_does(name, params):
    """The Dirichlet models' marginals are ``Marginal``s (a frozen Beta took 1 ms to build, half of the log-linear
    naive run): every method gives what ``stats.beta(a, b)`` gives, bitwise, and the naive run's densities and the
    confidential posterior's are those of frozen marginals."""
    import engine
    from engine.models.base import Marginal
    from engine.studies.replicates import _confidential_means

    model = make_model(name, params)
    rng = np.random.default_rng(5)
    records = model.sample_records(rng, model.sample_prior(rng, 1)[0])
    marginals = model.posterior_marginals(model.suff(records))
    for marginal in marginals.values():
        assert isinstance(marginal, Marginal)
        frozen = marginal.dist(*marginal.args)
        for method in ("mean", "std", "var", "median", "support"):
            np.testing.assert_array_equal(getattr(marginal, method)(), getattr(frozen, method)())
        for method, arg in (("cdf", [0.1, 0.5]), ("ppf", [0.05, 0.95]), ("pdf", [0.3]), ("logpdf", [0.3]),
                            ("sf", [0.3]), ("isf", [0.3]), ("interval", 0.9)):
            np.testing.assert_array_equal(getattr(marginal, method)(arg), getattr(frozen, method)(arg))
        np.testing.assert_array_equal(marginal.rvs(size=3, random_state=1), frozen.rvs(size=3, random_state=1))
    np.testing.assert_array_equal(_confidential_means(model, records),
                                  [m.dist(*m.args).mean() for m in marginals.values()])
    problem = engine.Problem(model=model, mechanism=engine.make_mechanism("laplace", {"epsilon": 1.0}),
                             s_dp=model.statistic(records).astype(float), records=records)
    runs = [engine.run_method(problem, {"name": "naive"}, 3), engine.confidential_posterior(problem, seed=1)]
    cls = type(model)
    light = cls.posterior_marginals
    try:
        cls.posterior_marginals = lambda self, suff: {k: m.dist(*m.args) for k, m in light(self, suff).items()}
        frozen_runs = [engine.run_method(problem, {"name": "naive"}, 3), engine.confidential_posterior(problem, seed=1)]
    finally:
        cls.posterior_marginals = light
    for a, b in zip(runs, frozen_runs):
        np.testing.assert_array_equal(a.draws, b.draws)
        for param in a.density:
            for x, y in zip(a.density[param], b.density[param]):
                np.testing.assert_array_equal(x, y)
