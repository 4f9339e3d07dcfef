"""Monte Carlo EM for the maximum-likelihood estimate of theta from a DP release (paper 002, Alg. 2;
Gong 2020's importance-sampled E-step; Louis 1982 for the standard error).

Likelihood
    Known n: L(theta) = p(s_dp | theta) = sum_s p(s | theta) eta(s_dp - s) (an integral for the normal
    model). Unknown n (paper 002, Sec. 5.2): n keeps its prior p(n) as part of the model and
    L(theta) = sum_n p(n) eta_n(n_dp - n) p(s_dp | theta, n). Only theta is estimated.

Complete data and the EM map
    The missing data are the records x (and n). For the three models the complete-data
    log-likelihood depends on x only through T = sum_i x_i (unclamped) and n:

    ============================  ==========================================  ======================
    model                         l_c(theta) (theta part)                     M-step
    ============================  ==========================================  ======================
    beta_binomial                 T log theta + (n - T) log(1 - theta)        theta = E[T] / E[n]
    poisson_gamma (any clamp)     T log lam - n lam                           lam = E[T] / E[n]
    normal_known_sd               (mu T - n mu^2 / 2) / sd^2                  mu = E[T] / E[n]
    ============================  ==========================================  ======================

    with expectations over p(x, n | s_dp, n_dp, theta_t) (the E-step: Q(theta; theta_t) =
    E[l_c(theta)] is maximised in closed form by the M-step). Fisher's identity gives the observed
    score, and Louis (1982) the observed information, from the same conditional distribution:

        score(theta) = E[g],   I_obs(theta) = E[h] - Var[g],   g = d l_c / d theta, h = -d^2 l_c / d theta^2,

    g = T/theta - (n-T)/(1-theta), h = T/theta^2 + (n-T)/(1-theta)^2 (Bernoulli); g = T/lam - n,
    h = T/lam^2 (Poisson); g = (T - n mu)/sd^2, h = n/sd^2 (normal).

E-step (Monte Carlo)
    * ``mcmc``: the record sweep of Ju et al. (2022, Alg. 1) with theta held at theta_t, plus, for an
      unknown n, the add/delete moves of :mod:`engine.methods.rjmcmc`: the compiled kernels of
      :mod:`engine.kernels.rjmcmc` with the theta draw switched off. The chain is warm-started across
      iterations (``warmup`` sweeps at the start, m_t / 10 after each change of theta). Monte Carlo
      error of the score: batch means over 20 batches.
    * ``importance`` (Gong 2020): s_i ~ p(s | theta_t) (and n_i ~ p(n) for an unknown n), weights
      w_i = eta(s_dp - s_i) (times eta_n(n_dp - n_i)); self-normalised averages. Only when T is a
      function of s: beta_binomial and poisson_gamma without a clamp. Monte Carlo error by the
      delta method, sum w_i^2 (g_i - mean)^2 / (sum w_i)^2.
    * ``auto`` (default): importance sampling where it applies and is cheaper, i.e. when a pilot of
      2,000 weighted draws at the starting value has effective sample fraction f with f n >= 1
      (an importance draw costs about one record update, an MCMC draw a sweep of n records);
      MCMC otherwise.

Iterations, sample size and stopping rule
    theta_0 is the naive estimate (the conjugate posterior mean at the projected s_dp and the
    plug-in n). Iteration t draws m_t = min(draws, ceil(m_0 1.5^t)) E-step draws, m_0 = max(50,
    draws / 20). The first three iterations are EM steps (the M-step above); after that a
    Newton step theta + score / I_obs is taken (Louis 1982, Sec. 4: EM accelerated with the observed
    information), falling back to the EM step when the estimated I_obs is not positive or the step
    leaves the parameter space. *Stopping rule*: after at least four iterations, stop at the first
    iteration whose score is zero within Monte Carlo error, |score| <= 2 mcse(score), and whose
    Monte Carlo error in the estimate, mcse(score) / I_obs, is at most ``tol`` (default 0.1) times
    the standard error 1 / sqrt(I_obs); once m_t has reached ``draws`` the first condition alone
    stops (``info["mc_error_ok"]`` then says whether the second held). ``max_iter`` (default 60)
    bounds the run (``info["converged"] = False`` if reached).

Result
    theta_hat = theta_t + score / I_obs from the last E-step (a final Newton correction), se =
    1 / sqrt(I_obs), the 90% Wald interval theta_hat -+ 1.645 se clipped to the parameter space
    (:func:`wald_interval`), and the Monte Carlo error of
    theta_hat (``info["mc_se"]``). ``draws`` holds the single point (1 chain x 1 draw) theta_hat: it
    is NOT a posterior sample. ``info["estimator"] = True`` marks the result: :func:`engine.summary`
    then reports estimate (``mean``), se (``sd``) and the Wald bounds (``q5``, ``q95``) without a
    convergence verdict, and summary.json carries ``"mle"`` and ``"history"``.
"""
from __future__ import annotations

import math
import time

import numpy as np
from scipy import stats

from ..core.results import Problem, Result
from ..core.validation import choice, positive, positive_int
from .base import Method
from .rjmcmc import RJRunner, check_unknown_n, default_jumps, new_outputs

__all__ = ["mcem", "METHOD", "WALD_Z", "estep_kind", "expected_draws", "wald_interval"]

WALD_Z = float(stats.norm.ppf(0.95))
_GROWTH = 1.5
#: the parameter space of each model's theta (normal_known_sd: the real line)
_SUPPORT = {"beta_binomial": (0.0, 1.0), "poisson_gamma": (0.0, math.inf)}


def wald_interval(est: float, se: float, support: tuple[float, float] = (-math.inf, math.inf),
                  z: float = WALD_Z) -> tuple[float, float]:
    """The 90% Wald interval est -+ z se, clipped to the parameter's ``support``.

    The Wald interval is the contract's (issue: "a 90% Wald interval per parameter"; summary.json's ``mle``
    block): est -+ z se wherever it lies inside the parameter space, which is where the normal approximation
    behind it is of any use. Where it reaches past an edge (a small theta_hat with a large se gave q5 = -0.13
    for a probability) the interval is cut at the edge: a parameter cannot take values outside its support, and
    the clipped interval still holds every value the unclipped one held inside it. The estimate at the edge
    (``info["at_boundary"]``) is flagged separately: there the Wald interval is not valid at all."""
    lo, hi = support
    return (max(lo, est - z * se), min(hi, est + z * se))


_EM_STEPS = 3
_BATCHES = 20


def _score_terms(name: str, model, theta: float, T: np.ndarray, n: np.ndarray):
    """(g, h, M-step numerator T) per draw: the complete-data score and negative second derivative."""
    if name == "beta_binomial":
        g = T / theta - (n - T) / (1.0 - theta)
        h = T / theta**2 + (n - T) / (1.0 - theta) ** 2
    elif name == "poisson_gamma":
        g = T / theta - n
        h = T / theta**2
    else:
        g = (T - n * theta) / model.sd**2
        h = n / model.sd**2
    return g, h


def _inside(name: str, theta: float) -> bool:
    if name == "beta_binomial":
        return 0.0 < theta < 1.0
    if name == "poisson_gamma":
        return theta > 0.0
    return math.isfinite(theta)


def _clip(name: str, theta: float) -> float:
    if name == "beta_binomial":
        return float(min(max(theta, 1e-9), 1.0 - 1e-9))
    if name == "poisson_gamma":
        return float(max(theta, 1e-9))
    return float(theta)


def _batch_mcse(x: np.ndarray) -> float:
    """Monte Carlo standard error of the mean of a (correlated) series by batch means."""
    m = x.size // _BATCHES
    if m < 2:
        return float(x.std(ddof=1) / math.sqrt(max(x.size, 1)))
    means = x[: m * _BATCHES].reshape(_BATCHES, m).mean(axis=1)
    return float(means.std(ddof=1) / math.sqrt(_BATCHES))


class _MCMCEStep:
    """E-step draws of (T, n) from the record chain at a fixed theta (rj_kernels, theta fixed)."""

    kind = "mcmc"

    def __init__(self, problem, rng, theta0, warmup):
        self.runner = RJRunner(problem)
        self.jumps = 0 if problem.unknown_n is None else default_jumps(problem)
        self.rng = rng
        self.state = self.runner.init_state(rng, np.array([theta0]))
        self._sweep(warmup, theta0)

    def _sweep(self, m, theta):
        outs = new_outputs(max(m, 1))
        if m > 0:
            self.runner.advance(self.rng, self.state, m, self.jumps, outs, theta=theta)
        return outs

    def draw(self, theta: float, m: int):
        self._sweep(max(10, m // 10), theta)  # re-equilibrate after theta moved
        outs = self._sweep(m, theta)
        return outs[2][:m].astype(float), outs[1][:m].astype(float), None

    def mcse(self, g, w):
        return _batch_mcse(g)


class _ImportanceEStep:
    """E-step by importance sampling (Gong 2020): s ~ p(s | theta) (n ~ p(n)), weights eta (eta_n)."""

    kind = "importance"

    def __init__(self, problem, rng):
        self.problem, self.rng = problem, rng

    def draw(self, theta: float, m: int):
        problem, rng = self.problem, self.rng
        model, unk = problem.model, problem.unknown_n
        n = np.full(m, float(model.n)) if unk is None else unk.prior.sample(rng, m).astype(float)
        if model.name == "beta_binomial":
            s = rng.binomial(n.astype(np.int64), theta).astype(float)
        else:
            s = rng.poisson(n * theta).astype(float)
        lw = problem.mechanism.noise_log_prob(problem.s_dp[0] - s)
        if unk is not None:
            lw = lw + unk.log_likelihood(n)
        w = np.exp(lw - lw.max())
        return s, n, w / w.sum()

    def mcse(self, g, w):
        mean = float(w @ g)
        return float(math.sqrt(np.sum(w**2 * (g - mean) ** 2)))

    @staticmethod
    def applies(problem) -> bool:
        m = problem.model
        return m.name == "beta_binomial" or (m.name == "poisson_gamma" and m.upper is None)


def _moments(g, h, T, n, w):
    if w is None:
        return float(g.mean()), float(h.mean()), float(g.var(ddof=1)), float(T.mean()), float(n.mean())
    mg = float(w @ g)
    return mg, float(w @ h), float(w @ (g - mg) ** 2), float(w @ T), float(w @ n)


def _start(problem) -> float:
    model = problem.model
    th = model.posterior_marginals(model.project(problem.s_dp))
    return _clip(model.name, float(next(iter(th.values())).mean()))


def estep_kind(problem, rng, estep: str, theta0: float) -> str:
    """``mcmc`` or ``importance``: the E-step ``estep`` (auto, mcmc, importance) stands for here."""
    if estep == "importance" and not _ImportanceEStep.applies(problem):
        raise ValueError(f"method.estep = 'importance' is invalid for {problem.model.name}"
                         f"{' with a clamp' if problem.model.name == 'poisson_gamma' else ''}: the complete-data "
                         "statistic is not a function of the released one; use mcmc or auto")
    if estep != "auto":
        return estep
    if not _ImportanceEStep.applies(problem):
        return "mcmc"
    _, _, w = _ImportanceEStep(problem, rng).draw(theta0, 2000)
    frac = 1.0 / float(np.sum(w**2)) / 2000.0
    return "importance" if frac * _size_guess(problem) >= 1.0 else "mcmc"


def _size_guess(problem) -> float:
    unk = problem.unknown_n
    return float(problem.model.n if unk is None else max(problem.model.n, unk.prior.mean))


def expected_draws(draws: int, max_iter: int) -> float:
    """E-step draws of a typical run (for cost estimates): the geometric ramp to ``draws`` plus three
    iterations at it, each MCMC iteration with its re-equilibration sweeps (m / 10)."""
    m0 = max(50, draws // 20)
    total = 0.0
    for it in range(max_iter):
        m = min(draws, math.ceil(m0 * _GROWTH**it))
        total += 1.1 * m
        if m >= draws and it >= _EM_STEPS:
            return total + 3 * 1.1 * draws
    return total


def mcem(problem: Problem, rng: np.random.Generator, *, draws: int = 2000, warmup: int = 500,
         max_iter: int = 60, tol: float = 0.1, estep: str = "auto", on_progress=None) -> Result:
    """The MLE of theta by Monte Carlo EM with Louis's standard error (see the module docstring).

    Parameters
    ----------
    problem : Problem
        beta_binomial, poisson_gamma or normal_known_sd with additive noise; known n, or an unknown n
        (``problem.unknown_n``) whose prior is kept as part of the model.
    draws : int
        The largest E-step Monte Carlo sample (m_t grows geometrically up to it).
    warmup : int
        Sweeps of the E-step chain before the first iteration (MCMC E-step).
    max_iter, tol, estep
        Iteration cap, the Monte Carlo error tolerance relative to the se, and the E-step
        (``auto``, ``mcmc``, ``importance``).
    on_progress : callable(done, total), optional
        Called after each iteration with (iteration, max_iter); returning False stops the run and
        reports the current iterate (``info["stopped"] = "cancelled"``).

    Returns
    -------
    Result
        ``draws`` is the single point estimate (not posterior draws); ``info``: ``estimator`` (True),
        ``mle`` {param: {estimate, se, q5, q95}}, ``mc_se``, ``history`` (one dict per iteration:
        theta, E-step draws, step kind, score and its Monte Carlo error, observed information),
        ``converged``, ``mc_error_ok``, ``estep``, ``iterations``, ``stopping_rule``, ``at_boundary``
        (the estimate sits on the edge of the parameter space: the Wald interval is not valid there),
        ``note``, ``wall_time_s``.
    """
    t0 = time.perf_counter()
    model = problem.model
    check_unknown_n(problem, "mcem")
    name, param = model.name, model.param_names[0]
    theta = _start(problem)
    kind = estep_kind(problem, rng, estep, theta)
    sampler = _ImportanceEStep(problem, rng) if kind == "importance" else _MCMCEStep(problem, rng, theta, warmup)
    m0 = max(50, draws // 20)
    history, converged, stopped, mc_ok = [], False, False, False
    est, se, mc_se = theta, float("nan"), float("nan")
    for it in range(max_iter):
        m = int(min(draws, math.ceil(m0 * _GROWTH**it)))
        T, n, w = sampler.draw(theta, m)
        g, h = _score_terms(name, model, theta, T, n)
        score, info_c, var_g, mean_T, mean_n = _moments(g, h, T, n, w)
        info_obs = info_c - var_g
        score_mcse = sampler.mcse(g, w)
        newton = theta + score / info_obs if info_obs > 0 else float("nan")
        em = _clip(name, mean_T / mean_n) if mean_n > 0 else theta
        use_newton = it >= _EM_STEPS and info_obs > 0 and _inside(name, newton)
        if info_obs > 0:
            est, se, mc_se = (newton if _inside(name, newton) else em), 1.0 / math.sqrt(info_obs), score_mcse / info_obs
        history.append({"iteration": it, param: theta, "mc_draws": m, "step": "newton" if use_newton else "em",
                        "score": score, "score_mcse": score_mcse, "observed_information": info_obs,
                        "complete_information": info_c})
        zero_score = abs(score) <= 2.0 * score_mcse
        mc_ok = info_obs > 0 and mc_se <= tol * se
        if it >= _EM_STEPS and info_obs > 0 and zero_score and (mc_ok or m >= draws):
            converged = True
            break
        theta = newton if use_newton else em
        if on_progress is not None and on_progress(it + 1, max_iter) is False:
            stopped = True
            break
    if not converged:
        est = theta if not history or not math.isfinite(est) else est
    edge = _SUPPORT.get(name, (-math.inf, math.inf))
    wald = wald_interval(est, se, edge)
    at_boundary = bool(min(est - edge[0], edge[1] - est) < 1e-3 * se) if math.isfinite(se) else False
    note = ("maximum-likelihood estimate with a 90% Wald interval; draws holds the single estimate, not posterior "
            "draws")
    if at_boundary:
        note += "; the estimate is at the boundary of the parameter space, where the Wald interval is not valid"
    mle = {param: {"estimate": float(est), "se": float(se), "q5": float(wald[0]), "q95": float(wald[1])}}
    return Result(
        method="mcem", param_names=(param,), draws=np.array([[[est]]]), s_dp=problem.s_dp,
        info={
            "estimator": True, "claim": "estimator", "mle": mle, "mc_se": float(mc_se), "history": history,
            "converged": converged, "mc_error_ok": bool(mc_ok), "estep": sampler.kind, "iterations": len(history),
            "stopped": "cancelled" if stopped else None, "unknown_n": problem.unknown_n is not None,
            "stopping_rule": f"|score| <= 2 mcse(score) and mcse(estimate) <= {tol:g} se (or E-step size at {draws})",
            "at_boundary": at_boundary, "note": note,
            "wall_time_s": time.perf_counter() - t0,
        },
    )


def _validate(table, out):
    if "max_iter" in table:
        out["max_iter"] = positive_int("method.max_iter", table["max_iter"], 5, 10_000)
    if "tol" in table:
        out["tol"] = positive("method.tol", table["tol"])
    if "estep" in table:
        out["estep"] = choice("method.estep", table["estep"], ("auto", "mcmc", "importance"))


def _run(problem, rng, settings, on_progress):
    for key in ("grid_size", "chains"):
        settings.pop(key, None)
    return mcem(problem, rng, on_progress=on_progress, **settings)


METHOD = Method(name="mcem", claim="estimator", paper="paper 002, Alg. 2; Gong 2020; Louis 1982", run=_run,
                keys=frozenset({"max_iter", "tol", "estep"}), validate=_validate, unknown_n=True)
