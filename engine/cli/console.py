"""What the command line prints: its progress bar and its one-line error for bad input."""
from __future__ import annotations

import os
import sys
import time

__all__ = ["progress_bar", "cli_error", "closed_pipe"]


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


def closed_pipe() -> int:
    """Stdout's reader has gone (``| head``): what is left to print goes nowhere, including the interpreter's own
    flush at exit (which would print a BrokenPipeError of its own), and the command ends with status 0."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # no file descriptor to redirect (an embedded stdout)
        sys.stdout = None
    return 0
