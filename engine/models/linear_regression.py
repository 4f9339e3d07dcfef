"""Clamped linear regression with a random design (``linear_regression``; Ju et al. 2022, Sec. 5;
dapper Example 3); the class docstring derives the statistic, the sensitivity and the conjugate update.

:mod:`engine.models` is the registry that names every model, with the table of their records,
statistics, priors and sensitivities.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
from scipy import special, stats

from ..core.validation import fail, finite, model_positive, number_list, positive, positive_int, record_field
from ..kernels.shared import simulate_statistic, statistics
from .base import record_rows

__all__ = ["LinearRegression", "INFO", "KEYS", "build", "MAX_P"]

#: Parameters, prior keys and their defaults (for the spec loader, the README and the app); paper 000
#: Sec. 5 / dapper Example 3: p = 2, x ~ N((0.9, -1.17), I), sigma^2 = 2, clamp [-10, 10], tau = 2.
INFO = {"params": ("beta",),
        "prior": {"p": 2, "x_mean": [0.9, -1.17], "x_cov": [[1.0, 0.0], [0.0, 1.0]],
                  "sigma": math.sqrt(2.0), "lo": -10.0, "hi": 10.0, "prior_sd": 2.0},
        "simulate": {"beta": [-1.79, -2.89, -0.66]}}
#: The [model] keys besides n.
KEYS = {"p", "x_mean", "x_cov", "sigma", "lo", "hi", "prior_sd", "sigma_prior"}


@dataclass(frozen=True)
class LinearRegression:
    r"""Clamped linear regression with a random design (Ju et al. 2022, Sec. 5; dapper Example 3).

    Records r_i = (x_i, y_i), x_i in R^p, i = 1..n:

        x_i ~ N_p(m, Sigma),   y_i | x_i ~ N(beta_0 + x_i^T beta_{1:p}, sigma^2),   beta ~ N(0, tau^2 I_{p+1}),

    with m (``x_mean``), Sigma (``x_cov``), sigma and tau (``prior_sd``) known. Parameters
    ``beta[0]`` (intercept) .. ``beta[p]``. CSV records have the columns ``x1..xp,y``.

    Unknown sigma^2 (``sigma_prior = (a, b)``, spec ``sigma_prior = { a = .., b = .. }``):
    sigma^2 ~ InvGamma(a, b) (shape a, scale b) independent of beta; the parameters are then
    ``beta[0..p]`` and ``sigma2``. DA-MCMC adds the Gibbs step sigma^2 | beta, x, y ~
    InvGamma(a + n/2, b + RSS/2). Given a statistic (X^T X, X^T y, y^T y) the posterior is not
    conjugate (independent priors), but sigma^2's marginal is one-dimensional:
    log p(sigma^2 | S) = log InvGamma(sigma^2; a, b) - (n/2) log sigma^2 - (1/2) log |A|
    - (y^T y / sigma^2 - mu^T A mu) / 2 with A = X^T X / sigma^2 + I / tau^2, mu = A^{-1} X^T y / sigma^2
    (beta integrated out), so ``posterior_sample`` draws sigma^2 from it on an adaptive grid of
    log sigma^2 and then beta | sigma^2 ~ N(mu, A^{-1}) exactly; the marginals are the matching
    grid mixtures (confidential and naive posteriors).

    Release. Each column c (x_1..x_p, then y) is clamped to [lo_c, hi_c] and normalised to [-1, 1],
    v~ = 2 ([v]_lo^hi - lo) / (hi - lo) - 1; with z~ = (1, x~_1..x~_p, y~) the released statistic
    is s = sum_i t(r_i) with t(r) = (x~^T y~, y~^T y~, the unique entries of x~^T x~ without the
    constant (0, 0) entry), in this order (dapper's ``st_f``)::

        s[0..p]        sum_i x~_j y~      for j = 0..p (x~_0 = 1, so s[0] = sum y~)
        s[p + 1]       sum_i y~^2
        s[p + 2..d-1]  sum_i x~_j x~_k    for k = 1..p, and j = 0..k within k (the upper triangle of
                                          x~^T x~ column by column, (0, 0) = n left out)

    d = (p + 1) + 1 + p (p + 3) / 2 = (p + 1)(p + 2) / 2 + (p + 1) entries; for p = 2 the order is
    (sum y~, sum x~1 y~, sum x~2 y~, sum y~^2, sum x~1, sum x~1^2, sum x~2, sum x~1 x~2, sum x~2^2).

    Sensitivity (bounded DP: n public, a neighbour replaces one record). Write the m = p + 1
    normalised coordinates of two records as a, b in [-1, 1]^m and d_j = |a_j - b_j|,
    s_j = |a_j + b_j|; then d_j + s_j = 2 max(|a_j|, |b_j|) <= 2. Every coordinate appears once
    linearly (change d_j), once squared (|a_j^2 - b_j^2| = d_j s_j) and in one cross product with
    every other coordinate, where a_j a_k - b_j b_k = ((a_j - b_j)(a_k + b_k) + (a_j + b_j)(a_k - b_k)) / 2
    changes by at most (d_j s_k + s_j d_k) / 2. With D = sum d_j and S = sum s_j the L1 change is

        <= D + sum_j d_j s_j + (D S - sum_j d_j s_j) / 2 = D + (sum_j d_j s_j + D S) / 2
        <= D + (2D - D^2/m + D (2m - D)) / 2          (s_j = 2 - d_j; sum d_j^2 >= D^2 / m)
        =  (m + 2) D - (m + 1) D^2 / (2m)  <=  m (m + 2)^2 / (2 (m + 1))   (at D = m (m + 2)/(m + 1)),

    reached by a = (-1, .., -1), b = (1/(m+1), .., 1/(m+1)), so the true L1 sensitivity is
    Delta_1* = (p + 1)(p + 3)^2 / (2 (p + 2)) (5.33, 9.38, 14.4 for p = 1, 2, 3). The paper's
    Delta = p^2 + 3p + 3 (the issue's contract and the default here) is larger for every p:
    2 (p + 2)(p^2 + 3p + 3) - (p + 1)(p + 3)^2 = p^3 + 3p^2 + 3p + 3 > 0, so Laplace(Delta/epsilon)
    on each entry is epsilon-DP (conservative). dapper's footnote calls p^2 + 3p + 3 an error and uses
    the entry-by-entry bound p^2 + 4p + 3 (2 per linear and cross entry, 1 per square); both are
    valid upper bounds, the paper's is the tighter of the two. L2 (Gaussian by rho): per coordinate
    d_j^2 + d_j^2 s_j^2 <= d_j^2 (1 + (2 - d_j)^2) <= 4 and every cross entry moves by at most 2, so
    Delta_2 <= sqrt(4m + 4 m (m - 1) / 2) = sqrt(2 (p + 1)(p + 2)) (the default; the largest change
    found numerically, at vertices of the cube, is smaller: 2 sqrt(floor((p+2)/2) ceil((p+2)/2))).

    Conjugacy and the clamp. The latent records of DA-MCMC are the unclamped (x, y): the model is
    the regression above, and the release is computed from the clamped versions of those records.
    Since s_dp depends on beta only through (x, y), p(beta | x, y, s_dp) = p(beta | x, y), the
    ordinary conjugate update on the raw records,

        beta | x, y ~ N(mu_n, Sigma_n),  Sigma_n = (X^T X / sigma^2 + I / tau^2)^{-1},
        mu_n = Sigma_n X^T y / sigma^2,  X = (1, x),

    which is exactly what paper 000 Sec. 5 and dapper's ``post_f`` use. Clamping enters only
    through eta(s_dp | s(x, y)). (The posterior of beta given the *clamped* data, were only those
    known, would not be normal: a clamped y is a censored observation.) ``suff`` is the raw
    statistic (X^T X flattened row-major, then X^T y).
    """

    n: int
    p: int = 2
    x_mean: tuple = (0.9, -1.17)
    x_cov: tuple = ((1.0, 0.0), (0.0, 1.0))
    sigma: float = math.sqrt(2.0)
    lo: tuple = (-10.0, -10.0, -10.0)
    hi: tuple = (10.0, 10.0, 10.0)
    prior_sd: float = 2.0
    sigma_prior: tuple | None = None

    name = "linear_regression"
    k = None  # no categorical record: randomized response does not apply
    integer_statistic = False
    support = (-np.inf, np.inf)
    methods = ("da_mcmc", "naive", "abc_rejection", "pseudo_marginal", "auto")
    refusals = {
        "exact": "no closed form or grid: the law of the clamped d-dimensional statistic given beta is not "
                 "tractable; da_mcmc, pseudo_marginal and abc_rejection are exact samplers for it",
        "ops": "one-posterior sampling is private only for a bounded log-likelihood per record, which the "
               "normal regression likelihood of unbounded records does not have",
        "bernstein_sheldon": "its CLT step needs the mean and covariance of the clamped, normalised "
                             "statistic given beta (moments of a clamped multivariate normal, no closed form) "
                             "and its conjugate beta | s step holds only when clamping never binds",
        "mcem": "the MLE by Monte Carlo EM is built for the one-parameter models",
        "rjmcmc": "an unknown n is supported for the one-parameter models only",
    }

    @property
    def stat_dim(self) -> int:
        return (self.p + 1) + 1 + self.p * (self.p + 3) // 2

    @property
    def unknown_sigma(self) -> bool:
        return self.sigma_prior is not None

    @property
    def param_names(self):
        return tuple(f"beta[{j}]" for j in range(self.p + 1)) + (("sigma2",) if self.unknown_sigma else ())

    @property
    def param_support(self):
        """Each bounded parameter's range, for drawing its density (figures.kde): sigma^2 from 0."""
        return {"sigma2": (0.0, math.inf)} if self.unknown_sigma else {}

    @property
    def csv_columns(self) -> list:
        return [f"x{j + 1}" for j in range(self.p)] + ["y"]

    @property
    def chol(self) -> np.ndarray:
        return np.linalg.cholesky(np.asarray(self.x_cov, float))

    def stat_labels(self) -> list:
        """Names of the released entries in order (z~_0 = 1, z~_j = x~_j, y~)."""
        xs = ["1"] + [f"x{j}" for j in range(1, self.p + 1)]
        out = [f"sum {xs[j]}*y" if j else "sum y" for j in range(self.p + 1)] + ["sum y^2"]
        for k in range(1, self.p + 1):
            out += [f"sum {xs[k]}" if j == 0 else f"sum {xs[j]}*{xs[k]}" for j in range(k + 1)]
        return out

    def default_sensitivity(self, l2: bool = False) -> float:
        """L1: the paper's p^2 + 3p + 3; L2: sqrt(2 (p + 1)(p + 2)) (derivations in the class docstring)."""
        p = self.p
        return math.sqrt(2.0 * (p + 1) * (p + 2)) if l2 else float(p * p + 3 * p + 3)

    @property
    def true_sensitivity(self) -> float | None:
        """The exact L1 sensitivity (p + 1)(p + 3)^2 / (2 (p + 2))."""
        p = self.p
        return (p + 1) * (p + 3) ** 2 / (2.0 * (p + 2))

    @property
    def statistic_range(self):
        lo = np.full(self.stat_dim, -float(self.n))
        lo[self.p + 1] = 0.0
        for k in range(1, self.p + 1):  # squares x~_k^2 are >= 0
            lo[self._index(k, k)] = 0.0
        return lo, np.full(self.stat_dim, float(self.n))

    def _index(self, j, k):
        """Position of sum z~_j z~_k (0 <= j <= k, k >= 1) in s."""
        return self.p + 2 + (k * (k + 1)) // 2 - 1 + j

    def _bounds(self):
        return np.asarray(self.lo, float), np.asarray(self.hi, float)

    def sample_prior(self, rng, size):
        beta = rng.normal(0.0, self.prior_sd, size=(size, self.p + 1))
        if not self.unknown_sigma:
            return beta
        a, b = self.sigma_prior
        return np.column_stack([beta, b / rng.gamma(a, 1.0, size=size)])

    def _sigmas(self, theta):
        """sigma for each row of theta (its sigma2 column when sigma is unknown)."""
        theta = np.atleast_2d(theta)
        if self.unknown_sigma:
            return np.sqrt(theta[:, self.p + 1])
        return np.full(theta.shape[0], self.sigma)

    def sample_records(self, rng, theta, n=None):
        """(n, p + 1) array with columns x1..xp, y (unclamped)."""
        n = n or self.n
        beta = np.asarray(theta, float)[:self.p + 1]
        sigma = float(self._sigmas(np.asarray(theta, float))[0])
        x = rng.multivariate_normal(np.asarray(self.x_mean, float), np.asarray(self.x_cov, float), size=n,
                                    method="cholesky")
        y = beta[0] + x @ beta[1:] + sigma * rng.standard_normal(n)
        return np.column_stack([x, y])

    def statistic(self, records):
        r = np.ascontiguousarray(records, dtype=float)
        s = np.empty(self.stat_dim)
        lo, hi = self._bounds()
        statistics(r, lo, hi, s, np.empty((self.p + 1, self.p + 1)), np.empty(self.p + 1), np.empty(1))
        return s

    def record_statistics(self, records):
        """t(r_i) of each record, an (n, d) array (the terms whose sum is ``statistic``), in NumPy."""
        r = np.asarray(records, float)
        lo, hi = self._bounds()
        z = 2.0 * (np.clip(r, lo, hi) - lo) / (hi - lo) - 1.0
        zx = np.column_stack([np.ones(r.shape[0]), z[:, :self.p]])
        yt = z[:, self.p]
        cols = [zx[:, j] * yt for j in range(self.p + 1)] + [yt * yt]
        cols += [zx[:, j] * zx[:, k] for k in range(1, self.p + 1) for j in range(k + 1)]
        return np.column_stack(cols)

    def surrogate_covariances(self, beta, noise_var, draws: int = 20_000):
        """(Cov(beta | s_dp) under a normal surrogate of the statistic's law, Cov(beta | x) given the raw
        records): the cost model of ``auto`` and the scale of the pseudo-marginal sampler's independence
        proposal (no acceptance ratio depends on them).

        Given beta, s is a sum of n i.i.d. terms t(r), so s ≈ N(n mu(beta), n Sigma(beta)); with noise of
        covariance noise_var I on top, s_dp ≈ N(n mu(beta), n Sigma + noise_var I), whose Fisher
        information about beta is n^2 G^T (n Sigma + noise_var I)^{-1} G with G = d mu / d beta; plus the
        prior's I / tau^2, its inverse is the first covariance. mu, Sigma and G come from ``draws`` records
        on fixed common normals (central differences, step 1e-3), so the result is smooth in beta and
        reproducible. The second is DA-MCMC's Gibbs conditional (X^T X / sigma^2 + I / tau^2)^{-1} at its
        expectation X^T X ≈ n E[(1, x)(1, x)^T] = n [[1, m^T], [m, Sigma_x + m m^T]]: the raw records know
        beta better than even a noise-free s, whose clamped y's are censored, so the ratio of the two is
        the inflation that sets DA-MCMC's mixing (:mod:`engine.methods.da_mcmc`)."""
        q = self.p + 1
        sigma = self.sigma if not self.unknown_sigma else math.sqrt(float(np.asarray(beta)[q]))
        sig, g = self._surrogate_moments(beta, draws)
        prior = np.eye(q) / self.prior_sd**2
        n = self.n
        priv = n * n * g.T @ np.linalg.solve(n * sig + noise_var * np.eye(sig.shape[0]), g) + prior
        m = np.asarray(self.x_mean, float)
        moments = np.block([[np.ones((1, 1)), m[None, :]], [m[:, None], np.asarray(self.x_cov, float) + np.outer(m, m)]])
        raw = n * moments / sigma**2 + prior
        return np.linalg.inv(priv), np.linalg.inv(raw)

    def _surrogate_moments(self, beta, draws: int = 20_000):
        """(Sigma(beta), G = d mu / d beta) of one record's term t(r) at beta, from ``draws`` records on fixed
        common normals (central differences, step 1e-3): :meth:`surrogate_covariances`' ingredients.

        A function of the model, beta and ``draws`` alone, kept for the last 64 of them (:func:`_moments_kept`):
        auto's plan asks for it three times at one beta (the surrogate covariances, the shift covariance, the shift
        moves' work), and the work budget's price of the run once more, 30 ms each at p = 2."""
        b = np.array(beta, dtype=float)
        sig, g = _moments_kept(self, repr(self), b.tobytes(), b.shape, draws)
        return sig.copy(), g.copy()

    def _surrogate_moments_computed(self, beta, draws: int = 20_000):
        """:meth:`_surrogate_moments`, computed."""
        q = self.p + 1
        e = np.random.default_rng(0).standard_normal((draws, q))
        sigma = self.sigma if not self.unknown_sigma else math.sqrt(float(np.asarray(beta)[q]))
        beta = np.asarray(beta, float)[:q]

        def terms(b):
            x = np.asarray(self.x_mean, float) + e[:, :self.p] @ self.chol.T
            return self.record_statistics(np.column_stack([x, b[0] + x @ b[1:] + sigma * e[:, self.p]]))

        t0 = terms(beta)
        sig = np.cov(t0, rowvar=False)
        g = np.empty((t0.shape[1], q))
        for j in range(q):
            h = np.zeros(q)
            h[j] = 1e-3
            g[:, j] = (terms(beta + h).mean(axis=0) - terms(beta - h).mean(axis=0)) / 2e-3
        return sig, g

    def shift_covariance(self, beta, noise_var, draws: int = 20_000):
        """Cov(beta | x, e, s_dp) under the normal surrogate: the law of beta when the records' x and residuals
        e_i = (y_i - beta_0 - x_i^T beta_1:) / sigma are held and only the noise is left, the scale of DA-MCMC's
        shift moves (:func:`engine.kernels.da_mcmc.shift_moves`; no acceptance ratio depends on it).

        With e held, s moves with beta along n G (the pathwise derivative of sum t(r_i) is, in expectation,
        the derivative of its mean), so the release's information about beta is n^2 G^T G / noise_var;
        plus the prior's I / tau^2."""
        q = self.p + 1
        _, g = self._surrogate_moments(beta, draws)
        info = self.n * self.n * g.T @ g / max(float(noise_var), 1e-300) + np.eye(q) / self.prior_sd**2
        return np.linalg.inv(info)

    def surrogate_inflation(self, beta, noise_var, draws: int = 20_000):
        """Var(beta_j | s_dp) / Var(beta_j | x) per coefficient, from :meth:`surrogate_covariances`."""
        priv, raw = self.surrogate_covariances(beta, noise_var, draws)
        return np.diag(priv) / np.diag(raw)

    def clamped_fraction(self, beta, draws: int = 20_000) -> float:
        """P(y <= lo_y or y >= hi_y) at beta: the expected share of records whose y is clamped (x on fixed
        common normals, y's normal tails exactly), for the cost of the clamped records' refresh."""
        q = self.p + 1
        e = np.random.default_rng(0).standard_normal((draws, self.p))
        sigma = self.sigma if not self.unknown_sigma else math.sqrt(float(np.asarray(beta)[q]))
        beta = np.asarray(beta, float)[:q]
        mu = beta[0] + (np.asarray(self.x_mean, float) + e @ self.chol.T) @ beta[1:]
        lo, hi = self._bounds()
        return float(np.mean(special.ndtr((lo[self.p] - mu) / sigma) + special.ndtr((mu - hi[self.p]) / sigma)))

    def unsafe_fraction(self, beta, box, draws: int = 20_000) -> float:
        """Expected share of the records that DA-MCMC's shift moves evaluate one by one
        (:func:`engine.kernels.da_mcmc.shift_moves`): those whose y lies within b = |box^T X| (X = (1, x)) of a
        clamp bound of y, where a shift in the ellipsoid {D : |box^{-1} D| < 1} could change whether y is
        clamped. With mu = beta_0 + x^T beta_1: and y | x ~ N(mu, sigma^2), P(|y - c| <= b | x) =
        Phi((c + b - mu) / sigma) - Phi((c - b - mu) / sigma) for each bound c, summed over the two bounds
        (at most 1) and averaged over x on fixed common normals. A cost model: no acceptance ratio depends
        on it."""
        q = self.p + 1
        e = np.random.default_rng(0).standard_normal((draws, self.p))
        sigma = self.sigma if not self.unknown_sigma else math.sqrt(float(np.asarray(beta)[q]))
        beta = np.asarray(beta, float)[:q]
        x = np.asarray(self.x_mean, float) + e @ self.chol.T
        mu = beta[0] + x @ beta[1:]
        big_x = np.column_stack([np.ones(draws), x])
        b = np.sqrt(np.sum((big_x @ np.asarray(box, float)) ** 2, axis=1))
        lo, hi = self._bounds()
        share = np.zeros(draws)
        for c in (lo[self.p], hi[self.p]):
            share += special.ndtr((c + b - mu) / sigma) - special.ndtr((c - b - mu) / sigma)
        return float(np.mean(np.minimum(share, 1.0)))

    def censored_covariance(self, beta, draws: int = 20_000):
        r"""Cov(beta | x, [y]) at its expectation: the posterior given the raw x and the *clamped* y (the
        Tobit model; what DA-MCMC's conjugate step sees once the clamped records' raw y are refreshed every
        iteration, :func:`engine.kernels.da_mcmc.censored_refresh`). A cost model, like
        :meth:`surrogate_covariances`: no acceptance ratio depends on it.

        With mu = beta_0 + x^T beta_1:, a = (lo_y - mu) / sigma and b = (hi_y - mu) / sigma, a record's expected
        information about mu (sigma known) is w / sigma^2 with
        w = Phi(b) - Phi(a) + a phi(a) - b phi(b) + phi(a)^2 / Phi(a) + phi(b)^2 / Phi(-b):
        -d^2/dmu^2 of log N(y; mu, sigma^2) is 1 / sigma^2 on (lo, hi); of log Phi(a) it is
        (a phi(a) / Phi(a) + (phi(a) / Phi(a))^2) / sigma^2, weighted by P(y <= lo) = Phi(a); the upper bound
        by symmetry. So Cov = (n E[w X X^T] / sigma^2 + I / tau^2)^{-1}, X = (1, x), E over ``draws`` records
        on fixed common normals (x's own clamps are ignored: the raw x is known to the conjugate step)."""
        q = self.p + 1
        e = np.random.default_rng(0).standard_normal((draws, self.p))
        sigma = self.sigma if not self.unknown_sigma else math.sqrt(float(np.asarray(beta)[q]))
        beta = np.asarray(beta, float)[:q]
        x = np.column_stack([np.ones(draws), np.asarray(self.x_mean, float) + e @ self.chol.T])
        mu = x @ beta
        lo, hi = self._bounds()
        a, b = (lo[self.p] - mu) / sigma, (hi[self.p] - mu) / sigma
        pa, pb = stats.norm.pdf(a), stats.norm.pdf(b)
        ca, cb = special.ndtr(a), special.ndtr(-b)
        with np.errstate(divide="ignore", invalid="ignore"):
            ta = np.where(ca > 0, pa * pa / ca, 0.0)
            tb = np.where(cb > 0, pb * pb / cb, 0.0)
        w = special.ndtr(b) - ca + a * pa - b * pb + ta + tb
        info = self.n * (x * w[:, None]).T @ x / draws / sigma**2 + np.eye(q) / self.prior_sd**2
        return np.linalg.inv(info)

    def check_records(self, records, field="records"):
        """Records as an (n, p + 1) array of finite numbers (columns x1..xp, y)."""
        cols = self.csv_columns
        r = record_rows(records, cols, field, "numbers")
        bad = ~np.isfinite(r)
        if bad.any():
            i, c = np.argwhere(bad)[0]
            fail(record_field(f"{field} column {cols[c]}", int(i)), r[i, c].item(), "must be a finite number")
        return r

    def suff(self, records):
        """Raw conjugate statistic: X^T X (row-major, X = (1, x)), then X^T y, then y^T y."""
        r = np.asarray(records, float)
        x = np.column_stack([np.ones(r.shape[0]), r[:, :self.p]])
        y = r[:, self.p]
        return np.concatenate([(x.T @ x).ravel(), x.T @ y, [y @ y]])

    def _split(self, suff):
        q = self.p + 1
        suff = np.asarray(suff, float)
        return suff[:q * q].reshape(q, q), suff[q * q:q * q + q], float(suff[q * q + q])

    def posterior_params(self, suff, sigma2=None):
        """Mean and covariance of beta | S, sigma^2 (sigma^2 defaults to the known sigma^2)."""
        q = self.p + 1
        xtx, xty, _ = self._split(suff)
        s2 = self.sigma**2 if sigma2 is None else float(sigma2)
        prec = xtx / s2 + np.eye(q) / self.prior_sd**2
        cov = np.linalg.inv(prec)
        cov = 0.5 * (cov + cov.T)
        return cov @ xty / s2, cov

    def sigma2_grid(self, suff, points: int = 600):
        """(sigma^2 grid, cell probabilities, cell widths) of p(sigma^2 | S) with beta integrated out
        (class docstring), on a grid of log sigma^2 that covers log density > max - 40."""
        xtx, xty, yty = self._split(suff)
        a, b = self.sigma_prior
        lam, u = np.linalg.eigh(0.5 * (xtx + xtx.T))
        lam = np.maximum(lam, 0.0)
        c2 = (u.T @ xty) ** 2
        tau2 = self.prior_sd**2

        def log_post(logv):  # density of log sigma^2 (Jacobian included)
            v = np.exp(logv)[:, None]
            prec = lam[None, :] / v + 1.0 / tau2
            quad = np.sum(c2[None, :] / (v * v * prec), axis=1)
            v = v[:, 0]
            return (-a * logv - b / v - 0.5 * self.n * logv - 0.5 * np.sum(np.log(prec), axis=1)
                    - 0.5 * (yty / v - quad))

        centre = math.log((b + 0.5 * max(yty, 1e-12)) / (a + 0.5 * self.n))
        coarse = np.linspace(centre - 40.0, centre + 40.0, 4001)
        lp = log_post(coarse)
        keep = coarse[lp > lp.max() - 40.0]
        lo_, hi_ = keep.min() - 0.02, keep.max() + 0.02
        edges = np.linspace(lo_, hi_, points + 1)
        mids = 0.5 * (edges[1:] + edges[:-1])
        lp = log_post(mids)
        w = np.exp(lp - lp.max())
        return np.exp(mids), w / w.sum(), edges

    def posterior_sample(self, rng, suff, size):
        if not self.unknown_sigma:
            mean, cov = self.posterior_params(suff)
            return rng.multivariate_normal(mean, cov, size=size, method="cholesky")
        grid, w, edges = self.sigma2_grid(suff)
        cell = rng.choice(grid.size, size=size, p=w)
        logv = edges[cell] + rng.random(size) * (edges[cell + 1] - edges[cell])  # uniform within the cell
        s2 = np.exp(logv)
        u, d, mean = self._given_sigma2(suff, s2)
        z = rng.standard_normal((size, self.p + 1)) / np.sqrt(d)
        return np.column_stack([mean + z @ u.T, s2])

    def _given_sigma2(self, suff, s2):
        """beta | S, sigma^2 for many sigma^2 at once: with X^T X = U diag(lam) U^T, the precision is
        U diag(d) U^T with d = lam / sigma^2 + 1 / tau^2, so the covariance is U diag(1/d) U^T and the mean
        U diag(1/d) U^T X^T y / sigma^2. Returns (U, d (k, q), means (k, q))."""
        xtx, xty, _ = self._split(suff)
        lam, u = np.linalg.eigh(0.5 * (xtx + xtx.T))
        lam = np.maximum(lam, 0.0)
        s2 = np.asarray(s2, float)[:, None]
        d = lam[None, :] / s2 + 1.0 / self.prior_sd**2
        mean = ((u.T @ xty)[None, :] / (s2 * d)) @ u.T
        return u, d, mean

    def posterior_marginals(self, suff):
        if not self.unknown_sigma:
            mean, cov = self.posterior_params(suff)
            return {name: stats.norm(mean[j], math.sqrt(cov[j, j])) for j, name in enumerate(self.param_names)}
        grid, w, edges = self.sigma2_grid(suff, points=300)
        u, d, mean = self._given_sigma2(suff, grid)
        var = (1.0 / d) @ (u.T ** 2)  # diagonal of U diag(1/d) U^T, one row per grid point
        out = {}
        for j in range(self.p + 1):
            out[f"beta[{j}]"] = _NormalMixture(w, mean[:, j], np.sqrt(var[:, j]))
        out["sigma2"] = _GridLaw(np.exp(edges), w)
        return out

    def clamped_moments(self, s):
        """The full (p + 2) x (p + 2) matrix M~ = sum z~ z~^T of the normalised records from a
        statistic vector s (M~[0, 0] = n), rows/columns (1, x~_1..x~_p, y~)."""
        p, q = self.p, self.p + 1
        s = np.asarray(s, float)
        m = np.empty((q + 1, q + 1))
        m[0, 0] = self.n
        for j in range(q):
            m[j, q] = m[q, j] = s[j]
        m[q, q] = s[p + 1]
        for k in range(1, q):
            for j in range(k + 1):
                m[j, k] = m[k, j] = s[self._index(j, k)]
        return m

    def project(self, s_dp):
        """The raw-scale conjugate statistic the naive method reads from a noisy release.

        1. Rebuild M~ = sum z~ z~^T (z~ = (1, x~, y~)) from s_dp, with the known M~[0, 0] = n.
        2. Project its x-block x~^T x~ (rows/columns 0..p) onto the positive semidefinite cone,
           the nearest PSD matrix in Frobenius norm (Higham 1988: eigenvalues clipped at 0), as
           dapper's naive analysis does (``pracma::nearest_psd``). With an unknown sigma^2 the whole
           M~ is projected, so that the residual sum of squares y^T y - (X^T y)^T (X^T X)^+ X^T y
           the sigma^2 update reads is >= 0.
        3. De-normalise: the clamped record is z = A z~ with A[0, 0] = 1 and, for column c,
           A[c, 0] = (hi_c + lo_c)/2, A[c, c] = (hi_c - lo_c)/2, so sum z z^T = A M~ A^T; its x-block
           is X^T X and its last column X^T y of the clamped data, taken as if they were the raw data.
        The prior precision I / tau^2 keeps the naive posterior covariance positive definite even
        when the projected X^T X is singular.
        """
        q = self.p + 1
        m = self.clamped_moments(s_dp)
        k = q + 1 if self.unknown_sigma else q
        xb = m[:k, :k]
        w, v = np.linalg.eigh(0.5 * (xb + xb.T))
        m[:k, :k] = (v * np.maximum(w, 0.0)) @ v.T
        lo, hi = self._bounds()
        a = np.zeros((q + 1, q + 1))
        a[0, 0] = 1.0
        a[1:, 0] = 0.5 * (hi + lo)
        a[np.arange(1, q + 1), np.arange(1, q + 1)] = 0.5 * (hi - lo)
        raw = a @ m @ a.T
        return np.concatenate([raw[:q, :q].ravel(), raw[:q, q], [raw[q, q]]])

    def sample_statistic(self, rng, theta):
        """s(x, y) of n records simulated at each row of theta (compiled, O(n p^2) per row)."""
        theta = np.ascontiguousarray(np.atleast_2d(theta), dtype=float)
        out = np.empty((theta.shape[0], self.stat_dim))
        lo, hi = self._bounds()
        simulate_statistic(rng, np.ascontiguousarray(theta[:, :self.p + 1]), self._sigmas(theta), self.n, self.chol,
                           np.asarray(self.x_mean, float), lo, hi, out)
        return out

    def theta_from(self, value, field="data.simulate"):
        """``{beta = [beta_0, .., beta_p]}``, plus ``sigma2 = ..`` (> 0) when sigma is unknown."""
        value = dict(value)
        keys = {"beta", "sigma2"} if self.unknown_sigma else {"beta"}
        if set(value) != keys:
            need = f"beta = [beta_0, .., beta_p] ({self.p + 1} numbers)" + (
                " and sigma2 = the true sigma^2 (model.sigma_prior makes sigma^2 a parameter)" if self.unknown_sigma
                else " and nothing else (sigma is model.sigma)")
            fail(field, value, f"linear_regression needs {need}")
        beta = number_list(f"{field}.beta", value["beta"], self.p + 1)
        if self.unknown_sigma:
            return np.append(beta, positive(f"{field}.sigma2", value["sigma2"]))
        return beta

    def prior_dict(self):
        d = {"p": self.p, "x_mean": list(self.x_mean), "x_cov": [list(r) for r in self.x_cov],
             "lo": list(self.lo), "hi": list(self.hi), "prior_sd": self.prior_sd}
        if self.unknown_sigma:
            d["sigma_prior"] = {"a": self.sigma_prior[0], "b": self.sigma_prior[1]}
        else:
            d["sigma"] = self.sigma
        return d


class _NormalMixture:
    """sum_g w_g N(mu_g, sd_g^2): the marginal of one coefficient under a grid over sigma^2
    (only what the result builders use: mean, cdf, ppf)."""

    def __init__(self, w, mu, sd):
        self.w, self.mu, self.sd = np.asarray(w), np.asarray(mu), np.asarray(sd)

    def mean(self):
        return float(self.w @ self.mu)

    def cdf(self, x):
        x = np.asarray(x, float)
        return (special.ndtr((x[..., None] - self.mu) / self.sd) @ self.w).reshape(x.shape)

    def ppf(self, q):
        """By interpolation of the cdf on a fine grid (computed once)."""
        if not hasattr(self, "_grid"):
            lo = float((self.mu - 10 * self.sd).min())
            hi = float((self.mu + 10 * self.sd).max())
            self._grid = np.linspace(lo, hi, 2001)
            self._cdf = self.cdf(self._grid)
        return np.interp(q, self._cdf, self._grid)


class _GridLaw:
    """A law with constant density on each cell of log sigma^2 (cell edges ``edges``, masses ``w``),
    so uniform within a cell in log sigma^2 (as ``posterior_sample`` draws it)."""

    def __init__(self, edges, w):
        self.edges, self.w = np.asarray(edges), np.asarray(w)
        self.cum = np.concatenate([[0.0], np.cumsum(w)])

    def mean(self):
        lo, hi = self.edges[:-1], self.edges[1:]  # E[v] for log v uniform on [log lo, log hi]
        return float(self.w @ ((hi - lo) / np.log(hi / lo)))

    def cdf(self, x):
        x = np.clip(np.asarray(x, float), self.edges[0], self.edges[-1])
        return np.interp(np.log(x), np.log(self.edges), self.cum)

    def ppf(self, q):
        return np.exp(np.interp(q, self.cum, np.log(self.edges)))


MAX_P = 10


@functools.lru_cache(maxsize=64)
def _moments_kept(model: LinearRegression, shown: str, beta: bytes, shape: tuple, draws: int):
    """:meth:`LinearRegression._surrogate_moments` by the model (its fields, and ``shown``, its repr, which tells
    0.0 from -0.0), beta's bytes and shape and ``draws``: everything the moments depend on."""
    return model._surrogate_moments_computed(np.frombuffer(beta, dtype=float).reshape(shape), draws)


def _make_regression(n: int, params: Mapping[str, Any]) -> LinearRegression:
    """linear_regression's keys: p (1..10), x_mean (p numbers), x_cov (p x p symmetric positive
    definite), sigma > 0, lo / hi (a number or p + 1 numbers, columns x1..xp, y; lo < hi), prior_sd > 0,
    sigma_prior = {a, b} (both > 0; replaces sigma: sigma^2 ~ InvGamma(a, b) becomes a parameter)."""
    d = INFO["prior"]
    p = positive_int("model.p", params.get("p", d["p"]), 1, MAX_P)
    if "x_mean" in params:
        x_mean = number_list("model.x_mean", params["x_mean"], p)
    else:
        x_mean = np.asarray(d["x_mean"] if p == 2 else np.zeros(p), float)
    x_cov = _covariance(params.get("x_cov", np.eye(p).tolist()), p)
    sigma = model_positive("model.sigma", params.get("sigma", d["sigma"]))
    sigma_prior = None
    if "sigma_prior" in params:
        sp = params["sigma_prior"]
        if "sigma" in params:
            fail("model.sigma", params["sigma"], "is not used with model.sigma_prior (sigma^2 is then a parameter "
                 "with that inverse-gamma prior); give one of them")
        if not isinstance(sp, Mapping) or set(sp) != {"a", "b"}:
            fail("model.sigma_prior", sp, "must be a table { a = .., b = .. }: the InvGamma(shape a, scale b) prior "
                 "on sigma^2, both > 0")
        sigma_prior = (model_positive("model.sigma_prior.a", sp["a"]), model_positive("model.sigma_prior.b", sp["b"]))
    bounds = {}
    for key in ("lo", "hi"):
        v = params.get(key, d[key])
        if isinstance(v, (list, tuple, np.ndarray)):
            arr = number_list(f"model.{key}", v, p + 1)
        else:
            arr = np.full(p + 1, finite(f"model.{key}", v))
        bounds[key] = arr
    cols = [f"x{j + 1}" for j in range(p)] + ["y"]
    for c, (a, b) in enumerate(zip(bounds["lo"], bounds["hi"])):
        if not b > a:
            fail("model.hi", params.get("hi", d["hi"]), f"must be greater than model.lo in every column "
                 f"(columns {', '.join(cols)}); column {cols[c]} has lo = {a:g}, hi = {b:g}")
    return LinearRegression(n=n, p=p, x_mean=tuple(float(v) for v in x_mean),
                            x_cov=tuple(tuple(float(v) for v in row) for row in x_cov), sigma=sigma,
                            lo=tuple(float(v) for v in bounds["lo"]), hi=tuple(float(v) for v in bounds["hi"]),
                            prior_sd=model_positive("model.prior_sd", params.get("prior_sd", d["prior_sd"])),
                            sigma_prior=sigma_prior)


def _covariance(value, p: int) -> np.ndarray:
    allowed = f"must be a symmetric positive definite {p} x {p} matrix, a list of {p} rows of {p} numbers"
    if not isinstance(value, (list, tuple, np.ndarray)) or len(value) != p:
        fail("model.x_cov", value, allowed)
    rows = []
    for row in value:
        if not isinstance(row, (list, tuple, np.ndarray)) or len(row) != p:
            fail("model.x_cov", value, allowed)
        rows.append(number_list("model.x_cov", list(row), p))
    m = np.array(rows)
    if not np.allclose(m, m.T, rtol=1e-9, atol=1e-12):
        fail("model.x_cov", value, allowed + " (it is not symmetric)")
    if np.linalg.eigvalsh(m).min() <= 1e-12 * max(1.0, float(np.abs(m).max())):
        fail("model.x_cov", value, allowed + " (it is not positive definite)")
    return m


def build(n: int, params: Mapping[str, Any]) -> LinearRegression:
    """The model from its [model] table (``n`` already checked by :func:`engine.models.make_model`)."""
    return _make_regression(n, params)
