"""The budget split for a mean released as (noisy sum, noisy count), the way OpenDP's ``dp.mean`` does it.

OpenDP (and dp-wizard, which calls it) releases a mean of values clamped to [lower, upper] as the pair

    s_dp = S + Lap(b_s),   b_s = Delta_s / epsilon_s,   Delta_s = max(|lower|, |upper|)   (add/remove-one)
    n_dp = n + DLap(t_n),  t_n = 1 / epsilon_n                                           (a count)

with epsilon_s + epsilon_n = epsilon; ``dp.mean`` gives each half (OpenDP 0.16: at epsilon = 1 and
bounds (0, 10) its ``summarize()`` shows sum scale 20 and length scale 2). The size n is private, so the
posterior of the records' mean mu is the joint posterior of (mu, n) marginalised over n:

    p(mu, n | s_dp, n_dp) ∝ N(mu; prior_mean, prior_sd^2) pi(n) DLap(n_dp - n; t_n) p(s_dp | mu, n),

with records Normal(mu, sd^2) clamped to [lower, upper] (the lab's ``normal_known_sd`` with an unknown
n, paper 002). p(s_dp | mu, n) is the law of the clamped sum convolved with the Laplace noise; the sum is
taken as Normal(n m(mu), n v(mu)), m and v the exact mean and variance of one clamped record (exact when
no record is clamped, the central limit law otherwise; the lab's ``exact`` method has the exact law for a
known n and tests/test_mean_split.py checks the two agree). The convolution of N(a, s^2) with Lap(b) is
closed form (the exponentially modified Gaussian, both tails):

    f(d) = (1/(2b)) [ e^(s^2/(2b^2) - d/b) Phi(d/s - s/b) + e^(s^2/(2b^2) + d/b) Phi(-d/s - s/b) ],  d = s_dp - a.

The posterior is evaluated on a grid in (mu, n) (n: every integer with non-negligible prior and count
likelihood; mu: a coarse grid over the prior, then a fine one around the posterior), so its sd is exact up to
the grid (relative error below 1e-4 at 801 points over +-10 posterior sds).

:func:`mean_budget_split` minimises that posterior sd over the fraction f = epsilon_s / epsilon, at the
release one expects (s_dp = n m(mu), n_dp = n for the anticipated n and mu), or averaged over ``releases``
seeded draws of the release (the preposterior expectation), and reports OpenDP's even split beside it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special, stats

from ..core.validation import fail, finite, positive, positive_int
from ..mechanisms import discrete_laplace_log_pmf
from ..models.sample_size import make_size_prior

__all__ = ["MeanSplit", "mean_budget_split", "mean_posterior_sd", "clamped_moments", "OPENDP_SUM_FRACTION"]

OPENDP_SUM_FRACTION = 0.5  # OpenDP's dp.mean (and so dp-wizard): the mean's epsilon split evenly


@dataclass(frozen=True)
class MeanSplit:
    """The best split of ``epsilon`` between the sum and the count, and OpenDP's even split for comparison."""

    epsilon: float
    fraction_sum: float          # epsilon_sum / epsilon at the optimum
    epsilon_sum: float
    epsilon_count: float
    sum_scale: float             # b_s = Delta_s / epsilon_sum
    count_scale: float           # t_n = 1 / epsilon_count
    posterior_sd: float          # the posterior sd of mu at the optimum
    even_posterior_sd: float     # ... at OpenDP's / dp-wizard's even split
    curve: tuple                 # ((fraction, posterior sd), ...) on the coarse grid

    @property
    def improvement(self) -> float:
        """1 - sd(optimum) / sd(even split): the share of the posterior sd the better split saves."""
        return 1.0 - self.posterior_sd / self.even_posterior_sd


def clamped_moments(mu, sd: float, lower: float, upper: float):
    """Mean and variance of min(max(X, lower), upper), X ~ Normal(mu, sd^2) (mu an array)."""
    mu = np.asarray(mu, dtype=float)
    a, b = (lower - mu) / sd, (upper - mu) / sd
    pa, pb = special.ndtr(a), special.ndtr(b)
    fa, fb = stats.norm.pdf(a), stats.norm.pdf(b)
    mid = pb - pa
    e1 = mu * mid + sd * (fa - fb)
    e2 = mu**2 * mid + 2 * mu * sd * (fa - fb) + sd**2 * (mid + np.nan_to_num(a * fa) - np.nan_to_num(b * fb))
    m = lower * pa + upper * (1 - pb) + e1
    second = lower**2 * pa + upper**2 * (1 - pb) + e2
    return m, np.maximum(second - m**2, 0.0)


def _log_normal_laplace(d, s, b):
    """log density at d of N(0, s^2) + Lap(b) (module docstring); s = 0 gives the Laplace density."""
    s = np.asarray(s, dtype=float)
    safe = np.maximum(s, 1e-300)
    c = safe**2 / (2 * b**2)
    left = c - d / b + special.log_ndtr(d / safe - safe / b)
    right = c + d / b + special.log_ndtr(-d / safe - safe / b)
    out = np.logaddexp(left, right) - math.log(2 * b)
    return np.where(s > 1e-9 * b, out, -np.abs(d) / b - math.log(2 * b))


def mean_posterior_sd(s_dp: float, n_dp: float, sum_scale: float, count_scale: float, *, sd: float, lower: float,
                      upper: float, prior_mean: float, prior_sd: float, n_prior) -> tuple[float, float]:
    """(posterior mean, posterior sd) of mu given the pair (s_dp, n_dp) (module docstring)."""
    prior = make_size_prior(n_prior)
    lo_n = max(0, int(math.floor(min(prior._dist().ppf(1e-12), n_dp - 40 * count_scale))))
    hi_n = int(math.ceil(max(min(prior._dist().ppf(1 - 1e-12), n_dp + 40 * count_scale), lo_n + 1)))
    lo_n = max(lo_n, int(math.floor(n_dp - 40 * count_scale - 1)))
    n = np.arange(lo_n, hi_n + 1, dtype=float)
    log_n = prior.log_pmf(n) + discrete_laplace_log_pmf(n_dp - n, count_scale)
    keep = log_n > log_n.max() - 60
    n, log_n = n[keep], log_n[keep]

    def posterior_on(mu):
        m, v = clamped_moments(mu, sd, lower, upper)
        lf = _log_normal_laplace(s_dp - n[:, None] * m[None, :], np.sqrt(n[:, None] * v[None, :]), sum_scale)
        lw = special.logsumexp(lf + log_n[:, None], axis=0) + stats.norm.logpdf(mu, prior_mean, prior_sd)
        w = np.exp(lw - lw.max())
        w /= np.trapezoid(w, mu)
        mean = np.trapezoid(w * mu, mu)
        return mean, math.sqrt(max(np.trapezoid(w * (mu - mean) ** 2, mu), 0.0))

    coarse = np.linspace(prior_mean - 10 * prior_sd, prior_mean + 10 * prior_sd, 801)
    mean, spread = posterior_on(coarse)
    for _ in range(2):  # zoom in: the posterior may be far narrower than the prior (or than the coarse step)
        spread = max(spread, coarse[1] - coarse[0])
        coarse = np.linspace(mean - 10 * spread, mean + 10 * spread, 801)
        mean, spread = posterior_on(coarse)
    return mean, spread


def mean_budget_split(epsilon: float, *, lower: float, upper: float, sd: float, n: int, prior_mean: float,
                      prior_sd: float, mu: float | None = None, n_prior=None, releases: int = 0,
                      seed: int = 0) -> MeanSplit:
    """The split of ``epsilon`` between a mean's noisy sum and noisy count that minimises the posterior sd of
    the mean (module docstring), with OpenDP's even split for comparison.

    ``n`` and ``mu`` (default ``prior_mean``) are the anticipated size and mean; ``n_prior`` the prior on
    the private n (default Poisson with mean n, the engine's ``model.n_prior`` table); ``releases = 0``
    evaluates at the expected release, ``releases = K`` averages over K seeded draws of it."""
    eps = positive("epsilon", epsilon)
    lower, upper = finite("lower", lower), finite("upper", upper)
    if not lower < upper:
        fail("lower", [lower, upper], "must be finite numbers with lower < upper")
    sd, prior_sd = positive("sd", sd), positive("prior_sd", prior_sd)
    n = positive_int("n", n)
    prior_mean = finite("prior_mean", prior_mean)
    mu = prior_mean if mu is None else finite("mu", mu)
    n_prior = n_prior or {"name": "poisson", "mean": float(n)}
    make_size_prior(n_prior)
    delta_s = max(abs(lower), abs(upper))
    m0, v0 = clamped_moments(np.array([mu]), sd, lower, upper)
    rng = np.random.default_rng(seed)
    k = positive_int("releases", releases, 0, 100_000) if releases else 0  # each costs a posterior per split
    z_sum = rng.standard_normal(k) if k else np.zeros(1)
    u_sum = rng.laplace(size=k) if k else np.zeros(1)
    # DLap(t) = floor(t E1) - floor(t E2), E ~ Exp(1) (geometric tails P(G >= j) = e^(-j/t)): the same E for
    # every split (common random numbers), so the curve over f is smooth
    e_count = rng.exponential(size=(k, 2)) if k else np.zeros((1, 2))

    def sd_at(f):
        b_s, t_n = delta_s / (f * eps), 1.0 / ((1 - f) * eps)
        out = []
        for zs, us, (e1, e2) in zip(z_sum, u_sum, e_count):
            s_dp = n * m0[0] + math.sqrt(n * v0[0]) * zs + b_s * us
            n_dp = n + math.floor(t_n * e1) - math.floor(t_n * e2)
            out.append(mean_posterior_sd(s_dp, n_dp, b_s, t_n, sd=sd, lower=lower, upper=upper,
                                         prior_mean=prior_mean, prior_sd=prior_sd, n_prior=n_prior)[1])
        return float(np.mean(out))

    grid = np.round(np.arange(0.05, 0.951, 0.05), 10)
    curve = [(float(f), sd_at(f)) for f in grid]
    j = int(np.argmin([c[1] for c in curve]))
    lo_f, hi_f = max(0.01, grid[j] - 0.05), min(0.99, grid[j] + 0.05)
    opt = optimize.minimize_scalar(sd_at, bounds=(lo_f, hi_f), method="bounded", options={"xatol": 1e-3})
    f_best, sd_best = (float(opt.x), float(opt.fun)) if opt.fun <= curve[j][1] else curve[j]
    return MeanSplit(epsilon=eps, fraction_sum=f_best, epsilon_sum=f_best * eps, epsilon_count=(1 - f_best) * eps,
                     sum_scale=delta_s / (f_best * eps), count_scale=1.0 / ((1 - f_best) * eps),
                     posterior_sd=sd_best, even_posterior_sd=sd_at(OPENDP_SUM_FRACTION), curve=tuple(curve))
