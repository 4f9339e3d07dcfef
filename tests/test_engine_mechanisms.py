"""Mechanisms: exact samplers, normalised pmfs, budget <-> scale conversions, randomized response.

Tiers: (a) deterministic checks of densities, normalisers and conversions against independent
formulas; (b) seeded goodness-of-fit tests of the samplers with large samples.

Familywise level of the seeded tests: each chi-square / KS test uses ALPHA = 1e-4 and there are
about 20 of them, so a correct sampler fails one with probability about 0.2%; the seeds are fixed,
so the outcome is reproducible either way.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special, stats

from engine.mechanisms import (
    DiscreteGaussian,
    DiscreteLaplace,
    Gaussian,
    Laplace,
    analytic_gaussian_sigma,
    budget_from_scale,
    discrete_gaussian_log_normalizer,
    make_mechanism,
    sample_discrete_gaussian,
    sample_discrete_laplace,
    scale_from_budget,
)

ALPHA = 1e-4
SAMPLE = 200_000


def _chisquare_vs_pmf(draws, log_pmf):
    """Chi-square of integer draws against a pmf: cells with expected count >= 20, tails pooled."""
    lo, hi = int(draws.min()), int(draws.max())
    support = np.arange(lo - 50, hi + 51)
    expected = draws.size * np.exp(log_pmf(support))
    big = expected >= 20
    k_lo, k_hi = support[big].min(), support[big].max()
    cells = np.arange(k_lo, k_hi + 1)
    observed = np.array([np.sum(draws == k) for k in cells], dtype=float)
    exp_cells = draws.size * np.exp(log_pmf(cells))
    # the two tails as their own cells (mass of the pmf outside [k_lo, k_hi])
    observed = np.append(observed, [np.sum(draws < k_lo), np.sum(draws > k_hi)])
    tail_lo = draws.size * np.exp(special.logsumexp(log_pmf(np.arange(k_lo - 100_000, k_lo))))
    tail_hi = draws.size * np.exp(special.logsumexp(log_pmf(np.arange(k_hi + 1, k_hi + 100_001))))
    exp_cells = np.append(exp_cells, [tail_lo, tail_hi])
    keep = exp_cells > 0
    observed, exp_cells = observed[keep], exp_cells[keep]
    assert abs(exp_cells.sum() - draws.size) < 1e-6 * draws.size, "reference pmf is not normalised"
    return stats.chisquare(observed, exp_cells * observed.sum() / exp_cells.sum())


def _dl_log_pmf_reference(t):
    """Discrete Laplace pmf exp(-|k|/t) / sum_j exp(-|j|/t), normaliser (1 + q)/(1 - q), q = e^(-1/t)."""
    q = math.exp(-1.0 / t)
    log_z = math.log1p(q) - math.log1p(-q)
    return lambda k: -np.abs(k) / t - log_z


def _dg_log_pmf_reference(sigma):
    """Discrete Gaussian pmf with the normaliser summed directly over a wide integer range."""
    k = np.arange(-int(60 * sigma) - 60, int(60 * sigma) + 61)
    log_z = special.logsumexp(-(k.astype(float) ** 2) / (2 * sigma**2))
    return lambda x: -(np.asarray(x, float) ** 2) / (2 * sigma**2) - log_z


# --------------------------------------------------------------------------- samplers
@pytest.mark.parametrize("t", [0.3, 1.0, 2.5, 6.25])
def test_discrete_laplace_sampler_matches_pmf(t):
    draws = sample_discrete_laplace(np.random.default_rng(101), t, SAMPLE)
    assert draws.dtype.kind == "i"
    res = _chisquare_vs_pmf(draws, _dl_log_pmf_reference(t))
    assert res.pvalue > ALPHA, f"discrete Laplace t={t}: chi-square p = {res.pvalue:.2g}"


@pytest.mark.parametrize("sigma", [0.3, 1.0, 2.5, 6.25])
def test_discrete_gaussian_sampler_matches_pmf(sigma):
    draws = sample_discrete_gaussian(np.random.default_rng(202), sigma, SAMPLE)
    assert draws.shape == (SAMPLE,) and draws.dtype.kind == "i"
    res = _chisquare_vs_pmf(draws, _dg_log_pmf_reference(sigma))
    assert res.pvalue > ALPHA, f"discrete Gaussian sigma={sigma}: chi-square p = {res.pvalue:.2g}"


def test_discrete_gaussian_sampler_keeps_requested_shape():
    draws = sample_discrete_gaussian(np.random.default_rng(3), 2.0, (7, 3))
    assert draws.shape == (7, 3)


@pytest.mark.parametrize("mech, reference", [
    (Laplace(scale=1.7), lambda b: stats.laplace(scale=b)),
    (Gaussian(scale=2.3), lambda s: stats.norm(scale=s)),
])
def test_continuous_noise_samplers_match_their_law(mech, reference):
    u = mech.sample(np.random.default_rng(7), np.zeros((SAMPLE // 4,)))
    res = stats.kstest(u, reference(mech.scale).cdf)
    assert res.pvalue > ALPHA, f"{mech.name}: KS p = {res.pvalue:.2g}"


def test_additive_sample_adds_noise_to_statistic():
    mech = DiscreteLaplace(scale=2.0)
    s = np.full(50_000, 10.0)
    out = mech.sample(np.random.default_rng(1), s)
    assert out.shape == s.shape
    assert np.all(out == np.round(out))
    # the noise is centred: mean of 50 000 draws within 4 standard errors of 10
    assert abs(out.mean() - 10.0) < 4 * mech.noise_sd / math.sqrt(s.size)


# --------------------------------------------------------------------------- pmfs and densities
@pytest.mark.parametrize("sigma", [0.3, 1.0, 6.25, 1000.0])
def test_discrete_gaussian_pmf_is_normalised(sigma):
    mech = DiscreteGaussian(scale=sigma)
    k = np.arange(-int(40 * sigma) - 40, int(40 * sigma) + 41, dtype=float)
    total = np.exp(special.logsumexp(mech.noise_log_prob(k)))
    assert total == pytest.approx(1.0, abs=1e-12)
    # log_prob(s_dp, s) is the same law, summed over the statistic's coordinates
    assert mech.log_prob(np.array([3.0]), np.array([1.0])) == pytest.approx(float(mech.noise_log_prob(np.array([2.0]))[0]))


@pytest.mark.parametrize("t", [0.3, 1.0, 6.25, 1000.0])
def test_discrete_laplace_pmf_is_normalised(t):
    mech = DiscreteLaplace(scale=t)
    k = np.arange(-int(60 * t) - 60, int(60 * t) + 61, dtype=float)
    total = np.exp(special.logsumexp(mech.noise_log_prob(k)))
    assert total == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(mech.noise_log_prob(k[:50]), _dl_log_pmf_reference(t)(k[:50]), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("sigma", [0.3, 0.999, 1.0, 2.0, 6.25, 1000.0])
def test_discrete_gaussian_normaliser_matches_direct_sum(sigma):
    k = np.arange(-int(60 * sigma) - 60, int(60 * sigma) + 61, dtype=float)
    direct = special.logsumexp(-(k**2) / (2 * sigma**2))
    assert discrete_gaussian_log_normalizer(sigma) == pytest.approx(direct, rel=1e-13, abs=1e-13)


def test_discrete_noise_is_zero_off_the_integers():
    for mech in (DiscreteLaplace(scale=2.0), DiscreteGaussian(scale=2.0)):
        assert mech.noise_log_prob(np.array([0.5]))[0] == -np.inf
        assert np.isfinite(mech.noise_log_prob(np.array([3.0]))[0])


@pytest.mark.parametrize("mech, reference", [
    (Laplace(scale=0.7), stats.laplace(scale=0.7)),
    (Gaussian(scale=3.1), stats.norm(scale=3.1)),
])
def test_continuous_log_prob_matches_scipy(mech, reference):
    r = np.linspace(-20, 20, 81)
    np.testing.assert_allclose(mech.noise_log_prob(r), reference.logpdf(r), rtol=1e-12)
    # log eta(s_dp | s) sums over the statistic's coordinates
    s_dp, s = np.array([1.0, -2.0, 4.0]), np.array([0.5, 0.0, 7.0])
    assert mech.log_prob(s_dp, s) == pytest.approx(reference.logpdf(s_dp - s).sum())


@pytest.mark.parametrize("mech", [DiscreteLaplace(scale=0.5), DiscreteLaplace(scale=4.0), Laplace(scale=1.3),
                                  Gaussian(scale=2.0)])
def test_noise_sd_is_the_noise_standard_deviation(mech):
    if mech.discrete:
        k = np.arange(-4000, 4001, dtype=float)
        var = np.sum(k**2 * np.exp(mech.noise_log_prob(k)))
    else:
        var = {"laplace": 2 * mech.scale**2, "gaussian": mech.scale**2}[mech.name]
    assert mech.noise_sd == pytest.approx(math.sqrt(var), rel=1e-10)


@pytest.mark.parametrize("name", ["laplace", "discrete_laplace", "gaussian", "discrete_gaussian"])
@pytest.mark.parametrize("budget", [1e-3, 1e3])
def test_extreme_budgets_give_finite_log_prob(name, budget):
    params = {"epsilon": budget} if "laplace" in name else {"rho": budget}
    mech = make_mechanism(name, params)
    assert math.isfinite(mech.scale) and mech.scale > 0
    r = np.array([0.0, 1.0, -1.0, 50.0, -50.0])
    lp = mech.noise_log_prob(r)
    assert np.all(np.isfinite(lp)), f"{name} at budget {budget}: log_prob {lp}"
    assert np.all(lp <= lp[0])  # the mode is at zero noise


# --------------------------------------------------------------------------- budget <-> scale
@pytest.mark.parametrize("name", ["laplace", "discrete_laplace"])
@pytest.mark.parametrize("eps, sens", [(1e-3, 1.0), (0.5, 1.0), (1.0, 2.0), (7.0, 3.0), (1e3, 1.0)])
def test_laplace_budget_round_trip(name, eps, sens):
    b = scale_from_budget(name, sens, epsilon=eps)
    assert b == pytest.approx(sens / eps, rel=1e-15)
    assert budget_from_scale(name, sens, b)["epsilon"] == pytest.approx(eps, rel=1e-14)
    mech = make_mechanism(name, {"epsilon": eps, "sensitivity": sens})
    assert mech.scale == pytest.approx(b) and mech.epsilon == pytest.approx(eps, rel=1e-14)
    assert make_mechanism(name, {"scale": b, "sensitivity": sens}).epsilon == pytest.approx(eps, rel=1e-14)


@pytest.mark.parametrize("name", ["gaussian", "discrete_gaussian"])
@pytest.mark.parametrize("rho, sens", [(1e-3, 1.0), (0.125, 1.0), (0.5, math.sqrt(2)), (2.0, 3.0), (1e3, 1.0)])
def test_gaussian_rho_round_trip(name, rho, sens):
    sigma = scale_from_budget(name, sens, rho=rho)
    assert sens**2 / (2 * sigma**2) == pytest.approx(rho, rel=1e-14)
    assert budget_from_scale(name, sens, sigma)["rho"] == pytest.approx(rho, rel=1e-14)
    mech = make_mechanism(name, {"rho": rho, "sensitivity": sens})
    assert mech.scale == pytest.approx(sigma) and mech.guarantee["rho"] == pytest.approx(rho, rel=1e-14)
    assert mech.epsilon is None  # zCDP is not a pure-DP guarantee


def _balle_wang_delta(eps, sigma, sens):
    """delta(eps) of the Gaussian mechanism, Balle & Wang (2018) Theorem 8, straight from scipy."""
    return (stats.norm.cdf(sens / (2 * sigma) - eps * sigma / sens)
            - math.exp(eps) * stats.norm.cdf(-sens / (2 * sigma) - eps * sigma / sens))


@pytest.mark.parametrize("eps, delta, sens", [(0.1, 1e-5, 1.0), (0.5, 1e-6, 1.0), (1.0, 1e-5, 2.0),
                                              (3.0, 1e-3, 1.0), (8.0, 1e-8, 0.5)])
def test_analytic_gaussian_meets_balle_wang_condition(eps, delta, sens):
    sigma = analytic_gaussian_sigma(eps, delta, sens)
    # the condition holds with equality at the returned sigma ...
    assert _balle_wang_delta(eps, sigma, sens) == pytest.approx(delta, rel=1e-6)
    # ... and sigma is the smallest such: a slightly smaller sigma violates it
    assert _balle_wang_delta(eps, sigma * (1 - 1e-4), sens) > delta
    if eps < 1:  # never worse than the classical calibration sqrt(2 log(1.25/delta)) Delta / eps
        assert sigma <= math.sqrt(2 * math.log(1.25 / delta)) * sens / eps
    back = budget_from_scale("gaussian", sens, sigma, delta=delta)
    assert back["epsilon"] == pytest.approx(eps, rel=1e-6)
    assert back["delta"] == delta and back["rho"] == pytest.approx(sens**2 / (2 * sigma**2))
    mech = make_mechanism("gaussian", {"epsilon": eps, "delta": delta, "sensitivity": sens})
    assert mech.scale == pytest.approx(sigma, rel=1e-9)
    assert mech.guarantee["kind"] == "approx" and mech.guarantee["epsilon"] == pytest.approx(eps, rel=1e-6)


# --------------------------------------------------------------------------- randomized response
def test_coin_scheme_with_fair_truth_coin():
    """Eng et al. (dapper) Example 1: two attributes, each kept with probability 3/4 -> 2 log 3."""
    mech = make_mechanism("randomized_response", {"scheme": "coin", "truth_prob": 0.5}, k=4)
    assert mech.epsilon == pytest.approx(2 * math.log(3), rel=1e-14)
    q = mech.Q
    hamming = np.array([[bin(x ^ z).count("1") for z in range(4)] for x in range(4)])
    expected = np.choose(hamming, [9 / 16, 3 / 16, 1 / 16])
    np.testing.assert_allclose(q, expected, rtol=1e-15)
    np.testing.assert_allclose(q.sum(axis=1), 1.0, rtol=1e-15)
    two = make_mechanism("randomized_response", {"scheme": "coin", "truth_prob": 0.5}, k=2)
    assert two.epsilon == pytest.approx(math.log(3))


@pytest.mark.parametrize("k", [2, 3, 5])
@pytest.mark.parametrize("eps", [1e-3, 0.5, 2.0, 20.0])
def test_k_ary_randomized_response(k, eps):
    mech = make_mechanism("randomized_response", {"epsilon": eps}, k=k)
    q = mech.Q
    keep = math.exp(eps) / (math.exp(eps) + k - 1)
    np.testing.assert_allclose(np.diag(q), keep, rtol=1e-13)
    off = q[~np.eye(k, dtype=bool)]
    np.testing.assert_allclose(off, 1 / (math.exp(eps) + k - 1), rtol=1e-13)
    np.testing.assert_allclose(q.sum(axis=1), 1.0, rtol=1e-14)
    assert mech.epsilon == pytest.approx(eps, rel=1e-9)


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("eps", [1e-3, 1e3])
def test_randomized_response_guarantee_at_extreme_epsilon(k, eps):
    """The reported guarantee must be the budget asked for, at both ends of the range."""
    mech = make_mechanism("randomized_response", {"epsilon": eps}, k=k)
    assert math.isfinite(mech.epsilon), f"k={k}, epsilon={eps}: reported epsilon {mech.epsilon}"
    assert mech.epsilon == pytest.approx(eps, rel=1e-6)
    if k == 2:
        ll = mech.count_log_likelihood([3], np.arange(11), 10)
        assert np.all(ll <= 0) and np.isfinite(ll[3])


def test_randomized_response_reports_through_q():
    mech = make_mechanism("randomized_response", {"epsilon": 1.0}, k=3)
    rng = np.random.default_rng(11)
    truth = np.repeat(np.arange(3), 30_000)
    z = mech.sample_records(rng, truth)
    for x in range(3):
        counts = np.bincount(z[truth == x], minlength=3)
        res = stats.chisquare(counts, 30_000 * mech.Q[x])
        assert res.pvalue > ALPHA, f"row {x}: chi-square p = {res.pvalue:.2g}"


def test_randomized_response_count_likelihood_is_the_convolution():
    mech = make_mechanism("randomized_response", {"epsilon": 0.8}, k=2)
    n, z1 = 12, 5
    q = mech.Q
    for s in range(n + 1):
        pmf = np.convolve(stats.binom.pmf(np.arange(s + 1), s, q[1, 1]),
                          stats.binom.pmf(np.arange(n - s + 1), n - s, q[0, 1]))
        assert math.exp(mech.count_log_likelihood([z1], np.array([s]), n)[0]) == pytest.approx(pmf[z1], rel=1e-10)


@pytest.mark.parametrize("name, params, field", [
    ("laplace", {"epsilon": 1.0, "scale": 1.0}, "mechanism"),
    ("discrete_gaussian", {"epsilon": 1.0}, "mechanism.epsilon"),
    ("gaussian", {"epsilon": 1.0}, "mechanism.delta"),
    ("laplace", {"epsilon": 0.0}, "mechanism.epsilon"),
    ("laplace", {"epsilon": float("inf")}, "mechanism.epsilon"),
    ("laplace", {"epsilon": float("nan")}, "mechanism.epsilon"),
    ("gaussian", {"sigma": -1.0}, "mechanism.sigma"),
    ("randomized_response", {"scheme": "coin", "truth_prob": 1.0}, "mechanism.truth_prob"),
    ("bogus", {"epsilon": 1.0}, "mechanism.name"),
])
def test_make_mechanism_rejects_bad_parameters(name, params, field):
    with pytest.raises(ValueError, match=f"^{field.replace('.', '[.]')}"):
        make_mechanism(name, params)
