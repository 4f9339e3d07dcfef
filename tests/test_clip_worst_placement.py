"""One clipped coordinate against the informed adversary: every placement of the pair, the worst reported
(engine.protection.tradeoff.ClippedWorst). A clip narrower than the statistic's range made the curve depend on where
the others' statistic s0 sits, and the single placement the report used to pick lay up to 0.013 (Gaussian) and 0.019
(discrete Gaussian) above the lowest curve. Every expected number here is computed by brute force, placement by
placement, with the single-placement experiment (the loss lattice, or the exact finite law of a discrete clip)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import engine
from engine.mechanisms import DiscreteGaussian
from engine.mechanisms.lattice import LatticeGaussian
from engine.protection import alpha_grid, experiment, laplace_tradeoff, neighbours
from engine.protection.tradeoff import (ClippedWorst, GaussianExperiment, _coordinates_experiment,
                                        _discrete_gaussian_log_cdf)

NARROW = [
    {"name": "gaussian", "sigma": 2.0, "clip": [3, 9]},
    {"name": "discrete_gaussian", "sigma": 2.0, "clip": [3, 9]},
    {"name": "laplace", "epsilon": 1.0, "clip": [3, 9]},
    {"name": "discrete_laplace", "epsilon": 1.0, "clip": [3, 9]},
    {"name": "gaussian", "sigma": 2.0, "clip": [5, "inf"]},
]


def _problem(mechanism, n: int = 20, model: str = "beta_binomial", s_dp: float = 5.0, **extra):
    return engine.prepare({"seed": 3, "model": {"name": model, "n": n, **extra}, "mechanism": mechanism,
                           "data": {"s_dp": [s_dp]}})


def _brute_force(problem, placements, d: float = 1.0):
    """The single-placement experiment at every placement (its curve lies on or above the truth by its max_error)."""
    coords = [(problem.mechanism, d, 0)]
    return [_coordinates_experiment(coords, [float(s0)]) for s0 in placements]


@pytest.mark.parametrize("mechanism", NARROW, ids=lambda m: f"{m['name']}-{m['clip'][0]}-{m['clip'][1]}")
def test_narrow_clip_reports_the_lowest_curve_over_every_placement(mechanism):
    """beta_binomial n = 20, clip [3, 9]: the reported curve is at or below every placement's s0 = 0..19 (each from
    the lattice, never below its truth), reaches their pointwise minimum (to the lattice's error), and the power at
    5% and the ceiling are the most powerful placement's and the largest over placements."""
    problem = _problem(mechanism)
    exp = experiment(problem.model, problem.mechanism, neighbours(problem.model, problem.mechanism))
    assert isinstance(exp, ClippedWorst)
    tries = _brute_force(problem, range(20))
    alpha = alpha_grid()
    reported = exp.tradeoff(alpha)
    curves = np.array([e.tradeoff(alpha) for e in tries])
    assert np.max(reported[None, :] - curves) <= 1e-12
    tol = max(e.max_error for e in tries) + 1e-12
    assert np.max(curves.min(axis=0) - reported) <= tol
    powers = np.array([1.0 - e.tradeoff(0.05) for e in tries])
    assert 1.0 - exp.tradeoff(0.05) == pytest.approx(powers.max(), abs=tol)
    assert powers[int(exp.positions[0])] == pytest.approx(powers.max(), abs=tol)
    assert exp.max_loss() == pytest.approx(max(e.max_loss() for e in tries), rel=1e-9)
    r = engine.risk(problem, realistic=False)
    assert r["power_at_5pct"] == pytest.approx(powers.max(), abs=tol)
    np.testing.assert_allclose(r["tradeoff"]["beta"], reported, atol=1e-15)


@pytest.mark.parametrize("name, gap", [("gaussian", 0.0125), ("discrete_gaussian", 0.019)])
def test_the_centred_placement_under_states_a_narrow_gaussian_clip(name, gap):
    """What the fix changes: the curve of the pair the page showed (s0 = 6, the centred one, also the smallest mean
    beta among the ten placements tried) lies above the lowest over placements by more than ``gap`` somewhere."""
    problem = _problem({"name": name, "sigma": 2.0, "clip": [3, 9]})
    exp = experiment(problem.model, problem.mechanism, neighbours(problem.model, problem.mechanism))
    alpha = alpha_grid()
    (shown,) = _brute_force(problem, [6])
    assert np.max(shown.tradeoff(alpha) - exp.tradeoff(alpha)) > gap


def test_continuous_statistic_takes_the_exact_worst_placement_at_every_alpha():
    """normal_known_sd (n = 50 on [0, 1], d = 1, the statistic anywhere in [0, 50]) with Gaussian noise clipped to
    [10, 20]: the reported curve is at or below the curves of 201 placements across the range (a finer grid than
    the class evaluates), and within their lattice error of the lowest of them."""
    problem = _problem({"name": "gaussian", "sigma": 2.0, "clip": [10, 20]}, n=50, model="normal_known_sd",
                       s_dp=15.0, lo=0.0, hi=1.0)
    exp = experiment(problem.model, problem.mechanism, neighbours(problem.model, problem.mechanism))
    assert isinstance(exp, ClippedWorst)
    tries = _brute_force(problem, np.linspace(0.0, 49.0, 201) + 0.0123)
    alpha = alpha_grid()
    curves = np.array([e.tradeoff(alpha) for e in tries])
    reported = exp.tradeoff(alpha)
    assert np.max(reported[None, :] - curves) <= 1e-12
    assert np.max(curves.min(axis=0) - reported) <= max(e.max_error for e in tries) + 2e-3  # grid spacing 0.245
    fine = ClippedWorst(problem.mechanism, 1.0, np.linspace(exp.first, exp.last, 40001), (exp.first, exp.last), False,
                        [(problem.mechanism, 1.0, 0)], 15.0).placement_tradeoffs(alpha).min(axis=0)
    assert np.max(reported - fine) <= 1e-12 and np.max(fine - reported) <= 1e-6  # 40,001 placements, in closed form


def test_unclipped_release_is_unchanged():
    """The demo (beta_binomial n = 40, Laplace eps = 0.3, no clip) keeps its own curve; so does a Gaussian."""
    for mechanism, kind in (({"name": "laplace", "epsilon": 0.3}, None), ({"name": "gaussian", "sigma": 2.0},
                                                                         GaussianExperiment)):
        problem = _problem(mechanism, n=40)
        exp = experiment(problem.model, problem.mechanism, neighbours(problem.model, problem.mechanism))
        assert not isinstance(exp, ClippedWorst) and (kind is None or isinstance(exp, kind))
    r = engine.risk(_problem({"name": "laplace", "epsilon": 0.3}, n=40), realistic=False)
    np.testing.assert_allclose(r["tradeoff"]["beta"], laplace_tradeoff(alpha_grid(), 0.3), atol=1e-7)
    assert "s0" not in r["neighbours"]


@pytest.mark.parametrize("name", ["gaussian", "discrete_gaussian", "laplace"])
def test_clip_over_the_whole_range_is_the_centred_curve(name):
    """A clip [0, 20] on a statistic in [0, 20]: the curve does not depend on the placement, so the reported one is
    the centred pair's (what was reported before), to the lattice's error. The ceiling is the largest over the
    placements (for Gaussian noise at an end of the range: the atom's loss grows with the pair's distance from it),
    each single placement's bound by brute force; for Laplace noise the centred pair's already."""
    mechanism = {"name": name, "clip": [0, 20], **({"epsilon": 1.0} if name == "laplace" else {"sigma": 2.0})}
    problem = _problem(mechanism)
    exp = experiment(problem.model, problem.mechanism, neighbours(problem.model, problem.mechanism))
    (centred,) = _brute_force(problem, [10])
    alpha = alpha_grid()
    assert np.max(np.abs(exp.tradeoff(alpha) - centred.tradeoff(alpha))) <= centred.max_error + 1e-12
    assert exp.max_loss() == pytest.approx(max(e.max_loss() for e in _brute_force(problem, range(20))), rel=1e-9)
    assert exp.max_loss() >= centred.max_loss() and (exp.max_loss() == centred.max_loss()) == (name == "laplace")


@pytest.mark.parametrize("name", ["gaussian", "discrete_gaussian"])
def test_more_placements_than_listed_still_gives_the_exact_infimum(name):
    """n = 3000, sigma = 40, clip [1000, 1100]: 2,703 whole placements within reach of the clip, more than the
    2,001 listed. The reported curve is the lowest of every one of them (each in closed form, the class's own
    per-placement curve, checked against the brute force above) and lies at or below the single-placement
    experiment at 25 placements spread over the range."""
    problem = _problem({"name": name, "sigma": 40.0, "clip": [1000, 1100]}, n=3000, s_dp=1050.0)
    exp = experiment(problem.model, problem.mechanism, neighbours(problem.model, problem.mechanism))
    whole = np.arange(math.ceil(exp.first), math.floor(exp.last) + 1.0)
    assert whole.size > exp.placements.size
    every = ClippedWorst(problem.mechanism, 1.0, whole, (exp.first, exp.last), True, [(problem.mechanism, 1.0, 0)],
                         1050.0)
    alpha = alpha_grid()
    np.testing.assert_allclose(exp.tradeoff(alpha), every.placement_tradeoffs(alpha).min(axis=0), atol=1e-15)
    tries = _brute_force(problem, np.linspace(0, 2999, 25).round())
    assert np.max(exp.tradeoff(alpha)[None, :] - np.array([e.tradeoff(alpha) for e in tries])) <= 1e-12


def test_discrete_gaussian_tails_in_one_pass_match_the_mechanism():
    """The one-pass table of the discrete Gaussian's cdf equals the mechanism's own sum, value by value, on the
    integers and on OpenDP's lattice g Z."""
    for base, g in ((DiscreteGaussian(scale=2.0), 1.0), (DiscreteGaussian(scale=0.3), 1.0),
                    (LatticeGaussian(scale=1.3, granularity=0.25), 0.25)):
        r = np.arange(-300, 301) * g
        mine, theirs = _discrete_gaussian_log_cdf(base.scale / g, g, r)(r), base.log_cdf(r)
        assert np.array_equal(np.isfinite(mine), np.isfinite(theirs))
        ok = np.isfinite(theirs)
        np.testing.assert_allclose(mine[ok], theirs[ok], rtol=1e-12, atol=1e-13)


def test_narrow_gaussian_clip_builds_its_lattice_at_every_placement():
    """normal_known_sd on [0, 1] (sum over 20 records, pair shift 1), Gaussian sigma = 0.2 clipped to [10, 20]: the
    interval from the lattice's last cut to the clip's bound has the last level as its lower loss, recomputed from
    the cut through the loss's formula, up to 5e-14 below it (h = 0.038); the tail test allowed 1e-12 h = 4e-14, so
    the piece was taken as straddling the level and engine.risk raised instead of drawing a curve. Now every
    placement's lattice curve holds its closed form (ClippedWorst, "One placement in closed form") between the
    optimistic curve and that curve less its max_error."""
    problem = engine.prepare({"seed": 1, "model": {"name": "normal_known_sd", "n": 20, "lo": 0.0, "hi": 1.0},
                              "mechanism": {"name": "gaussian", "sigma": 0.2, "clip": [10.0, 20.0]},
                              "data": {"s_dp": [14.0]}})
    worst = experiment(problem.model, problem.mechanism, neighbours(problem.model, problem.mechanism))
    assert isinstance(worst, ClippedWorst)
    alpha = alpha_grid()
    placements = np.linspace(8.0, 19.0, 45)
    closed = worst._curves(tuple(x[:, None] for x in worst._atom_logs(placements)), alpha[None, :],
                           worst._unclipped(alpha)[None, :])
    for s0, exact in zip(placements, closed):
        (lattice,) = _brute_force(problem, [s0])
        reported = lattice.tradeoff(alpha)
        assert np.all(reported >= exact - 1e-12)
        assert np.all(reported - lattice.max_error <= exact + 1e-12)
    out = engine.risk(problem, realistic=False)
    assert out["informed_adversary"]["q50"] > 0.99
