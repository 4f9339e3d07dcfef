"""Privacy-budget studies: the same scenario run over a grid of epsilon values and methods.

In simulation mode the confidential records are the same for every epsilon (they come from the
seed's data stream) and each epsilon gets its own privatized release, so the study shows how the
posterior widens as the budget shrinks (Ju et al. 2022, Fig. 1a). Budgets: ``epsilon`` is set
directly for laplace, discrete_laplace and randomized_response; gaussian and discrete_gaussian get
``rho = epsilon^2 / 2`` (pure epsilon-DP implies epsilon^2/2-zCDP; Bun & Steinke 2016), so one
grid serves every mechanism.

Cells run on a local executor (in process, one after another: each DA-MCMC run already uses both
cores) or on a ``dask.distributed`` client for studies that outgrow one machine; both give
identical numbers because every cell is seeded from the spec alone.
"""
from __future__ import annotations

import copy
import time

import numpy as np
import pandas as pd

from .api import prepare, run_method
from .diagnostics import summary
from .results import Result
from .validation import fail, number_list

__all__ = ["epsilon_spec", "run_cell", "epsilon_sweep", "smallest_epsilon_meeting"]


def epsilon_spec(spec: dict, epsilon: float) -> dict:
    """A copy of ``spec`` whose mechanism spends budget ``epsilon`` (rho = eps^2/2 for Gaussians)."""
    s = copy.deepcopy(dict(spec))
    mech = {k: v for k, v in s["mechanism"].items() if k in ("name", "sensitivity", "scheme", "k")}
    name = mech.get("name")
    if name in ("gaussian", "discrete_gaussian"):
        mech["rho"] = epsilon**2 / 2.0
    else:
        mech.pop("scheme", None)
        mech["epsilon"] = epsilon
    s["mechanism"] = mech
    return s


def run_cell(spec: dict, epsilon: float, method: dict) -> Result:
    """One (epsilon, method) cell: prepare the scenario at that budget and run the method."""
    problem = prepare(epsilon_spec(spec, epsilon))
    return run_method(problem, method, spec.get("seed", 0))


def _rows(eps, result):
    s = summary(result)
    out = []
    for param, row in s.iterrows():
        out.append({"epsilon": eps, "method": result.method, "param": param, "mean": row["mean"], "sd": row["sd"],
                    "q5": row["q5"], "q95": row["q95"], "r_hat": row["r_hat"], "ess_bulk": row["ess_bulk"],
                    "wall_time_s": result.info.get("wall_time_s", np.nan)})
    return out


def epsilon_sweep(spec: dict, epsilons, methods, client=None, on_progress=None, keep_results=True):
    """Run every method at every epsilon.

    Parameters
    ----------
    spec : dict
        A spec dictionary (the TOML layout).
    epsilons : sequence of float
        The budget grid (each > 0).
    methods : sequence of dict
        [method] tables, e.g. ``[{"name": "exact"}, {"name": "da_mcmc", "chains": 2}]``.
    client : dask.distributed.Client, optional
        Run cells on the cluster instead of in process.

    Returns
    -------
    (pandas.DataFrame, dict)
        One row per (epsilon, method, parameter) with mean, sd, q5, q95, r_hat, ess_bulk,
        wall_time_s; and ``{(epsilon, method_name): Result}`` (empty if ``keep_results`` is False).
        A method that does not apply (e.g. exact without a closed form) is left out and its
        reason recorded in ``DataFrame.attrs["skipped"]``.
    """
    eps = number_list("study.epsilons", list(epsilons))
    if (eps <= 0).any():
        fail("study.epsilons", list(epsilons), "every epsilon must be > 0")
    cells = [(float(e), dict(m)) for e in eps for m in methods]
    results, skipped = {}, {}
    t0 = time.perf_counter()
    if client is not None:
        futures = [client.submit(_safe_cell, spec, e, m, pure=False) for e, m in cells]
        outs = client.gather(futures)
    else:
        outs = []
        for i, (e, m) in enumerate(cells):
            outs.append(_safe_cell(spec, e, m))
            if on_progress is not None:
                on_progress(i + 1, len(cells))
    rows = []
    for (e, m), out in zip(cells, outs):
        if isinstance(out, str):
            skipped[(e, m["name"])] = out
            continue
        rows.extend(_rows(e, out))
        if keep_results:
            results[(e, m["name"])] = out
    frame = pd.DataFrame(rows)
    frame.attrs["skipped"] = {f"{k[1]} @ {k[0]:g}": v for k, v in skipped.items()}
    frame.attrs["wall_time_s"] = time.perf_counter() - t0
    return frame, results


def _safe_cell(spec, e, m):
    try:
        return run_cell(spec, e, m)
    except ValueError as exc:
        return str(exc)


def smallest_epsilon_meeting(frame: pd.DataFrame, target_sd: float, method: str = "exact", param=None):
    """Smallest epsilon on the grid whose posterior sd (for ``method``) is <= ``target_sd``; None if none."""
    sub = frame[frame["method"] == method]
    if param is not None:
        sub = sub[sub["param"] == param]
    ok = sub.groupby("epsilon")["sd"].max()
    ok = ok[ok <= target_sd]
    return None if ok.empty else float(ok.index.min())
