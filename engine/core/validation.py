"""Boundary checks that raise ``ValueError`` naming the field, the value and what is allowed."""
from __future__ import annotations

import math
from typing import Any, Iterable, Mapping

import numpy as np

__all__ = [
    "fail",
    "shown_value",
    "positive",
    "positive_int",
    "finite",
    "probability_open",
    "choice",
    "instance",
    "number_list",
    "record_field",
    "known_keys",
    "model_positive",
    "seed_value",
    "MODEL_NUMBER_RANGE",
]


def fail(field: str, value: Any, allowed: str) -> None:
    """Raise the engine's one error shape: ``<field> = <value> is invalid: <allowed>`` (a long value shortened by
    :func:`shown_value`)."""
    raise ValueError(f"{field} = {shown_value(value)} is invalid: {allowed}")


#: the longest value an error shows whole; a longer one keeps its head and says how big it is
SHOWN_VALUE_CHARS = 200


def shown_value(value: Any) -> str:
    """``repr(value)`` for an error message, as it is when short; longer than :data:`SHOWN_VALUE_CHARS`, its head and
    its size: ``[1.0, 1.0, … (200,000 numbers)]``, ``'aaaa… (2,000,000 characters)'``. A 200,000-entry
    ``model.alpha`` made a 600 kB error line, and an integer beyond Python's 4,300 digits has no repr at all."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 660:  # > ~200 digits
        digits = int(value.bit_length() * math.log10(2)) + 1
        return f"{'-' if value < 0 else ''}<an integer of about {digits:,} digits>"
    text = repr(value)
    if len(text) <= SHOWN_VALUE_CHARS:
        return text
    head = text[:SHOWN_VALUE_CHARS - 40]
    if isinstance(value, str):
        return f"{head}… ({len(value):,} characters){text[-1]}"
    if isinstance(value, (list, tuple)) and text[:1] in "[(":
        numbers = all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) for v in value)
        cut = head.rfind(", ")
        head = head[:cut + 2] if cut > 0 else head
        return f"{head}… ({len(value):,} {'numbers' if numbers else 'entries'}){text[-1]}"
    if isinstance(value, Mapping):
        return f"{head}… ({len(value):,} keys)}}"
    return f"{head}… ({len(text):,} characters)"


def record_field(field: str, index: int) -> str:
    """The field of one record, counted from 1: ``data.csv record 5`` (a CSV's header is line 1, so
    record ``k`` is on line ``k + 1``; the app says so)."""
    return f"{field} record {index + 1}"


def _as_float(field: str, value: Any, allowed: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        fail(field, value, allowed)
    return float(value)


def finite(field: str, value: Any) -> float:
    """A finite real number."""
    v = _as_float(field, value, "must be a finite number")
    if not math.isfinite(v):
        fail(field, value, "must be a finite number")
    return v


def positive(field: str, value: Any) -> float:
    """A finite number > 0."""
    allowed = "must be a finite number > 0"
    v = _as_float(field, value, allowed)
    if not math.isfinite(v) or v <= 0:
        fail(field, value, allowed)
    return v


#: a model's prior parameters and record sd: beyond these the posteriors under- or overflow in double precision
#: (a normal prior sd of 1e-300 divided by zero, a gamma rate of 1e-300 overflowed)
MODEL_NUMBER_RANGE = (1e-12, 1e12)


def model_positive(field: str, value: Any) -> float:
    """A prior parameter or a record sd: a number > 0 within :data:`MODEL_NUMBER_RANGE`."""
    v = positive(field, value)
    lo, hi = MODEL_NUMBER_RANGE
    if not lo <= v <= hi:
        fail(field, value, f"must be a number from {lo:g} to {hi:g} (beyond them the posterior under- or overflows "
             "in double precision)")
    return v


def seed_value(seed: Any) -> int:
    """A seed as specs take it: an integer in [0, 2^63); a whole float below 2^53 (``7.0``, as a JSON exporter
    writes one) is that integer, as ``n = 30.0`` is for the other integer fields (it was refused)."""
    given = seed
    if isinstance(seed, float) and seed.is_integer() and 0 <= seed < 2.0**53:
        seed = int(seed)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
        fail("seed", given, "must be an integer in [0, 2^63)")
    return seed


def positive_int(field: str, value: Any, minimum: int = 1, maximum: int | None = None) -> int:
    """An integer in [minimum, maximum]."""
    allowed = f"must be an integer >= {minimum}" + (f" and <= {maximum}" if maximum else "")
    if isinstance(value, bool):
        fail(field, value, allowed)
    given = value  # reported as given: 1e300 stays 1e300, not its 301 digits
    if isinstance(value, (float, np.floating)) and math.isfinite(value) and float(value).is_integer():
        value = int(value)
    if not isinstance(value, (int, np.integer)):
        fail(field, given, allowed)
    if value < minimum or (maximum is not None and value > maximum):
        fail(field, given, allowed)
    return int(value)


def probability_open(field: str, value: Any) -> float:
    """A number strictly between 0 and 1."""
    allowed = "must be a number strictly between 0 and 1"
    v = _as_float(field, value, allowed)
    if not (0.0 < v < 1.0):
        fail(field, value, allowed)
    return v


def choice(field: str, value: Any, options: Iterable[str]) -> str:
    """One of a fixed set of names."""
    options = list(options)
    if not isinstance(value, str) or value not in options:
        fail(field, value, "must be one of " + ", ".join(options))
    return value


def instance(field: str, value: Any, kind: type | tuple[type, ...], allowed: str) -> Any:
    """``value`` when it is a ``kind``; otherwise the engine's error, which also names the type given (a long repr is
    shortened past the point that shows it, and a default repr does not read as a type): ``engine.summary(None)``
    and ``engine.summary(problem)`` raised AttributeError."""
    if not isinstance(value, kind):
        fail(field, value, allowed + ("" if value is None else f"; got a {type(value).__name__}"))
    return value


def known_keys(field: str, table: Mapping[str, Any], keys: Iterable[str]) -> None:
    """A table whose keys are all among ``keys``: a misspelt or extra key is refused, not ignored."""
    keys = list(keys)
    for key in table:
        if key not in keys:
            fail(f"{field}.{key}", table[key], "is not a key here; allowed: " + ", ".join(keys))


def number_list(field: str, value: Any, length: int | None = None) -> np.ndarray:
    """A non-empty list of finite numbers (a bare number counts as a list of one)."""
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        value = [value]
    allowed = "must be a list of finite numbers" + (f" of length {length}" if length else "")
    if not isinstance(value, (list, tuple, np.ndarray)) or len(value) == 0:
        fail(field, value, allowed)
    out = []
    for v in value:
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
            fail(field, value, allowed)
        if not math.isfinite(float(v)):
            fail(field, value, allowed)
        out.append(float(v))
    if length is not None and len(out) != length:
        fail(field, value, allowed)
    return np.asarray(out, dtype=float)
