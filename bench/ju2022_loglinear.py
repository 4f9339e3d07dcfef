"""Ju, Gong, Awan & Rao (2022), Sec. 4: the naive-Bayes log-linear model, Fig. 1a/1b (and Table 1) in shape.

    python bench/ju2022_loglinear.py [--quick] [--out DIR] [--workers W]

The paper's design: N = 100 records, I = 5 classes, K = 5 features with J_k = 3 levels, Dirichlet(2)
priors, every two-way table n_ij^k released with Laplace(2K/eps) noise, eps in {.1, .3, 1, 3, 10}.

* Fig. 1a: one confidential data set held fixed, R releases per eps, one DA-MCMC chain each; the
  posterior means of pi_i = P(Y = i) against the confidential-data posterior means (solid) and the
  prior mean 1/I = 0.2 (dashed). Expected shape: near the prior at small eps, near the
  confidential means at large eps.
* Fig. 1b: mean and minimum acceptance of the record sweep per chain against exp(-eps) (Prop. 3.1).
* Table 1 (with ``--coverage``): coverage of 90% intervals of pi_i over fresh data sets.

pi is the paper's Table 1 truth (normalised: its rounded values sum to 0.999); the p[k][i] rows are
drawn once from the Dirichlet(2) prior with a fixed seed. Writes ``posterior_means.csv``,
``summary.csv``, ``fig1.png`` (matplotlib) and prints the checks. ``--quick``: 10 releases of
1500 iterations (500 burn-in) per eps; the paper: 100 releases of 10000 (5000 burn-in).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from engine.studies.replicates import coverage_pivot, epsilon_replicates, replicate_summary  # noqa: E402

EPSILONS = (0.1, 0.3, 1.0, 3.0, 10.0)
PI_TRUE = np.array([0.097, 0.148, 0.145, 0.446, 0.163])
TABLE1 = {0.1: (1, 1, 1, .36, 1), 0.3: (.97, 1, 1, .59, 1), 1.0: (.94, .99, .97, .83, .98),
          3.0: (.95, .91, .97, .89, .93), 10.0: (.92, .88, .94, .92, .9)}


def paper_spec(seed: int = 2022) -> dict:
    rng = np.random.default_rng(seed)
    p = [[rng.dirichlet(np.full(3, 2.0)).tolist() for _ in range(5)] for _ in range(5)]
    return {"seed": seed,
            "model": {"name": "naive_bayes_loglinear", "n": 100, "class_levels": 5, "feature_levels": [3] * 5,
                      "alpha": 2.0},
            "mechanism": {"name": "laplace", "epsilon": 1.0},
            "data": {"simulate": {"pi": (PI_TRUE / PI_TRUE.sum()).tolist(), "p": p}}}


def figure(fixed, summ, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    params = [f"pi[{i}]" for i in range(5)]
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    ax = axes[0]
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, p in enumerate(params):
        sub = fixed[fixed["param"] == p]
        x = np.log10(sub["epsilon"]) + (i - 2) * 0.05
        ax.scatter(x, sub["post_mean"], s=8, color=colors[i], label=p)
        s = summ[summ["param"] == p]
        ax.axhline(float(s["confidential_mean"].iloc[0]), color=colors[i], lw=1)
    ax.axhline(0.2, color="k", ls="--", lw=1)
    ax.set_xlabel("log10 ε")
    ax.set_ylabel("posterior mean of P(Y = i)")
    ax.set_title("Fig. 1a: posterior means (solid: confidential, dashed: prior)")
    ax.legend(fontsize=8)
    ax = axes[1]
    acc = fixed.drop_duplicates(["epsilon", "replicate"])
    ax.scatter(acc["epsilon"] * 1.04, acc["acceptance_mean"], s=10, label="mean acceptance per chain")
    ax.scatter(acc["epsilon"] / 1.04, acc["acceptance_min"], s=10, label="minimum acceptance per chain")
    e = np.geomspace(min(EPSILONS), max(EPSILONS), 100)
    ax.plot(e, np.exp(-e), "k", label="exp(−ε) (Prop. 3.1)")
    ax.set_xscale("log")
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("ε")
    ax.set_ylabel("acceptance rate")
    ax.set_title("Fig. 1b: acceptance vs the bound")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="10 releases of 1500 iterations per eps")
    ap.add_argument("--coverage", action="store_true", help="also Table 1 (coverage over fresh data sets)")
    ap.add_argument("--out", default="out/ju2022_loglinear", help="output directory")
    ap.add_argument("--workers", type=int, default=None)
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    spec = paper_spec()
    r = 10 if args.quick else 100
    method = ({"name": "da_mcmc", "chains": 1, "draws": 1000, "warmup": 500} if args.quick else
              {"name": "da_mcmc", "chains": 1, "draws": 5000, "warmup": 5000})
    t0 = time.perf_counter()
    fixed = epsilon_replicates(spec, EPSILONS, r, method=method, data="fixed", workers=args.workers, batch_size=5)
    fixed = fixed[fixed["param"].str.startswith("pi[")]
    summ = replicate_summary(fixed)
    fixed.to_csv(os.path.join(args.out, "posterior_means.csv"), index=False)
    summ.to_csv(os.path.join(args.out, "summary.csv"), index=False)
    figure(fixed, summ, os.path.join(args.out, "fig1.png"))
    acc = summ.groupby("epsilon")[["acceptance_mean", "acceptance_min", "bound"]].min()
    small, large = summ[summ["epsilon"] == min(EPSILONS)], summ[summ["epsilon"] == max(EPSILONS)]
    print(f"{r} releases per eps, {method['warmup'] + method['draws']} iterations ({method['warmup']} burn-in), "
          f"{time.perf_counter() - t0:.1f} s")
    print("eps   mean acceptance   min acceptance   exp(-eps)")
    for eps, a in acc.iterrows():
        print(f"{eps:>4g}   {a['acceptance_mean']:.3f}             {a['acceptance_min']:.3f}            {a['bound']:.3f}")
    print("posterior mean of pi (mean over releases) / confidential posterior mean / prior:")
    for eps in EPSILONS:
        s = summ[summ["epsilon"] == eps]
        print(f"  eps = {eps:>4g}: " + "  ".join(f"{m:.3f}/{c:.3f}" for m, c in zip(s["post_mean_mean"], s["confidential_mean"])))
    checks = {
        "min acceptance of every chain >= exp(-eps)": bool((acc["acceptance_min"] >= acc["bound"]).all()),
        "posterior means within 0.05 of the prior mean 0.2 at eps = 0.1":
            bool((abs(small["post_mean_mean"] - small["prior_mean"]) < 0.05).all()),
        "posterior means within 0.02 of the confidential means at eps = 10":
            bool((abs(large["post_mean_mean"] - large["confidential_mean"]) < 0.02).all()),
    }
    if args.coverage:
        fresh = epsilon_replicates(spec, EPSILONS, r, method=method, data="fresh", workers=args.workers, batch_size=5)
        cov = coverage_pivot(fresh[fresh["param"].str.startswith("pi[")])
        cov.to_csv(os.path.join(args.out, "coverage.csv"))
        print("coverage of 90% intervals, ours / paper (Table 1):")
        for eps in EPSILONS:
            print(f"  eps = {eps:>4g}: " + "  ".join(f"{cov.loc[eps, f'pi[{i}]']:.2f}/{TABLE1[eps][i]:.2f}"
                                                    for i in range(5)))
    for name, ok in checks.items():
        print(("PASS " if ok else "FAIL ") + name)
    print(f"-> {args.out}")
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
