"""Bayes audit s22, the labels (F1-F3, F5-F7, F9): every number was right, these say what the numbers are.

F1 the Privacy budget page's "±" is the exact posterior's own q5-q95 half-width, not 1.645 sd; F2 a failed R-hat is
written rounded up (1.01004 is "1.011", never "1.010"); F3 the MLE row's columns say they hold a standard error and a
Wald interval; F5/F7 the README quotes the Compare sentence as it now reads and says what naive's projection does;
F6 an exact result says whether it is a closed form or numerical, and at a plug-in n that it is given that n; F9 the
summary carries the mean's Monte Carlo standard error."""
from __future__ import annotations

import json
import math
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

import engine
from engine.core.results import Result
from engine.methods.exact import exact_moments, exact_quantiles
from engine.numerics import rank_diagnostics
from engine.numerics.diagnostics import summary, summary_dict
from engine.studies.sweep import exact_interval
from figures.labels import result_label
from ui import tables
from ui.glossary import COLUMN_HELP

ROOT = Path(__file__).resolve().parents[1]

# the audit's skewed case (report F1): n = 1000, discrete Laplace at epsilon = 0.01, a release of -250
SKEWED = {"seed": 0, "model": {"name": "beta_binomial", "n": 1000},
          "mechanism": {"name": "discrete_laplace", "epsilon": 0.01}, "data": {"s_dp": [-250]}}


def _reference_quantiles(n, t, s_dp, probs=(0.05, 0.95), size=4001):
    """q5, q95 of p(theta | s_dp) for a Beta(1, 1) prior under discrete Laplace noise of scale t, by brute force:
    theta on a fine grid, the likelihood sum_s Binom(s; n, theta) p(s_dp - s) summed explicitly, the CDF by the
    trapezoid rule (independent of the engine's mixture and its windows)."""
    theta = np.linspace(0.0, 1.0, size)
    s = np.arange(n + 1)
    log_noise = -np.abs(s_dp - s) / t  # the discrete Laplace pmf up to its constant
    lik = np.zeros_like(theta)
    for chunk in np.array_split(np.arange(size), 50):
        logp = stats.binom.logpmf(s[None, :], n, theta[chunk, None]) + log_noise[None, :]
        top = logp.max(axis=1, keepdims=True)
        lik[chunk] = np.exp(top[:, 0]) * np.exp(logp - top).sum(axis=1)
    lik /= lik.max()
    cdf = np.concatenate([[0.0], np.cumsum((lik[1:] + lik[:-1]) / 2 * np.diff(theta))])
    cdf /= cdf[-1]
    return tuple(float(np.interp(q, cdf, theta)) for q in probs)


# ---- F1 ----------------------------------------------------------------------------------------------------------
def test_exact_quantiles_of_a_skewed_posterior_match_brute_force_and_are_not_mean_plus_minus_1645_sd():
    problem = engine.prepare(engine.spec_from_dict(SKEWED))
    q5, q95 = exact_quantiles(problem)["theta"]
    ref5, ref95 = _reference_quantiles(1000, 1 / 0.01, -250)
    assert q5 == pytest.approx(ref5, abs=2e-5) and q95 == pytest.approx(ref95, abs=2e-5)
    assert (q5, q95) == pytest.approx((0.0052, 0.3002), abs=1e-4)  # the audit's own reference
    assert exact_interval(SKEWED, 0.01, "theta") == pytest.approx((q5, q95))
    sd = exact_moments(problem)["theta"][1]
    assert (q95 - q5) / 2 == pytest.approx(0.148, abs=1e-3) and 1.645 * sd == pytest.approx(0.164, abs=1e-3)


@pytest.mark.parametrize("spec", [
    {"seed": 3, "model": {"name": "poisson_gamma", "n": 5, "upper": 3},
     "mechanism": {"name": "laplace", "epsilon": 1.0}, "data": {"s_dp": [8.4]}},  # a grid posterior
    {"seed": 3, "model": {"name": "dirichlet_multinomial", "n": 6, "alpha": [1, 1, 1]},
     "mechanism": {"name": "laplace", "epsilon": 1.0}, "data": {"s_dp": [3.2, -1.5, 2.0]}},  # Beta-mixture marginals
])
def test_exact_quantiles_agree_with_many_exact_draws(spec):
    """The grid's inverse CDF and the Dirichlet marginals' mixture, against 200,000 exact draws: within 5 Monte
    Carlo standard errors of a sample quantile, sqrt(q (1 - q) / N) / density (the density from the draws)."""
    problem = engine.prepare(engine.spec_from_dict(spec))
    quantiles = exact_quantiles(problem)
    result = engine.run_method(problem, {"name": "exact", "chains": 1, "draws": 200_000}, seed=spec["seed"])
    for j, name in enumerate(result.param_names):
        x = result.draws[0, :, j]
        for q, value in zip((0.05, 0.95), quantiles[name]):
            h = 0.01 * x.std()
            density = np.mean(np.abs(x - value) < h) / (2 * h)
            se = math.sqrt(q * (1 - q) / x.size) / density
            assert abs(np.quantile(x, q) - value) < 5 * se, (name, q, np.quantile(x, q), value, se)


def test_budget_page_states_the_exact_interval_half_width():
    """At the page's default ε the sentence's "±" is half of the exact q5-q95, and the caption says so (it said
    "(1.645 sd)" of a number that was 1.645 sd)."""
    from app_support import open_app

    from ui.compute import sweeps
    from ui.params.scenario import Scenario

    at = open_app("pages/privacy_budget.py", timeout=240)
    assert not at.exception, [e.value for e in at.exception]
    captions = [c.value for c in at.caption]
    (caption,) = [c for c in captions if c.startswith("±: ")]
    assert caption.startswith("±: half the width of the exact posterior's 90% central interval of θ (q5 to q95) "
                              "at ε = "), caption
    epsilon = float(re.search(r"at ε = ([0-9.e+-]+)\.$", caption).group(1))
    half = sweeps.exact_half_width(Scenario(), None, epsilon, "theta")
    assert any(f"±{half:.2g}" in m.value for m in at.markdown), [m.value for m in at.markdown]


# ---- F2 ----------------------------------------------------------------------------------------------------------
def test_a_failed_verdict_never_writes_an_rhat_that_passes():
    cell = tables.verdict_text({"applicable": True, "converged": False, "r_hat_max": 1.01004, "ess_bulk_min": 900,
                                "ess_tail_min": 950})
    assert cell == "no: R-hat 1.011, ESS 900", cell
    assert tables.verdict_text({"applicable": True, "converged": False, "r_hat_max": 1.15601, "ess_bulk_min": 19},
                               several=True) == "no: worst R-hat 1.157, ESS 19"


@pytest.mark.parametrize("page", ["pages/compare.py", "pages/diagnostics.py"])
def test_the_pages_rhat_columns_round_up(page):
    """Compare wrote R-hat "{:.4g}" (1.01004 as "1.01") and Diagnostics "{:.3f}" ("1.010"): both now use the
    verdict's own rounding (ui.tables.rhat_at_most, engine.numerics.diagnostics.rhat_up)."""
    text = (ROOT / page).read_text()
    formats = re.search(r'"R-hat":\s*([^,}]+)', text).group(1).strip()
    assert formats == "tables.rhat_at_most", formats
    assert tables.rhat_at_most(1.01004) == "1.011" and tables.rhat_at_most(float("nan")) == "—"


# ---- F3 ----------------------------------------------------------------------------------------------------------
def test_the_columns_tooltips_say_what_the_mle_row_holds():
    assert COLUMN_HELP["sd"].startswith("Posterior standard deviation") and "standard error" in COLUMN_HELP["sd"]
    for q in ("q5", "q95"):
        assert "posterior quantiles" in COLUMN_HELP[q] and "Wald interval" in COLUMN_HELP[q]
    assert len(COLUMN_HELP["sd"]) < 100  # a tooltip, kept short


# ---- F5 / F7 -----------------------------------------------------------------------------------------------------
def test_the_readme_quotes_the_sentence_as_the_app_says_it_and_naive_as_it_is():
    readme = (ROOT / "README.md").read_text()
    assert "centred 0.15 away from the truth" not in readme
    assert "centred where the exact posterior is" in readme and "mean of the exact posterior" in readme
    (row,) = [line for line in readme.splitlines() if line.startswith("| `naive` |")]
    assert "projected onto its support" not in row and "[0, n]" in row and "not rounded" in row


def test_the_readme_sentence_is_the_demos():
    """The quoted sentence is the one the Compare page shows on its defaults (docs audit s23: the README quoted
    tests/test_demo.py's one-chain naive-against-exact runs, 1.7x / 0.0034, where the page, 2 chains against Exact
    (best method), says 1.8x / 0.0022)."""
    from app_support import open_app

    at = open_app("pages/compare.py")
    assert not at.exception, [e.value for e in at.exception]
    sentence = next(m.value for m in at.markdown if m.value.startswith("##### Naive is ")).removeprefix("##### ")
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert sentence in readme, sentence


# ---- F6 ----------------------------------------------------------------------------------------------------------
def _result(method, **info):
    return Result(method=method, param_names=("theta",), draws=np.zeros((1, 4, 1)), s_dp=np.array([1.0]), info=info)


def test_labels_say_closed_form_numerical_or_given_a_plug_in_n():
    assert result_label(_result("exact", representation="mixture")) == "Exact (closed form)"
    assert result_label(_result("exact", representation="grid")) == "Exact (numerical)"
    assert result_label(_result("exact", representation="mixture", plug_in_n=21)) == \
        "Closed form given plug-in n = 21"
    assert result_label(_result("exact", representation="grid", plug_in_n=21)) == \
        "Numerical posterior given plug-in n = 21"
    assert result_label(_result("auto", plug_in_n=21)) == "Best method given plug-in n = 21"
    assert result_label(_result("da_mcmc", plug_in_n=21)) == "DA-MCMC at plug-in n = 21"
    assert result_label(_result("auto")) == "Exact (best method)"


def test_a_clamped_poisson_exact_run_is_labelled_numerical():
    spec = {"seed": 1, "model": {"name": "poisson_gamma", "n": 5, "upper": 3},
            "mechanism": {"name": "laplace", "epsilon": 1.0}, "data": {"s_dp": [8.4]}}
    result = engine.run_method(engine.prepare(engine.spec_from_dict(spec)), {"name": "exact", "draws": 500}, seed=1)
    assert result.info["representation"] == "grid" and result_label(result) == "Exact (numerical)"
    table = tables.comparison_table({"exact": type("Run", (), {"result": result, "summary": summary(result),
                                                               "convergence": None})()})
    assert set(table["method"]) == {"Exact (numerical)"}



def test_captions_keyed_by_method_name_use_the_runs_label():
    """The table and legend said "Exact (numerical)" for a grid posterior while the captions keyed by method name
    (the convergence warning, Exact (best method)'s caption, Compare's "… not shown") said "Exact (closed form)": a
    run with a result is named by it, a run without one (failed, not started) by its method."""
    from types import SimpleNamespace

    from ui import narrative

    grid = _result("exact", representation="grid")
    few = SimpleNamespace(result=grid, too_few=True, stalled=False, convergence={"draws": 4})
    warning = narrative.convergence_warning({"exact": few})
    assert "Too few draws for a posterior: Exact (numerical) (4 draws)" in warning, warning
    assert tables.run_label("exact", few) == "Exact (numerical)"
    assert tables.run_label("exact", SimpleNamespace(result=None, error="x")) == "Exact (closed form)"
    assert tables.run_label("da_mcmc", SimpleNamespace(result=_result("da_mcmc", plug_in_n=21))) == \
        "DA-MCMC at plug-in n = 21"
    caption = narrative.auto_caption({"picked": "exact", "why": "a closed form or grid exists",
                                      "picked_info": {"representation": "grid"}})
    assert "ran **Exact (numerical)**" in caption, caption


def test_the_run_log_and_the_downloads_name_a_grid_posterior_numerical():
    """Compare on a clamped Poisson (a grid posterior): the run log's line, the NetCDF choice and its button said
    "Exact (closed form)" beside the table's "Exact (numerical)"."""
    from app_support import open_app
    from ui.params.query import to_query
    from ui.params.scenario import Scenario

    scenario = Scenario(model="poisson_gamma", n=5, prior=(("alpha", 1.0), ("beta", 1.0), ("upper", 3)),
                        epsilon=1.0, data="s_dp", s_dp="8.4", methods=("naive", "exact"))
    at = open_app(query=to_query(scenario), timeout=240)
    assert not at.exception, [e.value for e in at.exception]
    assert set(at.dataframe[0].value["method"]) == {"Naive", "Exact (numerical)"}
    lines = [s.label for s in at.status]
    assert any(line.startswith("Exact (numerical): ") for line in lines), lines
    buttons = [b.label for b in at.get("download_button")]
    assert "Exact (numerical) InferenceData (NetCDF)" in buttons, buttons
    said = lines + buttons + [c.value for c in at.caption] + [w.value for w in at.warning]
    assert not [x for x in said if "closed form)" in x], said

# ---- F9 ----------------------------------------------------------------------------------------------------------
def _arviz():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        import arviz as az
    return az


def test_mcse_of_the_mean_is_arviz_for_a_chain_and_sd_over_root_n_for_independent_draws():
    spec = {**engine.DEMO_SPEC, "seed": 11}
    problem = engine.prepare(engine.spec_from_dict(spec))
    chain = engine.run_method(problem, {"name": "da_mcmc", "chains": 4, "draws": 1000}, seed=11)
    table = summary(chain)
    x = chain.draws[:, :, 0]
    expected = np.asarray(_arviz().mcse(x, method="mean")).item()
    assert table.loc["theta", "mcse_mean"] == pytest.approx(expected, rel=1e-9)
    assert rank_diagnostics.ess_mean(x) == pytest.approx(np.asarray(_arviz().ess(x, method="mean")).item(), rel=1e-9)
    # the order of sd / sqrt(ESS bulk), the brief's other definition
    assert table.loc["theta", "mcse_mean"] == pytest.approx(table.loc["theta", "sd"] /
                                                            math.sqrt(table.loc["theta", "ess_bulk"]), rel=0.3)
    exact = engine.run_method(problem, {"name": "exact", "chains": 2, "draws": 1000}, seed=11)
    row = summary(exact).loc["theta"]
    assert row["mcse_mean"] == pytest.approx(row["sd"] / math.sqrt(2000), rel=1e-12)
    assert list(table.columns[:8]) == ["mean", "sd", "q5", "q50", "q95", "r_hat", "ess_bulk", "ess_tail"]


def test_summary_json_carries_mcse_beside_the_existing_keys():
    problem = engine.prepare(engine.spec_from_dict(engine.DEMO_SPEC))
    result = engine.run_method(problem, {"name": "da_mcmc", "chains": 2, "draws": 500}, seed=2)
    row = json.loads(json.dumps(summary_dict(result), allow_nan=False))["parameters"]["theta"]
    assert {"mean", "sd", "q5", "q50", "q95", "r_hat", "ess_bulk", "ess_tail"} <= set(row)
    assert row["mcse_mean"] == pytest.approx(summary(result).loc["theta", "mcse_mean"])


def test_an_estimator_has_no_mcse_of_a_mean():
    spec = {"seed": 0, "model": {"name": "beta_binomial", "n": 30}, "mechanism": {"name": "laplace", "epsilon": 1.0},
            "data": {"s_dp": [7.3]}}
    result = engine.run_method(engine.prepare(engine.spec_from_dict(spec)), {"name": "mcem"}, seed=0)
    assert math.isnan(summary(result).loc["theta", "mcse_mean"])
    assert summary_dict(result)["parameters"]["theta"]["mcse_mean"] is None


def test_diagnostics_page_shows_the_mcse():
    from app_support import open_app

    at = open_app("pages/diagnostics.py", timeout=240)
    assert not at.exception, [e.value for e in at.exception]
    frames = [d.value for d in at.dataframe if "MCSE" in d.value.columns]
    assert frames, [list(d.value.columns) for d in at.dataframe]
    cell = frames[0]["MCSE"].iloc[0]
    assert cell != "—" and float(cell) > 0


def test_the_cli_prints_the_mcse_to_two_significant_digits(tmp_path, capsys):
    """Four decimals (the table's other columns) wrote a small Monte Carlo error as 0.0004 or 0.0."""
    from engine.cli import main

    spec = tmp_path / "spec.toml"
    spec.write_text('seed = 1\n[model]\nname = "beta_binomial"\nn = 1000\n[mechanism]\nname = "laplace"\n'
                    'epsilon = 10.0\n[data]\ns_dp = [312.4]\n[method]\nname = "da_mcmc"\ndraws = 500\n')
    assert main(["run", str(spec), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    header, row = capsys.readouterr().out.splitlines()[-2:]
    cells = dict(zip(header.split(), row.split()[1:]))
    with open(tmp_path / "out" / "summary.json") as fh:
        mcse = json.load(fh)["parameters"]["theta"]["mcse_mean"]
    assert 0 < mcse < 1e-3 and float(cells["mcse_mean"]) == float(f"{mcse:.2g}"), cells


def test_exact_interval_of_one_marginal_is_that_of_all():
    spec = {"seed": 3, "model": {"name": "dirichlet_multinomial", "n": 6, "alpha": [1, 1, 1]},
            "mechanism": {"name": "laplace", "epsilon": 1.0}, "data": {"s_dp": [3.2, -1.5, 2.0]}}
    every = exact_quantiles(engine.prepare(engine.spec_from_dict(spec)))
    assert exact_interval(spec, 1.0, "p[1]") == pytest.approx(every["p[1]"], abs=1e-12)


# --------------------------------------------------------------------------- quantile MCSEs (s22 audit, left then)
def test_mcse_of_the_5_and_95_percent_quantiles_is_arvizs_for_a_chain():
    """q5 and q95 were reported to four decimals with no Monte Carlo error beside them; summary() now carries
    ``mcse_q5`` / ``mcse_q95``, ArviZ's ``mcse(method="quantile")`` (and its ``ess(method="quantile")``)."""
    spec = {**engine.DEMO_SPEC, "seed": 11}
    problem = engine.prepare(engine.spec_from_dict(spec))
    chain = engine.run_method(problem, {"name": "da_mcmc", "chains": 4, "draws": 1000}, seed=11)
    table = summary(chain)
    x = chain.draws[:, :, 0]
    for p, col in ((0.05, "mcse_q5"), (0.95, "mcse_q95")):
        assert table.loc["theta", col] == pytest.approx(
            np.asarray(_arviz().mcse(x, method="quantile", prob=p)).item(), rel=1e-12)
        assert rank_diagnostics.ess_quantile(x, p) == pytest.approx(
            np.asarray(_arviz().ess(x, method="quantile", prob=p)).item(), rel=1e-9)
    row = json.loads(json.dumps(summary_dict(chain), allow_nan=False))["parameters"]["theta"]
    assert row["mcse_q5"] == pytest.approx(table.loc["theta", "mcse_q5"]) and row["mcse_q95"] > 0


def test_mcse_of_a_quantile_of_independent_draws_is_the_sample_quantiles_sd():
    """For N independent draws the quantile's ESS is N, and its standard error sqrt(p (1 - p) / N) / f(q_p) (the
    sample quantile's asymptotic law): averaged over 40 samples of 4,000 standard normal draws, the reported
    mcse_q95 is that (0.0334) to within 3 standard errors of the average (each mcse varies by about 10%)."""
    p, n = 0.95, 4000
    truth = math.sqrt(p * (1 - p) / n) / stats.norm.pdf(stats.norm.ppf(p))
    rng = np.random.default_rng(5)
    got = np.array([rank_diagnostics.mcse_quantile(rng.standard_normal((2, n // 2)), p, ess=n) for _ in range(40)])
    assert abs(got.mean() - truth) < 3 * got.std(ddof=1) / math.sqrt(got.size), (got.mean(), truth)
    spec = {**engine.DEMO_SPEC, "seed": 3}
    exact = engine.run_method(engine.prepare(engine.spec_from_dict(spec)), {"name": "exact", "chains": 2,
                                                                             "draws": 1000}, seed=3)
    row = summary(exact).loc["theta"]
    assert row["mcse_q95"] == pytest.approx(rank_diagnostics.mcse_quantile(exact.draws[:, :, 0], 0.95, ess=2000))


def test_an_estimator_has_no_quantile_mcse_and_the_command_line_shows_them(tmp_path, cli):
    spec = {"seed": 0, "model": {"name": "beta_binomial", "n": 30}, "mechanism": {"name": "laplace", "epsilon": 1.0},
            "data": {"s_dp": [7.3]}}
    result = engine.run_method(engine.prepare(engine.spec_from_dict(spec)), {"name": "mcem"}, seed=0)
    assert summary_dict(result)["parameters"]["theta"]["mcse_q5"] is None
    path = tmp_path / "s.json"
    path.write_text(json.dumps({**spec, "method": {"name": "da_mcmc", "chains": 2, "draws": 300, "warmup": 100}}))
    done = cli("run", str(path), "--out", str(tmp_path / "o"), "--quiet")
    assert done.returncode == 0, done.stderr  # what check=True checked
    out = done.stdout
    header = next(line for line in out.splitlines() if "mcse_mean" in line).split()
    assert header[-3:] == ["mcse_mean", "mcse_q5", "mcse_q95"], header
