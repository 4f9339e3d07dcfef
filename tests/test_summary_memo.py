"""A run's summary (R-hat, ESS and MCSE of every parameter: 1.4 s for the log-linear model's 80 parameters over
4 x 5,000 draws) is computed once per set of draws: auto's verdict, the table the app caches beside the run and a
page's rerun on a copy out of ``st.cache_data`` share it, and different draws never get it."""
from __future__ import annotations

import pickle

import numpy as np
import pytest

import engine
from engine.core.kept import Kept
from engine.core.results import Result
from engine.numerics import diagnostics, rank_diagnostics

SPEC = {"seed": 5, "model": {"name": "naive_bayes_loglinear", "n": 40, "class_levels": 2, "feature_levels": [2, 2],
                             "alpha": 2.0},
        "mechanism": {"name": "laplace", "epsilon": 1.0}, "data": {"simulate": {"from_prior": True}},
        "method": {"name": "auto", "chains": 2, "draws": 300, "warmup": 100}}


@pytest.fixture
def diagnosed(monkeypatch):
    """The number of parameters diagnosed from now on (``rank_diagnostics.diagnose`` calls), the memo empty."""
    monkeypatch.setattr(diagnostics, "_TABLES", Kept(64))
    calls = []
    real = rank_diagnostics.diagnose
    monkeypatch.setattr(rank_diagnostics, "diagnose", lambda x, **kw: calls.append(1) or real(x, **kw))
    return calls


def _chain(seed: int) -> Result:
    draws = np.random.default_rng(seed).normal(size=(2, 200, 3)).cumsum(axis=1)
    return Result(method="da_mcmc", param_names=("a", "b", "c"), draws=draws, s_dp=np.array([1.0]),
                  info={"mcmc": True})


def test_auto_verdict_and_the_runs_table_diagnose_each_parameter_once(diagnosed):
    problem = engine.prepare(engine.spec_from_dict(SPEC))
    result = engine.run_method(problem, SPEC["method"], SPEC["seed"])
    assert result.info["mcmc"], result.info["picked"]  # a chain: its verdict is computed in the run
    runs = len([a for a in result.info["attempts"] if a.get("converged") is not None])
    assert len(diagnosed) == runs * len(result.param_names)
    engine.summary(result)
    assert len(diagnosed) == runs * len(result.param_names)  # the run's table: auto's own, not computed again


def test_a_copy_of_the_draws_finds_the_table_and_other_draws_do_not(diagnosed):
    result = _chain(1)
    first = engine.summary(result)
    assert len(diagnosed) == 3
    copy = pickle.loads(pickle.dumps(result))  # what st.cache_data hands a page on every rerun
    again = engine.summary(copy)
    assert len(diagnosed) == 3
    assert again.equals(first) and again.attrs == first.attrs
    draws = np.array(result.draws)
    draws[1, 7, 2] += 1e-12
    moved = engine.summary(Result(method="da_mcmc", param_names=result.param_names, draws=draws, s_dp=result.s_dp,
                                  info={"mcmc": True}))
    assert len(diagnosed) == 6 and not moved.equals(first)
    independent = engine.summary(Result(method="naive", param_names=result.param_names, draws=result.draws,
                                        s_dp=result.s_dp))  # the same draws as independent ones: another table
    assert len(diagnosed) == 6 and np.isnan(independent["r_hat"]).all() and not np.isnan(first["r_hat"]).any()


def test_a_table_changed_by_its_caller_leaves_the_next_one_as_computed(diagnosed):
    result = _chain(2)
    table = engine.summary(result)
    expected = table.copy()
    table.loc["a", "mean"] = 99.0
    table["extra"] = 1.0
    table.attrs["convergence"]["converged"] = "changed"
    again = engine.summary(result)
    assert again.equals(expected) and again.attrs["convergence"] == expected.attrs["convergence"]


def test_quantiles_and_sorted_draws_handed_to_diagnose_give_its_own_numbers():
    """summary computes q5, q50 and q95 in one np.quantile call and sorts the draws once for both MCSEs: the numbers
    are those of one np.quantile per probability and of diagnose and mcse_quantile on their own, exactly."""
    rng = np.random.default_rng(11)
    for x in (rng.standard_normal((3, 500)).cumsum(axis=1), rng.integers(0, 3, (2, 300)).astype(float),
              rng.standard_cauchy((1, 41))):
        flat = x.reshape(-1)
        q = np.quantile(flat, (0.05, 0.5, 0.95))
        assert q.tolist() == [np.quantile(flat, p) for p in (0.05, 0.5, 0.95)]
        shared = rank_diagnostics.diagnose(x, quantiles=(float(q[0]), float(q[2])), ordered=np.sort(flat))
        alone = rank_diagnostics.diagnose(x)
        assert shared.keys() == alone.keys()
        assert all(shared[k] == alone[k] or (np.isnan(shared[k]) and np.isnan(alone[k])) for k in alone), \
            (shared, alone)
        for p in (0.05, 0.95):
            assert rank_diagnostics.mcse_quantile(x, p, ess=flat.size, ordered=np.sort(flat)) == \
                rank_diagnostics.mcse_quantile(x, p, ess=flat.size)
        row = engine.summary(Result(method="da_mcmc", param_names=("a",), draws=x[:, :, None], s_dp=np.array([0.0]),
                                    info={"mcmc": True})).loc["a"]
        assert [row["q5"], row["q50"], row["q95"]] == q.tolist()
        assert all(row[k] == alone[k] or (np.isnan(row[k]) and np.isnan(alone[k])) for k in alone)
