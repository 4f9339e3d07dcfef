"""The papers' results as named, one-command reproductions.

==========================  ==========================================================================
preset                      what it reproduces
==========================  ==========================================================================
``gong2020_count``          Gong (2020): Poisson count, Gamma(25, 1) prior, Laplace eps = 0.2,
                            s_dp = 37.4. Exact vs ABC (Alg. 3) vs naive vs prior densities, and the
                            Monte Carlo EM numbers: theta_dp = 37.237, observed information
                            l_dp = 1.582e-2 against the naive 37.4 and 2.674e-2 (169%).
``eng_admissions``          Eng et al. (dapper), Example 1: the 2x2 admissions table under two-coin
                            randomized response; cell probabilities and the odds-ratio posterior,
                            naive vs the exact samplers vs the confidential table.
``bernstein2018_binomial``  Bernstein & Sheldon (2018), Fig. 1a/1b/1c shape: calibration KS vs n at
                            eps in {0.01, 0.1}, the ECDF panel at n = 1000, eps = 0.01, and MMD, for
                            naive, exact samplers, OPS and the confidential posterior.
``ju2022_loglinear``        Ju et al. (2022), Sec. 4, Fig. 1a/1b and Table 1 shape, on the
                            naive_bayes_loglinear model (N = 100, I = 5, K = 5, J_k = 3, every
                            two-way table with Laplace(2K/eps) noise); tables report pi[i].
==========================  ==========================================================================

Each preset has a ``quick`` size (CI; under a minute on two cores) and a full size. It returns a
:class:`PresetResult`: tidy tables, the comparison with the paper's reported numbers as text, and
named figure data; :func:`write_preset` writes the tables as CSV and the text. Figures are built
outside the engine's library (:mod:`figures.studies`; ``import engine`` never loads plotly).

A preset's sizes live in :func:`preset_plan` (what :func:`run_preset` runs and what
:func:`engine.studies.cost.estimate_preset_cost` prices). ``run_preset(..., on_progress=f)`` reports
``f(done, 1000)`` over the preset's stages and stops when ``f`` returns False: the stage under way
stops at its next block (chains) or batch of replicates, and :class:`PresetStopped` is raised, so a
stopped preset returns nothing that could be cached or written. Without ``on_progress`` every
stage runs exactly as before (same tables, same text).
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np
import pandas as pd
from scipy import optimize, special, stats

from ..api import confidential_posterior, prepare, run_method
from ..core.chains import Cancelled
from ..core.results import Problem
from ..core.scenarios import ADMISSIONS_RR_SPEC, GONG_COUNT_SPEC
from ..methods import METHOD_WORDS
from ..methods.exact import exact_mixture
from ..numerics.diagnostics import summary
from .calibration import calibration_study, calibration_summary
from .replicates import coverage_pivot, epsilon_replicates, replicate_summary
from .runner import default_executor

__all__ = ["PRESETS", "PresetResult", "PresetStopped", "run_preset", "write_preset", "PRESET_TITLES", "preset_plan"]


@dataclass(frozen=True)
class PresetResult:
    """A preset's outputs: ``tables`` (name -> DataFrame, written as ``name.csv``), ``text`` (the
    comparison with the paper), ``checks`` (claim -> bool, what the text asserts) and ``data``
    (extra arrays for the figures, e.g. densities)."""

    name: str
    title: str
    quick: bool
    tables: Mapping[str, pd.DataFrame]
    text: str
    checks: Mapping[str, bool] = field(default_factory=dict)
    data: Mapping[str, Any] = field(default_factory=dict)


class PresetStopped(Cancelled):
    """A preset run stopped through its ``on_progress`` callback (it returned False): nothing of it is
    returned, so nothing partial can be cached or written as the preset's result."""


def preset_plan(name: str, quick: bool) -> dict:
    """The fixed settings a preset runs with (the single source of its sizes: :func:`run_preset` runs
    them and :func:`engine.studies.cost.estimate_preset_cost` prices them).

    ``stages`` lists the preset's pieces of work in the order they run, each ``(label, weight)``; the
    weight (replicates for a study, 1 for a single run) only apportions the progress bar."""
    if name == "gong2020_count":
        runs = [{"name": "exact", "chains": 1, "draws": 20_000 if quick else 200_000},
                {"name": "abc_rejection", "chains": 1, "draws": 20_000 if quick else 1_000_000, "max_seconds": 300},
                {"name": "naive", "chains": 1, "draws": 20_000}]
        return {"spec": GONG_COUNT_SPEC, "runs": runs, "stages": [(r["name"], 1.0) for r in runs]}
    if name == "eng_admissions":
        size = {"chains": 2, "draws": 1500, "warmup": 500} if quick else {"chains": 4, "draws": 5000, "warmup": 1000}
        runs = [{"name": "naive", "chains": 1, "draws": 8000}, {"name": "da_mcmc", **size},
                {"name": "pseudo_marginal", **size}]
        return {"spec": ADMISSIONS_RR_SPEC, "records": ADMISSIONS_TRUE, "runs": runs, "confidential_draws": 8000,
                "stages": [(r["name"], 1.0) for r in runs] + [("confidential", 1.0)]}
    if name == "bernstein2018_binomial":
        ns = (10, 100, 1000) if quick else (10, 100, 1000, 10_000)
        eps_grid = (0.01, 0.1)
        m = 60 if quick else 500
        methods = [{"name": "naive", "chains": 1, "draws": 1000},
                   {"name": "exact", "chains": 1, "draws": 1000, "grid_size": 10},
                   {"name": "ops", "k": 100, "truncation": 0.1}]
        if not quick:
            methods.insert(2, {"name": "pseudo_marginal", "chains": 2, "draws": 1000, "warmup": 500})
        cells = [(n, eps) for n in ns for eps in eps_grid]
        return {"ns": ns, "epsilons": eps_grid, "replicates": m, "methods": methods, "cells": cells,
                "spec": lambda n, eps: {"seed": 2018, "model": {"name": "beta_binomial", "n": n, "a": 2.0, "b": 2.0},
                                        "mechanism": {"name": "laplace", "epsilon": eps},
                                        "data": {"simulate": {"theta": 0.5}}},
                "study": {"mmd_draws": 200, "reference_draws": 1000, "batch_size": 5},
                "stages": [(f"n = {n}, eps = {eps:g}", float(m)) for n, eps in cells]}
    if name == "ju2022_loglinear":
        r = 12 if quick else 100
        method = ({"name": "da_mcmc", "chains": 1, "draws": 1000, "warmup": 500} if quick else
                  {"name": "da_mcmc", "chains": 1, "draws": 5000, "warmup": 5000})
        fresh = 2 * r if quick else r
        return {"spec": _ju_spec(), "epsilons": JU_EPSILONS, "replicates": r, "fresh_replicates": fresh,
                "method": method, "batch_size": 5,
                "stages": [("fixed data", float(r * len(JU_EPSILONS))),
                           ("fresh data", float(fresh * len(JU_EPSILONS)))]}
    raise ValueError(f"preset = {name!r} is invalid: must be one of " + ", ".join(PRESETS))


class _Stages:
    """One ``on_progress(done, total)`` over a preset's stages (:func:`preset_plan`): stage i's own
    progress ``(d, t)`` is reported as ``round(1000 (W_<i + w_i d / t) / W)`` of 1000, W the sum of the
    weights. A False from the caller's callback is remembered and returned to the stage (which stops
    at its next block or replicate); :meth:`next` raises :class:`PresetStopped` at the stage's end. With
    no callback every stage gets ``None``, so the preset runs exactly as without progress."""

    SCALE = 1000

    def __init__(self, on_progress, stages):
        self.on_progress = on_progress
        weights = [float(w) for _, w in stages]
        self.total = sum(weights) or 1.0
        self.starts = np.concatenate([[0.0], np.cumsum(weights)])
        self.weights = weights
        self.stage = -1
        self.stopped = False

    def _report(self, position: float):
        answer = self.on_progress(int(round(self.SCALE * min(position / self.total, 1.0))), self.SCALE)
        if answer is False:
            self.stopped = True
        return answer

    def next(self):
        """The callback for the next stage (None without a caller's callback); raises PresetStopped
        when the caller asked to stop during the stage before."""
        self.stage += 1
        if self.on_progress is None:
            return None
        self._report(self.starts[self.stage])
        if self.stopped:
            raise PresetStopped(f"preset stopped after {self.stage} of {len(self.weights)} stages")
        start, weight = self.starts[self.stage], self.weights[self.stage] if self.stage < len(self.weights) else 0.0

        def progress(done, total):
            if self.stopped:
                return False
            frac = min(max(done / total, 0.0), 1.0) if total else 1.0
            return False if self._report(start + weight * frac) is False else None

        return progress

    def finish(self) -> None:
        """The last stage ended: raise PresetStopped if the caller asked to stop during it, else report
        the whole preset done."""
        if self.on_progress is not None:
            if self.stopped:
                raise PresetStopped(f"preset stopped in its last stage ({len(self.weights)} of {len(self.weights)})")
            self._report(self.total)


def _sci(x: float, digits: int = 4) -> str:
    """x in the papers' scientific notation, the exponent without padding: 1.5821e-2, not 1.5821e-02."""
    mantissa, exponent = f"{x:.{digits}e}".split("e")
    return f"{mantissa}e{int(exponent)}"


#: the methods as the comparison texts name them (engine.methods.METHOD_WORDS; the keys are the tables' values, not
#: words for people), and the confidential-data posterior they are compared with
_METHOD_WORDS = {**METHOD_WORDS, "confidential": "confidential data"}


def _p_words(p: float) -> str:
    """A p-value in a comparison text: two significant digits from 0.001 on, "< 0.001" below (not 4.9e-06)."""
    return "< 0.001" if p < 1e-3 else f"{p:.2g}"


def _fmt_checks(checks: Mapping[str, bool]) -> str:
    return "\n".join(f"  [{'ok' if v else 'NO'}] {k}" for k, v in checks.items())


def _summ_rows(method: str, result, extra=None) -> list[dict]:
    s = summary(result, verdict=False)
    rows = []
    for param, r in s.iterrows():
        rows.append({"method": method, "param": param, "mean": r["mean"], "sd": r["sd"], "q5": r["q5"],
                     "q50": r["q50"], "q95": r["q95"], "r_hat": r["r_hat"], "ess_bulk": r["ess_bulk"], **(extra or {})})
    return rows


# --------------------------------------------------------------------------- gong2020_count
GONG_MLE, GONG_INFO, GONG_NAIVE_INFO = 37.237, 1.582e-2, 2.674e-2


def dp_log_likelihood(lam: np.ndarray, s_dp: float, epsilon: float, s_max: int = 2000) -> np.ndarray:
    """log p(s_dp | lam) = log sum_s Poisson(s; lam) (eps/2) exp(-eps |s_dp - s|) (Gong 2020)."""
    s = np.arange(s_max + 1)[None, :]
    lam = np.atleast_1d(np.asarray(lam, dtype=float))[:, None]
    terms = stats.poisson.logpmf(s, lam) + math.log(epsilon / 2) - epsilon * np.abs(s_dp - s)
    return special.logsumexp(terms, axis=1)


def _runs(problem: Problem, runs, stages: _Stages) -> list:
    """Each [method] table run on ``problem`` with seed 1, one stage each (a run stopped during warm-up
    raises Cancelled: the preset is stopped)."""
    out = []
    for table in runs:
        try:
            out.append(run_method(problem, table, 1, on_progress=stages.next()))
        except Cancelled as exc:
            raise PresetStopped(str(exc)) from None
    return out


def _gong(quick: bool, executor, on_progress=None) -> PresetResult:
    plan = preset_plan("gong2020_count", quick)
    stages = _Stages(on_progress, plan["stages"])
    problem = prepare(plan["spec"])
    s_dp, eps = float(problem.s_dp[0]), float(problem.mechanism.epsilon)
    exact, abc, naive = _runs(problem, plan["runs"], stages)
    stages.finish()
    abc_n = plan["runs"][1]["draws"]
    prior = stats.gamma(25.0, scale=1.0)
    rows = _summ_rows("exact", exact) + _summ_rows("abc_rejection", abc) + _summ_rows("naive", naive)
    rows.append({"method": "prior", "param": "lam", "mean": prior.mean(), "sd": prior.std(), "q5": prior.ppf(0.05),
                 "q50": prior.ppf(0.5), "q95": prior.ppf(0.95), "r_hat": math.nan, "ess_bulk": math.nan})
    posteriors = pd.DataFrame(rows)
    mix = exact_mixture(problem)
    ks = stats.kstest(abc.flat("lam"), lambda x: mix.cdf(0, np.atleast_1d(x)))
    # Monte Carlo EM's targets, computed from the exact likelihood: the maximiser and the observed information
    neg = lambda t: -float(dp_log_likelihood(np.array([t]), s_dp, eps)[0])  # noqa: E731
    mle = float(optimize.minimize_scalar(neg, bounds=(1.0, 120.0), method="bounded",
                                         options={"xatol": 1e-8}).x)
    h = 1e-3
    ll = dp_log_likelihood(np.array([mle - h, mle, mle + h]), s_dp, eps)
    info = float(-(ll[0] - 2 * ll[1] + ll[2]) / h**2)
    naive_info = 1.0 / s_dp  # Poisson: -d^2/dlam^2 (s log lam - lam) at lam = s
    lik = pd.DataFrame([
        {"quantity": "theta_hat_dp", "ours": mle, "paper": GONG_MLE},
        {"quantity": "observed_information_dp", "ours": info, "paper": GONG_INFO},
        {"quantity": "theta_hat_naive", "ours": s_dp, "paper": 37.4},
        {"quantity": "observed_information_naive", "ours": naive_info, "paper": GONG_NAIVE_INFO},
        {"quantity": "information_ratio_naive_over_dp", "ours": naive_info / info, "paper": GONG_NAIVE_INFO / GONG_INFO},
    ])
    ex = posteriors.set_index("method")
    checks = {
        f"DP MLE within 0.05 of the paper's 37.237 (ours {mle:.3f})": abs(mle - GONG_MLE) < 0.05,
        f"DP observed information within 2% of 1.582e-2 (ours {_sci(info)})": abs(info / GONG_INFO - 1) < 0.02,
        f"ABC draws match the exact posterior (KS p = {ks.pvalue:.3f} > 0.001)": ks.pvalue > 1e-3,
        "naive posterior narrower than the exact one": ex.loc["naive", "sd"] < ex.loc["exact", "sd"],
    }
    text = (f"Gong (2020), privatized count: Gamma(25, 1) prior, Laplace noise at ε = {eps:g}, s_dp = {s_dp:g}.\n"
            "MLE λ_dp and observed information ℓ_dp of the Poisson rate λ given the release:\n"
            f"Monte Carlo EM in the paper: λ_dp = 37.237, ℓ_dp = 1.582e-2; naive λ = 37.4, ℓ = 2.674e-2 (169%).\n"
            f"Exact likelihood here:       λ_dp = {mle:.3f}, ℓ_dp = {_sci(info)}; naive ℓ = {_sci(naive_info)} "
            f"({100 * naive_info / info:.0f}% of ℓ_dp).\n"
            f"Posterior mean (sd): exact {ex.loc['exact', 'mean']:.2f} ({ex.loc['exact', 'sd']:.2f}), ABC "
            f"{ex.loc['abc_rejection', 'mean']:.2f} ({ex.loc['abc_rejection', 'sd']:.2f}) from {abc_n:,} draws, naive "
            f"{ex.loc['naive', 'mean']:.2f} ({ex.loc['naive', 'sd']:.2f}), prior 25.00 (5.00).\n"
            f"The paper's figure shows ABC (N = 10⁶) on the exact density and the naive one apart; here ABC vs exact "
            f"KS D = {ks.statistic:.4f}, p = {ks.pvalue:.3f}.\n" + _fmt_checks(checks))
    grid, pdf = exact.density["lam"]
    ng, npdf = naive.density["lam"]
    data = {"exact_density": (np.asarray(grid), np.asarray(pdf)), "naive_density": (np.asarray(ng), np.asarray(npdf)),
            "abc_draws": abc.flat("lam"), "prior": (25.0, 1.0), "s_dp": s_dp}
    return PresetResult("gong2020_count", PRESET_TITLES["gong2020_count"], quick,
                        {"posteriors": posteriors, "likelihood": lik}, text, checks, data)


# --------------------------------------------------------------------------- eng_admissions
#: dapper Example 1's confidential table, cells (male, admit), (male, reject), (female, admit), (female, reject)
ADMISSIONS_TRUE = (109, 127, 46, 118)
#: dapper's reported posterior (mean, sd) for pi_10, pi_01, pi_00 (4 chains x 5000 draws)
DAPPER_REPORTED = {"p[1]": (0.339, 0.0678), "p[2]": (0.111, 0.0556), "p[3]": (0.268, 0.0622)}


def odds_ratio(draws: np.ndarray) -> np.ndarray:
    """(p11 p00) / (p10 p01): odds of admission for men over women, per draw."""
    return draws[..., 0] * draws[..., 3] / (draws[..., 1] * draws[..., 2])


def admissions_problem(plan: Mapping[str, Any]) -> Problem:
    """dapper Example 1's release with its confidential table as the records."""
    base = prepare(plan["spec"])
    records = np.repeat(np.arange(4), plan["records"])
    return Problem(model=base.model, mechanism=base.mechanism, s_dp=base.s_dp, records=records)


def _admissions(quick: bool, executor, on_progress=None) -> PresetResult:
    plan = preset_plan("eng_admissions", quick)
    stages = _Stages(on_progress, plan["stages"])
    problem = admissions_problem(plan)
    base = problem
    runs = dict(zip([r["name"] for r in plan["runs"]], _runs(problem, plan["runs"], stages)))
    stages.next()
    runs["confidential"] = confidential_posterior(problem, seed=1, draws=plan["confidential_draws"])
    stages.finish()
    rows, ors = [], {}
    for name, res in runs.items():
        rows += _summ_rows(name, res)
        orr = odds_ratio(res.draws)
        ors[name] = orr.ravel()
        rows.append({"method": name, "param": "odds_ratio", "mean": float(orr.mean()), "sd": float(orr.std(ddof=1)),
                     "q5": float(np.quantile(orr, 0.05)), "q50": float(np.median(orr)),
                     "q95": float(np.quantile(orr, 0.95)), "r_hat": math.nan, "ess_bulk": math.nan})
    table = pd.DataFrame(rows)
    t = table.set_index(["method", "param"])
    compare = []
    for param, (m, sd) in DAPPER_REPORTED.items():
        for name in ("da_mcmc", "pseudo_marginal"):
            compare.append({"param": param, "method": name, "ours_mean": t.loc[(name, param), "mean"],
                            "ours_sd": t.loc[(name, param), "sd"], "paper_mean": m, "paper_sd": sd})
    compare = pd.DataFrame(compare)
    conf_or = ADMISSIONS_TRUE[0] * ADMISSIONS_TRUE[3] / (ADMISSIONS_TRUE[1] * ADMISSIONS_TRUE[2])
    naive_or = float(np.prod(base.s_dp[[0, 3]]) / np.prod(base.s_dp[[1, 2]]))
    # dapper reports means of short, sticky chains without their Monte Carlo error, so the check against the
    # paper is within one posterior sd; our two exact samplers are checked against each other by their MCSE
    checks = {
        "exact samplers' means within one posterior sd of dapper's reported means":
            bool((abs(compare["ours_mean"] - compare["paper_mean"]) < compare["paper_sd"]).all()),
        f"naive odds-ratio median ({t.loc[('naive', 'odds_ratio'), 'q50']:.2f}) below the exact one "
        f"({t.loc[('pseudo_marginal', 'odds_ratio'), 'q50']:.2f})":
            t.loc[("naive", "odds_ratio"), "q50"] < t.loc[("pseudo_marginal", "odds_ratio"), "q50"],
        "naive odds-ratio posterior narrower than the exact one":
            t.loc[("naive", "odds_ratio"), "sd"] < t.loc[("pseudo_marginal", "odds_ratio"), "sd"],
        "DA-MCMC and pseudo-marginal agree on every cell mean within 4 Monte Carlo standard errors":
            all(abs(t.loc[("da_mcmc", q), "mean"] - t.loc[("pseudo_marginal", q), "mean"]) <
                4 * math.hypot(*(t.loc[(m, q), "sd"] / math.sqrt(t.loc[(m, q), "ess_bulk"])
                                 for m in ("da_mcmc", "pseudo_marginal"))) for q in ("p[0]", "p[1]", "p[2]", "p[3]")),
    }
    lines = ["Eng et al. (dapper), Example 1: N = 400 admissions, two-coin randomized response (ε = 2 log 3).",
             f"Confidential table odds ratio {conf_or:.2f}; the noisy table read naively {naive_or:.2f}.",
             "Cell probabilities, ours (DA-MCMC / pseudo-marginal) vs dapper's reported mean (sd):"]
    for param in DAPPER_REPORTED:
        sub = compare[compare["param"] == param].set_index("method")
        lines.append(f"  {param}: {sub.loc['da_mcmc', 'ours_mean']:.3f} ({sub.loc['da_mcmc', 'ours_sd']:.4f}) / "
                     f"{sub.loc['pseudo_marginal', 'ours_mean']:.3f} ({sub.loc['pseudo_marginal', 'ours_sd']:.4f}) vs "
                     f"{DAPPER_REPORTED[param][0]:.3f} ({DAPPER_REPORTED[param][1]:.4f})")
    lines.append("Odds ratio median [90% interval]: " + "; ".join(
        f"{_METHOD_WORDS.get(m, m)} {t.loc[(m, 'odds_ratio'), 'q50']:.2f} [{t.loc[(m, 'odds_ratio'), 'q5']:.2f}, "
        f"{t.loc[(m, 'odds_ratio'), 'q95']:.2f}]" for m in runs))
    lines.append("dapper (Fig. 3): the naive posterior is shifted and far too narrow; the private posterior's mode is "
                 "near the confidential one and it is much wider.")
    text = "\n".join(lines) + "\n" + _fmt_checks(checks)
    return PresetResult("eng_admissions", PRESET_TITLES["eng_admissions"], quick,
                        {"posteriors": table, "dapper_comparison": compare}, text, checks,
                        {"odds_ratio_draws": ors, "confidential_or": conf_or})


# --------------------------------------------------------------------------- bernstein2018_binomial
def _bernstein(quick: bool, executor, on_progress=None) -> PresetResult:
    plan = preset_plan("bernstein2018_binomial", quick)
    stages = _Stages(on_progress, plan["stages"])
    ns, eps_grid, m, methods = plan["ns"], plan["epsilons"], plan["replicates"], plan["methods"]
    tables, summaries = [], []
    for n, eps in plan["cells"]:
        tab = calibration_study(plan["spec"](n, eps), methods, m, executor=executor, on_progress=stages.next(),
                                **plan["study"])
        tab.insert(0, "epsilon", eps)
        tab.insert(0, "n", n)
        s = calibration_summary(tab.drop(columns=["n", "epsilon"]))
        s.insert(0, "epsilon", eps)
        s.insert(0, "n", n)
        tables.append(tab)
        summaries.append(s)
    stages.finish()
    table, summ = pd.concat(tables, ignore_index=True), pd.concat(summaries, ignore_index=True)
    key = summ.set_index(["n", "epsilon", "method"])
    cell = table[(table["n"] == 1000) & (table["epsilon"] == 0.01)]
    u = {mth: g["quantile"].dropna().to_numpy() for mth, g in cell.groupby("method")}
    tails = float(np.mean((u["naive"] < 0.05) | (u["naive"] > 0.95)))
    middle = float(np.mean((u["ops"] > 0.25) & (u["ops"] < 0.75)))
    checks = {
        "exact passes the KS test (p > 0.01) in every (n, ε) cell":
            bool((summ[summ["method"] == "exact"]["ks_pvalue"] > 0.01).all()),
        "confidential posterior passes the KS test (p > 0.01) in every cell":
            bool((summ[summ["method"] == "confidential"]["ks_pvalue"] > 0.01).all()),
        "naive fails the KS test (p < 0.001) at n = 1000, ε = 0.01": key.loc[(1000, 0.01, "naive"), "ks_pvalue"] < 1e-3,
        f"naive U piles in the tails at n = 1000, ε = 0.01 ({100 * tails:.0f}% outside [0.05, 0.95], "
        "10% if calibrated)":
            tails > 0.3,
        "OPS is further from the confidential posterior than exact (mean MMD²) at n = 1000, both ε":
            all(key.loc[(1000, e, "ops"), "mmd2_mean"] > key.loc[(1000, e, "exact"), "mmd2_mean"] for e in eps_grid),
    }
    lines = ["Bernstein & Sheldon (2018), Fig. 1a/1b: binomial model, Beta(2, 2) prior, Laplace noise, "
             f"M = {m} replicates per cell.", "KS statistic (p-value) per n and ε:"]
    for eps in eps_grid:
        for n in ns:
            lines.append(f"  ε = {eps:g}, n = {n:>5}: " + ", ".join(
                f"{_METHOD_WORDS.get(mth, mth)} {key.loc[(n, eps, mth), 'ks_stat']:.3f} "
                f"({_p_words(key.loc[(n, eps, mth), 'ks_pvalue'])})"
                for mth in summ["method"].unique()))
    lines.append("The paper: the private Gibbs sampler is calibrated like the non-private posterior in every setting; "
                 "naive is calibrated only as n and ε grow; OPS never is (over-dispersed). Its Fig. 1b ECDF at "
                 "n = 1000, ε = 0.01: naive's U piles near 0 and 1, OPS's near 1/2. The paper reports these as "
                 "figures only, so the comparison is with those claims:")
    lines.append(f"OPS here spends ε/k = {eps_grid[0] / 100:g} and {eps_grid[1] / 100:g} per released draw: its "
                 "tempering exponent ε / (2k log 9) leaves essentially the truncated prior, which is calibrated "
                 f"(the prior always is) but uninformative; {100 * middle:.0f}% of its U lie in (0.25, 0.75) at "
                 "n = 1000, ε = 0.01 (50% if calibrated), so the paper's middle-heavy OPS ECDF is not reproduced. "
                 "Mean MMD² to the confidential posterior at n = 1000: " + ", ".join(
                     f"ε = {e:g}: " + " ".join(f"{_METHOD_WORDS.get(mth, mth)} "
                                               f"{key.loc[(1000, e, mth), 'mmd2_mean']:.3f}"
                                               for mth in summ["method"].unique() if mth != "confidential")
                     for e in eps_grid) + ".")
    text = "\n".join(lines) + "\n" + _fmt_checks(checks)
    return PresetResult("bernstein2018_binomial", PRESET_TITLES["bernstein2018_binomial"], quick,
                        {"calibration": table, "calibration_summary": summ}, text, checks)


# --------------------------------------------------------------------------- ju2022_loglinear
JU_EPSILONS = (0.1, 0.3, 1.0, 3.0, 10.0)
JU_TRUE_P = (0.097, 0.148, 0.145, 0.446, 0.163)
#: Table 1 of Ju et al. (2022): coverage of 90% intervals of p_i, 100 replicates per epsilon
JU_TABLE1 = {0.1: (1, 1, 1, .36, 1), 0.3: (.97, 1, 1, .59, 1), 1.0: (.94, .99, .97, .83, .98),
             3.0: (.95, .91, .97, .89, .93), 10.0: (.92, .88, .94, .92, .9)}


#: the paper's π₁, …, π₅ in a plain-text comparison (a terminal and the page's code block show no LaTeX)
_SUBSCRIPT = dict(zip(range(10), "₀₁₂₃₄₅₆₇₈₉"))


def _ju_true_p() -> np.ndarray:
    return np.asarray(JU_TRUE_P) / np.sum(JU_TRUE_P)  # the paper's rounded values sum to 0.999


def _ju_spec() -> dict:
    p = _ju_true_p()
    rows = np.random.default_rng(2022)  # the feature rows p[k][i]: one draw from the Dirichlet(2) prior
    features = [[rows.dirichlet(np.full(3, 2.0)).tolist() for _ in range(5)] for _ in range(5)]
    return {"seed": 2022, "model": {"name": "naive_bayes_loglinear", "n": 100, "class_levels": 5,
                                    "feature_levels": [3] * 5, "alpha": 2.0},
            "mechanism": {"name": "laplace", "epsilon": 1.0},  # sensitivity 2K = 10 (the model's default)
            "data": {"simulate": {"pi": p.tolist(), "p": features}}}


def _ju(quick: bool, executor, on_progress=None) -> PresetResult:
    plan = preset_plan("ju2022_loglinear", quick)
    stages = _Stages(on_progress, plan["stages"])
    p, spec, r, method = _ju_true_p(), plan["spec"], plan["replicates"], plan["method"]
    r_fresh = plan["fresh_replicates"]
    fixed = epsilon_replicates(spec, plan["epsilons"], r, method=method, data="fixed", executor=executor,
                               batch_size=plan["batch_size"], on_progress=stages.next())
    fresh = epsilon_replicates(spec, plan["epsilons"], r_fresh, method=method, data="fresh",
                               executor=executor, batch_size=plan["batch_size"], on_progress=stages.next())
    stages.finish()
    fixed, fresh = (t[t["param"].str.startswith("pi[")].reset_index(drop=True) for t in (fixed, fresh))  # Fig. 1a: P(Y = i)
    fixed_s, cov = replicate_summary(fixed), coverage_pivot(fresh)
    paper = pd.DataFrame(JU_TABLE1, index=[f"pi[{j}]" for j in range(5)]).T
    paper.index.name = "epsilon"
    cov_long = []
    for eps in JU_EPSILONS:
        for j in range(5):
            cov_long.append({"epsilon": eps, "param": f"pi[{j}]", "true_p": float(p[j]), "coverage_ours": cov.loc[eps, f"pi[{j}]"],
                             "coverage_paper": JU_TABLE1[eps][j]})
    cov_long = pd.DataFrame(cov_long)
    acc = fixed_s.groupby("epsilon")[["acceptance_mean", "acceptance_min", "bound"]].min()
    small = fixed_s[fixed_s["epsilon"] == min(JU_EPSILONS)]
    large = fixed_s[fixed_s["epsilon"] == max(JU_EPSILONS)]
    checks = {
        "minimum acceptance of every chain ≥ exp(−ε) (Prop. 3.1)": bool((acc["acceptance_min"] >= acc["bound"]).all()),
        "mean acceptance well above the bound at every ε": bool((acc["acceptance_mean"] > acc["bound"]).all()),
        "posterior means near the prior mean 0.2 at ε = 0.1 (within 0.05)":
            bool((abs(small["post_mean_mean"] - small["prior_mean"]) < 0.05).all()),
        "posterior means near the confidential posterior means at ε = 10 (within 0.02)":
            bool((abs(large["post_mean_mean"] - large["confidential_mean"]) < 0.02).all()),
        "π₄ (true 0.446, far from the prior mean) has the lowest coverage at ε = 0.1, as in Table 1":
            bool(cov.loc[0.1].idxmin() == "pi[3]"),
    }
    lines = ["Ju, Gong, Awan & Rao (2022), Sec. 4, on the naive-Bayes log-linear model: N = 100, I = 5 classes, "
             "K = 5 features with 3 levels, Dirichlet(2) priors, every two-way table nᵢⱼ⁽ᵏ⁾ (the records of class i "
             "with level j of feature k) with Laplace noise of scale 2K/ε = 10/ε; the class probabilities π₁, …, π₅ as "
             "in the paper's Table 1, the rows p[k][i] one draw from the prior.",
             (f"{r} releases per ε" if r_fresh == r else  # the quick size draws more fresh releases for coverage
              f"{r} releases per ε of the fixed data (means, acceptance) and {r_fresh} of fresh data (coverage)")
             + f", one DA-MCMC chain each ({method['warmup'] + method['draws']} iterations, "
             f"{method['warmup']} burn-in; the paper: 100 releases, 10000 iterations, 5000 burn-in).",
             "Acceptance (Fig. 1b): ε, mean over chains, minimum over sweeps, exp(−ε):"]
    for eps, a in acc.iterrows():
        lines.append(f"  {eps:>5g}: {a['acceptance_mean']:.3f}  {a['acceptance_min']:.3f}  {a['bound']:.3f}")
    lines.append("Coverage of 90% intervals (Table 1; π₁, …, π₅ are pi[0], …, pi[4] in the tables), ours / paper's:")
    for eps in JU_EPSILONS:
        lines.append(f"  ε = {eps:>4g}: " + "  ".join(
            f"π{_SUBSCRIPT[j + 1]} {cov.loc[eps, f'pi[{j}]']:.2f}/{JU_TABLE1[eps][j]:.2f}" for j in range(5)))
    text = "\n".join(lines) + "\n" + _fmt_checks(checks)
    return PresetResult("ju2022_loglinear", PRESET_TITLES["ju2022_loglinear"], quick,
                        {"posterior_means": fixed, "posterior_means_summary": fixed_s, "coverage_replicates": fresh,
                         "coverage": cov_long}, text, checks)


PRESET_TITLES = {
    "gong2020_count": "Gong (2020): privatized count, exact vs ABC vs naive",
    "eng_admissions": "Eng et al. (dapper) Example 1: admissions odds ratio under randomized response",
    "bernstein2018_binomial": "Bernstein & Sheldon (2018) Fig. 1: calibration of binomial posteriors",
    "ju2022_loglinear": "Ju et al. (2022) Sec. 4: posterior means, acceptance and coverage over ε",
}
PRESETS: Mapping[str, Callable[[bool, Any], PresetResult]] = {
    "gong2020_count": _gong, "eng_admissions": _admissions, "bernstein2018_binomial": _bernstein,
    "ju2022_loglinear": _ju,
}


def run_preset(name: str, quick: bool = False, *, executor=None, workers: int | None = None,
               on_progress=None) -> PresetResult:
    """Run a preset by name (see the module table); ``quick`` is the CI size.

    ``executor``: any :class:`concurrent.futures.Executor` for the replicate studies (default a
    local process pool over ``workers`` processes, shut down afterwards; this process for
    ``workers=1``). The pool spawns its processes: a script that runs a preset on it needs the
    ``if __name__ == "__main__":`` guard (see :func:`engine.studies.calibration.calibration_study`).

    ``on_progress(done, total)``: called with the preset's progress over its stages (per mille; see
    :func:`preset_plan`). Returning False stops it: the stage under way stops at its next block of
    iterations or replicate, and :class:`PresetStopped` is raised (nothing is returned, so a stopped
    preset is never taken for its result). An exception raised by the callback propagates."""
    if name not in PRESETS:
        raise ValueError(f"preset = {name!r} is invalid: must be one of " + ", ".join(PRESETS))
    own = executor is None and name in ("bernstein2018_binomial", "ju2022_loglinear")
    if own:
        executor = default_executor(workers)
    try:
        return PRESETS[name](quick, executor, on_progress)
    finally:
        if own:
            executor.shutdown()


def write_preset(result: PresetResult, out_dir: str) -> list[str]:
    """Write ``<table>.csv`` for every table and ``comparison.txt``; returns the paths written."""
    os.makedirs(out_dir, exist_ok=True)
    paths = []
    for name, table in result.tables.items():
        path = os.path.join(out_dir, f"{name}.csv")
        table.to_csv(path, index=False)
        paths.append(path)
    path = os.path.join(out_dir, "comparison.txt")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(result.title + ("  [quick size]" if result.quick else "") + "\n\n" + result.text + "\n")
    paths.append(path)
    return paths
