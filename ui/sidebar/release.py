"""The sidebar's "How was it released?" choice and a library's form (inside the Privacy mechanism section).

"The lab's own simulation" keeps today's mechanism form (:mod:`ui.sidebar.mechanism`). "OpenDP" or "diffprivlib"
shows that library's mechanisms and parameters under the library's own names (``engine.release_options()``), the
engine's mapping in one sentence under them (for OpenDP at the model's own add/remove-one sensitivity, the one the
analysis uses: "Δ = 1 here, so ε = 1/3"), and an ``st.warning`` for each convention that differs from the lab's
default and applies to the model (``engine.release_from(...).warnings``; OpenDP's neighbours only where they change
this model's Δ, in its numbers). The mapping is the engine's table: neither library is
imported. Numbers are text boxes parsed by the app (:func:`ui.sidebar.numbers.number_box`); an optional one
(OpenDP's ``k`` and ``sensitivity``) may stay blank; ``clip`` is typed ``lower, upper`` (``0, inf``).

State: one widget per (library, mechanism, parameter) (:func:`ui.keys.release_param_key`), seeded from the
scenario's ``release_params`` for its own mechanism and from the form's defaults for the others
(:func:`seed_release_widgets`).
"""
from __future__ import annotations

from typing import Any

import math
from dataclasses import replace

import streamlit as st

import engine
from engine.spec import build_mechanism

from .. import keys
from ..params.parsing import format_number, parse_number
from ..params.release import (CHOICES, RELEASE_LABELS, TEXT_PARAMS, form_default, mechanisms, params_of,
                              release_params)
from ..params.scenario import RELEASES, Scenario
from ..params.spec import model_table, noise_table
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


#: the start of the engine's warning on OpenDP's neighbours, a rule for every model (a sum's max(|lo|, |hi|)); the
#: form replaces it by this model's numbers, or leaves it out where the two notions give this model the same Δ
_NEIGHBOURS = "OpenDP's neighbours are add/remove-one"


def model_sensitivities(s: Scenario) -> tuple[float, float] | None:
    """(Δ the analysis uses for the scenario's OpenDP release with its sensitivity left blank: the model's
    add/remove-one one, Δ of the lab's own simulation of the same noise: replace-one for a known n), both as the
    engine builds the mechanisms (``engine.spec.build_mechanism``); None where the model or the release does not
    build yet (the section's error says why) or the release is not OpenDP's laplace or gaussian."""
    if s.release != "opendp" or s.release_mechanism not in ("laplace", "gaussian"):
        return None
    blank = replace(s, release_params=tuple((k, v) for k, v in s.release_params if k != "sensitivity"))
    lab = {"name": s.release_mechanism, **({"rho": 0.5} if s.release_mechanism == "gaussian" else {"epsilon": 1.0})}
    try:
        table = model_table(s)
        table.pop("n_prior", None)
        table.setdefault("n", max(int(s.n), 1))  # a typed release of an unknown n: the widget's n stands in
        model = engine.make_model(table["name"], table)
        released = build_mechanism(noise_table(blank), model, unbounded=s.unknown_n)
        own = build_mechanism(lab, model, unbounded=s.unknown_n)
    except ValueError:
        return None
    return float(getattr(released, "base", released).sensitivity), float(own.sensitivity)


def _shown_warnings(mapped, delta: tuple[float, float] | None) -> list[str]:
    """The engine's warnings that apply to this model: OpenDP's neighbours only where they give it another Δ than
    the lab's own simulation, with its numbers (a count read "a sum of values in [lo, hi] has sensitivity
    max(|lo|, |hi|)"); the engine's general rule where the model is not known yet."""
    if delta is None:
        return list(mapped.warnings)
    out = [w for w in mapped.warnings if not w.startswith(_NEIGHBOURS)]
    add_remove, replace_one = delta
    if not math.isclose(add_remove, replace_one):
        out.append(f"{_NEIGHBOURS}: one record added or removed moves this model's statistic by at most "
                   f"Δ = {add_remove:.4g}, the Δ the analysis uses, where the lab's own simulation (one record "
                   f"replaced) uses Δ = {replace_one:.4g}")
    return out


def library_form(library: str, base: Scenario | None = None) -> dict:
    """The library's mechanism and its parameters; the mapping sentence and its warnings under them. ``base``: the
    scenario as the sidebar reads it so far (this run's model and prior), whose model's Δ the sentence states."""
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
    out = {"release": library, "release_mechanism": mech, "release_params": tuple(params)}
    delta = model_sensitivities(replace(base, **out)) if base is not None else None
    try:
        mapped = engine.release_from(library, mech, **release_params(library, mech, params),
                                     default_sensitivity=delta[0] if delta else None)
    except ValueError:
        mapped = None  # the section's error (from the validation) says why
    if mapped is not None:
        st.caption(mapped.sentence)
        for warning in _shown_warnings(mapped, delta):
            st.warning(warning, icon=":material/warning:")
    return out


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
