"""Bad input at the command line (the audit of session 23, /tmp/s23/badinput/report.md: D1, D4, D5, D10, D11, D12):
each case here printed a traceback, split its error over several lines, used argparse's own format, named a field the
user never typed, or echoed a huge value whole. The standard: one line ``error: <field> = <value> is invalid: <what is
allowed>``, exit status 2; in the engine a ValueError."""
from __future__ import annotations

import numpy as np
import pytest

import engine
from engine.core.validation import fail
from test_cli_new_user import PACKAGE, SPEC  # the new user's small spec and the dp-wizard package

UNKNOWN_N = """seed = 1
[model]
name = "beta_binomial"
n_prior = { name = "poisson", mean = 20.0 }
[mechanism]
name = "laplace"
epsilon = 1.0
[n_mechanism]
name = "laplace"
epsilon = 1.0
[data]
simulate = { theta = 0.3 }
[method]
name = "naive"
draws = 200
"""


def _one_line_error(proc, start: str) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip("\n").split("\n")
    assert len(lines) == 1 and lines[0].startswith("error: " + start), proc.stderr
    return lines[0]


# D1: a deeply nested spec file ended run, risk and study with a RecursionError traceback (exit 1)

@pytest.fixture
def deep_specs(tmp_path):
    deep = "[" * 100_000 + "]" * 100_000
    (tmp_path / "deep.json").write_text(deep + "\n")
    (tmp_path / "deep.toml").write_text("x = " + deep + "\n")
    # deep enough for the copies made after reading (a few hundred levels), not for the parsers
    (tmp_path / "mid.json").write_text('{"seed": 1, "model": ' + "[" * 500 + "]" * 500 + "}")
    return tmp_path


@pytest.mark.parametrize("command", [["run"], ["risk"], ["study", "calibration"]])
def test_a_deeply_nested_spec_is_one_line_naming_the_file(deep_specs, command, cli):
    for name in ("deep.json", "deep.toml"):
        extra = ["--replicates", "2"] if command[0] == "study" else []
        proc = cli(*command, deep_specs / name, "--out", deep_specs / "out", *extra)
        line = _one_line_error(proc, f"SPEC = '{deep_specs / name}' is invalid: must be valid ")
        assert "nested too deeply" in line


def test_load_spec_of_a_deeply_nested_file_raises_valueerror(deep_specs):
    for name in ("deep.json", "deep.toml", "mid.json"):
        with pytest.raises(ValueError, match=r"^SPEC = .* is invalid: must be valid (JSON|TOML): nested too deeply"):
            engine.load_spec(str(deep_specs / name))


# D4: a key, table or CSV column holding a line break split the error over lines

def test_a_key_with_a_line_break_is_escaped_on_one_line(tmp_path, cli):
    spec = tmp_path / "key.toml"
    spec.write_text(SPEC.replace("n = 30\n", 'n = 30\n"bad\\nkey" = 1\n'))
    for command in (["run"], ["risk"], ["study", "calibration"]):
        extra = ["--replicates", "2"] if command[0] == "study" else []
        proc = cli(*command, spec, "--out", tmp_path / "out", *extra)
        assert _one_line_error(proc, "model.bad\\nkey = 1 is invalid: is not a key")


def test_a_csv_column_with_a_line_break_is_escaped_on_one_line(tmp_path, cli):
    (tmp_path / "two.csv").write_text('"x\ny",b\n1,2\n')
    spec = tmp_path / "csv.toml"
    spec.write_text(SPEC.replace("s_dp = [12.0]", 'csv = "two.csv"'))
    line = _one_line_error(cli("run", spec, "--out", tmp_path / "out"), "data.column = None is invalid")
    assert "columns x\\ny, b" in line


def test_one_line_escapes_controls_and_keeps_other_characters():
    from engine.cli.console import one_line  # new with the fix: imported here so the other tests run without it

    assert one_line("a\nb\r\tc\x1b ε é\u2028") == "a\\nb\\r\\tc\\x1b ε é\\u2028"


# D11: argparse's errors were in its own format ("argument --seed: invalid int value: 'x'")

@pytest.mark.parametrize("args, line", [
    (["run", "s.toml", "--out", "o", "--max-seconds", "abc"],
     "error: --max-seconds = 'abc' is invalid: must be a number of seconds > 0"),
    (["run", "s.toml", "--out", "o", "--method", "foo"], "error: --method = 'foo' is invalid: must be one of naive, "),
    (["run", "s.toml"], "error: --out is required: output directory, e.g. --out DIR"),
    (["run", "s.toml", "--out"], "error: --out is missing its value: output directory, e.g. --out DIR"),
    (["run", "--out", "o"], "error: SPEC is required: scenario file"),
    ([], "error: COMMAND is required: one of run, study, import-dpwizard, risk"),
    (["fly"], "error: COMMAND = 'fly' is invalid: must be one of run, study, import-dpwizard, risk"),
    (["study", "calibration", "s.toml", "--seed", "x"], "error: --seed = 'x' is invalid: must be an integer in [0, "),
    (["study", "calibration", "s.toml", "--replicates", "abc"],
     "error: --replicates = 'abc' is invalid: must be an integer >= 1"),
    (["import-dpwizard", "p.zip", "--out", "o", "--prior-alpha", "x"],
     "error: --prior-alpha = 'x' is invalid: must be a number from 1e-12 to 1e+12"),
    (["import-dpwizard", "p.zip"], "error: --out is required: "),
])
def test_argparse_errors_take_the_standard_line(cli, args, line):
    proc = cli(*args)
    assert _one_line_error(proc, "").startswith(line), proc.stderr


def test_max_seconds_inf_names_the_option(tmp_path, cli):
    spec = tmp_path / "s.toml"
    spec.write_text(SPEC)
    proc = cli("run", spec, "--out", tmp_path / "out", "--max-seconds", "inf")
    _one_line_error(proc, "--max-seconds = inf is invalid")


# D5: import-dpwizard named the library's field (model.sd, out), not the option typed

def test_import_dpwizard_names_mean_sd_and_out(tmp_path, cli):
    out = tmp_path / "d"
    proc = cli("import-dpwizard", PACKAGE, "--out", out, "--mean-sd", "1e300")
    _one_line_error(proc, "--mean-sd = 1e+300 is invalid")
    assert not out.exists()  # refused before any bin's spec is written
    taken = tmp_path / "taken"
    taken.write_text("a file")
    _one_line_error(cli("import-dpwizard", PACKAGE, "--out", taken), f"--out = '{taken}' is invalid")


# D12: a huge bad value was echoed whole (a 200,000-entry model.alpha made a 600 kB line)

def test_a_huge_value_is_shortened(tmp_path, cli):
    spec = tmp_path / "big.toml"
    spec.write_text(SPEC.replace('name = "beta_binomial"', 'name = "dirichlet_multinomial"').replace(
        "n = 30", "n = 30\nalpha = [" + ", ".join(["1.0"] * 200_000) + "]"))
    line = _one_line_error(cli("run", spec, "--out", tmp_path / "out"), "model.alpha = [1.0, 1.0, ")
    assert "… (200,000 numbers)] is invalid: " in line and len(line) < 500
    with pytest.raises(ValueError, match=r"^model.name = 'xxx.*… \(2,000,000 characters\)' is invalid") as info:
        fail("model.name", "x" * 2_000_000, "must be one of a, b")
    assert len(str(info.value)) < 400
    with pytest.raises(ValueError, match=r"^model.n = <an integer of about 5,001 digits> is invalid"):
        fail("model.n", 10 ** 5000, "must be an integer")  # repr itself refuses beyond 4,300 digits
    with pytest.raises(ValueError, match=r"^model.alpha = \[1, 2\] is invalid: x$"):
        fail("model.alpha", [1, 2], "x")  # a short value as it was


# D10: study calibration on an unknown n said "model.n = None is invalid: is required"

def test_calibration_on_an_unknown_n_says_it_needs_a_known_n(tmp_path, cli):
    spec = tmp_path / "unknown.toml"
    spec.write_text(UNKNOWN_N)
    line = _one_line_error(cli("study", "calibration", spec, "--replicates", "2", "--out", tmp_path / "cal"),
                           "model.n_prior = {'name': 'poisson', 'mean': 20.0} is invalid: ")
    assert "needs a known n" in line and "give model.n" in line
    assert not (tmp_path / "cal").exists()
    # with n given as well (the true size a simulation uses), it said "model.n_prior … is not a key of beta_binomial;
    # allowed: n, a, b", which beta_binomial's n_prior contradicts
    spec.write_text(UNKNOWN_N.replace("[model]\n", "[model]\nn = 30\n"))
    line = _one_line_error(cli("study", "calibration", spec, "--replicates", "2", "--out", tmp_path / "cal"),
                           "model.n_prior = {'name': 'poisson', 'mean': 20.0} is invalid: ")
    assert line.endswith("needs a known n (each replicate simulates its records from the prior): remove model.n_prior "
                         "and [n_mechanism], and the study runs at model.n = 30"), line
    assert not (tmp_path / "cal").exists()


def test_a_whole_float_seed_is_that_seed_as_a_whole_float_n_is():
    """docs audit s23 D9: n = 30.0 and chains = 2.0 were taken as integers, seed = 7.0 refused ("must be an integer
    in [0, 2^63)"), though the spec table calls all of them integers and JSON exporters write 7.0. Now 7.0 is 7 (the
    same draws); 7.5, -1.0, 2^53 as a float (past which a float no longer holds every integer) and True stay refused."""
    base = {"model": {"name": "beta_binomial", "n": 20}, "mechanism": {"name": "laplace", "epsilon": 1.0},
            "data": {"s_dp": [7.0]}, "method": {"name": "da_mcmc", "chains": 2, "draws": 50, "warmup": 20}}
    whole = engine.run({**base, "seed": 7.0})
    assert np.array_equal(whole.draws, engine.run({**base, "seed": 7}).draws)
    for bad in (7.5, -1.0, 2.0 ** 53, True, float("nan")):
        with pytest.raises(ValueError, match=r"^seed = .* is invalid: must be an integer in \[0, 2\^63\)"):
            engine.spec_from_dict({**base, "seed": bad})
