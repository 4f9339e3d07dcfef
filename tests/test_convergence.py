"""The convergence verdict (Vehtari et al. 2021: R-hat <= 1.01, bulk and tail ESS >= 400) travels with
every MCMC summary: summary().attrs, summary.json and a warning line from the CLI."""
from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import engine
from engine.numerics.diagnostics import ESS_MIN, RHAT_MAX, convergence

ROOT = Path(__file__).resolve().parents[1]


def _mcmc_result(draws: np.ndarray, method: str = "da_mcmc") -> engine.Result:
    """A hand-made result; MCMC methods mark theirs with info["mcmc"] = True."""
    mcmc = method in ("da_mcmc", "pseudo_marginal")
    return engine.Result(method=method, param_names=("theta",), draws=draws[:, :, None], s_dp=np.array([1.0]),
                         info={"mcmc": True} if mcmc else {})


def test_independent_chains_are_converged():
    draws = np.random.default_rng(0).normal(size=(4, 1000))
    v = convergence(_mcmc_result(draws))
    assert v.applicable and v.converged and v.reasons == ()
    assert v.r_hat_max <= RHAT_MAX and v.ess_bulk_min >= ESS_MIN and v.ess_tail_min >= ESS_MIN


def test_chains_stuck_in_different_places_are_not_converged_and_say_why():
    rng = np.random.default_rng(1)
    draws = rng.normal(size=(4, 1000)) * 0.1 + np.array([0.0, 0.0, 0.0, 3.0])[:, None]
    v = convergence(_mcmc_result(draws))
    assert v.applicable and not v.converged
    assert any(r.startswith("R-hat of theta") for r in v.reasons)
    assert "pseudo_marginal" in v.message("da_mcmc")


def test_a_slowly_mixing_chain_fails_on_ess_even_with_good_r_hat():
    # AR(1) with phi = 0.995: R-hat can look fine over a long run, but the ESS is about 4000 * 0.0025 = 10
    rng = np.random.default_rng(2)
    x = np.zeros((4, 4000))
    for c in range(4):
        e = rng.normal(size=4000)
        for t in range(1, 4000):
            x[c, t] = 0.995 * x[c, t - 1] + e[t]
    v = convergence(_mcmc_result(x))
    assert not v.converged and any("bulk ESS" in r for r in v.reasons)


def test_one_chain_is_judged_on_its_two_halves():
    rng = np.random.default_rng(3)
    good = convergence(_mcmc_result(rng.normal(size=(1, 4000))))
    assert good.converged and np.isfinite(good.r_hat_max)
    drift = np.concatenate([rng.normal(size=2000), 5 + rng.normal(size=2000)])[None, :]
    assert not convergence(_mcmc_result(drift)).converged


def test_a_chain_that_never_moves_is_not_converged():
    v = convergence(_mcmc_result(np.full((4, 100), 0.3)))
    assert not v.converged and v.reasons == ("theta never moved",)


def test_every_registered_mcmc_method_marks_its_results():
    problem = engine.prepare({**SMALL_EPS, "model": {"name": "beta_binomial", "n": 20}, "data": {"s_dp": [7]}})
    unknown_n = engine.prepare({**SMALL_EPS, "model": {"name": "beta_binomial", "n_prior": {"name": "poisson", "mean": 20}},
                                "n_mechanism": {"name": "laplace", "scale": 1.0}, "data": {"s_dp": [7], "n_dp": 20.4}})
    for name, entry in engine.METHODS.items():
        if name in ("ops",):
            continue
        result = entry(unknown_n if name == "rjmcmc" else problem, engine.method_rng(0), engine.validate_method({"name": name, "chains": 2, "draws": 50,
                                                                              "warmup": 20}))
        assert bool(result.info.get("mcmc", False)) == (entry.mcmc or name == "auto" and result.info["mcmc"]), name


def test_independent_draw_methods_get_no_verdict():
    draws = np.random.default_rng(4).normal(size=(1, 50))  # too few for any MCMC verdict
    for method in ("exact", "abc_rejection", "naive", "ops"):
        v = convergence(_mcmc_result(draws, method))
        assert not v.applicable


def test_independent_draws_are_judged_by_their_number():
    """Issue 20 item 1: ABC stopped by its limits with 2 draws must not pass as a posterior. N independent
    draws have ESS N, so the rule is N >= 400; one draw fewer fails, and says how many there are."""
    enough = convergence(_mcmc_result(np.zeros((1, int(ESS_MIN))) + np.arange(int(ESS_MIN)), "abc_rejection"))
    assert enough.independent and enough.converged and not enough.applicable and enough.draws == ESS_MIN
    few = convergence(_mcmc_result(np.arange(2.0).reshape(1, 2), "abc_rejection"))
    assert few.independent and not few.converged and few.too_few and few.draws == 2
    assert few.reasons == ("only 2 independent draws (fewer than 400)",)
    assert "too few draws" in few.message("abc_rejection") and few.as_dict()["independent"] is True
    # what raises them, for the method at hand: ABC's limits only for ABC, no "use method exact" to exact itself
    assert few.message("abc_rejection").endswith(
        ". Raise its draws or its time and proposal limits, or use method exact or auto.")
    assert few.message("naive").endswith(". Raise its draws, or use method exact or auto.")
    assert few.message("exact").endswith(". Raise its draws.")
    assert not convergence(_mcmc_result(np.zeros((1, int(ESS_MIN) - 1)), "exact")).converged
    mcmc = convergence(_mcmc_result(np.random.default_rng(0).normal(size=(4, 1000))))
    assert not mcmc.independent and mcmc.draws == 4000


def test_cli_warns_when_abc_returns_too_few_draws(tmp_path, cli):
    spec = tmp_path / "few.toml"
    spec.write_text('seed = 3\n[model]\nname = "beta_binomial"\nn = 30\n[mechanism]\nname = "laplace"\n'
                    'epsilon = 1.0\n[data]\ns_dp = [12]\n[method]\nname = "abc_rejection"\nchains = 1\ndraws = 50\n')
    out = cli("run", str(spec), "--out", str(tmp_path / "o"))
    assert out.returncode == 0, out.stderr
    assert "abc_rejection has too few draws: only 50 independent draws (fewer than 400)" in out.stderr
    verdict = json.loads((tmp_path / "o" / "summary.json").read_text())["convergence"]
    assert verdict["independent"] and not verdict["converged"] and verdict["draws"] == 50


SMALL_EPS = {
    "seed": 1,
    "model": {"name": "beta_binomial", "n": 20000},
    "mechanism": {"name": "laplace", "scale": 1000.0},
    "data": {"s_dp": [6000]},
    "method": {"name": "da_mcmc", "chains": 2, "draws": 300, "warmup": 100},
}


def test_summary_and_summary_json_carry_the_verdict_of_a_stalled_run():
    """Issue 12's measured case: n = 20000, Laplace scale 1000. A short DA-MCMC run there cannot mix."""
    result = engine.run(SMALL_EPS)
    table = engine.summary(result)
    verdict = table.attrs["convergence"]
    assert verdict["applicable"] and not verdict["converged"] and verdict["reasons"]
    out = engine.summary_dict(result)
    assert out["convergence"] == verdict
    json.dumps(out)  # plain JSON


def test_cli_warns_on_stderr_and_still_exits_zero(tmp_path, capsys):
    from engine import cli

    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(SMALL_EPS))
    assert cli.main(["run", str(spec), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    err = capsys.readouterr().err
    warnings = [line for line in err.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 1 and "has not converged" in warnings[0]
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["convergence"]["converged"] is False


def test_cli_is_silent_for_independent_draws(tmp_path, capsys):
    from engine import cli

    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({**SMALL_EPS, "method": {"name": "exact"}}))
    assert cli.main(["run", str(spec), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    assert "warning" not in capsys.readouterr().err


def _chains(kind: str) -> np.ndarray:
    """Draws shaped (chain, draw) that exercise every branch: independent, autocorrelated (AR(1),
    the monotone-sequence correction), heavy-tailed, stuck in different places, discrete with ties,
    odd draw counts (the split drops the middle draw) and a single chain."""
    rng = np.random.default_rng(7)
    if kind == "iid":
        return rng.normal(size=(4, 500))
    if kind == "ar1":
        x = np.zeros((3, 801))
        e = rng.normal(size=x.shape)
        for t in range(1, x.shape[1]):
            x[:, t] = 0.95 * x[:, t - 1] + e[:, t]
        return x
    if kind == "cauchy":
        return rng.standard_cauchy(size=(4, 300))
    if kind == "stuck":
        return rng.normal(size=(4, 400)) * 0.1 + np.array([0.0, 0.0, 0.0, 3.0])[:, None]
    if kind == "ties":
        return rng.poisson(2.0, size=(2, 333)).astype(float)
    return rng.normal(size=(1, 200)).cumsum(axis=1)


@pytest.mark.parametrize("kind", ["iid", "ar1", "cauchy", "stuck", "ties", "single"])
def test_rank_diagnostics_match_arviz_to_round_off(kind):
    """engine.numerics.rank_diagnostics (NumPy, no ArviZ import) computes ArviZ 0.23's rank R-hat, bulk ESS and
    tail ESS: the same numbers up to floating-point round-off."""
    from engine.numerics import rank_diagnostics as rd
    from engine.numerics.diagnostics import _arviz

    az = _arviz()
    x = _chains(kind)
    ours = [rd.rhat(x), rd.ess_bulk(x), rd.ess_tail(x)]
    theirs = [float(az.rhat(x)) if x.shape[0] >= 2 else float("nan"), float(az.ess(x, method="bulk")),
              float(az.ess(x, method="tail"))]
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, equal_nan=True)


def test_summaries_do_not_import_arviz():
    """A summary (and so the app's first figure) never pays ArviZ's import: it is needed only for
    InferenceData and NetCDF."""
    code = ("import sys, numpy as np, engine; "
            "r = engine.Result(method='da_mcmc', param_names=('theta',), draws=np.random.default_rng(0)"
            ".normal(size=(2, 100, 1)), s_dp=np.array([1.0]), info={'mcmc': True}); "
            "engine.summary(r); sys.exit(1 if 'arviz' in sys.modules else 0)")
    assert subprocess.run([sys.executable, "-c", code], cwd=ROOT).returncode == 0


def test_a_converged_verdict_states_its_bounds_as_bounds():
    """"R-hat ≤ 1.009" for 1.00949 (rounded to nearest) was false; the ESS bound rounds down."""
    from engine.numerics.diagnostics import Convergence
    v = Convergence(applicable=True, converged=True, r_hat_max=1.00949, ess_bulk_min=400.6, ess_tail_min=812.0)
    assert v.message("da_mcmc") == "da_mcmc: converged (R-hat ≤ 1.010, ESS ≥ 400)"
    exact = Convergence(applicable=True, converged=True, r_hat_max=1.004, ess_bulk_min=999.99, ess_tail_min=1200.0)
    assert exact.message("da_mcmc") == "da_mcmc: converged (R-hat ≤ 1.004, ESS ≥ 999)"


def test_a_failed_checks_numbers_are_rounded_the_way_its_comparison_stays_true():
    """The reasons rounded to the nearest: an ESS of 399.6 read "bulk ESS of theta is 400 < 400", and the pages'
    tables (rounded down) said 399 beside it. ESS now rounds down and R-hat up, as the tables and
    Convergence.message round them; the R-hat is the draws' own (chains stuck apart), rounded up."""
    import pandas as pd
    from engine.numerics.diagnostics import _rhat

    rng = np.random.default_rng(1)
    draws = rng.normal(size=(4, 1000)) * 0.1 + np.array([0.0, 0.0, 0.0, 3.0])[:, None]
    table = pd.DataFrame({"ess_bulk": [399.6], "ess_tail": [12.9]}, index=["theta"])
    v = convergence(_mcmc_result(draws), table)
    r = _rhat(draws)
    assert v.reasons == (f"R-hat of theta is {math.ceil(round(r * 1000, 6)) / 1000:.3f} > {RHAT_MAX}",
                         "bulk ESS of theta is 399 < 400", "tail ESS of theta is 12 < 400")
