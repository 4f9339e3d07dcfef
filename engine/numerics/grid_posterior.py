"""One-parameter posteriors computed on an adaptive grid: p(theta | s_dp) ∝ p(theta) L(theta).

The grid lives on an unconstrained coordinate phi (logit(theta) for a proportion, log(lam) for a
rate, mu itself for a mean), where the target

    log g(phi) = log p(theta(phi)) + log |d theta / d phi| + log L(theta(phi))

is smooth and has no pole (a Beta(0.5, 1) prior's pole at theta = 0 becomes the tail e^(phi/2)).

Construction (:func:`build`):

1. A coarse grid around the caller's guesses of the posterior's centre and width is widened by
   doubling until log g at both ends is CUT = 35 below its maximum (or the coordinate's cap is hit).
2. Adaptive refinement where the density is: every cell whose mass share is above 1e-9 gets its
   midpoint evaluated and compared with the not-a-knot cubic spline through the current nodes; a
   cell whose prediction misses by more than ``tol_log`` (default 1e-5 in log g) is split, until no
   cell fails (or ``max_nodes``; ``refined`` says which). So log L is evaluated only where it matters and only as often as
   its smoothness requires.
3. The validated spline is evaluated on a fine sub-grid, fine enough that the piecewise
   log-linear interpolant is within 1e-7 of it (sub-cell width h with h^2 max|(log g)''| / 8 <= 1e-7).
   The posterior used from then on *is* this piecewise log-linear density: its CDF and inverse CDF
   are closed forms on each cell (a truncated exponential), so draws are exact draws from it and
   cell-averaged densities are exact cell averages of it.
4. Beyond the grid's ends the likelihood is held at its end value and integrated against the
   prior exactly: the tail segments carry mass L(end) P_prior(beyond) and are sampled from the
   prior truncated to the tail (inverse prior CDF). Their total is reported as ``tail_mass``.

Error: the density differs from p(theta | s_dp) by the interpolation error (relative 1e-5 where
there is mass; cells holding less than 1e-9 of it are not refined) plus whatever error the caller's log L carries (each likelihood states its own
bound; :mod:`engine.numerics.statistic_laws`); ``tail_mass`` bounds the mass handled by the tail rule.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import interpolate, special, stats

__all__ = ["Prior1D", "GridPosterior", "build", "prior_of"]

CUT = 35.0


@dataclass(frozen=True)
class Prior1D:
    """The prior of a one-parameter model with its unconstrained coordinate.

    ``kind``: ``beta`` (phi = logit theta), ``gamma`` (phi = log lam, rate parametrisation) or
    ``normal`` (phi = mu)."""

    kind: str
    p1: float
    p2: float

    @property
    def caps(self):
        if self.kind == "beta":
            return -700.0, 700.0
        if self.kind == "gamma":
            return -690.0, 700.0
        return self.p1 - 40.0 * self.p2, self.p1 + 40.0 * self.p2

    @property
    def dist(self):
        if self.kind == "beta":
            return stats.beta(self.p1, self.p2)
        if self.kind == "gamma":
            return stats.gamma(self.p1, scale=1.0 / self.p2)
        return stats.norm(self.p1, self.p2)

    def theta(self, phi):
        phi = np.asarray(phi, float)
        if self.kind == "beta":
            return special.expit(phi)
        if self.kind == "gamma":
            return np.exp(phi)
        return phi

    def phi(self, theta):
        theta = np.asarray(theta, float)
        with np.errstate(divide="ignore"):
            if self.kind == "beta":
                return np.log(theta) - np.log1p(-theta)
            if self.kind == "gamma":
                return np.log(theta)
        return theta

    def log_density_phi(self, phi):
        """log p(theta(phi)) + log |theta'(phi)|."""
        phi = np.asarray(phi, float)
        if self.kind == "beta":
            a, b = self.p1, self.p2
            return -a * np.logaddexp(0.0, -phi) - b * np.logaddexp(0.0, phi) - special.betaln(a, b)
        if self.kind == "gamma":
            al, be = self.p1, self.p2
            return al * phi - be * np.exp(np.minimum(phi, 700.0)) + al * math.log(be) - special.gammaln(al)
        return stats.norm.logpdf(phi, self.p1, self.p2)

    def log_cdf_phi(self, phi):
        return self.dist.logcdf(self.theta(phi))

    def log_sf_phi(self, phi):
        return self.dist.logsf(self.theta(phi))


def prior_of(model) -> Prior1D:
    if model.name == "beta_binomial":
        return Prior1D("beta", model.a, model.b)
    if model.name == "poisson_gamma":
        return Prior1D("gamma", model.alpha, model.beta)
    if model.name == "normal_known_sd":
        return Prior1D("normal", model.prior_mean, model.prior_sd)
    raise ValueError(f"model.name = {model.name!r} is invalid for a grid posterior: one parameter models only")


def _log_mean_exp_cell(y0, y1):
    """log of (1/h) ∫_cell exp(linear from y0 to y1): log( (e^y1 - e^y0) / (y1 - y0) )."""
    d = y1 - y0
    small = np.abs(d) < 1e-8
    dd = np.where(small, 1.0, d)
    big = np.maximum(y0, y1)
    # (e^y1 - e^y0)/d = e^big * (1 - e^{-|d|}) / |d|
    val = big + np.log(-np.expm1(-np.abs(dd))) - np.log(np.abs(dd))
    return np.where(small, 0.5 * (y0 + y1), val)


@dataclass(frozen=True)
class GridPosterior:
    """A piecewise log-linear density on phi-nodes plus two prior-shaped tail segments."""

    prior: Prior1D
    x: np.ndarray          # fine nodes (phi), increasing
    y: np.ndarray          # log g at the nodes (unnormalised)
    log_z: float           # log of the total mass (cells + tails)
    cell_mass: np.ndarray  # normalised mass of each cell
    tail_left: float       # normalised mass below x[0]
    tail_right: float      # normalised mass above x[-1]
    n_evaluations: int     # evaluations of log L
    refined: bool = True   # False if refinement stopped at max_nodes before every cell passed

    @property
    def cum(self):
        return self.tail_left + np.concatenate([[0.0], np.cumsum(self.cell_mass)])

    def _within(self, i, v):
        """phi at fraction v (of the cell's mass) inside cell i."""
        h = self.x[i + 1] - self.x[i]
        k = (self.y[i + 1] - self.y[i]) / h
        kh = k * h
        small = np.abs(kh) < 1e-9
        ks = np.where(small, 1.0, k)
        # solve (e^{k t} - 1) / (e^{k h} - 1) = v for t
        with np.errstate(over="ignore", invalid="ignore"):
            t_pos = np.log1p(v * np.expm1(np.minimum(kh, 700.0))) / ks  # k > 0
            # for k < 0 use the mirrored form to avoid overflow: t = h - log1p((1-v) expm1(-kh)) / (-k)
            t_neg = h - np.log1p((1.0 - v) * np.expm1(np.minimum(-kh, 700.0))) / (-ks)
        t = np.where(small, v * h, np.where(k > 0, t_pos, t_neg))
        return self.x[i] + np.clip(t, 0.0, h)

    def ppf(self, u):
        """Inverse CDF in theta (the same map draws use)."""
        u = np.atleast_1d(np.asarray(u, float))
        out = np.empty(u.shape)
        dist = self.prior.dist
        left = u < self.tail_left
        right = u >= 1.0 - self.tail_right
        mid = ~left & ~right
        if left.any():
            f0 = float(np.exp(self.prior.log_cdf_phi(self.x[0])))
            out[left] = dist.ppf(np.clip(u[left] / self.tail_left, 0.0, 1.0) * f0)
        if right.any():
            s1 = float(np.exp(self.prior.log_sf_phi(self.x[-1])))
            out[right] = dist.isf(np.clip((1.0 - u[right]) / self.tail_right, 0.0, 1.0) * s1)
        if mid.any():
            cum = self.cum
            i = np.clip(np.searchsorted(cum, u[mid], side="right") - 1, 0, self.cell_mass.size - 1)
            v = np.clip((u[mid] - cum[i]) / np.maximum(self.cell_mass[i], 1e-300), 0.0, 1.0)
            out[mid] = self.prior.theta(self._within(i, v))
        return out

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return self.ppf(rng.random(size))

    def cdf(self, theta):
        """P(theta' <= theta) under the grid posterior."""
        phi = self.prior.phi(np.asarray(theta, float))
        out = np.empty(phi.shape)
        cum = self.cum
        left = phi < self.x[0]
        right = phi >= self.x[-1]
        mid = ~left & ~right
        if left.any():
            lf0 = float(self.prior.log_cdf_phi(self.x[0]))
            out[left] = self.tail_left * np.exp(self.prior.log_cdf_phi(phi[left]) - lf0) if self.tail_left > 0 else 0.0
        if right.any():
            ls1 = float(self.prior.log_sf_phi(self.x[-1]))
            out[right] = 1.0 - (self.tail_right * np.exp(self.prior.log_sf_phi(phi[right]) - ls1)
                                if self.tail_right > 0 else 0.0)
        if mid.any():
            p = phi[mid]
            i = np.clip(np.searchsorted(self.x, p, side="right") - 1, 0, self.cell_mass.size - 1)
            h = self.x[i + 1] - self.x[i]
            t = p - self.x[i]
            y0, y1 = self.y[i], self.y[i] + (self.y[i + 1] - self.y[i]) * t / h
            part = np.where(t > 0, np.exp(_log_mean_exp_cell(y0, y1) + np.log(np.maximum(t, 1e-300)) - self.log_z), 0.0)
            out[mid] = cum[i] + part
        return np.clip(out, 0.0, 1.0)

    def mean(self) -> float:
        """E[theta]: cells by their mass at the cell's centre of mass (O(h^2)), tails by the prior's
        truncated mean."""
        return self._moment(lambda t: t)

    def sd(self) -> float:
        """sd(theta) = sqrt(E[theta^2] - E[theta]^2), both moments computed as :meth:`mean` is. Each cell's
        second moment is taken at its centre, which misses the within-cell variance sum_i m_i h_i^2 / 12
        in theta (h_i the cell's width mapped to theta): added, so the error is O(h^2) relative."""
        mean = self._moment(lambda t: t)
        second = self._moment(lambda t: t * t)
        widths = np.diff(self.prior.theta(self.x))
        within = float(np.dot(self.cell_mass, widths * widths)) / 12.0
        return float(np.sqrt(max(second - mean * mean + within, 0.0)))

    def _moment(self, f) -> float:
        """E[f(theta)]: each cell's mass at its centre, each tail by the prior's truncated expectation of f."""
        xm = 0.5 * (self.x[:-1] + self.x[1:])
        m = float(np.dot(self.cell_mass, f(self.prior.theta(xm))))
        dist = self.prior.dist
        t0, t1 = float(self.prior.theta(self.x[0])), float(self.prior.theta(self.x[-1]))
        if self.tail_left > 1e-15:
            f0 = dist.cdf(t0)
            m += self.tail_left * (dist.expect(f, ub=t0) / f0 if f0 > 0 else f(t0))
        if self.tail_right > 1e-15:
            s1 = dist.sf(t1)
            m += self.tail_right * (dist.expect(f, lb=t1) / s1 if s1 > 0 else f(t1))
        return m


def build(log_lik, prior: Prior1D, centre: float, scale: float, *, extra=(), tol_log: float = 1e-5,
          max_nodes: int = 1500) -> GridPosterior:
    """Adaptive grid posterior for ``log_lik`` (vectorised: phi array -> log L array) and ``prior``.

    ``centre``/``scale``: a guess of the posterior's location and width in phi; ``extra``: further
    (centre, scale) guesses whose neighbourhoods are also seeded."""
    lo_cap, hi_cap = prior.caps
    n_eval = [0]

    def logg(phi):
        phi = np.asarray(phi, float)
        n_eval[0] += phi.size
        v = prior.log_density_phi(phi) + np.asarray(log_lik(phi), float)
        return np.where(np.isnan(v), -np.inf, v)

    seeds = [np.asarray(centre + scale * np.linspace(-12, 12, 49))]
    for c, s in extra:
        if np.isfinite(c) and np.isfinite(s) and s > 0:
            seeds.append(c + s * np.linspace(-8, 8, 33))
    x = np.unique(np.clip(np.concatenate(seeds), lo_cap, hi_cap))
    if x.size < 5 and np.isfinite(lo_cap) and np.isfinite(hi_cap):  # the guesses lie outside the prior's caps
        x = np.unique(np.concatenate([x, np.linspace(lo_cap, hi_cap, 49)]))  # (prior_mean = 1000 gave 0 / 0)
    y = logg(x)
    if not np.isfinite(y).any():
        raise ValueError("data.s_dp is invalid for exact: the release has zero likelihood near the prior's bulk")
    # 1. widen until both ends are CUT below the maximum
    for _ in range(60):
        top = np.max(y)
        span = x[-1] - x[0]
        grow = []
        if y[0] > top - CUT and x[0] > lo_cap:
            grow.append(np.linspace(max(lo_cap, x[0] - span), x[0], 9)[:-1])
        if y[-1] > top - CUT and x[-1] < hi_cap:
            grow.append(np.linspace(x[-1], min(hi_cap, x[-1] + span), 9)[1:])
        if not grow:
            break
        new = np.concatenate(grow)
        x = np.concatenate([x, new])
        y = np.concatenate([y, logg(new)])
        order = np.argsort(x)
        x, y = x[order], y[order]
    # drop -inf plateaus at the ends (zero likelihood) but keep one node
    fin = np.isfinite(y)
    i0, i1 = np.argmax(fin), len(fin) - 1 - np.argmax(fin[::-1])
    x, y = x[max(i0 - 1, 0):i1 + 2], y[max(i0 - 1, 0):i1 + 2]
    y = np.maximum(y, np.max(y) - 745.0)  # exp underflow floor: far below any mass that matters
    # 2. adaptive refinement against the cubic spline
    done = np.zeros(x.size - 1, bool)
    refined = True
    for _ in range(60):
        top = np.max(y)
        h = np.diff(x)
        share = h * np.exp(np.maximum(y[:-1], y[1:]) - top)
        share /= share.sum()
        todo = ~done & (share > 1e-9)
        done |= ~todo
        if not todo.any():
            break
        if x.size >= max_nodes:
            refined = False
            break
        idx = np.nonzero(todo)[0]
        mid = 0.5 * (x[idx] + x[idx + 1])
        ym = np.maximum(logg(mid), top - 745.0)
        pred = interpolate.CubicSpline(x, y)(mid) if x.size >= 4 else 0.5 * (y[idx] + y[idx + 1])
        ok = np.abs(pred - ym) <= tol_log
        done[idx[ok]] = True
        # insert every evaluated midpoint (a passing one too: it is a free node); split failures
        x_new = np.concatenate([x, mid])
        y_new = np.concatenate([y, ym])
        order = np.argsort(x_new)
        # cell flags follow their left node; a passing cell's two halves stay done
        flags = np.zeros(x_new.size, bool)
        flags[:x.size - 1] = done
        flags[x.size - 1] = True  # the last node starts no cell
        flags[x.size:] = ok
        x, y = x_new[order], y_new[order]
        done = flags[order][:-1]
    # 3. fine sub-grid from the validated spline
    spline = interpolate.CubicSpline(x, y) if x.size >= 4 else None
    top = np.max(y)
    h = np.diff(x)
    share = h * np.exp(np.maximum(y[:-1], y[1:]) - top)
    share /= share.sum()
    if spline is not None:
        curv = np.maximum(np.abs(spline(x[:-1], 2)), np.abs(spline(x[1:], 2)))
        pieces = np.ceil(h * np.sqrt(curv / (8.0 * 1e-7)))
        pieces = np.where(share > 1e-9, np.clip(pieces, 1, 2000), 1).astype(np.int64)
        total = int(pieces.sum())
        if total > 400_000:
            pieces = np.maximum(1, (pieces * 400_000 // total)).astype(np.int64)
        starts = np.repeat(x[:-1], pieces)
        steps = np.repeat(h / pieces, pieces)
        offs = np.concatenate([np.arange(p) for p in pieces])
        xf = np.append(starts + offs * steps, x[-1])
        yf = spline(xf)
        # nodes keep their evaluated values exactly
        node_pos = np.concatenate([[0], np.cumsum(pieces)])
        yf[node_pos] = y
        yf = np.maximum(yf, top - 745.0)
    else:
        xf, yf = x, y
    # 4. masses: cells (log-linear) and prior tails at the end likelihood values
    log_cells = _log_mean_exp_cell(yf[:-1], yf[1:]) + np.log(np.diff(xf))
    log_ll_left = yf[0] - prior.log_density_phi(xf[0])
    log_ll_right = yf[-1] - prior.log_density_phi(xf[-1])
    log_tl = float(log_ll_left + prior.log_cdf_phi(xf[0]))
    log_tr = float(log_ll_right + prior.log_sf_phi(xf[-1]))
    parts = np.concatenate([[log_tl], log_cells, [log_tr]])
    log_z = float(special.logsumexp(parts))
    w = np.exp(parts - log_z)
    return GridPosterior(prior=prior, x=xf, y=yf, log_z=log_z, cell_mass=w[1:-1], tail_left=float(w[0]),
                         tail_right=float(w[-1]), n_evaluations=n_eval[0], refined=refined)
