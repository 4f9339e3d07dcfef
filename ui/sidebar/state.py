"""The sidebar's state: the canonical scenario, the widgets seeded from it, the URL mirrored from it.

State: the canonical scenario lives in ``st.session_state[keys.SCENARIO]``; widget keys are seeded
from it when missing (first visit, after a page switch, after a preset), and a valid scenario is
mirrored into the URL query string so a copied link reopens it (one with an error is not: a link copied then
would open on the error). A session's first run reads the scenario from the URL (else the demo); a preset
replaces it and clears every widget (:func:`load_scenario`). The browser's Back and Forward buttons move the URL
to an earlier or later scenario and rerun the page: where the URL is no longer what the sidebar last wrote, its
scenario is loaded as a preset's is (Streamlit keeps an entry in the history for every change it writes, which Back
stepped through without changing anything). Only a run the browser marks as Back or Forward does so
(:func:`ui.routing.history_navigation`): an edit sent before the browser had the previous run's URL carries an older
URL, and the edit wins.
"""
from __future__ import annotations

from dataclasses import fields, replace
from typing import Any, Mapping

import streamlit as st

from .. import keys
from ..params.defaults import default_truth, default_truth_p
from ..params.parsing import parse_numbers
from ..params.query import BUDGET_PAGE_KEYS, from_query, to_query
from ..params.scenario import (DEFAULT_PRIORS, MECHANISMS, METHODS, MODELS, PRIOR_KINDS, SIGMA_PRIOR_DEFAULTS,
                               Scenario, budget_forms)
from ..presets import DEMO
from ..routing import history_navigation
from .release import seed_release_widgets

__all__ = ["current_scenario", "load_scenario"]


def current_scenario() -> Scenario:
    """The session's scenario: from the URL on a session's first run, else the demo."""
    state = st.session_state
    if keys.SCENARIO not in state:
        scenario = DEMO
        try:
            linked = from_query(st.query_params.to_dict())
            if linked is not None:
                scenario = linked
                if linked.data == "csv":  # the link's file is not in it: the Data section says so
                    state[keys.LINKED_UPLOAD] = True
                if keys.PARAM_QUERY in st.query_params:  # the link's picked parameter (the picker checks it is one)
                    state[keys.PICKED_PARAM] = st.query_params[keys.PARAM_QUERY]
        except ValueError as exc:
            state[keys.LINK_NOTE] = f"The link's scenario could not be read ({exc}); showing the demo instead."
        state[keys.SCENARIO] = scenario
    elif (keys.WRITTEN_QUERY in state and _scenario_part(st.query_params.to_dict()) != state[keys.WRITTEN_QUERY]
          and history_navigation()):
        try:  # Back or Forward: the URL holds another scenario than the sidebar last wrote
            linked = from_query(st.query_params.to_dict())
        except ValueError:
            linked = None
        if linked is not None and linked != state[keys.SCENARIO]:
            load_scenario(linked)
            if keys.PARAM_QUERY in st.query_params:
                state[keys.PICKED_PARAM] = st.query_params[keys.PARAM_QUERY]
        state[keys.WRITTEN_QUERY] = _scenario_part(st.query_params.to_dict())
    return state[keys.SCENARIO]


#: the URL's entries a page writes besides the scenario: the picked parameter (ui.picker), the Privacy budget page's
#: choices; the sidebar keeps them when it writes the scenario (one history entry a change, not two)
_PAGE_KEYS = (keys.PARAM_QUERY, *BUDGET_PAGE_KEYS)


def _scenario_part(query: Mapping[str, Any]) -> dict:
    """A URL's query without the entries a page writes (:data:`_PAGE_KEYS`)."""
    return {k: v for k, v in query.items() if k not in _PAGE_KEYS}


def load_scenario(scenario: Scenario) -> None:
    """Make ``scenario`` current and re-seed every sidebar widget from it (presets)."""
    state = st.session_state
    for key in [k for k in state if keys.is_scenario_widget(str(k))]:
        del state[key]
    state[keys.SCENARIO] = scenario


def _seed(key: str, value: Any) -> None:
    if key not in st.session_state:
        st.session_state[key] = value


def _seed_all(s: Scenario) -> None:
    _seed(keys.W_MODEL, s.model)
    _seed(keys.W_N, int(s.n))
    for model in MODELS:
        prior = s.prior_dict if model == s.model else DEFAULT_PRIORS[model]
        for name, default in DEFAULT_PRIORS[model].items():
            value = prior.get(name, default)
            kind = PRIOR_KINDS.get((model, name), "float")
            if name == "upper":
                _seed(keys.prior_key(model, "use_upper"), value is not None)
                _seed(keys.prior_key(model, name), int(value) if value is not None else 10)
            elif kind in ("text", "matrix", "bounds"):
                _seed(keys.prior_key(model, name), str(value))
            else:
                _seed(keys.prior_key(model, name), int(value) if kind == "int" else float(value))
        if model == "linear_regression":  # sigma unknown: a checkbox and its prior's boxes
            _seed(keys.prior_key(model, "sigma_unknown"), prior.get("sigma_a") is not None)
            for name, default in SIGMA_PRIOR_DEFAULTS.items():
                value = prior.get(name)
                _seed(keys.prior_key(model, name), float(value) if value is not None else default)
        truth = s.truth if model == s.model else default_truth(model, prior)
        if model == "naive_bayes_loglinear":
            _seed(keys.truth_key(model), truth)
            _seed(keys.W_TRUTH_P, s.truth_p if model == s.model else default_truth_p(model, prior))
            _seed(keys.W_FROM_PRIOR, bool(s.from_prior) if model == s.model else False)
        elif model in ("dirichlet_multinomial", "linear_regression"):
            _seed(keys.truth_key(model), truth)
        else:
            try:
                _seed(keys.truth_key(model), float(parse_numbers("truth", truth)[0]))
            except ValueError:
                _seed(keys.truth_key(model), float(default_truth(model)))
        _seed(keys.s_dp_key(model), s.s_dp if model == s.model else "")
    seed_release_widgets(s, _seed)
    _seed(keys.W_MECHANISM, s.mechanism)
    for mech in MECHANISMS:
        forms = budget_forms(mech)
        _seed(keys.budget_form_key(mech), s.budget_form if (mech == s.mechanism and s.budget_form in forms) else forms[0])
    _seed(keys.W_EPSILON, float(s.epsilon))
    _seed(keys.W_RHO, float(s.rho))
    _seed(keys.W_DELTA, float(s.delta))
    _seed(keys.W_TRUTH_PROB, float(s.truth_prob))
    _seed(keys.W_SENS_OVERRIDE, s.sensitivity is not None)
    _seed(keys.W_SENSITIVITY, float(s.sensitivity) if s.sensitivity is not None else 1.0)
    _seed(keys.W_DATA, s.data)
    _seed(keys.W_SEED, int(s.seed))
    _seed(keys.W_CSV_COLUMN, s.csv_column)
    for m in METHODS:
        _seed(keys.method_key(m), m in s.methods)
    _seed(keys.W_CHAINS, int(s.chains))
    _seed(keys.W_DRAWS, int(s.draws))
    _seed(keys.W_WARMUP, int(s.warmup))
    _seed(keys.W_ABC_SECONDS, float(s.abc_max_seconds))
    _seed(keys.W_ABC_PROPOSALS, int(s.abc_max_proposals))
    _seed(keys.W_OPS_K, int(s.ops_k))
    _seed(keys.W_SAMPLE_SIZE, s.sample_size)
    _seed(keys.W_N_PRIOR, s.n_prior)
    _seed(keys.W_N_PRIOR_MEAN, float(s.n_prior_mean))
    _seed(keys.W_N_PRIOR_DISPERSION, float(s.n_prior_dispersion))
    _seed(keys.W_N_MECHANISM, s.n_mechanism)
    _seed(keys.W_N_BUDGET_FORM, s.n_budget_form)
    _seed(keys.W_N_EPSILON, float(s.n_epsilon))
    _seed(keys.W_N_SCALE, float(s.n_scale))
    _seed(keys.W_N_DP, s.n_dp)


def _sync_query(s: Scenario) -> None:
    q = to_query(s)
    st.session_state[keys.WRITTEN_QUERY] = dict(q)
    q |= {k: st.query_params[k] for k in _PAGE_KEYS if k in st.query_params}  # the pages keep them
    if st.query_params.to_dict() != q:
        st.query_params.from_dict(q)


def _reseed_on_page_switch(page: str) -> None:
    """Streamlit ties a widget's state to the page that drew it; on a page switch the sidebar
    widgets would come back at their defaults, so drop them and seed again from the scenario."""
    state = st.session_state
    if state.get(keys.LAST_PAGE, page) != page:
        for key in [k for k in state if keys.is_scenario_widget(str(k)) and k != keys.W_CSV]:
            del state[key]
    state[keys.LAST_PAGE] = page


def _replace(base: Scenario, values: Mapping[str, Any]) -> Scenario:
    names = {f.name for f in fields(Scenario)}
    return replace(base, **{k: v for k, v in values.items() if k in names})
