"""The realistic adversary: someone who knows the model and the prior, not the other records.

They see the release ``s_dp`` and ask about one person ``i``: ``P(x_i = v | s_dp)`` against the prior
``P(x_i = v)``. The records are exchangeable given theta and the release depends on them only through
the statistic ``s``, so

    P(x_i = v | s_dp) = sum_s P(s | s_dp) P(x_i = v | s),

with ``P(s | s_dp) ∝ m(s) eta(s_dp | s)`` the exact posterior of the confidential statistic (the
mixture weights of :mod:`engine.methods.exact`) and ``P(x_i = v | s)`` free of theta:

beta_binomial
    given s ones among n exchangeable records, ``P(x_i = 1 | s) = s / n``; prior ``a / (a + b)``.
dirichlet_multinomial
    ``P(x_i = v | c) = c_v / n``, so ``P(x_i = v | s_dp) = E[c_v | s_dp] / n`` from the exact law of the
    counts; prior ``alpha_v / sum(alpha)``.
poisson_gamma (no clamp)
    given the sum s of n i.i.d. Poisson records, the records are Multinomial(s, 1/n each) whatever
    lam is, so ``P(x_i = v | s) = Binomial(v; s, 1/n)``; prior: the negative binomial
    ``Gamma(alpha + v) / (Gamma(alpha) v!) (beta/(beta + 1))^alpha (1/(beta + 1))^v``.

For randomized response (beta_binomial) the release is the reported count and ``eta`` its law given s
(a convolution of two binomials), as in the exact method. The clamped Poisson (``upper``) has no finite
mixture here, and continuous records (normal_known_sd) no pmf: ``None`` with the reason.
"""
from __future__ import annotations

import numpy as np
from scipy import special, stats

from ..core.results import Problem
from ..mechanisms import MAX_RR_TABLE_N, RandomizedResponse
from ..methods.exact import exact_mixture

__all__ = ["realistic_adversary", "REALISTIC_MODELS"]

REALISTIC_MODELS = ("beta_binomial", "dirichlet_multinomial", "poisson_gamma")
_POISSON_COVER = 1.0 - 1e-6  # the values shown cover this much of both the prior and the posterior


def realistic_adversary(problem: Problem) -> dict:
    """``{"values", "prior", "posterior", "largest_change", ...}`` for one record, or
    ``{"available": False, "reason": ...}`` where the model has no discrete records or no finite mixture."""
    model, mech = problem.model, problem.mechanism
    why = _unavailable(problem)
    if why:
        return {"available": False, "reason": why}
    if model.name == "beta_binomial":
        mix = exact_mixture(problem)
        p1 = float(np.dot(mix.weights, mix.values)) / model.n
        values, prior, post = [0, 1], np.array([model.b, model.a]) / (model.a + model.b), np.array([1 - p1, p1])
    elif model.name == "dirichlet_multinomial":
        dist = exact_mixture(problem)
        post = np.array([float(np.dot(*dist.marginal(j)[::-1])) for j in range(model.k)]) / model.n
        alpha = np.asarray(model.alpha)
        values, prior = list(range(model.k)), alpha / alpha.sum()
    else:
        values, prior, post = _poisson(problem, exact_mixture(problem))
    change = post - prior
    j = int(np.argmax(np.abs(change)))
    return {"available": True, "model": model.name, "mechanism": getattr(mech, "name", ""),
            "s_dp": [float(v) for v in problem.s_dp], "values": values,
            "prior": prior.tolist(), "posterior": post.tolist(),
            "largest_change": {"value": values[j], "prior": float(prior[j]), "posterior": float(post[j]),
                               "difference": float(change[j])}}


def _unavailable(problem: Problem) -> str:
    model, mech = problem.model, problem.mechanism
    name = getattr(model, "name", "")
    if name not in REALISTIC_MODELS:
        return f"{name or 'this model'} has no discrete records to guess (the realistic adversary is computed for " \
               + ", ".join(REALISTIC_MODELS) + ")"
    if problem.unknown_n is not None:
        return "the record count n is itself private here; the realistic adversary is computed for a known n"
    if name == "poisson_gamma" and model.upper is not None:
        return "the clamped Poisson sum (model.upper) has no finite mixture posterior for one record here"
    if isinstance(mech, RandomizedResponse) and name == "beta_binomial" and model.n > MAX_RR_TABLE_N:
        return f"randomized response over more than n = {MAX_RR_TABLE_N} records has no mixture table here"
    if isinstance(mech, RandomizedResponse) and name != "beta_binomial":
        return "randomized response over more than two categories has no exact posterior here"
    return ""


def _poisson(problem: Problem, mix):
    """Record values 0..V covering all but 1e-6 of the prior and of the posterior, their probabilities."""
    model = problem.model
    a, b, n = model.alpha, model.beta, model.n
    top = int(max(stats.nbinom.ppf(_POISSON_COVER, a, b / (b + 1.0)),
                  stats.binom.ppf(_POISSON_COVER, int(mix.values.max()), 1.0 / n), 1))
    v = np.arange(top + 1)
    prior = np.exp(special.gammaln(a + v) - special.gammaln(a) - special.gammaln(v + 1)
                   + a * np.log(b / (b + 1.0)) - v * np.log1p(b))
    post = mix.weights @ stats.binom.pmf(v[None, :], mix.values[:, None].astype(np.int64), 1.0 / n)
    return v.tolist(), prior, post
