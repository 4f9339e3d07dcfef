"""Conjugate updates: the confidential-data posterior and the result builder ``naive`` shares.

confidential
    p(theta | x) from the confidential records themselves (simulation or upload), the
    reference an exact private posterior can at best approach as epsilon grows.
"""
from __future__ import annotations

import time

import numpy as np

from ..core.results import Problem, Result
from .densities import cell_density, range_from_quantiles

__all__ = ["conjugate_result", "confidential_posterior"]


def conjugate_result(method, problem, suff, rng, draws, chains, grid_size, info):
    """Draws and marginal densities of the conjugate posterior given the statistic ``suff``."""
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


def confidential_posterior(problem: Problem, rng: np.random.Generator, *, draws: int = 4000,
                           grid_size: int = 400) -> Result:
    """p(theta | x) given the confidential records (needs ``problem.records``)."""
    if problem.records is None:
        raise ValueError("data = s_dp is invalid for the confidential posterior: it needs the records "
                         "(simulate or csv data)")
    if problem.unknown_n is not None:  # the confidential records know their own size
        from dataclasses import replace

        problem = replace(problem, model=replace(problem.model, n=int(problem.records.shape[0])))
    suff = problem.model.suff(problem.records)
    return conjugate_result("confidential", problem, suff, rng, draws, 1, grid_size,
                             {"statistic": problem.model.statistic(problem.records).tolist()})
