"""The cached privacy side of a scenario: :func:`engine.risk` once per spec (What it protects page).

The result is a plain dictionary (the content of risk.json), so ``st.cache_data`` stores it as is;
it is deterministic (no randomness beyond the release the spec's seed already fixes).
"""
from __future__ import annotations

import json
from typing import Sequence

import pandas as pd
import streamlit as st

import engine

from .problems import _problem

__all__ = ["risk", "sweep"]


@st.cache_data(show_spinner=False, max_entries=128, ttl=3600)
def risk(spec_text: str) -> dict:
    """``engine.risk`` of the prepared problem of ``spec_text`` (the sidebar's spec); raises ValueError
    for a scenario it does not cover (the page says why)."""
    return engine.risk(_problem(spec_text))


@st.cache_data(show_spinner=False, max_entries=64, ttl=3600)
def _sweep_cached(spec_text: str, grid_text: str) -> dict:
    return engine.protection_sweep(json.loads(spec_text), json.loads(grid_text)).to_dict(orient="list")


def sweep(spec_text: str, grid: Sequence[float]) -> pd.DataFrame:
    """``engine.protection_sweep`` over the ε grid (Privacy budget's frontier): one row per ε with the
    informed adversary's beliefs and the best attack's power; raises ValueError where not covered."""
    return pd.DataFrame(_sweep_cached(spec_text, json.dumps([float(g) for g in grid])))
