"""Pseudo-marginal Metropolis–Hastings on theta (Andrieu & Roberts 2009), exact at every epsilon.

The private posterior is p(theta | s_dp) ∝ p(theta) p(s_dp | theta) with the marginal likelihood

    p(s_dp | theta) = E_{s ~ p(s | theta)} [ eta(s_dp | s) ] = sum_s p(s | theta) eta(s_dp - s),

an expectation over the confidential *statistic*. Its Monte Carlo estimate

    L_hat(theta) = (1/M) sum_{m=1}^{M} eta(s_dp - s_m),   s_m ~ p(s | theta) i.i.d.,

is unbiased and non-negative. Metropolis–Hastings on the extended state (theta, L_hat), accepting
theta* with probability min{1, p(theta*) L_hat(theta*) q(theta | theta*) / (p(theta) L_hat(theta)
q(theta* | theta))} and carrying the current state's estimate along unchanged, leaves the joint
density p(theta) L_hat g(L_hat | theta) / p(s_dp) invariant; because E[L_hat | theta] = p(s_dp |
theta), its theta-marginal is exactly p(theta | s_dp) (Andrieu & Roberts 2009, Thm. 1). Re-estimating
the current state's likelihood at every step would break this (it becomes the "Monte Carlo within
Metropolis" approximation), so the estimate is recycled; only the proposal gets a fresh one.

Why it complements DA-MCMC (Ju et al. 2022, Alg. 1): DA-MCMC moves theta in steps of the
*confidential* posterior's width, which is tiny next to the private posterior when the noise is
wide (small epsilon relative to sqrt(n)); here theta moves on the scale of the private posterior
itself and, when the noise is wide relative to the spread of s given theta, eta(s_dp - s) hardly
varies over s, so M = 1 already gives a precise estimate (the dapper authors, paper 004 §6, name this
scheme as the remedy for DA-MCMC's slow mixing). When the noise is narrow relative to that spread
the estimate's relative variance grows (about sd(s | theta) / noise scale for Laplace noise) and M
with it; past ``max_particles`` the sampler still is exact but sticky, and DA-MCMC is the method
to use. ``info["note"]`` says so.

Parameterisation. The random walk runs on an unconstrained phi: logit(theta) for beta_binomial,
log(lam) for poisson_gamma, mu itself for normal_known_sd, the additive log-ratio
phi_j = log(p_j / p_k) for the simplex; the target in phi includes the Jacobian
(:mod:`engine.kernels.pseudo_marginal` lists each). Statistic samplers: Binomial(n, theta); Poisson(n lam);
the sum of n records clamped at ``upper`` as sum_j j N_j + upper N_upper with
N ~ Multinomial(n, P(min(X, upper) = j)); the sum of n clamped normals record by record;
Multinomial cell counts; for linear_regression the statistic of n records simulated at (beta, sigma)
(phi = beta, and log sigma^2 when sigma is unknown). Randomized response needs no estimate: each report is a categorical draw
with probabilities r = Q^T p (r = theta Q[1,1] + (1 - theta) Q[0,1] for the reported ones), so the
report counts are Multinomial(n, r) (Binomial for two categories) and that exact likelihood is used
(plain Metropolis–Hastings).

Tuning, during warm-up only (warm-up draws are discarded; the kernel is fixed afterwards):

1. Start each chain at a draw of the naive posterior. Size M at that point: from a pilot of N
   draws of eta(s_dp - s), the squared coefficient of variation CV^2 = Var(eta) / E[eta]^2 gives
   Var(log L_hat_M) ≈ CV^2 / M (delta method), so M = ceil(CV^2 / 1.2^2) makes the sd of the
   log-likelihood estimate about 1.2 (Doucet, Pitt, Deligiannidis & Kohn 2015: 1 to 1.5 is
   optimal). N grows until the pilot's own weights are not dominated by a few draws.
2. First half of warm-up: a Gaussian random walk with a diagonal scale guessed from the naive
   posterior's spread plus the noise's, multiplied by exp(g) where g follows Robbins–Monro,
   g += t^(-0.6) (acceptance of the block - target) (Andrieu & Thoms 2008).
3. Midway: the proposal covariance becomes (2.38^2 / d) times the covariance of the second quarter
   of warm-up (Haario, Saksman & Tamminen 2001); M is re-sized at that quarter's mean and the
   current state's estimate is drawn afresh with the new M (still warm-up, so still allowed).
4. Second half: Robbins–Monro on the scale again; then everything is frozen.

Target acceptance: 0.44 for one parameter with an exact likelihood, falling to 0.234 in many
dimensions (Roberts, Gelman & Gilks 1997), times 0.6 when the likelihood is estimated (the noise of
the estimate lowers the best attainable rate; Sherlock, Thiery, Roberts & Rosenthal 2015).

Chains run on threads (the compiled kernel releases the GIL), each on its own stream of
``rng.spawn(chains)``, and adapt independently, so chain c's draws do not depend on how many run.

OpenDP's mean (``[release] library = "opendp", mechanism = "mean"``: one number, sum / length, n private) runs
its own chain on (mu, n) (:mod:`engine.methods.mean_ratio`).

naive_bayes_loglinear runs its own chain (:mod:`engine.methods.loglinear_pm`): one statistic carried
with theta and moved by coupled (correlated pseudo-marginal) moves, table refreshes and theta | tables,
all O(cells) whatever n; ``particles`` and ``max_particles`` do not apply to it.

Custom models (:class:`engine.CustomModel`) run the same algorithm in plain Python through their
pieces: a statistic draw is ``sum_i record_statistic(latent_sampler(rng, theta, n))``, eta is
``log_mechanism`` (or the engine mechanism), and the random walk is on theta itself with the
model's ``log_prior`` (required: the four dapper pieces carry no prior density), -inf outside the
support rejecting the move. Chains then run one after another (Python holds the GIL).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
from scipy.special import polygamma

from ..core.chains import kept, run_chains, warmup_blocks
from ..core.results import Problem, Result
from ..core.validation import choice, fail, positive_int
from ..kernels import pseudo_marginal as pm_kernels
from ..mechanisms import RandomizedResponse
from ..mechanisms.clipped import compiled_noise
from ..mechanisms.ratio import OpenDPMean
from ..models.custom import CustomModel, log_eta_function
from .base import Method
from .loglinear_pm import loglinear_pseudo_marginal
from .mean_ratio import mean_ratio_pseudo_marginal

_NEG_INF = -math.inf


class _PythonKernels:
    """:mod:`engine.kernels.pseudo_marginal`' interface in plain Python for a custom model (identity transform:
    phi = theta). Arguments the compiled kernels need and a custom model does not are ignored."""

    def __init__(self, problem: Problem):
        self.model = problem.model
        self.log_eta = log_eta_function(problem)
        self.width = problem.s_dp.size
        self.checked = False  # record additivity, checked on the first statistic drawn

    def to_theta(self, code, phi, out):
        out[:] = phi

    def log_prior_jac(self, code, phi, par, work):
        return self.model.log_prior_at(np.array(phi, float))

    def check_start(self, phi, source: str) -> None:
        """A chain must start where the prior density is positive: from -inf, the first finite proposal would be
        accepted whatever its likelihood, and a log_prior that is -inf everywhere would leave the chain at its start."""
        if self.log_prior_jac(-1, phi, None, None) == _NEG_INF:
            fail("model.log_prior", self.model.log_prior, f"it returned -inf at the chain's start theta = "
                 f"{np.asarray(phi).tolist()} ({source}); the start must lie in the prior's support")

    def _log_eta_draw(self, rng, theta):
        m = self.model
        recs = m.draw_records(rng, np.array(theta, float))
        t = m.contributions(recs, self.width)
        if not self.checked:
            m.check_additive(recs, t)
            self.checked = True
        return self.log_eta(t.sum(axis=0))

    def log_eta_draws(self, code, rng, theta, par, sdp, kernel, scale, size, out):
        for i in range(size):
            out[i] = self._log_eta_draw(rng, theta)
        if size and np.all(out[:size] == _NEG_INF):
            fail("s_dp", np.asarray(sdp).tolist(), f"log eta(s_dp | s) is -inf for all {size} statistics drawn at "
                 f"theta = {np.asarray(theta).tolist()}: the pilot cannot size the particles. Check the mechanism's "
                 "log-density (finite where s can give s_dp), or start (model.init_theta) where the release is likely")

    def loglik_estimate(self, code, rng, theta, par, sdp, kernel, scale, log_q, n_particles, *buffers):
        vals = np.array([self._log_eta_draw(rng, theta) for _ in range(n_particles)])
        top = vals.max()
        if top == _NEG_INF:
            return _NEG_INF
        return float(top + math.log(np.mean(np.exp(vals - top))))

    def pm_chain(self, rng, code, par, sdp, kernel, scale, log_q, n_particles, chol, phi, lp_cur, ll_cur, n_iter,
                 out_theta, out_acc, out_accepted, out_ll):
        """The loop of :func:`engine.kernels.pseudo_marginal.pm_chain`, line for line."""
        for t in range(n_iter):
            prop = phi + chol @ rng.standard_normal(phi.size)
            lp = self.log_prior_jac(code, prop, par, None)
            acc, moved = 0.0, False
            if lp > _NEG_INF:
                ll = self.loglik_estimate(code, rng, prop, par, sdp, kernel, scale, log_q, n_particles)
                lr = (lp + ll) - (lp_cur + ll_cur)
                acc = 1.0 if lr >= 0 else (math.exp(lr) if lr > -745.0 else 0.0)
                if acc >= 1.0 or rng.random() < acc:
                    phi[:] = prop
                    lp_cur, ll_cur, moved = lp, ll, True
            out_theta[t] = phi
            out_acc[t], out_accepted[t], out_ll[t] = acc, moved, ll_cur
        return lp_cur, ll_cur

__all__ = ["pseudo_marginal", "choose_particles", "moment_estimate", "METHOD", "TARGET_LOG_SD",
           "DEFAULT_MAX_PARTICLES", "PROPOSALS"]

PROPOSALS = ("random_walk", "mixed")
IND_PROB = 0.7   # proposal = "mixed": share of kept iterations that propose from the independence t
IND_NU = 5.0     # its degrees of freedom (heavier tails than the posterior: the ratio stays bounded)
IND_WIDEN = 1.3  # and its scale over the fitted covariance's
IND_DEFENSIVE = 0.2  # weight of the defensive (wide) component of the independence proposal

TARGET_LOG_SD = 1.2             # sd of log L_hat at the posterior bulk (Doucet et al. 2015)
DEFAULT_MAX_PARTICLES = 20_000  # beyond this the noise is too narrow for the estimator: use da_mcmc
_PILOT_MIN, _PILOT_MAX = 2_000, 512_000
_PILOT_WORK = 20_000_000        # record draws a pilot may spend on the normal model (M x n each)
_PILOT_HEAD = 100               # the first batch's first part (then parts doubling what is drawn), each read ...
_PILOT_HEAD_WORK = 2_000_000    # ... where the batch costs at least this many record draws (regression n >= 334)
_PILOT_FLAT = 0.9               # draws whose weights' ESS is this share of them decide M = 1
_PILOT_ONE = 1.5                # draws whose weights' ESS is below this carry their weight on one draw
_CODES = {"beta_binomial": 0, "poisson_gamma": 2, "normal_known_sd": 4, "dirichlet_multinomial": 5,
          "linear_regression": 7}


@dataclass(frozen=True)
class _Setup:
    """The problem as the compiled kernel sees it."""

    code: int
    par: np.ndarray
    sdp: np.ndarray
    kernel: int
    scale: float
    log_q: np.ndarray
    d: int          # dimension of phi
    k: int          # number of parameters reported
    exact_likelihood: bool
    pilot_cost: int  # random draws per statistic sample (n for the normal model)
    kern: object = pm_kernels  # the compiled kernels, or _PythonKernels for a custom model


def _setup(problem: Problem) -> _Setup:
    model, mech = problem.model, problem.mechanism
    if isinstance(model, CustomModel):
        if model.log_prior is None:
            raise ValueError("model.log_prior = None is invalid for pseudo_marginal: the sampler needs the prior "
                             "density, which the four dapper pieces do not give; add log_prior or use da_mcmc")
        k = len(model.param_names)
        return _Setup(code=-1, par=np.zeros(4), sdp=np.asarray(problem.s_dp, float), kernel=0, scale=1.0,
                      log_q=np.zeros((1, 1)), d=k, k=k, exact_likelihood=False, pilot_cost=model.n,
                      kern=_PythonKernels(problem))
    rr = isinstance(mech, RandomizedResponse)
    code = _CODES[model.name]
    sdp = np.asarray(problem.s_dp, float)
    log_q = np.zeros((1, 1))
    cost = 1
    if model.name == "beta_binomial":
        par = np.array([model.n, model.a, model.b, -1.0])
        code = 1 if rr else 0
    elif model.name == "poisson_gamma":
        upper = -1.0 if model.upper is None else float(model.upper)
        par = np.array([model.n, model.alpha, model.beta, upper])
        code = 3 if model.upper is not None else 2
        cost = 1 if model.upper is None else model.upper + 1
    elif model.name == "normal_known_sd":
        par = np.array([model.n, model.sd, model.lo, model.hi, model.prior_mean, model.prior_sd])
        cost = model.n
    elif model.name == "linear_regression":
        a, b = model.sigma_prior or (0.0, 0.0)
        code = 8 if model.unknown_sigma else 7
        par = np.concatenate([[model.n, model.p, model.prior_sd, a, b, model.sigma], model.x_mean,
                              model.chol.ravel(), model.lo, model.hi]).astype(float)
        cost = model.n * (model.p + 1)
    else:
        par = np.concatenate([[model.n], np.asarray(model.alpha, float), [-1.0, -1.0, -1.0]])
        code = 6 if rr else 5
        cost = model.k
    if rr:
        log_q = np.ascontiguousarray(mech.log_Q)
    k = len(model.param_names)
    d = k - 1 if model.name == "dirichlet_multinomial" else k
    # a float scale, or a tuple for a bounded domain or a lattice release on its clip bound (compiled_noise)
    kernel, scale = (0, 1.0) if rr else compiled_noise(mech)
    return _Setup(code=code, par=par, sdp=sdp, kernel=kernel, scale=scale, log_q=log_q, d=d, k=k,
                  exact_likelihood=rr, pilot_cost=int(cost))


def _to_phi(setup: _Setup, theta: np.ndarray) -> np.ndarray:
    """phi(theta) for rows of theta (the inverse of pm_kernels.to_theta)."""
    th = np.atleast_2d(np.asarray(theta, float))
    if setup.code == -1:
        return th.copy()
    if setup.code in (0, 1):
        t = np.clip(th[:, 0], 1e-300, 1 - 1e-16)
        return (np.log(t) - np.log1p(-t))[:, None]
    if setup.code in (2, 3):
        return np.log(np.maximum(th[:, :1], 1e-300))
    if setup.code == 4:
        return th[:, :1].copy()
    if setup.code in (7, 8):
        phi = th.copy()
        if setup.code == 8:
            phi[:, -1] = np.log(np.maximum(th[:, -1], 1e-300))
        return phi
    p = np.maximum(th, 1e-300)
    return np.log(p[:, :-1]) - np.log(p[:, -1:])


def noise_variance(problem: Problem) -> float:
    """The release's noise variance (0 where the mechanism states none): what the normal surrogates add to the
    statistic's own covariance."""
    return float(getattr(problem.mechanism, "noise_sd", 0.0) or 0.0) ** 2


def moment_estimate(problem: Problem) -> np.ndarray:
    """theta at which the statistic's mean E[s | theta] equals the (projected) release: a cheap centre
    for the pilot that sizes M and for the chains' start. Unlike the naive posterior it accounts for
    clamping: E[min(X, U)] = sum_{j<U} P(X > j) for Poisson records, and for a normal record clamped
    to [lo, hi], E = lo Phi(a) + hi (1 - Phi(b)) + mu (Phi(b) - Phi(a)) + sd (phi(a) - phi(b)) with
    a = (lo - mu)/sd, b = (hi - mu)/sd. Randomized response and the simplex use the naive centre. A custom model
    has no mean map to invert: its ``init_theta`` (where :func:`pseudo_marginal` centres its pilot too)."""
    from scipy import optimize, stats

    model = problem.model
    if isinstance(model, CustomModel):
        return np.asarray(model.init_theta, float)
    target = model.project(problem.s_dp)
    if model.name == "linear_regression":
        # the naive mean, unless the noisy x~^T x~ put it in the prior's far tail (small epsilon): then
        # the prior mean beta = 0, with sigma^2 at its prior median
        centre = np.asarray(model.posterior_sample(np.random.default_rng(0), target, 2000).mean(axis=0))
        q = model.p + 1
        if np.any(np.abs(centre[:q]) > 3.0 * model.prior_sd):
            centre[:q] = 0.0
        if model.unknown_sigma:
            a, b = model.sigma_prior
            lo, hi = stats.invgamma(a, scale=b).ppf([0.01, 0.99])
            centre[q] = min(max(centre[q], lo), hi)
        return centre
    if isinstance(problem.mechanism, RandomizedResponse) or model.name == "dirichlet_multinomial":
        return np.asarray(model.posterior_sample(np.random.default_rng(0), target, 2000).mean(axis=0))
    per = float(target[0]) / model.n
    if model.name == "beta_binomial":
        return np.array([min(max(per, 1e-6), 1 - 1e-6)])
    if model.name == "poisson_gamma":
        if model.upper is None:
            return np.array([max(per, 1e-6)])
        j = np.arange(model.upper)
        mean = lambda lam: float(np.sum(stats.poisson.sf(j, lam)))  # noqa: E731
        if per <= 0:
            return np.array([1e-6])
        if per >= model.upper - 1e-9:
            return np.array([float(model.upper) * 10])
        hi = max(1.0, per)
        while mean(hi) < per:
            hi *= 2
        return np.array([optimize.brentq(lambda lam: mean(lam) - per, 1e-12, hi, xtol=1e-12)])
    lo, hi, sd = model.lo, model.hi, model.sd

    def mean(mu):
        a, b = (lo - mu) / sd, (hi - mu) / sd
        return (lo * stats.norm.cdf(a) + hi * stats.norm.sf(b) + mu * (stats.norm.cdf(b) - stats.norm.cdf(a))
                + sd * (stats.norm.pdf(a) - stats.norm.pdf(b)))

    per = min(max(per, lo + 1e-9 * (hi - lo)), hi - 1e-9 * (hi - lo))
    width = (hi - lo) + 10 * sd
    return np.array([optimize.brentq(lambda mu: mean(mu) - per, lo - width, hi + width, xtol=1e-12)])


def _target_acceptance(setup: _Setup) -> float:
    base = {1: 0.44, 2: 0.35, 3: 0.30, 4: 0.28}.get(setup.d, 0.234)
    return base if setup.exact_likelihood else 0.6 * base


def choose_particles(rng: np.random.Generator, setup: _Setup, theta: np.ndarray, cap: int,
                     enough: int | None = None) -> tuple[int, float]:
    """M making sd(log L_hat) about TARGET_LOG_SD at ``theta``; returns (M, CV^2 of eta there).

    The pilot draws N values of eta(s_dp - s) and computes CV^2 from weights w = exp(l - max l);
    N grows (x8) while fewer than 100 draws carry the weight ((sum w)^2 / sum w^2 < 100), since
    then the pilot itself has not seen the distribution of eta. The result is capped at ``cap``.

    Where the first batch is costly (``_PILOT_HEAD_WORK`` record draws or more: regression from n = 334, the
    normal model from n = 1,000), it is drawn in parts from one stream, the first ``_PILOT_HEAD`` draws and
    then up to twice as many as drawn so far, each read before the next is drawn (so where no part decides,
    the batch and M are what one draw of the batch gives). The draws so far decide, and the pilot stops, where

    * their weights are nearly flat, ESS >= ``_PILOT_FLAT`` of the draws: CV^2 = N / ESS - 1 <= 0.11, so M = 1
      with a margin of 13 to M = 2. eta's log is a smooth function of s (Lipschitz for Laplace noise,
      quadratic for Gaussian) and s is a sum of bounded or light-tailed records, so draws over which log eta
      hardly varies have not missed a region of s carrying much of the weight; or
    * ``enough`` is given, the draws so far carry their weight on one draw (ESS < ``_PILOT_ONE``) and ask for
      more than twice ``enough`` particles (the caller's rule has no use for the number past ``enough``). There
      the noise is narrow next to the spread of s: M is about N / 1.44, set by the number of draws N rather
      than by the weights, and more draws only raise it (at n = 10^4 with Gaussian noise at rho = 50, 139 after
      200 draws, 462 after 666; at n = 1,000, 2,300-4,600 after 8,666). A heavy tail that is not one draw's
      is left to the whole pilot: fewer draws give a noisier M in both directions (the clamped regression at
      n = 1,000, Laplace epsilon = 3.5: 82 particles after 800 draws, 44 after the 6,666 the pilot grew to).

    M only sets the estimator's variance: the sampler is exact with any M (module docstring), so a part that
    decides wrong costs mixing, never exactness. At n = 10^4 records of the regression the batch is 666 draws
    (0.4 s) and the parts 100, 100, 200 and 266; the sampler runs the pilot at every chain's start and midway,
    ``auto`` once, with ``enough`` (:func:`engine.methods.auto._choose_regression`).
    """
    if setup.exact_likelihood:
        return 1, 0.0
    theta = np.ascontiguousarray(np.asarray(theta, float).reshape(-1))
    top = max(200, min(_PILOT_MAX, _PILOT_WORK // max(setup.pilot_cost, 1)))
    if setup.code == -1:  # plain Python: a few thousand statistic draws at most
        top = 2000
    n_pilot = min(_PILOT_MIN, top)
    head = n_pilot  # no parts: a cheap batch, or a custom model's Python (which checks each batch it draws)
    if setup.code != -1 and setup.pilot_cost * n_pilot >= _PILOT_HEAD_WORK:
        head = _PILOT_HEAD

    def draw(out) -> None:
        setup.kern.log_eta_draws(setup.code, rng, theta, setup.par, setup.sdp, setup.kernel, setup.scale,
                                 out.size, out)

    past = math.inf if enough is None else 2 * enough
    while True:
        out = np.empty(n_pilot)
        done = 0
        while done < n_pilot:
            upto = min(n_pilot, max(head, 2 * done))
            draw(out[done:upto])
            done = upto
            if done < n_pilot:
                cv2, ess = _pilot_read(out[:done])
                if ess >= _PILOT_FLAT * done or (ess < _PILOT_ONE and _particles(cv2) > past):
                    return min(_particles(cv2), cap), cv2
        cv2, ess = _pilot_read(out)
        if ess >= 100 or n_pilot >= top:
            return min(_particles(cv2), cap), cv2
        n_pilot = head = min(top, n_pilot * 8)


def _pilot_read(log_eta: np.ndarray) -> tuple[float, float]:
    """CV^2 and ESS, (sum w)^2 / sum w^2, of the pilot's weights w = exp(l - max l)."""
    w = np.exp(log_eta - log_eta.max())
    return float(np.var(w) / np.mean(w) ** 2), float(w.sum() ** 2 / np.sum(w * w))


def _particles(cv2: float) -> int:
    """M = ceil(CV^2 / TARGET_LOG_SD^2), at least 1."""
    return max(int(math.ceil(cv2 / TARGET_LOG_SD**2)), 1)


def _prior_sd_phi(setup: _Setup, model) -> np.ndarray | None:
    """The prior's sd of each phi coordinate in closed form, or None (a model whose phi it does not know).

    logit theta under Beta(a, b): Var = psi1(a) + psi1(b) (log theta and log(1 - theta) have variances psi1(a) -
    psi1(a + b) and psi1(b) - psi1(a + b) and covariance -psi1(a + b)); log lambda under Gamma(alpha, beta):
    psi1(alpha); the normal mean: prior_sd^2; log p_j - log p_k under Dirichlet(alpha): psi1(alpha_j) +
    psi1(alpha_k) (Var log p_j = psi1(alpha_j) - psi1(alpha_0), Cov(log p_j, log p_k) = -psi1(alpha_0))."""
    if setup.code in (0, 1):
        return np.sqrt(np.atleast_1d(polygamma(1, model.a) + polygamma(1, model.b)))
    if setup.code in (2, 3):
        return np.sqrt(np.atleast_1d(polygamma(1, model.alpha)))
    if setup.code == 4:
        return np.atleast_1d(float(model.prior_sd))
    if setup.code in (5, 6):
        alpha = np.asarray(model.alpha, float)
        return np.sqrt(polygamma(1, alpha[:-1]) + polygamma(1, alpha[-1]))
    return None


def _initial_chol(problem: Problem, setup: _Setup, rng: np.random.Generator, theta0: np.ndarray) -> np.ndarray:
    """Diagonal proposal scale: the naive posterior's sd in phi plus the noise's contribution
    noise_sd / (n dtheta/dphi), times 2.38 / sqrt(d); no wider than the prior's sd in phi (:func:`_prior_sd_phi`).

    The posterior is no wider than the prior where the noise swamps the records: a normal mean with prior sd 0.01
    under Laplace noise of sd 8.5 on one record started at 850 posterior sds, a Dirichlet(500, 500, 500) at 8.5 on
    the log-ratio scale against 0.05, and warm-up's Robbins-Monro steps never brought the scale back (R-hat 1.6 to
    2.6 at the defaults, audit s24 M1). Where the cap does not bind (a prior wider than this sd: the usual case)
    the scale, and so every draw, is what it was."""
    model = problem.model
    if setup.code == -1:
        spread = 0.1 * np.maximum(np.abs(np.asarray(theta0, float)), 1.0)
        if model.prior_sampler is not None:
            spread = 0.2 * np.std(np.asarray(model.sample_prior(rng, 200), float), axis=0)
        return np.diag(2.38 / math.sqrt(setup.d) * np.maximum(spread, 1e-8))
    naive = model.posterior_sample(rng, model.project(problem.s_dp), 400)
    sd = np.std(_to_phi(setup, naive), axis=0)
    if setup.code in (7, 8):  # naive is overconfident here; start no narrower than a tenth of the prior
        floor = np.full(setup.d, 0.1 * model.prior_sd)
        if setup.code == 8:
            floor[-1] = 0.1
        return np.diag(2.38 / math.sqrt(setup.d) * np.minimum(np.maximum(sd, floor), 10.0))
    noise_sd = float(getattr(problem.mechanism, "noise_sd", 0.0) or 0.0)
    th = np.asarray(theta0, float)
    if setup.code in (0, 1):
        deriv = th[0] * (1 - th[0])
    elif setup.code in (2, 3):
        deriv = th[0]
    elif setup.code == 4:
        deriv = 1.0
    else:
        deriv = th[:-1] * (1 - th[:-1])
    sd = np.sqrt(sd**2 + (noise_sd / (model.n * np.maximum(deriv, 1e-12))) ** 2)
    if setup.exact_likelihood:
        q = np.exp(setup.log_q)
        gap = max(abs(float(np.linalg.det(q))), 1e-3) if q.shape[0] <= 8 else 0.1
        sd = sd / gap ** (1.0 / q.shape[0])
    prior_sd = _prior_sd_phi(setup, model)
    if prior_sd is not None:
        sd = np.minimum(sd, prior_sd)
    sd = np.clip(sd, 1e-6, 10.0)
    return np.diag(2.38 / math.sqrt(setup.d) * np.broadcast_to(sd, (setup.d,)))


@dataclass
class _Chain:
    phi: np.ndarray
    lp: float
    ll: float
    chol: np.ndarray
    log_scale: float
    particles: int
    cv2: float
    capped: bool
    ind_mean: np.ndarray | None = None  # the independence proposal (proposal = "mixed", after warm-up):
    ind_chol: np.ndarray | None = None  # (components, d) locations, (components, d, d) scales and
    ind_log_w: np.ndarray | None = None  # log weight - log |det scale| of each component


def _clean(setup, theta):
    theta = np.asarray(theta, float)
    if setup.code in (0, 1):
        return np.clip(theta, 1e-9, 1 - 1e-9)
    if setup.code in (5, 6):
        theta = np.maximum(theta, 1e-9)
        return theta / theta.sum()
    if setup.code == 8:
        theta = theta.copy()
        theta[..., -1] = np.maximum(theta[..., -1], 1e-12)
    return theta


def _start(problem, setup, rng, particles, cap, centre) -> _Chain:
    """Start at the moment estimate displaced by a naive-posterior deviation (dispersed starts, for
    R-hat), and size M at the moment estimate (the pilot should look where the posterior is)."""
    model = problem.model
    if setup.code == -1:  # a custom model starts at init_theta, or at a prior draw when it can draw one
        start = model.sample_prior(rng, 1)[0] if model.prior_sampler is not None else centre
        phi = np.array(start, float)
        setup.kern.check_start(phi, "a prior_sampler draw" if model.prior_sampler is not None else "model.init_theta")
    else:
        naive = _clean(setup, model.posterior_sample(rng, model.project(problem.s_dp), 201))
        dev = _to_phi(setup, naive[:1])[0] - np.median(_to_phi(setup, naive[1:]), axis=0)
        phi = np.ascontiguousarray(_to_phi(setup, centre)[0] + dev)
    theta0 = np.empty(setup.k)
    setup.kern.to_theta(setup.code, phi, theta0)
    chol = _initial_chol(problem, setup, rng, theta0)
    if particles is not None:
        m, cv2 = (1, 0.0) if setup.exact_likelihood else (int(particles), float("nan"))
        capped = False
    else:
        m, cv2 = choose_particles(rng, setup, centre, cap)
        capped = cv2 / TARGET_LOG_SD**2 > cap
    ch = _Chain(phi=phi, lp=0.0, ll=0.0, chol=chol, log_scale=0.0, particles=m, cv2=cv2, capped=capped)
    _refresh(setup, rng, ch)
    return ch


def _refresh(setup, rng, ch: _Chain) -> None:
    """A fresh estimate at the current state (warm-up only: the start, and after M changes)."""
    k = setup.k
    size = max(k, int(setup.par[3]) + 1 if setup.code == 3 else 1)
    work = np.empty(size)
    theta = np.empty(k)
    setup.kern.to_theta(setup.code, ch.phi, theta)
    ch.lp = float(setup.kern.log_prior_jac(setup.code, ch.phi, setup.par, work))
    ch.ll = float(setup.kern.loglik_estimate(setup.code, rng, theta, setup.par, setup.sdp, setup.kernel,
                                             setup.scale, setup.log_q, ch.particles, np.empty(size),
                                             np.empty(size), work))


def _advance(setup, rng, ch: _Chain, n_iter, theta, acc, accepted, ll) -> None:
    chol = np.ascontiguousarray(ch.chol * math.exp(ch.log_scale))
    if ch.ind_chol is not None:
        ch.lp, ch.ll = pm_kernels.pm_chain_mixed(rng, setup.code, setup.par, setup.sdp, setup.kernel, setup.scale,
                                                 setup.log_q, ch.particles, chol, ch.phi, ch.lp, ch.ll, n_iter,
                                                 ch.ind_mean, ch.ind_chol, ch.ind_log_w, IND_NU, IND_PROB, theta, acc,
                                                 accepted, ll)
        return
    ch.lp, ch.ll = setup.kern.pm_chain(rng, setup.code, setup.par, setup.sdp, setup.kernel, setup.scale,
                                       setup.log_q, ch.particles, chol, ch.phi, ch.lp, ch.ll, n_iter,
                                       theta, acc, accepted, ll)


def _run_chain(problem, setup, rng, warmup, draws, particles, cap, centre, progress, c, tick, stop,
               proposal="random_walk"):
    total = warmup + draws
    theta = np.empty((total, setup.k))
    acc = np.empty(total)
    accepted = np.zeros(total, dtype=np.bool_)
    ll = np.empty(total)
    ch = _start(problem, setup, rng, particles, cap, centre)
    target = _target_acceptance(setup)
    half, t_rm = warmup // 2, 0
    for done, end in warmup_blocks(warmup, total):
        if stop.is_set():
            break
        m = end - done
        _advance(setup, rng, ch, m, theta[done:end], acc[done:end], accepted[done:end], ll[done:end])
        done = end
        if done <= warmup:  # Robbins-Monro on the log scale, warm-up only
            t_rm += 1
            ch.log_scale += t_rm ** -0.6 * (float(acc[done - m:done].mean()) - target)
        if done == half and half >= 40:
            _midway(setup, rng, ch, theta[half // 2:half], particles, cap)
            t_rm = 0
        if done == warmup and proposal == "mixed" and warmup >= 40:
            _fit_independence(problem, setup, ch, theta[half:warmup])
        progress[c] = done
        tick()
    return (theta, acc, accepted.astype(float), ll,
            {"particles": ch.particles, "cv2": ch.cv2, "capped": ch.capped,
             "proposal_sd": np.sqrt(np.diag(ch.chol @ ch.chol.T)).tolist() if ch.chol.size else [],
             "scale_factor": math.exp(ch.log_scale),
             "independence_sd": None if ch.ind_chol is None else np.sqrt(np.diag(ch.ind_chol[0] @ ch.ind_chol[0].T)).tolist()})


def _fit_independence(problem, setup, ch: _Chain, theta_h2) -> None:
    """The independence proposal of ``proposal = "mixed"``, fixed from the second half of warm-up: a
    mixture of two t laws (IND_NU degrees of freedom). The main one (weight 1 - IND_DEFENSIVE) is
    centred at that half's mean in phi with scale IND_WIDEN x a covariance: for linear_regression
    (known sigma) the normal surrogate's Cov(beta | s_dp) at that mean
    (:meth:`engine.models.linear_regression.LinearRegression.surrogate_covariances`), each coordinate
    widened to the warm-up's own spread where that is larger; otherwise the warm-up's covariance. The
    defensive one (weight IND_DEFENSIVE; Hesterberg 1995) is the prior N(0, tau^2 I) as a t for the
    regression, else the main one three times wider: it keeps the ratio q(phi) / q(phi*) bounded
    where the posterior is wider or less normal than the fit, and lets a chain leave a region its
    warm-up over-represented. Any proposal that does not depend on the kept draws leaves the target
    invariant (:func:`engine.kernels.pseudo_marginal.pm_chain_mixed`); the fit only makes it efficient."""
    phi = _to_phi(setup, theta_h2)
    mean = phi.mean(axis=0)
    cov = np.atleast_2d(np.cov(phi, rowvar=False))
    if setup.code == 7:
        sur = problem.model.surrogate_covariances(mean, noise_variance(problem))[0]
        widen = np.sqrt(np.maximum(1.0, np.diag(cov) / np.diag(sur)))
        cov = sur * np.outer(widen, widen)
    if not (np.all(np.isfinite(cov)) and np.all(np.diag(cov) > 0)):
        return
    try:
        main = np.linalg.cholesky(cov) * IND_WIDEN
    except np.linalg.LinAlgError:
        return
    if setup.code == 7:
        wide_mean, wide = np.zeros(setup.d), np.eye(setup.d) * problem.model.prior_sd
    else:
        wide_mean, wide = mean, 3.0 * main
    chols = np.stack([main, wide])
    ch.ind_mean = np.ascontiguousarray(np.stack([mean, wide_mean]))
    ch.ind_chol = np.ascontiguousarray(chols)
    ch.ind_log_w = np.array([math.log(1.0 - IND_DEFENSIVE), math.log(IND_DEFENSIVE)]) - np.array(
        [float(np.sum(np.log(np.diag(c)))) for c in chols])


def _midway(setup, rng, ch: _Chain, theta_q2, particles, cap) -> None:
    """Adaptive-Metropolis covariance from the second quarter of warm-up, and M re-sized at its mean."""
    phi = _to_phi(setup, theta_q2)
    cov = np.atleast_2d(np.cov(phi, rowvar=False))
    if np.all(np.isfinite(cov)) and np.all(np.diag(cov) > 0):
        cov = cov + 1e-10 * np.eye(setup.d) * max(float(np.mean(np.diag(cov))), 1e-12)
        try:
            ch.chol = np.linalg.cholesky(cov) * (2.38 / math.sqrt(setup.d))
            ch.log_scale = 0.0
        except np.linalg.LinAlgError:
            pass
    if particles is None and not setup.exact_likelihood:
        centre = np.empty(setup.k)
        setup.kern.to_theta(setup.code, np.ascontiguousarray(phi.mean(axis=0)), centre)
        m, cv2 = choose_particles(rng, setup, centre, cap)
        ch.particles, ch.cv2, ch.capped = m, cv2, cv2 / TARGET_LOG_SD**2 > cap
        _refresh(setup, rng, ch)


def pseudo_marginal(problem: Problem, rng: np.random.Generator, *, chains: int = 4, draws: int = 1000,
                    warmup: int = 500, particles: int | None = None, max_particles: int = DEFAULT_MAX_PARTICLES,
                    on_progress=None, parallel: bool = True, proposal: str = "random_walk") -> Result:
    """Draw from p(theta | s_dp) by pseudo-marginal Metropolis–Hastings (Andrieu & Roberts 2009).

    Parameters
    ----------
    problem : Problem
    rng : numpy.random.Generator
        Parent stream; chain c runs on ``rng.spawn(chains)[c]``.
    chains, draws, warmup : int
        Chains, kept iterations per chain, and adaptation iterations per chain (discarded).
    particles : int, optional
        M, the statistic draws per likelihood estimate; default: chosen per chain in warm-up so that
        sd(log L_hat) ≈ 1.2 (capped at ``max_particles``). Ignored with randomized response (exact
        likelihood).
    on_progress : callable(done, total), optional
        Returning ``False`` stops the run at the next block, keeping what was drawn
        (``info["stopped"] = "cancelled"``; :mod:`engine.core.chains`).
    proposal : {"random_walk", "mixed"}
        ``"mixed"``: after warm-up, each iteration proposes with probability 0.7 from a fixed independence
        t fitted in warm-up (:func:`_fit_independence`) and otherwise takes the random-walk step
        (:func:`engine.kernels.pseudo_marginal.pm_chain_mixed`): when one or two particles suffice (wide
        noise) nearly every accepted independence draw is a new effective draw, against about one in
        5 d iterations for the random walk. Compiled models only.

    Returns
    -------
    Result
        ``sample_stats``: ``acceptance_rate`` (the Metropolis–Hastings acceptance probability of each
        iteration), ``accepted`` (1 when the proposal was taken) and ``log_likelihood_estimate`` (the
        current state's log L_hat). ``info``: ``particles`` (M per chain), ``log_lik_sd`` (the
        predicted sd of log L_hat at the bulk, sqrt(CV^2 / M)), ``particles_capped``, ``likelihood``
        (``estimated`` or ``exact``), ``target_acceptance``, ``mean_acceptance``, proposal scales and
        ``note`` when M hit its cap.
    """
    if isinstance(problem.mechanism, OpenDPMean):  # OpenDP's mean: a chain on (mu, n), the ratio's exact law
        if proposal != "random_walk":
            fail("method.proposal", proposal, "must be 'random_walk' for OpenDP's mean (its chain on (mu, n))")
        return mean_ratio_pseudo_marginal(problem, rng, chains=chains, draws=draws, warmup=warmup,
                                          particles=particles, max_particles=max_particles, on_progress=on_progress,
                                          parallel=parallel)
    if problem.model.name == "naive_bayes_loglinear":  # its own chain: O(cells) per move, no particles to size
        return loglinear_pseudo_marginal(problem, rng, chains=chains, draws=draws, warmup=warmup,
                                         on_progress=on_progress, parallel=parallel)
    t0 = time.perf_counter()
    setup = _setup(problem)
    if proposal not in PROPOSALS:
        fail("method.proposal", proposal, "must be one of " + ", ".join(PROPOSALS))
    if proposal == "mixed" and setup.code == -1:
        fail("method.proposal", proposal, "is for the compiled models; a custom model runs proposal = 'random_walk'")
    if setup.code == -1:
        centre = np.asarray(problem.model.init_theta, float)
    else:
        centre = _clean(setup, moment_estimate(problem))
    streams = rng.spawn(chains)
    progress = np.zeros(chains, dtype=np.int64)
    outs, stopped = run_chains(
        lambda c, tick, stop: _run_chain(problem, setup, streams[c], warmup, draws, particles, max_particles, centre,
                                         progress, c, tick, stop, proposal),
        chains, warmup + draws, progress, on_progress, parallel=parallel and setup.code != -1)
    keep, n_kept = kept(progress, warmup, draws)
    sl = slice(warmup, warmup + n_kept)
    outs = [(o[0][sl], o[1][sl], o[2][sl], o[3][sl], o[4]) for o in (outs[c] for c in keep)]
    theta = np.stack([o[0] for o in outs])
    acc = np.stack([o[1] for o in outs])
    per = [o[4] for o in outs]
    info = {
        "likelihood": "exact" if setup.exact_likelihood else "estimated",
        "mcmc": True,
        "compiled": setup.code != -1,
        "particles": [p["particles"] for p in per],
        "log_lik_sd": [None if not np.isfinite(p["cv2"]) else math.sqrt(p["cv2"] / p["particles"]) for p in per],
        "particles_capped": any(p["capped"] for p in per),
        "max_particles": int(max_particles),
        "target_acceptance": _target_acceptance(setup),
        "mean_acceptance": float(acc.mean()) if acc.size else float("nan"),
        "proposal_sd": [p["proposal_sd"] for p in per],
        **({"proposal": proposal, "independence_sd": [p["independence_sd"] for p in per]}
           if proposal != "random_walk" else {}),
        "chains": len(keep), "draws": n_kept, "warmup": warmup,
        "stopped": "cancelled" if stopped else None,
        "wall_time_s": time.perf_counter() - t0,
    }
    if info["particles_capped"]:
        need = max(p["cv2"] for p in per) / TARGET_LOG_SD**2
        info["note"] = (f"the noise is narrow relative to the statistic's spread: M ≈ {need:,.0f} particles would be "
                        f"needed, capped at {max_particles:,}; the chains stay exact but mix slowly. "
                        "DA-MCMC (da_mcmc) is the sampler for this regime.")
    return Result(method="pseudo_marginal", param_names=tuple(problem.model.param_names), draws=theta,
                  s_dp=problem.s_dp,
                  sample_stats={"acceptance_rate": acc, "accepted": np.stack([o[2] for o in outs]),
                                "log_likelihood_estimate": np.stack([o[3] for o in outs])},
                  info=info)


def _validate(table, out):
    if "proposal" in table:
        out["proposal"] = choice("method.proposal", table["proposal"], PROPOSALS)
    if "particles" in table:
        out["particles"] = positive_int("method.particles", table["particles"], 1, 10_000_000)
    if "max_particles" in table:
        out["max_particles"] = positive_int("method.max_particles", table["max_particles"], 1, 10_000_000)
    if "particles" in out and "max_particles" in out and out["max_particles"] < out["particles"]:
        fail("method.max_particles", table["max_particles"], f"must be at least method.particles = {out['particles']} "
             "(it caps the number chosen when particles is not given)")


def _run(problem, rng, settings, on_progress):
    settings.pop("grid_size", None)
    return pseudo_marginal(problem, rng, on_progress=on_progress, **settings)


METHOD = Method(name="pseudo_marginal", claim="exact", paper="Andrieu & Roberts 2009 (named in Eng et al., dapper §6)",
                run=_run, keys=frozenset({"particles", "max_particles", "proposal"}), validate=_validate, mcmc=True)
