r"""The pseudo-marginal sampler of the naive-Bayes log-linear model (Ju et al. 2022, Sec. 4), with no n
in its cost: :func:`engine.methods.pseudo_marginal.pseudo_marginal` runs this for
``naive_bayes_loglinear``.

Target. The statistic s (the K class-by-level tables, class totals c their row sums) is drawn
directly given theta = (pi, p): c ~ Mult(n, pi), row (k, i) ~ Mult(c_i, p[k][i]). The pseudo-marginal
sampler with one particle is Metropolis–Hastings on the extended state (theta, s) with target

    pi(theta, s) ∝ p(theta) p(s | theta) eta(s_dp - s),                                     (T)

whose theta-marginal is the private posterior p(theta | s_dp) ∝ p(theta) sum_s p(s | theta)
eta(s_dp - s) (Andrieu & Roberts 2009, M = 1). One particle in 18 cells would have a hopeless
likelihood estimate at large n (the relative variance of eta(s_dp - s) multiplies over cells), so
the chain does not draw s afresh: every move below leaves (T) invariant and changes s only as much
as the move needs. One pass is (all pieces compiled in :mod:`engine.kernels.loglinear`):

1. **Coupled moves of each simplex** (correlated pseudo-marginal, Deligiannidis, Doucet & Pitt 2018,
   with the records' uniforms as the common random numbers). For the block b (pi, or one row
   p[k][i]): phi* = phi + L_b z in the block's additive log-ratio coordinates phi_j = log(p_j / p_last),
   theta* the other blocks unchanged; s* ~ R_{theta->theta*}(. | s), the same records' uniforms
   re-read at theta* (kernel module, property (C): p(s | theta) R_{theta->theta*}(s* | s) =
   p(s* | theta*) R_{theta*->theta}(s | s*)). The Metropolis–Hastings ratio of the joint proposal
   q(phi* | phi) R(s* | s) against (T), written in phi (the Dirichlet(alpha) density times the
   Jacobian prod_j p_j of the log-ratio map is prod_j p_j^alpha, Aitchison 1986), is

       p(theta*) p(s* | theta*) eta(s_dp - s*) q(phi | phi*) R_{theta*->theta}(s | s*)
       -------------------------------------------------------------------------------
       p(theta)  p(s | theta)   eta(s_dp - s)  q(phi* | phi) R_{theta->theta*}(s* | s)

     = prod_{j in b} (p*_j / p_j)^alpha  eta(s_dp - s*) / eta(s_dp - s)

   by (C) and the symmetry of q. No p(s | theta) is ever evaluated. When the noise is wide this is
   the move that travels: theta walks on the private posterior's scale and s follows it.
2. **Refreshes of the tables** (theta fixed), ``n_refresh`` times: s* ~ Q_m(. | s), m uniformly chosen
   records replaced by fresh draws from theta. Q_m is reversible for p(s | theta) (property (R)), so
   the ratio against (T) is eta(s_dp - s*) / eta(s_dp - s).
3. **theta | s by conjugacy** (the exact Gibbs step of (T): p(theta | s) ∝ p(theta) p(s | theta),
   Dirichlet(alpha + c) and Dirichlet(alpha + row (k, i)), Assumption 1). When the noise is narrow, s
   is pinned near s_dp by eta and this step alone gives nearly independent theta (DA-MCMC's Gibbs
   step on the tables instead of the records: O(cells) instead of O(n)).

A recorded draw is ``THIN`` = 2 passes of 1-3 (thinning: the draws the convergence verdict sees are
less correlated for the same work). Each step leaves (T) invariant, hence so does their composition (a deterministic-scan product of
invariant kernels), and the theta-marginal of the chain's law converges to p(theta | s_dp). The two
movers complement each other as the centred and non-centred parameterisations of
data augmentation do (Yu & Meng 2011): step 3 mixes when eta is narrow relative to the spread of
s given theta, step 1 when it is wide.

Tuning (warm-up only, then frozen): each block's walk starts diagonal with the spread of the
Dirichlet(alpha + counts) of the starting tables in log-ratio coordinates (var = 1/a_j + 1/a_last)
times 2.38 / sqrt(d_b); Robbins–Monro on each block's log scale towards acceptance 0.3 (Andrieu &
Thoms 2008); at mid warm-up each block's covariance becomes (2.38^2 / d_b) times that of the second
quarter of warm-up (Haario et al. 2001). The refresh size m starts at the count whose replacement
moves a cell by about the noise sd and follows Robbins–Monro on log m towards acceptance 0.3.

Start: the tables are the release projected onto valid tables (:meth:`NaiveBayesLoglinear.project`),
rounded by largest remainders (class totals to sum n, each row to its class total); theta from
the naive posterior, one draw per chain (dispersed starts).
"""
from __future__ import annotations

import math
import time

import numpy as np

from ..core.chains import kept, run_chains, warmup_blocks
from ..core.results import Problem, Result
from ..kernels import loglinear as kern

__all__ = ["loglinear_pseudo_marginal", "round_tables", "N_REFRESH"]

N_REFRESH = 3           # table refreshes per pass
THIN = 2                # passes per recorded draw
TARGET_ACCEPTANCE = 0.3


def _largest_remainder(x: np.ndarray, total: int) -> np.ndarray:
    """Non-negative integers summing to ``total``, nearest x (floors, then the largest remainders)."""
    x = np.maximum(np.asarray(x, float), 0.0)
    if x.sum() <= 0:
        x = np.ones_like(x)
    x = x * (total / x.sum())
    base = np.floor(x).astype(np.int64)
    short = int(total - base.sum())
    if short > 0:
        base[np.argsort(-(x - base), kind="stable")[:short]] += 1
    return base


def round_tables(model, table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(c, s) integer tables from valid real tables (row sums the same in every table, total n)."""
    big_i = model.class_levels
    tables = model._tables(table)
    c = _largest_remainder(tables[0].sum(axis=1), model.n)
    rows = [np.stack([_largest_remainder(t[i], int(c[i])) for i in range(big_i)]).ravel() for t in tables]
    return c, np.concatenate(rows).astype(np.int64)


def _blocks(model) -> list[tuple[int, int]]:
    """(start in the parameter vector, size) of each simplex: pi, then p[k][i]."""
    big_i = model.class_levels
    out = [(0, big_i)]
    for k, jk in enumerate(model.feature_levels):
        out += [(big_i + int(model.offsets[k]) + i * jk, jk) for i in range(big_i)]
    return out


def _alr(theta: np.ndarray, start: int, size: int) -> np.ndarray:
    lp = np.log(np.maximum(theta[..., start:start + size], 1e-300))
    return lp[..., :-1] - lp[..., -1:]


class _Chain:
    def __init__(self, problem: Problem, rng: np.random.Generator):
        model = self.model = problem.model
        self.blocks = _blocks(model)
        self.jmax = max([model.class_levels, *model.feature_levels])
        self.c, self.s = round_tables(model, model.project(problem.s_dp))
        theta0 = model.posterior_sample(rng, model.project(problem.s_dp), 1)[0]
        self.lp = np.log(np.maximum(theta0, 1e-300))
        for start, size in self.blocks:  # renormalise each simplex in logs
            seg = self.lp[start:start + size]
            self.lp[start:start + size] = seg - (seg.max() + math.log(np.exp(seg - seg.max()).sum()))
        counts = np.concatenate([self.c, self.s]).astype(float) + model.alpha
        nb = len(self.blocks)
        self.chols = np.zeros((nb, self.jmax, self.jmax))
        for b, (start, size) in enumerate(self.blocks):
            a = counts[start:start + size]
            sd = np.sqrt(1.0 / a[:-1] + 1.0 / a[-1])
            self.chols[b, :size - 1, :size - 1] = np.diag(sd) * 2.38 / math.sqrt(size - 1)
        self.log_scale = np.zeros(nb)
        noise_sd = float(getattr(problem.mechanism, "noise_sd", 1.0) or 1.0)
        cells = model.stat_dim / max(model.n_features, 1)  # cells per table
        self.log_m = math.log(min(max(noise_sd**2 * cells / 2.0, 1.0), float(model.n)))
        self.cur = 0.0

    @property
    def m(self) -> int:
        return int(min(max(round(math.exp(self.log_m)), 1), self.model.n))

    def scaled_chols(self) -> np.ndarray:
        return np.ascontiguousarray(self.chols * np.exp(self.log_scale)[:, None, None])


def _run_chain(problem, rng, warmup, draws, progress, c, tick, stop):
    model = problem.model
    ch = _Chain(problem, rng)
    total = warmup + draws
    dim = len(model.param_names)
    nb = len(ch.blocks)
    theta = np.empty((total, dim))
    block_acc = np.empty((total, nb))
    refresh_acc = np.empty(total)
    levels = np.asarray(model.feature_levels, np.int64)
    offsets = np.asarray(model.offsets, np.int64)
    sdp = np.asarray(problem.s_dp, float)
    kernel = int(getattr(problem.mechanism, "kernel", 0))
    scale = float(getattr(problem.mechanism, "scale", 1.0))
    half, t_rm = warmup // 2, 0
    for done, end in warmup_blocks(warmup, total):
        if stop.is_set():
            break
        m_iter = ch.m
        ch.cur = kern.loglinear_pm_chain(rng, model.n, float(model.alpha), levels, offsets, sdp, kernel, scale,
                                         ch.lp, ch.c, ch.s, ch.scaled_chols(), m_iter, N_REFRESH, THIN, end - done,
                                         theta[done:end], block_acc[done:end], refresh_acc[done:end])
        if end <= warmup:  # Robbins-Monro, warm-up only
            t_rm += 1
            gain = t_rm ** -0.6
            ch.log_scale += gain * (block_acc[done:end].mean(axis=0) - TARGET_ACCEPTANCE)
            ch.log_m = min(max(ch.log_m + gain * (float(refresh_acc[done:end].mean()) - TARGET_ACCEPTANCE), 0.0),
                           math.log(model.n))
        done = end
        if done == half and half >= 40:
            _midway(ch, theta[half // 2:half])
            t_rm = 0
        progress[c] = done
        tick()
    return theta, block_acc, refresh_acc, {"refresh_records": ch.m, "scale_factor": np.exp(ch.log_scale).tolist()}


def _midway(ch: _Chain, theta_q2: np.ndarray) -> None:
    """Each block's proposal covariance from the second quarter of warm-up (Haario et al. 2001)."""
    for b, (start, size) in enumerate(ch.blocks):
        phi = _alr(theta_q2, start, size)
        cov = np.atleast_2d(np.cov(phi, rowvar=False))
        d = size - 1
        if not (np.all(np.isfinite(cov)) and np.all(np.diag(cov) > 0)):
            continue
        cov = cov + 1e-10 * np.eye(d) * max(float(np.mean(np.diag(cov))), 1e-12)
        try:
            ch.chols[b, :d, :d] = np.linalg.cholesky(cov) * (2.38 / math.sqrt(d))
            ch.log_scale[b] = 0.0
        except np.linalg.LinAlgError:
            pass


def loglinear_pseudo_marginal(problem: Problem, rng: np.random.Generator, *, chains: int = 4, draws: int = 1000,
                              warmup: int = 500, on_progress=None, parallel: bool = True) -> Result:
    """Draw from p(theta | s_dp) of ``naive_bayes_loglinear`` by the augmented chain of the module docstring.

    Chain c runs on ``rng.spawn(chains)[c]``. ``sample_stats``: ``acceptance_rate`` (the mean over the
    blocks of the coupled moves' acceptance probabilities, per iteration) and ``refresh_acceptance``.
    ``info``: ``likelihood = "augmented"``, ``particles`` (1 per chain: one statistic, carried and
    moved), ``refresh_records`` (m per chain), ``block_acceptance`` (mean per block), ``mean_acceptance``.
    """
    t0 = time.perf_counter()
    if getattr(problem.mechanism, "kernel", None) is None:
        raise ValueError(f"mechanism = {getattr(problem.mechanism, 'name', problem.mechanism)!r} is invalid for "
                         "pseudo_marginal on naive_bayes_loglinear: it needs additive noise on the tables "
                         "(laplace, gaussian, discrete_laplace, discrete_gaussian, ...)")
    streams = rng.spawn(chains)
    progress = np.zeros(chains, dtype=np.int64)
    outs, stopped = run_chains(
        lambda c, tick, stop: _run_chain(problem, streams[c], warmup, draws, progress, c, tick, stop),
        chains, warmup + draws, progress, on_progress, parallel=parallel)
    keep, n_kept = kept(progress, warmup, draws)
    sl = slice(warmup, warmup + n_kept)
    outs = [(o[0][sl], o[1][sl], o[2][sl], o[3]) for o in (outs[c] for c in keep)]
    theta = np.stack([o[0] for o in outs])
    block_acc = np.stack([o[1] for o in outs])
    acc = block_acc.mean(axis=2)
    info = {
        "likelihood": "augmented",
        "sampler": "coupled block moves + table refreshes + theta | tables (naive_bayes_loglinear)",
        "mcmc": True, "compiled": True,
        "particles": [1] * len(outs),
        "particles_capped": False,
        "refresh_records": [o[3]["refresh_records"] for o in outs],
        "refreshes_per_pass": N_REFRESH, "passes_per_draw": THIN,
        "target_acceptance": TARGET_ACCEPTANCE,
        "mean_acceptance": float(acc.mean()) if acc.size else float("nan"),
        "block_acceptance": block_acc.mean(axis=(0, 1)).tolist() if block_acc.size else [],
        "refresh_acceptance": float(np.mean([o[2].mean() for o in outs])) if n_kept else float("nan"),
        "chains": len(keep), "draws": n_kept, "warmup": warmup,
        "stopped": "cancelled" if stopped else None,
        "wall_time_s": time.perf_counter() - t0,
    }
    return Result(method="pseudo_marginal", param_names=tuple(problem.model.param_names), draws=theta,
                  s_dp=problem.s_dp,
                  sample_stats={"acceptance_rate": acc, "refresh_acceptance": np.stack([o[2] for o in outs])},
                  info=info)
