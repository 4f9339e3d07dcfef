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
from scipy import stats

import engine
from engine.core.results import Problem
from engine.kernels import da_mcmc as rk
from engine.mechanisms import make_mechanism
from engine.mechanisms.release import privatize
from engine.methods.auto import choose, regression_window, settings_for
from engine.methods.da_mcmc import da_mcmc
from engine.methods.pseudo_marginal import pseudo_marginal
from engine.models import make_model
from engine.numerics.diagnostics import summary

DESIGN = {"p": 2, "x_mean": [0.5, -0.5], "x_cov": [[1.0, 0.3], [0.3, 1.0]], "sigma": 1.0,
          "lo": [-4.0, -3.0, -5.0], "hi": [4.0, 3.0, 6.0], "prior_sd": 2.0}


def _problem(model, epsilon, rng, beta=None):
    mech = make_mechanism("laplace", {"epsilon": epsilon}, default_sensitivity=model.default_sensitivity())
    beta = model.sample_prior(rng, 1)[0] if beta is None else np.asarray(beta, float)
    records = model.sample_records(rng, beta)
    return Problem(model=model, mechanism=mech, s_dp=privatize(model, mech, records, rng), records=records,
                   true_params=dict(zip(model.param_names, beta.tolist())))


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

def _sbc(n, epsilon, run, replicates=300, n_post=19, seed=2027):
    """Ranks of the true beta (drawn from the prior) among n_post posterior draws per replicate, for
    ``run(problem, rng) -> (n_post, 3) draws`` and for the naive posterior; chi-square on the 20 rank
    bins (expected 15 per bin)."""
    model = make_model("linear_regression", {"n": n, **DESIGN})
    ranks, naive = [], []
    for ss in np.random.SeedSequence(seed).spawn(replicates):
        d_ss, m_ss = ss.spawn(2)
        problem = _problem(model, epsilon, np.random.default_rng(d_ss))
        truth = np.array([problem.true_params[p] for p in model.param_names])
        rng = np.random.Generator(np.random.SFC64(m_ss))
        ranks.append((run(problem, rng) < truth).sum(axis=0))
        naive.append((model.posterior_sample(rng, model.project(problem.s_dp), n_post) < truth).sum(axis=0))
    pv = [stats.chisquare(np.bincount(np.array(ranks)[:, j], minlength=n_post + 1)).pvalue for j in range(3)]
    pn = [stats.chisquare(np.bincount(np.array(naive)[:, j], minlength=n_post + 1)).pvalue for j in range(3)]
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
    noise at n = 10^4 goes to the mixed pseudo-marginal chain."""
    narrow = engine.prepare({"seed": 1, "model": {"name": "linear_regression", "n": 100_000},
                             "mechanism": {"name": "gaussian", "rho": 5000.0},
                             "data": {"simulate": {"beta": [-1.79, -2.89, -0.66]}}})
    picked, why, numbers = choose(narrow, np.random.default_rng(0))
    assert picked == "da_mcmc" and 1.0 < numbers["inflation"] < 1.3
    assert numbers["records_per_iteration"] == regression_window(100_000, numbers["inflation"]) < 25_000
    assert settings_for(picked, narrow, numbers) == {"records_per_iteration": numbers["records_per_iteration"]}
    assert engine.estimate_cost(narrow, {"name": "auto"}).seconds < 0.3 * engine.estimate_cost(
        narrow, {"name": "da_mcmc"}).seconds
    wide = engine.prepare({"seed": 1, "model": {"name": "linear_regression", "n": 10_000},
                           "mechanism": {"name": "laplace", "epsilon": 0.01},
                           "data": {"simulate": {"beta": [-1.79, -2.89, -0.66]}}})
    picked, why, numbers = choose(wide, np.random.default_rng(0))
    assert picked == "pseudo_marginal" and numbers["particles_needed"] == 1
    assert settings_for(picked, wide, numbers) == {"proposal": "mixed"}
