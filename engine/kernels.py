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
:mod:`engine.rj_kernels` run the very same record sweep.

``loglinear_chain`` runs the same algorithm for the naive-Bayes log-linear model (records
(y, x_1..x_K), statistic the K two-way tables): a record move changes two cells of each table, so
the Metropolis ratio costs O(K) per record.

Noise kernels (``kernel``): 0 = log eta(r) = -|r|/scale (Laplace, discrete Laplace),
1 = -r^2/(2 scale^2) (Gaussian, discrete Gaussian); normalising constants cancel in alpha.
``mode`` 0 = additive noise on the statistic, 1 = per-record randomized response, where the
record's reported category z_i enters through log Q[x, z_i].
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = ["bernoulli_chain", "categorical_chain", "poisson_chain", "normal_chain", "loglinear_chain", "log_noise",
           "bernoulli_sweep", "poisson_sweep", "normal_sweep", "normal_sums", "abc_conjugate_batch", "alias_table",
           "abc_beta_binomial_batch", "cholesky_into"]


@njit(cache=True, nogil=True)
def log_noise(kernel, scale, r):
    if kernel == 0:
        return -abs(r) / scale
    return -0.5 * (r / scale) * (r / scale)


@njit(cache=True, nogil=True)
def cdf_draw(rng, cdf, start, k):
    """A category 0..k-1 drawn with probabilities proportional to the increments of the running sums
    ``cdf[start:start + k]`` (inverse CDF by a linear scan: k is small)."""
    u = rng.random() * cdf[start + k - 1]
    j = 0
    while j < k - 1 and u >= cdf[start + j]:
        j += 1
    return j


@njit(cache=True, nogil=True)
def cholesky_into(a, out):
    """The lower Cholesky factor L of a (L L^T = a) into the lower triangle of ``out`` (its upper
    triangle is left alone); False, with ``out`` partly written, when a is not positive definite."""
    k = a.shape[0]
    for j in range(k):
        d = a[j, j]
        for m in range(j):
            d -= out[j, m] * out[j, m]
        if not d > 0.0:
            return False
        out[j, j] = math.sqrt(d)
        for i in range(j + 1, k):
            v = a[i, j]
            for m in range(j):
                v -= out[i, m] * out[j, m]
            out[i, j] = v / out[j, j]
    return True


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
def record_move(rng, cur, s, ti, tp, s_dp, kernel, scale):
    """Metropolis step of one record whose statistic contribution would change from ti to tp (the
    proposal is the model draw, so only the noise density ratio remains; Ju et al. Alg. 1 step 2).
    ``cur`` is log eta(s_dp - s). Returns (alpha, log eta after the move, accepted); a uniform is
    drawn only when alpha < 1."""
    if tp == ti:
        return 1.0, cur, True
    new = log_noise(kernel, scale, s_dp - (s - ti + tp))
    lr = new - cur
    al = 1.0 if lr >= 0.0 else math.exp(lr)
    if al >= 1.0:
        return al, new, True
    return al, new, rng.random() < al


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
