"""Compiled pieces that more than one sampler family uses.

* ``log_noise``: the log density of the additive noise up to a constant. Noise kernels
  (``kernel``): 0 = log eta(r) = -|r| / scale (Laplace, discrete Laplace), 1 = -r^2 / (2 scale^2)
  (Gaussian, discrete Gaussian); normalising constants cancel in every acceptance ratio here.
  Kernels 2..9 are a clipped release sitting on its bound, log P(U <= r) or log P(U >= r)
  (``log_noise_tail``; :mod:`engine.mechanisms.clipped` picks the code from s_dp).
  Two releases need more than one number besides r, and pass ``scale`` as a tuple of three
  (``engine.mechanisms.clipped.compiled_noise``; numba compiles a second version of every sampler for
  that type, and the float version is unchanged):

  - kernel 10 with (b, d_lo, d_hi): diffprivlib's ``LaplaceBoundedDomain``, whose density is renormalised
    over [L, U] with an s-dependent normaliser (:func:`log_bounded_domain`), d_lo = L - s_dp, d_hi = U - s_dp;
  - kernels 6..9 with (scale, g, 0): a release on the lattice g Z (OpenDP's float noise with ``k``) sitting on
    its clip bound; the lattice law at r is the integer law at r / g with scale / g
    (P(g V <= r) = P(V <= r / g), V the integer noise of scale scale / g).
* ``record_move``: one Metropolis step on one record of a one-dimensional statistic (Ju et al. 2022,
  Alg. 1, step 2, eq. 5): the DA-MCMC sweeps and the reversible-jump sampler's sweeps both take it.
* ``cdf_draw``: one category by inverse CDF (the categorical sweep, the log-linear class and
  feature draws).
* ``cholesky_into``: a small dense Cholesky factor (Bernstein-Sheldon's Dirichlet step, the
  regression's beta draw).
* The linear regression model's record and statistic (Ju et al. 2022, Sec. 5; dapper Example 3),
  which DA-MCMC, the pseudo-marginal sampler, ABC and the model itself use. A record is
  r = (x_1..x_p, y), stored unclamped (the latent records of DA-MCMC are draws from the model, which
  knows nothing of the clamp). Two record-additive statistics are kept:

  - the released one, s = sum_i t(r_i), on the clamped and normalised record
    z~ = (1, x~_1..x~_p, y~) with x~_j = 2 ([x_j]_{lo_j}^{hi_j} - lo_j) / (hi_j - lo_j) - 1 (the same
    for y with bounds lo_{p+1}, hi_{p+1}); in the order (dapper's ``st_f``)

        t = ( x~_0 y~, x~_1 y~, .., x~_p y~,          p + 1 entries: x~^T y~ (x~_0 = 1)
              y~^2,                                   1 entry:       y~^T y~
              x~_j x~_k for k = 1..p, j = 0..k )      p (p + 3) / 2: the upper triangle of x~^T x~,
                                                                    column by column, without (0, 0)

    so d = (p + 1) + 1 + p (p + 3) / 2 entries (9 for p = 2);
  - the conjugate one on the raw records: X^T X ((p + 1) x (p + 1), X = (1, x)), X^T y and y^T y.

  ``draw_record`` draws r ~ f(. | beta) (x = m + L z, L the Cholesky factor of Sigma;
  y = beta_0 + x^T beta_{1:p} + sigma z'), ``record_stat`` forms t(r), ``statistics`` both
  statistics of a record array, ``simulate_into`` / ``simulate_statistic`` the released statistic of
  n fresh records.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, types
from numba.extending import overload

__all__ = ["log_noise", "log_eta", "log_noise_tail", "log_bounded_domain", "BOUNDED_DOMAIN", "record_move", "cdf_draw", "cholesky_into", "stat_dim", "draw_record", "record_stat",
           "statistics", "simulate_into", "simulate_statistic", "log_t_mixture", "t_mixture_weights",
           "t_mixture_point"]


BOUNDED_DOMAIN = 10  # the kernel code of a bounded-domain Laplace release (scale = (b, d_lo, d_hi))


@njit(cache=True, nogil=True)
def log_noise(kernel, scale, r):
    """log eta(s_dp | s) up to a constant, r = s_dp - s (module docstring); ``scale`` a float, or a tuple
    of three for a bounded domain or a lattice on its clip bound."""
    return _log_noise_of(kernel, scale, r)


def _log_noise_of(kernel, scale, r):  # pragma: no cover - typed by the overload below, never run in Python
    raise NotImplementedError


@overload(_log_noise_of, jit_options={"cache": True, "nogil": True})
def _log_noise_of_typed(kernel, scale, r):
    """The noise of a float ``scale`` or of a tuple of three, chosen when numba types the call."""
    if isinstance(scale, types.BaseTuple):
        return lambda kernel, scale, r: _log_noise_with(kernel, scale, r)
    return lambda kernel, scale, r: _log_noise_plain(kernel, scale, r)


def plain_inverse(kernel, scale):  # pragma: no cover - typed by the overload below, never run in Python
    """(code, factor) for the fast log-noise differences of a record sweep: (0, 1 / b) for Laplace of scale b,
    (1, 1 / (2 sigma^2)) for Gaussian, (-1, 0) for anything else (a tuple scale or a clipped kernel), where
        log eta(c - d) - log eta(c) = (|c| - |c - d|) / b,   resp. d (2 c - d) / (2 sigma^2)."""
    raise NotImplementedError


@overload(plain_inverse, jit_options={"cache": True, "nogil": True})
def _plain_inverse_typed(kernel, scale):
    if isinstance(scale, types.BaseTuple):
        return lambda kernel, scale: (-1, 0.0)

    def plain(kernel, scale):
        if kernel == 0:
            return 0, 1.0 / scale
        if kernel == 1:
            return 1, 0.5 / (scale * scale)
        return -1, 0.0
    return plain


@njit(cache=True, nogil=True)
def _log_noise_plain(kernel, scale, r):
    if kernel == 0:
        return -abs(r) / scale
    if kernel == 1:
        return -0.5 * (r / scale) * (r / scale)
    return log_noise_tail(kernel, scale, r)


@njit(cache=True, nogil=True)
def _log_noise_with(kernel, par, r):
    """A tuple ``par``: the bounded domain (kernel 10) or the lattice g Z (kernels 0..9, par = (scale, g, 0))."""
    if kernel == BOUNDED_DOMAIN:
        return log_bounded_domain(par[0], par[1], par[2], r)
    g = par[1]
    return _log_noise_plain(kernel, par[0] / g, math.floor(r / g + 0.5))


@njit(cache=True, nogil=True)
def log_bounded_domain(b, d_lo, d_hi, r):
    """log p(s_dp | s) + log(2 b) of diffprivlib's ``LaplaceBoundedDomain`` (Holohan et al. 2020): the statistic
    clamped to s~ = min(max(s, L), U), Laplace noise of scale b, redrawn until the release lies in [L, U]:

        p(s_dp | s) = exp(-|s_dp - s~| / b) / (2 b Z(s~)),   Z(s~) = F(U - s~) - F(L - s~),

    F the Laplace CDF. With r = s_dp - s, d_lo = L - s_dp <= 0 <= d_hi = U - s_dp and m = s~ - s_dp =
    min(max(-r, d_lo), d_hi): |s_dp - s~| = |m|, U - s~ = d_hi - m >= 0 >= L - s~ = d_lo - m, and with
    F(a) = 1 - e^(-a/b) / 2 (a >= 0), F(c) = e^(c/b) / 2 (c <= 0),

        log Z = log1p(-(e^(-(d_hi - m)/b) + e^((d_lo - m)/b)) / 2),

    both exponentials at most 1, so log1p stays accurate; Z > 0 whenever U > L. The normaliser depends on s:
    this is why the release is no function of r alone without d_lo and d_hi."""
    m = min(max(-r, d_lo), d_hi)
    return -abs(m) / b - math.log1p(-0.5 * (math.exp(-(d_hi - m) / b) + math.exp((d_lo - m) / b)))


@njit(cache=True, nogil=True)
def _log_ndtr(x):
    """log Phi(x): erfc for x > -20, else the asymptotic series log phi(x) - log(-x) + log(1 - 1/x^2 +
    3/x^4 - 15/x^6) (relative error below 105/x^8 < 1e-8 there)."""
    if x > -20.0:
        return math.log(0.5 * math.erfc(-x / math.sqrt(2.0)))
    z = 1.0 / (x * x)
    return -0.5 * x * x - 0.5 * math.log(2.0 * math.pi) - math.log(-x) + math.log(1.0 - z + 3.0 * z * z - 15.0 * z * z * z)


@njit(cache=True, nogil=True)
def _discrete_gaussian_tail(sigma, m):
    """log sum_{k >= m} exp(-k^2 / (2 sigma^2)) for an integer m >= 1 (terms beyond m + 40 sigma + 40 are
    below e^-800 of the first and dropped)."""
    top = -0.5 * (m / sigma) * (m / sigma)
    acc = 0.0
    k = m
    last = m + int(40.0 * sigma) + 40
    while k <= last:
        acc += math.exp(-0.5 * (k / sigma) * (k / sigma) - top)
        k += 1
    return top + math.log(acc)


@njit(cache=True, nogil=True)
def _log_add(a, b):
    hi = max(a, b)
    return hi + math.log(math.exp(a - hi) + math.exp(b - hi))


@njit(cache=True, nogil=True)
def _discrete_gaussian_log_cdf(sigma, r):
    """log P(U <= r), U discrete Gaussian (sigma), r an integer: with w_k = exp(-k^2 / (2 sigma^2)),
    T(m) = sum_{k >= m} w_k and Z = 1 + 2 T(1), P(U <= r) = T(-r) / Z for r < 0 (symmetry) and
    1 - T(r + 1) / Z for r >= 0."""
    log_z = _log_add(0.0, math.log(2.0) + _discrete_gaussian_tail(sigma, 1.0))
    if r < 0.0:
        return _discrete_gaussian_tail(sigma, -r) - log_z
    return math.log1p(-math.exp(_discrete_gaussian_tail(sigma, r + 1.0) - log_z))


@njit(cache=True, nogil=True)
def log_noise_tail(kernel, scale, r):
    """The likelihood of a release that sits on a clipping bound (:mod:`engine.mechanisms.clipped`), as a
    function of r = s_dp - s: at the lower bound P(U <= r) (kernels 2, 4, 6, 8), at the upper bound
    P(U >= r) = P(-U <= -r) (kernels 3, 5, 7, 9), U the noise: 2/3 Laplace (scale b), 4/5 Gaussian (sigma),
    6/7 discrete Laplace (t), 8/9 discrete Gaussian (sigma). Up to a constant (that cancels in every ratio
    at a fixed s_dp) and never above 0, so exp() of it is also a valid ABC acceptance probability.

    Laplace: P(U <= r) = e^(r/b) / 2 for r < 0, 1 - e^(-r/b) / 2 otherwise. Discrete Laplace with
    q = e^(-1/t): P(U <= r) = q^(-r) / (1 + q) for r < 0, 1 - q^(r + 1) / (1 + q) for r >= 0.
    Gaussian: Phi(r / sigma). Discrete Gaussian: the sum of its pmf (:func:`_discrete_gaussian_log_cdf`)."""
    if kernel % 2 == 1:
        r = -r
    fam = kernel // 2
    if fam == 1:
        if r < 0.0:
            return r / scale - math.log(2.0)
        return math.log1p(-0.5 * math.exp(-r / scale))
    if fam == 2:
        return _log_ndtr(r / scale)
    if fam == 3:
        lq = -1.0 / scale
        log1q = math.log1p(math.exp(lq))
        if r < 0.0:
            return r / scale - log1q
        return math.log1p(-math.exp((r + 1.0) * lq - log1q))
    return _discrete_gaussian_log_cdf(scale, r)


@njit(cache=True, nogil=True)
def log_eta(s, sdp, kernel, scale):
    """log eta(s_dp | s) of a whole statistic, up to a constant: the entries' noise log-densities summed."""
    tot = 0.0
    for t in range(s.size):
        tot += log_noise(kernel, scale, sdp[t] - s[t])
    return tot


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


def stat_dim(p: int) -> int:
    """d = (p + 1) + 1 + p (p + 3) / 2, the number of released entries."""
    return (p + 1) + 1 + p * (p + 3) // 2


@njit(cache=True, nogil=True, inline="always")
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


@njit(cache=True, nogil=True, inline="always")
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
def simulate_into(rng, beta, n, chol, x_mean, sigma, lo, hi, z, t, prop, e, s):
    """s = the statistic of n records drawn at (beta, sigma): :func:`draw_record` then :func:`record_stat` for
    each record, summed into ``s``, written out in one loop so that no record passes through a scratch array
    (``z`` and ``e`` are scratch of sizes p + 2 and p; ``t`` and ``prop`` are unused). The same operations in the
    same order as the two functions, so the same sums to the bit; 28 ns a record instead of 47 (p = 2)."""
    p = beta.size - 1
    s[:] = 0.0
    z[0] = 1.0
    for i in range(n):
        for j in range(p):
            e[j] = rng.standard_normal()
        mu_y = beta[0]
        for j in range(p):
            v = x_mean[j]
            for k in range(j + 1):
                v += chol[j, k] * e[k]
            mu_y += beta[j + 1] * v
            if v < lo[j]:
                v = lo[j]
            elif v > hi[j]:
                v = hi[j]
            z[j + 1] = 2.0 * (v - lo[j]) / (hi[j] - lo[j]) - 1.0
        v = mu_y + sigma * rng.standard_normal()
        if v < lo[p]:
            v = lo[p]
        elif v > hi[p]:
            v = hi[p]
        yt = 2.0 * (v - lo[p]) / (hi[p] - lo[p]) - 1.0
        for j in range(p + 1):
            s[j] += z[j] * yt
        s[p + 1] += yt * yt
        idx = p + 2
        for k in range(1, p + 1):
            for j in range(k + 1):
                s[idx] += z[j] * z[k]
                idx += 1


@njit(cache=True, nogil=True)
def simulate_statistic(rng, betas, sigmas, n, chol, x_mean, lo, hi, out):
    """out[r] = s(x, y) of n records drawn from the model at betas[r] and sigmas[r], O(n p^2) each."""
    q = betas.shape[1]
    z = np.empty(q + 1)
    t = np.empty(out.shape[1])
    prop = np.empty(q)
    e = np.empty(q - 1)
    for r in range(betas.shape[0]):
        simulate_into(rng, betas[r], n, chol, x_mean, sigmas[r], lo, hi, z, t, prop, e, out[r])


@njit(cache=True, nogil=True)
def log_t_mixture(phi, means, chols, log_w, nu, w):
    """log of sum_c exp(log_w[c]) t_nu(phi; means[c], chols[c] chols[c]^T), up to a constant common to the
    components (log_w carries each component's weight and its -log |det chols[c]|)."""
    d = phi.size
    top = -np.inf
    vals = np.empty(log_w.size)
    for c in range(log_w.size):
        quad = 0.0
        for i in range(d):
            v = phi[i] - means[c, i]
            for j in range(i):
                v -= chols[c, i, j] * w[j]
            w[i] = v / chols[c, i, i]
            quad += w[i] * w[i]
        vals[c] = log_w[c] - 0.5 * (nu + d) * math.log1p(quad / nu)
        if vals[c] > top:
            top = vals[c]
    acc = 0.0
    for c in range(log_w.size):
        acc += math.exp(vals[c] - top)
    return top + math.log(acc)


@njit(cache=True, nogil=True)
def t_mixture_weights(ind_log_w, ind_chols, cum):
    """Cumulative weights of a t mixture's components into ``cum`` (weight c = exp(log_w[c]) |det chols[c]|,
    log_w net of log |det|, as :func:`log_t_mixture` takes them); returns their total."""
    d = ind_chols.shape[1]
    tot = 0.0
    for c in range(ind_log_w.size):
        det = 0.0
        for i in range(d):
            det += math.log(ind_chols[c, i, i])
        tot += math.exp(ind_log_w[c] + det)
        cum[c] = tot
    return tot


@njit(cache=True, nogil=True, inline="always")
def random_walk_point(phi, chol, z, out):
    """A random-walk proposal out = phi + chol z, ``chol`` lower-triangular, from standard normals ``z``."""
    for i in range(phi.size):
        v = phi[i]
        for j in range(i + 1):
            v += chol[i, j] * z[j]
        out[i] = v


@njit(cache=True, nogil=True)
def t_mixture_point(rng, ind_means, ind_chols, cum, tot, nu, z, out):
    """A draw of the t mixture into ``out`` from standard normals ``z`` already drawn: a component c by its
    weight (one uniform), then out = means[c] + chols[c] z sqrt(nu / g), g ~ chi2_nu = 2 Gamma(nu / 2)."""
    d = z.size
    u = rng.random() * tot
    c = 0
    while c < cum.size - 1 and u >= cum[c]:
        c += 1
    f = math.sqrt(nu / (2.0 * rng.standard_gamma(0.5 * nu)))
    for i in range(d):
        v = ind_means[c, i]
        for j in range(i + 1):
            v += ind_chols[c, i, j] * z[j] * f
        out[i] = v
