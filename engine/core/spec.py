"""Scenario specs: a frozen, validated description of one run, loadable from TOML or JSON.

Layout (every key is documented in the README)::

    seed = 1
    [model]      name, n, prior keys (see engine.models.MODEL_INFO)
    [mechanism]  name, noise scale (scale | sigma) or budget (epsilon | rho | epsilon + delta),
                 sensitivity; randomized_response: epsilon, or scheme = "coin" + truth_prob;
                 additive noise may add clip = [lower, upper] (inf / -inf for an open side)
    [release]    instead of [mechanism]: the release in its library's terms (library = "opendp" |
                 "diffprivlib", mechanism, the library's own keys; engine.mechanisms.libraries)
    [data]       exactly one of: s_dp = [..] · simulate = {theta = 0.3} · csv = "file.csv"
                 (+ column = "x") · records = [..]; naive_bayes_loglinear: s_dp = the K tables,
                 simulate = {pi, p} or {from_prior = true}, csv with columns y,x1..xK;
                 linear_regression: s_dp = the d entries (engine.models.LinearRegression),
                 simulate = {beta = [..]} (+ sigma2 with model.sigma_prior), csv with columns x1..xp,y
    unknown n    model.n_prior = { name = "poisson", mean = .. } (or negative_binomial with
                 dispersion), an [n_mechanism] table (the keys of [mechanism]) and, with s_dp,
                 data.n_dp; model.n is then the true size, used only when the engine releases
                 the data itself (simulate, csv, records; simulation without it draws n)
    [method]     name (naive | da_mcmc | abc_rejection | ops | exact | pseudo_marginal | auto |
                 rjmcmc | mcem), chains, draws, warmup,
                 and per method: abc max_proposals, max_seconds, batch_size · ops k, truncation,
                 epsilon · exact/naive grid_size · rjmcmc jumps · mcem max_iter, tol, estep

This module holds the record and its plain forms (dict, TOML, the file's text); checking a spec
against the registries of models, mechanisms and methods is :func:`engine.spec.spec_from_dict`, one
floor up, since it needs them.
"""
from __future__ import annotations

import json
import math
import os
import tomllib
from dataclasses import dataclass
from typing import Any, Mapping

from .validation import fail, instance

__all__ = ["Spec", "spec_to_dict", "spec_to_toml", "read_spec_file", "resolve_path", "DATA_KINDS", "plain"]

DATA_KINDS = ("s_dp", "simulate", "csv", "records")


def plain(obj):
    """Deep-copy into plain dicts/lists (mappingproxy -> dict, tuple -> list)."""
    if isinstance(obj, Mapping):
        return {k: plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [plain(v) for v in obj]
    return obj


@dataclass(frozen=True)
class Spec:
    """A validated scenario. Build with :func:`spec_from_dict` or :func:`load_spec`."""

    seed: int
    model: Mapping[str, Any]
    mechanism: Mapping[str, Any]
    data: Mapping[str, Any]
    method: Mapping[str, Any]
    base_dir: str = "."
    n_mechanism: Mapping[str, Any] | None = None
    #: settings of other methods (``[methods.<name>]`` tables), used when ``run --method <name>`` picks one
    methods: Mapping[str, Mapping[str, Any]] | None = None

    @property
    def unknown_n(self) -> bool:
        """True when the sample size is private (``model.n_prior`` given)."""
        return "n_prior" in self.model

    @property
    def release(self) -> Mapping[str, Any] | None:
        """The [release] table (a release described in its library's terms), held in ``mechanism``; else None."""
        return self.mechanism if "library" in self.mechanism else None

    @property
    def data_kind(self) -> str:
        return next(k for k in DATA_KINDS if k in self.data)


def resolve_path(path: str, base_dir: str) -> str:
    """A path from a spec, relative to the spec file's folder unless absolute."""
    return path if os.path.isabs(path) else os.path.join(base_dir, path)


def read_spec_file(path: str) -> dict:
    """The table of a TOML (``.toml``) or JSON (``.json``) spec file, not yet checked."""
    if not isinstance(path, (str, os.PathLike)):
        fail("SPEC", path, "must be the path of a .toml or .json file")
    path = os.fspath(path)
    if not os.path.isfile(path):
        fail("SPEC", path, "must be an existing .toml or .json file")
    with open(path, "rb") as fh:
        raw = fh.read()
    try:
        text = raw.decode("utf-8-sig")  # a byte-order mark (Windows editors write one) is not part of the text
    except UnicodeDecodeError as exc:
        fail("SPEC", path, f"must be UTF-8 text (byte {exc.start} is not)")
    kind = "JSON" if path.lower().endswith(".json") else "TOML"
    try:
        table = json.loads(text) if kind == "JSON" else tomllib.loads(text)
    except json.JSONDecodeError as exc:
        fail("SPEC", path, f"must be valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}")
    except tomllib.TOMLDecodeError as exc:
        fail("SPEC", path, f"must be valid TOML: {exc}")
    except RecursionError:  # '[' * 100000: both parsers recurse per level, and the CLI printed a traceback
        table = None
    if table is None or _nested_deeper(table, MAX_SPEC_DEPTH):
        fail("SPEC", path, f"must be valid {kind}: nested too deeply (lists and tables may sit at most "
             f"{MAX_SPEC_DEPTH} levels inside each other; a spec needs a few)")
    return table


#: how deep a spec file's lists and tables may nest: a spec needs four levels (model.x_cov's rows); past a few
#: hundred, the recursive code that reads and copies a spec ends in a RecursionError
MAX_SPEC_DEPTH = 32


def _nested_deeper(obj, limit: int) -> bool:
    """Whether lists and tables nest more than ``limit`` levels in ``obj`` (without recursion, like its parsers)."""
    level = [obj]
    for _ in range(limit):
        level = [v for x in level if isinstance(x, (dict, list))
                 for v in (x.values() if isinstance(x, dict) else x)]
        if not level:
            return False
    return any(isinstance(x, (dict, list)) for x in level)


def spec_to_dict(spec: Spec) -> dict:
    """The plain-dict layout of a spec (round-trips through :func:`spec_from_dict`)."""
    instance("spec", spec, Spec, "must be a Spec (what engine.spec_from_dict or engine.load_spec returns; "
             "a dict goes through engine.spec_from_dict first)")
    table = "release" if "library" in spec.mechanism else "mechanism"
    d = {"seed": spec.seed, "model": plain(spec.model), table: plain(spec.mechanism),
         "data": plain(spec.data), "method": plain(spec.method)}
    if spec.n_mechanism is not None:
        d["n_mechanism"] = plain(spec.n_mechanism)
    if spec.methods:
        d["methods"] = {name: plain(table) for name, table in spec.methods.items()}
    return d


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            raise ValueError(f"spec value {v!r} is invalid: TOML has no use for nan here")
        if math.isinf(v):  # an open clip bound: TOML's inf
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, Mapping):
        return "{ " + ", ".join(f"{k} = {_toml_value(x)}" for k, x in v.items()) + " }"
    raise ValueError(f"spec value {v!r} is invalid: cannot be written as TOML")


def spec_to_toml(spec: Spec) -> str:
    """TOML text that :func:`load_spec` reads back into an identical spec (``spec`` checked by
    :func:`spec_to_dict`)."""
    d = spec_to_dict(spec)
    lines = [f"seed = {d['seed']}"]
    for table in ("model", "mechanism", "release", "n_mechanism", "data", "method"):
        if table not in d:
            continue
        lines.append(f"\n[{table}]")
        for k, v in d[table].items():
            if v is None:
                continue
            lines.append(f"{k} = {_toml_value(v)}")
    if d.get("methods"):  # the downloaded scenario of the app's Compare page: [method] is one of the methods it ran
        lines += ["\n# [method] above runs by default; `dp-posterior run SPEC --out DIR --method NAME` runs one of",
                  f"# the methods below with its settings: {', '.join(d['methods'])}"]
    for name, table in d.get("methods", {}).items():
        lines.append(f"\n[methods.{name}]")
        lines += [f"{k} = {_toml_value(v)}" for k, v in table.items() if v is not None and k != "name"]
    return "\n".join(lines) + "\n"
