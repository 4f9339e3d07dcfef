"""bernstein_sheldon: the APPROXIMATE Gibbs sampler on sufficient statistics (Bernstein & Sheldon 2018).

What is shown:

* its pieces are exact: the truncated-normal draw (KS against scipy's truncnorm, tails included)
  and the clamped records' moments (against direct sums / quadrature);
* at large n it matches the exact posterior (mean and sd within Monte Carlo error plus the
  CLT's first Edgeworth term, derived below);
* calibration (paper 003, Sec. 4: posterior quantiles of the true theta over replicates, KS against
  Uniform(0, 1), :mod:`engine.studies.calibration`): calibrated where the CLT holds (the paper's
  n = 1000, epsilon = 0.1, Beta(2, 2); and a near-boundary Beta(0.5, 5) prior at n = 1000) and
  visibly MIScalibrated where it does not (the same prior at n = 10), while the exact sampler is
  calibrated in every cell, so the failure is the approximation's, not the test's;
* the clamped Poisson (bivariate CLT, Algorithm 2 adapted) and the clipped normal model are
  calibrated at n = 1000;
* errors, reproducibility, progress and cancellation, the cost estimate.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

import engine
from engine.cost import estimate_cost
from engine.methods.bernstein_sheldon import record_moments, truncated_normal
from engine.numerics.diagnostics import summary
from engine.studies.calibration import calibration_study, calibration_summary
from engine.studies.runner import InlineExecutor

BS = {"name": "bernstein_sheldon", "chains": 4, "draws": 2000, "warmup": 500}


def _problem(model, mechanism, s_dp):
    return engine.prepare({"seed": 1, "model": model, "mechanism": mechanism, "data": {"s_dp": s_dp}})


# --------------------------------------------------------------------------- exact pieces
@pytest.mark.parametrize("mean,sd,lo,hi", [(0.0, 1.0, -1.0, 0.5), (0.0, 1.0, 5.0, np.inf), (0.0, 1.0, 3.0, 3.2),
                                           (0.0, 1.0, -np.inf, -4.0), (2.0, 3.0, 0.0, 40.0), (0.0, 1.0, 0.2, 4.0),
                                           (0.0, 1.0, -0.2, 0.3)])
def test_truncated_normal_matches_scipy(mean, sd, lo, hi):
    rng = np.random.default_rng(7)
    x = np.array([truncated_normal(rng, mean, sd, lo, hi) for _ in range(4000)])
    assert np.all((x >= lo) & (x <= hi))
    ref = stats.truncnorm((lo - mean) / sd, (hi - mean) / sd, loc=mean, scale=sd)
    # independent draws: the KS test has its nominal level; fixed seed
    assert stats.kstest(x, ref.cdf).pvalue > 0.001


@pytest.mark.parametrize("lam,upper", [(3.0, 5), (0.2, 1), (40.0, 30), (200.0, 10_000)])
def test_clamped_poisson_moments(lam, upper):
    out = np.empty(5)
    record_moments(2, lam, np.array([1.0, 1.0, 1.0, float(upper)]), out)
    j = np.arange(0, int(lam + 60 * math.sqrt(lam) + 100))
    p = stats.poisson.pmf(j, lam)
    c = np.minimum(j, upper)
    ec = p @ c
    assert out[0] == pytest.approx(lam) and out[2] == pytest.approx(lam)
    assert out[1] == pytest.approx(ec, rel=1e-9, abs=1e-12)
    assert out[3] == pytest.approx(p @ (j * c) - lam * ec, rel=1e-7, abs=1e-10)
    assert out[4] == pytest.approx(p @ (c * c) - ec**2, rel=1e-7, abs=1e-10)


@pytest.mark.parametrize("mu,sd,lo,hi", [(0.0, 1.0, -3.0, 3.0), (0.5, 1.0, -1.0, 1.0), (4.0, 2.0, -1.0, 1.0)])
def test_clipped_normal_moments(mu, sd, lo, hi):
    out = np.empty(5)
    record_moments(3, mu, np.array([1.0, sd, lo, hi, 0.0, 1.0]), out)
    f = stats.norm(mu, sd).pdf

    def e(g):
        parts = [(-np.inf, lo), (lo, hi), (hi, np.inf)]
        return sum(integrate.quad(lambda x: g(x) * f(x), a, b, epsabs=1e-13, epsrel=1e-11)[0] for a, b in parts)

    clip = lambda x: min(max(x, lo), hi)  # noqa: E731
    ec = e(clip)
    assert out[1] == pytest.approx(ec, abs=1e-8)
    assert out[3] == pytest.approx(e(lambda x: x * clip(x)) - mu * ec, abs=1e-8)
    assert out[4] == pytest.approx(e(lambda x: clip(x) ** 2) - ec**2, abs=1e-8)


# --------------------------------------------------------------------------- large n: close to exact
@pytest.mark.parametrize("model,mechanism,s_dp,theta", [
    ({"name": "beta_binomial", "n": 10_000, "a": 2.0, "b": 2.0}, {"name": "laplace", "epsilon": 0.1}, [3000.0], 0.3),
    ({"name": "poisson_gamma", "n": 1000, "alpha": 2.0, "beta": 1.0}, {"name": "gaussian", "sigma": 20.0}, [3050.0], 3.05),
    ({"name": "poisson_gamma", "n": 2000, "alpha": 2.0, "beta": 1.0}, {"name": "laplace", "epsilon": 0.05}, [5900.0], 2.95),
])
def test_large_n_mean_and_sd_match_exact(model, mechanism, s_dp, theta):
    """Tolerance = Monte Carlo error + the CLT's error, both derived.

    Monte Carlo: the difference of means has sd sqrt(sd^2 / ESS + sd^2 / N_exact) (exact's draws are
    i.i.d.); we allow 4 of those. An sd estimated from ESS effective draws has relative error about
    sqrt(1 / (2 ESS)) (normal approximation), doubled for the difference; 4 of those.
    CLT: the first Edgeworth term of p(s | theta) has relative size |gamma_1| / 6 |He_3(z)| with
    gamma_1 the skewness of s (binomial (1 - 2 theta) / sqrt(n theta (1 - theta)), Poisson
    1 / sqrt(n lam)); over the posterior bulk |z| <= 2, |He_3| <= 2, so the likelihood in theta, and
    hence the posterior mean (in units of sd) and the relative sd, move by at most |gamma_1| / 3.
    """
    problem = _problem(model, mechanism, s_dp)
    ex = engine.run_method(problem, {"name": "exact", "chains": 1, "draws": 20_000}, seed=11)
    bs = engine.run_method(problem, BS, seed=12)
    se, sb = summary(ex), summary(bs)
    assert sb.attrs["convergence"]["converged"]
    m_e, sd_e = se["mean"].iloc[0], se["sd"].iloc[0]
    m_b, sd_b, ess = sb["mean"].iloc[0], sb["sd"].iloc[0], sb["ess_bulk"].iloc[0]
    n = model["n"]
    if model["name"] == "beta_binomial":
        gamma1 = abs(1 - 2 * theta) / math.sqrt(n * theta * (1 - theta))
    else:
        gamma1 = 1 / math.sqrt(n * theta)
    clt = gamma1 / 3
    assert abs(m_b - m_e) <= 4 * sd_e * math.sqrt(1 / ess + 1 / 20_000) + clt * sd_e
    assert abs(sd_b / sd_e - 1) <= 4 * math.sqrt(1 / (2 * ess) + 1 / (2 * 20_000)) + clt


def test_dirichlet_large_n_matches_exact():
    problem = _problem({"name": "dirichlet_multinomial", "n": 1000, "alpha": [1.0, 1.0, 1.0]},
                       {"name": "laplace", "epsilon": 0.1}, [200.0, 300.0, 500.0])
    ex = summary(engine.run_method(problem, {"name": "exact", "chains": 1, "draws": 20_000}, seed=1))
    sb = summary(engine.run_method(problem, BS, seed=2))
    assert sb.attrs["convergence"]["converged"]
    for name in ex.index:
        sd_e, ess = ex.loc[name, "sd"], sb.loc[name, "ess_bulk"]
        p = ex.loc[name, "mean"]
        clt = abs(1 - 2 * p) / math.sqrt(1000 * p * (1 - p)) / 3  # the binomial margin's skewness, as above
        assert abs(sb.loc[name, "mean"] - p) <= 4 * sd_e * math.sqrt(1 / ess + 1 / 20_000) + clt * sd_e
        assert abs(sb.loc[name, "sd"] / sd_e - 1) <= 4 * math.sqrt(1 / (2 * ess) + 1 / 40_000) + clt


# --------------------------------------------------------------------------- calibration (paper 003, Sec. 4)
def _calibration(model, epsilon, replicates, methods, seed):
    spec = {"seed": seed, "model": model, "mechanism": {"name": "laplace", "epsilon": epsilon},
            "data": {"s_dp": [0.0] * (len(model.get("alpha", [0])) if model["name"] == "dirichlet_multinomial" else 1)}}
    tab = calibration_study(spec, methods, replicates, executor=InlineExecutor(), reference=False, mmd_draws=50)
    return calibration_summary(tab).set_index("method")


CAL_METHODS = [{"name": "bernstein_sheldon", "chains": 2, "draws": 1000, "warmup": 300},
               {"name": "exact", "chains": 1, "draws": 1000, "grid_size": 10}]


def test_calibrated_where_the_clt_holds_and_miscalibrated_where_it_does_not():
    """KS of the posterior quantiles of the true theta over M = 200 replicates (critical value at level
    0.01: 1.63 / sqrt(200) = 0.115).

    * paper 003's binomial setting, n = 1000, epsilon = 0.1, Beta(2, 2): calibrated;
    * theta near 0 (Beta(0.5, 5) prior), epsilon = 0.3: at n = 1000 (n theta ~ 90) calibrated, at
      n = 10 (n theta ~ 1: the binomial is discrete and skewed, the normal puts mass where the
      binomial has none) the quantiles are far from uniform (KS ~ 0.2, p < 0.001) and the 90%
      intervals under-cover, while the exact posterior in the same replicates is calibrated.
    """
    paper = _calibration({"name": "beta_binomial", "n": 1000, "a": 2.0, "b": 2.0}, 0.1, 200, CAL_METHODS, 2018)
    large = _calibration({"name": "beta_binomial", "n": 1000, "a": 0.5, "b": 5.0}, 0.3, 200, CAL_METHODS, 3)
    small = _calibration({"name": "beta_binomial", "n": 10, "a": 0.5, "b": 5.0}, 0.3, 200, CAL_METHODS, 3)
    for cell in (paper, large, small):
        assert cell.loc["exact", "ks_pvalue"] > 0.01
    assert paper.loc["bernstein_sheldon", "ks_pvalue"] > 0.01
    assert large.loc["bernstein_sheldon", "ks_pvalue"] > 0.01
    assert small.loc["bernstein_sheldon", "ks_pvalue"] < 1e-3
    assert small.loc["bernstein_sheldon", "ks_stat"] > 2 * small.loc["exact", "ks_stat"]
    assert small.loc["bernstein_sheldon", "coverage_90_hi"] < 0.9  # under-covers: the Wilson interval excludes 90%


@pytest.mark.parametrize("model", [{"name": "poisson_gamma", "n": 1000, "alpha": 3.0, "beta": 1.0, "upper": 4},
                                   {"name": "normal_known_sd", "n": 1000, "sd": 1.0, "lo": -1.0, "hi": 1.0,
                                    "prior_mean": 0.0, "prior_sd": 1.0}])
def test_clamped_models_calibrated_at_large_n(model):
    """No closed form exists (records clamped): the check is calibration alone, M = 150, level 0.01.
    The priors put real mass on clamped records (lam ~ Gamma(3, 1) against upper = 4; mu ~ N(0, 1)
    against [-1, 1]), so the bivariate CLT's correlation term matters."""
    cell = _calibration(model, 1.0, 150, [CAL_METHODS[0]], 5)
    assert cell.loc["bernstein_sheldon", "ks_pvalue"] > 0.01


# --------------------------------------------------------------------------- contract
def test_result_shape_claim_and_reproducibility():
    problem = _problem({"name": "beta_binomial", "n": 100}, {"name": "laplace", "epsilon": 1.0}, [30.0])
    a = engine.run_method(problem, {**BS, "draws": 300, "warmup": 100}, seed=4)
    b = engine.run_method(problem, {**BS, "draws": 300, "warmup": 100}, seed=4)
    two = engine.run_method(problem, {**BS, "chains": 2, "draws": 300, "warmup": 100}, seed=4)
    assert a.draws.shape == (4, 300, 1) and a.method == "bernstein_sheldon"
    np.testing.assert_array_equal(a.draws, b.draws)
    np.testing.assert_array_equal(a.draws[:2], two.draws)  # chain c does not depend on the number of chains
    assert a.info["claim"] == "approximate" and "approximate" in a.info["note"] and a.info["mcmc"]
    assert engine.methods.REGISTRY["bernstein_sheldon"].claim == "approximate"
    assert "convergence" in summary(a).attrs
    assert a.sample_stats["s_hat"].shape == (4, 300)
    assert np.all((a.sample_stats["s_hat"] >= 0) & (a.sample_stats["s_hat"] <= 100))


def test_progress_and_cancel():
    problem = _problem({"name": "beta_binomial", "n": 100}, {"name": "gaussian", "sigma": 3.0}, [30.0])
    seen = []
    engine.run_method(problem, {**BS, "chains": 1, "draws": 50_000, "warmup": 0}, seed=1,
                      on_progress=lambda d, t: seen.append((d, t)))
    assert seen and seen[-1] == (50_000, 50_000)
    calls = []

    def stop(done, total):
        calls.append(done)
        return False

    r = engine.run_method(problem, {**BS, "chains": 1, "draws": 100_000, "warmup": 0}, seed=1, on_progress=stop)
    assert r.info["stopped"] == "cancelled" and r.n_draws < 100_000


@pytest.mark.parametrize("mechanism,s_dp", [({"name": "discrete_laplace", "epsilon": 1.0}, [3.0]),
                                            ({"name": "randomized_response", "epsilon": 1.0}, [3.0]),
                                            ({"name": "discrete_gaussian", "sigma": 2.0}, [3.0])])
def test_unsupported_mechanism_is_one_line_error(mechanism, s_dp):
    problem = _problem({"name": "beta_binomial", "n": 10}, mechanism, s_dp)
    with pytest.raises(ValueError) as err:
        engine.run_method(problem, BS, seed=1)
    msg = str(err.value)
    assert "\n" not in msg and "bernstein_sheldon" in msg and "beta_binomial" in msg and mechanism["name"] in msg
    assert "laplace, gaussian" in msg


def test_cost_is_iterations_independent_of_n():
    small = _problem({"name": "beta_binomial", "n": 10}, {"name": "laplace", "epsilon": 1.0}, [3.0])
    big = _problem({"name": "beta_binomial", "n": 1_000_000}, {"name": "laplace", "epsilon": 1.0}, [3e5])
    c1 = estimate_cost(small, {**BS, "draws": 10_000})
    c2 = estimate_cost(big, {**BS, "draws": 10_000})
    assert c1.unit == "iterations" and c1.units == 4 * 10_500 and c1.units == c2.units
    assert c1.seconds == pytest.approx(c2.seconds)


def test_cli_and_summary_json_label_it_approximate(tmp_path, cli):
    import json

    spec = tmp_path / "s.toml"
    spec.write_text('seed = 1\n[model]\nname = "beta_binomial"\nn = 1000\n[mechanism]\nname = "laplace"\nepsilon = 0.5\n'
                    '[data]\ns_dp = [300]\n[method]\nname = "bernstein_sheldon"\ndraws = 500\nwarmup = 200\n')
    out = cli("run", str(spec), "--out", str(tmp_path / "o"), "--quiet")
    assert out.returncode == 0, out.stderr  # what check=True checked
    assert "bernstein_sheldon is approximate: normal (CLT) approximation" in out.stdout
    data = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert data["info"]["claim"] == "approximate" and "convergence" in data
