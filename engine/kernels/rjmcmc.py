"""Compiled reversible-jump chains for an unknown number of records (paper 002, Alg. 1).

One call runs ``n_iter`` iterations of one chain on a record store ``x`` whose first ``n`` entries
are the current records. Each iteration

1. draws theta | x from the conjugate posterior with n records (skipped when ``update_theta`` is
   False: the Monte Carlo EM E-step holds theta fixed);
2. sweeps the n records with the compiled Algorithm 1 step of :mod:`engine.kernels.da_mcmc`
   (``*_sweep``: the very same code DA-MCMC runs);
3. makes ``jumps`` between-model moves: add (probability 1/2) a record x* ~ f(. | theta), or delete
   (probability 1/2) a uniformly chosen record, accepted with probability min(1, A),

       log A_add(n -> n+1) = log p(n+1)/p(n) + log eta(s_dp | s + t(x*)) - log eta(s_dp | s)
                             + log eta_n(n_dp | n+1) - log eta_n(n_dp | n),
       log A_del(n -> n-1) = log p(n-1)/p(n) + log eta(s_dp | s - t(x_i)) - log eta(s_dp | s)
                             + log eta_n(n_dp | n-1) - log eta_n(n_dp | n)

   (the derivation, and why f(x* | theta) does not appear, is in :mod:`engine.methods.rjmcmc`).
   A delete proposed at n = 0 is rejected.

The record store (paper 002, Remark 5.5): an add puts x* in a uniformly chosen slot j of 0..n and the record
that was there in slot n (when the store is full it is doubled, an amortised O(1) cost); a delete of slot i
moves the last record into it. The two are each other's reverse on the ordered store: the add reaches a given
store with probability f(x*) / (n + 1) (its slot), the delete leaves it by that slot with probability
1 / (n + 1), so the ratios above, derived for records as a set, hold on the store too. An add that wrote x* to
slot n always (as this module did until an audit in session 22) is not reversed by any delete: the newest
record, accepted through the noise, always sits last, the sweep's systematic scan meets it last, and the order
of the store carries the chain's history. The target is symmetric in the records, but that chain's is not: it
was biased by 3-4% of a posterior sd (Poisson records, a negative-binomial n, two jumps an iteration: E[lambda]
2.517 +- 0.004 against 2.490 by enumeration), shrinking as the jumps per iteration grow.
Noise kernels as in :func:`engine.kernels.shared.log_noise` (0 = -|r|/scale, 1 = -r^2/(2 scale^2), 2..9 a
clipped release on its bound); normalising
constants cancel in every ratio.

Recorded per iteration: theta, n (after the jumps), the sufficient statistic T = sum x_i of the
unclamped records (what the MCEM M-step and Louis's information need), the sweep's mean acceptance
and accepted fraction, and for the jumps the sums of the add / delete acceptance probabilities and
the numbers of add / delete proposals (``out_jump[t] = [sum alpha_add, adds, sum alpha_del, deletes]``).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from .da_mcmc import bernoulli_sweep, normal_shift_moves, normal_sums, normal_sweep, poisson_sweep
from .shared import log_noise

__all__ = ["rj_bernoulli_chain", "rj_poisson_chain", "rj_normal_chain", "log_prior_up", "bernoulli_tables"]


@njit(cache=True, nogil=True)
def _insert(rng, x, n, xn):
    """An added record into a uniformly chosen slot j of 0..n, the record in slot j moved to slot n (module
    docstring: the reverse of a delete, which moves the last record into the deleted slot)."""
    j = int(rng.random() * (n + 1))
    x[n] = x[j]
    x[j] = xn


@njit(cache=True, nogil=True)
def log_prior_up(code, mean, dispersion, n):
    """log p(n + 1) - log p(n): Poisson(mean) (code 0) or negative binomial(mean, dispersion)."""
    if code == 0:
        return math.log(mean) - math.log(n + 1.0)
    return math.log(n + dispersion) - math.log(n + 1.0) + math.log(mean / (mean + dispersion))


@njit(cache=True, nogil=True)
def jump_log_ratio(add, n, s, t, sdp, kernel, scale, ndp, nkernel, nscale, pcode, pmean, pdisp):
    """log A of an add (record statistic t joins, n -> n+1) or a delete (t leaves, n -> n-1)."""
    if add:
        return (log_prior_up(pcode, pmean, pdisp, n)
                + log_noise(kernel, scale, sdp - (s + t)) - log_noise(kernel, scale, sdp - s)
                + log_noise(nkernel, nscale, ndp - (n + 1.0)) - log_noise(nkernel, nscale, ndp - n))
    return (-log_prior_up(pcode, pmean, pdisp, n - 1)
            + log_noise(kernel, scale, sdp - (s - t)) - log_noise(kernel, scale, sdp - s)
            + log_noise(nkernel, nscale, ndp - (n - 1.0)) - log_noise(nkernel, nscale, ndp - n))


@njit(cache=True, nogil=True)
def _accept(rng, lr):
    """(acceptance probability, accepted?) of a log ratio."""
    al = 1.0 if lr >= 0.0 else math.exp(lr)
    return al, (al >= 1.0 or rng.random() < al)


@njit(cache=True, nogil=True)
def _add_move(rng, n, s, t, sdp, kernel, scale, ndp, nkernel, nscale, pcode, pmean, pdisp, jump_row):
    """Accept or reject adding a record with statistic t; counts the proposal and its alpha in
    ``jump_row`` (= out_jump[t])."""
    al, ok = _accept(rng, jump_log_ratio(True, n, s, t, sdp, kernel, scale, ndp, nkernel, nscale, pcode, pmean, pdisp))
    jump_row[0] += al
    jump_row[1] += 1.0
    return ok


@njit(cache=True, nogil=True)
def _delete_move(rng, n, s, t, sdp, kernel, scale, ndp, nkernel, nscale, pcode, pmean, pdisp, jump_row):
    """Accept or reject deleting a record with statistic t (the caller counts the proposal, also
    those made at n = 0, in jump_row[3])."""
    al, ok = _accept(rng, jump_log_ratio(False, n, s, t, sdp, kernel, scale, ndp, nkernel, nscale, pcode, pmean,
                                         pdisp))
    jump_row[2] += al
    return ok


@njit(cache=True, nogil=True)
def bernoulli_tables(sdp, kernel, scale, size):
    """alpha of s -> s + 1 and s -> s - 1 for s = 0..size-1 (Bernoulli sweep, additive noise)."""
    up = np.zeros(size)
    down = np.zeros(size)
    for s in range(size):
        cur = log_noise(kernel, scale, sdp - s)
        up[s] = min(1.0, math.exp(log_noise(kernel, scale, sdp - s - 1.0) - cur))
        if s > 0:
            down[s] = min(1.0, math.exp(log_noise(kernel, scale, sdp - s + 1.0) - cur))
    return up, down


@njit(cache=True, nogil=True)
def _record_stats(t, n, asum, nacc, out_acc, out_frac):
    if n > 0:
        out_acc[t] = asum / n
        out_frac[t] = nacc / n
    else:
        out_acc[t] = 1.0
        out_frac[t] = 1.0


@njit(cache=True, nogil=True)
def rj_bernoulli_chain(rng, x, n, s, a, b, update_theta, theta, sdp, kernel, scale, ndp, nkernel, nscale,
                       pcode, pmean, pdisp, jumps, n_iter, out_theta, out_n, out_suff, out_acc, out_frac, out_jump):
    """Beta-Bernoulli records (int8 store). Returns (x, n, s): x may be a new, larger store."""
    up, down = bernoulli_tables(sdp, kernel, scale, x.size + 2)
    z = np.zeros(1, np.int64)
    rr = np.zeros((2, 2))
    for t in range(n_iter):
        if update_theta:
            theta = rng.beta(a + s, b + n - s)
        out_theta[t, 0] = theta
        asum, nacc = 0.0, 0
        if n > 0:
            s, asum, nacc = bernoulli_sweep(rng, x[:n], s, theta, 0, up, down, z, rr)
        _record_stats(t, n, asum, nacc, out_acc, out_frac)
        for j in range(4):
            out_jump[t, j] = 0.0
        for _ in range(jumps):
            if rng.random() < 0.5:
                xn = 1 if rng.random() < theta else 0
                ok = _add_move(rng, n, s, xn, sdp, kernel, scale, ndp, nkernel, nscale, pcode, pmean, pdisp, out_jump[t])
                if ok:
                    if n == x.size:
                        x = np.concatenate((x, x))
                        up, down = bernoulli_tables(sdp, kernel, scale, x.size + 2)
                    _insert(rng, x, n, xn)
                    n += 1
                    s += xn
            else:
                out_jump[t, 3] += 1.0
                if n == 0:
                    continue
                i = int(rng.random() * n)
                ti = int(x[i])
                ok = _delete_move(rng, n, s, ti, sdp, kernel, scale, ndp, nkernel, nscale, pcode, pmean, pdisp, out_jump[t])
                if ok:
                    x[i] = x[n - 1]
                    n -= 1
                    s -= ti
        out_n[t] = n
        out_suff[t] = s
    return x, n, s


@njit(cache=True, nogil=True)
def rj_poisson_chain(rng, x, n, s, sum_x, alpha, beta, upper, update_theta, lam, sdp, kernel, scale, ndp, nkernel,
                     nscale, pcode, pmean, pdisp, jumps, n_iter, out_theta, out_n, out_suff, out_acc, out_frac,
                     out_jump):
    """Gamma-Poisson records, statistic sum min(x_i, upper) (``upper < 0``: no clamp); lam | x uses
    the unclamped sum. Returns (x, n, s, sum_x)."""
    for t in range(n_iter):
        if update_theta:
            lam = rng.gamma(alpha + sum_x, 1.0 / (beta + n))
        out_theta[t, 0] = lam
        asum, nacc = 0.0, 0
        if n > 0:
            s, sum_x, asum, nacc = poisson_sweep(rng, x[:n], s, sum_x, lam, upper, sdp, kernel, scale)
        _record_stats(t, n, asum, nacc, out_acc, out_frac)
        for j in range(4):
            out_jump[t, j] = 0.0
        for _ in range(jumps):
            if rng.random() < 0.5:
                xn = rng.poisson(lam)
                tn = xn if upper < 0 else min(xn, upper)
                ok = _add_move(rng, n, s, tn, sdp, kernel, scale, ndp, nkernel, nscale, pcode, pmean, pdisp, out_jump[t])
                if ok:
                    if n == x.size:
                        x = np.concatenate((x, x))
                    _insert(rng, x, n, xn)
                    n += 1
                    s += tn
                    sum_x += xn
            else:
                out_jump[t, 3] += 1.0
                if n == 0:
                    continue
                i = int(rng.random() * n)
                xi = x[i]
                ti = xi if upper < 0 else min(xi, upper)
                ok = _delete_move(rng, n, s, ti, sdp, kernel, scale, ndp, nkernel, nscale, pcode, pmean, pdisp, out_jump[t])
                if ok:
                    x[i] = x[n - 1]
                    n -= 1
                    s -= ti
                    sum_x -= xi
        out_n[t] = n
        out_suff[t] = sum_x
    return x, n, s, sum_x


@njit(cache=True, nogil=True)
def rj_normal_chain(rng, x, n, sd, lo, hi, prior_mean, prior_sd, noise_sd, update_theta, mu, sdp, kernel, scale, ndp,
                    nkernel, nscale, pcode, pmean, pdisp, jumps, n_iter, out_theta, out_n, out_suff, out_acc, out_frac,
                    out_jump):
    """Normal records with known sd, statistic the sum clamped to [lo, hi]; mu | x conjugate with
    n records, then (where mu is drawn) the three translation moves of DA-MCMC
    (:func:`engine.kernels.da_mcmc.normal_shift_moves`): on audit s24's
    case (clamp [-3, 3], prior sd 10, Laplace scale 3) bulk ESS of mu 725-906 from 4 x 1,000 draws over
    three seeds, R-hat <= 1.006 (13 and 1.25 without them; 550 and up to 1.018 with the outer two alone).
    Each move keeps n, so a step that depends on it is symmetric. Returns (x, n, s, sum_x)."""
    s, sum_x = 0.0, 0.0
    for t in range(n_iter):
        s, sum_x = normal_sums(x[:n], lo, hi)  # resynchronised once per iteration (no drift)
        if update_theta:
            prec = 1.0 / (prior_sd * prior_sd) + n / (sd * sd)
            m = (prior_mean / (prior_sd * prior_sd) + sum_x / (sd * sd)) / prec
            mu = rng.normal(m, 1.0 / math.sqrt(prec))
            if n > 0:
                mu, s, sum_x = normal_shift_moves(rng, x, n, s, sum_x, mu, noise_sd, lo, hi, prior_mean, prior_sd,
                                                  sdp, kernel, scale)
        out_theta[t, 0] = mu
        asum, nacc = 0.0, 0
        if n > 0:
            s, sum_x, asum, nacc = normal_sweep(rng, x[:n], s, sum_x, mu, sd, lo, hi, sdp, kernel, scale)
        _record_stats(t, n, asum, nacc, out_acc, out_frac)
        for j in range(4):
            out_jump[t, j] = 0.0
        for _ in range(jumps):
            if rng.random() < 0.5:
                xn = rng.normal(mu, sd)
                tn = min(max(xn, lo), hi)
                ok = _add_move(rng, n, s, tn, sdp, kernel, scale, ndp, nkernel, nscale, pcode, pmean, pdisp, out_jump[t])
                if ok:
                    if n == x.size:
                        x = np.concatenate((x, x))
                    _insert(rng, x, n, xn)
                    n += 1
                    s += tn
                    sum_x += xn
            else:
                out_jump[t, 3] += 1.0
                if n == 0:
                    continue
                i = int(rng.random() * n)
                xi = x[i]
                ti = min(max(xi, lo), hi)
                ok = _delete_move(rng, n, s, ti, sdp, kernel, scale, ndp, nkernel, nscale, pcode, pmean, pdisp, out_jump[t])
                if ok:
                    x[i] = x[n - 1]
                    n -= 1
                    s -= ti
                    sum_x -= xi
        out_n[t] = n
        out_suff[t] = sum_x
    return x, n, s, sum_x
