"""What the command line prints: its progress bar and its one-line error for bad input, which names the cause
where the release is unusable because the records of a CSV were never clamped (:func:`with_cause`)."""
from __future__ import annotations

import os
import sys
import time

from ..core.data import load_records_csv
from ..core.spec import resolve_path

__all__ = ["progress_bar", "cli_error", "closed_pipe", "with_cause"]


def progress_bar(stream):
    """An ``on_progress(done, total)`` that draws a 30-character bar on ``stream`` (at most 5 redraws a
    second, and always the last)."""
    state = {"last": 0.0}

    def update(done, total):
        now = time.monotonic()
        if done < total and now - state["last"] < 0.2:
            return
        state["last"] = now
        width = 30
        frac = done / total if total else 1.0
        bar = "#" * int(frac * width)
        stream.write(f"\r[{bar:<{width}}] {100 * frac:5.1f}%")
        if done >= total:
            stream.write("\n")
        stream.flush()

    return update


def cli_error(exc: Exception, out: str | None, flags: dict[str, str] | None = None) -> int:
    """The CLI's report of a bad input: one line ``error: ...`` on stderr and exit status 2. A
    ``ValueError`` already names field, value and what is allowed (``flags`` renames a library's field to the
    option the user typed, e.g. ``{"model.alpha": "--prior-alpha"}``); an ``OSError`` is the output folder
    ``--out`` that cannot be written."""
    if isinstance(exc, OSError):
        sys.stderr.write(f"error: --out = {out!r} is invalid: {exc.strerror or exc}\n")
        return 2
    message = str(exc)
    for field, flag in (flags or {}).items():
        if message.startswith(field + " = "):
            message = flag + message[len(field):]
            break
    sys.stderr.write(f"error: {message}\n")
    return 2


def with_cause(exc: Exception, spec) -> Exception:
    """``exc`` with its cause where the release (``data.s_dp``, a value the analyst never typed) cannot be analysed
    because the spec's records come from a CSV the model does not clamp (poisson_gamma without ``model.upper``) and
    some lie beyond the sensitivity the noise is calibrated to: the message names the file's largest record and
    ``model.upper``. Any other error is returned as it is."""
    if not (isinstance(exc, ValueError) and str(exc).startswith("data.s_dp = ") and spec is not None):
        return exc
    model, data = dict(getattr(spec, "model", {}) or {}), dict(getattr(spec, "data", {}) or {})
    if "csv" not in data or model.get("name") != "poisson_gamma" or model.get("upper") is not None:
        return exc
    try:
        records = load_records_csv(resolve_path(data["csv"], spec.base_dir), data.get("column"))
        sensitivity = float(dict(spec.mechanism or {}).get("sensitivity", 1.0))
    except (ValueError, TypeError, OSError):
        return exc
    largest = float(records.max())
    above = int((records > sensitivity).sum())
    if not above:
        return exc
    why = str(exc).split(" is invalid", 1)[1].lstrip(" :").removeprefix("for ")
    shown = f"{largest:,.0f}" if largest.is_integer() else f"{largest:,g}"
    return ValueError(f"data.csv = {data['csv']!r} is invalid here: its records are not clamped (model.upper is not "
                      f"set) and {above:,} of {records.size:,} exceed the sensitivity {sensitivity:g} the noise is "
                      f"calibrated to (the largest is {shown}), so the release is not ε-DP and cannot be analysed "
                      f"({why}); set model.upper to the largest value a record may count, e.g. upper = 10")


def closed_pipe() -> int:
    """Stdout's reader has gone (``| head``): what is left to print goes nowhere, including the interpreter's own
    flush at exit (which would print a BrokenPipeError of its own), and the command ends with status 0."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # no file descriptor to redirect (an embedded stdout)
        sys.stdout = None
    return 0
