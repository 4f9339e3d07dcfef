"""Cached engine calls for releases made with a library: a dp-wizard package read, a mean's budget split.

``import_package`` writes the uploaded zip to a temporary directory, runs ``engine.import_dpwizard`` into another
and returns plain data (the import summary and each spec as a dict); both directories are removed. It asks the
plan and the notebook's own ``summarize()`` tables for the noise scales, not OpenDP (``use_opendp=False``): the app
never imports OpenDP (the command line ``python -m engine import-dpwizard`` does, where it is installed).
``mean_split`` wraps ``engine.mean_budget_split`` (1–2 s a call) as plain data.
"""
from __future__ import annotations

import os
import tempfile

import streamlit as st

import engine
from engine.core.spec import read_spec_file

__all__ = ["import_package", "mean_split"]


@st.cache_data(show_spinner=False, max_entries=16, ttl=3600)
def import_package(data: bytes, name: str) -> dict:
    """{"summary": import.json's content, "specs": {file name: spec dict}}; raises the engine's ValueError."""
    with tempfile.TemporaryDirectory(prefix="dpwizard_") as tmp:
        path = os.path.join(tmp, os.path.basename(name) or "package.zip")
        with open(path, "wb") as fh:
            fh.write(data)
        out = os.path.join(tmp, "specs")
        try:
            summary = engine.import_dpwizard(path, out, use_opendp=False)
        except ValueError as exc:  # the engine names the temporary path: name the upload instead
            raise ValueError(str(exc).replace(path, name)) from None
        specs = {f: read_spec_file(os.path.join(out, f)) for f in sorted(os.listdir(out)) if f.endswith(".toml")}
    return {"summary": summary, "specs": specs}


@st.cache_data(show_spinner=False, max_entries=64, ttl=3600)
def mean_split(epsilon: float, lower: float, upper: float, sd: float, n: int, prior_mean: float,
               prior_sd: float) -> dict:
    """``engine.mean_budget_split`` at the expected release, as plain data (its ``improvement`` included)."""
    split = engine.mean_budget_split(epsilon, lower=lower, upper=upper, sd=sd, n=n, prior_mean=prior_mean,
                                     prior_sd=prior_sd)
    return {"epsilon": split.epsilon, "fraction_sum": split.fraction_sum, "epsilon_sum": split.epsilon_sum,
            "epsilon_count": split.epsilon_count, "sum_scale": split.sum_scale, "count_scale": split.count_scale,
            "posterior_sd": split.posterior_sd, "even_posterior_sd": split.even_posterior_sd,
            "improvement": split.improvement, "curve": [list(c) for c in split.curve]}
