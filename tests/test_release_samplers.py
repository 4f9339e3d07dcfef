"""DA-MCMC and the pseudo-marginal sampler on the two releases whose law needs more than r = s_dp - s: diffprivlib's
``LaplaceBoundedDomain`` (a density renormalised over [lower, upper], normaliser depending on s: compiled kernel
code 10, engine.kernels.shared.log_bounded_domain) and an OpenDP lattice release (float noise with ``k``) sitting
on its clip bound (the lattice family's tail code with scale (scale, g, 0)).

* The compiled log-densities against the mechanisms' own ``release_log_prob`` / ``log_cdf`` (deterministic, to
  1e-12, constants aside).
* Each sampler's posterior mean against the exact method's (the closed-form mixture), within 4.5 Monte Carlo
  standard errors (sd / sqrt(ESS)); the negative control: the same mean is far outside that band from the
  posterior that ignores the release's own law (the bounded domain read as plain Laplace noise; the clipped
  lattice release read as a density point), so the check can fail.
* Samplers not taught the tuple (ABC, reversible jump) and a vector bounded-domain release still refuse in one line.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import engine
from engine.kernels.shared import BOUNDED_DOMAIN, log_noise
from engine.mechanisms.clipped import BOUNDED_DOMAIN_KERNEL, BoundedLaplace, compiled_noise
from engine.mechanisms.lattice import LatticeGaussian, LatticeLaplace
from engine.numerics.diagnostics import summary

INF = math.inf
BOUNDED = {"library": "diffprivlib", "mechanism": "LaplaceBoundedDomain", "epsilon": 0.5, "sensitivity": 1,
           "lower": 0, "upper": 40}


def test_bounded_domain_kernel_is_the_renormalised_density():
    assert BOUNDED_DOMAIN_KERNEL == BOUNDED_DOMAIN
    for s_dp in (0.0, 2.5, 20.0, 40.0):
        mech = BoundedLaplace(scale=3.3, lower=0.0, upper=40.0).bind_release([s_dp])
        kernel, scale = compiled_noise(mech)
        assert kernel == 10 and scale == (3.3, -s_dp, 40.0 - s_dp)
        s = np.array([-7.0, 0.0, 1.5, 12.0, 39.0, 40.0, 55.0])  # outside [lower, upper] too: s is clamped first
        want = mech.release_log_prob(s_dp, s) + math.log(2 * 3.3)
        got = np.array([log_noise(kernel, scale, s_dp - v) for v in s])
        assert np.max(np.abs(got - want)) < 1e-12
        assert np.allclose(mech.noise_log_prob(s_dp - s), mech.release_log_prob(s_dp, s), atol=1e-14)


@pytest.mark.parametrize("base", [LatticeLaplace(scale=2.0, granularity=0.5), LatticeGaussian(scale=1.7, granularity=0.25)])
def test_lattice_tail_kernel_is_the_lattice_cdf(base):
    """P(g V <= r) and P(g V >= r) on the lattice, r = s_dp - s a multiple of g, up to one constant per side."""
    for side, s_dp in ((-1, 0.0), (1, 10.0)):
        clip = [0.0, INF] if side < 0 else [-INF, 10.0]
        mech = engine.release_from("opendp", "laplace" if isinstance(base, LatticeLaplace) else "gaussian",
                                   domain="float", scale=base.scale, k=int(math.log2(base.granularity)),
                                   clip=clip).noise.bind_release([s_dp])
        kernel, scale = compiled_noise(mech)
        assert scale == (base.scale, base.granularity, 0.0) and kernel in (6, 7, 8, 9)
        s = np.arange(0.0, 15.0)
        want = mech.noise_log_prob(s_dp - s)
        got = np.array([log_noise(kernel, scale, s_dp - v) for v in s])
        assert np.ptp(got - want) < 1e-9
        with pytest.raises(ValueError, match="lattice"):
            mech.kernel  # samplers not taught the tuple refuse


CASES = {
    "bb_bounded": ({"model": {"name": "beta_binomial", "n": 30, "a": 2.0, "b": 3.0},
                    "release": {**BOUNDED, "upper": 30}, "data": {"s_dp": [0.5]}},
                   {"name": "laplace", "scale": None}),
    "pg_bounded": ({"model": {"name": "poisson_gamma", "n": 5, "alpha": 2.0, "beta": 1.0}, "release": BOUNDED,
                    "data": {"s_dp": [0.5]}}, {"name": "laplace", "scale": None}),
    "pg_lattice_lower": ({"model": {"name": "poisson_gamma", "n": 5, "alpha": 2.0, "beta": 1.0},
                          "release": {"library": "opendp", "mechanism": "gaussian", "domain": "float", "scale": 2.0,
                                      "k": -1, "clip": [0, INF]}, "data": {"s_dp": [0.0]}},
                         {"name": "gaussian", "scale": 2.0}),
    "bb_lattice_upper": ({"model": {"name": "beta_binomial", "n": 30, "a": 2.0, "b": 3.0},
                          "release": {"library": "opendp", "mechanism": "gaussian", "domain": "float", "scale": 3.0,
                                      "k": -2, "clip": [-INF, 20]}, "data": {"s_dp": [20.0]}},
                         {"name": "gaussian", "scale": 3.0}),
}


@pytest.mark.parametrize("method", ["da_mcmc", "pseudo_marginal"])
@pytest.mark.parametrize("case", list(CASES))
def test_samplers_agree_with_exact_and_the_plain_reading_is_caught(case, method):
    spec, plain_noise = CASES[case]
    problem = engine.prepare({"seed": 4, **spec})
    exact = engine.run_method(problem, {"name": "exact", "draws": 1000}, seed=1).info["posterior_mean"][0]
    res = engine.run_method(problem, {"name": method, "chains": 4, "draws": 6000, "warmup": 500}, seed=3)
    row = summary(res, verdict=False).iloc[0]
    band = 4.5 * row["sd"] / math.sqrt(row["ess_bulk"])
    assert abs(row["mean"] - exact) < band, (row["mean"], exact, band)
    # negative control: the posterior that reads the release as a plain noisy number (no renormalisation, no
    # point mass) is outside the band, so this check would catch a sampler that ignored the release's law
    scale = plain_noise["scale"] or problem.mechanism.scale
    key = "sigma" if plain_noise["name"] == "gaussian" else "scale"
    plain = engine.prepare({"seed": 4, "model": spec["model"], "data": spec["data"],
                            "mechanism": {"name": plain_noise["name"], key: scale}})
    wrong = engine.run_method(plain, {"name": "exact", "draws": 1000}, seed=1).info["posterior_mean"][0]
    assert abs(row["mean"] - wrong) > band, (row["mean"], wrong, band)


def test_other_samplers_and_vector_releases_still_refuse_in_one_line():
    problem = engine.prepare({"seed": 1, **CASES["pg_bounded"][0]})
    with pytest.raises(ValueError, match="LaplaceBoundedDomain is invalid for this sampler"):
        engine.run_method(problem, {"name": "abc_rejection", "draws": 10}, seed=1)
    hist = engine.prepare({"seed": 1, "model": {"name": "dirichlet_multinomial", "n": 12, "alpha": [1.0, 1.0]},
                           "release": {**BOUNDED, "upper": 12}, "data": {"s_dp": [4.0, 7.5]}})
    with pytest.raises(ValueError, match="several numbers.*use method exact"):
        engine.run_method(hist, {"name": "da_mcmc", "chains": 1, "draws": 10, "warmup": 5}, seed=1)
    with pytest.raises(ValueError, match="must lie within the bounded domain"):
        engine.prepare({"seed": 1, **{**CASES["pg_bounded"][0], "data": {"s_dp": [41.0]}}})


def test_same_seed_same_draws_on_a_bounded_domain():
    problem = engine.prepare({"seed": 1, **CASES["pg_bounded"][0]})
    a, b = (engine.run_method(problem, {"name": "da_mcmc", "chains": 2, "draws": 200, "warmup": 50}, seed=9)
            for _ in range(2))
    assert np.array_equal(a.draws, b.draws)
