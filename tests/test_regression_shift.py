"""linear_regression's shift moves (issue 23): DA-MCMC moves beta together with every record's y along the
regression, (beta, y_i) -> (beta + delta, y_i + X_i delta), a Metropolis step on the joint target
(:func:`engine.kernels.da_mcmc.shift_moves`; method key ``shifts``).

Tiers: (a) the split of the records into safe ones (a polynomial in the shift) and unsafe ones against the
records' own statistic, the split as the sweeps, refreshes and moves keep it against a fresh one, and the
running sums after many moves against recomputation; (b) agreement with
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

def _moved(rec, d):
    """The records with every y at its stored value plus X_i d."""
    out = rec.copy()
    out[:, 2] = rec[:, 2] + d[0] + rec[:, :2] @ d[1:]
    return out


def _sums(rec, lo, hi):
    s, xtx, xty, yty = np.empty(9), np.empty((3, 3)), np.empty(3), np.empty(1)
    statistics(rec, lo, hi, s, xtx, xty, yty)
    return s, xtx, xty, yty


def _in_box(rng, centre, box, size):
    v = rng.normal(size=(size, 3))
    v *= (rng.uniform(0.0, 0.999, size=size) / np.linalg.norm(v, axis=1))[:, None]
    return centre + v @ box.T


def test_the_split_gives_the_records_own_statistic_anywhere_in_its_box():
    """About 20% of y clamped on both sides and some x clamped too, the y's stored as y - X D0: for offsets D
    drawn inside the ellipsoid box, the safe records' polynomial (from the running sums at D0 less the split's
    sums over E) plus the unsafe records one by one equals the y entries of s computed from every record moved
    to its stored y + X D, and so does the pass over all records; every safe record keeps its class (inside,
    below, above) at each such D; and the unsafe set is a small part where the box is small."""
    model, rec, lo, hi = _state(2000, CLAMPED, [0.8, 2.5, -1.5], 1)
    assert 0.1 < np.mean((rec[:, 2] <= lo[2]) | (rec[:, 2] >= hi[2])) < 0.35
    assert np.any(np.abs(rec[:, :2]) >= hi[:2])  # an x beyond its clamp as well
    rng = np.random.default_rng(2)
    d0 = np.array([0.03, -0.02, 0.01])
    stored = _moved(rec, -d0)
    _, xtx, xty, yty = _sums(rec, lo, hi)  # the running sums at D0: of the records as they are
    for scale in (0.02, 0.6):
        chol = np.linalg.cholesky(np.array([[1.0, 0.3, -0.2], [0.3, 0.5, 0.1], [-0.2, 0.1, 0.8]]))
        box = np.ascontiguousarray(scale * chol)
        centre = d0 + box @ np.array([0.2, -0.1, 0.3])
        for keep in (False, True):
            sp = rk._split_new(stored.shape[0], 3, keep)
            rk._resplit(stored, centre, box, lo, hi, sp)
            cls, n_unsafe, n_safe_clamped = sp[0], sp[5][0], sp[5][1]
            assert 0 < n_unsafe < stored.shape[0] and (n_unsafe < 0.05 * stored.shape[0] if scale < 0.1 else True)
            assert set(sp[2][:n_unsafe]) == set(np.flatnonzero(cls == 3))
            if keep:
                assert set(sp[7][:n_safe_clamped]) == set(np.flatnonzero((cls == 1) | (cls == 2)))
            poly_b, poly_a = np.empty(4), np.empty((3, 3))
            rk._split_poly(d0, xtx, xty, yty, lo, hi, sp, poly_b, poly_a)
            for d in _in_box(rng, centre, box, 15):
                moved = _moved(stored, d)
                want = model.statistic(moved)
                got, every = np.empty(4), np.empty(4)
                rk._split_stat(d, poly_b, poly_a, lo, hi, sp, got)
                rk._stat_at(stored, d, lo, hi, every)
                np.testing.assert_allclose(got, np.r_[want[:3], want[3]], rtol=1e-10, atol=1e-9)
                np.testing.assert_allclose(every, np.r_[want[:3], want[3]], rtol=1e-10, atol=1e-9)
                y = moved[:, 2]
                status = np.where(y <= lo[2], 1, np.where(y >= hi[2], 2, 0))
                safe = cls != 3
                np.testing.assert_array_equal(status[safe], cls[safe])


@pytest.mark.parametrize("p", [1, 3])
def test_the_split_is_exact_for_other_numbers_of_predictors(p):
    """The same identity with p = 1 and p = 3 predictors (the general loop; p = 2 has its own): y clamped to
    [-2, 2], so a good share of the records is clamped or unsafe."""
    lo, hi = np.full(p + 1, -10.0), np.full(p + 1, 10.0)
    lo[p], hi[p] = -2.0, 2.0
    model = make_model("linear_regression", {"n": 800, "p": p, "lo": list(lo), "hi": list(hi)})
    beta = np.linspace(0.5, -0.8, p + 1)
    rec = np.ascontiguousarray(model.sample_records(np.random.default_rng(p), beta))
    q = p + 1
    s, xtx, xty, yty = np.empty(model.stat_dim), np.empty((q, q)), np.empty(q), np.empty(1)
    statistics(rec, lo, hi, s, xtx, xty, yty)
    box = np.ascontiguousarray(np.diag(np.full(q, 0.05)))
    sp = rk._split_new(rec.shape[0], q, False)
    rk._resplit(rec, np.zeros(q), box, lo, hi, sp)
    assert 0 < sp[5][0] < rec.shape[0] // 2
    poly_b, poly_a = np.empty(q + 1), np.empty((q, q))
    rk._split_poly(np.zeros(q), xtx, xty, yty, lo, hi, sp, poly_b, poly_a)
    for v in np.random.default_rng(9).uniform(-0.5, 0.5, size=(10, q)):  # |v| <= 0.5 sqrt(q) < 1: in the box
        d = box @ v
        moved = rec.copy()
        moved[:, p] = rec[:, p] + d[0] + rec[:, :p] @ d[1:]
        want = model.statistic(moved)
        got = np.empty(q + 1)
        rk._split_stat(d, poly_b, poly_a, lo, hi, sp, got)
        np.testing.assert_allclose(got, np.r_[want[:q], want[q]], rtol=1e-10, atol=1e-9)


def test_sweeps_and_refreshes_keep_the_split_as_a_fresh_one_would_be():
    """Record moves (many accepted, some crossing a clamp or the box's reach) and refreshes of clamped records,
    all on records stored as y - X D: the split they keep up to date (classes, the unsafe and safe clamped lists,
    E's sums) equals one built afresh from the final records; s and the running X^T X, X^T y, y^T y equal
    recomputation from the records as they are; x moved only by accepted record moves."""
    model, rec, lo, hi = _state(600, CLAMPED, [0.8, 2.5, -1.5], 3)
    problem = _problem(model, 2.0, np.random.default_rng(4), beta=[0.8, 2.5, -1.5])
    kernel, scale = compiled_noise(problem.mechanism)
    d = np.array([0.05, -0.03, 0.02])
    stored = _moved(rec, -d)
    s, xtx, xty, yty = _sums(rec, lo, hi)
    box = np.ascontiguousarray(np.diag([0.2, 0.1, 0.15]))
    centre = d.copy()
    sp = rk._split_new(stored.shape[0], 3, True)
    rk._resplit(stored, centre, box, lo, hi, sp)
    g = np.random.Generator(np.random.SFC64(7))
    beta = np.array([0.8, 2.5, -1.5])
    ids = np.empty(2 * stored.shape[0], dtype=np.int64)
    sdp = np.asarray(problem.s_dp, float)
    start, accepted, refreshed = 0, 0, 0
    for _ in range(6):
        asum, nacc = rk._sweep_split(g, stored, s, xtx, xty, yty, beta, model.chol, np.asarray(model.x_mean, float),
                                     model.sigma, lo, hi, sdp, kernel, scale, start, 250, d, centre, box, sp)
        start = (start + 250) % stored.shape[0]
        accepted += nacc
        refreshed += rk._refresh_split(g, stored, xty, yty, beta, model.sigma, lo, hi, d, centre, box, sp, 40, ids)
    refreshed += rk._refresh_split(g, stored, xty, yty, beta, model.sigma, lo, hi, d, centre, box, sp, -1, ids)
    assert 300 < accepted < 1500 and refreshed > 240
    fresh = rk._split_new(stored.shape[0], 3, True)
    rk._resplit(stored, centre, box, lo, hi, fresh)
    np.testing.assert_array_equal(sp[0], fresh[0])
    for k, which in ((0, 2), (1, 7)):  # the unsafe list, the safe clamped list: the same sets
        assert sp[5][k] == fresh[5][k]
        assert set(sp[which][:sp[5][k]]) == set(fresh[which][:fresh[5][k]])
    for a, b in zip(sp[8:], fresh[8:]):  # E's sums
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-8)
    s2, xtx2, xty2, yty2 = _sums(_moved(stored, d), lo, hi)
    np.testing.assert_allclose(s, s2, rtol=1e-10, atol=1e-8)
    np.testing.assert_allclose(xtx, xtx2, rtol=1e-10)
    np.testing.assert_allclose(xty, xty2, rtol=1e-9, atol=1e-8)
    np.testing.assert_allclose(yty, yty2, rtol=1e-9)


@pytest.mark.parametrize("n, epsilon", [(500, 10.0), (500, 0.5)], ids=["narrow", "wide"])
def test_shift_moves_keep_the_statistic_and_the_raw_sums_exact(n, epsilon):
    """300 shift moves on a box of one proposal sd (proposals inside and outside it, some accepted outside,
    which splits the records again): the records are not written, D moved by beta's total move, and s,
    X^T X, X^T y, y^T y equal recomputation from the records at their stored y + X D; a move is accepted and
    rejected by the Metropolis rule (acceptance strictly between 0 and 1); the split equals a fresh one at its
    final centre."""
    model, rec, lo, hi = _state(n, CLAMPED, [0.8, 2.5, -1.5], 3)
    problem = _problem(model, epsilon, np.random.default_rng(4), beta=[0.8, 2.5, -1.5])
    s, xtx, xty, yty = _sums(rec, lo, hi)
    kernel, scale = compiled_noise(problem.mechanism)
    beta = np.array([0.8, 2.5, -1.5])
    beta0, rec0 = beta.copy(), rec.copy()
    shift_l = np.ascontiguousarray(shift_proposal(problem))
    box = np.ascontiguousarray(shift_l)
    d, centre = np.zeros(3), np.zeros(3)
    sp = rk._split_new(n, 3, False)
    rk._resplit(rec, centre, box, lo, hi, sp)
    acc = rk.shift_moves(np.random.Generator(np.random.SFC64(5)), rec, s, xtx, xty, yty, beta, model.prior_sd, lo,
                         hi, np.asarray(problem.s_dp, float), kernel, scale, shift_l, 300, d, centre, box,
                         rk.NO_MID, sp)
    assert 0 < acc < 300
    np.testing.assert_array_equal(rec, rec0)
    np.testing.assert_allclose(d, beta - beta0, rtol=1e-12, atol=1e-12)
    assert not np.array_equal(centre, np.zeros(3))  # it left the box, and the records were split again
    s2, xtx2, xty2, yty2 = _sums(_moved(rec, d), lo, hi)
    np.testing.assert_allclose(s[:4], s2[:4], rtol=1e-10, atol=1e-8)
    np.testing.assert_allclose(xtx, xtx2, rtol=1e-12)
    np.testing.assert_allclose(xty, xty2, rtol=1e-9, atol=1e-8)
    np.testing.assert_allclose(yty, yty2, rtol=1e-9)
    fresh = rk._split_new(n, 3, False)
    rk._resplit(rec, centre, box, lo, hi, fresh)
    np.testing.assert_array_equal(sp[0], fresh[0])


def test_the_chain_writes_the_records_as_they_are_and_agrees_with_recomputation():
    """A call of the chain with shift moves, partial sweeps and refreshes: at its end every y is written as
    stored + X D, so s, X^T X, X^T y and y^T y equal recomputation from the records, and a second call with
    the same seed from the same state gives the same draws."""
    model, rec, lo, hi = _state(400, CLAMPED, [0.8, 2.5, -1.5], 5)
    problem = _problem(model, 3.0, np.random.default_rng(6), beta=[0.8, 2.5, -1.5])
    kernel, scale = compiled_noise(problem.mechanism)
    shift_l = np.ascontiguousarray(shift_proposal(problem))
    outs = []
    for _ in range(2):
        r = rec.copy()
        s, xtx, xty, yty = np.empty(9), np.empty((3, 3)), np.empty(3), np.empty(1)
        theta, acc, frac = np.empty((60, 3)), np.empty(60), np.empty(60)
        rk.regression_window_chain(np.random.Generator(np.random.SFC64(8)), r, s, xtx, xty, yty,
                                   np.array([model.sigma]), model.chol, np.asarray(model.x_mean, float), model.prior_sd,
                                   0.0, 0.0, lo, hi, np.asarray(problem.s_dp, float), kernel, scale, 0, 50, 60, theta,
                                   acc, frac, 20, 5, shift_l)
        s2, xtx2, xty2, yty2 = _sums(r, lo, hi)
        np.testing.assert_allclose(s, s2, rtol=1e-10, atol=1e-8)
        np.testing.assert_allclose(xtx, xtx2, rtol=1e-12)
        np.testing.assert_allclose(xty, xty2, rtol=1e-9, atol=1e-8)
        np.testing.assert_allclose(yty, yty2, rtol=1e-9)
        outs.append((theta, r))
    np.testing.assert_array_equal(outs[0][0], outs[1][0])
    np.testing.assert_array_equal(outs[0][1], outs[1][1])
    assert np.ptp(outs[0][0][:, 0]) > 0


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

@pytest.mark.parametrize("n, epsilon, m, k, thin", [(10, 1.0, 3, 10, 40), (2000, 5.0, 200, 10, 20)],
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
