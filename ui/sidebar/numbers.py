"""Numbers typed into the sidebar as text and parsed by the app, so nothing typed is reinterpreted.

The browser's own number field rewrites what it cannot read: "0,5" became 5 and "2e6" became 2, and a
word left the old value standing while the error quoted it. Every numeric field of the sidebar is a
text box instead, read by :func:`ui.params.parsing.parse_number`: a number is taken exactly as typed
or refused with a message that names the box, quotes the text and says what is allowed. A refused
box keeps its text; the scenario keeps its last valid value (so the URL and every figure stay
consistent) while the message waits under the box's section and the results wait for a fix.

The pages' own number boxes (Privacy budget, Calibration) use :func:`number_field`, which shows its
message under the box itself.

Per run: :func:`begin` clears the collected messages, every :func:`number_box` adds its own to its
section, :func:`typed_errors` hands them to the validation (first message per section).
"""
from __future__ import annotations

from typing import Any, Callable

import streamlit as st

from .. import keys
from ..params.parsing import format_number, parse_number
from ..params.scenario import Scenario

__all__ = ["begin", "number_box", "typed_errors", "read_number", "number_field", "last_value"]


def begin() -> None:
    """Start a run of the sidebar: no typed-number errors yet."""
    st.session_state[keys.TYPED_ERRORS] = {}


def typed_errors() -> dict[str, str]:
    """{section: message} of the boxes whose text is not a number (first per section)."""
    return dict(st.session_state.get(keys.TYPED_ERRORS, {}))


def last_value(field: str) -> Any:
    """The scenario's last valid value of ``field`` (what a box that does not parse falls back to)."""
    return getattr(st.session_state.get(keys.SCENARIO) or Scenario(), field)


def _as_text(key: str) -> None:
    """A box's value set as a number (a preset, a default, "settings that fit") becomes its text."""
    value = st.session_state.get(key)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        st.session_state[key] = format_number(value, root=True)


def read_number(key: str, fallback: float | int, *, integer: bool = False) -> float | int:
    """The number a box holds, or ``fallback`` when its text does not parse (for callbacks and for
    boxes not drawn on this run)."""
    value = st.session_state.get(key, fallback)
    try:
        return parse_number(key, value, integer=integer)
    except ValueError:
        return fallback


def number_box(label: str, key: str, *, section: str, fallback: float | int, integer: bool = False,
               container: Any = None, help: str | None = None, on_change: Callable | None = None,
               args: tuple = ()) -> float | int:
    """A text box for one number: returns it, or ``fallback`` (the scenario's last valid value) with the
    parse message recorded under ``section``. The box starts from the scenario's value as text."""
    _as_text(key)
    text = (container or st).text_input(label, key=key, help=help, on_change=on_change, args=args)
    try:
        return parse_number(label, text, integer=integer)
    except ValueError as exc:
        st.session_state.setdefault(keys.TYPED_ERRORS, {}).setdefault(section, str(exc))
        return fallback


def number_field(label: str, key: str, *, container: Any = None, integer: bool = False, lower: float | None = None,
                 upper: float | None = None, help: str | None = None, persist_state: str | None = None
                 ) -> float | int | None:
    """A page's own number box (not the sidebar's): text parsed by the app, checked against
    ``[lower, upper]``; returns the number, or None after showing the message under the box (the
    caller then waits for a fix). The text typed stays in the box."""
    where = container or st
    _as_text(key)
    kwargs = {"persist_state": persist_state} if persist_state else {}
    text = where.text_input(label, key=key, help=help, **kwargs)
    try:
        value = parse_number(label, text, integer=integer)
    except ValueError as exc:
        where.error(str(exc), icon="⚠️")
        return None
    if (lower is not None and value < lower) or (upper is not None and value > upper):
        span = (f"between {format_number(lower)} and {format_number(upper)}" if lower is not None and upper is not None
                else f"at least {format_number(lower)}" if lower is not None else f"at most {format_number(upper)}")
        where.error(f"{label} must be {span} (you entered {text.strip()}).", icon="⚠️")
        return None
    return value
