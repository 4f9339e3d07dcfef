"""linear_regression's tail moves (issue 23): a record whose current y lies beyond a threshold near a clamp bound
gets a new record from the model restricted to that same tail, accepted with the noise's ratio alone
(:func:`engine.kernels.orbit._tail_moves`; method key ``tail_records``, with ``ancillary_moves`` or ``orbit_moves``).

Tiers: (a) the kernel: with noise so wide that every move is accepted, the tail's records after the moves are the
model's law restricted to the tail (KS against rejection draws), the other records are untouched, and the split and
the running sums stay exact; (b) agreement with a long full-sweep run (in tests/test_regression_ancillary.py, which
computes that run once for both); (c) simulation-based calibration (300 replicates, y clamped, sigma known and
sigma^2 a parameter), the naive posterior as the negative control; reproducibility and bad settings.
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import engine
from engine.kernels import orbit as ob
from engine.kernels.shared import statistics
from engine.methods import da_mcmc as da_module
from engine.methods.da_mcmc import da_mcmc
from engine.models import make_model
from test_regression import _problem
from test_regression_fast import CLAMPED, CLAMPED_SIGMA, _sbc
from test_regression_orbit import _split

NO_BOX = np.zeros((4, 4, 4))


def test_tail_moves_draw_the_models_tail_and_keep_the_split_and_sums_exact():
    """20,000 records, every one scanned once at threshold h = 0.4 (c_lo = lo + 0.4 sd_y, c_hi = hi - 0.4 sd_y),
    Laplace noise with epsilon = 1e-9 (every move accepted up to 1e-7): the records of each tail keep their number
    and follow the model restricted to that tail (each coordinate, KS against 40,000 rejection draws, level 0.001;
    with x | y's slope halved the test fails), the rest are untouched; the running sums of the records' base values,
    the class sums and the released statistic equal their recomputation."""
    n = 20_000
    model = make_model("linear_regression", {"n": n, **CLAMPED})
    beta = np.array([-2.0, 2.0, -1.5])  # 7.7% of y below c_lo, 3.2% above c_hi
    rng = np.random.default_rng(41)
    rec = np.ascontiguousarray(model.sample_records(rng, beta))
    problem = _problem(model, 1e-9, np.random.default_rng(42), beta=list(beta))
    runner = da_module._Runner(problem)
    lo, hi = np.asarray(model.lo, float), np.asarray(model.hi, float)
    split = _split(rec, np.eye(4), NO_BOX, lo, hi)  # the split at G = I, a box of zero size
    s, xtx, xty, yty = np.empty(9), np.empty((3, 3)), np.empty(3), np.empty(1)
    statistics(rec, lo, hi, s, xtx, xty, yty)
    z = np.column_stack([np.ones(n), rec])
    tall = np.tril(z.T @ z)
    sd_y = np.sqrt(beta[1:] @ model.chol @ model.chol.T @ beta[1:] + model.sigma ** 2)
    h = 0.4
    c_lo, c_hi = lo[2] + h * sd_y, hi[2] - h * sd_y
    before = rec.copy()
    tried, acc = ob._tail_moves(np.random.Generator(np.random.SFC64(7)), rec, s, np.eye(4), np.eye(4), tall, beta,
                                model.chol, np.asarray(model.x_mean, float), model.sigma, lo, hi,
                                np.asarray(problem.s_dp, float), runner.kernel, runner.scale, 0, n, h, np.eye(4),
                                np.zeros((4, 4, 4)), *split.values())
    low_before, high_before = before[:, 2] <= c_lo, before[:, 2] > c_hi
    assert tried == low_before.sum() + high_before.sum() and acc == tried  # every tail record moved, all accepted
    low, high = rec[:, 2] <= c_lo, rec[:, 2] > c_hi
    np.testing.assert_array_equal(low, low_before)
    np.testing.assert_array_equal(high, high_before)
    rest = ~(low | high)
    np.testing.assert_array_equal(rec[rest], before[rest])
    assert not np.any(rec[low | high] == before[low | high])
    # the model restricted to each tail, by rejection
    ref = model.sample_records(np.random.default_rng(43), beta, n=1_500_000)
    for side, tail in ((ref[:, 2] <= c_lo, low), (ref[:, 2] > c_hi, high)):
        assert side.sum() > 40_000 and tail.sum() > 500
        for c in range(3):
            assert stats.ks_2samp(rec[tail, c], ref[side][:40_000, c]).pvalue > 0.001, c
    # the split's bookkeeping and the running sums
    z = np.column_stack([np.ones(n), rec])
    np.testing.assert_allclose(tall, np.tril(z.T @ z), rtol=1e-9, atol=1e-6)
    s2, xtx2, xty2, yty2 = np.empty(9), np.empty((3, 3)), np.empty(3), np.empty(1)
    statistics(rec, lo, hi, s2, xtx2, xty2, yty2)
    np.testing.assert_allclose(s, s2, rtol=1e-9, atol=1e-7)
    fresh = _split(rec, np.eye(4), NO_BOX, lo, hi)
    np.testing.assert_array_equal(split["cls"], fresh["cls"])
    np.testing.assert_allclose(split["t0"], fresh["t0"], rtol=1e-9, atol=1e-6)
    np.testing.assert_allclose(split["sc"], fresh["sc"], rtol=1e-9, atol=1e-6)
    np.testing.assert_array_equal(split["cnt"], fresh["cnt"])


@pytest.mark.parametrize("design, epsilon, thin", [(CLAMPED, 3.0, 20), (CLAMPED_SIGMA, 5.0, 30)],
                         ids=["sigma known", "sigma2"])
def test_sbc_with_tail_moves(design, epsilon, thin):
    """300 replicates at n = 100, about 20% of y clamped, level 0.001 per coordinate: 2 records, 10 ancillary
    moves and a scan of all 100 records by the tail moves an iteration (so the tail's records are renewed mostly by
    the tail moves); the naive posterior must be rejected somewhere (p < 1e-4), or the test has no power."""
    def run(problem, rng):
        res = da_mcmc(problem, rng, chains=1, draws=19 * thin, warmup=300, parallel=False, records_per_iteration=2,
                      ancillary_moves=10, tail_records=100)
        return res.draws[0, thin - 1::thin, :]

    pv, pn = _sbc(100, epsilon, run, seed=2063, design=design)
    assert min(pv) > 0.001, pv
    assert min(pn) < 1e-4, pn


def test_tail_moves_are_reproducible_and_their_setting_is_checked():
    model = make_model("linear_regression", {"n": 80, **CLAMPED})
    problem = _problem(model, 3.0, np.random.default_rng(9), beta=[0.5, 2.0, -1.0])
    table = {"name": "da_mcmc", "records_per_iteration": 9, "ancillary_moves": 5, "tail_records": 40, "draws": 150,
             "warmup": 60}
    a = engine.run_method(problem, table, 5)
    b = engine.run_method(problem, table, 5)
    np.testing.assert_array_equal(a.draws, b.draws)
    assert a.info["tail_records"] == 40
    off = engine.run_method(problem, {**table, "tail_records": 0}, 5)
    assert not np.array_equal(off.draws, a.draws) and "tail_records" not in off.info
    orbit = engine.run_method(problem, {**table, "ancillary_moves": 0, "orbit_moves": 5}, 5)
    assert orbit.info["tail_records"] == 40 and np.isfinite(orbit.draws).all()
    for bad in (-1, 2.5, "ten"):
        with pytest.raises(ValueError, match=r"method.tail_records = .* integer >= 0"):
            engine.run_method(problem, {**table, "tail_records": bad}, 1)
    with pytest.raises(ValueError, match=r"method.tail_records = 81 .*from 0 to n = 80"):
        da_mcmc(problem, np.random.default_rng(0), ancillary_moves=5, tail_records=81)
    with pytest.raises(ValueError, match=r"method.tail_records = 10 .*with orbit_moves or ancillary_moves only"):
        da_mcmc(problem, np.random.default_rng(0), tail_records=10)
    bb = engine.prepare({"model": {"name": "beta_binomial", "n": 20}, "mechanism": {"name": "laplace", "epsilon": 1.0},
                         "data": {"s_dp": [7.0]}})
    with pytest.raises(ValueError, match="method.tail_records.*linear_regression only"):
        engine.run_method(bb, {"name": "da_mcmc", "tail_records": 5}, 1)


def test_the_cost_estimate_counts_the_tail_moves():
    """At n = 10^6 (the paper's design, Gaussian epsilon = 0.1): the estimate names the tail scan and prices it at
    its measured share (6.0% of the scanned records moved, about 8 ms an iteration for 100,000 records scanned)."""
    problem = engine.prepare({"seed": 1, "model": {"name": "linear_regression", "n": 10**6},
                              "mechanism": {"name": "gaussian", "rho": 0.005},
                              "data": {"simulate": {"beta": [-1.79, -2.89, -0.66]}}})
    share = (da_module.tail_work(problem, 100_000) / 100_000 - da_module.TAIL_SCAN_SHARE) / da_module.TAIL_MOVE_SHARE
    assert 0.05 < share < 0.065, share
    settings = {"records_per_iteration": 200, "ancillary_moves": 20, "clamped_per_iteration": 100}
    with_tail = engine.estimate_cost(problem, {"name": "da_mcmc", **settings, "tail_records": 100_000})
    assert with_tail.detail.endswith("20 ancillary moves and a tail scan of 100,000 records"), with_tail.detail
    without = engine.estimate_cost(problem, {"name": "da_mcmc", **settings})
    per_iteration = (with_tail.seconds - without.seconds) / (4 * 1500) * 2  # 4 chains x 1,500 iterations, 2 cores
    assert da_module.tail_work(problem, 0) == 0.0 and per_iteration > 0.0
    assert with_tail.seconds > 2 * without.seconds


def test_the_best_methods_note_names_the_ancillary_and_tail_settings_of_its_own():
    """Where auto's DA-MCMC runs with ancillary and tail moves and the DA-MCMC row without, the app's note says which
    settings differ, in words (ui.narrative.auto_caption)."""
    from ui.narrative import auto_caption

    info = {"picked": "da_mcmc", "why": "DA-MCMC is cheaper per effective draw here",
            "picked_info": {"records_per_iteration": 200, "clamped_per_iteration": 100, "ancillary_moves": 20,
                            "tail_records": 20_000}}
    note = auto_caption(info, {"records_per_iteration": 200, "clamped_per_iteration": 100})
    assert "settings of its own (20 moves of β and the records' frame per iteration; 20,000 records scanned per " \
           "iteration by the tail moves)" in note, note
    assert note.endswith("(no moves of the records' frame; no tail moves)."), note
