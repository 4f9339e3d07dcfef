"""DP follow-ups, session 22: the ceiling of a two-sided Gaussian clip, the zCDP curve vectorised, the sidebar's
caption for unclamped Poisson counts and the command line's words for diffprivlib's (ε, δ) Laplace."""
from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
from scipy import special, stats

import engine
from engine.cli.risk import summary_line
from engine.protection import experiment, neighbours
from engine.protection.tradeoff import ClippedWorst
from figures import protection as pf
from ui import protection_text as pt


def _clipped(mechanism, n: int = 20, model: str = "beta_binomial", s_dp: float = 5.0, **extra):
    size = 3 if model == "dirichlet_multinomial" else 1  # K = 3 counts by default
    return engine.prepare({"seed": 3, "model": {"name": model, "n": n, **extra}, "mechanism": mechanism,
                           "data": {"s_dp": [s_dp] * size}})


def _worst(problem):
    return experiment(problem.model, problem.mechanism, neighbours(problem.model, problem.mechanism))


# --------------------------------------------------------------------------- 1. the ceiling of a two-sided clip
def _gaussian_brute_loss(sigma, lo, hi, placements, d=1.0):
    """max |L| over a fine grid of releases inside (lo, hi), the two atoms, and every placement, from scipy alone."""
    y = np.linspace(lo, hi, 2001)[1:-1]
    best = 0.0
    for s0 in placements:
        s1 = s0 + d
        inside = stats.norm.logpdf(y, s1, sigma) - stats.norm.logpdf(y, s0, sigma)
        at_lo = stats.norm.logcdf(lo, s1, sigma) - stats.norm.logcdf(lo, s0, sigma)
        at_hi = stats.norm.logsf(hi, s1, sigma) - stats.norm.logsf(hi, s0, sigma)
        best = max(best, np.max(np.abs(inside)), abs(at_lo), abs(at_hi))
    return best


def _discrete_gaussian_brute_loss(sigma, lo, hi, placements, d=1):
    """The same for the discrete Gaussian: its pmf summed on the integers (independently of the engine)."""
    k = np.arange(-400, 401)
    log_pmf = -k**2 / (2 * sigma**2)
    log_pmf -= special.logsumexp(log_pmf)
    best = 0.0
    for s0 in placements:
        def law(s):
            v = k + s
            return np.array([special.logsumexp(log_pmf[v <= lo])] + list(log_pmf[(v > lo) & (v < hi)])
                            + [special.logsumexp(log_pmf[v >= hi])])
        best = max(best, np.max(np.abs(law(s0 + d) - law(s0))))
    return best


def test_a_two_sided_gaussian_clip_has_the_brute_force_ceiling():
    """beta_binomial n = 20 (s0 = 0..19), sigma = 2 clipped to [3, 9]: the largest loss over releases and placements
    is the hi atom's at s0 = 0 (4.18), brute force to 1e-9; max is its logistic, no longer None."""
    problem = _clipped({"name": "gaussian", "sigma": 2.0, "clip": [3, 9]})
    exp = _worst(problem)
    brute = _gaussian_brute_loss(2.0, 3.0, 9.0, range(20))
    assert exp.max_loss() == pytest.approx(brute, rel=1e-9) and 4.1 < brute < 4.3
    ia = engine.risk(problem, realistic=False)["informed_adversary"]
    assert ia["max"] == pytest.approx(special.expit(brute), abs=1e-12)
    assert ia["q95"] <= ia["max"] and ia["at_max"] == pytest.approx(0.0, abs=1e-9)  # an atom of vanishing mass


def test_a_two_sided_discrete_gaussian_clip_has_the_brute_force_ceiling():
    problem = _clipped({"name": "discrete_gaussian", "sigma": 2.0, "clip": [3, 9]})
    brute = _discrete_gaussian_brute_loss(2.0, 3, 9, range(20))
    assert _worst(problem).max_loss() == pytest.approx(brute, rel=1e-9)
    assert engine.risk(problem, realistic=False)["informed_adversary"]["max"] == pytest.approx(special.expit(brute),
                                                                                              abs=1e-12)


def test_the_ceiling_takes_the_ends_of_the_whole_range_not_only_the_listed_placements():
    """normal_known_sd n = 50 on [0, 1] (s0 anywhere in [0, 49]), sigma = 0.5 clipped to [10, 20]: the listed
    placements stop 40 sd + 2d above the clip (s0 = 42), where the lo atom's loss is still growing; the ceiling is the
    brute force's over the whole range, reached at s0 = 49."""
    problem = _clipped({"name": "gaussian", "sigma": 0.5, "clip": [10, 20]}, n=50, model="normal_known_sd",
                       s_dp=15.0, lo=0.0, hi=1.0)
    exp = _worst(problem)
    assert isinstance(exp, ClippedWorst) and exp.last == 42.0
    brute = _gaussian_brute_loss(0.5, 10.0, 20.0, np.linspace(0.0, 49.0, 491))
    assert exp.max_loss() == pytest.approx(brute, rel=1e-9) and exp.max_loss() > exp.losses.max() + 20


@pytest.mark.parametrize("mechanism, model", [
    ({"name": "gaussian", "sigma": 2.0, "clip": [5, "inf"]}, {}),  # one-sided: the loss inside is unbounded
    ({"name": "discrete_gaussian", "sigma": 2.0, "clip": ["-inf", 9]}, {}),
    ({"name": "gaussian", "sigma": 2.0, "clip": [3, 9]}, {"model": "poisson_gamma", "alpha": 2.0, "beta": 1.0}),
])
def test_a_gaussian_clip_stays_unbounded_where_the_loss_is(mechanism, model):
    """One open bound, or a statistic with no upper end (an unclamped Poisson sum can sit arbitrarily far above the
    clip, where the lo atom's loss grows like d x / sigma^2): no firm ceiling, as before."""
    problem = _clipped(mechanism, **model)
    assert math.isinf(_worst(problem).max_loss())
    r = engine.risk(problem, realistic=False)
    assert r["informed_adversary"]["max"] is None and r["informed_adversary"]["at_max"] is None
    assert "with no firm ceiling" in summary_line(r)


def test_several_clipped_gaussian_coordinates_claim_no_ceiling():
    """dirichlet_multinomial (two counts move): each coordinate's pair is only centred, so the atoms' loss there is
    not the largest over placements; no ceiling is claimed rather than the centred pair's."""
    problem = _clipped({"name": "gaussian", "sigma": 2.0, "clip": [3, 9]}, model="dirichlet_multinomial", s_dp=5.0)
    assert math.isinf(_worst(problem).max_loss())
    assert engine.risk(problem, realistic=False)["informed_adversary"]["max"] is None


def test_the_page_and_the_command_line_state_the_clipped_gaussians_ceiling():
    r = engine.risk(_clipped({"name": "gaussian", "sigma": 2.0, "clip": [3, 9]}), realistic=False)
    top = r["informed_adversary"]["max"]
    clause = pt.informed_clause(r)
    assert clause.endswith(f"to at most {pt.percent(top, apart_from=0.5)}") and "no firm ceiling" not in clause
    line = summary_line(r)
    assert f"to at most {100 * top:.1f}%" in line and "no firm ceiling" not in line


def test_single_placement_experiments_of_a_two_sided_gaussian_clip_are_bounded_too():
    """The loss lattice of one placement (and a discrete clip's finite law) carries the atoms' loss as its bound."""
    from engine.protection.tradeoff import _coordinates_experiment
    for name, brute in (("gaussian", _gaussian_brute_loss(2.0, 3.0, 9.0, [6.0])),
                        ("discrete_gaussian", _discrete_gaussian_brute_loss(2.0, 3, 9, [6]))):
        problem = _clipped({"name": name, "sigma": 2.0, "clip": [3, 9]})
        one = _coordinates_experiment([(problem.mechanism, 1.0, 0)], [6.0])
        assert one.max_loss() == pytest.approx(brute, rel=1e-9)


# --------------------------------------------------------------------------- 2. the zCDP curve, as arrays
def _old_zcdp_tradeoff(alpha, rho: float, points: int = 600) -> np.ndarray:
    """The curve before session 22's vectorisation: the scalar zcdp_delta (its bisection, untouched by it) at each of
    600 epsilons, one (epsilon, delta)-DP curve at a time."""
    from engine.protection.tradeoff import epsilon_dp_tradeoff, zcdp_delta
    a = np.asarray(alpha, dtype=float)
    top = rho + 2.0 * math.sqrt(rho * math.log(1e15)) + 1.0
    out = np.zeros_like(a)
    for eps in np.linspace(0.0, top, points):
        out = np.maximum(out, epsilon_dp_tradeoff(a, float(eps), zcdp_delta(rho, float(eps))))
    return out


@pytest.mark.parametrize("rho", [1e-4, 0.005, 0.125, 0.5, 2.0, 8.0, 50.0])
def test_the_vectorised_zcdp_curve_is_the_loop_it_replaces(rho):
    from engine.protection.tradeoff import alpha_grid, zcdp_delta, zcdp_tradeoff
    for alpha in (alpha_grid(), np.array([0.0, 1e-12, 0.05, 0.5, 1.0]), np.linspace(0, 1, 1001)):
        np.testing.assert_allclose(zcdp_tradeoff(alpha, rho), _old_zcdp_tradeoff(alpha, rho), rtol=0, atol=1e-9)
    assert float(zcdp_tradeoff(0.05, rho)) == pytest.approx(float(_old_zcdp_tradeoff(0.05, rho)), abs=1e-9)
    from engine.protection.tradeoff import _zcdp_deltas
    eps = np.array([-0.5, 0.0, 0.3, 1.0, 3.0, 10.0, 40.0])
    np.testing.assert_allclose(_zcdp_deltas(rho, eps), [zcdp_delta(rho, e) for e in eps], rtol=1e-9, atol=0)


# --------------------------------------------------------------------------- 3. the sidebar's "Implied noise"
POISSON = {"model": "poisson_gamma", "n": "40", "mech": "laplace", "budget": "epsilon", "epsilon": "1",
           "data": "simulate", "seed": "7", "methods": "naive"}


def _implied_noise(at) -> str:
    return next(c.value for c in at.sidebar.caption if c.value.startswith("Implied noise: "))


def test_the_sidebar_qualifies_an_unclamped_poissons_guarantee_as_what_it_protects_does():
    """The caption said "pure 1-DP (sensitivity 1)" for every record of an unclamped Poisson count, on every page
    that shows it (Diagnostics here; Compare and What it protects state the mechanism themselves)."""
    from app_support import open_app
    at = open_app("pages/diagnostics.py", POISSON, 180)
    assert not at.exception, [e.value for e in at.exception]
    text = "Laplace noise, scale b = 1; pure 1-DP (sensitivity 1)"
    assert _implied_noise(at) == (f"Implied noise: {text}; only for records that move the sum by at most 1 (records "
                                  "are not clamped)")
    assert _implied_noise(at).removeprefix("Implied noise: ") == pt.mechanism_line(text, engine.risk(
        {"seed": 7, "model": {"name": "poisson_gamma", "n": 40, "alpha": 2.0, "beta": 1.0},
         "mechanism": {"name": "laplace", "epsilon": 1.0}, "data": {"s_dp": [80.0]}}, realistic=False))
    clamped = open_app("pages/diagnostics.py", {**POISSON, "prior.upper": "3"}, 180)
    assert not clamped.exception and "only for records" not in _implied_noise(clamped), _implied_noise(clamped)


def test_compares_figure_title_qualifies_an_unclamped_poissons_guarantee():
    """Compare states the mechanism in its figure's title (no "Implied noise" there): it said "pure 1-DP
    (sensitivity 1)" bare for an unclamped Poisson count; now as the sidebar says it, and bare where clamped."""
    from app_support import open_app
    qualified = ("Laplace noise, scale b = 1; pure 1-DP (sensitivity 1); only for records that move the sum by at most "
                 "1 (records are not clamped)")
    for query, expected in ((POISSON, qualified), ({**POISSON, "prior.upper": "3"}, None)):
        at = open_app("pages/compare.py", query, 180)
        assert not at.exception, [e.value for e in at.exception]
        (chart,) = [c for c in at.get("plotly_chart") if "posterior density" in c.proto.spec]
        title = " ".join(re.sub(r"<[^>]+>", " ", json.loads(chart.proto.spec)["layout"]["title"]["text"]).split())
        if expected is None:
            assert title.startswith("Laplace noise, scale b = 3; pure 1-DP (sensitivity 3)") and "only for" not in title
        else:
            assert title == expected, title


# --------------------------------------------------------------------------- 4. diffprivlib's (ε, δ) Laplace, said
DIFFPRIVLIB = {"library": "diffprivlib", "mechanism": "Laplace", "epsilon": 1.0, "delta": 0.1, "sensitivity": 1.0}
WHY = "(diffprivlib's (1, 0.1)-DP Laplace, met as pure 1.105-DP)"


def test_the_command_line_says_why_diffprivlibs_epsilon_became_1_105(tmp_path, cli):
    """The line said only "pure 1.105-DP" for ε = 1, δ = 0.1 typed; the page said why. Both now in one wording."""
    import json

    from engine.protection.report import release_words, with_release
    spec = {"seed": 0, "model": {"name": "beta_binomial", "n": 20, "a": 1.0, "b": 1.0}, "release": DIFFPRIVLIB,
            "data": {"s_dp": [10.0]}}
    r = with_release(engine.risk(spec, realistic=False), DIFFPRIVLIB)
    assert release_words(r) == WHY == pt.release_clause(pt.for_release(r, json.dumps(spec)))
    assert summary_line(r).startswith(f"Laplace noise, scale b = 0.9047; pure 1.105-DP (sensitivity 1) {WHY}: someone "
                                      "who knew everyone else"), summary_line(r)
    path = tmp_path / "dl.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    done = cli("risk", str(path), "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    assert f"pure 1.105-DP (sensitivity 1) {WHY}: someone" in done.stdout, done.stdout
    saved = json.loads((tmp_path / "out" / "risk.json").read_text(encoding="utf-8"))
    assert saved["release"] == {"library": "diffprivlib", "mechanism": "Laplace", "epsilon": 1.0, "delta": 0.1}
    for other in ({**DIFFPRIVLIB, "delta": 0.0}, {**DIFFPRIVLIB, "mechanism": "LaplaceBoundedDomain", "lower": 0,
                                                   "upper": 20}, None):
        spec_o = {**spec, "release": other} if other else {**spec, "mechanism": {"name": "laplace", "epsilon": 1.0}}
        if other is None:
            spec_o.pop("release")
        plain = with_release(engine.risk(spec_o, realistic=False), other)
        assert "release" not in plain and "met as pure" not in summary_line(plain)


def test_the_command_lines_95_percent_level_rounds_up_as_the_page_does():
    """The line's "(at or below X in 95% of releases)" rounded q95 up at one decimal by its own rule: 99.924% read
    "at or below 100.0%" (a share strictly between written as all), and beside a ceiling of 100.0% it was dropped.
    It now takes the page's directed rounding (engine.protection.report.directed_percent): "99.93%"."""
    r = engine.risk({"seed": 1, "model": {"name": "normal_known_sd", "n": 20},
                     "mechanism": {"name": "gaussian", "sigma": 1.0}, "data": {"s_dp": [0.0]}}, realistic=False)
    assert r["informed_adversary"]["max"] is None
    for q95, said in ((0.99924, "99.93%"), (0.57412, "57.5%"), (0.5741, "57.5%"), (0.99996, "99.996%")):
        r["informed_adversary"]["q95"] = q95
        assert f"(at or below {said} in 95% of releases)" in summary_line(r), summary_line(r)
        assert pf.percent_at_most(q95) in (said, f"{round(100 * q95)}%")
    r["informed_adversary"].update(q95=0.99924, max=0.9999999)
    assert "(at or below 99.93% in 95% of releases)" in summary_line(r), summary_line(r)
    r["informed_adversary"].update(q95=0.73106, max=0.73106)  # the ceiling itself: not said twice
    assert "95% of releases" not in summary_line(r), summary_line(r)
