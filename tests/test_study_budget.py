"""Studies on a hosted server, engine side (issue "Hosted for a class"): the cost of a whole epsilon sweep
and of a calibration study before it runs, the largest study within a budget, and a sweep stopped through
its progress callback. Structural checks only: no clock decides a verdict (DA-MCMC's estimate is a formula
of the per-process rates, so it is the same at every epsilon and in every call)."""
from __future__ import annotations

import numpy as np
import pytest

import engine
from engine.cost import estimate_cost
from engine.studies.cost import (estimate_calibration_cost, estimate_sweep_cost, fit_calibration_to_budget,
                                 fit_sweep_to_budget)
from engine.studies.sweep import epsilon_spec, epsilon_sweep

SPEC = {"seed": 3, "model": {"name": "beta_binomial", "n": 2000}, "mechanism": {"name": "laplace", "epsilon": 1.0},
        "data": {"simulate": {"theta": 0.3}}}
GRID = [0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0]
DA = {"name": "da_mcmc", "chains": 2, "draws": 4000, "warmup": 500}


def test_a_sweep_costs_the_sum_of_its_cells():
    cost = estimate_sweep_cost(SPEC, GRID, [DA, {"name": "naive"}])
    cells = [estimate_cost(engine.prepare(epsilon_spec(SPEC, e)), m).seconds
             for e in GRID for m in (DA, {"name": "naive"})]
    assert cost.units == 14 and cost.unit == "runs"
    assert cost.seconds == pytest.approx(sum(cells), rel=1e-9)
    assert "7 ε values × 2 methods" in cost.detail and "costliest cell is DA-MCMC" in cost.detail


def test_a_study_cost_names_every_method_in_words_not_by_its_key():
    """The costs read "one da_mcmc run each", "abc_rejection costs the most": the spec's keys, not words for people."""
    from engine.methods import METHOD_NAMES, METHOD_WORDS
    from engine.studies.cost import estimate_replicates_cost

    assert set(METHOD_WORDS) == set(METHOD_NAMES) and "_" not in "".join(METHOD_WORDS.values())
    assert estimate_replicates_cost(SPEC, [1.0], 3, {**DA, "draws": 100}).detail.endswith("× one DA-MCMC run each")
    abc = {"name": "abc_rejection", "chains": 1, "draws": 20_000}  # priced, never run
    assert "; ABC rejection costs the most (" in estimate_calibration_cost(SPEC, ["naive", abc], 10).detail


def test_the_fitted_sweep_keeps_both_ends_then_scales_the_draws():
    full = estimate_sweep_cost(SPEC, GRID, [DA]).seconds
    fit = fit_sweep_to_budget(SPEC, GRID, [DA], 0.5 * full)  # 3 of 7 equal cells fit, 4 do not
    assert fit["epsilons"] == [0.1, 1.0, 10.0] and fit["methods"] == [DA]
    assert fit_sweep_to_budget(SPEC, GRID, [DA], 2 * full) == {"epsilons": GRID, "methods": [DA]}
    small = fit_sweep_to_budget(SPEC, GRID, [DA], 0.1 * full)  # even 3 points are over: fewer draws at 3 points
    assert small["epsilons"] == [0.1, 1.0, 10.0]
    (m,) = small["methods"]
    assert 100 <= m["draws"] < DA["draws"]
    assert estimate_sweep_cost(SPEC, small["epsilons"], small["methods"]).seconds <= 0.1 * full * 1.05
    assert fit_sweep_to_budget(SPEC, GRID, [DA], 1e-9) is None


def test_a_calibration_study_costs_m_replicates_and_the_fit_is_the_largest_m_within_budget():
    methods = ["naive", {"name": "da_mcmc", "chains": 2, "draws": 500, "warmup": 300}]
    spec = {**SPEC, "model": {"name": "beta_binomial", "n": 50, "a": 2.0, "b": 2.0}}
    cost = estimate_calibration_cost(spec, methods, 400)
    assert cost.unit == "replicates" and cost.units == 400 and cost.seconds > 0
    per = cost.seconds / 400
    m = fit_calibration_to_budget(cost, 37.5 * per)
    assert m == 37  # floor(budget / per replicate)
    assert fit_calibration_to_budget(cost, 2 * cost.seconds) == 400  # never more than asked for
    assert fit_calibration_to_budget(cost, 5 * per) is None  # below the smallest M (10)


def test_a_cheap_replicate_is_timed_whole_so_its_bookkeeping_counts(monkeypatch):
    """Below half a second a replicate is also run once, so what no method's estimate sees (simulation,
    quantiles, SBC ranks, MMD) is priced: a replicate that takes 0.2 s costs M x at least 0.2 s. A
    replicate estimated above the threshold is not run."""
    import time

    import engine.studies.cost as budget
    import engine.studies.calibration as calibration

    spec = {**SPEC, "model": {"name": "beta_binomial", "n": 50, "a": 2.0, "b": 2.0}}
    monkeypatch.setattr(calibration, "_calibration_unit", lambda payload: time.sleep(0.2) or [])
    cost = estimate_calibration_cost(spec, ["naive"], 10)
    assert cost.seconds >= 10 * 0.2 and "bookkeeping costs the most" in cost.detail

    def refuse(payload):
        raise AssertionError("a replicate above the pilot threshold was run")

    monkeypatch.setattr(calibration, "_calibration_unit", refuse)
    monkeypatch.setattr(budget, "PILOT_REPLICATE_S", 0.0)
    assert estimate_calibration_cost(spec, ["naive"], 10).seconds < 10 * 0.2


def test_a_stopped_sweep_returns_the_cells_it_finished_marked_stopped():
    spec = {**SPEC, "model": {"name": "beta_binomial", "n": 200}}
    methods = [{"name": "naive"}, {"name": "da_mcmc", "chains": 2, "draws": 2000, "warmup": 100}]
    calls = []

    def stop_in_the_fourth_cell(done, total):  # done = cells finished; inside a cell, between its blocks
        calls.append(done)
        return False if calls.count(3) >= 2 else None  # the report after cell 3, then the first block of cell 4

    frame, results = epsilon_sweep(spec, [0.1, 0.5, 2.0], methods, on_progress=stop_in_the_fourth_cell)
    assert frame.attrs["stopped"] and frame.attrs["cells_done"] == 3 and frame.attrs["cells_total"] == 6
    assert sorted(results) == [(0.1, "da_mcmc"), (0.1, "naive"), (0.5, "naive")]
    assert frame.attrs["skipped"] == {"da_mcmc @ 0.5": "stopped before it finished"}
    full, full_results = epsilon_sweep(spec, [0.1, 0.5], methods)
    assert not full.attrs["stopped"] and full.attrs["cells_done"] == 4
    for key, result in results.items():  # what finished is exactly what an unstopped sweep draws
        np.testing.assert_array_equal(result.draws, full_results[key].draws)


def test_a_sweep_times_the_exact_posterior_at_the_grid_ends_only(monkeypatch):
    import engine.studies.cost as budget

    timed = []
    real = budget.estimate_cost

    def recording(problem, method, rates=None):
        timed.append((problem.mechanism.epsilon, method["name"]))
        return real(problem, method, rates)

    monkeypatch.setattr(budget, "estimate_cost", recording)
    cost = estimate_sweep_cost(SPEC, GRID, [{"name": "exact"}])
    assert sorted(timed) == [(0.1, "exact"), (10.0, "exact")] and cost.units == 7


def test_a_single_run_presets_cost_reads_as_a_sentence():
    """The page's caption under "Run preset" read "exact, abc_rejection, naive and summaries, ks test; ks test costs
    the most": it names the runs and the analysis as a person writes them, with the verb agreeing."""
    from engine.studies.cost import estimate_preset_cost

    detail = estimate_preset_cost("gong2020_count").detail
    assert "_" not in detail and "the runs exact, ABC rejection and naive, then the summaries and KS test" in detail
    assert "the summaries cost the most" in detail or "the KS test costs the most" in detail
    detail = estimate_preset_cost("eng_admissions").detail
    assert "the runs naive, DA-MCMC, pseudo-marginal and confidential-data posterior, then the summaries" in detail
