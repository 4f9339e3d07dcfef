"""What the command line prints: its progress bar and its one-line error for bad input."""
from __future__ import annotations

import sys
import time

__all__ = ["progress_bar", "cli_error"]


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


def cli_error(exc: Exception, out: str | None) -> int:
    """The CLI's report of a bad input: one line ``error: ...`` on stderr and exit status 2. A
    ``ValueError`` already names field, value and what is allowed; an ``OSError`` is the output
    folder ``--out`` that cannot be written."""
    if isinstance(exc, OSError):
        sys.stderr.write(f"error: --out = {out!r} is invalid: {exc.strerror}\n")
    else:
        sys.stderr.write(f"error: {exc}\n")
    return 2
