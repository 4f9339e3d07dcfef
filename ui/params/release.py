"""A release made with a library, as the sidebar holds it: the form's fields, the spec's ``[release]`` table, and a
dp-wizard statistic's spec as a :class:`~ui.params.scenario.Scenario`.

"How was it released?" is the lab's own simulation (``Scenario.release == "lab"``: the ``[mechanism]`` table,
today's form) or a release made with OpenDP or diffprivlib, described in that library's own terms: its mechanism
name and its parameter names, as ``engine.release_options()`` lists them (the engine holds the mapping to the
exact noise law; the app never imports the libraries). ``Scenario.release_params`` keeps the parameters of the
chosen mechanism: numbers as numbers, ``domain``, ``value0``, ``value1`` and ``clip`` as text (``clip`` is
typed ``0, inf``; it is parsed here when the spec is built, so a bad entry stays in its box). Nothing here
imports streamlit.
"""
from __future__ import annotations

import math
import re
from dataclasses import replace
from functools import lru_cache
from typing import Any, Mapping

import engine

from .defaults import default_truth
from .scenario import DEFAULT_PRIORS, MODELS, RELEASES, Scenario

__all__ = ["RELEASE_LABELS", "FORM_DEFAULTS", "TEXT_PARAMS", "CHOICES", "options", "mechanisms", "params_of",
           "form_default", "release_params", "release_table", "scenario_from_spec", "is_mean", "DPWIZARD_METHODS",
           "HISTOGRAM_METHODS", "MEAN_METHODS"]

RELEASE_LABELS = {"lab": "The lab's own simulation", "opendp": "OpenDP", "diffprivlib": "diffprivlib"}
#: What a required parameter's box starts with (the library's own defaults fill the others).
FORM_DEFAULTS: dict[str, Any] = {"domain": "int", "scale": 3.0, "epsilon": 1.0, "delta": 1e-5, "sensitivity": 1.0,
                                 "lower": 0.0, "upper": 100.0}
#: Parameters typed as text (kept as typed): labels, the clip bounds; ``domain`` is a choice.
TEXT_PARAMS = ("value0", "value1", "clip", "bounds")
CHOICES = {"domain": ("int", "float")}
#: Methods switched on when a dp-wizard statistic is loaded: the naive baseline, a sampler and the exact grid (a
#: typed release has no records, so OPS and the records-based checks do not apply).
DPWIZARD_METHODS = ("naive", "da_mcmc", "exact")
HISTOGRAM_METHODS = ("naive", "exact")  # a histogram whose total is private
MEAN_METHODS = ("pseudo_marginal",)  # OpenDP's mean (sum / length): the one sampler of its law


def is_mean(release: str | None, mechanism: str | None) -> bool:
    """OpenDP's mean: a noisy sum over a noisy length, whose length (n) the analyst never sees."""
    return release == "opendp" and mechanism == "mean"
_SPLIT = re.compile(r"[,;\s]+")


@lru_cache(maxsize=1)
def options() -> dict:
    """``engine.release_options()``: library -> mechanism -> parameter -> {"default", "allowed"}."""
    return engine.release_options()


def mechanisms(library: str) -> tuple[str, ...]:
    """The library's mechanism names, as it spells them."""
    return tuple(options()[library])


def params_of(library: str, mechanism: str) -> dict:
    """{parameter: {"default", "allowed"}} of one library mechanism."""
    return options()[library][mechanism]


def form_default(library: str, mechanism: str, param: str) -> Any:
    """What the box of ``param`` starts with: the library's default, else the form's (None: an optional
    parameter, its box starts blank)."""
    default = params_of(library, mechanism)[param]["default"]
    return FORM_DEFAULTS.get(param) if default == "required" else default


def _clip(text: Any, name: str = "clip") -> list[float]:
    """``"0, inf"`` -> [0.0, inf]; the engine checks lower < upper (``name``: clip, or a mean's bounds)."""
    allowed = "must be two numbers lower, upper, e.g. 0, inf (inf or -inf for an open side)"
    if isinstance(text, (list, tuple)):
        tokens = [str(v) for v in text]
    else:
        tokens = [t for t in _SPLIT.split(str(text if text is not None else "").strip().strip("[]")) if t]
    if len(tokens) != 2:
        raise ValueError(f"release.{name} = {str(text)!r} is invalid: {allowed}")
    try:
        out = [float(t) for t in tokens]
    except ValueError:
        raise ValueError(f"release.{name} = {str(text)!r} is invalid: {allowed}") from None
    if any(math.isnan(v) for v in out):
        raise ValueError(f"release.{name} = {str(text)!r} is invalid: {allowed}")
    return out


def release_params(library: str, mechanism: str, params: Mapping[str, Any] | tuple) -> dict:
    """The parameters as the engine takes them (``engine.release_from(library, mechanism, **params)``): blank
    optional ones left out, ``clip`` parsed; raises ValueError naming ``release.<param>``."""
    out: dict[str, Any] = {}
    for name, value in dict(params).items():
        if value is None or (isinstance(value, str) and not value.strip() and name not in ("value0", "value1")):
            continue
        out[name] = _clip(value, name) if name in ("clip", "bounds") else value
    return out


def release_table(s: Scenario) -> dict:
    """The spec's ``[release]`` table: ``library``, ``mechanism`` and the library's own parameters."""
    if s.release not in RELEASES[1:]:
        raise ValueError(f"release.library = {s.release!r} is invalid: must be one of " + ", ".join(RELEASES[1:]))
    return {"library": s.release, "mechanism": s.release_mechanism,
            **release_params(s.release, s.release_mechanism, s.release_params)}


def _text(v: Any) -> str:
    if isinstance(v, (list, tuple)):
        return ", ".join("inf" if x == math.inf else "-inf" if x == -math.inf else f"{float(x):g}" for x in v)
    return str(v)


def scenario_from_spec(spec: Mapping[str, Any], base: Scenario | None = None) -> Scenario:
    """The sidebar's scenario of a spec with a ``[release]`` and a typed release ``data.s_dp`` (what
    ``engine.import_dpwizard`` writes): its model, prior, release, s_dp and seed; methods
    :data:`DPWIZARD_METHODS`; everything else from ``base``. Raises ValueError for a spec of another shape."""
    base = base or Scenario()
    model, release, data = dict(spec.get("model", {})), dict(spec.get("release", {})), dict(spec.get("data", {}))
    name = model.get("name")
    if name not in MODELS:
        raise ValueError(f"model.name = {name!r} is invalid: the app's models are " + ", ".join(MODELS))
    if release.get("library") not in RELEASES[1:] or release.get("mechanism") not in options()[release["library"]]:
        raise ValueError(f"release = {release!r} is invalid: must be an OpenDP or diffprivlib release")
    if "s_dp" not in data:
        raise ValueError(f"data = {data!r} is invalid: the app loads a typed release (data.s_dp)")
    prior = {k: model.get(k, v) for k, v in DEFAULT_PRIORS[name].items()}
    params = tuple((k, v if isinstance(v, (int, float)) and not isinstance(v, bool) else _text(v))
                   for k, v in release.items() if k not in ("library", "mechanism"))
    size: dict[str, Any] = {"sample_size": "known",
                            "methods": MEAN_METHODS if release.get("mechanism") == "mean" else DPWIZARD_METHODS}
    if "n_prior" in model:  # a histogram whose total is private: n is a parameter, and not released
        if "n_mechanism" in spec or "n_dp" in data:
            raise ValueError("n_mechanism = given is invalid: the app loads a histogram whose total is not released")
        n_prior = dict(model["n_prior"])
        # a histogram: Exact answers it (DA-MCMC would run at the plug-in n, and refuses a release with cells on
        # the clip bound); a mean: the pseudo-marginal chain on (mu, n)
        size = {"sample_size": "unknown", "n_prior": n_prior["name"], "n_prior_mean": float(n_prior["mean"]),
                "n_mechanism": "none", "methods": size["methods"] if name != "dirichlet_multinomial" else HISTOGRAM_METHODS}
        if "dispersion" in n_prior:
            size["n_prior_dispersion"] = float(n_prior["dispersion"])
    return replace(base, model=name, n=int(model.get("n", base.n)), prior=tuple(prior.items()),
                   release=release["library"], release_mechanism=release["mechanism"], release_params=params,
                   data="s_dp", s_dp=_text(data["s_dp"]), seed=int(spec.get("seed", base.seed)),
                   truth=base.truth if base.model == name else default_truth(name, prior),
                   **size)
