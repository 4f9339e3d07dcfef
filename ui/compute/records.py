"""What the compute wrappers hand the pages, and the plain form a run travels through the cache in.

Caching
    ``st.cache_data`` keys every run on the canonical JSON of the spec and of the ``[method]``
    table (:func:`spec_json`), so the Compare, Privacy budget and Diagnostics pages share runs. A
    :class:`engine.Result` holds read-only ``MappingProxyType`` fields, which cannot be pickled, so
    cached functions return a plain dict (:func:`_payload`) and :func:`_from_plain` rebuilds the Result
    outside the cache. Every cache has ``max_entries`` and a ``ttl`` where its entries are a session's
    results (:data:`RESULT_TTL_S`), and the caches of draws a ``max_size`` (pickled bytes: one run may
    hold 16 chains × 10⁷ draws), so a long day of use stays bounded.

Nothing here imports streamlit; ``_payload`` and ``_run_record`` are shared by the modules of
:mod:`ui.compute` only.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
import pandas as pd

import engine
from engine.core.spec import plain
from figures.labels import METHOD_LABELS, MODEL_LABELS

from ..narrative import plain_number, release_text

__all__ = ["MethodRun", "Prepared", "spec_json", "RESULT_TTL_S"]

RESULT_TTL_S = 3600  # cached runs and studies: a class's session; memory is freed after it


@dataclass(frozen=True)
class MethodRun:
    """One method's outcome: a Result with its summary table, or the engine's message."""

    method: str
    result: engine.Result | None = None
    summary: pd.DataFrame | None = None
    error: str | None = None
    convergence: Mapping[str, Any] | None = None  # engine.numerics.diagnostics.Convergence.as_dict()
    over_budget: Mapping[str, Any] | None = None  # not run: seconds, detail, budget and the settings that fit

    @property
    def ok(self) -> bool:
        return self.result is not None

    @property
    def stalled(self) -> bool:
        """An MCMC run whose convergence verdict failed (its numbers must not pass unflagged)."""
        v = self.convergence or {}
        return bool(v.get("applicable")) and not v.get("converged", True)

    @property
    def too_few(self) -> bool:
        """Independent draws too few for a density or an interval (ABC stopped by its limits)."""
        v = self.convergence or {}
        return bool(v.get("independent")) and not v.get("converged", True)

    @property
    def untrusted(self) -> bool:
        """Numbers that must not pass unflagged: a chain that has not converged, or too few draws."""
        return self.stalled or self.too_few


@dataclass(frozen=True)
class Prepared:
    """What the page shows about a prepared scenario."""

    s_dp: tuple[float, ...]
    true_params: Mapping[str, Any] | None
    has_records: bool
    mechanism_text: str
    param_names: tuple[str, ...]
    n: int
    epsilon: float | None
    exact_available: bool
    n_dp: float | None = None  # the released noisy size (unknown n); n is then the plug-in round(n_dp)
    size_unknown: bool = False  # n is a parameter: released as n_dp, or (a histogram) a private total not released
    n_true: int | None = None  # the true size behind n_dp when the app holds the records (simulation, CSV)
    model_name: str = ""
    supported_methods: tuple[str, ...] | None = None  # the model's own list (model.methods); None: all
    far: Mapping[str, Any] | None = None  # engine.release_distance when the release is implausible (> 6 noise sds)
    param_support: Mapping[str, tuple] | None = None  # each bounded parameter's (lo, hi): model.param_support
    # the release's own list (mechanism.methods: OpenDP's mean, whose law involves n) and its name; None: all
    release_methods: tuple[str, ...] | None = None
    release_label: str = ""
    # mechanism_text qualified as the sidebar's "Implied noise" is: "…; only for records that move the sum by at most
    # 1 (records are not clamped)" for an unclamped Poisson count (Compare's figure title said "pure 1-DP" bare)
    mechanism_title: str = ""

    @property
    def unknown_n(self) -> bool:
        return self.size_unknown

    def unavailable_reason(self, method: str) -> str | None:
        """Why a method cannot run on this scenario, or None when it can."""
        if self.supported_methods is not None and method not in self.supported_methods:
            model = MODEL_LABELS.get(self.model_name, self.model_name).split(" (")[0]
            return (f"not available for the {model} model (it supports "
                    + ", ".join(METHOD_LABELS.get(m, m) for m in self.supported_methods) + ")")
        if self.release_methods is not None and method not in self.release_methods:
            return (f"not available for {self.release_label} (it is analysed by "
                    + ", ".join(METHOD_LABELS.get(m, m) for m in self.release_methods) + ")")
        if method == "rjmcmc" and not self.unknown_n:
            return "needs an unknown sample size (set Sample size to unknown in the sidebar)"
        if method == "ops" and not self.has_records:
            return "needs the confidential records (simulate or upload a CSV)"
        if method == "exact" and not self.exact_available:
            return "no closed form for this model and mechanism"
        if method == "abc_rejection" and self.far is not None:
            return (f"not run: the release lies {self.far['noise_sds']:.3g} noise sds outside what n records can "
                    "produce, where it would almost never accept a proposal")
        return None

    @property
    def implausible_text(self) -> str | None:
        """The warning shown before anything runs on a release far outside what n records can produce."""
        if self.far is None:
            return None
        return (f"The release s_dp = {release_text(self.s_dp)} lies {plain_number(self.far['noise_sds'], 3)} noise "
                f"standard deviations (noise sd {plain_number(self.far['noise_sd'], 3)}) from anything n = {self.n:,} "
                f"records can produce (nearest: {release_text(self.far['nearest'])}): noise that large has "
                "probability below 1 in 5,000. Check the release and n. The exact methods still "
                "answer (the posterior is pushed to the edge of the prior's range); ABC rejection is not run.")

    def runnable(self, methods) -> list[str]:
        """The methods, in the order given, that can run on this scenario."""
        return [m for m in methods if self.unavailable_reason(m) is None]


def spec_json(spec: Mapping[str, Any]) -> str:
    """Canonical JSON (sorted keys) so equal specs share a cache entry."""
    return json.dumps(spec, sort_keys=True, separators=(",", ":"))


def _to_plain(result: engine.Result) -> dict:
    return {
        "method": result.method,
        "param_names": tuple(result.param_names),
        "draws": np.array(result.draws),
        "s_dp": np.array(result.s_dp),
        "sample_stats": {k: np.array(v) for k, v in result.sample_stats.items()},
        "info": plain(result.info),
        "density": None if result.density is None else
        {k: (np.array(g), np.array(p)) for k, (g, p) in result.density.items()},
    }


def _from_plain(d: Mapping[str, Any]) -> engine.Result:
    return engine.Result(**d)


def _run_record(method: str, payload: Mapping[str, Any]) -> MethodRun:
    if "error" in payload:
        return MethodRun(method=method, error=payload["error"])
    summary = pd.DataFrame(payload["summary"]["data"], index=payload["summary"]["index"],
                           columns=payload["summary"]["columns"])
    summary.attrs["convergence"] = payload["convergence"]
    return MethodRun(method=method, result=_from_plain(payload["result"]), summary=summary,
                     convergence=payload["convergence"])


def _payload(result: engine.Result) -> dict:
    table = engine.summary(result)
    return {"result": _to_plain(result), "summary": table.to_dict(orient="split"),
            "convergence": table.attrs["convergence"]}
