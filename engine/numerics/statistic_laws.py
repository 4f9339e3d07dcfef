"""The likelihood L(theta) = p(s_dp | theta) of the one-parameter built-in models, on windows.

    L(theta) = sum_s p(s | theta) eta(s_dp - s)      (integer statistic)
    L(theta) = ∫ p_S(s | theta) eta(s_dp - s) ds      (the clamped normal sum)

Only statistic values within reach of both factors matter, so each evaluation runs over the
intersection of

* the *bulk* of S | theta: mean ± (11 sd + 40) (Chernoff: outside it P(S outside) < 2 e^-50 for the
  binomial and Poisson; 12 sd + 60 for the clamped Poisson sum, whose records are bounded), and
* the *noise window*: s_dp ± 50 b for Laplace-type noise (eta below e^-50 of its peak outside),
  s_dp ± 10 sigma for Gaussian-type noise (e^-50 again).

So one evaluation costs O(min(sd(S), noise scale)) (the binomial/Poisson pmf by recurrence in log
space) or one FFT of the bulk (clamped sums), never O(n). When the noise is wide (small epsilon)
the window is the statistic's own bulk; when it is narrow, the few values near s_dp. If the two
are disjoint, the 64 bulk values nearest s_dp are used (L is then below e^-50 eta_max anyway).
Neglected per theta: at most eta_max (2 e^-50 + e^-50), reported by the caller relative to the
evidence p(s_dp) as ``neglected_mass_bound``.

Models and their laws of S | theta:

beta_binomial
    Binomial(n, theta), log pmf by the ratio recurrence from the window's first value.
    Randomized response needs no sum: each record is reported as one with probability
    q(theta) = theta Q[1,1] + (1 - theta) Q[0,1], so the reported count is Binomial(n, q(theta))
    and L(theta) is that pmf at s_dp (O(1) per theta, any n).
poisson_gamma (no clamp)
    Poisson(n lam), the same recurrence.
poisson_gamma with ``upper`` = U
    S = sum_i min(X_i, U): the record pmf on {0..U} (the last value carries P(X >= U)), convolved
    n times by FFT: the DFT of length N of the record pmf to the power n, inverted, is the law of
    S modulo N, which equals the law of S on any N consecutive values up to the mass of S outside
    them (N is the next power of two above the bulk's width, so that mass is below e^-50). The record
    pmf is exponentially tilted (q_j ∝ p_j e^{t j}) so that the tilted sum is centred where the terms
    p(s) eta(s_dp - s) concentrate; then log p(s) = log Q(s) - t s + n log M(t) exactly, and the FFT's
    relative accuracy (about 1e-12 of the peak) is spent where it matters, at every theta.
    When the noise window is narrow (large epsilon: a few dozen s values), only those values are
    computed, by the inverse DFT summed over the frequencies whose |DFT|^n exceeds e^-60 (about 70
    of 16,000 at n = 10^6), with the centred log DFT formed by log1p: 1e-14 relative to the peak
    against the Binomial closed form, where the full inverse FFT reaches 5e-11 (``_law_at``).
    The normal lattice law (below) is read with a floor of 1e-12 of its peak (FFT round-off), a
    slight over-statement of L far in the tails that is included in the reported bound.
normal_known_sd
    X = min(max(Y, lo), hi), Y ~ N(mu, sd^2): atoms Phi((lo-mu)/sd) at lo and Phi((mu-hi)/sd) at
    hi, a normal density in between. Discretisation: the lattice lo + j h0 (h0 = min(sd, hi-lo)/64,
    hi - lo a multiple of h0) gets the record law by *hat allocation* (a value x between lattice
    points x_j < x < x_j+1 goes to x_j with probability (x_j+1 - x)/h0 and to x_j+1 otherwise),
    which is a randomised rounding X~ with E[X~ | X] = X. The n-fold sum is built by binary
    powering with FFT convolutions; the partial sum of 2^k records is moved to a lattice of step
    h0 2^floor(k/2) (so every stage has about 24 sd / h0 points) by the same hat allocation.
    Every rounding is mean-preserving, so the computed lattice sum is S~ = S + R with
    E[R | x] = 0 and Var(R) <= V, where V adds (new step)^2/4 per rounding and is tracked exactly;
    finally the lattice law is read through eta smoothed by a mean-zero kernel V' of variance
    h^2/6 (h the last step: the triangle on [-h, h] for Laplace noise, in closed form; a normal of
    that variance for Gaussian noise). The result is the *exact* posterior given a release with
    extra mean-zero noise R + V' besides the mechanism's: its sd is reported as
    ``discretisation_sd`` with its ratio to the sd of s_dp given mu, sqrt(Var(S | mu) + noise
    variance), at the posterior median (``discretisation_ratio``): about 0.02 at n = 10^4 to 10^6
    and smaller where the noise is wide. Adding independent mean-zero noise of relative sd r to the
    release widens the likelihood's spread by a factor sqrt(1 + r^2), so the posterior sd moves by at
    most about r^2 / 2 relative (2e-4) and its mean not at first order: far below the Monte Carlo
    error of the sd, 1/sqrt(2 draws) (8e-3 at 8000 draws). tests/test_exact_numerical.py checks
    this by halving h0.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit
from scipy import fft as sp_fft
from scipy import special, stats

from ..mechanisms import DiscreteGaussian, DiscreteLaplace, Gaussian, Laplace, RandomizedResponse

__all__ = ["noise_of", "likelihood", "T_NOISE", "NormalLattice", "MAX_LATTICE"]

T_NOISE = 50.0
MAX_WINDOW = 400_000
#: the most lattice intervals of one clamped normal record's law (NormalLattice): 64 per record sd over the clamp
#: range, so bounds 15,625 sds apart; income bounds [0, 400,000] with sd 1 asked for 25.6 million, seconds per mu
#: and minutes per run
MAX_LATTICE = 1_000_000
FLOOR = 1e-12  # convolution round-off is about 1e-14 of the peak; lattice values below 1e-12 of it are floored


def noise_of(mech):
    """(kernel, scale, log eta(0), half-width of the noise window): kernel 0 = Laplace-type
    (log eta(r) = -|r|/scale + c0), 1 = Gaussian-type (-r^2/(2 scale^2) + c0), 2 = no noise."""
    if mech is None:
        return 2, 1.0, 0.0, 0.0
    if isinstance(mech, (Laplace, DiscreteLaplace)):
        return 0, float(mech.scale), float(mech.noise_log_prob(np.zeros(1))[0]), T_NOISE * float(mech.scale)
    if isinstance(mech, (Gaussian, DiscreteGaussian)):
        return (1, float(mech.scale), float(mech.noise_log_prob(np.zeros(1))[0]),
                math.sqrt(2.0 * T_NOISE) * float(mech.scale))
    raise ValueError(f"mechanism.name = {getattr(mech, 'name', mech)!r} is invalid here: additive noise only")


@njit(cache=True, nogil=True)
def _log_noise(kernel, scale, c0, r):
    if kernel == 0:
        return c0 - abs(r) / scale
    if kernel == 1:
        return c0 - 0.5 * (r / scale) * (r / scale)
    return 0.0 if r == 0.0 else -np.inf


@njit(cache=True, nogil=True)
def _window(m, sd, top, sdp, half, kernel):
    blo = max(0.0, math.floor(m - 11.0 * sd - 40.0))
    bhi = min(top, math.ceil(m + 11.0 * sd + 40.0))
    lo = max(blo, math.ceil(sdp - half))
    hi = min(bhi, math.floor(sdp + half))
    if lo > hi:
        if kernel == 2:
            return 1.0, 0.0  # empty: s_dp off the support
        # no integer within the noise's window of s_dp: s_dp lies beyond this theta's bulk, or inside it between two
        # integers the noise is too narrow to reach (Laplace b < 1/T_NOISE, s_dp = 200.3). The terms that carry the
        # sum are then the bulk's integers nearest s_dp: those within 63 of c, the bulk's point nearest s_dp (the
        # bulk's edge, or s_dp itself; it took the bulk's upper edge for any s_dp inside, and the posterior of a
        # Poisson mean at s_dp = 200.3, n = 100, eps = 1000 came out at 1.07 for 2.00)
        c = min(max(sdp, blo), bhi)
        lo, hi = max(blo, math.floor(c) - 63.0), min(bhi, math.ceil(c) + 63.0)
    if hi - lo + 1 > MAX_WINDOW:  # far tails of theta only: keep the part nearest s_dp
        c = min(max(sdp, lo), hi)
        lo = max(lo, c - MAX_WINDOW / 2)
        hi = min(hi, lo + MAX_WINDOW - 1)
    return lo, hi


@njit(cache=True, nogil=True)
def _lse_step(mx, acc, v):
    if v == -np.inf:
        return mx, acc
    if v > mx:
        return v, acc * math.exp(mx - v) + 1.0
    return mx, acc + math.exp(v - mx)


@njit(cache=True, nogil=True)
def binomial_loglik(n, log_t, log_1mt, sdp, kernel, scale, c0, half, out):
    """log sum_s Bin(s; n, theta) eta(s_dp - s) for each theta = exp(log_t[i])."""
    for i in range(log_t.size):
        lt, l1 = log_t[i], log_1mt[i]
        th = math.exp(lt)
        m = n * th
        sd = math.sqrt(n * th * math.exp(l1))
        lo, hi = _window(m, sd, float(n), sdp, half, kernel)
        if lo > hi:
            out[i] = -np.inf
            continue
        s = lo
        lp = math.lgamma(n + 1.0) - math.lgamma(s + 1.0) - math.lgamma(n - s + 1.0)
        if s > 0:
            lp += s * lt
        if n - s > 0:
            lp += (n - s) * l1
        mx, acc = -np.inf, 0.0
        while s <= hi:
            mx, acc = _lse_step(mx, acc, lp + _log_noise(kernel, scale, c0, sdp - s))
            if s < n:
                lp += math.log(n - s) - math.log(s + 1.0) + lt - l1
            s += 1.0
        out[i] = mx + math.log(acc) if acc > 0 else -np.inf


@njit(cache=True, nogil=True)
def poisson_loglik(log_mean, sdp, kernel, scale, c0, half, out):
    """log sum_s Poisson(s; exp(log_mean[i])) eta(s_dp - s)."""
    for i in range(log_mean.size):
        lm = log_mean[i]
        m = math.exp(lm)
        if m > 1e15 and sdp < 1e14:  # S is beyond any release by 3e7 sds: L is 0 in double precision
            out[i] = -np.inf
            continue
        lo, hi = _window(m, math.sqrt(m), 1e300, sdp, half, kernel)
        if lo > hi:
            out[i] = -np.inf
            continue
        s = lo
        lp = s * lm - m - math.lgamma(s + 1.0)
        mx, acc = -np.inf, 0.0
        while s <= hi:
            mx, acc = _lse_step(mx, acc, lp + _log_noise(kernel, scale, c0, sdp - s))
            lp += lm - math.log(s + 1.0)
            s += 1.0
        out[i] = mx + math.log(acc) if acc > 0 else -np.inf


def _log_noise_np(kernel, scale, c0, r):
    r = np.asarray(r, float)
    if kernel == 0:
        return c0 - np.abs(r) / scale
    if kernel == 1:
        return c0 - 0.5 * (r / scale) ** 2
    return np.where(r == 0.0, 0.0, -np.inf)


def _next_pow2(k: int) -> int:
    return 1 << max(6, int(math.ceil(math.log2(max(k, 2)))))


class _Floor:
    """Largest per-theta likelihood mass attributed to the FFT floor (for the reported bound)."""

    def __init__(self):
        self.worst = -np.inf

    def add(self, log_value):
        self.worst = max(self.worst, float(log_value))


def _power_law(rec, n, mu, size):
    """Law of the sum of n records with pmf ``rec`` on 0..U, modulo ``size``, by FFT.

    The power is taken as exp(n log z_c + i omega n mu) with z_c the DFT centred at the record mean
    mu: its log is small wherever |z|^n is not negligible, so the relative error of the power stays
    at a few ulps instead of n ulps of the raw phase n omega mu (whose reduction modulo 2 pi is done
    in integers)."""
    vals = np.arange(rec.size)
    folded = np.bincount(vals % size, weights=rec, minlength=size)
    f = np.fft.rfft(folded)
    k = np.arange(f.size)
    omega = 2 * np.pi * k / size
    total = n * mu
    whole = math.floor(total)
    with np.errstate(divide="ignore"):
        log_zc = np.log(f * np.exp(1j * omega * mu))  # rfft uses e^{-i omega s}: centring multiplies by e^{+i omega mu}
    turns = ((k * whole) % size) / size + k * (total - whole) / size
    power = np.exp(n * log_zc - 2j * np.pi * turns)
    power[~np.isfinite(power)] = 0.0
    return np.fft.irfft(power, size)


def _product_mode(m, v, sdp, kernel, scale):
    """Mode of N(s; m, v) eta(s_dp - s): where the terms of L(theta) concentrate."""
    if kernel == 2:
        return sdp
    if kernel == 1:
        return (m * scale**2 + sdp * v) / (scale**2 + v)
    d = sdp - m
    return sdp if abs(d) <= v / scale else m + math.copysign(v / scale, d)


def _tilt(rec, target_mean):
    """t with mean of rec_j e^{t j} / M(t) equal to target_mean; returns (t, log M(t), tilted pmf).

    K(t) = log M(t) is convex with K'(t) the tilted mean and K''(t) the tilted variance, so Newton's
    method on K'(t) = target, kept inside a bracket that bisection shrinks whenever a Newton step
    leaves it, converges from any start (tolerance 1e-13 on t, as the root finder it replaces)."""
    vals = np.arange(rec.size, dtype=float)
    with np.errstate(divide="ignore"):
        log_rec = np.log(rec)

    def tilted(t):
        z = log_rec + t * vals
        top = z.max()
        w = np.exp(z - top)
        total = w.sum()
        q = w / total
        mean = float(q @ vals)
        return top + math.log(total), q, mean, float(q @ (vals - mean) ** 2)

    lo, hi = -1.0, 1.0
    while tilted(lo)[2] > target_mean and lo > -700:
        lo *= 2
    while tilted(hi)[2] < target_mean and hi < 700:
        hi *= 2
    if not (tilted(lo)[2] <= target_mean <= tilted(hi)[2]):
        t = lo if tilted(lo)[2] >= target_mean else hi
        lm, q, _, _ = tilted(t)
        return t, lm, q
    t = 0.0 if lo < 0.0 < hi else 0.5 * (lo + hi)
    for _ in range(200):
        lm, q, mean, var = tilted(t)
        excess = mean - target_mean
        if excess > 0:
            hi = t
        else:
            lo = t
        step = excess / var if var > 0 else np.inf
        nxt = t - step
        if not lo < nxt < hi:
            nxt = 0.5 * (lo + hi)
        if abs(nxt - t) <= 1e-13 or hi - lo <= 1e-13:
            t = nxt
            break
        t = nxt
    lm, q, _, _ = tilted(t)
    return t, lm, q


def _law_at(rec, n, mu, size, s):
    """The values at the integers ``s`` of the law of the sum of n records with pmf ``rec`` on 0..U,
    modulo ``size`` (what ``irfft`` of the n-th power of the record DFT gives), by the inverse DFT
    restricted to the frequencies that carry mass.

    |rec^(omega_k)|^n below e^-60 contributes less than 2 e^-60 / size to any value (the floor
    read by the caller is 1e-12 of the peak, ~1e-15 here), so those frequencies are skipped: at
    n = 10^6 about 70 of 16,000 remain, and the inverse is a sum over them at the few s in the
    noise window instead of a full inverse FFT. Phases are reduced modulo 2 pi in integers, as in
    :func:`_power_law`; the result agrees with it to round-off."""
    vals = np.arange(rec.size)
    kmax = size // 2
    # 1 - |f(omega)|^2 = sum_d 2 c_d (1 - cos(omega d)) >= 2 c_1 (1 - cos omega), c_d = sum_j q_j q_j+d,
    # and |f|^2n <= (1 - x)^n <= e^-nx: beyond 2 c_1 (1 - cos omega) = 120 / n every |f|^n < e^-60.
    c1 = float(rec[:-1] @ rec[1:])
    if c1 > 0 and 60.0 / (n * c1) < 2.0:
        kmax = min(kmax, int(math.acos(1.0 - 60.0 / (n * c1)) * size / (2 * np.pi)) + 1)
    if (kmax + 1) * rec.size <= 4 * size:
        # centred DFT f_c = 1 + z with z = sum_j q_j (e^{-i omega (j - mu)} - 1), summed without
        # cancellation (cos x - 1 = -2 sin^2(x/2)), and log(1 + z) by log1p: accurate to round-off
        # of log f_c itself, so the n-th power keeps its relative accuracy at any n.
        k = np.arange(kmax + 1)
        x = np.outer(2 * np.pi * k / size, vals - mu)
        re = -2.0 * np.sin(0.5 * x) ** 2 @ rec
        im = -np.sin(x) @ rec
        with np.errstate(divide="ignore", invalid="ignore"):
            log_zc = 0.5 * np.log1p(2 * re + re * re + im * im) + 1j * np.arctan2(im, 1.0 + re)
        keep = n * log_zc.real > -60.0
        k, log_zc = k[keep], log_zc[keep]
    else:
        f = np.fft.rfft(np.bincount(vals % size, weights=rec, minlength=size))[:kmax + 1]
        with np.errstate(divide="ignore"):
            k = np.flatnonzero(n * np.log(np.abs(f)) > -60.0)
            log_zc = np.log(f[k] * np.exp(2j * np.pi * k / size * mu))
    total = n * mu
    whole = math.floor(total)
    amp = np.exp(n * log_zc)
    s = np.asarray(s, dtype=np.int64)
    if k.size * s.size > 2 * size:  # a wide window: one inverse FFT of the sparse spectrum is cheaper
        spectrum = np.zeros(size // 2 + 1, dtype=complex)
        turns = ((k * whole) % size) / size + k * (total - whole) / size
        spectrum[k] = amp * np.exp(-2j * np.pi * turns)
        return np.fft.irfft(spectrum, size)[s % size]
    turns = ((k[:, None] * (s[None, :] - whole)) % size) / size - (k * (total - whole) / size)[:, None]
    weight = np.where((k == 0) | (2 * k == size), 1.0, 2.0)
    return (weight[:, None] * (amp[:, None] * np.exp(2j * np.pi * turns))).real.sum(axis=0) / size


def clamped_poisson_loglik(phi, n, upper, sdp, noise, floor: _Floor):
    """log L for the clamped Poisson sum by an exponentially tilted FFT.

    With q_j = p_j e^{t j} / M(t) the law of the sum under q is Q(s) = P(s) e^{t s} / M(t)^n, so
    log P(s) = log Q(s) - t s + n log M(t) exactly. t is chosen so that the tilted sum's mean sits at
    the mode of P(s) eta(s_dp - s) (normal approximation of P), where Q is near its peak and the FFT's
    relative accuracy is best; Q is computed on the tilted bulk (mean ± 12 sd + 60), values below
    1e-12 of its peak (round-off) are dropped."""
    kernel, scale, c0, half = noise
    out = np.empty(np.size(phi))
    top = n * upper
    j = np.arange(upper)
    vals = np.arange(upper + 1)
    for i, lam in enumerate(np.exp(np.atleast_1d(phi))):
        rec = np.empty(upper + 1)
        rec[:upper] = stats.poisson.pmf(j, lam)
        rec[upper] = stats.poisson.sf(upper - 1, lam)
        rec = np.maximum(rec, 0.0)
        mu = float(np.dot(rec, vals))
        var = max(float(np.dot(rec, vals**2)) - mu * mu, 1e-300)
        target = _product_mode(n * mu, n * var, sdp, kernel, scale)
        target = min(max(target, 0.5), top - 0.5)
        t, log_m, q = _tilt(rec, target / n)
        mu_t = float(np.dot(q, vals))
        sd_t = math.sqrt(max(float(np.dot(q, vals**2)) - mu_t * mu_t, 0.0) * n)
        blo = max(0, math.floor(n * mu_t - 12 * sd_t - 60))
        bhi = min(top, math.ceil(n * mu_t + 12 * sd_t + 60))
        if top + 1 <= _next_pow2(bhi - blo + 1):
            blo, bhi = 0, top
        size = _next_pow2(bhi - blo + 1)
        lo = max(blo, math.ceil(sdp - half))
        hi = min(bhi, math.floor(sdp + half))
        if lo > hi:
            if kernel == 2:
                out[i] = -np.inf
                continue
            c = min(max(sdp, blo), bhi)  # the bulk's integers nearest s_dp, as _window takes them
            lo, hi = max(blo, math.floor(c) - 63), min(bhi, math.ceil(c) + 63)
        s = np.arange(lo, hi + 1)
        mode = math.floor(n * mu_t)
        both = _law_at(q, n, mu_t, size, np.concatenate([s, [mode, mode + 1]]))
        p, peak = both[:-2], both[-2:].max()
        ok = p > 1e-12 * peak
        if not ok.any():
            out[i] = -np.inf
            continue
        log_p = np.log(p[ok]) - t * s[ok] + n * log_m
        out[i] = special.logsumexp(log_p + _log_noise_np(kernel, scale, c0, sdp - s[ok]))
    return out


# --------------------------------------------------------------------------- the clamped normal sum
class NormalLattice:
    """Lattice laws of sums of clamped normal records (see the module docstring)."""

    def __init__(self, model, resolution: int = 64):
        self.model = model
        width = model.hi - model.lo
        self.k0 = self.cells(model, resolution)
        self.h0 = width / self.k0
        self.nbits = int(model.n).bit_length()

    @staticmethod
    def cells(model, resolution: int = 64) -> int:
        """The record law's lattice intervals: (hi - lo) / h0, h0 = min(sd, hi - lo) / resolution."""
        width = model.hi - model.lo
        return int(math.ceil(width / (min(model.sd, width) / resolution)))

    def record(self, mu):
        m = self.model
        x = m.lo + self.h0 * np.arange(self.k0 + 1)
        z = (x - mu) / m.sd
        # cell masses, from the lower or the upper tail so that both tails stay accurate
        d_phi = np.where(z[:-1] > 0, special.ndtr(-z[:-1]) - special.ndtr(-z[1:]), special.ndtr(z[1:]) - special.ndtr(z[:-1]))
        dens = stats.norm.pdf(z)
        d_pdf = np.diff(dens)
        left = ((x[1:] - mu) * d_phi + m.sd * d_pdf) / self.h0
        right = ((mu - x[:-1]) * d_phi - m.sd * d_pdf) / self.h0
        w = np.zeros(self.k0 + 1)
        w[:-1] += left
        w[1:] += right
        w[0] += special.ndtr((m.lo - mu) / m.sd)
        w[-1] += special.ndtr((mu - m.hi) / m.sd)
        return _trim(0, np.maximum(w, 0.0))

    def sum_law(self, mu):
        """(j0, step multiplier, probabilities, variance bound V): S~ on n lo + (j0 + k) h0 step."""
        j0, vals = self.record(mu)
        p_law, p_step, p_var = (j0, vals), 1, 0.0
        res, r_step, r_var = None, 1, 0.0
        n = int(self.model.n)
        for k in range(self.nbits):
            if (n >> k) & 1:
                if res is None:
                    res, r_step, r_var = p_law, p_step, p_var
                else:
                    while r_step < p_step:
                        res, r_step = _rebin2(res), r_step * 2
                        r_var += (self.h0 * r_step) ** 2 / 4.0
                    res = _conv(res, p_law)
                    r_var += p_var
            if k + 1 < self.nbits:
                p_law = _conv(p_law, p_law)
                p_var *= 2.0
                if (k + 1) // 2 > k // 2:
                    p_law, p_step = _rebin2(p_law), p_step * 2
                    p_var += (self.h0 * p_step) ** 2 / 4.0
        return res[0], r_step, res[1], r_var


def _trim(j0, vals):
    """Drop the ends below 1e-14 of the peak (FFT round-off is about 1e-16 of it, so nothing smaller
    is significant; the mass dropped is far below the 1e-12 floor used when reading the law)."""
    keep = np.nonzero(vals > 1e-14 * vals.max())[0]
    return j0 + int(keep[0]), vals[keep[0]:keep[-1] + 1]


def _conv(a, b):
    """The law of the sum of two independent lattice variables: direct for short laws, else by real
    FFTs at a fast length (a self-convolution transforms once)."""
    x, y = a[1], b[1]
    n = x.size + y.size - 1
    if min(x.size, y.size) <= 48:
        v = np.convolve(x, y)
    else:
        size = sp_fft.next_fast_len(n, real=True)
        fx = sp_fft.rfft(x, size)
        fy = fx if y is x else sp_fft.rfft(y, size)
        v = sp_fft.irfft(fx * fy, size)[:n]
    return _trim(a[0] + b[0], np.maximum(v, 0.0))


def _rebin2(law):
    j0, v = law
    g = j0 + np.arange(v.size)
    base = g // 2
    new0 = int(base[0])
    odd = (g % 2).astype(bool)
    size = int(base[-1] - new0) + 2
    out = np.bincount(base - new0, weights=np.where(odd, 0.5 * v, v), minlength=size)
    out += np.bincount(base - new0 + 1, weights=np.where(odd, 0.5 * v, 0.0), minlength=size)
    return _trim(new0, out)


def _log_eta_smooth(kernel, scale, c0, r, h):
    """log of eta convolved with a mean-zero kernel of variance h^2/6 (module docstring)."""
    r = np.asarray(r, float)
    a = np.abs(r)
    if kernel == 1:
        var = scale**2 + h * h / 6.0
        return -0.5 * r * r / var - 0.5 * math.log(2 * math.pi * var)
    if kernel == 2:  # no noise: the triangle itself
        with np.errstate(divide="ignore"):
            return np.log(np.maximum(h - a, 0.0)) - 2 * math.log(h)
    b = scale
    y = h / (2 * b)
    log2sinh = y + math.log1p(-math.exp(-2 * y)) if y > 0 else -np.inf
    far = math.log(b / 2) - a / b + 2 * log2sinh - 2 * math.log(h)

    def g(x):
        return np.where(x < 0, 0.5 * b * np.exp(np.minimum(x, 0.0) / b), x + 0.5 * b * np.exp(-np.maximum(x, 0.0) / b))

    with np.errstate(divide="ignore", invalid="ignore"):
        near = np.log(np.maximum((g(r + h) - 2 * g(r) + g(r - h)) / (h * h), 1e-300))
    return np.where(a >= h, far, near)


def normal_loglik(phi, model, sdp, noise, floor: _Floor, lattice: NormalLattice, stats_out: dict):
    kernel, scale, c0, half = noise
    out = np.empty(np.size(phi))
    for i, mu in enumerate(np.atleast_1d(phi)):
        j0, step, vals, var = lattice.sum_law(mu)
        h = lattice.h0 * step
        s = model.n * model.lo + (j0 + np.arange(vals.size)) * h
        fl = FLOOR * vals.max()
        le = _log_eta_smooth(kernel, scale, c0, sdp - s, h)
        out[i] = special.logsumexp(np.log(np.maximum(vals, fl)) + le)
        floor.add(math.log(fl) + special.logsumexp(le))
        mean = float(np.dot(vals, s) / vals.sum())
        sd_s = math.sqrt(max(float(np.dot(vals, (s - mean) ** 2) / vals.sum()), 1e-300))
        disc = math.sqrt(var + h * h / 6.0)
        noise_var = 0.0 if kernel == 2 else (2.0 * scale**2 if kernel == 0 else scale**2)
        stats_out.setdefault("_disc", {})[float(mu)] = (disc, disc / math.sqrt(sd_s**2 + noise_var))
    return out


# --------------------------------------------------------------------------- dispatch
def likelihood(problem, noise_free: bool = False, s_value=None):
    """(log L as a function of phi arrays, info dict filled while it runs).

    ``noise_free``: the likelihood of s = ``s_value`` itself (the naive posterior with clamping
    respected)."""
    model, mech = problem.model, problem.mechanism
    info = {}
    floor = _Floor()
    info["_floor"] = floor
    sdp = float(np.asarray(problem.s_dp, float).reshape(-1)[-1]) if s_value is None else float(s_value)
    if isinstance(mech, RandomizedResponse) and not noise_free:
        lq = mech.log_Q
        z1, n = round(sdp), model.n
        const = special.gammaln(n + 1) - special.gammaln(z1 + 1) - special.gammaln(n - z1 + 1)

        def rr(phi):
            lt, l1 = -np.logaddexp(0.0, -phi), -np.logaddexp(0.0, phi)
            lq1 = np.logaddexp(lt + lq[1, 1], l1 + lq[0, 1])
            lq0 = np.logaddexp(lt + lq[1, 0], l1 + lq[0, 0])
            return const + (z1 * lq1 if z1 > 0 else 0.0) + ((n - z1) * lq0 if n - z1 > 0 else 0.0)

        return rr, info
    noise = noise_of(None if noise_free else mech)
    kernel, scale, c0, half = noise
    if model.name == "beta_binomial":
        def bb(phi):
            phi = np.atleast_1d(np.asarray(phi, float))
            out = np.empty(phi.size)
            binomial_loglik(float(model.n), -np.logaddexp(0.0, -phi), -np.logaddexp(0.0, phi), sdp, kernel,
                            scale, c0, half, out)
            return out

        return bb, info
    if model.name == "poisson_gamma" and model.upper is None:
        def pg(phi):
            phi = np.atleast_1d(np.asarray(phi, float))
            out = np.empty(phi.size)
            poisson_loglik(math.log(model.n) + phi, sdp, kernel, scale, c0, half, out)
            return out

        return pg, info
    if model.name == "poisson_gamma":
        if noise_free:
            sdp = float(round(sdp))
        return (lambda phi: clamped_poisson_loglik(phi, model.n, model.upper, sdp, noise, floor)), info
    if model.name == "normal_known_sd":
        lattice = NormalLattice(model)
        return (lambda phi: normal_loglik(phi, model, sdp, noise, floor, lattice, info)), info
    raise ValueError(f"model.name = {model.name!r} is invalid for a numerical likelihood")
