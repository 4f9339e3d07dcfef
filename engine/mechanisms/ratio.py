r"""OpenDP's released mean (``dp.mean`` in its polars API, what dp-wizard's mean is): one number, a noisy sum
over a noisy length.

The release. OpenDP 0.16 computes ``pl.col(x).dp.mean((lo, hi))`` as a ratio of two releases of the same
n rows, each with its share of the budget (the plan's ``summarize()`` lists both: "Sum, Float Laplace,
scale b" and "Length, Integer Laplace, scale t"):

    S_dp = S + U,  S = sum_i clip(x_i, lo, hi),  U ~ Laplace(b)        (float Laplace: checked against the
                                                                        library, its released sums carry the
                                                                        float's full precision, no coarser
                                                                        granularity),
    L    = max(n + V, 0),  V ~ discrete Laplace(t), P(V = v) = c0 a^|v|, a = e^(-1/t), c0 = (1-a)/(1+a)
                                                                       (the length is unsigned: a noisy
                                                                        length <= 0 is released as 0),
    r    = S_dp / L                                                    (a length of 0 gives r = +inf or
                                                                        -inf, the sign of S_dp),

U and V independent. Only r is released (tests/test_dpwizard_mean.py draws 20,000 of OpenDP's own ``dp.mean``
releases and checks this law by KS, the share of infinite r included).

Its law given the records (through S and n). For a finite r, condition on V = v: a finite r needs
m = n + v >= 1, and then r = (S + U) / m, so P(r <= y | v) = P(U <= y m - S) and the density of r given v
is m f_U(r m - S) (the change of variable u = r m - S, |du/dr| = m). Summing over v,

    p(r | S, n) = sum_{v >= 1 - n} P(V = v) (n + v) f_U(r (n + v) - S),   f_U(u) = e^(-|u|/b) / (2b).     (D)

The infinite releases are point masses: P(r = +inf | S, n) = P(V <= -n) P(U > -S) and
P(r = -inf | S, n) = P(V <= -n) P(U < -S), with P(V <= -n) = a^n / (1 + a) for n >= 1 and 1 / (1 + a) at n = 0
(r = NaN, a length of 0 and a sum of exactly 0, has probability 0). Together with (D) they integrate to
one: the likelihood of a release is (D) (density in r) or the point mass, as the release is finite or not.

Truncation of (D): |v| <= K, K the least integer (searched in steps) whose neglected terms add up to at most
1e-13 / (2 b): each neglected term is at most P(V = v)(n + |v|) / (2 b), and
sum_{|v| > K} P(V = v)(n + |v|) = n 2 a^(K+1) / (1 + a) + 2 c0 a^(K+1) ((K + 1) - K a) / (1 - a)^2 in closed
form (:func:`engine.kernels.mean_ratio.v_cut`). About 2 t (ln n + 30) terms: 430 at t = 6, n = 400.

Given the parameters (mu of the clamped normal records, n), p(r | mu, n) = E_S[p(r | S, n)]: the
pseudo-marginal sampler (:mod:`engine.methods.mean_ratio`) estimates it without bias from simulated S.

Guarantee, under OpenDP's add/remove-one neighbours with c contributions per individual: the sum is
(c max(|lo|, |hi|) / b)-DP, the length (c / t)-DP, and r, a function of the pair, is
(c max(|lo|, |hi|) / b + c / t)-DP (basic composition, OpenDP's own accounting of ``dp.mean``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

from ..core.validation import fail
from ..kernels.mean_ratio import log_ratio_densities, v_cut

__all__ = ["OpenDPMean", "sample_ratio", "clamped_mean", "ratio_release"]


def sample_ratio(rng: np.random.Generator, s, n, sum_scale: float, length_scale: float) -> np.ndarray:
    """Releases r = (S + U) / max(n + V, 0) for arrays of sums ``s`` and sizes ``n`` (broadcast), U ~ Laplace
    (sum_scale), V ~ discrete Laplace (length_scale) drawn as the difference of two geometric counts."""
    s, n = np.broadcast_arrays(np.asarray(s, float), np.asarray(n, float))
    a = math.exp(-1.0 / length_scale)
    u = rng.laplace(0.0, sum_scale, size=s.shape)
    v = (rng.geometric(1.0 - a, size=s.shape) - rng.geometric(1.0 - a, size=s.shape)).astype(float)
    length = np.maximum(n + v, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (s + u) / length


def clamped_mean(mu, sd: float, lo: float, hi: float):
    """E[clip(X, lo, hi)] for X ~ Normal(mu, sd): the column mean the ratio estimates, per record,
    lo Phi(alpha) + hi (1 - Phi(beta)) + mu (Phi(beta) - Phi(alpha)) + sd (phi(alpha) - phi(beta)),
    alpha = (lo - mu) / sd, beta = (hi - mu) / sd."""
    mu = np.asarray(mu, float)
    al, be = (lo - mu) / sd, (hi - mu) / sd
    return (lo * norm.cdf(al) + hi * norm.sf(be) + mu * (norm.cdf(be) - norm.cdf(al))
            + sd * (norm.pdf(al) - norm.pdf(be)))


_INF_WORDS = {"inf": math.inf, "+inf": math.inf, "infinity": math.inf, "+infinity": math.inf,
              "-inf": -math.inf, "-infinity": -math.inf}


def ratio_release(field: str, value) -> np.ndarray:
    """A released r as a spec gives it: one number, finite or +-inf (TOML ``inf`` / ``-inf`` or the strings
    "inf" / "-inf", as ``clip`` takes them). Unlike an additive release, r = +-inf is a value the release takes
    with positive probability (a noisy length <= 0, module docstring), so it is refused nowhere; NaN is (a sum of
    exactly 0 over a length of 0 has probability 0)."""
    allowed = ("must be one released mean [r]: a number, or inf / -inf (TOML's inf, or the string \"inf\" / "
               "\"-inf\") for a noisy length <= 0")
    items = value if isinstance(value, (list, tuple, np.ndarray)) else [value]
    if len(items) != 1:
        fail(field, value, allowed)
    v = items[0]
    if isinstance(v, str) and v.strip().lower() in _INF_WORDS:
        v = _INF_WORDS[v.strip().lower()]
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) or math.isnan(v):
        fail(field, value, allowed)
    return np.asarray([float(v)])


@dataclass(frozen=True)
class OpenDPMean:
    """OpenDP's ``dp.mean((lower, upper))``: the release r = (S + U) / max(n + V, 0) (module docstring).

    Not additive noise on a statistic: the law involves n, so only the samplers that know it use it
    (``pseudo_marginal``, :mod:`engine.methods.mean_ratio`, and ``auto``, which picks it); ``kernel`` is None so
    that the compiled additive-noise samplers refuse it."""

    sum_scale: float
    length_scale: float
    lower: float
    upper: float
    contributions: int = 1

    name = "opendp_mean"
    label = "OpenDP's mean"
    kernel = None
    discrete = False
    methods = ("pseudo_marginal", "auto")

    @property
    def scale(self) -> float:
        return self.sum_scale

    @property
    def sensitivity(self) -> float:
        """The sum's add/remove-one sensitivity, c max(|lo|, |hi|)."""
        return self.contributions * max(abs(self.lower), abs(self.upper))

    @property
    def guarantee(self) -> dict:
        eps_sum = self.sensitivity / self.sum_scale
        eps_len = self.contributions / self.length_scale
        return {"kind": "pure", "epsilon": eps_sum + eps_len, "epsilon_sum": eps_sum, "epsilon_length": eps_len}

    @property
    def noise_sd(self) -> float:
        """The sum's noise sd, sqrt(2) b (the ratio has no single noise sd: it depends on n)."""
        return math.sqrt(2.0) * self.sum_scale

    def log_prob(self, r: float, s, n: int) -> np.ndarray:
        """log p(r | S = s, n) for an array of sums (module docstring, (D) or a point mass at +-inf)."""
        s = np.atleast_1d(np.asarray(s, float))
        out = np.empty(s.size)
        log_ratio_densities(float(r), s, int(n), float(self.sum_scale), float(self.length_scale), out)
        return out.reshape(np.shape(s))

    def point_masses(self, s: float, n: int) -> tuple[float, float]:
        """(P(r = -inf | S = s, n), P(r = +inf | S = s, n)): a length of 0 and a sum below / above 0."""
        return float(np.exp(self.log_prob(-np.inf, [s], n)[0])), float(np.exp(self.log_prob(np.inf, [s], n)[0]))

    def cdf(self, y, s: float, n: int) -> np.ndarray:
        """P(r <= y | S = s, n) at finite y: P(r = -inf) + sum_{v >= 1 - n} P(V = v) F_U(y (n + v) - s), the
        v-sum truncated as in (D) (its neglected mass is below P(|V| > K) <= 1e-13)."""
        y = np.asarray(y, float)
        k = v_cut(int(n), float(self.length_scale))
        v = np.arange(max(1 - int(n), -k), k + 1)
        a = math.exp(-1.0 / self.length_scale)
        pv = (1.0 - a) / (1.0 + a) * a ** np.abs(v)
        x = y[..., None] * (n + v) - s
        f_u = np.where(x < 0, 0.5 * np.exp(np.minimum(x, 0.0) / self.sum_scale),
                       1.0 - 0.5 * np.exp(-np.maximum(x, 0.0) / self.sum_scale))
        return self.point_masses(s, n)[0] + f_u @ pv

    def sample(self, rng: np.random.Generator, statistic, n: int | None = None) -> np.ndarray:
        """The release of the clamped sum ``statistic`` (one entry) of ``n`` records."""
        if n is None:
            fail("release.mechanism", "mean", "needs the number of records to release (OpenDP's mean is sum / length)")
        return np.atleast_1d(sample_ratio(rng, np.asarray(statistic, float).reshape(-1)[:1], n, self.sum_scale,
                                          self.length_scale))

    def describe(self) -> str:
        g = self.guarantee
        return (f"OpenDP mean on [{self.lower:g}, {self.upper:g}]: (clamped sum + Laplace b = {self.sum_scale:.4g}) / "
                f"max(n + discrete Laplace t = {self.length_scale:.4g}, 0); pure {g['epsilon']:.4g}-DP under "
                f"add/remove-one ({g['epsilon_sum']:.4g} for the sum, {g['epsilon_length']:.4g} for the length)")
