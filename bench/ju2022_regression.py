"""Ju, Gong, Awan & Rao (2022), Sec. 5: clamped linear regression, Fig. 2 in shape.

    python bench/ju2022_regression.py [--quick] [--out DIR] [--workers W]

The design of paper 000 Sec. 5 and dapper Example 3: n = 100 records, x ~ N_2((0.9, -1.17), I_2),
y = -1.79 - 2.89 x1 - 0.66 x2 + N(0, sigma^2) with sigma^2 = 2, x and y clamped to [-10, 10] and
normalised to [-1, 1], the d = 9 entries of s released with Laplace((p^2 + 3p + 3)/eps) = Laplace(13/eps)
noise, beta ~ N(0, 2^2 I). One confidential data set is held fixed; for each eps, R releases, one
DA-MCMC chain each. Fig. 2: the posterior means of beta against eps, with the confidential-data
posterior means as solid horizontal lines and 0 (the prior mean) dashed. Expected shape: near 0 at
small eps (the release says little and the prior wins), approaching the confidential means as eps
grows, short of them where clamping bites (the paper: "which we do not expect to fully recover due to
clamping").

Writes ``posterior_means.csv``, ``summary.csv``, ``fig2.html`` (plotly) and ``fig2.png`` (plotly
through ``figures/export.py`` when Chromium and kaleido are available, else matplotlib), and prints the
checks. ``--method pseudo_marginal`` runs the pseudo-marginal sampler instead of the paper's DA-MCMC
(at small eps DA-MCMC mixes slowly: its beta steps have the confidential posterior's width).
``--quick``: 10 releases of 1500 iterations (500 burn-in) per eps; the paper: 100 releases
of 10000 (5000 burn-in).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from engine.studies.replicates import epsilon_replicates, replicate_summary

EPSILONS = (0.1, 0.3, 1.0, 3.0, 10.0, 30.0)
BETA_TRUE = [-1.79, -2.89, -0.66]
PARAMS = ("beta[0]", "beta[1]", "beta[2]")


def paper_spec(seed: int = 2022) -> dict:
    return {"seed": seed,
            "model": {"name": "linear_regression", "n": 100, "p": 2, "x_mean": [0.9, -1.17],
                      "x_cov": [[1.0, 0.0], [0.0, 1.0]], "sigma": 2.0 ** 0.5, "lo": -10.0, "hi": 10.0,
                      "prior_sd": 2.0},
            "mechanism": {"name": "laplace", "epsilon": 1.0},
            "data": {"simulate": {"beta": BETA_TRUE}}}


def plotly_figure(fixed, summ):
    import plotly.graph_objects as go

    colors = ("#1f77b4", "#d62728", "#2ca02c")
    fig = go.Figure()
    for i, p in enumerate(PARAMS):
        sub = fixed[fixed["param"] == p]
        x = np.log10(sub["epsilon"].to_numpy()) + (i - 1) * 0.04
        fig.add_trace(go.Scatter(x=x, y=sub["post_mean"], mode="markers", name=f"{p}: posterior mean per release",
                                 marker={"size": 5, "color": colors[i], "opacity": 0.7}))
        conf = float(summ[summ["param"] == p]["confidential_mean"].iloc[0])
        fig.add_hline(y=conf, line={"color": colors[i], "width": 1.5},
                      annotation_text=f"{p} confidential {conf:.2f}", annotation_position="right")
    fig.add_hline(y=0.0, line={"color": "black", "dash": "dash", "width": 1})
    fig.update_layout(title="Private linear regression, β | s_dp with fixed confidential data (Ju et al. 2022, Fig. 2)",
                      xaxis_title="log10 ε", yaxis_title="posterior mean of β", width=900, height=520,
                      legend={"orientation": "h", "y": -0.2}, margin={"r": 190})
    return fig


def matplotlib_png(fixed, summ, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 5))
    for i, p in enumerate(PARAMS):
        sub = fixed[fixed["param"] == p]
        ax.scatter(np.log10(sub["epsilon"]) + (i - 1) * 0.04, sub["post_mean"], s=8, color=f"C{i}", label=p)
        ax.axhline(float(summ[summ["param"] == p]["confidential_mean"].iloc[0]), color=f"C{i}", lw=1)
    ax.axhline(0.0, color="k", ls="--", lw=1)
    ax.set_xlabel("log10 ε")
    ax.set_ylabel("posterior mean of β")
    ax.set_title("Fig. 2: posterior means (solid: confidential, dashed: 0)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def write_png(fig, fixed, summ, path) -> str:
    try:
        from figures.export import png_bytes

        with open(path, "wb") as fh:
            fh.write(png_bytes(fig))
        return "plotly (figures/export.py)"
    except Exception as exc:  # no Chromium / kaleido here: fall back to matplotlib
        matplotlib_png(fixed, summ, path)
        return f"matplotlib ({type(exc).__name__})"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="10 releases of 1500 iterations per eps")
    ap.add_argument("--out", default="out/ju2022_regression", help="output directory")
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--method", default="da_mcmc", choices=("da_mcmc", "pseudo_marginal"),
                    help="the sampler per release (default: the paper's DA-MCMC)")
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    r = 10 if args.quick else 100
    method = ({"name": args.method, "chains": 1, "draws": 1000, "warmup": 500} if args.quick else
              {"name": args.method, "chains": 1, "draws": 5000, "warmup": 5000})
    t0 = time.perf_counter()
    fixed = epsilon_replicates(paper_spec(), EPSILONS, r, method=method, data="fixed", workers=args.workers,
                               batch_size=5)
    summ = replicate_summary(fixed)
    fixed.to_csv(os.path.join(args.out, "posterior_means.csv"), index=False)
    summ.to_csv(os.path.join(args.out, "summary.csv"), index=False)
    fig = plotly_figure(fixed, summ)
    fig.write_html(os.path.join(args.out, "fig2.html"), include_plotlyjs="cdn")
    how = write_png(fig, fixed, summ, os.path.join(args.out, "fig2.png"))
    print(f"{r} releases per eps, {method['warmup'] + method['draws']} iterations ({method['warmup']} burn-in), "
          f"{time.perf_counter() - t0:.1f} s; PNG by {how}")
    print("posterior mean of beta (mean over releases) / confidential posterior mean:")
    for eps in EPSILONS:
        s = summ[summ["epsilon"] == eps]
        print(f"  eps = {eps:>4g}: " + "  ".join(f"{m:+.3f}/{c:+.3f}" for m, c in zip(s["post_mean_mean"],
                                                                                      s["confidential_mean"])))
    acc = summ.groupby("epsilon")[["acceptance_mean", "acceptance_min", "bound"]].min()
    small, large = summ[summ["epsilon"] == min(EPSILONS)], summ[summ["epsilon"] == max(EPSILONS)]
    sd = fixed.groupby(["epsilon", "param"])["post_sd"].mean()
    dist = lambda s: float(np.abs(s["post_mean_mean"] - s["confidential_mean"]).mean())  # noqa: E731
    checks = {} if args.method != "da_mcmc" else {
        "min acceptance of every chain >= exp(-eps)": bool((acc["acceptance_min"] >= acc["bound"]).all())}
    checks.update({
        "at the largest eps the means are closer to the confidential means (average over beta) than at the smallest":
            dist(large) < dist(small),
        "the posterior sd of every coefficient is smaller at the largest eps than at the smallest":
            bool((sd.loc[max(EPSILONS)] < sd.loc[min(EPSILONS)]).all()),
    })
    for name, ok in checks.items():
        print(("PASS " if ok else "FAIL ") + name)
    print(f"-> {args.out}")
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
