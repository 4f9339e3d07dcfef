"""Issue 20 on the Privacy budget and Calibration pages: the ε advice from the exact posterior, T checked,
fresh releases, one p-value format, the SBC thinning and the calibration cost pilot."""
import math
import time

import numpy as np
import pytest
from scipy import stats

from app_support import open_app

from engine.api import prepare
from engine.methods.exact import exact_moments, grid_posterior_of
from engine.studies import calibration
from engine.studies import cost as study_cost
from engine.studies.calibration import sbc_histogram, sbc_rank, sbc_thin
from engine.studies.sweep import epsilon_for_target_sd
from figures import budget
from figures.labels import format_p
from ui import keys

GRID = [0.1, 0.215, 0.464, 1.0, 2.15, 4.64, 10.0]


def _spec(n=2000, epsilon=1.0):
    return {"seed": 1, "model": {"name": "beta_binomial", "n": n, "a": 1.0, "b": 1.0},
            "mechanism": {"name": "laplace", "epsilon": epsilon}, "data": {"simulate": {"theta": 0.3}}}


# --------------------------------------------------------------------------- exact moments
def test_exact_moments_match_the_mixture_law_and_the_grid():
    """The mixture's sd against its own grid evaluation (two independent routes, 1e-6 relative) and against
    400,000 exact draws (tolerance 5 Monte Carlo standard errors of an sd, sd / sqrt(2N))."""
    problem = prepare(_spec())
    mean, sd = exact_moments(problem)["theta"]
    gp, _ = grid_posterior_of(problem)
    assert gp.mean() == pytest.approx(mean, rel=1e-6) and gp.sd() == pytest.approx(sd, rel=1e-5)
    from engine.methods.exact import exact
    draws = exact(problem, np.random.default_rng(3), draws=400_000).draws.ravel()
    assert abs(draws.std() - sd) < 5 * sd / math.sqrt(2 * draws.size)
    assert abs(draws.mean() - mean) < 5 * sd / math.sqrt(draws.size)


def test_no_noise_limit_is_the_confidential_posterior():
    """At ε = 1e6 the release is the statistic, so the exact posterior is Beta(a + s, b + n - s)."""
    problem = prepare(_spec(n=200, epsilon=1e6))
    s = float(problem.records.sum())
    assert exact_moments(problem)["theta"][1] == pytest.approx(stats.beta(1 + s, 1 + 200 - s).std(), rel=1e-6)


# --------------------------------------------------------------------------- the advice
def test_target_below_the_confidential_sd_is_impossible_and_names_the_records_needed():
    advice = epsilon_for_target_sd(_spec(), GRID, 0.01, "theta")  # issue: n = 2000, T = 0.01 < sd ≈ 0.01026
    assert advice.verdict == "impossible" and advice.epsilon is None
    assert advice.confidential_sd == pytest.approx(0.01026, abs=1e-4)
    assert 2000 * (advice.confidential_sd / 0.01) ** 2 <= advice.records_needed <= 2200
    assert all(sd > 0.01 for sd in advice.sds.values())


def test_met_reads_the_exact_sd_not_draws():
    advice = epsilon_for_target_sd(_spec(), GRID, 0.0105, "theta")
    assert advice.verdict == "met" and advice.epsilon == 0.464
    assert advice.sds[0.464] <= 0.0105 < advice.sds[0.215]


def test_beyond_the_grid_names_an_epsilon_that_meets_it():
    advice = epsilon_for_target_sd(_spec(), GRID[:3], 0.0103, "theta")
    assert advice.verdict == "beyond_grid" and advice.beyond is not None and advice.beyond > 0.464
    assert epsilon_for_target_sd(_spec(), [advice.beyond], 0.0103, "theta").verdict == "met"


@pytest.mark.parametrize("bad", [0, -1, math.nan, "abc"])
def test_target_must_be_positive(bad):
    with pytest.raises(ValueError, match="target_sd = .* is invalid: must be a number > 0"):
        epsilon_for_target_sd(_spec(), GRID, bad, "theta")


def test_sd_figure_carries_the_exact_sd_and_the_floor():
    import pandas as pd
    table = pd.DataFrame({"epsilon": GRID, "method": "naive", "param": "theta", "sd": 0.01, "mean": 0.3,
                          "q5": 0.28, "q95": 0.32})
    advice = epsilon_for_target_sd(_spec(), GRID, 0.01, "theta")
    fig = budget.sd_plot(table, "theta", target=0.01, exact_sd=advice.sds, confidential_sd=advice.confidential_sd)
    kinds = {t["meta"]["kind"]: t for t in fig.to_dict()["data"]}
    assert list(kinds["exact_sd"]["y"]) == [advice.sds[e] for e in GRID]
    assert kinds["confidential_sd"]["meta"]["value"] == advice.confidential_sd


# --------------------------------------------------------------------------- the page
def test_page_advice_and_target_messages():
    at = open_app("pages/privacy_budget.py")
    assert any("computed from the exact posterior itself, not estimated from draws" in s.value for s in at.success)
    at.text_input(key=keys.W_TARGET_SD).set_value(str(0.0)).run()
    assert any("Target posterior sd T = 0 is invalid: must be > 0" in e.value for e in at.error)
    at.text_input(key=keys.W_TARGET_SD).set_value(str(-1.0)).run()
    assert any("T = -1 is invalid" in e.value for e in at.error)
    assert not any("a exact" in m.value for m in [*at.warning, *at.success])
    at.text_input(key=keys.W_TARGET_SD).set_value(str(0.01)).run()  # the demo's 40 records: sd ≈ 0.067
    warning = " ".join(w.value for w in at.warning)
    assert "No ε reaches T = 0.01" in warning and "records" in warning and "extend the grid" not in warning
    at.switch_page("pages/compare.py").run()
    at.switch_page("pages/privacy_budget.py").run()
    assert at.text_input(key=keys.W_TARGET_SD).value == "0.01"  # kept through a page switch


def test_fresh_releases_are_drawn_per_epsilon():
    at = open_app("pages/privacy_budget.py")
    at.multiselect(key=keys.W_SWEEP_METHODS).set_value(["naive"]).run()
    at.text_input(key=keys.W_GRID).input("0.5, 5").run()
    at.session_state[keys.W_FRESH_COUNT] = 4  # 4 releases an ε from the first run (the default 10 ran first)
    at.toggle(key=keys.W_FRESH).set_value(True).run()
    assert at.text_input(key=keys.W_FRESH_COUNT).value == "4"
    assert not at.exception and not at.error
    fig = next(c for c in at.get("plotly_chart") if "fresh releases" in c.proto.spec)
    assert '"release"' in fig.proto.spec


# --------------------------------------------------------------------------- calibration
def test_p_values_are_written_one_way():
    # below 0.001 as a bound, never an exponent ("4.9e-06" on the KS bar and in the summary table) nor 0
    assert [format_p(p) for p in (0.0, 4.9e-06, 0.0003237, 0.000999, 0.001, 0.0012, 0.35, 1.0, math.nan)] == \
        ["< 0.001", "< 0.001", "< 0.001", "< 0.001", "0.001", "0.0012", "0.35", "1", "—"]


def test_sbc_thinning_gives_l_ranks_for_any_chain_count():
    draws = np.random.default_rng(0).normal(size=(2, 500))
    assert sbc_thin(draws, 99).size == 99 and sbc_thin(draws[:1], 99).size == 99
    assert sbc_rank(draws, 10.0, 99) == (99, 99) and sbc_rank(draws, -10.0, 99) == (0, 99)


def test_sbc_bins_hold_whole_ranks_and_expect_their_share():
    import pandas as pd
    table = pd.DataFrame({"method": "m", "param": "x", "quantile": 0.5, "rank": np.arange(99), "rank_max": 98})
    edges, counts, expected = sbc_histogram(table, "m", "x")
    assert counts.sum() == 99 and np.allclose(counts, expected)  # uniform ranks fill every bin as expected


def test_calibration_pilot_is_timed_warm(monkeypatch):
    """A replicate whose first call pays a one-time 0.3 s (compilation, caches) must not be priced at 0.3 s
    per replicate: the study pays that once."""
    calls = []

    def unit(payload):
        calls.append(1)
        time.sleep(0.3 if len(calls) == 1 else 0.001)
        return []

    monkeypatch.setattr(calibration, "_calibration_unit", unit)
    per = study_cost._replicate_seconds(_spec(n=50), [{"name": "naive", "chains": 1, "draws": 100}], False, 100,
                                        50, 99, None)
    assert per["bookkeeping"] < 0.1, per


def test_calibration_page_labels_and_messages():
    at = open_app("pages/calibration.py")
    assert not at.exception
    assert at.selectbox(key=keys.W_CAL_MODEL).format_func("beta_binomial") != "beta_binomial"
