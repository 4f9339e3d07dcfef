"""A :class:`~ui.params.scenario.Scenario` as a short, readable URL query string, and back.

The sidebar mirrors the current scenario into the URL (``st.query_params``), so a copied link reopens
it; a session's first run reads it back with :func:`from_query`. Nothing here imports streamlit.

The Privacy budget page adds its own choices (:func:`budget_page_to_query`, :func:`budget_page_from_query`):
``target`` (the target posterior sd T), ``grid`` (the ε grid, comma-separated) and ``your_eps`` (the "Your ε"
slider, a value of the grid). A link opened on that page reads them back on the session's first run.
"""
from __future__ import annotations

import math
from dataclasses import fields
from typing import Any, Mapping

from .defaults import default_truth, default_truth_p
from .parsing import grid_value, parse_grid
from .release import CHOICES, MEAN_METHODS, TEXT_PARAMS, is_mean, mechanisms, params_of
from .scenario import (DATA_SOURCES, DEFAULT_PRIORS, MANY_NUMBER_MODELS, MECHANISMS, METHODS, MODELS, N_BUDGET_FORMS,
                       N_MECHANISMS, N_PRIORS, PRIOR_KINDS, RELEASES, SAMPLE_SIZES, SIGMA_PRIOR_DEFAULTS, Scenario,
                       budget_forms, default_methods)

__all__ = ["to_query", "from_query",
           "BUDGET_PAGE_KEYS", "budget_page_to_query", "budget_page_from_query"]

_QUERY_FIELDS = {
    "model": "model", "n": "n", "mech": "mechanism", "budget": "budget_form", "epsilon": "epsilon",
    "rho": "rho", "delta": "delta", "truth_prob": "truth_prob", "sens": "sensitivity", "data": "data",
    "truth": "truth", "seed": "seed", "s_dp": "s_dp", "column": "csv_column", "chains": "chains",
    "draws": "draws", "warmup": "warmup", "abc_s": "abc_max_seconds", "abc_p": "abc_max_proposals",
    "ops_k": "ops_k", "size": "sample_size", "n_prior": "n_prior", "n_mean": "n_prior_mean",
    "n_disp": "n_prior_dispersion", "n_mech": "n_mechanism", "n_budget": "n_budget_form", "n_eps": "n_epsilon",
    "n_scale": "n_scale", "n_dp": "n_dp", "truth_p": "truth_p", "from_prior": "from_prior",
}
_INT_FIELDS = {"n", "seed", "chains", "draws", "warmup", "abc_max_proposals", "ops_k"}
_FLOAT_FIELDS = {"epsilon", "rho", "delta", "truth_prob", "sensitivity", "abc_max_seconds", "n_prior_mean",
                 "n_prior_dispersion", "n_epsilon", "n_scale"}
_BOOL_FIELDS = {"from_prior"}
_CHOICES = {"sample_size": ("size", SAMPLE_SIZES), "n_prior": ("n_prior", N_PRIORS),
            "n_mechanism": ("n_mech", N_MECHANISMS), "n_budget_form": ("n_budget", N_BUDGET_FORMS)}


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return repr(v)
    return str(v)


def to_query(s: Scenario) -> dict[str, str]:
    """A short, readable query string for the scenario (only the fields its forms use)."""
    q = {"model": s.model}
    if s.data != "csv":  # an upload's n is its number of records, and the records are not in the link
        q["n"] = _fmt(s.n)
    for key, value in s.prior:
        if value is not None:
            q[f"prior.{key}"] = _fmt(value)
    q["mech"] = s.mechanism
    q["budget"] = s.budget_form
    if s.budget_form in ("epsilon", "k_ary", "epsilon_delta"):
        q["epsilon"] = _fmt(s.epsilon)
    if s.budget_form == "epsilon_delta":
        q["delta"] = _fmt(s.delta)
    if s.budget_form == "rho":
        q["rho"] = _fmt(s.rho)
    if s.budget_form == "coin":
        q["truth_prob"] = _fmt(s.truth_prob)
    if s.sensitivity is not None:
        q["sens"] = _fmt(s.sensitivity)
    q["data"] = s.data
    if s.data == "simulate" and s.model == "naive_bayes_loglinear" and s.from_prior:
        q["from_prior"] = "1"
    elif s.data == "simulate":
        q["truth"] = s.truth
        if s.model == "naive_bayes_loglinear":
            q["truth_p"] = s.truth_p
    elif s.data == "s_dp":
        q["s_dp"] = s.s_dp
    elif s.csv_column:
        q["column"] = s.csv_column
    if is_mean(s.release, s.release_mechanism) and not s.unknown_n:  # a mean's link without size means n unknown
        q["size"] = s.sample_size
    if s.unknown_n:  # a known n adds nothing: the landing page's link stays as it was
        q["size"] = s.sample_size
        q["n_prior"], q["n_mean"] = s.n_prior, _fmt(s.n_prior_mean)
        if s.n_prior == "negative_binomial":
            q["n_disp"] = _fmt(s.n_prior_dispersion)
        q["n_mech"] = s.n_mechanism
        if s.size_released:
            q["n_budget"] = s.n_budget_form
            if s.n_budget_form == "scale":
                q["n_scale"] = _fmt(s.n_scale)
            else:
                q["n_eps"] = _fmt(s.n_epsilon)
            if s.data == "s_dp":
                q["n_dp"] = s.n_dp
    if s.uses_library:  # the lab's own mechanism adds nothing: every existing link stays as it was
        q["rel"], q["rel_mech"] = s.release, s.release_mechanism
        for key, value in s.release_params:
            q[f"rel.{key}"] = _fmt(value)
    q["seed"] = _fmt(s.seed)
    q["methods"] = ",".join(s.methods)
    for qk in ("chains", "draws", "warmup", "abc_s", "abc_p", "ops_k"):
        q[qk] = _fmt(getattr(s, _QUERY_FIELDS[qk]))
    return q


def _link_error(key: str, value: Any, allowed: str) -> ValueError:
    return ValueError(f"link parameter {key} = {value!r} is invalid: {allowed}")


def _convert(key: str, name: str, raw: str) -> Any:
    if name in _BOOL_FIELDS:
        if raw not in ("0", "1"):
            raise _link_error(key, raw, "must be 0 or 1")
        return raw == "1"
    if name in _INT_FIELDS:
        try:
            return int(raw)
        except ValueError:
            raise _link_error(key, raw, "must be a whole number") from None
    if name in _FLOAT_FIELDS:
        try:
            v = float(raw)
        except ValueError:
            raise _link_error(key, raw, "must be a number") from None
        if not math.isfinite(v):
            raise _link_error(key, raw, "must be a finite number")
        return v
    return raw


def _release_from_query(q: Mapping[str, Any]) -> dict:
    """``rel``, ``rel_mech`` and ``rel.<parameter>``: a release made with a library, in its own terms."""
    library = str(q["rel"])
    if library not in RELEASES:
        raise _link_error("rel", library, "must be one of " + ", ".join(RELEASES))
    if library == "lab":
        return {"release": "lab"}
    mech = str(q.get("rel_mech", ""))
    if mech not in mechanisms(library):
        raise _link_error("rel_mech", mech, f"must be one of {', '.join(mechanisms(library))} for {library}")
    allowed = params_of(library, mech)
    params = []
    for key in [k for k in q if k.startswith("rel.")]:
        name, raw = key[4:], str(q[key])
        if name not in allowed:
            raise _link_error(key, raw, f"is not a parameter of {library} {mech}; allowed: " + ", ".join(allowed))
        if name in CHOICES and raw not in CHOICES[name]:
            raise _link_error(key, raw, "must be one of " + ", ".join(CHOICES[name]))
        params.append((name, raw if name in TEXT_PARAMS or name in CHOICES else _convert(key, "epsilon", raw)))
    order = list(allowed)  # the form's order, so a link reads back to the same scenario
    return {"release": library, "release_mechanism": mech,
            "release_params": tuple(sorted(params, key=lambda p: order.index(p[0])))}


def from_query(query: Mapping[str, Any]) -> Scenario | None:
    """The scenario a shared link describes, or None when the link carries none.

    Values outside the widgets' choices raise ValueError; numeric values are not range-checked
    here (the engine does that and the app shows its message next to the input).
    """
    q = {k: (v[-1] if isinstance(v, (list, tuple)) and v else v) for k, v in dict(query).items()}
    if "model" not in q:
        return None
    model = q["model"]
    if model not in MODELS:
        raise _link_error("model", model, "must be one of " + ", ".join(MODELS))
    values: dict[str, Any] = {"model": model}
    for key, name in _QUERY_FIELDS.items():
        if key in q and key != "model":
            values[name] = _convert(key, name, str(q[key]))
    mech = values.get("mechanism", Scenario.mechanism)
    if mech not in MECHANISMS:
        raise _link_error("mech", mech, "must be one of " + ", ".join(MECHANISMS))
    form = values.get("budget_form", budget_forms(mech)[0])
    if form not in budget_forms(mech):
        raise _link_error("budget", form, f"must be one of {', '.join(budget_forms(mech))} for {mech}")
    for name, (key, allowed) in _CHOICES.items():
        if name in values and values[name] not in allowed:
            raise _link_error(key, values[name], "must be one of " + ", ".join(allowed))
    if values.get("data", "simulate") not in DATA_SOURCES:
        raise _link_error("data", values["data"], "must be one of " + ", ".join(DATA_SOURCES))
    if "rel" in q:
        values.update(_release_from_query(q))
    prior = dict(DEFAULT_PRIORS[model])
    optional = list(SIGMA_PRIOR_DEFAULTS) if model == "linear_regression" else []  # sigma unknown: its prior
    for key in list(prior) + optional:
        if f"prior.{key}" in q:
            raw = str(q[f"prior.{key}"])
            kind = PRIOR_KINDS.get((model, key))
            if kind in ("text", "matrix", "bounds"):
                prior[key] = raw
            elif kind == "int":
                prior[key] = _convert(f"prior.{key}", "n", raw)
            else:
                prior[key] = _convert(f"prior.{key}", "epsilon", raw)
    values["prior"] = tuple(prior.items())
    if "methods" in q:
        chosen = tuple(m for m in str(q["methods"]).split(",") if m)
        bad = [m for m in chosen if m not in METHODS]
        if bad:
            raise _link_error("methods", q["methods"], "must be a comma-separated subset of " + ", ".join(METHODS))
        values["methods"] = chosen
    elif model in MANY_NUMBER_MODELS:  # a link without methods: the model's own defaults (no ABC for 9 sums)
        values["methods"] = default_methods(model)
    if is_mean(values.get("release", ""), values.get("release_mechanism", "")):
        # as the sidebar's switch to it and the dp-wizard loader set it: its methods, and n private (not released
        # apart from the mean) unless the link says size
        values.setdefault("methods", MEAN_METHODS)
        if "sample_size" not in values and model == "normal_known_sd":
            values.update(sample_size="unknown", n_mechanism="none")
            values.setdefault("n_prior_mean", float(values.get("n", Scenario.n)))
    if "truth" not in values:
        values["truth"] = default_truth(model, prior)
    if model == "naive_bayes_loglinear" and "truth_p" not in values:
        values["truth_p"] = default_truth_p(model, prior)
    known = {f.name for f in fields(Scenario)}
    return Scenario(**{k: v for k, v in values.items() if k in known})


#: The Privacy budget page's own keys: the target posterior sd T, the ε grid and the "Your ε" slider.
BUDGET_PAGE_KEYS = ("target", "grid", "your_eps", "sweep")


def budget_page_to_query(target: float | None = None, grid=None, your_eps: float | None = None,
                         sweep=None) -> dict[str, str]:
    """The Privacy budget page's choices as query keys; a choice that is None (not valid now) is left out.
    ``sweep``: the methods to sweep, by their engine names."""
    q = {}
    if target is not None:
        q["target"] = _fmt(float(target))
    if grid is not None:
        q["grid"] = ",".join(_fmt(float(g)) for g in grid)
    if your_eps is not None:
        q["your_eps"] = _fmt(float(your_eps))
    if sweep:
        q["sweep"] = ",".join(sweep)
    return q


def budget_page_from_query(query: Mapping[str, Any], default_grid=()) -> tuple[dict[str, Any], list[str]]:
    """The Privacy budget page's choices a link carries, each checked on its own: ({key: value}, [messages]).

    ``target`` is a finite number > 0, ``grid`` what the page's grid box accepts (positive numbers, at most 25),
    ``your_eps`` a value of that grid (the link's, else ``default_grid``), ``sweep`` method names (the page keeps
    those the scenario runs). A key that does not read is left out of
    the values and its message (``link parameter … is invalid: …``) is in the list; the others still apply."""
    q = {k: (v[-1] if isinstance(v, (list, tuple)) and v else v) for k, v in dict(query).items()}
    values: dict[str, Any] = {}
    errors: list[str] = []
    if "target" in q:
        raw = str(q["target"])
        try:
            target = float(raw)
        except ValueError:
            target = math.nan
        if math.isfinite(target) and target > 0:
            values["target"] = target
        else:
            errors.append(str(_link_error("target", raw, "must be a number > 0 (a posterior sd)")))
    if "grid" in q:
        try:
            values["grid"] = parse_grid(str(q["grid"]), "ε")
        except ValueError as exc:
            errors.append(str(_link_error("grid", str(q["grid"]), str(exc).partition(" is invalid: ")[2]
                                          or "must be positive numbers separated by commas")))
    if "your_eps" in q:
        raw, grid = str(q["your_eps"]), values.get("grid", tuple(default_grid))
        try:
            value = float(raw)
        except ValueError:
            value = math.nan
        on_grid = grid_value(value, grid)
        if on_grid is not None:
            values["your_eps"] = on_grid
        else:
            listed = ", ".join(f"{g:g}" for g in grid)
            errors.append(str(_link_error("your_eps", raw, f"must be a value of the ε grid ({listed})")))
    if "sweep" in q:
        chosen = [m.strip() for m in str(q["sweep"]).split(",") if m.strip()]
        if chosen and all(m in METHODS for m in chosen):
            values["sweep"] = tuple(dict.fromkeys(chosen))
        else:
            errors.append(str(_link_error("sweep", str(q["sweep"]), "must be a comma-separated subset of "
                                          + ", ".join(METHODS))))
    return values, errors
