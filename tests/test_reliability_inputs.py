"""Reliability: a corpus of bad inputs, each answered by a ValueError naming the field (library)
or one line on stderr and exit code 2 (CLI); and property-based specs that either run or raise
ValueError, never anything else."""
from __future__ import annotations

import copy
import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import engine
from engine.core.data import load_records_csv

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

BASE = {
    "seed": 1,
    "model": {"name": "beta_binomial", "n": 30, "a": 1.0, "b": 1.0},
    "mechanism": {"name": "laplace", "epsilon": 1.0},
    "data": {"s_dp": [3]},
    "method": {"name": "naive", "chains": 1, "draws": 100, "warmup": 10},
}


def _with(path, value, base=BASE):
    """Copy of ``base`` with a dotted path set (value ``...`` deletes the key)."""
    spec = copy.deepcopy(base)
    *head, last = path.split(".")
    node = spec
    for key in head:
        node = node[key]
    if value is ...:
        node.pop(last, None)
    else:
        node[last] = value
    return spec


# An unknown-n spec (issue 9): model.n_prior, [n_mechanism], data.n_dp, method rjmcmc
UNKNOWN_N = {
    "seed": 3,
    "model": {"name": "beta_binomial", "a": 1.0, "b": 1.0, "n_prior": {"name": "poisson", "mean": 20.0}},
    "mechanism": {"name": "laplace", "scale": 2.0},
    "n_mechanism": {"name": "laplace", "scale": 1.0},
    "data": {"s_dp": [7.3], "n_dp": 21.4},
    "method": {"name": "rjmcmc", "chains": 1, "draws": 100, "warmup": 10},
}

# The naive-Bayes log-linear model (issue 11): I = 2 classes, K = 2 features with J = (2, 3) levels
LOGLIN = {
    "seed": 1,
    "model": {"name": "naive_bayes_loglinear", "n": 20, "class_levels": 2, "feature_levels": [2, 3]},
    "mechanism": {"name": "laplace", "epsilon": 1.0},
    "data": {"simulate": {"pi": [0.4, 0.6], "p": [[[0.5, 0.5], [0.2, 0.8]], [[0.2, 0.3, 0.5], [0.6, 0.2, 0.2]]]}},
    "method": {"name": "naive", "chains": 1, "draws": 100, "warmup": 10},
}
LOGLIN_S_DP = {**LOGLIN, "data": {"s_dp": [1.0] * 10}}

# Clamped linear regression (issue 11): p = 2, paper 000 Sec. 5 defaults
REG = {
    "seed": 1,
    "model": {"name": "linear_regression", "n": 20, "p": 2},
    "mechanism": {"name": "laplace", "epsilon": 1.0},
    "data": {"simulate": {"beta": [-1.79, -2.89, -0.66]}},
    "method": {"name": "naive", "chains": 1, "draws": 100, "warmup": 10},
}
REG_S_DP = {**REG, "data": {"s_dp": [1.0] * 9}}

# (case id, spec, text that must appear in the message: the field)
SPEC_CASES = [
    ("regression p zero", _with("model.p", 0, REG), "model.p"),
    ("regression p float", _with("model.p", 1.5, REG), "model.p"),
    ("regression x_mean wrong length", _with("model.x_mean", [0.0], REG), "model.x_mean"),
    ("regression x_mean text", _with("model.x_mean", ["a", 0.0], REG), "model.x_mean"),
    ("regression x_cov not symmetric", _with("model.x_cov", [[1.0, 0.5], [0.0, 1.0]], REG), "model.x_cov"),
    ("regression x_cov not positive definite", _with("model.x_cov", [[1.0, 2.0], [2.0, 1.0]], REG), "model.x_cov"),
    ("regression x_cov wrong size", _with("model.x_cov", [[1.0]], REG), "model.x_cov"),
    ("regression x_cov scalar", _with("model.x_cov", 1.0, REG), "model.x_cov"),
    ("regression sigma zero", _with("model.sigma", 0.0, REG), "model.sigma"),
    ("regression prior_sd negative", _with("model.prior_sd", -2.0, REG), "model.prior_sd"),
    ("regression lo above hi", _with("model.lo", 20.0, REG), "model.hi"),
    ("regression hi list with lo above", _with("model.hi", [10.0, -20.0, 10.0], REG), "model.hi"),
    ("regression lo wrong length", _with("model.lo", [-1.0, -1.0], REG), "model.lo"),
    ("regression lo infinite", _with("model.lo", float("-inf"), REG), "model.lo"),
    ("regression unknown key", _with("model.alpha", 1.0, REG), "model.alpha"),
    ("regression s_dp too short", _with("data.s_dp", [1.0] * 8, REG_S_DP), "data.s_dp"),
    ("regression s_dp too long", _with("data.s_dp", [1.0] * 10, REG_S_DP), "data.s_dp"),
    ("regression beta wrong length", _with("data.simulate.beta", [1.0, 2.0], REG), "data.simulate.beta"),
    ("regression beta missing", _with("data.simulate", {"theta": 0.3}, REG), "data.simulate"),
    ("regression records wrong width", _with("data", {"records": [[0.1, 0.2], [0.3, 0.4]]}, REG), "data.records"),
    ("regression record not finite", _with("data", {"records": [[0.1, 0.2, float("nan")]]}, REG), "data.records"),
    ("regression discrete noise", _with("mechanism", {"name": "discrete_laplace", "scale": 1.0}, REG), "mechanism.name"),
    ("regression randomized response", _with("mechanism", {"name": "randomized_response", "epsilon": 1.0}, REG),
     "mechanism.name"),
    ("regression exact", _with("method", {"name": "exact"}, REG), "method.name"),
    ("regression ops", _with("method", {"name": "ops"}, REG), "method.name"),
    ("regression rjmcmc", _with("method", {"name": "rjmcmc"}, REG), "method.name"),
    ("regression bernstein_sheldon", _with("method", {"name": "bernstein_sheldon"}, REG), "method.name"),
    ("regression mcem", _with("method", {"name": "mcem"}, REG), "method.name"),
    ("regression sigma with sigma_prior", _with("model.sigma_prior", {"a": 2.0, "b": 2.0}, _with("model.sigma", 1.0, REG)),
     "model.sigma"),
    ("regression sigma_prior a zero", _with("model.sigma_prior", {"a": 0.0, "b": 2.0}, REG), "model.sigma_prior.a"),
    ("regression sigma_prior missing b", _with("model.sigma_prior", {"a": 2.0}, REG), "model.sigma_prior"),
    ("regression sigma_prior not a table", _with("model.sigma_prior", 2.0, REG), "model.sigma_prior"),
    ("regression sigma2 without sigma_prior", _with("data.simulate.sigma2", 2.0, REG), "data.simulate"),
    ("regression sigma2 missing", _with("model.sigma_prior", {"a": 2.0, "b": 2.0}, REG), "data.simulate"),
    ("regression sigma2 negative", _with("data.simulate.sigma2", -1.0, _with("model.sigma_prior", {"a": 2.0, "b": 2.0}, REG)),
     "data.simulate.sigma2"),
    ("loglinear one class", _with("model.class_levels", 1, LOGLIN), "model.class_levels"),
    ("loglinear class levels float", _with("model.class_levels", 2.5, LOGLIN), "model.class_levels"),
    ("loglinear no features", _with("model.feature_levels", [], LOGLIN), "model.feature_levels"),
    ("loglinear feature with one level", _with("model.feature_levels", [2, 1], LOGLIN), "model.feature_levels"),
    ("loglinear feature levels not a list", _with("model.feature_levels", 3, LOGLIN), "model.feature_levels"),
    ("loglinear alpha zero", _with("model.alpha", 0.0, LOGLIN), "model.alpha"),
    ("loglinear alpha negative", _with("model.alpha", -1.0, LOGLIN), "model.alpha"),
    ("loglinear unknown model key", _with("model.beta", 1.0, LOGLIN), "model.beta"),
    ("loglinear s_dp too short", _with("data.s_dp", [1.0] * 9, LOGLIN_S_DP), "data.s_dp"),
    ("loglinear s_dp too long", _with("data.s_dp", [1.0] * 12, LOGLIN_S_DP), "data.s_dp"),
    ("loglinear pi does not sum to 1", _with("data.simulate.pi", [0.5, 0.6], LOGLIN), "data.simulate.pi"),
    ("loglinear pi negative", _with("data.simulate.pi", [1.2, -0.2], LOGLIN), "data.simulate.pi"),
    ("loglinear pi wrong length", _with("data.simulate.pi", [0.2, 0.3, 0.5], LOGLIN), "data.simulate.pi"),
    ("loglinear p missing a table", _with("data.simulate.p", [[[0.5, 0.5], [0.2, 0.8]]], LOGLIN), "data.simulate.p"),
    ("loglinear p row of wrong length", _with("data.simulate.p", [[[0.5, 0.5], [0.2, 0.8]], [[0.5, 0.5], [0.6, 0.2, 0.2]]],
                                              LOGLIN), "data.simulate.p[1][0]"),
    ("loglinear p row not summing to 1", _with("data.simulate.p", [[[0.5, 0.6], [0.2, 0.8]], [[0.2, 0.3, 0.5], [0.6, 0.2, 0.2]]],
                                               LOGLIN), "data.simulate.p[0][0]"),
    ("loglinear p missing", _with("data.simulate.p", ..., LOGLIN), "data.simulate"),
    ("loglinear from_prior false", _with("data.simulate", {"from_prior": False}, LOGLIN), "data.simulate.from_prior"),
    ("loglinear record level out of range", _with("data", {"records": [[0, 1, 3], [1, 0, 0]]}, LOGLIN),
     "data.records column x2"),
    ("loglinear class out of range", _with("data", {"records": [[2, 1, 0], [1, 0, 0]]}, LOGLIN), "data.records column y"),
    ("loglinear records of wrong width", _with("data", {"records": [[0, 1], [1, 0]]}, LOGLIN), "data.records"),
    ("loglinear randomized response", _with("mechanism", {"name": "randomized_response", "epsilon": 1.0}, LOGLIN),
     "mechanism.name"),
    ("loglinear exact", _with("method", {"name": "exact"}, LOGLIN), "method.name"),
    ("loglinear abc", _with("method", {"name": "abc_rejection"}, LOGLIN), "method.name"),
    ("loglinear ops", _with("method", {"name": "ops"}, LOGLIN), "method.name"),
    ("loglinear bernstein_sheldon", _with("method", {"name": "bernstein_sheldon"}, LOGLIN), "method.name"),
    ("loglinear unknown n", {**LOGLIN_S_DP, "model": {**{k: v for k, v in LOGLIN["model"].items() if k != "n"},
                                                      "n_prior": {"name": "poisson", "mean": 20.0}},
                             "n_mechanism": {"name": "laplace", "scale": 1.0},
                             "data": {"s_dp": [1.0] * 10, "n_dp": 20.0}}, "model.n_prior"),
    ("n prior mean zero", _with("model.n_prior.mean", 0.0, UNKNOWN_N), "model.n_prior.mean"),
    ("n prior mean negative", _with("model.n_prior.mean", -3.0, UNKNOWN_N), "model.n_prior.mean"),
    ("n prior mean missing", _with("model.n_prior.mean", ..., UNKNOWN_N), "model.n_prior.mean"),
    ("n prior unknown name", _with("model.n_prior.name", "geometric", UNKNOWN_N), "model.n_prior.name"),
    ("n prior not a table", _with("model.n_prior", 20, UNKNOWN_N), "model.n_prior"),
    ("negbin prior without dispersion", _with("model.n_prior", {"name": "negative_binomial", "mean": 20.0}, UNKNOWN_N),
     "model.n_prior.dispersion"),
    ("negbin dispersion zero", _with("model.n_prior", {"name": "negative_binomial", "mean": 20.0, "dispersion": 0.0},
                                     UNKNOWN_N), "model.n_prior.dispersion"),
    ("n prior unknown key", _with("model.n_prior.sd", 2.0, UNKNOWN_N), "model.n_prior.sd"),
    ("n mechanism without scale or budget", _with("n_mechanism", {"name": "laplace"}, UNKNOWN_N), "n_mechanism"),
    ("n mechanism scale zero", _with("n_mechanism.scale", 0.0, UNKNOWN_N), "n_mechanism.scale"),
    ("n mechanism randomized response", _with("n_mechanism", {"name": "randomized_response", "epsilon": 1.0},
                                              UNKNOWN_N), "n_mechanism.name"),
    ("n mechanism missing", _with("n_mechanism", ..., UNKNOWN_N), "n_mechanism"),
    ("n_dp missing", _with("data.n_dp", ..., UNKNOWN_N), "data.n_dp"),
    ("n_dp text", _with("data.n_dp", "twenty", UNKNOWN_N), "data.n_dp"),
    ("n_dp nan", _with("data.n_dp", float("nan"), UNKNOWN_N), "data.n_dp"),
    ("n_dp non-integer for discrete noise", _with("n_mechanism", {"name": "discrete_laplace", "scale": 1.0},
                                                  UNKNOWN_N), "data.n_dp"),
    ("unknown n with model.n and s_dp", _with("model.n", 20, UNKNOWN_N), "model.n"),
    ("unknown n on linear_regression", {**UNKNOWN_N, "model": {"name": "linear_regression", "p": 1,
                                                               "n_prior": {"name": "poisson", "mean": 20.0}},
                                        "data": {"s_dp": [3, 4, 5, 6, 7, 8], "n_dp": 7.0}}, "model.n_prior"),
    ("n_dp on a histogram without n_mechanism", {**{k: v for k, v in UNKNOWN_N.items() if k != "n_mechanism"},
                                                "model": {"name": "dirichlet_multinomial", "alpha": [1, 1],
                                                          "n_prior": {"name": "poisson", "mean": 20.0}},
                                                "data": {"s_dp": [3, 4], "n_dp": 7.0}}, "data.n_dp"),
    ("rjmcmc with a known n", _with("method.name", "rjmcmc"), "method.name"),
    ("n_mechanism with a known n", {**BASE, "n_mechanism": {"name": "laplace", "scale": 1.0}}, "n_mechanism"),
    ("n_dp with a known n", _with("data.n_dp", 30.0), "data.n_dp"),
    ("n_dp with simulated data", {**UNKNOWN_N, "data": {"simulate": {"theta": 0.3}, "n_dp": 20.0}}, "data.n_dp"),
    ("rjmcmc jumps zero", _with("method.jumps", 0, UNKNOWN_N), "method.jumps"),
    ("mcem unknown estep", _with("method", {"name": "mcem", "estep": "exact"}), "method.estep"),
    ("mcem importance on clamped poisson", {**BASE, "model": {"name": "poisson_gamma", "n": 5, "upper": 3},
                                            "method": {"name": "mcem", "estep": "importance"}}, "method.estep"),
    ("mcem on dirichlet", {**BASE, "model": {"name": "dirichlet_multinomial", "n": 5, "alpha": [1, 1]},
                           "data": {"s_dp": [2, 3]}, "method": {"name": "mcem"}}, "model.name"),
    ("rjmcmc with randomized response", {**UNKNOWN_N, "mechanism": {"name": "randomized_response", "epsilon": 1.0},
                                         "data": {"s_dp": [7], "n_dp": 21.4}}, "mechanism.name"),
    ("unknown model", _with("model.name", "lognormal"), "model.name"),
    ("model name not a string", _with("model.name", 3), "model.name"),
    ("missing model name", _with("model.name", ...), "model.name"),
    ("n zero", _with("model.n", 0), "model.n"),
    ("n negative", _with("model.n", -5), "model.n"),
    ("n float", _with("model.n", 2.5), "model.n"),
    ("n string", _with("model.n", "thirty"), "model.n"),
    ("n bool", _with("model.n", True), "model.n"),
    ("n missing", _with("model.n", ...), "model.n"),
    ("n too big", _with("model.n", 10**8), "model.n"),
    ("prior a zero", _with("model.a", 0.0), "model.a"),
    ("prior b negative", _with("model.b", -1.0), "model.b"),
    ("prior a nan", _with("model.a", float("nan")), "model.a"),
    ("prior a inf", _with("model.a", float("inf")), "model.a"),
    ("unknown model key", _with("model.c", 1.0), "model.c"),
    ("unknown mechanism", _with("mechanism.name", "exponential"), "mechanism.name"),
    ("epsilon zero", _with("mechanism.epsilon", 0.0), "mechanism.epsilon"),
    ("epsilon negative", _with("mechanism.epsilon", -1.0), "mechanism.epsilon"),
    ("epsilon nan", _with("mechanism.epsilon", float("nan")), "mechanism.epsilon"),
    ("epsilon inf", _with("mechanism.epsilon", float("inf")), "mechanism.epsilon"),
    ("epsilon string", _with("mechanism.epsilon", "one"), "mechanism.epsilon"),
    ("scale and epsilon", _with("mechanism.scale", 1.0), "mechanism"),
    ("no budget", {**BASE, "mechanism": {"name": "laplace"}}, "mechanism"),
    ("sensitivity zero", _with("mechanism.sensitivity", 0.0), "mechanism.sensitivity"),
    ("delta one", {**BASE, "mechanism": {"name": "gaussian", "epsilon": 1.0, "delta": 1.0}}, "mechanism.delta"),
    ("delta zero", {**BASE, "mechanism": {"name": "gaussian", "epsilon": 1.0, "delta": 0.0}}, "mechanism.delta"),
    ("delta above one", {**BASE, "mechanism": {"name": "gaussian", "epsilon": 1.0, "delta": 1.5}}, "mechanism.delta"),
    ("gaussian epsilon without delta", {**BASE, "mechanism": {"name": "gaussian", "epsilon": 1.0}}, "mechanism.delta"),
    ("rho negative", {**BASE, "mechanism": {"name": "discrete_gaussian", "rho": -0.5}}, "mechanism.rho"),
    ("sigma zero", {**BASE, "mechanism": {"name": "gaussian", "sigma": 0.0}}, "mechanism.sigma"),
    ("rho on laplace", {**BASE, "mechanism": {"name": "laplace", "rho": 0.5}}, "mechanism.rho"),
    ("unknown mechanism key", _with("mechanism.budget", 1.0), "mechanism.budget"),
    ("rr on poisson", {**BASE, "model": {"name": "poisson_gamma", "n": 5},
                       "mechanism": {"name": "randomized_response", "epsilon": 1.0}}, "mechanism.name"),
    ("discrete noise on real statistic", {**BASE, "model": {"name": "normal_known_sd", "n": 5},
                                          "mechanism": {"name": "discrete_laplace", "epsilon": 1.0}}, "mechanism.name"),
    ("s_dp wrong length", _with("data.s_dp", [1, 2]), "data.s_dp"),
    ("s_dp empty", _with("data.s_dp", []), "data.s_dp"),
    ("s_dp nan", _with("data.s_dp", [float("nan")]), "data.s_dp"),
    ("s_dp inf", _with("data.s_dp", [float("inf")]), "data.s_dp"),
    ("s_dp text", _with("data.s_dp", ["three"]), "data.s_dp"),
    ("s_dp non-integer for discrete noise", {**BASE, "mechanism": {"name": "discrete_laplace", "epsilon": 1.0},
                                             "data": {"s_dp": [3.5]}}, "data.s_dp"),
    ("two data sources", _with("data.simulate", {"theta": 0.3}), "data"),
    ("no data source", {**BASE, "data": {}}, "data"),
    ("simulate theta out of range", {**BASE, "data": {"simulate": {"theta": 1.5}}}, "data.simulate.theta"),
    ("simulate missing parameter", {**BASE, "data": {"simulate": {"lam": 2.0}}}, "data.simulate"),
    ("records outside support", {**BASE, "data": {"records": [0, 1, 2]}}, "data.records"),
    ("dirichlet p not summing to 1", {**BASE, "model": {"name": "dirichlet_multinomial", "n": 5, "alpha": [1, 1]},
                                      "data": {"simulate": {"p": [0.5, 0.6]}}}, "data.simulate.p"),
    ("dirichlet alpha negative", {**BASE, "model": {"name": "dirichlet_multinomial", "n": 5, "alpha": [1, -1]}},
     "model.alpha"),
    ("rr counts not summing to n", {**BASE, "model": {"name": "dirichlet_multinomial", "n": 10, "alpha": [1, 1]},
                                    "mechanism": {"name": "randomized_response", "epsilon": 1.0},
                                    "data": {"s_dp": [3, 3]}}, "data.s_dp"),
    ("normal hi below lo", {**BASE, "model": {"name": "normal_known_sd", "n": 5, "lo": 2.0, "hi": 1.0}}, "model.hi"),
    ("unknown method", _with("method.name", "hmc"), "method.name"),
    ("chains zero", _with("method.chains", 0), "method.chains"),
    ("draws negative", _with("method.draws", -10), "method.draws"),
    ("unknown method key", _with("method.step_size", 0.1), "method.step_size"),
    ("seed negative", _with("seed", -1), "seed"),
    ("seed text", _with("seed", "abc"), "seed"),
    ("unknown top-level key", _with("model_name", "x"), "model_name"),
]


@pytest.mark.parametrize("case,spec,field", SPEC_CASES, ids=[c[0] for c in SPEC_CASES])
def test_bad_spec_raises_value_error_naming_field(case, spec, field):
    with pytest.raises(ValueError) as info:
        spec = engine.spec_from_dict(spec)
        engine.run_method(engine.prepare(spec), dict(spec.method), spec.seed)
    msg = str(info.value)
    assert field in msg, f"{case}: message does not name {field!r}: {msg}"
    assert "invalid" in msg or "required" in msg


def test_corpus_is_large():
    assert len(SPEC_CASES) + len(CSV_CASES) >= 40


CSV_CASES = [
    ("empty file", b"", "empty"),
    ("whitespace only", b"   \n\n", "empty"),
    ("header only", b"x\n", "no records"),
    ("text cell", b"x\n1\n0\nyes\n", "line 4"),
    ("text cell after blank lines", b"x\n1\n\n\n0\nyes\n", "line 6"),
    ("nan cell", b"x\n1\nnan\n", "finite"),
    ("inf cell", b"x\n1\ninf\n", "finite"),
    ("empty cell", b"x\n1\n\n,\n", "must be a number"),
    ("non-utf8 bytes", b"x\n1\n\xff\xfe\n", "UTF-8"),
    ("duplicate columns", b"x,x\n1,1\n", "unique"),
    ("two columns without choice", b"x,y\n1,1\n", "data.column"),
    ("formula cell", b"x\n=1+1\n", "must be a number"),
]


@pytest.mark.parametrize("case,raw,text", CSV_CASES, ids=[c[0] for c in CSV_CASES])
def test_bad_csv_raises_value_error(case, raw, text):
    with pytest.raises(ValueError) as info:
        load_records_csv(raw)
    assert text in str(info.value), str(info.value)
    assert "data.csv" in str(info.value) or "data.column" in str(info.value)


def test_csv_too_many_rows_is_refused_without_parsing_forever(monkeypatch):
    from engine.core import data

    monkeypatch.setattr(data, "MAX_RECORDS", 1000)  # the real limit (10^7) makes a 20 MB file
    assert len(load_records_csv(b"x\n" + b"1\n" * 1000)) == 1000
    raw = b"x\n" + b"1\n" * 1001
    with pytest.raises(ValueError, match="has more than 1,000 records; at most 1,000 are allowed"):
        load_records_csv(raw)


def test_csv_with_ten_million_rows_is_refused_quickly(monkeypatch):
    """10^7 one-digit records (20 MB, under the byte cap) over a limit of 10^3 are refused as soon as the
    parser passes the limit (the loader streams rows), not after reading them all."""
    from engine.core import data

    monkeypatch.setattr(data, "MAX_RECORDS", 1000)
    raw = b"x\n" + b"1\n" * 10_000_000
    with pytest.raises(ValueError, match="more than 1,000 records"):
        load_records_csv(raw)


def test_one_limit_on_n_everywhere():
    """Issue 20 item 6: a CSV over 1,000,000 records was refused while a typed n = 2,000,000 ran. The CSV
    limit, the model's n and so the URL's n (read through the same engine check) are one number."""
    import engine
    from engine.core import data
    from engine.models import MAX_N

    assert data.MAX_RECORDS == MAX_N == 10_000_000
    spec = {**engine.DEMO_SPEC, "model": {**engine.DEMO_SPEC["model"], "n": MAX_N + 1}}
    with pytest.raises(ValueError, match="model.n = 10000001 is invalid: must be an integer >= 1 and <= 10000000"):
        engine.spec_from_dict(spec)


def test_csv_oversized_bytes_refused():
    from engine.core import data

    with pytest.raises(ValueError, match="MB"):
        load_records_csv(b"x\n" + b"1" * (data.MAX_BYTES + 10))


def test_csv_records_outside_support(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("x\n0\n1\n3\n")
    spec = dict(BASE, data={"csv": str(path)})
    spec["model"] = {"name": "beta_binomial"}
    with pytest.raises(ValueError, match="data.csv"):
        engine.prepare(engine.spec_from_dict(spec))


def _cli(args, cwd):
    return subprocess.run([sys.executable, "-m", "engine", *args], cwd=cwd, capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=ROOT))


def _cli_here(args, capsys):
    """The CLI in this process (``engine.cli.main``): (exit status, stderr). The fresh-process path,
    imports included, is covered by tests/test_engine_spec_cli.py's bad-input-in-a-fresh-process cases;
    here the many messages are checked without paying an interpreter start each."""
    from engine import cli

    capsys.readouterr()
    try:
        code = cli.main(args)
    except SystemExit as exc:  # argparse's usage errors
        code = exc.code
    return code, capsys.readouterr().err


CLI_FILES = [
    ("toml syntax error", "spec.toml", "seed = 1\n[model\nname = 'x'\n", "TOML"),
    ("json syntax error", "spec.json", "{\"seed\": 1,", "JSON"),
    ("non-utf8 spec", "spec.toml", b"seed = 1\n\xff\n", "UTF-8"),
    ("epsilon zero", "spec.json", json.dumps(_with("mechanism.epsilon", 0.0)), "mechanism.epsilon"),
    ("unknown model", "spec.json", json.dumps(_with("model.name", "foo")), "model.name"),
    ("s_dp wrong length", "spec.json", json.dumps(_with("data.s_dp", [1, 2, 3])), "data.s_dp"),
]


@pytest.mark.parametrize("case,name,content,text", CLI_FILES, ids=[c[0] for c in CLI_FILES])
def test_cli_bad_input_one_line_exit_2(tmp_path, capsys, case, name, content, text):
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    code, err = _cli_here(["run", str(path), "--out", str(tmp_path / "out")], capsys)
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    assert text in lines[0]
    assert not (tmp_path / "out").exists()


def test_cli_missing_file_and_bad_method(tmp_path, capsys):
    code, err = _cli_here(["run", str(tmp_path / "nope.toml"), "--out", str(tmp_path / "o")], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "SPEC" in err
    good = tmp_path / "s.json"
    good.write_text(json.dumps(BASE))
    code, err = _cli_here(["run", str(good), "--out", str(tmp_path / "o"), "--method", "hmc"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "--method" in err
    proc = _cli(["run", str(good)], tmp_path)  # argparse's own usage error, in a fresh process
    assert proc.returncode == 2 and "--out" in proc.stderr


# ------------------------------------------------------------------ property-based: run or ValueError
_numbers = st.one_of(st.floats(allow_nan=True, allow_infinity=True, width=64), st.integers(-10**6, 10**6),
                     st.text(max_size=3), st.none(), st.booleans())


@st.composite
def random_specs(draw):
    model = draw(st.sampled_from(["beta_binomial", "poisson_gamma", "dirichlet_multinomial", "normal_known_sd", "x"]))
    mech = draw(st.sampled_from(["laplace", "gaussian", "discrete_laplace", "discrete_gaussian",
                                 "randomized_response", "y"]))
    budget_key = draw(st.sampled_from(["epsilon", "rho", "scale", "sigma", "delta"]))
    spec = {
        "seed": draw(st.one_of(st.integers(0, 2**31), _numbers)),
        "model": {"name": model, "n": draw(st.one_of(st.integers(-2, 40), _numbers))},
        "mechanism": {"name": mech, budget_key: draw(st.one_of(st.floats(1e-3, 1e3), _numbers))},
        "method": {"name": draw(st.sampled_from(["naive", "exact", "da_mcmc", "abc_rejection", "ops", "z"])),
                   "chains": 1, "draws": 20, "warmup": 5, "max_proposals": 20000},
    }
    if model == "dirichlet_multinomial":
        spec["model"]["alpha"] = draw(st.lists(st.one_of(st.floats(0.01, 5), _numbers), min_size=0, max_size=4))
    if draw(st.booleans()):
        spec["data"] = {"s_dp": draw(st.lists(st.one_of(st.floats(-50, 80), _numbers), min_size=0, max_size=4))}
    else:
        spec["data"] = {"simulate": {draw(st.sampled_from(["theta", "lam", "mu", "p"])):
                                     draw(st.one_of(st.floats(0, 1), _numbers))}}
    return spec


OUTCOMES = {"ran": 0, "value_error": 0}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_specs())
def test_random_specs_run_or_raise_value_error(spec):
    if spec["method"]["name"] != "abc_rejection":
        spec["method"].pop("max_proposals")
    try:
        result = engine.run(spec)
    except ValueError as exc:
        assert str(exc)
        OUTCOMES["value_error"] += 1
        return
    OUTCOMES["ran"] += 1
    assert np.all(np.isfinite(result.draws))
    assert result.draws.shape[2] == len(result.param_names)


def test_valid_specs_from_the_same_space_run():
    """The generator above is not all-invalid: hand-picked members of its space run."""
    for model, data in [("beta_binomial", {"s_dp": [3.0]}), ("poisson_gamma", {"simulate": {"lam": 2.0}}),
                        ("normal_known_sd", {"s_dp": [1.0]})]:
        spec = {"seed": 3, "model": {"name": model, "n": 7}, "mechanism": {"name": "laplace", "epsilon": 0.7},
                "data": data, "method": {"name": "da_mcmc", "chains": 1, "draws": 20, "warmup": 5}}
        assert np.all(np.isfinite(engine.run(spec).draws))


def test_identical_draws_local_and_dask():
    """A study cell gives the same numbers in process and on a dask.distributed worker."""
    from dask.distributed import Client, LocalCluster

    from engine.studies.sweep import epsilon_sweep

    methods = [{"name": "da_mcmc", "chains": 2, "draws": 200, "warmup": 50}, {"name": "abc_rejection", "chains": 1,
                                                                                 "draws": 200}]
    local, local_res = epsilon_sweep(engine.DEMO_SPEC, [0.5, 2.0], methods)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        remote, remote_res = epsilon_sweep(engine.DEMO_SPEC, [0.5, 2.0], methods, client=client)
    assert set(local_res) == set(remote_res)
    for key in local_res:
        np.testing.assert_array_equal(local_res[key].draws, remote_res[key].draws)
    assert math.isclose(local["mean"].sum(), remote["mean"].sum(), rel_tol=0, abs_tol=0)


@pytest.mark.parametrize("s_dp, sds", [(1e9, 2.12e8), (-500.0, 106.1)])
def test_an_implausible_release_is_named_before_anything_runs(s_dp, sds):
    """Issue 20 item 5: s_dp = 1e9 (or -500 with n = 30) was accepted and ABC burned 2e7 proposals. The
    release is measured in noise sds from the nearest statistic n records can produce; ABC refuses at
    once, saying so; the exact methods answer."""
    import engine

    spec = {**engine.DEMO_SPEC, "model": {"name": "beta_binomial", "n": 30}, "data": {"s_dp": [s_dp]}}
    problem = engine.prepare(engine.spec_from_dict(spec))
    far = engine.release_distance(problem)
    assert far["noise_sds"] == pytest.approx(sds, rel=1e-3)
    assert far["noise_sd"] == pytest.approx(2 ** 0.5 / 0.3)  # Laplace scale 1/0.3
    message = engine.implausible_release(problem)
    assert message.startswith(f"data.s_dp = [{s_dp:.6g}] is implausible") and "30 records" in message
    with pytest.raises(ValueError, match="^method.max_proposals = 20000 is invalid for this release") as info:
        engine.run_method(problem, {"name": "abc_rejection", "draws": 100, "max_proposals": 20_000}, 1)
    assert "noise sds (noise sd 4.71) from the nearest statistic that 30 records can produce" in str(info.value)
    assert isinstance(info.value, engine.NoneAccepted) and info.value.far  # the app says it in its own words
    exact = engine.run_method(problem, {"name": "exact", "draws": 400}, 1)
    assert np.all(np.isfinite(exact.draws))


def test_a_release_a_few_sds_out_is_plausible():
    import engine

    spec = {**engine.DEMO_SPEC, "model": {"name": "beta_binomial", "n": 30}, "data": {"s_dp": [30 + 5 * 2 ** 0.5 / 0.3]}}
    problem = engine.prepare(engine.spec_from_dict(spec))
    assert engine.release_distance(problem)["noise_sds"] == pytest.approx(5.0)
    assert engine.implausible_release(problem) is None


def test_abc_that_accepts_nothing_raises_a_value_error_with_its_counts():
    """engine.NoneAccepted: the spec's one-line error (a ValueError, for the command line) with the counts an app
    words for its own boxes; it survives pickling (a run on another process raises it there)."""
    import pickle

    import engine

    spec = {**engine.DEMO_SPEC, "model": {"name": "linear_regression", "n": 100},
            "mechanism": {"name": "laplace", "epsilon": 1.0}, "data": {"simulate": {"beta": [0.5, 1.0, -1.0]}}}
    problem = engine.prepare(engine.spec_from_dict(spec))
    with pytest.raises(engine.NoneAccepted) as info:
        engine.run_method(problem, {"name": "abc_rejection", "draws": 4000, "max_proposals": 10}, 1)
    exc = info.value
    assert isinstance(exc, ValueError) and (exc.proposals, exc.stopped_by, exc.far) == (10, "max_proposals", False)
    assert str(exc).startswith("method.max_proposals = 10 is invalid for this release: abc_rejection accepted 0 of 10 "
                               "proposals (stopped by max_proposals); the acceptance rate is below 0.1.")
    back = pickle.loads(pickle.dumps(exc))
    assert type(back) is engine.NoneAccepted and str(back) == str(exc)
    assert (back.proposals, back.stopped_by, back.far) == (10, "max_proposals", False)
    # stopped by its time limit, the error names that limit (it named max_proposals, which had not been reached)
    with pytest.raises(engine.NoneAccepted) as info:
        engine.run_method(problem, {"name": "abc_rejection", "draws": 4000, "max_seconds": 1e-9}, 1)
    assert info.value.stopped_by == "max_seconds"
    assert str(info.value).startswith("method.max_seconds = 1e-09 is invalid for this release: abc_rejection "
                                      "accepted 0 of "), str(info.value)


# --------------------------------------------------------------------------- what a CSV's reading says besides n
def test_blank_lines_are_counted_as_skipped():
    """A file of six data lines, one blank, was read as n = 5 with no word of the blank line."""
    from engine.core.data import read_records_csv

    read = read_records_csv(b"employed\n1\n0\n\n1\n0\n1\n")
    assert read.records.tolist() == [1, 0, 1, 0, 1] and read.blank_lines == 1 and read.columns == ("employed",)


@pytest.mark.parametrize("cell", ["NA", "", "n/a", "NaN", "null"])
def test_a_missing_value_says_what_to_do(cell):
    """``NA`` said only "must be a number": missing values are not supported, and the fix changes n."""
    with pytest.raises(ValueError, match=r"missing values are not supported: drop the rows that hold them "
                                         r"\(which changes n\) or fill them in"):
        load_records_csv(f"x,y\n1,2\n{cell},3\n".encode(), "x")


def test_a_text_cell_is_not_called_missing():
    with pytest.raises(ValueError) as info:
        load_records_csv(b"x\n1\nyes\n")
    assert "missing" not in str(info.value)


def test_columns_with_numbers_come_first_and_the_column_message_has_no_python_list():
    from engine.core.data import csv_columns

    cols = csv_columns(b"region,age,employed,income\nR0,22,0,11470.8\nR1,67,NA,26827.8\n")
    assert cols.columns == ("region", "age", "employed", "income") and cols.numeric == ("age", "income")
    assert cols.ordered == ("age", "income", "region", "employed")
    with pytest.raises(ValueError) as info:
        load_records_csv(b"region,age\nR0,22\n")
    assert "the file has columns region, age;" in str(info.value) and "[" not in str(info.value)


def test_outside_counts_the_records_a_clamp_changes():
    from engine.core.data import outside

    o = outside(np.array([-5.0, 0.0, 2.0, 3.0, 10.0]), -3.0, 3.0)
    assert (o.n, o.below, o.above, o.count, o.min, o.max) == (5, 1, 1, 2, -5.0, 10.0)
    assert outside(np.array([0.0, 8.0]), None, 1.0).count == 1
