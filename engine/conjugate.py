"""Conjugate-update methods: ``naive`` (s_dp treated as exact) and the confidential-data posterior.

naive
    The analysis that ignores privacy (Bernstein & Sheldon 2018, Section 5, "naive"): the
    conjugate posterior p(theta | s = s_dp) with s_dp projected onto the statistic's support
    (clipped to [0, n] for counts, to the simplex {c >= 0, sum c = n} for cell counts, to
    [n lo, n hi] for a clamped sum; randomized-response counts are taken at face value).
    Clamping is ignored as well. It is biased towards the noise and overconfident: its spread
    is the sampling spread only.
confidential
    p(theta | x) from the confidential records themselves (simulation or upload), the
    reference an exact private posterior can at best approach as epsilon grows.
"""
from __future__ import annotations

import time

import numpy as np

from .custom import CustomModel
from .densities import cell_density, range_from_quantiles
from .results import Problem, Result

__all__ = ["naive", "confidential_posterior"]


def _conjugate_result(method, problem, suff, rng, draws, chains, grid_size, info):
    model = problem.model
    t0 = time.perf_counter()
    theta = model.posterior_sample(rng, suff, chains * draws).reshape(chains, draws, -1)
    density = {}
    for name, d in model.posterior_marginals(suff).items():
        lo, hi = range_from_quantiles(d.ppf(1e-5), d.ppf(1 - 1e-5), model.support)
        density[name] = cell_density(d.cdf, lo, hi, grid_size)
    info = dict(info, wall_time_s=time.perf_counter() - t0)
    return Result(method=method, param_names=tuple(model.param_names), draws=theta, s_dp=problem.s_dp,
                  info=info, density=density)


def naive(problem: Problem, rng: np.random.Generator, *, draws: int = 4000, chains: int = 1,
          grid_size: int = 400, **_ignored) -> Result:
    """Conjugate posterior treating the (projected) release as the confidential statistic."""
    model = problem.model
    if isinstance(model, CustomModel):
        raise ValueError("method.name = 'naive' is invalid: a custom model has no conjugate update; use da_mcmc")
    s_proj = model.project(problem.s_dp)
    note = ("s_dp treated as the exact statistic" +
            ("" if np.allclose(s_proj, problem.s_dp) else " after projection onto the statistic's support"))
    return _conjugate_result("naive", problem, s_proj, rng, draws, chains, grid_size,
                             {"s_projected": s_proj.tolist(), "note": note})


def confidential_posterior(problem: Problem, rng: np.random.Generator, *, draws: int = 4000,
                           grid_size: int = 400) -> Result:
    """p(theta | x) given the confidential records (needs ``problem.records``)."""
    if problem.records is None:
        raise ValueError("data = s_dp is invalid for the confidential posterior: it needs the records "
                         "(simulate or csv data)")
    suff = problem.model.suff(problem.records)
    return _conjugate_result("confidential", problem, suff, rng, draws, 1, grid_size,
                             {"statistic": problem.model.statistic(problem.records).tolist()})
