"""Compiled proposal batches of ABC rejection, exact for DP data (Gong 2020, Alg. 3).

A batch draws m proposals theta ~ p(theta) and a statistic s ~ p(s | theta), and accepts theta with
probability eta(s_dp - s) / eta(0) (the noise density over its maximum), so that accepted draws follow
p(theta | s_dp) exactly. ``abc_conjugate_batch`` draws the statistic of the one-parameter models
directly (Binomial, Poisson), ``abc_beta_binomial_batch`` draws (theta, s) as s from the Beta-binomial
prior predictive (an alias table, ``alias_table``) then theta | s, and ``abc_regression_batch``
simulates n records of the linear regression model (:mod:`engine.kernels.shared`). Noise kernels as
in :func:`engine.kernels.shared.log_noise` (codes 2..9, a clipped release on its bound, are probabilities <= 1
too, so exp(log_noise) stays a valid acceptance probability).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from .shared import log_noise, simulate_into

__all__ = ["abc_conjugate_batch", "alias_table", "abc_beta_binomial_batch", "abc_regression_batch"]


@njit(cache=True, nogil=True)
def abc_conjugate_batch(rng, family, p1, p2, n, acc_table, s_dp, kernel, scale, m, out):
    """ABC rejection proposals (Gong 2020, Alg. 3) for beta_binomial (``family`` 0: theta ~ Beta(p1, p2),
    s ~ Binomial(n, theta)) and poisson_gamma without a clamp (1: lam ~ Gamma(p1, rate p2),
    s ~ Poisson(n lam)); accept with probability eta(s_dp - s) / eta(0), read from ``acc_table[s]``
    when s is inside it, else computed from the noise kernel. Writes accepted draws to ``out`` in
    proposal order and returns how many."""
    k = 0
    top = acc_table.size
    for _ in range(m):
        if family == 0:
            theta = rng.beta(p1, p2)
            s = rng.binomial(n, theta)
        else:
            theta = rng.gamma(p1, 1.0 / p2)
            s = rng.poisson(n * theta)
        if s < top:
            acc = acc_table[s]
        else:
            acc = math.exp(log_noise(kernel, scale, s_dp - s))
        if rng.random() < acc:
            out[k] = theta
            k += 1
    return k


@njit(cache=True)
def alias_table(p):
    """Walker/Vose alias table of a pmf ``p`` (sums to 1): returns (prob, alias) such that
    i = floor(K u), s = i if frac(K u) < prob[i] else alias[i] is a draw from p."""
    k = p.size
    prob = np.empty(k)
    alias = np.arange(k)
    scaled = p * k
    small = np.empty(k, np.int64)
    large = np.empty(k, np.int64)
    ns = 0
    nl = 0
    for i in range(k):
        if scaled[i] < 1.0:
            small[ns] = i
            ns += 1
        else:
            large[nl] = i
            nl += 1
    while ns > 0 and nl > 0:
        ns -= 1
        sm = small[ns]
        lg = large[nl - 1]
        prob[sm] = scaled[sm]
        alias[sm] = lg
        scaled[lg] = (scaled[lg] + scaled[sm]) - 1.0
        if scaled[lg] < 1.0:
            nl -= 1
            small[ns] = lg
            ns += 1
    for i in range(nl):
        prob[large[i]] = 1.0
    for i in range(ns):
        prob[small[i]] = 1.0
    return prob, alias


@njit(cache=True, nogil=True)
def abc_beta_binomial_batch(rng, prob, alias, acc_table, a, b, n, m, out):
    """ABC rejection proposals for beta_binomial with the prior draw of (theta, s) made as
    s ~ BetaBinomial(n, a, b) (alias table, one uniform) then theta | s ~ Beta(a + s, b + n - s):
    the same joint law as theta ~ Beta(a, b), s ~ Binomial(n, theta). Acceptance depends on s only,
    so theta is drawn for accepted proposals only. Returns the number accepted (written to ``out``)."""
    k = 0
    size = prob.size
    for _ in range(m):
        u = rng.random() * size
        i = int(u)
        if i >= size:
            i = size - 1
        s = i if u - i < prob[i] else alias[i]
        if rng.random() < acc_table[s]:
            out[k] = rng.beta(a + s, b + n - s)
            k += 1
    return k


@njit(cache=True, nogil=True)
def abc_regression_batch(rng, n, chol, x_mean, sigma, prior_sd, sig_a, sig_b, lo, hi, s_dp, kernel, scale, m, out):
    """m ABC rejection proposals (Gong 2020, Alg. 3): beta ~ N(0, tau^2 I) (and, when ``sig_a > 0``,
    sigma^2 ~ InvGamma(sig_a, sig_b), else sigma fixed), n records from the model, accept with
    probability prod_k eta(s_dp,k - s_k) / eta(0). Accepted draws (beta, then sigma^2 if unknown)
    fill ``out`` in proposal order; returns how many."""
    q = chol.shape[0] + 1
    d = s_dp.size
    z = np.empty(q + 1)
    t = np.empty(d)
    prop = np.empty(q)
    e = np.empty(q - 1)
    s = np.empty(d)
    beta = np.empty(q)
    k_acc = 0
    for r in range(m):
        for j in range(q):
            beta[j] = prior_sd * rng.standard_normal()
        sd = sigma
        s2 = 0.0
        if sig_a > 0.0:
            s2 = sig_b / rng.gamma(sig_a, 1.0)
            sd = math.sqrt(s2)
        simulate_into(rng, beta, n, chol, x_mean, sd, lo, hi, z, t, prop, e, s)
        la = 0.0
        for k in range(d):
            la += log_noise(kernel, scale, s_dp[k] - s[k])
        if math.log(rng.random()) < la:
            for j in range(q):
                out[k_acc, j] = beta[j]
            if sig_a > 0.0:
                out[k_acc, q] = s2
            k_acc += 1
    return k_acc
