"""Compile the engine's numba kernels before the suite runs (``make test`` calls it, in two processes).

numba compiles a kernel on its first call and caches the machine code on disk (``cache=True``); a fresh
clone has no cache. Under ``pytest -n 2`` both workers then meet the same uncached kernels at about the
same time and each compiles them: on a fresh clone the parallel part spent about 230 CPU-seconds
compiling, much of it twice. This script makes one tiny run of every model, noise family and sampler
setting the suite exercises, so that each kernel is compiled once, by one process, before the workers
start. ``python tests/warm_kernels.py PART 2`` runs part PART (0 or 1) of the jobs, split by their measured
compile time so that the two take about as long; without arguments it runs them all.

It checks nothing: a run that raises anything but the ValueError of a refused combination is reported on
stderr and the script exits 1; ``make test`` goes on to the suite, which fails on it with a better message.
Not a test module (no ``test_`` prefix). ``WARM_VERBOSE=1`` also lists the refused combinations.
"""
from __future__ import annotations

import math
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import engine  # noqa: E402

TINY = {"chains": 1, "draws": 6, "warmup": 6}
REG = {"name": "linear_regression", "n": 60, "p": 2}
REG_SIGMA = {**REG, "sigma_prior": {"a": 3.0, "b": 2.0}}
REG_DATA = {"simulate": {"beta": [-1.79, -2.89, -0.66]}}
LAPLACE = {"name": "laplace", "epsilon": 3.0}
BB = {"name": "beta_binomial", "n": 30, "a": 1.0, "b": 1.0}


def _job(model, mechanism, data, methods, **extra):
    """A spec body (``mechanism`` None: ``release`` in ``extra`` instead) and the method tables to run on it."""
    body = {"seed": 1, "model": model, "data": data, **extra}
    if mechanism is not None:
        body["mechanism"] = mechanism
    return body, methods


def jobs() -> list:
    """(part, spec body, [method tables]): part 0 or 1 of ``make test``'s two processes. Compile seconds measured
    on a cleared cache: the regression kernels about 50 (full sweeps 6, the window chain with shifts 17, the
    particle filter 10, the orbit chain 17), the log-linear chains 9, the exact methods' statistic laws and the
    rest about 60; the two parts took 58 and 60 s side by side. What the suite still compiles after this is
    small: kernels some unit tests call directly with argument types of their own."""
    da = {"name": "da_mcmc"}
    reg_sigma = {"simulate": {**REG_DATA["simulate"], "sigma2": 2.0}}
    samplers = [da, {"name": "pseudo_marginal"}, {"name": "abc_rejection"}]
    all_methods = [{"name": m} for m in engine.METHOD_NAMES if m not in ("auto", "naive", "mcem")]
    window = {**da, "records_per_iteration": 20}
    return [
        (0, _job(REG, LAPLACE, REG_DATA, [da, {**window, "shifts": 2}, {**da, "shifts": 2},
                                         {**da, "clamped_per_iteration": 3}])),
        (0, _job(REG_SIGMA, LAPLACE, reg_sigma, [da, {**window, "shifts": 2}, {"name": "abc_rejection"}])),
        (0, _job(REG, LAPLACE, REG_DATA, [{"name": "abc_rejection"}])),
        (1, _job(REG, LAPLACE, REG_DATA, [{"name": "pseudo_marginal"}, {**window, "orbit_moves": 2}])),
        (1, _job(REG_SIGMA, LAPLACE, reg_sigma, [{"name": "pseudo_marginal"}, {**window, "orbit_moves": 2}])),
        (1, _job(REG, {"name": "gaussian", "rho": 0.5}, REG_DATA, [{"name": "auto"}])),
        (0, _job({"name": "naive_bayes_loglinear", "n": 200, "class_levels": 2, "feature_levels": [2, 3]}, LAPLACE,
                 {"simulate": {"from_prior": True}}, all_methods)),
        (0, _job(BB, LAPLACE, {"simulate": {"theta": 0.3}}, all_methods)),
        (0, _job(BB, {"name": "discrete_gaussian", "sigma": 3.0}, {"s_dp": [12]}, all_methods)),
        (0, _job({"name": "beta_binomial", "n": 50}, {"name": "randomized_response", "epsilon": 1.0},
                 {"simulate": {"theta": 0.6}}, all_methods)),
        (1, _job({"name": "poisson_gamma", "n": 40, "alpha": 2.0, "beta": 1.0, "upper": 6},
                 {"name": "gaussian", "rho": 0.5}, {"simulate": {"lam": 2.5}}, all_methods)),
        (1, _job({"name": "poisson_gamma", "n": 1, "alpha": 25.0, "beta": 1.0},
                 {"name": "discrete_laplace", "epsilon": 0.2}, {"s_dp": [37]}, all_methods)),
        (1, _job({"name": "dirichlet_multinomial", "n": 60, "alpha": [1.0, 1.0, 1.0]},
                 {"name": "discrete_laplace", "epsilon": 1.0}, {"simulate": {"p": [0.2, 0.3, 0.5]}}, all_methods)),
        (1, _job({"name": "dirichlet_multinomial", "n": 400, "alpha": [1.0, 1.0, 1.0, 1.0]},
                 {"name": "randomized_response", "scheme": "coin", "truth_prob": 0.5}, {"s_dp": [104, 120, 74, 102]},
                 all_methods)),
        (1, _job({"name": "normal_known_sd", "n": 40, "sd": 1.0, "lo": -3.0, "hi": 3.0, "prior_mean": 0.0,
                  "prior_sd": 2.0}, {"name": "gaussian", "epsilon": 1.0, "delta": 1e-5}, {"simulate": {"mu": 0.5}},
                 all_methods)),
        # clipped and bounded releases: the noise scale is a tuple, numba compiles every sampler again for it
        (0, _job(BB, None, {"s_dp": [0.0]}, samplers,
                 release={"library": "opendp", "mechanism": "laplace", "domain": "int", "scale": 3.0,
                          "clip": [0, math.inf]})),
        (0, _job(BB, None, {"s_dp": [20.0]}, samplers,
                 release={"library": "opendp", "mechanism": "gaussian", "domain": "float", "scale": 2.5,
                          "clip": [-math.inf, 20]})),
        (0, _job({"name": "poisson_gamma", "n": 5, "alpha": 2.0, "beta": 1.0}, None, {"s_dp": [0.5]}, samplers,
                 release={"library": "diffprivlib", "mechanism": "LaplaceBoundedDomain", "epsilon": 1.0,
                          "sensitivity": 1, "lower": 0, "upper": 30})),
        (1, _job({"name": "beta_binomial", "n_prior": {"name": "poisson", "mean": 40}}, LAPLACE,
                 {"s_dp": [14.2], "n_dp": 41.3}, all_methods, n_mechanism=LAPLACE)),
        # unknown n for the other models, OpenDP's mean (the ratio chain), Bernstein-Sheldon on a histogram
        (1, _job({"name": "poisson_gamma", "alpha": 2.0, "beta": 1.0, "n_prior": {"name": "poisson", "mean": 20}},
                 LAPLACE, {"s_dp": [30.5], "n_dp": 19.2}, all_methods, n_mechanism=LAPLACE)),
        (1, _job({"name": "normal_known_sd", "sd": 1.0, "lo": -3.0, "hi": 3.0, "prior_mean": 0.0, "prior_sd": 2.0,
                  "n_prior": {"name": "poisson", "mean": 20}}, LAPLACE, {"s_dp": [8.5], "n_dp": 19.2}, all_methods,
                 n_mechanism=LAPLACE)),
        (1, _job({"name": "normal_known_sd", "sd": 1.5, "lo": 0.0, "hi": 4.0, "prior_mean": 2.0, "prior_sd": 1.0,
                  "n_prior": {"name": "poisson", "mean": 6}}, None, {"s_dp": [3.1]}, [{"name": "pseudo_marginal"}],
                 release={"library": "opendp", "mechanism": "mean", "sum_scale": 1.5, "length_scale": 1.0})),
        (1, _job({"name": "dirichlet_multinomial", "n": 60, "alpha": [1.0, 1.0, 1.0]}, LAPLACE,
                 {"simulate": {"p": [0.2, 0.3, 0.5]}}, all_methods)),
        (0, _job({"name": "naive_bayes_loglinear", "n": 200, "class_levels": 2, "feature_levels": [2, 3]},
                 {"name": "discrete_gaussian", "rho": 0.5}, {"simulate": {"from_prior": True}}, all_methods)),
    ]


def main(part: int, parts: int) -> int:
    failed = 0
    for i, (home, (body, methods)) in enumerate(jobs()):
        if parts == 2 and home != part:
            continue
        t0 = time.perf_counter()
        problem = engine.prepare(engine.spec_from_dict({**body, "method": {"name": methods[0]["name"]}}))
        for method in methods:
            table = {**method, **TINY}
            if method["name"] == "abc_rejection":
                table["max_seconds"] = 5.0
            try:
                engine.run_method(problem, table, seed=1)
            except ValueError as exc:  # a combination the method refuses compiles nothing
                if os.environ.get("WARM_VERBOSE"):
                    print(f"  refused {table}: {exc}", flush=True)
            except Exception as exc:  # noqa: BLE001 - reported, and the exit code says so
                print(f"warm_kernels: {body['model']['name']} {table}: {exc!r}", file=sys.stderr)
                failed = 1
        print(f"warm_kernels[{part}]: job {i} ({body['model']['name']}) {time.perf_counter() - t0:.1f} s", flush=True)
    return failed


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]), int(sys.argv[2])) if len(sys.argv) == 3 else main(0, 1))
