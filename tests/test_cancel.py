"""Stopping a run from its progress callback (engine/core/chains.py): the draws made are kept, marked as
stopped; a stop before any draw exists raises Cancelled."""
from __future__ import annotations

import numpy as np
import pytest

import engine


@pytest.mark.parametrize("method", ["da_mcmc", "pseudo_marginal"])
@pytest.mark.parametrize("parallel", [True, False])
def test_a_callback_returning_false_stops_the_run_and_keeps_the_draws_made(method, parallel):
    """The progress callback is the cancellation channel: after it returns False the chains stop at
    their next block; the draws kept are a prefix of the draws an uncancelled run makes."""
    from engine.methods.da_mcmc import da_mcmc
    from engine.methods.pseudo_marginal import pseudo_marginal

    problem = engine.prepare({"model": {"name": "beta_binomial", "n": 2000}, "mechanism": {"name": "laplace",
                              "epsilon": 1.0}, "data": {"s_dp": [600]}})
    run = da_mcmc if method == "da_mcmc" else pseudo_marginal
    full = run(problem, engine.method_rng(4), chains=2, draws=20_000, warmup=100, parallel=parallel)
    calls = []

    def cancel_after_warmup(done, total):
        calls.append(done)
        return done < 2 * 2_000

    part = run(problem, engine.method_rng(4), chains=2, draws=20_000, warmup=100, parallel=parallel,
               on_progress=cancel_after_warmup)
    assert part.info["stopped"] == "cancelled" and full.info["stopped"] is None
    assert 0 < part.n_draws < 20_000
    np.testing.assert_array_equal(part.draws, full.draws[:part.n_chains, :part.n_draws])


def test_cancelling_during_warm_up_raises_cancelled():
    from engine.core.chains import Cancelled
    from engine.methods.da_mcmc import da_mcmc

    problem = engine.prepare({"model": {"name": "beta_binomial", "n": 20000}, "mechanism": {"name": "laplace",
                              "epsilon": 1.0}, "data": {"s_dp": [6000]}})
    with pytest.raises(Cancelled, match="warm-up"):
        da_mcmc(problem, engine.method_rng(1), chains=1, draws=100, warmup=5000, parallel=False,
                on_progress=lambda done, total: False)


@pytest.mark.parametrize("model,truth", [({"name": "beta_binomial", "n": 1000}, {"theta": 0.3}),
                                         ({"name": "normal_known_sd", "n": 20}, {"mu": 0.5}),
                                         ({"name": "linear_regression", "n": 20}, {"beta": [1.0, -1.0, 0.5]})],
                         ids=["compiled", "python", "regression"])
def test_abc_stops_when_its_progress_callback_says_so(model, truth):
    """Each of ABC's three proposal loops returns what it accepted once the callback returns False (after
    the second batch here), marked cancelled, keeping every draw accepted so far."""
    problem = engine.prepare({"seed": 1, "model": model, "mechanism": {"name": "laplace", "epsilon": 1.0},
                              "data": {"simulate": truth}})
    calls = []

    def stop_after_two(done, total):
        calls.append(done)
        return len(calls) < 2

    settings = {"name": "abc_rejection", "chains": 1, "draws": 10**6, "batch_size": 1000, "max_seconds": 300}
    res = engine.run_method(problem, settings, 3, on_progress=stop_after_two)
    assert len(calls) == 2 and res.info["stopped_by"] == "cancelled" and res.info["stopped"] == "cancelled"
    assert 0 < res.n_draws < 10**6 and res.n_draws == calls[-1]


def test_abc_stopped_before_any_acceptance_raises_cancelled():
    problem = engine.prepare({"seed": 1, "model": {"name": "beta_binomial", "n": 1000},
                              "mechanism": {"name": "laplace", "epsilon": 1.0}, "data": {"s_dp": [5000.0]}})  # 4000 noise scales above n
    with pytest.raises(engine.Cancelled, match="none accepted"):
        engine.run_method(problem, {"name": "abc_rejection", "chains": 1, "draws": 100, "batch_size": 100},
                          3, on_progress=lambda done, total: False)
