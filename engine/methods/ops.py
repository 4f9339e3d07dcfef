"""One-posterior-sampling (OPS) baseline (Wang, Fienberg & Smola 2015; Foulds et al. 2016;
the baseline of Bernstein & Sheldon 2018, Section 5).

The release is k draws from a tempered, truncated posterior of the confidential data,

    p_tau(theta | x) ∝ p(theta) prod_i f(x_i | theta)^tau   on a truncated parameter set Theta_0.

If B = sup over theta in Theta_0 and records x, x' of |log f(x | theta) - log f(x' | theta)|, then
replacing one record changes the unnormalised log density by at most tau B and the log
normaliser by at most tau B, so one draw is (2 tau B)-DP. Each of the k draws gets epsilon/k,
so tau = epsilon / (2 k B), and by composition the whole release is epsilon-DP.

Truncation and B per model:

* beta_binomial: theta in [a0, 1 - a0] (``truncation`` a0, default 0.1 as in Bernstein &
  Sheldon), B = log((1 - a0) / a0); p_tau = Beta(a + tau s, b + tau (n - s)) truncated.
* poisson_gamma (needs ``upper``; records clamped to 0..upper): lam in [l0, l1] (default the prior's
  0.001 and 0.999 quantiles), B = max over lam in {l0, l1} and x, x' in 0..upper of
  (x - x') log lam - log x! + log x'!; p_tau = Gamma(alpha + tau sum x, beta + tau n) truncated.
* dirichlet_multinomial: p_j >= a0 for all j (default min(0.1, 0.5/k)), B = log((1 - (k-1) a0)/a0);
  p_tau = Dirichlet(alpha + tau c) restricted, sampled by rejection.
* normal_known_sd: records clamped to [lo, hi] and mu in [lo, hi], B = (hi - lo)^2 / (2 sd^2);
  p_tau = Normal truncated to [lo, hi].

OPS needs the confidential records, and a pure epsilon (the mechanism's, or ``epsilon`` in the
method settings). Its draws are not calibrated posterior draws: tempering widens them.
"""
from __future__ import annotations

import math
import time

import numpy as np
from scipy import special, stats

from ..core.results import Problem, Result
from ..core.validation import fail, positive, positive_int
from .base import Method

__all__ = ["ops", "ops_setup", "ops_release_log_pdf", "METHOD"]


def _one_number(truncation, allowed: str) -> float:
    """A one-number truncation (beta_binomial's a0, dirichlet_multinomial's): a [low, high] pair is poisson_gamma's."""
    if isinstance(truncation, bool) or not isinstance(truncation, (int, float)):
        fail("method.truncation", truncation, f"must be one number in {allowed}")
    return float(truncation)


def ops_setup(model, epsilon: float, k: int, truncation=None) -> dict:
    """Tempering tau, the bound B and the truncation for a total budget epsilon over k draws."""
    name = model.name
    if name == "beta_binomial":
        a0 = 0.1 if truncation is None else _one_number(truncation, "(0, 0.5) for beta_binomial")
        if not 0 < a0 < 0.5:
            raise ValueError(f"method.truncation = {truncation!r} is invalid: must be in (0, 0.5) for beta_binomial")
        B = math.log((1 - a0) / a0)
        trunc = (a0, 1 - a0)
    elif name == "poisson_gamma":
        if model.upper is None:
            raise ValueError("model.upper = None is invalid for ops: OPS needs bounded records (set model.upper)")
        prior = stats.gamma(model.alpha, scale=1 / model.beta)
        trunc = tuple(truncation) if truncation is not None else (float(prior.ppf(0.001)), float(prior.ppf(0.999)))
        if not 0 < trunc[0] < trunc[1]:
            raise ValueError(f"method.truncation = {truncation!r} is invalid: needs 0 < low < high for poisson_gamma")
        x = np.arange(model.upper + 1)
        lf = special.gammaln(x + 1)
        B = max(float(np.max((x[:, None] - x[None, :]) * math.log(lam) - lf[:, None] + lf[None, :])) for lam in trunc)
    elif name == "dirichlet_multinomial":
        kk = model.k
        a0 = min(0.1, 0.5 / kk) if truncation is None else _one_number(truncation, f"(0, 1/k) = (0, {1 / kk:.4g})")
        if not 0 < a0 < 1.0 / kk:
            raise ValueError(f"method.truncation = {truncation!r} is invalid: must be in (0, 1/k) = (0, {1 / kk:.4g})")
        B = math.log((1 - (kk - 1) * a0) / a0)
        trunc = (a0, 1 - (kk - 1) * a0)
    elif name == "normal_known_sd":
        B = (model.hi - model.lo) ** 2 / (2 * model.sd**2)
        trunc = (model.lo, model.hi)
    else:
        raise ValueError(f"model.name = {name!r} is invalid for ops: built-in models only")
    tau = epsilon / (2.0 * k * B)
    return {"tau": tau, "B": B, "truncation": trunc, "epsilon_per_draw": epsilon / k, "epsilon_total": epsilon, "k": k}


def _tempered(model, records, tau):
    """Parameters of the tempered posterior given the (clamped) confidential records."""
    if model.name == "beta_binomial":
        s = float(np.sum(records))
        return model.a + tau * s, model.b + tau * (model.n - s)
    if model.name == "poisson_gamma":
        return model.alpha + tau * float(np.sum(np.minimum(records, model.upper))), model.beta + tau * model.n
    if model.name == "dirichlet_multinomial":
        return (np.asarray(model.alpha) + tau * model.statistic(records),)
    x = np.clip(records, model.lo, model.hi)
    prec = 1 / model.prior_sd**2 + tau * model.n / model.sd**2
    mean = (model.prior_mean / model.prior_sd**2 + tau * float(np.sum(x)) / model.sd**2) / prec
    return mean, 1 / math.sqrt(prec)


def _frozen(model, params, trunc):
    if model.name == "beta_binomial":
        return stats.beta(*params)
    if model.name == "poisson_gamma":
        return stats.gamma(params[0], scale=1 / params[1])
    m, s = params
    return stats.truncnorm((trunc[0] - m) / s, (trunc[1] - m) / s, loc=m, scale=s)


def ops_release_log_pdf(model, records, theta, setup) -> np.ndarray:
    """log density of one released draw at ``theta`` given the confidential records (1-D models)."""
    lo, hi = setup["truncation"]
    d = _frozen(model, _tempered(model, records, setup["tau"]), setup["truncation"])
    theta = np.asarray(theta, float)
    if model.name == "normal_known_sd":
        return d.logpdf(theta)
    mass = d.cdf(hi) - d.cdf(lo)
    return np.where((theta >= lo) & (theta <= hi), d.logpdf(theta) - np.log(mass), -np.inf)


def ops(problem: Problem, rng: np.random.Generator, *, k: int = 100, truncation=None, epsilon=None,
        **_ignored) -> Result:
    """Release k OPS draws at total budget epsilon; needs ``problem.records``."""
    t0 = time.perf_counter()
    model = problem.model
    if problem.records is None:
        raise ValueError("data = s_dp is invalid for ops: one-posterior sampling needs the confidential records "
                         "(simulate or csv data)")
    eps = epsilon if epsilon is not None else getattr(problem.mechanism, "epsilon", None)
    if eps is None:
        raise ValueError(f"mechanism.name = {problem.mechanism.name!r} is invalid for ops without method.epsilon: "
                         "OPS spends a pure epsilon budget")
    setup = ops_setup(model, float(eps), int(k), truncation)
    params = _tempered(model, problem.records, setup["tau"])
    lo, hi = setup["truncation"]
    if model.name == "dirichlet_multinomial":
        out = np.empty((0, model.k))
        tries = 0
        while out.shape[0] < k:
            cand = rng.dirichlet(params[0], size=4 * k)
            out = np.vstack([out, cand[np.all(cand >= lo, axis=1)]])
            tries += 1
            if tries > 10_000:
                raise ValueError(f"method.truncation = {lo} is invalid here: the truncated tempered posterior has "
                                 "almost no mass; lower it")
        theta = out[:k]
    else:
        d = _frozen(model, params, setup["truncation"])
        if model.name == "normal_known_sd":
            theta = d.rvs(size=k, random_state=rng)[:, None]
        else:
            u = rng.uniform(d.cdf(lo), d.cdf(hi), size=k)
            theta = np.clip(d.ppf(u), lo, hi)[:, None]
    if not np.all(np.isfinite(theta)):  # the tempered posterior's parameters past double precision (epsilon ~ 1e300)
        field = "method.epsilon" if epsilon is not None else "mechanism.epsilon"
        fail(field, eps, f"is too large for ops: its tempered posterior (tau = {setup['tau']:.3g}) cannot be drawn in "
             "double precision; OPS at a budget this large is the confidential posterior truncated")
    info = dict(setup, wall_time_s=time.perf_counter() - t0)
    info["truncation"] = list(info["truncation"])
    info["released_samples"] = True  # the k draws are the private release itself, not a Monte Carlo sample
    return Result(method="ops", param_names=tuple(model.param_names), draws=theta[None, :, :], s_dp=problem.s_dp,
                  info=info)


def _validate(table, out):
    if "k" in table:
        out["k"] = positive_int("method.k", table["k"], 1, 1_000_000)
    if "epsilon" in table:
        out["epsilon"] = positive("method.epsilon", table["epsilon"])
    if "truncation" in table:
        t = table["truncation"]
        if isinstance(t, (list, tuple)):
            if len(t) != 2:
                fail("method.truncation", t, "must be a number or a [low, high] pair")
            out["truncation"] = [positive("method.truncation[0]", t[0]), positive("method.truncation[1]", t[1])]
        else:
            out["truncation"] = positive("method.truncation", t)


def _run(problem, rng, settings, on_progress):
    for key in ("chains", "draws", "warmup", "grid_size"):
        settings.pop(key, None)
    return ops(problem, rng, **settings)


METHOD = Method(name="ops", claim="baseline", paper="Wang, Fienberg & Smola 2015; Bernstein & Sheldon 2018",
                run=_run, keys=frozenset({"k", "truncation", "epsilon"}), validate=_validate)
