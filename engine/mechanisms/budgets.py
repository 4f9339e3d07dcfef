"""Noise scale and privacy budget, one function each way, and the analytic Gaussian mechanism.

laplace / discrete_laplace: b = t = Delta_1 / epsilon (pure epsilon-DP).
gaussian / discrete_gaussian: sigma = Delta_2 / sqrt(2 rho) (rho-zCDP); gaussian with (epsilon, delta):
the smallest sigma of the analytic Gaussian mechanism (Balle & Wang 2018, Theorem 8).
"""
from __future__ import annotations

import math

from scipy import optimize, special

from ..core.validation import fail, positive, probability_open

#: the noise scales (Laplace b, Gaussian sigma) the engine computes with: beyond them densities, tail sums and
#: tempered posteriors under- or overflow in double precision (epsilon = 1e300 divided by zero, sigma = 1e160
#: overflowed)
SCALE_RANGE = (1e-10, 1e12)


def check_scale(field: str, value, scale: float) -> None:
    """Refuse a noise scale outside :data:`SCALE_RANGE` (``inf`` or ``nan``: one past double precision), naming
    the field the user gave and its value."""
    if not SCALE_RANGE[0] <= scale <= SCALE_RANGE[1]:
        made = f"a noise scale of {scale:.3g}" if math.isfinite(scale) else \
            "a noise scale outside what double precision holds"
        fail(field, value, f"makes {made}; the engine computes with scales from {SCALE_RANGE[0]:g} (below: no noise "
             f"to speak of) to {SCALE_RANGE[1]:g} (above: no signal)")


__all__ = ["SCALE_RANGE", "check_scale", "scale_from_budget", "budget_from_scale", "analytic_gaussian_delta",
           "analytic_gaussian_sigma", "analytic_gaussian_epsilon"]


def analytic_gaussian_delta(epsilon: float, sigma: float, sensitivity: float) -> float:
    """delta(epsilon) of the Gaussian mechanism (Balle & Wang 2018, Theorem 8).

    delta = Phi(D/(2 sigma) - eps sigma/D) - exp(eps) Phi(-D/(2 sigma) - eps sigma/D),
    evaluated with ``log_ndtr`` so that large epsilon does not overflow.
    """
    a = sensitivity / (2.0 * sigma)
    c = epsilon * sigma / sensitivity
    first = special.ndtr(a - c)
    second = math.exp(epsilon + special.log_ndtr(-a - c))
    return max(first - second, 0.0)


def analytic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float) -> float:
    """Smallest sigma for which the Gaussian mechanism is (epsilon, delta)-DP (Balle & Wang 2018)."""

    def excess(log_sigma: float) -> float:
        return analytic_gaussian_delta(epsilon, math.exp(log_sigma), sensitivity) - delta

    lo, hi = math.log(sensitivity) - 30.0, math.log(sensitivity) + 30.0
    return math.exp(optimize.brentq(excess, lo, hi, xtol=1e-12, rtol=1e-12))


def analytic_gaussian_epsilon(sigma: float, delta: float, sensitivity: float) -> float:
    """Smallest epsilon with delta(epsilon) <= delta for a given sigma (inverse of the above)."""
    if analytic_gaussian_delta(0.0, sigma, sensitivity) <= delta:
        return 0.0

    def excess(eps: float) -> float:
        return analytic_gaussian_delta(eps, sigma, sensitivity) - delta

    hi = 1.0
    while excess(hi) > 0:
        hi *= 2.0
    return optimize.brentq(excess, 0.0, hi, xtol=1e-12, rtol=1e-12)


def scale_from_budget(name: str, sensitivity: float, epsilon=None, rho=None, delta=None) -> float:
    """Noise scale (b, t or sigma) that spends exactly the given budget.

    laplace / discrete_laplace: b = t = Delta / epsilon.
    gaussian / discrete_gaussian with rho: sigma = Delta / sqrt(2 rho).
    gaussian with (epsilon, delta): the analytic Gaussian mechanism's sigma.
    """
    sensitivity = positive("sensitivity", sensitivity)
    if name in ("laplace", "discrete_laplace"):
        for key, value in (("rho", rho), ("delta", delta)):  # a budget this noise does not spend is not ignored
            if value is not None:
                fail(key, value, f"{name} takes epsilon only; leave {key} out")
        return sensitivity / positive("epsilon", epsilon)
    if name in ("gaussian", "discrete_gaussian") and rho is not None and (epsilon is not None or delta is not None):
        fail("rho", rho, f"{name} takes one budget: rho, or epsilon with delta" if name == "gaussian" else
             f"{name} takes rho only; leave epsilon and delta out")
    if name in ("gaussian", "discrete_gaussian"):
        if rho is not None:
            return sensitivity / math.sqrt(2.0 * positive("rho", rho))
        if name == "discrete_gaussian" or epsilon is None or delta is None:
            fail("rho", rho, f"{name} needs rho > 0" + (" (or epsilon with delta)" if name == "gaussian" else ""))
        return analytic_gaussian_sigma(positive("epsilon", epsilon), probability_open("delta", delta), sensitivity)
    fail("mechanism.name", name, "has no noise scale: must be one of laplace, discrete_laplace, gaussian, "
         "discrete_gaussian")


def budget_from_scale(name: str, sensitivity: float, scale: float, delta=None) -> dict:
    """The budget a noise scale implies: {'epsilon': ..} or {'rho': .., ['epsilon', 'delta']}."""
    sensitivity, scale = positive("sensitivity", sensitivity), positive("scale", scale)
    if delta is not None:
        delta = probability_open("delta", delta)
    if name in ("laplace", "discrete_laplace"):
        return {"epsilon": sensitivity / scale}
    if name in ("gaussian", "discrete_gaussian"):
        out = {"rho": sensitivity**2 / (2.0 * scale**2)}
        if name == "gaussian" and delta is not None:
            out["epsilon"] = analytic_gaussian_epsilon(scale, delta, sensitivity)
            out["delta"] = delta
        return out
    fail("mechanism.name", name, "has no noise scale: must be one of laplace, discrete_laplace, gaussian, "
         "discrete_gaussian")
