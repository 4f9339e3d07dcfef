"""The privacy side of an epsilon sweep: for every budget on the grid, what the release protects.

Each epsilon gets the same mechanism at that budget (:func:`engine.studies.sweep.epsilon_spec`:
``epsilon`` for laplace, discrete_laplace and randomized_response, ``rho = epsilon^2 / 2`` for the
Gaussians) and :func:`engine.protection.report.protection_of_spec` computes, without simulating any
data, the informed adversary's belief quantiles and the optimal attack's power at 5% false positives.
Deterministic: no randomness is involved.
"""
from __future__ import annotations

import pandas as pd

from ..core.validation import number_list
from ..protection.report import protection_of_spec
from .sweep import epsilon_spec

__all__ = ["protection_sweep"]


def protection_sweep(spec: dict, epsilons) -> pd.DataFrame:
    """One row per epsilon: ``epsilon``, ``q50``, ``q95``, ``q99``, ``max`` (the informed adversary's
    posterior belief, ``max`` NaN where unbounded), ``power_at_5pct`` and ``advantage_at_5pct``."""
    eps = number_list("epsilons", list(epsilons) if not isinstance(epsilons, (int, float)) else epsilons)
    rows = []
    for e in eps:
        if not e > 0:
            raise ValueError(f"epsilons = {eps.tolist()} is invalid: every epsilon must be > 0")
        out = protection_of_spec(epsilon_spec(spec, float(e)))
        ia = out["informed_adversary"]
        rows.append({"epsilon": float(e), "q50": ia["q50"], "q95": ia["q95"], "q99": ia["q99"],
                     "max": float("nan") if ia["max"] is None else ia["max"],
                     "power_at_5pct": out["power_at_5pct"], "advantage_at_5pct": out["advantage_at_5pct"]})
    return pd.DataFrame(rows)
