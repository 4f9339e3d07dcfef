"""Reversible-jump MCMC for an unknown number of records (paper 002, Alg. 1; Green 1995).

Target
    Under unbounded DP the size n is private: the release is (s_dp, n_dp) and n gets a prior p(n)
    (``model.n_prior``). On the union over n of {n} x Theta x X^n the posterior is

        pi(n, theta, x_1..x_n) ∝ p(theta) p(n) prod_{i<=n} f(x_i | theta) eta(s_dp | s(x)) eta_n(n_dp | n),

    with s(x) = sum_i t(x_i) record-additive (Ju et al. 2022, Assumption 2; paper 002, A3). Its
    (theta, n)-marginal is the private posterior p(theta, n | s_dp, n_dp).

Within-model moves (n fixed)
    Algorithm 1 of Ju et al. (2022) with n records: theta | x from the conjugate posterior (exact
    Gibbs), then the record sweep x_i* ~ f(. | theta) accepted with probability
    min{1, eta(s_dp | s - t(x_i) + t(x_i*)) / eta(s_dp | s)}. Both leave pi(theta, x | n) invariant,
    hence pi. The compiled sweep is the one DA-MCMC runs (:mod:`engine.kernels.da_mcmc`). For normal
    records, translation moves (mu, x) -> (mu + d, x + d) between the two (:func:`engine.kernels.da_mcmc.
    normal_shift`, derived there; DA-MCMC makes them too): under wide noise the Gibbs pair moves mu by
    about sd / sqrt(n) an iteration across a posterior as wide as its prior.

Between-model moves (theta fixed), derived from Green (1995)
    *Add* (chosen with probability 1/2): draw x* ~ f(. | theta), insert it at a uniformly chosen
    position j in {1..n+1}; the new state is (n+1, theta, x'). The map (x, x*) -> x' only permutes
    coordinates, so its Jacobian is 1. *Delete* (probability 1/2): pick one of the n records
    uniformly and remove it; this is the reverse of the add move. Green's acceptance ratio for add is

        A_add = pi(n+1, theta, x') q_del(x' -> x) / [pi(n, theta, x) q_add(x -> x') f(x* | theta)]

    with q_del = (1/2)(1/(n+1)) and q_add = (1/2)(1/(n+1)) (the position), so the move
    probabilities cancel, and pi(n+1, theta, x') / pi(n, theta, x) contains the new record's
    likelihood f(x* | theta), which cancels the proposal density f(x* | theta) in the denominator:

        A_add = p(n+1)/p(n) * eta(s_dp | s + t(x*)) / eta(s_dp | s) * eta_n(n_dp | n+1) / eta_n(n_dp | n).

    The delete of record x_j from n records is the reverse move, A_del = 1 / A_add(n-1 -> n, x_j):

        A_del = p(n-1)/p(n) * eta(s_dp | s - t(x_j)) / eta(s_dp | s) * eta_n(n_dp | n-1) / eta_n(n_dp | n),

    and a delete proposed at n = 0 is rejected (p(-1) = 0). Each move is accepted with probability
    min(1, A): the prior ratio on n, the size mechanism's ratio and the statistic mechanism's ratio,
    all O(1) by record additivity. For a mechanism that is epsilon_s-DP (unbounded sense) and a size
    mechanism that is epsilon_n-DP, the two noise ratios are at least exp(-epsilon_s - epsilon_n)
    (paper 002, Prop. 5.1), so A_add >= exp(-epsilon_s - epsilon_n) p(n+1)/p(n).

    The record store is a doubling array (paper 002, Remark 5.5) holding x' itself: add puts x* in the
    uniformly chosen slot j and moves the record that was there to slot n (doubling the store when full,
    amortised O(1)); delete moves the last record into the freed slot, which undoes exactly that add, so
    q_add and q_del above are the store's own. Writing x* to slot n always (as until session 22) makes no
    delete the reverse of an add: the newest record, accepted through the noise, always sits last, where
    the systematic sweep meets it last, and the chain was biased by 3-4% of a posterior sd at a few jumps an
    iteration (:mod:`engine.kernels.rjmcmc`).

One iteration: the theta draw, the sweep, then ``jumps`` between-model moves. ``draws`` gets a
column ``n`` beside the model's parameters (theta after the sweep, n after the jumps: one state of
the chain). ``jumps`` defaults to ceil(2 v) clipped to [10, 10,000], v the variance of n given n_dp alone
(:func:`default_jumps`), a guess of n's posterior variance: a +-1 random walk needs about v steps to cross it.
A chain's n starts at the mode of that law (:func:`start_n`).
"""
from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass

import numpy as np

from ..core.chains import kept, run_chains
from ..core.results import Problem, Result
from ..core.validation import fail, positive_int
from ..kernels import rjmcmc as rj_kernels
from ..mechanisms import RandomizedResponse
from .base import Method

__all__ = ["rjmcmc", "RJRunner", "RJState", "default_jumps", "size_weights", "start_n", "n_pmf", "METHOD",
           "SUPPORTED_MODELS"]

SUPPORTED_MODELS = ("beta_binomial", "poisson_gamma", "normal_known_sd")


@dataclass
class RJState:
    """Mutable state of one chain: the record store (first n slots used), n and running sums."""

    x: np.ndarray
    n: int
    s: float
    sum_x: float


def check_unknown_n(problem: Problem, method: str) -> None:
    """Refuse problems the reversible-jump kernels do not serve, with one line."""
    model, mech = problem.model, problem.mechanism
    where = f"{method} with an unknown n" if problem.unknown_n is not None else method
    if getattr(model, "name", "custom") not in SUPPORTED_MODELS:
        raise ValueError(f"model.name = {getattr(model, 'name', 'custom')!r} is invalid for {where}: supported "
                         "models are " + ", ".join(SUPPORTED_MODELS))
    if isinstance(mech, RandomizedResponse):
        raise ValueError(f"mechanism.name = 'randomized_response' is invalid for {where}: use additive noise "
                         "(laplace, gaussian, discrete_laplace, discrete_gaussian)")


#: size_weights evaluates w(n) at every integer up to this size; beyond it, on an even grid of a tenth as many points
#: with every integer in windows around round(n_dp), the prior's mode and the coarse grid's best point
_SIZE_GRID = 1_000_000


def _prior_mode(prior) -> int:
    """The mode of p(n): floor(mean) for the Poisson; floor((r - 1) q / (1 - q)) for the negative binomial with
    r > 1 (q = mean / (mean + r)), else 0 (p(n + 1) / p(n) = q (n + r) / (n + 1) < 1 from n = 0)."""
    if prior.name == "poisson":
        return int(math.floor(prior.mean))
    r = float(prior.dispersion)
    return int(math.floor((r - 1.0) * prior.mean / r)) if r > 1.0 else 0


@functools.lru_cache(maxsize=16)  # start_n, default_jumps and the cost estimate ask for the same one (not mutated)
def size_weights(unk) -> tuple[np.ndarray, np.ndarray]:
    """(n, weight of n) for w(n) = p(n) eta_n(n_dp | n), the posterior of n given n_dp alone, normalised with each
    point's share of the integers (1 on the integer grid).

    Beyond a = max(round(n_dp), the prior's mode) both factors decrease: p past its mode, and the noise law (Laplace,
    Gaussian and their discrete kin, unimodal at 0) away from n_dp, so w(n) <= w(a) eta_n(n - a) / eta_n(0), which
    50 noise sds past a is below e^-70 of w(a) (Laplace: sd = sqrt(2) b) and falls geometrically: the range stops
    there. No quantile of the prior is needed (one of a negative binomial with r = 1e-6 took seconds and reached
    1e13)."""
    sd = float(unk.mechanism.noise_sd)
    centre, mode = int(unk.plug_in), _prior_mode(unk.prior)
    hi = max(centre, mode) + math.ceil(50.0 * sd) + 10
    if hi <= _SIZE_GRID:
        grid = np.arange(hi + 1, dtype=float)
    else:
        coarse = np.rint(np.linspace(0.0, hi, _SIZE_GRID // 10 + 1))
        width = min(math.ceil(50.0 * sd) + 10, _SIZE_GRID // 2)
        grid = np.unique(np.concatenate([coarse] + [np.arange(max(0, c - width), c + width + 1.0)
                                                    for c in (centre, mode)]))
        best = grid[int(np.argmax(unk.prior.log_pmf(grid) + unk.log_likelihood(grid)))]
        step = min(math.ceil(2.0 * hi / (_SIZE_GRID // 10)), _SIZE_GRID // 2)
        grid = np.unique(np.concatenate([grid, np.arange(max(0.0, best - step), best + step + 1.0)]))
    log_w = unk.prior.log_pmf(grid) + unk.log_likelihood(grid)
    w = np.exp(log_w - np.max(log_w)) * (np.gradient(grid) if grid.size > 1 else 1.0)
    return grid, w / w.sum()


def start_n(unk) -> int:
    """Where a chain's n starts: the mode of w(n) (:func:`size_weights`), at least 1. Any start leaves the target
    unchanged; this one spares the warmup the walk from the plug-in round(n_dp) to where the posterior is. The
    +-1 moves cross about ``jumps`` sizes an iteration, so where the prior and n_dp disagree (a Poisson(20) prior,
    n_dp = 5,000 under Laplace noise of scale 1: the posterior of n sits near 53) a start at round(n_dp) spent the
    whole warmup, and more, walking down (R-hat 1.14, bulk ESS 20), through sweeps over thousands of records."""
    grid, w = size_weights(unk)
    return max(1, int(grid[int(np.argmax(w / (np.gradient(grid) if grid.size > 1 else 1.0)))]))


def default_jumps(problem: Problem) -> int:
    """ceil(2 v) clipped to [10, 10,000], v the variance of w(n) (:func:`size_weights`), a guess of the posterior
    variance of n: a +-1 random walk needs about v steps to cross it. Until audit s25 v was 1/(1/Var p(n) + 1/Var
    noise_n), the normal approximation's, which is as narrow as the noise where the prior and n_dp disagree: 1.8
    for the Poisson(20) prior and n_dp = 5,000 above, where w's variance is 47."""
    grid, w = size_weights(problem.unknown_n)
    mean = float(w @ grid)
    v = float(w @ (grid - mean) ** 2)
    return int(min(max(10, math.ceil(2.0 * v)), 10_000))


class RJRunner:
    """Binds a problem (known n: ``jumps = 0``; unknown n: ``problem.unknown_n``) to its compiled
    reversible-jump kernel. Also the E-step engine of :mod:`engine.methods.mcem`."""

    def __init__(self, problem: Problem):
        self.problem = problem
        model, mech = problem.model, problem.mechanism
        check_unknown_n(problem, "this method")
        self.kernel, self.scale = int(mech.kernel), float(mech.scale)
        self.sdp = float(problem.s_dp[0])
        unk = problem.unknown_n
        if unk is None:  # known n: the size terms are never evaluated (jumps = 0)
            self.ndp, self.nkernel, self.nscale = 0.0, 0, 1.0
            self.pcode, self.pmean, self.pdisp = 0, 1.0, 1.0
        else:
            self.ndp, self.nkernel, self.nscale = float(unk.n_dp), int(unk.mechanism.kernel), float(unk.mechanism.scale)
            self.pcode, self.pmean = unk.prior.code, float(unk.prior.mean)
            self.pdisp = float(unk.prior.dispersion or 1.0)
        self.name = model.name

    def init_state(self, rng: np.random.Generator, theta0: np.ndarray | None = None) -> RJState:
        """n = the known n, or for an unknown n :func:`start_n`; theta from the naive posterior, x ~ f(. | theta)."""
        model = self.problem.model
        unk = self.problem.unknown_n
        n0 = int(model.n) if unk is None else start_n(unk)
        if theta0 is None:
            theta0 = model.posterior_sample(rng, model.project(self.problem.s_dp), 1)[0]
        x = np.asarray(model.sample_records(rng, theta0, n0))
        dtype = {"beta_binomial": np.int8, "poisson_gamma": np.int64}.get(self.name, np.float64)
        store = np.zeros(max(16, 2 * n0), dtype=dtype)
        store[:n0] = x
        return RJState(x=store, n=n0, s=float(model.statistic(x)[0]), sum_x=float(np.sum(x)))

    def advance(self, rng, st: RJState, n_iter: int, jumps: int, outs, theta: float | None = None) -> None:
        """``n_iter`` iterations; theta drawn each iteration unless given (held fixed)."""
        m = self.problem.model
        upd = theta is None
        th = 0.0 if upd else float(theta)
        tail = (self.sdp, self.kernel, self.scale, self.ndp, self.nkernel, self.nscale, self.pcode, self.pmean,
                self.pdisp, int(jumps), int(n_iter), *outs)
        if self.name == "beta_binomial":
            st.x, n, s = rj_kernels.rj_bernoulli_chain(rng, st.x, st.n, int(st.s), m.a, m.b, upd, th, *tail)
            st.n, st.s, st.sum_x = int(n), float(s), float(s)
        elif self.name == "poisson_gamma":
            upper = -1 if m.upper is None else int(m.upper)
            st.x, n, s, sx = rj_kernels.rj_poisson_chain(rng, st.x, st.n, int(st.s), int(st.sum_x), m.alpha, m.beta,
                                                         upper, upd, th, *tail)
            st.n, st.s, st.sum_x = int(n), float(s), float(sx)
        else:
            noise_sd = float(self.problem.mechanism.noise_sd)
            st.x, n, s, sx = rj_kernels.rj_normal_chain(rng, st.x, st.n, m.sd, m.lo, m.hi, m.prior_mean, m.prior_sd,
                                                        noise_sd, upd, th, *tail)
            st.n, st.s, st.sum_x = int(n), float(s), float(sx)


def new_outputs(total: int) -> tuple:
    """(theta, n, suff, acceptance, accepted fraction, jump sums) arrays for ``total`` iterations."""
    return (np.empty((total, 1)), np.empty(total, dtype=np.int64), np.empty(total), np.empty(total),
            np.empty(total), np.empty((total, 4)))


def _run_chain(runner, rng, warmup, draws, jumps, block, progress, c, tick, stop):
    total = warmup + draws
    outs = new_outputs(total)
    st = runner.init_state(rng)
    done = 0
    while done < total and not stop.is_set():
        m = min(block, total - done)
        runner.advance(rng, st, m, jumps, tuple(o[done:done + m] for o in outs))
        done += m
        progress[c] = done
        tick()
    return outs


def _rate(jump: np.ndarray, which: int) -> float:
    """Mean acceptance probability of add (0) or delete (1) proposals."""
    total = jump[..., 2 * which + 1].sum()
    return float(jump[..., 2 * which].sum() / total) if total > 0 else float("nan")


def rjmcmc(problem: Problem, rng: np.random.Generator, *, chains: int = 4, draws: int = 1000, warmup: int = 500,
           jumps: int | None = None, on_progress=None, parallel: bool = True) -> Result:
    """Draw from p(theta, n | s_dp, n_dp) by reversible jump (paper 002, Alg. 1).

    Parameters
    ----------
    problem : Problem
        An unknown-n problem (``problem.unknown_n``: prior on n, size mechanism, n_dp).
    rng : numpy.random.Generator
        Parent stream; chain c runs on ``rng.spawn(chains)[c]``.
    chains, draws, warmup : int
        Chains, kept iterations per chain, discarded iterations per chain.
    jumps : int, optional
        Between-model moves per iteration (default :func:`default_jumps`).
    on_progress : callable(done, total), optional
        As for DA-MCMC: returning False stops at the next block, keeping the draws made.

    Returns
    -------
    Result
        ``draws`` columns: the model's parameter, then ``n``. ``sample_stats``: ``acceptance_rate`` and
        ``accepted_fraction`` of the record sweep, ``jump_acceptance`` (mean acceptance probability of
        the iteration's add/delete proposals), ``n``. ``info``: ``add_acceptance``,
        ``delete_acceptance`` (overall and ``*_per_chain``), ``jumps``, ``n_dp``, ``n_prior``,
        ``unknown_n`` (True), ``mean_acceptance``, ``wall_time_s``.
    """
    t0 = time.perf_counter()
    if problem.unknown_n is None:
        raise ValueError("method.name = 'rjmcmc' is invalid for a known n: it needs model.n_prior, [n_mechanism] "
                         "and data.n_dp (an unknown, privately released sample size); use da_mcmc for a known n")
    runner = RJRunner(problem)
    jumps = default_jumps(problem) if jumps is None else int(jumps)
    n_guess = max(problem.model.n, int(problem.unknown_n.prior.mean))
    block = max(1, min(warmup + draws, int(4_000_000 // max(n_guess + jumps, 1))))
    streams = rng.spawn(chains)
    progress = np.zeros(chains, dtype=np.int64)
    outs, stopped = run_chains(
        lambda c, tick, stop: _run_chain(runner, streams[c], warmup, draws, jumps, block, progress, c, tick, stop),
        chains, warmup + draws, progress, on_progress, parallel=parallel)
    keep, n_kept = kept(progress, warmup, draws)
    sl = slice(warmup, warmup + n_kept)
    theta = np.stack([outs[c][0][sl] for c in keep])
    n = np.stack([outs[c][1][sl] for c in keep]).astype(float)
    acc = np.stack([outs[c][3][sl] for c in keep])
    frac = np.stack([outs[c][4][sl] for c in keep])
    jump = np.stack([outs[c][5][sl] for c in keep])
    props = jump[..., 1] + jump[..., 3]
    with np.errstate(invalid="ignore", divide="ignore"):
        jump_rate = np.where(props > 0, (jump[..., 0] + jump[..., 2]) / props, np.nan)
    unk = problem.unknown_n
    return Result(
        method="rjmcmc",
        param_names=tuple(problem.model.param_names) + ("n",),
        draws=np.concatenate([theta, n[:, :, None]], axis=2),
        s_dp=problem.s_dp,
        sample_stats={"acceptance_rate": acc, "accepted_fraction": frac, "jump_acceptance": jump_rate, "n": n},
        info={
            "unknown_n": True,
            "n_dp": float(unk.n_dp),
            "n_prior": unk.prior.as_dict(),
            "n_mechanism": unk.mechanism.describe(),
            "jumps": jumps,
            "add_acceptance": _rate(jump, 0),
            "delete_acceptance": _rate(jump, 1),
            "add_acceptance_per_chain": [_rate(j, 0) for j in jump],
            "delete_acceptance_per_chain": [_rate(j, 1) for j in jump],
            "mean_acceptance": float(acc.mean()) if acc.size else float("nan"),
            "min_acceptance_per_chain": [float(a.min()) for a in acc] if acc.size else [],
            "epsilon_bound": None,
            "chains": len(keep), "draws": n_kept, "warmup": warmup,
            "stopped": "cancelled" if stopped else None,
            "compiled": True,
            "mcmc": True,
            "wall_time_s": time.perf_counter() - t0,
        },
    )


def n_pmf(result: Result) -> tuple[np.ndarray, np.ndarray]:
    """(values, probabilities): the posterior pmf of n estimated from the draws of a result with an
    ``n`` column (rjmcmc). Raises ValueError naming the result's method where it has none (a known n)."""
    if "n" not in result.param_names:
        fail("result", result.method, "has no draws of n: n_pmf reads a result of rjmcmc (n unknown), whose "
             f"parameters include n; this one has {', '.join(result.param_names)}")
    n = np.rint(result.flat("n")).astype(np.int64)
    values, counts = np.unique(n, return_counts=True)
    return values, counts / counts.sum()


def _validate(table, out):
    if "jumps" in table:
        out["jumps"] = positive_int("method.jumps", table["jumps"], 1, 1_000_000)


def _run(problem, rng, settings, on_progress):
    settings.pop("grid_size", None)
    return rjmcmc(problem, rng, on_progress=on_progress, **settings)


METHOD = Method(name="rjmcmc", claim="exact", paper="paper 002, Alg. 1 (reversible jump, Green 1995)", run=_run,
                keys=frozenset({"jumps"}), validate=_validate, mcmc=True, unknown_n=True)
