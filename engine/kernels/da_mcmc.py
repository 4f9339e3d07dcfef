"""Compiled chains of the privacy-aware Metropolis-within-Gibbs sampler (Ju et al. 2022, Alg. 1).

One call runs ``n_iter`` iterations of one chain in place on plain arrays:

1. theta | x from the conjugate posterior (Assumption 1, an exact Gibbs draw);
2. for i = 1..n: propose x_i* ~ f(. | theta), update the statistic by record additivity
   (Assumption 2), s* = s - t(x_i) + t(x_i*), and accept with probability
   alpha = min{1, eta(s_dp | s*) / eta(s_dp | s)}                                   (eq. 5)
   -- an O(1) step, so a sweep is O(n) (Prop. 3.2).

Recorded per iteration: theta (after step 1), the mean of alpha over the sweep
(``acceptance_rate``; Prop. 3.1 bounds every alpha, hence this mean, below by exp(-epsilon) for a
pure epsilon-DP mechanism) and the fraction of records whose proposal was accepted.

A proposal equal to the current record, or one that leaves the statistic unchanged, has
alpha = 1 and needs no uniform draw. For the Bernoulli model the acceptance probabilities of
the only two possible moves (s -> s + 1, s -> s - 1) are tabulated once per run, since they
depend on s and s_dp only. Randomness comes from the ``numpy.random.Generator`` passed in.

Step 2 of each chain is its own compiled function (``*_sweep``: one pass over the records at a
given theta) so that the reversible-jump sampler and the Monte Carlo EM E-step of
:mod:`engine.kernels.rjmcmc` run the very same record sweep.

``loglinear_chain`` runs the same algorithm for the naive-Bayes log-linear model (records
(y, x_1..x_K), statistic the K two-way tables): a record move changes two cells of each table, so
the Metropolis ratio costs O(K) per record.

Noise kernels (``kernel``): 0 = log eta(r) = -|r|/scale (Laplace, discrete Laplace),
1 = -r^2/(2 scale^2) (Gaussian, discrete Gaussian), 2..9 a clipped release on its bound
(:func:`engine.kernels.shared.log_noise_tail`), 10 a bounded-domain Laplace release (``scale`` then a tuple,
as for a lattice release on its bound: :func:`engine.kernels.shared.log_noise`); normalising constants
cancel in alpha.
``mode`` 0 = additive noise on the statistic, 1 = per-record randomized response, where the
record's reported category z_i enters through log Q[x, z_i].

``regression_chain`` runs it for the clamped linear regression model (the record and statistic in
:mod:`engine.kernels.shared`). ``regression_sweep`` is step 2: for each record propose
r* ~ f(. | beta), form s* = s - t(r_i) + t(r*) in O(p^2) and accept with probability
min{1, prod_k eta(s_dp,k - s*_k) / eta(s_dp,k - s_k)}; on acceptance both statistics are updated
by the difference of the record's contributions (O(p^2), no O(n) recomputation).
``regression_chain`` alternates it with step 1, beta | x, y ~ N(mu_n, Sigma_n),
Sigma_n = (X^T X / sigma^2 + I / tau^2)^{-1}, mu_n = Sigma_n X^T y / sigma^2 (a (p + 1) x (p + 1)
Cholesky solve) -- with an unknown sigma^2 also sigma^2 | beta, x, y ~ InvGamma(a + n/2, b + RSS/2) --
and recomputes both statistics from the records once per call so that rounding
in the running sums cannot build up over a long run.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from .shared import cdf_draw, cholesky_into, draw_record, log_noise, record_move, record_stat, statistics

__all__ = ["bernoulli_chain", "categorical_chain", "poisson_chain", "normal_chain", "loglinear_chain",
           "bernoulli_sweep", "poisson_sweep", "normal_sweep", "normal_sums", "regression_sweep", "regression_chain",
           "regression_window_sweep", "regression_window_chain",
           "beta_draw", "sigma2_draw"]


@njit(cache=True, nogil=True)
def bernoulli_sweep(rng, x, s, theta, mode, acc_up, acc_down, z, rr_acc):
    """Step 2 of Algorithm 1 for Bernoulli records at a given theta: one pass over ``x``.
    Returns (s, sum of alpha, number of accepted records)."""
    asum = 0.0
    nacc = 0
    for i in range(x.size):
        xi = x[i]
        prop = 1 if rng.random() < theta else 0
        if prop == xi:
            asum += 1.0
            nacc += 1
            continue
        if mode == 0:
            al = acc_up[s] if prop == 1 else acc_down[s]
        else:
            al = rr_acc[z[i], prop]
        asum += al
        if al >= 1.0 or rng.random() < al:
            x[i] = prop
            s += 1 if prop == 1 else -1
            nacc += 1
    return s, asum, nacc


@njit(cache=True, nogil=True)
def bernoulli_chain(rng, x, s, a, b, mode, acc_up, acc_down, z, rr_acc, n_iter,
                    out_theta, out_acc, out_frac):
    """Beta-Bernoulli chain. ``acc_up[s]``/``acc_down[s]``: alpha of s -> s+1 / s -> s-1
    (mode 0); ``rr_acc[z, x*]``: alpha of flipping a record reported as z to x* (mode 1).
    Returns the final statistic s."""
    n = x.size
    for t in range(n_iter):
        theta = rng.beta(a + s, b + n - s)
        out_theta[t, 0] = theta
        s, asum, nacc = bernoulli_sweep(rng, x, s, theta, mode, acc_up, acc_down, z, rr_acc)
        out_acc[t] = asum / n
        out_frac[t] = nacc / n
    return s


@njit(cache=True, nogil=True)
def categorical_chain(rng, x, counts, alpha, mode, s_dp, kernel, scale, z, log_q, n_iter,
                      out_theta, out_acc, out_frac):
    """Dirichlet-categorical chain over k cells; ``counts`` are the current cell counts."""
    n = x.size
    k = alpha.size
    p = np.empty(k)
    cdf = np.empty(k)
    for t in range(n_iter):
        tot = 0.0
        for j in range(k):
            g = rng.gamma(alpha[j] + counts[j], 1.0)
            p[j] = g
            tot += g
        acc = 0.0
        for j in range(k):
            p[j] /= tot
            out_theta[t, j] = p[j]
            acc += p[j]
            cdf[j] = acc
        asum = 0.0
        nacc = 0
        for i in range(n):
            prop = cdf_draw(rng, cdf, 0, k)
            xi = x[i]
            if prop == xi:
                asum += 1.0
                nacc += 1
                continue
            if mode == 0:
                lr = (log_noise(kernel, scale, s_dp[prop] - counts[prop] - 1.0)
                      - log_noise(kernel, scale, s_dp[prop] - counts[prop])
                      + log_noise(kernel, scale, s_dp[xi] - counts[xi] + 1.0)
                      - log_noise(kernel, scale, s_dp[xi] - counts[xi]))
            else:
                lr = log_q[prop, z[i]] - log_q[xi, z[i]]
            if lr >= 0.0:
                al = 1.0
            else:
                al = math.exp(lr)
            asum += al
            if al >= 1.0 or rng.random() < al:
                x[i] = prop
                counts[prop] += 1.0
                counts[xi] -= 1.0
                nacc += 1
        out_acc[t] = asum / n
        out_frac[t] = nacc / n


@njit(cache=True, nogil=True)
def poisson_sweep(rng, x, s, sum_x, lam, upper, s_dp, kernel, scale):
    """Step 2 of Algorithm 1 for Poisson records at a given lam (statistic sum min(x_i, upper),
    ``upper < 0``: no clamp). Returns (s, sum_x, sum of alpha, number of accepted records)."""
    asum = 0.0
    nacc = 0
    cur = log_noise(kernel, scale, s_dp - s)
    for i in range(x.size):
        prop = rng.poisson(lam)
        xi = x[i]
        if prop == xi:
            asum += 1.0
            nacc += 1
            continue
        ti = xi
        tp = prop
        if upper >= 0:
            ti = min(xi, upper)
            tp = min(prop, upper)
        al, new, ok = record_move(rng, cur, s, ti, tp, s_dp, kernel, scale)
        asum += al
        if ok:
            x[i] = prop
            s += tp - ti
            sum_x += prop - xi
            cur = new
            nacc += 1
    return s, sum_x, asum, nacc


@njit(cache=True, nogil=True)
def poisson_chain(rng, x, s, sum_x, alpha, beta, upper, s_dp, kernel, scale, n_iter,
                  out_theta, out_acc, out_frac):
    """Gamma-Poisson chain; the statistic is sum min(x_i, upper) (``upper < 0``: no clamp).
    The latent records are unclamped, so lam | x ~ Gamma(alpha + sum x, beta + n).
    Returns (s, sum_x)."""
    n = x.size
    for t in range(n_iter):
        lam = rng.gamma(alpha + sum_x, 1.0 / (beta + n))
        out_theta[t, 0] = lam
        s, sum_x, asum, nacc = poisson_sweep(rng, x, s, sum_x, lam, upper, s_dp, kernel, scale)
        out_acc[t] = asum / n
        out_frac[t] = nacc / n
    return s, sum_x


@njit(cache=True, nogil=True)
def normal_sums(x, lo, hi):
    """(clamped sum, plain sum) of the records, recomputed so rounding cannot accumulate."""
    s = 0.0
    sum_x = 0.0
    for i in range(x.size):
        s += min(max(x[i], lo), hi)
        sum_x += x[i]
    return s, sum_x


@njit(cache=True, nogil=True)
def normal_sweep(rng, x, s, sum_x, mu, sd, lo, hi, s_dp, kernel, scale):
    """Step 2 of Algorithm 1 for normal records at a given mu (statistic: the sum clamped to
    [lo, hi]). Returns (s, sum_x, sum of alpha, number of accepted records)."""
    asum = 0.0
    nacc = 0
    cur = log_noise(kernel, scale, s_dp - s)
    for i in range(x.size):
        prop = rng.normal(mu, sd)
        xi = x[i]
        ti = min(max(xi, lo), hi)
        tp = min(max(prop, lo), hi)
        al, new, ok = record_move(rng, cur, s, ti, tp, s_dp, kernel, scale)
        asum += al
        if ok:
            x[i] = prop
            s += tp - ti
            sum_x += prop - xi
            cur = new
            nacc += 1
    return s, sum_x, asum, nacc


@njit(cache=True, nogil=True)
def normal_chain(rng, x, s, sum_x, sd, lo, hi, prior_mean, prior_sd, s_dp, kernel, scale, n_iter,
                 out_theta, out_acc, out_frac):
    """Normal-mean chain with known sd; statistic = sum of records clamped to [lo, hi].
    mu | x ~ N(m, v) with 1/v = 1/prior_sd^2 + n/sd^2, m = v (prior_mean/prior_sd^2 + sum x/sd^2).
    Returns (s, sum_x)."""
    n = x.size
    prec = 1.0 / (prior_sd * prior_sd) + n / (sd * sd)
    post_sd = 1.0 / math.sqrt(prec)
    for t in range(n_iter):
        # resynchronise the running sums so rounding error cannot accumulate across sweeps
        s, sum_x = normal_sums(x, lo, hi)
        m = (prior_mean / (prior_sd * prior_sd) + sum_x / (sd * sd)) / prec
        mu = rng.normal(m, post_sd)
        out_theta[t, 0] = mu
        s, sum_x, asum, nacc = normal_sweep(rng, x, s, sum_x, mu, sd, lo, hi, s_dp, kernel, scale)
        out_acc[t] = asum / n
        out_frac[t] = nacc / n
    return s, sum_x


@njit(cache=True, nogil=True)
def loglinear_chain(rng, rec, counts, class_counts, levels, offsets, alpha, s_dp, kernel, scale, n_iter,
                    out_theta, out_acc, out_frac):
    """Naive-Bayes log-linear chain (Ju et al. 2022, Sec. 4) over records ``rec[r] = (y, x_1..x_K)``.

    ``levels[k]`` = J_k and ``offsets[k]`` = start of table k in the stacked statistic ``counts``
    (cell (k, i, j) at offsets[k] + i J_k + j); ``class_counts[i]`` = #{y = i}.

    Step 1: pi ~ Dir(alpha + class_counts), p[k][i] ~ Dir(alpha + n_i.^k), by normalised gammas
    in the order pi, then k, i, j (the order of ``out_theta``'s columns).
    Step 2, per record: y* ~ Cat(pi), then x_k* ~ Cat(p[k][y*]) for k = 1..K (1 + K uniforms).
    In table k the record moves its count from cell (k, y, x_k) to (k, y*, x_k*), so the log
    Metropolis ratio is a sum over the tables where these cells differ of
        log eta(m_new - n_new - 1) - log eta(m_new - n_new) + log eta(m_old - n_old + 1) - log eta(m_old - n_old),
    O(K) per record (cells of different tables are distinct, so the terms do not interact).
    """
    n = rec.shape[0]
    big_k = levels.size
    big_i = class_counts.size
    n_cells = counts.size
    cdf_pi = np.empty(big_i)
    cdf_p = np.empty(n_cells)
    prop = np.empty(big_k + 1, dtype=np.int64)
    for t in range(n_iter):
        tot = 0.0
        for i in range(big_i):
            g = rng.gamma(alpha + class_counts[i], 1.0)
            cdf_pi[i] = g
            tot += g
        acc = 0.0
        for i in range(big_i):
            out_theta[t, i] = cdf_pi[i] / tot
            acc += out_theta[t, i]
            cdf_pi[i] = acc
        for k in range(big_k):
            jk = levels[k]
            for i in range(big_i):
                base = offsets[k] + i * jk
                tot = 0.0
                for j in range(jk):
                    g = rng.gamma(alpha + counts[base + j], 1.0)
                    cdf_p[base + j] = g
                    tot += g
                acc = 0.0
                for j in range(jk):
                    v = cdf_p[base + j] / tot
                    out_theta[t, big_i + base + j] = v
                    acc += v
                    cdf_p[base + j] = acc
        asum = 0.0
        nacc = 0
        for r in range(n):
            yp = cdf_draw(rng, cdf_pi, 0, big_i)
            prop[0] = yp
            same = yp == rec[r, 0]
            for k in range(big_k):
                jk = levels[k]
                base = offsets[k] + yp * jk
                xp = cdf_draw(rng, cdf_p, base, jk)
                prop[k + 1] = xp
                if xp != rec[r, k + 1]:
                    same = False
            if same:
                asum += 1.0
                nacc += 1
                continue
            y = rec[r, 0]
            lr = 0.0
            for k in range(big_k):
                jk = levels[k]
                c_old = offsets[k] + y * jk + rec[r, k + 1]
                c_new = offsets[k] + yp * jk + prop[k + 1]
                if c_old != c_new:
                    lr += (log_noise(kernel, scale, s_dp[c_new] - counts[c_new] - 1.0)
                           - log_noise(kernel, scale, s_dp[c_new] - counts[c_new])
                           + log_noise(kernel, scale, s_dp[c_old] - counts[c_old] + 1.0)
                           - log_noise(kernel, scale, s_dp[c_old] - counts[c_old]))
            al = 1.0 if lr >= 0.0 else math.exp(lr)
            asum += al
            if al >= 1.0 or rng.random() < al:
                for k in range(big_k):
                    jk = levels[k]
                    counts[offsets[k] + y * jk + rec[r, k + 1]] -= 1.0
                    counts[offsets[k] + yp * jk + prop[k + 1]] += 1.0
                    rec[r, k + 1] = prop[k + 1]
                class_counts[y] -= 1.0
                class_counts[yp] += 1.0
                rec[r, 0] = yp
                nacc += 1
        out_acc[t] = asum / n
        out_frac[t] = nacc / n


@njit(cache=True, nogil=True)
def regression_sweep(rng, rec, s, xtx, xty, yty, beta, chol, x_mean, sigma, lo, hi, s_dp, kernel, scale):
    """Step 2 of Algorithm 1 at a given beta: one pass over the records, in place.
    Returns (sum of the acceptance probabilities, number of accepted records)."""
    return regression_window_sweep(rng, rec, s, xtx, xty, yty, beta, chol, x_mean, sigma, lo, hi, s_dp, kernel,
                                   scale, 0, rec.shape[0])


@njit(cache=True, nogil=True)
def regression_window_sweep(rng, rec, s, xtx, xty, yty, beta, chol, x_mean, sigma, lo, hi, s_dp, kernel, scale,
                            start, m):
    """Step 2 on the m records start, start + 1, .., start + m - 1 (indices mod n), in the order
    written; each is the record move of eq. 5. Returns (sum of alpha, number accepted)."""
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
    for k_rec in range(m):
        i = start + k_rec
        if i >= n:
            i -= n
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
def regression_window_chain(rng, rec, s, xtx, xty, yty, sig, chol, x_mean, prior_sd, sig_a, sig_b, lo, hi, s_dp,
                            kernel, scale, start, m, n_iter, out_theta, out_acc, out_frac):
    """``regression_chain`` with step 2 on m records per iteration instead of all n: the window
    start..start + m - 1 (mod n), moved on by m after each iteration, so every record is visited
    once per n / m iterations (a partial systematic scan). Returns the next window's start.

    Exactness: each record move leaves p(beta, x | s_dp) invariant (it is a Metropolis step on
    p(x_i | x_-i, beta, s_dp) with the model as proposal, eq. 5), and so does the Gibbs draw of beta
    (and sigma^2); a composition of invariant kernels is invariant, whichever records a window holds.
    The window order is fixed in advance (it does not depend on the state), and every record is
    visited, so the chain is the same kind of deterministic-scan Gibbs sampler as Algorithm 1, with
    beta refreshed m / n times as often. ``acceptance_rate`` and ``out_frac`` are means over the window."""
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
        asum, nacc = regression_window_sweep(rng, rec, s, xtx, xty, yty, beta, chol, x_mean, sig[0], lo, hi, s_dp,
                                             kernel, scale, start, m)
        start += m
        while start >= n:
            start -= n
        out_acc[t] = asum / m
        out_frac[t] = nacc / m
    return start
