"""The cached privacy side of a scenario: :func:`engine.risk` once per spec (What it protects page).

The result is a plain dictionary (the content of risk.json), so ``st.cache_data`` stores it as is;
it is deterministic (no randomness beyond the release the spec's seed already fixes).
"""
from __future__ import annotations

import streamlit as st

import engine

from .problems import _problem

__all__ = ["risk"]


@st.cache_data(show_spinner=False, max_entries=128, ttl=3600)
def risk(spec_text: str) -> dict:
    """``engine.risk`` of the prepared problem of ``spec_text`` (the sidebar's spec); raises ValueError
    for a scenario it does not cover (the page says why)."""
    return engine.risk(_problem(spec_text))
