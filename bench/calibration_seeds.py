"""The evidence behind tests/test_studies.py's KS proof (issue 10): is exact calibrated over many seeds,
and what M detects naive?

    nice -n 10 python bench/calibration_seeds.py [--seeds 100] [--replicates 150] [--out DIR]

1. Seed sweep: the calibration study of the test's SPEC (naive, exact, confidential reference) at M
   replicates for seeds 0..S-1; each method's S KS p-values are tested for uniformity (KS again) and the
   S x M quantiles are pooled and tested.
2. Brute force: for the first ``--check`` seeds, each replicate's theta, records and release are
   recomputed with the study's streams and the exact posterior CDF at theta is computed with scipy alone
   (sum over s of BetaBinomial(s; n, a, b) Laplace(s_dp - s; b) BetaCDF(theta; a + s, b + n - s), no
   engine.exact code): its KS p-value per seed and its largest distance to the quantile among draws.
3. da_mcmc: the same study of da_mcmc alone (the test's settings) for ``--da-mcmc-seeds`` seeds: its KS
   p-values and their uniformity.
4. Power: naive's miss rate (KS p >= alpha) at M in {200, 250, 300}, from 20,000 studies resampled out
   of the pooled naive quantiles.

Writes ``seeds.csv`` (seed, method, ks_stat, ks_pvalue) and prints the summary. About 10 minutes for
100 seeds (and 40 da_mcmc seeds) on one core.
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np
import pandas as pd
from scipy import stats

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))

from engine.mechanisms.release import privatize
from engine.models import make_model
from engine.spec import build_mechanism
from engine.studies import InlineExecutor, calibration_study, calibration_summary
from engine.studies.calibration import child
from engine.studies.runner import spawn_seeds
from test_studies import ALPHA, METHODS, SPEC  # noqa: E402


def brute_force_u(seed: int, replicates: int) -> np.ndarray:
    model = make_model(SPEC["model"]["name"], SPEC["model"])
    mech = build_mechanism(SPEC["mechanism"], model)
    n, a, b, scale = SPEC["model"]["n"], SPEC["model"]["a"], SPEC["model"]["b"], mech.scale
    s = np.arange(n + 1)
    prior_predictive = stats.betabinom.pmf(s, n, a, b)
    out = []
    for seq in spawn_seeds(seed, replicates):
        rng = np.random.default_rng(child(seq, 0))
        theta = model.sample_prior(rng, 1)[0]
        s_dp = privatize(model, mech, model.sample_records(rng, theta), rng)[0]
        w = prior_predictive * stats.laplace.pdf(s_dp - s, scale=scale)
        out.append(float(np.sum(w / w.sum() * stats.beta.cdf(float(np.atleast_1d(theta)[0]), a + s, b + n - s))))
    return np.array(out)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=100)
    ap.add_argument("--replicates", type=int, default=150)
    ap.add_argument("--check", type=int, default=50, help="seeds checked by brute force")
    ap.add_argument("--da-mcmc-seeds", type=int, default=40)
    ap.add_argument("--out", default="out/calibration_seeds")
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    methods = [m for m in METHODS if (m if isinstance(m, str) else m["name"]) != "da_mcmc"]
    rows, tables = [], {}
    for seed in range(args.seeds):
        table = calibration_study(SPEC, methods, replicates=args.replicates, seed=seed, executor=InlineExecutor(),
                                  mmd_draws=20, reference_draws=1000)
        tables[seed] = table
        for method, r in calibration_summary(table).set_index("method").iterrows():
            rows.append({"seed": seed, "method": method, "ks_stat": r["ks_stat"], "ks_pvalue": r["ks_pvalue"]})
    frame = pd.DataFrame(rows)
    frame.to_csv(os.path.join(args.out, "seeds.csv"), index=False)
    pooled = pd.concat(tables.values())
    for method, g in frame.groupby("method"):
        p = g["ks_pvalue"].to_numpy()
        u = pooled[pooled["method"] == method]["quantile"].to_numpy()
        print(f"{method:>12}: KS of its {p.size} p-values p = {stats.kstest(p, 'uniform').pvalue:.3g}; "
              f"#p < 0.05: {(p < 0.05).sum()}, < 0.01: {(p < 0.01).sum()}, < 1e-3: {(p < 1e-3).sum()}, "
              f"min {p.min():.2g}; "
              f"pooled {u.size} quantiles KS p = {stats.kstest(u, 'uniform').pvalue:.3g}")
    worst, ps = 0.0, []
    for seed in range(min(args.check, args.seeds)):
        u = brute_force_u(seed, args.replicates)
        drawn = tables[seed][tables[seed]["method"] == "exact"].sort_values("replicate")["quantile"].to_numpy()
        worst = max(worst, float(np.abs(u - drawn).max()))
        ps.append(stats.kstest(u, "uniform").pvalue)
    print(f"brute-force CDF, seeds 0..{len(ps) - 1}: KS of the p-values p = {stats.kstest(ps, 'uniform').pvalue:.3g}, "
          f"min p {min(ps):.2g}; largest |CDF - quantile among draws| = {worst:.3f}")
    da = [m for m in METHODS if not isinstance(m, str) and m["name"] == "da_mcmc"]
    ps = []
    for seed in range(args.da_mcmc_seeds):
        table = calibration_study(SPEC, da, replicates=args.replicates, seed=seed, executor=InlineExecutor(),
                                  reference=False)
        ps.append(float(calibration_summary(table)["ks_pvalue"].iloc[0]))
    if ps:
        order = np.argsort(ps)
        nxt = ps[order[1]] if len(ps) > 1 else float("nan")
        print(f"da_mcmc, seeds 0..{len(ps) - 1}: KS of the p-values p = {stats.kstest(ps, 'uniform').pvalue:.3g}; "
              f"smallest: seed {order[0]} p = {ps[order[0]]:.2g}, next {nxt:.2g}")
    naive = pooled[pooled["method"] == "naive"]["quantile"].to_numpy()
    rng = np.random.default_rng(1)
    for m in (200, 250, 300):
        miss = np.mean([stats.kstest(rng.choice(naive, m), "uniform").pvalue >= ALPHA for _ in range(20_000)])
        print(f"naive miss rate at M = {m}: {miss:.5f} (alpha = {ALPHA:g})")


if __name__ == "__main__":
    main()
