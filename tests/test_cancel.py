"""Stopping a run from its progress callback (engine/chains.py): the draws made are kept, marked as
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
    from engine.chains import Cancelled
    from engine.methods.da_mcmc import da_mcmc

    problem = engine.prepare({"model": {"name": "beta_binomial", "n": 20000}, "mechanism": {"name": "laplace",
                              "epsilon": 1.0}, "data": {"s_dp": [6000]}})
    with pytest.raises(Cancelled, match="warm-up"):
        da_mcmc(problem, engine.method_rng(1), chains=1, draws=100, warmup=5000, parallel=False,
                on_progress=lambda done, total: False)
