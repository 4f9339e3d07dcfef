"""The informed adversary against diffprivlib's ``LaplaceBoundedDomain`` faces every placement of the pair
(engine.protection.tradeoff.BoundedDomainWorst): the ceiling is the largest loss over placements, the curve the
pointwise lowest, the power that of the most powerful placement. Plain clipping, where the placement does not
matter, keeps its curve. Every expected number here is computed independently (numerical integration of the
renormalised densities, brute force over placements)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, optimize, special

import engine
from engine.protection import alpha_grid, experiment, neighbours
from engine.protection.tradeoff import _coordinates_experiment

N = 30
TABLE = {"library": "diffprivlib", "mechanism": "LaplaceBoundedDomain", "epsilon": 1.0, "sensitivity": 1,
         "lower": 0, "upper": N}
SPEC = {"seed": 3, "model": {"name": "beta_binomial", "n": N}, "release": TABLE, "data": {"s_dp": [12.0]}}


def _np_power(b: float, s0: float, lo: float, hi: float, fpr: float = 0.05) -> float:
    """The Neyman-Pearson power at ``fpr`` for s0 against s0 + 1 by quadrature: densities e^{-|y - s|/b}
    renormalised on [lo, hi]; the likelihood ratio increases with y, so the test is 'y > t' with P0(y > t) = fpr."""
    def dens(s):
        z = integrate.quad(lambda y: math.exp(-abs(y - s) / b), lo, hi, points=[s], epsabs=1e-13, epsrel=1e-13)[0]
        return lambda y: math.exp(-abs(y - s) / b) / z

    p0, p1 = dens(s0), dens(s0 + 1)

    def tail(p, t):
        return integrate.quad(p, t, hi, points=[s0, s0 + 1] if t < s0 else None, epsabs=1e-13, epsrel=1e-13)[0]

    t = optimize.brentq(lambda t: tail(p0, t) - fpr, lo, hi, xtol=1e-13)
    return tail(p1, t)


def test_bounded_domain_ceiling_and_power_are_the_worst_placement():
    """n = 30 on [0, 30] at eps = 1 (b = 1.6126, diffprivlib's fixed point): the loss between s and s + 1 reaches
    exactly eps at the domain's ends, so the ceiling is e / (1 + e) (the centred pair gave 65.0%); the power at
    5% false positives is the largest over the placements, at s0 = 29 (12.0%; the centre gave 9.3%)."""
    problem = engine.prepare(SPEC)
    r = engine.risk(problem, realistic=False)
    b = problem.mechanism.scale
    assert r["informed_adversary"]["max"] == pytest.approx(special.expit(1.0), abs=1e-9)
    powers = {s0: _np_power(b, s0, 0.0, N) for s0 in (0, 1, 14, 27, 28, 29)}
    assert max(powers, key=powers.get) == 29 and r["neighbours"]["s0"] == [29.0]
    assert r["power_at_5pct"] == pytest.approx(powers[29], abs=1e-9)
    assert 0.119 < powers[29] < 0.121 and powers[14] < 0.094


def test_bounded_domain_curve_is_never_above_any_placement():
    """The reported curve is the pointwise lowest over every placement s0 = 0..29 (each placement's curve from the
    loss lattice, which lies on or above its truth by at most its max_error), and reaches each of them somewhere."""
    problem = engine.prepare(SPEC)
    r = engine.risk(problem, realistic=False)
    beta = np.asarray(r["tradeoff"]["beta"])
    coords = [(problem.mechanism, 1.0, 0)]
    curves = [_coordinates_experiment(coords, [float(s0)]) for s0 in range(N)]
    for e in curves:
        assert (beta - e.tradeoff(alpha_grid())).max() <= 1e-12
    lowest = np.min([e.tradeoff(alpha_grid()) for e in curves], axis=0)
    assert np.max(lowest - beta) <= max(e.max_error for e in curves) + 1e-12
    assert np.max(lowest - beta) > -1e-12


def test_bounded_domain_command_line_says_the_ceiling(cli):
    import json
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        spec = Path(tmp) / "spec.toml"
        spec.write_text('seed = 3\n[model]\nname = "beta_binomial"\nn = 30\n[release]\nlibrary = "diffprivlib"\n'
                        'mechanism = "LaplaceBoundedDomain"\nepsilon = 1\nsensitivity = 1\nlower = 0\nupper = 30\n'
                        '[data]\ns_dp = [12.0]\n')
        out = cli("risk", str(spec), "--out", str(Path(tmp) / "o"))
        assert out.returncode == 0, out.stderr
        assert "at most 73.1%" in out.stdout and "detects it 12.0% of the time" in out.stdout
        saved = json.loads((Path(tmp) / "o" / "risk.json").read_text())
        assert saved["neighbours"]["s0"] == [29.0]


@pytest.mark.parametrize("mechanism", [
    {"name": "laplace", "epsilon": 1.0, "clip": [0, 20]},
    {"name": "gaussian", "sigma": 2.0, "clip": [0, 20]},
    {"name": "discrete_gaussian", "sigma": 2.0, "clip": [0, 20]},
], ids=lambda m: m["name"])
def test_plain_clip_over_the_statistic_range_does_not_depend_on_the_placement(mechanism):
    """A clip [0, 20] on a statistic in [0, 20]: every placement s0 = 0..19 gives the reported curve (to the lattice
    error) and the same largest loss, so the one placement the report shows is the worst, pointwise."""
    problem = engine.prepare({"seed": 3, "model": {"name": "beta_binomial", "n": 20}, "mechanism": mechanism,
                              "data": {"s_dp": [5.0]}})
    exp = experiment(problem.model, problem.mechanism, neighbours(problem.model, problem.mechanism))
    coords = [(problem.mechanism, 1.0, 0)]
    tries = [_coordinates_experiment(coords, [float(s0)]) for s0 in range(20)]
    reported = exp.tradeoff(alpha_grid())
    lowest = np.min([e.tradeoff(alpha_grid()) for e in tries], axis=0)
    tol = max(e.max_error for e in tries) + exp.max_error + 1e-12
    assert np.max(reported - lowest) <= tol
    assert max(e.max_loss() for e in tries) == pytest.approx(exp.max_loss(), rel=1e-9)


def test_bounded_domain_placements_are_whole_numbers_and_reach_both_ends():
    """An integer statistic with more placements than are evaluated one by one (poisson_gamma, 3,991 of them) still
    places the pair on whole numbers, the ends included; a continuous statistic (normal_known_sd) reaches the
    ends too. Both reach diffprivlib's eps at an end."""
    big = {"seed": 3, "model": {"name": "poisson_gamma", "n": 400, "upper": 10},
           "release": {**TABLE, "sensitivity": 10, "upper": 4000}, "data": {"s_dp": [2000.0]}}
    wide = {"seed": 3, "model": {"name": "normal_known_sd", "n": 50, "lo": 0.0, "hi": 1.0},
            "release": {**TABLE, "upper": 50}, "data": {"s_dp": [20.0]}}
    for spec, whole in ((big, True), (wide, False)):
        problem = engine.prepare(spec)
        exp = experiment(problem.model, problem.mechanism, neighbours(problem.model, problem.mechanism))
        s0 = exp.placements
        assert s0.min() == 0 and s0.max() == spec["release"]["upper"] - exp.d
        assert np.all(s0 == np.round(s0)) == whole
        assert exp.max_loss() == pytest.approx(1.0, abs=1e-9)
        assert exp.worst_position == float(np.round(exp.worst_position)) or not whole
