"""The exact Dirichlet posterior at large n (issue 23: n = 10^6, eps = 0.01, Laplace, k = 5).

From ``LARGE_N`` records the exact mixture finds its tilt by Newton's method, convolves long count
windows by FFT (cutting the round-off floor) and evaluates the Beta-mixture marginals by the ladder
recurrence. Each fast piece is checked against the direct computation on a problem where both run
(the thresholds lowered for the test), and the draws against the exact marginal of the counts.
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import engine
from engine.methods import exact as exact_mod
from engine.methods.exact import _DMDistribution, _beta_ladder_cdf, _mixture_cdf


def _problem(n, eps, s_dp):
    return engine.prepare({"model": {"name": "dirichlet_multinomial", "n": n, "alpha": [1.0, 2.0, 0.5, 1.0]},
                           "mechanism": {"name": "laplace", "epsilon": eps}, "data": {"s_dp": s_dp}})


@pytest.fixture
def fast_and_direct(monkeypatch):
    """The same problem's count law by the direct path and by the fast path (thresholds lowered)."""
    problem = _problem(3000, 0.2, [310.4, 905.2, 598.0, 1190.7])  # b = 10: windows of ~1,200 counts
    direct = _DMDistribution(problem)
    monkeypatch.setattr(exact_mod, "LARGE_N", 1000)
    monkeypatch.setattr(exact_mod, "FFT_WORK", 10_000)
    monkeypatch.setattr(exact_mod, "BETA_RECURRENCE", 100)
    fast = _DMDistribution(problem)
    return problem, direct, fast


def test_fast_count_marginals_match_the_direct_convolutions(fast_and_direct):
    _, direct, fast = fast_and_direct
    assert fast.long and not direct.long
    assert fast.fft_bounds and max(fast.fft_bounds) < 1e-8
    for j in range(4):
        cd, wd = direct.marginal(j)
        cf, wf = fast.marginal(j)
        grid = np.arange(min(cd.min(), cf.min()), max(cd.max(), cf.max()) + 1)
        pd = np.zeros(grid.size)
        pf = np.zeros(grid.size)
        pd[(cd - grid[0]).astype(int)] = wd
        pf[(cf - grid[0]).astype(int)] = wf
        assert np.abs(pd - pf).sum() < 1e-9, j  # total variation between the two laws of c_j


def test_newton_tilt_puts_the_tilted_means_on_n():
    rng = np.random.default_rng(3)
    c = np.arange(20_001, dtype=float)
    log_h = [-np.abs(s - c) / 80.0 + rng.normal() * 1e-4 * c for s in (3000.0, 9000.0, 7500.0)]
    lam = exact_mod._tilt_newton(log_h, c, 20_000)
    total = 0.0
    for lh in log_h:
        e = np.exp(lh + lam * c - (lh + lam * c).max())
        total += float(e @ c / e.sum())
    assert abs(total - 20_000) < 1e-3
    lam_b = exact_mod._tilt_brent(log_h, c, 20_000)
    assert abs(lam - lam_b) < 1e-6


@pytest.mark.parametrize("a0, b0", [(1.0, 3000.0), (12000.0, 990000.0)])
def test_beta_ladder_cdf_matches_the_binomial_tail(a0, b0):
    """For integer a, b: I_x(a, b) = P(Bin(a + b - 1, x) >= a), an independent computation."""
    rng = np.random.default_rng(0)
    w = rng.random(3000)
    w /= w.sum()
    i = np.arange(w.size)
    m = float(w @ (a0 + i)) / (a0 + b0)
    x = np.concatenate([[0.0, 1.0], np.linspace(max(m - 0.01, 1e-9), min(m + 0.01, 1 - 1e-9), 41)])
    ref = np.array([w @ stats.binom.sf(a0 + i - 1, a0 + b0 - 1, v) for v in x])
    assert np.abs(_beta_ladder_cdf(w, a0, b0, x) - ref).max() < 1e-10
    assert np.abs(_mixture_cdf(False, w, a0 + i, b0 - i, x) - ref).max() < 1e-12  # the reference itself


def test_fast_path_draws_follow_the_exact_count_marginals(monkeypatch):
    """Counts drawn by sequential conditioning on the FFT prefixes: their mean and sd per cell within
    Monte Carlo error of the exact marginal's (4 standard errors; 4,000 i.i.d. draws)."""
    monkeypatch.setattr(exact_mod, "LARGE_N", 1000)
    monkeypatch.setattr(exact_mod, "FFT_WORK", 10_000)
    monkeypatch.setattr(exact_mod, "BETA_RECURRENCE", 100)
    problem = _problem(3000, 0.05, [310.4, 905.2, 598.0, 1190.7])
    mix = _DMDistribution(problem)
    counts = mix.sample_counts(np.random.default_rng(5), 4000)
    assert np.all(counts.sum(axis=1) == 3000)
    for j in range(4):
        cj, w = mix.marginal(j)
        mean = float(w @ cj)
        sd = float(np.sqrt(w @ (cj - mean) ** 2))
        assert abs(counts[:, j].mean() - mean) < 4 * sd / np.sqrt(4000), j
        assert abs(counts[:, j].std() - sd) < 4 * sd / np.sqrt(2 * 4000), j
    res = exact_mod.exact(problem, np.random.default_rng(1), draws=500, chains=2)
    again = exact_mod.exact(problem, np.random.default_rng(1), draws=500, chains=2)
    assert np.array_equal(res.draws, again.draws)  # reproducible from the seed
    assert res.info["fft_neglected_mass_bound"] < 1e-8
    for j, name in enumerate(problem.model.param_names):  # densities integrate to the plotted mass
        x, dens = res.density[name]
        assert 0.999 < float(dens.sum() * (x[1] - x[0])) <= 1.0 + 1e-9


def test_the_million_record_cell_runs_exact_in_seconds():
    """The issue's last one-statistic cell: n = 10^6, eps = 0.01, Laplace, k = 5 (was ~100 s)."""
    spec = {"seed": 1, "model": {"name": "dirichlet_multinomial", "alpha": [1.0] * 5, "n": 1_000_000},
            "mechanism": {"name": "laplace", "epsilon": 0.01},
            "data": {"simulate": {"p": [0.1, 0.15, 0.2, 0.25, 0.3]}}}
    problem = engine.prepare(spec)
    a = engine.run_method(problem, {"name": "exact", "draws": 1000}, 1)
    assert a.info["fft_neglected_mass_bound"] < 1e-8
    truth = np.array([0.1, 0.15, 0.2, 0.25, 0.3])
    sd = a.draws.reshape(-1, 5).std(axis=0)
    assert np.all(np.abs(a.draws.reshape(-1, 5).mean(axis=0) - truth) < 6 * sd)  # the release is near truth
