"""Iterations per second of the approximate ``bernstein_sheldon`` sampler (issue 11, "Measured").

    python bench/bernstein_sheldon.py [--quick] [--json]

One chain through the public entry point (``engine.run_method``), medians of repeats, per model
(Laplace noise, so the inverse-Gaussian step runs), and beta_binomial at n = 10^3 and 10^6 to show
that the cost of an iteration does not depend on n. Also bulk ESS per second for the paper's
binomial case (n = 1000, epsilon = 0.1), four chains on the machine's cores.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import engine  # noqa: E402

CASES = {
    "beta_binomial n=1e3": ({"name": "beta_binomial", "n": 1000}, [300.0]),
    "beta_binomial n=1e6": ({"name": "beta_binomial", "n": 1_000_000}, [300_000.0]),
    "poisson_gamma": ({"name": "poisson_gamma", "n": 1000, "alpha": 2.0}, [3000.0]),
    "poisson_gamma upper=10": ({"name": "poisson_gamma", "n": 1000, "alpha": 2.0, "upper": 10}, [3000.0]),
    "normal_known_sd": ({"name": "normal_known_sd", "n": 1000}, [300.0]),
    "dirichlet_multinomial k=3": ({"name": "dirichlet_multinomial", "n": 1000, "alpha": [1.0] * 3}, [300.0, 300.0, 400.0]),
    "dirichlet_multinomial k=10": ({"name": "dirichlet_multinomial", "n": 1000, "alpha": [1.0] * 10}, [100.0] * 10),
}


def iterations_per_s(quick: bool = False) -> dict:
    iters = 50_000 if quick else 400_000
    reps = 3 if quick else 5
    out = {}
    for name, (model, s_dp) in CASES.items():
        problem = engine.prepare({"seed": 1, "model": model, "mechanism": {"name": "laplace", "epsilon": 1.0},
                                  "data": {"s_dp": s_dp}})
        k = len(s_dp)
        n_it = max(2000, iters // (k * k // 4 + 1))
        engine.run_method(problem, {"name": "bernstein_sheldon", "chains": 1, "draws": 100, "warmup": 0}, seed=0)
        rates = []
        for r in range(reps):
            res = engine.run_method(problem, {"name": "bernstein_sheldon", "chains": 1, "draws": n_it, "warmup": 0}, seed=r)
            rates.append(n_it / res.info["wall_time_s"])
        out[name] = statistics.median(rates)
    problem = engine.prepare({"seed": 1, "model": {"name": "beta_binomial", "n": 1000, "a": 2.0, "b": 2.0},
                              "mechanism": {"name": "laplace", "epsilon": 0.1}, "data": {"s_dp": [500.0]}})
    res = engine.run_method(problem, {"name": "bernstein_sheldon", "chains": 4, "draws": 2000, "warmup": 500}, seed=1)
    ess = float(engine.summary(res)["ess_bulk"].iloc[0])
    out["paper binomial, 4 x 2000 draws: bulk ESS"] = ess
    out["paper binomial, 4 x 2000 draws: seconds"] = res.info["wall_time_s"]
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    res = iterations_per_s(args.quick)
    if args.json:
        print(json.dumps(res))
        return 0
    for name, v in res.items():
        print(f"{name:45s} {v:14,.4g}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
