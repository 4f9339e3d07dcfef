"""Issue 23 "Live for every model": the live map as a benchmark.

    python bench/live_map.py [--quick] [--models NAME,..] [--max-seconds S] [--out FILE]

Every cell runs ``auto`` (the app's "Exact (best method)") with the spec defaults (4 chains x 2000
draws, 500 warm-up) on one release, seed 1:

* models: beta_binomial (theta = 0.3), clamped Poisson (poisson_gamma, upper = 5, lam = 3), clamped
  normal (normal_known_sd, sd 1, clamp [-3, 3], mu = 0.5), dirichlet_multinomial k = 5 (alpha = 1,
  p = (.1, .15, .2, .25, .3)), linear_regression p = 2 (the model's defaults and its default true
  beta), naive_bayes_loglinear with 3 classes x (3, 3) levels (theta drawn from the prior, seed 1);
* n in {100, 10^4, 10^6}, epsilon in {0.01, 0.1, 1, 10};
* noise: laplace (epsilon), gaussian and, for integer statistics, discrete_gaussian, both at
  rho = epsilon^2 / 2 (the zCDP level that pure epsilon-DP implies).

A cell is live when bulk and tail ESS per second of the run (``run_method``, after the release is
prepared) are both >= 400 and R-hat <= 1.01 (i.i.d. draws: their number is the ESS, no R-hat). A
cell whose estimated cost (:func:`engine.estimate_cost`) is above ``--max-seconds`` is not run and
is reported with its estimate. Writes JSON (``--out``, default stdout): per cell the model, n,
epsilon, mechanism, method picked, ESS bulk and tail, ESS per second, R-hat, run and prepare wall
time; and the count of live cells per model. Before a cell is timed, a 10-draw run of the method ``auto``
picks compiles its kernels (``--no-warm``: time the first run, numba's compilation included).
``--quick``: Laplace only, n in {100, 10^6},
epsilon in {0.01, 1} (24 cells).
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import time


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import numpy as np  # noqa: E402

import engine  # noqa: E402
from engine.methods.auto import choose, settings_for  # noqa: E402

MODELS = {
    "beta_binomial": ({"name": "beta_binomial"}, {"theta": 0.3}, True),
    "poisson_clamped": ({"name": "poisson_gamma", "upper": 5}, {"lam": 3.0}, True),
    "normal_clamped": ({"name": "normal_known_sd", "sd": 1.0, "lo": -3.0, "hi": 3.0}, {"mu": 0.5}, False),
    "dirichlet_multinomial_k5": ({"name": "dirichlet_multinomial", "alpha": [1.0] * 5},
                                 {"p": [0.1, 0.15, 0.2, 0.25, 0.3]}, True),
    "linear_regression_p2": ({"name": "linear_regression", "p": 2}, {"beta": [-1.79, -2.89, -0.66]}, False),
    "naive_bayes_loglinear_3x33": ({"name": "naive_bayes_loglinear", "class_levels": 3, "feature_levels": [3, 3]},
                                   {"from_prior": True}, True),
}
N_VALUES = (100, 10_000, 1_000_000)
EPSILONS = (0.01, 0.1, 1.0, 10.0)
GOAL = 400.0
RHAT_MAX = 1.01


def mechanism(name: str, eps: float) -> dict:
    if name == "laplace":
        return {"name": "laplace", "epsilon": eps}
    return {"name": name, "rho": eps * eps / 2.0}


def regression_spec(n: int, eps: float, mech: str) -> dict:
    """The regression benchmarks' cell: Ju et al.'s design (p = 2, beta = (-1.79, -2.89, -0.66)) at n records,
    released by ``mech`` at ``eps`` (:func:`mechanism`)."""
    return {"seed": 1, "model": {"name": "linear_regression", "n": n}, "mechanism": mechanism(mech, eps),
            "data": {"simulate": {"beta": [-1.79, -2.89, -0.66]}}}


def planned(problem) -> dict:
    """The [method] table ``auto`` would run on ``problem``: its pick with the settings it computes."""
    picked, _, numbers = choose(problem, np.random.default_rng(0))
    return {"name": picked, **settings_for(picked, problem, numbers)}


def warm(problem) -> None:
    """Compile what the cell's run will use before it is timed: a 10-draw run of the method ``auto`` picks,
    with its settings (numba compiles a kernel on its first call and caches it on disk; the first call after
    an install or a kernel change would otherwise count the compiler's seconds against the cell)."""
    engine.run_method(problem, {**planned(problem), "chains": 1, "draws": 10, "warmup": 10}, 1)


def cell(model_key: str, n: int, eps: float, mech: str, max_seconds: float, warm_first: bool = True) -> dict:
    model, truth, _ = MODELS[model_key]
    spec = {"seed": 1, "model": {**model, "n": n}, "mechanism": mechanism(mech, eps), "data": {"simulate": truth}}
    row = {"model": model_key, "n": n, "epsilon": eps, "mechanism": mech}
    t0 = time.perf_counter()
    problem = engine.prepare(spec)
    row["prepare_s"] = round(time.perf_counter() - t0, 3)
    method = {"name": "auto"}
    est = engine.estimate_cost(problem, method)
    row["estimated_s"] = round(est.seconds, 2)
    if est.seconds > max_seconds:
        row.update(picked=est.detail.split(":")[0].replace("auto picks ", ""), live=False,
                   skipped=f"estimated {est.seconds:,.0f} s > {max_seconds:,.0f} s")
        return row
    if warm_first:
        warm(problem)
    t0 = time.perf_counter()
    result = engine.run_method(problem, method, 1)
    wall = time.perf_counter() - t0
    table = engine.summary(result)
    verdict = table.attrs.get("convergence", {})
    if verdict.get("applicable", True):
        bulk, tail = float(table["ess_bulk"].min()), float(table["ess_tail"].min())
        rhat = float(table["r_hat"].max())
    else:
        bulk = tail = float(result.draws.shape[0] * result.draws.shape[1])
        rhat = 1.0
    row.update(picked=result.info.get("picked"),
               attempts=[a["method"] + (" (skipped)" if a.get("skipped") else "") for a in result.info.get("attempts", [])],
               ess_bulk=round(bulk, 1), ess_tail=round(tail, 1), r_hat=round(rhat, 4), wall_time_s=round(wall, 3),
               ess_bulk_per_s=round(bulk / wall, 1), ess_tail_per_s=round(tail / wall, 1))
    row["live"] = bool(bulk / wall >= GOAL and tail / wall >= GOAL and rhat <= RHAT_MAX)
    return row


def plan(quick: bool, models) -> list[tuple]:
    out = []
    for key in models:
        integer = MODELS[key][2]
        mechs = ("laplace",) if quick else (("laplace", "gaussian", "discrete_gaussian") if integer
                                             else ("laplace", "gaussian"))
        ns = (100, 1_000_000) if quick else N_VALUES
        eps = (0.01, 1.0) if quick else EPSILONS
        out += [(key, n, e, m) for m, n, e in itertools.product(mechs, ns, eps)]
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--models", default=",".join(MODELS), help="comma-separated keys of MODELS")
    ap.add_argument("--max-seconds", type=float, default=120.0)
    ap.add_argument("--out", default=None)
    ap.add_argument("--no-warm", action="store_true", help="time each cell's first run, numba's compilation included")
    args = ap.parse_args(argv)
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    unknown = [m for m in models if m not in MODELS]
    if unknown:
        print(f"--models {unknown[0]!r} is invalid: allowed {', '.join(MODELS)}", file=sys.stderr)
        return 2
    cells = []
    for key, n, eps, mech in plan(args.quick, models):
        keep(cells, cell(key, n, eps, mech, args.max_seconds, not args.no_warm))
    by_model = {m: f"{sum(c['live'] for c in cells if c['model'] == m)} of {sum(c['model'] == m for c in cells)}"
                for m in models}
    res = {"goal_ess_per_s": GOAL, "r_hat_max": RHAT_MAX, "quick": args.quick, "cores": os.cpu_count(),
           "live": sum(c["live"] for c in cells), "total": len(cells), "by_model": by_model, "cells": cells}
    emit(res, args.out)
    return 0


def emit(obj, out: str | None) -> None:
    """The benchmark's JSON (indent 1) to ``out``, or to stdout when no file is named (shared with the
    regression_* scripts)."""
    text = json.dumps(obj, indent=1)
    if out:
        with open(out, "w") as fh:
            fh.write(text)
    else:
        print(text)


def keep(rows: list, row: dict) -> None:
    """A benchmark's row kept for its JSON and printed at once to stderr, so a long run shows its progress (shared
    with the regression_* and cost_accuracy scripts)."""
    rows.append(row)
    print(json.dumps(row), file=sys.stderr, flush=True)


def timed_run(problem, method: dict, seed: int) -> tuple:
    """The regression scripts' run: ``run_method`` timed, and its row's fields (shared with regression_window and
    regression_tail): (the result, {wall_s, ess_bulk and ess_bulk_per_s per coefficient, ess_tail_min, r_hat_max})."""
    t0 = time.perf_counter()
    res = engine.run_method(problem, method, seed)
    wall = time.perf_counter() - t0
    table = engine.summary(res)
    bulk = [round(float(v)) for v in table["ess_bulk"]]
    return res, {"wall_s": round(wall, 1), "ess_bulk": bulk, "ess_bulk_per_s": [round(b / wall, 1) for b in bulk],
                 "ess_tail_min": round(float(table["ess_tail"].min())),
                 "r_hat_max": round(float(table["r_hat"].max()), 4)}


def cell_entries(cells: str):
    """The regression benchmarks' --cells, entries n:eps:mech:v1/v2/..: (n, epsilon, mechanism, [v1, v2, ..]) for
    each, the variants as text."""
    for entry in cells.split(","):
        n, eps, mech, variants = entry.split(":")
        yield int(n), float(eps), mech, variants.split("/")


def cells_arguments(doc: str, default: str, draws: bool = True) -> argparse.ArgumentParser:
    """The regression benchmarks' command line: --cells (their default), --draws per chain (unless ``draws`` is
    False), --out."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--cells", default=default)
    if draws:
        ap.add_argument("--draws", type=int, default=2000)
    ap.add_argument("--out", default=None)
    return ap


if __name__ == "__main__":
    raise SystemExit(main())
