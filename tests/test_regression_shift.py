"""linear_regression's shift moves (issue 23): DA-MCMC moves beta together with every record's y along the
regression, (beta, y_i) -> (beta + delta, y_i + X_i delta), a Metropolis step on the joint target
(:func:`engine.kernels.da_mcmc.shift_moves`; method key ``shifts``).

Tiers: (a) the split of the records into safe ones (a polynomial in the shift) and unsafe ones against the
records' own statistic, and the running sums after many moves against recomputation; (b) agreement with
the pseudo-marginal sampler (wide noise) and with long full-sweep runs without the move (narrow noise);
(c) simulation-based calibration (300 replicates) at n = 10 and n = 2,000, the naive posterior as the
negative control; reproducibility and bad settings named.
"""
from __future__ import annotations

import numpy as np
import pytest

import engine
from engine.kernels import da_mcmc as rk
from engine.kernels.shared import statistics
from engine.mechanisms.clipped import compiled_noise
from engine.methods.da_mcmc import da_mcmc, shift_proposal
from engine.methods.pseudo_marginal import pseudo_marginal
from engine.models import make_model
from test_regression import SIGMA_DESIGN, SMALL, _agrees_with_abc, _problem
from test_regression_fast import CLAMPED, DESIGN, _ks_agree, _sbc


def _state(n, design, beta, seed):
    model = make_model("linear_regression", {"n": n, **design})
    rec = np.ascontiguousarray(model.sample_records(np.random.default_rng(seed), np.asarray(beta, float)))
    return model, rec, np.asarray(model.lo, float), np.asarray(model.hi, float)


# ---------------------------------------------------------------- (a) the split and the running sums

def test_the_split_gives_the_records_own_statistic_anywhere_in_its_box():
    """About 20% of y clamped on both sides and some x clamped too: for shifts D drawn inside the box, the
    safe records' polynomial plus the unsafe records one by one equals the y entries of s computed from
    every record moved by X D; and the unsafe set is a small part where the box is small."""
    model, rec, lo, hi = _state(2000, CLAMPED, [0.8, 2.5, -1.5], 1)
    assert 0.1 < np.mean((rec[:, 2] <= lo[2]) | (rec[:, 2] >= hi[2])) < 0.35
    assert np.any(np.abs(rec[:, :2]) >= hi[:2])  # an x beyond its clamp as well
    q = 3
    rng = np.random.default_rng(2)
    s, xtx, xty, yty = np.empty(9), np.empty((q, q)), np.empty(q), np.empty(1)
    statistics(rec, lo, hi, s, xtx, xty, yty)
    for radius in (np.array([0.05, 0.02, 0.03]), np.array([1.0, 0.5, 0.7])):
        c_a, c_b, c_d, c_e = np.empty(q + 1), np.empty((q, q)), np.empty(q), np.empty((q, q))
        y0 = rec[:, 2].copy()
        m, idx = rk._shift_split(rec, s, xtx, xty, lo, hi, radius, c_a, c_b, c_d, c_e)
        assert 0 < m < rec.shape[0]
        if radius[0] < 0.1:
            assert m < 0.05 * rec.shape[0]
        cx, cy, ct = rk._compact(rec, idx, m, lo, hi)
        unsafe_now = np.zeros(q + 1)
        rk._shift_stat_compact(cx, cy, ct, np.zeros(q), lo[2], hi[2], unsafe_now)
        c_a -= unsafe_now  # the constants are s less the unsafe records' current terms
        for _ in range(20):
            d = radius * rng.uniform(-0.999, 0.999, size=q)
            poly = np.empty(q + 1)
            poly[:q] = c_a[:q] + c_b @ d
            poly[q] = c_a[q] + 2.0 * c_d @ d + d @ c_e @ d
            rk._shift_stat_compact(cx, cy, ct, d, lo[2], hi[2], poly)
            moved = rec.copy()
            moved[:, 2] = y0 + d[0] + rec[:, :2] @ d[1:]
            want = model.statistic(moved)
            np.testing.assert_allclose(poly, np.r_[want[:q], want[q]], rtol=1e-10, atol=1e-9)
    # a box wider than the records' spread: most are unsafe, so no polynomial (every move a full pass)
    m, _ = rk._shift_split(rec, s, xtx, xty, lo, hi, np.full(q, 20.0), np.empty(q + 1), np.empty((q, q)),
                           np.empty(q), np.empty((q, q)))
    assert m == -1


@pytest.mark.parametrize("n, epsilon", [(500, 10.0), (500, 0.5)], ids=["polynomial", "wide: full passes"])
def test_shift_moves_keep_the_statistic_and_the_raw_sums_exact(n, epsilon):
    """After 300 shift moves (some accepted, proposals inside and outside the box; at epsilon = 0.5 the box
    holds most records, so every move is a full pass): s and X^T X, X^T y, y^T y equal recomputation from the
    records, x did not move, every y moved by X_i D with D = beta's total move, and a move is accepted and
    rejected by the Metropolis rule (acceptance strictly between 0 and 1)."""
    model, rec, lo, hi = _state(n, CLAMPED, [0.8, 2.5, -1.5], 3)
    problem = _problem(model, epsilon, np.random.default_rng(4), beta=[0.8, 2.5, -1.5])
    s, xtx, xty, yty = np.empty(9), np.empty((3, 3)), np.empty(3), np.empty(1)
    statistics(rec, lo, hi, s, xtx, xty, yty)
    kernel, scale = compiled_noise(problem.mechanism)
    beta = np.array([0.8, 2.5, -1.5])
    beta0, rec0 = beta.copy(), rec.copy()
    shift_l = np.ascontiguousarray(shift_proposal(problem))
    radius = rk.SHIFT_REACH * np.sqrt(np.sum(shift_l * shift_l, axis=1))
    m, _ = rk._shift_split(rec, s, xtx, xty, lo, hi, radius, np.empty(4), np.empty((3, 3)), np.empty(3),
                           np.empty((3, 3)))
    assert (m == -1) == (epsilon < 1.0) and m < 100
    acc = rk.shift_moves(np.random.Generator(np.random.SFC64(5)), rec, s, xtx, xty, yty, beta, model.prior_sd, lo,
                         hi, np.asarray(problem.s_dp, float), kernel, scale, shift_l, 300)
    assert 0 < acc < 300
    d = beta - beta0
    np.testing.assert_array_equal(rec[:, :2], rec0[:, :2])
    np.testing.assert_allclose(rec[:, 2], rec0[:, 2] + d[0] + rec0[:, :2] @ d[1:], rtol=1e-12, atol=1e-10)
    s2, xtx2, xty2, yty2 = np.empty(9), np.empty((3, 3)), np.empty(3), np.empty(1)
    statistics(rec, lo, hi, s2, xtx2, xty2, yty2)
    np.testing.assert_allclose(s, s2, rtol=1e-10, atol=1e-8)
    np.testing.assert_allclose(xtx, xtx2, rtol=1e-12)
    np.testing.assert_allclose(xty, xty2, rtol=1e-9, atol=1e-8)
    np.testing.assert_allclose(yty, yty2, rtol=1e-9)


# ---------------------------------------------------------------- (b) agreement

def test_shift_moves_agree_with_the_pseudo_marginal_sampler_where_the_noise_is_wide():
    """n = 200, epsilon = 2 (wide noise: the conjugate step alone crawls, the pseudo-marginal chain is
    efficient): partial sweeps with shift moves against the mixed-proposal pseudo-marginal chain."""
    model = make_model("linear_regression", {"n": 200, **DESIGN})
    problem = _problem(model, 2.0, np.random.default_rng(90), beta=[0.5, -1.0, 0.8])
    da = da_mcmc(problem, np.random.Generator(np.random.SFC64(91)), chains=4, draws=4000, warmup=500,
                 records_per_iteration=40, shifts=20)
    assert da.info["shifts"] == 20
    pm = pseudo_marginal(problem, np.random.Generator(np.random.SFC64(92)), chains=4, draws=4000, warmup=500,
                         proposal="mixed")
    _ks_agree(da, pm)


def test_shift_moves_agree_with_full_sweeps_where_the_noise_is_narrow():
    """n = 300, epsilon = 20, about 20% of y clamped: partial sweeps with shift moves against long full
    sweeps without them (Algorithm 1 with the clamped records' refresh)."""
    model = make_model("linear_regression", {"n": 300, **CLAMPED})
    problem = _problem(model, 20.0, np.random.default_rng(93), beta=[0.8, 2.5, -1.5])
    new = da_mcmc(problem, np.random.Generator(np.random.SFC64(94)), chains=4, draws=4000, warmup=500,
                  records_per_iteration=60, shifts=10)
    old = da_mcmc(problem, np.random.Generator(np.random.SFC64(95)), chains=4, draws=6000, warmup=300)
    assert "shifts" not in old.info
    _ks_agree(new, old)


@pytest.mark.parametrize("design, truth, seed", [(SMALL, [1.0, -1.5], 20), (SIGMA_DESIGN, [1.0, -1.5, 1.0], 50)],
                         ids=["known sigma", "unknown sigma"])
def test_shift_moves_agree_with_abc_rejection(design, truth, seed):
    """n = 10, p = 1, epsilon = 5, with sigma known and with sigma^2 a parameter (the shifts hold sigma, the
    conjugate step moves it): DA-MCMC with shift moves (here with the fitted independence component, the noise
    being wide next to ten records' spread) against 4000 ABC rejection draws on the same release, KS per
    coordinate at level 0.01."""
    model = make_model("linear_regression", {**design})

    def sampler(problem, rng, **settings):
        res = da_mcmc(problem, rng, **settings)
        assert res.info["shifts"] == 10
        return res

    _agrees_with_abc(model, truth, seed, sampler, chains=4, draws=4000, warmup=500, shifts=10)


# ---------------------------------------------------------------- (c) SBC, reproducibility, settings

@pytest.mark.parametrize("n, epsilon, m, k, thin", [(10, 1.0, 3, 10, 40), (2000, 5.0, 200, 10, 30)],
                         ids=["n=10", "n=2000"])
def test_sbc_with_shift_moves(n, epsilon, m, k, thin):
    """300 replicates, level 0.001 per coordinate, with partial sweeps and shift moves; the naive posterior
    must be rejected somewhere (p < 1e-4), or the test has no power. At n = 2,000 and epsilon = 5 the
    noise and the sampling spread of s are of one size, where both halves of the interweaving matter."""
    def run(problem, rng):
        res = da_mcmc(problem, rng, chains=1, draws=19 * thin, warmup=300, parallel=False, records_per_iteration=m,
                      shifts=k)
        return res.draws[0, thin - 1::thin, :]

    pv, pn = _sbc(n, epsilon, run, seed=2033)
    assert min(pv) > 0.001, pv
    assert min(pn) < 1e-4, pn


def test_shift_moves_are_reproducible_and_their_setting_is_checked():
    model = make_model("linear_regression", {"n": 80, **CLAMPED})
    problem = _problem(model, 3.0, np.random.default_rng(9), beta=[0.5, 2.0, -1.0])
    table = {"name": "da_mcmc", "records_per_iteration": 9, "shifts": 5, "draws": 150, "warmup": 50}
    a = engine.run_method(problem, table, 5)
    b = engine.run_method(problem, table, 5)
    np.testing.assert_array_equal(a.draws, b.draws)
    off = engine.run_method(problem, {**table, "shifts": 0}, 5)
    assert not np.array_equal(off.draws, a.draws) and "shifts" not in off.info
    for bad in (101, -1, 2.5, "ten"):
        with pytest.raises(ValueError, match=r"method.shifts = .* integer >= 0 and <= 100"):
            engine.run_method(problem, {"name": "da_mcmc", "shifts": bad}, 1)
    with pytest.raises(ValueError, match=r"method.shifts = 101 .*from 0 to 100"):
        da_mcmc(problem, np.random.default_rng(0), shifts=101)
    bb = engine.prepare({"model": {"name": "beta_binomial", "n": 20}, "mechanism": {"name": "laplace", "epsilon": 1.0},
                         "data": {"s_dp": [7.0]}})
    with pytest.raises(ValueError, match="method.shifts.*linear_regression only"):
        engine.run_method(bb, {"name": "da_mcmc", "shifts": 5}, 1)
