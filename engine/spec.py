"""Scenario specs: a frozen, validated description of one run, loadable from TOML or JSON.

Layout (every key is documented in the README)::

    seed = 1
    [model]      name, n, prior keys (see engine.models.MODEL_INFO)
    [mechanism]  name, noise scale (scale | sigma) or budget (epsilon | rho | epsilon + delta),
                 sensitivity; randomized_response: epsilon, or scheme = "coin" + truth_prob
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
"""
from __future__ import annotations


import json
import math
import os
import tomllib
from dataclasses import dataclass
from typing import Any, Mapping

from .mechanisms import make_mechanism
from .methods import COMMON_KEYS, METHOD_NAMES, REGISTRY
from .methods.base import check_model_supported
from .models import make_model, record_columns
from .sample_size import check_n_dp, make_size_mechanism, make_size_prior, plug_in_n
from .validation import choice, fail, positive_int

__all__ = ["Spec", "spec_from_dict", "load_spec", "spec_to_dict", "spec_to_toml", "METHOD_NAMES",
           "validate_method", "DEFAULT_METHOD"]

DEFAULT_METHOD = {"name": "da_mcmc", "chains": 4, "draws": 2000, "warmup": 500}
_TOP_KEYS = {"seed", "model", "mechanism", "data", "method", "n_mechanism"}
_UNKNOWN_N_MODELS = ("beta_binomial", "poisson_gamma", "normal_known_sd")
_DATA_KINDS = ("s_dp", "simulate", "csv", "records")


def _plain(obj):
    """Deep-copy into plain dicts/lists (mappingproxy -> dict, tuple -> list)."""
    if isinstance(obj, Mapping):
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    return obj


def validate_method(method: Mapping[str, Any]) -> dict:
    """Check a [method] table; returns it with defaults filled in."""
    if not isinstance(method, Mapping):
        fail("method", method, "must be a table with at least name")
    m = dict(method)
    name = choice("method.name", m.get("name", DEFAULT_METHOD["name"]), METHOD_NAMES)
    entry = REGISTRY[name]
    allowed = COMMON_KEYS | entry.keys
    unknown = set(m) - allowed
    if unknown:
        key = sorted(unknown)[0]
        fail(f"method.{key}", m[key], f"is not a key of {name}; allowed: " + ", ".join(sorted(allowed)))
    out = {"name": name}
    out["chains"] = positive_int("method.chains", m.get("chains", DEFAULT_METHOD["chains"]), 1, 64)
    out["draws"] = positive_int("method.draws", m.get("draws", DEFAULT_METHOD["draws"]), 1, 10_000_000)
    out["warmup"] = positive_int("method.warmup", m.get("warmup", DEFAULT_METHOD["warmup"]), 0, 10_000_000)
    if "grid_size" in m:
        out["grid_size"] = positive_int("method.grid_size", m["grid_size"], 10, 100_000)
    entry.validate(m, out)
    return out


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

    @property
    def unknown_n(self) -> bool:
        """True when the sample size is private (``model.n_prior`` given)."""
        return "n_prior" in self.model

    @property
    def data_kind(self) -> str:
        return next(k for k in _DATA_KINDS if k in self.data)


def _check_data(data, model, base_dir: str = ".") -> dict:
    if not isinstance(data, Mapping):
        fail("data", data, "must be a table with one of s_dp, simulate, csv, records")
    present = [k for k in _DATA_KINDS if k in data]
    if len(present) != 1:
        fail("data", dict(data), "needs exactly one of s_dp = [..], simulate = {..}, csv = \"file.csv\", records = [..]")
    allowed = {present[0]} | ({"column"} if present[0] == "csv" else set())
    extra = set(data) - allowed
    if extra:
        key = sorted(extra)[0]
        fail(f"data.{key}", data[key], f"is not allowed with data.{present[0]}; allowed: " + ", ".join(sorted(allowed)))
    d = dict(data)
    if present[0] == "simulate":
        if not isinstance(d["simulate"], Mapping):
            fail("data.simulate", d["simulate"], "must be a table of true parameters, e.g. { theta = 0.3 }")
        model.theta_from(d["simulate"])
    if present[0] == "csv" and not isinstance(d["csv"], str):
        fail("data.csv", d["csv"], "must be a file path")
    columns = getattr(model, "csv_columns", None)
    if present[0] == "s_dp" and model.name == "linear_regression":
        s = d["s_dp"]
        if not isinstance(s, (list, tuple)) or len(s) != model.stat_dim:
            fail("data.s_dp", s, f"must list the d = {model.stat_dim} released entries for p = {model.p}, in the order "
                 + ", ".join(model.stat_labels()) + " (sums over records of the clamped, normalised values)")
    elif present[0] == "s_dp" and columns:
        sizes = " + ".join(f"{model.class_levels}x{jk}" for jk in model.feature_levels)
        s = d["s_dp"]
        if not isinstance(s, (list, tuple)) or len(s) != model.stat_dim:
            fail("data.s_dp", s, f"must list the {model.n_features} tables in order, {sizes} = {model.stat_dim} "
                 "numbers, each table row-major over (class, level)")
    if present[0] == "csv" and columns and "column" in d:
        fail("data.column", d["column"], f"is not used by {model.name}: the csv has the columns {','.join(columns)}")
    if columns and present[0] in ("csv", "records"):  # multi-column records: levels checked here, not at run time
        from .data import load_records_csv

        rows = (load_records_csv(_resolve(d["csv"], base_dir), columns) if present[0] == "csv" else d["records"])
        model.check_records(rows, f"data.{present[0]}")
    return d


def spec_from_dict(d: Mapping[str, Any], base_dir: str = ".") -> Spec:
    """Validate a spec dictionary (the TOML/JSON layout) into a frozen :class:`Spec`."""
    if not isinstance(d, Mapping):
        fail("spec", d, "must be a table with seed, model, mechanism, data, method")
    unknown = set(d) - _TOP_KEYS
    if unknown:
        key = sorted(unknown)[0]
        fail(key, d[key], "is not a top-level key; allowed: " + ", ".join(sorted(_TOP_KEYS)))
    for key in ("model", "mechanism", "data"):
        if key not in d:
            fail(key, None, f"[{key}] table is required")
        if not isinstance(d[key], Mapping):
            fail(key, d[key], f"[{key}] must be a table")
    seed = d.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0 or seed >= 2**63:
        fail("seed", seed, "must be an integer in [0, 2^63)")
    model_d = dict(d["model"])
    data_d = dict(d["data"])
    if "csv" in data_d and "n" not in model_d:
        from .data import load_records_csv

        columns = record_columns(model_d) or data_d.get("column")
        model_d["n"] = int(load_records_csv(_resolve(data_d["csv"], base_dir), columns).shape[0])
    if "records" in data_d and "n" not in model_d and isinstance(data_d["records"], (list, tuple)):
        model_d["n"] = len(data_d["records"])
    if "name" not in model_d:
        fail("model.name", None, "is required: one of beta_binomial, poisson_gamma, dirichlet_multinomial, normal_known_sd, "
             "naive_bayes_loglinear, linear_regression")
    unknown_n = "n_prior" in model_d
    n_mech_d = _check_unknown_n(d, model_d, data_d) if unknown_n else None
    if not unknown_n and "n_mechanism" in d:
        fail("n_mechanism", d["n_mechanism"], "needs model.n_prior (a prior on the unknown n) instead of model.n")
    if not unknown_n and "n_dp" in data_d:
        fail("data.n_dp", data_d["n_dp"], "needs model.n_prior and an [n_mechanism] table (an unknown n)")
    model = make_model(model_d["name"], _model_table(model_d, data_d))
    mech_d = dict(d["mechanism"])
    if "name" not in mech_d:
        fail("mechanism.name", None, "is required: one of laplace, gaussian, discrete_laplace, discrete_gaussian, randomized_response")
    build_mechanism(mech_d, model, unbounded=unknown_n)
    data = _check_data({k: v for k, v in data_d.items() if k != "n_dp"}, model, base_dir)
    if unknown_n and "n_dp" in data_d:
        data["n_dp"] = data_d["n_dp"]
    method = validate_method(d.get("method", DEFAULT_METHOD))
    check_model_supported(method["name"], model)
    if method["name"] == "rjmcmc" and not unknown_n:
        fail("method.name", "rjmcmc", "needs an unknown n: give model.n_prior, an [n_mechanism] table and data.n_dp "
             "instead of model.n (for a known n use da_mcmc)")
    return Spec(seed=seed, model=model_d, mechanism=mech_d, data=data, method=method, base_dir=base_dir,
                n_mechanism=n_mech_d)


def _check_unknown_n(d, model_d, data_d) -> dict:
    """Validate the unknown-n pieces (model.n_prior, [n_mechanism], data.n_dp); returns [n_mechanism]."""
    make_size_prior(model_d["n_prior"])
    if model_d["name"] not in _UNKNOWN_N_MODELS:
        fail("model.n_prior", model_d["n_prior"], f"{model_d['name']} has fixed-n tables and does not support an "
             "unknown n; use " + ", ".join(_UNKNOWN_N_MODELS))
    if isinstance(d["mechanism"], Mapping) and d["mechanism"].get("name") == "randomized_response":
        fail("mechanism.name", "randomized_response", "is not available with an unknown n (the reports reveal n); "
             "use additive noise on the statistic")
    if "n_mechanism" not in d:
        fail("n_mechanism", None, "[n_mechanism] table is required with model.n_prior: the noise on the released "
             "size (name and a scale or budget, as in [mechanism])")
    n_mech = make_size_mechanism(d["n_mechanism"])
    if "s_dp" in data_d:
        if "n" in model_d:
            fail("model.n", model_d["n"], "must be omitted with model.n_prior and data.s_dp: the size is unknown "
                 "(model.n is the true size only when the engine releases the data)")
        check_n_dp(n_mech, data_d.get("n_dp"))
    elif "n_dp" in data_d:
        fail("data.n_dp", data_d["n_dp"], "is released by the engine from the records; give it only with data.s_dp")
    return dict(d["n_mechanism"])


def _model_table(model_d, data_d) -> dict:
    """The [model] table make_model checks: without n_prior, and with n the plug-in round(n_dp) (s_dp data)
    or, for simulation before n is drawn, the prior mean."""
    if "n_prior" not in model_d:
        return model_d
    table = {k: v for k, v in model_d.items() if k != "n_prior"}
    if "s_dp" in data_d:
        table["n"] = plug_in_n(data_d["n_dp"])
    elif "n" not in table:
        table["n"] = plug_in_n(make_size_prior(model_d["n_prior"]).mean)
    return table


def build_mechanism(mech_d: Mapping[str, Any], model, unbounded: bool = False):
    """The mechanism of a spec for a given model (sensitivity and k default from the model).

    ``unbounded``: the size is private (add/delete neighbours), so the default sensitivity is what one
    added or deleted record can do: the same as replace-one for counts, max(|lo|, |hi|) for the
    clamped normal sum (paper 002 uses the unbounded sensitivity)."""
    name = mech_d.get("name")
    params = {k: v for k, v in mech_d.items() if k != "name"}
    l2 = name in ("gaussian", "discrete_gaussian")
    if name == "randomized_response" and model.k is None:
        fail("mechanism.name", name, f"randomized_response needs categorical records; {model.name} has none "
             "(use it with beta_binomial or dirichlet_multinomial)")
    if name in ("discrete_laplace", "discrete_gaussian") and not model.integer_statistic:
        fail("mechanism.name", name, f"discrete noise needs an integer statistic; {model.name} has a real one "
             "(use laplace or gaussian)")
    sens = model.default_sensitivity(l2=l2)
    if unbounded and getattr(model, "name", "") == "normal_known_sd":
        sens = max(abs(model.lo), abs(model.hi))
    return make_mechanism(name, params, default_sensitivity=sens, k=model.k or 2)


def _resolve(path: str, base_dir: str) -> str:
    return path if os.path.isabs(path) else os.path.join(base_dir, path)


def load_spec(path: str) -> Spec:
    """Read a TOML (``.toml``) or JSON (``.json``) spec file."""
    if not os.path.isfile(path):
        fail("SPEC", path, "must be an existing .toml or .json file")
    with open(path, "rb") as fh:
        raw = fh.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        fail("SPEC", path, f"must be UTF-8 text (byte {exc.start} is not)")
    if path.endswith(".json"):
        try:
            d = json.loads(text)
        except json.JSONDecodeError as exc:
            fail("SPEC", path, f"must be valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}")
    else:
        try:
            d = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            fail("SPEC", path, f"must be valid TOML: {exc}")
    return spec_from_dict(d, base_dir=os.path.dirname(os.path.abspath(path)))


def spec_to_dict(spec: Spec) -> dict:
    """The plain-dict layout of a spec (round-trips through :func:`spec_from_dict`)."""
    d = {"seed": spec.seed, "model": _plain(spec.model), "mechanism": _plain(spec.mechanism),
         "data": _plain(spec.data), "method": _plain(spec.method)}
    if spec.n_mechanism is not None:
        d["n_mechanism"] = _plain(spec.n_mechanism)
    return d


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v) or math.isinf(v):
            raise ValueError(f"spec value {v!r} is invalid: TOML needs finite numbers")
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, Mapping):
        return "{ " + ", ".join(f"{k} = {_toml_value(x)}" for k, x in v.items()) + " }"
    raise ValueError(f"spec value {v!r} is invalid: cannot be written as TOML")


def spec_to_toml(spec: Spec) -> str:
    """TOML text that :func:`load_spec` reads back into an identical spec."""
    d = spec_to_dict(spec)
    lines = [f"seed = {d['seed']}"]
    for table in ("model", "mechanism", "n_mechanism", "data", "method"):
        if table not in d:
            continue
        lines.append(f"\n[{table}]")
        for k, v in d[table].items():
            if v is None:
                continue
            lines.append(f"{k} = {_toml_value(v)}")
    return "\n".join(lines) + "\n"



