"""Compiled pieces of the pseudo-marginal sampler (:mod:`engine.methods.pseudo_marginal`).

One call of :func:`pm_chain` runs ``n_iter`` Metropolis–Hastings iterations of one chain on an
unconstrained parameter phi with a fixed Gaussian random-walk proposal ``phi* = phi + L z`` and a
fixed number of particles M:

    log_target(phi) = log p(theta(phi)) + log |d theta / d phi| + log L_hat(theta(phi)),
    L_hat(theta)    = (1/M) sum_m eta(s_dp - s_m),   s_m ~ p(s | theta)   (unbiased for p(s_dp | theta)),
    accept with probability min{1, exp(log_target(phi*) - log_target(phi))},

where the current state's ``L_hat`` is carried along (recycled), never recomputed (Andrieu &
Roberts 2009). With randomized response the report counts have an exact likelihood and
``L_hat`` is that likelihood (no particles).

Model codes and their pieces (``par`` packs the model's numbers, ``d`` = len(phi)):

====  =======================  ==================  ============================  ==============================
code  model                    theta(phi)          log p(theta) + log Jacobian   s ~ p(s | theta)
====  =======================  ==================  ============================  ==============================
0     beta_binomial            1/(1 + e^-phi)      a log th + b log(1 - th)      Binomial(n, th)
1     beta_binomial + RR       1/(1 + e^-phi)      a log th + b log(1 - th)      exact: z ~ Bin(n, r(th))
2     poisson_gamma            e^phi               alpha log lam - beta lam      Poisson(n lam)
3     poisson_gamma, clamp U   e^phi               alpha log lam - beta lam      sum_j j N_j + U N_U, N ~ Mult
4     normal_known_sd          phi                 -(mu - m0)^2 / (2 s0^2)       sum of n clamped N(mu, sd^2)
5     dirichlet_multinomial    softmax(phi, 0)     sum_j alpha_j log p_j         Multinomial(n, p)
6     dirichlet + RR           softmax(phi, 0)     sum_j alpha_j log p_j         exact: c ~ Mult(n, Q^T p)
7     linear_regression        beta = phi          -|beta|^2 / (2 tau^2)         n records (x, y) simulated,
8     ..., unknown sigma^2     beta, e^phi_q       same - a phi_q - b e^-phi_q   clamped: s(x, y) (O(n p^2))
====  =======================  ==================  ============================  ==============================

Codes 7 and 8 pack ``par`` = (n, p, tau, a, b, sigma, x_mean[p], chol(Sigma)[p x p row-major],
lo[p+1], hi[p+1]); code 8 has sigma^2 = e^phi_q unknown with an InvGamma(a, b) prior, whose density
v^(-a-1) e^(-b/v) times the Jacobian v of v = e^phi gives the extra term; code 7 has sigma = par[5].

The Jacobians: for the logistic map d th/d phi = th (1 - th), which turns the Beta(a, b) density
th^(a-1) (1-th)^(b-1) into th^a (1-th)^b; for lam = e^phi it is lam; for the additive-log-ratio
map p = softmax(phi_1..phi_{k-1}, 0) the determinant is prod_j p_j (Aitchison 1986), which turns
the Dirichlet density prod p_j^(alpha_j - 1) into prod p_j^alpha_j. Constants are dropped.

Multinomial draws use sequential binomials (N_j ~ Bin(n - sum_{i<j} N_i, p_j / (1 - sum_{i<j} p_i))).
Noise kernels as in :func:`engine.kernels.shared.log_noise`: 0 = -|r|/scale, 1 = -r^2/(2 scale^2), 2..9 a clipped
release on its bound, 10 a bounded-domain Laplace release (``scale`` a tuple); normalising constants cancel in
the acceptance ratio.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from .shared import (log_noise, log_t_mixture, random_walk_point, simulate_into, t_mixture_point,
                     t_mixture_weights)

__all__ = ["pm_chain", "pm_chain_mixed", "log_eta_draws", "to_theta", "log_prior_jac", "loglik_estimate"]

NEG_INF = -np.inf


@njit(cache=True, nogil=True)
def _log_sigmoid(x):
    # log(1 / (1 + e^-x)), stable for large |x|
    if x >= 0:
        return -math.log1p(math.exp(-x))
    return x - math.log1p(math.exp(x))


@njit(cache=True, nogil=True)
def to_theta(code, phi, out):
    """theta(phi) into ``out`` (length d for 1-parameter models, k for the simplex)."""
    if code == 0 or code == 1:
        out[0] = math.exp(_log_sigmoid(phi[0]))
    elif code == 2 or code == 3:
        out[0] = math.exp(phi[0])
    elif code == 4:
        out[0] = phi[0]
    elif code == 7 or code == 8:
        for j in range(phi.size):
            out[j] = phi[j]
        if code == 8:
            out[phi.size - 1] = math.exp(phi[phi.size - 1])
    else:
        k = phi.size + 1
        m, tot = _softmax_norm(phi)
        for j in range(k - 1):
            out[j] = math.exp(phi[j] - m) / tot
        out[k - 1] = math.exp(-m) / tot


@njit(cache=True, nogil=True)
def _softmax_norm(phi):
    """(m, tot) with m = max(0, phi) and tot = e^-m + sum_j e^(phi_j - m): the softmax of (phi, 0)
    is e^(phi_j - m) / tot, its log phi_j - m - log tot (no overflow for any phi)."""
    m = 0.0
    for j in range(phi.size):
        if phi[j] > m:
            m = phi[j]
    tot = math.exp(-m)
    for j in range(phi.size):
        tot += math.exp(phi[j] - m)
    return m, tot


@njit(cache=True, nogil=True)
def _log_softmax(phi, out):
    k = phi.size + 1
    m, tot = _softmax_norm(phi)
    lt = m + math.log(tot)
    for j in range(k - 1):
        out[j] = phi[j] - lt
    out[k - 1] = -lt


@njit(cache=True, nogil=True)
def log_prior_jac(code, phi, par, work):
    """log p(theta(phi)) + log |d theta / d phi| up to a constant (see the module table)."""
    if code == 0 or code == 1:
        a, b = par[1], par[2]
        return a * _log_sigmoid(phi[0]) + b * _log_sigmoid(-phi[0])
    if code == 2 or code == 3:
        alpha, beta = par[1], par[2]
        return alpha * phi[0] - beta * math.exp(phi[0])
    if code == 4:
        m0, s0 = par[4], par[5]
        z = (phi[0] - m0) / s0
        return -0.5 * z * z
    if code == 7 or code == 8:
        q = int(par[1]) + 1
        tau = par[2]
        tot = 0.0
        for j in range(q):
            tot -= 0.5 * (phi[j] / tau) * (phi[j] / tau)
        if code == 8:
            tot -= par[3] * phi[q] + par[4] * math.exp(-phi[q])
        return tot
    _log_softmax(phi, work)
    tot = 0.0
    for j in range(work.size):
        tot += par[1 + j] * work[j]
    return tot


@njit(cache=True, nogil=True)
def _multinomial(rng, n, p, out):
    """Sequential-binomial multinomial draw of n over the probabilities p (summing to 1)."""
    left = n
    rest = 1.0
    k = p.size
    for j in range(k - 1):
        if left <= 0:
            out[j] = 0
            continue
        q = p[j] / rest if rest > 0 else 1.0
        if q >= 1.0:
            c = left
        elif q <= 0.0:
            c = 0
        else:
            c = rng.binomial(left, q)
        out[j] = c
        left -= c
        rest -= p[j]
    out[k - 1] = left


@njit(cache=True, nogil=True)
def _clamped_poisson_pmf(lam, upper, out):
    """P(min(X, upper) = j), j = 0..upper, for X ~ Poisson(lam) (the last entry is the tail)."""
    term = math.exp(-lam)
    acc = 0.0
    for j in range(upper):
        out[j] = term
        acc += term
        term = term * lam / (j + 1)
    out[upper] = max(0.0, 1.0 - acc)


@njit(cache=True, nogil=True)
def _log_eta_one(code, rng, theta, par, sdp, kernel, scale, pbuf, cbuf):
    """log eta(s_dp - s) for one statistic s ~ p(s | theta) (codes 0, 2, 3, 4, 5)."""
    n = int(par[0])
    if code == 0:
        s = rng.binomial(n, theta[0])
        return log_noise(kernel, scale, sdp[0] - s)
    if code == 2:
        s = rng.poisson(n * theta[0])
        return log_noise(kernel, scale, sdp[0] - s)
    if code == 3:
        upper = int(par[3])
        _multinomial(rng, n, pbuf, cbuf)
        s = 0.0
        for j in range(upper + 1):
            s += j * cbuf[j]
        return log_noise(kernel, scale, sdp[0] - s)
    if code == 4:
        sd, lo, hi = par[1], par[2], par[3]
        s = 0.0
        for i in range(n):
            x = rng.normal(theta[0], sd)
            s += min(max(x, lo), hi)
        return log_noise(kernel, scale, sdp[0] - s)
    if code == 7 or code == 8:
        return _regression_log_eta(code, rng, theta, par, sdp, kernel, scale)
    _multinomial(rng, n, theta, cbuf)
    tot = 0.0
    for j in range(theta.size):
        tot += log_noise(kernel, scale, sdp[j] - cbuf[j])
    return tot


@njit(cache=True, nogil=True)
def _regression_log_eta(code, rng, theta, par, sdp, kernel, scale):
    """log eta(s_dp - s) for the statistic of n records simulated at theta (codes 7, 8)."""
    n = int(par[0])
    p = int(par[1])
    q = p + 1
    sigma = math.sqrt(theta[q]) if code == 8 else par[5]
    x_mean = par[6:6 + p]
    chol = np.ascontiguousarray(par[6 + p:6 + p + p * p]).reshape((p, p))
    lo = par[6 + p + p * p:6 + p + p * p + q]
    hi = par[6 + p + p * p + q:6 + p + p * p + 2 * q]
    d = sdp.size
    s = np.empty(d)
    simulate_into(rng, theta[:q], n, chol, x_mean, sigma, lo, hi, np.empty(q + 1), np.empty(d), np.empty(q),
                   np.empty(p), s)
    tot = 0.0
    for k in range(d):
        tot += log_noise(kernel, scale, sdp[k] - s[k])
    return tot


@njit(cache=True, nogil=True)
def _prepare(code, theta, par, pbuf):
    if code == 3:
        _clamped_poisson_pmf(theta[0], int(par[3]), pbuf)


@njit(cache=True, nogil=True)
def _logaddexp(a, b):
    m = max(a, b)
    if m == NEG_INF:
        return NEG_INF
    return m + math.log(math.exp(a - m) + math.exp(b - m))


@njit(cache=True, nogil=True)
def _exact_loglik(code, theta, par, sdp, log_q, work):
    """Randomized response: the report counts' log-likelihood (multinomial coefficient dropped)."""
    n = par[0]
    if code == 1:
        lt = math.log(theta[0]) if theta[0] > 0 else NEG_INF
        l1t = math.log1p(-theta[0]) if theta[0] < 1 else NEG_INF
        z = sdp[0]
        tot = 0.0
        if z > 0:
            tot += z * _logaddexp(lt + log_q[1, 1], l1t + log_q[0, 1])
        if n - z > 0:
            tot += (n - z) * _logaddexp(lt + log_q[1, 0], l1t + log_q[0, 0])
        return tot
    k = theta.size
    tot = 0.0
    for z in range(k):
        if sdp[z] == 0:
            continue
        m = NEG_INF
        for x in range(k):
            v = (math.log(theta[x]) if theta[x] > 0 else NEG_INF) + log_q[x, z]
            work[x] = v
            if v > m:
                m = v
        acc = 0.0
        for x in range(k):
            acc += math.exp(work[x] - m)
        tot += sdp[z] * (m + math.log(acc))
    return tot


@njit(cache=True, nogil=True)
def loglik_estimate(code, rng, theta, par, sdp, kernel, scale, log_q, n_particles, pbuf, cbuf, work):
    """log L_hat(theta): log of the mean of eta over M statistic draws, or the exact RR log-likelihood."""
    if code == 1 or code == 6:
        return _exact_loglik(code, theta, par, sdp, log_q, work)
    _prepare(code, theta, par, pbuf)
    # streaming log-sum-exp over the particles
    m = NEG_INF
    acc = 0.0
    for _ in range(n_particles):
        v = _log_eta_one(code, rng, theta, par, sdp, kernel, scale, pbuf, cbuf)
        if v == NEG_INF:
            continue
        if v > m:
            acc = acc * math.exp(m - v) + 1.0 if m > NEG_INF else 1.0
            m = v
        else:
            acc += math.exp(v - m)
    if m == NEG_INF:
        return NEG_INF
    return m + math.log(acc) - math.log(n_particles)


@njit(cache=True, nogil=True)
def log_eta_draws(code, rng, theta, par, sdp, kernel, scale, size, out):
    """``size`` independent log eta(s_dp - s), s ~ p(s | theta): the pilot that sizes M."""
    k = max(theta.size, int(par[3]) + 1 if code == 3 else 1)
    pbuf = np.empty(k)
    cbuf = np.empty(k)
    _prepare(code, theta, par, pbuf)
    for i in range(size):
        out[i] = _log_eta_one(code, rng, theta, par, sdp, kernel, scale, pbuf, cbuf)


@njit(cache=True, nogil=True)
def pm_chain(rng, code, par, sdp, kernel, scale, log_q, n_particles, chol, phi, lp_cur, ll_cur, n_iter,
             out_theta, out_acc, out_accepted, out_ll):
    """Run ``n_iter`` pseudo-marginal MH steps from (phi, lp_cur, ll_cur); phi is updated in place.

    Returns (lp_cur, ll_cur) of the final state: the recycled estimate travels with the state. The random-walk
    steps of :func:`pm_chain_mixed` with no independence proposal (``p_ind = 0``: no draw is spent on the
    choice, so the stream is the random walk's alone)."""
    d = phi.size
    return pm_chain_mixed(rng, code, par, sdp, kernel, scale, log_q, n_particles, chol, phi, lp_cur, ll_cur, n_iter,
                          np.empty((0, d)), np.empty((0, d, d)), np.empty(0), 1.0, 0.0, out_theta, out_acc,
                          out_accepted, out_ll)


@njit(cache=True, nogil=True)
def pm_chain_mixed(rng, code, par, sdp, kernel, scale, log_q, n_particles, chol, phi, lp_cur, ll_cur, n_iter,
                   ind_means, ind_chols, ind_log_w, nu, p_ind, out_theta, out_acc, out_accepted, out_ll):
    """``n_iter`` pseudo-marginal MH steps from (phi, lp_cur, ll_cur), phi updated in place, returning the final
    (lp_cur, ll_cur); each iteration is, with probability ``p_ind`` (drawn before anything else, so
    the choice does not depend on the state), an independence proposal phi* ~ q, a mixture of t laws
    (nu degrees of freedom; component c with probability exp(ind_log_w[c]) |det ind_chols[c]|, location
    ind_means[c], scale ind_chols[c] ind_chols[c]^T), accepted with probability

        min{1, p(phi*) L_hat(phi*) q(phi) / (p(phi) L_hat(phi) q(phi*))},

    and otherwise a random-walk step phi* = phi + chol z, z ~ N(0, I) (``p_ind = 0``: :func:`pm_chain`). Each of the two is a Metropolis-Hastings kernel
    on the extended state (phi, L_hat) whose proposal for L_hat is a fresh estimate at phi*, so each
    leaves p(phi) L_hat g(L_hat | phi) invariant (Andrieu & Roberts 2009) and so does their mixture
    with state-independent weights (Tierney 1994); the phi-marginal is the exact posterior. A t draw
    is mean + L z sqrt(nu / g), z ~ N(0, I), g ~ chi2_nu = 2 Gamma(nu / 2)."""
    d = phi.size
    kk = out_theta.shape[1]
    size = max(kk, int(par[3]) + 1 if code == 3 else 1)
    pbuf = np.empty(size)
    cbuf = np.empty(size)
    work = np.empty(size)
    prop = np.empty(d)
    z = np.empty(d)
    w = np.empty(d)
    th = np.empty(kk)
    th_cur = np.empty(kk)
    cum = np.empty(ind_log_w.size)
    tot = t_mixture_weights(ind_log_w, ind_chols, cum)
    to_theta(code, phi, th_cur)
    mixed = p_ind > 0.0  # else the random walk alone (pm_chain): no draw for the choice, no q to evaluate
    lq_cur = log_t_mixture(phi, ind_means, ind_chols, ind_log_w, nu, w) if mixed else 0.0
    lq = 0.0
    for t in range(n_iter):
        independent = mixed and rng.random() < p_ind
        for j in range(d):
            z[j] = rng.standard_normal()
        if independent:
            t_mixture_point(rng, ind_means, ind_chols, cum, tot, nu, z, prop)
        else:
            random_walk_point(phi, chol, z, prop)
        lp = log_prior_jac(code, prop, par, work)
        acc = 0.0
        moved = False
        if lp > NEG_INF and math.isfinite(lp):
            to_theta(code, prop, th)
            ll = loglik_estimate(code, rng, th, par, sdp, kernel, scale, log_q, n_particles, pbuf, cbuf, work)
            if mixed:
                lq = log_t_mixture(prop, ind_means, ind_chols, ind_log_w, nu, w)
            lr = (lp + ll) - (lp_cur + ll_cur)
            if independent:
                lr += lq_cur - lq
            if lr >= 0.0:
                acc = 1.0
            elif lr > -745.0:
                acc = math.exp(lr)
            if acc >= 1.0 or rng.random() < acc:
                for j in range(d):
                    phi[j] = prop[j]
                for j in range(kk):
                    th_cur[j] = th[j]
                lp_cur = lp
                ll_cur = ll
                lq_cur = lq
                moved = True
        for j in range(kk):
            out_theta[t, j] = th_cur[j]
        out_acc[t] = acc
        out_accepted[t] = moved
        out_ll[t] = ll_cur
    return lp_cur, ll_cur
