"""How close ``engine.estimate_cost`` comes to the runs it prices, where its prices were measured (2026-11-27):
linear_regression with the method and settings ``auto`` runs (spec defaults), and the naive-Bayes log-linear
model's pseudo-marginal table chain over designs of several sizes.

    python bench/cost_accuracy.py [--cells N:EPS:MECH,...] [--loglinear I:J1/J2/..,...] [--out FILE]

For each cell: its spec and [method] table, the estimate at the machine's rates (``engine.cost.machine_rates``,
recorded once) and the wall time of the run (4 chains x 2,000 draws after 500 warm-up, this machine's cores), as
JSON. ``tests/test_cost_accuracy.py`` prices the recorded cells again at the recorded rates and holds each estimate
within the factor of two ``engine/cost.py`` promises of the recorded run, so a change to the cost model is checked
against these measurements without timing anything in the suite. The README quotes the last run
(``bench/results/cost_accuracy_2026-11-27.json``).
"""
from __future__ import annotations

import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

import engine  # noqa: E402
from engine.cost import estimate_cost, machine_rates  # noqa: E402
from live_map import cells_arguments, emit, keep, planned, regression_spec  # noqa: E402

LOGLINEAR = "2:2,3:3/3,4:4/4/4,5:3/3/3/3/3,3:5/5/5/5,6:2/2"
DEFAULT = ("100:1:laplace,1000:1:laplace,10000:0.01:laplace,1000:10:laplace,10000:10:laplace,10000:1:laplace,"
           "10000:0.1:laplace,100000:10:laplace,100000:1:laplace,100000:0.1:laplace,1000000:10:laplace,"
           "1000000:1:gaussian")


def loglinear_spec(classes: int, levels: list) -> dict:
    """A log-linear design at n = 10,000, Laplace epsilon = 1 (the table chain's cost does not depend on n)."""
    return {"seed": 1, "model": {"name": "naive_bayes_loglinear", "class_levels": classes, "feature_levels": levels,
                                 "n": 10_000},
            "mechanism": {"name": "laplace", "epsilon": 1.0}, "data": {"simulate": {"from_prior": True}}}


def run(spec: dict, rates: dict, method: dict | None = None) -> dict:
    """One cell: ``method`` (default: what auto would run) priced, then run once its kernels are loaded."""
    problem = engine.prepare(spec)
    method = method or planned(problem)
    estimate = estimate_cost(problem, method, rates)
    engine.run_method(problem, {**method, "draws": 20, "warmup": 20}, 1)  # its kernels loaded before it is timed
    t0 = time.perf_counter()
    engine.run_method(problem, method, 1)
    wall = time.perf_counter() - t0
    return {"spec": spec, "method": method, "estimate_s": round(estimate.seconds, 3), "wall_s": round(wall, 3),
            "ratio": round(estimate.seconds / wall, 2)}


def main(argv=None) -> int:
    ap = cells_arguments(__doc__, DEFAULT, draws=False)
    ap.add_argument("--loglinear", default=LOGLINEAR, help="designs I:J1/J2/.. (classes, each feature's levels)")
    args = ap.parse_args(argv)
    rates = machine_rates()
    cells = [(regression_spec(int(n), float(eps), mech), None)
             for n, eps, mech in (c.split(":") for c in args.cells.split(",") if c)]
    cells += [(loglinear_spec(int(i), [int(j) for j in js.split("/")]), {"name": "pseudo_marginal"})
              for i, js in (c.split(":") for c in args.loglinear.split(",") if c)]
    rows = []
    for spec, method in cells:
        keep(rows, run(spec, rates, method))
    emit({"rates": rates, "cells": rows}, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
