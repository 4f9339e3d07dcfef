"""The naive posterior: the analysis that ignores privacy (Bernstein & Sheldon 2018, Section 5).

The conjugate posterior p(theta | s = s_dp) with s_dp projected onto the statistic's support
(clipped to [0, n] for counts, to the simplex {c >= 0, sum c = n} for cell counts, to [n lo, n hi]
for a clamped sum; randomized-response counts are taken at face value; for the naive-Bayes
log-linear tables, class totals combined over the K tables and projected onto the simplex, then
each table's rows projected onto those totals, see ``NaiveBayesLoglinear.project``). It is biased
towards the noise and overconfident: its spread is the sampling spread only.

The clamped Poisson (poisson_gamma with ``upper``) has no conjugate update given the clamped sum, so
its naive posterior is p(lam | S = s_projected) with the clamping respected, computed by the same
grid machinery as ``exact`` (:func:`engine.methods.exact.grid_posterior_of` with the noise-free
likelihood P(S = s | lam), s rounded to an integer). normal_known_sd keeps the conjugate update that
ignores the clamp (the grid version exists, ``grid_posterior_of(problem, noise_free=True,
s_value=s)``, but costs about a second per call, which the SBC negative control's 400 runs cannot
afford).

linear_regression (dapper Example 3's naive analysis): the noisy x~^T x~ block (with the known
constant n) is projected onto the positive semidefinite cone (eigenvalues clipped at 0, the nearest
PSD matrix in Frobenius norm, Higham 1988), the moments are de-normalised to the clamped scale, and
beta gets the conjugate normal update as if they were the raw X^T X and X^T y
(``LinearRegression.project``); clamping and noise are both ignored.
"""
from __future__ import annotations

import time

import numpy as np

from ..core.results import Problem, Result
from ..models.custom import CustomModel
from ..numerics.conjugate import conjugate_result
from .base import Method
from .exact import grid_posterior_of, grid_result

__all__ = ["naive", "METHOD"]


def naive(problem: Problem, rng: np.random.Generator, *, draws: int = 4000, chains: int = 1,
          grid_size: int = 400, **_ignored) -> Result:
    """Conjugate posterior treating the (projected) release as the confidential statistic."""
    model = problem.model
    if isinstance(model, CustomModel):
        raise ValueError("method.name = 'naive' is invalid: a custom model has no conjugate update; use da_mcmc")
    s_proj = model.project(problem.s_dp)
    if model.name == "linear_regression":  # project() returns the raw-scale conjugate statistic
        note = ("s_dp treated as the exact statistic of clamped records taken as the raw data: x~^T x~ projected "
                "onto the positive semidefinite matrices (eigenvalues clipped at 0), then de-normalised")
    else:
        note = ("s_dp treated as the exact statistic" +
                ("" if np.allclose(s_proj, problem.s_dp) else " after projection onto the statistic's support"))
    if model.name == "poisson_gamma" and model.upper is not None:
        t0 = time.perf_counter()
        s_val = float(np.round(s_proj[0]))
        gp, info = grid_posterior_of(problem, noise_free=True, s_value=s_val)
        info.update(s_projected=[s_val], note=note + "; clamping respected (grid posterior given the clamped sum)")
        return grid_result("naive", problem, gp, info, rng, draws, chains, grid_size, t0)
    return conjugate_result("naive", problem, s_proj, rng, draws, chains, grid_size,
                            {"s_projected": s_proj.tolist(), "note": note})


def _run(problem, rng, settings, on_progress):
    settings.pop("warmup", None)
    return naive(problem, rng, **settings)


METHOD = Method(name="naive", claim="baseline", paper="Bernstein & Sheldon 2018, Sec. 5", run=_run)
