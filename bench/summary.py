"""Time of a result's summary (R-hat, bulk and tail ESS, MCSE per parameter, and the verdict) against its sampler's
run, for the log-linear model at Ju et al.'s size (80 parameters) and the demo (one parameter).

    .venv/bin/python bench/summary.py [--json]

The summary is computed after every run the app and the command line make; for many parameters it used to
dominate (2.98 s against 0.3 s of DA-MCMC at 4 x 5,000 draws, before ``engine.numerics.rank_diagnostics.diagnose``).
Medians of 5 repeats, the summaries' memo emptied before each (``summary_s``; ``memo_s``: the same draws summarised
again, as auto's verdict and the app's table are); ``estimate_s`` is ``engine.estimate_cost``'s price of run and
summary together.
"""
from __future__ import annotations

import json
import statistics
import sys
import time

import engine
from engine.cost import estimate_cost
from engine.numerics import diagnostics

LOGLINEAR = {"seed": 7, "model": {"name": "naive_bayes_loglinear", "n": 100, "class_levels": 5,
                                  "feature_levels": [3, 3, 3, 3, 3]},
             "mechanism": {"name": "laplace", "epsilon": 1.0}, "data": {"simulate": {"from_prior": True}}}
CASES = {"loglinear_paper_size": (LOGLINEAR, {"name": "da_mcmc", "chains": 4, "draws": 5000, "warmup": 1000}),
         "demo": (engine.DEMO_SPEC, {"name": "da_mcmc", "chains": 2, "draws": 2000, "warmup": 500})}


def _median_s(fn, repeats: int = 5) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    out = {}
    for name, (spec, method) in CASES.items():
        problem = engine.prepare(spec)
        engine.run_method(problem, {**method, "draws": 100, "warmup": 10}, 1)  # kernels loaded
        result = engine.run_method(problem, method, 1)
        out[name] = {"parameters": len(result.param_names), "draws": int(result.draws.shape[0] * result.draws.shape[1]),
                     "run_s": _median_s(lambda: engine.run_method(problem, method, 1)),
                     "summary_s": _median_s(lambda: (diagnostics._TABLES.clear(), engine.summary(result))),
                     "memo_s": _median_s(lambda: engine.summary(result)),
                     "estimate_s": estimate_cost(problem, method).seconds}
    if "--json" in argv:
        print(json.dumps(out))
        return 0
    for name, row in out.items():
        print(f"{name}: {row['parameters']} parameters x {row['draws']:,} draws: run {row['run_s']:.3f} s, "
              f"summary {row['summary_s']:.3f} s (again: {row['memo_s']:.3f} s), estimated {row['estimate_s']:.3f} s "
              "for both")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
