"""A histogram whose total is private: ``dirichlet_multinomial`` with ``model.n_prior`` and the exact method
(engine.methods.histogram_total, paper 002 Appendix B's Poisson construction).

* The independent-bins case (negative_binomial prior on n with dispersion sum(alpha), no noisy size) against
  the per-bin ``poisson_gamma`` specs' exact mixtures (engine.methods.exact): each cell's count law equals its
  own spec's mixture weights, and E[n], E[p_j] computed from those per-bin laws (a convolution, no sampler) match
  the draws within 4.5 Monte Carlo standard errors.
* Every case against brute-force enumeration of the Dirichlet-multinomial posterior at tiny n (all count
  vectors with c_j <= 45, the clipped discrete Laplace likelihood written out by hand): the law of n to 1e-9,
  E[p_j] and E[n] from the draws within 4.5 standard errors. This also proves the construction: the
  enumeration uses the Dirichlet-multinomial formula with the stated prior on n, never the Poisson one.
* SBC over releases (M = 300 per scenario: n from its prior, p ~ Dirichlet, c ~ Multinomial, the clamped
  OpenDP-style integer Laplace release): randomised ranks of the truth among 99 posterior draws, for p[0] and
  n; KS p >= 1e-4 and 90% coverage within 4.5 binomial sds; the negative control analyses the same releases
  with half the noise scale and must fail.
"""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import special, stats

import engine
from engine.core.results import Problem
from engine.methods.exact import exact_mixture
from engine.methods.histogram_total import HistogramTotal, reference_rate
from engine.models.dirichlet_multinomial import DirichletMultinomial
from engine.models.sample_size import UnknownSize, make_size_mechanism, make_size_prior

SCALE = 1.5
RELEASE = {"library": "opendp", "mechanism": "laplace", "domain": "int", "scale": SCALE, "clip": [0, math.inf]}
ALPHA = [1.0, 2.0, 0.5]


def spec(s_dp, n_prior, n_mechanism=None, n_dp=None, alpha=ALPHA, seed=3, draws=4000):
    d = {"seed": seed, "model": {"name": "dirichlet_multinomial", "alpha": list(alpha), "n_prior": n_prior},
         "release": RELEASE, "data": {"s_dp": list(s_dp)}, "method": {"name": "exact", "draws": draws, "chains": 1}}
    if n_mechanism is not None:
        d["n_mechanism"] = n_mechanism
        d["data"]["n_dp"] = n_dp
    return d


def log_eta_by_hand(s, c, t=SCALE):
    """Integer Laplace of scale t clamped at 0: P(U = u) = (1 - r) / (1 + r) r^|u| with r = e^(-1/t); a released
    0 is P(c + U <= 0) = r^c / (1 + r)."""
    r = math.exp(-1.0 / t)
    c = np.asarray(c, dtype=float)
    if s <= 0:
        return c * math.log(r) - math.log1p(r)
    return math.log((1 - r) / (1 + r)) + np.abs(s - c) / t * -1.0


def enumerate_posterior(s_dp, alpha, log_prior_n, log_eta_n=None, cmax=45):
    """(n values, P(n), E[p_j], E[n]) of the DM posterior by enumerating every c with c_j <= cmax."""
    alpha = np.asarray(alpha, float)
    k, a_sum = alpha.size, alpha.sum()
    grid = np.array(list(itertools.product(range(cmax + 1), repeat=k)), dtype=float)
    n = grid.sum(axis=1)
    lw = (log_prior_n(n) + special.gammaln(n + 1) + special.gammaln(a_sum) - special.gammaln(n + a_sum)
          + np.sum(special.gammaln(grid + alpha) - special.gammaln(alpha) - special.gammaln(grid + 1), axis=1))
    for j in range(k):
        lw += log_eta_by_hand(s_dp[j], grid[:, j])
    if log_eta_n is not None:
        lw += log_eta_n(n)
    w = np.exp(lw - special.logsumexp(lw))
    values = np.arange(int(n.max()) + 1)
    pmf = np.bincount(n.astype(int), weights=w, minlength=values.size)
    mean_p = w @ ((grid + alpha) / (n + a_sum)[:, None])
    return values, pmf, mean_p, float(w @ n)


def within_mc(draws, want):
    se = draws.std(ddof=1) / math.sqrt(draws.size)
    return abs(draws.mean() - want) <= 4.5 * se + 1e-12


NB_MATCHED = {"name": "negative_binomial", "mean": 9.0, "dispersion": 3.5}  # dispersion = sum(alpha)
CASES = {
    "independent": (NB_MATCHED, None, None),
    "poisson_prior": ({"name": "poisson", "mean": 9.0}, None, None),
    "nb_other_dispersion": ({"name": "negative_binomial", "mean": 9.0, "dispersion": 0.8}, None, None),
    "noisy_size": (NB_MATCHED, {"name": "discrete_laplace", "scale": 1.0}, 7),
}


@pytest.mark.parametrize("case", list(CASES))
def test_exact_matches_enumeration_at_tiny_n(case):
    n_prior, n_mech, n_dp = CASES[case]
    s_dp = [3, 0, 5]
    problem = engine.prepare(spec(s_dp, n_prior, n_mech, n_dp))
    prior = make_size_prior(n_prior)
    log_eta_n = None
    if n_mech is not None:
        mech_n = make_size_mechanism(n_mech)
        log_eta_n = lambda n: mech_n.noise_log_prob(n_dp - n)  # noqa: E731
    values, pmf, mean_p, mean_n = enumerate_posterior(s_dp, ALPHA, prior.log_pmf, log_eta_n)
    law = HistogramTotal(problem)
    assert law.independent == (case == "independent")
    got_n, got_p = law.n_pmf()
    full = np.zeros(values.size)
    full[got_n[got_n < values.size]] = got_p[got_n < values.size]
    assert np.max(np.abs(full - pmf)) < 1e-9 and got_p[got_n >= values.size].sum() < 1e-9
    assert law.mean_n() == pytest.approx(mean_n, rel=1e-8)
    res = engine.run_method(problem, problem_method(), seed=5)
    assert res.param_names == ("p[0]", "p[1]", "p[2]", "n") and res.info["unknown_n"]
    assert "plug_in_n" not in res.info and res.info["neglected_mass_bound"] < 1e-9
    for j in range(3):
        assert within_mc(res.flat(f"p[{j}]"), mean_p[j]), (case, j)
    assert within_mc(res.flat("n"), mean_n)


def problem_method():
    return {"name": "exact", "draws": 4000, "chains": 1}


def test_independent_bins_equal_the_per_bin_specs_exact_mixtures():
    """The case the dp-wizard import writes: each cell's count law is its poisson_gamma spec's exact mixture
    (n = 1, Gamma(alpha_j, beta = sum(alpha) / mean) prior, the same release); E[n] and E[p_j] from those
    per-bin laws alone (p_j | c ~ Beta(alpha_j + c_j, A - alpha_j + n - c_j), mixed over c_j and the other
    cells' total by convolution) match the joint draws."""
    s_dp = [12, 0, 30, 4]
    alpha = [1.0, 0.5, 2.0, 1.5]
    a_sum, mean = sum(alpha), 40.0
    problem = engine.prepare(spec(s_dp, {"name": "negative_binomial", "mean": mean, "dispersion": a_sum},
                                  alpha=alpha, draws=20_000))
    beta = a_sum / mean
    assert reference_rate(problem.unknown_n.prior, a_sum) == pytest.approx(beta)
    law = HistogramTotal(problem)
    laws = []
    for j, (a, s) in enumerate(zip(alpha, s_dp)):
        per_bin = engine.prepare({"seed": 0, "model": {"name": "poisson_gamma", "n": 1, "alpha": a, "beta": beta},
                                  "release": RELEASE, "data": {"s_dp": [s]}, "method": {"name": "exact"}})
        mix = exact_mixture(per_bin)
        lo, v = law.wins[j]
        ours = dict(zip(lo + np.arange(v.size), v / v.sum()))
        theirs = dict(zip(mix.values.astype(int), mix.weights))
        common = set(ours) & set(theirs)
        assert sum(ours[c] for c in common) > 1 - 1e-12 and sum(theirs[c] for c in common) > 1 - 1e-12
        assert max(abs(ours[c] - theirs[c]) for c in common) < 1e-12
        laws.append((mix.values.astype(int), mix.weights))
    res = engine.run_method(problem, {"name": "exact", "draws": 20_000, "chains": 1}, seed=2)
    mean_n = sum(float(np.dot(c, w)) for c, w in laws)
    assert res.info["posterior_mean_n"] == pytest.approx(mean_n, rel=1e-10)
    assert within_mc(res.flat("n"), mean_n)
    for j in range(len(alpha)):
        others = None
        for i, (c, w) in enumerate(laws):
            if i == j:
                continue
            pmf = np.zeros(int(c.max()) + 1)
            pmf[c] = w
            others = pmf if others is None else np.convolve(others, pmf)
        cj, wj = laws[j]
        rest = np.arange(others.size)
        a = alpha[j] + cj[:, None]
        b = a_sum - alpha[j] + rest[None, :]
        want = float(np.sum(wj[:, None] * others[None, :] * a / (a + b)))
        assert within_mc(res.flat(f"p[{j}]"), want), j


def _rank(draws, truth, rng):
    below, ties = int(np.sum(draws < truth)), int(np.sum(draws == truth))
    return (below + rng.integers(0, ties + 1) + rng.random()) / (draws.size + 1)


def _calibrated(u):
    covered = int(np.sum((u >= 0.05) & (u <= 0.95)))
    return stats.kstest(u, "uniform").pvalue >= 1e-4 and abs(covered - 0.9 * u.size) <= 4.5 * math.sqrt(0.09 * u.size)


def _sbc(n_prior, n_mech, m=300, wrong=1.0, seed=11):
    """(u of p[0], u of n) over m releases; the posterior analyses them with the scale times ``wrong``."""
    rng = np.random.default_rng(seed)
    alpha = np.array([1.0, 1.0, 1.0])
    prior = make_size_prior(n_prior)
    size_mech = None if n_mech is None else make_size_mechanism(n_mech)
    truth_release = engine.release_from(**RELEASE).noise
    analysis = engine.release_from(**{**RELEASE, "scale": SCALE * wrong}).noise
    u_p, u_n = np.empty(m), np.empty(m)
    for i in range(m):
        n = int(prior.sample(rng))
        p = rng.dirichlet(alpha)
        c = rng.multinomial(n, p).astype(float)
        s = truth_release.sample(rng, c)
        n_dp = None if size_mech is None else float(size_mech.sample(rng, np.array([float(n)]))[0])
        model = DirichletMultinomial(n=max(int(round(s.sum())), 1), alpha=tuple(alpha))
        problem = Problem(model=model, mechanism=analysis, s_dp=s, unknown_n=UnknownSize(prior, size_mech, n_dp))
        res = engine.run_method(problem, {"name": "exact", "draws": 99, "chains": 1}, seed=i)
        u_p[i] = _rank(res.flat("p[0]"), p[0], rng)
        u_n[i] = _rank(res.flat("n"), n, rng)
    return u_p, u_n


@pytest.mark.parametrize("n_prior, n_mech", [
    ({"name": "negative_binomial", "mean": 20.0, "dispersion": 3.0}, None),
    ({"name": "poisson", "mean": 20.0}, {"name": "discrete_laplace", "scale": 2.0}),
], ids=["independent", "poisson_noisy_size"])
def test_sbc_over_releases_and_a_halved_scale_fails(n_prior, n_mech):
    u_p, u_n = _sbc(n_prior, n_mech)
    assert _calibrated(u_p) and _calibrated(u_n)
    bad_p, bad_n = _sbc(n_prior, n_mech, wrong=0.5)
    assert not (_calibrated(bad_p) and _calibrated(bad_n))


def test_same_spec_and_seed_give_identical_draws_and_the_spec_checks_name_the_field():
    d = spec([3, 0, 5], {"name": "poisson", "mean": 9.0})
    a, b = engine.run(d), engine.run(d)
    assert np.array_equal(a.draws, b.draws)
    assert not np.array_equal(a.draws, engine.run({**d, "seed": 4}).draws)
    with pytest.raises(ValueError, match=r"^data\.n_dp = 7 is invalid: needs an \[n_mechanism\]"):
        engine.spec_from_dict({**d, "data": {"s_dp": [3, 0, 5], "n_dp": 7}})
    with pytest.raises(ValueError, match=r"^model\.n = 8 is invalid: must be omitted"):
        engine.spec_from_dict({**d, "model": {**d["model"], "n": 8}})
    with pytest.raises(ValueError, match=r"dirichlet_multinomial.* supported models are"):
        engine.run({**d, "method": {"name": "rjmcmc"}})
    # another method runs at the plug-in n (the released cells' total) and says so
    res = engine.run({**d, "data": {"s_dp": [3, 1, 5]}, "method": {"name": "da_mcmc", "chains": 1, "draws": 50,
                                                                     "warmup": 10}})
    assert res.info["plug_in_n"] == 9 and res.param_names == ("p[0]", "p[1]", "p[2]")
    assert "plug-in n = the released cells' total = 9" in res.info["note"]
    assert "plug_in_n" not in engine.run({**d, "method": {"name": "auto"}}).info


def test_simulated_histogram_with_a_private_total():
    d = {"seed": 2, "model": {"name": "dirichlet_multinomial", "alpha": [1.0, 1.0],
                              "n_prior": {"name": "negative_binomial", "mean": 50.0, "dispersion": 2.0}},
         "release": RELEASE, "data": {"simulate": {"p": [0.3, 0.7]}}, "method": problem_method()}
    problem = engine.prepare(d)
    n_true = problem.true_params["n"]
    assert problem.records.shape[0] == n_true and problem.unknown_n.n_dp is None
    res = engine.run_method(problem, problem_method(), seed=1)
    lo, hi = np.quantile(res.flat("n"), [0.0005, 0.9995])
    assert lo <= n_true <= hi
