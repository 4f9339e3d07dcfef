"""How a result's marginal of one parameter is drawn: the method's own grid density where it has one,
else a Gaussian KDE of its draws (binned, so it stays cheap on every ε change), else a histogram.
Pure; nothing here imports streamlit."""
from __future__ import annotations

import numpy as np

__all__ = ["density_curve", "binned_kde", "kde_scale"]

_KDE_MIN_DRAWS = 50
_GRID = 256
#: the binning grid's cells: at least 2,048, and enough for a step of a quarter bandwidth up to this many
_MAX_CELLS = 1 << 21
#: the most curve points a long-tailed sample adds where its draws are (half a bandwidth apart)
_MAX_DENSE_POINTS = 8192


def density_curve(result, param: str, support: tuple[float, float] | None = None
                  ) -> tuple[str, np.ndarray, np.ndarray]:
    """How a result's marginal of ``param`` is drawn: ("density", grid, pdf) from the method's own
    grid density, ("kde", grid, pdf) from a Gaussian KDE of the draws, or ("histogram", draws,
    empty) when there are too few or identical draws for a KDE. ``support`` (lo, hi), the parameter's
    range (a probability's [0, 1], a rate's [0, inf)), keeps the KDE inside it (:func:`binned_kde`)."""
    if result.density is not None and param in result.density:
        grid, pdf = result.density[param]
        return "density", np.asarray(grid, float), np.asarray(pdf, float)
    x = result.flat(param)
    x = x[np.isfinite(x)]
    if x.size < _KDE_MIN_DRAWS or np.ptp(x) == 0:
        return "histogram", x, np.empty(0)
    lower, upper = support if support is not None else (-np.inf, np.inf)
    grid, pdf = binned_kde(x, lower=lower, upper=upper)
    return "kde", grid, pdf


def kde_scale(x: np.ndarray) -> float:
    """min(sd, shorth / 1.349) of the draws (:func:`binned_kde`), the sd where the shorth is 0. The shorth is the
    length of the shortest interval holding half the draws (Rousseeuw & Leroy 1988), the IQR for a symmetric
    unimodal sample (so 1.349 sd for normal draws) and the width of the peak for a skewed one, where the IQR still
    spans part of the tail."""
    x = np.sort(np.asarray(x, float))
    sd = float(np.std(x, ddof=1))
    half = (x.size + 1) // 2
    shorth = float(np.min(x[half - 1:] - x[:x.size - half + 1])) / 1.349
    return min(sd, shorth) if shorth > 0 else sd


def binned_kde(x: np.ndarray, points: int = _GRID, lower: float = -np.inf,
               upper: float = np.inf) -> tuple[np.ndarray, np.ndarray]:
    """Gaussian KDE with Scott's bandwidth n^(-1/5) x scale (scipy's ``gaussian_kde`` default where the scale is
    the sd), evaluated on ``points`` points from min − bw to max + bw, by linear binning onto a fine grid and one
    convolution. The scale is the smaller of the sd and the shorth / 1.349 (:func:`kde_scale`; both the sd for
    normal draws): a heavy-tailed posterior's sd is set by its tail, and the normal mean's at n = 40, ε = 0.3 (a
    sharp peak, a tail as long as the prior's, kurtosis 27) got a bandwidth wider than its peak, which DA-MCMC's
    curve drew at half the height of the exact density beside it.

    Binning to 2048 cells moves each draw by at most half a cell, far below the bandwidth, so the curve is
    scipy's to well under a percent of its peak (tests/test_plots.py checks it) at a fraction of the
    cost: O(draws + cells × kernel) instead of O(draws × points) — this runs on every ε change. A long tail
    (the normal mean with a wide prior, t-like draws) spans thousands of bandwidths: the cells are then as many
    as a step of a quarter bandwidth needs (up to 2²¹), and where ``points`` even points would step over more
    than half a bandwidth the curve gets points half a bandwidth apart over the draws' central 99% (at most
    8,192): the peak stays drawn, the tail is drawn coarsely. Both were fixed at 2,048 and 256 from the smallest
    draw to the largest, and t draws with one degree of freedom drew a fraction of their peak.

    A parameter with a bounded range (``lower``, ``upper``: a probability near 0, a rate near 0) would
    otherwise get a curve over values it cannot take and too little height at the bound; there the
    estimate is the reflection one (Schuster 1985): the kernels of the draws mirrored in each bound are
    added, and the curve drawn from the bound inwards, so it still integrates to 1 over the range. Draws
    outside the range (a custom model's parameter) leave it unbounded.
    """
    x = np.asarray(x, float)
    bw = float(kde_scale(x) * x.size ** (-0.2))
    if x.min() < lower or x.max() > upper:
        lower, upper = -np.inf, np.inf
    lo, hi = max(x.min() - bw, lower), min(x.max() + bw, upper)
    data = x
    if np.isfinite(lower):
        data = np.concatenate([data, 2 * lower - x[x < lower + 4 * bw]])
    if np.isfinite(upper):
        data = np.concatenate([data, 2 * upper - x[x > upper - 4 * bw]])
    cells = int(np.clip(np.ceil(4 * (hi - lo) / bw) + 1, 2048, _MAX_CELLS))  # a step of at most bw / 4
    pad = int(np.ceil(4 * bw / ((hi - lo) / (cells - 1))))
    fine = np.linspace(lo, hi, cells)
    step = fine[1] - fine[0]
    data = data[(data >= lo - 4 * bw) & (data <= hi + 4 * bw)]
    # pad bins beyond each of the grid's ends, the kernel's reach, so that mirrored (and the grid's own
    # edge) draws contribute what they contribute; cut off after the convolution
    pos = (data - lo) / step + pad
    size = cells + 2 * pad
    left = np.clip(np.floor(pos).astype(int), 0, size - 2)
    frac = pos - left
    counts = np.bincount(left, 1.0 - frac, size) + np.bincount(left + 1, frac, size)
    offsets = np.arange(-pad, pad + 1) * step
    kernel = np.exp(-0.5 * (offsets / bw) ** 2) / (bw * np.sqrt(2 * np.pi))
    pdf_fine = np.convolve(counts, kernel, mode="same")[pad:pad + cells] / x.size
    grid = np.linspace(lo, hi, points)
    if grid[1] - grid[0] > bw / 2:  # a long tail: even points would step over the peak
        c_lo, c_hi = np.quantile(x, [0.005, 0.995])
        c_lo, c_hi = max(c_lo - 4 * bw, lo), min(c_hi + 4 * bw, hi)
        dense = int(min(np.ceil(2 * (c_hi - c_lo) / bw), _MAX_DENSE_POINTS)) + 1
        grid = np.union1d(grid, np.linspace(c_lo, c_hi, dense))
    return grid, np.interp(grid, fine, pdf_fine)
