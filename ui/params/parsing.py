"""Text typed into a box, parsed: numbers, a matrix, the released size, a budget grid.

The sidebar keeps free text exactly as typed; these functions read it when the spec is built. A bad
entry raises ``ValueError`` naming the spec field, the value and what is allowed (the engine's error
shape), so the app shows it next to the box that holds it. Nothing here imports streamlit.
"""
from __future__ import annotations

import math
import re
from typing import Any

__all__ = ["parse_numbers", "parse_matrix", "parse_n_dp", "parse_grid", "log_grid"]

_NUMBER = re.compile(r"[,;\s]+")


def parse_numbers(field: str, text: Any) -> list[float]:
    """``"104, 120, 74, 102"`` -> ``[104.0, 120.0, 74.0, 102.0]``; commas, semicolons or spaces
    separate. Raises ValueError naming ``field`` for empty text or a token that is not a number."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return [float(text)]
    if isinstance(text, (list, tuple)):
        text = ", ".join(str(t) for t in text)
    raw = str(text if text is not None else "").strip().strip("[]")
    tokens = [t for t in _NUMBER.split(raw) if t]
    allowed = "must be a list of numbers separated by commas, e.g. 104, 120, 74, 102"
    if not tokens:
        raise ValueError(f"{field} = {str(text)!r} is invalid: {allowed}")
    out = []
    for tok in tokens:
        try:
            v = float(tok)
        except ValueError:
            raise ValueError(f"{field} = {str(text)!r} is invalid: {allowed} ({tok!r} is not a number)") from None
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
    """``data.n_dp`` typed as text: exactly one number (negative is fine: it is noise)."""
    values = parse_numbers("data.n_dp", text)
    if len(values) != 1:
        raise ValueError(f"data.n_dp = {text!r} is invalid: must be one number, the released noisy size")
    return values[0]


def log_grid(lo: float, hi: float, points: int) -> str:
    """``points`` log-spaced values from ``lo`` to ``hi`` as grid text (3 significant digits)."""
    if not (lo > 0 and hi > lo and points >= 2):
        raise ValueError(f"grid = ({lo!r}, {hi!r}, {points!r}) is invalid: needs 0 < low < high and at least 2 points")
    ratio = (hi / lo) ** (1.0 / (points - 1))
    return ", ".join(f"{lo * ratio**i:.3g}" for i in range(points))


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
