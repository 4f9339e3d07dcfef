"""Issue 23: what the clamped records' raw-y refresh buys DA-MCMC for linear_regression.

    python bench/regression_refresh.py [--cells n:eps:mech:m,..] [--draws D] [--out FILE]

For each cell (n, epsilon, mechanism, records per iteration m; the model's defaults and its default
true beta, seed 1) DA-MCMC runs twice on the same release, 4 chains x D draws after 500 warm-up: with
``clamped_per_iteration = 0`` (Algorithm 1 with partial sweeps, as before) and with the refresh of
every clamped record each iteration (the default). Printed per run: wall time, min bulk / tail ESS,
ESS per second, max R-hat, the integrated autocorrelation time IAT = draws / (bulk ESS per chain) of the
worst coefficient, and the (I - 1) n it implies through IAT = 1 + 2 (I - 1) n / m
(:mod:`engine.methods.da_mcmc`), i.e. (IAT - 1) m / 2 record updates per effective draw beyond the window.
"""
from __future__ import annotations

import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

import engine  # noqa: E402
from engine.methods.da_mcmc import da_mcmc  # noqa: E402
from live_map import cell_entries, cells_arguments, emit, keep, regression_spec  # noqa: E402

DEFAULT = "10000:10:laplace:10000,10000:10:gaussian:6025,1000000:10:laplace:20000,1000000:10:gaussian:20000"


def run(n, eps, mech, m, refresh, draws):
    problem = engine.prepare(regression_spec(n, eps, mech))
    t0 = time.perf_counter()
    res = da_mcmc(problem, np.random.default_rng(1), chains=4, draws=draws, warmup=500,
                  records_per_iteration=m if m < n else None, clamped_per_iteration=refresh)
    wall = time.perf_counter() - t0
    table = engine.summary(res)
    bulk, tail = float(table["ess_bulk"].min()), float(table["ess_tail"].min())
    iat = draws / (bulk / 4.0)
    return {"n": n, "epsilon": eps, "mechanism": mech, "m": m, "refresh": "all" if refresh is None else refresh,
            "wall_s": round(wall, 2), "ess_bulk": round(bulk), "ess_tail": round(tail),
            "ess_bulk_per_s": round(bulk / wall, 1), "r_hat": round(float(table["r_hat"].max()), 4),
            "iat": round(iat, 1), "i_minus_1_times_n": round((iat - 1.0) * m / 2.0)}


def main(argv=None) -> int:
    args = cells_arguments(__doc__, DEFAULT).parse_args(argv)
    rows = []
    for n, eps, mech, (m,) in cell_entries(args.cells):
        for refresh in (0, None):
            keep(rows, run(n, eps, mech, int(m), refresh, args.draws))
    emit(rows, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
