"""linear_regression at large n (issue 23): DA-MCMC with partial sweeps (``records_per_iteration``) and
the pseudo-marginal sampler with the mixed independence / random-walk proposal (``proposal = "mixed"``).

Tiers: (a) the window sweep against recomputation and its scan order; (b) agreement with long
full-sweep DA-MCMC runs (KS per coordinate, chains thinned to their bulk ESS); (c) simulation-based
calibration (300 replicates) at n = 10 and n = 200, with the naive posterior as the negative control
SBC must reject; reproducibility; bad settings named; ``auto``'s choice.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from numba import njit
from scipy import stats

import engine
from engine.kernels import da_mcmc as rk
from engine.kernels.shared import draw_record, record_stat, simulate_into
from engine.methods.auto import (_BALANCE_N, _REFRESH_CAP, _REFRESH_CAP_N, SHIFT_NARROW_J, _balanced_window, _refreshed,
                                 choose, regression_window, settings_for)
from engine.methods.da_mcmc import da_mcmc
from engine.methods.pseudo_marginal import pseudo_marginal
from engine.models import linear_regression as lr, make_model
from engine.numerics.diagnostics import summary
from test_regression import SBC_DESIGN, _problem

DESIGN = {k: v for k, v in SBC_DESIGN.items() if k != "n"}  # test_regression's SBC design at any n


# ---------------------------------------------------------------- (a) the window sweep

def test_window_sweep_moves_only_its_records_and_keeps_the_sums_exact():
    model = make_model("linear_regression", {"n": 50, **DESIGN})
    rng = np.random.default_rng(3)
    rec = np.ascontiguousarray(model.sample_records(rng, np.array([0.5, -1.0, 0.8])))
    lo, hi = np.asarray(model.lo), np.asarray(model.hi)
    s, xtx, xty, yty = np.empty(9), np.empty((3, 3)), np.empty(3), np.empty(1)
    rk.statistics(rec, lo, hi, s, xtx, xty, yty)
    before = rec.copy()
    g = np.random.Generator(np.random.SFC64(4))
    beta = np.array([0.4, -0.9, 0.7])
    asum, nacc = rk.regression_window_sweep(g, rec, s, xtx, xty, yty, beta, model.chol, np.asarray(model.x_mean),
                                            1.0, lo, hi, s + 3.0, 0, 40.0, 45, 10)  # records 45..49, 0..4
    moved = np.nonzero(np.any(rec != before, axis=1))[0]
    assert nacc > 0 and set(moved) <= set(range(45, 50)) | set(range(5))
    assert 0 < asum <= 10
    s2, xtx2, xty2, yty2 = np.empty(9), np.empty((3, 3)), np.empty(3), np.empty(1)
    rk.statistics(rec, lo, hi, s2, xtx2, xty2, yty2)
    np.testing.assert_allclose(s, s2, atol=1e-12)
    np.testing.assert_allclose(xtx, xtx2, atol=1e-10)
    np.testing.assert_allclose(xty, xty2, atol=1e-10)


def test_window_chain_visits_every_record_in_turn():
    """The scan is fixed in advance: after k iterations of m records the next window starts at k m mod n."""
    model = make_model("linear_regression", {"n": 7, **DESIGN})
    rng = np.random.default_rng(5)
    rec = np.ascontiguousarray(model.sample_records(rng, np.array([0.5, -1.0, 0.8])))
    out = np.empty((4, 3))
    nxt = rk.regression_window_chain(np.random.Generator(np.random.SFC64(6)), rec, np.empty(9), np.empty((3, 3)),
                                     np.empty(3), np.empty(1), np.array([1.0]), model.chol, np.asarray(model.x_mean),
                                     2.0, 0.0, 0.0, np.asarray(model.lo), np.asarray(model.hi), np.zeros(9), 0, 1e6,
                                     5, 3, 4, out, np.empty(4), np.empty(4))
    assert nxt == (5 + 4 * 3) % 7
    assert np.all(np.isfinite(out))


# ---------------------------------------------------------------- (b) agreement with full-sweep DA-MCMC

def _ks_agree(a, b):
    """Per coordinate: the means within 4 Monte Carlo standard errors (sd / sqrt(ESS) of each run), and KS at
    level 0.01 on each chain thinned to twice its integrated autocorrelation time (draws / bulk ESS), so
    that the thinned draws are close to independent, as the KS null needs (thinning to one IAT leaves
    enough dependence to reject a true null more often than 1 in 100). Fixed seeds: deterministic."""
    sa, sb = summary(a), summary(b)
    assert sa.attrs["convergence"]["converged"], sa.attrs["convergence"]
    assert sb.attrs["convergence"]["converged"], sb.attrs["convergence"]
    for j, name in enumerate(a.param_names):
        mcse = [summ.loc[name, "sd"] / math.sqrt(summ.loc[name, "ess_bulk"]) for summ in (sa, sb)]
        assert abs(sa.loc[name, "mean"] - sb.loc[name, "mean"]) < 4 * math.hypot(*mcse), name
        xs = []
        for res, summ in ((a, sa), (b, sb)):
            flat = res.draws[:, :, j]
            step = 2 * max(1, int(math.ceil(flat.size / summ.loc[name, "ess_bulk"])))
            xs.append(flat[:, ::step].ravel())
        assert min(x.size for x in xs) >= 300
        assert stats.ks_2samp(*xs).pvalue > 0.01, name


def test_partial_sweeps_agree_with_full_sweeps():
    """n = 300 at epsilon = 20 (narrow noise, where partial sweeps pay): 30 records per iteration against
    a long full-sweep chain."""
    model = make_model("linear_regression", {"n": 300, **DESIGN})
    problem = _problem(model, 20.0, np.random.default_rng(60), beta=[0.5, -1.0, 0.8])
    part = da_mcmc(problem, np.random.Generator(np.random.SFC64(61)), chains=4, draws=6000, warmup=500,
                   records_per_iteration=30)
    full = da_mcmc(problem, np.random.Generator(np.random.SFC64(62)), chains=4, draws=3000, warmup=300)
    assert part.info["records_per_iteration"] == 30 and "records_per_iteration" not in full.info
    _ks_agree(part, full)


def test_mixed_proposal_agrees_with_full_sweeps():
    """The pseudo-marginal sampler with the mixed proposal (wide noise, n = 40, epsilon = 4) against a long
    DA-MCMC run."""
    model = make_model("linear_regression", {"n": 40, **DESIGN})
    problem = _problem(model, 4.0, np.random.default_rng(70), beta=[0.5, -1.0, 0.8])
    pm = pseudo_marginal(problem, np.random.Generator(np.random.SFC64(71)), chains=4, draws=3000, warmup=500,
                         proposal="mixed")
    assert pm.info["proposal"] == "mixed" and all(sd is not None for sd in pm.info["independence_sd"])
    da = da_mcmc(problem, np.random.Generator(np.random.SFC64(72)), chains=4, draws=40000, warmup=500)
    _ks_agree(pm, da)


# ---------------------------------------------------------------- (c) SBC, naive as negative control

def _sbc(n, epsilon, run, replicates=300, n_post=19, seed=2027, design=DESIGN):
    """Ranks of the true parameters (drawn from the prior) among n_post posterior draws per replicate, for
    ``run(problem, rng) -> (n_post, k) draws`` and for the naive posterior; chi-square on the 20 rank
    bins (expected 15 per bin)."""
    model = make_model("linear_regression", {"n": n, **design})
    ranks, naive = [], []
    for ss in np.random.SeedSequence(seed).spawn(replicates):
        d_ss, m_ss = ss.spawn(2)
        problem = _problem(model, epsilon, np.random.default_rng(d_ss))
        truth = np.array([problem.true_params[p] for p in model.param_names])
        rng = np.random.Generator(np.random.SFC64(m_ss))
        ranks.append((run(problem, rng) < truth).sum(axis=0))
        naive.append((model.posterior_sample(rng, model.project(problem.s_dp), n_post) < truth).sum(axis=0))
    k = len(model.param_names)
    pv = [stats.chisquare(np.bincount(np.array(ranks)[:, j], minlength=n_post + 1)).pvalue for j in range(k)]
    pn = [stats.chisquare(np.bincount(np.array(naive)[:, j], minlength=n_post + 1)).pvalue for j in range(k)]
    return pv, pn


@pytest.mark.parametrize("n, epsilon, m, thin, warmup", [(10, 5.0, 3, 120, 300), (200, 30.0, 20, 200, 1000)],
                         ids=["n=10", "n=200"])
def test_sbc_partial_sweeps(n, epsilon, m, thin, warmup):
    """Level 0.001 per coordinate for the partial sweeps; the naive posterior (noise and clamp ignored)
    must be rejected somewhere (p < 1e-4), or the test has no power. Thinning: well beyond the
    autocorrelation time 1 + 2 (I - 1) n / m of the module docstring of engine.methods.da_mcmc, with
    I up to about 5 over these prior draws (thinning by 40 at n / m = 10 was too little: SBC caught it)."""
    def run(problem, rng):
        res = da_mcmc(problem, rng, chains=1, draws=19 * thin, warmup=warmup, parallel=False, records_per_iteration=m)
        return res.draws[0, thin - 1::thin, :]

    pv, pn = _sbc(n, epsilon, run)
    assert min(pv) > 0.001, pv
    assert min(pn) < 1e-4, pn


def test_sbc_mixed_proposal():
    """The mixed-proposal pseudo-marginal chain at n = 10, epsilon = 1 (wide noise), thinned every 10."""
    def run(problem, rng):
        res = pseudo_marginal(problem, rng, chains=1, draws=190, warmup=200, parallel=False, proposal="mixed")
        return res.draws[0, 9::10, :]

    pv, pn = _sbc(10, 1.0, run, seed=2028)
    assert min(pv) > 0.001, pv
    assert min(pn) < 1e-4, pn


# ---------------------------------------------------------------- reproducibility, settings, auto

def test_same_seed_same_draws_and_bad_settings_are_named():
    model = make_model("linear_regression", {"n": 60, **DESIGN})
    problem = _problem(model, 5.0, np.random.default_rng(9), beta=[0.5, -1.0, 0.8])
    for table in ({"name": "da_mcmc", "records_per_iteration": 7, "draws": 200, "warmup": 100},
                  {"name": "pseudo_marginal", "proposal": "mixed", "draws": 200, "warmup": 100}):
        a = engine.run_method(problem, table, 5)
        b = engine.run_method(problem, table, 5)
        np.testing.assert_array_equal(a.draws, b.draws)
    with pytest.raises(ValueError, match=r"method.records_per_iteration.*from 1 to n = 60"):
        engine.run_method(problem, {"name": "da_mcmc", "records_per_iteration": 61}, 1)
    with pytest.raises(ValueError, match="method.proposal"):
        engine.run_method(problem, {"name": "pseudo_marginal", "proposal": "gibbs"}, 1)
    bb = engine.prepare({"model": {"name": "beta_binomial", "n": 20}, "mechanism": {"name": "laplace", "epsilon": 1.0},
                         "data": {"s_dp": [7.0]}})
    with pytest.raises(ValueError, match="method.records_per_iteration.*linear_regression only"):
        engine.run_method(bb, {"name": "da_mcmc", "records_per_iteration": 5}, 1)


def test_auto_sweeps_part_of_the_records_where_the_noise_is_narrow():
    """n = 10^5, Gaussian noise at rho = 5000: the surrogate's inflation is near 1, so DA-MCMC sweeps a
    window of the records (IAT about 4 by the rule) and the estimate is a fraction of full sweeps'; wide
    noise at n = 10^4 (Laplace epsilon = 0.1) goes to DA-MCMC with shift moves, cheaper than the pseudo-marginal
    chain's one particle."""
    narrow = engine.prepare({"seed": 1, "model": {"name": "linear_regression", "n": 100_000},
                             "mechanism": {"name": "gaussian", "rho": 5000.0},
                             "data": {"simulate": {"beta": [-1.79, -2.89, -0.66]}}})
    picked, why, numbers = choose(narrow, np.random.default_rng(0))
    assert picked == "da_mcmc" and 1.0 < numbers["inflation"] < 1.3
    assert numbers["records_per_iteration"] == regression_window(100_000, numbers["inflation"]) < 25_000
    # J >= SHIFT_NARROW_J: the sweeps' own window, and the shift moves (cheap here: the split is kept across
    # iterations, and few records sit within the box's reach of a clamp) priced at SHIFT_NARROW_GAIN
    assert settings_for(picked, narrow, numbers) == {"records_per_iteration": numbers["records_per_iteration"],
                                                     "shifts": 10}
    assert numbers["shift_inflation"] > 50
    assert engine.estimate_cost(narrow, {"name": "auto"}).seconds < 0.3 * engine.estimate_cost(
        narrow, {"name": "da_mcmc"}).seconds
    # DA-MCMC's estimate is below one particle's cost at n = 10^5: no pseudo-marginal pilot was run
    assert numbers["particles_needed"] is None and numbers["da_mcmc_ns_per_ess"] < numbers["pseudo_marginal_ns_per_ess"]
    wide = engine.prepare({"seed": 1, "model": {"name": "linear_regression", "n": 10_000},
                           "mechanism": {"name": "laplace", "epsilon": 0.1},
                           "data": {"simulate": {"beta": [-1.79, -2.89, -0.66]}}})
    picked, why, numbers = choose(wide, np.random.default_rng(0))
    # wide noise: one particle would do, but DA-MCMC with shift moves is cheaper still (tests/test_regression_shift.py)
    assert picked == "da_mcmc" and numbers["particles_needed"] == 1 and numbers["shift_inflation"] < 1.01
    assert numbers["da_mcmc_ns_per_ess"] < numbers["pseudo_marginal_ns_per_ess"]
    # ten moves (four times the records' floor of work at most), and the default refresh of every clamped record
    assert settings_for(picked, wide, numbers) == {"records_per_iteration": 1000, "shifts": 10}
    assert "shift moves" in why


def test_auto_caps_the_clamped_refresh_where_the_records_are_out_of_cache():
    """n = 10^6, Laplace epsilon = 1: some 25,000 records have y clamped; each refresh is a cache miss there and
    the chain's slow direction is which records are clamped, so ``auto`` redraws at most _REFRESH_CAP of them an
    iteration (it took all 17,495 its window held: 6.3 bulk ESS/s in the live map, 12.4 with the cap). Below
    _REFRESH_CAP_N every clamped record the window holds is refreshed, as before."""
    problem = engine.prepare({"seed": 1, "model": {"name": "linear_regression", "n": 1_000_000},
                              "mechanism": {"name": "laplace", "epsilon": 1.0},
                              "data": {"simulate": {"beta": [-1.79, -2.89, -0.66]}}})
    picked, _, numbers = choose(problem, np.random.default_rng(0))
    settings = settings_for(picked, problem, numbers)
    assert picked == "da_mcmc" and numbers["clamped_expected"] > 20_000
    assert settings["records_per_iteration"] > 10_000 and settings["clamped_per_iteration"] == _REFRESH_CAP == 1000
    assert _REFRESH_CAP_N == 500_000
    assert _refreshed(1_000_000, 25_000.0, 20_000) == 1000 and _refreshed(1_000_000, 600.0, 20_000) == 600
    assert _refreshed(499_999, 25_000.0, 20_000) == 20_000 and _refreshed(100_000, 2_500.0, 20_000) == 2_500


def test_auto_balances_the_narrow_window_against_the_other_work_at_a_million_records():
    """n = 10^6, Laplace epsilon = 10: the shifts barely move beta (J > 50), so the window is the record sweeps'
    own, but no larger than m* = sqrt(2 (I - 1) n C / t), C the work an iteration does besides the records
    (the shifts, 1,000 refreshes): 26,066 where regression_window asks for 169,792 (measured: 34 bulk ESS/s at
    m = 20,000 and 23 at 50,000, against an estimated 327 s for the larger window). Below _BALANCE_N the window
    is regression_window's, as before."""
    spec = {"seed": 1, "model": {"name": "linear_regression", "n": 1_000_000},
            "mechanism": {"name": "laplace", "epsilon": 10.0},
            "data": {"simulate": {"beta": [-1.79, -2.89, -0.66]}}}
    picked, _, numbers = choose(engine.prepare(spec), np.random.default_rng(0))
    infl, m = numbers["inflation"], numbers["records_per_iteration"]
    assert picked == "da_mcmc" and numbers["shift_inflation"] > SHIFT_NARROW_J
    assert 20_000 < m < 35_000 and m < regression_window(1_000_000, infl) / 5
    assert _balanced_window(1_000_000, infl, 1e6, 250.0) == math.ceil(math.sqrt(2.0 * (infl - 1.0) * 1e12 / 250.0))
    assert _BALANCE_N == 500_000
    assert _balanced_window(499_999, infl, 1e6, 250.0) == regression_window(499_999, infl)
    assert _balanced_window(10**6, infl, 1e15, 250.0) == regression_window(10**6, infl)  # never above the old one
    assert _balanced_window(10**6, 0.999, 1e6, 250.0) == regression_window(10**6, 0.999) == 100  # I below 1: no error


# ---------------------------------------------------------------- the clamped records' raw-y refresh (Tobit move)

#: y bounds that clamp about 20% of the y's over prior draws of beta (so that a mistake in the refresh
#: moves the posterior where SBC can see it); x bounds as in DESIGN (they rarely bind)
CLAMPED = {**DESIGN, "lo": [-4.0, -3.0, -4.5], "hi": [4.0, 3.0, 5.0]}
CLAMPED_SIGMA = {**{k: v for k, v in CLAMPED.items() if k != "sigma"}, "sigma_prior": {"a": 3.0, "b": 2.0}}


def test_refresh_redraws_only_clamped_y_on_their_side_and_keeps_the_sums_exact():
    """After window sweeps that keep the clamped list and refreshes (all, then a random subset): the
    list is the set of clamped records, every refreshed y stayed beyond its bound, x and the released s
    did not move, and the running X^T X, X^T y, y^T y equal recomputation."""
    model = make_model("linear_regression", {"n": 400, **CLAMPED})
    rng = np.random.default_rng(11)
    rec = np.ascontiguousarray(model.sample_records(rng, np.array([0.5, 2.0, -1.5])))
    lo, hi = np.asarray(model.lo), np.asarray(model.hi)
    n = rec.shape[0]
    s, xtx, xty, yty = np.empty(9), np.empty((3, 3)), np.empty(3), np.empty(1)
    rk.statistics(rec, lo, hi, s, xtx, xty, yty)
    cl_idx, cl_pos, ncl = np.empty(n, np.int64), np.empty(n, np.int64), np.zeros(1, np.int64)
    rk.clamped_list(rec, lo[2], hi[2], cl_idx, cl_pos, ncl)
    g = np.random.Generator(np.random.SFC64(12))
    beta = np.array([0.3, 1.8, -1.2])
    for k in (-1, 7, 0, 1000):
        before = rec.copy()
        s_before = model.statistic(before)
        done = rk.censored_refresh(g, rec, xty, yty, beta, 1.3, lo[2], hi[2], cl_idx, ncl, k)
        clamped = np.nonzero((before[:, 2] <= lo[2]) | (before[:, 2] >= hi[2]))[0]
        assert done == (0 if k == 0 else (7 if k == 7 else clamped.size)) and 30 < clamped.size < 200
        np.testing.assert_array_equal(rec[:, :2], before[:, :2])
        changed = np.nonzero(rec[:, 2] != before[:, 2])[0]
        assert set(changed) <= set(clamped) and (k in (0, 7) or changed.size == clamped.size)
        assert np.all((rec[clamped, 2] >= hi[2]) == (before[clamped, 2] >= hi[2]))
        assert np.all((rec[clamped, 2] <= lo[2]) == (before[clamped, 2] <= lo[2]))
        s2, xtx2, xty2, yty2 = np.empty(9), np.empty((3, 3)), np.empty(3), np.empty(1)
        rk.statistics(rec, lo, hi, s2, xtx2, xty2, yty2)
        np.testing.assert_array_equal(s2, s_before)  # clamped values are exactly lo or hi: t(r) did not move
        np.testing.assert_allclose(xtx, xtx2, rtol=1e-12, atol=1e-9)
        np.testing.assert_allclose(xty, xty2, rtol=1e-12, atol=1e-9)
        np.testing.assert_allclose(yty, yty2, rtol=1e-12, atol=1e-9)
        # record moves that keep the list: it stays the clamped set
        rk.regression_window_sweep_listed(g, rec, s, xtx, xty, yty, beta, model.chol, np.asarray(model.x_mean), 1.3,
                                          lo, hi, s + 2.0, 0, 5.0, 13, 150, cl_idx, cl_pos, ncl)
        now = np.nonzero((rec[:, 2] <= lo[2]) | (rec[:, 2] >= hi[2]))[0]
        assert sorted(cl_idx[:ncl[0]]) == list(now)
        assert np.all(cl_pos[cl_idx[:ncl[0]]] == np.arange(ncl[0])) and np.sum(cl_pos >= 0) == ncl[0]


def test_truncated_normal_draws_follow_the_truncated_law():
    """KS against scipy's truncated normal for a bound below the mean, at it, and in the far tail (the two
    rejection samplers); the same draws against the wrong bound are rejected (the negative control)."""
    @njit
    def draws(rng, a, size):
        out = np.empty(size)
        for i in range(size):
            out[i] = rk.truncated_normal_above(rng, a)
        return out

    for a in (-1.5, 0.0, 2.5, 9.0):
        x = draws(np.random.Generator(np.random.SFC64(int(10 * a) + 100)), a, 4000)
        assert x.min() >= a
        assert stats.kstest(x, stats.truncnorm(a, np.inf).cdf).pvalue > 0.001, a
        assert stats.kstest(x, stats.truncnorm(a + 0.05 * max(1.0, 1.0 / max(a, 0.1)), np.inf).cdf).pvalue < 1e-4, a


def test_refresh_agrees_with_algorithm_1_alone():
    """Partial sweeps with the refresh of every clamped record against long full sweeps without it
    (``clamped_per_iteration = 0``, Algorithm 1 as published), about 20% of y clamped, narrow noise
    (autocorrelation times measured about 50 and 28 draws: hence the lengths)."""
    model = make_model("linear_regression", {"n": 200, **CLAMPED})
    problem = _problem(model, 20.0, np.random.default_rng(80), beta=[0.8, 2.5, -1.5])
    y = problem.records[:, 2]
    assert 0.12 < np.mean((y <= -4.5) | (y >= 5.0)) < 0.35
    new = da_mcmc(problem, np.random.Generator(np.random.SFC64(81)), chains=4, draws=10000, warmup=500,
                  records_per_iteration=40)
    old = da_mcmc(problem, np.random.Generator(np.random.SFC64(82)), chains=4, draws=6000, warmup=300,
                  clamped_per_iteration=0)
    assert old.info["clamped_per_iteration"] == 0 and "clamped_per_iteration" not in new.info
    _ks_agree(new, old)


@pytest.mark.parametrize("design, n, epsilon, m, k, thin", [
    (CLAMPED, 20, 5.0, 5, None, 150), (CLAMPED_SIGMA, 12, 5.0, 4, 1, 150)], ids=["all-clamped", "sigma2-subset"])
def test_sbc_with_the_refresh(design, n, epsilon, m, k, thin):
    """300 replicates with about 20% of y clamped: partial sweeps with the refresh of every clamped record
    (known sigma) and with one clamped record per iteration drawn at random (sigma^2 a parameter: the
    refresh reads the current sigma); level 0.001 per coordinate, and the naive posterior rejected
    (p < 1e-4 somewhere), so the test has the power to see a wrong posterior. Thinning by 150 iterations:
    by 40, Algorithm 1's own partial sweeps (refresh off) failed SBC as well (p = 2e-4, the draws still
    correlated at n / m = 4 and I up to about 6); by 150 both pass."""
    names = make_model("linear_regression", {"n": n, **design}).param_names

    def run(problem, rng):
        res = da_mcmc(problem, rng, chains=1, draws=19 * thin, warmup=300, parallel=False, records_per_iteration=m,
                      clamped_per_iteration=k)
        return res.draws[0, thin - 1::thin, :]

    pv, pn = _sbc(n, epsilon, run, seed=2031, design=design)
    assert len(pv) == len(names) and min(pv) > 0.001, pv
    assert min(pn) < 1e-4, pn


def test_refresh_is_reproducible_and_its_setting_is_checked():
    model = make_model("linear_regression", {"n": 80, **CLAMPED})
    problem = _problem(model, 5.0, np.random.default_rng(9), beta=[0.5, 2.0, -1.0])
    for table in ({"name": "da_mcmc", "draws": 150, "warmup": 50},
                  {"name": "da_mcmc", "records_per_iteration": 9, "clamped_per_iteration": 3, "draws": 150,
                   "warmup": 50}):
        a = engine.run_method(problem, table, 5)
        b = engine.run_method(problem, table, 5)
        np.testing.assert_array_equal(a.draws, b.draws)
    off = engine.run_method(problem, {"name": "da_mcmc", "clamped_per_iteration": 0, "draws": 150, "warmup": 50}, 5)
    assert not np.array_equal(off.draws, a.draws)
    with pytest.raises(ValueError, match=r"method.clamped_per_iteration.*from 0 to n = 80"):
        engine.run_method(problem, {"name": "da_mcmc", "clamped_per_iteration": 81}, 1)
    with pytest.raises(ValueError, match=r"method.clamped_per_iteration.*>= 0"):
        engine.run_method(problem, {"name": "da_mcmc", "clamped_per_iteration": -1}, 1)
    bb = engine.prepare({"model": {"name": "beta_binomial", "n": 20}, "mechanism": {"name": "laplace", "epsilon": 1.0},
                         "data": {"s_dp": [7.0]}})
    with pytest.raises(ValueError, match="method.clamped_per_iteration.*linear_regression only"):
        engine.run_method(bb, {"name": "da_mcmc", "clamped_per_iteration": 5}, 1)


def test_auto_skips_a_fallback_far_dearer_than_the_first_attempt_and_one_over_the_budget():
    """20 draws cannot pass the verdict, so every first attempt fails. n = 1000, epsilon = 3.5: DA-MCMC is
    picked and a pseudo-marginal run (about 44 particles of n records per iteration) is estimated at over
    10 x its cost, so auto skips it, says so, and reruns DA-MCMC with four times the draws. n = 500,
    epsilon = 1 with a work budget of 1e-3 s: the fallback and the rerun are both skipped for the budget.
    epsilon = 20: the pseudo-marginal fallback is skipped for its particle count (over 50)."""
    def prepared(n, eps):
        return engine.prepare({"seed": 2, "model": {"name": "linear_regression", "n": n, **CLAMPED},
                               "mechanism": {"name": "laplace", "epsilon": eps},
                               "data": {"simulate": {"beta": [0.5, 2.0, -1.0]}}})

    table = {"name": "auto", "chains": 2, "draws": 20, "warmup": 20}
    res = engine.run_method(prepared(1000, 3.5), table, 3)
    rule, attempts = res.info["rule"], res.info["attempts"]
    assert res.info["picked"] == "da_mcmc" and not attempts[0]["converged"] and rule["particles_needed"] <= 50
    assert rule["pseudo_marginal_ns_per_iteration"] > 10 * rule["da_mcmc_ns_per_iteration"]
    assert attempts[1]["method"] == "pseudo_marginal" and attempts[1]["converged"] is None
    assert "times the first attempt's" in attempts[1]["skipped"] and "pseudo_marginal was skipped" in res.info["why"]
    assert attempts[2]["method"] == "da_mcmc" and attempts[2]["draws"] == 80 and "skipped" not in attempts[2]
    wide = prepared(500, 1.0)
    budget = engine.run_method(wide, {**table, "max_seconds": 1e-3}, 3)
    assert budget.info["picked"] == budget.info["attempts"][0]["method"]
    assert [a.get("skipped") is not None for a in budget.info["attempts"]] == [False, True, True]
    assert all("max_seconds = 0.001" in a["skipped"] for a in budget.info["attempts"][1:])
    assert "rerun" in budget.info["why"]
    narrow = engine.run_method(prepared(500, 20.0), table, 3)
    assert narrow.info["picked"] == "da_mcmc" and narrow.info["attempts"][1]["method"] == "pseudo_marginal"
    assert "simulated data sets of n = 500 records per step (the limit is 50)" in narrow.info["attempts"][1]["skipped"]
    with pytest.raises(ValueError, match="method.max_seconds"):
        engine.run_method(wide, {**table, "max_seconds": 0}, 3)


def test_thin_keeps_every_thin_th_iteration_and_auto_thins_cheap_sticky_chains():
    """``thin = 3`` keeps iterations 3, 6, .. of the very chain ``thin = 1`` runs for three times the draws
    (same stream and blocks); n = 300, Gaussian rho = 50: auto keeps one iteration in several (partial sweeps
    with shift moves, cheap iterations), the run converges, and its estimated cost counts the thinned
    iterations."""
    model = make_model("linear_regression", {"n": 30, **CLAMPED})
    problem = _problem(model, 10.0, np.random.default_rng(4), beta=[0.5, 2.0, -1.0])
    full = da_mcmc(problem, np.random.default_rng(5), chains=2, draws=300, warmup=50)
    thinned = da_mcmc(problem, np.random.default_rng(5), chains=2, draws=100, warmup=50, thin=3)
    np.testing.assert_array_equal(thinned.draws, full.draws[:, 2::3])
    assert thinned.info["thin"] == 3 and thinned.info["draws"] == 100
    with pytest.raises(ValueError, match="method.thin"):
        engine.run_method(problem, {"name": "da_mcmc", "thin": 0}, 1)
    cell = engine.prepare({"seed": 1, "model": {"name": "linear_regression", "n": 300},
                           "mechanism": {"name": "gaussian", "rho": 50.0},
                           "data": {"simulate": {"beta": [-1.79, -2.89, -0.66]}}})
    res = engine.run_method(cell, {"name": "auto"}, 1)
    thin = res.info["rule"]["thin"]
    assert res.info["picked"] == "da_mcmc" and thin > 1 and res.info["picked_info"]["thin"] == thin
    assert engine.summary(res).attrs["convergence"]["converged"]
    one, more = (engine.estimate_cost(cell, {"name": "da_mcmc", "thin": t}) for t in (1, thin))
    assert more.units == pytest.approx(one.units * (500 + 2000 * thin) / 2500)  # the spec defaults: 2000 draws


@pytest.mark.parametrize("dearer", [2.0, 100.0], ids=["DA-MCMC priced 2 x", "DA-MCMC priced 100 x"])
def test_auto_reruns_the_chain_with_more_effective_draws_per_unit_of_cost(dearer, monkeypatch):
    """n = 30, Laplace epsilon = 10, 80 draws per chain: the pseudo-marginal chain is picked and misses the
    verdict, DA-MCMC (with shift moves) runs as the fallback and misses it too, with several times the effective
    draws. Priced 2 x the pseudo-marginal chain's iteration it is the better per unit of cost and reruns with
    four times the draws; priced 100 x, it no longer is, and the pseudo-marginal chain is the one rerun. (At the
    rule's own prices, about 9 x here, the two are within a few per cent of each other.)"""
    from engine.methods import auto

    monkeypatch.setattr(auto, "_estimate_ratio", lambda numbers, name, first: dearer if name == "da_mcmc" else
                        1.0 / dearer)
    monkeypatch.setattr(auto, "_skip_reason", lambda *args: None)  # at 100 x the fallback would be skipped
    cell = engine.prepare({"seed": 1, "model": {"name": "linear_regression", "n": 30},
                           "mechanism": {"name": "laplace", "epsilon": 10.0},
                           "data": {"simulate": {"beta": [-1.79, -2.89, -0.66]}}})
    res = engine.run_method(cell, {"name": "auto", "draws": 80}, 1)
    attempts, rule = res.info["attempts"], res.info["rule"]
    assert [a["method"] for a in attempts[:2]] == ["pseudo_marginal", "da_mcmc"] and attempts[1]["shifts"] == 10
    assert not attempts[0]["converged"] and not attempts[1]["converged"]
    assert rule["da_mcmc_ns_per_iteration"] > rule["pseudo_marginal_ns_per_iteration"]
    score = [min(a["ess_bulk_min"], a["ess_tail_min"]) for a in attempts[:2]]
    assert score[1] > 2 * score[0]  # DA-MCMC did better, by more than the lower price
    better = "da_mcmc" if score[1] / dearer > score[0] else "pseudo_marginal"
    assert better == ("da_mcmc" if dearer == 2.0 else "pseudo_marginal")
    assert attempts[2]["method"] == better == res.info["picked"] and attempts[2]["draws"] == 320


@njit(cache=False)
def _record_by_record(rng, beta, n, chol, x_mean, sigma, lo, hi, s):
    """The statistic the long way: draw_record, then record_stat, then add (what simulate_into fuses)."""
    q = beta.size
    z, t, prop, e = np.empty(q + 1), np.empty(s.size), np.empty(q), np.empty(q - 1)
    s[:] = 0.0
    for _ in range(n):
        draw_record(rng, beta, chol, x_mean, sigma, e, prop)
        record_stat(prop, lo, hi, z, t)
        for k in range(s.size):
            s[k] += t[k]


@pytest.mark.parametrize("p", [1, 2, 3])
def test_the_fused_simulation_is_the_record_by_record_one_to_the_bit(p):
    """simulate_into (the pseudo-marginal particle and ABC's proposal) fuses the record draw and its statistic into
    one loop; with bounds that clamp x and y often, its sums equal the two functions' to the bit."""
    rng0 = np.random.default_rng(p)
    beta = rng0.normal(0.0, 2.0, p + 1)
    a = rng0.normal(size=(p, p))
    chol = np.linalg.cholesky(a @ a.T + np.eye(p))
    x_mean, lo, hi = rng0.normal(size=p), np.full(p + 1, -1.5), np.full(p + 1, 2.0)
    d = (p + 1) * (p + 2) // 2 + p + 1
    fused, slow = np.empty(d), np.empty(d)
    simulate_into(np.random.Generator(np.random.SFC64(9)), beta, 500, chol, x_mean, 1.3, lo, hi, np.empty(p + 2),
                  np.empty(d), np.empty(p + 1), np.empty(p), fused)
    _record_by_record(np.random.Generator(np.random.SFC64(9)), beta, 500, chol, x_mean, 1.3, lo, hi, slow)
    assert np.array_equal(fused, slow)
    shifted = np.empty(d)  # the negative control: another stream gives other sums
    simulate_into(np.random.Generator(np.random.SFC64(10)), beta, 500, chol, x_mean, 1.3, lo, hi, np.empty(p + 2),
                  np.empty(d), np.empty(p + 1), np.empty(p), shifted)
    assert not np.array_equal(fused, shifted)


def test_auto_without_a_pilot_skips_the_pseudo_marginal_fallback_with_the_reason():
    """n = 10^5, narrow noise, 20 draws per chain: DA-MCMC's estimate is below one particle's cost, so no
    pseudo-marginal pilot ran (particles_needed None); the short run misses the verdict, and the pseudo-marginal
    fallback is skipped, naming that reason, rather than run at n simulated records per particle."""
    cell = engine.prepare({"seed": 1, "model": {"name": "linear_regression", "n": 100_000},
                           "mechanism": {"name": "gaussian", "rho": 5000.0},
                           "data": {"simulate": {"beta": [-1.79, -2.89, -0.66]}}})
    res = engine.run_method(cell, {"name": "auto", "chains": 2, "draws": 20, "warmup": 20}, 1)
    attempts = res.info["attempts"]
    assert res.info["rule"]["particles_needed"] is None
    assert attempts[0]["method"] == "da_mcmc" and not attempts[0]["converged"]
    assert attempts[1]["method"] == "pseudo_marginal"
    assert "below that of one simulated data set" in attempts[1]["skipped"]
    assert res.info["picked"] == "da_mcmc"


def test_auto_plan_computes_the_surrogate_moments_once_per_beta_and_hands_out_copies(monkeypatch):
    """auto's plan asks for the surrogate moments at one beta and number of draws several times (the surrogate
    covariances, the shift covariance, the shift moves' work) and its price once more: each computed once (30 ms at
    p = 2), the same numbers, and a caller changing what it got leaves the next caller's alone."""
    monkeypatch.setattr(lr, "_moments_kept", lr.functools.lru_cache(maxsize=64)(lr._moments_kept.__wrapped__))
    computed = []
    real = lr.LinearRegression._surrogate_moments_computed
    monkeypatch.setattr(lr.LinearRegression, "_surrogate_moments_computed",
                        lambda self, beta, draws=20_000: computed.append((tuple(beta), draws)) or real(self, beta, draws))
    problem = _problem(make_model("linear_regression", {"n": 100}), 3.0, np.random.default_rng(5))
    first = choose(problem, np.random.default_rng(0))
    assert computed and len(computed) == len(set(computed)), computed
    again = choose(problem, np.random.default_rng(0))
    assert again == first and len(computed) == len(set(computed))
    beta = np.array(computed[0][0])
    sig, g = problem.model._surrogate_moments(beta)
    fresh_sig, fresh_g = real(problem.model, beta)
    assert np.array_equal(sig, fresh_sig) and np.array_equal(g, fresh_g)
    sig[:] = 0.0
    assert np.array_equal(problem.model._surrogate_moments(beta)[0], fresh_sig)
