"""Which latent quantities of linear_regression's DA-MCMC chain mix slowly (issue 23's n = 10^6 cells).

Runs one chain of the live map's regression cell (``bench/live_map.py``: p = 2, the model's defaults, seed 1)
with partial sweeps, the clamped refresh and shift moves, reads the records every ``--every`` iterations, and
prints for each read-out quantity its effective draws per read, its sd and its correlation with beta:
the clamped statistic minus s_dp (``s0..s8``, the release's order), the raw sums (``T0..T8``, the same order
unclamped), the number of records with y at the lower bound (``Nc``), their sum of x1 and x2 (``Sx1c``,
``Sx2c``), their excess below the bound (``Se``) and its x1-weighted sum (``Sx1e``)::

    python bench/regression_modes.py --n 1000000 --mechanism laplace --epsilon 10 \\
        --records 5000 --refresh 1000 --shifts 10 --reads 300 --every 5

At that cell (README, "What holds the n = 10^6 regression cells back") the nine s entries decorrelate within
1-12 reads, while Nc, Se and the raw y sums have 0.02-0.04 effective draws per read and correlate 0.3-0.45
with beta[1]: the slow direction is which records are clamped.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import engine  # noqa: E402
from engine.methods import da_mcmc as dm  # noqa: E402
from engine.numerics.rank_diagnostics import ess_bulk  # noqa: E402
from live_map import MODELS, mechanism  # noqa: E402

WARMUP = 300  # iterations before the first read, sweeping at least 6 n / 500 records each


def read_out(model, x: np.ndarray, s_dp: np.ndarray) -> np.ndarray:
    """The quantities listed in the module docstring for records ``x`` (columns x1, x2, y), p = 2."""
    x1, x2, y = x[:, 0], x[:, 1], x[:, 2]
    lo = float(model.lo[model.p])
    c = y <= lo
    s = np.asarray(model.statistic(x), float) - s_dp
    t = np.array([y.sum(), (x1 * y).sum(), (x2 * y).sum(), (y * y).sum(), x1.sum(), (x1 ** 2).sum(), x2.sum(),
                  (x1 * x2).sum(), (x2 ** 2).sum()])
    e = lo - y[c]
    return np.concatenate([s, t, [c.sum(), x1[c].sum(), x2[c].sum(), e.sum(), (x1[c] * e).sum()]])


NAMES = [f"s{i}" for i in range(9)] + [f"T{i}" for i in range(9)] + ["Nc", "Sx1c", "Sx2c", "Se", "Sx1e"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--mechanism", default="laplace", choices=("laplace", "gaussian"))
    ap.add_argument("--epsilon", type=float, default=10.0)
    ap.add_argument("--records", type=int, default=5000, help="records_per_iteration")
    ap.add_argument("--refresh", type=int, default=1000, help="clamped_per_iteration (-1 all)")
    ap.add_argument("--shifts", type=int, default=10)
    ap.add_argument("--reads", type=int, default=300)
    ap.add_argument("--every", type=int, default=5)
    ap.add_argument("--seed", type=int, default=5)
    args = ap.parse_args(argv)
    model, truth, _ = MODELS["linear_regression_p2"]
    if model.get("p", 2) != 2:
        print("--model: the read-out is written for p = 2", file=sys.stderr)
        return 2
    problem = engine.prepare({"seed": 1, "model": {**model, "n": args.n},
                              "mechanism": mechanism(args.mechanism, args.epsilon), "data": {"simulate": truth}})
    m = problem.model
    runner = dm._Runner(problem, args.records, args.refresh, args.shifts, 0)
    rng = np.random.default_rng(args.seed)
    st = runner.init_state(rng)
    th = np.empty((WARMUP, m.p + 1))
    runner.advance(rng, st, WARMUP, th, np.empty(WARMUP), np.empty(WARMUP),
                   max(args.records, 6 * args.n // 500))
    runner.fit_shift(st, th[WARMUP // 2:])
    rows, betas = [], []
    t0 = time.perf_counter()
    for _ in range(args.reads):
        th = np.empty((args.every, m.p + 1))
        runner.advance(rng, st, args.every, th, np.empty(args.every), np.empty(args.every), args.records)
        rows.append(read_out(m, st.x, np.asarray(problem.s_dp, float)))
        betas.append(th[-1])
    print(f"{args.reads} reads of every {args.every} iterations in {time.perf_counter() - t0:.1f} s")
    r, b = np.array(rows), np.array(betas)
    for j in range(b.shape[1]):
        print(f"beta[{j}] effective draws per read {ess_bulk(b[:, j][None, :]) / args.reads:.3f}")
    for i, name in enumerate(NAMES):
        v = r[:, i]
        corr = [np.corrcoef(v, b[:, j])[0, 1] for j in range(b.shape[1])]
        print(f"{name:5s} effective draws per read {ess_bulk(v[None, :]) / args.reads:.3f}  sd {v.std():10.3f}  "
              "corr with beta " + " ".join(f"{c:+.2f}" for c in corr))
    return 0


if __name__ == "__main__":
    sys.exit(main())
