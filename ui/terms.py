"""Terms defined where they appear: the expander a page puts under its title, and column tooltips."""
from __future__ import annotations

from typing import Iterable, Mapping

import streamlit as st

from .glossary import COLUMN_HELP, glossary_markdown

__all__ = ["terms_expander", "text_columns"]


def terms_expander(terms: Iterable[str]) -> None:
    """An expander "Terms on this page" defining ``terms`` (keys of :data:`ui.glossary.GLOSSARY`)."""
    with st.expander("Terms on this page"):
        st.markdown(glossary_markdown(set(terms)))


def text_columns(formats: Mapping[str, str], pinned: Iterable[str] = ()) -> dict:
    """Right-aligned text columns for formatted numbers, each with its definition as the tooltip; the
    ``pinned`` columns (the row's name) stay in view while a narrow window scrolls the others."""
    return {c: st.column_config.TextColumn(c, alignment="right", help=COLUMN_HELP.get(c),
                                           width=_WIDTH.get(c, "small")) for c in formats} | \
        {c: st.column_config.TextColumn(c, help=h) for c, h in COLUMN_HELP.items() if c not in formats} | \
        {c: st.column_config.TextColumn(c, pinned=True, width=_PINNED_WIDTH.get(c)) for c in pinned}


#: pinned columns sized for their longest entry (sized to the first rows, "Exact (best method)" was cut)
_PINNED_WIDTH = {"method": 140}
#: number columns sized to their header and values: the ESS header is longer than "small" holds ("ESS bulk / t" at
#: 1,400 px), and an ABC acceptance of a few in a million (0.000007132, four significant digits and no exponent) is
#: too ("…000007132" cut on the left); the short ones give them the room back, so a multi-parameter table (the
#: parameter column pinned beside the method's) still shows every column on a 1,400 px desktop
_WIDTH = {"ESS bulk / tail": 110, "mean": 64, "sd": 64, "q5": 64, "q95": 64, "R-hat": 62, "acceptance": 90}
