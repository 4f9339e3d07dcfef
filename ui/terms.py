"""Terms defined where they appear: the expander a page puts under its title, and column tooltips.

The expander leaves out the budget terms the current scenario's noise does not use (:func:`scenario_terms`): a
Laplace demo stated in pure ε got δ, ρ, zCDP and μ-GDP defined. The scenario is the session's
(``st.session_state[keys.SCENARIO]``) with the sidebar's noise choices as the widgets now hold them (a page puts the
expander above the sidebar's reading of this run's widgets); on a session's first run, the link's or the demo.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Iterable, Mapping

import streamlit as st

from . import keys
from .glossary import COLUMN_HELP, glossary_markdown
from .params.query import from_query
from .presets import DEMO

__all__ = ["terms_expander", "text_columns", "scenario_terms", "budget_terms", "BUDGET_TERMS"]

#: the terms of the ways a budget is stated; the other terms (ε, sensitivity, the methods) do not depend on it
BUDGET_TERMS = frozenset({"delta", "rho", "zcdp", "gdp"})


def budget_terms(scenario) -> set[str]:
    """The budget terms ``scenario``'s noise uses: ρ, zCDP and μ-GDP for Gaussian noise (its own budget, whatever
    it is stated in: the pages describe its own curve by μ = Δ/σ and ρ = μ²/2), δ where the budget is stated with
    one ((ε, δ), or a library's δ > 0); none for pure ε-DP noise (Laplace, geometric, randomized response)."""
    library = scenario.release != "lab"
    noises = [scenario.release_mechanism if library else scenario.mechanism]
    if scenario.size_released:  # an unknown n released with its own noise
        noises.append(scenario.n_mechanism)
    used = {"rho", "zcdp", "gdp"} if any("gaussian" in str(m).lower() for m in noises) else set()
    if library:
        try:
            delta = float(dict(scenario.release_params).get("delta") or 0.0)
        except (TypeError, ValueError):
            delta = 0.0
        if delta > 0 or (scenario.release == "diffprivlib" and "gaussian" in scenario.release_mechanism.lower()):
            used.add("delta")
    elif scenario.budget_form == "epsilon_delta":
        used.add("delta")
    return used


def scenario_terms(terms: Iterable[str], scenario) -> tuple[str, ...]:
    """``terms`` without the budget terms ``scenario`` does not use (:func:`budget_terms`); all of them where
    ``scenario`` is None."""
    terms = tuple(terms)
    if scenario is None:
        return terms
    used = budget_terms(scenario)
    return tuple(t for t in terms if t not in BUDGET_TERMS or t in used)


def _current_scenario(state: Mapping[str, Any]):
    """The session's scenario with the noise the sidebar's widgets hold now (a change is in them before the sidebar
    reads it into the scenario, further down the page); on a session's first run, the link's scenario or the demo,
    as the sidebar will read it (:func:`ui.sidebar.state.current_scenario`, which this does not run: it writes)."""
    s = state.get(keys.SCENARIO)
    if s is None:
        try:
            s = from_query(st.query_params.to_dict()) or DEMO
        except ValueError:  # the sidebar says why and shows the demo
            s = DEMO
    release = state.get(keys.W_RELEASE, s.release)
    if release != "lab":
        return replace(s, release=release,
                       release_mechanism=state.get(keys.release_mechanism_key(release), s.release_mechanism))
    mech = state.get(keys.W_MECHANISM, s.mechanism)
    return replace(s, release="lab", mechanism=mech, budget_form=state.get(keys.budget_form_key(mech), s.budget_form))


def terms_expander(terms: Iterable[str]) -> None:
    """An expander "Terms on this page" defining ``terms`` (keys of :data:`ui.glossary.GLOSSARY`), the budget terms
    only where the current scenario uses them (:func:`scenario_terms`)."""
    with st.expander("Terms on this page"):
        st.markdown(glossary_markdown(set(scenario_terms(terms, _current_scenario(st.session_state)))))


def text_columns(formats: Mapping[str, str], pinned: Iterable[str] = ()) -> dict:
    """Right-aligned text columns for formatted numbers, each with its definition as the tooltip; the
    ``pinned`` columns (the row's name) stay in view while a narrow window scrolls the others."""
    return {c: st.column_config.TextColumn(c, alignment="right", help=COLUMN_HELP.get(c),
                                           width=_WIDTH.get(c, "small")) for c in formats} | \
        {c: st.column_config.TextColumn(c, help=h) for c, h in COLUMN_HELP.items() if c not in formats} | \
        {c: st.column_config.TextColumn(_PINNED_LABEL.get(c, c), pinned=True, width=_PINNED_WIDTH.get(c),
                                        help=COLUMN_HELP.get(c)) for c in pinned}


#: pinned columns sized for their longest entry (sized to the first rows, "Exact (best method)" was cut); the
#: parameter's header says "param" over its short names (p[0], beta[2]): with "parameter" a multi-parameter table
#: (Dirichlet k = 6) was 857 px of grid in the 818 a 1,280 px window with the sidebar open shows
_PINNED_WIDTH = {"method": 132, "parameter": 60}
_PINNED_LABEL = {"parameter": "param"}
#: number columns sized to their header and values: the ESS header is longer than "small" holds ("ESS bulk / t" at
#: 1,400 px), and an ABC acceptance of a few in a million (0.000007132, four significant digits and no exponent) is
#: too ("…000007132" cut on the left); the short ones give them the room back, so a multi-parameter table (the
#: parameter column pinned beside the method's) still shows every column on a 1,400 px desktop
_WIDTH = {"ESS bulk / tail": 100, "mean": 64, "sd": 64, "q5": 64, "q95": 64, "R-hat": 56, "acceptance": 90}
