"""Hosted for a class, the study pages (issue "Hosted for a class" on the Privacy budget sweep and the
Calibration study of issue "Studies"): a sweep or study over the work budget runs nothing and offers the
largest settings that fit; Stop (or a newer input) ends a running sweep or study, shows what finished
marked as stopped, and never caches it as complete; the sweep's status box says whether it computed or
came from the cache; a study runs in the session's own thread with its chains capped by
``DPL_CHAIN_THREADS``.

A click on Stop cannot land mid-run in AppTest, so the Stop tests deliver Streamlit's signal the way a
real click does: through the progress bar of the running sweep or study (``StopException`` raised by
the bar update), then click the Stop button that is still on screen, as its callback runs on the rerun."""
from __future__ import annotations

import json
import re
import shutil
from concurrent.futures import ThreadPoolExecutor

import pytest
from streamlit.runtime.scriptrunner_utils.exceptions import StopException
from streamlit.testing.v1 import AppTest

from app_support import APP, open_app

import engine
import engine.core.chains
import engine.studies.calibration as calibration_module
import engine.studies.runner as runner
from ui import keys, studies
from ui.compute import sweeps
from ui.params.parsing import log_grid, parse_grid
from ui.params.scenario import Scenario
from ui.params.spec import method_settings, to_spec_dict

SWEEP = "pages/privacy_budget.py"
CALIBRATION = "pages/calibration.py"
GRID = parse_grid(log_grid(0.1, 10.0, 7))  # the page's default grid


def _open(page: str) -> AppTest:
    at = open_app(page, timeout=180)
    assert not at.exception, [e.value for e in at.exception]
    return at


def _forbid(monkeypatch, module, name):
    def refuse(*args, **kwargs):
        raise AssertionError(f"{name} ran although the work was over budget")

    monkeypatch.setattr(module, name, refuse)


def _statuses(at) -> list[str]:
    return [s.label for s in at.get("status")]


# --------------------------------------------------------------------------- Privacy budget sweep
def test_a_sweep_over_the_work_budget_runs_nothing_and_offers_a_grid_that_fits(monkeypatch):
    scenario = Scenario()  # the page's default scenario
    full = engine.estimate_sweep_cost(to_spec_dict(scenario), GRID, [method_settings(scenario, "da_mcmc")])
    budget = 0.5 * full.seconds  # DA-MCMC's estimate is the same at every ε: 3 of the 7 points fit, 4 do not
    monkeypatch.setenv("DPL_WORK_BUDGET_S", repr(budget))
    real = sweeps.epsilon_sweep
    _forbid(monkeypatch, sweeps, "epsilon_sweep")
    at = _open(SWEEP)  # the default methods (naive, DA-MCMC, auto) cost more than DA-MCMC alone: over too
    at.multiselect(key=keys.W_SWEEP_METHODS).set_value(["da_mcmc"]).run()
    assert not at.exception, [e.value for e in at.exception]
    notes = [i.value for i in at.info if "sweep was not run" in i.value]
    assert notes and f"budget of {budget:g} s" in notes[0], [i.value for i in at.info]
    assert not at.get("plotly_chart")
    fit = at.button(key=keys.W_SWEEP_FIT)
    assert "3 ε values (0.1, 1, 10)" in fit.label, fit.label
    monkeypatch.setattr(sweeps, "epsilon_sweep", real)
    fit.click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert parse_grid(at.text_input(key=keys.W_GRID).value) == (0.1, 1.0, 10.0)
    assert at.text_input(key=keys.W_GRID_POINTS).value == "3"
    assert len(at.get("plotly_chart")) == 4  # interval, sd, the frontier, posterior at one ε
    assert [s for s in _statuses(at) if s.startswith("Sweep: 3 runs computed in")], _statuses(at)
    at.run()  # the same sweep again (any rerun): the status box says where it came from, and is complete
    assert "Sweep: 3 runs from cache" in _statuses(at)


def test_autos_fallbacks_in_a_sweep_get_each_epsilons_share_of_the_budget(monkeypatch):
    """The sweep's gate prices auto's first attempt at each ε; its fallbacks and 4 x reruns get that ε's share
    of the budget as auto's max_seconds (without it they ran unchecked). Other methods are left as they were."""
    seen = []

    def priced(spec_text, grid_text, methods_text, budget):
        seen.append(json.loads(methods_text))
        return {"seconds": 2 * budget, "units": 1.0, "unit": "runs", "detail": "recorded", "fit": None}

    monkeypatch.setattr(sweeps, "_sweep_cost_cached", priced)
    monkeypatch.setenv("DPL_WORK_BUDGET_S", "70")
    out = sweeps.sweep(Scenario(), None, GRID, ["da_mcmc", "auto"])
    assert out.over_budget and len(seen) == 1
    assert [m.get("max_seconds") for m in seen[0]] == [None, 70 / len(GRID)], seen


def test_stop_shows_the_cells_a_sweep_finished_and_never_caches_them(monkeypatch):
    real = sweeps.epsilon_sweep

    def stopped_after_two_cells(spec, grid, methods, on_progress=None, **kwargs):
        def progress(done, total):
            if done >= 2:  # Streamlit's signal arrives through the bar's next update
                def signal(*a, **k):
                    raise StopException()

                on_progress.bar = type("Bar", (), {"progress": staticmethod(signal)})()
            return on_progress(done, total)

        return real(spec, grid, methods, on_progress=progress, **kwargs)

    monkeypatch.setattr(sweeps, "epsilon_sweep", stopped_after_two_cells)
    at = AppTest.from_file(APP, default_timeout=180)
    at.run()
    at.text_input(key=keys.W_N).set_value(str(61)).run()  # a scenario no other test sweeps
    at.switch_page(SWEEP).run()
    assert not at.get("plotly_chart")  # the script stopped where the signal arrived
    running = [s for s in _statuses(at) if s.startswith("Sweeping 8 ε values × 2 methods: ")]
    assert running and re.fullmatch(r".*: 1 of 16 runs done, (about \d+ s left|taking longer than .*)", running[0]), \
        _statuses(at)  # the collapsed box's label counted the runs as they finished (it said "running…" only)
    at.button(key=keys.W_SWEEP_STOP).click().run()  # the Stop click whose rerun delivered it
    assert not at.exception, [e.value for e in at.exception]
    assert any("You stopped this sweep" in i.value for i in at.info)
    assert any("Sweep stopped: 2 of 16 runs finished" in w.value for w in at.warning), [w.value for w in at.warning]
    assert len(at.get("plotly_chart")) >= 2 and at.text_input(key=keys.W_N).value == "61"
    monkeypatch.setattr(sweeps, "epsilon_sweep", real)
    at.button(key=keys.W_SWEEP_STOP + "_again").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert [s for s in _statuses(at) if s.startswith("Sweep: 16 runs computed in")], _statuses(at)  # not cached


def test_the_sweeps_words_count_the_runs_and_the_time_left():
    """The regression preset's sweep ran 58 s under "running…". Its box now counts the runs done and, with the cost
    estimate known, the time left: the larger of what the estimate leaves and what the pace so far predicts (the
    estimate said 8 s; after 2 runs in 8 s the pace says 48 s)."""
    assert sweeps.progress_words(0, 14, 0.0, 7.5) == "0 of 14 runs done, about 8 s left"
    assert sweeps.progress_words(1, 14, 0.1, 7.5) == "1 of 14 runs done, about 7 s left"  # naive's first run: free
    assert sweeps.progress_words(2, 14, 8.0, 7.5) == "2 of 14 runs done, about 48 s left"
    assert sweeps.progress_words(13, 14, 55.0, 7.5) == "13 of 14 runs done, about 4 s left"
    assert sweeps.progress_words(0, 14, 9.0, 7.5) == "0 of 14 runs done, taking longer than its estimate of 8 s"
    assert sweeps.progress_words(5, 14, 20.0, None) == "5 of 14 runs done"  # no work budget: no estimate
    assert sweeps.progress_words(14, 14, 58.0, 7.5) == "14 of 14 runs done"


def test_the_sweeps_progress_moves_the_bar_and_the_boxs_label_together():
    seen = []

    class Bar:
        def progress(self, value, text):
            seen.append(("bar", value, text))

    class Status:
        def update(self, label):
            seen.append(("status", label))

    clock = iter([100.0, 108.0, 120.0])
    progress = sweeps._SweepProgress(sweeps._BarAndLabel(Bar(), Status(), "Sweeping 7 ε values × 2 methods"), 7.5,
                                     clock=lambda: next(clock))
    assert progress(2, 14) is None
    assert seen == [("bar", 2 / 14, "2 of 14 runs done, about 48 s left"),
                    ("status", "Sweeping 7 ε values × 2 methods: 2 of 14 runs done, about 48 s left")]


# --------------------------------------------------------------------------- Calibration study
def _study(at, inputs: studies.CalibrationInputs):
    at.text_input(key=keys.W_CAL_N).set_value(str(inputs.n)).run()
    at.multiselect(key=keys.W_CAL_METHODS).set_value(list(inputs.methods)).run()
    at.text_input(key=keys.W_CAL_M).set_value(str(inputs.replicates)).run()
    shutil.rmtree(studies._store(inputs.key()), ignore_errors=True)  # no replicates left by an earlier session


def _summary_m(at) -> set:
    return set(at.dataframe[0].value["M"])


def test_a_study_over_the_work_budget_runs_nothing_and_offers_the_largest_m_that_fits(monkeypatch):
    inputs = studies.CalibrationInputs(n=37, methods=("naive", "da_mcmc"), replicates=400)
    cost = engine.estimate_calibration_cost(inputs.spec(), inputs.method_tables(), inputs.replicates,
                                            mmd_draws=studies.MMD_DRAWS)
    budget = cost.seconds / 10  # about 40 replicates fit (one replicate is partly timed: the page's M may differ)
    monkeypatch.setenv("DPL_WORK_BUDGET_S", repr(budget))
    real = studies.calibration_study
    _forbid(monkeypatch, studies, "calibration_study")
    at = _open(CALIBRATION)
    _study(at, inputs)
    at.button(key=keys.W_CAL_RUN).click().run()
    assert not at.exception, [e.value for e in at.exception]
    notes = [i.value for i in at.info if "study was not run" in i.value]
    assert notes and f"budget of {budget:g} s" in notes[0], [i.value for i in at.info]
    assert not at.get("plotly_chart")
    fit = at.button(key=keys.W_CAL_FIT)
    m = int(fit.label.rsplit("M = ", 1)[1].split()[0])
    assert 10 <= m < 400
    monkeypatch.setattr(studies, "calibration_study", real)
    fit.click().run()  # sets M and runs the study that fits
    assert not at.exception, [e.value for e in at.exception]
    assert at.text_input(key=keys.W_CAL_M).value == str(m) and _summary_m(at) == {m}


def test_stop_shows_the_finished_replicates_and_run_resumes_from_them(monkeypatch):
    inputs = studies.CalibrationInputs(n=23, methods=("naive", "exact"), replicates=12)
    real = studies.calibration_study

    def stopped_after_three(*args, on_progress=None, **kwargs):
        def progress(done, total):
            if done >= 3:
                raise StopException()  # what the bar's update raises once Stop was clicked
            return on_progress(done, total)

        return real(*args, on_progress=progress, **kwargs)

    monkeypatch.setattr(studies, "calibration_study", stopped_after_three)
    at = _open(CALIBRATION)
    _study(at, inputs)
    at.button(key=keys.W_CAL_RUN).click().run()
    assert not at.get("plotly_chart")
    at.button(key=keys.W_CAL_CANCEL).click().run()  # the Stop click whose rerun delivered the signal
    assert not at.exception, [e.value for e in at.exception]
    assert any("Study stopped after 3 of 12 replicates" in w.value for w in at.warning), [w.value for w in at.warning]
    assert len(at.get("plotly_chart")) == 5 and _summary_m(at) == {3}  # what finished, marked stopped
    monkeypatch.setattr(studies, "calibration_study", real)
    ran = []
    unit = calibration_module._calibration_unit
    monkeypatch.setattr(calibration_module, "_calibration_unit",
                        lambda payload: ran.append(payload[1]) or unit(payload))
    at.button(key=keys.W_CAL_RUN).click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert sorted(ran) == list(range(3, 12))  # resumed: the three finished replicates were not rerun
    assert _summary_m(at) == {12} and not at.warning  # the stopped study was never cached as complete


@pytest.mark.parametrize("threads", ["1", "2"])
def test_a_study_runs_in_the_session_with_its_chains_capped_by_dpl_chain_threads(threads, monkeypatch):
    """Thirty students studying at once on 2 cores: no process pool is started, and the chains of each
    replicate's DA-MCMC (2 chains) run on at most DPL_CHAIN_THREADS threads: with 1, on the session's own
    thread; with 2, on a pool of 2 (which shows the check can fail)."""
    monkeypatch.setenv(engine.core.chains.CHAIN_THREADS_ENV, threads)
    _forbid(monkeypatch, runner, "default_executor")
    pools = []

    class Recording(ThreadPoolExecutor):
        def __init__(self, max_workers=None, *args, **kwargs):
            pools.append(max_workers)
            super().__init__(max_workers, *args, **kwargs)

    monkeypatch.setattr(engine.core.chains, "ThreadPoolExecutor", Recording)
    inputs = studies.CalibrationInputs(n=28 + int(threads), methods=("da_mcmc",), replicates=10)
    at = _open(CALIBRATION)
    _study(at, inputs)
    at.button(key=keys.W_CAL_RUN).click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert _summary_m(at) == {10}
    if threads == "1":
        assert pools == []  # every chain on the session's own thread (the cost pilot's too)
    else:
        assert len(pools) >= 10 and set(pools) == {2}  # one pool of 2 per replicate (and the cost pilot)
