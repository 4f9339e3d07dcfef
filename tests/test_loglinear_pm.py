"""The pseudo-marginal sampler of naive_bayes_loglinear (:mod:`engine.methods.loglinear_pm`).

Tier (a): the exact hypergeometric draw against scipy's pmf; the two table kernels' invariance
properties checked on a tiny problem by their joint laws: (C) the coupled move's pair (s, s*) has the
same law forwards (s ~ p(. | theta), s* ~ R_{theta->theta*}) as backwards (s* ~ p(. | theta*),
s ~ R_{theta*->theta}), and (R) the refresh's pair is exchangeable; each with a negative control.
Tier (b): the posterior means and sds against the exact posterior, a finite mixture of Dirichlets
over every table (enumerated at n = 10), and against a long DA-MCMC run at n = 200.
Tier (c): simulation-based calibration (M = 300) at n = 20 and at n = 10^5, with the naive
posterior as the negative control. Plus bitwise reproducibility and the model's new methods.
"""
from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pytest
from numba import njit
from scipy import stats
from scipy.special import gammaln

import engine
from engine.core.results import Problem
from engine.kernels import loglinear as kern
from engine.mechanisms import Gaussian, Laplace
from engine.methods.da_mcmc import da_mcmc
from engine.methods.loglinear_pm import loglinear_pseudo_marginal, round_tables
from engine.methods.naive import naive
from engine.models import NaiveBayesLoglinear, make_model


# --------------------------------------------------------------------------- hypergeometric
@pytest.mark.parametrize("good, bad, m", [(5, 7, 4), (30, 3, 20), (400, 600, 300), (300_000, 700_000, 250_000)])
def test_hypergeometric_matches_scipy(good, bad, m):
    rng = np.random.default_rng(good)
    draws = np.array([kern.hypergeometric(rng, good, bad, m) for _ in range(20_000)])
    dist = stats.hypergeom(good + bad, good, m)
    assert abs(draws.mean() - dist.mean()) < 5 * dist.std() / math.sqrt(draws.size)
    lo, hi = max(0, m - bad), min(m, good)
    inner = np.unique(np.round(dist.ppf(np.linspace(0.02, 0.98, 12)))).astype(int)
    edges = np.unique(np.concatenate([[lo], inner, [hi + 1]]))  # bins [e_b, e_{b+1})
    obs = np.histogram(draws, bins=edges)[0]
    expect = np.diff(dist.cdf(edges - 1)) * draws.size
    assert obs.sum() == draws.size and stats.chisquare(obs, expect * obs.sum() / expect.sum()).pvalue > 1e-3
    # negative control: the same draws against the law with one more good item are rejected (large case)
    if good > 1000:
        wrong = stats.hypergeom(good + bad + 2000, good + 2000, m)
        assert abs(draws.mean() - wrong.mean()) > 10 * wrong.std() / math.sqrt(draws.size)


# --------------------------------------------------------------------------- (C) and (R) on a tiny problem
TINY = NaiveBayesLoglinear(n=4, class_levels=2, feature_levels=(2, 3), alpha=2.0)
LEVELS = np.asarray(TINY.feature_levels, np.int64)
OFFS = np.asarray(TINY.offsets, np.int64)


def _theta(seed):
    return TINY.sample_prior(np.random.default_rng(seed), 1)[0]


@njit(cache=True)
def _pair_batch(rng, n, levels, offsets, theta_a, theta_b, m, size, out):
    """Row r of ``out`` = (s, s*): s ~ p(. | theta_a), s* by the coupled move (m = 0) or a refresh of m."""
    d = out.shape[1] // 2
    c, s = np.empty(2, np.int64), np.empty(d, np.int64)
    c2, s2 = np.empty(2, np.int64), np.empty(d, np.int64)
    trans, sub = np.zeros((2, 2), np.int64), np.zeros((3, 3), np.int64)
    w, removed = np.empty(3), np.empty(2, np.int64)
    for r in range(size):
        kern.sample_tables(rng, n, theta_a, levels, offsets, c, s)
        if m == 0:
            kern.coupled_move(rng, levels, offsets, theta_a, theta_b, c, s, c2, s2, trans, sub, w)
        else:
            kern.refresh_move(rng, m, levels, offsets, theta_a, c, s, c2, s2, removed, sub[0])
        out[r, :d] = s
        out[r, d:2 * d] = s2
        out[r, 2 * d] = c2.sum()


def _pairs(rng, theta_a, theta_b, move, size):
    """``size`` pairs (s, s*) with s ~ p(. | theta_a) and s* from ``move`` ("coupled" or a refresh of
    ``move`` records), counted by value; every s* is a valid table."""
    d = TINY.stat_dim
    out = np.empty((size, 2 * d + 1), np.int64)
    _pair_batch(rng, TINY.n, LEVELS, OFFS, theta_a, theta_b, 0 if move == "coupled" else move, size, out)
    assert (out[:, -1] == TINY.n).all()
    for k, (o, jk) in enumerate(zip(OFFS, TINY.feature_levels)):  # row sums agree across the tables of s*
        rows = out[:, d + o:d + o + 2 * jk].reshape(size, 2, jk).sum(axis=2)
        if k == 0:
            first = rows
        np.testing.assert_array_equal(rows, first)
    keys, counts = np.unique(out[:, :-1], axis=0, return_counts=True)
    return Counter({(tuple(k[:d]), tuple(k[d:])): int(v) for k, v in zip(keys, counts)})


def _same_law_p(a: Counter, b: Counter) -> float:
    """Chi-square p-value that two samples of pairs come from one law (cells with >= 5 expected kept)."""
    keys = [k for k in set(a) | set(b) if a[k] + b[k] >= 10]
    table = np.array([[a[k] for k in keys], [b[k] for k in keys]])
    return stats.chi2_contingency(table)[1]


def test_coupled_move_is_symmetric_and_negative_control():
    """(C): p(s | theta) R_{theta->theta*}(s* | s) = p(s* | theta*) R_{theta*->theta}(s | s*)."""
    th, th2 = _theta(1), _theta(2)
    fwd = _pairs(np.random.default_rng(3), th, th2, "coupled", 60_000)
    back = _pairs(np.random.default_rng(4), th2, th, "coupled", 60_000)
    back = Counter({(k[1], k[0]): v for k, v in back.items()})
    assert _same_law_p(fwd, back) > 1e-3
    # s* has the law p(. | theta*): its marginal against fresh tables at theta*
    fresh = _pairs(np.random.default_rng(5), th2, th2, "coupled", 60_000)  # theta* = theta: s* = s
    assert all(k[0] == k[1] for k in fresh)
    marg_fwd = Counter()
    for k, v in fwd.items():
        marg_fwd[(k[1], ())] += v
    marg_fresh = Counter({(k[0], ()): v for k, v in fresh.items()})
    assert _same_law_p(marg_fwd, marg_fresh) > 1e-3
    # negative control: backwards pairs from a different theta* are told apart
    other = _pairs(np.random.default_rng(6), _theta(7), th, "coupled", 60_000)
    other = Counter({(k[1], k[0]): v for k, v in other.items()})
    assert _same_law_p(fwd, other) < 1e-6


@pytest.mark.parametrize("m", [1, 3])
def test_refresh_move_is_reversible(m):
    """(R): under s ~ p(. | theta) the pair (s, s*) is exchangeable."""
    th = _theta(8)
    pairs = _pairs(np.random.default_rng(9 + m), th, th, m, 80_000)
    swapped = Counter({(k[1], k[0]): v for k, v in pairs.items()})
    assert _same_law_p(pairs, swapped) > 1e-3
    assert any(k[0] != k[1] for k in pairs)
    if m == 1:  # negative control: a move that is not reversible (always adds a record to class 0)
        biased = Counter()
        for (s, s2), v in pairs.items():
            biased[(s, s2 if s2[0] + s2[1] >= s[0] + s[1] else s)] += v
        rev = Counter({(k[1], k[0]): v for k, v in biased.items()})
        assert _same_law_p(biased, rev) < 1e-6


# --------------------------------------------------------------------------- exact posterior by enumeration
def _compositions(total, parts):
    if parts == 1:
        yield (total,)
        return
    for first in range(total + 1):
        for rest in _compositions(total - first, parts - 1):
            yield (first,) + rest


def _log_dm(counts, alpha):
    counts = np.asarray(counts, float)
    a = np.full(counts.size, alpha)
    return (gammaln(counts.sum() + 1) - gammaln(counts + 1).sum() + gammaln(a.sum()) - gammaln(a.sum() + counts.sum())
            + (gammaln(a + counts) - gammaln(a)).sum())


def exact_moments(model, mech, s_dp):
    """Posterior mean and sd of every parameter: p(theta | s_dp) = sum_s w(s) Dirichlet(theta | alpha + s),
    w(s) ∝ p(s) eta(s_dp - s), p(s) the Dirichlet-multinomial marginal of the tables, over every table."""
    big_i, alpha = model.class_levels, model.alpha
    logw, conc = [], []
    for c in _compositions(model.n, big_i):
        row_sets = [list(itertools.product(*[list(_compositions(ci, jk)) for ci in c])) for jk in model.feature_levels]
        base = _log_dm(c, alpha)
        for combo in itertools.product(*row_sets):
            s = np.concatenate([np.concatenate(tab) for tab in combo]).astype(float)
            lw = base + sum(_log_dm(row, alpha) for tab in combo for row in tab)
            logw.append(lw + float(np.sum(mech.noise_log_prob(s_dp - s))))
            conc.append(np.concatenate([np.asarray(c, float), s]) + alpha)
    logw, conc = np.array(logw), np.array(conc)
    w = np.exp(logw - logw.max())
    w /= w.sum()
    tot = np.empty_like(conc)
    tot[:, :big_i] = conc[:, :big_i].sum(axis=1, keepdims=True)
    for k, jk in enumerate(model.feature_levels):
        for i in range(big_i):
            sl = slice(big_i + model.offsets[k] + i * jk, big_i + model.offsets[k] + (i + 1) * jk)
            tot[:, sl] = conc[:, sl].sum(axis=1, keepdims=True)
    m1 = w @ (conc / tot)
    m2 = w @ (conc * (conc + 1) / (tot * (tot + 1)))
    return m1, np.sqrt(m2 - m1**2)


def _agree(draws, mean, sd, ess, z=4.5):
    """Posterior mean within z Monte Carlo standard errors (sd / sqrt(ESS)); sd within z of its own
    error (sd sqrt(1 / (2 ESS)) for a near-normal marginal, doubled for the tails of a Dirichlet)."""
    est = draws.reshape(-1, draws.shape[-1])
    se_mean = sd / np.sqrt(ess)
    assert np.all(np.abs(est.mean(axis=0) - mean) < z * se_mean), (est.mean(axis=0), mean, se_mean)
    se_sd = 2 * sd / np.sqrt(2 * ess)
    assert np.all(np.abs(est.std(axis=0) - sd) < z * se_sd), (est.std(axis=0), sd)


@pytest.mark.parametrize("mech_name, epsilon", [("laplace", 1.0), ("laplace", 0.1), ("gaussian", 1.0)])
def test_matches_exact_posterior_by_enumeration(mech_name, epsilon):
    model = NaiveBayesLoglinear(n=10, class_levels=2, feature_levels=(2, 2), alpha=2.0)
    sens = model.default_sensitivity(l2=mech_name == "gaussian")
    mech = (Laplace(scale=sens / epsilon, sensitivity=sens) if mech_name == "laplace"
            else Gaussian(scale=2.0 / epsilon, sensitivity=sens))
    rng = np.random.default_rng(17)
    theta = model.sample_prior(rng, 1)[0]
    s_dp = mech.sample(rng, model.statistic(model.sample_records(rng, theta)))
    mean, sd = exact_moments(model, mech, s_dp)
    res = engine.run_method(Problem(model=model, mechanism=mech, s_dp=s_dp),
                            {"name": "pseudo_marginal", "chains": 4, "draws": 2500, "warmup": 500}, 3)
    ess = engine.summary(res)["ess_bulk"].to_numpy()
    assert ess.min() > 800
    _agree(res.draws, mean, sd, ess)
    # negative control: the naive posterior of the same release misses the exact moments at epsilon = 0.1
    if epsilon == 0.1:
        nv = naive(Problem(model=model, mechanism=mech, s_dp=s_dp), np.random.default_rng(1), draws=10_000)
        with pytest.raises(AssertionError):
            _agree(nv.draws, mean, sd, np.full(mean.size, 10_000.0))


def test_agrees_with_long_da_mcmc():
    """n = 200, 3 classes x (3, 2) levels, Laplace epsilon = 0.5: pseudo-marginal against 40,000 DA-MCMC
    iterations, means within the two runs' combined Monte Carlo error."""
    model = make_model("naive_bayes_loglinear", {"n": 200, "class_levels": 3, "feature_levels": [3, 2]})
    mech = Laplace(scale=model.default_sensitivity() / 0.5, sensitivity=model.default_sensitivity())
    rng = np.random.default_rng(23)
    s_dp = mech.sample(rng, model.statistic(model.sample_records(rng, model.sample_prior(rng, 1)[0])))
    problem = Problem(model=model, mechanism=mech, s_dp=s_dp)
    pm = loglinear_pseudo_marginal(problem, np.random.default_rng(1), chains=4, draws=3000, warmup=500)
    da = da_mcmc(problem, np.random.default_rng(2), chains=4, draws=10_000, warmup=1000)
    s_pm, s_da = engine.summary(pm), engine.summary(da)
    se = np.sqrt((s_pm["sd"] ** 2 / s_pm["ess_bulk"]) + (s_da["sd"] ** 2 / s_da["ess_bulk"]))
    z = np.abs(s_pm["mean"] - s_da["mean"]) / se
    assert z.max() < 4.5, z.sort_values().tail()
    assert np.all(np.abs(s_pm["sd"] / s_da["sd"] - 1) < 0.15)


# --------------------------------------------------------------------------- SBC
SBC_PARAMS = ("pi[0]", "p[0][0][0]", "p[0][1][1]", "p[1][0][2]")


def _sbc_ranks(n, method, reps=300, thin=5, n_rank=19, seed=2023):
    model = make_model("naive_bayes_loglinear", {"n": n, "class_levels": 2, "feature_levels": [2, 3]})
    sens = model.default_sensitivity()
    scale = sens / (1.0 if n < 1000 else 0.05)  # noise about the statistic's spread (sd ~ sqrt(n/6) ~ 130 at 10^5)
    mech = Laplace(scale=scale, sensitivity=sens)
    idx = [model.param_names.index(p) for p in SBC_PARAMS]
    rng = np.random.default_rng(seed)
    c, s = np.empty(2, np.int64), np.empty(model.stat_dim, np.int64)
    ranks = np.empty((reps, len(idx)), dtype=int)
    for r in range(reps):
        theta = model.sample_prior(rng, 1)[0]
        kern.sample_tables(rng, n, theta, np.asarray(model.feature_levels, np.int64),
                           np.asarray(model.offsets, np.int64), c, s)
        problem = Problem(model=model, mechanism=mech, s_dp=mech.sample(rng, s.astype(float)))
        if method == "pseudo_marginal":
            res = loglinear_pseudo_marginal(problem, rng, chains=1, draws=n_rank * thin, warmup=100, parallel=False)
            draws = res.draws[0, thin - 1::thin][:, idx]
        else:
            draws = naive(problem, rng, draws=n_rank).draws[0][:, idx]
        ranks[r] = (draws < theta[idx]).sum(axis=0)
    return ranks


def _uniformity_p(ranks, n_rank=19, bins=10):
    counts = np.bincount(ranks // ((n_rank + 1) // bins), minlength=bins)
    return stats.chisquare(counts).pvalue


@pytest.mark.parametrize("n", [20, 100_000])
def test_sbc_calibrated_and_naive_is_not(n):
    """Ranks of the truth among thinned draws are uniform (Bonferroni over 4 parameters, family level
    0.004); the naive posterior (which ignores noise about as wide as the statistic's spread) is not."""
    ranks = _sbc_ranks(n, "pseudo_marginal")
    pvals = [_uniformity_p(ranks[:, j]) for j in range(len(SBC_PARAMS))]
    assert min(pvals) > 0.001, dict(zip(SBC_PARAMS, pvals))
    naive_ranks = _sbc_ranks(n, "naive", reps=150)
    naive_p = [_uniformity_p(naive_ranks[:, j]) for j in range(len(SBC_PARAMS))]
    assert min(naive_p) < 1e-6, dict(zip(SBC_PARAMS, naive_p))


# --------------------------------------------------------------------------- run through the engine
SPEC = {"seed": 7, "model": {"name": "naive_bayes_loglinear", "n": 1_000_000, "class_levels": 3,
                             "feature_levels": [3, 3]},
        "mechanism": {"name": "laplace", "epsilon": 0.01}, "data": {"simulate": {"from_prior": True}},
        "method": {"name": "pseudo_marginal", "chains": 2, "draws": 300, "warmup": 100}}


def test_million_records_reproducible_and_no_n_in_the_cost():
    a, b = engine.run(SPEC), engine.run(SPEC)
    np.testing.assert_array_equal(a.draws, b.draws)
    assert not np.array_equal(a.draws, engine.run({**SPEC, "seed": 8}).draws)
    assert a.info["likelihood"] == "augmented" and a.info["particles"] == [1, 1]
    assert 0.1 < a.info["mean_acceptance"] < 0.6


def test_round_tables_are_valid():
    model = make_model("naive_bayes_loglinear", {"n": 57, "class_levels": 3, "feature_levels": [2, 4]})
    rng = np.random.default_rng(0)
    for _ in range(20):
        s_dp = rng.normal(5, 9, model.stat_dim)
        c, s = round_tables(model, model.project(s_dp))
        assert c.sum() == 57 and (s >= 0).all()
        for t in model._tables(s):
            np.testing.assert_array_equal(t.sum(axis=1), c)
