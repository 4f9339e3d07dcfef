"""Hosted for a class: the work budget per run, the Stop button and preemption of a run nobody waits
for (issue "Hosted for a class")."""
from __future__ import annotations

import json

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from app_support import open_app

import engine
from ui import keys
from ui.compute.budget import DEFAULT_WORK_BUDGET_S, FIT_MARGIN, work_budget_s
from ui.compute.method_runs import scenario_key
from ui.compute.progress import _Progress
from ui.params.scenario import Scenario
from ui.params.spec import to_spec_dict


def _open() -> AppTest:
    return open_app()


def test_a_run_over_the_work_budget_is_not_started_and_settings_that_fit_are_offered(monkeypatch):
    n = 50_000
    # the budget is this machine's cost of 2 chains x 2000 iterations at this n (so the test does not
    # depend on the machine's speed); the run asked for is fifty times that
    spec = to_spec_dict(Scenario(n=n), method="da_mcmc")
    problem = engine.prepare(spec)
    budget = engine.estimate_cost(problem, {**spec["method"], "chains": 2, "draws": 2000, "warmup": 0}).seconds
    monkeypatch.setenv("DPL_WORK_BUDGET_S", repr(budget))
    at = _open()
    at.toggle(key=keys.method_key("abc_rejection")).set_value(False).run()  # at this n it would use its 10 s
    at.text_input(key=keys.W_N).set_value(str(n)).run()
    at.text_input(key=keys.W_DRAWS).set_value(str(100_000)).run()
    assert not at.exception
    notes = [i.value for i in at.info if "was not run" in i.value]
    assert any(n.startswith("DA-MCMC was not run") and f"budget of {budget:g} s" in n for n in notes), notes
    assert "DA-MCMC" not in set(at.dataframe[0].value["method"])  # the other methods still ran
    assert any(i.value.startswith("Not in the figure: DA-MCMC, over this server's work budget") for i in at.info)
    assert not any("draws the convergence check asks for" in c.value for c in at.caption)  # these can pass it
    at.button(key=f"{keys.W_FIT_BUDGET}_da_mcmc").click().run()
    chains, draws, warmup = (int(at.text_input(key=k).value) for k in (keys.W_CHAINS, keys.W_DRAWS, keys.W_WARMUP))
    assert 100 <= draws < 100_000  # the widgets now hold settings within the budget
    fitted = to_spec_dict(Scenario(n=n, chains=chains, draws=draws, warmup=warmup), method="da_mcmc")
    assert engine.estimate_cost(problem, fitted["method"]).seconds <= FIT_MARGIN * budget  # room for its error
    assert "DA-MCMC" in set(at.dataframe[0].value["method"])  # and it ran


def test_the_budget_setting_is_checked(monkeypatch):
    monkeypatch.setenv("DPL_WORK_BUDGET_S", "lots")
    with pytest.raises(ValueError, match="DPL_WORK_BUDGET_S = 'lots' is invalid"):
        work_budget_s()
    monkeypatch.setenv("DPL_WORK_BUDGET_S", "0")
    assert work_budget_s() is None
    monkeypatch.delenv("DPL_WORK_BUDGET_S")
    assert work_budget_s() == DEFAULT_WORK_BUDGET_S


def test_stop_keeps_the_inputs_and_run_again_brings_results_back():
    at = _open()
    at.text_input(key=keys.W_N).set_value(str(55)).run()
    # what the Stop button's callback records (the button itself is only on screen while a run is going)
    from ui.sidebar.controls import request_stop  # noqa: F401 - the callback whose effect this reproduces
    at.session_state[keys.STOPPED_RUN] = scenario_key(Scenario(n=55))
    at.run()
    assert not at.exception
    assert any("You stopped this run" in i.value for i in at.info)
    assert at.text_input(key=keys.W_N).value == "55" and not at.get("plotly_chart")
    at.button(key=keys.W_STOP + "_again").click().run()
    assert len(at.get("plotly_chart")) == 1 and at.text_input(key=keys.W_N).value == "55"


def test_diagnostics_has_the_same_stop_and_budget(monkeypatch):
    at = _open()
    at.text_input(key=keys.W_N).set_value(str(55)).run()
    at.switch_page("pages/diagnostics.py").run()
    assert not at.exception and at.get("plotly_chart")
    at.session_state[keys.STOPPED_RUN] = scenario_key(Scenario(n=55))
    at.run()
    assert any("You stopped this run" in i.value for i in at.info) and not at.get("plotly_chart")
    at.button(key=keys.W_STOP + "_again").click().run()
    assert at.get("plotly_chart") and at.text_input(key=keys.W_N).value == "55"
    monkeypatch.setenv("DPL_WORK_BUDGET_S", "1e-9")  # nothing fits: the run is not started
    at.text_input(key=keys.W_N).set_value(str(56)).run()
    assert not at.exception and not at.get("plotly_chart")
    assert any(i.value.startswith("DA-MCMC was not run") and "Compare page offers" in i.value for i in at.info), \
        [i.value for i in at.info]


class _InterruptedBar:
    """A progress bar whose update raises, as Streamlit's does when a newer run was requested."""

    class Rerun(Exception):
        pass

    def progress(self, *args, **kwargs):
        raise self.Rerun()


def test_a_newer_request_stops_the_running_engine_at_its_next_block():
    problem = engine.prepare({**engine.DEMO_SPEC, "model": {**engine.DEMO_SPEC["model"], "n": 20_000}})
    progress = _Progress(_InterruptedBar(), "DA-MCMC")
    result = engine.run_method(problem, {"name": "da_mcmc", "chains": 2, "draws": 200_000, "warmup": 100},
                               seed=1, on_progress=progress)
    assert isinstance(progress.interrupt, _InterruptedBar.Rerun)
    assert result.info["stopped"] == "cancelled" and result.n_draws < 200_000
    assert progress(1, 2) is False  # once interrupted, every later report says stop
    assert np.isfinite(result.draws).all()


def test_the_work_budget_is_autos_max_seconds_for_its_fallbacks(monkeypatch):
    """The budget gates the estimate of auto's first attempt; a fallback or a 4 x rerun after it would run
    unchecked (minutes on a hosted server) unless auto gets the budget as its max_seconds. Other methods'
    settings, and auto's without a budget, are left as they were."""
    from ui.compute import method_runs

    seen: list[dict] = []

    def record(spec_text, settings_text, name):
        seen.append(json.loads(settings_text))
        return {"error": "recorded, not run", "log": ""}

    monkeypatch.setattr(method_runs, "_run_logged", record)
    text = method_runs.spec_json(to_spec_dict(Scenario(n=200)))
    for budget, name, expected in (("1000", "auto", 1000.0), ("1000", "da_mcmc", None), ("0", "auto", None)):
        monkeypatch.setenv("DPL_WORK_BUDGET_S", budget)
        run = method_runs.run_method(text, {"name": name, "chains": 2, "draws": 200, "warmup": 100})
        assert run.error == "recorded, not run"
        assert seen[-1].get("max_seconds") == expected, (budget, name, seen[-1])


def test_a_skipped_fallback_is_worded_for_the_page():
    """auto's reason for a fallback and a rerun it skipped names the methods by their labels and the budget as
    the server's work budget (the engine's words are da_mcmc, pseudo_marginal and max_seconds = …)."""
    from ui.narrative import auto_caption

    spec = {"model": {"name": "linear_regression", "n": 2000}, "mechanism": {"name": "laplace", "epsilon": 1.0},
            "data": {"simulate": {"beta": [0.5, 1.0, -1.0]}}, "seed": 3,
            "method": {"name": "auto", "chains": 2, "draws": 30, "warmup": 30, "max_seconds": 1e-3}}
    info = engine.run(spec).info
    assert [a.get("skipped", "ran")[:9] for a in info["attempts"]] == ["ran", "estimated", "estimated"], info
    assert "max_seconds = 0.001" in info["why"] and "da_mcmc did not converge" in info["why"]
    caption = auto_caption(info)
    assert caption.startswith("Exact (best method) ran **DA-MCMC**: ")
    assert "DA-MCMC did not converge at 30 draws per chain, and Pseudo-marginal was skipped" in caption, caption
    assert "left of this server's work budget of 0.001 s" in caption, caption
    assert not any(word in caption for word in ("max_seconds", "da_mcmc", "pseudo_marginal")), caption


def test_a_run_over_the_budget_is_priced_in_minutes_and_hours_and_a_floor_says_at_least():
    from ui.narrative import over_budget

    cost = {"seconds": 25412.7, "detail": "4 chains x 3,000 iterations x M = 86 particles", "budget": 20.0}
    assert over_budget("pseudo_marginal", cost) == (
        "Pseudo-marginal was not run: it would take about 7.1 h here (4 chains × 3,000 iterations × M = 86 "
        "particles), over this server's budget of 20 s per run.")  # was "about 2.54e+04 s"
    picks = {**cost, "detail": "auto picks da_mcmc: 4 chains x 6,000 iterations x n = 10,000 records"}
    assert "(it picks DA-MCMC: 4 chains × 6,000 iterations × n = 10,000 records)" in over_budget("auto", picks)
    floor = {**cost, "seconds": 367.0, "at_least": True}
    assert over_budget("pseudo_marginal", floor).startswith("Pseudo-marginal was not run: it would take at least 6 min")


def test_settings_that_fit_but_cannot_pass_the_convergence_check_say_so():
    from ui.narrative import too_few_to_converge

    assert too_few_to_converge({"chains": 2, "draws": 150, "warmup": 100}) == (
        "These give 300 draws in all, fewer than the 400 effective draws the convergence check asks for: expect "
        "the run to be flagged not converged. Reduce n for a run that can pass it.")
    assert too_few_to_converge({"chains": 2, "draws": 200, "warmup": 100}) is None


def test_a_fault_in_a_method_is_its_run_log_line_not_a_traceback(monkeypatch):
    """Exact (best method) on OpenDP's mean raised TypeError while being priced, and the page showed the traceback.
    Whatever a run or its pricing raises that is not a ValueError (the engine's bad input) is one line naming the
    method; it is not cached (the next run tries again), and a ValueError is still the engine's own message."""
    from ui.compute import method_runs

    calls: list[str] = []

    def broken(problem, settings, seed, on_progress=None):
        calls.append(settings["name"])
        raise TypeError("int() argument must be a real number, not 'NoneType'")

    monkeypatch.setattr(engine, "run_method", broken)
    monkeypatch.setenv("DPL_WORK_BUDGET_S", "0")  # no pricing: the run itself fails
    text = method_runs.spec_json(to_spec_dict(Scenario(n=37, seed=90_417)))
    settings = {"name": "da_mcmc", "chains": 2, "draws": 200, "warmup": 100}
    for _ in range(2):
        run = method_runs.run_method(text, settings)
        assert not run.ok and run.error.startswith("an unexpected error in the lab (TypeError: int() argument")
    assert calls == ["da_mcmc", "da_mcmc"]

    def broken_cost(spec_text, settings_text, budget):
        raise TypeError("int() argument must be a real number, not 'NoneType'")

    monkeypatch.setattr(method_runs, "_cost_cached", broken_cost)
    monkeypatch.setenv("DPL_WORK_BUDGET_S", "1000")
    run = method_runs.run_method(text, {"name": "auto", "chains": 2, "draws": 200, "warmup": 100})
    assert not run.ok and "(TypeError: int() argument" in run.error and calls == ["da_mcmc", "da_mcmc"]
