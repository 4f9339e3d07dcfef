"""``exact`` on the adaptive grid and the windowed mixtures against independent references (tier b).

References, each computed here without the engine's grid or windows:

* the full (unwindowed) finite mixture over every s = 0..n (beta_binomial, poisson_gamma);
* the O(n^2) randomized-response count table (beta_binomial, small n);
* brute-force enumeration of the clamped Poisson sum by direct convolution, integrated on a fine
  uniform lambda grid (tiny n);
* quadrature of the clamped normal record law for n = 1;
* DA-MCMC draws (normal model, n = 30), within a bound derived from their ESS.

Grid CDFs are compared at the reference's own quantiles: the stated interpolation tolerance is
1e-5 relative in the density, so |F_grid - F_ref| stays below 1e-4 with a wide margin, while the
Monte Carlo error of a CDF estimated from 8000 draws is about 5e-3.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, special, stats

import engine
from engine.methods.exact import Mixture, _bb_weights, _pg_weights, exact_mixture, grid_posterior_of


def _problem(model, mechanism, s_dp=None, simulate=None, seed=1):
    data = {"s_dp": s_dp} if s_dp is not None else {"simulate": simulate}
    return engine.prepare({"seed": seed, "model": model, "mechanism": mechanism, "data": data})


def _ref_cdf_on_grid(x, log_post):
    """Normalised CDF of an unnormalised log density on a fine uniform grid (trapezoid rule)."""
    w = np.exp(log_post - log_post.max())
    c = np.concatenate([[0.0], np.cumsum(0.5 * (w[1:] + w[:-1]) * np.diff(x))])
    return c / c[-1]


def _compare_cdf(gp_cdf, x, ref_cdf, tol=1e-4):
    qs = np.interp([0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99], ref_cdf, x)
    got = gp_cdf(qs)
    want = np.interp(qs, x, ref_cdf)
    assert np.max(np.abs(got - want)) < tol, (got, want)


# --------------------------------------------------------------------------- beta_binomial / poisson
def test_grid_matches_full_mixture_at_small_epsilon():
    """The issue's case (n = 20000, Laplace scale 1000): the grid is used (too many components) and its
    CDF equals the full mixture's over every s = 0..n."""
    problem = _problem({"name": "beta_binomial", "n": 20000}, {"name": "laplace", "scale": 1000.0}, [6000])
    result = engine.run_method(problem, {"name": "exact", "chains": 1, "draws": 100}, 0)
    assert result.info["representation"] == "grid"
    assert result.info["neglected_mass_bound"] < 1e-12
    s, lw, _ = _bb_weights(problem, window=False)
    full = Mixture(problem.model, s, lw)
    gp, _ = grid_posterior_of(problem)
    qs = np.array([full.quantile(0, q) for q in (0.01, 0.1, 0.5, 0.9, 0.99)])
    assert np.max(np.abs(gp.cdf(qs) - full.cdf(0, qs))) < 1e-4
    assert result.info["posterior_mean"][0] == pytest.approx(full.posterior_mean()[0], rel=1e-5)


@pytest.mark.parametrize("model, mechanism, s_dp", [
    ({"name": "beta_binomial", "n": 5000, "a": 2.0, "b": 3.0}, {"name": "laplace", "epsilon": 1.0}, [1500.4]),
    ({"name": "beta_binomial", "n": 3000}, {"name": "discrete_gaussian", "sigma": 3.0}, [-7]),
    ({"name": "poisson_gamma", "n": 500, "alpha": 2.0, "beta": 1.0}, {"name": "gaussian", "sigma": 4.0}, [1480.0]),
])
def test_windowed_mixture_matches_full_mixture(model, mechanism, s_dp):
    """Windowing keeps about 100 noise scales of components; the mixture it gives has the same mean and
    CDF as the full one to 1e-12, and the bound it reports on the weight left out is below 1e-12."""
    problem = _problem(model, mechanism, s_dp)
    weights = _bb_weights if model["name"] == "beta_binomial" else _pg_weights
    s_w, lw_w, bound = weights(problem)
    s_f, lw_f, _ = weights(problem, window=False)
    assert s_w.size < s_f.size and bound < 1e-12
    win, full = Mixture(problem.model, s_w, lw_w), Mixture(problem.model, s_f, lw_f)
    assert win.posterior_mean()[0] == pytest.approx(full.posterior_mean()[0], rel=1e-12)
    qs = [full.quantile(0, q) for q in (0.05, 0.5, 0.95)]
    assert np.max(np.abs(win.cdf(0, qs) - full.cdf(0, qs))) < 1e-12


@pytest.mark.parametrize("mechanism", [{"name": "randomized_response", "epsilon": 1.0},
                                       {"name": "randomized_response", "scheme": "coin", "truth_prob": 0.5}])
def test_randomized_response_grid_matches_count_table(mechanism):
    """RR exact now uses the binomial likelihood in q(theta); the O(n^2) table mixture is the reference."""
    problem = _problem({"name": "beta_binomial", "n": 300, "a": 0.5, "b": 2.0}, mechanism, [140])
    mix = exact_mixture(problem)
    gp, info = grid_posterior_of(problem)
    qs = np.array([mix.quantile(0, q) for q in (0.01, 0.1, 0.5, 0.9, 0.99)])
    assert np.max(np.abs(gp.cdf(qs) - mix.cdf(0, qs))) < 1e-4
    assert gp.mean() == pytest.approx(mix.posterior_mean()[0], rel=1e-5)
    assert info["neglected_mass_bound"] == 0.0


# --------------------------------------------------------------------------- clamped Poisson
def _clamped_poisson_reference(n, upper, alpha, beta, log_noise, lam_max):
    lam = np.linspace(1e-6, lam_max, 12001)
    j = np.arange(upper)
    rec = np.concatenate([stats.poisson.pmf(j[None, :], lam[:, None]),
                          stats.poisson.sf(upper - 1, lam)[:, None]], axis=1)
    law = rec
    for _ in range(n - 1):  # direct convolution, one lambda per row
        new = np.zeros((lam.size, law.shape[1] + upper))
        for k in range(upper + 1):
            new[:, k:k + law.shape[1]] += law * rec[:, k:k + 1]
        law = new
    s = np.arange(law.shape[1])
    with np.errstate(divide="ignore"):
        log_post = special.logsumexp(np.log(law) + log_noise(s)[None, :], axis=1)
    log_post += stats.gamma.logpdf(lam, alpha, scale=1 / beta)
    return lam, _ref_cdf_on_grid(lam, log_post)


@pytest.mark.parametrize("mechanism, s_dp", [({"name": "laplace", "scale": 2.0}, [9.3]),
                                             ({"name": "discrete_gaussian", "sigma": 1.5}, [15])])
def test_clamped_poisson_matches_enumeration(mechanism, s_dp):
    """n = 4 records clamped at 3: the law of the clamped sum by direct convolution, the posterior on a
    fine lambda grid; the engine's tilted-FFT grid posterior agrees."""
    problem = _problem({"name": "poisson_gamma", "n": 4, "upper": 3, "alpha": 2.0, "beta": 0.5}, mechanism, s_dp)
    assert engine.has_closed_form(problem)
    mech = problem.mechanism
    lam, ref = _clamped_poisson_reference(4, 3, 2.0, 0.5, lambda s: mech.noise_log_prob(problem.s_dp[0] - s), 60.0)
    gp, info = grid_posterior_of(problem)
    _compare_cdf(gp.cdf, lam, ref)
    assert info["neglected_mass_bound"] < 1e-10


def test_naive_clamped_poisson_is_exact_without_noise():
    """naive for the clamped Poisson is p(lam | S = round(projected s_dp)) with clamping respected: the
    same enumeration with a point-mass likelihood."""
    problem = _problem({"name": "poisson_gamma", "n": 4, "upper": 3, "alpha": 2.0, "beta": 0.5},
                       {"name": "laplace", "scale": 2.0}, [13.8])
    result = engine.run_method(problem, {"name": "naive", "chains": 1, "draws": 100}, 0)
    assert result.info["s_projected"] == [12.0]  # 13.8 projected onto [0, 12]
    lam, ref = _clamped_poisson_reference(4, 3, 2.0, 0.5, lambda s: np.where(s == 12, 0.0, -np.inf), 60.0)
    gp, _ = grid_posterior_of(problem, noise_free=True, s_value=12.0)
    _compare_cdf(gp.cdf, lam, ref)
    # all four records at the clamp: lam is pushed above the clamp, unlike the unclamped conjugate update
    assert np.median(result.draws) > 3.0


# --------------------------------------------------------------------------- clamped normal
def test_normal_one_record_matches_quadrature():
    """n = 1: S is one clamped normal record, L(mu) = Phi(a) eta(s_dp - lo) + Phi(-b) eta(s_dp - hi)
    + ∫_lo^hi N(x; mu, sd) eta(s_dp - x) dx by adaptive quadrature."""
    problem = _problem({"name": "normal_known_sd", "n": 1, "sd": 1.0, "lo": -1.0, "hi": 2.0, "prior_sd": 3.0},
                       {"name": "laplace", "scale": 0.7}, [1.6])
    mech = problem.mechanism
    eta = lambda x: math.exp(float(mech.noise_log_prob(np.array([1.6 - x]))[0]))  # noqa: E731
    mu = np.linspace(-10, 12, 551)
    log_post = np.empty(mu.size)
    for i, m in enumerate(mu):
        inner = integrate.quad(lambda x: stats.norm.pdf(x, m, 1.0) * eta(x), -1.0, 2.0, points=[1.6], epsabs=0,
                               epsrel=1e-11)[0]
        total = stats.norm.cdf(-1.0, m, 1.0) * eta(-1.0) + stats.norm.sf(2.0, m, 1.0) * eta(2.0) + inner
        log_post[i] = math.log(total) + stats.norm.logpdf(m, 0.0, 3.0)
    ref = _ref_cdf_on_grid(mu, log_post)
    gp, info = grid_posterior_of(problem)
    # n = 1: the lattice error is the record rounding plus the smoothing kernel, sd ~ h0 / 2 = 0.008
    assert info["discretisation_ratio"] < 0.02
    _compare_cdf(gp.cdf, mu, ref, tol=2e-3)


def test_normal_discretisation_is_far_below_monte_carlo_error(monkeypatch):
    """Halving the lattice step moves the posterior mean and sd by far less than their Monte Carlo error
    with 8000 draws (sd / sqrt(8000) for the mean, sd / sqrt(16000) for the sd)."""
    import engine.numerics.statistic_laws as laws

    problem = _problem({"name": "normal_known_sd", "n": 5000}, {"name": "laplace", "epsilon": 3.0},
                       simulate={"mu": 0.5})
    gp1, info = grid_posterior_of(problem)
    original = laws.NormalLattice.__init__
    monkeypatch.setattr(laws.NormalLattice, "__init__", lambda self, model, resolution=128: original(self, model, resolution))
    gp2, info2 = grid_posterior_of(problem, memo=False)  # built again at the finer lattice, not the one kept
    assert info2["discretisation_sd"] < info["discretisation_sd"]
    grid = np.linspace(gp1.ppf(1e-6)[0], gp1.ppf(1 - 1e-6)[0], 20001)
    moments = []
    for gp in (gp1, gp2):
        f = np.diff(gp.cdf(grid))
        mid = 0.5 * (grid[1:] + grid[:-1])
        m = np.dot(f, mid) / f.sum()
        moments.append((m, math.sqrt(np.dot(f, (mid - m) ** 2) / f.sum())))
    (m1, s1), (m2, s2) = moments
    assert abs(m1 - m2) < 0.05 * s1 / math.sqrt(8000)
    assert abs(s1 - s2) < 0.05 * s1 / math.sqrt(16000)


def test_normal_exact_matches_da_mcmc():
    """n = 30, Laplace noise at epsilon = 0.5 (clamping matters: lo = -1, hi = 1.5): exact's mean and sd
    against DA-MCMC draws, within 4.5 Monte Carlo standard errors derived from their bulk ESS."""
    problem = _problem({"name": "normal_known_sd", "n": 30, "lo": -1.0, "hi": 1.5, "prior_sd": 2.0},
                       {"name": "laplace", "epsilon": 0.5}, simulate={"mu": 0.4}, seed=3)
    ex = engine.run_method(problem, {"name": "exact", "chains": 1, "draws": 20000}, 1)
    da = engine.run_method(problem, {"name": "da_mcmc", "chains": 4, "draws": 3000, "warmup": 500}, 2)
    table = engine.summary(da)
    ess = float(table["ess_bulk"].iloc[0])
    sd = float(ex.draws.std())
    mean_exact = ex.info["posterior_mean"][0]
    mcse = sd * math.sqrt(1 / ess + 1 / 20000)
    assert abs(da.draws.mean() - mean_exact) < 4.5 * mcse
    # sd: the MCSE of a sd estimate is about sd / sqrt(2 ESS)
    assert abs(da.draws.std() - sd) < 4.5 * sd * math.sqrt(1 / (2 * ess) + 1 / 40000)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_da_mcmc_converges_at_the_defaults_where_the_noise_is_wide(seed):
    """The normal mean at n = 40 with Laplace noise at epsilon = 0.3 (the app's demo budget; scale 20 on a sum of
    40 records of sd 1): Algorithm 1 alone moved mu by about 1 / sqrt(40) an iteration across a posterior widened
    by the noise (R-hat 1.02, bulk ESS 205 at the defaults, seed 1). The translation moves of
    engine.kernels.da_mcmc.normal_shift give the run's own verdict "converged"; its mean and its CDF at the exact
    0.1 / 0.5 / 0.9 quantiles agree with the exact posterior (computed, no Monte Carlo error) within 4.5 Monte Carlo
    standard errors. Not the sd: this posterior's kurtosis is about 27 (the prior's tails beyond the clamp, where
    every record sits on a bound), so a sd from 8,000 draws is far noisier than sd / sqrt(2 ESS) says (4 x 50,000
    draws: 3.07 and 3.14 against the exact 3.06)."""
    import warnings

    from engine.methods.exact import exact_moments, exact_quantiles

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        import arviz as az
    problem = _problem({"name": "normal_known_sd", "n": 40}, {"name": "laplace", "epsilon": 0.3},
                       simulate={"mu": 0.5}, seed=seed)
    da = engine.run_method(problem, {"name": "da_mcmc"}, seed)
    table = engine.summary(da)
    assert table.attrs["convergence"]["converged"], table.attrs["convergence"]
    draws = da.draws[..., 0]
    mean, sd = exact_moments(problem)["mu"]
    assert abs(draws.mean() - mean) < 4.5 * sd / math.sqrt(float(az.ess(draws, method="bulk")))
    probs = (0.1, 0.5, 0.9)
    for q, x_q in zip(probs, exact_quantiles(problem, probs)["mu"]):
        ess_q = float(az.ess(draws, method="quantile", prob=q))
        assert abs(float((draws < x_q).mean()) - q) < 4.5 * math.sqrt(q * (1 - q) / ess_q), (q, x_q)


#: audit s24 M2: DA-MCMC, the spec's default method, did not converge at the defaults on these (R-hat 1.03-2.7,
#: bulk ESS 5-98): a prior far wider than the records, a release at the clamp bound under narrow noise, Gaussian
#: noise at ρ = 0.5, a release far outside the statistic's range, records of sd 1e-6. In each the Gibbs step moves mu
#: by about sd / sqrt(n) while the posterior spans the prior's or the noise's scale.
WIDE_CASES = {
    "prior sd 1e4": ({"name": "normal_known_sd", "n": 1, "prior_sd": 1e4}, {"name": "laplace", "epsilon": 1.0}, None),
    "release at the clamp": ({"name": "normal_known_sd", "n": 1}, {"name": "laplace", "epsilon": 1000.0}, [2.9999]),
    "gaussian": ({"name": "normal_known_sd", "n": 10}, {"name": "gaussian", "epsilon": 1.0, "delta": 1e-6}, None),
    "release 1e9": ({"name": "normal_known_sd", "n": 10_000}, {"name": "laplace", "epsilon": 0.01}, [1e9]),
}


@pytest.mark.parametrize("case", list(WIDE_CASES))
def test_da_mcmc_converges_at_the_defaults_on_the_normal_means_edges(case):
    """The translation moves give each of audit s24 M2's cases the verdict "converged" at the defaults, and a mean
    within 4.5 Monte Carlo standard errors of the exact posterior's (computed, no Monte Carlo error)."""
    from engine.methods.exact import exact_moments

    model, mechanism, s_dp = WIDE_CASES[case]
    problem = _problem(model, mechanism, s_dp=s_dp, simulate=None if s_dp else {"mu": 0.5})
    da = engine.run_method(problem, {"name": "da_mcmc"}, 1)
    table = engine.summary(da)
    assert table.attrs["convergence"]["converged"], table.attrs["convergence"]
    mean, sd = exact_moments(problem)["mu"]
    assert abs(float(da.draws.mean()) - mean) < 4.5 * sd / math.sqrt(float(table["ess_bulk"].iloc[0]))


# --------------------------------------------------------------------------- availability and large n
@pytest.mark.parametrize("model", [{"name": "beta_binomial"}, {"name": "poisson_gamma"},
                                   {"name": "poisson_gamma", "upper": 5}, {"name": "normal_known_sd"}])
def test_exact_available_for_every_one_parameter_model(model):
    problem = _problem({**model, "n": 50}, {"name": "laplace", "epsilon": 1.0},
                       simulate={"beta_binomial": {"theta": 0.3}, "poisson_gamma": {"lam": 3.0},
                                 "normal_known_sd": {"mu": 0.5}}[model["name"]])
    assert engine.has_closed_form(problem)


@pytest.mark.parametrize("model, mechanism, truth", [
    ({"name": "beta_binomial"}, {"name": "laplace", "epsilon": 0.01}, {"theta": 0.3}),
    ({"name": "beta_binomial"}, {"name": "randomized_response", "epsilon": 1.0}, {"theta": 0.3}),
    ({"name": "poisson_gamma"}, {"name": "laplace", "epsilon": 0.1}, {"lam": 3.0}),
    ({"name": "poisson_gamma", "upper": 5}, {"name": "laplace", "epsilon": 1.0}, {"lam": 3.0}),
    ({"name": "normal_known_sd"}, {"name": "laplace", "epsilon": 10.0}, {"mu": 0.5}),
])
def test_exact_at_a_million_records(model, mechanism, truth):
    """n = 10^6 runs (RR without the old n <= 5000 cap), reports its neglected-mass bound, and its
    posterior sits where the data put it (within 6 posterior sds of the truth)."""
    problem = _problem({**model, "n": 1_000_000}, mechanism, simulate=truth)
    result = engine.run_method(problem, {"name": "exact", "chains": 1, "draws": 2000}, 0)
    info = result.info
    assert info["neglected_mass_bound"] < 1e-6
    assert info.get("refinement_converged", True)
    draws = result.draws.reshape(-1)
    assert np.all(np.isfinite(draws))
    (name, value), = truth.items()
    assert abs(np.mean(draws) - value) < 6 * np.std(draws) + 1e-12


@pytest.mark.parametrize("n", [1000, 10**5, 10**6])
def test_law_at_window_matches_binomial_and_full_fft(n):
    """The windowed inverse DFT (``_law_at``) on the noise window equals (i) the Binomial pmf when the
    record is Bernoulli (an independent closed form) to 1e-13 of the peak (round-off is relative to the
    peak: the floor the likelihood reads is 1e-12 of it), tighter than the full inverse FFT achieves at
    n = 10^6 (5e-11), and (ii) the full inverse FFT (``_power_law``) for a clamped
    Poisson record and for a record concentrated on {0, U}, whose |DFT| returns near 1 at
    omega = 2 pi / U (the frequency bound does not apply there; the full-FFT branch is taken)."""
    from engine.numerics.statistic_laws import _law_at, _power_law
    p = 0.1
    size = 1 << int(math.ceil(math.log2(24 * math.sqrt(n * p * (1 - p)) + 120)))
    s = np.arange(int(n * p) - 40, int(n * p) + 40)
    got, ref = _law_at(np.array([1 - p, p]), n, p, size, s), stats.binom.pmf(s, n, p)
    assert np.max(np.abs(got - ref)) < 1e-13 * ref.max()
    j = np.arange(5)
    clamped = np.append(stats.poisson.pmf(j, 3.0), stats.poisson.sf(4, 3.0))
    two_atoms = np.array([0.5, 1e-9, 1e-9, 1e-9, 1e-9, 0.5 - 4e-9])
    for rec in (clamped, two_atoms):
        mu = float(rec @ np.arange(rec.size))
        sd = math.sqrt(float(rec @ (np.arange(rec.size) - mu) ** 2) * n)
        size = 1 << int(math.ceil(math.log2(24 * sd + 120)))
        s = np.arange(math.floor(n * mu) - 40, math.floor(n * mu) + 40)
        full = _power_law(rec, n, mu, size)
        assert np.max(np.abs(_law_at(rec, n, mu, size, s) - full[s % size])) < 1e-9 * full.max()


def test_law_at_wide_window_uses_the_sparse_inverse_fft_and_agrees():
    """A window wider than the direct sum pays for (small epsilon) goes through one inverse FFT of the
    sparse spectrum; both branches give the Binomial pmf to 1e-13 of its peak."""
    from engine.numerics.statistic_laws import _law_at
    n, p = 10**6, 0.1
    size = 1 << int(math.ceil(math.log2(24 * math.sqrt(n * p * (1 - p)) + 120)))
    wide = np.arange(int(n * p) - 1500, int(n * p) + 1500)
    ref = stats.binom.pmf(wide, n, p)
    assert np.max(np.abs(_law_at(np.array([1 - p, p]), n, p, size, wide) - ref)) < 1e-13 * ref.max()
