"""Shared fixtures.

``cli``: ``python -m engine ARGS`` in this process (``engine.cli.main``), without the 2-4 s a fresh interpreter
spends importing numpy, scipy, numba and pandas. Tests about the process itself (a closed pipe, Ctrl-C, a fresh
interpreter's imports, determinism across processes) still start one.
"""
from __future__ import annotations

import warnings
from types import SimpleNamespace

import pytest

#: what a fresh interpreter's default filters do not print (DeprecationWarning only from __main__)
_SILENT = (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning)


@pytest.fixture
def cli(capsys):
    """``python -m engine ARGS`` in this process, as a CompletedProcess-like record: returncode, stdout, stderr.
    argparse's own exits (SystemExit) give their code. A Python warning is written to stderr as a fresh
    interpreter would print it (once per place, in Python's format; the categories its default filters hide
    left out), so a test that wants one line on stderr still sees a stray warning; filters the CLI sets apply."""
    from engine import cli as cli_module  # here, not at collection: a test that never runs the CLI does not pay it

    def call(*args):
        capsys.readouterr()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                code = cli_module.main([str(a) for a in args])
            except SystemExit as done:
                code = done.code
        out, err = capsys.readouterr()
        shown = {}
        for w in caught:
            if not issubclass(w.category, _SILENT):
                key = (w.category, str(w.message), w.filename, w.lineno)
                shown.setdefault(key, warnings.formatwarning(w.message, w.category, w.filename, w.lineno, w.line))
        return SimpleNamespace(returncode=code, stdout=out, stderr=err + "".join(shown.values()))

    return call
