r"""Compiled pieces of OpenDP's released mean r = (S + U) / max(n + V, 0): its log-density and the
pseudo-marginal chain on (mu, n) of :mod:`engine.methods.mean_ratio`.

The law (derived in :mod:`engine.mechanisms.ratio`): U ~ Laplace(b), V ~ discrete Laplace(t) (pmf
c0 a^|v|, a = e^(-1/t), c0 = (1 - a) / (1 + a)), independent; L = max(n + V, 0) the released length.
For a finite r

    p(r | S, n) = sum_{v >= 1 - n} P(V = v) (n + v) f_U(r (n + v) - S),                         (D)

the sum truncated to |v| <= K with K the least integer whose neglected terms are at most
:data:`TAIL_TOL` / (2 b) in total (:func:`v_cut`); and r = +inf / -inf (a length of 0, a sum of either
sign) has probability P(V <= -n) P(+-(S + U) > 0).

Normal records for the statistic: S = sum_{i<n} clip(mu + sd z_i, lo, hi), z_i standard normal.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = ["TAIL_TOL", "v_cut", "log_ratio_density", "log_ratio_densities", "log_density_draws", "log_lik_estimate", "ratio_pm_chain",
           "log_size_prior"]

#: the truncated v-sum's neglected terms add up to at most TAIL_TOL / (2 b) (an absolute bound on the density)
TAIL_TOL = 1e-13


@njit(cache=True, nogil=True)
def v_cut(n, t):
    """K: |v| <= K in (D). The neglected terms are each at most P(V = v) (n + |v|) / (2 b), so their total is at
    most [n P(|V| > K) + E(|V|; |V| > K)] / (2 b), with P(|V| > K) = 2 a^(K+1) / (1 + a) and
    E(|V|; |V| > K) = 2 c0 a^(K+1) ((K + 1) - K a) / (1 - a)^2; K grows until that bracket is <= TAIL_TOL."""
    a = math.exp(-1.0 / t)
    c0 = (1.0 - a) / (1.0 + a)
    k = int(math.ceil(t * math.log(2.0 * (n + 1.0) / TAIL_TOL)))
    while True:
        ak = a ** (k + 1)
        bracket = n * 2.0 * ak / (1.0 + a) + 2.0 * c0 * ak * ((k + 1.0) - k * a) / (1.0 - a) ** 2
        if bracket <= TAIL_TOL or k > 100_000_000:
            return k
        k += 1 + int(t)


@njit(cache=True, nogil=True)
def _log_laplace_cdf(x, b):
    """log P(U <= x), U ~ Laplace(b)."""
    if x < 0.0:
        return math.log(0.5) + x / b
    return math.log1p(-0.5 * math.exp(-x / b))


@njit(cache=True, nogil=True)
def log_ratio_density(r, s, n, b, t, k):
    """log p(r | S = s, n) by (D) with |v| <= k (``k`` from :func:`v_cut`); r = +-inf: the point mass."""
    a_log = -1.0 / t
    a = math.exp(a_log)
    log_c0 = math.log((1.0 - a) / (1.0 + a))
    if math.isinf(r):
        # P(V <= -n): 1 / (1 + a) at n = 0, a^n / (1 + a) for n >= 1
        lv = n * a_log - math.log1p(a)
        return lv + _log_laplace_cdf(s if r > 0 else -s, b)  # P(U > -s) = P(U <= s); P(U < -s)
    lo_v = max(1 - n, -k)
    if lo_v > k:
        return -math.inf
    log_2b = math.log(2.0 * b)
    top = -math.inf
    for v in range(lo_v, k + 1):
        m = n + v
        x = log_c0 + a_log * abs(v) + math.log(m) - log_2b - abs(r * m - s) / b
        if x > top:
            top = x
    if top == -math.inf:
        return top
    acc = 0.0
    for v in range(lo_v, k + 1):
        m = n + v
        acc += math.exp(log_c0 + a_log * abs(v) + math.log(m) - log_2b - abs(r * m - s) / b - top)
    return top + math.log(acc)


@njit(cache=True, nogil=True)
def log_ratio_densities(r, s, n, b, t, out):
    """``out[i] = log p(r | s[i], n)`` (one K for all)."""
    k = v_cut(n, t)
    for i in range(s.size):
        out[i] = log_ratio_density(r, s[i], n, b, t, k)


@njit(cache=True, nogil=True)
def _clamped_sum(rng, mu, sd, lo, hi, n):
    s = 0.0
    for _ in range(n):
        x = mu + sd * rng.standard_normal()
        s += lo if x < lo else (hi if x > hi else x)
    return s


@njit(cache=True, nogil=True)
def log_density_draws(rng, r, mu, n, sd, lo, hi, b, t, out):
    """``out[m] = log p(r | S_m, n)`` for fresh S_m of n clamped normal records (the pilot of M)."""
    k = v_cut(n, t)
    for m in range(out.size):
        out[m] = log_ratio_density(r, _clamped_sum(rng, mu, sd, lo, hi, n), n, b, t, k)


@njit(cache=True, nogil=True)
def log_lik_estimate(rng, r, mu, n, sd, lo, hi, b, t, n_particles):
    """log L_hat = log (1/M) sum_m p(r | S_m, n): unbiased for p(r | mu, n) before the log; exact at n = 0
    (S = 0 surely, one term)."""
    k = v_cut(n, t)
    if n == 0:
        return log_ratio_density(r, 0.0, 0, b, t, k)
    top = -math.inf
    vals = np.empty(n_particles)
    for m in range(n_particles):
        vals[m] = log_ratio_density(r, _clamped_sum(rng, mu, sd, lo, hi, n), n, b, t, k)
        if vals[m] > top:
            top = vals[m]
    if top == -math.inf:
        return top
    acc = 0.0
    for m in range(n_particles):
        acc += math.exp(vals[m] - top)
    return top + math.log(acc / n_particles)


@njit(cache=True, nogil=True)
def log_size_prior(n, pcode, pmean, pdisp):
    """log p(n): Poisson(pmean) (pcode 0) or negative binomial(pmean, dispersion pdisp) (pcode 1); -inf at n < 0."""
    if n < 0:
        return -math.inf
    if pcode == 0:
        return n * math.log(pmean) - pmean - math.lgamma(n + 1.0)
    q = pmean / (pmean + pdisp)
    return (math.lgamma(n + pdisp) - math.lgamma(pdisp) - math.lgamma(n + 1.0) + n * math.log(q)
            + pdisp * math.log1p(-q))


@njit(cache=True, nogil=True)
def _accept(rng, log_ratio):
    acc = 1.0 if log_ratio >= 0.0 else (math.exp(log_ratio) if log_ratio > -745.0 else 0.0)
    return acc, (acc >= 1.0 or rng.random() < acc)


@njit(cache=True, nogil=True)
def ratio_pm_chain(rng, r, sd, lo, hi, prior_mean, prior_sd, pcode, pmean, pdisp, move_n, b, t, n_particles,
                   mu, n, ll, log_step_mu, log_step_n, adapt_from, target, out_mu, out_n, out_acc_mu, out_acc_n,
                   out_ll):
    """``out_mu.size`` iterations of the pseudo-marginal chain on (mu, n) (:mod:`engine.methods.mean_ratio`).

    Iteration: (1) mu* = mu + e^(log_step_mu) z, a fresh log L_hat(mu*, n), accepted with probability
    min{1, p(mu*) L_hat* / (p(mu) L_hat)}; (2) when ``move_n``: n* = n + d, d uniform on {-k..-1, 1..k},
    k = max(1, round(e^(log_step_n))), a fresh log L_hat(mu, n*), accepted with probability
    min{1, p(n*) L_hat* / (p(n) L_hat)} (n* < 0 rejected: p(n*) = 0). The current estimate is carried, never
    redrawn. ``adapt_from`` >= 0: Robbins-Monro on both log steps towards ``target`` acceptance, gain
    (adapt_from + i + 1)^(-0.6) (warm-up only); < 0: the steps are frozen.
    Returns (mu, n, ll, log_step_mu, log_step_n)."""
    lp_mu = -0.5 * ((mu - prior_mean) / prior_sd) ** 2
    lp_n = log_size_prior(n, pcode, pmean, pdisp)
    for i in range(out_mu.size):
        prop = mu + math.exp(log_step_mu) * rng.standard_normal()
        lp_prop = -0.5 * ((prop - prior_mean) / prior_sd) ** 2
        ll_prop = log_lik_estimate(rng, r, prop, n, sd, lo, hi, b, t, n_particles)
        acc_mu, moved = 0.0, False
        if ll_prop > -math.inf:
            acc_mu, moved = _accept(rng, (lp_prop + ll_prop) - (lp_mu + ll))
        if moved:
            mu, lp_mu, ll = prop, lp_prop, ll_prop
        acc_n = math.nan
        if move_n:
            k = max(1, int(round(math.exp(log_step_n))))
            d = 1 + int(rng.integers(0, k))
            if rng.random() < 0.5:
                d = -d
            n_prop = n + d
            acc_n = 0.0
            if n_prop >= 0:
                lpn_prop = log_size_prior(n_prop, pcode, pmean, pdisp)
                lln = log_lik_estimate(rng, r, mu, n_prop, sd, lo, hi, b, t, n_particles)
                if lln > -math.inf:
                    acc_n, moved_n = _accept(rng, (lpn_prop + lln) - (lp_n + ll))
                    if moved_n:
                        n, lp_n, ll = n_prop, lpn_prop, lln
        if adapt_from >= 0:
            gain = (adapt_from + i + 1.0) ** -0.6
            log_step_mu += gain * (acc_mu - target)
            if move_n:
                log_step_n = max(0.0, log_step_n + gain * (acc_n - target))
        out_mu[i], out_n[i], out_acc_mu[i], out_acc_n[i], out_ll[i] = mu, n, acc_mu, acc_n, ll
    return mu, n, ll, log_step_mu, log_step_n
