"""Checking a scenario spec: a plain table (TOML/JSON layout) into a frozen, validated :class:`Spec`.

The record, its layout (every table and key) and its plain forms live in :mod:`engine.core.spec`;
this module checks a table against the registries of models, mechanisms and methods (so it sits
above them and below the API): each key's value and the combinations (data kinds, an unknown n,
discrete noise on integer statistics, randomized response on categorical records, a method the
model supports), raising ``ValueError`` with the field, the value and what is allowed.
"""
from __future__ import annotations

import os
from typing import Any, Mapping

from .core.data import load_records_csv
from .core.spec import DATA_KINDS, Spec, read_spec_file, resolve_path
from .core.validation import fail, instance, number_list, seed_value
from .mechanisms import make_mechanism
from .mechanisms.clipped import Clipped, clip_bounds
from .mechanisms.libraries import make_release
from .mechanisms.ratio import ratio_release
from .methods import DEFAULT_METHOD, METHOD_NAMES, validate_method
from .methods.base import check_mechanism_supported, check_model_supported
from .models import make_model, record_columns
from .models.sample_size import (check_n_dp, check_n_prior, make_size_mechanism, make_size_prior, plug_in_n,
                                 plug_in_total)

__all__ = ["spec_from_dict", "load_spec", "build_mechanism", "default_method_name"]

_TOP_KEYS = {"seed", "model", "mechanism", "release", "data", "method", "n_mechanism", "methods"}
#: models whose unknown n may be private through the statistic alone (no [n_mechanism]): a histogram's cells
#: add up to n, so releasing them releases a noisy n (engine.methods.histogram_total)
_SIZE_IN_STATISTIC = ("dirichlet_multinomial",)


def _check_data(data, model, base_dir: str = ".", ratio: bool = False) -> dict:
    if not isinstance(data, Mapping):
        fail("data", data, "must be a table with one of s_dp, simulate, csv, records")
    present = [k for k in DATA_KINDS if k in data]
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
    if present[0] == "s_dp" and ratio:  # OpenDP's mean: r = +-inf is a release (a noisy length <= 0)
        d["s_dp"] = ratio_release("data.s_dp", d["s_dp"]).tolist()
    elif present[0] == "s_dp":  # the entries' types here, their number where the model and mechanism are known
        number_list("data.s_dp", d["s_dp"])
    if present[0] == "csv" and not columns and "column" in d and not isinstance(d["column"], str):
        fail("data.column", d["column"], f"must be one column name (a string): {model.name} has one value per record")
    if present[0] == "csv" and columns and "column" in d:
        fail("data.column", d["column"], f"is not used by {model.name}: the csv has the columns {','.join(columns)}")
    if columns and present[0] in ("csv", "records"):  # multi-column records: levels checked here, not at run time
        rows = (load_records_csv(resolve_path(d["csv"], base_dir), columns) if present[0] == "csv" else d["records"])
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
    if "release" in d:
        if "mechanism" in d:
            fail("release", d["release"], "cannot be given with [mechanism]: describe the noise once, either in the "
                 "lab's terms ([mechanism]) or in the library's ([release])")
        if not isinstance(d["release"], Mapping):
            fail("release", d["release"], "[release] must be a table")
        d = {**{k: v for k, v in d.items() if k != "release"}, "mechanism": dict(d["release"])}
        if "library" not in d["mechanism"]:
            fail("release.library", None, "is required: one of opendp, diffprivlib")
    elif isinstance(d.get("mechanism"), Mapping) and "library" in d["mechanism"]:
        fail("mechanism.library", d["mechanism"]["library"], "belongs in a [release] table, not [mechanism]")
    for key in ("model", "mechanism", "data"):
        if key not in d:
            fail(key, None, f"[{key}] table is required (or [release] instead of [mechanism])" if key == "mechanism"
                 else f"[{key}] table is required")
        if not isinstance(d[key], Mapping):
            fail(key, d[key], f"[{key}] must be a table")
    seed = seed_value(d.get("seed", 0))
    model_d = dict(d["model"])
    data_d = dict(d["data"])
    if "csv" in data_d and "n" not in model_d:
        columns = record_columns(model_d) or data_d.get("column")
        model_d["n"] = int(load_records_csv(resolve_path(data_d["csv"], base_dir), columns).shape[0])
    if "records" in data_d and "n" not in model_d:
        if not isinstance(data_d["records"], (list, tuple)) or not data_d["records"]:
            fail("data.records", data_d["records"], "must be a non-empty list of the confidential records (one "
                 "value or row each)")
        model_d["n"] = len(data_d["records"])
    if "name" not in model_d:
        fail("model.name", None, "is required: one of beta_binomial, poisson_gamma, dirichlet_multinomial, normal_known_sd, "
             "naive_bayes_loglinear, linear_regression")
    unknown_n = "n_prior" in model_d
    if is_ratio_release(d["mechanism"]):
        _check_ratio(d, model_d)
    n_mech_d = _check_unknown_n(d, model_d, data_d) if unknown_n else None
    if not unknown_n and "n_mechanism" in d:
        fail("n_mechanism", d["n_mechanism"], "needs model.n_prior (a prior on the unknown n) instead of model.n")
    if not unknown_n and "n_dp" in data_d:
        fail("data.n_dp", data_d["n_dp"], "needs model.n_prior and an [n_mechanism] table (an unknown n)")
    model = make_model(model_d["name"], _model_table(model_d, data_d))
    mech_d = dict(d["mechanism"])
    if "name" not in mech_d and "library" not in mech_d:
        fail("mechanism.name", None, "is required: one of laplace, gaussian, discrete_laplace, discrete_gaussian, randomized_response")
    mech = build_mechanism(mech_d, model, unbounded=unknown_n)
    data = _check_data({k: v for k, v in data_d.items() if k != "n_dp"}, model, base_dir,
                       ratio=is_ratio_release(mech_d))
    if unknown_n and "n_dp" in data_d:
        data["n_dp"] = data_d["n_dp"]
    method_d = d.get("method", {k: v for k, v in DEFAULT_METHOD.items() if k != "name"})
    if isinstance(method_d, Mapping) and "name" not in method_d:  # the user named none: one the release takes
        method_d = {**method_d, "name": default_method_name(model, mech)}
    method = validate_method(method_d)
    check_model_supported(method["name"], model)
    check_mechanism_supported(method["name"], mech)
    if method["name"] == "rjmcmc" and not unknown_n:
        fail("method.name", "rjmcmc", "needs an unknown n: give model.n_prior, an [n_mechanism] table and data.n_dp "
             "instead of model.n (for a known n use da_mcmc)")
    return Spec(seed=seed, model=model_d, mechanism=mech_d, data=data, method=method, base_dir=base_dir,
                n_mechanism=n_mech_d, methods=_other_methods(d.get("methods"), model, unknown_n, mech))


def default_method_name(model, mech) -> str:
    """The method of a spec whose ``[method]`` names none: da_mcmc where the model and the release take it, else
    auto. A default must not fail a spec the user wrote correctly: OpenDP's mean takes only pseudo_marginal and
    auto, so without this ``prepare`` and ``risk`` (which run no method) refused it for a da_mcmc nobody wrote."""
    for name in (DEFAULT_METHOD["name"], "auto"):
        try:
            check_model_supported(name, model)
            check_mechanism_supported(name, mech)
        except ValueError:
            continue
        return name
    return DEFAULT_METHOD["name"]


def _other_methods(tables, model, unknown_n: bool, mech=None) -> dict | None:
    """``[methods.<name>]``: the settings of other methods, kept with the scenario (the app's download holds
    every method's settings, ABC's time limit and OPS's k among them) and used by ``run --method <name>``.
    Each table is checked like ``[method]``; its name is its key."""
    if tables is None:
        return None
    if not isinstance(tables, Mapping):
        fail("methods", tables, "must be a table of method tables, e.g. [methods.abc_rejection] max_seconds = 10")
    out = {}
    for name, table in tables.items():
        if not isinstance(table, Mapping):
            fail(f"methods.{name}", table, "must be a table of that method's settings")
        if "name" in table and table["name"] != name:
            fail(f"methods.{name}.name", table["name"], f"must be {name!r} (the table's key) or left out")
        if name not in METHOD_NAMES:  # the table's key is the field: there is no method.name in the file
            fail(f"methods.{name}", dict(table), "the table's key must be a method: one of " + ", ".join(METHOD_NAMES))
        try:
            out[name] = validate_method({**table, "name": name})
            check_model_supported(name, model)
            check_mechanism_supported(name, mech)
        except ValueError as exc:  # checked like [method], named where it is: methods.<name>.<key>
            raise ValueError(_in_methods_table(str(exc), name)) from None
    return out or None


def _in_methods_table(message: str, name: str) -> str:
    """An error of :func:`validate_method` (or a support check) about ``[method]`` said of ``[methods.<name>]``:
    ``method.chain = 3 ...`` becomes ``methods.<name>.chain = 3 ...``, and ``method.name = '<name>' ...`` (a method
    this model or release refuses) ``methods.<name> ...``."""
    own = f"method.name = {name!r} "
    if message.startswith(own):
        return f"methods.{name} " + message[len(own):]
    if message.startswith("method."):
        return f"methods.{name}." + message[len("method."):]
    return message


def is_ratio_release(table) -> bool:
    """A ``[release]`` (or merged [mechanism]) table of OpenDP's mean: one number, sum / length
    (:mod:`engine.mechanisms.ratio`), whose law involves n itself."""
    return isinstance(table, Mapping) and table.get("library") == "opendp" and table.get("mechanism") == "mean"


def _check_ratio(d, model_d) -> None:
    """OpenDP's mean: the records are normal_known_sd's, n is released only through the ratio (no
    [n_mechanism]), bounds (if given) are the model's lo and hi."""
    if model_d.get("name") != "normal_known_sd":
        fail("model.name", model_d.get("name"), "must be normal_known_sd with OpenDP's mean (values clamped to "
             "[lo, hi] = the mean's bounds)")
    if "n_mechanism" in d:
        fail("n_mechanism", d["n_mechanism"], "is not used with OpenDP's mean: the length is released only inside "
             "the ratio (its noise is release.length_scale); leave [n_mechanism] out")


def _check_unknown_n(d, model_d, data_d) -> dict:
    """Validate the unknown-n pieces (model.n_prior, [n_mechanism], data.n_dp); returns [n_mechanism] (None for a
    histogram whose total is released only through its cells)."""
    check_n_prior(model_d["n_prior"], model_d["name"])
    mech = d.get("mechanism", d.get("release"))
    if isinstance(mech, Mapping) and (mech.get("name") == "randomized_response" or mech.get("mechanism") == "Binary"):
        fail("mechanism.name", "randomized_response", "is not available with an unknown n (the reports reveal n); "
             "use additive noise on the statistic")
    if is_ratio_release(mech):
        if "n_dp" in data_d:
            fail("data.n_dp", data_d["n_dp"], "is not released with OpenDP's mean (only the ratio is): leave it out")
        if "s_dp" in data_d and "n" in model_d:
            fail("model.n", model_d["n"], "must be omitted with model.n_prior and data.s_dp: the size is unknown "
                 "(model.n is the true size only when the engine releases the data)")
        return None
    if "n_mechanism" not in d and model_d["name"] in _SIZE_IN_STATISTIC:
        if "n_dp" in data_d:
            fail("data.n_dp", data_d["n_dp"], "needs an [n_mechanism] table (the noise on the released size); a "
                 "histogram's total without its own release is private through the cells alone: leave n_dp out")
        if "s_dp" in data_d and "n" in model_d:
            fail("model.n", model_d["n"], "must be omitted with model.n_prior and data.s_dp: the size is unknown "
                 "(model.n is the true size only when the engine releases the data)")
        return None
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
    if "s_dp" in data_d and model_d.get("name") == "normal_known_sd" and "n_dp" not in data_d:
        table["n"] = plug_in_n(make_size_prior(model_d["n_prior"]).mean)  # OpenDP's mean: no released size
    elif "s_dp" in data_d:
        table["n"] = plug_in_n(data_d["n_dp"]) if "n_dp" in data_d else plug_in_total(number_list("data.s_dp", data_d["s_dp"]))
    elif "n" not in table:
        table["n"] = plug_in_n(make_size_prior(model_d["n_prior"]).mean)
    return table


def build_mechanism(mech_d: Mapping[str, Any], model, unbounded: bool = False):
    """The mechanism of a spec for a given model (sensitivity and k default from the model).

    ``unbounded``: the size is private (add/delete neighbours), so the default sensitivity is what one
    added or deleted record can do: the same as replace-one for counts, max(|lo|, |hi|) for the
    clamped normal sum (paper 002 uses the unbounded sensitivity)."""
    instance("mechanism", mech_d, Mapping, 'must be a spec\'s [mechanism] or [release] table (a dict), e.g. '
             '{"name": "laplace", "epsilon": 1.0}')
    if "library" in mech_d:
        return _build_release(mech_d, model, unbounded)
    name = mech_d.get("name")
    params = {k: v for k, v in mech_d.items() if k not in ("name", "clip")}
    if "clip" in mech_d:
        if name == "randomized_response":
            fail("mechanism.clip", mech_d["clip"], "is for additive noise only (randomized_response reports categories)")
        clip = clip_bounds("mechanism.clip", mech_d["clip"])
        return Clipped(build_mechanism({k: v for k, v in mech_d.items() if k != "clip"}, model, unbounded), *clip)
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
    return make_mechanism(name, params, default_sensitivity=sens, k=model.k or 2,
                          integer_sensitivity=bool(getattr(model, "integer_statistic", False)),
                          statistic_entries=int(getattr(model, "stat_dim", 1)))


def load_spec(path: str) -> Spec:
    """Read a TOML (``.toml``) or JSON (``.json``) spec file."""
    table = read_spec_file(path)
    return spec_from_dict(table, base_dir=os.path.dirname(os.path.abspath(os.fspath(path))))


def _add_remove_sensitivity(model, l2: bool) -> float:
    """What one added or removed record can change (OpenDP's default neighbours): 1 for a count or a cell of a
    histogram, max(|lo|, |hi|) for a sum of values clamped to [lo, hi]."""
    if model.name == "dirichlet_multinomial":
        return 1.0
    if model.name == "normal_known_sd":
        return max(abs(model.lo), abs(model.hi))
    return model.default_sensitivity(l2=l2)


def _build_release(table: Mapping[str, Any], model, unbounded: bool = False):
    """The mechanism of a [release] table (engine.mechanisms.libraries) checked against the model: integer noise
    and OpenDP's granularity need an integer statistic, diffprivlib's Binary categorical records."""
    library, mech = table.get("library"), table.get("mechanism")
    if is_ratio_release(table):
        if model.name != "normal_known_sd":
            fail("release.mechanism", mech, f"OpenDP's mean needs normal_known_sd records; {model.name} has none")
        given = table.get("bounds")
        bounds = [model.lo, model.hi]
        numbers = isinstance(given, (list, tuple)) and len(given) == 2 and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in given)
        if given is not None and (not numbers or [float(v) for v in given] != bounds):
            fail("release.bounds", given, f"must be the model's [lo, hi] = {bounds} (dp.mean clamps to its bounds, "
                 "the records' model to [lo, hi]) or left out")
        return make_release({**table, "bounds": bounds})
    l2 = mech in ("gaussian", "Gaussian", "GaussianAnalytic", "GaussianDiscrete")
    integer_noise = ((library == "opendp" and (table.get("domain") == "int" or table.get("k") is not None))
                     or (library == "diffprivlib" and mech in ("Geometric", "GeometricTruncated", "GaussianDiscrete")))
    if integer_noise and not model.integer_statistic:
        key = "mechanism" if library != "opendp" else ("domain" if table.get("domain") == "int" else "k")
        fail(f"release.{key}", table.get(key), f"this release adds integer (or lattice) noise, which needs an integer "
             f"statistic; {model.name} has a real one (use the float domain without k, or a continuous mechanism)")
    default = _add_remove_sensitivity(model, l2) if library == "opendp" else None
    noise = make_release(table, default_sensitivity=default)
    base = noise.base if isinstance(noise, Clipped) else noise
    if getattr(base, "log_transition", None) is not None:  # diffprivlib Binary: randomized response
        if model.k != 2:
            fail("release.mechanism", mech, f"Binary needs two categories (beta_binomial or a 2-category "
                 f"dirichlet_multinomial); {model.name} has {model.k or 'no'} categories")
        return noise
    g = getattr(base, "granularity", None)
    if g is not None and g > 1:
        fail("release.k", table.get("k"), "must be at most 0 (granularity <= 1) for an integer statistic: a coarser "
             "lattice rounds the statistic, which the samplers here do not model")
    return noise
