"""Fingerprint every method's draws: one md5 per (scenario, method), to prove a refactor changed nothing.

Runs every method of the registry on a fixed set of small scenarios (every model, every mechanism
family, an unknown n, a custom model, an epsilon sweep and a calibration study) and prints, as JSON,
the md5 of each result's draws and sample statistics, or the error a refused combination gives.
Run it before and after a change that must keep behaviour; the two outputs must be identical::

    python bench/draws_fingerprint.py > before.json
    ... change ...
    python bench/draws_fingerprint.py > after.json && cmp before.json after.json

The md5s are not meant to be stable across machines (numba compiles for the host CPU), only across
code changes on one machine; for that reason they are not a test.
"""
from __future__ import annotations

import hashlib
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import engine  # noqa: E402
from engine.studies import InlineExecutor, calibration_study  # noqa: E402

SMALL = {"chains": 2, "draws": 300, "warmup": 100}

SCENARIOS = {
    "bb_laplace": {"model": {"name": "beta_binomial", "n": 30, "a": 1.0, "b": 1.0},
                   "mechanism": {"name": "laplace", "epsilon": 0.5}, "data": {"simulate": {"theta": 0.3}}},
    "bb_dgauss": {"model": {"name": "beta_binomial", "n": 30, "a": 2.0, "b": 1.0},
                  "mechanism": {"name": "discrete_gaussian", "sigma": 3.0}, "data": {"s_dp": [12]}},
    "bb_rr": {"model": {"name": "beta_binomial", "n": 50},
              "mechanism": {"name": "randomized_response", "epsilon": 1.0}, "data": {"simulate": {"theta": 0.6}}},
    "pg_laplace": {"model": {"name": "poisson_gamma", "n": 1, "alpha": 25.0, "beta": 1.0},
                   "mechanism": {"name": "laplace", "epsilon": 0.2}, "data": {"s_dp": [37.4]}},
    "pg_clamped_gauss": {"model": {"name": "poisson_gamma", "n": 40, "alpha": 2.0, "beta": 1.0, "upper": 6},
                         "mechanism": {"name": "gaussian", "rho": 0.5}, "data": {"simulate": {"lam": 2.5}}},
    "dm_dlaplace": {"model": {"name": "dirichlet_multinomial", "n": 60, "alpha": [1.0, 1.0, 1.0]},
                    "mechanism": {"name": "discrete_laplace", "epsilon": 1.0},
                    "data": {"simulate": {"p": [0.2, 0.3, 0.5]}}},
    "dm_coin": {"model": {"name": "dirichlet_multinomial", "n": 400, "alpha": [1.0, 1.0, 1.0, 1.0]},
                "mechanism": {"name": "randomized_response", "scheme": "coin", "truth_prob": 0.5},
                "data": {"s_dp": [104, 120, 74, 102]}},
    "normal_gauss": {"model": {"name": "normal_known_sd", "n": 40, "sd": 1.0, "lo": -3.0, "hi": 3.0,
                               "prior_mean": 0.0, "prior_sd": 2.0},
                     "mechanism": {"name": "gaussian", "epsilon": 1.0, "delta": 1e-5},
                     "data": {"simulate": {"mu": 0.5}}},
    "loglinear": {"model": {"name": "naive_bayes_loglinear", "n": 200, "class_levels": 2, "feature_levels": [2, 3]},
                  "mechanism": {"name": "laplace", "epsilon": 2.0}, "data": {"simulate": {"from_prior": True}}},
    "regression": {"model": {"name": "linear_regression", "n": 60, "p": 2},
                   "mechanism": {"name": "laplace", "epsilon": 3.0},
                   "data": {"simulate": {"beta": [-1.79, -2.89, -0.66]}}},
    "bb_unknown_n": {"model": {"name": "beta_binomial", "n_prior": {"name": "poisson", "mean": 40}},
                     "mechanism": {"name": "laplace", "epsilon": 1.0},
                     "n_mechanism": {"name": "laplace", "epsilon": 1.0},
                     "data": {"s_dp": [14.2], "n_dp": 41.3}},
}

EXTRA = {"abc_rejection": {"max_seconds": 1e6}, "mcem": {"max_iter": 8}}


def _md5(*arrays) -> str:
    h = hashlib.md5()
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(str(a.dtype).encode() + str(a.shape).encode())
        h.update(a.tobytes())
    return h.hexdigest()


def _frame_md5(frame) -> str:
    """md5 of a study table without its timing columns."""
    keep = [c for c in frame.columns if "seconds" not in c and "wall_time" not in c]
    return hashlib.md5(frame[keep].to_csv().encode()).hexdigest()


def fingerprint(result) -> dict:
    stats = {k: _md5(v) for k, v in sorted(result.sample_stats.items())}
    out = {"draws": _md5(result.draws), "shape": list(result.draws.shape), "sample_stats": stats}
    for key in ("picked", "particles", "proposals", "accepted", "n_pmf"):
        if key in result.info:
            out[key] = repr(result.info[key])
    return out


def run_all() -> dict:
    out = {}
    for label, body in SCENARIOS.items():
        spec = engine.spec_from_dict({"seed": 11, **body, "method": {"name": "naive"}})
        problem = engine.prepare(spec)
        out[f"{label}/s_dp"] = _md5(problem.s_dp)
        for name in engine.METHOD_NAMES:
            method = {"name": name, **SMALL, **EXTRA.get(name, {})}
            try:
                result = engine.run_method(problem, method, seed=5)
            except ValueError as exc:
                out[f"{label}/{name}"] = f"refused: {exc}"
                continue
            out[f"{label}/{name}"] = fingerprint(result)
    out["custom/da_mcmc"] = fingerprint(engine.run_method(_custom_problem(), {"name": "da_mcmc", **SMALL}, seed=3))
    sweep, _ = engine.epsilon_sweep({"seed": 2, **SCENARIOS["bb_laplace"], "method": {"name": "naive"}},
                                 [0.3, 1.0], [{"name": "da_mcmc", **SMALL}, {"name": "exact"}])
    out["sweep"] = _frame_md5(sweep)
    table = calibration_study({"seed": 4, **SCENARIOS["bb_laplace"], "method": {"name": "naive"}},
                              ["exact", "naive"], replicates=6, executor=InlineExecutor())
    out["calibration"] = _frame_md5(table)
    return out


def _custom_problem():
    model = engine.CustomModel(
        n=8, param_names=("theta",),
        latent_sampler=lambda rng, th, size: (rng.random(size) < th[0]).astype(np.int64),
        posterior_sampler=lambda rng, x, th: np.array([rng.beta(1 + x.sum(), 1 + x.size - x.sum())]),
        record_statistic=lambda x: np.asarray(x, float).reshape(-1, 1),
        init_theta=(0.5,),
        log_mechanism=lambda s_dp, s: -abs(float(s_dp[0]) - float(s[0])),
    )
    return engine.Problem(model=model, mechanism=None, s_dp=np.array([3.0]))


if __name__ == "__main__":
    json.dump(run_all(), sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
