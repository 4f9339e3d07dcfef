"""Marginal posterior densities on a grid, as cell averages of the exact CDF.

A density is reported at the centres of ``size`` equal cells spanning the bulk of the
distribution, with value (F(right) - F(left)) / width: the average density over the cell. This is
exact in the sense that it integrates (midpoint rule) to the mass of the plotted range, and it
stays finite and normalised where a pointwise pdf would not, e.g. at the pole of a Beta(0.01, b)
posterior or for an extremely concentrated one.
"""
from __future__ import annotations

import numpy as np

__all__ = ["cell_density", "range_from_quantiles"]


def range_from_quantiles(ppf_lo, ppf_hi, support=(-np.inf, np.inf)):
    """[lo, hi] clipped to the support; widened a hair if degenerate."""
    lo, hi = max(float(ppf_lo), support[0]), min(float(ppf_hi), support[1])
    if not hi > lo:
        span = max(abs(lo), 1.0) * 1e-9
        lo, hi = lo - span, hi + span
    return lo, hi


def cell_density(cdf, lo: float, hi: float, size: int = 400):
    """(centres, cell-average density) of a distribution with vectorised CDF ``cdf`` on [lo, hi]."""
    edges = np.linspace(lo, hi, size + 1)
    mass = np.diff(np.asarray(cdf(edges), dtype=float))
    mass = np.maximum(mass, 0.0)
    width = edges[1] - edges[0]
    return 0.5 * (edges[:-1] + edges[1:]), mass / width
