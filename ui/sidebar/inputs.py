"""The sidebar as a whole: what the Compare, Privacy budget and Diagnostics pages call.

:func:`scenario_inputs` renders the widgets, reads them into a frozen
:class:`~ui.params.scenario.Scenario`, validates it in the order a reader fills it in (model, mechanism,
data, methods) through the engine, and puts each ``ValueError`` message in an ``st.error`` directly
under the section whose field it names. The widgets keep what the user typed; only the results wait
for a valid input. Where the state lives: :mod:`ui.sidebar.state`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np
import streamlit as st

from engine.cost import listed
from figures.labels import METHOD_LABELS, MODEL_LABELS

from .. import keys
from ..compute import problems
from ..compute.records import Prepared
from ..params.scenario import Scenario
from .data import _data_section, _read_upload
from . import numbers
from .mechanism import _mechanism_section
from .methods import _methods_section
from .model import _model_section
from .size import _size_section
from .state import _replace, _reseed_on_page_switch, _seed_all, _sync_query, current_scenario
from .validation import _validate

__all__ = ["Inputs", "scenario_inputs"]

SECTIONS = ("model", "size", "mechanism", "data", "methods")


@dataclass(frozen=True)
class Inputs:
    """What a page needs from the sidebar."""

    scenario: Scenario
    records: np.ndarray | None
    errors: Mapping[str, str] = field(default_factory=dict)
    prepared: Prepared | None = None
    spec_text: str | None = None

    @property
    def ok(self) -> bool:
        return not self.errors and self.prepared is not None


def scenario_inputs(page: str, *, show_methods: bool = True, show_noise: bool = True) -> Inputs:
    """Render the sidebar and return the validated scenario (errors shown next to the inputs).

    ``page`` names the calling page; a change of page re-seeds the widgets from the scenario. A page
    that states the mechanism itself (Compare, above its figure) passes ``show_noise=False`` so the
    sentence appears once.
    """
    base = current_scenario()
    _reseed_on_page_switch(page)
    _seed_all(base)
    slots: dict[str, Any] = {}
    numbers.begin()
    with st.sidebar:
        note = st.session_state.pop(keys.LINK_NOTE, None)
        if note:
            st.warning(note)
        records, upload_error = _read_upload()
        model, n, prior = _model_section(records)
        slots["model"] = st.empty()
        size = _size_section(model)
        slots["size"] = st.empty()
        mech = _mechanism_section(model, _replace(base, {"model": model, "n": n, "prior": prior, **size}))
        slots["noise"] = st.empty()
        slots["mechanism"] = st.empty()
        data, slots["data"] = _data_section(model, records, prior, mech)
        methods = _methods_section() if show_methods else {}
        slots["methods"] = st.empty()
    values = {"model": model, "n": n, "prior": prior, **size, **mech, **data, **methods}
    scenario = _replace(base, values)
    st.session_state[keys.SCENARIO] = scenario
    errors, prepared, text, noise = _validate(scenario, records, upload_error, numbers.typed_errors())
    if not errors:  # a link copied while a box holds an error would open on it
        _sync_query(scenario)
    if not errors.keys() & {"model", "size", "mechanism"}:  # its budget is one a switch can carry (ui.params.carry)
        st.session_state[keys.BUDGET_SCENARIO] = scenario
    if noise and show_noise:
        slots["noise"].caption(f"Implied noise: {noise}")
    if scenario.size_released and "size" not in errors:
        slots["size"].caption(f"Noise on n: {problems.describe_size_mechanism(scenario)}")
    if prepared is not None and prepared.supported_methods is not None and show_methods:
        runs = listed(METHOD_LABELS[m] for m in prepared.supported_methods)
        slots["methods"].caption(f"{MODEL_LABELS.get(scenario.model, scenario.model)} runs {runs}; the other "
                                 "methods are skipped for it.")
    elif prepared is not None and prepared.release_methods is not None and show_methods:
        runs = listed(METHOD_LABELS[m] for m in prepared.release_methods)
        slots["methods"].caption(f"{prepared.release_label} is analysed by {runs}; the other methods are skipped "
                                 "for it.")
    for section in SECTIONS:
        if section in errors:
            slots[section].error(errors[section], icon="⚠️")
    return Inputs(scenario=scenario, records=records, errors=errors, prepared=prepared, spec_text=text)
