"""ABC rejection that is exact for privatized data (Gong 2020, Algorithm 3).

Propose theta ~ p(theta), s ~ p(s | theta) and accept with probability
eta(s_dp | s) / max_s eta(s_dp | s). The accepted theta are i.i.d. from p(theta | s_dp): the
acceptance probability is proportional to the mechanism's likelihood, so
P(theta accepted, theta in A) ∝ ∫_A p(theta) ∫ eta(s_dp | s) p(s | theta) ds dtheta
= ∫_A p(theta) p(s_dp | theta) dtheta. For additive noise eta(s_dp | s) = noise(s_dp - s) peaks at
zero noise, so the bound is noise(0) per coordinate. For randomized response with k = 2 the
likelihood of the reported count is tabulated over the true count and its maximum used.

Proposals run in batches; the run stops at the requested number of accepted draws, or when
``max_proposals`` or ``max_seconds`` is reached (checked between batches), and says which. For
beta_binomial and poisson_gamma without a clamp under additive noise the proposal loop is compiled
(:mod:`engine.kernels.abc`: prior draw, statistic draw, acceptance read from a table of
eta(s_dp - s)/eta(0) over s). For beta_binomial the joint prior draw of (theta, s) is made in the
other order, s from its prior predictive BetaBinomial(n, a, b) by an alias table and then
theta | s ~ Beta(a + s, b + n - s) -- the same joint law -- and since acceptance depends on s only,
theta is drawn for accepted proposals only (``abc_beta_binomial_batch``). Each batch is split over two threads with their own streams
(``rng.spawn(2)`` once per run); accepted draws are kept in a fixed order (thread 0's, then thread
1's, each in proposal order), which does not depend on their values, so the first ``draws`` of them
are still i.i.d. from the posterior and the run is reproducible. linear_regression proposes beta from its
normal prior and simulates the n records of each proposal in a compiled loop (same two-thread layout).
Other models use vectorised NumPy.
"""
from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..core.chains import Cancelled
from ..core.results import Problem, Result
from ..core.validation import fail, positive, positive_int
from ..kernels.abc import abc_beta_binomial_batch, abc_conjugate_batch, abc_regression_batch, alias_table
from ..mechanisms import MAX_RR_TABLE_N, RandomizedResponse
from ..models.beta_binomial import log_beta_binomial_pmf
from ..models.custom import CustomModel, log_eta_function
from ..numerics.plausibility import implausible_release
from .base import Method

__all__ = ["abc_rejection", "acceptance_log_prob", "METHOD"]


def acceptance_log_prob(problem: Problem):
    """A function s (batch, m) -> log of the acceptance probability eta(s_dp|s)/max eta."""
    mech, model = problem.mechanism, problem.model
    if isinstance(mech, RandomizedResponse):
        if model.name != "beta_binomial":
            raise ValueError("method.name = 'abc_rejection' is invalid for randomized_response on more than two "
                             "categories (its count likelihood is not tabulated); use da_mcmc")
        if model.n > MAX_RR_TABLE_N:
            raise ValueError(f"model.n = {model.n} is invalid for abc_rejection with randomized_response: at most "
                             f"{MAX_RR_TABLE_N} (tabulating the count likelihood costs O(n^2)); use da_mcmc")
        s = np.arange(model.n + 1)
        table = mech.count_log_likelihood(problem.s_dp, s, model.n)
        table = table - table.max()
        return lambda stat: table[np.rint(stat[:, 0]).astype(np.int64)]
    if mech is None and isinstance(model, CustomModel):
        fail("mechanism", None, "abc_rejection needs an engine mechanism: it accepts with probability eta(s_dp | s) / "
             "max_s eta, and a custom model's log_mechanism does not give that maximum; pass Problem(mechanism=...) "
             "with the release's engine mechanism, or use da_mcmc (or pseudo_marginal with model.log_prior)")
    if mech is None or not hasattr(mech, "noise_log_prob"):
        raise ValueError("mechanism is invalid for abc_rejection: it needs an engine mechanism with a known maximum")
    peak = _peak(mech)
    sdp = problem.s_dp
    return lambda stat: np.sum(mech.noise_log_prob(sdp[None, :] - stat) - peak, axis=1)


def _same_noise(problem: Problem, stat: np.ndarray, log_p: np.ndarray) -> None:
    """A custom model with both ``log_mechanism`` and an engine mechanism: DA-MCMC and the pseudo-marginal sampler
    use the former, ABC the latter (it needs its maximum), so the two must be one noise law: their log densities
    may differ by a constant only. Checked at every statistic ABC draws (the only ones its acceptance reads)."""
    model = problem.model
    if stat.ndim != 2 or stat.shape[1] != problem.s_dp.size:
        fail("model.record_statistic", model.record_statistic, f"it gives statistics of shape {stat.shape[1:]} and "
             f"s_dp has {problem.s_dp.size} entries: the statistic needs one entry per released number")
    log_eta = log_eta_function(problem)  # model.log_mechanism, checked
    own = np.array([log_eta(s) for s in stat])
    fin_own, fin_mech = np.isfinite(own), np.isfinite(log_p)
    gap = own[fin_own & fin_mech] - log_p[fin_own & fin_mech]
    if np.any(fin_own != fin_mech):
        i = int(np.argmax(fin_own != fin_mech))
        differ = f"one is -inf and the other not at s = {stat[i].tolist()} ({own[i]:.6g} against {log_p[i]:.6g})"
    elif gap.size and np.ptp(gap) > 1e-8 * (1.0 + np.abs(gap).max()):
        differ = f"their difference ranges from {gap.min():.6g} to {gap.max():.6g} over the statistics drawn"
    else:
        return
    fail("model.log_mechanism", model.log_mechanism, f"it and the engine mechanism ({problem.mechanism.describe()}) "
         f"are not one noise law: {differ}; abc_rejection accepts by the engine mechanism and the chains by "
         "log_mechanism, so the two may differ by a constant only: give the same law, or only one of them")


def _peak(mech) -> float:
    """The largest log-likelihood of one coordinate: at r = 0 for noise densities; 0 (probability one) for a
    clipped release on its bound, whose likelihood P(U <= r) or P(U >= r) approaches 1."""
    if getattr(mech, "release_law", False) and getattr(mech, "side", 0) != 0:
        return 0.0
    return float(mech.noise_log_prob(np.zeros(1))[0])


def abc_rejection(problem: Problem, rng: np.random.Generator, *, draws: int = 4000, max_proposals: int = 20_000_000,
                  max_seconds: float = 30.0, batch_size: int = 200_000, on_progress=None, **_ignored) -> Result:
    """Exact i.i.d. posterior draws by ABC rejection (Gong 2020, Algorithm 3).

    Returns a Result with one chain of up to ``draws`` draws; ``info`` holds ``proposals``,
    ``accepted``, ``acceptance_rate``, ``requested`` and ``stopped_by`` (``draws``,
    ``max_proposals``, ``max_seconds``, or ``cancelled`` when ``on_progress`` returned False after a
    batch: the draws accepted so far are kept). Raises ``ValueError`` if nothing was accepted within the
    budget, naming the budget and the acceptance rate bound it implies, and, for a release far outside
    what the mechanism produces from n records, how far (:mod:`engine.numerics.plausibility`; the app
    says so before running and does not run ABC on such a release).
    """
    t0 = time.perf_counter()
    model = problem.model
    log_acc = acceptance_log_prob(problem)
    if getattr(model, "name", "") == "linear_regression":
        return _abc_regression(problem, rng, draws, max_proposals, max_seconds, batch_size, on_progress, t0)
    compiled = _compiled_setup(problem)
    if compiled is not None:
        return _abc_compiled(problem, rng, compiled, draws, max_proposals, max_seconds, batch_size, on_progress, t0)
    if isinstance(model, CustomModel):
        batch_size = min(batch_size, 1000)
    else:
        # keep one batch's working arrays near 20 million numbers
        width = model.stat_dim * (model.k or 1) + (model.upper + 1 if getattr(model, "upper", None) else 0)
        if model.name == "normal_known_sd":
            width = model.n
        # and at least 100 proposals, or fewer where 100 would pass that (normal_known_sd simulates its n records: at
        # n = 10^7 a floor of 100 made one batch 17 s, past a 5 s max_seconds, which is checked between batches)
        cap = max(1, 20_000_000 // max(1, width))
        batch_size = int(max(min(100, cap), min(batch_size, cap)))
    kept, n_acc, proposals = [], 0, 0
    stopped_by = "draws"
    while n_acc < draws:
        stopped_by = _stop_reason(proposals, max_proposals, t0, max_seconds)
        if stopped_by != "draws":
            break
        m = int(min(batch_size, max_proposals - proposals))
        theta = model.sample_prior(rng, m)
        stat = model.sample_statistic(rng, theta)
        log_p = log_acc(stat)
        if isinstance(model, CustomModel) and model.log_mechanism is not None:
            _same_noise(problem, stat, log_p)
        acc = np.log(rng.random(m)) < log_p
        proposals += m
        if acc.any():
            kept.append(theta[acc])
            n_acc += int(acc.sum())
        if on_progress is not None and on_progress(min(n_acc, draws), draws) is False:
            stopped_by = "cancelled"
            break
    return _finish(problem, kept, n_acc, proposals, draws, stopped_by, max_proposals, t0, max_seconds)


_TABLE_MAX = 4_000_000


def _stop_reason(proposals, max_proposals, t0, max_seconds) -> str:
    """Why the proposal loop stops before the next batch: ``max_proposals``, ``max_seconds``, or
    ``draws`` (it does not: go on until enough draws are accepted)."""
    if proposals >= max_proposals:
        return "max_proposals"
    if time.perf_counter() - t0 > max_seconds:
        return "max_seconds"
    return "draws"


def _compiled_setup(problem):
    """(family, p1, p2, acceptance table, kernel, scale) for the compiled loop, or None."""
    model, mech = problem.model, problem.mechanism
    if isinstance(model, CustomModel) or isinstance(mech, RandomizedResponse) or not hasattr(mech, "kernel"):
        return None
    sdp = float(problem.s_dp[0])
    if getattr(mech, "release_law", False):  # a release on a clip bound: the compiled batches take its tail code
        return None
    if model.name == "beta_binomial":
        family, p1, p2, top = 0, model.a, model.b, model.n + 1
    elif model.name == "poisson_gamma" and model.upper is None:
        family, p1, p2 = 1, model.alpha, model.beta
        top = int(max(0.0, sdp + 60 * mech.noise_sd)) + 1
    else:
        return None
    s = np.arange(min(top, _TABLE_MAX), dtype=float)
    peak = float(mech.noise_log_prob(np.zeros(1))[0])
    table = np.exp(mech.noise_log_prob(sdp - s) - peak)
    alias = None
    if family == 0 and model.n + 1 <= _TABLE_MAX:
        pmf = np.exp(log_beta_binomial_pmf(s, model.n, model.a, model.b))
        alias = alias_table(pmf / pmf.sum())
    return family, float(p1), float(p2), table, int(mech.kernel), float(mech.scale), alias


def _abc_compiled(problem, rng, setup, draws, max_proposals, max_seconds, batch_size, on_progress, t0):
    family, p1, p2, table, kernel, scale, alias = setup
    n, sdp = int(problem.model.n), float(problem.s_dp[0])
    if alias is not None:
        def batch(stream, m, out):
            return abc_beta_binomial_batch(stream, alias[0], alias[1], table, p1, p2, n, m, out)
    else:
        def batch(stream, m, out):
            return abc_conjugate_batch(stream, family, p1, p2, n, table, sdp, kernel, scale, m, out)
    return _two_thread_loop(problem, rng, batch, (), draws, max_proposals, max_seconds, on_progress, t0,
                            first=50_000, floor=10_000, cap=max(batch_size, 2_000_000))


def _abc_regression(problem, rng, draws, max_proposals, max_seconds, batch_size, on_progress, t0):
    """linear_regression: each proposal simulates its n records (compiled, O(n p^2) per proposal;
    :func:`engine.kernels.abc.abc_regression_batch`), split over two threads as above."""
    model, mech = problem.model, problem.mechanism
    sig_a, sig_b = model.sigma_prior or (0.0, 0.0)
    args = (model.n, model.chol, np.asarray(model.x_mean, float), model.sigma, model.prior_sd, float(sig_a),
            float(sig_b), np.asarray(model.lo, float), np.asarray(model.hi, float), np.asarray(problem.s_dp, float),
            int(mech.kernel), float(mech.scale))

    def batch(stream, m, out):
        return abc_regression_batch(stream, *args, m, out)

    per_batch = max(100, min(batch_size, 4_000_000 // max(model.n, 1)))  # about 4 million records per batch
    return _two_thread_loop(problem, rng, batch, (len(model.param_names),), draws, max_proposals, max_seconds,
                            on_progress, t0, first=2_000, floor=1_000, cap=per_batch)


def _two_thread_loop(problem, rng, batch, width, draws, max_proposals, max_seconds, on_progress, t0, *,
                     first, floor, cap):
    """The compiled proposal loop on two threads, each with its own stream of ``rng.spawn(2)``:
    ``batch(stream, m, out)`` makes m proposals and writes the accepted ones (rows of shape ``width``)
    to the front of ``out``, returning how many. The first batch has ``first`` proposals; later ones are
    sized from the acceptance so far to finish the draws, at least ``floor`` and at most ``cap``."""
    streams = rng.spawn(2)
    kept, n_acc, proposals = [], 0, 0
    stopped_by = "draws"
    with ThreadPoolExecutor(max_workers=2) as pool:
        while n_acc < draws:
            stopped_by = _stop_reason(proposals, max_proposals, t0, max_seconds)
            if stopped_by != "draws":
                break
            want = first if n_acc == 0 else 1.2 * (draws - n_acc) * proposals / n_acc + floor
            m = int(min(cap, max(want, floor), max_proposals - proposals))
            parts = [m // 2, m - m // 2]
            outs = [np.empty((k,) + width) for k in parts]
            futures = [pool.submit(batch, streams[i], parts[i], outs[i]) for i in range(2)]
            counts = [f.result() for f in futures]
            proposals += m
            for out, k in zip(outs, counts):
                if k:
                    kept.append(out[:k])
                    n_acc += k
            if on_progress is not None and on_progress(min(n_acc, draws), draws) is False:
                stopped_by = "cancelled"
                break
    return _finish(problem, kept, n_acc, proposals, draws, stopped_by, max_proposals, t0, max_seconds)


class NoneAccepted(ValueError):
    """ABC rejection accepted no proposal within its limits. Its message is the spec's one-line error (the field
    ``method.max_proposals``, for a file and the command line); ``proposals``, ``stopped_by`` (``"max_proposals"``
    or ``"max_seconds"``) and ``far`` (whether the release lies so far outside what n records can produce that no
    limit will do) let an app say the same in the words of its own boxes."""

    def __init__(self, message: str, *, proposals: int, stopped_by: str, far: bool):
        super().__init__(message)
        self.proposals, self.stopped_by, self.far = proposals, stopped_by, far

    def __reduce__(self):  # picklable with its fields (a run on another process raises it there)
        return (_none_accepted, (str(self), self.proposals, self.stopped_by, self.far))


def _none_accepted(message, proposals, stopped_by, far):
    return NoneAccepted(message, proposals=proposals, stopped_by=stopped_by, far=far)


def _why_none(problem) -> str:
    """For a release far outside what n records can produce: how far, and that no budget will do."""
    far = implausible_release(problem)
    if far is None:
        return ""
    return ". " + far.replace(" is implausible: it lies", " lies", 1) + " at any max_proposals"


def _finish(problem, kept, n_acc, proposals, draws, stopped_by, max_proposals, t0, max_seconds):
    """The accepted draws as a Result. A run its caller stopped (the progress callback returned False)
    keeps what it accepted, ``info["stopped"] = "cancelled"``; with nothing accepted it raises
    :class:`~engine.core.chains.Cancelled`, like the chains. With nothing accepted otherwise, the error names the
    limit that stopped it (it named max_proposals when max_seconds had)."""
    if n_acc == 0 and stopped_by == "cancelled":
        raise Cancelled(f"stopped after {proposals:,} proposals, none accepted: no draws to keep")
    if n_acc == 0:
        far = _why_none(problem)
        limit = (f"method.max_seconds = {max_seconds:g}" if stopped_by == "max_seconds" else
                 f"method.max_proposals = {max_proposals}")
        raise NoneAccepted(
            f"{limit} is invalid for this release: abc_rejection accepted 0 of "
            f"{proposals} proposals (stopped by {stopped_by}); the acceptance rate is below {1 / max(proposals, 1):.2g}. "
            "Raise max_proposals / max_seconds or use da_mcmc" + far, proposals=proposals, stopped_by=stopped_by,
            far=bool(far))
    theta = np.concatenate(kept)[:draws].reshape(-1, len(problem.model.param_names))
    return Result(
        method="abc_rejection", param_names=tuple(problem.model.param_names), draws=theta[None, :, :],
        s_dp=problem.s_dp,
        info={"proposals": proposals, "accepted": n_acc, "acceptance_rate": n_acc / proposals,
              "requested": draws, "stopped_by": stopped_by, "wall_time_s": time.perf_counter() - t0,
              "stopped": "cancelled" if stopped_by == "cancelled" else None},
    )


def _validate(table, out):
    if "max_proposals" in table:
        out["max_proposals"] = positive_int("method.max_proposals", table["max_proposals"], 1, 10**11)
    if "max_seconds" in table:
        out["max_seconds"] = positive("method.max_seconds", table["max_seconds"])
    if "batch_size" in table:
        out["batch_size"] = positive_int("method.batch_size", table["batch_size"], 1, 10_000_000)


def _run(problem, rng, settings, on_progress):
    """chains x draws accepted draws in total, as one chain of i.i.d. draws."""
    settings.pop("warmup", None)
    settings["draws"] = settings["draws"] * settings.pop("chains")
    return abc_rejection(problem, rng, on_progress=on_progress, **settings)


METHOD = Method(name="abc_rejection", claim="exact", paper="Gong 2020, Alg. 3", run=_run,
                keys=frozenset({"max_proposals", "max_seconds", "batch_size"}), validate=_validate)
