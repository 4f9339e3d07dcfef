"""The paper presets under the work budget (issue "Hosted for a class"): the engine prices a preset from
its fixed settings (estimate_preset_cost) and stops it through its progress callback (PresetStopped,
nothing returned); the Calibration page runs a preset over the budget not at all (no Run button: it offers
the CLI command instead), shows a finished preset at once without a budget check, and a stopped preset is never
cached.

The AppTest tests never run a costly preset: the over-budget one is priced by a stand-in, and the runs
are gong2020_count and eng_admissions (about a second each). As in tests/test_app_study_hosting.py, a
Stop click cannot land mid-run in AppTest, so Streamlit's signal is delivered through the running
preset's progress bar, then the Stop button still on screen is clicked."""
from __future__ import annotations

import re

import pytest
from streamlit.runtime.scriptrunner_utils.exceptions import StopException
from streamlit.testing.v1 import AppTest

from app_support import open_app

import engine.studies.cost as budget
import engine.studies.replicates as replicates_module
from engine.studies import InlineExecutor, presets
from engine.studies.presets import PresetStopped, preset_plan, run_preset
from ui import keys, studies

CALIBRATION = "pages/calibration.py"


# --------------------------------------------------------------------------- engine
@pytest.fixture(scope="module")
def rates():
    return budget.machine_rates()


@pytest.mark.parametrize("name", list(presets.PRESETS))
def test_a_preset_costs_more_at_its_full_size_than_at_its_quick_size(name, rates):
    quick = budget.estimate_preset_cost(name, quick=True, rates=rates)
    full = budget.estimate_preset_cost(name, quick=False, rates=rates)
    assert quick.method == name and quick.seconds > 0 and quick.units > 0
    assert full.seconds > quick.seconds and full.units >= quick.units
    assert "quick size" in quick.detail and "full size" in full.detail


def test_a_preset_cost_grows_in_proportion_to_its_replicates(monkeypatch, rates):
    """Ju et al.: the cost is replicates x (the chain's estimate + one timed release's bookkeeping); with
    the timed pieces held fixed it is exactly linear in the number of replicates."""
    monkeypatch.setattr(budget, "_timed", lambda fn: 0.01)
    base = budget.estimate_preset_cost("ju2022_loglinear", rates=rates)
    plan = preset_plan("ju2022_loglinear", True)
    doubled = {**plan, "replicates": 2 * plan["replicates"], "fresh_replicates": 2 * plan["fresh_replicates"]}
    monkeypatch.setattr(presets, "preset_plan", lambda name, quick: doubled)
    more = budget.estimate_preset_cost("ju2022_loglinear", rates=rates)
    assert more.units == 2 * base.units == 2 * 5 * (12 + 24)
    assert more.seconds == pytest.approx(2 * base.seconds, rel=1e-9)


def test_an_unknown_preset_is_refused_by_name():
    with pytest.raises(ValueError, match="preset = 'nope' is invalid: must be one of gong2020_count"):
        budget.estimate_preset_cost("nope")


def test_a_preset_reports_its_progress_and_stops_when_told(monkeypatch):
    seen = []
    result = run_preset("gong2020_count", quick=True, on_progress=lambda d, t: seen.append((d, t)))
    assert result.checks and seen[-1] == (1000, 1000)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen) and {t for _, t in seen} == {1000}
    # ours beside the paper's in the paper's notation (it read "1.582e-2 (ours 1.5821e-02)"), and in the symbols of
    # its figure (λ, ε, 10⁶: it read "theta_dp", "eps = 0.2", "N = 10^6")
    assert re.search(r"ℓ_dp = 1\.58\d\de-2; naive ℓ = 2\.67\d\de-2 ", result.text), result.text
    assert "e-0" not in result.text
    assert "λ_dp = 37.237" in result.text and "ε = 0.2" in result.text and "N = 10⁶" in result.text
    assert not re.search(r"theta|\bl_dp|\beps\b|\^", result.text), result.text

    ran = []
    unit = replicates_module._replicate_unit
    monkeypatch.setattr(replicates_module, "_replicate_unit", lambda payload: ran.append(payload[2]) or unit(payload))
    with pytest.raises(PresetStopped):  # stop at the first replicate's report: the batch of 5 in flight ends it
        run_preset("ju2022_loglinear", quick=True, executor=InlineExecutor(), on_progress=lambda d, t: d == 0)
    assert 0 < len(ran) <= 5  # of 180 replicates


# --------------------------------------------------------------------------- Calibration page
def _open() -> AppTest:
    at = open_app(CALIBRATION, timeout=180)
    assert not at.exception, [e.value for e in at.exception]
    return at


def _refuse(*args, **kwargs):
    raise AssertionError("this must not happen here")


def test_a_preset_over_the_work_budget_has_no_run_button_but_the_cli_command(monkeypatch):
    """Audit 2 item 2: the page drew Run preset for a preset over the budget, and the click only said it was not run.
    The budget is checked before the button is drawn: over it there is no button, but the command and the setting
    the operator can raise, before any click."""
    monkeypatch.setenv("DPL_WORK_BUDGET_S", "20")
    monkeypatch.setattr(studies, "preset_cost", lambda name: {"seconds": 30.0 if name == "ju2022_loglinear" else 1.0,
                                                              "detail": "stand-in", "text": "about 30 s (stand-in)"})
    monkeypatch.setattr(studies, "run_preset", _refuse)
    at = _open()
    at.selectbox(key=keys.W_CAL_PRESET).set_value("ju2022_loglinear").run()
    assert not at.exception, [e.value for e in at.exception]
    assert not [b for b in at.button if b.key == keys.W_CAL_PRESET_RUN]  # nothing to click that would refuse
    notes = [i.value for i in at.info if "too long to start from this page" in i.value]
    assert notes, [i.value for i in at.info]
    assert "about 30 s (stand-in)" in notes[0] and "budget of 20 s" in notes[0]
    assert "shared by every session" in notes[0] and "DPL_WORK_BUDGET_S" in notes[0] and "work_budget_s" in notes[0]
    assert "python -m engine study ju2022_loglinear --quick --out study-ju2022_loglinear" in [c.value for c in at.code]
    assert not at.get("plotly_chart") and not studies.preset_finished("ju2022_loglinear")
    at.selectbox(key=keys.W_CAL_PRESET).set_value("gong2020_count").run()  # within the budget: its button is back
    assert [b for b in at.button if b.key == keys.W_CAL_PRESET_RUN]


def test_a_preset_cost_names_its_methods_in_words(monkeypatch, rates):
    """The Ju et al. preset's cost read "one da_mcmc chain of 1,500 iterations" (audit 2 item 2); the page reworded
    the keys by string replacement. The engine writes the words (engine.methods.METHOD_WORDS), for the CLI too."""
    monkeypatch.setattr(budget, "_timed", lambda fn: 0.01)
    ju = budget.estimate_preset_cost("ju2022_loglinear", rates=rates).detail
    assert "× one DA-MCMC chain of " in ju and "da_mcmc" not in ju
    full = budget.estimate_preset_cost("bernstein2018_binomial", quick=False, rates=rates).detail
    assert "replicates of naive, exact, pseudo-marginal, OPS + the confidential reference" in full


def test_a_finished_preset_is_shown_at_once_without_a_budget_check(monkeypatch):
    at = _open()
    at.selectbox(key=keys.W_CAL_PRESET).set_value("gong2020_count").run()
    if not studies.preset_finished("gong2020_count"):  # computed once on this server (maybe by another test)
        at.button(key=keys.W_CAL_PRESET_RUN).click().run()
        assert not at.exception, [e.value for e in at.exception]
    assert studies.preset_finished("gong2020_count")
    monkeypatch.setenv("DPL_WORK_BUDGET_S", "0.001")  # every preset is over this budget
    monkeypatch.setattr(studies, "preset_cost", _refuse)
    monkeypatch.setattr(studies, "preset_over_budget", _refuse)
    monkeypatch.setattr(studies, "run_preset", _refuse)  # and it must come from the cache
    other = _open()  # another session
    other.selectbox(key=keys.W_CAL_PRESET).set_value("gong2020_count").run()
    assert not other.get("plotly_chart")  # nothing shows before the click (the page's rule)
    show = other.button(key=keys.W_CAL_PRESET_RUN)
    assert show.label == "Show preset"
    show.click().run()
    assert not other.exception, [e.value for e in other.exception]
    assert any("37.237" in c.value for c in other.code) and len(other.get("plotly_chart")) == 1


def test_stop_during_a_preset_keeps_nothing_and_never_caches_it(monkeypatch):
    real = studies.run_preset
    calls = []

    def stopped_in_its_second_stage(name, *args, on_progress=None, **kwargs):
        calls.append(name)

        def progress(done, total):
            if done > 0:  # Streamlit's signal arrives through the bar's next update
                def signal(*a, **k):
                    raise StopException()

                on_progress.bar = type("Bar", (), {"progress": staticmethod(signal)})()
            return on_progress(done, total)

        return real(name, *args, on_progress=progress, **kwargs)

    monkeypatch.setattr(studies, "run_preset", stopped_in_its_second_stage)
    name = "eng_admissions"  # no other test runs it on the page
    at = _open()
    at.selectbox(key=keys.W_CAL_PRESET).set_value(name).run()
    at.button(key=keys.W_CAL_PRESET_RUN).click().run()
    assert not at.get("plotly_chart") and not at.code  # the script stopped where the signal arrived
    assert not studies.preset_finished(name)
    at.button(key=keys.W_CAL_PRESET_CANCEL).click().run()  # the Stop click whose rerun delivered it
    assert not at.exception, [e.value for e in at.exception]
    assert any("Preset stopped; nothing kept" in w.value for w in at.warning), [w.value for w in at.warning]
    assert not at.code and not at.get("plotly_chart")
    monkeypatch.setattr(studies, "run_preset", lambda *a, **k: calls.append("again") or real(*a, **k))
    at.button(key=keys.W_CAL_PRESET_RUN).click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert calls == [name, "again"]  # computed afresh: the stopped run was never cached
    assert any("dapper" in c.value for c in at.code) and not at.warning and studies.preset_finished(name)
