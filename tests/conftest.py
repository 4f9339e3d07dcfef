"""Shared fixtures.

``cli``: ``python -m engine ARGS`` in this process (``engine.cli.main``), without the 2-4 s a fresh interpreter
spends importing numpy, scipy, numba and pandas. Tests about the process itself (a closed pipe, Ctrl-C, a fresh
interpreter's imports, determinism across processes) still start one.
"""
from __future__ import annotations

from types import SimpleNamespace

import pytest


@pytest.fixture
def cli(capsys):
    """``python -m engine ARGS`` in this process, as a CompletedProcess-like record: returncode, stdout, stderr.
    argparse's own exits (SystemExit) give their code. Python warnings go to pytest, not to stderr."""
    from engine import cli as cli_module  # here, not at collection: a test that never runs the CLI does not pay it

    def call(*args):
        capsys.readouterr()
        try:
            code = cli_module.main([str(a) for a in args])
        except SystemExit as done:
            code = done.code
        out, err = capsys.readouterr()
        return SimpleNamespace(returncode=code, stdout=out, stderr=err)

    return call


@pytest.fixture
def run_cli(cli):
    """``cli`` under another name, for a test whose body uses the name ``cli`` for something else."""
    return cli
