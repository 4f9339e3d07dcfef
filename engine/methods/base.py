"""What a method is to the registry: a name, what it claims, its [method] keys and one entry point.

Every method module defines ``METHOD = Method(...)``; :mod:`engine.methods` collects them. The
entry point takes the validated ``[method]`` table (the common keys ``chains``, ``draws``,
``warmup``, ``grid_size`` with defaults filled in, plus the method's own keys) and adapts it to the
algorithm's keyword arguments, so :func:`engine.run_method` never special-cases a method.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping

import numpy as np

__all__ = ["Method", "COMMON_KEYS", "check_model_supported", "check_mechanism_supported"]

COMMON_KEYS = frozenset({"name", "chains", "draws", "warmup", "grid_size"})


def _no_keys(table: Mapping[str, Any], out: dict) -> None:
    return None


def check_model_supported(method: str, model) -> None:
    """A model that lists the methods serving it (``model.methods``) refuses every other one, with the
    model's reason when it gives one (``model.refusals[method]``)."""
    allowed = getattr(model, "methods", None)
    if allowed is not None and method not in allowed:
        why = getattr(model, "refusals", {}).get(method)
        raise ValueError(f"method.name = {method!r} is invalid for model {model.name}: supported methods are "
                         + ", ".join(allowed) + (f" ({method}: {why})" if why else ""))


def check_mechanism_supported(method: str, mechanism) -> None:
    """A release that lists the methods able to analyse it (``mechanism.methods``: OpenDP's mean, whose law
    involves n) refuses every other one."""
    allowed = getattr(mechanism, "methods", None)
    if allowed is not None and method not in allowed:
        raise ValueError(f"method.name = {method!r} is invalid for {mechanism.describe()}: supported methods are "
                         + ", ".join(allowed))


@dataclass(frozen=True)
class Method:
    """One inference method.

    Attributes
    ----------
    name : str
        The spec's ``method.name`` and the CLI's ``--method`` value.
    claim : str
        ``"exact"`` (draws from p(theta | s_dp), up to Monte Carlo error), ``"approximate"``
        (labelled as such everywhere), ``"baseline"`` (a comparison that is not the private
        posterior) or ``"estimator"`` (a point estimate with a standard error).
    paper : str
        Where the algorithm comes from.
    run : callable(problem, rng, settings, on_progress) -> Result
    keys : frozenset of str
        ``[method]`` keys this method accepts beyond :data:`COMMON_KEYS`.
    validate : callable(table, out)
        Checks the method's own keys in ``table`` and writes them to ``out`` (raise ValueError
        naming ``method.<key>``).
    mcmc : bool
        Its draws are a Markov chain: every summary carries the convergence verdict
        (:func:`engine.numerics.diagnostics.convergence`).
    unknown_n : bool
        It handles an unknown sample size (``problem.unknown_n``). Any other method run on such a
        problem runs at the naive plug-in n = round(n_dp) (the problem's ``model.n``), and its
        result says so: ``info["plug_in_n"]`` and a ``note`` (unless the result itself treated n as unknown,
        ``info["unknown_n"]`` or a parameter ``n``: exact on a histogram with a private total, also through auto).
    """

    name: str
    claim: str
    paper: str
    run: Callable[..., Any]
    keys: frozenset = field(default_factory=frozenset)
    validate: Callable[[Mapping[str, Any], dict], None] = _no_keys
    mcmc: bool = False
    unknown_n: bool = False

    def __call__(self, problem, rng: np.random.Generator, settings: Mapping[str, Any], on_progress=None):
        settings = {k: v for k, v in settings.items() if k != "name"}
        check_model_supported(self.name, problem.model)
        check_mechanism_supported(self.name, problem.mechanism)
        result = self.run(problem, rng, settings, on_progress)
        if self.mcmc and "mcmc" not in result.info:
            result = replace(result, info={**result.info, "mcmc": True})
        treated = result.info.get("unknown_n") or "n" in result.param_names  # the result reports n itself
        if getattr(problem, "unknown_n", None) is not None and not self.unknown_n and not treated:
            n = int(problem.model.n)
            plug = "round(n_dp)" if problem.unknown_n.n_dp is not None else "the released cells' total"
            note = f"n unknown: run at the naive plug-in n = {plug} = {n}"
            old = result.info.get("note")
            result = replace(result, info={**result.info, "plug_in_n": n,
                                           "note": f"{note}; {old}" if old else note})
        return result
