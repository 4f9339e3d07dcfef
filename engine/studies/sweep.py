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

Stopping: in process, ``on_progress(done, total)`` (done = cells finished) is called after every
cell and, through each cell's sampler, between its blocks; returning ``False`` stops the sweep. The
cells that finished are returned, the cell that was running is dropped (its draws are cut short) and
named in ``attrs["skipped"]``, and ``attrs["stopped"]`` is True (cells never started are absent).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Mapping

import numpy as np
import pandas as pd

from ..api import prepare, run_method
from ..core.chains import Cancelled
from ..core.results import Result
from ..core.validation import fail, instance, number_list, positive
from ..methods import validate_method
from ..methods.exact import exact_moments, exact_quantiles
from ..numerics.diagnostics import summary
from ..spec import spec_from_dict

__all__ = ["epsilon_spec", "run_cell", "epsilon_sweep", "smallest_epsilon_meeting", "EpsilonAdvice",
           "epsilon_for_target_sd", "exact_interval"]


def epsilon_spec(spec: dict, epsilon: float) -> dict:
    """A copy of ``spec`` whose mechanism spends budget ``epsilon`` (rho = eps^2/2 for Gaussians); ``epsilon`` must be
    a finite number > 0 (0 was returned as a spec with epsilon = 0). The copy is shallow but for the new
    ``[mechanism]`` table: the other tables are shared with ``spec``, which the engine only reads (a deep copy of
    an upload's inline records cost 0.4 s per million records, for every ε of a grid and every page rerun)."""
    if not isinstance(spec, Mapping):
        fail("spec", spec, "must be a spec table (seed, model, mechanism, data)")
    epsilon = positive("epsilon", epsilon)
    s = dict(spec)
    table = s.get("release", s.get("mechanism"))
    if not isinstance(table, Mapping):
        fail("mechanism", table, "must be a table with the noise's name (and sensitivity): an epsilon sweep sets its "
             "budget")
    if "library" in table:
        fail("release", table, "has its library's own fixed noise; an epsilon sweep varies the lab's [mechanism]: "
             "describe the noise with [mechanism] (name and sensitivity) to sweep epsilon")
    mech = {k: v for k, v in s["mechanism"].items() if k in ("name", "sensitivity", "scheme", "k")}
    name = mech.get("name")
    if name in ("gaussian", "discrete_gaussian"):
        mech["rho"] = epsilon**2 / 2.0
    else:
        mech.pop("scheme", None)
        mech["epsilon"] = epsilon
    s["mechanism"] = mech
    return s


def run_cell(spec: dict, epsilon: float, method: dict, on_progress=None) -> Result:
    """One (epsilon, method) cell: prepare the scenario at that budget and run the method."""
    problem = prepare(epsilon_spec(spec, epsilon))
    return run_method(problem, method, spec.get("seed", 0), on_progress=on_progress)


def _rows(eps, result):
    s = summary(result)
    out = []
    for param, row in s.iterrows():
        out.append({"epsilon": eps, "method": result.method, "param": param, "mean": row["mean"], "sd": row["sd"],
                    "q5": row["q5"], "q95": row["q95"], "r_hat": row["r_hat"], "ess_bulk": row["ess_bulk"],
                    "wall_time_s": result.info.get("wall_time_s", np.nan)})
    return out


def check_epsilons(epsilons, field: str = "study.epsilons") -> np.ndarray:
    """A sweep's budget grid: a non-empty list of numbers > 0. A bare number is refused rather than read as a
    grid of one, so that ``epsilon_sweep(spec, 0.5, ...)`` says what it needs instead of a TypeError."""
    if isinstance(epsilons, (str, bytes, Mapping)) or not isinstance(epsilons, (list, tuple, np.ndarray)):
        fail(field, epsilons, "must be a list of epsilon values > 0, e.g. [0.5, 1.0] (a single epsilon as [0.5])")
    eps = number_list(field, list(epsilons))
    if (eps <= 0).any():
        fail(field, list(epsilons), "every epsilon must be > 0")
    return eps


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
    on_progress : callable(done, total), optional
        In process only: called after each cell and between a cell's blocks; ``False`` stops the
        sweep (see the module docstring).

    Returns
    -------
    (pandas.DataFrame, dict)
        One row per (epsilon, method, parameter) with mean, sd, q5, q95, r_hat, ess_bulk,
        wall_time_s; and ``{(epsilon, method_name): Result}`` (empty if ``keep_results`` is False).
        A method that does not apply (e.g. exact without a closed form) is left out and its
        reason recorded in ``DataFrame.attrs["skipped"]``. ``attrs["stopped"]`` says whether
        ``on_progress`` stopped the sweep, ``attrs["cells_done"]`` / ``attrs["cells_total"]`` how far it got.
    """
    eps = check_epsilons(epsilons)
    for m in methods:  # a misspelt method or key, or a spec invalid at every epsilon, is an error, not a skip
        validate_method(m)
    spec_from_dict(epsilon_spec(spec, float(eps[0])))
    cells = [(float(e), dict(m)) for e in eps for m in methods]
    results, skipped = {}, {}
    t0 = time.perf_counter()
    stopped = False
    if client is not None:
        futures = [client.submit(_safe_cell, spec, e, m, pure=False) for e, m in cells]
        outs = client.gather(futures)
    else:
        outs = []
        for i, (e, m) in enumerate(cells):
            outs.append(_safe_cell(spec, e, m, _CellProgress(on_progress, i, len(cells))))
            if outs[-1] is _STOPPED:
                stopped = True
                break
            if on_progress is not None and on_progress(i + 1, len(cells)) is False:
                stopped = i + 1 < len(cells)
                break
    rows = []
    for (e, m), out in zip(cells, outs):
        if out is _STOPPED:
            skipped[(e, m["name"])] = "stopped before it finished"
            continue
        if isinstance(out, str):
            skipped[(e, m["name"])] = out
            continue
        rows.extend(_rows(e, out))
        if keep_results:
            results[(e, m["name"])] = out
    frame = pd.DataFrame(rows)
    frame.attrs["skipped"] = {f"{k[1]} @ {k[0]:g}": v for k, v in skipped.items()}
    frame.attrs["wall_time_s"] = time.perf_counter() - t0
    frame.attrs["stopped"] = stopped
    frame.attrs["cells_done"] = sum(out is not _STOPPED for out in outs)
    frame.attrs["cells_total"] = len(cells)
    return frame, results


_STOPPED = object()  # a cell whose run the caller stopped


class _CellProgress:
    """A cell's sampler reports through this: the sweep's count stays at the cells finished, and the
    caller's ``False`` stops the cell at its next block (remembered, so the sweep stops after it)."""

    def __init__(self, on_progress, done: int, total: int):
        self.on_progress, self.done, self.total, self.stop = on_progress, done, total, False

    def __call__(self, _done, _total):
        if self.on_progress is not None and self.on_progress(self.done, self.total) is False:
            self.stop = True
        return False if self.stop else None


def _safe_cell(spec, e, m, progress=None):
    try:
        out = run_cell(spec, e, m, on_progress=progress)
    except Cancelled:
        return _STOPPED
    except ValueError as exc:
        return str(exc)
    if progress is not None and progress.stop:
        return _STOPPED
    return out


def smallest_epsilon_meeting(frame: pd.DataFrame, target_sd: float, method: str = "exact", param=None):
    """Smallest epsilon on the grid whose posterior sd (for ``method``) is <= ``target_sd``; None if none.
    A method or parameter the frame does not hold, or a target that is not a positive number, is refused
    (it would read as "no epsilon meets it")."""
    instance("frame", frame, pd.DataFrame, "must be the table epsilon_sweep returns (the first of its two values: "
             "frame, results = engine.epsilon_sweep(...))")
    positive("target_sd", target_sd)
    methods = sorted(set(frame["method"])) if "method" in frame else []
    if method not in methods:
        fail("method", method, "is not in the sweep; it holds " + (", ".join(methods) or "no runs"))
    sub = frame[frame["method"] == method]
    if param is not None:
        if param not in set(sub["param"]):
            fail("param", param, "is not in the sweep; it holds " + ", ".join(sorted(set(sub["param"]))))
        sub = sub[sub["param"] == param]
    ok = sub.groupby("epsilon")["sd"].max()
    ok = ok[ok <= target_sd]
    return None if ok.empty else float(ok.index.min())


@dataclass(frozen=True)
class EpsilonAdvice:
    """Which epsilon meets a target posterior sd T, answered by the exact posterior.

    ``verdict`` is ``"met"`` (``epsilon`` is the smallest grid value whose exact sd is <= T),
    ``"beyond_grid"`` (no grid value does; ``beyond`` is the smallest epsilon = max(grid) * 2^k, k <= 10,
    that does, or None), or ``"impossible"`` (T is below ``confidential_sd``, the sd of p(theta | x) that the
    private posterior approaches as epsilon grows: no budget reaches it on these records;
    ``records_needed`` is roughly how many would). ``sds`` maps each grid epsilon to its exact sd."""

    param: str
    target: float
    verdict: str
    sds: dict
    epsilon: float | None = None
    beyond: float | None = None
    confidential_sd: float | None = None
    records_needed: int | None = None


def _exact_problem(spec: dict, epsilon: float):
    problem = prepare(epsilon_spec(spec, epsilon))
    if problem.unknown_n is not None:
        fail("model.n_prior", spec["model"].get("n_prior"), "the exact posterior's moments need a known n (with an "
             "unknown n the exact posterior is RJMCMC's, which has Monte Carlo error)")
    return problem


def _exact_sd(spec: dict, epsilon: float, param: str) -> float:
    return exact_moments(_exact_problem(spec, epsilon))[param][1]


def exact_interval(spec: dict, epsilon: float, param: str) -> tuple[float, float]:
    """(q5, q95) of the exact private posterior of ``param`` at budget ``epsilon``, with no Monte Carlo error
    (:func:`engine.methods.exact.exact_quantiles`): the 90% central interval, which for a skewed posterior is not
    mean -/+ 1.645 sd. Raises ``ValueError`` as :func:`epsilon_for_target_sd` does (an unknown n, no exact form)."""
    q5, q95 = exact_quantiles(_exact_problem(spec, epsilon), params=[param])[param]
    return float(q5), float(q95)


def _round_up(n: float) -> int:
    """n rounded up to two significant digits (a planning figure, not a count to the record)."""
    if n <= 100:
        return int(math.ceil(n))
    step = 10 ** (int(math.floor(math.log10(n))) - 1)
    return int(math.ceil(n / step) * step)


def epsilon_for_target_sd(spec: dict, epsilons, target_sd: float, param: str) -> EpsilonAdvice:
    """The smallest epsilon of the grid at which the exact private posterior's sd of ``param`` is at most
    ``target_sd``, from the exact posterior's moments (:func:`engine.methods.exact.exact_moments`: no
    Monte Carlo error, so the answer does not flip with a sampler's draws).

    When no grid value meets T: if the records are known and T is below the sd of the confidential-data
    posterior p(theta | x), no epsilon can reach it. As epsilon -> infinity the noise vanishes and
    p(theta | s_dp) -> p(theta | x), whose sd is the floor that the budget alone cannot lower on these
    records. The sd shrinks like 1 / sqrt(n) (posterior variance ~ I(theta)^-1 / n), so about
    n (sd_conf / T)^2 records would reach T at a large epsilon (more at a finite one). Otherwise the grid
    is extended upwards by doublings of its largest value to name an epsilon that meets T.

    Raises ``ValueError`` naming ``target_sd`` unless it is a finite number > 0, and the exact method's
    ``ValueError`` where the scenario has no exact form (then ask a sampler's sweep instead)."""
    try:
        target = float(target_sd)
    except (TypeError, ValueError):
        target = math.nan
    if not (math.isfinite(target) and target > 0):
        fail("target_sd", target_sd, "must be a number > 0 (a posterior sd is positive)")
    grid = sorted(float(e) for e in number_list("study.epsilons", list(epsilons)))
    if not grid or grid[0] <= 0:
        fail("study.epsilons", list(epsilons), "must be a non-empty list of numbers > 0")
    sds = {e: _exact_sd(spec, e, param) for e in grid}
    problem = prepare(spec)
    model, conf_sd = problem.model, None
    if problem.records is not None:
        conf_sd = float(model.posterior_marginals(model.suff(problem.records))[param].std())
    met = [e for e in grid if sds[e] <= target]
    if met:
        return EpsilonAdvice(param, target, "met", sds, epsilon=met[0], confidential_sd=conf_sd)
    if conf_sd is not None and target < conf_sd:
        needed = _round_up(model.n * (conf_sd / target) ** 2)
        return EpsilonAdvice(param, target, "impossible", sds, confidential_sd=conf_sd, records_needed=needed)
    beyond = None
    for k in range(1, 11):
        e = grid[-1] * 2.0**k
        if _exact_sd(spec, e, param) <= target:
            beyond = e
            break
    return EpsilonAdvice(param, target, "beyond_grid", sds, beyond=beyond, confidential_sd=conf_sd)
