"""Files in and out: the records of an uploaded CSV (and what its reading skipped, and its columns for the Column
box), a result's InferenceData as NetCDF, the scenario as a TOML spec the CLI reads back."""
from __future__ import annotations

import hashlib
import os
import re
import tempfile
from typing import Sequence

import numpy as np
import streamlit as st

import engine
from engine.core.data import CsvColumns, CsvRecords, csv_columns, read_records_csv

from ..params.scenario import Scenario
from ..params.spec import release_spec_dict

__all__ = ["parse_upload", "read_upload", "upload_columns", "netcdf_bytes", "scenario_toml", "download_stem",
           "scenario_digest", "name_part"]


@st.cache_data(show_spinner=False, max_entries=16, ttl=600)  # uploads: up to 50 MB each
def _parse_upload_cached(data: bytes, column: str | tuple | None) -> CsvRecords:
    return read_records_csv(data, list(column) if isinstance(column, tuple) else column or None, field="data.csv")


@st.cache_data(show_spinner=False, max_entries=16, ttl=600)
def _columns_cached(data: bytes) -> CsvColumns:
    return csv_columns(data, field="data.csv")


def read_upload(data: bytes, column: str | Sequence[str] | None) -> CsvRecords:
    """Records of an uploaded CSV (engine rules: UTF-8, header, numbers, at most 50 MB) with the blank lines its
    reading skipped. ``column`` names one column, or is a list of columns for multi-column records (``y, x1..xK``:
    a 2-D array)."""
    if isinstance(column, (list, tuple)):
        return _parse_upload_cached(bytes(data), tuple(column))
    return _parse_upload_cached(bytes(data), (column or "").strip() or None)


def parse_upload(data: bytes, column: str | Sequence[str] | None) -> np.ndarray:
    """The records alone of :func:`read_upload`."""
    return read_upload(data, column).records


def upload_columns(data: bytes) -> CsvColumns:
    """An uploaded CSV's header, with the columns whose every cell is a number (for the Column box)."""
    return _columns_cached(bytes(data))


def netcdf_bytes(result: engine.Result) -> bytes:
    """The InferenceData of a result as NetCDF bytes (called lazily by the download button)."""
    idata = engine.to_inference_data(result)
    fd, path = tempfile.mkstemp(suffix=".nc")
    os.close(fd)
    try:
        idata.to_netcdf(path)
        with open(path, "rb") as fh:
            return fh.read()
    finally:
        os.unlink(path)


def scenario_toml(scenario: Scenario, records=None, *, s_dp=None, n_dp=None, include_records: bool = False) -> str:
    """The scenario as a TOML spec the CLI reads back (engine.spec_to_toml), with every switched-on
    method's settings. By default it holds the release (``s_dp``, and ``n_dp`` for an unknown n), not an
    upload's confidential records; ``include_records`` (an explicit, labelled choice on the page) puts
    the records in instead. Without ``s_dp`` (no prepared release yet) the records are the only data."""
    keep = include_records or s_dp is None
    return engine.spec_to_toml(engine.spec_from_dict(release_spec_dict(scenario, records, s_dp, n_dp,
                                                                       keep_records=keep)))


def download_stem(s: Scenario, n: int, s_dp=None) -> str:
    """The start of a downloaded file's name, saying which scenario it came from (every download was draws.csv,
    posterior.png, …): model, mechanism, budget, n, the data source and six hex digits of the scenario and its
    release, e.g. ``linear_regression_laplace_eps3_n100_seed7_1a2b3c``.

    The digits (SHA-256 of the scenario's fields and ``s_dp``, the release the page computed) keep two scenarios
    apart that the words do not: another seed, truth, prior, sensitivity, typed release or uploaded file gave the
    same name, so a second download overwrote the first or came back as "… (1).csv"."""
    if s.release != "lab":
        budget = s.release
    else:
        budget = {"epsilon": f"eps{s.epsilon:g}", "k_ary": f"eps{s.epsilon:g}", "rho": f"rho{s.rho:g}",
                  "epsilon_delta": f"eps{s.epsilon:g}_delta{s.delta:g}",
                  "coin": f"coin{s.truth_prob:g}"}.get(s.budget_form, s.budget_form)
    data = {"simulate": f"seed{s.seed}", "csv": "upload", "s_dp": "release"}.get(s.data, s.data)
    release = "" if s_dp is None else repr(np.asarray(s_dp, dtype=float).round(12).tolist())
    return f"{s.model}_{s.mechanism}_{budget}_n{n}_{data}_{scenario_digest(s, release)}"


def name_part(text: str) -> str:
    """``text`` as a piece of a file name: a parameter such as ``p[0][1]`` or ``beta[2]`` becomes ``p_0_1`` or
    ``beta_2`` (brackets, spaces and slashes are not safe in every file system and shell); a number's thousands
    separators are dropped ("plug-in n = 1,000,000" gives ``plug-in_n_1000000``, not ``1_000_000``)."""
    text = re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", text)
    return re.sub(r"[^0-9A-Za-z.-]+", "_", text).strip("_") or "_"


def scenario_digest(s: Scenario, *more) -> str:
    """Six hex digits of SHA-256 over the scenario's fields and ``more`` (a release, an ε grid): the same for the
    same scenario in any session, different for another seed, truth, prior or release."""
    return hashlib.sha256("|".join(map(repr, (s, *more))).encode()).hexdigest()[:6]
