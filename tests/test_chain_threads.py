"""Threads per run (issue 14, "Hosted for a class"): ``DPL_CHAIN_THREADS`` caps how many chains of one
run execute at once (engine/core/chains.py), so thirty sessions on two cores do not each ask for every core.
Chains are independent streams (chain c draws from its own child of the method's generator), so the
draws are the same whatever the thread count."""
from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import engine
from engine.core.chains import CHAIN_THREADS_ENV, chain_threads, run_chains


def _problem():
    return engine.prepare({"model": {"name": "beta_binomial", "n": 300}, "mechanism": {"name": "laplace",
                           "epsilon": 1.0}, "data": {"s_dp": [90]}})


@pytest.mark.parametrize("method", ["da_mcmc", "pseudo_marginal"])
def test_the_draws_do_not_depend_on_the_thread_count(method, monkeypatch):
    from engine.methods.da_mcmc import da_mcmc
    from engine.methods.pseudo_marginal import pseudo_marginal

    run = da_mcmc if method == "da_mcmc" else pseudo_marginal
    problem = _problem()
    draws = {}
    for threads in ("1", "2", "3"):
        monkeypatch.setenv(CHAIN_THREADS_ENV, threads)
        draws[threads] = run(problem, engine.method_rng(11), chains=3, draws=400, warmup=50).draws
    monkeypatch.delenv(CHAIN_THREADS_ENV)
    draws["unset"] = run(problem, engine.method_rng(11), chains=3, draws=400, warmup=50).draws
    for threads, d in draws.items():
        np.testing.assert_array_equal(d, draws["1"], err_msg=f"{CHAIN_THREADS_ENV}={threads}")
    assert np.unique(draws["1"][:, -1]).size == 3  # three different chains, not one repeated


@pytest.mark.parametrize("threads, chains", [(1, 4), (2, 4), (3, 3)])
def test_no_more_chains_run_at_once_than_the_setting_allows(threads, chains, monkeypatch):
    """Each chain holds a slot for a while; the most slots ever held at once is the cap (or the number
    of chains), and a cap of 1 runs every chain on the calling thread."""
    monkeypatch.setenv(CHAIN_THREADS_ENV, str(threads))
    lock, running, peak, idents = threading.Lock(), [0], [0], set()

    def run_one(c, tick, stop):
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
            idents.add(threading.get_ident())
        time.sleep(0.05)
        with lock:
            running[0] -= 1
        progress[c] = 1
        tick()
        return c

    progress = np.zeros(chains, dtype=np.int64)
    outs, stopped = run_chains(run_one, chains, 1, progress)
    assert outs == list(range(chains)) and not stopped
    assert peak[0] == min(threads, chains)
    if threads == 1:
        assert idents == {threading.get_ident()}


def test_the_setting_is_read_and_checked(monkeypatch):
    import os

    monkeypatch.delenv(CHAIN_THREADS_ENV, raising=False)
    assert chain_threads() == (os.cpu_count() or 1)
    monkeypatch.setenv(CHAIN_THREADS_ENV, " 2 ")
    assert chain_threads() == 2
    for bad in ("0", "-1", "two", "1.5"):
        monkeypatch.setenv(CHAIN_THREADS_ENV, bad)
        with pytest.raises(ValueError, match=f"{CHAIN_THREADS_ENV} = '{bad}' is invalid"):
            chain_threads()


def test_the_cost_estimate_counts_only_the_threads_a_run_may_use(monkeypatch):
    """The work budget's seconds divide the work by the chains that run at once: with one thread per
    run, four chains cost four times what they cost on four threads (their summary after the run is the same)."""
    from engine.cost import estimate_cost, machine_rates, summary_seconds

    problem = _problem()
    rates = {**machine_rates(), "cores": 4}
    method = {"name": "da_mcmc", "chains": 4, "draws": 1000, "warmup": 100}
    after = summary_seconds(problem, method, rates)  # the draws' summary: one thread's work after the run
    assert after > 0
    monkeypatch.setenv(CHAIN_THREADS_ENV, "4")
    four = estimate_cost(problem, method, rates).seconds
    monkeypatch.setenv(CHAIN_THREADS_ENV, "1")
    one = estimate_cost(problem, method, rates).seconds
    assert one - after == pytest.approx(4 * (four - after), rel=1e-9)
