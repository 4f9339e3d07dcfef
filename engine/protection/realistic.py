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

For randomized response (beta_binomial, n up to ``MAX_RR_TABLE_N``) the release is the reported count and
``eta`` its law given s (a convolution of two binomials), as in the exact method. Continuous records
(normal_known_sd, linear_regression) have no pmf, an unknown n no fixed record set: ``available: False``
with the reason.

Where no finite mixture over s exists, one integral over theta per record value (:func:`_one_dimensional`):
the records are i.i.d. given theta and the release sees record i only through its contribution, so with
``L_{n-1}(theta; .)`` the likelihood of the other n - 1 records,

    P(x_i = v, s_dp) = ∫ p(theta) P(x_i = v | theta) l_v(theta) dtheta,

and ``P(x_i = v | s_dp) = Z_v / sum_w Z_w``. Each ``Z_v`` is the evidence of a one-parameter grid posterior
(:mod:`engine.numerics.grid_posterior`, the ``exact`` method's adaptive grid, interpolation tolerance 1e-5
in log density; the ratio of two evidences is accurate to that order):

poisson_gamma with ``upper`` = U (additive noise)
    the record's clamped value v in 0..U (U standing for "U or more"): ``P(v | lam)`` is the Poisson pmf,
    ``P(X >= U | lam)`` for v = U, and ``l_v(lam) = L_{n-1}(lam; s_dp - v)`` (the release of the others'
    clamped sum with the target's v moved to the noise's centre: eta depends on s_dp - s only); for
    n = 1, ``l_v = eta(s_dp - v)``. The prior: the negative binomial pmf, its tail at U.
randomized response, beta_binomial with n > MAX_RR_TABLE_N
    the reported count K = z_i + K_{-i}: ``l_v(theta) = sum_z Q[v, z] L_{n-1}(theta; K - z)`` with
    ``L_{n-1}`` the binomial law Bin(n - 1, q(theta)) of the others' reports, and ``P(x_i = v | theta)``
    ``theta^v (1 - theta)^(1 - v)``: O(1) per theta at any n.

Randomized response with k > 2 categories (dirichlet_multinomial; :func:`_rr_categories`), exactly: the
reports of the c_j records of category j are Multinomial(c_j, Q[j, .]), the counts c are
Dirichlet-multinomial, ``P(x_i = v | r) = E[c_v | r] / n``. The prior weight of c factorises over the
categories, ``n! Gamma(A) / Gamma(A + n) prod_j Gamma(alpha_j + c_j) / (Gamma(alpha_j) c_j!)``, so with a
variable u counting records and t_m counting reports of category m, the generating functions

    H_j(u, t) = sum_c u^c Gamma(alpha_j + c) / (Gamma(alpha_j) c!) (sum_m Q[j, m] t_m)^c

give ``sum_c w(c) P(r | c) ∝ [u^n t^r] prod_j H_j`` and, with ``c H_j`` for j = v, the numerator. The
polynomials are truncated at the released counts (higher powers cannot contribute) and multiplied term
by term (no FFT: the coefficient read off can be far below the largest one); t_{k-1} is implied by the
record count. Cost O(n^2 prod_m (r_m + 1)^2): refused (with the reason) beyond ``_MAX_RR_TERMS`` terms.
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
from scipy import special, stats

from ..core.results import Problem
from ..mechanisms import MAX_RR_TABLE_N, RandomizedResponse
from ..mechanisms.clipped import BoundedLaplace, Clipped
from ..methods.exact import exact_mixture, grid_posterior_of
from ..numerics import grid_posterior
from ..numerics.statistic_laws import likelihood

__all__ = ["realistic_adversary", "REALISTIC_MODELS"]

REALISTIC_MODELS = ("beta_binomial", "dirichlet_multinomial", "poisson_gamma")
_CONTINUOUS = ("normal_known_sd", "linear_regression")  # records are real numbers: P(record = v) is 0 for every v
_POISSON_COVER = 1.0 - 1e-6  # the values shown cover this much of both the prior and the posterior
_MAX_RR_TERMS = 3_000_000  # coefficients of one k-ary generating-function product


def realistic_adversary(problem: Problem) -> dict:
    """``{"values", "prior", "posterior", "largest_change", ...}`` for one record, or
    ``{"available": False, "reason": ...}`` where the model has no discrete records or no finite mixture."""
    model, mech = problem.model, problem.mechanism
    why = _unavailable(problem)
    if why:
        return {"available": False, "reason": why}
    labels = None
    if model.name == "beta_binomial" and isinstance(mech, RandomizedResponse) and model.n > MAX_RR_TABLE_N:
        values, prior, post = _rr_large(problem)
    elif model.name == "beta_binomial":
        mix = exact_mixture(problem)
        p1 = float(np.dot(mix.weights, mix.values)) / model.n
        values, prior, post = [0, 1], np.array([model.b, model.a]) / (model.a + model.b), np.array([1 - p1, p1])
    elif model.name == "dirichlet_multinomial" and isinstance(mech, RandomizedResponse):
        values, prior, post = _rr_categories(problem)
    elif model.name == "poisson_gamma" and model.upper is not None:
        values, prior, post = _clamped_poisson(problem)
        labels = [str(v) for v in values[:-1]] + [f"{values[-1]}+"]
    elif model.name == "dirichlet_multinomial":
        dist = exact_mixture(problem)
        post = np.array([float(np.dot(*dist.marginal(j)[::-1])) for j in range(model.k)]) / model.n
        alpha = np.asarray(model.alpha)
        values, prior = list(range(model.k)), alpha / alpha.sum()
    else:
        mix = exact_mixture(problem)
        top = _poisson_top(problem, mix)
        if top > MAX_POISSON_VALUES:
            return {"available": False, "reason": f"one record's values would run to {top:,} (the release is far "
                    f"above what the prior expects of n = {model.n:,} records): more than the {MAX_POISSON_VALUES:,} "
                    "the table of one record's values is drawn for"}
        values, prior, post = _poisson(problem, mix, top)
    change = post - prior
    j = int(np.argmax(np.abs(change)))
    out = {"available": True, "model": model.name, "mechanism": getattr(mech, "name", ""),
           "s_dp": [float(v) for v in problem.s_dp], "values": values,
           "prior": prior.tolist(), "posterior": post.tolist(),
           "largest_change": {"value": values[j], "prior": float(prior[j]), "posterior": float(post[j]),
                              "difference": float(change[j])}}
    if labels:
        out["labels"] = labels
    return out


def _unavailable(problem: Problem) -> str:
    model, mech = problem.model, problem.mechanism
    name = getattr(model, "name", "")
    if name not in REALISTIC_MODELS:
        covered = ", ".join(REALISTIC_MODELS)
        if name in _CONTINUOUS:
            return (f"{name} has no discrete records to guess: its records are real numbers, and no one value "
                    f"has a probability of its own (the realistic adversary is computed for {covered})")
        who = "a custom model" if name in ("", "custom") else name
        return (f"P(record = v | s_dp) is not computed for {who}: it is read off the exact law of the confidential "
                f"statistic given the release, a finite mixture the engine computes for {covered}")
    if problem.unknown_n is not None:
        return "the record count n is itself private here; the realistic adversary is computed for a known n"
    if name == "poisson_gamma" and model.upper is not None and isinstance(mech, (Clipped, BoundedLaplace)):
        return "a clipped release of the clamped Poisson sum: the one-record integral needs plain additive noise"
    if isinstance(mech, RandomizedResponse) and name == "dirichlet_multinomial":
        size = (model.n + 1) * math.prod(int(round(v)) + 1 for v in problem.s_dp[:-1])
        if size * size > _MAX_RR_TERMS * 50:
            return (f"randomized response over n = {model.n} records in {model.k} categories: the exact sum has "
                    f"about {size:,} terms per product, more than this page computes")
    return ""


def _one_dimensional(problem: Problem, terms) -> np.ndarray:
    """log Z_v = log ∫ p(theta) exp(term_v(phi)) dtheta for each record value (module docstring), each the
    evidence of an adaptive grid posterior seeded where the full posterior sits."""
    gp_full, _ = grid_posterior_of(problem)
    prior = grid_posterior.prior_of(problem.model)
    q = gp_full.ppf(np.array([0.16, 0.5, 0.84]))
    ph = prior.phi(q)
    centre, scale = float(ph[1]), max(float(ph[2] - ph[0]) / 2.0, 1e-6)
    return np.array([grid_posterior.build(term, prior, centre, scale).log_z for term in terms])


def _clamped_poisson(problem: Problem):
    """The clamped record's value 0..U (U: "U or more") given s_dp (module docstring)."""
    model, mech = problem.model, problem.mechanism
    n, top, sdp = model.n, int(model.upper), float(problem.s_dp[0])
    a, b = model.alpha, model.beta
    v = np.arange(top + 1)
    log_nb = (special.gammaln(a + v) - special.gammaln(a) - special.gammaln(v + 1) + a * math.log(b / (b + 1.0))
              - v * math.log1p(b))
    prior = np.exp(log_nb)
    prior[-1] = max(1.0 - prior[:-1].sum(), 0.0)  # P(X >= U) under the negative binomial

    def log_record(value):
        if value < top:
            return lambda phi: -np.exp(phi) + value * phi - special.gammaln(value + 1)
        return lambda phi: stats.poisson.logsf(top - 1, np.exp(phi))

    if n == 1:  # no other records: l_v = eta(s_dp - v), P(v) from the prior
        with np.errstate(divide="ignore"):
            log_z = np.log(prior) + np.array([float(mech.log_prob(problem.s_dp, np.array([float(x)]))) for x in v])
    else:
        others = replace(model, n=n - 1)
        terms = []
        for value in v:
            lik, _ = likelihood(Problem(model=others, mechanism=mech, s_dp=np.array([sdp - value])))
            rec = log_record(int(value))
            terms.append(lambda phi, lik=lik, rec=rec: np.asarray(lik(phi)) + rec(np.asarray(phi, float)))
        log_z = _one_dimensional(problem, terms)
    post = np.exp(log_z - special.logsumexp(log_z))
    return v.tolist(), prior, post


def _rr_large(problem: Problem):
    """Binary randomized response at any n: one grid integral per value (module docstring)."""
    model, mech = problem.model, problem.mechanism
    k, lq = int(round(float(problem.s_dp[0]))), mech.log_Q
    others = replace(model, n=model.n - 1)

    def lik(m):
        if m < 0 or m > model.n - 1:
            return lambda phi: np.full(np.shape(phi), -np.inf)
        return likelihood(Problem(model=others, mechanism=mech, s_dp=np.array([float(m)])))[0]

    laws = [lik(k), lik(k - 1)]  # the others reported k (target reported 0) or k - 1 (target reported 1)
    terms = []
    for v in (0, 1):
        def term(phi, v=v):
            phi = np.asarray(phi, float)
            own = -np.logaddexp(0.0, -phi) if v == 1 else -np.logaddexp(0.0, phi)
            return own + np.logaddexp(lq[v, 0] + np.asarray(laws[0](phi)), lq[v, 1] + np.asarray(laws[1](phi)))
        terms.append(term)
    log_z = _one_dimensional(problem, terms)
    post = np.exp(log_z - special.logsumexp(log_z))
    return [0, 1], np.array([model.b, model.a]) / (model.a + model.b), post


def _rr_categories(problem: Problem):
    """k-ary randomized response on dirichlet_multinomial records, exactly (module docstring)."""
    model, q = problem.model, problem.mechanism.Q
    n, k = model.n, model.k
    r = np.rint(np.asarray(problem.s_dp, float)).astype(np.int64)
    alpha = np.asarray(model.alpha, float)
    shape = tuple(int(x) + 1 for x in r[:-1])  # powers of t_0 .. t_{k-2}; t_{k-1} follows from the count
    parts, scaled = [], []
    for j in range(k):
        power = np.zeros(shape)
        power[(0,) * (k - 1)] = 1.0
        h = np.zeros((n + 1,) + shape)
        log_g = special.gammaln(alpha[j] + np.arange(n + 1)) - special.gammaln(alpha[j]) - special.gammaln(np.arange(n + 1) + 1)
        for c in range(n + 1):
            if c:
                power = _times_linear(power, q[j])
            h[c] = np.exp(log_g[c]) * power
        parts.append(h)
        scaled.append(h * np.arange(n + 1).reshape((-1,) + (1,) * (k - 1)))
    total = _coefficient(parts, n, r)
    post = np.array([_coefficient(parts[:v] + [scaled[v]] + parts[v + 1:], n, r) for v in range(k)]) / (n * total)
    return list(range(k)), alpha / alpha.sum(), post


def _times_linear(poly, row):
    """poly(t) * (row[0] t_0 + .. + row[k-2] t_{k-2} + row[k-1]), truncated to poly's shape."""
    out = poly * row[-1]
    for m in range(poly.ndim):
        idx = [slice(None)] * poly.ndim
        src = [slice(None)] * poly.ndim
        idx[m], src[m] = slice(1, None), slice(None, -1)
        out[tuple(idx)] += row[m] * poly[tuple(src)]
    return out


def _coefficient(parts, n: int, r) -> float:
    """[u^n t^r] of the product of the arrays (axis 0: u, then t_0 .. t_{k-2}), term by term."""
    acc = parts[0]
    for h in parts[1:]:
        acc = _truncated_product(acc, h)
    return float(acc[(n,) + tuple(int(x) for x in r[:-1])])


def _truncated_product(a, b):
    """The product of two truncated power series (same shape), exactly, by sums over b's nonzero terms."""
    out = np.zeros_like(a)
    for idx in zip(*np.nonzero(b)):
        src = tuple(slice(0, a.shape[d] - i) for d, i in enumerate(idx))
        dst = tuple(slice(i, None) for i in idx)
        out[dst] += b[idx] * a[src]
    return out


def _poisson_top(problem: Problem, mix) -> int:
    """The largest record value :func:`_poisson` tabulates: all but 1e-6 of the prior and of the posterior."""
    model = problem.model
    a, b, n = model.alpha, model.beta, model.n
    return int(max(stats.nbinom.ppf(_POISSON_COVER, a, b / (b + 1.0)),
                   stats.binom.ppf(_POISSON_COVER, int(mix.values.max()), 1.0 / n), 1))


#: the most record values the unclamped Poisson's table holds (a components x values matrix: an outlying record of
#: 10^8 asked for 2.5 x 10^9 of them, 20 GB)
MAX_POISSON_VALUES = 1_000_000


def _poisson(problem: Problem, mix, top: int):
    """Record values 0..top (:func:`_poisson_top`), their probabilities under the prior and given the release."""
    model = problem.model
    a, b, n = model.alpha, model.beta, model.n
    v = np.arange(top + 1)
    prior = np.exp(special.gammaln(a + v) - special.gammaln(a) - special.gammaln(v + 1)
                   + a * np.log(b / (b + 1.0)) - v * np.log1p(b))
    post = mix.weights @ stats.binom.pmf(v[None, :], mix.values[:, None].astype(np.int64), 1.0 / n)
    return v.tolist(), prior, post
