"""Benchmarks for the engine's hot paths (issue: Performance).

    python bench/run.py            # table: median and min of several repeats per case
    python bench/run.py --quick --json   # one JSON object on stdout

Keys: da_mcmc_record_updates_per_s (compiled sweep, beta_binomial + laplace, n = 100000, eps = 1,
one chain), reference_record_updates_per_s (the same Algorithm 1 sweep written as plain
Python/NumPy, what a user would write without this package), speedup, abc_proposals_per_s
(beta_binomial + laplace, n = 1000), scenario_all_methods_s (the app's demo scenario, all methods,
default settings, warm), eps_sweep_s (10 epsilons x all methods on the demo scenario),
first_run_s (fresh interpreter to the first DA-MCMC result, numba loading from its cache),
scaling (seconds per iteration for n = 10^3 .. 10^6), two_chain_record_updates_per_s, and the
versions / CPU count of the machine. From bench/exact_everywhere.py (issue "Exact at every ε"):
small_eps_ess_per_s (da_mcmc vs pseudo_marginal, bulk ESS per second on the issue's two small-ε
cases), small_eps_speedup, and live_map (``auto`` over 4 models x 5 n x 4 ε: cells reaching 400 ESS/s
with R-hat <= 1.01, the slowest cells). From bench/bernstein_sheldon.py: bernstein_sheldon_iterations_per_s
(one chain, per model; the approximate sampler's iterations cost the same at every n).
regression_record_updates_per_s: the linear_regression DA-MCMC sweep (issue 11: p = 2, n = 100000, paper
000 Sec. 5 design, Laplace at eps = 1, one chain), each update p normal draws, two O(p^2) record terms
and a d = 9 noise ratio; bernstein_sheldon does not serve linear_regression, so it has no row here.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import engine  # noqa: E402
from engine.methods.abc_rejection import abc_rejection
from engine.methods.da_mcmc import da_mcmc
from engine.studies.sweep import epsilon_sweep

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bernstein_sheldon as bench_bs  # noqa: E402
import exact_everywhere  # noqa: E402

ALL_METHODS = [{"name": "naive"}, {"name": "exact"}, {"name": "da_mcmc", "chains": 2, "draws": 2000, "warmup": 500},
               {"name": "abc_rejection", "chains": 1, "draws": 2000}, {"name": "ops"}]


def _bb_problem(n, eps=1.0, seed=1):
    spec = {"seed": seed, "model": {"name": "beta_binomial", "n": n},
            "mechanism": {"name": "laplace", "epsilon": eps}, "data": {"simulate": {"theta": 0.3}}}
    return engine.prepare(spec)


def reference_sweep(x, s, theta, s_dp, scale, rng):
    """Algorithm 1's record sweep written plainly: NumPy for the draws, a Python loop for the records."""
    n = x.size
    props = (rng.random(n) < theta).astype(np.int64)
    u = rng.random(n)
    acc = 0
    for i in range(n):
        s_new = s - x[i] + props[i]
        log_ratio = (abs(s_dp - s) - abs(s_dp - s_new)) / scale
        if log_ratio >= 0 or u[i] < np.exp(log_ratio):
            x[i] = props[i]
            s = s_new
            acc += 1
    return s, acc


def time_repeats(fn, repeats):
    out = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def bench_da_mcmc(n, sweeps, repeats, chains=1):
    problem = _bb_problem(n)
    da_mcmc(problem, np.random.default_rng(0), chains=chains, draws=1, warmup=0)  # load compiled code
    times = time_repeats(lambda: da_mcmc(problem, engine.method_rng(1), chains=chains, draws=sweeps, warmup=0,
                                         parallel=True), repeats)
    return [chains * n * sweeps / t for t in times]


def bench_reference(n, sweeps, repeats):
    problem = _bb_problem(n)
    rng = np.random.default_rng(2)
    x = problem.model.sample_records(rng, np.array([0.3]))
    s = int(x.sum())
    scale = problem.mechanism.scale
    sdp = float(problem.s_dp[0])

    def go():
        nonlocal s
        for _ in range(sweeps):
            theta = rng.beta(1 + s, 1 + n - s)
            s, _acc = reference_sweep(x, s, theta, sdp, scale, rng)

    return [n * sweeps / t for t in time_repeats(go, repeats)]


def bench_abc(repeats, proposals):
    problem = _bb_problem(1000)
    rates = []
    for _ in range(repeats):
        r = abc_rejection(problem, np.random.default_rng(3), draws=10**12, max_proposals=proposals, max_seconds=60)
        rates.append(r.info["proposals"] / r.info["wall_time_s"])
    return rates


def bench_scenario(repeats):
    problem = engine.prepare(engine.DEMO_SPEC)

    def go():
        for m in ALL_METHODS:
            engine.run_method(problem, m, 1)
        engine.confidential_posterior(problem, seed=1)

    go()
    return time_repeats(go, repeats)


def bench_sweep(repeats):
    eps = list(np.logspace(-1, 1, 10))
    epsilon_sweep(engine.DEMO_SPEC, eps[:1], ALL_METHODS)
    return time_repeats(lambda: epsilon_sweep(engine.DEMO_SPEC, eps, ALL_METHODS, keep_results=False), repeats)


def bench_regression(sweeps, repeats, n=100_000):
    spec = {"seed": 1, "model": {"name": "linear_regression", "n": n, "p": 2},
            "mechanism": {"name": "laplace", "epsilon": 1.0}, "data": {"simulate": {"beta": [-1.79, -2.89, -0.66]}}}
    problem = engine.prepare(spec)
    da_mcmc(problem, np.random.default_rng(0), chains=1, draws=1, warmup=0)  # load compiled code
    times = time_repeats(lambda: da_mcmc(problem, engine.method_rng(1), chains=1, draws=sweeps, warmup=0),
                         repeats)
    return [n * sweeps / t for t in times]


def bench_first_run(repeats):
    code = ("import numpy as np, engine; from engine.methods.da_mcmc import da_mcmc; "
            "p = engine.prepare(engine.DEMO_SPEC); da_mcmc(p, np.random.default_rng(0), chains=1, draws=10, warmup=0)")
    env = dict(os.environ, PYTHONPATH=ROOT)
    subprocess.run([sys.executable, "-c", code], check=True, env=env)  # populate numba's cache
    return time_repeats(lambda: subprocess.run([sys.executable, "-c", code], check=True, env=env), repeats)


def bench_scaling(quick):
    sizes = [10**3, 10**4, 10**5, 10**6]
    out = {}
    for n in sizes:
        sweeps = max(2, int((2e6 if quick else 2e7) // n))
        rates = bench_da_mcmc(n, sweeps, 1 if quick else 3)
        out[str(n)] = {"seconds_per_iteration": n / max(rates), "record_updates_per_s": max(rates)}
    return out


def _stat(values):
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats and smaller cases")
    ap.add_argument("--json", action="store_true", help="print one JSON object to stdout")
    args = ap.parse_args(argv)
    reps = 3 if args.quick else 7
    n = 100_000
    da = bench_da_mcmc(n, 20 if args.quick else 60, reps)
    ref = bench_reference(n, 1 if args.quick else 2, 2 if args.quick else 3)
    two = bench_da_mcmc(n, 20 if args.quick else 60, reps, chains=2)
    abc = bench_abc(reps, 5_000_000 if args.quick else 20_000_000)
    scen = bench_scenario(reps)
    sweep = bench_sweep(2 if args.quick else 3)
    first = bench_first_run(2 if args.quick else 5)
    small = exact_everywhere.small_eps(2000 if args.quick else 5000, 500 if args.quick else 1000)
    live = exact_everywhere.live_map()
    bs = bench_bs.iterations_per_s(args.quick)
    reg = bench_regression(2 if args.quick else 10, reps)
    import numba

    res = {
        "da_mcmc_record_updates_per_s": statistics.median(da),
        "reference_record_updates_per_s": statistics.median(ref),
        "speedup": statistics.median(da) / statistics.median(ref),
        "two_chain_record_updates_per_s": statistics.median(two),
        "abc_proposals_per_s": statistics.median(abc),
        "scenario_all_methods_s": statistics.median(scen),
        "eps_sweep_s": statistics.median(sweep),
        "first_run_s": statistics.median(first),
        "scaling": bench_scaling(args.quick),
        "small_eps_ess_per_s": small,
        "small_eps_speedup": {k: v["speedup"] for k, v in small.items()},
        "live_map": live,
        "bernstein_sheldon_iterations_per_s": bs,
        "regression_record_updates_per_s": statistics.median(reg),
        "detail": {"da_mcmc": _stat(da), "reference": _stat(ref), "two_chain": _stat(two), "abc": _stat(abc),
                   "regression": _stat(reg),
                   "scenario": _stat(scen), "eps_sweep": _stat(sweep), "first_run": _stat(first)},
        "numba": numba.__version__, "numpy": np.__version__, "python": platform.python_version(),
        "cpu_count": os.cpu_count(), "machine": platform.machine(), "processor": platform.processor(),
    }
    if args.json:
        print(json.dumps(res))
        return 0
    print(f"{'case':38s} {'median':>14s} {'min':>14s}")
    for key, unit, vals in [("da_mcmc (updates/s, 1 chain)", "", da), ("reference Python (updates/s)", "", ref),
                            ("da_mcmc (updates/s, 2 chains)", "", two), ("abc (proposals/s)", "", abc),
                            ("demo scenario, all methods (s)", "", scen), ("eps sweep 10 x all (s)", "", sweep),
                            ("first run, fresh interpreter (s)", "", first),
                            ("linear_regression p=2 (updates/s)", "", reg)]:
        print(f"{key:38s} {statistics.median(vals):14.4g} {min(vals):14.4g}")
    print(f"speedup over reference: {res['speedup']:.0f}x")
    for n_, row in res["scaling"].items():
        print(f"n = {int(n_):>8d}: {row['seconds_per_iteration'] * 1e3:9.3f} ms per iteration")
    for name, row in small.items():
        print(f"small eps, {name}: pseudo_marginal {row['pseudo_marginal']['ess_per_s']:.0f} ESS/s vs da_mcmc "
              f"{row['da_mcmc']['ess_per_s']:.0f} ESS/s ({row['speedup']:.0f}x)")
    print(f"live map: {live['reached']}/{live['total']} cells reach 400 ESS/s with R-hat <= 1.01 {live['by_model']}")
    print(f"numba {res['numba']}, numpy {res['numpy']}, {res['cpu_count']} CPUs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
