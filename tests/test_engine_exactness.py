"""DA-MCMC, ABC rejection and the closed form against the exact private posterior (tier b).

For an integer statistic the private posterior is a finite mixture of conjugate posteriors,
p(theta | s_dp) = sum_s w_s p(theta | s) with w_s ∝ m(s) eta(s_dp | s) (engine/exact.py). The
tests below

1. rebuild those weights here by brute force from scipy's own distributions (beta-binomial and
   negative-binomial prior predictives, every composition of n for the Dirichlet model) and
   require ``engine.exact_mixture`` to agree to rounding (deterministic);
2. check Gong (2020)'s closed form for the privatized Poisson count against direct summation and
   against the engine's mixture;
3. compare draws from da_mcmc, abc_rejection and exact with the mixture: the mean within
   Z * MCSE (MCSE = sd / sqrt(ESS); ESS = arviz's bulk ESS for MCMC and the number of draws for
   the i.i.d. methods), the empirical CDF at the exact 0.1 / 0.5 / 0.9 quantiles within
   Z * sqrt(q (1 - q) / ESS_q) (ESS_q = arviz's quantile ESS), and a Kolmogorov-Smirnov test
   against the exact CDF (MCMC draws thinned to about one draw per effective sample first).

Familywise reasoning for Z = 4: a two-sided normal tail beyond 4 sd has probability 6.3e-5. The
module makes about 340 such comparisons (14 scenarios with 1 or 3 parameters, 3 samplers, mean +
3 quantiles + KS, plus the custom model), so a correct engine fails one of them with probability
about 2% (union bound), while a bias of a few MCSE in any scenario is caught. KS uses the same per-test level. Seeds are fixed,
so the outcome is reproducible; a failure is a finding to explain, never a reason to widen Z.
"""
from __future__ import annotations

import functools
import itertools
import math
import warnings

import numpy as np
import pytest
from scipy import integrate, optimize, special, stats

import engine
from engine.methods.abc_rejection import abc_rejection
from engine.methods.da_mcmc import da_mcmc
from engine.methods.exact import _DMDistribution

Z = 4.0
ALPHA = 2 * stats.norm.sf(Z)  # the same per-test level for KS
QUANTILES = (0.1, 0.5, 0.9)


def _arviz():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        import arviz as az
    return az


def problem_of(model: dict, mechanism: dict, s_dp) -> engine.Problem:
    return engine.prepare({"model": model, "mechanism": mechanism, "data": {"s_dp": list(s_dp)}})


# (id, model table, mechanism table, s_dp)
BB = {"name": "beta_binomial", "n": 30, "a": 2.0, "b": 3.0}
PG = {"name": "poisson_gamma", "n": 5, "alpha": 3.0, "beta": 1.0}
DM = {"name": "dirichlet_multinomial", "n": 12, "alpha": [1.0, 2.0, 1.5]}
CASES = [
    ("bb-laplace", BB, {"name": "laplace", "epsilon": 0.5}, [12.7]),
    ("bb-discrete_laplace", BB, {"name": "discrete_laplace", "epsilon": 0.5}, [12]),
    ("bb-gaussian", BB, {"name": "gaussian", "sigma": 3.0}, [12.7]),
    ("bb-discrete_gaussian", BB, {"name": "discrete_gaussian", "sigma": 3.0}, [12]),
    ("bb-randomized_response", BB, {"name": "randomized_response", "epsilon": 1.0}, [12]),
    ("pg-laplace", PG, {"name": "laplace", "epsilon": 0.5}, [14.2]),
    ("pg-discrete_laplace", PG, {"name": "discrete_laplace", "epsilon": 0.5}, [14]),
    ("pg-gaussian", PG, {"name": "gaussian", "sigma": 2.0}, [14.2]),
    ("pg-discrete_gaussian", PG, {"name": "discrete_gaussian", "sigma": 2.0}, [14]),
    ("dm-laplace", DM, {"name": "laplace", "epsilon": 1.0}, [3.3, 5.2, 2.9]),
    ("dm-discrete_laplace", DM, {"name": "discrete_laplace", "epsilon": 1.0}, [3, 5, 3]),
    ("dm-gaussian", DM, {"name": "gaussian", "sigma": 1.5}, [3.3, 5.2, 2.9]),
    ("dm-discrete_gaussian", DM, {"name": "discrete_gaussian", "sigma": 1.5}, [3, 5, 3]),
    # Gong (2020): one privatized count, Gamma(25, 1) prior, Laplace noise at epsilon = 0.2
    ("gong", {"name": "poisson_gamma", "n": 1, "alpha": 25.0, "beta": 1.0}, {"name": "laplace", "epsilon": 0.2},
     [37.4]),
]
CASE_IDS = [c[0] for c in CASES]
CASE_BY_ID = {c[0]: c for c in CASES}


# --------------------------------------------------------------------------- brute-force reference
def _reference_log_noise(mech, r):
    """log eta(r) from first principles (scipy / direct sums), not from the engine."""
    r = np.asarray(r, float)
    b = mech.scale
    if mech.name == "laplace":
        return stats.laplace.logpdf(r, scale=b)
    if mech.name == "gaussian":
        return stats.norm.logpdf(r, scale=b)
    if mech.name == "discrete_laplace":
        q = math.exp(-1 / b)
        return -np.abs(r) / b + math.log((1 - q) / (1 + q))
    if mech.name == "discrete_gaussian":
        k = np.arange(-int(60 * b) - 60, int(60 * b) + 61, dtype=float)
        return -(r**2) / (2 * b**2) - special.logsumexp(-(k**2) / (2 * b**2))
    raise AssertionError(mech.name)


class ReferenceMixture:
    """Marginal posterior of parameter j as a weighted list of scipy components."""

    def __init__(self, weights, components):
        self.weights = np.asarray(weights) / np.sum(weights)
        self.components = components  # list of frozen scipy distributions

    def mean(self):
        return float(sum(w * d.mean() for w, d in zip(self.weights, self.components)))

    def cdf(self, x):
        return sum(w * d.cdf(x) for w, d in zip(self.weights, self.components))


def reference_marginals(problem) -> list[ReferenceMixture]:
    model, mech, s_dp = problem.model, problem.mechanism, problem.s_dp
    if model.name == "beta_binomial":
        s = np.arange(model.n + 1)
        lw = stats.betabinom.logpmf(s, model.n, model.a, model.b)
        if mech.name == "randomized_response":
            q = mech.Q
            lik = [np.convolve(stats.binom.pmf(np.arange(si + 1), si, q[1, 1]),
                               stats.binom.pmf(np.arange(model.n - si + 1), model.n - si, q[0, 1]))[int(s_dp[0])]
                   for si in s]
            lw = lw + np.log(lik)
        else:
            lw = lw + _reference_log_noise(mech, s_dp[0] - s)
        w = np.exp(lw - lw.max())
        return [ReferenceMixture(w, [stats.beta(model.a + si, model.b + model.n - si) for si in s])]
    if model.name == "poisson_gamma":
        # s = sum of n Poisson(lam) records, lam ~ Gamma(alpha, beta): s ~ NegBin(alpha, beta / (beta + n))
        prior_predictive = stats.nbinom(model.alpha, model.beta / (model.beta + model.n))
        top = int(s_dp[0] + 60 * mech.noise_sd + 60 * prior_predictive.std() + 10 * prior_predictive.mean() + 100)
        s = np.arange(top + 1)
        lw = prior_predictive.logpmf(s) + _reference_log_noise(mech, s_dp[0] - s)
        w = np.exp(lw - lw.max())
        keep = w > 1e-18
        return [ReferenceMixture(w[keep], [stats.gamma(model.alpha + si, scale=1 / (model.beta + model.n))
                                           for si in s[keep]])]
    # Dirichlet-multinomial: every composition c of n into k cells
    alpha, n, k = np.asarray(model.alpha), model.n, model.k
    comps = np.array([c for c in itertools.product(range(n + 1), repeat=k - 1) if sum(c) <= n])
    comps = np.column_stack([comps, n - comps.sum(axis=1)])
    lw = np.array([stats.dirichlet_multinomial.logpmf(c, alpha, n) for c in comps])
    lw = lw + _reference_log_noise(mech, s_dp[None, :] - comps).sum(axis=1)
    w = np.exp(lw - lw.max())
    a0 = alpha.sum()
    return [ReferenceMixture(w, [stats.beta(alpha[j] + c[j], a0 + n - alpha[j] - c[j]) for c in comps])
            for j in range(k)]


def exact_marginal_cdf(problem, mix, j):
    """The engine's exact marginal CDF of parameter j."""
    if isinstance(mix, _DMDistribution):
        cj, w = mix.marginal(j)
        m = problem.model
        a = m.alpha[j] + cj
        b = sum(m.alpha) + m.n - a
        return lambda x: np.sum(w[:, None] * stats.beta.cdf(np.atleast_1d(x)[None, :], a[:, None], b[:, None]), axis=0)
    return lambda x: mix.cdf(j, np.atleast_1d(np.asarray(x, float)))


def exact_marginal_mean(problem, mix, j):
    if isinstance(mix, _DMDistribution):
        cj, w = mix.marginal(j)
        m = problem.model
        return float(np.dot(w, (m.alpha[j] + cj) / (sum(m.alpha) + m.n)))
    return float(mix.posterior_mean()[j])


def exact_quantile(cdf, q, lo, hi):
    return optimize.brentq(lambda t: cdf(t)[0] - q, lo, hi, xtol=1e-12)


# --------------------------------------------------------------------------- deterministic checks
@pytest.mark.parametrize("case", CASE_IDS)
def test_exact_mixture_matches_brute_force(case):
    _, model, mech, s_dp = CASE_BY_ID[case]
    problem = problem_of(model, mech, s_dp)
    mix = engine.exact_mixture(problem)
    for j, ref in enumerate(reference_marginals(problem)):
        assert exact_marginal_mean(problem, mix, j) == pytest.approx(ref.mean(), rel=1e-9)
        cdf = exact_marginal_cdf(problem, mix, j)
        points = np.quantile(np.concatenate([d.ppf([0.05, 0.5, 0.95]) for d in ref.components[::7]]),
                             [0.1, 0.3, 0.5, 0.7, 0.9])
        for x in points:
            assert cdf(x)[0] == pytest.approx(ref.cdf(x), abs=1e-10)
        if not isinstance(mix, _DMDistribution):
            for q in QUANTILES:
                ref_q = optimize.brentq(lambda t: ref.cdf(t) - q, 0.0, 1e3, xtol=1e-13)
                assert mix.quantile(j, q) == pytest.approx(ref_q, rel=1e-8)


@pytest.mark.parametrize("sigma", [1.0, 0.5, 0.3, 0.1])
@pytest.mark.parametrize("s_dp", [[-50, 5, 60], [-5, 5, 20]])
def test_dirichlet_exact_with_release_outside_the_simplex(sigma, s_dp):
    """Gaussian noise has full support, so any release has a well-defined posterior; for
    n = 10 it is a mixture over 66 count vectors that brute force enumerates in log space."""
    problem = problem_of({"name": "dirichlet_multinomial", "n": 10, "alpha": [1.0, 1.0, 1.0]},
                         {"name": "gaussian", "sigma": sigma}, s_dp)
    mix = engine.exact_mixture(problem)
    for j, ref in enumerate(reference_marginals(problem)):
        assert exact_marginal_mean(problem, mix, j) == pytest.approx(ref.mean(), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("case", CASE_IDS)
def test_exact_density_integrates_to_one(case):
    _, model, mech, s_dp = CASE_BY_ID[case]
    problem = problem_of(model, mech, s_dp)
    result = engine.run_method(problem, {"name": "exact", "chains": 1, "draws": 10}, 0)
    assert set(result.density) == set(result.param_names)
    for name, (grid, dens) in result.density.items():
        assert np.all(np.isfinite(dens)) and np.all(dens >= 0)
        assert np.all(np.diff(grid) > 0)
        # the grid spans the central 1 - 2e-5 of the mass. The values are cell averages at cell
        # centres, so the midpoint rule is exact for them; the trapezoid rule over the centres
        # drops half a cell at each end, negligible here because these posteriors vanish at the ends
        assert np.sum(dens) * (grid[1] - grid[0]) == pytest.approx(1.0, abs=1e-3), name
        assert np.trapezoid(dens, grid) == pytest.approx(1.0, abs=1e-3), name


def _gong_log_unnormalised(theta, alpha, beta, eps, s_dp):
    """Gong (2020): pi(theta | s_dp) ∝ theta^(alpha-1) e^{-(beta+1) theta}
    [Gamma(c, theta_eps^+)/Gamma(c) e^{theta_eps^+ - eps s_dp} + gamma(c, theta_eps^-)/Gamma(c) e^{theta_eps^- + eps s_dp}],
    c = ceil(s_dp), theta_eps^+ = theta e^eps, theta_eps^- = theta e^-eps (derived in the test below)."""
    c = math.ceil(s_dp)
    tp, tm = theta * math.exp(eps), theta * math.exp(-eps)
    upper = np.log(special.gammaincc(c, tp)) + tp - eps * s_dp
    lower = np.log(special.gammainc(c, tm)) + tm + eps * s_dp
    return (alpha - 1) * np.log(theta) - (beta + 1) * theta + np.logaddexp(upper, lower)


def test_gong_closed_form():
    r"""Gong (2020)'s privatized count: s | theta ~ Pois(theta), s_dp = s + Lap(1/eps), theta ~ Gamma(alpha, beta).

    Derivation of theta_eps^±. With c = ceil(s_dp), the Laplace likelihood splits at s_dp:

        sum_{s >= c} e^{-theta} theta^s / s! e^{-eps (s - s_dp)}
            = e^{-theta} e^{eps s_dp} sum_{s >= c} (theta e^{-eps})^s / s!
            = e^{-theta} e^{eps s_dp} e^{theta e^{-eps}} P(Pois(theta e^{-eps}) >= c)
            = e^{-theta} e^{theta_eps^- + eps s_dp} gamma(c, theta_eps^-) / Gamma(c),

        sum_{s < c} e^{-theta} theta^s / s! e^{-eps (s_dp - s)}
            = e^{-theta} e^{-eps s_dp} e^{theta e^{eps}} P(Pois(theta e^{eps}) <= c - 1)
            = e^{-theta} e^{theta_eps^+ - eps s_dp} Gamma(c, theta_eps^+) / Gamma(c),

    using P(Pois(m) >= c) = gamma(c, m)/Gamma(c) (regularised lower incomplete gamma) and
    P(Pois(m) <= c - 1) = Gamma(c, m)/Gamma(c). So theta_eps^+ = theta e^{eps},
    theta_eps^- = theta e^{-eps}, and multiplying by the prior theta^{alpha-1} e^{-beta theta}
    gives the slide's formula (the e^{-theta} joins e^{-beta theta}).

    Step 1 checks that identity against direct summation over s; step 2 compares the normalised
    closed form with the engine's exact mixture (its density built from the mixture components,
    its CDF, and the grid density that ``exact`` reports).
    """
    alpha, beta, eps, s_dp = 25.0, 1.0, 0.2, 37.4
    theta = np.linspace(2.0, 90.0, 300)
    # step 1: the bracket equals the likelihood summed over s (up to the Laplace constant eps/2)
    s = np.arange(0, 2000)
    direct = special.logsumexp(stats.poisson.logpmf(s[None, :], theta[:, None]) - eps * np.abs(s_dp - s[None, :]), axis=1)
    bracket = _gong_log_unnormalised(theta, alpha, beta, eps, s_dp) - ((alpha - 1) * np.log(theta) - beta * theta)
    np.testing.assert_allclose(bracket, direct, rtol=1e-10, atol=1e-10)

    # step 2: the engine's exact posterior is the normalised closed form
    problem = problem_of({"name": "poisson_gamma", "n": 1, "alpha": alpha, "beta": beta},
                         {"name": "laplace", "epsilon": eps}, [s_dp])
    log_z = math.log(integrate.quad(lambda t: math.exp(_gong_log_unnormalised(t, alpha, beta, eps, s_dp) - 100.0),
                                    0.0, 200.0, limit=200, epsabs=0, epsrel=1e-12)[0]) + 100.0
    gong_pdf = lambda t: np.exp(_gong_log_unnormalised(np.asarray(t, float), alpha, beta, eps, s_dp) - log_z)  # noqa: E731
    mix = engine.exact_mixture(problem)
    w, shape, rate = mix.marginal_components(0)
    engine_pdf = np.sum(w[:, None] * stats.gamma.pdf(theta[None, :], shape[:, None], scale=1 / rate[:, None]), axis=0)
    np.testing.assert_allclose(engine_pdf, gong_pdf(theta), rtol=1e-8, atol=1e-14)
    for x in (15.0, 25.0, 30.0, 40.0):
        gong_cdf = integrate.quad(gong_pdf, 0.0, x, epsabs=1e-13, epsrel=1e-12, limit=200)[0]
        assert mix.cdf(0, np.array([x]))[0] == pytest.approx(gong_cdf, abs=1e-9)
    mean = integrate.quad(lambda t: t * gong_pdf(t), 0, 200, epsabs=1e-12, epsrel=1e-12, limit=200)[0]
    assert mix.posterior_mean()[0] == pytest.approx(mean, rel=1e-9)
    grid, dens = engine.run_method(problem, {"name": "exact", "chains": 1, "draws": 10}, 0).density["lam"]
    # the reported density (pointwise or cell-averaged) is the closed form to within 1e-4 of its peak
    peak = gong_pdf(grid).max()
    np.testing.assert_allclose(dens, gong_pdf(grid), atol=1e-4 * peak)


# --------------------------------------------------------------------------- statistical checks
@functools.lru_cache(maxsize=None)
def _runs(case: str):
    _, model, mech, s_dp = CASE_BY_ID[case]
    problem = problem_of(model, mech, s_dp)
    seed = 1000 + CASE_IDS.index(case)
    return problem, {
        "da_mcmc": engine.run_method(problem, {"name": "da_mcmc", "chains": 4, "draws": 2500, "warmup": 500}, seed),
        "abc_rejection": engine.run_method(problem, {"name": "abc_rejection", "chains": 1, "draws": 5000}, seed),
        "exact": engine.run_method(problem, {"name": "exact", "chains": 1, "draws": 5000}, seed),
    }


def _check_against_exact(problem, result, mcmc: bool):
    az = _arviz()
    mix = engine.exact_mixture(problem)
    summ = engine.summary(result)
    failures = []
    for j, name in enumerate(result.param_names):
        x = result.draws[:, :, j]
        flat = x.reshape(-1)
        assert np.all(np.isfinite(flat))
        cdf = exact_marginal_cdf(problem, mix, j)
        # mean within Z MCSE
        ess = float(summ.loc[name, "ess_bulk"]) if mcmc else flat.size
        mcse = flat.std(ddof=1) / math.sqrt(ess)
        target = exact_marginal_mean(problem, mix, j)
        if abs(flat.mean() - target) > Z * mcse:
            failures.append(f"{name}: mean {flat.mean():.5g} vs exact {target:.5g} "
                            f"({(flat.mean() - target) / mcse:+.1f} MCSE)")
        # quantiles: P(theta <= exact q-quantile) estimated from the draws, within Z of its MCSE
        hi = 4.0 * max(1.0, float(flat.max()))  # parameters are >= 0; the CDF is 1 well before hi
        for q in QUANTILES:
            xq = exact_quantile(cdf, q, 0.0, hi)
            ind = (x <= xq).astype(float)
            ess_q = float(az.ess(x, method="quantile", prob=q)) if mcmc else flat.size
            se = math.sqrt(q * (1 - q) / ess_q)
            if abs(ind.mean() - q) > Z * se:
                failures.append(f"{name}: P(theta <= exact q{q}) = {ind.mean():.4f} vs {q} "
                                f"({(ind.mean() - q) / se:+.1f} se)")
        # KS on (nearly) independent draws
        if mcmc:
            ess_min = min(float(summ.loc[name, "ess_bulk"]), float(summ.loc[name, "ess_tail"]))
            thin = max(1, math.ceil(flat.size / ess_min))
            sample = x[:, ::thin].reshape(-1)
        else:
            sample = flat
        p = stats.kstest(sample, cdf).pvalue
        if p < ALPHA:
            failures.append(f"{name}: KS p = {p:.2g} on {sample.size} draws")
    return failures


@pytest.mark.parametrize("case", CASE_IDS)
def test_da_mcmc_matches_exact(case):
    problem, runs = _runs(case)
    failures = _check_against_exact(problem, runs["da_mcmc"], mcmc=True)
    assert not failures, f"{case}: " + "; ".join(failures)


@pytest.mark.parametrize("case", CASE_IDS)
def test_abc_rejection_matches_exact(case):
    problem, runs = _runs(case)
    result = runs["abc_rejection"]
    assert result.info["stopped_by"] == "draws" and result.n_draws == 5000
    failures = _check_against_exact(problem, result, mcmc=False)
    assert not failures, f"{case}: " + "; ".join(failures)


@pytest.mark.parametrize("case", CASE_IDS)
def test_exact_draws_match_exact(case):
    problem, runs = _runs(case)
    failures = _check_against_exact(problem, runs["exact"], mcmc=False)
    assert not failures, f"{case}: " + "; ".join(failures)


@pytest.mark.parametrize("case", ["dm-laplace", "dm-discrete_gaussian"])
def test_dirichlet_exact_count_draws_match_brute_force(case):
    """The sequential-conditioning draws of the cell counts c against the enumerated distribution."""
    _, model, mech, s_dp = CASE_BY_ID[case]
    problem = problem_of(model, mech, s_dp)
    dist = _DMDistribution(problem)
    counts = dist.sample_counts(np.random.default_rng(9), 40_000).astype(int)
    assert np.all(counts.sum(axis=1) == problem.model.n) and np.all(counts >= 0)
    n, alpha = problem.model.n, np.asarray(problem.model.alpha)
    comps = [c for c in itertools.product(range(n + 1), repeat=3) if sum(c) == n]
    lw = np.array([stats.dirichlet_multinomial.logpmf(c, alpha, n) for c in comps])
    lw = lw + _reference_log_noise(problem.mechanism, problem.s_dp[None, :] - np.array(comps)).sum(axis=1)
    p = np.exp(lw - special.logsumexp(lw))
    index = {c: i for i, c in enumerate(comps)}
    obs = np.bincount([index[tuple(c)] for c in counts], minlength=len(comps)).astype(float)
    big = p * counts.shape[0] >= 10
    obs_cells = np.append(obs[big], obs[~big].sum())
    exp_cells = np.append(p[big], p[~big].sum()) * counts.shape[0]
    res = stats.chisquare(obs_cells, exp_cells)
    assert res.pvalue > ALPHA, f"chi-square p = {res.pvalue:.2g}"


# --------------------------------------------------------------------------- the Python path
def _hand_beta_bernoulli(n, a, b, eps):
    return engine.CustomModel(
        n=n, param_names=("theta",),
        latent_sampler=lambda rng, th, size: (rng.random(size) < th[0]).astype(np.int64),
        posterior_sampler=lambda rng, x, th: np.array([rng.beta(a + x.sum(), b + x.size - x.sum())]),
        record_statistic=lambda x: np.asarray(x, float).reshape(-1, 1),
        init_theta=(0.5,),
        log_mechanism=lambda s_dp, s: -eps * abs(float(s_dp[0]) - float(s[0])),
        prior_sampler=lambda rng, size: rng.beta(a, b, size),
        epsilon=eps,
    )


def test_custom_model_python_path_matches_exact():
    """A Beta-Bernoulli model written by hand runs the pure-Python Algorithm 1; its draws must match
    the closed form of the built-in model (same prior, mechanism and release)."""
    n, a, b, eps, s_dp = 20, 2.0, 3.0, 0.6, [8.6]
    reference = problem_of({"name": "beta_binomial", "n": n, "a": a, "b": b}, {"name": "laplace", "epsilon": eps}, s_dp)
    custom = engine.Problem(model=_hand_beta_bernoulli(n, a, b, eps), mechanism=None, s_dp=np.array(s_dp))
    result = da_mcmc(custom, np.random.default_rng(77), chains=2, draws=2500, warmup=300)
    assert result.info["compiled"] is False
    assert result.info["epsilon_bound"] == pytest.approx(math.exp(-eps))
    assert np.all(result.sample_stats["acceptance_rate"] >= math.exp(-eps) * (1 - 1e-12))
    failures = _check_against_exact(reference, result, mcmc=True)
    assert not failures, "; ".join(failures)
    abc = abc_rejection(engine.Problem(model=custom.model, mechanism=reference.mechanism, s_dp=np.array(s_dp)),
                        np.random.default_rng(78), draws=3000)
    failures = _check_against_exact(reference, abc, mcmc=False)
    assert not failures, "abc: " + "; ".join(failures)


# --------------------------------------------------------------------------- naive is wrong
def test_naive_is_overconfident_and_biased():
    """Bernstein & Sheldon (2018), Sec. 5: treating s_dp as exact ignores the noise. With n = 30,
    Laplace epsilon = 0.3 (noise sd 4.7 counts) and s_dp = -10 the naive posterior Beta(1, 31)
    (s_dp clipped to 0) is far narrower than the exact one and puts the exact posterior mean in
    its own far tail."""
    problem = problem_of({"name": "beta_binomial", "n": 30, "a": 1.0, "b": 1.0}, {"name": "laplace", "epsilon": 0.3},
                         [-10.0])
    naive = engine.run_method(problem, {"name": "naive", "chains": 1, "draws": 4000}, 3).flat("theta")
    mix = engine.exact_mixture(problem)
    w, a, b = mix.marginal_components(0)
    exact_mean = float(mix.posterior_mean()[0])
    exact_sd = math.sqrt(float(np.dot(w, a * (a + 1) / ((a + b) * (a + b + 1)))) - exact_mean**2)
    naive_sd = naive.std(ddof=1)
    # overconfident: naive sd below half the exact sd (the margin dwarfs the 1% Monte Carlo error of naive_sd)
    assert naive_sd < 0.5 * exact_sd, (naive_sd, exact_sd)
    # biased: the exact mean sits more than 2.5 naive sds above the naive mean
    assert (exact_mean - naive.mean()) / naive_sd > 2.5, (naive.mean(), exact_mean, naive_sd)
    # and naive's central 90% interval holds much less than 90% of the exact posterior
    lo, hi = np.quantile(naive, [0.05, 0.95])
    covered = float(mix.cdf(0, np.array([hi]))[0] - mix.cdf(0, np.array([lo]))[0])
    assert covered < 0.6, covered
