"""The cached privacy side of a scenario: :func:`engine.risk` once per spec (What it protects page).

The result is a plain dictionary (the content of risk.json), so ``st.cache_data`` stores it as is;
it is deterministic (no randomness beyond the release the spec's seed already fixes).

:func:`package_statistic` says which statistic of the sidebar's dp-wizard package (``st.session_state[
keys.DPWIZARD]``, kept by :mod:`ui.sidebar.dpwizard`) the scenario is, if any: a histogram bin's count is analysed
as one Poisson count (n = 1), whose one "record" is the whole count, and every statistic of a package shares its
total ε. It is a pure function of the sidebar's spec and that import (no state read here).
"""
from __future__ import annotations

import json
import math
from typing import Any, Mapping, Sequence

import pandas as pd
import streamlit as st

import engine
from engine.spec import spec_from_dict

from .problems import _problem

__all__ = ["risk", "sweep", "package_statistic"]


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


def _same(a: Any, b: Any) -> bool:
    """Equal specs' values: numbers to 1e-5 relative (the sidebar shows a released value to six digits: 11.4715 of
    11.471544...), lists item by item, tables key by key."""
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return math.isclose(float(a), float(b), rel_tol=1e-5, abs_tol=1e-12)
    return a == b


def _candidates(stat: dict) -> list[tuple[str, str, str | None]]:
    """(kind, spec file, bin label) of every spec an analysed statistic of the import wrote."""
    out = [("bin", b["spec"], b["bin"]) for b in stat.get("bins") or []]
    if stat.get("histogram_spec"):
        out.append(("histogram", stat["histogram_spec"], None))
    if stat.get("statistic") == "Mean" and stat.get("spec"):
        out.append(("mean", stat["spec"], None))
    return out


def package_statistic(spec_text: str | None, imported: Mapping | None) -> dict | None:
    """Which statistic of the kept dp-wizard import (``{"name", "result": {"summary", "specs"}}``) the sidebar's spec
    is, matched on its model, its release and the released values; None when it is none of them (or nothing is
    kept). ``{"package", "total_epsilon", "statistics", "column", "kind": "bin" | "histogram" | "mean", "bins",
    "epsilon"}``: ``bins`` the labels of the bins whose spec it is (two bins released with the same count share
    one), ``epsilon`` the statistic's share of the total."""
    result = (imported or {}).get("result")
    if not spec_text or not result:
        return None
    mine = spec_from_dict(json.loads(spec_text))
    summary, specs = result["summary"], result["specs"]
    found: dict | None = None
    for stat in summary.get("statistics") or []:
        if not stat.get("analysed"):
            continue
        for kind, name, label in _candidates(stat):
            if name not in specs:
                continue
            theirs = spec_from_dict(specs[name])
            if not (_same(dict(mine.model), dict(theirs.model)) and _same(dict(mine.mechanism), dict(theirs.mechanism))
                    and _same(mine.data.get("s_dp"), theirs.data.get("s_dp"))):
                continue
            if found is None:
                found = {"package": imported.get("name") or summary.get("package"),
                         "total_epsilon": float(summary["epsilon"]), "statistics": len(summary["statistics"]),
                         "column": stat["column"], "kind": kind, "bins": [], "epsilon": float(stat["epsilon"])}
            if label is not None and found["kind"] == "bin" and found["column"] == stat["column"]:
                found["bins"].append(label)
    return found
