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

Both regression chains also refresh the raw y of clamped records (``censored_refresh``: the
Tobit-style data augmentation of Chib 1992; the derivation is in that function's docstring). A record
whose y sits beyond a clamp bound contributes the same t(r) whatever its raw y is, so only a
record move used to change that raw y, although the conjugate step for beta reads it; refreshing it
from N(beta_0 + x^T beta_1:, sigma^2) truncated to its side of the bound costs O(1) per record and
leaves s untouched. The clamped records are kept in an index list (``cl_idx[0:ncl[0]]``, with
``cl_pos[i]`` the position of record i in it or -1), updated in O(1) when a record move changes
whether a record's y is clamped.

With shift moves (``shifts > 0``) the regression chains run ``_shift_chain``: the records' y are stored as
y - X D with D the accepted shifts' running total, and a split of the records (``_split_class``: safe inside,
safe below or above a bound, or unsafe, for an ellipsoid box of D) is kept across iterations, so that a shift
move costs a polynomial plus the unsafe records, and the sweep and refresh keep the split in O(1) per record.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from .shared import (cdf_draw, cholesky_into, draw_record, log_noise, log_t_mixture, plain_inverse, record_move,
                     record_stat, statistics, t_mixture_point, t_mixture_weights)

#: ``shift_l`` when no shift move runs (``shifts = 0``).
NO_SHIFT = np.zeros((1, 1))
#: The independence component's arrays when shift moves are random-walk only (``p_ind = 0``).
NO_IND_MEANS = np.zeros((1, 1))
NO_IND_CHOLS = np.ones((1, 1, 1))
NO_IND_LOG_W = np.zeros(1)
#: The shift moves' box, in proposal standard deviations (SHIFT_REACH x ``shift_l``), when the caller gives
#: none (``regression_window_chain``'s ``shift_box``).
SHIFT_REACH = 3.5
#: ``shift_box`` (a matrix) / ``shift_mid`` (a vector) when the caller gives none.
NO_BOX = np.zeros((0, 0))
NO_MID = np.zeros(0)

__all__ = ["bernoulli_chain", "categorical_chain", "poisson_chain", "normal_chain", "normal_shift",
           "normal_shift_moves", "loglinear_chain", "bernoulli_sweep", "poisson_sweep", "normal_sweep", "normal_sums",
           "regression_sweep", "regression_chain", "regression_window_sweep", "regression_window_chain", "beta_draw",
           "sigma2_draw", "truncated_normal_above", "censored_refresh", "clamped_list", "shift_moves"]


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
def normal_shift(rng, x, n, s, mu, step, lo, hi, prior_mean, prior_sd, sdp, kernel, scale):
    """One translation move of the normal model at a fixed n: (mu, x_1..x_n) -> (mu + d, x_1 + d, .., x_n + d),
    d ~ N(0, step^2), accepted with probability min(1, A),

        log A = log p(mu + d) - log p(mu) + log eta(s_dp | s(x + d)) - log eta(s_dp | s(x)),

    s(x) = sum_i clamp(x_i, lo, hi). Derivation: the map is a translation of R^(n+1) (Jacobian 1), its reverse is
    the move with -d, which N(0, step^2) proposes with the same density, so A is the ratio of the target at the
    two points; every record's likelihood f(x_i + d | mu + d) = f(x_i | mu) (the residuals x_i - mu do not move)
    and (under rjmcmc) n's prior and size mechanism do not change, which leaves mu's prior and the statistic's
    noise. ``step`` may depend on n (the move keeps n). Where the noise is wide against the records' spread, the
    Gibbs pair (mu | x, then the record sweep) moves mu by about sd / sqrt(n) an iteration across a posterior as
    wide as the prior (audit s24 M3: rjmcmc with clamp [-3, 3] and prior sd 10, R-hat 1.13 at the defaults); this
    move crosses it in a few steps. DA-MCMC (:func:`normal_chain`) and rjmcmc both make it. Returns (mu, s, d, or
    0.0 when rejected); the caller shifts sum_x by n d."""
    d = rng.normal(0.0, step)
    s2 = 0.0
    for i in range(n):
        s2 += min(max(x[i] + d, lo), hi)
    z0, z1 = (mu - prior_mean) / prior_sd, (mu + d - prior_mean) / prior_sd
    lr = 0.5 * (z0 * z0 - z1 * z1) + log_noise(kernel, scale, sdp - s2) - log_noise(kernel, scale, sdp - s)
    if lr >= 0.0 or rng.random() < math.exp(lr):
        for i in range(n):
            x[i] += d
        return mu + d, s2, d
    return mu, s, 0.0


@njit(cache=True, nogil=True)
def normal_shift_moves(rng, x, n, s, sum_x, mu, noise_sd, lo, hi, prior_mean, prior_sd, sdp, kernel, scale):
    """The three translation moves (:func:`normal_shift`) DA-MCMC and rjmcmc make after mu's draw, of steps
    near = min(2.4 noise_sd / n, prior_sd) (the sum moves by about the noise's spread), sqrt(near prior_sd) and
    prior_sd (where the records sit clamped and the sum no longer follows mu). Returns (mu, s, sum_x)."""
    near = min(2.4 * noise_sd / n, prior_sd)
    for step in (near, math.sqrt(near * prior_sd), prior_sd):
        mu, s, d = normal_shift(rng, x, n, s, mu, step, lo, hi, prior_mean, prior_sd, sdp, kernel, scale)
        sum_x += n * d
    return mu, s, sum_x


@njit(cache=True, nogil=True)
def normal_chain(rng, x, s, sum_x, sd, lo, hi, prior_mean, prior_sd, s_dp, kernel, scale, noise_sd, shifts, n_iter,
                 out_theta, out_acc, out_frac):
    """Normal-mean chain with known sd; statistic = sum of records clamped to [lo, hi].
    mu | x ~ N(m, v) with 1/v = 1/prior_sd^2 + n/sd^2, m = v (prior_mean/prior_sd^2 + sum x/sd^2); with
    ``shifts``, then the three translation moves (:func:`normal_shift_moves`); then the record sweep. Returns
    (s, sum_x)."""
    n = x.size
    prec = 1.0 / (prior_sd * prior_sd) + n / (sd * sd)
    post_sd = 1.0 / math.sqrt(prec)
    for t in range(n_iter):
        # resynchronise the running sums so rounding error cannot accumulate across sweeps
        s, sum_x = normal_sums(x, lo, hi)
        m = (prior_mean / (prior_sd * prior_sd) + sum_x / (sd * sd)) / prec
        mu = rng.normal(m, post_sd)
        if shifts:
            mu, s, sum_x = normal_shift_moves(rng, x, n, s, sum_x, mu, noise_sd, lo, hi, prior_mean, prior_sd, s_dp,
                                              kernel, scale)
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
    no_list = np.empty(0, dtype=np.int64)
    return regression_window_sweep_listed(rng, rec, s, xtx, xty, yty, beta, chol, x_mean, sigma, lo, hi, s_dp, kernel,
                                          scale, start, m, no_list, no_list, no_list)


@njit(cache=True, nogil=True)
def _is_clamped(y, lo_y, hi_y):
    return y <= lo_y or y >= hi_y


@njit(cache=True, nogil=True)
def clamped_list(rec, lo_y, hi_y, cl_idx, cl_pos, ncl):
    """The clamped records' index list from scratch: cl_idx[0:ncl[0]] the records whose y is <= lo_y or
    >= hi_y, in record order, cl_pos[i] the position of record i in it (-1: y inside the bounds)."""
    q = rec.shape[1]
    k = 0
    for i in range(rec.shape[0]):
        if _is_clamped(rec[i, q - 1], lo_y, hi_y):
            cl_idx[k] = i
            cl_pos[i] = k
            k += 1
        else:
            cl_pos[i] = -1
    ncl[0] = k


@njit(cache=True, nogil=True, inline="always")
def _list_add(i, idx, pos, cnt, c):
    """Append record i to the index list idx[0:cnt[c]] (``pos[i]`` its position): O(1)."""
    idx[cnt[c]] = i
    pos[i] = cnt[c]
    cnt[c] += 1


@njit(cache=True, nogil=True, inline="always")
def _list_remove(i, idx, pos, cnt, c):
    """Take record i out of the index list idx[0:cnt[c]] by swap-remove with its last entry: O(1)."""
    k = pos[i]
    last = idx[cnt[c] - 1]
    idx[k] = last
    pos[last] = k
    pos[i] = -1
    cnt[c] -= 1


@njit(cache=True, nogil=True)
def _list_update(i, was, now, cl_idx, cl_pos, ncl):
    """Record i's y went from clamped (``was``) or not to clamped (``now``) or not: O(1) (append, or
    swap-remove with the list's last entry)."""
    if was == now:
        return
    if now:
        _list_add(i, cl_idx, cl_pos, ncl, 0)
    else:
        _list_remove(i, cl_idx, cl_pos, ncl, 0)


@njit(cache=True, nogil=True, inline="always")
def _record_log_ratio(t_old, t_new, s, s_dp, fast, inv, kernel, scale):
    """log eta(s_dp - s*) - log eta(s_dp - s) for s* = s - t_old + t_new (eq. 5's ratio), over the entries
    the record changes."""
    lr = 0.0
    for k in range(s.size):
        if t_new[k] != t_old[k]:
            cur = s_dp[k] - s[k]
            dk = t_new[k] - t_old[k]
            if fast == 0:
                lr += (abs(cur) - abs(cur - dk)) * inv
            elif fast == 1:
                lr += dk * (2.0 * cur - dk) * inv
            else:
                lr += log_noise(kernel, scale, cur - t_new[k] + t_old[k]) - log_noise(kernel, scale, cur)
    return lr


@njit(cache=True, nogil=True, inline="always")
def _regression_record_move(rng, cur, beta, chol, x_mean, sigma, lo, hi, s, s_dp, fast, inv, kernel, scale, e, prop,
                            z, t_old, t_new):
    """Eq. 5's record move for the record whose current value is ``cur``: ``prop`` drawn from the model given
    beta (``draw_record``), the two records' clamped statistics into ``t_old`` and ``t_new``, and the acceptance
    probability min(1, eta(s_dp - s*) / eta(s_dp - s)) returned. The one definition the window sweeps (plain,
    split, orbit) share; each writes an accepted record back its own way."""
    draw_record(rng, beta, chol, x_mean, sigma, e, prop)
    record_stat(cur, lo, hi, z, t_old)
    record_stat(prop, lo, hi, z, t_new)
    lr = _record_log_ratio(t_old, t_new, s, s_dp, fast, inv, kernel, scale)
    return 1.0 if lr >= 0.0 else math.exp(lr)


@njit(cache=True, nogil=True, inline="always")
def _record_sums(s, xtx, xty, yty, t_old, t_new, old, new):
    """An accepted record move: s, X^T X, X^T y and y^T y move by the difference of the record's terms
    (``old`` and ``new`` the record before and after, y last)."""
    q = xty.size
    p = q - 1
    for k in range(s.size):
        s[k] += t_new[k] - t_old[k]
    y_old = old[p]
    y_new = new[p]
    xty[0] += y_new - y_old
    yty[0] += y_new * y_new - y_old * y_old
    for a in range(1, q):
        xa_o = old[a - 1]
        xa_n = new[a - 1]
        xty[a] += xa_n * y_new - xa_o * y_old
        xtx[0, a] += xa_n - xa_o
        xtx[a, 0] = xtx[0, a]
        for b in range(1, a + 1):
            xtx[a, b] += xa_n * new[b - 1] - xa_o * old[b - 1]
            xtx[b, a] = xtx[a, b]


@njit(cache=True, nogil=True)
def regression_window_sweep_listed(rng, rec, s, xtx, xty, yty, beta, chol, x_mean, sigma, lo, hi, s_dp, kernel,
                                   scale, start, m, cl_idx, cl_pos, ncl):
    """``regression_window_sweep`` that also keeps the clamped records' list (``clamped_list``) up to date
    when an accepted move changes whether a record's y is clamped (``ncl`` of size 0: no list kept)."""
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
    fast, inv = plain_inverse(kernel, scale)  # Laplace and Gaussian: the log-ratio without a division per entry
    for k_rec in range(m):
        i = start + k_rec
        if i >= n:
            i -= n
        al = _regression_record_move(rng, rec[i], beta, chol, x_mean, sigma, lo, hi, s, s_dp, fast, inv,
                                     kernel, scale, e, prop, z, t_old, t_new)
        asum += al
        if al >= 1.0 or rng.random() < al:
            if ncl.size > 0:
                _list_update(i, _is_clamped(rec[i, p], lo[p], hi[p]), _is_clamped(prop[p], lo[p], hi[p]), cl_idx,
                             cl_pos, ncl)
            _record_sums(s, xtx, xty, yty, t_old, t_new, rec[i], prop)
            for c in range(q):
                rec[i, c] = prop[c]
            nacc += 1
    return asum, nacc


@njit(cache=True, nogil=True)
def truncated_normal_above(rng, a):
    """Z ~ N(0, 1) conditioned on Z >= a, exactly, by rejection: for a < 0 plain normal draws until
    one is >= a (acceptance P(Z >= a) > 1/2); for a >= 0 Robert's (1995) translated exponential proposal
    z = a + Exp(lam), lam = (a + sqrt(a^2 + 4)) / 2, accepted with probability exp(-(z - lam)^2 / 2)
    (acceptance about 0.76 at a = 0, tending to 1 as a grows), so no draw ever costs more than a few
    tries, far out in the tail included."""
    if a < 0.0:
        while True:
            z = rng.standard_normal()
            if z >= a:
                return z
    lam = 0.5 * (a + math.sqrt(a * a + 4.0))
    while True:
        z = a + rng.standard_exponential() / lam
        u = rng.random()
        if u <= math.exp(-0.5 * (z - lam) * (z - lam)):
            return z


@njit(cache=True, nogil=True, inline="always")
def _tobit_draw(rng, y_old, mu, sigma, lo_y, hi_y):
    """A clamped record's raw y redrawn from N(mu, sigma^2) truncated to the side of the clamp y_old is on
    (``censored_refresh``)."""
    if y_old >= hi_y:
        y_new = mu + sigma * truncated_normal_above(rng, (hi_y - mu) / sigma)
        if y_new < hi_y:  # rounding at the bound only: stay on the record's side
            y_new = hi_y
    else:
        y_new = mu - sigma * truncated_normal_above(rng, (mu - lo_y) / sigma)
        if y_new > lo_y:
            y_new = lo_y
    return y_new


@njit(cache=True, nogil=True)
def _refresh_one(rng, rec, xty, yty, i, beta, sigma, lo_y, hi_y):
    """Record i's raw y from N(beta_0 + x_i^T beta_1:, sigma^2) truncated to its side of the clamp;
    X^T y and y^T y updated by the difference (X^T X does not move: x is not touched)."""
    q = rec.shape[1]
    p = q - 1
    mu = beta[0]
    for j in range(p):
        mu += beta[j + 1] * rec[i, j]
    y_old = rec[i, p]
    y_new = _tobit_draw(rng, y_old, mu, sigma, lo_y, hi_y)
    dy = y_new - y_old
    xty[0] += dy
    for j in range(p):
        xty[j + 1] += rec[i, j] * dy
    yty[0] += y_new * y_new - y_old * y_old
    rec[i, p] = y_new


@njit(cache=True, nogil=True)
def censored_refresh(rng, rec, xty, yty, beta, sigma, lo_y, hi_y, cl_idx, ncl, k):
    """Gibbs refresh of the raw y of clamped records (Tobit data augmentation, Chib 1992), in place.

    The augmented target of DA-MCMC is
        pi(beta, sigma^2, x, y) ∝ p(beta) p(sigma^2) prod_i N_p(x_i; m, Sigma) N(y_i; mu_i, sigma^2)
                                  x eta(s_dp - s(x, y)),   mu_i = beta_0 + x_i^T beta_1:,
    and s depends on y_i only through its clamped value [y_i]_lo^hi. Split the line of y_i into
    A_lo = (-inf, lo], A_in = (lo, hi) and A_hi = [hi, inf). The kernel K_i that, when y_i lies in A_lo
    (or A_hi), draws y_i' from pi(y_i | everything else, y_i in that set), and leaves y_i alone in A_in, is
    a Gibbs step on a partition: for a measurable set A, pi(y_i) restricted to A and renormalised is left
    invariant by redrawing from it, and summing over the three sets gives
    int pi(dy) K_i(y, dy') = sum_A pi(A) pi(dy' | A) = pi(dy'); K_i is reversible, and it never moves y_i
    out of its set. On A_hi, [y_i]_lo^hi = hi whatever y_i is, so s(x, y), hence eta(s_dp - s), is constant
    there and cancels in the conditional, as do the prior, x's law and every other record: what remains
    is pi(y_i | rest, y_i >= hi) ∝ N(y_i; mu_i, sigma^2) 1{y_i >= hi}, a normal truncated to [hi, inf)
    (and to (-inf, lo] on A_lo), drawn exactly by ``truncated_normal_above``. The clamps on x play no
    part (they enter t(r_i) only, which is constant here); a record whose x is clamped keeps being moved
    by the whole-record move of eq. 5, which stays.

    K_i is the identity unless record i is clamped, so composing the K_i over the clamped list is
    composing them over all i (the others are identities), and the list's order does not matter: given
    (beta, sigma, x) the refreshed y_i are independent draws. ``k < 0`` or ``k >= ncl``: every clamped
    record once. Otherwise k picks, each uniform over the current list: K = (1 / |C|) sum_{i in C} K_i
    with C the clamped set; each K_i keeps C unchanged and is reversible, so
    pi(z) K(z, z') = (1/|C|) sum pi(z) K_i(z, z') = (1/|C|) sum pi(z') K_i(z', z) = pi(z') K(z', z):
    a random-scan Gibbs step, reversible as well. The running X^T y and y^T y follow each draw.
    Returns the number of records refreshed."""
    c = ncl[0]
    if c == 0 or k == 0:
        return 0
    if k < 0 or k >= c:
        for j in range(c):
            _refresh_one(rng, rec, xty, yty, cl_idx[j], beta, sigma, lo_y, hi_y)
        return c
    for _ in range(k):
        _refresh_one(rng, rec, xty, yty, cl_idx[rng.integers(0, c)], beta, sigma, lo_y, hi_y)
    return k


@njit(cache=True, nogil=True, inline="always")
def _split_class(rec, i, centre, box, lo, hi):
    """Record i's class in the box {D : |box^{-1} (D - centre)| < 1} (an ellipsoid; ``box`` lower triangular),
    its y being rec[i, p] + X_i D (X_i = (1, x_i)): 0 inside (lo, hi) for every D in the box, 1 at or below lo
    for every D, 2 at or above hi for every D, 3 unsafe (its status could change within the box, or an x lies
    beyond its clamp). With D - centre = box v, |v| < 1, Cauchy-Schwarz gives |X_i (D - centre)| =
    |(box^T X_i) v| < b_i = |box^T X_i|, so a margin above b_i keeps the status (compared squared: no root)."""
    q = rec.shape[1]
    p = q - 1
    yc = rec[i, p] + centre[0]
    out = False
    for j in range(p):
        v = rec[i, j]
        out = out or v < lo[j] or v > hi[j]
        yc += v * centre[j + 1]
    b2 = 0.0
    for c in range(q):
        w = box[0, 0] if c == 0 else 0.0
        for a in range(max(c, 1), q):
            w += box[a, c] * rec[i, a - 1]
        b2 += w * w
    dl = yc - lo[p]
    dh = hi[p] - yc
    far_l = dl * dl > b2
    far_h = dh * dh > b2
    # without branches (a record's class is unpredictable): 0 inside, 1 below, 2 above, 3 unsafe
    inside = (dl > 0.0) & (dh > 0.0) & far_l & far_h
    below = (dl < 0.0) & far_l
    above = (dh < 0.0) & far_h
    return 3 if out else 3 - 3 * int(inside) - 2 * int(below) - int(above)


@njit(cache=True, nogil=True)
def _split_put(rec, i, cl, sg, lo, hi, sp):
    """Add (sg = 1) or take away (sg = -1) record i, of class cl (``_split_class``), in the split ``sp``. The split
    keeps sums over E, the records that are not safe inside (classes 1, 2, 3), since the safe inside ones' sums are
    the running X^T X, X^T y, y^T y less E's (``_split_stat``): so a record move between two safe inside states,
    most of them, costs nothing here. E's sums: A_E = sum X_i X_i^T (``sa``), sum X_i y0_i (``sv[0]``) and
    sum y0_i^2 (``sk[0]``), y0_i = rec[i, p] the stored y; a safe clamped record also enters its side's count
    (``sk[1]`` below, ``sk[2]`` above), sum X_i (``sv[1]``, ``sv[2]``) and the safe clamped list (``cidx``, when
    kept); an unsafe one the unsafe list (``uid``) with contiguous copies of its x and stored y (swap-remove)."""
    _, upos, uid, ux, uy, cnt, cpos, cidx, sa, sv, sk = sp
    if cl == 0:
        return
    q = rec.shape[1]
    p = q - 1
    y0 = rec[i, p]
    sk[0] += sg * y0 * y0
    sv[0, 0] += sg * y0
    sa[0, 0] += sg
    for a in range(1, q):
        xa = rec[i, a - 1]
        sv[0, a] += sg * xa * y0
        sa[0, a] += sg * xa
        sa[a, 0] = sa[0, a]
        for b in range(1, a + 1):
            sa[a, b] += sg * xa * rec[i, b - 1]
            sa[b, a] = sa[a, b]
    if cl == 3:
        if sg > 0.0:
            k = cnt[0]
            uid[k] = i
            upos[i] = k
            uy[k] = y0
            for j in range(p):
                ux[k, j] = rec[i, j]
            cnt[0] = k + 1
        else:
            k = upos[i]
            last = cnt[0] - 1
            if k != last:
                other = uid[last]
                uid[k] = other
                upos[other] = k
                uy[k] = uy[last]
                for j in range(p):
                    ux[k, j] = ux[last, j]
            upos[i] = -1
            cnt[0] = last
        return
    sk[cl] += sg
    sv[cl, 0] += sg
    for a in range(1, q):
        sv[cl, a] += sg * rec[i, a - 1]
    if cpos.size > 0:
        if sg > 0.0:
            _list_add(i, cidx, cpos, cnt, 1)
        else:
            _list_remove(i, cidx, cpos, cnt, 1)


@njit(cache=True, nogil=True)
def _split_new(n, q, keep_clamped):
    """An empty split for n records of q - 1 x's (``_split_put``); the safe clamped list only when
    ``keep_clamped`` (the refresh needs it)."""
    p = q - 1
    nc = n if keep_clamped else 0
    return (np.full(n, 3, dtype=np.int8), np.full(n, -1, dtype=np.int64), np.empty(n, dtype=np.int64),
            np.empty((n, p)), np.empty(n), np.zeros(2, dtype=np.int64),
            np.full(nc, -1, dtype=np.int64), np.empty(nc, dtype=np.int64), np.zeros((q, q)), np.zeros((3, q)),
            np.zeros(3))


@njit(cache=True, nogil=True)
def _resplit(rec, centre, box, lo, hi, sp):
    """Classify every record in the box around ``centre`` and rebuild the split's sums and lists from scratch
    (what ``_split_put`` would give record by record): O(n)."""
    cls, upos, uid, ux, uy, cnt, cpos, cidx, sa, sv, sk = sp
    n, q = rec.shape
    p = q - 1
    keep = cpos.size > 0
    big_a = np.zeros((q, q))  # fresh arrays: no aliasing with the inputs in the loop
    big_v = np.zeros((3, q))
    big_k = np.zeros(3)
    xr = np.empty(q)
    xr[0] = 1.0
    nu = 0
    nc = 0
    for i in range(n):
        c = _split_class(rec, i, centre, box, lo, hi)
        cls[i] = c
        if keep:
            cpos[i] = -1
        upos[i] = -1
        if c == 0:
            continue
        y0 = rec[i, p]
        for j in range(p):
            xr[j + 1] = rec[i, j]
        big_k[0] += y0 * y0
        for a in range(q):
            big_v[0, a] += xr[a] * y0
            for b in range(a + 1):
                big_a[a, b] += xr[a] * xr[b]
        if c == 3:
            uid[nu] = i
            upos[i] = nu
            uy[nu] = y0
            for j in range(p):
                ux[nu, j] = xr[j + 1]
            nu += 1
        else:
            big_k[c] += 1.0
            for a in range(q):
                big_v[c, a] += xr[a]
            if keep:
                cidx[nc] = i
                cpos[i] = nc
                nc += 1
    for a in range(q):
        for b in range(a + 1):
            sa[a, b] = big_a[a, b]
            sa[b, a] = big_a[a, b]
    sv[:, :] = big_v
    sk[:] = big_k
    cnt[0] = nu
    cnt[1] = nc


@njit(cache=True, nogil=True)
def _split_poly(dv, xtx, xty, yty, lo, hi, sp, poly_b, poly_a):
    """The safe inside records' sums at the current offset D = ``dv``, from the running sums less E's
    (``_split_put``): with y0 = y - X D, sum_all X y0 = X^T y - X^T X D and sum_all y0^2 = y^T y - 2 D^T X^T y +
    D^T X^T X D; inside, A = X^T X - A_E, sum X y0 and sum y0^2 less E's, and with y~0 = g y0 - k
    (g = 2 / (hi_y - lo_y), k = g lo_y + 1): poly_b = sum X y~0 = g sum X y0 - k A[:, 0] (q entries), then
    sum y~0^2 = g^2 sum y0^2 - 2 g k sum y0 + k^2 A[0, 0] (entry q); ``poly_a`` = A. O((p + 1)^2)."""
    sa, sv, sk = sp[8], sp[9], sp[10]
    q = dv.size
    p = q - 1
    g = 2.0 / (hi[p] - lo[p])
    kk = g * lo[p] + 1.0
    w = yty[0] - sk[0]
    for a in range(q):
        v = xty[a] - sv[0, a]
        xd = 0.0
        for b in range(q):
            poly_a[a, b] = xtx[a, b] - sa[a, b]
            xd += xtx[a, b] * dv[b]
        v -= xd
        w += dv[a] * (xd - 2.0 * xty[a])
        poly_b[a] = v
    poly_b[q] = g * g * w - 2.0 * g * kk * poly_b[0] + kk * kk * poly_a[0, 0]
    for a in range(q):
        poly_b[a] = g * poly_b[a] - kk * poly_a[a, 0]


@njit(cache=True, nogil=True)
def _split_stat(dv, poly_b, poly_a, lo, hi, sp, sy):
    """The y entries of s (sum y~, sum x~_j y~, sum y~^2) at offset D = ``dv``, into ``sy``: the safe records'
    polynomial (``_split_poly``'s coefficients), then the unsafe records one by one (``_unsafe_stat``). With
    u = sum_inside X_i y~_i + sum_above X_i - sum_below X_i and y~_i = y~0_i + g X_i D inside,
    u = poly_b[:q] + g A D + sv[2] - sv[1]; x~_j = g_j x_j - (g_j lo_j + 1), so sum x~_j y~ = g_j u_j -
    (g_j lo_j + 1) u_0; and sum y~^2 = poly_b[q] + 2 g poly_b[:q] D + g^2 D^T A D + sk[1] + sk[2]."""
    ux, uy, cnt, sv, sk = sp[3], sp[4], sp[5], sp[9], sp[10]
    q = dv.size
    p = q - 1
    g = 2.0 / (hi[p] - lo[p])
    u = np.empty(q)
    quad = 0.0
    lin = 0.0
    for a in range(q):
        v = 0.0
        for b in range(q):
            v += poly_a[a, b] * dv[b]
        lin += poly_b[a] * dv[a]
        quad += dv[a] * v
        u[a] = poly_b[a] + g * v + sv[2, a] - sv[1, a]
    sy[0] = u[0]
    for j in range(1, q):
        gj = 2.0 / (hi[j - 1] - lo[j - 1])
        sy[j] = gj * u[j] - (gj * lo[j - 1] + 1.0) * u[0]
    sy[q] = poly_b[q] + 2.0 * g * lin + g * g * quad + sk[1] + sk[2]
    _unsafe_stat(ux, uy, cnt[0], dv, lo, hi, sy)


@njit(cache=True, nogil=True)
def _unsafe_stat2(ux, uy, m, dv, lo, hi, g, sy):
    """``_unsafe_stat`` for p = 2, the same sums in the same order."""
    lo_y = lo[2]
    hi_y = hi[2]
    g0 = 2.0 / (hi[0] - lo[0])
    g1 = 2.0 / (hi[1] - lo[1])
    l0, h0, l1, h1 = lo[0], hi[0], lo[1], hi[1]
    d0, d1, d2 = dv[0], dv[1], dv[2]
    s0 = 0.0
    s1 = 0.0
    s2 = 0.0
    s3 = 0.0
    for i in range(m):
        x0 = ux[i, 0]
        x1 = ux[i, 1]
        y = uy[i] + d0
        y += x0 * d1
        y += x1 * d2
        y = min(max(y, lo_y), hi_y)
        yt = g * (y - lo_y) - 1.0
        s0 += yt
        s3 += yt * yt
        s1 += (g0 * (min(max(x0, l0), h0) - l0) - 1.0) * yt
        s2 += (g1 * (min(max(x1, l1), h1) - l1) - 1.0) * yt
    sy[0] += s0
    sy[1] += s1
    sy[2] += s2
    sy[3] += s3


@njit(cache=True, nogil=True)
def _unsafe_stat(ux, uy, m, dv, lo, hi, sy):
    """The y entries of s over the unsafe records ux[0:m] (x), uy[0:m] (stored y) at offset D = ``dv``, added
    into ``sy``."""
    p = ux.shape[1]
    q = p + 1
    lo_y = lo[p]
    hi_y = hi[p]
    g = 2.0 / (hi_y - lo_y)
    if p == 2:  # the common case, with scalar sums (a third faster: 2.9 against 4.5 ns a record)
        _unsafe_stat2(ux, uy, m, dv, lo, hi, g, sy)
        return
    gx = np.empty(p)
    for j in range(p):
        gx[j] = 2.0 / (hi[j] - lo[j])
    acc = np.zeros(q)  # fresh (and scalars): no aliasing with the inputs, so the sums stay in registers
    s0 = 0.0
    s2 = 0.0
    for i in range(m):
        y = uy[i] + dv[0]
        for j in range(p):
            y += ux[i, j] * dv[j + 1]
        y = min(max(y, lo_y), hi_y)  # the clamps as min / max, without branches: these records sit at a bound
        yt = g * (y - lo_y) - 1.0
        s0 += yt
        s2 += yt * yt
        for j in range(p):
            v = min(max(ux[i, j], lo[j]), hi[j])
            acc[j + 1] += (gx[j] * (v - lo[j]) - 1.0) * yt
    sy[0] += s0
    for j in range(p):
        sy[j + 1] += acc[j + 1]
    sy[q] += s2


@njit(cache=True, nogil=True)
def _stat_at(rec, dv, lo, hi, sy):
    """The y entries of s over every record at offset D = ``dv`` (a move outside the box): O(n)."""
    n, q = rec.shape
    p = q - 1
    g = 2.0 / (hi[p] - lo[p])
    acc = np.zeros(q + 1)
    xt = np.empty(p)
    for i in range(n):
        y = rec[i, p] + dv[0]
        for j in range(p):
            v = rec[i, j]
            y += v * dv[j + 1]
            v = min(max(v, lo[j]), hi[j])
            xt[j] = 2.0 / (hi[j] - lo[j]) * (v - lo[j]) - 1.0
        y = min(max(y, lo[p]), hi[p])
        yt = g * (y - lo[p]) - 1.0
        acc[0] += yt
        for j in range(p):
            acc[j + 1] += xt[j] * yt
        acc[q] += yt * yt
    for a in range(q + 1):
        sy[a] = acc[a]


@njit(cache=True, nogil=True, inline="always")
def _box_norm(box, w):
    """|box^{-1} w| (``box`` lower triangular), by forward substitution; overwrites w with box^{-1} w."""
    q = w.size
    tot = 0.0
    for a in range(q):
        v = w[a]
        for b in range(a):
            v -= box[a, b] * w[b]
        v /= box[a, a]
        w[a] = v
        tot += v * v
    return math.sqrt(tot)


@njit(cache=True, nogil=True)
def shift_moves(rng, rec, s, xtx, xty, yty, beta, prior_sd, lo, hi, s_dp, kernel, scale, shift_l, k, dv, centre,
                box, mid, sp, ind_means=NO_IND_MEANS, ind_chols=NO_IND_CHOLS, ind_log_w=NO_IND_LOG_W, nu=5.0,
                p_ind=0.0, da_mean=NO_MID, da_chol=NO_BOX):
    r"""k Metropolis moves of beta together with every record's y along the regression:
    (beta, y_i) -> (beta + delta, y_i + delta_0 + x_i^T delta_1:) for all i, delta = L z, z ~ N(0, I).
    With probability ``p_ind`` (drawn first, so the choice does not depend on the state; no draw at all when
    ``p_ind`` is 0) a move proposes instead beta' from q, a mixture of t laws (nu degrees of freedom, locations
    ``ind_means``, scales ``ind_chols``, log weights ``ind_log_w`` net of log |det|), and delta = beta' - beta:
    in the coordinates (beta, e) with e = y - X beta (a translation, Jacobian 1) this is an independence
    Metropolis-Hastings step on beta with e held, accepted with the ratio of targets times q(beta) / q(beta').
    With ``da_mean`` and ``da_chol`` given, that step is a delayed acceptance one (Christen & Fox 2005): first
    accepted with min(1, r~), r~ = pi~(beta') q(beta) / (pi~(beta) q(beta')) for the normal surrogate
    pi~ = N(da_mean, da_chol da_chol^T), and only then, with s' computed, with min(1, r / r~), r the exact ratio.
    Its acceptance probability a(x, x') = min(1, r~) min(1, r / r~) satisfies
    pi(x) q(x') a(x, x') = pi(x') q(x) a(x', x) (with r(x', x) = 1 / r(x, x') and the same for r~, both sides
    are pi(x) q(x') min(1, r~) min(1, r / r~)), so the step stays reversible for the exact target whatever the
    surrogate; the surrogate only spares the pass over the records for proposals it already rejects (most of
    those far from the posterior, which would fall outside the box below).
    The records' y are y_i = rec[i, p] + X_i D with the offset D = ``dv`` (``regression_window_chain``): a move
    adds delta to D and writes no record. Returns the number accepted.

    The move of the non-centred parametrisation (residuals e_i = (y_i - beta_0 - x_i^T beta_1:) / sigma
    held fixed while beta moves), interleaved with the conjugate draw of beta | x, y that holds the raw
    records fixed: the interweaving of Yu & Meng (2011), here as a Metropolis step on the joint target
        pi(beta, x, y) ∝ p(beta) prod_i N_p(x_i; m, Sigma) N(y_i; mu_i(beta), sigma^2) eta(s_dp - s(x, y)),
    mu_i(beta) = beta_0 + x_i^T beta_1:. For a fixed delta the map g_delta(beta, x, y) = (beta + delta, x,
    y + X delta) (X = (1, x)) is a translation, so its Jacobian is 1, and g_delta^{-1} = g_{-delta}; delta's
    law N(0, L L^T) is symmetric, so the proposal is symmetric and the Metropolis ratio is the ratio of
    targets. y_i + X_i delta - mu_i(beta + delta) = y_i - mu_i(beta): every N(y_i; ..) factor is unchanged,
    as is x's law, so
        log r = log p(beta + delta) - log p(beta) + log eta(s_dp - s') - log eta(s_dp - s),
    with s' the statistic of the moved records. x is not moved, so only the y entries of s change:
    s'[j] = sum_i x~_ij y~'_i (x~_i0 = 1) and s'[p + 1] = sum_i y~'_i^2; the raw X^T y and y^T y follow in
    closed form, X^T y' = X^T y + X^T X delta and y'^T y' = y^T y + 2 delta^T X^T y + delta^T X^T X delta.

    Why: the conjugate draw moves beta only as far as the records let it (sd(beta | x, y)), and the
    records move only as far as the noise lets s move. With the residuals held instead, beta moves
    across the noise window of s: where the noise is wide next to the statistic's sampling spread,
    beta | e, s_dp is nearly the posterior itself, which the conjugate step alone reaches only after
    about Var(beta | s_dp) / Var(beta | x) sweeps.

    Cost: s' without a pass over the records. The split ``sp`` (``_split_class``, kept by the chain across
    iterations) holds, for the box |box^{-1} (D - centre)| < 1, the records whose status (below lo, inside,
    above hi) no D in the box can change -- their terms are a fixed polynomial in D (``_split_stat``: a
    constant -1 or +1 for y~ when clamped, y~_i = y~0_i + g X_i D inside) -- and the unsafe rest, evaluated one
    by one from contiguous copies. A proposal in the box costs O((p + 1)^2) plus one pass over the unsafe
    records; one outside it is evaluated over all n records (``_stat_at``), and when it is accepted the
    records are split again around the new D (``_resplit``; centred where D will be when beta is at ``mid``,
    the posterior's centre, D + mid - beta, if that keeps D in the box; else at D). Either way s' is the
    records' own statistic, so the box only sets the cost."""
    q = rec.shape[1]
    tau2 = prior_sd * prior_sd
    delta = np.empty(q)
    dnew = np.empty(q)
    zx = np.empty(q)
    sy = np.empty(q + 1)
    nacc = 0
    w = np.empty(q)
    bprop = np.empty(q)
    cum = np.empty(ind_log_w.size)
    tot = t_mixture_weights(ind_log_w, ind_chols, cum)
    poly_b = np.empty(q + 1)
    poly_a = np.empty((q, q))
    _split_poly(dv, xtx, xty, yty, lo, hi, sp, poly_b, poly_a)
    for _ in range(k):
        ind = p_ind > 0.0 and rng.random() < p_ind
        for a in range(q):
            zx[a] = rng.standard_normal()
        lq = 0.0
        l1 = 0.0  # the delayed acceptance's first-stage log ratio (0: none)
        if ind:  # beta' ~ q
            t_mixture_point(rng, ind_means, ind_chols, cum, tot, nu, zx, bprop)
            for a in range(q):
                delta[a] = bprop[a] - beta[a]
            lq = (log_t_mixture(beta, ind_means, ind_chols, ind_log_w, nu, w)
                  - log_t_mixture(bprop, ind_means, ind_chols, ind_log_w, nu, w))
            if da_mean.size == q:
                for a in range(q):
                    w[a] = beta[a] - da_mean[a]
                l1 = _box_norm(da_chol, w) ** 2
                for a in range(q):
                    w[a] = bprop[a] - da_mean[a]
                l1 = lq + 0.5 * (l1 - _box_norm(da_chol, w) ** 2)
                if not (l1 >= 0.0 or rng.random() < math.exp(l1)):
                    continue
        else:
            for a in range(q):
                v = 0.0
                for b in range(a + 1):
                    v += shift_l[a, b] * zx[b]
                delta[a] = v
        for a in range(q):
            dnew[a] = dv[a] + delta[a]
            w[a] = dnew[a] - centre[a]
        inbox = _box_norm(box, w) < 1.0
        if inbox:
            _split_stat(dnew, poly_b, poly_a, lo, hi, sp, sy)
        else:
            _stat_at(rec, dnew, lo, hi, sy)
        lr = lq
        for a in range(q):
            lr -= ((beta[a] + delta[a]) ** 2 - beta[a] ** 2) / (2.0 * tau2)
        for a in range(q + 1):
            lr += log_noise(kernel, scale, s_dp[a] - sy[a]) - log_noise(kernel, scale, s_dp[a] - s[a])
        lr -= l1
        if lr >= 0.0 or rng.random() < math.exp(lr):
            nacc += 1
            for a in range(q + 1):
                s[a] = sy[a]
            quad = 0.0
            lin = 0.0
            for a in range(q):
                lin += delta[a] * xty[a]
                for b in range(q):
                    quad += delta[a] * xtx[a, b] * delta[b]
            yty[0] += 2.0 * lin + quad
            for a in range(q):
                v = 0.0
                for b in range(q):
                    v += xtx[a, b] * delta[b]
                xty[a] += v
            for a in range(q):
                beta[a] += delta[a]
                dv[a] = dnew[a]
            if not inbox:
                near = mid.size == q
                if near:
                    for a in range(q):
                        w[a] = mid[a] - beta[a]
                    near = _box_norm(box, w) < 0.5
                for a in range(q):
                    centre[a] = dv[a] + (mid[a] - beta[a] if near else 0.0)
                _resplit(rec, centre, box, lo, hi, sp)
            _split_poly(dv, xtx, xty, yty, lo, hi, sp, poly_b, poly_a)
    return nacc


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
def _sweep_split(rng, rec, s, xtx, xty, yty, beta, chol, x_mean, sigma, lo, hi, s_dp, kernel, scale, start, m, dv,
                 centre, box, sp):
    """``regression_window_sweep`` on records whose y is rec[i, p] + X_i D (D = ``dv``, the shift moves'
    offset): the same record moves (eq. 5) on the records as they are; an accepted record is stored as
    y - X D and reclassified in the split ``sp`` (O((p + 1)^2)). Returns (sum of alpha, number accepted)."""
    n, q = rec.shape
    p = q - 1
    z = np.empty(q + 1)
    t_old = np.empty(s.size)
    t_new = np.empty(s.size)
    prop = np.empty(q)
    cur = np.empty(q)
    e = np.empty(p)
    cls = sp[0]
    asum = 0.0
    nacc = 0
    fast, inv = plain_inverse(kernel, scale)
    for k_rec in range(m):
        i = start + k_rec
        if i >= n:
            i -= n
        y = rec[i, p] + dv[0]
        for j in range(p):
            cur[j] = rec[i, j]
            y += rec[i, j] * dv[j + 1]
        cur[p] = y
        al = _regression_record_move(rng, cur, beta, chol, x_mean, sigma, lo, hi, s, s_dp, fast, inv,
                                     kernel, scale, e, prop, z, t_old, t_new)
        asum += al
        if al >= 1.0 or rng.random() < al:
            _record_sums(s, xtx, xty, yty, t_old, t_new, cur, prop)
            if cls[i] != 0:  # a safe inside record is in none of the split's sums or lists
                _split_put(rec, i, cls[i], -1.0, lo, hi, sp)
            y = prop[p] - dv[0]
            for j in range(p):
                rec[i, j] = prop[j]
                y -= prop[j] * dv[j + 1]
            rec[i, p] = y
            c = _split_class(rec, i, centre, box, lo, hi)
            cls[i] = c
            if c != 0:
                _split_put(rec, i, c, 1.0, lo, hi, sp)
            nacc += 1
    return asum, nacc


@njit(cache=True, nogil=True)
def _refresh_split(rng, rec, xty, yty, beta, sigma, lo, hi, dv, centre, box, sp, k, ids):
    """``censored_refresh`` on records whose y is rec[i, p] + X_i D: the clamped set C is the split's safe
    clamped list followed by the unsafe records clamped at D (one pass over the unsafe list). The records to
    refresh (all of C when k < 0 or k >= |C|, else k uniform picks from C) are chosen before any is redrawn:
    a refresh keeps every record on its side of the clamp, so C, and the picks' law, do not change on the
    way. Each redrawn record is stored as y - X D and reclassified. Returns the number refreshed."""
    cls, upos, uid, ux, uy, cnt, _, cidx, _, sv, sk = sp
    q = rec.shape[1]
    p = q - 1
    lo_y = lo[p]
    hi_y = hi[p]
    ns = cnt[1]
    for j in range(ns):
        ids[j] = cidx[j]
    c = ns
    for r in range(cnt[0]):
        y = uy[r] + dv[0]
        for j in range(p):
            y += ux[r, j] * dv[j + 1]
        if y <= lo_y or y >= hi_y:
            ids[c] = uid[r]
            c += 1
    if c == 0 or k == 0:
        return 0
    if 0 < k < c:
        for j in range(k):  # the picks, after C in ids (size 2n): all drawn before any record is redrawn
            ids[c + j] = ids[rng.integers(0, c)]
        first, last = c, c + k
    else:
        first, last = 0, c
    for r in range(first, last):
        i = ids[r]
        y_old = rec[i, p] + dv[0]  # summed in the order of the unsafe pass above, so the side agrees with it
        mu = beta[0]
        for j in range(p):
            y_old += rec[i, j] * dv[j + 1]
            mu += beta[j + 1] * rec[i, j]
        y_new = _tobit_draw(rng, y_old, mu, sigma, lo_y, hi_y)
        dy = y_new - y_old
        xty[0] += dy
        for j in range(p):
            xty[j + 1] += rec[i, j] * dy
        yty[0] += y_new * y_new - y_old * y_old
        y0_old = rec[i, p]
        y = y_new - dv[0]
        for j in range(p):
            y -= rec[i, j] * dv[j + 1]
        rec[i, p] = y
        cl = _split_class(rec, i, centre, box, lo, hi)
        c_old = cls[i]
        if cl == c_old:  # same class (most often): only E's y sums move, and an unsafe record's copy of its y
            d0 = y - y0_old
            sk[0] += y * y - y0_old * y0_old
            sv[0, 0] += d0
            for j in range(p):
                sv[0, j + 1] += rec[i, j] * d0
            if cl == 3:
                uy[upos[i]] = y
        else:
            rec[i, p] = y0_old
            _split_put(rec, i, c_old, -1.0, lo, hi, sp)
            rec[i, p] = y
            cls[i] = cl
            _split_put(rec, i, cl, 1.0, lo, hi, sp)
    return last - first


@njit(cache=True, nogil=True)
def _shift_chain(rng, rec, s, xtx, xty, yty, sig, chol, x_mean, prior_sd, sig_a, sig_b, lo, hi, s_dp, kernel, scale,
                 start, m, n_iter, out_theta, out_acc, out_frac, refresh, shifts, shift_l, box, mid, ind_means,
                 ind_chols, ind_log_w, nu, p_ind, da_mean, da_chol):
    """``regression_window_chain`` with shift moves: the same cycle, on records whose y is rec[i, p] + X_i D.
    The shift moves add to the offset D and write no record; the split of the records for the box around
    ``centre`` (``shift_moves``) is built once per call and kept by every step that changes a record (the
    sweep and the refresh reclassify it), and rebuilt only when an accepted shift leaves the box. So no step
    of an iteration costs O(n) but a move outside the box. At the call's end every y is written as
    rec[i, p] + X_i D, and the caller sees the records as they are."""
    statistics(rec, lo, hi, s, xtx, xty, yty)
    n, q = rec.shape
    p = q - 1
    beta = np.empty(q)
    dv = np.zeros(q)
    centre = np.zeros(q)
    sp = _split_new(n, q, refresh != 0)
    _resplit(rec, centre, box, lo, hi, sp)
    ids = np.empty(2 * n if refresh != 0 else 0, dtype=np.int64)
    for t in range(n_iter):
        beta_draw(rng, xtx, xty, sig[0], prior_sd, beta)
        if sig_a > 0.0:
            s2 = sigma2_draw(rng, xtx, xty, yty[0], beta, n, sig_a, sig_b)
            sig[0] = math.sqrt(s2)
            out_theta[t, q] = s2
        if refresh != 0:
            _refresh_split(rng, rec, xty, yty, beta, sig[0], lo, hi, dv, centre, box, sp, refresh, ids)
        shift_moves(rng, rec, s, xtx, xty, yty, beta, prior_sd, lo, hi, s_dp, kernel, scale, shift_l, shifts, dv,
                    centre, box, mid, sp, ind_means, ind_chols, ind_log_w, nu, p_ind, da_mean, da_chol)
        for j in range(q):
            out_theta[t, j] = beta[j]
        asum, nacc = _sweep_split(rng, rec, s, xtx, xty, yty, beta, chol, x_mean, sig[0], lo, hi, s_dp, kernel,
                                  scale, start, m, dv, centre, box, sp)
        start += m
        while start >= n:
            start -= n
        out_acc[t] = asum / m
        out_frac[t] = nacc / m
    for i in range(n):
        y = rec[i, p] + dv[0]
        for j in range(p):
            y += rec[i, j] * dv[j + 1]
        rec[i, p] = y
    return start


def regression_chain(rng, rec, s, xtx, xty, yty, sig, chol, x_mean, prior_sd, sig_a, sig_b, lo, hi, s_dp, kernel,
                     scale, n_iter, out_theta, out_acc, out_frac, refresh=0, shifts=0, shift_l=NO_SHIFT,
                     ind_means=NO_IND_MEANS, ind_chols=NO_IND_CHOLS, ind_log_w=NO_IND_LOG_W, nu=5.0, p_ind=0.0,
                     shift_box=NO_BOX, shift_mid=NO_MID, da_mean=NO_MID, da_chol=NO_BOX):
    """``n_iter`` iterations of Algorithm 1: beta | sigma, x, y (conjugate normal); with an unknown
    sigma^2 (``sig_a > 0``: InvGamma(sig_a, sig_b) prior) sigma^2 | beta, x, y (conjugate inverse gamma,
    recorded as the last column of ``out_theta``); then the raw y of ``refresh`` clamped records
    (``censored_refresh``: -1 all of them, 0 none); then ``shifts`` moves of beta with the records' y
    along the regression (``shift_moves``, proposal delta = ``shift_l`` z; 0: none); then a record sweep
    at (beta, sigma). ``sig[0]`` holds the current sigma between calls."""
    regression_window_chain(rng, rec, s, xtx, xty, yty, sig, chol, x_mean, prior_sd, sig_a, sig_b, lo, hi, s_dp,
                            kernel, scale, 0, rec.shape[0], n_iter, out_theta, out_acc, out_frac, refresh, shifts,
                            shift_l, ind_means, ind_chols, ind_log_w, nu, p_ind, shift_box, shift_mid, da_mean, da_chol)


def regression_window_chain(rng, rec, s, xtx, xty, yty, sig, chol, x_mean, prior_sd, sig_a, sig_b, lo, hi, s_dp,
                            kernel, scale, start, m, n_iter, out_theta, out_acc, out_frac, refresh=0, shifts=0,
                            shift_l=NO_SHIFT, ind_means=NO_IND_MEANS, ind_chols=NO_IND_CHOLS, ind_log_w=NO_IND_LOG_W,
                            nu=5.0, p_ind=0.0, shift_box=NO_BOX, shift_mid=NO_MID, da_mean=NO_MID, da_chol=NO_BOX):
    """``regression_chain`` with step 2 on m records per iteration instead of all n: the window
    start..start + m - 1 (mod n), moved on by m after each iteration, so every record is visited
    once per n / m iterations (a partial systematic scan). Returns the next window's start.

    Exactness: each record move leaves p(beta, x | s_dp) invariant (it is a Metropolis step on
    p(x_i | x_-i, beta, s_dp) with the model as proposal, eq. 5), and so does the Gibbs draw of beta
    (and sigma^2), and so does the refresh of clamped records' raw y (``censored_refresh``); a
    composition of invariant kernels is invariant, whichever records a window holds.
    The window order is fixed in advance (it does not depend on the state), and every record is
    visited, so the chain is the same kind of deterministic-scan Gibbs sampler as Algorithm 1, with
    beta refreshed m / n times as often. ``acceptance_rate`` and ``out_frac`` are means over the window.

    ``refresh`` clamped records per iteration (-1: all; 0: none, the chain of Algorithm 1 alone). The
    clamped list is rebuilt from the records at every call (O(n), with the statistics) and then kept
    by the record moves; the refresh uses the current sigma, so it is exact with sigma^2 a parameter.

    ``shifts`` moves of ``shift_moves`` per iteration after the refresh (a Metropolis step on the same joint
    target, so the composition stays invariant); the beta recorded is then the one after them, the beta
    the record sweep uses (any fixed point of the cycle reads a draw of the stationary law). They run in
    ``_shift_chain``, on the ellipsoid box {D : |shift_box^{-1} (D - centre)| < 1} (default shift_box =
    SHIFT_REACH x ``shift_l``) re-centred, when a move leaves it, by ``shift_mid`` (the posterior's centre;
    empty: none); ``da_mean``, ``da_chol``: the independence proposals' delayed acceptance surrogate (empty:
    none).

    A Python function that picks one of two compiled chains (``_window_chain``, ``_shift_chain``), so that a
    run compiles only the one it uses (numba compiles every branch of a compiled function)."""
    if shifts > 0:
        q = xty.size
        box = shift_box if shift_box.shape[0] == q else np.ascontiguousarray(SHIFT_REACH * shift_l)
        return _shift_chain(rng, rec, s, xtx, xty, yty, sig, chol, x_mean, prior_sd, sig_a, sig_b, lo, hi, s_dp,
                            kernel, scale, start, m, n_iter, out_theta, out_acc, out_frac, refresh, shifts, shift_l,
                            box, shift_mid, ind_means, ind_chols, ind_log_w, nu, p_ind, da_mean, da_chol)
    return _window_chain(rng, rec, s, xtx, xty, yty, sig, chol, x_mean, prior_sd, sig_a, sig_b, lo, hi, s_dp, kernel,
                         scale, start, m, n_iter, out_theta, out_acc, out_frac, refresh)


@njit(cache=True, nogil=True)
def _window_chain(rng, rec, s, xtx, xty, yty, sig, chol, x_mean, prior_sd, sig_a, sig_b, lo, hi, s_dp, kernel, scale,
                  start, m, n_iter, out_theta, out_acc, out_frac, refresh):
    """``regression_window_chain`` without shift moves (Algorithm 1 on a window, with the refresh)."""
    statistics(rec, lo, hi, s, xtx, xty, yty)
    n = rec.shape[0]
    q = xty.size
    p = q - 1
    beta = np.empty(q)
    if refresh != 0:
        cl_idx = np.empty(n, dtype=np.int64)
        cl_pos = np.empty(n, dtype=np.int64)
        ncl = np.zeros(1, dtype=np.int64)
        clamped_list(rec, lo[p], hi[p], cl_idx, cl_pos, ncl)
    else:
        cl_idx = np.empty(0, dtype=np.int64)
        cl_pos = np.empty(0, dtype=np.int64)
        ncl = np.empty(0, dtype=np.int64)
    for t in range(n_iter):
        beta_draw(rng, xtx, xty, sig[0], prior_sd, beta)
        if sig_a > 0.0:
            s2 = sigma2_draw(rng, xtx, xty, yty[0], beta, n, sig_a, sig_b)
            sig[0] = math.sqrt(s2)
            out_theta[t, q] = s2
        if refresh != 0:
            censored_refresh(rng, rec, xty, yty, beta, sig[0], lo[p], hi[p], cl_idx, ncl, refresh)
        for j in range(q):
            out_theta[t, j] = beta[j]
        asum, nacc = regression_window_sweep_listed(rng, rec, s, xtx, xty, yty, beta, chol, x_mean, sig[0], lo, hi,
                                                    s_dp, kernel, scale, start, m, cl_idx, cl_pos, ncl)
        start += m
        while start >= n:
            start -= n
        out_acc[t] = asum / m
        out_frac[t] = nacc / m
    return start
