"""How close ``engine.estimate_cost`` comes to the runs it prices: linear_regression, the method ``auto`` picks
with the settings it would run (and the pseudo-marginal chain where ``auto`` picks it), spec defaults.

    python bench/cost_accuracy.py [--cells N:EPS:MECH,...] [--out FILE]

For each cell: the machine's rates (``engine.cost.machine_rates``), the estimate, and the wall time of the run
(4 chains x 2,000 draws after 500 warm-up, this machine's cores), as JSON. ``tests/test_cost_accuracy.py`` prices
the recorded cells again at the recorded rates and holds the estimate within a factor of two of the recorded
run (the estimate's stated accuracy, ``engine/cost.py``), so a change to the cost model is checked against
these measurements without timing anything in the suite. The README quotes the last run
(``bench/results/cost_accuracy_2026-11-27.json``).
"""
from __future__ import annotations

import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

import engine  # noqa: E402
from engine.cost import estimate_cost, machine_rates  # noqa: E402
from engine.methods.auto import choose, settings_for  # noqa: E402
from live_map import cells_arguments, emit, mechanism  # noqa: E402

DEFAULT = ("100:1:laplace,1000:1:laplace,10000:0.01:laplace,1000:10:laplace,10000:10:laplace,10000:1:laplace,"
           "10000:0.1:laplace,100000:10:laplace,100000:1:laplace,100000:0.1:laplace,1000000:10:laplace,"
           "1000000:1:gaussian")


def cell_spec(n: int, eps: float, mech: str) -> dict:
    """The live map's regression cell (bench/live_map.py): Ju et al.'s design at n records."""
    return {"seed": 1, "model": {"name": "linear_regression", "n": n}, "mechanism": mechanism(mech, eps),
            "data": {"simulate": {"beta": [-1.79, -2.89, -0.66]}}}


def planned(problem) -> dict:
    """The [method] table auto would run: its pick with the settings it computes."""
    picked, _, numbers = choose(problem, np.random.default_rng(0))
    return {"name": picked, **settings_for(picked, problem, numbers)}


def run(n: int, eps: float, mech: str, rates: dict) -> dict:
    problem = engine.prepare(cell_spec(n, eps, mech))
    method = planned(problem)
    estimate = estimate_cost(problem, method, rates)
    engine.run_method(problem, {**method, "draws": 20, "warmup": 20}, 1)  # its kernels loaded before it is timed
    t0 = time.perf_counter()
    engine.run_method(problem, method, 1)
    wall = time.perf_counter() - t0
    return {"n": n, "epsilon": eps, "mechanism": mech, "method": method, "estimate_s": round(estimate.seconds, 3),
            "wall_s": round(wall, 3), "ratio": round(estimate.seconds / wall, 2)}


def main(argv=None) -> int:
    args = cells_arguments(__doc__, DEFAULT, draws=False).parse_args(argv)
    rates = machine_rates()
    rows = []
    for cell in args.cells.split(","):
        n, eps, mech = cell.split(":")
        row = run(int(n), float(eps), mech, rates)
        rows.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)
    emit({"rates": rates, "cells": rows}, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
