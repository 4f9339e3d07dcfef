"""APPROXIMATE: Gibbs sampling on sufficient statistics with a normal (CLT) approximation
(Bernstein & Sheldon 2018, Algorithms 1-3).

This method is an approximation, not an exact sampler of p(theta | s_dp). It replaces the exact
law of the statistic, p(s | theta), by its central-limit normal, so its draws are right only as far
as that normal is right: at large n (tens of records per unit of the statistic's support and
theta away from the boundary), not at small n near a boundary (see "When to trust it" below).

Algorithm 1 (bounded statistic, Laplace noise of scale b = Delta / epsilon). The joint is
p(theta) p(s | theta) p(y | s) with y = s_dp. Two views of p(theta, s) are kept:

* for theta | s the exact exponential-family view: theta ~ p(theta; lambda') by conjugacy
  (Beta(a + s, b + n - s), Gamma(alpha + s, beta + n), Dirichlet(alpha + s), the normal update);
* for s | theta the CLT view: s ~ N(n mu(theta), n Sigma(theta)), mu and Sigma the mean and
  variance of one record's statistic (eq. 1).

Laplace noise is written as a scale mixture of normals (Park & Casella 2008): with
sigma^2 ~ Exp(rate 1 / (2 b^2)) and y | s, sigma^2 ~ N(s, sigma^2), y | s is Lap(s, b). Then

    s | theta, sigma^2, y  ∝  N(s; n mu, n Sigma) N(y; s, sigma^2)              (NormProduct)
                           =  N(m3, v3),  v3 = (1/(n Sigma) + 1/sigma^2)^-1,
                                          m3 = v3 (mu / Sigma + y / sigma^2),

restricted to the statistic's support (the paper's "rejection sampling until the values drawn are
valid"; here an exact truncated-normal draw, Robert 1995), and, with tau = 1/sigma^2 and r = y - s,

    p(tau | r) ∝ tau^(-3/2) exp(-r^2 tau / 2 - 1 / (2 b^2 tau)) = InverseGaussian(tau; 1/(b |r|), 1/b^2),

matching IG(tau; m, l) ∝ tau^(-3/2) exp(-l tau / (2 m^2) - l / (2 tau)) at l = 1/b^2, m = 1/(b |r|)
(the paper's epsilon / (Delta |y - s|) and epsilon^2 / Delta^2). Gaussian noise (sigma) needs no
augmentation: y | s ~ N(s, sigma^2) is already normal, so sigma^2 is fixed and step 3 is skipped.

One iteration: theta | s; s | theta, sigma^2, y; sigma^2 | s, y. Its cost does not depend on n.

Clamped statistics (poisson_gamma with ``upper``, normal_known_sd) -- Algorithm 2, adapted.
The release is s_hat = sum t_hat(x_i) with t_hat the *clamped* record (min(x, upper), or x clipped
to [lo, hi]), which is not sufficient; the paper redacts records outside [a, b] instead of clamping
them and models three independent region sums with the random-sum CLT (Prop. 1, Algorithm 3). With
clamping the record carries both statistics, t(x) = (x, t_hat(x)), and both sums are sums of the
same i.i.d. records, so the plain bivariate CLT applies:

    (s, s_hat) ~ N(n m, n C),  m = (E x, E t_hat(x)),  C = Cov(x, t_hat(x))  under theta,

with the moments in closed form (clamped Poisson: finite sums of the pmf over 0..upper-1; clipped
normal: truncated-normal moments from Phi and phi). This keeps the correlation between s and s_hat
that the paper's independent region sums drop. One iteration (a blocked Gibbs step):

1. theta | s by conjugacy on the full (latent) statistic s = sum x_i;
2. s_hat | theta, sigma^2, y: NormProduct of N(n m2, n C22) and N(y, sigma^2), truncated to
   [0, n upper] or [n lo, n hi];
3. s | s_hat, theta: the bivariate normal's conditional N(n m1 + C12/C22 (s_hat - n m2),
   n (C11 - C12^2 / C22)), truncated to s >= s_hat for the Poisson (a record is at least its clamp);
4. 1/sigma^2 | y - s_hat by the inverse-Gaussian update above.

(The paper's Algorithm 2 draws s marginally, then theta, then a fresh s_hat from its prior; drawing
(s_hat, s) jointly given y, as here, is the blocked Gibbs step of the same approximate model.)
The unclamped poisson_gamma statistic is unbounded and its default sensitivity 1 follows Gong's
count convention; the sampler uses Algorithm 1 with the mechanism's scale as given.

dirichlet_multinomial: the k counts sum to n, so the CLT covariance n (diag p - p p^T) is singular;
the sampler works with the first k - 1 counts s', whose precision is (diag(1/p') + 1 1^T / p_k) / n,
and y_k enters through s_k = n - 1^T s'. The product of normals is then

    precision P = (diag(1/p') + 1 1^T / p_k) / n + diag(1/sigma'^2) + 1 1^T / sigma_k^2,
    P mean   = 1 / p_k + y' / sigma'^2 + (n - y_k) / sigma_k^2,

restricted to {s' >= 0, 1^T s' <= n}: up to 20 joint draws (Cholesky) are tried and the first
inside is kept (exact rejection sampling from the truncated normal); if none is, one sweep of
coordinate-wise exact truncated-normal conditionals is made from the current s'. Both leave the
truncated normal invariant and the probability of falling back does not depend on the current
state, so the mixture does too.

When to trust it: the CLT error of p(s | theta) is of relative order skewness / 6 =
(1 - 2 theta) / (6 sqrt(n theta (1 - theta))) for the binomial (the first Edgeworth term), so the
draws match the exact posterior at large n and for theta away from 0 and 1, and the approximation
matters only when the noise does not swamp it (b not much larger than the statistic's sd sqrt(n
Sigma)). At small n with theta near a boundary and moderate noise, the continuous truncated normal
in place of the discrete, skewed binomial misplaces mass and the posterior is miscalibrated
(tests/test_bernstein_sheldon.py shows both). The convergence verdict (R-hat, ESS) applies as to
every MCMC method; it says nothing about the approximation.
"""
from __future__ import annotations

import math
import time

import numpy as np
from numba import njit

from ..core.chains import kept, run_chains
from ..core.results import Problem, Result
from ..kernels.shared import cholesky_into
from .base import Method

__all__ = ["bernstein_sheldon", "record_moments", "truncated_normal", "METHOD", "APPROXIMATION", "MODELS",
           "MECHANISMS"]

MODELS = ("beta_binomial", "dirichlet_multinomial", "poisson_gamma", "normal_known_sd")
MECHANISMS = ("laplace", "gaussian")
APPROXIMATION = ("approximate: normal (CLT) approximation to p(s | theta) (Bernstein & Sheldon 2018); "
                 "trust it at large n, not at small n near a boundary")

_BINOMIAL, _POISSON, _POISSON_CLAMPED, _NORMAL = 0, 1, 2, 3
_SQRT2 = math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_MAX_JOINT_TRIES = 20


# --------------------------------------------------------------------------- truncated normal
@njit(cache=True, nogil=True)
def _tn_right(rng, a, b):
    """Z ~ N(0, 1) restricted to [a, b], 0 <= a < b <= inf (Robert 1995)."""
    if (b - a) * (a + b) < 2.0:
        # uniform proposal on [a, b]; acceptance exp(-(z^2 - a^2) / 2) >= exp(-1)
        while True:
            z = a + (b - a) * rng.random()
            if rng.random() <= math.exp(-0.5 * (z * z - a * a)):
                return z
    if a < 0.5:
        # b^2 - a^2 >= 2 gives b > 1.41, so P(a <= Z <= b) >= P(0.5 <= Z <= 1.41) ~ 0.23
        while True:
            z = rng.standard_normal()
            if a <= z <= b:
                return z
    alpha = 0.5 * (a + math.sqrt(a * a + 4.0))  # optimal rate of the translated exponential
    while True:
        z = a + rng.standard_exponential() / alpha
        if z <= b and rng.random() <= math.exp(-0.5 * (z - alpha) * (z - alpha)):
            return z


@njit(cache=True, nogil=True)
def _tn_std(rng, a, b):
    if a >= 0.0:
        return _tn_right(rng, a, b)
    if b <= 0.0:
        return -_tn_right(rng, -b, -a)
    if b - a < 1.0:
        # |z| < 1 on the interval: uniform proposal accepted with probability exp(-z^2/2) >= exp(-1/2)
        while True:
            z = a + (b - a) * rng.random()
            if rng.random() <= math.exp(-0.5 * z * z):
                return z
    while True:  # an interval around 0 at least 1 wide holds at least Phi(1) - 1/2 ~ 0.34 of the mass
        z = rng.standard_normal()
        if a <= z <= b:
            return z


@njit(cache=True, nogil=True)
def truncated_normal(rng, mean, sd, lo, hi):
    """An exact draw from N(mean, sd^2) restricted to [lo, hi] (either bound may be infinite)."""
    if not sd > 0.0:
        return min(max(mean, lo), hi)
    a = (lo - mean) / sd
    b = (hi - mean) / sd
    if a >= b:
        return min(max(mean, lo), hi)
    return mean + sd * _tn_std(rng, a, b)


# --------------------------------------------------------------------------- record moments
@njit(cache=True, nogil=True)
def _phi(x):
    return _INV_SQRT_2PI * math.exp(-0.5 * x * x)


@njit(cache=True, nogil=True)
def _Phi(x):
    return 0.5 * math.erfc(-x / _SQRT2)


@njit(cache=True, nogil=True)
def record_moments(code, theta, par, out):
    """Per-record moments under theta: out = (E t, E t_hat, Var t, Cov(t, t_hat), Var t_hat).

    t is the conjugate statistic of one record, t_hat the released (clamped) one; they coincide
    without a clamp. Codes: 0 Bernoulli, 1 Poisson, 2 Poisson clamped at par[3], 3 normal with sd
    par[1] clipped to [par[2], par[3]].
    """
    if code == 0:
        v = theta * (1.0 - theta)
        out[0] = theta
        out[1] = theta
        out[2] = v
        out[3] = v
        out[4] = v
    elif code == 1:
        out[0] = theta
        out[1] = theta
        out[2] = theta
        out[3] = theta
        out[4] = theta
    elif code == 2:
        lam = max(theta, 1e-300)
        upper = int(par[3])
        width = 15.0 * math.sqrt(lam) + 15.0
        j0 = max(0, int(math.floor(lam - width)))
        j1 = min(upper - 1, int(math.ceil(lam + width)))
        loglam = math.log(lam)
        p_below = 0.0
        s1 = 0.0
        s2 = 0.0
        for j in range(j0, j1 + 1):
            pj = math.exp(-lam + j * loglam - math.lgamma(j + 1.0))
            p_below += pj
            s1 += j * pj
            s2 += j * j * pj
        tail = max(0.0, 1.0 - p_below)
        ec = s1 + upper * tail
        ec2 = s2 + upper * upper * tail
        exc = s2 + upper * max(0.0, lam - s1)
        out[0] = lam
        out[1] = ec
        out[2] = lam
        out[3] = exc - lam * ec
        out[4] = max(0.0, ec2 - ec * ec)
    else:
        mu = theta
        sd = par[1]
        lo = par[2]
        hi = par[3]
        al = (lo - mu) / sd
        be = (hi - mu) / sd
        p_lo = _Phi(al)
        p_hi = _Phi(-be)
        p_mid = max(0.0, 1.0 - p_lo - p_hi)
        ez = _phi(al) - _phi(be)
        ez2 = p_mid + al * _phi(al) - be * _phi(be)
        ex_mid = mu * p_mid + sd * ez
        ex2_mid = mu * mu * p_mid + 2.0 * mu * sd * ez + sd * sd * ez2
        ec = lo * p_lo + hi * p_hi + ex_mid
        ec2 = lo * lo * p_lo + hi * hi * p_hi + ex2_mid
        exc = lo * (mu * p_lo - sd * _phi(al)) + hi * (mu * p_hi + sd * _phi(be)) + ex2_mid
        out[0] = mu
        out[1] = ec
        out[2] = sd * sd
        out[3] = exc - mu * ec
        out[4] = max(0.0, ec2 - ec * ec)


# --------------------------------------------------------------------------- one-dimensional chain
@njit(cache=True, nogil=True)
def _theta_given_s(rng, code, par, s):
    """theta | s by conjugacy on the full statistic (Algorithm 1 line 3)."""
    n = par[0]
    if code == 0:
        return rng.beta(par[1] + s, par[2] + n - s)
    if code == 1 or code == 2:
        return rng.gamma(par[1] + s, 1.0 / (par[2] + n))
    prec = 1.0 / (par[5] * par[5]) + n / (par[1] * par[1])
    mean = (par[4] / (par[5] * par[5]) + s / (par[1] * par[1])) / prec
    return mean + rng.standard_normal() / math.sqrt(prec)


@njit(cache=True, nogil=True)
def chain_1d(rng, code, par, y, laplace, scale, state, n_iter, out_theta, out_s):
    """``n_iter`` iterations of Algorithm 1 (codes 0, 1) or the clamped Algorithm 2 (codes 2, 3).

    ``state`` = (s, s_hat, sigma^2) is updated in place; ``out_theta`` and ``out_s`` (s_hat) get one
    value per iteration. ``par`` = (n, prior..., clamp...) as in :func:`record_moments`.
    """
    n = par[0]
    mom = np.empty(5)
    if code == 0:
        lo_hat, hi_hat = 0.0, n
    elif code == 1:
        lo_hat, hi_hat = 0.0, np.inf
    elif code == 2:
        lo_hat, hi_hat = 0.0, n * par[3]
    else:
        lo_hat, hi_hat = n * par[2], n * par[3]
    s, s_hat, sig2 = state[0], state[1], state[2]
    for it in range(n_iter):
        theta = _theta_given_s(rng, code, par, s)
        record_moments(code, theta, par, mom)
        v_hat = n * mom[4]
        m_hat = n * mom[1]
        if v_hat > 0.0:
            prec = 1.0 / v_hat + 1.0 / sig2
            mean = (m_hat / v_hat + y / sig2) / prec
            s_hat = truncated_normal(rng, mean, 1.0 / math.sqrt(prec), lo_hat, hi_hat)
        else:  # the statistic is (numerically) a constant under theta
            s_hat = min(max(m_hat, lo_hat), hi_hat)
        if code <= 1:
            s = s_hat
        else:
            c22 = mom[4]
            slope = mom[3] / c22 if c22 > 1e-12 * max(1.0, mom[1] * mom[1]) else 0.0
            cond_var = max(0.0, n * (mom[2] - slope * mom[3]))
            cond_mean = n * mom[0] + slope * (s_hat - m_hat)
            lo_s = s_hat if code == 2 else -np.inf
            s = truncated_normal(rng, cond_mean, math.sqrt(cond_var), lo_s, np.inf)
        if laplace:
            r = max(abs(y - s_hat), 1e-12 * scale)
            sig2 = 1.0 / rng.wald(1.0 / (scale * r), 1.0 / (scale * scale))
        out_theta[it] = theta
        out_s[it] = s_hat
    state[0], state[1], state[2] = s, s_hat, sig2


# --------------------------------------------------------------------------- Dirichlet-multinomial chain
@njit(cache=True, nogil=True)
def chain_dirichlet(rng, n, alpha, y, laplace, scale, s, sig2, n_iter, out_theta):
    """``n_iter`` iterations for the k counts; ``s`` (k) and ``sig2`` (k) are updated in place."""
    k = alpha.size
    km = k - 1
    p = np.empty(k)
    prec = np.empty((km, km))
    chol = np.zeros((km, km))
    h = np.empty(km)
    mean = np.empty(km)
    z = np.empty(km)
    prop = np.empty(km)
    for it in range(n_iter):
        tot = 0.0
        for j in range(k):
            p[j] = rng.gamma(alpha[j] + s[j], 1.0)
            tot += p[j]
        for j in range(k):
            p[j] /= tot
            out_theta[it, j] = p[j]
        pk = max(p[km], 1e-12)
        for i in range(km):
            for j in range(km):
                prec[i, j] = (1.0 / pk) / n + 1.0 / sig2[km]
            prec[i, i] += 1.0 / (max(p[i], 1e-12) * n) + 1.0 / sig2[i]
            h[i] = 1.0 / pk + y[i] / sig2[i] + (n - y[km]) / sig2[km]
        ok = cholesky_into(prec, chol)
        done = False
        if ok:
            # mean = P^-1 h: forward then backward substitution with L L^T = P
            for i in range(km):
                v = h[i]
                for m in range(i):
                    v -= chol[i, m] * z[m]
                z[i] = v / chol[i, i]
            for i in range(km - 1, -1, -1):
                v = z[i]
                for m in range(i + 1, km):
                    v -= chol[m, i] * mean[m]
                mean[i] = v / chol[i, i]
            for _ in range(_MAX_JOINT_TRIES):
                for i in range(km):
                    z[i] = rng.standard_normal()
                # x = L^-T z has covariance P^-1
                for i in range(km - 1, -1, -1):
                    v = z[i]
                    for m in range(i + 1, km):
                        v -= chol[m, i] * prop[m]
                    prop[i] = v / chol[i, i]
                total = 0.0
                inside = True
                for i in range(km):
                    prop[i] += mean[i]
                    total += prop[i]
                    if prop[i] < 0.0:
                        inside = False
                if inside and total <= n:
                    for i in range(km):
                        s[i] = prop[i]
                    done = True
                    break
        if not done:
            # one sweep of exact truncated-normal full conditionals of the truncated normal
            for j in range(km):
                v = h[j]
                rest = 0.0
                for i in range(km):
                    if i != j:
                        v -= prec[j, i] * s[i]
                        rest += s[i]
                s[j] = truncated_normal(rng, v / prec[j, j], 1.0 / math.sqrt(prec[j, j]), 0.0, max(0.0, n - rest))
        total = 0.0
        for i in range(km):
            total += s[i]
        s[km] = max(0.0, n - total)
        if laplace:
            for j in range(k):
                r = max(abs(y[j] - s[j]), 1e-12 * scale)
                sig2[j] = 1.0 / rng.wald(1.0 / (scale * r), 1.0 / (scale * scale))


# --------------------------------------------------------------------------- driver
def _check(problem: Problem) -> None:
    model, mech = problem.model, problem.mechanism
    mname, kname = getattr(model, "name", "custom"), getattr(mech, "name", type(mech).__name__)
    if mname not in MODELS or kname not in MECHANISMS:
        raise ValueError(f"method.name = 'bernstein_sheldon' is invalid for model {mname} with mechanism {kname}: "
                         f"allowed models {', '.join(MODELS)} with mechanisms {', '.join(MECHANISMS)}")


def _setup(problem: Problem):
    model = problem.model
    n = float(model.n)
    if model.name == "beta_binomial":
        return _BINOMIAL, np.array([n, model.a, model.b])
    if model.name == "poisson_gamma":
        if model.upper is None:
            return _POISSON, np.array([n, model.alpha, model.beta])
        return _POISSON_CLAMPED, np.array([n, model.alpha, model.beta, float(model.upper)])
    if model.name == "normal_known_sd":
        return _NORMAL, np.array([n, model.sd, model.lo, model.hi, model.prior_mean, model.prior_sd])
    return -1, np.array([n])


def _run_chain(problem, code, par, rng, warmup, draws, block, progress, c, tick, stop):
    model, mech = problem.model, problem.mechanism
    laplace = mech.name == "laplace"
    scale = float(mech.scale)
    y = np.asarray(problem.s_dp, float)
    total = warmup + draws
    k = len(model.param_names)
    theta = np.empty((total, k))
    s_track = np.empty(total)
    start = np.asarray(model.project(y), float)  # the naive start: s_dp moved onto the statistic's support
    sig2_0 = 2.0 * scale * scale if laplace else scale * scale  # E sigma^2 = 2 b^2 under Exp(1/(2 b^2))
    if code < 0:
        s = start.copy()
        sig2 = np.full(k, sig2_0)
    else:
        state = np.array([start[0], start[0], sig2_0])
    done = 0
    while done < total and not stop.is_set():
        m = min(block, total - done)
        if code < 0:
            chain_dirichlet(rng, float(model.n), np.asarray(model.alpha, float), y, laplace, scale, s, sig2, m,
                            theta[done:done + m])
            s_track[done:done + m] = np.nan
        else:
            chain_1d(rng, code, par, float(y[0]), laplace, scale, state, m, theta[done:done + m, 0],
                     s_track[done:done + m])
        done += m
        progress[c] = done
        tick()
    return theta, s_track


def bernstein_sheldon(problem: Problem, rng: np.random.Generator, *, chains: int = 4, draws: int = 2000,
                      warmup: int = 500, on_progress=None, parallel: bool = True) -> Result:
    """APPROXIMATE draws from p(theta | s_dp): Gibbs on the sufficient statistic with the normal (CLT)
    approximation to p(s | theta) (Bernstein & Sheldon 2018, Algorithms 1-3; see the module docstring).

    Parameters
    ----------
    problem : Problem
        beta_binomial, dirichlet_multinomial, poisson_gamma (with or without ``upper``) or
        normal_known_sd, with Laplace noise (scale-mixture augmentation) or Gaussian noise (y | s is
        normal directly, no augmentation).
    rng : numpy.random.Generator
        Parent stream; chain c runs on ``rng.spawn(chains)[c]``.
    chains, draws, warmup : int
        Chains, kept and discarded iterations per chain. One iteration costs O(1) in n (O(k^2) for
        k cells, O(min(upper, sqrt(lam))) for the clamped Poisson's moments).
    on_progress : callable(done, total), optional
        Returning ``False`` stops every chain at its next block (:mod:`engine.core.chains`).

    Returns
    -------
    Result
        ``method = "bernstein_sheldon"``; ``sample_stats["s_hat"]`` the latent released statistic
        (one-dimensional models); ``info["claim"] = "approximate"`` and ``info["approximation"]``
        say what is approximated.
    """
    t0 = time.perf_counter()
    _check(problem)
    code, par = _setup(problem)
    if code < 0 and problem.model.k < 2:
        raise ValueError("model.alpha is invalid for bernstein_sheldon: at least 2 cells")
    streams = rng.spawn(chains)
    progress = np.zeros(chains, dtype=np.int64)
    block = max(1, min(warmup + draws, 20_000 // max(1, problem.model.k or 1)))
    outs, stopped = run_chains(
        lambda c, tick, stop: _run_chain(problem, code, par, streams[c], warmup, draws, block, progress, c, tick, stop),
        chains, warmup + draws, progress, on_progress, parallel=parallel)
    keep, n_kept = kept(progress, warmup, draws)
    sl = slice(warmup, warmup + n_kept)
    theta = np.stack([outs[c][0][sl] for c in keep])
    stats = {} if code < 0 else {"s_hat": np.stack([outs[c][1][sl] for c in keep])}
    algorithm = {_BINOMIAL: "Algorithm 1", _POISSON: "Algorithm 1", -1: "Algorithm 1 (k - 1 free counts)"}.get(
        code, "Algorithm 2 adapted to clamping (bivariate CLT of the full and clamped sums)")
    return Result(
        method="bernstein_sheldon",
        param_names=tuple(problem.model.param_names),
        draws=theta,
        s_dp=problem.s_dp,
        sample_stats=stats,
        info={"claim": "approximate", "approximation": APPROXIMATION, "note": APPROXIMATION,
              "algorithm": algorithm, "augmentation": problem.mechanism.name == "laplace",
              "chains": len(keep), "draws": n_kept, "warmup": warmup,
              "stopped": "cancelled" if stopped else None, "compiled": True, "mcmc": True,
              "wall_time_s": time.perf_counter() - t0},
    )


def _run(problem, rng, settings, on_progress):
    settings.pop("grid_size", None)
    return bernstein_sheldon(problem, rng, on_progress=on_progress, **settings)


METHOD = Method(name="bernstein_sheldon", claim="approximate", paper="Bernstein & Sheldon 2018, Alg. 1-3",
                run=_run, mcmc=True)
