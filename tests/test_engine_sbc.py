"""Simulation-based calibration of DA-MCMC where no closed form exists (tier c).

Talts et al. (2018): draw theta ~ prior, records x ~ f(. | theta), a release s_dp ~ eta(. | s(x)),
then L posterior draws given s_dp. If the sampler targets p(theta | s_dp), the rank of theta among
the L draws is uniform on {0, ..., L}. Here L = 99 (a 990-iteration chain thinned by 10, or 495 by
5 for the slower Python path), the ranks fall into 10 bins of 10 values each and a chi-square test
on the bin counts must give p > 0.001 (two models, three scenarios, so a calibrated sampler fails
with probability about 0.3%; seeds are fixed). A negative control runs the same machinery on the
naive posterior, which ignores the noise, and must fail it: the test can tell.
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import engine
from engine.methods.da_mcmc import da_mcmc
from engine.mechanisms import make_mechanism
from engine.models import make_model

LEVEL = 1e-3
BINS = 10
L = 99  # posterior draws per replicate -> ranks 0..99, 10 per bin


def _ranks(reps, seed, simulate, posterior_draws):
    """Rank of the true theta among L posterior draws, for ``reps`` independent replicates."""
    ranks = []
    for child in np.random.SeedSequence(seed).spawn(reps):
        rng = np.random.default_rng(child)
        theta, s_dp = simulate(rng)
        draws = posterior_draws(s_dp, rng)
        assert draws.shape == (L,)
        ranks.append(int(np.sum(draws < theta)))
    return np.asarray(ranks)


def _uniformity_pvalue(ranks):
    counts = np.bincount(ranks * BINS // (L + 1), minlength=BINS)
    return stats.chisquare(counts).pvalue, counts


def _builtin_sbc(model, mech, reps, seed, method="da_mcmc"):
    def simulate(rng):
        theta = model.sample_prior(rng, 1)[0]
        return float(theta[0]), mech.sample(rng, model.statistic(model.sample_records(rng, theta)))

    def posterior_draws(s_dp, rng):
        problem = engine.Problem(model=model, mechanism=mech, s_dp=s_dp)
        if method == "naive":
            return engine.run_method(problem, {"name": "naive", "chains": 1, "draws": L}, int(rng.integers(2**31))).flat(
                model.param_names[0])
        result = da_mcmc(problem, rng, chains=1, draws=10 * L, warmup=200)
        return result.draws[0, 9::10, 0]

    return _ranks(reps, seed, simulate, posterior_draws)


# A tight clamp ([-1, 1] against a N(0, 1.5^2) prior and unit record sd) so that clamping shapes the
# posterior: with a wide clamp the test could not tell a sampler that ignored it.
NORMAL = make_model("normal_known_sd", {"n": 10, "sd": 1.0, "lo": -1.0, "hi": 1.0, "prior_mean": 0.0, "prior_sd": 1.5})
SENSITIVITY = 2.0  # hi - lo


@pytest.mark.parametrize("mech", [
    make_mechanism("laplace", {"epsilon": 2.0}, default_sensitivity=SENSITIVITY),
    make_mechanism("gaussian", {"rho": 1.0}, default_sensitivity=SENSITIVITY),
], ids=["laplace", "gaussian"])
def test_sbc_normal_known_sd(mech):
    """Clamped-sum normal model: no finite-mixture posterior, so calibration is the check."""
    ranks = _builtin_sbc(NORMAL, mech, reps=400, seed=2024)
    p, counts = _uniformity_pvalue(ranks)
    assert p > LEVEL, f"{mech.name}: rank counts {counts.tolist()}, chi-square p = {p:.2g}"


def test_sbc_detects_a_miscalibrated_posterior():
    """Negative control: the naive posterior (s_dp taken as the exact sum) is overconfident; the same
    SBC must reject it, so a pass above means something."""
    mech = make_mechanism("laplace", {"epsilon": 2.0}, default_sensitivity=SENSITIVITY)
    ranks = _builtin_sbc(NORMAL, mech, reps=400, seed=2024, method="naive")
    p, counts = _uniformity_pvalue(ranks)
    assert p < LEVEL, f"naive passed SBC: rank counts {counts.tolist()}, p = {p:.2g}"


def test_sbc_custom_model():
    """A Beta-Bernoulli model given as plain callables (engine.CustomModel) with Laplace noise,
    run by the pure-Python Algorithm 1."""
    n, a, b, eps = 10, 2.0, 2.0, 1.0
    model = engine.CustomModel(
        n=n, param_names=("theta",),
        latent_sampler=lambda rng, th, size: (rng.random(size) < th[0]).astype(np.int64),
        posterior_sampler=lambda rng, x, th: np.array([rng.beta(a + x.sum(), b + x.size - x.sum())]),
        record_statistic=lambda x: np.asarray(x, float).reshape(-1, 1),
        init_theta=(0.5,),
        log_mechanism=lambda s_dp, s: -eps * abs(float(s_dp[0]) - float(s[0])),
        epsilon=eps,
    )

    def simulate(rng):
        theta = rng.beta(a, b)
        s = float(np.sum(rng.random(n) < theta))
        return theta, np.array([s + rng.laplace(0.0, 1.0 / eps)])

    def posterior_draws(s_dp, rng):
        result = da_mcmc(engine.Problem(model=model, mechanism=None, s_dp=s_dp), rng, chains=1, draws=5 * L, warmup=50)
        return result.draws[0, 4::5, 0]

    ranks = _ranks(200, 7, simulate, posterior_draws)
    p, counts = _uniformity_pvalue(ranks)
    assert p > LEVEL, f"custom Beta-Bernoulli: rank counts {counts.tolist()}, chi-square p = {p:.2g}"


def _sbc_with_privatize(model, mech, reps, seed, param_index=0):
    """SBC where the release comes from engine.privatize (per-record randomized response included)."""
    def simulate(rng):
        theta = model.sample_prior(rng, 1)[0]
        return float(theta[param_index]), engine.privatize(model, mech, model.sample_records(rng, theta), rng)

    def posterior_draws(s_dp, rng):
        problem = engine.Problem(model=model, mechanism=mech, s_dp=s_dp)
        result = da_mcmc(problem, rng, chains=1, draws=10 * L, warmup=200)
        return result.draws[0, 9::10, param_index]

    return _ranks(reps, seed, simulate, posterior_draws)


def test_sbc_clamped_poisson():
    """poisson_gamma with a clamp: the released sum of min(x_i, upper) has no finite-mixture posterior.
    A low clamp (upper = 2 against a Gamma(4, 1) prior on lam) makes clamping matter."""
    model = make_model("poisson_gamma", {"n": 8, "alpha": 4.0, "beta": 1.0, "upper": 2})
    mech = make_mechanism("discrete_laplace", {"epsilon": 1.0}, default_sensitivity=2.0)
    p, counts = _uniformity_pvalue(_sbc_with_privatize(model, mech, reps=300, seed=31))
    assert p > LEVEL, f"clamped poisson: rank counts {counts.tolist()}, chi-square p = {p:.2g}"


@pytest.mark.parametrize("params", [{"epsilon": 1.0}, {"scheme": "coin", "truth_prob": 0.5}], ids=["k_ary", "coin"])
def test_sbc_dirichlet_randomized_response(params):
    """Per-record randomized response on four categories (the admissions-table mechanism): no closed
    form here, so calibration of p[0] and p[3] is the check."""
    model = make_model("dirichlet_multinomial", {"n": 12, "alpha": [1.0, 2.0, 1.0, 2.0]})
    mech = make_mechanism("randomized_response", params, k=4)
    for j, seed in ((0, 41), (3, 43)):
        p, counts = _uniformity_pvalue(_sbc_with_privatize(model, mech, reps=250, seed=seed, param_index=j))
        assert p > LEVEL, f"RR {params} p[{j}]: rank counts {counts.tolist()}, chi-square p = {p:.2g}"
