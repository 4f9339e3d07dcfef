"""How a result's marginal of one parameter is drawn: the method's own grid density where it has one,
else a Gaussian KDE of its draws (binned, so it stays cheap on every ε change), else a histogram.
Pure; nothing here imports streamlit."""
from __future__ import annotations

import numpy as np

__all__ = ["density_curve", "binned_kde"]

_KDE_MIN_DRAWS = 50
_GRID = 256


def density_curve(result, param: str) -> tuple[str, np.ndarray, np.ndarray]:
    """How a result's marginal of ``param`` is drawn: ("density", grid, pdf) from the method's own
    grid density, ("kde", grid, pdf) from a Gaussian KDE of the draws, or ("histogram", draws,
    empty) when there are too few or identical draws for a KDE."""
    if result.density is not None and param in result.density:
        grid, pdf = result.density[param]
        return "density", np.asarray(grid, float), np.asarray(pdf, float)
    x = result.flat(param)
    x = x[np.isfinite(x)]
    if x.size < _KDE_MIN_DRAWS or np.ptp(x) == 0:
        return "histogram", x, np.empty(0)
    grid, pdf = binned_kde(x)
    return "kde", grid, pdf


def binned_kde(x: np.ndarray, points: int = _GRID) -> tuple[np.ndarray, np.ndarray]:
    """Gaussian KDE with Scott's bandwidth (scipy's ``gaussian_kde`` default), evaluated on ``points``
    points from min − bw to max + bw, by linear binning onto a fine grid and one convolution.

    Binning to 2048 cells moves each draw by at most half a cell, far below the bandwidth (the grid is
    at most 2 × range + 2 bw wide, bw ≥ range / 2048 for any sample the app draws), so the curve is
    scipy's to well under a percent of its peak (tests/test_plots.py checks it) at a fraction of the
    cost: O(draws + cells log cells) instead of O(draws × points) — this runs on every ε change.
    """
    x = np.asarray(x, float)
    bw = float(x.std(ddof=1) * x.size ** (-0.2))
    lo, hi = x.min() - bw, x.max() + bw
    cells = 2048
    pad = int(np.ceil(4 * bw / ((hi - lo) / (cells - 1))))
    fine = np.linspace(lo, hi, cells)
    step = fine[1] - fine[0]
    pos = (x - lo) / step
    left = np.clip(np.floor(pos).astype(int), 0, cells - 2)
    frac = pos - left
    counts = np.bincount(left, 1.0 - frac, cells) + np.bincount(left + 1, frac, cells)
    offsets = np.arange(-pad, pad + 1) * step
    kernel = np.exp(-0.5 * (offsets / bw) ** 2) / (bw * np.sqrt(2 * np.pi))
    pdf_fine = np.convolve(counts, kernel, mode="same") / x.size
    grid = np.linspace(lo, hi, points)
    return grid, np.interp(grid, fine, pdf_fine)
