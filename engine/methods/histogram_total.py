"""The exact posterior of a histogram whose total is private: ``dirichlet_multinomial`` with ``model.n_prior``.

The model (paper 002, Appendix B)
---------------------------------
p ~ Dirichlet(alpha) over k cells (A = sum_j alpha_j), n ~ pi(n) (``model.n_prior``), the cell counts
c | n, p ~ Multinomial(n, p), and each cell released on its own, s_j ~ eta(. | c_j) (the ``[mechanism]`` or
``[release]`` noise, clipped at 0 for OpenDP's counts); optionally a noisy size n_dp ~ eta_n(. | n)
(``[n_mechanism]``). Integrating p, c | n is Dirichlet-multinomial,

    P(c | n) = n! Gamma(A) / Gamma(n + A) prod_j Gamma(c_j + alpha_j) / (Gamma(alpha_j) c_j!),

so with n = sum_j c_j the counts' posterior is

    P(c | s, n_dp) ∝ pi(n) n! Gamma(A) / Gamma(n + A) eta_n(n_dp | n)
                     x prod_j Gamma(c_j + alpha_j) / (Gamma(alpha_j) c_j!) eta(s_j | c_j),

and p | c ~ Dirichlet(alpha + c) (conjugacy; the releases depend on p only through c).

The Poisson construction
------------------------
Take a reference rate beta > 0 and q = 1 / (1 + beta). The negative binomial NB(n; A, q) = Gamma(n + A) /
(Gamma(A) n!) q^n (1 - q)^A is the law of n = sum c_j when lambda_j ~ Gamma(alpha_j, rate beta) independently
and c_j ~ Poisson(lambda_j): then Lambda = sum lambda_j ~ Gamma(A, beta) and p = lambda / Lambda ~ Dirichlet(alpha)
independently of Lambda, n | Lambda ~ Poisson(Lambda) (so n ~ NB(A, q), mean A / beta, dispersion A) and
c | n, p ~ Multinomial(n, p): the model above with pi = NB(A, q). Dividing the posterior by NB(n; A, q),

    P(c | s, n_dp) ∝ rho(n) prod_j w_j(c_j),
    w_j(c) = Gamma(c + alpha_j) / (Gamma(alpha_j) c!) q^c (1 - q)^alpha_j eta(s_j | c),
    rho(n) = pi(n) / NB(n; A, q) x eta_n(n_dp | n),

where w_j is bin j's exact posterior weight as a spec of its own: a ``poisson_gamma`` count (n = 1) with a
Gamma(alpha_j, beta) prior, whose prior predictive is NB(c; alpha_j, q) (:mod:`engine.methods.exact`).

* **Independent bins.** When pi is ``negative_binomial`` with ``dispersion = A`` and mean mu, and there is no
  ``[n_mechanism]``, beta = A / mu makes rho constant: the c_j are independent with laws ∝ w_j, i.e. the
  per-bin specs' exact posteriors. Draws: c_j ~ w_j independently, lambda_j ~ Gamma(alpha_j + c_j, beta + 1),
  p = lambda / sum lambda (= Dirichlet(alpha + c) given c: the common rate cancels), n = sum c_j.
* **Any other prior on n or a noisy size.** n = sum c_j has P(n) ∝ rho(n) (w_1 * ... * w_k)(n) (a convolution
  of the k windows), and c | n ∝ prod_j w_j(c_j) on sum c_j = n, drawn by sequential conditioning (c_k from
  w_k(c_k) P_{k-1}(n - c_k) with P_j = w_1 * ... * w_j, then c_{k-1} given what is left, ...); then
  p ~ Dirichlet(alpha + c). Any beta gives the same target; it is chosen so that rho is bounded, so that the
  windows cut from the w_j lose at most sup rho times the cut reference mass: for a Poisson(mu) prior
  rho(n) -> 0 faster than geometrically for any q (take beta = A / mu); for NB(mu, r),
  rho(n) ~ n^(r - A) (q_r / q)^n with q_r = mu / (mu + r), bounded when q >= q_r: beta = A / (mu max(1, A / r)).
  eta_n is bounded by its largest value.

Windows: each w_j is evaluated on c = 0..C, C (from s_j + 60 noise sds) doubled until the last weights fall
(the tail past C is then bounded by the geometric series of the last ratio) and below 1e-18 of the total, and kept where it is within
e^-40 of its largest value. The weight left out, relative to the kept posterior weight, is at most
sup rho x (sum_j cut_j) / sum_n rho(n) H(n) (H the kept reference law of n), plus the FFT floor of the
convolutions (entries below 1e-14 of a convolution's peak are round-off and set to 0); it is reported as
``neglected_mass_bound`` and a bound above 1e-9 refuses the release with a ``ValueError``.

Parameters reported: p[0..k-1] and n (the confidential total sum_j c_j, which the mechanisms never release).
"""
from __future__ import annotations

import math

import numpy as np
from scipy import signal, special, stats

from ..numerics.windows import window_at

__all__ = ["HistogramTotal", "histogram_total", "reference_rate", "independent_bins"]

CUT = 40.0             # a window keeps the weights within e^-CUT of its largest
TAIL = 1e-18           # ... after growing its range until the weight past the end is below this fraction
FFT_WORK = 4_000_000   # convolutions with at least this many products go by FFT
FFT_FLOOR = 1e-14      # FFT round-off: entries below this fraction of the peak are set to 0
MAX_BOUND = 1e-9       # a larger neglected-mass bound refuses the release
MAX_RANGE = 50_000_000


def _log_eta(mech, s_j: float, c: np.ndarray) -> np.ndarray:
    """log eta(s_j | c): the release's own law for a clipped or bounded-domain release, else the noise density."""
    if getattr(mech, "release_law", False):
        return mech.release_log_prob(np.full(c.shape, s_j), c)
    return mech.noise_log_prob(s_j - c)


def reference_rate(prior, alpha_sum: float) -> float:
    """beta of the Poisson construction (module docstring): A / mu, or A / (mu A / r) when r < A."""
    mu = prior.mean
    if prior.name == "negative_binomial" and prior.dispersion < alpha_sum:
        mu = mu * alpha_sum / prior.dispersion
    return alpha_sum / mu


def independent_bins(problem) -> bool:
    """True when the bins are independent a posteriori: a negative_binomial prior on n with dispersion sum(alpha)
    (to 1e-12 relative) and no noisy size."""
    unk, a_sum = problem.unknown_n, float(np.sum(problem.model.alpha))
    return (unk.mechanism is None and unk.prior.name == "negative_binomial"
            and abs(unk.prior.dispersion - a_sum) <= 1e-12 * a_sum)


def _bin_window(alpha_j: float, q: float, mech, s_j: float):
    """(offset, weights normalised over the whole support, cut mass) of w_j (module docstring)."""
    log_q, log_1q = math.log(q), math.log1p(-q)

    def lw(c):
        return (special.gammaln(c + alpha_j) - special.gammaln(alpha_j) - special.gammaln(c + 1.0) + c * log_q
                + alpha_j * log_1q + _log_eta(mech, s_j, c))

    # start where the release's likelihood has fallen off; the prior's own tail (a release on an upper bound, where
    # the likelihood does not fall) is reached by doubling
    upper = int(max(max(s_j, 0.0) + 60.0 * mech.noise_sd, 100.0))
    while True:
        if upper > MAX_RANGE:
            raise ValueError(f"data.s_dp = {s_j:g} is invalid for exact: a cell's count law needs more than "
                             f"{MAX_RANGE:,} values")
        c = np.arange(upper + 1, dtype=float)
        w = lw(c)
        total = special.logsumexp(w)
        ratio = w[-1] - w[-2]
        if np.isfinite(total) and ratio < 0 and np.all(np.diff(w[-10:]) < 0) and w[-1] - total < math.log(TAIL):
            break
        upper *= 2
    if not np.isfinite(total):
        raise ValueError(f"data.s_dp = {s_j:g} is invalid for exact: the release is impossible under the model")
    tail = math.exp(w[-1] - total) * math.exp(ratio) / -math.expm1(ratio)  # geometric bound on the weight past C
    w = w - total
    keep = np.nonzero(w > w.max() - CUT)[0]
    lo, hi = int(keep[0]), int(keep[-1])
    kept = np.exp(w[lo:hi + 1])
    return lo, kept, max(0.0, 1.0 - float(kept.sum())) + tail


def _conv(a, b, floors: list):
    """Convolution of windowed sequences (offset, values), by FFT when long; FFT entries below ``FFT_FLOOR`` of the
    peak are set to 0 and the most they can weigh is appended to ``floors``."""
    x, y = a[1], b[1]
    if x.size * y.size < FFT_WORK:
        return a[0] + b[0], np.convolve(x, y)
    v = signal.fftconvolve(x, y)
    top = float(v.max())
    small = v <= FFT_FLOOR * top
    floors.append(FFT_FLOOR * top * int(small.sum()))
    return a[0] + b[0], np.where(small, 0.0, v)


class HistogramTotal:
    """The exact law of the cell counts c (and n = sum c) given the histogram's release (module docstring)."""

    def __init__(self, problem):
        model, unk = problem.model, problem.unknown_n
        self.alpha = np.asarray(model.alpha, dtype=float)
        self.k = self.alpha.size
        self.prior, self.size_mechanism, self.n_dp = unk.prior, unk.mechanism, unk.n_dp
        self.independent = independent_bins(problem)
        self.beta = reference_rate(self.prior, float(self.alpha.sum()))
        q = 1.0 / (1.0 + self.beta)
        s = np.asarray(problem.s_dp, dtype=float).reshape(-1)
        wins = [_bin_window(float(self.alpha[j]), q, problem.mechanism, float(s[j])) for j in range(self.k)]
        self.wins = [(lo, v) for lo, v, _ in wins]
        self.cut = float(sum(c for _, _, c in wins))
        self.floors: list = []
        self.prefix = None
        if self.independent:
            self.bound = self.cut / max(1.0 - self.cut, 1e-300)
        else:
            self._size_law(q)

    def _log_rho(self, n: np.ndarray) -> np.ndarray:
        """log pi(n) - log NB(n; A, q) + log eta_n(n_dp | n)."""
        a_sum = float(self.alpha.sum())
        out = self.prior.log_pmf(n) - stats.nbinom(a_sum, self.beta / (1.0 + self.beta)).logpmf(n)
        if self.size_mechanism is not None:
            out = out + self.size_mechanism.noise_log_prob(self.n_dp - np.asarray(n, dtype=float))
        return out

    def _size_law(self, q: float) -> None:
        self.prefix = [self.wins[0]]
        for j in range(1, self.k):
            self.prefix.append(_conv(self.prefix[-1], self.wins[j], self.floors))
        off, h = self.prefix[-1]
        n = off + np.arange(h.size)
        with np.errstate(divide="ignore"):
            log_p = self._log_rho(n) + np.log(h)
        top = float(np.max(log_p))
        if not np.isfinite(top):
            raise ValueError("data.s_dp is invalid for exact: the release is numerically impossible under the model "
                             "and the prior on n")
        p = np.exp(log_p - top)
        self.n_values, self.n_probs = n, p / p.sum()
        # sup rho over a range well past anything kept (rho is eventually decreasing: module docstring)
        far = int(max(n[-1], self.prior.mean + 40.0 * self.prior.sd, (self.n_dp or 0.0)) * 4 + 100)
        grid = np.unique(np.concatenate([np.arange(0, min(far, 200_000) + 1),
                                         np.geomspace(1, far, 2000).astype(np.int64)]))
        log_sup = float(np.max(self._log_rho(grid)))
        log_kept = top + math.log(p.sum())  # log sum_n rho(n) H(n)
        cut = self.cut + float(sum(self.floors))
        self.bound = math.exp(log_sup - log_kept) * cut if cut > 0 else 0.0
        if not self.bound <= MAX_BOUND:
            raise ValueError(f"model.n_prior = {self.prior.as_dict()} is invalid for exact with this release: the "
                             f"weight left out of the count windows may reach {self.bound:.2g} of the posterior "
                             f"(at most {MAX_BOUND:g}); the prior on n and the release disagree too much")

    def mean_n(self) -> float:
        """E[n | release]: the sum of the cells' means when they are independent, else from the law of n."""
        if self.independent:
            return float(sum(np.dot(lo + np.arange(v.size), v) / v.sum() for lo, v in self.wins))
        return float(np.dot(self.n_values, self.n_probs))

    def n_pmf(self) -> tuple[np.ndarray, np.ndarray]:
        """(n values, posterior probabilities) of the total n = sum c (a convolution when the cells are
        independent)."""
        if self.prefix is None:
            self.prefix = [self.wins[0]]
            for j in range(1, self.k):
                self.prefix.append(_conv(self.prefix[-1], self.wins[j], self.floors))
            off, h = self.prefix[-1]
            self.n_values, self.n_probs = off + np.arange(h.size), h / h.sum()
        return self.n_values, self.n_probs

    def sample_counts(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """(size, k) draws of c given the release."""
        out = np.empty((size, self.k))
        if self.independent:
            for j, (lo, v) in enumerate(self.wins):
                out[:, j] = lo + rng.choice(v.size, size=size, p=v / v.sum())
            return out
        remaining = rng.choice(self.n_values, size=size, p=self.n_probs).astype(np.int64)
        for j in range(self.k - 1, 0, -1):
            lo, vals = self.wins[j]
            cj = lo + np.arange(vals.size)
            for r in np.unique(remaining):
                rows = np.nonzero(remaining == r)[0]
                w = vals * window_at(self.prefix[j - 1], r - cj)
                out[rows, j] = rng.choice(cj, size=rows.size, p=w / w.sum())
            remaining = remaining - out[:, j].astype(np.int64)
        out[:, 0] = remaining
        return out

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """(size, k + 1) draws of (p[0..k-1], n): c given the release, then p | c ~ Dirichlet(alpha + c)."""
        counts = self.sample_counts(rng, size)
        g = rng.gamma(self.alpha[None, :] + counts)
        return np.concatenate([g / g.sum(axis=1, keepdims=True), counts.sum(axis=1, keepdims=True)], axis=1)


def histogram_total(problem, rng: np.random.Generator, total: int) -> tuple[np.ndarray, dict]:
    """(total, k + 1) exact draws of (p, n) and the run's info (module docstring)."""
    law = HistogramTotal(problem)
    theta = law.sample(rng, total)
    info = {"representation": "mixture", "unknown_n": True,
            "construction": "independent bins (Poisson construction)" if law.independent else
            "convolution of the bins' count laws, reweighted by the prior on n",
            "reference_rate": law.beta, "count_window_sizes": [int(v.size) for _, v in law.wins],
            "neglected_mass_bound": law.bound, "n_prior": law.prior.as_dict(),
            "posterior_mean_n": law.mean_n()}
    if law.size_mechanism is not None:
        info["n_dp"] = float(law.n_dp)
    return theta, info
