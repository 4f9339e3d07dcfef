"""The sidebar's "How was it released?" choice and a library's form (inside the Privacy mechanism section).

"The lab's own simulation" keeps today's mechanism form (:mod:`ui.sidebar.mechanism`). "OpenDP" or "diffprivlib"
shows that library's mechanisms and parameters under the library's own names (``engine.release_options()``), the
engine's mapping in one sentence under them (for OpenDP at the model's own add/remove-one sensitivity, the one the
analysis uses: "Δ = 1 here, so ε = 1/3"), and an ``st.warning`` for each convention that differs from the lab's
default and applies to the model (``engine.release_from(...).warnings``; OpenDP's neighbours only where they change
this model's Δ, in its numbers). The mapping is the engine's table: neither library is
imported. Numbers are text boxes parsed by the app (:func:`ui.sidebar.numbers.number_box`); an optional one
(OpenDP's ``k`` and ``sensitivity``) may stay blank; ``clip`` is typed ``lower, upper`` (``0, inf``).

A switch to OpenDP's mean switches the methods to those that can analyse it and n to unknown, as loading a
dp-wizard mean does; a switch away undoes what is left of that (:func:`switch_for_mean`).

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

from .. import keys
from ..params.carry import (carried_form, carried_lab, carried_note, carried_release, model_sensitivities,
                            stated_budget)
from ..params.parsing import format_number, parse_number
from ..params.release import (CHOICES, MEAN_METHODS, RELEASE_LABELS, TEXT_PARAMS, form_default, is_mean,
                              mechanisms, params_of, release_params)
from ..params.scenario import DEFAULT_METHODS, METHODS, RELEASES, Scenario, budget_forms
from .numbers import number_box, read_number

__all__ = ["release_choice", "library_form", "seed_release_widgets", "carry_to_lab", "carry_to_library",
           "carry_form", "budget_note", "switch_for_mean"]

_OPTIONAL_NUMBERS = ("k", "sensitivity")  # blank allowed where the library has no default (OpenDP)


def _previous() -> Scenario:
    """The scenario before the switch (the last run's)."""
    return st.session_state.get(keys.SCENARIO) or Scenario()


def _budget(s: Scenario) -> tuple[str, float] | None:
    """The budget a switch carries: the last run's, or where its noise did not build (OpenDP's int domain on a
    real statistic, a box left blank) the last one that did, so a switch through an invalid form still carries."""
    budget = stated_budget(s)
    last = st.session_state.get(keys.BUDGET_SCENARIO)
    return budget if budget is not None or last is None else stated_budget(last)


def carry_to_lab() -> None:
    """On a switch to the lab's own simulation or of its mechanism: the budget before the switch, restated in the
    new mechanism's form (:mod:`ui.params.carry`), into its box, with a note under it."""
    s = _previous()
    budget = _budget(s)
    if budget is None:
        return
    mech = st.session_state.get(keys.W_MECHANISM, s.mechanism)
    forms = budget_forms(mech)
    form = st.session_state.get(keys.budget_form_key(mech))
    form = form if form in forms else forms[0]
    for field, value in carried_lab(budget, mech, form, replace(s, release="lab", mechanism=mech)).items():
        _carry(_BOXES[field], value, carried_note(budget, field, value))


_BOXES = {"epsilon": keys.W_EPSILON, "rho": keys.W_RHO, "truth_prob": keys.W_TRUTH_PROB}


def carry_form(mech: str) -> None:
    """On a change of the budget's form (the Gaussian's ρ or (ε, δ), randomized response's ε or coin): the same
    noise restated in the new form (:func:`ui.params.carry.carried_form`), into its box, with a note under it."""
    s = _previous()
    form = st.session_state.get(keys.budget_form_key(mech))
    if s.release != "lab" or s.mechanism != mech or form is None:
        return
    try:
        delta = parse_number("δ (delta)", st.session_state.get(keys.W_DELTA, ""))
    except ValueError:
        delta = s.delta
    found = carried_form(s, form, delta if 0.0 < delta < 1.0 else s.delta)
    if found is None:
        return
    values, note = found
    for field, value in values.items():
        _carry(_BOXES[field], value, note)


def _carry(key: str, value: float, note: str) -> None:
    """``value`` into the box ``key``, and the note under it where the box said something else."""
    try:
        same = parse_number(key, st.session_state.get(key, "")) == value
    except ValueError:
        same = False
    st.session_state[key] = format_number(value)
    if not same:
        st.session_state[keys.BUDGET_NOTE] = note


def _form_params(library: str, mech: str) -> tuple:
    """The parameters a library form's boxes hold now (those that read), as ``Scenario.release_params``."""
    out = []
    for name in params_of(library, mech):
        value = st.session_state.get(keys.release_param_key(library, mech, name))
        if value is None or not str(value).strip():
            continue
        if name not in CHOICES and name not in TEXT_PARAMS:
            try:
                value = parse_number(name, value)
            except ValueError:
                continue
        out.append((name, value))
    return tuple(out)


def carry_to_library(library: str) -> None:
    """On a switch to ``library`` or of its mechanism: the budget before the switch, restated in the library's own
    parameters (diffprivlib's epsilon, OpenDP's scale at the model's Δ, OpenDP's mean's two scales as OpenDP splits
    a budget), into their boxes, with a note under them; the note also says where the library refuses the carried
    value (diffprivlib's classic Gaussian takes ε ≤ 1), whose message the section then shows."""
    s = _previous()
    mech = st.session_state.get(keys.release_mechanism_key(library)) or mechanisms(library)[0]
    budget = _budget(s)
    if budget is None:
        return
    target = replace(s, release=library, release_mechanism=mech, release_params=_form_params(library, mech))
    values, delta = carried_release(budget, target)
    for name, value in values.items():
        _carry(keys.release_param_key(library, mech, name), value, carried_note(budget, name, value, delta))
    if not values:
        st.session_state[keys.BUDGET_NOTE] = (
            "The budget was not carried over: " + ("OpenDP's mean is a mean of the Normal (known sd) model's values"
                                                   if mech == "mean" else "the model's Δ is not known yet")
            + "; the boxes keep their values (the form's defaults until you change them).")
        return
    carried = dict(_form_params(library, mech))
    try:
        engine.release_from(library, mech, **release_params(library, mech, carried))
    except ValueError as exc:
        note = st.session_state.get(keys.BUDGET_NOTE)
        # a refusal of a carried value is the library's own limit, not a wrong conversion: the section's message
        # names it (another box's message, e.g. a mean's blank bounds, is not about the budget)
        if note and str(exc).startswith(tuple(f"release.{name} " for name in values)):
            st.session_state[keys.BUDGET_NOTE] = (note + f" {RELEASE_LABELS[library]}'s {mech} does not take it "
                                                  "(the message above says what it allows).")


def switch_for_mean() -> None:
    """On a switch to or from OpenDP's mean (a noisy sum over a noisy length): the sidebar as the dp-wizard loader
    sets it (:func:`ui.params.release.scenario_from_spec`). To the mean, the methods that can analyse it
    (:data:`~ui.params.release.MEAN_METHODS`) and, for the Normal (known sd) model with a known n, n unknown and not
    released apart from the mean (the length is private: the analyst never sees it), its prior centred on the n
    box. Back, the default methods where the mean's were still on, and a known n where it was the mean's."""
    state = st.session_state
    before, now = _previous(), state.get(keys.W_RELEASE)
    was = is_mean(before.release, before.release_mechanism)
    mean = is_mean(now, state.get(keys.release_mechanism_key("opendp")))
    if mean == was:
        return
    on = {m for m in METHODS if state.get(keys.method_key(m))}
    if mean or on == set(MEAN_METHODS):
        for m in METHODS:
            state[keys.method_key(m)] = m in (MEAN_METHODS if mean else DEFAULT_METHODS)
    size, model = state.get(keys.W_SAMPLE_SIZE), state.get(keys.W_MODEL, before.model)
    if mean and size == "known" and model == "normal_known_sd":
        state[keys.W_SAMPLE_SIZE], state[keys.W_N_MECHANISM] = "unknown", "none"
        state[keys.W_N_PRIOR_MEAN] = float(read_number(keys.W_N, before.n, integer=True))
    elif not mean and size == "unknown" and state.get(keys.W_N_MECHANISM) == "none" \
            and model != "dirichlet_multinomial":  # a histogram's private total is its own "none"
        state[keys.W_SAMPLE_SIZE] = "known"


def _release_changed() -> None:
    release = st.session_state.get(keys.W_RELEASE)
    if release == "lab":
        carry_to_lab()
    elif release in RELEASES:
        carry_to_library(release)
    switch_for_mean()


def _mechanism_changed(library: str) -> None:
    carry_to_library(library)
    switch_for_mean()


def budget_note() -> None:
    """The note of the last switch's carried-over budget, under the box it went into (shown once)."""
    note = st.session_state.pop(keys.BUDGET_NOTE, None)
    if note:
        st.caption(note)


def release_choice() -> str:
    """The radio "How was it released?": ``lab``, ``opendp`` or ``diffprivlib``; a switch carries the budget over."""
    return st.radio("How was it released?", RELEASES, key=keys.W_RELEASE, format_func=RELEASE_LABELS.get,
                    on_change=_release_changed,
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
                        key=keys.release_mechanism_key(library), on_change=_mechanism_changed, args=(library,),
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
            value = number_box(name, key, section="mechanism", fallback=_last(library, mech, name), help=help_)
            # a required box without a default (OpenDP mean's scales) left blank: its message, no float(None)
            value = None if value is None else float(value)
        if value is not None and not (name == "clip" and not str(value).strip()):
            params.append((name, value))
    budget_note()
    out = {"release": library, "release_mechanism": mech, "release_params": tuple(params)}
    delta = model_sensitivities(replace(base, **out)) if base is not None else None
    try:
        mapped = engine.release_from(library, mech, **release_params(library, mech, params),
                                     replace_sensitivity=delta[1] if delta else None,
                                     default_sensitivity=delta[0] if delta else None)
    except ValueError:
        mapped = None  # the section's error (from the validation) says why
    if mapped is not None:
        # the Δ the library's noise is calibrated to (a Poisson upload's records are checked against it); not a
        # scenario field, so the scenario ignores it
        out["noise_sensitivity"] = float(getattr(mapped.noise, "sensitivity", 0.0) or 0.0) or None
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
