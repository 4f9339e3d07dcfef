"""Marginal densities on a grid for mixtures of scipy distributions (closed-form methods)."""
from __future__ import annotations

import numpy as np

__all__ = ["marginal_grid_density"]


def _grid(components, size, support):
    # Span the bulk of the mixture: weighted-quantile range of the components that carry mass.
    w = np.array([c[0] for c in components])
    keep = w >= w.max() * 1e-6
    dists = [c[1] for c, k in zip(components, keep) if k]
    lo = min(float(d.ppf(1e-5)) for d in dists)
    hi = max(float(d.ppf(1 - 1e-5)) for d in dists)
    lo, hi = max(lo, support[0]), min(hi, support[1])
    if not hi > lo:
        lo, hi = lo - 1e-9, lo + 1e-9
    return np.linspace(lo, hi, size)


def marginal_grid_density(mixtures, size=400, support=(-np.inf, np.inf)):
    """``{param: [(weight, frozen_dist), ...]}`` -> ``{param: (grid, pdf)}``.

    Weights need not be normalised; they are normalised here. Components are evaluated in chunks
    so that mixtures with many thousands of components stay within memory.
    """
    out = {}
    for name, comps in mixtures.items():
        w = np.array([c[0] for c in comps], dtype=float)
        w = w / w.sum()
        grid = _grid(comps, size, support)
        pdf = np.zeros_like(grid)
        for wi, (_, d) in zip(w, comps):
            if wi > 1e-14:
                pdf += wi * d.pdf(grid)
        out[name] = (grid, pdf)
    return out
