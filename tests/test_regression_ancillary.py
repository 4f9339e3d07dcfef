"""linear_regression's ancillary moves (issue 23): DA-MCMC moves beta and the frame (w-bar, L) of the records'
w = (x, e) with their ancillary configuration held, a Metropolis-Hastings step in the frame coordinates
(:func:`engine.kernels.orbit.frame`; method key ``ancillary_moves``).

Tiers: (a) the kernel's pieces: the frame against NumPy, the map to a proposed frame against the frame of the
records it moves, the frame's log prior against SciPy's normal and Wishart densities with a numerical Jacobian;
(b) agreement with a long full-sweep run without the moves (computed once, also the tail moves' reference);
(c) simulation-based calibration (300 replicates) at n = 10 and n = 500, and with sigma^2 a parameter and y
clamped at n = 100, the naive posterior as the negative control; reproducibility and bad settings named.
"""
from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from scipy import stats

import engine
from engine.kernels import orbit as ob
from engine.methods import da_mcmc as da_module
from engine.methods.da_mcmc import da_mcmc
from engine.models import make_model
from test_regression import _problem
from test_regression_fast import CLAMPED, CLAMPED_SIGMA, DESIGN, _ks_agree, _sbc

Q = 3  # p = 2: w = (x1, x2, e)


def _setting(n=200, seed=3, beta=(0.8, 2.5, -1.5)):
    model = make_model("linear_regression", {"n": n, **CLAMPED})
    rec = np.ascontiguousarray(model.sample_records(np.random.default_rng(seed), np.asarray(beta, float)))
    problem = _problem(model, 5.0, np.random.default_rng(seed + 1), beta=list(beta))
    return model, problem, rec


def _tall(rec):
    z = np.column_stack([np.ones(len(rec)), rec])
    return np.tril(z.T @ z)


def _kernel_frame(rec, beta, sigma, G=None):
    th = np.empty(ob.frame_size(2))
    k = Q + 1
    ok = ob.frame(np.eye(k) if G is None else G, _tall(rec), np.asarray(beta, float), sigma, np.empty((k, k)),
                  np.empty((k, k)), th)
    assert ok
    return th


def test_the_frame_is_the_records_mean_and_scatter_of_x_and_the_residuals():
    model, problem, rec = _setting()
    beta = np.array([0.7, 2.4, -1.4])
    th = _kernel_frame(rec, beta, model.sigma)
    np.testing.assert_array_equal(th, da_module._frame_of(rec, beta, model.sigma))
    e = (rec[:, 2] - beta[0] - rec[:, :2] @ beta[1:]) / model.sigma
    np.testing.assert_array_equal(th[:3], beta)
    np.testing.assert_allclose(th[3:6], [rec[:, 0].mean(), rec[:, 1].mean(), e.mean()], rtol=1e-10, atol=1e-12)
    low = np.linalg.cholesky(np.cov(np.column_stack([rec[:, :2], e]), rowvar=False) * (len(rec) - 1))
    np.testing.assert_allclose(np.exp(th[[6, 8, 11]]), np.diag(low), rtol=1e-10)
    np.testing.assert_allclose(th[[7, 9, 10]], low[[1, 2, 2], [0, 0, 1]], rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("size", [1e-3, 0.3])
def test_the_map_carries_the_records_to_the_proposed_frame_and_keeps_their_configuration(size):
    """G' = frame_map(theta, theta') G: the records G' (1, b) have frame theta' at beta' (any G, small and large
    steps), and their ancillary configuration L^-1 (w - w-bar) is the one they had."""
    model, problem, rec = _setting()
    rng = np.random.default_rng(7)
    beta = np.array([0.7, 2.4, -1.4])
    G = np.eye(Q + 1)
    G[1:, 0] = rng.normal(0, 0.1, Q)
    G[1:, 1:] += np.tril(rng.normal(0, 0.05, (Q, Q)))
    z = np.column_stack([np.ones(len(rec)), rec])
    cur = (z @ G.T)[:, 1:]
    th = _kernel_frame(cur, beta, model.sigma)
    np.testing.assert_allclose(th, _kernel_frame(rec, beta, model.sigma, G), rtol=1e-9, atol=1e-9)
    th2 = th + rng.normal(0, size, th.size) * np.r_[np.ones(6), 0.1, 1, 0.1, 1, 1, 0.1]
    g2 = np.empty((Q + 1, Q + 1))
    ob.frame_map(th, th2, model.sigma, G, g2)
    assert np.allclose(g2[0], [1, 0, 0, 0]) and np.allclose(np.triu(g2, 1), 0)
    moved = (z @ g2.T)[:, 1:]
    np.testing.assert_allclose(_kernel_frame(moved, th2[:3], model.sigma), th2, rtol=1e-8, atol=1e-8)

    def config(r, b):
        w = np.column_stack([r[:, :2], (r[:, 2] - b[0] - r[:, :2] @ b[1:]) / model.sigma])
        d = w - w.mean(axis=0)
        return np.linalg.solve(np.linalg.cholesky(d.T @ d), d.T).T

    np.testing.assert_allclose(config(moved, th2[:3]), config(cur, beta), rtol=1e-7, atol=1e-9)


def test_the_frames_log_prior_is_the_normal_wishart_density_with_its_jacobian():
    """Differences of frame_log_prior between frames = those of log N(beta; 0, tau^2 I) + log N(w-bar; mu_w,
    Sigma_w / n) + log Wishart(S; n - 1, Sigma_w) + log |dS / d(log L_rr, L_rc)|, the Jacobian by central
    differences (an x covariance that is not the identity)."""
    n = 40
    cov_x = np.array([[1.5, 0.4], [0.4, 0.8]])
    cov_w = np.eye(Q)
    cov_w[:2, :2] = cov_x
    p_w = np.linalg.inv(cov_w)
    mu_w = np.array([0.9, -1.2, 0.0])
    tau = 2.0
    rng = np.random.default_rng(11)

    def reference(th):
        low = np.zeros((Q, Q))
        low[np.tril_indices(Q)] = th[6:]
        low[np.diag_indices(Q)] = np.exp(np.diag(low))

        def vech(t):
            lo_ = np.zeros((Q, Q))
            lo_[np.tril_indices(Q)] = t
            lo_[np.diag_indices(Q)] = np.exp(np.diag(lo_))
            return (lo_ @ lo_.T)[np.tril_indices(Q)]

        jac = np.empty((6, 6))
        for j in range(6):
            h = 1e-6
            up, down = th[6:].copy(), th[6:].copy()
            up[j] += h
            down[j] -= h
            jac[:, j] = (vech(up) - vech(down)) / (2 * h)
        return (stats.multivariate_normal(np.zeros(3), tau ** 2 * np.eye(3)).logpdf(th[:3])
                + stats.multivariate_normal(mu_w, cov_w / n).logpdf(th[3:6])
                + stats.wishart(df=n - 1, scale=cov_w).logpdf(low @ low.T) + math.log(abs(np.linalg.det(jac))))

    def frame(seed):
        r = np.random.default_rng(seed)
        s = stats.wishart(df=n - 1, scale=cov_w).rvs(random_state=r)
        low = np.linalg.cholesky(s)
        ent = [math.log(low[a, a]) if b == a else low[a, b] for a in range(Q) for b in range(a + 1)]
        return np.r_[r.normal(0, 1, 3), mu_w + r.normal(0, 0.2, 3), ent]

    frames = [frame(s) for s in rng.integers(0, 2 ** 31, 4)]
    ours = [ob.frame_log_prior(th, Q, float(n), mu_w, p_w, tau) for th in frames]
    ref = [reference(th) for th in frames]
    np.testing.assert_allclose(np.diff(ours), np.diff(ref), rtol=1e-7, atol=1e-6)


# ---------------------------------------------------------------- (b) agreement with long runs

@functools.cache
def full_sweep_reference():
    """n = 300 at epsilon = 3, 20% of y clamped, and a long full-sweep chain without any moves (the reference of
    the ancillary and the tail moves' agreement, computed once)."""
    model = make_model("linear_regression", {"n": 300, **CLAMPED})
    problem = _problem(model, 3.0, np.random.default_rng(93), beta=[0.8, 2.5, -1.5])
    return problem, da_mcmc(problem, np.random.Generator(np.random.SFC64(95)), chains=4, draws=12_000, warmup=300)


def test_ancillary_moves_agree_with_full_sweeps():
    """30 records and 20 ancillary moves per iteration against the long full-sweep chain."""
    problem, old = full_sweep_reference()
    new = da_mcmc(problem, np.random.Generator(np.random.SFC64(94)), chains=4, draws=4000, warmup=600,
                  records_per_iteration=30, ancillary_moves=20)
    assert new.info["ancillary_moves"] == 20
    _ks_agree(new, old)


def test_tail_moves_agree_with_full_sweeps():
    """The tail moves (tests/test_regression_tail.py): 3 records, 20 ancillary moves and a tail scan of every record
    an iteration, against the same long full-sweep chain."""
    problem, old = full_sweep_reference()
    new = da_mcmc(problem, np.random.Generator(np.random.SFC64(96)), chains=4, draws=4000, warmup=600,
                  records_per_iteration=3, ancillary_moves=20, tail_records=300)
    assert new.info["tail_records"] == 300
    assert new.info["tail_moves"]["moved"] > 0 and 0 < new.info["tail_moves"]["accepted"] <= 1
    _ks_agree(new, old)


# ---------------------------------------------------------------- (c) SBC, reproducibility, settings

@pytest.mark.parametrize("design, n, epsilon, m, k, thin", [
    (DESIGN, 10, 1.0, 3, 10, 20), (DESIGN, 500, 5.0, 50, 10, 10), (CLAMPED_SIGMA, 100, 5.0, 10, 10, 30)],
    ids=["n=10", "n=500", "sigma2 n=100"])
def test_sbc_with_ancillary_moves(design, n, epsilon, m, k, thin):
    """300 replicates, level 0.001 per coordinate, with partial sweeps and ancillary moves (with sigma^2 a
    parameter and about 20% of y clamped too); the naive posterior must be rejected somewhere (p < 1e-4), or
    the test has no power."""
    def run(problem, rng):
        res = da_mcmc(problem, rng, chains=1, draws=19 * thin, warmup=300, parallel=False, records_per_iteration=m,
                      ancillary_moves=k)
        return res.draws[0, thin - 1::thin, :]

    pv, pn = _sbc(n, epsilon, run, seed=2051, design=design)
    assert len(pv) == len(make_model("linear_regression", {"n": n, **design}).param_names)
    assert min(pv) > 0.001, pv
    assert min(pn) < 1e-4, pn


def test_ancillary_moves_are_reproducible_and_their_setting_is_checked():
    model = make_model("linear_regression", {"n": 80, **CLAMPED})
    problem = _problem(model, 3.0, np.random.default_rng(9), beta=[0.5, 2.0, -1.0])
    table = {"name": "da_mcmc", "records_per_iteration": 9, "ancillary_moves": 5, "draws": 150, "warmup": 60}
    a = engine.run_method(problem, table, 5)
    b = engine.run_method(problem, table, 5)
    np.testing.assert_array_equal(a.draws, b.draws)
    assert a.info["ancillary_moves"] == 5
    off = engine.run_method(problem, {**table, "ancillary_moves": 0}, 5)
    assert not np.array_equal(off.draws, a.draws) and "ancillary_moves" not in off.info
    for bad in (1001, -1, 2.5, "ten"):
        with pytest.raises(ValueError, match=r"method.ancillary_moves = .* integer >= 0 and <= 1000"):
            engine.run_method(problem, {"name": "da_mcmc", "ancillary_moves": bad}, 1)
    with pytest.raises(ValueError, match=r"method.ancillary_moves = 1001 .*from 0 to 1000"):
        da_mcmc(problem, np.random.default_rng(0), ancillary_moves=1001)
    for other in ({"shifts": 3}, {"orbit_moves": 4}):
        with pytest.raises(ValueError, match=r"method.ancillary_moves = 5 .*does not combine with shifts or orbit"):
            da_mcmc(problem, np.random.default_rng(0), ancillary_moves=5, **other)
    bb = engine.prepare({"model": {"name": "beta_binomial", "n": 20}, "mechanism": {"name": "laplace", "epsilon": 1.0},
                         "data": {"s_dp": [7.0]}})
    with pytest.raises(ValueError, match="method.ancillary_moves.*linear_regression only"):
        engine.run_method(bb, {"name": "da_mcmc", "ancillary_moves": 5}, 1)
    assert math.isfinite(a.draws.sum())


def test_auto_moves_the_frame_where_the_noise_is_wide_at_a_million_records():
    """The live map's cells at n = 10^6 (bench/live_map.py, seed 1): Laplace epsilon = 0.1 (J = 1.2) and Gaussian
    epsilon = 0.01 get the ancillary moves, priced far below the shift chain's estimate (at Gaussian 0.01 they ran
    484 bulk ESS/s against the shift chain's 301-332 the same day); Laplace epsilon = 0.01 (one move would evaluate
    some 60,000 records near the clamp bound) and Laplace epsilon = 1 (J = 13) keep the shift moves, and Gaussian
    epsilon = 0.1 (J = 3.4, where the records the clamp reaches hold part of beta's spread) gets the ancillary moves
    with the tail moves scanning 2% of the records an iteration."""
    from engine.methods.auto import choose, settings_for

    def plan(mech, eps):
        problem = engine.prepare({"seed": 1, "model": {"name": "linear_regression", "n": 1_000_000},
                                  "mechanism": {"name": "laplace", "epsilon": eps} if mech == "laplace" else
                                  {"name": mech, "rho": eps * eps / 2.0},
                                  "data": {"simulate": {"beta": [-1.79, -2.89, -0.66]}}})
        picked, why, numbers = choose(problem, np.random.default_rng(0))
        return picked, why, settings_for(picked, problem, numbers)

    picked, why, settings = plan("laplace", 0.1)
    assert picked == "da_mcmc" and "moves of β and of every record's frame" in why, why
    assert settings == {"records_per_iteration": 200, "clamped_per_iteration": 100, "ancillary_moves": 20}
    # the cost estimate counts the moves, each at its work (ancillary_work: about 20 us a move there, against 0.05 ms
    # an iteration for the records; without moves warm-up makes BURN_PASSES full passes instead of one)
    problem = engine.prepare({"seed": 1, "model": {"name": "linear_regression", "n": 1_000_000},
                              "mechanism": {"name": "laplace", "epsilon": 0.1},
                              "data": {"simulate": {"beta": [-1.79, -2.89, -0.66]}}})
    estimate = engine.estimate_cost(problem, {"name": "da_mcmc", **settings})
    assert estimate.detail.endswith("200 of n = 1,000,000 records and 20 ancillary moves"), estimate.detail
    seconds = {m: engine.estimate_cost(problem, {"name": "da_mcmc", **settings, "ancillary_moves": m}).seconds
               for m in (0, 10, 40)}
    assert estimate.seconds > 2 * seconds[0], (estimate.seconds, seconds)
    np.testing.assert_allclose(seconds[40] - estimate.seconds, 2 * (estimate.seconds - seconds[10]), rtol=1e-9)
    assert estimate.seconds - seconds[10] > 0.1 * estimate.seconds
    for mech, eps in (("laplace", 0.01), ("laplace", 1.0)):
        picked, why, settings = plan(mech, eps)
        assert picked == "da_mcmc" and "ancillary_moves" not in settings and settings.get("shifts"), (mech, settings)
    picked, why, settings = plan("gaussian", 0.01)
    assert settings == {"records_per_iteration": 200, "clamped_per_iteration": 100, "ancillary_moves": 20}, settings
    picked, why, settings = plan("gaussian", 0.1)
    assert picked == "da_mcmc" and "tail moves of the records near y's clamp bound (20,000 scanned)" in why, why
    assert settings == {"records_per_iteration": 200, "clamped_per_iteration": 100, "ancillary_moves": 20,
                        "tail_records": 20_000}
