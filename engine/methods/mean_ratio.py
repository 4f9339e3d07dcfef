r"""Pseudo-marginal MCMC on (mu, n) for OpenDP's released mean r = (S + U) / max(n + V, 0) (dp-wizard's mean):
:func:`engine.methods.pseudo_marginal.pseudo_marginal` runs this when the release is
:class:`engine.mechanisms.ratio.OpenDPMean`.

Model. n records x_i ~ Normal(mu, sd) clamped to [lo, hi] (``normal_known_sd``: sd known, prior
mu ~ Normal(prior_mean, prior_sd)), S = sum_i clip(x_i, lo, hi); n private with prior p(n)
(``model.n_prior``), or known (``model.n``). The posterior is

    p(mu, n | r) ∝ p(mu) p(n) p(r | mu, n),   p(r | mu, n) = E_{S | mu, n}[ p(r | S, n) ],

with p(r | S, n) the ratio's law (:mod:`engine.mechanisms.ratio`, (D): the sum over the length's noise v is
computed exactly, truncated where the neglected mass is below 1e-13 / (2 b)).

Estimate. L_hat(mu, n) = (1/M) sum_{m<=M} p(r | S_m, n), S_m the clamped sum of n fresh records at mu: unbiased
and non-negative, O(M n) per estimate (at n = 0, S = 0 and L_hat is exact).

Chain (Andrieu & Roberts 2009). The state is (mu, n, L), L the estimate attached to (mu, n). The extended target

    pi(mu, n, L) ∝ p(mu) p(n) L g(L | mu, n),    g the law of L_hat(mu, n),

has (mu, n)-marginal p(mu) p(n) E[L_hat(mu, n)] ∝ p(mu, n | r), the exact posterior. Each iteration makes two
Metropolis–Hastings moves on the extended space, each proposing a new parameter and a fresh estimate L* ~ g(. |
new parameter):

1. mu* = mu + s z (z standard normal, symmetric), accepted with probability
   min{1, p(mu*) L* / (p(mu) L)}: the ratio pi(mu*, n, L*) q(mu | mu*) g(L | mu, n) / [pi(mu, n, L) q(mu* | mu)
   g(L* | mu*, n)] reduces to it because g cancels against the target's g and q is symmetric;
2. n* = n + d, d uniform on {-k, .., -1, 1, .., k} (symmetric: d and -d are equally likely), accepted with
   probability min{1, p(n*) L* / (p(n) L)} in the same way (n* < 0 has p(n*) = 0: rejected); skipped when n is
   known.

Each move leaves pi invariant, so their composition does too, and the (mu, n) draws have the exact posterior as
their stationary law. The current state's L is never re-estimated (that would target something else).

Tuning (warm-up only; the kernel is frozen after it): M from a pilot of p(r | S, n) at the starting point,
M = ceil(CV^2 / 1.2^2) (sd of log L_hat about 1.2, Doucet et al. 2015; CV^2 the pilot's squared coefficient of
variation), re-sized at mid warm-up at the current state; Robbins–Monro on log s and log k towards acceptance 0.3.
Start: n at the plug-in (the prior's mean, or the known n), mu at the release clipped into [lo, hi] plus a
per-chain jitter.

Draws: ``mu``, ``n`` and ``clamped_mean`` = E[clip(X, lo, hi)] at mu (the per-record mean that ``dp.mean``
estimates; it is what the column's mean is when the model holds); with a known n, ``mu`` and ``clamped_mean`` only:
n is then no parameter but a constant (in ``info["n"]`` and ``sample_stats["n"]``), whose draws would never move
and would fail every convergence check. Compiled loop:
:func:`engine.kernels.mean_ratio.ratio_pm_chain`.
"""
from __future__ import annotations

import math
import time

import numpy as np

from ..core.chains import kept, run_chains
from ..core.results import Problem, Result
from ..kernels import mean_ratio as kern
from ..mechanisms.ratio import OpenDPMean, clamped_mean

__all__ = ["mean_ratio_pseudo_marginal", "planned_work", "TARGET_ACCEPTANCE", "TARGET_LOG_SD"]

TARGET_ACCEPTANCE = 0.3
TARGET_LOG_SD = 1.2
_PILOT = 1_000
_PILOT_WORK = 4_000_000   # record draws a pilot may spend
_BLOCK_WORK = 2_000_000   # record draws between progress reports


class _Setup:
    """The problem as the kernel sees it."""

    def __init__(self, problem: Problem):
        model, mech = problem.model, problem.mechanism
        if not isinstance(mech, OpenDPMean):
            raise ValueError("mechanism is invalid for this sampler: it needs OpenDP's mean ([release] library = "
                             "\"opendp\", mechanism = \"mean\")")
        if getattr(model, "name", None) != "normal_known_sd":
            raise ValueError(f"model.name = {getattr(model, 'name', 'custom')!r} is invalid with OpenDP's mean: the "
                             "records of a mean are normal_known_sd (values clamped to [lo, hi])")
        self.r = float(problem.s_dp[0])
        self.sd, self.lo, self.hi = float(model.sd), float(model.lo), float(model.hi)
        self.prior_mean, self.prior_sd = float(model.prior_mean), float(model.prior_sd)
        self.b, self.t = float(mech.sum_scale), float(mech.length_scale)
        unk = problem.unknown_n
        self.move_n = unk is not None
        if unk is None:
            self.pcode, self.pmean, self.pdisp, self.n0, self.n_sd = 0, 1.0, 1.0, int(model.n), 0.0
        else:
            prior = unk.prior
            self.pcode, self.pmean, self.pdisp = prior.code, float(prior.mean), float(prior.dispersion or 1.0)
            self.n0, self.n_sd = max(int(round(prior.mean)), 1), float(prior.sd)

    def log_lik_pilot(self, rng, mu, n, size) -> np.ndarray:
        out = np.empty(size)
        kern.log_density_draws(rng, self.r, float(mu), int(n), self.sd, self.lo, self.hi, self.b, self.t, out)
        return out


def _particles(setup: _Setup, rng, mu, n, cap: int) -> tuple[int, float]:
    """M = ceil(CV^2 / 1.2^2) in [1, cap] from a pilot of p(r | S, n) at (mu, n); (M, CV^2)."""
    if n == 0:
        return 1, 0.0
    size = int(min(_PILOT, max(100, _PILOT_WORK // max(n, 1))))
    lw = setup.log_lik_pilot(rng, mu, n, size)
    top = lw.max()
    if not np.isfinite(top):
        return cap, math.inf
    w = np.exp(lw - top)
    cv2 = float(w.var() / w.mean() ** 2)
    return int(min(max(1, math.ceil(cv2 / TARGET_LOG_SD**2)), cap)), cv2


def planned_work(problem: Problem, settings) -> tuple[int, int]:
    """(M, n): the particles per estimate a run would start with (``settings["particles"]``, else the pilot's at
    the chain's seeded start) and the records each particle simulates (n at the start): what a run's cost
    estimate multiplies."""
    setup = _Setup(problem)
    rng = np.random.default_rng(0)
    mu, n = _start(setup, rng)
    m = settings.get("particles") or _particles(setup, rng, mu, n, int(settings.get("max_particles", 20_000)))[0]
    return int(m), int(n)


def _start(setup: _Setup, rng) -> tuple[float, int]:
    r = setup.r
    centre = min(max(r, setup.lo), setup.hi) if math.isfinite(r) else setup.prior_mean
    width = setup.sd / math.sqrt(setup.n0) + math.sqrt(2.0) * setup.b / setup.n0
    return centre + min(width, setup.prior_sd) * float(rng.standard_normal()), setup.n0


def _run_chain(setup: _Setup, rng, warmup, draws, particles, cap, progress, c, tick, stop):
    total = warmup + draws
    mu, n = _start(setup, rng)
    m, cv2 = (particles, float("nan")) if particles else _particles(setup, rng, mu, n, cap)
    ll = kern.log_lik_estimate(rng, setup.r, mu, n, setup.sd, setup.lo, setup.hi, setup.b, setup.t, m)
    for _ in range(100):  # a start whose estimate underflows to 0 is moved (a draw from the prior on mu)
        if ll > -math.inf:
            break
        mu = setup.prior_mean + setup.prior_sd * float(rng.standard_normal())
        ll = kern.log_lik_estimate(rng, setup.r, mu, n, setup.sd, setup.lo, setup.hi, setup.b, setup.t, m)
    else:
        raise ValueError(f"data.s_dp = {setup.r!r} is invalid for this model: no start found where its likelihood "
                         "is positive (is the release far outside [lo, hi]?)")
    width = setup.sd / math.sqrt(max(n, 1)) + math.sqrt(2.0) * setup.b / max(n, 1)
    log_step_mu = math.log(2.4 * min(width, setup.prior_sd))
    log_step_n = math.log(max(1.0, setup.n_sd)) if setup.move_n else 0.0
    outs = (np.empty(total), np.empty(total, dtype=np.int64), np.empty(total), np.empty(total), np.empty(total))
    block = max(1, int(_BLOCK_WORK // max(2 * m * max(n, 1), 1)))
    half = warmup // 2
    done = 0
    resized = not (particles is None and half > 0)
    while done < total and not stop.is_set():
        end = min(total, done + block)
        if done < half:
            end = min(end, half)
        elif not resized:
            m, cv2 = _particles(setup, rng, mu, n, cap)
            ll = kern.log_lik_estimate(rng, setup.r, mu, n, setup.sd, setup.lo, setup.hi, setup.b, setup.t, m)
            resized = True
            if ll == -math.inf:  # cannot happen at a state the chain reached with a positive estimate
                ll = -1e300
        if done < warmup:
            end = min(end, warmup)
        sl = slice(done, end)
        adapt_from = done if done < warmup else -1
        mu, n, ll, log_step_mu, log_step_n = kern.ratio_pm_chain(
            rng, setup.r, setup.sd, setup.lo, setup.hi, setup.prior_mean, setup.prior_sd, setup.pcode, setup.pmean,
            setup.pdisp, setup.move_n, setup.b, setup.t, int(m), float(mu), int(n), float(ll), float(log_step_mu),
            float(log_step_n), int(adapt_from), TARGET_ACCEPTANCE, *(o[sl] for o in outs))
        done = end
        progress[c] = done
        tick()
    return outs, {"particles": int(m), "cv2": cv2, "step_mu": math.exp(log_step_mu),
                  "step_n": max(1, int(round(math.exp(log_step_n)))) if setup.move_n else 0}


def mean_ratio_pseudo_marginal(problem: Problem, rng: np.random.Generator, *, chains: int = 4, draws: int = 1000,
                               warmup: int = 500, particles: int | None = None, max_particles: int = 20_000,
                               on_progress=None, parallel: bool = True) -> Result:
    """Draw from p(mu, n | r) for OpenDP's mean (module docstring). Chain c runs on ``rng.spawn(chains)[c]``.

    ``particles``: M per estimate (default: sized in warm-up). Returns a Result with the draws ``mu``, ``n``,
    ``clamped_mean`` (``mu``, ``clamped_mean`` with a known n); ``sample_stats``: ``acceptance_rate`` (the mu
    move's acceptance probability), ``n_acceptance`` (the n move's; NaN when n is known),
    ``log_likelihood_estimate``, ``n``; ``info``: ``particles``, ``log_lik_sd``, ``proposal_sd`` (mu's step),
    ``n_step`` (k), ``unknown_n``, ``n`` (a known n) or ``n_prior``, ``likelihood = "estimated"``, ``release`` (the
    mechanism's description)."""
    t0 = time.perf_counter()
    setup = _Setup(problem)
    streams = rng.spawn(chains)
    progress = np.zeros(chains, dtype=np.int64)
    outs, stopped = run_chains(
        lambda c, tick, stop: _run_chain(setup, streams[c], warmup, draws, particles, max_particles, progress, c,
                                         tick, stop),
        chains, warmup + draws, progress, on_progress, parallel=parallel)
    keep, n_kept = kept(progress, warmup, draws)
    sl = slice(warmup, warmup + n_kept)
    per = [outs[c][1] for c in keep]
    mu = np.stack([outs[c][0][0][sl] for c in keep])
    n = np.stack([outs[c][0][1][sl] for c in keep]).astype(float)
    acc = np.stack([outs[c][0][2][sl] for c in keep])
    acc_n = np.stack([outs[c][0][3][sl] for c in keep])
    ll = np.stack([outs[c][0][4][sl] for c in keep])
    cm = clamped_mean(mu, setup.sd, setup.lo, setup.hi)
    unk = problem.unknown_n
    info = {
        "likelihood": "estimated", "mcmc": True, "compiled": True,
        "sampler": "pseudo-marginal on (mu, n), OpenDP's mean r = (S + U) / max(n + V, 0)",
        "release": problem.mechanism.describe(),
        "particles": [p["particles"] for p in per],
        "log_lik_sd": [None if not np.isfinite(p["cv2"]) else math.sqrt(p["cv2"] / p["particles"]) for p in per],
        "particles_capped": any(p["particles"] >= max_particles for p in per),
        "proposal_sd": [p["step_mu"] for p in per], "n_step": [p["step_n"] for p in per],
        "target_acceptance": TARGET_ACCEPTANCE,
        "mean_acceptance": float(acc.mean()) if acc.size else float("nan"),
        "n_mean_acceptance": float(np.nanmean(acc_n)) if unk is not None and acc_n.size else None,
        "unknown_n": unk is not None,
        **({"n_prior": unk.prior.as_dict()} if unk is not None else {"n": int(problem.model.n)}),
        "chains": len(keep), "draws": n_kept, "warmup": warmup,
        "stopped": "cancelled" if stopped else None,
        "wall_time_s": time.perf_counter() - t0,
    }
    names, columns = (("mu", "n", "clamped_mean"), [mu, n, cm]) if unk is not None else (("mu", "clamped_mean"),
                                                                                          [mu, cm])
    return Result(method="pseudo_marginal", param_names=names, draws=np.stack(columns, axis=2), s_dp=problem.s_dp,
                  sample_stats={"acceptance_rate": acc, "n_acceptance": acc_n, "log_likelihood_estimate": ll,
                                "n": n},
                  info=info)
