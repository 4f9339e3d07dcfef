r"""Compiled pieces of the augmented pseudo-marginal sampler of the naive-Bayes log-linear model
(:mod:`engine.methods.loglinear_pm`): everything costs O(cells), never O(n).

The statistic and its law given theta = (pi, p). The released statistic s is the K class-by-level
tables n^k_{ij}; their row sums are the class totals c_i (the same for every k). Given theta,

    c ~ Multinomial(n, pi),    row (k, i) = (n^k_{i1} .. n^k_{iJ_k}) | c ~ Multinomial(c_i, p[k][i]),

independently over (k, i) (given the classes the K features of a record are independent). So a table
is drawn with I + K I multinomials whatever n is. Multinomials are sequential binomials.

Record picture (used to build every move below). Give record r a class uniform U_r and feature
uniforms V_rk, all i.i.d. U(0, 1); its class is the interval of the partition of [0, 1) by pi's
running sums that holds U_r ("inverse CDF"), its level in feature k the interval of p[k][class] that
holds V_rk. s = T(U, V; theta) is then exactly a draw from p(s | theta). Given s alone, the records
are exchangeable: the records of class i hold uniforms that are i.i.d. uniform on class i's interval,
and, independently over k, the multiset of their levels in feature k is row (k, i) in a uniformly
random order.

Moves (each keeps p(s | theta) or the joint posterior invariant; the derivations of the Metropolis
ratios are in :mod:`engine.methods.loglinear_pm`):

* ``coupled_move`` (theta -> theta*, s -> s*): re-read the *same* uniforms at theta*. Given s, the
  number of class-i records whose U falls in class i' of pi* is N_{i.} ~ Multinomial(c_i, O^pi_{i.} /
  pi_i), O^pi_{ii'} = |interval_i(pi) ∩ interval_i'(pi*)|. Which records those are is a uniformly
  random subset, so their levels in table k are a multivariate hypergeometric draw of N_{ii'} from
  row (k, i), independently over k. A record at level j of class i moving to class i' lands at level
  j' with probability O^{k}_{jj'} / p[k][i][j], the overlap of interval j of p[k][i] with interval j'
  of p*[k][i']. The law of the pair (s, s*) is that of (T(U, V; theta), T(U, V; theta*)), which is
  symmetric in (theta, s) <-> (theta*, s*):
      p(s | theta) R_{theta->theta*}(s* | s) = p(s* | theta*) R_{theta*->theta}(s | s*).      (C)
  Work: O(I^2 + K I^2 J^2) draws. When theta* = theta, s* = s.
* ``refresh_move`` (theta fixed): remove m uniformly chosen records (class counts a multivariate
  hypergeometric draw of m from c, their levels per table a multivariate hypergeometric draw from
  each row) and add m fresh ones (Multinomial(m, pi), then Multinomial per row). Replacing a random
  subset of i.i.d. records by fresh i.i.d. records is reversible for p(s | theta).            (R)
* ``gibbs_theta``: pi | s ~ Dirichlet(alpha + c), p[k][i] | s ~ Dirichlet(alpha + row (k, i))
  (Assumption 1): log-probabilities from log-gamma draws, so no probability underflows to 0.

Exact hypergeometric draws (numba's Generator has none): inversion from the mode, visiting the
support in the fixed order mode, mode + 1, mode - 1, mode + 2, ... with the pmf carried by its
ratio recursion; expected work O(sd), at most O(sqrt(n)).

Parameters are stored as log-probabilities ``lp`` flattened like the model's parameters: pi[0..I-1]
then p[k][i][j] at I + off_k + i J_k + j (the stat cell of (k, i, j) is off_k + i J_k + j). Noise
kernels as in :func:`engine.kernels.shared.log_noise`.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from .shared import log_eta

__all__ = ["hypergeometric", "mv_hypergeometric", "multinomial", "overlap_row", "sample_tables", "log_eta",
           "gibbs_theta", "coupled_move", "refresh_move", "block_move", "loglinear_pm_chain"]


@njit(cache=True, nogil=True)
def _log_comb(n, k):
    return math.lgamma(n + 1.0) - math.lgamma(k + 1.0) - math.lgamma(n - k + 1.0)


@njit(cache=True, nogil=True)
def hypergeometric(rng, good, bad, m):
    """Number of good items in m drawn without replacement from good + bad (exact, by inversion from
    the mode in the order mode, mode+1, mode-1, mode+2, ...)."""
    total = good + bad
    if m <= 0 or good <= 0:
        return 0
    if bad <= 0:
        return m
    if m >= total:
        return good
    if m > total // 2:  # the complement sample is smaller
        return good - hypergeometric(rng, good, bad, total - m)
    lo = max(0, m - bad)
    hi = min(m, good)
    mode = int(((m + 1.0) * (good + 1.0)) / (total + 2.0))
    mode = min(max(mode, lo), hi)
    p_mode = math.exp(_log_comb(good, mode) + _log_comb(bad, m - mode) - _log_comb(total, m))
    u = rng.random()
    acc = p_mode
    if u < acc:
        return mode
    up, down = mode, mode
    p_up, p_down = p_mode, p_mode
    while True:
        moved = False
        if up < hi:
            x = up
            p_up *= (good - x) * (m - x) / ((x + 1.0) * (bad - m + x + 1.0))
            up += 1
            acc += p_up
            moved = True
            if u < acc:
                return up
        if down > lo:
            x = down
            p_down *= x * (bad - m + x) / ((good - x + 1.0) * (m - x + 1.0))
            down -= 1
            acc += p_down
            moved = True
            if u < acc:
                return down
        if not moved:  # rounding left u above the last partial sum: the support's last point
            return up if p_up >= p_down else down


@njit(cache=True, nogil=True)
def mv_hypergeometric(rng, counts, start, size, m, out, out_start):
    """m items drawn without replacement from the urn ``counts[start:start+size]`` (sequential
    univariate draws); the drawn counts go to ``out[out_start:out_start+size]``."""
    left = 0
    for j in range(size):
        left += counts[start + j]
    need = m
    for j in range(size):
        cj = counts[start + j]
        left -= cj
        if need <= 0:
            x = 0
        elif j == size - 1:
            x = need
        else:
            x = hypergeometric(rng, cj, left, need)
        out[out_start + j] = x
        need -= x


@njit(cache=True, nogil=True)
def multinomial(rng, n, p, start, size, out, out_start, add):
    """Multinomial(n, p[start:start+size]) by sequential binomials; ``add`` adds to ``out`` instead
    of writing. p need not sum to one exactly (its sum is the total)."""
    rest = 0.0
    for j in range(size):
        rest += p[start + j]
    left = n
    for j in range(size):
        if left <= 0:
            x = 0
        elif j == size - 1:
            x = left
        else:
            q = p[start + j] / rest if rest > 0.0 else 1.0
            if q >= 1.0:
                x = left
            elif q <= 0.0:
                x = 0
            else:
                x = rng.binomial(left, q)
            rest -= p[start + j]
        if add:
            out[out_start + j] += x
        else:
            out[out_start + j] = x
        left -= x


@njit(cache=True, nogil=True)
def overlap_row(a, a0, b, b0, size, j, out):
    """out[j'] = |interval j of a ∩ interval j' of b| (partitions of [0, 1) by running sums of the
    probability vectors a[a0:a0+size], b[b0:b0+size]): the transition weights from level j."""
    lo_a = 0.0
    for t in range(j):
        lo_a += a[a0 + t]
    hi_a = lo_a + a[a0 + j]
    if j == size - 1:
        hi_a = max(hi_a, 1.0)
    lo_b = 0.0
    for t in range(size):
        hi_b = lo_b + b[b0 + t]
        if t == size - 1:
            hi_b = max(hi_b, 1.0)
        out[t] = max(0.0, min(hi_a, hi_b) - max(lo_a, lo_b))
        lo_b = hi_b


@njit(cache=True, nogil=True)
def sample_tables(rng, n, prob, levels, offsets, c, s):
    """(c, s) ~ p(s | theta): c ~ Mult(n, pi), row (k, i) ~ Mult(c_i, p[k][i]); ``prob`` = theta."""
    big_i = c.size
    multinomial(rng, n, prob, 0, big_i, c, 0, False)
    for k in range(levels.size):
        jk = levels[k]
        for i in range(big_i):
            o = offsets[k] + i * jk
            multinomial(rng, c[i], prob, big_i + o, jk, s, o, False)


@njit(cache=True, nogil=True)
def _log_gamma_draw(rng, a):
    """log of a Gamma(a, 1) draw, finite for every a > 0 (a < 1: G = G_{a+1} U^{1/a})."""
    if a >= 1.0:
        return math.log(rng.gamma(a, 1.0))
    return math.log(rng.gamma(a + 1.0, 1.0)) + math.log(rng.random() + 1e-300) / a


@njit(cache=True, nogil=True)
def _log_dirichlet(rng, alpha, counts, c0, size, lp, l0):
    m = -np.inf
    for j in range(size):
        v = _log_gamma_draw(rng, alpha + counts[c0 + j])
        lp[l0 + j] = v
        if v > m:
            m = v
    tot = 0.0
    for j in range(size):
        tot += math.exp(lp[l0 + j] - m)
    lt = m + math.log(tot)
    for j in range(size):
        lp[l0 + j] -= lt


@njit(cache=True, nogil=True)
def gibbs_theta(rng, alpha, levels, offsets, c, s, lp):
    """theta | s from the conjugate posterior (log-probabilities into ``lp``)."""
    big_i = c.size
    _log_dirichlet(rng, alpha, c, 0, big_i, lp, 0)
    for k in range(levels.size):
        jk = levels[k]
        for i in range(big_i):
            o = offsets[k] + i * jk
            _log_dirichlet(rng, alpha, s, o, jk, lp, big_i + o)


@njit(cache=True, nogil=True)
def coupled_move(rng, levels, offsets, prob, prob_new, c, s, c_new, s_new, trans, sub, w):
    """s* ~ R_{theta -> theta*}(. | s): the same records' uniforms re-read at theta* (module docstring).
    ``trans`` (I x I), ``sub`` (I x max J) and ``w`` (max(I, J)) are work arrays."""
    big_i = c.size
    for i in range(big_i):
        c_new[i] = 0
    for i in range(big_i):
        if c[i] == 0:
            for i2 in range(big_i):
                trans[i, i2] = 0
            continue
        overlap_row(prob, 0, prob_new, 0, big_i, i, w)
        multinomial(rng, c[i], w, 0, big_i, trans[i], 0, False)
        for i2 in range(big_i):
            c_new[i2] += trans[i, i2]
    for t in range(s_new.size):
        s_new[t] = 0
    for k in range(levels.size):
        jk = levels[k]
        for i in range(big_i):
            if c[i] == 0:
                continue
            o = offsets[k] + i * jk
            # split row (k, i) among the destination classes: sequential multivariate hypergeometric
            for j in range(jk):
                sub[big_i, j] = s[o + j]  # what is left of the row
            for i2 in range(big_i):
                if trans[i, i2] == 0:
                    continue
                mv_hypergeometric(rng, sub[big_i], 0, jk, trans[i, i2], sub[i2], 0)
                for j in range(jk):
                    sub[big_i, j] -= sub[i2, j]
                o2 = offsets[k] + i2 * jk
                for j in range(jk):
                    if sub[i2, j] == 0:
                        continue
                    overlap_row(prob, big_i + o, prob_new, big_i + o2, jk, j, w)
                    multinomial(rng, sub[i2, j], w, 0, jk, s_new, o2, True)


@njit(cache=True, nogil=True)
def refresh_move(rng, m, levels, offsets, prob, c, s, c_new, s_new, removed, sub):
    """s* ~ Q_m(. | s): m uniformly chosen records replaced by fresh draws from theta (reversible for
    p(s | theta)). ``removed`` (I) and ``sub`` (max J) are work arrays."""
    big_i = c.size
    mv_hypergeometric(rng, c, 0, big_i, m, removed, 0)
    for t in range(s.size):
        s_new[t] = s[t]
    multinomial(rng, m, prob, 0, big_i, c_new, 0, False)  # the fresh records' classes
    for k in range(levels.size):
        jk = levels[k]
        for i in range(big_i):
            o = offsets[k] + i * jk
            if removed[i] > 0:
                mv_hypergeometric(rng, s, o, jk, removed[i], sub, 0)
                for j in range(jk):
                    s_new[o + j] -= sub[j]
            if c_new[i] > 0:
                multinomial(rng, c_new[i], prob, big_i + o, jk, s_new, o, True)
    for i in range(big_i):
        c_new[i] = c[i] - removed[i] + c_new[i]


@njit(cache=True, nogil=True)
def _alr_propose(lp, lp_new, start, size, chol, z):
    """lp_new[start:start+size] = log softmax(phi + L z, 0), phi_j = lp_j - lp_last: a Gaussian random
    walk in the additive log-ratio coordinates of one simplex (L lower triangular, (size-1)^2 read)."""
    d = size - 1
    last = lp[start + d]
    m = 0.0
    for a in range(d):
        v = lp[start + a] - last
        for b in range(a + 1):
            v += chol[a, b] * z[b]
        lp_new[start + a] = v
        if v > m:
            m = v
    tot = math.exp(-m)
    for a in range(d):
        tot += math.exp(lp_new[start + a] - m)
    lt = m + math.log(tot)
    for a in range(d):
        lp_new[start + a] -= lt
    lp_new[start + d] = -lt


@njit(cache=True, nogil=True)
def block_move(rng, block, alpha, levels, offsets, lp, lp_new, prob, prob_new, c, s, c_new, s_new, sdp, kernel,
               scale, cur, chol, trans, sub, w, z):
    """One coupled Metropolis–Hastings move of one simplex (block 0: pi; block 1 + k I + i: p[k][i])
    by a Gaussian random walk in its additive log-ratio coordinates, s* from ``coupled_move``.
    Accept with min{1, prod_j (p*_j / p_j)^alpha eta(s_dp - s*) / eta(s_dp - s)}. Returns
    (alpha_mh, log eta of the state after the move); on acceptance lp, prob, c, s are updated."""
    big_i = c.size
    if block == 0:
        start, size = 0, big_i
    else:
        b = block - 1
        k = b // big_i
        i = b % big_i
        start, size = big_i + offsets[k] + i * levels[k], levels[k]
    for t in range(lp.size):
        lp_new[t] = lp[t]
        prob_new[t] = prob[t]
    for a in range(size - 1):
        z[a] = rng.standard_normal()
    _alr_propose(lp, lp_new, start, size, chol, z)
    lr = 0.0
    for a in range(size):
        lr += alpha * (lp_new[start + a] - lp[start + a])
        prob_new[start + a] = math.exp(lp_new[start + a])
    coupled_move(rng, levels, offsets, prob, prob_new, c, s, c_new, s_new, trans, sub, w)
    new = log_eta(s_new, sdp, kernel, scale)
    lr += new - cur
    acc = 1.0 if lr >= 0.0 else (math.exp(lr) if lr > -745.0 else 0.0)
    if acc >= 1.0 or rng.random() < acc:
        for t in range(lp.size):
            lp[t] = lp_new[t]
            prob[t] = prob_new[t]
        for i in range(big_i):
            c[i] = c_new[i]
        for t in range(s.size):
            s[t] = s_new[t]
        return acc, new
    return acc, cur


@njit(cache=True, nogil=True)
def loglinear_pm_chain(rng, n, alpha, levels, offsets, sdp, kernel, scale, lp, c, s, chols, refresh_m, n_refresh,
                       thin, n_iter, out_theta, out_block_acc, out_refresh_acc):
    """Run ``n_iter`` recorded iterations, each ``thin`` passes of the steps below, from the state
    (lp, c, s), updated in place. One pass:

    1. every block (pi, then p[k][i] for k, i) once: ``block_move`` with its proposal factor
       ``chols[b]`` (only the top-left (size - 1) square is read);
    2. ``n_refresh`` times: ``refresh_move`` of ``refresh_m`` records, accepted with
       min{1, eta(s_dp - s*) / eta(s_dp - s)};
    3. theta | s: ``gibbs_theta``.

    Records theta (probabilities) after the last pass, each block's mean acceptance probability and the
    mean acceptance probability of the refreshes over the passes.
    """
    big_i = c.size
    dim = lp.size
    n_blocks = 1 + levels.size * big_i
    jmax = big_i
    for k in range(levels.size):
        jmax = max(jmax, levels[k])
    lp_new = np.empty(dim)
    prob = np.empty(dim)
    prob_new = np.empty(dim)
    c_new = np.empty(big_i, dtype=np.int64)
    s_new = np.empty(s.size, dtype=np.int64)
    trans = np.zeros((big_i, big_i), dtype=np.int64)
    sub = np.zeros((big_i + 1, jmax), dtype=np.int64)
    w = np.empty(jmax)
    z = np.empty(jmax)
    removed = np.empty(big_i, dtype=np.int64)
    cur = log_eta(s, sdp, kernel, scale)
    for t in range(n_iter):
        for b in range(n_blocks):
            out_block_acc[t, b] = 0.0
        racc = 0.0
        for _ in range(thin):
            for a in range(dim):
                prob[a] = math.exp(lp[a])
            for b in range(n_blocks):
                acc, cur = block_move(rng, b, alpha, levels, offsets, lp, lp_new, prob, prob_new, c, s, c_new, s_new,
                                      sdp, kernel, scale, cur, chols[b], trans, sub, w, z)
                out_block_acc[t, b] += acc / thin
            for _ in range(n_refresh):
                refresh_move(rng, refresh_m, levels, offsets, prob, c, s, c_new, s_new, removed, sub[0])
                new = log_eta(s_new, sdp, kernel, scale)
                lr = new - cur
                acc = 1.0 if lr >= 0.0 else (math.exp(lr) if lr > -745.0 else 0.0)
                racc += acc
                if acc >= 1.0 or rng.random() < acc:
                    for i in range(big_i):
                        c[i] = c_new[i]
                    for a in range(s.size):
                        s[a] = s_new[a]
                    cur = new
            gibbs_theta(rng, alpha, levels, offsets, c, s, lp)
        out_refresh_acc[t] = racc / max(n_refresh * thin, 1)
        for a in range(dim):
            out_theta[t, a] = math.exp(lp[a])
    return cur
