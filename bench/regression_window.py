"""Issue 23: DA-MCMC's records per iteration for linear_regression at narrow noise, against auto's window.

    python bench/regression_window.py [--cells n:eps:mech:m1/m2/..,..] [--draws D] [--out FILE]

For each cell (n, epsilon, mechanism as in bench/live_map.py, the model's defaults and its default true
beta, seed 1) DA-MCMC runs once per window m on the same release, 4 chains x D draws after 500 warm-up,
with what ``auto`` adds at n = 10^6 (1,000 clamped records refreshed and 10 shift moves an iteration).
Printed per run: wall time, each coefficient's bulk ESS and bulk ESS per second, the minimum tail ESS, the
maximum R-hat, and the window ``auto`` picks for the cell (``auto_window``:
:func:`engine.methods.auto._balanced_window` at n >= 500,000, :func:`engine.methods.auto.regression_window`
below). The defaults are the three n = 10^6 cells whose window is the record sweeps' own (README, "What
holds the n = 10^6 regression cells back"); with D = 2000 (the default) they give the per-window figures quoted there.
"""
from __future__ import annotations

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

import engine  # noqa: E402
from engine.methods.auto import choose  # noqa: E402
from live_map import cell_entries, cells_arguments, emit, keep, regression_spec, timed_run  # noqa: E402

DEFAULT = ("1000000:10:laplace:20000/50000,1000000:1:gaussian:20000/60000/150000,"
           "1000000:10:gaussian:20000/50000/103804")
EXTRA = {"clamped_per_iteration": 1000, "shifts": 10}


def run(problem, m: int, draws: int) -> dict:
    method = {"name": "da_mcmc", "records_per_iteration": m, "chains": 4, "draws": draws, "warmup": 500, **EXTRA}
    return {"m": m, **timed_run(problem, method, 1)[1]}


def main(argv=None) -> int:
    args = cells_arguments(__doc__, DEFAULT).parse_args(argv)
    rows = []
    for n, eps, mech, windows in cell_entries(args.cells):
        problem = engine.prepare(regression_spec(n, eps, mech))
        auto_window = choose(problem, np.random.default_rng(0))[2].get("records_per_iteration")
        for m in windows:
            keep(rows, {"n": n, "epsilon": eps, "mechanism": mech, "auto_window": auto_window,
                        **run(problem, int(m), args.draws)})
    emit(rows, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
