"""The sidebar's "How was it released?" choice and a library's form (inside the Privacy mechanism section).

"The lab's own simulation" keeps today's mechanism form (:mod:`ui.sidebar.mechanism`). "OpenDP" or "diffprivlib"
shows that library's mechanisms and parameters under the library's own names (``engine.release_options()``), the
engine's mapping in one sentence under them, and an ``st.warning`` for each convention that differs from the
lab's default (``engine.release_from(...).warnings``). The mapping is the engine's table: neither library is
imported. Numbers are text boxes parsed by the app (:func:`ui.sidebar.numbers.number_box`); an optional one
(OpenDP's ``k`` and ``sensitivity``) may stay blank; ``clip`` is typed ``lower, upper`` (``0, inf``).

State: one widget per (library, mechanism, parameter) (:func:`ui.keys.release_param_key`), seeded from the
scenario's ``release_params`` for its own mechanism and from the form's defaults for the others
(:func:`seed_release_widgets`).
"""
from __future__ import annotations

from typing import Any

import streamlit as st

import engine

from .. import keys
from ..params.parsing import format_number, parse_number
from ..params.release import (CHOICES, RELEASE_LABELS, TEXT_PARAMS, form_default, mechanisms, params_of,
                              release_params)
from ..params.scenario import RELEASES, Scenario
from .numbers import number_box

__all__ = ["release_choice", "library_form", "seed_release_widgets"]

_OPTIONAL_NUMBERS = ("k", "sensitivity")  # blank allowed where the library has no default (OpenDP)


def release_choice() -> str:
    """The radio "How was it released?": ``lab``, ``opendp`` or ``diffprivlib``."""
    return st.radio("How was it released?", RELEASES, key=keys.W_RELEASE, format_func=RELEASE_LABELS.get,
                    help="The lab's own simulation: the mechanism below, in the lab's terms. OpenDP or diffprivlib: "
                         "a release made with that library, in its own terms (its mechanism and parameter names); "
                         "the lab maps it to the exact noise law of the release.")


def _last(library: str, mechanism: str, param: str) -> Any:
    s = st.session_state.get(keys.SCENARIO) or Scenario()
    if s.release == library and s.release_mechanism == mechanism:
        found = dict(s.release_params).get(param)
        if found is not None:
            return found
    return form_default(library, mechanism, param)


def _optional_number(label: str, key: str, help: str) -> float | None:
    """A box that may stay blank (the library's default applies): None, or the number typed; a bad entry is
    recorded under the mechanism section like :func:`number_box`'s."""
    text = st.text_input(label, key=key, help=help, placeholder="blank: the library's default")
    if not str(text).strip():
        return None
    try:
        return parse_number(label, text)
    except ValueError as exc:
        st.session_state.setdefault(keys.TYPED_ERRORS, {}).setdefault("mechanism", str(exc))
        return None


def library_form(library: str) -> dict:
    """The library's mechanism and its parameters; the mapping sentence and its warnings under them."""
    mech = st.selectbox(f"{RELEASE_LABELS[library]} mechanism", mechanisms(library),
                        key=keys.release_mechanism_key(library),
                        help="As the library names it: OpenDP make_laplace / make_gaussian, diffprivlib's class.")
    params: list[tuple[str, Any]] = []
    for name, info in params_of(library, mech).items():
        key, help_ = keys.release_param_key(library, mech, name), f"{name}: {info['allowed']}"
        if name in CHOICES:
            value = st.radio(name, CHOICES[name], key=key, help=help_, horizontal=True)
        elif name in TEXT_PARAMS:
            value = st.text_input(name, key=key, help=help_,
                                  placeholder={"clip": "e.g. 0, inf (blank: not clipped)",
                                               "bounds": "e.g. 0, 40 (blank: the model's lo, hi)"}.get(name))
        elif info["default"] is None and name in _OPTIONAL_NUMBERS:
            value = _optional_number(name, key, help_)
        else:
            value = float(number_box(name, key, section="mechanism", fallback=_last(library, mech, name),
                                     help=help_))
        if value is not None and not (name == "clip" and not str(value).strip()):
            params.append((name, value))
    try:
        mapped = engine.release_from(library, mech, **release_params(library, mech, params))
    except ValueError:
        mapped = None  # the section's error (from the validation) says why
    if mapped is not None:
        st.caption(mapped.sentence)
        for warning in mapped.warnings:
            st.warning(warning, icon=":material/warning:")
    return {"release": library, "release_mechanism": mech, "release_params": tuple(params)}


def seed_release_widgets(s: Scenario, seed) -> None:
    """Seed the choice and every library form's boxes (``seed(key, value)`` sets a key only when missing)."""
    seed(keys.W_RELEASE, s.release if s.release in RELEASES else "lab")
    for library in RELEASES[1:]:
        names = mechanisms(library)
        seed(keys.release_mechanism_key(library),
             s.release_mechanism if s.release == library and s.release_mechanism in names else names[0])
        for mech in names:
            own = dict(s.release_params) if (s.release == library and s.release_mechanism == mech) else {}
            for name in params_of(library, mech):
                value = own.get(name, form_default(library, mech, name))
                if name in CHOICES:
                    value = value if value in CHOICES[name] else CHOICES[name][0]
                elif name in TEXT_PARAMS or value is None:
                    value = "" if value is None else str(value)
                else:
                    value = format_number(value)
                seed(keys.release_param_key(library, mech, name), value)
