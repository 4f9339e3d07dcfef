"""The exact private posterior as a finite mixture of conjugate posteriors.

For an integer statistic s with conjugate prior, conditioning on s_dp only through s gives

    p(theta | s_dp) = sum_s w_s p(theta | s),   w_s ∝ m(s) eta(s_dp | s),

where m(s) is the prior predictive of the confidential statistic and eta the mechanism's
likelihood; each p(theta | s) is conjugate. Derivations per model:

beta_binomial
    m(s) = BetaBinomial(s; n, a, b), p(theta | s) = Beta(a + s, b + n - s), s = 0..n.
    Additive noise: eta(s_dp | s) = noise(s_dp - s). Randomized response (k = 2): the reported
    number of ones is Bin(s, Q[1,1]) + Bin(n - s, Q[0,1]), whose pmf at s_dp is a convolution.
poisson_gamma (no clamp)
    s = sum x_i ~ Poisson(n lam), so m(s) = NegBin: Gamma(alpha + s) / (Gamma(alpha) s!)
    (beta/(beta+n))^alpha (n/(beta+n))^s, and p(lam | s) = Gamma(alpha + s, beta + n). The sum runs
    over s = 0..S with S grown until the remaining weight is below 1e-16 of the total
    (the neglected mass is reported as ``truncated_mass_bound``). Gong (2020)'s privatized count
    is n = 1.
dirichlet_multinomial
    c = cell counts with sum c = n; m(c) ∝ prod_j Gamma(alpha_j + c_j) / (Gamma(alpha_j) c_j!),
    eta = prod_j noise(s_dp_j - c_j), p(p | c) = Dirichlet(alpha + c). The weights factor as
    prod_j h_j(c_j) under the constraint sum c_j = n, so the distribution of c is computed by
    convolving the h_j (O(k W^2) for window width W) instead of enumerating compositions. Each
    h_j is first exponentially tilted by e^(lambda c) with lambda chosen so that the tilted
    means add to n (this leaves the constrained distribution unchanged because sum c = n is
    fixed) and then cut where it falls below e^-T of its maximum (T = min(60, 700/k)), which
    keeps the convolution in floating-point range. Draws pick c by sequential conditioning
    (c_k, then c_{k-1} | c_k, ...) and then p ~ Dirichlet(alpha + c); the marginal of p_j is a
    mixture of Beta(alpha_j + c_j, alpha_0 + n - alpha_j - c_j).

Windowing: only statistic values where eta(s_dp - s) is within e^-50 of its largest value on the
support are kept (s_dp ± 50 b for Laplace-type noise, ± 10 sigma for Gaussian-type, around the
projection of s_dp onto the support); the weight left out is at most e^-50 eta(s_dp - c) (c the
projection), reported relative to the kept weight as ``neglected_mass_bound`` (the window grows to
the whole support if that bound is above 1e-12). So the mixture has about 100 b components at any n.

One-parameter models on an adaptive grid (:mod:`engine.numerics.grid_posterior`, likelihoods in
:mod:`engine.numerics.statistic_laws`): the clamped Poisson (law of the clamped sum by FFT), normal_known_sd
(the clamped-normal record law discretised by mean-preserving rounding and convolved by FFT; the
result is the exact posterior given a release with extra mean-zero noise of sd
``info["discretisation_sd"]``, a fraction ``info["discretisation_ratio"]`` of sd(S | mu): about
3e-3 at n = 10^6, so the posterior variance moves by ~1e-5 relative, far below Monte Carlo error),
randomized response on beta_binomial (the reported count is Binomial(n, theta Q[1,1] + (1 - theta)
Q[0,1]): O(1) per theta, any n), and beta_binomial / poisson_gamma whenever their windowed mixture
would have more than ``MAX_MIXTURE`` components (wide noise: the grid costs O(sd(S)) per theta
instead of a CDF over every component). Draws are by inverse CDF of the grid density; ``info``
reports ``representation`` (``mixture`` or ``grid``), ``neglected_mass_bound`` (window and FFT-floor
mass relative to the evidence), ``tail_mass`` (mass beyond the grid, handled by the prior-tail
rule) and ``interpolation_tol`` (1e-6 relative in the density).

dirichlet_multinomial with an unknown n (``model.n_prior``: a histogram whose total is private)
    The Poisson construction of paper 002, Appendix B (:mod:`engine.methods.histogram_total`): each cell's
    count law is its own poisson_gamma mixture; independent across cells when the prior on n is
    negative_binomial with dispersion sum(alpha) and no noisy size is released, else convolved and reweighted
    by the prior on n and the size mechanism. Parameters p[0..k-1] and n.

Randomized response over more than two categories and custom models have no exact form here and
raise ``ValueError``; use da_mcmc or pseudo_marginal.
"""
from __future__ import annotations

import math
import time

import numpy as np
from scipy import fft as sp_fft
from scipy import optimize, special, stats

from ..core.kept import Kept
from ..core.results import Problem, Result, expect_problem
from ..core.validation import fail
from ..mechanisms import (MAX_RR_TABLE_N, DiscreteGaussian, DiscreteLaplace, Gaussian, Laplace,
                          RandomizedResponse)
from ..mechanisms.lattice import LatticeGaussian, LatticeLaplace
from ..models.beta_binomial import log_beta_binomial_pmf
from ..models.custom import CustomModel
from ..numerics import grid_posterior
from ..numerics.densities import cell_density, range_from_quantiles
from ..numerics.statistic_laws import MAX_LATTICE, T_NOISE, NormalLattice, likelihood, noise_of
from ..numerics.windows import window_at
from .base import Method
from .histogram_total import histogram_total
from .pseudo_marginal import moment_estimate

__all__ = ["exact", "exact_mixture", "exact_moments", "exact_quantiles", "Mixture", "has_closed_form", "grid_result",
           "METHOD"]

MAX_COMPONENTS = 50_000_000
MAX_MIXTURE = 3000  # above this many components a one-parameter mixture is evaluated on the grid
NEGLECT_TOL = 1e-12
MAX_RELEASE_COMPONENTS = 200_000  # a clipped or bounded-domain release: mixture components evaluated (about 25 s)
LARGE_N = 50_000       # dirichlet_multinomial from this n: the tilt by Newton's method (_tilt_newton)
FFT_WORK = 4_000_000   # window convolutions with at least this many products go by FFT
FFT_FLOOR = 1e-14      # ... and their ends below this fraction of the peak are cut (FFT round-off)
BETA_RECURRENCE = 2000  # Beta mixtures with more components: the CDF by the recurrence in a, b


class Mixture:
    """Mixture weights over statistic values with the conjugate posterior of each."""

    def __init__(self, model, values, log_w):
        self.model = model
        self.values = np.asarray(values, dtype=float)  # (m,) or (m, k)
        w = np.exp(log_w - special.logsumexp(log_w))
        keep = w > 1e-17 * w.max()
        self.values, self.weights = self.values[keep], w[keep] / w[keep].sum()

    def posterior_mean(self) -> np.ndarray:
        """E[theta | s_dp], exactly (the mixture of conjugate means)."""
        m = self.model
        v = self.values
        if m.name == "beta_binomial":
            means = (m.a + v) / (m.a + m.b + m.n)
            return np.array([np.dot(self.weights, means)])
        if m.name == "poisson_gamma":
            return np.array([np.dot(self.weights, (m.alpha + v) / (m.beta + m.n))])
        a = np.asarray(m.alpha)[None, :] + v
        return self.weights @ (a / a.sum(axis=1, keepdims=True))

    def marginal_components(self, j: int):
        """(weights, a, b) of a Beta mixture or (weights, shape, rate) of a Gamma mixture for parameter j."""
        m = self.model
        if m.name == "beta_binomial":
            return self.weights, m.a + self.values, m.b + m.n - self.values
        if m.name == "poisson_gamma":
            return self.weights, m.alpha + self.values, np.full(self.values.shape, m.beta + m.n)
        alpha = np.asarray(m.alpha)
        cj = self.values[:, j]
        # aggregate identical c_j values: the marginal only depends on c_j
        uniq, inv = np.unique(cj, return_inverse=True)
        w = np.bincount(inv, weights=self.weights)
        return w, alpha[j] + uniq, alpha.sum() + m.n - alpha[j] - uniq

    def cdf(self, j: int, x):
        w, p1, p2 = self.marginal_components(j)
        return _mixture_cdf(self.model.name == "poisson_gamma", w, p1, p2, x)

    def quantile(self, j: int, q: float) -> float:
        """Mixture quantile by bracketing on the CDF."""
        w, p1, p2 = self.marginal_components(j)
        if self.model.name == "poisson_gamma":
            lo = float(np.min(stats.gamma.ppf(min(q, 1e-9), p1, scale=1 / p2)))
            hi = float(np.max(stats.gamma.ppf(max(q, 1 - 1e-12), p1, scale=1 / p2)))
        else:
            lo, hi = 0.0, 1.0
        return _solve(lambda t: self.cdf(j, [t])[0], q, lo, hi)

    def sample(self, rng, size) -> np.ndarray:
        idx = rng.choice(self.weights.size, size=size, p=self.weights)
        v = self.values[idx]
        m = self.model
        if m.name == "beta_binomial":
            return rng.beta(m.a + v, m.b + m.n - v)[:, None]
        if m.name == "poisson_gamma":
            return rng.gamma(m.alpha + v, 1.0 / (m.beta + m.n))[:, None]
        g = rng.gamma(np.asarray(m.alpha)[None, :] + v)
        return g / g.sum(axis=1, keepdims=True)


def _mixture_cdf(gamma: bool, w, p1, p2, x):
    """CDF of a Beta(p1, p2) or Gamma(shape p1, rate p2) mixture, in chunks of components.

    The regularised incomplete beta and gamma functions themselves, as scipy's ``stats.beta.cdf`` and
    ``stats.gamma.cdf(x, a, scale=1 / rate)`` compute them for these (valid) parameters, bitwise: x clipped to
    the support where those return 0 or 1, and x / (1 / rate) as their scale arithmetic. The distributions'
    argument checks cost about 0.2 ms a call, and a quantile solved by bracketing calls this a hundred times
    (a calibration study of exact spent 3.4 of its 4 s there)."""
    x = np.asarray(x, float)
    out = np.zeros(x.shape)
    for lo in range(0, w.size, 2000):
        sl = slice(lo, lo + 2000)
        if gamma:
            c = special.gammainc(p1[sl, None], np.maximum(x, 0.0)[None, :] / (1.0 / p2[sl, None]))
        else:
            c = special.betainc(p1[sl, None], p2[sl, None], np.clip(x, 0.0, 1.0)[None, :])
        out += w[sl] @ c
    return out


def _beta_ladder_cdf(w, a0, b0, x):
    """CDF at x of sum_i w_i Beta(a0 + i, b0 - i), i = 0..W-1 (consecutive counts, a + b fixed), in
    O(W) per point instead of W incomplete-beta evaluations. With n' = a + b - 1,

        I_x(a, b) - I_x(a + 1, b - 1) = Gamma(a + b) / (Gamma(a + 1) Gamma(b)) x^a (1 - x)^(b - 1) = t(a)

    (for integers, P(Bin(n', x) = a): the binomial-tail form of the regularised incomplete beta), so
    I_x(a0 + i, b0 - i) = I_x(a0, b0) - sum_{m < i} t(a0 + m) and

        F(x) = I_x(a0, b0) sum_i w_i - sum_m t(a0 + m) R_{m+1},   R_{m+1} = sum_{i > m} w_i.

    One incomplete beta per point; the terms t in log space. Round-off is absolute, about 1e-16 x W."""
    x = np.asarray(x, float)
    w = np.asarray(w, float)
    i = np.arange(w.size - 1, dtype=float)
    a, b = a0 + i, b0 - i
    # log t(a0 + m) = log t(a0) + sum_{l < m} log[x (b_l - 1) / ((1 - x)(a_l + 1))], t(a0) = x Beta pdf / a0:
    # ratios of small numbers, not gammaln of large ones (which would lose ~1e-9 at n = 10^6)
    steps = np.concatenate([[0.0], np.cumsum(np.log(b[:-1] - 1.0) - np.log(a[:-1] + 1.0))])
    tail = (np.cumsum(w[::-1])[::-1])[1:]  # R_{m+1}
    out = stats.beta.cdf(x, a0, b0) * w.sum()
    inside = (x > 0.0) & (x < 1.0)  # t = 0 at x = 0 and x = 1
    xi = x[inside]
    # anchored at the largest term (a near x (a + b - 1)), from scipy's pdf, which is accurate for large
    # a and b (logpdf goes through gammaln and is ~1e-9 off at 10^6), so no term is extrapolated far
    anc = np.clip(np.round(xi * (a0 + b0 - 1.0) - a0), 0, i.size - 1).astype(int)
    odds = np.log(xi) - np.log1p(-xi)
    with np.errstate(divide="ignore"):
        base = (np.log(xi) - np.log(a[anc]) + np.log(stats.beta.pdf(xi, a[anc], b[anc])) - steps[anc]
                - i[anc] * odds)
    for lo in range(0, i.size, 2000):
        sl = slice(lo, lo + 2000)
        lt = base[:, None] + steps[sl][None, :] + i[sl][None, :] * odds[:, None]
        out[inside] -= np.exp(lt) @ tail[sl]
    return np.clip(out, 0.0, 1.0)


def _beta_mixture_cdf(w, p1, p2, x):
    """CDF of a Beta(p1, p2) mixture: the ladder recurrence when the components are many and step by
    one count with p1 + p2 fixed (the Dirichlet marginals), else term by term."""
    if w.size > BETA_RECURRENCE:
        step = np.diff(p1)
        if np.all(step > 0) and np.allclose(step, np.round(step)) and np.allclose(p1 + p2, p1[0] + p2[0]):
            full = np.zeros(int(round(p1[-1] - p1[0])) + 1)
            full[np.round(p1 - p1[0]).astype(int)] = w
            return _beta_ladder_cdf(full, float(p1[0]), float(p2[0]), x)
    return _mixture_cdf(False, w, p1, p2, x)


def has_closed_form(problem: Problem) -> bool:
    """Whether ``exact`` can draw this prepared problem from its closed form (a conjugate model with a statistic
    the exact grids cover, under noise they handle); False where it would refuse (then ``auto`` runs a chain)."""
    expect_problem(problem)  # anything else is an error, not "no closed form"
    try:
        _check(_plain_noise(problem))
    except ValueError:
        return False
    return True


def _log_eta(mech, sdp, s):
    """log p(s_dp | s) elementwise: the release's own law where it is not a function of s_dp - s alone
    (a clipped or bounded-domain release, :mod:`engine.mechanisms.clipped`), else the noise density."""
    if getattr(mech, "release_law", False):
        return mech.release_log_prob(sdp, s)
    return mech.noise_log_prob(sdp - s)


def _plain_noise(problem: Problem) -> Problem:
    """A clipped release strictly inside its bounds has the plain noise's likelihood: analyse it as that."""
    mech = problem.mechanism
    if getattr(mech, "release_law", False) and getattr(mech, "side", None) == 0:
        return Problem(model=problem.model, mechanism=mech.base, s_dp=problem.s_dp, records=problem.records,
                       true_params=problem.true_params, unknown_n=problem.unknown_n)
    return problem


def _check(problem):
    model, mech = problem.model, problem.mechanism
    why = None
    if isinstance(model, CustomModel):
        why = "a custom model"
    elif getattr(mech, "release_law", False) and not (
            model.name in ("beta_binomial", "dirichlet_multinomial")
            or (model.name == "poisson_gamma" and model.upper is None)):
        why = f"{model.name} with a release on a clip bound or a bounded domain (exact handles beta_binomial, " \
              "poisson_gamma without a clamp and dirichlet_multinomial there)"
    elif isinstance(mech, RandomizedResponse) and model.name != "beta_binomial":
        why = "randomized_response on more than two categories"
    elif model.name == "normal_known_sd" and getattr(mech, "name", None) not in ("laplace", "gaussian"):
        why = "normal_known_sd with a mechanism other than laplace or gaussian"
    if why:
        raise ValueError(f"method.name = 'exact' is invalid for {why}: no exact form; use da_mcmc or pseudo_marginal")
    if model.name == "normal_known_sd" and NormalLattice.cells(model) > MAX_LATTICE:
        raise ValueError(f"model.hi = {model.hi:g} is invalid for exact: the clamp range [{model.lo:g}, {model.hi:g}] "
                         f"is {(model.hi - model.lo) / model.sd:,.0f} record sds (sd = {model.sd:g}) wide, and one "
                         f"record's law would need {NormalLattice.cells(model):,} lattice points (at most "
                         f"{MAX_LATTICE:,}); use da_mcmc or pseudo_marginal")
    if getattr(mech, "release_law", False) and model.name != "dirichlet_multinomial":
        kept = _mixture_or_none(problem)[0].weights.size  # O(n) log-weights; each kept one costs a CDF per cell
        if kept > MAX_RELEASE_COMPONENTS:
            raise ValueError(f"method.name = 'exact' is invalid here: the release on its clip bound leaves {kept:,} "
                             f"statistic values with weight (at most {MAX_RELEASE_COMPONENTS:,} are evaluated); use "
                             "da_mcmc or pseudo_marginal")


def _neglect(lw_kept, log_eta_c):
    """Bound on the left-out weight relative to the kept weight (module docstring); inf where it overflows."""
    log_bound = -T_NOISE + log_eta_c - special.logsumexp(lw_kept)
    return math.exp(log_bound) if log_bound < 700.0 else math.inf


#: noise whose log density is concave in s_dp - s on the statistic's integers (not the lattice releases, whose
#: density is a staircase in s)
def _log_concave_noise(mech) -> bool:
    return isinstance(mech, (Laplace, Gaussian, DiscreteLaplace, DiscreteGaussian)) and \
        not isinstance(mech, (LatticeLaplace, LatticeGaussian))


def _log_concave_tails(s, lw):
    """Bound on the weight outside the window s (consecutive integers from s[0]; the support starts at 0) relative
    to the weight kept, for log-concave weights, or None where the window does not hold the mode.

    Where log w has non-increasing differences, log w(U + k) <= log w(U) + k d for k >= 1, d = log w(U) -
    log w(U - 1) the last difference in the window: with d < 0 the right tail is at most w(U) e^d / (1 - e^d), a
    geometric series. Likewise on the left with the first difference d' > 0: at most w(L) e^-d' / (1 - e^-d')
    (nothing below s = 0). The poisson_gamma weights m(s) eta(s_dp - s) are log-concave when alpha >= 1 (the
    negative binomial's ratio m(s + 1) / m(s) = q (alpha + s) / (s + 1) then does not increase) and the noise's
    log density is concave (:func:`_log_concave_noise`): a product of log-concave sequences. This is the bound
    where s_dp lies far in the prior predictive's tail (an outlying record, no clamp): the window's own bound,
    relative to the tiny m(s) there, cannot certify it, though the weight beyond the window falls off faster."""
    if s.size < 3 or not np.all(np.isfinite(lw)):
        return None
    d_right = lw[-1] - lw[-2]
    d_left = lw[1] - lw[0]
    if d_right >= 0.0 or (s[0] > 0 and d_left <= 0.0):
        return None
    log_tails = [lw[-1] + d_right - math.log(-math.expm1(d_right))]
    if s[0] > 0:
        log_tails.append(lw[0] - d_left - math.log(-math.expm1(-d_left)))
    return math.exp(min(700.0, float(special.logsumexp(log_tails) - special.logsumexp(lw))))


def _bb_weights(problem, window: bool = True):
    """(s, log w_s, neglected-weight bound) for beta_binomial."""
    model, mech = problem.model, problem.mechanism
    if isinstance(mech, RandomizedResponse):
        if model.n > MAX_RR_TABLE_N:
            raise ValueError(f"model.n = {model.n} is invalid for the randomized-response mixture table: at most "
                             f"{MAX_RR_TABLE_N}; exact uses the grid posterior instead")
        s = np.arange(model.n + 1, dtype=float)
        lw = log_beta_binomial_pmf(s, model.n, model.a, model.b)
        return s, lw + mech.count_log_likelihood(problem.s_dp, s.astype(np.int64), model.n), 0.0
    sdp = float(problem.s_dp[0])
    c = min(max(sdp, 0.0), float(model.n))
    if getattr(mech, "release_law", False):  # the likelihood is not peaked at s_dp: keep the whole support
        s = np.arange(model.n + 1, dtype=float)
        return s, log_beta_binomial_pmf(s, model.n, model.a, model.b) + _log_eta(mech, sdp, s), 0.0
    half = noise_of(mech)[3]
    if window:
        s = np.arange(max(0.0, math.floor(c - half)), min(float(model.n), math.ceil(c + half)) + 1)
        lw = log_beta_binomial_pmf(s, model.n, model.a, model.b) + mech.noise_log_prob(sdp - s)
        bound = _neglect(lw, float(mech.noise_log_prob(np.array([sdp - c]))[0])) if s.size < model.n + 1 else 0.0
        if bound <= NEGLECT_TOL:
            return s, lw, bound
    s = np.arange(model.n + 1, dtype=float)
    return s, log_beta_binomial_pmf(s, model.n, model.a, model.b) + mech.noise_log_prob(sdp - s), 0.0


def _pg_weights(problem, window: bool = True):
    """(s, log w_s, neglected-weight bound) for poisson_gamma without a clamp."""
    model, mech = problem.model, problem.mechanism
    a, b, n = model.alpha, model.beta, model.n
    log_p, log_q = np.log(b / (b + n)), np.log(n / (b + n))
    sdp = float(problem.s_dp[0])

    def lw(s):
        return (special.gammaln(a + s) - special.gammaln(a) - special.gammaln(s + 1) + a * log_p + s * log_q
                + _log_eta(mech, sdp, s))

    if window and not getattr(mech, "release_law", False):
        c = max(sdp, 0.0)
        half = noise_of(mech)[3]
        s = np.arange(max(0.0, math.floor(c - half)), math.ceil(c + half) + 1)
        if s.size <= MAX_COMPONENTS:
            w = lw(s)
            bound = _neglect(w, float(mech.noise_log_prob(np.array([sdp - c]))[0]))
            if bound > NEGLECT_TOL and a >= 1.0 and _log_concave_noise(mech):
                bound = min(bound, _log_concave_tails(s, w) or math.inf)
            if bound <= NEGLECT_TOL:
                return s, w, bound
    mean = a * n / b
    sd = np.sqrt(mean * (b + n) / b)
    upper = int(max(mean + 40 * sd, sdp + 80 * mech.noise_sd, 100))
    while True:
        if upper > MAX_COMPONENTS:
            # the field the user typed: the true parameters of a simulation, else the release
            field, value = (("data.simulate", dict(problem.true_params)) if problem.true_params is not None
                            else ("data.s_dp", problem.s_dp.tolist()))
            fail(field, value, f"is too large for exact: its mixture sums over every total up to {upper:.3g} (the "
                 f"release {sdp:.6g} plus 80 noise sd, and the prior's bulk), and exact handles at most "
                 f"{MAX_COMPONENTS} components; use a smaller total or method da_mcmc")
        s = np.arange(upper + 1, dtype=float)
        w = lw(s)
        tail = w[-1] - special.logsumexp(w)
        if tail < np.log(1e-18) and np.all(np.diff(w[-10:]) < 0):
            return s, w, float(np.exp(tail) * upper)
        upper *= 2


def _tilted_windows(log_h, n, k):
    """Tilt each log h_j by lambda c so the tilted means sum to n, then cut the negligible tails.

    Any lambda leaves the law of c given sum c = n unchanged; lambda only places the windows, so it
    needs the tilted means to add to n to well under a count, not to the last bit. From ``LARGE_N``
    (each mean then costs passes over n + 1 values) lambda is found by Newton's method on
    f(lambda) = sum_j E_lambda[c_j] - n, whose derivative is sum_j Var_lambda(c_j) > 0, safeguarded by
    bisection inside the bracket (:func:`_tilt_newton`); below it by Brent's method to 1e-12."""
    c = np.arange(n + 1, dtype=float)
    if n >= LARGE_N:
        lam = _tilt_newton(log_h, c, n)
    else:
        lam = _tilt_brent(log_h, c, n)
    cut = min(60.0, 700.0 / k)
    wins = []
    for lh in log_h:
        z = lh + lam * c
        z = z - z.max()
        idx = np.nonzero(z > -cut)[0]
        lo_i, hi_i = int(idx[0]), int(idx[-1])
        wins.append((lo_i, np.exp(z[lo_i:hi_i + 1])))
    return wins


def _tilt_brent(log_h, c, n):
    def total_mean(lam):
        tot = 0.0
        for lh in log_h:
            z = lh + lam * c
            z = z - special.logsumexp(z)
            tot += float(np.dot(np.exp(z), c))
        return tot - n

    lo, hi = -1.0, 1.0
    while total_mean(lo) > 0:
        lo *= 2
    while total_mean(hi) < 0:
        hi *= 2
    f_lo, f_hi = total_mean(lo), total_mean(hi)
    if f_lo == 0.0:  # the doubling landed on a root
        return lo
    if f_hi == 0.0:
        return hi
    return optimize.brentq(total_mean, lo, hi, xtol=1e-12)


def _tilt_newton(log_h, c, n, tol=1e-3):
    """lambda with |sum_j E_lambda[c_j] - n| < ``tol`` counts: Newton steps kept inside a bracket
    that every evaluation narrows (a step leaving it is replaced by the midpoint)."""
    def f_and_slope(lam):
        tot, var = 0.0, 0.0
        for lh in log_h:
            e = lh + lam * c
            e = np.exp(e - e.max())
            e /= e.sum()
            m = float(np.dot(e, c))
            tot += m
            var += float(np.dot(e, (c - m) ** 2))
        return tot - n, var

    lo, hi = -np.inf, np.inf
    lam = 0.0
    for _ in range(200):
        f, slope = f_and_slope(lam)
        if abs(f) < tol:
            return lam
        if f < 0:
            lo = lam
        else:
            hi = lam
        step = lam - f / slope if slope > 0 else np.nan
        if np.isfinite(step) and lo < step < hi:
            lam = step
        elif np.isfinite(lo) and np.isfinite(hi):
            lam = 0.5 * (lo + hi)
            if hi - lo < 1e-14 * max(1.0, abs(lam)):
                return lam
        else:  # no bracket on that side yet: double outwards
            lam = (2.0 * lam if lam < -0.5 else -1.0) if f > 0 else (2.0 * lam if lam > 0.5 else 1.0)
    return lam


def _conv(a, b, bounds=None):
    """Convolution of windowed sequences (offset, values): direct, or by real FFTs when both are long
    (at least ``FFT_WORK`` products). FFT round-off is about 1e-16 of the peak, so entries below
    ``FFT_FLOOR`` of the peak are noise, not weight: the ends below it are cut, and a bound on the
    weight cut, 2 FFT_FLOOR x peak x (entries cut) relative to the total, is appended to ``bounds``."""
    x, y = a[1], b[1]
    if x.size * y.size < FFT_WORK or min(x.size, y.size) <= 48:
        return a[0] + b[0], np.convolve(x, y)
    size = x.size + y.size - 1
    fast = sp_fft.next_fast_len(size, real=True)
    v = sp_fft.irfft(sp_fft.rfft(x, fast) * sp_fft.rfft(y, fast), fast)[:size]
    top = float(v.max())
    keep = np.nonzero(v > FFT_FLOOR * top)[0]
    out = np.maximum(v[keep[0]:keep[-1] + 1], 0.0)
    if bounds is not None:
        bounds.append(2.0 * FFT_FLOOR * top * (size - out.size) / float(out.sum()))
    return a[0] + b[0] + int(keep[0]), out


def _dm_mixture(problem, rng_for_draws=None):
    model, mech = problem.model, problem.mechanism
    n, k = model.n, model.k
    alpha = np.asarray(model.alpha)
    c = np.arange(n + 1, dtype=float)
    log_h = [special.gammaln(alpha[j] + c) - special.gammaln(alpha[j]) - special.gammaln(c + 1)
             + _log_eta(mech, problem.s_dp[j], c) for j in range(k)]
    return _tilted_windows(log_h, n, k)


class _DMDistribution:
    """Distribution of the true cell counts c given s_dp, via windowed convolutions."""

    def __init__(self, problem):
        self.model = problem.model
        self.n, self.k = self.model.n, self.model.k
        self.wins = _dm_mixture(problem)
        self.fft_bounds = []
        self.long = max(v.size for _, v in self.wins) ** 2 >= FFT_WORK  # the marginals by prefix x suffix
        self.prefix = [self.wins[0]]
        for j in range(1, self.k):
            self.prefix.append(_conv(self.prefix[-1], self.wins[j], self.fft_bounds))
        self.suffix = None  # suffix[j] = wins[j] * .. * wins[k-1], built when the marginals need it
        if window_at(self.prefix[-1], [self.n])[0] <= 0:
            raise ValueError("data.s_dp is invalid for exact: the release is numerically impossible under the model")

    def marginal(self, j):
        """(values, weights) of c_j: its window times the law of the other cells' sum at n - c_j (that
        law is prefix[j - 1] * suffix[j + 1] when the windows are long, else the other windows in order)."""
        if self.long:
            if self.suffix is None:
                self.suffix = [None] * self.k
                self.suffix[-1] = self.wins[-1]
                for i in range(self.k - 2, 0, -1):
                    self.suffix[i] = _conv(self.wins[i], self.suffix[i + 1], self.fft_bounds)
            parts = ([self.prefix[j - 1]] if j > 0 else []) + ([self.suffix[j + 1]] if j < self.k - 1 else [])
            others = parts[0] if len(parts) == 1 else _conv(parts[0], parts[1], self.fft_bounds)
        else:
            others = None
            for i in range(self.k):
                if i != j:
                    others = self.wins[i] if others is None else _conv(others, self.wins[i])
        off, vals = self.wins[j]
        cj = off + np.arange(vals.size)
        w = vals * window_at(others, self.n - cj)
        keep = w > 0
        return cj[keep].astype(float), w[keep] / w[keep].sum()

    def sample_counts(self, rng, size):
        out = np.empty((size, self.k))
        remaining = np.full(size, self.n)
        for j in range(self.k - 1, 0, -1):
            off, vals = self.wins[j]
            cj = off + np.arange(vals.size)
            for r in np.unique(remaining):
                rows = np.nonzero(remaining == r)[0]
                w = vals * window_at(self.prefix[j - 1], r - cj)
                w = np.where(cj <= r, w, 0.0)
                w = w / w.sum()
                out[rows, j] = rng.choice(cj, size=rows.size, p=w)
            remaining = remaining - out[:, j].astype(int)
        out[:, 0] = remaining
        return out


def exact_mixture(problem: Problem):
    """The mixture object for beta_binomial / poisson_gamma (``Mixture``, windowed) or dirichlet
    (``_DMDistribution``). Models without a finite mixture (clamped Poisson, normal) raise."""
    expect_problem(problem)
    problem = _plain_noise(problem)
    _check(problem)
    model = problem.model
    if model.name == "beta_binomial":
        s, lw, _ = _bb_weights(problem)
        return Mixture(model, s, lw)
    if model.name == "poisson_gamma" and model.upper is None:
        s, lw, _ = _pg_weights(problem)
        return Mixture(model, s, lw)
    if model.name == "dirichlet_multinomial":
        return _DMDistribution(problem)
    raise ValueError(f"model.name = {model.name!r} is invalid for exact_mixture: no finite mixture "
                     "(the exact posterior is computed on a grid: engine.methods.exact.grid_posterior_of)")


def _guesses(problem, s_value=None):
    """Centre and width of the posterior in phi (naive, and widened by the noise) to seed the grid."""
    model, mech = problem.model, problem.mechanism
    n = model.n
    s = float(model.project(problem.s_dp if s_value is None else np.array([s_value]))[0])
    noise = getattr(mech, "noise_sd", 0.0) or 0.0
    if isinstance(mech, RandomizedResponse):
        q_mat = mech.Q
        slope = abs(q_mat[1, 1] - q_mat[0, 1])
        q = min(max(float(problem.s_dp.reshape(-1)[-1]) / n, 0.0), 1.0)
        noise = math.sqrt(q * (1 - q) * n + 1.0) / max(slope, 1e-12)
        s = min(max((q - q_mat[0, 1]) / max(q_mat[1, 1] - q_mat[0, 1], 1e-12), 0.0), 1.0) * n
    if model.name == "beta_binomial":
        a1, b1 = model.a + s, model.b + n - s
        t = a1 / (a1 + b1)
        c, sc = special.digamma(a1) - special.digamma(b1), math.sqrt(special.polygamma(1, a1) + special.polygamma(1, b1))
        return c, sc, [(c, math.hypot(sc, noise / n / (t * (1 - t))))]
    if model.name == "poisson_gamma":
        sh, rate = model.alpha + s, model.beta + n
        c, sc = special.digamma(sh) - math.log(rate), math.sqrt(special.polygamma(1, sh))
        if model.upper is not None:  # the clamped mean matches s / n at the moment estimate, not the naive one
            c = math.log(float(_moment(problem, s_value)[0]))
        return c, sc, [(c, math.hypot(sc, noise / n / (sh / rate)))]
    m, sc = model.posterior_params(np.array([s]))
    m = float(_moment(problem, s_value)[0])
    return m, sc, [(m, math.hypot(sc, noise / n))]


def _moment(problem, s_value):
    if s_value is not None:
        problem = Problem(model=problem.model, mechanism=problem.mechanism, s_dp=np.array([s_value]))
    return moment_estimate(problem)


#: The last grid posteriors built, by what they depend on (:func:`_grid_key`): the app prices an exact run by one
#: evaluation (:func:`engine.cost.estimate_cost`) and then runs it, and the Privacy-budget page's advice and its
#: sweep ask for the same ε; each built it again (half of exact's time on a page). One is about 0.4 MB (15,000 nodes).
_GRIDS = Kept(16)


def _grid_key(problem: Problem, noise_free: bool, s_value):
    """What a grid posterior depends on: the model and mechanism (frozen dataclasses, compared field by field and
    type by type), the release, the prior on n; None where one of them cannot be hashed (nothing is kept)."""
    key = (problem.model, None if noise_free else problem.mechanism, problem.s_dp.shape, problem.s_dp.tobytes(),
           problem.unknown_n, noise_free, None if s_value is None else float(s_value))
    try:
        hash(key)
    except TypeError:
        return None
    return key


def grid_posterior_of(problem: Problem, noise_free: bool = False, s_value=None, *, memo: bool = True):
    """(GridPosterior, info) of a one-parameter model; ``noise_free``: given s = ``s_value`` exactly.

    The last 16 are kept (:data:`_GRIDS`; the build is deterministic, so a kept one is the same posterior and its
    draws are bitwise the same); ``memo=False`` builds afresh (and keeps the result), for timing an evaluation."""
    key = _grid_key(problem, noise_free, s_value)
    kept = _GRIDS.get(key) if memo and key is not None else None
    if kept is not None:
        return kept[0], dict(kept[1])
    gp, info = _build_grid_posterior(problem, noise_free, s_value)
    if key is not None:
        for array in (gp.x, gp.y, gp.cell_mass):  # shared from now on: read-only
            array.setflags(write=False)
        _GRIDS.put(key, (gp, info))
    return gp, dict(info)


def _build_grid_posterior(problem: Problem, noise_free: bool, s_value):
    loglik, lik_info = likelihood(problem, noise_free, s_value)
    centre, scale, extra = _guesses(problem, s_value)
    gp = grid_posterior.build(loglik, grid_posterior.prior_of(problem.model), centre, scale, extra=extra)
    floor = lik_info.pop("_floor")
    disc = lik_info.pop("_disc", None)
    if disc:  # the discretisation noise at the evaluated mu nearest the posterior median
        mus = np.array(list(disc))
        near = float(mus[np.argmin(np.abs(mus - gp.ppf(0.5)[0]))])
        lik_info["discretisation_sd"], lik_info["discretisation_ratio"] = disc[near]
    # relative to the evidence Z = p(s_dp); capped at 1 (= no useful bound: a release so far from
    # anything the model produces that Z is below e^-50 eta_max)
    log_terms = [floor.worst - gp.log_z] if np.isfinite(floor.worst) else []
    mech = None if noise_free else problem.mechanism
    if mech is not None and not isinstance(mech, RandomizedResponse):
        log_terms.append(math.log(3.0) - T_NOISE + noise_of(mech)[2] - gp.log_z)
    bound = float(min(1.0, np.exp(min(special.logsumexp(log_terms), 0.0)))) if log_terms else 0.0
    info = {"representation": "grid", "grid_nodes": int(gp.x.size), "likelihood_evaluations": int(gp.n_evaluations),
            "neglected_mass_bound": bound, "tail_mass": gp.tail_left + gp.tail_right,
            "interpolation_tol": 1e-5, "refinement_converged": gp.refined, **lik_info}
    return gp, info


def grid_result(method, problem, gp, info, rng, draws, chains, grid_size, t0):
    """The Result of a grid posterior: inverse-CDF draws and the cell-averaged density."""
    model = problem.model
    theta = gp.sample(rng, draws * chains)
    name = model.param_names[0]
    lo, hi = range_from_quantiles(gp.ppf(1e-5)[0], gp.ppf(1 - 1e-5)[0], model.support)
    density = {name: cell_density(gp.cdf, lo, hi, grid_size)}
    info = dict(info, posterior_mean=[gp.mean()], wall_time_s=time.perf_counter() - t0)
    return Result(method=method, param_names=tuple(model.param_names), draws=theta.reshape(chains, draws, 1),
                  s_dp=problem.s_dp, info=info, density=density)


def _mixture_or_none(problem):
    """The windowed mixture when it is small enough to use directly, else None (use the grid)."""
    model, mech = problem.model, problem.mechanism
    if isinstance(mech, RandomizedResponse):
        return None, None
    if getattr(mech, "release_law", False):  # no grid form: the mixture over the whole support (_check)
        s, lw, bound = _bb_weights(problem) if model.name == "beta_binomial" else _pg_weights(problem, window=False)
        return Mixture(model, s, lw), bound
    half = noise_of(mech)[3]
    if model.name == "beta_binomial":
        if min(model.n + 1, 2 * half + 1) > MAX_MIXTURE:
            return None, None
        s, lw, bound = _bb_weights(problem)
    elif model.name == "poisson_gamma" and model.upper is None:
        if 2 * half + 1 > MAX_MIXTURE:
            return None, None
        s, lw, bound = _pg_weights(problem)
    else:
        return None, None
    if s.size > MAX_MIXTURE:
        return None, None
    return Mixture(model, s, lw), bound


def exact(problem: Problem, rng: np.random.Generator, *, draws: int = 4000, chains: int = 1,
          grid_size: int = 400, memo: bool = True, **_ignored) -> Result:
    """I.i.d. draws from the exact posterior plus its marginal densities on a grid. ``memo=False``: a grid
    posterior is built afresh even when :func:`grid_posterior_of` keeps it (to time one evaluation)."""
    t0 = time.perf_counter()
    problem = _plain_noise(problem)
    _check(problem)
    model = problem.model
    total = draws * chains
    density = {}
    info = {}
    if model.name == "dirichlet_multinomial" and problem.unknown_n is not None:
        theta, info = histogram_total(problem, rng, total)
        info["wall_time_s"] = time.perf_counter() - t0
        return Result(method="exact", param_names=tuple(model.param_names) + ("n",),
                      draws=theta.reshape(chains, draws, -1), s_dp=problem.s_dp, info=info)
    if model.name == "dirichlet_multinomial":
        mix = _DMDistribution(problem)
        counts = mix.sample_counts(rng, total)
        g = rng.gamma(np.asarray(model.alpha)[None, :] + counts)
        theta = g / g.sum(axis=1, keepdims=True)
        for j, name in enumerate(model.param_names):
            cj, w = mix.marginal(j)
            a = model.alpha[j] + cj
            b = sum(model.alpha) + model.n - a
            big = w > 1e-6 * w.max()
            if w.size > BETA_RECURRENCE:  # Beta(a, a0 + n - a) grows stochastically with a: the ends suffice
                big = np.isin(np.arange(w.size), np.nonzero(big)[0][[0, -1]])
            lo, hi = range_from_quantiles(np.min(stats.beta.ppf(1e-5, a[big], b[big])),
                                          np.max(stats.beta.ppf(1 - 1e-5, a[big], b[big])), (0.0, 1.0))
            density[name] = cell_density(lambda x, w=w, a=a, b=b: _beta_mixture_cdf(w, a, b, x), lo, hi, grid_size)
        info["count_window_sizes"] = [int(v.size) for _, v in mix.wins]
        if mix.fft_bounds:
            info["fft_neglected_mass_bound"] = float(sum(mix.fft_bounds))
        info["representation"] = "mixture"
    else:
        mix, bound = _mixture_or_none(problem)
        if mix is None:
            gp, ginfo = grid_posterior_of(problem, memo=memo)
            return grid_result("exact", problem, gp, ginfo, rng, draws, chains, grid_size, t0)
        theta = mix.sample(rng, total)
        name = model.param_names[0]
        lo, hi = range_from_quantiles(mix.quantile(0, 1e-5), mix.quantile(0, 1 - 1e-5), model.support)
        density[name] = cell_density(lambda x: mix.cdf(0, x), lo, hi, grid_size)
        info["representation"] = "mixture"
        info["n_components"] = int(mix.weights.size)
        info["neglected_mass_bound"] = bound
        info["posterior_mean"] = mix.posterior_mean().tolist()
    info["wall_time_s"] = time.perf_counter() - t0
    return Result(method="exact", param_names=tuple(model.param_names),
                  draws=theta.reshape(chains, draws, -1), s_dp=problem.s_dp, info=info, density=density)


def _beta_moments(w, a, b) -> tuple[float, float]:
    """Mean and sd of the mixture sum_c w_c Beta(a_c, b_c): E = sum w a/(a+b), E[theta^2] = sum w a(a+1) /
    ((a+b)(a+b+1)) (the Beta's raw second moment), sd = sqrt(E[theta^2] - E^2)."""
    mean = float(np.dot(w, a / (a + b)))
    second = float(np.dot(w, a * (a + 1) / ((a + b) * (a + b + 1))))
    return mean, math.sqrt(max(second - mean * mean, 0.0))


def _gamma_moments(w, shape, rate) -> tuple[float, float]:
    """Mean and sd of sum_c w_c Gamma(shape_c, rate_c): E[lam^2] = shape (shape + 1) / rate^2."""
    mean = float(np.dot(w, shape / rate))
    second = float(np.dot(w, shape * (shape + 1) / (rate * rate)))
    return mean, math.sqrt(max(second - mean * mean, 0.0))


def exact_moments(problem: Problem) -> dict[str, tuple[float, float]]:
    """{param: (mean, sd)} of the exact private posterior p(theta | s_dp), with no Monte Carlo error.

    The mixture p(theta | s_dp) = sum_s w_s p(theta | s) has raw moments E[theta^r | s_dp] = sum_s w_s
    E[theta^r | s] (the law of total expectation), each E[theta^r | s] a conjugate Beta or Gamma moment;
    Dirichlet marginals are Beta(alpha_j + c_j, alpha_0 + n - alpha_j - c_j) mixed over the law of c_j. A
    grid posterior (clamped Poisson, normal, randomized response, wide noise) integrates theta and theta^2
    cell by cell (:meth:`engine.numerics.grid_posterior.GridPosterior.sd`). Raises ``ValueError`` where the
    exact method has no form (custom models, randomized response on k > 2 categories, ...)."""
    _check(problem)
    model = problem.model
    names = list(model.param_names)
    if model.name == "dirichlet_multinomial":
        mix = _DMDistribution(problem)
        alpha = np.asarray(model.alpha, dtype=float)
        out = {}
        for j, name in enumerate(names):
            cj, w = mix.marginal(j)
            out[name] = _beta_moments(w, alpha[j] + cj, alpha.sum() + model.n - alpha[j] - cj)
        return out
    mix, _ = _mixture_or_none(problem)
    if mix is None:
        gp, _ = grid_posterior_of(problem)
        return {names[0]: (gp.mean(), gp.sd())}
    w, p1, p2 = mix.marginal_components(0)
    moments = _gamma_moments if model.name == "poisson_gamma" else _beta_moments
    return {names[0]: moments(w, p1, p2)}


def exact_quantiles(problem: Problem, probs=(0.05, 0.95), params=None) -> dict[str, tuple[float, ...]]:
    """{param: (its quantile at each of ``probs``)} of the exact private posterior p(theta | s_dp), with no Monte
    Carlo error: the mixture's or the Dirichlet marginal's Beta mixture CDF solved by bracketing, a grid posterior's
    inverse CDF. For a skewed posterior (n = 1000 at epsilon = 0.01: q5 0.0052, q95 0.3002, mean 0.100, sd 0.100)
    half the q5-q95 width differs from 1.645 sd (0.148 against 0.164). ``params``: only these (default every
    parameter; a Dirichlet's k marginals each cost a root search). Raises ``ValueError`` as :func:`exact_moments`
    does."""
    _check(problem)
    model = problem.model
    names = list(model.param_names)
    probs = [float(q) for q in probs]
    if model.name == "dirichlet_multinomial":
        mix = _DMDistribution(problem)
        alpha = np.asarray(model.alpha, dtype=float)
        out = {}
        for j, name in enumerate(names):
            if params is not None and name not in params:
                continue
            cj, w = mix.marginal(j)
            a, b = alpha[j] + cj, alpha.sum() + model.n - alpha[j] - cj
            out[name] = tuple(_solve(lambda t, w=w, a=a, b=b: _beta_mixture_cdf(w, a, b, [t])[0], q, 0.0, 1.0)
                              for q in probs)
        return out
    mix, _ = _mixture_or_none(problem)
    if mix is None:
        gp, _ = grid_posterior_of(problem)
        return {names[0]: tuple(float(gp.ppf(q)[0]) for q in probs)}
    return {names[0]: tuple(float(mix.quantile(0, q)) for q in probs)}


def _solve(cdf, q: float, lo: float, hi: float) -> float:
    """The x in [lo, hi] at which the increasing ``cdf`` reaches ``q``."""
    return float(optimize.brentq(lambda t: cdf(t) - q, lo, hi, xtol=1e-12))


def _run(problem, rng, settings, on_progress):
    settings.pop("warmup", None)
    return exact(problem, rng, **settings)


METHOD = Method(name="exact", claim="exact", paper="finite mixture of conjugate posteriors (Gong 2020, Sec. 3) or "
                "the numerical posterior on an adaptive grid",
                run=_run)
