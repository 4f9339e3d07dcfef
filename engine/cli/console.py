"""What the command line prints: its progress bar and its one-line error for bad input (argparse's own errors too,
:class:`Parser`; control characters escaped, :func:`one_line`), which names the cause where the release is unusable
because the records of a CSV were never clamped (:func:`with_cause`)."""
from __future__ import annotations

import argparse
import os
import re
import sys
import time
import unicodedata

from ..core.data import load_records_csv
from ..core.spec import resolve_path

__all__ = ["Parser", "add_option", "progress_bar", "cli_error", "error_line", "one_line", "closed_pipe", "with_cause"]


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors take the CLI's one shape, ``error: <option> = <value> is invalid: <what is
    allowed>`` (what is allowed: the option's ``allowed``, from :func:`add_option`, else its type or choices) or
    ``error: <what> is required: ...``, one line and exit status 2: argparse's own ``argument --seed: invalid int
    value: 'x'`` was the one error in another format. Its sub-commands' parsers are Parsers too."""

    def error(self, message):
        error_line(self._said(message))
        raise SystemExit(2)

    def _said(self, message: str) -> str:
        bad = re.fullmatch(r"argument (.+?): (.*)", message, re.S)
        if bad:
            action = self._action_named(bad.group(1))
            name = _name(action) if action is not None else bad.group(1)
            value = re.fullmatch(r"invalid (?:.+ value|choice): ('.*?'|\".*?\")(?: \(choose from .*\))?", bad.group(2),
                                 re.S)
            if value and action is not None:
                return f"{name} = {value.group(1)} is invalid: {_allowed(action)}"
            if bad.group(2).startswith("expected ") and action is not None:
                return f"{name} is missing its value: {_wanted(action)}"
            return f"{name} is invalid: {bad.group(2)}"
        missing = re.fullmatch(r"the following arguments are required: (.+)", message, re.S)
        if missing:
            names = missing.group(1).split(", ")
            action = self._action_named(names[0])
            what = _wanted(action) if action is not None else "see --help"
            return f"{_name(action) if action is not None else names[0]} is required: {what}"
        extra = re.fullmatch(r"unrecognized arguments: (.+)", message, re.S)
        if extra:
            return (f"{extra.group(1)} is invalid: not an option or argument of {self.prog} (its --help lists "
                    "them)")
        return message

    def _action_named(self, name: str):
        for action in self._actions:
            if name in ("/".join(action.option_strings), action.metavar, action.dest):
                return action
        return None


def add_option(parser, *names, allowed: str | None = None, **kwargs):
    """``parser.add_argument(*names, **kwargs)``, with what a value of it may be (``allowed``, e.g. "must be an
    integer >= 1") for the error a value argparse cannot convert gets (:class:`Parser`)."""
    action = parser.add_argument(*names, **kwargs)
    action.allowed = allowed
    return action


def _name(action) -> str:
    """An argument as the user types it: ``--out``, ``SPEC``; the sub-command's ``COMMAND``."""
    if action.option_strings:
        return action.option_strings[-1]
    if isinstance(action, argparse._SubParsersAction):
        return "COMMAND"
    return action.metavar or action.dest


def _allowed(action) -> str:
    if getattr(action, "allowed", None):
        return action.allowed
    if action.choices is not None:
        return "must be one of " + ", ".join(map(str, action.choices))
    kind = {float: "a number", int: "an integer"}.get(action.type, "a value")
    return f"must be {kind}"


def _wanted(action) -> str:
    """What a missing argument is: its help, its values and an example."""
    if isinstance(action, argparse._SubParsersAction):
        return "one of " + ", ".join(action.choices) + " (--help says what each does)"
    example = f"{action.option_strings[-1]} {action.metavar or action.dest.upper()}" if action.option_strings else None
    said = action.help or ""
    if getattr(action, "allowed", None) or action.choices is not None:
        said += ("; " if said else "") + _allowed(action)
    return said + (f", e.g. {example}" if example else "")


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
        error_line(f"--out = {out!r} is invalid: {exc.strerror or exc}")
        return 2
    message = str(exc)
    for field, flag in (flags or {}).items():
        if message.startswith(field + " = "):
            message = flag + message[len(field):]
            break
    error_line(message)
    return 2


def error_line(message: str, prefix: str = "error: ") -> None:
    """Write ``error: <message>`` to stderr as one line, whatever the message holds (:func:`one_line`)."""
    sys.stderr.write(prefix + one_line(message) + "\n")


def one_line(text: str) -> str:
    """``text`` with its control characters and line breaks escaped as Python writes them (``\\n``, ``\\r``,
    ``\\t``, ``\\x1b``, ``\\u2028``), other characters (ε, é) unchanged: a key or CSV column named ``"bad\\nkey"``
    split the error over two lines, and a terminal acts on an escape sequence."""
    return "".join(ch.encode("unicode_escape").decode("ascii") if unicodedata.category(ch) in _BREAKS else ch
                   for ch in text)


#: Unicode categories of the characters :func:`one_line` escapes: controls, line and paragraph separators
_BREAKS = ("Cc", "Zl", "Zp")


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
