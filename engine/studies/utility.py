"""Utility of a private posterior: maximum mean discrepancy to the confidential-data posterior.

Bernstein & Sheldon (2018, Sec. 4, "Evaluation") measure how close a private posterior P is to the
non-private one Q by the unbiased estimate of the squared MMD (Gretton et al. 2012, Lemma 6) from
m paired samples p_1..p_m ~ P, q_1..q_m ~ Q::

    MMD^2_u = 1 / (m (m - 1)) * sum_{i != j} [ k(p_i, p_j) + k(q_i, q_j) - k(p_i, q_j) - k(p_j, q_i) ]

with a Gaussian kernel k(a, b) = exp(-|a - b|^2 / (2 h^2)). The paper uses a standard normal
kernel (h = 1); on parameters of very different scales (a proportion near 0.01, a rate near 40)
a fixed h is meaningless, so h is set by the median heuristic: the median Euclidean distance
between the pooled points (Gretton et al. 2012, Sec. 8). The estimate is unbiased, so it can be
slightly negative when P = Q; larger means further from the confidential posterior.

Draws are thinned deterministically (evenly spaced within each chain) to at most ``m`` per
sample, so the estimate is a function of the draws alone.
"""
from __future__ import annotations

import numpy as np

__all__ = ["thin_draws", "median_bandwidth", "mmd2_unbiased"]


def thin_draws(draws: np.ndarray, size: int) -> np.ndarray:
    """At most ``size`` rows of ``draws`` (chain, draw, param), evenly spaced within each chain,
    chains concatenated: shape (<= size, param)."""
    d = np.asarray(draws, dtype=float)
    if d.ndim == 2:
        d = d[None]
    chains, n, k = d.shape
    per = max(1, size // chains)
    idx = np.unique(np.linspace(0, n - 1, min(per, n)).round().astype(int))
    return d[:, idx, :].reshape(-1, k)[:size]


def _sq_dists(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    d = (a * a).sum(1)[:, None] + (b * b).sum(1)[None, :] - 2.0 * a @ b.T
    return np.maximum(d, 0.0)


def median_bandwidth(x: np.ndarray, y: np.ndarray) -> float:
    """Median heuristic: the median distance between distinct pooled points (1.0 if all coincide)."""
    z = np.concatenate([np.atleast_2d(x), np.atleast_2d(y)])
    d2 = _sq_dists(z, z)[np.triu_indices(z.shape[0], k=1)]
    med = float(np.sqrt(np.median(d2))) if d2.size else 0.0
    return med if med > 0 else 1.0


def mmd2_unbiased(x: np.ndarray, y: np.ndarray, bandwidth: float | None = None) -> float:
    """The unbiased MMD^2 of Bernstein & Sheldon (2018), Gaussian kernel, median-heuristic bandwidth.

    Parameters
    ----------
    x, y : array, shape (m, d) or (m,)
        Samples of P and Q; the longer one is cut to the shorter's length (the formula pairs them).
    bandwidth : float, optional
        h of the Gaussian kernel; default :func:`median_bandwidth`.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    x = x[:, None] if x.ndim == 1 else x
    y = y[:, None] if y.ndim == 1 else y
    m = min(x.shape[0], y.shape[0])
    if m < 2:
        raise ValueError(f"mmd samples = {m} is invalid: needs at least 2 draws from each distribution")
    x, y = x[:m], y[:m]
    h = median_bandwidth(x, y) if bandwidth is None else float(bandwidth)
    g = -0.5 / (h * h)
    kxx = np.exp(g * _sq_dists(x, x))
    kyy = np.exp(g * _sq_dists(y, y))
    kxy = np.exp(g * _sq_dists(x, y))
    off = ~np.eye(m, dtype=bool)
    total = (kxx + kyy - kxy - kxy.T)[off].sum()
    return float(total / (m * (m - 1)))
