"""Specs (TOML / JSON) and the command line ``python -m engine run SPEC --out DIR``.

Covers the spec layout as written in the issue, the three output files, ``--method``, JSON specs,
data from simulation and from CSV, determinism across processes, and the error contract: a bad
input is a ``ValueError`` whose message starts with the field (library) and, on the command line,
exactly one ``error: ...`` line on stderr and exit status 2, never a traceback.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

import engine
from engine.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

ISSUE_TOML = """\
seed = 1

[model]
name = "beta_binomial"
n = 30
a = 1
b = 1

[mechanism]
name = "discrete_gaussian"
sigma = 4

[data]
s_dp = [3]

[method]
name = "da_mcmc"
chains = 4
draws = 5000
warmup = 1000
"""
# the same scenario, shorter chains, for the tests that run it
SHORT_TOML = ISSUE_TOML.replace("draws = 5000", "draws = 400").replace("warmup = 1000", "warmup = 100")


def _arviz():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        import arviz as az
    return az


def _write(path, text):
    with open(path, "w") as fh:
        fh.write(text)
    return str(path)


def _cli(*args):
    """``python -m engine`` in a fresh interpreter, from the repository root."""
    return subprocess.run([sys.executable, "-m", "engine", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)


@pytest.fixture(scope="module")
def cli_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cli")
    spec = _write(tmp / "spec.toml", SHORT_TOML)
    proc = _cli("run", spec, "--out", str(tmp / "out"), "--quiet")
    return tmp, proc


# --------------------------------------------------------------------------- the layout
def test_issue_layout_loads_as_written(tmp_path):
    spec = engine.load_spec(_write(tmp_path / "issue.toml", ISSUE_TOML))
    assert spec.seed == 1
    assert dict(spec.model) == {"name": "beta_binomial", "n": 30, "a": 1, "b": 1}
    assert dict(spec.mechanism) == {"name": "discrete_gaussian", "sigma": 4}
    assert spec.data_kind == "s_dp" and list(spec.data["s_dp"]) == [3]
    assert (spec.method["name"], spec.method["chains"], spec.method["draws"], spec.method["warmup"]) == (
        "da_mcmc", 4, 5000, 1000)
    problem = engine.prepare(spec)
    assert problem.model.n == 30 and (problem.model.a, problem.model.b) == (1.0, 1.0)
    assert problem.mechanism.name == "discrete_gaussian" and problem.mechanism.scale == 4.0
    assert problem.s_dp.tolist() == [3.0]


def test_cli_writes_draws_posterior_and_summary(cli_run):
    tmp, proc = cli_run
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    out = tmp / "out"
    assert sorted(os.listdir(out)) == ["draws.csv", "posterior.nc", "summary.json"]

    draws = pd.read_csv(out / "draws.csv")
    assert list(draws.columns) == ["chain", "draw", "theta"]
    assert len(draws) == 4 * 400
    assert sorted(draws["chain"].unique()) == [0, 1, 2, 3]
    assert draws.groupby("chain")["draw"].apply(list).map(lambda d: d == list(range(400))).all()
    assert draws["theta"].between(0, 1).all()

    idata = _arviz().from_netcdf(out / "posterior.nc")
    assert {"posterior", "sample_stats", "observed_data"} <= set(idata.groups())
    theta = idata.posterior["theta"].values
    assert theta.shape == (4, 400)
    np.testing.assert_array_equal(theta.reshape(-1), draws["theta"].to_numpy())
    acc = idata.sample_stats["acceptance_rate"].values
    assert acc.shape == (4, 400) and np.all((acc > 0) & (acc <= 1))
    assert idata.observed_data["s_dp"].values.tolist() == [3.0]

    with open(out / "summary.json") as fh:
        summ = json.load(fh)
    assert summ["method"] == "da_mcmc"
    row = summ["parameters"]["theta"]
    assert {"mean", "sd", "q5", "q50", "q95", "r_hat", "ess_bulk", "ess_tail"} <= set(row)
    assert row["mean"] == pytest.approx(draws["theta"].mean(), rel=1e-12)
    assert row["sd"] == pytest.approx(draws["theta"].std(ddof=1), rel=1e-12)
    assert row["q5"] < row["q50"] < row["q95"]
    assert 0.9 < row["r_hat"] < 1.1 and row["ess_bulk"] > 0 and row["ess_tail"] > 0
    assert len(summ["acceptance"]["min_per_chain"]) == 4
    assert 0 < summ["acceptance"]["mean"] <= 1
    assert summ["wall_time_s"] > 0


def test_cli_is_deterministic_across_processes(cli_run):
    tmp, first = cli_run
    assert first.returncode == 0, first.stderr
    again = _cli("run", str(tmp / "spec.toml"), "--out", str(tmp / "again"), "--quiet")
    assert again.returncode == 0, again.stderr
    with open(tmp / "out" / "draws.csv", "rb") as a, open(tmp / "again" / "draws.csv", "rb") as b:
        assert a.read() == b.read()
    # and the library, in this process, gives the very same numbers
    frame = engine.draws_frame(engine.run(engine.load_spec(str(tmp / "spec.toml"))))
    np.testing.assert_array_equal(frame["theta"].to_numpy(), pd.read_csv(tmp / "out" / "draws.csv")["theta"].to_numpy())


def test_cli_method_override(tmp_path, capsys):
    spec = _write(tmp_path / "spec.toml", SHORT_TOML)
    assert main(["run", spec, "--out", str(tmp_path / "out"), "--method", "exact", "--quiet"]) == 0
    with open(tmp_path / "out" / "summary.json") as fh:
        assert json.load(fh)["method"] == "exact"
    draws = pd.read_csv(tmp_path / "out" / "draws.csv")
    assert len(draws) == 4 * 400  # chains and draws carry over to the overriding method
    assert "exact" in capsys.readouterr().out


def test_cli_says_what_auto_picked_and_prints_whole_effective_draws(tmp_path, capsys):
    """`auto` printed "auto: 4 chain(s) x 400 draws" and no word of the method that ran (it is in summary.json's
    info); the ESS columns printed four decimals of a count."""
    spec = _write(tmp_path / "spec.toml", SHORT_TOML)
    assert main(["run", spec, "--out", str(tmp_path / "out"), "--method", "auto", "--quiet"]) == 0
    out = capsys.readouterr().out
    with open(tmp_path / "out" / "summary.json") as fh:
        info = json.load(fh)["info"]
    assert f"auto picked {info['picked']}: {info['why']}" in out.splitlines(), out
    header, row = out.splitlines()[-2:]
    ess = dict(zip(header.split(), row.split()[1:]))
    assert ess["ess_bulk"].isdigit() and ess["ess_tail"].isdigit(), out
    assert main(["run", spec, "--out", str(tmp_path / "o2"), "--method", "exact", "--quiet"]) == 0
    exact = capsys.readouterr().out
    assert exact.startswith("exact: 4 chain(s)") and " picked " not in exact, exact
    # independent draws have no R-hat: a dash (it printed 1.0 for exact and NaN for ABC), and ESS the draws' number
    header, row = exact.splitlines()[-2:]
    cells = dict(zip(header.split(), row.split()[1:]))
    assert cells["r_hat"] == "—" and cells["ess_bulk"] == "1600", exact


def test_json_spec_equals_toml_spec(tmp_path):
    d = {"seed": 1, "model": {"name": "beta_binomial", "n": 30, "a": 1, "b": 1},
         "mechanism": {"name": "discrete_gaussian", "sigma": 4}, "data": {"s_dp": [3]},
         "method": {"name": "da_mcmc", "chains": 2, "draws": 200, "warmup": 50}}
    from_json = engine.run(engine.load_spec(_write(tmp_path / "s.json", json.dumps(d))))
    toml = SHORT_TOML.replace("chains = 4", "chains = 2").replace("draws = 400", "draws = 200").replace(
        "warmup = 100", "warmup = 50")
    from_toml = engine.run(engine.load_spec(_write(tmp_path / "s.toml", toml)))
    np.testing.assert_array_equal(from_json.draws, from_toml.draws)


def test_vector_parameter_outputs(tmp_path):
    spec = {"seed": 3, "model": {"name": "dirichlet_multinomial", "n": 12, "alpha": [1, 1, 1]},
            "mechanism": {"name": "laplace", "epsilon": 1.0}, "data": {"s_dp": [3.2, 4.1, 5.0]},
            "method": {"name": "da_mcmc", "chains": 2, "draws": 100, "warmup": 20}}
    path = _write(tmp_path / "dm.json", json.dumps(spec))
    assert main(["run", path, "--out", str(tmp_path / "out"), "--quiet"]) == 0
    draws = pd.read_csv(tmp_path / "out" / "draws.csv")
    assert list(draws.columns) == ["chain", "draw", "p[0]", "p[1]", "p[2]"]
    np.testing.assert_allclose(draws[["p[0]", "p[1]", "p[2]"]].sum(axis=1), 1.0, rtol=1e-12)
    idata = _arviz().from_netcdf(tmp_path / "out" / "posterior.nc")
    assert idata.posterior["p"].shape == (2, 100, 3)
    assert idata.observed_data["s_dp"].values.tolist() == [3.2, 4.1, 5.0]


def test_data_from_simulation(tmp_path):
    text = SHORT_TOML.replace("s_dp = [3]", "simulate = { theta = 0.3 }")
    spec = engine.load_spec(_write(tmp_path / "sim.toml", text))
    problem = engine.prepare(spec)
    assert problem.records.shape == (30,) and set(np.unique(problem.records)) <= {0, 1}
    assert dict(problem.true_params) == {"theta": 0.3}
    assert problem.s_dp.shape == (1,) and problem.s_dp[0] == round(problem.s_dp[0])  # discrete noise
    again = engine.prepare(spec)  # the data stream is seeded by the spec
    np.testing.assert_array_equal(problem.records, again.records)
    assert problem.s_dp.tolist() == again.s_dp.tolist()


def test_data_from_csv(tmp_path):
    records = (np.arange(30) % 3 == 0).astype(int)
    _write(tmp_path / "records.csv", "id,x\n" + "".join(f"{i},{v}\n" for i, v in enumerate(records)))
    text = SHORT_TOML.replace("n = 30\n", "").replace("s_dp = [3]", 'csv = "records.csv"\ncolumn = "x"')
    spec = engine.load_spec(_write(tmp_path / "csv.toml", text))  # path relative to the spec file
    problem = engine.prepare(spec)
    assert problem.model.n == 30  # n defaults to the number of records
    np.testing.assert_array_equal(problem.records, records)
    result = engine.run(spec)
    assert result.method == "da_mcmc" and np.all(np.isfinite(result.draws))


def test_spec_round_trips_through_toml(tmp_path):
    spec = engine.load_spec(_write(tmp_path / "s.toml", SHORT_TOML.replace("s_dp = [3]", "simulate = { theta = 0.3 }")))
    back = engine.load_spec(_write(tmp_path / "back.toml", engine.spec_to_toml(spec)))
    assert engine.spec_to_dict(back) == engine.spec_to_dict(spec)


# --------------------------------------------------------------------------- bad inputs
LAPLACE = ('name = "discrete_gaussian"\nsigma = 4', 'name = "laplace"\nepsilon = 1.0')
CSV_DATA = ("s_dp = [3]", 'csv = "records.csv"')

# (id, text replacements applied to SHORT_TOML, CSV body or None, field the message must start with)
BAD = [
    ("unknown model", [('name = "beta_binomial"', 'name = "lognormal"')], None, "model.name"),
    ("unknown mechanism", [('name = "discrete_gaussian"', 'name = "exponential"')], None, "mechanism.name"),
    ("epsilon zero", [LAPLACE, ("epsilon = 1.0", "epsilon = 0.0")], None, "mechanism.epsilon"),
    ("epsilon negative", [LAPLACE, ("epsilon = 1.0", "epsilon = -2")], None, "mechanism.epsilon"),
    ("epsilon inf", [LAPLACE, ("epsilon = 1.0", "epsilon = inf")], None, "mechanism.epsilon"),
    ("epsilon nan", [LAPLACE, ("epsilon = 1.0", "epsilon = nan")], None, "mechanism.epsilon"),
    ("sigma zero", [("sigma = 4", "sigma = 0")], None, "mechanism.sigma"),
    ("n zero", [("n = 30", "n = 0")], None, "model.n"),
    ("n negative", [("n = 30", "n = -3")], None, "model.n"),
    ("s_dp too long", [("s_dp = [3]", "s_dp = [3, 4]")], None, "data.s_dp"),
    ("s_dp empty", [("s_dp = [3]", "s_dp = []")], None, "data.s_dp"),
    ("s_dp nan", [("s_dp = [3]", "s_dp = [nan]")], None, "data.s_dp"),
    ("s_dp inf", [LAPLACE, ("s_dp = [3]", "s_dp = [inf]")], None, "data.s_dp"),
    ("s_dp not whole for discrete noise", [("s_dp = [3]", "s_dp = [3.5]")], None, "data.s_dp"),
    ("prior a zero", [("a = 1", "a = 0")], None, "model.a"),
    ("prior b negative", [("b = 1", "b = -1")], None, "model.b"),
    ("csv record outside support", [CSV_DATA], "x\n" + "0\n1\n" * 14 + "2\n1\n", "data.csv"),
    ("csv non-numeric cell", [CSV_DATA], "x\n" + "0\n1\n" * 14 + "yes\n1\n", "data.csv"),
    ("csv missing file", [('s_dp = [3]', 'csv = "nowhere.csv"')], None, "data.csv"),
    ("toml syntax error", [("seed = 1", "seed = = 1")], None, "SPEC"),
    ("unknown top-level key", [("seed = 1", "seed = 1\nsede = 2")], None, "sede"),
    ("unknown method", [('name = "da_mcmc"', 'name = "hmc"')], None, "method.name"),
    ("chains zero", [("chains = 4", "chains = 0")], None, "method.chains"),
]


def _bad_spec(tmp_path, replacements, csv_body):
    text = SHORT_TOML
    for old, new in replacements:
        assert old in text, old
        text = text.replace(old, new, 1)
    if csv_body is not None:
        _write(tmp_path / "records.csv", csv_body)
    return _write(tmp_path / "bad.toml", text)


@pytest.mark.parametrize("case, replacements, csv_body, field", BAD, ids=[b[0] for b in BAD])
def test_bad_input_is_a_value_error_naming_the_field(tmp_path, case, replacements, csv_body, field):
    path = _bad_spec(tmp_path, replacements, csv_body)
    with pytest.raises(ValueError) as info:
        engine.run(engine.load_spec(path))
    message = str(info.value)
    assert message.startswith(field), message
    assert " is invalid" in message, message


@pytest.mark.parametrize("case, replacements, csv_body, field", BAD, ids=[b[0] for b in BAD])
def test_bad_input_on_the_command_line(tmp_path, capsys, case, replacements, csv_body, field):
    path = _bad_spec(tmp_path, replacements, csv_body)
    status = main(["run", path, "--out", str(tmp_path / "out")])
    captured = capsys.readouterr()
    assert status == 2
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith(f"error: {field}"), lines[0]
    assert "Traceback" not in captured.err and captured.out == ""


@pytest.mark.parametrize("case", ["csv non-numeric cell", "epsilon nan"])
def test_bad_input_in_a_fresh_process(tmp_path, case):
    _, replacements, csv_body, field = next(b for b in BAD if b[0] == case)
    proc = _cli("run", _bad_spec(tmp_path, replacements, csv_body), "--out", str(tmp_path / "out"))
    assert proc.returncode == 2
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {field}"), proc.stderr
    assert "Traceback" not in proc.stderr
    assert not os.path.exists(tmp_path / "out")


@pytest.mark.parametrize("argv", [[], ["run"], ["run", "x.toml"], ["run", "x.toml", "--out", "o", "--method", "hmc"],
                                  ["fly"]])
def test_bad_command_lines_exit_2_with_one_line(argv, capsys):
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and err.startswith("error: "), err


def test_missing_spec_file_and_unwritable_out(tmp_path, capsys):
    assert main(["run", str(tmp_path / "missing.toml"), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and err.startswith("error: SPEC"), err
    spec = _write(tmp_path / "s.toml", SHORT_TOML.replace('name = "da_mcmc"', 'name = "naive"'))
    _write(tmp_path / "taken", "a file, not a directory")
    assert main(["run", spec, "--out", str(tmp_path / "taken")]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and err.startswith("error: --out"), err
