"""Replicate releases over a privacy-budget grid (Ju, Gong, Awan & Rao 2022, Sec. 4).

For each epsilon on the grid, R fresh releases s_dp,r ~ eta_epsilon(. | s(x)) and one chain of the
method on each give the distribution of posterior summaries that a single run hides:

* ``data = "fixed"`` (Fig. 1a/1b): one confidential data set x, held fixed (the spec's records,
  or its simulation at the spec's seed). The posterior means move from the prior mean (small
  epsilon) to the confidential-data posterior mean E[theta | x] (large epsilon); DA-MCMC's mean
  acceptance per chain, and the minimum over its sweeps, stay above exp(-epsilon) (Prop. 3.1).
* ``data = "fresh"`` (Table 1): theta held fixed at the spec's ``simulate`` value, a new data set
  x_r ~ p(x | theta) for every replicate, and the coverage of the chain's central 90% interval
  of each parameter over the R replicates.

Budgets follow :func:`engine.studies.sweep.epsilon_spec` (rho = epsilon^2 / 2 for Gaussian mechanisms).
Seeds: replicate r uses child r of ``SeedSequence(seed).spawn(R)``; the cell (epsilon, r) draws
from a seed derived from that child and the value of epsilon, so adding an epsilon to the grid does
not change the other cells.
"""
from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ..api import prepare, run_method
from ..core.results import Problem
from ..core.spec import Spec, spec_to_dict
from ..core.validation import choice, fail, number_list, positive_int
from ..mechanisms.release import privatize
from ..methods import validate_method
from ..methods.da_mcmc import acceptance_bound
from ..models import make_model
from ..spec import build_mechanism, spec_from_dict
from .calibration import wilson_interval
from .runner import Unit, named_seed, run_units, spawn_seeds
from .sweep import epsilon_spec

__all__ = ["epsilon_replicates", "replicate_summary", "coverage_pivot", "prior_mean", "prior_sd"]

KEY_COLUMNS = ("epsilon", "replicate")


def prior_mean(model) -> np.ndarray:
    """E[theta] under the model's prior (one value per parameter)."""
    if model.name == "beta_binomial":
        return np.array([model.a / (model.a + model.b)])
    if model.name == "poisson_gamma":
        return np.array([model.alpha / model.beta])
    if model.name == "dirichlet_multinomial":
        a = np.asarray(model.alpha, dtype=float)
        return a / a.sum()
    if model.name == "normal_known_sd":
        return np.array([model.prior_mean])
    if model.name == "naive_bayes_loglinear":  # symmetric Dirichlet(alpha) rows: 1/I for pi, 1/J_k for p[k][i]
        return np.concatenate([np.full(model.class_levels, 1.0 / model.class_levels)] +
                              [np.full(model.class_levels * jk, 1.0 / jk) for jk in model.feature_levels])
    if model.name == "linear_regression":  # beta ~ N(0, tau^2 I); sigma^2 ~ InvGamma(a, scale b): b / (a - 1), a > 1
        mean = np.zeros(len(model.param_names))
        if model.unknown_sigma:
            a, b = model.sigma_prior
            mean[-1] = b / (a - 1.0) if a > 1 else math.nan
        return mean
    return np.full(len(model.param_names), math.nan)


def prior_sd(model) -> np.ndarray:
    """The sd of each parameter under the model's prior, in closed form (NaN where the prior has no finite
    variance, or for a custom model): Beta(a, b): sqrt(ab / ((a + b)^2 (a + b + 1))); Gamma(alpha, rate beta):
    sqrt(alpha) / beta; a Dirichlet(alpha) cell is Beta(alpha_j, alpha_0 - alpha_j); the normal prior's sd; the
    log-linear rows are symmetric Dirichlet(alpha) of I (pi) or J_k (p[k][i]) cells; beta_j ~ N(0, prior_sd^2);
    sigma^2 ~ InvGamma(a, scale b) has variance b^2 / ((a - 1)^2 (a - 2)) for a > 2."""
    def beta_sd(a, b):
        a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        return np.sqrt(a * b / ((a + b) ** 2 * (a + b + 1.0)))

    if model.name == "beta_binomial":
        return np.atleast_1d(beta_sd(model.a, model.b))
    if model.name == "poisson_gamma":
        return np.array([math.sqrt(model.alpha) / model.beta])
    if model.name == "dirichlet_multinomial":
        a = np.asarray(model.alpha, dtype=float)
        return beta_sd(a, a.sum() - a)
    if model.name == "normal_known_sd":
        return np.array([float(model.prior_sd)])
    if model.name == "naive_bayes_loglinear":
        al = float(model.alpha)
        rows = [np.full(model.class_levels, float(beta_sd(al, al * (model.class_levels - 1))))]
        rows += [np.full(model.class_levels * jk, float(beta_sd(al, al * (jk - 1)))) for jk in model.feature_levels]
        return np.concatenate(rows)
    if model.name == "linear_regression":
        sd = np.full(len(model.param_names), float(model.prior_sd))
        if model.unknown_sigma:
            a, b = model.sigma_prior
            sd[-1] = b / ((a - 1.0) * math.sqrt(a - 2.0)) if a > 2 else math.nan
        return sd
    return np.full(len(model.param_names), math.nan)


def _confidential_means(model, records) -> np.ndarray:
    marg = model.posterior_marginals(model.suff(records))
    return np.array([float(marg[p].mean()) for p in model.param_names])


def _replicate_unit(payload) -> list[dict]:
    cfg, eps, r, seq = payload
    spec = epsilon_spec(cfg["spec"], eps)
    model = make_model(spec["model"]["name"], spec["model"])
    mech = build_mechanism(spec["mechanism"], model)
    cell_seed = named_seed(seq, f"epsilon={eps!r}")
    rng = np.random.default_rng(np.random.SeedSequence(cell_seed))
    theta = np.asarray(cfg["theta"], dtype=float)
    if cfg["data"] == "fixed":
        records = np.asarray(cfg["records"])
    else:
        records = model.sample_records(rng, theta)
    s_dp = privatize(model, mech, records, rng, check=False)
    problem = Problem(model=model, mechanism=mech, s_dp=s_dp, records=records)
    conf = _confidential_means(model, records)
    try:
        result = run_method(problem, cfg["method"], cell_seed)
        error = ""
    except ValueError as exc:
        result, error = None, str(exc)
    bound = acceptance_bound(problem)
    acc = None if result is None else result.sample_stats.get("acceptance_rate")
    rows = []
    for j, param in enumerate(model.param_names):
        row = {"epsilon": eps, "replicate": r, "param": param, "theta_true": float(theta[j]),
               "confidential_mean": float(conf[j]), "prior_mean": float(prior_mean(model)[j]),
               "post_mean": math.nan, "post_sd": math.nan, "q5": math.nan, "q95": math.nan, "covered_90": False,
               "acceptance_mean": math.nan, "acceptance_min": math.nan,
               "bound": math.nan if bound is None else float(bound), "error": error}
        if result is not None:
            x = result.draws[:, :, j].ravel()
            q5, q95 = np.quantile(x, [0.05, 0.95])
            row.update(post_mean=float(x.mean()), post_sd=float(x.std(ddof=1)), q5=float(q5), q95=float(q95),
                       covered_90=bool(q5 <= theta[j] <= q95))
            if acc is not None and np.size(acc):
                a = np.asarray(acc, dtype=float)
                row.update(acceptance_mean=float(a.mean(axis=1).mean()), acceptance_min=float(a.min()))
        rows.append(row)
    return rows


def epsilon_replicates(spec: Spec | Mapping[str, Any], epsilons: Sequence[float], replicates: int, *,
                       method: Mapping[str, Any] | None = None, data: str = "fixed", seed: int | None = None,
                       executor=None, workers: int | None = None, batch_size: int = 1, on_progress=None,
                       store: str | None = None) -> pd.DataFrame:
    """R releases per epsilon, one chain each (Ju et al. 2022, Sec. 4).

    Parameters
    ----------
    spec : Spec or dict
        Model, mechanism (its budget is replaced by each epsilon) and data: ``simulate`` gives
        theta (needed for ``data = "fresh"`` and for coverage); ``records``/``csv`` fix x.
    epsilons : sequence of float
    replicates : int
        R, releases per epsilon.
    method : dict, optional
        The [method] table; default one DA-MCMC chain, 2000 draws after 1000 warm-up.
    data : {"fixed", "fresh"}
        Hold the confidential data fixed (Fig. 1a/1b) or redraw it from theta per replicate (Table 1).
    executor, workers, batch_size, on_progress, store
        As in :func:`engine.studies.calibration.calibration_study`.

    Returns
    -------
    pandas.DataFrame
        One row per (epsilon, replicate, param): ``post_mean``, ``post_sd``, ``q5``, ``q95``,
        ``covered_90``, ``theta_true``, ``confidential_mean`` (E[theta | x] of that replicate's
        data), ``prior_mean``, ``acceptance_mean`` and ``acceptance_min`` (DA-MCMC), ``bound``
        (exp(-epsilon) where Prop. 3.1 applies) and ``error``.
    """
    spec = spec if isinstance(spec, Spec) else spec_from_dict(spec)
    eps = number_list("epsilons", list(epsilons))
    if eps.size == 0 or (eps <= 0).any():
        fail("epsilons", list(epsilons), "must be a non-empty list of numbers > 0")
    r_count = positive_int("replicates", replicates, 1, 10_000_000)
    data = choice("data", data, ("fixed", "fresh"))
    table = dict(method or {"name": "da_mcmc", "chains": 1, "draws": 2000, "warmup": 1000})
    validate_method(table)
    seed = spec.seed if seed is None else positive_int("seed", seed, 0, 2**63 - 1)
    model = make_model(spec.model["name"], spec.model)
    if "simulate" in spec.data:
        theta = model.theta_from(spec.data["simulate"])
    elif data == "fresh":
        fail("data", dict(spec.data), "data = 'fresh' needs data.simulate = {...}: the true parameter to redraw "
             "records from")
    else:
        theta = np.full(len(model.param_names), math.nan)
    records = None
    if data == "fixed":
        problem = prepare(spec)
        if problem.records is None:
            fail("data", dict(spec.data), "the replicate study needs the confidential records (simulate, csv or "
                 "records), not a typed s_dp")
        records = problem.records.tolist()
    plain = spec_to_dict(spec)
    plain["data"] = {"simulate": dict(spec.data["simulate"])} if "simulate" in spec.data else {"records": records}
    cfg = {"study": "epsilon_replicates", "spec": plain, "method": table, "data": data,
           "theta": theta.tolist(), "records": records}
    seqs = spawn_seeds(seed, r_count)
    units = [Unit((float(e), r), (cfg, float(e), r, seqs[r])) for e in eps for r in range(r_count)]
    out = run_units(_replicate_unit, units, KEY_COLUMNS, executor=executor, workers=workers, batch_size=batch_size,
                    on_progress=on_progress, store=store, config={**cfg, "seed": seed, "epsilons": eps.tolist(),
                                                                  "replicates": r_count})
    out.attrs["config"] = {**cfg, "seed": seed, "epsilons": eps.tolist(), "replicates": r_count}
    return out


def replicate_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per (epsilon, param): mean and sd of the posterior means over replicates, the confidential
    and prior means, 90% coverage with 95% Wilson bounds, mean and minimum acceptance, the bound."""
    rows = []
    for (eps, param), g in table.groupby(["epsilon", "param"], sort=True):
        ok = g[g["post_mean"].notna()]
        k, n = int(ok["covered_90"].sum()), int(len(ok))
        lo, hi = wilson_interval(k, n)
        rows.append({"epsilon": eps, "param": param, "R": n, "failed": int(len(g) - n),
                     "post_mean_mean": float(ok["post_mean"].mean()), "post_mean_sd": float(ok["post_mean"].std(ddof=1))
                     if n > 1 else math.nan, "confidential_mean": float(g["confidential_mean"].mean()),
                     "prior_mean": float(g["prior_mean"].iloc[0]), "theta_true": float(g["theta_true"].iloc[0]),
                     "coverage_90": k / n if n else math.nan, "coverage_90_lo": lo, "coverage_90_hi": hi,
                     "acceptance_mean": float(ok["acceptance_mean"].mean()),
                     "acceptance_min": float(ok["acceptance_min"].min()), "bound": float(g["bound"].iloc[0])})
    return pd.DataFrame(rows)


def coverage_pivot(table: pd.DataFrame) -> pd.DataFrame:
    """Table 1 layout: rows epsilon, columns parameters, cells the 90% coverage."""
    s = replicate_summary(table)
    return s.pivot(index="epsilon", columns="param", values="coverage_90")
