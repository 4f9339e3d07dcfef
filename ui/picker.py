"""The parameter picker and the small-multiples grid of multi-parameter models.

A model with several parameters (Dirichlet cells, the naive-Bayes log-linear model's π and p) shows one
marginal at a time in the main figures: the *picked* parameter, first one by default. The pick is
canonical state (``keys.PICKED_PARAM``, and ``param=`` in the page address when it is not the first; Back and
Forward return to the address's pick), shared by the Compare, Diagnostics and Privacy budget pages;
each page draws its own selectbox (its own widget key), seeded from the pick, because Streamlit drops
a widget's state when the page that drew it is left. A pick that is not a parameter of the current
model (after a model switch) falls back to the first parameter.

The small multiples show every parameter's marginal, all methods overlaid, in a grid of
:data:`PANELS_PER_PAGE` panels; more parameters than that are paged.
"""
from __future__ import annotations

from typing import Sequence

import streamlit as st

from figures.axes import pages_of, param_label

from . import keys
from .routing import history_navigation

__all__ = ["parameter_picker", "multiples_page", "PANELS_PER_PAGE", "MULTIPLES_COLUMNS"]

#: Panels per page of the small multiples (4 rows of 3) and their columns.
PANELS_PER_PAGE = 12
MULTIPLES_COLUMNS = 3


def _remember(widget_key: str) -> None:
    st.session_state[keys.PICKED_PARAM] = st.session_state[widget_key]


def parameter_picker(names: Sequence[str], widget_key: str, label: str = "Parameter", container=None) -> str:
    """Draw the picker (only when there is more than one parameter) and return the picked name."""
    names = list(names)
    if len(names) <= 1:
        _link(None)
        return names[0]
    state = st.session_state
    if history_navigation():  # Back or Forward: the URL's pick (none: the first parameter), as the sidebar's scenario
        linked = st.query_params.get(keys.PARAM_QUERY, names[0])
        if linked in names:
            state[widget_key] = state[keys.PICKED_PARAM] = linked
    if state.get(widget_key) not in names:
        current = state.get(keys.PICKED_PARAM)
        state[widget_key] = current if current in names else names[0]
    where = container if container is not None else st
    picked = where.selectbox(label, names, key=widget_key, format_func=param_label, on_change=_remember,
                             args=(widget_key,),
                             help="Which parameter's marginal posterior the figure shows; every parameter is "
                                  "in the small multiples below.")
    state[keys.PICKED_PARAM] = picked
    _link(picked if picked != names[0] else None)
    return picked


def _link(picked: str | None) -> None:
    """The page address carries the pick (``param=``) when it is not the first parameter, so a shared link
    opens on the same marginal; the first one, the default, leaves the address as the scenario wrote it."""
    if picked is None:
        if keys.PARAM_QUERY in st.query_params:
            del st.query_params[keys.PARAM_QUERY]
    elif st.query_params.get(keys.PARAM_QUERY) != picked:
        st.query_params[keys.PARAM_QUERY] = picked


def multiples_page(names: Sequence[str], container=None) -> list[str]:
    """The parameters of the small-multiples page the reader chose (a page selector appears when there
    are more than :data:`PANELS_PER_PAGE`)."""
    pages = pages_of(names, PANELS_PER_PAGE)
    if len(pages) == 1:
        return pages[0]
    labels = [f"{p[0]} … {p[-1]}" for p in pages]
    state = st.session_state
    if state.get(keys.W_MULTIPLES_PAGE) not in labels:
        state[keys.W_MULTIPLES_PAGE] = labels[0]
    where = container if container is not None else st
    chosen = where.selectbox(f"Panels ({len(names)} parameters, {PANELS_PER_PAGE} per page)", labels,
                             key=keys.W_MULTIPLES_PAGE)
    return pages[labels.index(chosen)]
