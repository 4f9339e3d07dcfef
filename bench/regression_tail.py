"""Issue 23: the tail moves (``tail_records``) on the ancillary chain for linear_regression at n = 10^6.

    python bench/regression_tail.py [--cells n:eps:mech:t1/t2/..,..] [--seeds 1,2,3] [--draws D] [--out FILE]

For each cell (n, epsilon, mechanism as in bench/live_map.py, the model's defaults and its default true beta) and
each seed (the release and the chains both drawn from it, as the live map's seed), DA-MCMC runs once per tail scan
t (records the tail moves scan an iteration; 0 = none) on the same release, 4 chains x D draws after 500 warm-up,
with 20 ancillary moves, 200 records and 100 clamped records refreshed an iteration (``auto``'s ancillary plan).
Printed per run: wall time, each coefficient's bulk ESS and bulk ESS per second, the minimum tail ESS, the maximum
R-hat and the tail moves' count and acceptance. With the defaults it gives the figures of the README's paragraph on
the tail moves.
"""
from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

import engine  # noqa: E402
from live_map import cell_entries, cells_arguments, emit, keep, regression_spec, timed_run  # noqa: E402

DEFAULT = "1000000:0.1:gaussian:0/20000/100000,1000000:1:laplace:0/100000"
PLAN = {"ancillary_moves": 20, "records_per_iteration": 200, "clamped_per_iteration": 100}


def run(problem, tail: int, draws: int, seed: int) -> dict:
    method = {"name": "da_mcmc", "chains": 4, "draws": draws, "warmup": 500, **PLAN, "tail_records": tail}
    res, row = timed_run(problem, method, seed)
    return {"tail_records": tail, **row, "tail_moves": res.info.get("tail_moves")}


def main(argv=None) -> int:
    ap = cells_arguments(__doc__, DEFAULT)
    ap.add_argument("--seeds", default="1")
    args = ap.parse_args(argv)
    rows = []
    for n, eps, mech, tails in cell_entries(args.cells):
        for seed in (int(s) for s in args.seeds.split(",")):
            problem = engine.prepare({**regression_spec(n, eps, mech), "seed": seed})
            for tail in tails:
                keep(rows, {"n": n, "epsilon": eps, "mechanism": mech, "seed": seed,
                            **run(problem, int(tail), args.draws, seed)})
    emit(rows, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
