"""Compiled pieces of the clamped linear regression model (Ju et al. 2022, Sec. 5; dapper Example 3).

A record is r = (x_1..x_p, y), stored unclamped (the latent records of DA-MCMC are draws from the
model, which knows nothing of the clamp). Two record-additive statistics are kept:

* the released one, s = sum_i t(r_i), on the clamped and normalised record
  z~ = (1, x~_1..x~_p, y~) with x~_j = 2 ([x_j]_{lo_j}^{hi_j} - lo_j) / (hi_j - lo_j) - 1 (the same for
  y with bounds lo_{p+1}, hi_{p+1}); in the order (dapper's ``st_f``)

      t = ( x~_0 y~, x~_1 y~, .., x~_p y~,          p + 1 entries: x~^T y~ (x~_0 = 1)
            y~^2,                                   1 entry:       y~^T y~
            x~_j x~_k for k = 1..p, j = 0..k )      p (p + 3) / 2: the upper triangle of x~^T x~,
                                                                  column by column, without (0, 0)

  so d = (p + 1) + 1 + p (p + 3) / 2 entries (9 for p = 2);
* the conjugate one on the raw records: X^T X ((p + 1) x (p + 1), X = (1, x)), X^T y and y^T y.

``regression_sweep`` is step 2 of Algorithm 1: for each record propose r* ~ f(. | beta)
(x* = m + L z, L the Cholesky factor of Sigma; y* = beta_0 + x*^T beta_{1:p} + sigma z'), form
s* = s - t(r_i) + t(r*) in O(p^2) and accept with probability
min{1, prod_k eta(s_dp,k - s*_k) / eta(s_dp,k - s_k)}; on acceptance both statistics are updated
by the difference of the record's contributions (O(p^2), no O(n) recomputation).
``regression_chain`` alternates it with step 1, beta | x, y ~ N(mu_n, Sigma_n),
Sigma_n = (X^T X / sigma^2 + I / tau^2)^{-1}, mu_n = Sigma_n X^T y / sigma^2 (a (p + 1) x (p + 1)
Cholesky solve) -- with an unknown sigma^2 also sigma^2 | beta, x, y ~ InvGamma(a + n/2, b + RSS/2) --
and recomputes both statistics from the records once per call so that rounding
in the running sums cannot build up over a long run.

Noise kernels (``kernel``): 0 = Laplace, log eta(r) = -|r| / scale; 1 = Gaussian,
-r^2 / (2 scale^2) (normalising constants cancel).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from .kernels import cholesky_into, log_noise

__all__ = ["stat_dim", "record_stat", "statistics", "regression_sweep", "regression_chain", "beta_draw", "sigma2_draw",
           "simulate_statistic", "abc_regression_batch"]


def stat_dim(p: int) -> int:
    """d = (p + 1) + 1 + p (p + 3) / 2, the number of released entries."""
    return (p + 1) + 1 + p * (p + 3) // 2


@njit(cache=True, nogil=True)
def draw_record(rng, beta, chol, x_mean, sigma, e, prop):
    """One record (x, y) from the model into ``prop``: x = m + L e with e ~ N(0, I_p) (L the Cholesky
    factor of Sigma), then y = beta_0 + x^T beta_1: + sigma N(0, 1). ``e`` is scratch of length p."""
    p = beta.size - 1
    for j in range(p):
        e[j] = rng.standard_normal()
    mu_y = beta[0]
    for j in range(p):
        v = x_mean[j]
        for k in range(j + 1):
            v += chol[j, k] * e[k]
        prop[j] = v
        mu_y += beta[j + 1] * v
    prop[p] = mu_y + sigma * rng.standard_normal()


@njit(cache=True, nogil=True)
def record_stat(rec_row, lo, hi, z, out):
    """t(r) of one raw record into ``out`` (order of the module docstring); ``z`` is scratch of size p + 2."""
    q = rec_row.size  # p + 1 columns: x_1..x_p, y
    p = q - 1
    z[0] = 1.0
    for c in range(q):
        v = rec_row[c]
        if v < lo[c]:
            v = lo[c]
        elif v > hi[c]:
            v = hi[c]
        z[c + 1] = 2.0 * (v - lo[c]) / (hi[c] - lo[c]) - 1.0
    yt = z[q]
    for j in range(p + 1):
        out[j] = z[j] * yt
    out[p + 1] = yt * yt
    idx = p + 2
    for k in range(1, p + 1):
        for j in range(k + 1):
            out[idx] = z[j] * z[k]
            idx += 1


@njit(cache=True, nogil=True)
def statistics(rec, lo, hi, s, xtx, xty, yty):
    """Both statistics of all records from scratch (released ``s``; raw X^T X, X^T y and y^T y in yty[0])."""
    n, q = rec.shape
    s[:] = 0.0
    xtx[:, :] = 0.0
    xty[:] = 0.0
    yty[0] = 0.0
    z = np.empty(q + 1)
    t = np.empty(s.size)
    xr = np.empty(q)
    for i in range(n):
        record_stat(rec[i], lo, hi, z, t)
        for k in range(s.size):
            s[k] += t[k]
        xr[0] = 1.0
        for c in range(q - 1):
            xr[c + 1] = rec[i, c]
        y = rec[i, q - 1]
        yty[0] += y * y
        for a in range(q):
            xty[a] += xr[a] * y
            for b in range(q):
                xtx[a, b] += xr[a] * xr[b]


@njit(cache=True, nogil=True)
def regression_sweep(rng, rec, s, xtx, xty, yty, beta, chol, x_mean, sigma, lo, hi, s_dp, kernel, scale):
    """Step 2 of Algorithm 1 at a given beta: one pass over the records, in place.
    Returns (sum of the acceptance probabilities, number of accepted records)."""
    n, q = rec.shape
    p = q - 1
    d = s.size
    z = np.empty(q + 1)
    t_old = np.empty(d)
    t_new = np.empty(d)
    prop = np.empty(q)
    e = np.empty(p)
    asum = 0.0
    nacc = 0
    for i in range(n):
        draw_record(rng, beta, chol, x_mean, sigma, e, prop)
        record_stat(rec[i], lo, hi, z, t_old)
        record_stat(prop, lo, hi, z, t_new)
        lr = 0.0
        for k in range(d):
            if t_new[k] != t_old[k]:
                cur = s_dp[k] - s[k]
                lr += log_noise(kernel, scale, cur - t_new[k] + t_old[k]) - log_noise(kernel, scale, cur)
        al = 1.0 if lr >= 0.0 else math.exp(lr)
        asum += al
        if al >= 1.0 or rng.random() < al:
            for k in range(d):
                s[k] += t_new[k] - t_old[k]
            # raw conjugate statistics: X^T X and X^T y move by the difference of the record's terms
            y_old = rec[i, p]
            y_new = prop[p]
            xty[0] += y_new - y_old
            yty[0] += y_new * y_new - y_old * y_old
            for a in range(1, q):
                xa_o = rec[i, a - 1]
                xa_n = prop[a - 1]
                xty[a] += xa_n * y_new - xa_o * y_old
                xtx[0, a] += xa_n - xa_o
                xtx[a, 0] = xtx[0, a]
                for b in range(1, a + 1):
                    xtx[a, b] += xa_n * prop[b - 1] - xa_o * rec[i, b - 1]
                    xtx[b, a] = xtx[a, b]
            for c in range(q):
                rec[i, c] = prop[c]
            nacc += 1
    return asum, nacc


@njit(cache=True, nogil=True)
def beta_draw(rng, xtx, xty, sigma, prior_sd, out):
    """beta | x, y ~ N(mu_n, Sigma_n) with Sigma_n^{-1} = A = X^T X / sigma^2 + I / tau^2 and
    mu_n = A^{-1} X^T y / sigma^2: Cholesky A = L L^T, mu_n by two triangular solves, and
    beta = mu_n + L^{-T} z (covariance L^{-T} L^{-1} = A^{-1})."""
    q = xty.size
    s2 = sigma * sigma
    a = np.empty((q, q))
    for i in range(q):
        for j in range(q):
            a[i, j] = xtx[i, j] / s2
        a[i, i] += 1.0 / (prior_sd * prior_sd)
    low = np.zeros((q, q))
    cholesky_into(a, low)  # A is positive definite: X^T X / sigma^2 plus the prior's I / tau^2
    w = np.empty(q)
    for i in range(q):  # L w = X^T y / sigma^2, so mu_n = L^{-T} w
        v = xty[i] / s2
        for k in range(i):
            v -= low[i, k] * w[k]
        w[i] = v / low[i, i]
    # L^T beta = w + z gives beta = mu_n + L^{-T} z in one back substitution
    for i in range(q):
        w[i] += rng.standard_normal()
    for i in range(q - 1, -1, -1):
        v = w[i]
        for k in range(i + 1, q):
            v -= low[k, i] * out[k]
        out[i] = v / low[i, i]


@njit(cache=True, nogil=True)
def sigma2_draw(rng, xtx, xty, yty, beta, n, sig_a, sig_b):
    """sigma^2 | beta, x, y ~ InvGamma(a + n/2, b + RSS/2), RSS = y^T y - 2 beta^T X^T y + beta^T X^T X beta
    (the inverse-gamma prior is conjugate for sigma^2 given beta)."""
    q = xty.size
    rss = yty
    for a in range(q):
        rss -= 2.0 * beta[a] * xty[a]
        for b in range(q):
            rss += beta[a] * xtx[a, b] * beta[b]
    if rss < 0.0:  # rounding only: RSS is a sum of squares
        rss = 0.0
    return (sig_b + 0.5 * rss) / rng.gamma(sig_a + 0.5 * n, 1.0)


@njit(cache=True, nogil=True)
def regression_chain(rng, rec, s, xtx, xty, yty, sig, chol, x_mean, prior_sd, sig_a, sig_b, lo, hi, s_dp, kernel,
                     scale, n_iter, out_theta, out_acc, out_frac):
    """``n_iter`` iterations of Algorithm 1: beta | sigma, x, y (conjugate normal); with an unknown
    sigma^2 (``sig_a > 0``: InvGamma(sig_a, sig_b) prior) sigma^2 | beta, x, y (conjugate inverse gamma,
    recorded as the last column of ``out_theta``); then a record sweep at (beta, sigma). ``sig[0]``
    holds the current sigma between calls."""
    statistics(rec, lo, hi, s, xtx, xty, yty)
    n = rec.shape[0]
    q = xty.size
    beta = np.empty(q)
    for t in range(n_iter):
        beta_draw(rng, xtx, xty, sig[0], prior_sd, beta)
        for j in range(q):
            out_theta[t, j] = beta[j]
        if sig_a > 0.0:
            s2 = sigma2_draw(rng, xtx, xty, yty[0], beta, n, sig_a, sig_b)
            sig[0] = math.sqrt(s2)
            out_theta[t, q] = s2
        asum, nacc = regression_sweep(rng, rec, s, xtx, xty, yty, beta, chol, x_mean, sig[0], lo, hi, s_dp, kernel,
                                      scale)
        out_acc[t] = asum / n
        out_frac[t] = nacc / n


@njit(cache=True, nogil=True)
def _simulate_into(rng, beta, n, chol, x_mean, sigma, lo, hi, z, t, prop, e, s):
    s[:] = 0.0
    for i in range(n):
        draw_record(rng, beta, chol, x_mean, sigma, e, prop)
        record_stat(prop, lo, hi, z, t)
        for k in range(s.size):
            s[k] += t[k]


@njit(cache=True, nogil=True)
def simulate_statistic(rng, betas, sigmas, n, chol, x_mean, lo, hi, out):
    """out[r] = s(x, y) of n records drawn from the model at betas[r] and sigmas[r], O(n p^2) each."""
    q = betas.shape[1]
    z = np.empty(q + 1)
    t = np.empty(out.shape[1])
    prop = np.empty(q)
    e = np.empty(q - 1)
    for r in range(betas.shape[0]):
        _simulate_into(rng, betas[r], n, chol, x_mean, sigmas[r], lo, hi, z, t, prop, e, out[r])


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
        _simulate_into(rng, beta, n, chol, x_mean, sd, lo, hi, z, t, prop, e, s)
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
