"""Calibration of private posteriors: posterior quantiles of the truth, SBC ranks, coverage, MMD.

The check (Cook, Gelman & Rubin 2006; Bernstein & Sheldon 2018, Sec. 4; Talts et al. 2018) rests
on one identity. Draw theta_i ~ p(theta), records x_i ~ p(x | theta_i) and a fresh release
s_dp,i ~ eta(. | s(x_i)). Then theta_i ~ p(theta | s_dp,i) exactly, so with F_i the CDF of the
*private posterior* p(theta | s_dp,i),

    U_i = F_i(theta_i) ~ Uniform(0, 1)   for every i, independently.

A method is calibrated when the quantile of theta_i among its draws, U_i = #{draws < theta_i} / N
(ties count one half), is uniform over replicates. The same holds for the confidential-data
posterior p(theta | x_i) (the reference row ``confidential``); the naive posterior, which reads
s_dp as if it were s(x), is too narrow at the wrong place and piles U near 0 and 1; OPS is too
wide and piles U near 1/2 (Bernstein & Sheldon 2018, Fig. 1b).

Per method and parameter the study reports (:func:`calibration_summary`)

* the Kolmogorov-Smirnov statistic D_M = sup_u |F_M(u) - u| of the M quantiles against
  Uniform(0, 1) and its exact p-value (scipy's ``kstest``); the empirical CDF F_M (:func:`ecdf`);
* the coverage of central c-intervals, c in {0.5, 0.8, 0.9, 0.95}: theta_i lies in the interval
  [q_(1-c)/2, q_(1+c)/2] of the draws exactly when (1 - c)/2 <= U_i <= (1 + c)/2, so coverage is a
  Binomial(M, c) proportion for a calibrated method; error bars are 95% Wilson intervals;
* SBC ranks (Talts et al. 2018): the draws are thinned to L evenly spaced draws shared by the chains
  (L = 99 by default, fewer than the ESS of a healthy chain, which is what makes the thinned draws
  close to independent; :func:`sbc_thin`) and r_i = #{thinned draws < theta_i} in {0..L} is uniform
  for a calibrated method (continuous parameters: no ties); :func:`sbc_histogram` bins them in bins
  of whole ranks;
* utility: the unbiased MMD^2 between the method's draws and the confidential posterior's
  (:mod:`engine.studies.utility`), per replicate.

The Monte Carlo error of U_i (finite N, autocorrelated chains) only blurs U near 0 and 1 by about
sqrt(U (1 - U) / ESS); it does not move the interior of its distribution, so the KS test keeps its
level for exact methods with a few hundred effective draws.

Seeds: replicate r uses child r of ``SeedSequence(seed).spawn(M)``; within it, the data stream and
each method's seed are derived from that child and the method's *name*, so a method's rows do not
depend on which other methods run, on the executor, or on batching.
"""
from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from ..api import confidential_posterior, run_method
from ..core.results import Problem
from ..core.spec import Spec
from ..core.validation import fail, positive_int
from ..mechanisms.release import privatize
from ..methods import REGISTRY, validate_method
from ..models import make_model
from ..numerics.diagnostics import summary
from ..spec import build_mechanism, spec_from_dict
from .runner import Unit, named_seed, run_units, spawn_seeds
from .utility import mmd2_unbiased, thin_draws

__all__ = ["calibration_study", "calibration_summary", "ecdf", "sbc_histogram", "sbc_thin", "coverage_table",
           "LEVELS", "CALIBRATION_COLUMNS", "REFERENCE"]

LEVELS = (0.5, 0.8, 0.9, 0.95)
REFERENCE = "confidential"
KEY_COLUMNS = ("replicate",)
CALIBRATION_COLUMNS = ("replicate", "method", "param", "theta_true", "quantile", "rank", "rank_max", "post_mean",
                       "post_sd", "mmd2", "r_hat", "error")


def child(seq: np.random.SeedSequence, i: int) -> np.random.SeedSequence:
    """The i-th child of ``seq`` without touching its spawn counter (payloads may be shared)."""
    return np.random.SeedSequence(seq.entropy, spawn_key=tuple(seq.spawn_key) + (i,))


def quantile_of(draws: np.ndarray, value: float) -> float:
    """#{draws < value} / N, ties counted one half: the empirical CDF of the draws at ``value``."""
    d = np.asarray(draws, dtype=float).ravel()
    less = np.count_nonzero(d < value)
    equal = np.count_nonzero(d == value)
    return (less + 0.5 * equal) / d.size


def sbc_thin(draws: np.ndarray, size: int) -> np.ndarray:
    """L = min(size, all draws) draws of ``draws`` (chain, draw), evenly spaced within each chain, the
    chains sharing L as evenly as they can (the first L mod chains take one more). Every chain count
    gives the same L, so ranks in {0..L} fill 10 histogram bins of equal width (L = 99: 100 ranks);
    thinning each chain to floor(L / chains) instead gave L = 98 with two chains, whose ranks fall 9
    into one bin and 10 into the others (that bin then reads 10% low against a flat expectation)."""
    d = np.asarray(draws, dtype=float)
    d = d[None] if d.ndim == 1 else d
    chains, n = d.shape
    total = min(int(size), chains * n)
    base, extra = divmod(total, chains)
    parts = []
    for c in range(chains):
        count = base + (1 if c < extra else 0)
        if count:
            parts.append(d[c, np.linspace(0, n - 1, count).round().astype(int)])
    return np.concatenate(parts) if parts else np.empty(0)


def sbc_rank(draws: np.ndarray, value: float, size: int) -> tuple[int, int]:
    """(rank, L): r = #{thinned draws < value} among L thinned draws (:func:`sbc_thin`), r in {0..L}."""
    thinned = sbc_thin(draws if draws.ndim == 2 else draws[..., 0], size)
    return int(np.count_nonzero(thinned < value)), int(thinned.size)


def _r_hat_max(result) -> float:
    if not result.info.get("mcmc") or result.n_chains < 2 or result.n_draws < 4:
        return math.nan
    return float(summary(result, verdict=False)["r_hat"].max())


def _rows(r, name, result, theta, conf, cfg, error=""):
    rows = []
    names = result.param_names if result is not None else cfg["param_names"]
    mmd = math.nan
    if result is not None and conf is not None and name != REFERENCE:
        mmd = mmd2_unbiased(thin_draws(result.draws, cfg["mmd_draws"]), thin_draws(conf.draws, cfg["mmd_draws"]))
    r_hat = _r_hat_max(result) if result is not None else math.nan
    for j, param in enumerate(names):
        row = {"replicate": r, "method": name, "param": param, "theta_true": float(theta[j]),
               "quantile": math.nan, "rank": -1, "rank_max": 0, "post_mean": math.nan, "post_sd": math.nan,
               "mmd2": mmd, "r_hat": r_hat, "error": error}
        if result is not None:
            x = result.draws[:, :, j]
            row["quantile"] = quantile_of(x, theta[j])
            row["rank"], row["rank_max"] = sbc_rank(x, theta[j], cfg["sbc_draws"])
            row["post_mean"] = float(x.mean())
            row["post_sd"] = float(x.std(ddof=1)) if x.size > 1 else math.nan
        rows.append(row)
    return rows


def _calibration_unit(payload) -> list[dict]:
    """One replicate: theta from the prior, records, a fresh release, every method."""
    cfg, r, seq = payload
    model = make_model(cfg["model"]["name"], cfg["model"])
    mech = build_mechanism(cfg["mechanism"], model)
    rng = np.random.default_rng(child(seq, 0))
    theta = model.sample_prior(rng, 1)[0]
    records = model.sample_records(rng, theta)
    s_dp = privatize(model, mech, records, rng, check=False)
    problem = Problem(model=model, mechanism=mech, s_dp=s_dp, records=records,
                      true_params=dict(zip(model.param_names, np.atleast_1d(theta).tolist())))
    conf = None
    rows = []
    if cfg["reference"]:
        conf = confidential_posterior(problem, seed=named_seed(seq, REFERENCE), draws=cfg["reference_draws"])
        rows += _rows(r, REFERENCE, conf, theta, None, cfg)
    for method in cfg["methods"]:
        try:
            result = run_method(problem, method, named_seed(seq, method["name"]))
        except ValueError as exc:
            rows += _rows(r, method["name"], None, theta, None, cfg, error=str(exc))
            continue
        rows += _rows(r, method["name"], result, theta, conf, cfg)
    return rows


def _method_tables(methods) -> list[dict]:
    out = []
    for m in methods:
        table = {"name": m} if isinstance(m, str) else dict(m)
        validate_method(table)
        if REGISTRY[table["name"]].claim == "estimator":  # SBC ranks the truth among posterior draws
            fail("method.name", table["name"], "is not for a calibration study: it gives an estimate and its standard "
                 "error, not posterior draws to rank the truth among")
        out.append(table)
    names = [t["name"] for t in out]
    if len(set(names)) != len(names) or REFERENCE in names:
        fail("methods", names, "must name each method once (the confidential reference is added by reference=True)")
    if not out:
        fail("methods", names, "must name at least one method")
    return out


def calibration_config(spec: Spec | Mapping[str, Any], methods: Sequence, *, sbc_draws: int = 99,
                       mmd_draws: int = 300, reference: bool = True, reference_draws: int = 2000) -> dict:
    """The JSON-able description of a calibration study (what a store is keyed on)."""
    if not isinstance(spec, Spec):
        spec = spec_from_dict(spec)
    if spec.unknown_n:  # it said "model.n = None is invalid: is required", or with n given "not a key of" the model
        also = " and [n_mechanism]" if spec.n_mechanism is not None else ""
        n = spec.model.get("n")
        fail("model.n_prior", spec.model["n_prior"], "is not supported by a calibration study, which needs a known n "
             "(each replicate simulates its records from the prior): "
             + (f"give model.n, the number of records, instead of model.n_prior{also}" if n is None else
                f"remove model.n_prior{also}, and the study runs at model.n = {n}"))
    model = make_model(spec.model["name"], spec.model)
    build_mechanism(spec.mechanism, model)
    return {"study": "calibration", "model": dict(spec.model), "mechanism": dict(spec.mechanism),
            "methods": _method_tables(methods), "param_names": list(model.param_names),
            "sbc_draws": positive_int("sbc_draws", sbc_draws, 1, 100_000),
            "mmd_draws": positive_int("mmd_draws", mmd_draws, 2, 5_000), "reference": bool(reference),
            "reference_draws": positive_int("reference_draws", reference_draws, 2, 1_000_000)}


def calibration_study(spec: Spec | Mapping[str, Any], methods: Sequence, replicates: int, seed: int | None = None, *,
                      sbc_draws: int = 99, mmd_draws: int = 300, reference: bool = True,
                      reference_draws: int = 2000, executor=None, workers: int | None = None,
                      batch_size: int = 1, on_progress=None, store: str | None = None) -> pd.DataFrame:
    """Simulation-based calibration of ``methods`` on the model and mechanism of ``spec``.

    Parameters
    ----------
    spec : Spec or dict
        Its ``[model]`` (prior and n) and ``[mechanism]`` define the study; ``[data]`` is not
        used (each replicate draws theta from the prior and simulates its own records).
    methods : sequence of str or dict
        Method names or ``[method]`` tables, e.g. ``["naive", {"name": "da_mcmc", "chains": 2}]``.
    replicates : int
        M, the number of (theta, records, release) replicates.
    seed : int, optional
        Study seed (default: the spec's); replicate r uses ``SeedSequence(seed).spawn(M)[r]``.
    sbc_draws, mmd_draws : int
        L, thinned draws per SBC rank; draws per sample in the MMD estimate.
    reference : bool
        Add the confidential-data posterior (``method = "confidential"``) and MMD to it.
    executor : concurrent.futures.Executor, optional
        Default a local process pool over ``workers`` processes (all cores unless set), or this
        process for ``workers=1``; ``InlineExecutor()`` runs here too; ``dask.distributed.Client(address)
        .get_executor()`` runs on a cluster, e.g. ``Client(LocalCluster(n_workers=2))``. The pool
        *spawns* its processes, each importing the calling script afresh: a script that runs a study
        on it (``workers`` > 1 or unset) needs ``if __name__ == "__main__":`` around the call, else
        every worker dies while starting up and the study raises BrokenProcessPool.
    workers, batch_size, on_progress, store
        See :func:`engine.studies.runner.run_units` (cancel with ``on_progress`` returning False;
        ``store`` makes the study resumable).

    Returns
    -------
    pandas.DataFrame
        One row per (replicate, method, parameter): ``theta_true``, ``quantile`` (U), ``rank``
        and ``rank_max`` (SBC), ``post_mean``, ``post_sd``, ``mmd2`` (to the confidential
        posterior), ``r_hat`` (max over parameters, MCMC with >= 2 chains) and ``error`` (the
        engine's message when the method did not run; empty otherwise).
    """
    seed_spec = spec if isinstance(spec, Spec) else spec_from_dict(spec)
    m = positive_int("replicates", replicates, 1, 10_000_000)
    seed = seed_spec.seed if seed is None else positive_int("seed", seed, 0, 2**63 - 1)
    cfg = calibration_config(seed_spec, methods, sbc_draws=sbc_draws, mmd_draws=mmd_draws, reference=reference,
                             reference_draws=reference_draws)
    units = [Unit((r,), (cfg, r, seq)) for r, seq in enumerate(spawn_seeds(seed, m))]
    table = run_units(_calibration_unit, units, KEY_COLUMNS, executor=executor, workers=workers,
                      batch_size=batch_size, on_progress=on_progress, store=store, config={**cfg, "seed": seed})
    if table.empty:
        table = pd.DataFrame(columns=list(CALIBRATION_COLUMNS))
    table.attrs["config"] = {**cfg, "seed": seed, "replicates": m}
    return table


# --------------------------------------------------------------------------- summaries
def wilson_interval(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """95% Wilson score interval of a binomial proportion k / n."""
    if n == 0:
        return math.nan, math.nan
    p = k / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return max(0.0, centre - half), min(1.0, centre + half)


def _ok(table: pd.DataFrame) -> pd.DataFrame:
    return table[table["quantile"].notna()]


def calibration_summary(table: pd.DataFrame, levels: Sequence[float] = LEVELS) -> pd.DataFrame:
    """Per (method, param): M, failed runs, KS statistic and p-value against Uniform(0, 1),
    coverage of central intervals with 95% Wilson bounds, mean MMD^2 to the confidential posterior."""
    out = []
    for (method, param), g in table.groupby(["method", "param"], sort=False):
        u = _ok(g)["quantile"].to_numpy(dtype=float)
        row = {"method": method, "param": param, "M": int(u.size), "failed": int(len(g) - u.size)}
        if u.size:
            ks = stats.kstest(u, "uniform")
            row["ks_stat"], row["ks_pvalue"] = float(ks.statistic), float(ks.pvalue)
        else:
            row["ks_stat"] = row["ks_pvalue"] = math.nan
        for c in levels:
            k = int(np.count_nonzero((u >= (1 - c) / 2) & (u <= (1 + c) / 2)))
            tag = f"{round(100 * c)}"
            row[f"coverage_{tag}"] = k / u.size if u.size else math.nan
            row[f"coverage_{tag}_lo"], row[f"coverage_{tag}_hi"] = wilson_interval(k, int(u.size))
        mmd = g["mmd2"].to_numpy(dtype=float)
        row["mmd2_mean"] = float(np.nanmean(mmd)) if np.isfinite(mmd).any() else math.nan
        out.append(row)
    return pd.DataFrame(out)


def coverage_table(summary: pd.DataFrame, levels: Sequence[float] = LEVELS) -> pd.DataFrame:
    """Long form of the coverage columns: method, param, level, coverage, lo, hi."""
    rows = []
    for _, s in summary.iterrows():
        for c in levels:
            tag = f"{round(100 * c)}"
            rows.append({"method": s["method"], "param": s["param"], "level": c, "coverage": s[f"coverage_{tag}"],
                         "lo": s[f"coverage_{tag}_lo"], "hi": s[f"coverage_{tag}_hi"]})
    return pd.DataFrame(rows)


def ecdf(table: pd.DataFrame, method: str, param: str, grid: np.ndarray | None = None):
    """(grid, F_M(grid)): the empirical CDF of one method's quantiles U (Bernstein & Sheldon Fig. 1b)."""
    grid = np.linspace(0.0, 1.0, 101) if grid is None else np.asarray(grid, dtype=float)
    sub = _ok(table[(table["method"] == method) & (table["param"] == param)])
    u = np.sort(sub["quantile"].to_numpy(dtype=float))
    if u.size == 0:
        return grid, np.full(grid.shape, math.nan)
    return grid, np.searchsorted(u, grid, side="right") / u.size


def sbc_histogram(table: pd.DataFrame, method: str, param: str, bins: int = 10):
    """(bin edges, counts, expected count per bin) of one method's SBC ranks in {0..L}."""
    sub = _ok(table[(table["method"] == method) & (table["param"] == param)])
    ranks = sub["rank"].to_numpy(dtype=float)
    L = int(sub["rank_max"].max()) if len(sub) else 0
    cuts = np.unique(np.round(np.linspace(0, L + 1, min(bins, L + 1) + 1)).astype(int))  # whole ranks per bin
    edges = cuts - 0.5
    counts, _ = np.histogram(ranks, bins=edges)
    expected = len(ranks) * np.diff(cuts) / (L + 1)  # ranks uniform on {0..L}: a bin's share is its rank count
    return edges, counts, expected
