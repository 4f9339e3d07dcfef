"""Session 26's fixes to things earlier sessions noticed and left (each test fails without its fix)."""
from __future__ import annotations

import numpy as np
import pytest

from engine.core.results import Result
from figures.labels import result_label
from ui.compute.files import name_part


@pytest.fixture
def rng():
    return np.random.default_rng(20261129)


def _result(method, **info):
    return Result(method=method, param_names=("theta",), draws=np.zeros((1, 4, 1)), s_dp=np.array([1.0]), info=info)


def test_a_plug_in_size_is_written_with_thousands_separators_and_a_file_name_drops_them():
    """The legends said "Naive at plug-in n = 1000000" beside the figure's "plug-in n = 1,000,000" line."""
    label = result_label(_result("naive", plug_in_n=1_000_000))
    assert label == "Naive at plug-in n = 1,000,000"
    assert result_label(_result("exact", representation="grid", plug_in_n=12_345)) == \
        "Numerical posterior given plug-in n = 12,345"
    assert name_part(label) == "Naive_at_plug-in_n_1000000"
    assert name_part("p[0][1]") == "p_0_1" and name_part("a,b 1,23") == "a_b_1_23"


def test_every_method_switch_says_what_the_method_is():
    """A newcomer met "OPS", "Pseudo-marginal" and "Exact (closed form)" as bare switch labels; the last is a grid
    for the clamped models, which only the run's label said."""
    from app_support import open_app

    from ui import keys
    from ui.params.scenario import METHODS

    at = open_app()
    helps = {m: at.sidebar.toggle(key=keys.method_key(m)).help for m in METHODS}
    assert all(helps.values()), helps
    assert "numerical grid" in helps["exact"] and "Exact (numerical)" in helps["exact"]
    assert "approximate" in helps["bernstein_sheldon"] and "not a posterior" in helps["mcem"]


def test_a_kde_with_a_tail_hundreds_of_bandwidths_long_still_draws_its_peak(rng):
    """The binned KDE put 2,048 cells and its 256 curve points evenly from the smallest draw to the largest: a
    Cauchy-like tail of thousands of units made both coarser than the bandwidth, and the peak (1/π for t with one
    degree of freedom) came out a fraction of its height. The curve now has points at most half a bandwidth apart
    where the draws are (their central 99%), and agrees with scipy's KDE at the same bandwidth there."""
    from scipy import stats

    from figures.kde import binned_kde, kde_scale

    x = rng.standard_t(1, 8000)
    assert np.ptp(x) > 2000  # the case: a range thousands of times the bandwidth
    grid, pdf = binned_kde(x)
    bw = kde_scale(x) * x.size ** -0.2
    assert np.all(np.diff(grid) > 0)
    lo, hi = np.quantile(x, [0.005, 0.995])
    inner = (grid >= lo) & (grid <= hi)
    assert np.max(np.diff(grid[inner])) <= bw / 2 + 1e-12
    reference = stats.gaussian_kde(x, bw_method=bw / x.std(ddof=1))(grid[inner])
    assert np.max(np.abs(pdf[inner] - reference)) <= 0.01 * reference.max()
    assert abs(pdf.max() - 1 / np.pi) < 0.1 / np.pi, pdf.max()
    assert grid[0] <= x.min() and grid[-1] >= x.max()


def test_the_focus_ring_stands_out_on_the_light_and_the_dark_theme():
    """WCAG 1.4.11: a focus indicator needs 3:1 against what is around it (the browser test checks it is drawn)."""
    from figures.palette import BACKGROUNDS, contrast_ratio
    from ui.style import FOCUS_CSS, FOCUS_RING

    sidebar = {"light": "#f0f2f6", "dark": "#262730"}  # Streamlit's secondary backgrounds, where the sidebar is
    for background in (*BACKGROUNDS.values(), *sidebar.values()):
        assert contrast_ratio(FOCUS_RING, background) >= 3.0, background
    assert f"outline: 3px solid {FOCUS_RING}" in FOCUS_CSS and ":focus-visible" in FOCUS_CSS


def test_diagnose_gives_the_six_functions_numbers_and_ranks_are_scipys(rng):
    """One pass for a parameter's R-hat, ESS and MCSE (a summary of the log-linear model's 80 parameters took 2.5 s,
    eight times its sampler): the same numbers as each function alone, ties (a pseudo-marginal chain's repeats)
    and one chain included."""
    from scipy.stats import rankdata

    from engine.numerics import rank_diagnostics as rd

    sticky = np.repeat(rng.normal(size=(4, 300)), 3, axis=1)  # each value held three iterations
    for x in (rng.normal(size=(4, 1000)).cumsum(axis=1), sticky, rng.normal(size=(1, 501)), np.round(sticky, 1),
              rng.normal(size=(2, 4))):
        assert np.array_equal(rd.average_ranks(x), rankdata(x, method="average").reshape(x.shape))
        alone = {"r_hat": rd.rhat(x), "ess_bulk": rd.ess_bulk(x), "ess_tail": rd.ess_tail(x),
                 "mcse_mean": rd.mcse_mean(x), "mcse_q5": rd.mcse_quantile(x, 0.05),
                 "mcse_q95": rd.mcse_quantile(x, 0.95)}
        together = rd.diagnose(x)
        assert together.keys() == alone.keys()
        for key, value in alone.items():
            assert together[key] == value or (np.isnan(value) and np.isnan(together[key])), (key, x.shape)
    assert all(np.isnan(v) for v in rd.diagnose(rng.normal(size=(2, 3))).values())


def test_a_chain_of_fewer_than_four_draws_gets_a_verdict_not_an_error(tmp_path, cli):
    """draws = 3 (the spec allows 1 and up) ended every run with "error: cannot convert float NaN to integer": the
    verdict wrote the NaN R-hat of too few draws as a number."""
    import engine

    spec = {"seed": 1, "model": {"name": "beta_binomial", "n": 30}, "mechanism": {"name": "laplace", "epsilon": 1.0},
            "data": {"s_dp": [12.0]}, "method": {"name": "da_mcmc", "chains": 2, "draws": 3}}
    verdict = engine.summary(engine.run(spec)).attrs["convergence"]
    assert not verdict["converged"] and verdict["reasons"] == [
        "R-hat and ESS of theta cannot be computed from 2 chains of 3 draws (they need at least 4 draws per chain, "
        "all finite)"]
    one = engine.summary(engine.run({**spec, "method": {"name": "da_mcmc", "chains": 1, "draws": 7}}))
    assert "from 1 chain of 7 draws (they need at least 8 draws for one chain" in one.attrs["convergence"]["reasons"][0]
    (tmp_path / "s.toml").write_text('seed = 1\n[model]\nname = "beta_binomial"\nn = 30\n[mechanism]\n'
                                     'name = "laplace"\nepsilon = 1.0\n[data]\ns_dp = [12.0]\n[method]\n'
                                     'name = "da_mcmc"\nchains = 2\ndraws = 3\n')
    proc = cli("run", str(tmp_path / "s.toml"), "--out", str(tmp_path / "out"))
    assert proc.returncode == 0 and "cannot be computed from 2 chains of 3 draws" in proc.stderr, proc.stderr


def test_a_chains_estimate_includes_its_summary_which_many_parameters_make_the_larger_part():
    """The log-linear model at the paper's size (80 parameters, 4 x 5,000 draws) was priced at its 0.3 s of sampling
    while its R-hat and ESS took 1.4 s more (2.98 s before rank_diagnostics.diagnose, 1.0 s now): the estimate now
    prices the summary of every kept draw of every parameter of a chain (bench/summary.py)."""
    import engine
    from engine.cost import _SUMMARY_VALUE, _run_cost, estimate_cost

    rates = {"cores": 2, **{m: {"record_update_s": 25e-9, "statistic_draw_s": 1e-7} for m in (
        "beta_binomial", "poisson_gamma", "normal_known_sd", "dirichlet_multinomial")}}
    spec = {"seed": 7, "model": {"name": "naive_bayes_loglinear", "n": 100, "class_levels": 5,
                                 "feature_levels": [3, 3, 3, 3, 3]},
            "mechanism": {"name": "laplace", "epsilon": 1.0}, "data": {"simulate": {"from_prior": True}}}
    problem = engine.prepare(spec)
    table = {"name": "da_mcmc", "chains": 4, "draws": 5000, "warmup": 1000}
    summary_s = 80 * 4 * 5000 * _SUMMARY_VALUE * 25e-9
    run = _run_cost(problem, table, rates).seconds
    assert estimate_cost(problem, table, rates).seconds == pytest.approx(run + summary_s)
    assert summary_s > 2 * run  # the larger part here
    auto = {**table, "name": "auto"}  # priced as the chain it picks, summary included (its verdict's, reused)
    assert estimate_cost(problem, auto, rates) == _run_cost(problem, auto, rates)
    assert _run_cost(problem, auto, rates).seconds >= summary_s
    assert estimate_cost(problem, {**table, "name": "naive"}, rates) == _run_cost(problem, {**table, "name": "naive"},
                                                                                  rates)
    one = engine.prepare({"seed": 1, "model": {"name": "beta_binomial", "n": 40},
                          "mechanism": {"name": "laplace", "epsilon": 0.3}, "data": {"s_dp": [12.0]}})
    small = {"name": "da_mcmc", "chains": 2, "draws": 2000, "warmup": 500}
    assert estimate_cost(one, small, rates).seconds - _run_cost(one, small, rates).seconds < 0.01
