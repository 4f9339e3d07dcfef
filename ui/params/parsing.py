"""Text typed into a box, parsed: numbers, a matrix, the released size, a budget grid.

The sidebar keeps free text exactly as typed; these functions read it when the spec is built. A bad
entry raises ``ValueError`` naming the spec field, the value and what is allowed (the engine's error
shape), so the app shows it next to the box that holds it. Nothing here imports streamlit.
"""
from __future__ import annotations

import math
import re
from typing import Any

from engine.mechanisms.additive import whole_root

__all__ = ["parse_number", "format_number", "parse_numbers", "release_example", "parse_matrix", "parse_n_dp",
           "parse_grid", "log_grid", "grid_value", "GRID_REL_TOL"]

_NUMBER = re.compile(r"[,;\s]+")


_PLAIN = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
#: a square root, ``√2`` or ``sqrt(2)``: how a box shows a value such as the regression's σ = √2, whose
#: decimal text (1.4142135623730951) is exact but unreadable
_ROOT = re.compile(r"√\s*(\d+\.?\d*|\.\d+)|sqrt\(\s*(\d+\.?\d*|\.\d+)\s*\)")


def parse_number(label: str, text: Any, *, integer: bool = False) -> float | int:
    """One number typed into a box, read exactly as written or refused: never reinterpreted.

    A number is Python's plain notation: ``0.5``, ``.5``, ``2000``, ``2e6``, ``-1.5E-3`` (spaces around it
    are fine). Everything else is refused with a message naming the box by its ``label``, quoting the
    text as typed and saying what is allowed: a decimal comma (``0,5``; the browser's own number field
    turned it into 5), a thousands separator (``2,000,000``), letters (``abc``), an empty box. With
    ``integer`` the value must be a whole number (``2e6`` is 2000000; ``2.5`` is refused). Ranges are
    the engine's to check (its message is translated to the box's label by the sidebar). A box for a real
    number also reads a square root, ``√2`` or ``sqrt(2)``: the value is ``math.sqrt(2)`` exactly."""
    if isinstance(text, bool):
        raise ValueError(f"{label}: {text!r} is not a number")
    if isinstance(text, (int, float)):
        value = float(text)
        raw = repr(text)
    else:
        raw = str(text if text is not None else "").strip()
        if not raw:
            # no example for a count: its range is the box's (2000 suggested a value classes I and predictors p refuse)
            raise ValueError(f"{label} is empty: type " + ("a whole number" if integer else "a number, e.g. 0.5"))
        if "," in raw:
            if re.fullmatch(r"\d{1,3}(,\d{3})+", raw):
                hint = "without thousands separators, e.g. 2000000 or 2e6"
            elif raw.count(",") == 1:
                hint = "with a point for decimals, e.g. " + raw.replace(",", ".")
            else:
                hint = "as one number (this box takes one)"
            raise ValueError(f"{label} = \"{raw}\" is not a number: write it {hint}")
        root = None if integer else _ROOT.fullmatch(raw)
        if root is None and not _PLAIN.fullmatch(raw):
            raise ValueError(f"{label} = \"{raw}\" is not a number: type digits with a point for decimals "
                             "(0.5) or a power of ten (2e6)" + ("" if integer else ", or a square root (√2)"))
        value = math.sqrt(float(root.group(1) or root.group(2))) if root else float(raw)
    if not math.isfinite(value):
        raise ValueError(f"{label} = \"{raw}\" is not a finite number")
    if integer:
        if value != math.floor(value):
            raise ValueError(f"{label} = \"{raw}\" is not a whole number: it counts something, e.g. "
                             f"{math.floor(value)} or {math.ceil(value)}")
        return int(value)
    return value


def format_number(value: float | int, *, root: bool = False) -> str:
    """A number as the text a box starts with: ``2000``, ``0.5``, ``1e-05`` (what :func:`parse_number`
    reads back to the same value); with ``root``, the square root of a whole number as ``√2`` (a one-number
    box reads it back; lists, :func:`parse_numbers`, do not). Only an exact root is written so: the engine's
    :func:`~engine.mechanisms.additive.whole_root` at tolerance 0, as ``√2`` must read back to this very float."""
    if isinstance(value, bool):
        raise ValueError(f"value = {value!r} is invalid: must be a number")
    if isinstance(value, int) or float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    square = whole_root(value, rel_tol=0.0) if root else None  # exact: √k reads back as math.sqrt(k), this float
    return f"√{square}" if square is not None else repr(float(value))


#: an example list for the box a field is typed in (a count example read oddly under levels or a prior's α)
_EXAMPLES = {"model.feature_levels": "3, 3, 3", "model.alpha": "1, 1, 1", "model.x_mean": "0.9, -1.17",
             "model.lo": "-10", "model.hi": "10", "data.simulate.p": "0.2, 0.3, 0.5",
             "data.simulate.beta": "-1.79, -2.89, -0.66", "data.simulate.pi": "0.2, 0.3, 0.5"}


def release_example(count: int) -> str:
    """What a release of ``count`` numbers looks like, for the message of a box that takes it: "a number, e.g. 23.5"
    for one statistic (the list example read as if one number were wrong), else the list with its length."""
    if count <= 1:
        return "a number, e.g. 23.5"
    sample = ["104", "120", "74", "102", "88", "97"]
    shown = (sample * count)[:count] if count <= len(sample) else sample[:3] + ["…"]
    return f"{count} numbers separated by commas, e.g. {', '.join(shown)}"


def parse_numbers(field: str, text: Any, *, allowed: str | None = None) -> list[float]:
    """``"104, 120, 74, 102"`` -> ``[104.0, 120.0, 74.0, 102.0]``; commas, semicolons or spaces
    separate. Raises ValueError naming ``field`` for empty text or a token that is not a number; ``allowed``
    replaces the message's "must be a list of numbers …" (e.g. "must be a number, e.g. 23.5"). A wrong token is
    named only where it is not the whole text (the message quotes the text already)."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return [float(text)]
    if isinstance(text, (list, tuple)):
        text = ", ".join(str(t) for t in text)
    raw = str(text if text is not None else "").strip().strip("[]")
    tokens = [t for t in _NUMBER.split(raw) if t]
    example = _EXAMPLES.get(field, "104, 120, 74, 102")
    allowed = allowed or f"must be a list of numbers separated by commas, e.g. {example}"
    if not tokens:
        raise ValueError(f"{field} = {str(text)!r} is invalid: {allowed}")
    out = []
    for tok in tokens:
        try:
            v = float(tok)
        except ValueError:
            which = "" if len(tokens) == 1 else f" ({tok} is not a number)"
            raise ValueError(f"{field} = {str(text)!r} is invalid: {allowed}{which}") from None
        if not math.isfinite(v):
            raise ValueError(f"{field} = {str(text)!r} is invalid: every entry must be a finite number")
        out.append(v)
    return out


def parse_matrix(field: str, text: Any) -> list[list[float]]:
    """A matrix typed as rows separated by semicolons (or new lines), numbers by commas or spaces:
    ``"1, 0.5; 0.5, 1"`` -> ``[[1.0, 0.5], [0.5, 1.0]]``. Raises ValueError naming ``field`` for a
    bad number or rows of different lengths (the engine checks the size and positive definiteness)."""
    if isinstance(text, (list, tuple)):
        return [[float(v) for v in row] for row in text]
    raw = str(text if text is not None else "").strip()
    rows = [r for r in re.split(r"[;\n]+", raw) if r.strip()]
    allowed = "must be rows of numbers separated by semicolons, e.g. 1, 0.5; 0.5, 1"
    if not rows:
        raise ValueError(f"{field} = {raw!r} is invalid: {allowed}")
    out = []
    for row in rows:
        try:
            out.append(parse_numbers(field, row.replace("[", "").replace("]", "")))
        except ValueError:
            raise ValueError(f"{field} = {raw!r} is invalid: {allowed} ({row.strip()!r} is not a row of numbers)") \
                from None
    if len({len(r) for r in out}) != 1:
        raise ValueError(f"{field} = {raw!r} is invalid: every row needs the same number of entries")
    return out


def parse_n_dp(text: Any) -> float:
    """``data.n_dp`` typed as text: exactly one number (negative is fine: it is noise). Empty or not a number, the
    message is this field's, not parse_numbers' "a list of numbers separated by commas" (audit s25)."""
    allowed = "must be one number, the released noisy size, e.g. 21.4 (negative is possible: it is noise)"
    values = parse_numbers("data.n_dp", text, allowed=allowed)
    if len(values) != 1:
        raise ValueError(f"data.n_dp = {text!r} is invalid: {allowed}")
    return values[0]


def log_grid(lo: float, hi: float, points: int) -> str:
    """``points`` log-spaced values from ``lo`` to ``hi`` as grid text (3 significant digits)."""
    if not (lo > 0 and hi > lo and points >= 2):
        raise ValueError(f"grid = ({lo!r}, {hi!r}, {points!r}) is invalid: needs 0 < low < high and at least 2 points")
    ratio = (hi / lo) ** (1.0 / (points - 1))
    return ", ".join(f"{lo * ratio**i:.3g}" for i in range(points))


#: how close (relative) a value must be to a grid point to be that point: the grid box and the sidebar's ε added to
#: the default grid write 6 significant digits, so the sidebar's ε = 1/3 is the grid's 0.333333
GRID_REL_TOL = 1e-6


def grid_value(value: float | None, grid) -> float | None:
    """The point of ``grid`` equal to ``value`` (to :data:`GRID_REL_TOL`, relative), else None (also for None or
    NaN). The Privacy budget page's one lookup: whether the sidebar's ε is on the grid, and a link's ``your_eps``
    (they used 1e-6 and 1e-9: the page put the sidebar's 1/3 on its grid as 0.333333, and a link carrying
    your_eps = 1/3 was then told it was not a value of that grid)."""
    if value is None or not math.isfinite(value):
        return None
    return next((g for g in grid if math.isclose(g, value, rel_tol=GRID_REL_TOL)), None)


def parse_grid(text: str, symbol: str = "epsilon", max_points: int = 25) -> tuple[float, ...]:
    """A budget grid typed as text: positive numbers, at most ``max_points``, returned sorted and
    without duplicates. Raises ValueError naming the grid."""
    values = parse_numbers(f"{symbol} grid", text)
    bad = [v for v in values if v <= 0]
    if bad:
        raise ValueError(f"{symbol} grid = {text!r} is invalid: every value must be > 0 (got {bad[0]:g})")
    grid = tuple(sorted(set(values)))
    if len(grid) > max_points:
        raise ValueError(f"{symbol} grid = {text!r} is invalid: at most {max_points} values (got {len(grid)})")
    return grid
