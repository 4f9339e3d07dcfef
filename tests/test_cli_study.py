"""``python -m engine study calibration``: bad input is refused before any replicate runs, in the order the user
typed it (an audit from the analyst's side, 2026-11-28)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine import cli as cli_module
from engine.studies import calibration as calibration_module

ROOT = Path(__file__).resolve().parents[1]
KNOWN_N = """seed = 1
[model]
name = "beta_binomial"
n = 30
[mechanism]
name = "laplace"
epsilon = 1.0
[data]
simulate = { theta = 0.3 }
[method]
name = "da_mcmc"
"""


@pytest.fixture
def no_replicate(monkeypatch):
    """Fails the test if any replicate (or the confidential reference) starts in this process."""
    def forbidden(payload):
        raise AssertionError("a replicate ran before the bad input was refused")

    monkeypatch.setattr(calibration_module, "_calibration_unit", forbidden)


@pytest.mark.parametrize("methods", ["rjmcmc", "naive,rjmcmc"])
def test_a_method_that_cannot_run_on_the_spec_is_refused_before_any_replicate(methods, tmp_path, capsys,
                                                                             no_replicate):
    """rjmcmc on a known n ran every replicate and the confidential reference, then said so (mcem was refused at
    once): now every method is checked against the prepared spec first, as ``run`` checks it."""
    spec = tmp_path / "s.toml"
    spec.write_text(KNOWN_N)
    out = tmp_path / "out"
    code = cli_module.main(["study", "calibration", str(spec), "--replicates", "3", "--methods", methods,
                            "--workers", "1", "--out", str(out), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and err.startswith("error: method.name = 'rjmcmc' is invalid for a known "
                                                                 "n"), err
    assert not out.exists()


def test_the_refusal_survives_a_reader_that_goes_away(tmp_path):
    """Piped into a reader that closes at once, the same bad input exited 0 (the closed-pipe rule, once the table
    had been printed); refused before anything is printed, it exits 2 in a real shell pipe."""
    spec = tmp_path / "s.toml"
    spec.write_text(KNOWN_N)
    command = (f"{sys.executable} -m engine study calibration {spec} --replicates 3 --methods rjmcmc --workers 1 "
               f"--quiet --out {tmp_path / 'out'}")
    done = subprocess.run(["bash", "-c", command + " | true; exit ${PIPESTATUS[0]}"], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert done.stderr.startswith("error: method.name = 'rjmcmc' is invalid for a known n"), done.stderr
    assert "calibration.csv" not in done.stderr and not (tmp_path / "out").exists()


def test_a_missing_file_is_named_before_a_missing_replicates(tmp_path, capsys):
    """``study calibration nofile.toml`` (no --replicates) complained about --replicates first; the file comes
    first on the line the user typed, and without it nothing else can be checked."""
    missing = tmp_path / "nofile.toml"
    assert cli_module.main(["study", "calibration", str(missing)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: SPEC = {str(missing)!r} is invalid: must be an existing") and err.count("\n") == 1
    spec = tmp_path / "s.toml"
    spec.write_text(KNOWN_N)
    assert cli_module.main(["study", "calibration", str(spec)]) == 2  # with the file there, --replicates is next
    assert capsys.readouterr().err.startswith("error: --replicates = None is invalid")
