"""Rank-normalised split R-hat and bulk / tail effective sample size, in NumPy.

Vehtari, Gelman, Simpson, Carpenter & Bürkner (2021), "Rank-normalization, folding, and
localization: an improved R-hat for assessing convergence of MCMC", Bayesian Analysis 16(2).
For draws x of shape (chain, draw):

split
    Each chain is cut into its first and last ⌊N/2⌋ draws, giving M = 2 × chains chains of
    N' = ⌊N/2⌋ draws (a trend within a chain then shows as disagreement between its halves).
rank normalisation
    z = Φ⁻¹((r − 3/8) / (S − 3/4 + 1)), r the average rank of each draw among all S draws
    (Blom 1958); it makes R-hat and ESS well defined for heavy tails and invariant to monotone maps.
R-hat (eq. 4 of the paper on z)
    W = mean of the within-chain variances, B = N' × variance of the chain means, and
    R̂ = sqrt(((N' − 1)/N' W + B/N') / W). The rank R-hat is max(R̂(z(split x)),
    R̂(z(split |x − median x|))): the second, "folded", catches chains that differ in scale only.
ESS (eqs. 10–11; Geyer 1992's initial monotone sequence)
    ρ̂_t = 1 − (W − mean over chains of the lag-t autocovariance) / var⁺ with
    var⁺ = (N'−1)/N' W + var(chain means); pairs ρ̂_{2k} + ρ̂_{2k+1} are summed while positive
    and made monotone; τ̂ = −1 + 2 Σ ρ̂_t (at least 1/log10(M N')), ESS = M N' / τ̂.
    Bulk ESS is the ESS of z(split x); tail ESS the smaller ESS of the indicators
    1{x ≤ q5} and 1{x ≤ q95} (split); the mean's ESS that of split x itself (no ranks).
MCSE of the mean
    sd(x) / sqrt(ESS of the mean): the Monte Carlo standard error of the draws' mean, ArviZ's
    ``mcse(method="mean")``.
MCSE of a quantile q_p (ArviZ's ``mcse(method="quantile", prob=p)``; Vehtari et al. 2021, §4.3)
    S_p = the ESS of the split indicator 1{x <= q_p}; the quantile's rank among the S draws is then about
    Beta(S_p p + 1, S_p (1 - p) + 1) in its share of them, so the draws at that law's 15.87% and 84.13% points
    (the sorted draws at floor(a S - 1) and ceil(b S - 1), within 0 .. S - 1) bracket q_p by about one standard
    error each side: half their distance.

:func:`diagnose` gives all six numbers of one parameter at once, sharing what they share (the split chains and
their ranks for R-hat and bulk ESS, the indicators' ESS for tail ESS and the quantiles' MCSE): the same numbers as
the six functions, in about a third of the time (a summary of the log-linear model's 80 parameters over 4 × 5,000
draws took 2.5 s, eight times its sampler's run).

This follows ArviZ 0.23's ``rhat(method="rank")``, ``ess(method="bulk" / "tail" / "mean")`` and
``mcse(method="mean")`` step for
step (tests/test_convergence.py checks agreement to round-off). It exists because importing ArviZ
costs seconds on a cold server (its plotting modules compile numba ufuncs at import) and every
summary needs these three numbers; ArviZ stays the adapter for InferenceData
(:mod:`engine.numerics.diagnostics`).
"""
from __future__ import annotations

import numpy as np
from scipy import special, stats

__all__ = ["rhat", "ess_bulk", "ess_tail", "ess_mean", "mcse_mean", "ess_quantile", "mcse_quantile", "diagnose",
           "average_ranks"]


def _split(x: np.ndarray) -> np.ndarray:
    half = x.shape[1] // 2
    return np.concatenate([x[:, :half], x[:, x.shape[1] - half:]], axis=0)


def average_ranks(x: np.ndarray) -> np.ndarray:
    """Ranks 1..S of all of ``x``'s S entries, tied entries sharing the average of their ranks (scipy's
    ``rankdata(method="average")``, the same numbers: each is a whole number or a half). One sort and one pass over
    the tied runs; scipy's stable sort and per-element work took 2.3 times as long on 20,000 draws."""
    flat = np.asarray(x, dtype=float).ravel()
    order = np.argsort(flat)
    ordered = flat[order]
    new = np.empty(flat.size, dtype=bool)
    new[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    starts = np.flatnonzero(new)
    ends = np.append(starts[1:], flat.size)
    ranks = np.empty(flat.size)
    ranks[order] = np.repeat((starts + 1 + ends) / 2.0, ends - starts)  # positions starts+1 .. ends, averaged
    return ranks.reshape(np.shape(x))


def _z_scale(x: np.ndarray) -> np.ndarray:
    return special.ndtri((average_ranks(x) - 0.375) / (x.size - 0.75 + 1.0))


def _valid(x: np.ndarray, min_chains: int = 1, min_draws: int = 4) -> bool:
    return bool(np.isfinite(x).all()) and x.shape[0] >= min_chains and x.shape[1] >= min_draws


def _rhat_plain(x: np.ndarray) -> float:
    n = x.shape[1]
    between = n * np.var(x.mean(axis=1), ddof=1)
    within = np.mean(np.var(x, axis=1, ddof=1))
    with np.errstate(invalid="ignore", divide="ignore"):  # chains that never move: NaN, as ArviZ
        return float(np.sqrt((between / within + n - 1) / n))


def _autocov(x: np.ndarray) -> np.ndarray:
    """Autocovariance of each chain at every lag (FFT, zero-padded to a fast length ≥ 2N)."""
    from scipy.fft import next_fast_len

    n = x.shape[1]
    m = next_fast_len(2 * n)
    centred = x - x.mean(axis=1, keepdims=True)
    f = np.fft.rfft(centred, n=m, axis=1)
    f *= np.conjugate(f)
    return np.fft.irfft(f, n=m, axis=1)[:, :n] / n


def _ess(x: np.ndarray) -> float:
    x = np.asarray(x, dtype=float)
    if not np.isfinite(x).all():
        return float("nan")
    if np.max(x) - np.min(x) < np.finfo(float).resolution:
        return float(x.size)
    chains, n = x.shape
    acov = _autocov(x)
    mean_var = np.mean(acov[:, 0]) * n / (n - 1.0)
    var_plus = mean_var * (n - 1.0) / n
    if chains > 1:
        var_plus += np.var(x.mean(axis=1), ddof=1)
    rho = np.zeros(n)
    even, odd = 1.0, 1.0 - (mean_var - np.mean(acov[:, 1])) / var_plus
    rho[0], rho[1] = even, odd
    t = 1
    while t < n - 3 and even + odd > 0.0:  # Geyer's initial positive sequence
        even = 1.0 - (mean_var - np.mean(acov[:, t + 1])) / var_plus
        odd = 1.0 - (mean_var - np.mean(acov[:, t + 2])) / var_plus
        if even + odd >= 0:
            rho[t + 1], rho[t + 2] = even, odd
        t += 2
    max_t = t - 2
    if even > 0:
        rho[max_t + 1] = even
    t = 1
    while t <= max_t - 2:  # ... made monotone
        if rho[t + 1] + rho[t + 2] > rho[t - 1] + rho[t]:
            rho[t + 1] = rho[t + 2] = (rho[t - 1] + rho[t]) / 2.0
        t += 2
    total = chains * n
    tau = -1.0 + 2.0 * np.sum(rho[: max_t + 1]) + np.sum(rho[max_t + 1: max_t + 2])
    tau = max(tau, 1.0 / np.log10(total))
    return float("nan") if np.isnan(rho).any() else float(total / tau)


def rhat(x: np.ndarray) -> float:
    """Rank-normalised split R-hat of draws shaped (chain, draw); NaN below 2 chains or 4 draws."""
    x = np.asarray(x, dtype=float)
    if not _valid(x, min_chains=2):
        return float("nan")
    split = _split(x)
    return _rank_rhat(split, _z_scale(split))


def _rank_rhat(split: np.ndarray, z: np.ndarray) -> float:
    """The rank R-hat of split chains ``split`` whose rank-normalised values are ``z``: the larger of the bulk one
    and the folded one (of |split - median|)."""
    return max(_rhat_plain(z), _rhat_plain(_z_scale(np.abs(split - np.median(split)))))


def ess_bulk(x: np.ndarray) -> float:
    """Bulk effective sample size (ESS of the rank-normalised split chains); NaN below 4 draws."""
    x = np.asarray(x, dtype=float)
    if not _valid(x):
        return float("nan")
    return _ess(_z_scale(_split(x)))


def ess_tail(x: np.ndarray) -> float:
    """Tail effective sample size: the smaller ESS of 1{x ≤ q5} and 1{x ≤ q95}; NaN below 4 draws."""
    x = np.asarray(x, dtype=float)
    if not _valid(x):
        return float("nan")
    return min(_ess(_split((x <= np.quantile(x, p)).astype(float))) for p in (0.05, 0.95))


def ess_mean(x: np.ndarray) -> float:
    """Effective sample size of the mean (ESS of the split chains, not rank-normalised); NaN below 4 draws."""
    x = np.asarray(x, dtype=float)
    if not _valid(x):
        return float("nan")
    return _ess(_split(x))


def mcse_mean(x: np.ndarray) -> float:
    """Monte Carlo standard error of the mean of draws shaped (chain, draw): sd / sqrt(ESS of the mean), as
    ArviZ's ``mcse(method="mean")``; NaN below 4 draws."""
    x = np.asarray(x, dtype=float)
    if not _valid(x):
        return float("nan")
    return float(np.std(x, ddof=1) / np.sqrt(ess_mean(x)))


def ess_quantile(x: np.ndarray, prob: float) -> float:
    """Effective sample size of the quantile ``prob`` (the ESS of the split indicator 1{x <= q_prob}), as ArviZ's
    ``ess(method="quantile")``; NaN below 4 draws."""
    x = np.asarray(x, dtype=float)
    if not _valid(x):
        return float("nan")
    return _ess(_split((x <= np.quantile(x, prob)).astype(float)))


def diagnose(x: np.ndarray, quantiles: tuple[float, float] | None = None,
             ordered: np.ndarray | None = None) -> dict[str, float]:
    """``r_hat``, ``ess_bulk``, ``ess_tail``, ``mcse_mean``, ``mcse_q5`` and ``mcse_q95`` of draws shaped (chain,
    draw): what :func:`rhat`, :func:`ess_bulk`, :func:`ess_tail`, :func:`mcse_mean` and :func:`mcse_quantile` at 0.05
    and 0.95 give, each piece they share computed once (the split chains' ranks; the ESS of the indicators at q5 and
    q95, which are the tail ESS and the quantiles' own ESS). NaN where those give NaN (R-hat below 2 chains).
    ``quantiles`` (``np.quantile`` of ``x`` at 0.05 and 0.95) and ``ordered`` (``np.sort`` of ``x`` flattened): where
    the caller has them already (a summary's q5 and q95), the same numbers, not computed again."""
    x = np.asarray(x, dtype=float)
    out = dict.fromkeys(("r_hat", "ess_bulk", "ess_tail", "mcse_mean", "mcse_q5", "mcse_q95"), float("nan"))
    if not _valid(x):
        return out
    split = _split(x)
    z = _z_scale(split)
    if x.shape[0] >= 2:
        out["r_hat"] = _rank_rhat(split, z)
    out["ess_bulk"] = _ess(z)
    q = quantiles if quantiles is not None else [np.quantile(x, p) for p in (0.05, 0.95)]
    tails = [_ess(_split((x <= q_p).astype(float))) for q_p in q]
    out["ess_tail"] = min(tails)
    out["mcse_mean"] = float(np.std(x, ddof=1) / np.sqrt(_ess(split)))
    out["mcse_q5"], out["mcse_q95"] = (mcse_quantile(x, p, ess=s, ordered=ordered) for p, s in zip((0.05, 0.95), tails))
    return out


def mcse_quantile(x: np.ndarray, prob: float, ess: float | None = None, ordered: np.ndarray | None = None) -> float:
    """Monte Carlo standard error of the quantile ``prob`` of draws shaped (chain, draw) (module docstring), as
    ArviZ's ``mcse(method="quantile", prob=prob)``; ``ess``: that quantile's effective sample size where it is known
    otherwise (independent draws: their number); ``ordered``: ``np.sort`` of ``x`` flattened, where the caller has it.
    NaN below 4 draws."""
    x = np.asarray(x, dtype=float)
    if not _valid(x):
        return float("nan")
    s_p = ess_quantile(x, prob) if ess is None else float(ess)
    with np.errstate(invalid="ignore"):
        a, b = stats.beta.ppf([0.1586553, 0.8413447], s_p * prob + 1.0, s_p * (1.0 - prob) + 1.0)
    ordered = np.sort(x.ravel()) if ordered is None else ordered
    size = ordered.size
    lo = ordered[int(np.floor(np.nanmax((a * size - 1.0, 0.0))))]
    hi = ordered[int(np.ceil(np.nanmin((b * size - 1.0, size - 1.0))))]
    return float((hi - lo) / 2.0)
