"""ABC rejection that is exact for privatized data (Gong 2020, Algorithm 3).

Propose theta ~ p(theta), s ~ p(s | theta) and accept with probability
eta(s_dp | s) / max_s eta(s_dp | s). The accepted theta are i.i.d. from p(theta | s_dp): the
acceptance probability is proportional to the mechanism's likelihood, so
P(theta accepted, theta in A) ∝ ∫_A p(theta) ∫ eta(s_dp | s) p(s | theta) ds dtheta
= ∫_A p(theta) p(s_dp | theta) dtheta. For additive noise eta(s_dp | s) = noise(s_dp - s) peaks at
zero noise, so the bound is noise(0) per coordinate. For randomized response with k = 2 the
likelihood of the reported count is tabulated over the true count and its maximum used.

Proposals are vectorised in batches; the run stops at the requested number of accepted draws,
or when ``max_proposals`` or ``max_seconds`` is reached, and says which.
"""
from __future__ import annotations

import time

import numpy as np

from ..custom import CustomModel
from ..mechanisms import MAX_RR_TABLE_N, RandomizedResponse
from ..results import Problem, Result
from ..validation import positive, positive_int
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
    if mech is None or not hasattr(mech, "noise_log_prob"):
        raise ValueError("mechanism is invalid for abc_rejection: it needs an engine mechanism with a known maximum")
    peak = float(mech.noise_log_prob(np.zeros(1))[0])
    sdp = problem.s_dp
    return lambda stat: np.sum(mech.noise_log_prob(sdp[None, :] - stat) - peak, axis=1)


def abc_rejection(problem: Problem, rng: np.random.Generator, *, draws: int = 4000, max_proposals: int = 20_000_000,
                  max_seconds: float = 30.0, batch_size: int = 200_000, on_progress=None, **_ignored) -> Result:
    """Exact i.i.d. posterior draws by ABC rejection (Gong 2020, Algorithm 3).

    Returns a Result with one chain of up to ``draws`` draws; ``info`` holds ``proposals``,
    ``accepted``, ``acceptance_rate``, ``requested`` and ``stopped_by`` (``draws``,
    ``max_proposals`` or ``max_seconds``). Raises ``ValueError`` if nothing was accepted within the
    budget, naming the budget and the acceptance rate bound it implies.
    """
    t0 = time.perf_counter()
    model = problem.model
    log_acc = acceptance_log_prob(problem)
    if isinstance(model, CustomModel):
        batch_size = min(batch_size, 1000)
    else:
        # keep one batch's working arrays near 20 million numbers
        width = model.stat_dim * (model.k or 1) + (model.upper + 1 if getattr(model, "upper", None) else 0)
        if model.name == "normal_known_sd":
            width = model.n
        batch_size = int(max(100, min(batch_size, 20_000_000 // max(1, width))))
    kept, n_acc, proposals = [], 0, 0
    stopped_by = "draws"
    while n_acc < draws:
        if proposals >= max_proposals:
            stopped_by = "max_proposals"
            break
        if time.perf_counter() - t0 > max_seconds:
            stopped_by = "max_seconds"
            break
        m = int(min(batch_size, max_proposals - proposals))
        theta = model.sample_prior(rng, m)
        stat = model.sample_statistic(rng, theta)
        acc = np.log(rng.random(m)) < log_acc(stat)
        proposals += m
        if acc.any():
            kept.append(theta[acc])
            n_acc += int(acc.sum())
        if on_progress is not None:
            on_progress(min(n_acc, draws), draws)
    if n_acc == 0:
        raise ValueError(
            f"method.max_proposals = {max_proposals} is invalid for this release: abc_rejection accepted 0 of "
            f"{proposals} proposals (stopped by {stopped_by}); the acceptance rate is below {1 / max(proposals, 1):.2g}. "
            "Raise max_proposals / max_seconds or use da_mcmc")
    theta = np.concatenate(kept)[:draws]
    return Result(
        method="abc_rejection", param_names=tuple(model.param_names), draws=theta[None, :, :], s_dp=problem.s_dp,
        info={"proposals": proposals, "accepted": n_acc, "acceptance_rate": n_acc / proposals,
              "requested": draws, "stopped_by": stopped_by, "wall_time_s": time.perf_counter() - t0},
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
