"""Randomized response, per record: record category ``x`` is released as ``z`` with
probability ``Q[x, z]``; it is pure epsilon-DP with
``epsilon = max_z log(max_x Q[x, z] / min_x Q[x, z])``.

Two schemes build the transition matrix: ``k_ary`` (keep with probability e^epsilon / (e^epsilon + k - 1))
and ``coin`` (each binary attribute truthful when a coin with P(heads) = truth_prob says so, else a fair
coin; dapper Example 1).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from ..core.validation import fail

__all__ = ["RandomizedResponse", "MAX_RR_TABLE_N", "k_ary_log_transition", "coin_log_transition"]


@dataclass(frozen=True)
class RandomizedResponse:
    """Per-record randomized response with transition matrix ``Q[x, z] = P(report z | true x)``.

    Two constructions (see :func:`make_mechanism`):

    * ``k``-ary randomized response from ``epsilon``: ``Q[x, x] = e^eps / (e^eps + k - 1)``,
      every other entry ``1 / (e^eps + k - 1)``.
    * the coin scheme of Eng et al. (dapper, Example 1): each of ``log2(k)`` binary attributes is
      reported truthfully when a first coin (heads with probability ``truth_prob``) says so, and
      otherwise replaced by a fair coin; so a bit is kept with probability
      ``p = truth_prob + (1 - truth_prob)/2`` and ``Q[x, z] = p^(m - d) (1 - p)^d`` with ``d`` the
      Hamming distance between the bit patterns of the category indices.

    The matrix is stored as log probabilities, so that a huge epsilon (e^-eps underflows to 0)
    still gives finite acceptance ratios and the exact guarantee
    ``epsilon = max_z (max_x log Q[x, z] - min_x log Q[x, z])``.

    The release is the vector of reported categories; because records are exchangeable its
    counts per category are sufficient, so ``s_dp`` is the vector of reported counts.
    """

    log_transition: tuple  # k x k nested tuple of log Q[x, z]; rows sum to 1 in probability
    scheme: str = "k_ary"

    name = "randomized_response"
    discrete = True
    sensitivity = 1.0

    @property
    def log_Q(self) -> np.ndarray:
        return np.asarray(self.log_transition, dtype=float)

    @property
    def Q(self) -> np.ndarray:
        return np.exp(self.log_Q)

    @property
    def k(self) -> int:
        return len(self.log_transition)

    @property
    def guarantee(self) -> dict:
        lq = self.log_Q
        return {"kind": "pure", "epsilon": float(np.max(lq.max(axis=0) - lq.min(axis=0)))}

    @property
    def epsilon(self) -> float:
        return self.guarantee["epsilon"]

    def sample_records(self, rng: np.random.Generator, categories) -> np.ndarray:
        """Report each record's category through Q (inverse-CDF on each row)."""
        categories = np.asarray(categories, dtype=np.int64)
        cdf = np.cumsum(self.Q, axis=1)
        u = rng.random(categories.shape)
        z = (u[..., None] > cdf[categories]).sum(axis=-1)
        return np.minimum(z, self.k - 1)

    def count_log_likelihood(self, z_counts, true_count, n: int) -> np.ndarray:
        """log P(reported number of ones = z1 | s true ones), for k = 2 and every s given.

        With s true ones among n records the reported number of ones is
        Bin(s, Q[1,1]) + Bin(n - s, Q[0,1]); its pmf at z1 is the convolution
        sum_j Bin(j; s, Q[1,1]) Bin(z1 - j; n - s, Q[0,1]), evaluated in log space in blocks of s.
        Cost O(len(s) * z1): callers cap n (``MAX_RR_TABLE_N``).
        """
        if self.k != 2:
            raise ValueError("randomized_response: count likelihood implemented for k = 2 only")
        z1 = int(round(np.asarray(z_counts, dtype=float).reshape(-1)[-1]))
        s_all = np.asarray(true_count, dtype=np.int64).reshape(-1)
        lq = self.log_Q
        j = np.arange(0, z1 + 1, dtype=float)
        out = np.empty(s_all.size)
        block = max(1, 4_000_000 // (z1 + 1))
        for lo in range(0, s_all.size, block):
            s = s_all[lo:lo + block].astype(float)[:, None]
            m = n - s
            a = _log_binom_pmf(j[None, :], s, lq[1, 1], lq[1, 0])
            b = _log_binom_pmf(z1 - j[None, :], m, lq[0, 1], lq[0, 0])
            out[lo:lo + block] = special.logsumexp(a + b, axis=1)
        return out.reshape(np.shape(true_count))

    def describe(self) -> str:
        what = "coin-flip" if self.scheme == "coin" else f"{self.k}-ary"
        return f"{what} randomized response per record; pure {self.epsilon:.4g}-DP"


MAX_RR_TABLE_N = 5000  # largest n for which the k = 2 count likelihood is tabulated (ABC, exact_mixture)


def _log_binom_pmf(j, m, log_p, log_1mp):
    """log Bin(j; m, p) from log p and log(1 - p); -inf outside 0 <= j <= m, stable at p in {0, 1}."""
    with np.errstate(invalid="ignore"):
        ok = (j >= 0) & (j <= m)
        jj, mm = np.where(ok, j, 0.0), np.broadcast_to(m, np.broadcast(j, m).shape)
        mm = np.where(ok, mm, 0.0)
        coef = special.gammaln(mm + 1) - special.gammaln(jj + 1) - special.gammaln(mm - jj + 1)
        t1 = np.where(jj > 0, jj * log_p, 0.0)
        t2 = np.where(mm - jj > 0, (mm - jj) * log_1mp, 0.0)
        return np.where(ok, coef + t1 + t2, -np.inf)


def k_ary_log_transition(epsilon: float, k: int) -> tuple:
    # log keep = -log(1 + (k-1) e^-eps), log other = -eps + log keep: finite for any eps > 0
    log_keep = -math.log1p((k - 1) * math.exp(-epsilon))
    log_other = -epsilon + log_keep
    return tuple(tuple(log_keep if i == j else log_other for j in range(k)) for i in range(k))


def coin_log_transition(truth_prob: float, k: int) -> tuple:
    m = int(round(math.log2(k)))
    if 2**m != k:
        fail("mechanism.scheme", "coin", f"needs a number of categories that is a power of 2 (got k = {k})")
    log_keep = math.log(truth_prob + (1.0 - truth_prob) / 2.0)
    log_flip = math.log((1.0 - truth_prob) / 2.0)
    return tuple(tuple((m - bin(x ^ z).count("1")) * log_keep + bin(x ^ z).count("1") * log_flip
                       for z in range(k)) for x in range(k))
