"""Clipped releases and the [release] table, without the outside libraries (tests/test_interop.py has those).

A release clipped to [lower, upper] has point masses at the bounds: p(s_dp = lower | s) = P(U <= lower - s).
The exact posterior is then the finite mixture sum_s m(s) P(U <= lower - s) p(theta | s) / Z, written out
here with scipy (the closed form), against the engine's ``exact`` (to 1e-9) and its DA-MCMC and
pseudo-marginal samplers (to 4.5 Monte Carlo standard errors, MCSE = sd / sqrt(ESS), a two-sided
false-failure rate of 7e-6 per comparison under normal Monte Carlo error; seeds fixed).
The negative control shows the comparison can fail: reading the same s_dp = 0 as a density point (the
unclipped law) moves the posterior mean by many tolerances.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special, stats

import engine
from engine.kernels.shared import log_noise
from engine.mechanisms import DiscreteGaussian, DiscreteLaplace, Gaussian, Laplace
from engine.mechanisms.clipped import BoundedLaplace, Clipped
from engine.mechanisms.lattice import LatticeLaplace
from engine.numerics.diagnostics import summary

INF = math.inf


def _bb_spec(release, s_dp, n=30, a=2.0, b=3.0, seed=5):
    return {"seed": seed, "model": {"name": "beta_binomial", "n": n, "a": a, "b": b}, "release": release,
            "data": {"s_dp": [s_dp]}}


def _bb_closed_form(n, a, b, log_eta):
    """Posterior mean and sd of theta from the mixture over s = 0..n with weights BB(s) eta(s)."""
    s = np.arange(n + 1)
    lw = stats.betabinom.logpmf(s, n, a, b) + log_eta(s)
    w = np.exp(lw - special.logsumexp(lw))
    A, B = a + s, b + n - s
    m1 = np.sum(w * A / (A + B))
    m2 = np.sum(w * A * (A + 1) / ((A + B) * (A + B + 1)))
    return m1, math.sqrt(m2 - m1 * m1)


# ---------------------------------------------------------------- the tail codes of the compiled kernels

@pytest.mark.parametrize("base", [Laplace(scale=1.7), Gaussian(scale=2.3), DiscreteLaplace(scale=1.3),
                                  DiscreteGaussian(scale=2.1)])
def test_compiled_tail_codes_equal_the_noise_cdf(base):
    """log_noise's codes 2..9 are log P(U <= r) and log P(U >= r), compared with sums of the pmf
    (discrete) or scipy's CDF (continuous), far into both tails."""
    lo_code = Clipped(base, 0.0, INF).bind_release([0.0]).kernel
    hi_code = Clipped(base, -INF, 0.0).bind_release([0.0]).kernel
    assert hi_code == lo_code + 1 and lo_code in (2, 4, 6, 8)
    rs = np.arange(-40, 41, dtype=float)
    if isinstance(base, Laplace):
        ref_cdf = stats.laplace.logcdf(rs, scale=base.scale)
    elif isinstance(base, Gaussian):
        ref_cdf = stats.norm.logcdf(rs, scale=base.scale)
    else:
        ks = np.arange(-400, 401, dtype=float)
        lp = base.noise_log_prob(ks)
        ref_cdf = np.array([special.logsumexp(lp[ks <= r]) for r in rs])
    got_cdf = np.array([log_noise(lo_code, base.scale, r) for r in rs])
    got_sf = np.array([log_noise(hi_code, base.scale, r) for r in rs])
    np.testing.assert_allclose(got_cdf, ref_cdf, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(got_sf, ref_cdf[::-1], rtol=1e-9, atol=1e-12)  # P(U >= r) = P(U <= -r)
    np.testing.assert_allclose(base.log_cdf(rs), ref_cdf, rtol=1e-9, atol=1e-12)


def test_gaussian_tail_code_far_tail():
    """The asymptotic branch of log Phi below -20 sigma agrees with scipy's log_ndtr."""
    for x in (-19.9, -20.1, -35.0, -200.0):
        assert log_noise(4, 1.0, x) == pytest.approx(float(special.log_ndtr(x)), rel=1e-8)


# ---------------------------------------------------------------- closed forms and sampler agreement

CASES = [
    # (release table, s_dp): OpenDP counts clamped at 0 (a released 0), a clip at an upper bound, Gaussian
    ({"library": "opendp", "mechanism": "laplace", "domain": "int", "scale": 3.0, "clip": [0, INF]}, 0.0),
    ({"library": "opendp", "mechanism": "gaussian", "domain": "float", "scale": 2.5, "clip": [-INF, 20]}, 20.0),
    ({"library": "diffprivlib", "mechanism": "LaplaceTruncated", "epsilon": 0.5, "sensitivity": 1, "lower": 0,
      "upper": 30}, 0.0),
]


@pytest.mark.parametrize("release,s_dp", CASES)
def test_clipped_exact_matches_the_closed_form(release, s_dp):
    problem = engine.prepare(_bb_spec(release, s_dp))
    mech = problem.mechanism
    assert mech.side == (-1 if s_dp == 0.0 else 1)
    base = mech.base
    if s_dp == 0.0:
        truth = _bb_closed_form(30, 2.0, 3.0, lambda s: base.log_cdf(0.0 - s))
    else:
        truth = _bb_closed_form(30, 2.0, 3.0, lambda s: base.log_sf(s_dp - s))
    res = engine.run_method(problem, {"name": "exact", "draws": 20000}, seed=1)
    assert res.info["posterior_mean"][0] == pytest.approx(truth[0], rel=1e-9)
    draws = res.draws[..., 0].ravel()
    assert abs(draws.mean() - truth[0]) < 4.5 * truth[1] / math.sqrt(draws.size)


def test_negative_control_density_reading_is_caught():
    """Reading a clipped s_dp = 20 as a density point (plain Gaussian noise) is far from the clipped posterior.

    (With Laplace-type noise and a statistic s >= 0 clamped at 0 the two readings coincide: for s >= 0,
    P(U <= -s) = e^(-s/b) / 2 is proportional to the density at -s, the exponential tail being memoryless.
    So OpenDP's clamp at 0 changes nothing for a Laplace count, and a Gaussian clip is the control.)"""
    release = CASES[1][0]
    problem = engine.prepare(_bb_spec(release, 20.0))
    base = problem.mechanism.base
    clipped = _bb_closed_form(30, 2.0, 3.0, lambda s: base.log_sf(20.0 - s))
    plain = _bb_closed_form(30, 2.0, 3.0, lambda s: base.noise_log_prob(20.0 - s))
    res = engine.run_method(problem, {"name": "exact", "draws": 20000}, seed=1)
    tol = 4.5 * clipped[1] / math.sqrt(20000)
    assert abs(res.draws.mean() - clipped[0]) < tol
    assert abs(plain[0] - clipped[0]) > 10 * tol
    laplace = engine.prepare(_bb_spec(CASES[0][0], 0.0)).mechanism.base
    same = [_bb_closed_form(30, 2.0, 3.0, f) for f in (lambda s: laplace.log_cdf(-s), lambda s: laplace.noise_log_prob(-s))]
    assert same[0][0] == pytest.approx(same[1][0], rel=1e-12)


@pytest.mark.parametrize("release,s_dp", CASES[:2])
@pytest.mark.parametrize("method", ["da_mcmc", "pseudo_marginal", "abc_rejection"])
def test_samplers_agree_with_exact_on_clipped_releases(release, s_dp, method):
    problem = engine.prepare(_bb_spec(release, s_dp))
    exact = engine.run_method(problem, {"name": "exact", "draws": 4000}, seed=2).info["posterior_mean"][0]
    res = engine.run_method(problem, {"name": method, "chains": 2, "draws": 3000, "warmup": 500}, seed=3)
    row = summary(res, verdict=False).iloc[0]
    mcse = row["sd"] / math.sqrt(row["ess_bulk"])
    assert abs(row["mean"] - exact) < 4.5 * mcse, (row["mean"], exact, mcse)


def test_poisson_clipped_at_zero_exact_closed_form_and_da_mcmc():
    """Poisson-Gamma: s ~ NegBin, a released 0 under clip [0, inf] weighs s by P(U <= -s)."""
    spec = {"seed": 1, "model": {"name": "poisson_gamma", "n": 10, "alpha": 2.0, "beta": 4.0},
            "mechanism": {"name": "discrete_laplace", "scale": 2.0, "clip": [0, INF]}, "data": {"s_dp": [0]}}
    problem = engine.prepare(spec)
    s = np.arange(400)
    lw = stats.nbinom.logpmf(s, 2.0, 4.0 / 14.0) + problem.mechanism.base.log_cdf(-s)
    w = np.exp(lw - special.logsumexp(lw))
    mean = float(np.sum(w * (2.0 + s) / 14.0))
    sd = math.sqrt(float(np.sum(w * ((2.0 + s) * (3.0 + s)) / 14.0**2)) - mean**2)
    ex = engine.run_method(problem, {"name": "exact", "draws": 20000}, seed=1)
    assert ex.info["posterior_mean"][0] == pytest.approx(mean, rel=1e-9)
    res = engine.run_method(problem, {"name": "da_mcmc", "chains": 2, "draws": 3000, "warmup": 500}, seed=3)
    row = summary(res, verdict=False).iloc[0]
    assert abs(row["mean"] - mean) < 4.5 * row["sd"] / math.sqrt(row["ess_bulk"])
    assert sd > 0


def test_histogram_clamped_cells_exact_per_coordinate_and_samplers_refuse_mixed_sides():
    spec = {"seed": 1, "model": {"name": "dirichlet_multinomial", "n": 12, "alpha": [1.0, 1.0, 1.0]},
            "release": {"library": "opendp", "mechanism": "laplace", "domain": "int", "scale": 1.0, "clip": [0, INF]},
            "data": {"s_dp": [0, 5, 9]}}
    problem = engine.prepare(spec)
    assert problem.mechanism.side == 2
    res = engine.run_method(problem, {"name": "exact", "draws": 2000}, seed=1)
    # brute force over all compositions c of 12 into 3 cells
    base = problem.mechanism.base
    comps = [(i, j, 12 - i - j) for i in range(13) for j in range(13 - i)]
    lw = []
    for c in comps:
        v = sum(special.gammaln(1.0 + cj) - special.gammaln(cj + 1.0) for cj in c)
        v += float(base.log_cdf(np.array([0.0 - c[0]]))[0])
        v += float(base.noise_log_prob(np.array([5.0 - c[1], 9.0 - c[2]])).sum())
        lw.append(v)
    w = np.exp(np.array(lw) - special.logsumexp(lw))
    mean0 = sum(wi * (1.0 + c[0]) / 15.0 for wi, c in zip(w, comps))
    sd0 = 0.2
    assert abs(res.draws[..., 0].mean() - mean0) < 4.5 * sd0 / math.sqrt(2000)
    with pytest.raises(ValueError, match="use method exact"):
        engine.run_method(problem, {"name": "da_mcmc", "chains": 1, "draws": 10, "warmup": 5}, seed=1)


def test_clipped_release_is_simulated_with_point_masses():
    mech = Clipped(Laplace(scale=2.0), 0.0, 10.0)
    x = mech.sample(np.random.default_rng(0), np.full(20000, 1.0))
    assert x.min() == 0.0 and x.max() == 10.0
    p0 = float(np.exp(Laplace(scale=2.0).log_cdf(np.array([-1.0]))[0]))
    assert abs((x == 0).mean() - p0) < 4.5 * math.sqrt(p0 * (1 - p0) / x.size)


def test_bounded_domain_density_integrates_to_one():
    mech = BoundedLaplace(scale=1.6, lower=0.0, upper=10.0, sensitivity=1.0, epsilon_stated=1.0)
    grid = np.linspace(0.0, 10.0, 200001)
    for s in (0.0, 3.3, 10.0, 14.0):
        dens = np.exp(mech.release_log_prob(grid, s))
        assert np.trapezoid(dens, grid) == pytest.approx(1.0, abs=1e-6)
    assert mech.release_log_prob(np.array([-0.1]), 1.0)[0] == -np.inf


def test_lattice_release_is_on_the_lattice():
    mech = LatticeLaplace(scale=1.0, sensitivity=1.0, granularity=0.5)
    x = mech.sample(np.random.default_rng(0), np.full(1000, 10.3))
    assert np.all(np.equal(np.round(x * 2) / 2, x))
    assert mech.guarantee["epsilon"] == pytest.approx(1.5)  # (Delta + g) / scale, as OpenDP's map charges


# ---------------------------------------------------------------- the spec


def test_release_and_mechanism_together_is_an_error():
    spec = _bb_spec({"library": "opendp", "mechanism": "laplace", "domain": "int", "scale": 1.0}, 3.0)
    spec["mechanism"] = {"name": "laplace", "scale": 1.0}
    with pytest.raises(ValueError, match=r"release = .* is invalid: cannot be given with \[mechanism\]"):
        engine.spec_from_dict(spec)


@pytest.mark.parametrize("release,match", [
    ({"library": "opendpp", "mechanism": "laplace"}, r"release.library = 'opendpp' is invalid"),
    ({"library": "opendp", "mechanism": "laplace", "domain": "int"}, r"release.scale = None is invalid"),
    ({"library": "opendp", "mechanism": "laplace", "domain": "int", "scale": 1, "k": -1}, r"release.k = -1 is invalid"),
    ({"library": "opendp", "mechanism": "laplace", "domain": "float", "scale": 1, "k": 2}, r"release.k = 2 is invalid"),
    ({"library": "diffprivlib", "mechanism": "Gaussian", "epsilon": 2, "delta": 1e-5, "sensitivity": 1},
     r"release.epsilon = 2.0 is invalid: must be in \(0, 1\]"),
    ({"library": "diffprivlib", "mechanism": "Laplace", "epsilon": 1}, r"release.sensitivity = None is invalid"),
    ({"library": "diffprivlib", "mechanism": "Geometric", "epsilon": 1, "sensitivity": 1.5},
     r"release.sensitivity = 1.5 is invalid"),
    ({"library": "diffprivlib", "mechanism": "Laplace", "epsilon": 1, "sensitivity": 1, "scale": 2},
     r"release.scale = 2 is invalid: is not a parameter of diffprivlib Laplace"),
    ({"library": "opendp", "mechanism": "laplace", "domain": "int", "scale": 1, "clip": [5, 1]},
     r"release.clip = \[5, 1\] is invalid"),
])
def test_bad_release_tables_name_the_field(release, match):
    with pytest.raises(ValueError, match=match):
        engine.spec_from_dict(_bb_spec(release, 3.0))


def test_release_spec_round_trips_through_toml(tmp_path):
    spec = engine.spec_from_dict(_bb_spec({"library": "opendp", "mechanism": "laplace", "domain": "int",
                                           "scale": 2.0, "clip": [0, INF]}, 0.0))
    text = engine.spec_to_toml(spec)
    assert "[release]" in text and "[mechanism]" not in text and "clip = [0, inf]" in text
    path = tmp_path / "s.toml"
    path.write_text(text)
    again = engine.load_spec(str(path))
    assert engine.spec_to_dict(again) == engine.spec_to_dict(spec)
    assert spec.release is not None


def test_same_spec_and_seed_give_identical_draws():
    spec = _bb_spec(CASES[0][0], 0.0)
    a = engine.run_method(engine.prepare(spec), {"name": "da_mcmc", "chains": 2, "draws": 200, "warmup": 50}, 7)
    b = engine.run_method(engine.prepare(spec), {"name": "da_mcmc", "chains": 2, "draws": 200, "warmup": 50}, 7)
    assert np.array_equal(a.draws, b.draws)


def test_release_from_states_the_mapping():
    r = engine.release_from("diffprivlib", "Gaussian", epsilon=1, delta=1e-5, sensitivity=1)
    assert "diffprivlib Gaussian (classic), ε = 1, δ = 1e-5, Δ = 1 → Gaussian noise σ = 4.845" in r.sentence
    assert r.noise.scale == pytest.approx(math.sqrt(2 * math.log(1.25 / 1e-5)))
    assert r.warnings
    lap = engine.release_from("diffprivlib", "Laplace", epsilon=1.0, delta=0.1, sensitivity=2.0)
    assert lap.noise.scale == pytest.approx(2.0 / (1.0 - math.log(0.9)))
    opts = engine.release_options()
    assert set(opts["diffprivlib"]) == {"Laplace", "LaplaceTruncated", "LaplaceBoundedDomain", "Geometric",
                                        "GeometricTruncated", "Gaussian", "GaussianAnalytic", "GaussianDiscrete",
                                        "Binary"}
    assert opts["opendp"]["laplace"]["scale"]["default"] == "required"



def test_privacy_tradeoff_of_lattice_noise_is_the_integer_law_rescaled():
    """OpenDP's Laplace on g Z with scale b, neighbours 1 apart, is the integer discrete Laplace with t = b / g
    and shift 1 / g; read as integer noise with t = b it would be a different (wrong) experiment."""
    from engine.protection.tradeoff import Neighbours, experiment
    model = engine.make_model("beta_binomial", {"n": 10})
    lattice = experiment(model, LatticeLaplace(scale=2.0, sensitivity=1.0, granularity=0.5))
    integer = experiment(model, DiscreteLaplace(scale=4.0, sensitivity=2.0), pair=Neighbours(0, 2, (2.0,)))
    wrong = experiment(model, DiscreteLaplace(scale=2.0, sensitivity=1.0))
    np.testing.assert_allclose(lattice.loss, integer.loss)
    np.testing.assert_allclose(lattice.p0, integer.p0)
    assert lattice.loss.size != wrong.loss.size or not np.allclose(lattice.loss, wrong.loss)


def test_opendp_sums_default_to_add_remove_sensitivity_and_binary_is_randomized_response():
    spec = {"seed": 1, "model": {"name": "normal_known_sd", "n": 50, "lo": -1.0, "hi": 3.0},
            "release": {"library": "opendp", "mechanism": "laplace", "domain": "float", "scale": 6.0},
            "data": {"s_dp": [20.0]}}
    mech = engine.prepare(spec).mechanism
    assert mech.sensitivity == 3.0 and mech.guarantee["epsilon"] == pytest.approx(0.5)  # max(|lo|, |hi|) / scale
    lab = engine.prepare({**{k: v for k, v in spec.items() if k != "release"},
                          "mechanism": {"name": "laplace", "scale": 6.0}}).mechanism
    assert lab.sensitivity == 4.0  # the lab's replace-one default, hi - lo
    binary = {"seed": 2, "model": {"name": "beta_binomial", "n": 40},
              "release": {"library": "diffprivlib", "mechanism": "Binary", "epsilon": 1.0},
              "data": {"simulate": {"theta": 0.3}}}
    problem = engine.prepare(binary)
    assert problem.mechanism.name == "randomized_response" and 0 <= problem.s_dp[0] <= 40
    assert np.isfinite(engine.run_method(problem, {"name": "exact", "draws": 100}, 1).draws).all()
    with pytest.raises(ValueError, match="release.mechanism = 'Binary' is invalid"):
        engine.spec_from_dict({**binary, "model": {"name": "poisson_gamma", "n": 5}})
    with pytest.raises(ValueError, match="mechanism.clip = .* is invalid: is for additive noise only"):
        engine.spec_from_dict({"model": {"name": "beta_binomial", "n": 5}, "data": {"s_dp": [1]},
                               "mechanism": {"name": "randomized_response", "epsilon": 1.0, "clip": [0, 5]}})


def test_cli_runs_a_release_spec_and_refuses_a_bad_one_in_one_line(tmp_path, capsys):
    from engine.cli import main

    good = tmp_path / "good.toml"
    good.write_text('seed = 1\n[model]\nname = "beta_binomial"\nn = 20\n[release]\nlibrary = "diffprivlib"\n'
                    'mechanism = "GeometricTruncated"\nepsilon = 0.5\nlower = 0\nupper = 20\n[data]\ns_dp = [0]\n'
                    '[method]\nname = "exact"\ndraws = 200\n')
    assert main(["run", str(good), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    assert (tmp_path / "out" / "summary.json").exists()
    bad = tmp_path / "bad.toml"
    bad.write_text(good.read_text().replace("epsilon = 0.5", "epsilon = -1"))
    capsys.readouterr()
    assert main(["run", str(bad), "--out", str(tmp_path / "x"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: release.epsilon = -1 is invalid")


def test_opendp_sentence_states_the_guarantee_at_the_sensitivity_the_analysis_uses():
    """Sensitivity left blank: the analysis uses the model's add/remove-one default, so the sentence states the
    guarantee at it (the spec's default, 40 for a sum clamped to [0, 40]) or, with no model known, as a function of
    that sensitivity; never as if it were 1."""
    blank = engine.release_from("opendp", "laplace", domain="float", scale=2.0)
    assert "for sensitivity 1" not in blank.sentence and "(Δ / 2)-DP at the model's add/remove-one sensitivity Δ" \
        in blank.sentence
    gauss = engine.release_from("opendp", "gaussian", domain="int", scale=2.0)
    assert "(0.125 Δ²)-zCDP at the model's add/remove-one sensitivity Δ" in gauss.sentence
    table = {"library": "opendp", "mechanism": "laplace", "domain": "float", "scale": 80.0}
    problem = engine.prepare({"seed": 1, "model": {"name": "normal_known_sd", "n": 50, "sd": 5.0, "lo": 0.0,
                                                   "hi": 40.0}, "release": table, "data": {"s_dp": [500.0]}})
    used = problem.mechanism.sensitivity
    assert used == 40.0 and problem.mechanism.guarantee["epsilon"] == pytest.approx(0.5)
    at_model = engine.release_from(**table, default_sensitivity=used)
    # the actual Δ and the budget it gives ("Δ = 40 here, so ε = 40/80"), not the rule for every model
    assert ("0.5-DP at Δ = 40 here (the model's add/remove-one sensitivity, which the analysis uses), so "
            "ε = Δ / scale = 40/80 = 0.5 under add/remove-one neighbours") in at_model.sentence
    given = engine.release_from(**table, sensitivity=20)
    assert "0.25-DP for sensitivity 20 under" in given.sentence


@pytest.mark.parametrize("mechanism, extra", [("Gaussian", {}), ("GaussianAnalytic", {}),
                                              ("GaussianDiscrete", {"clip": [0, math.inf]})])
def test_diffprivlib_gaussians_describe_the_guarantee_the_library_states(mechanism, extra):
    """The Implied noise line (the mechanism's describe and guarantee) and the mapping sentence state the same
    (epsilon, delta): the library's, which is what the user made (not the lab's analytic epsilon or rho)."""
    r = engine.release_from("diffprivlib", mechanism, epsilon=1.0, delta=1e-5, sensitivity=1, **extra)
    assert "(1, 1e-5)-DP" in r.sentence and "(1, 1e-5)-DP as diffprivlib " + mechanism in r.noise.describe()
    assert "zCDP" not in r.noise.describe()
    g = r.noise.guarantee
    assert (g["kind"], g["epsilon"], g["delta"]) == ("approx", 1.0, 1e-5) == (r.guarantee["kind"],
                                                                              r.guarantee["epsilon"],
                                                                              r.guarantee["delta"])
    assert g["rho"] == pytest.approx(1.0 / (2.0 * r.noise.scale ** 2))  # the same noise's zCDP, for the curves
