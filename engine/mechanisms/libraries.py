"""Releases as people make them: an OpenDP or diffprivlib call mapped to the exact noise law here.

Each library has its own conventions; the mapping (which law, which scale, which sensitivity) lives in
this one table and tests/test_interop.py draws from the real libraries to prove every row.

===========================================  ==========================================================
library call                                 noise law here
===========================================  ==========================================================
OpenDP ``make_laplace``, int domain          discrete Laplace, t = scale (pmf ∝ exp(-|k|/scale))
OpenDP ``make_laplace``, float domain        Laplace, b = scale; with ``k``: the statistic rounded to
                                             g = 2^k and discrete Laplace noise on g Z (lattice.py)
OpenDP ``make_gaussian``, int domain         discrete Gaussian, sigma = scale
OpenDP ``make_gaussian``, float domain       Gaussian, sigma = scale; with ``k`` on g Z
OpenDP polars ``dp.mean((lo, hi))``         r = (clamped sum + Laplace b) / max(n + discrete Laplace
(dp-wizard's mean), ``mean``                 t, 0): one number, n private (ratio.py); b, t = the
                                             Sum and Length scales of ``summarize()``
diffprivlib ``Laplace``                      Laplace, b = Delta / (epsilon - log(1 - delta))
diffprivlib ``LaplaceTruncated``             that Laplace, release clipped to [lower, upper]
diffprivlib ``LaplaceBoundedDomain``         Laplace renormalised on [lower, upper], b from the
                                             library's own fixed point (Holohan et al. 2020)
diffprivlib ``Geometric``                    discrete Laplace (two-sided geometric), t = Delta / epsilon
diffprivlib ``GeometricTruncated``           that, clipped to [lower, upper]
diffprivlib ``Gaussian`` (classic)           Gaussian, sigma = sqrt(2 ln(1.25 / delta)) Delta / epsilon
diffprivlib ``GaussianAnalytic``             Gaussian, sigma by the library's analytic calibration
diffprivlib ``GaussianDiscrete``             discrete Gaussian, sigma by the library's own calibration
diffprivlib ``Binary``                       randomized response, P(truth) = e^eps / (1 + e^eps)
===========================================  ==========================================================

Any additive release also takes ``clip = [lower, upper]`` (either side open: TOML ``inf`` / ``-inf``):
OpenDP's dataframe counts, which cannot go below 0, are ``clip = [0, inf]``.

Guarantees are stated under each library's neighbouring notion. OpenDP: add/remove-one (the symmetric
distance) by default, so a count has sensitivity 1 and a sum of values clamped to [lo, hi] has
max(|lo|, |hi|) (the lab's own default for a known n is replace-one, hi - lo); its Laplace gives
epsilon = Delta / scale, its Gaussian rho = Delta^2 / (2 scale^2) zCDP. diffprivlib's mechanisms take
the sensitivity you pass and state (epsilon, delta) for it; they fix no neighbouring notion.

:func:`release_from` maps one call; :func:`release_options` lists each library's mechanisms with their
parameter names, defaults and allowed ranges (for a form); :func:`make_release` builds the mechanism
of a spec's ``[release]`` table.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace as _replace
from typing import Any, Mapping

import numpy as np

from ..core.validation import choice, fail, positive
from .additive import DiscreteGaussian, DiscreteLaplace, Gaussian, Laplace
from .budgets import check_scale
from .clipped import BoundedLaplace, Clipped, clip_bounds
from .lattice import LatticeGaussian, LatticeLaplace
from .randomized_response import RandomizedResponse, k_ary_log_transition
from .ratio import OpenDPMean

__all__ = ["LibraryRelease", "release_from", "release_options", "make_release", "LIBRARIES", "RATIO_RELEASES",
           "StatedGaussian",
           "StatedDiscreteGaussian",
           "describe_release", "diffprivlib_analytic_sigma", "diffprivlib_discrete_sigma", "diffprivlib_bounded_scale"]

_REQ = object()  # a parameter without a default
_INF = math.inf

# library -> mechanism -> parameter -> (default, allowed); "allowed" is what a form shows and the check says
LIBRARIES: dict[str, dict[str, dict[str, tuple[Any, str]]]] = {
    "opendp": {
        "laplace": {"domain": (_REQ, "int or float"), "scale": (_REQ, "> 0"),
                    "k": (None, "integer (float domain only): noise granularity 2^k"),
                    "sensitivity": (None, "> 0 (the d_in of the privacy map; default: the model's, add/remove-one)"),
                    "clip": (None, "[lower, upper], either side inf")},
        "gaussian": {"domain": (_REQ, "int or float"), "scale": (_REQ, "> 0"),
                     "k": (None, "integer (float domain only): noise granularity 2^k"),
                     "sensitivity": (None, "> 0 (L2 d_in; default: the model's, add/remove-one)"),
                     "clip": (None, "[lower, upper], either side inf")},
    },
    "diffprivlib": {
        "Laplace": {"epsilon": (_REQ, "> 0"), "delta": (0.0, "[0, 1)"), "sensitivity": (_REQ, "> 0"),
                    "clip": (None, "[lower, upper], either side inf")},
        "LaplaceTruncated": {"epsilon": (_REQ, "> 0"), "delta": (0.0, "[0, 1)"), "sensitivity": (_REQ, "> 0"),
                             "lower": (_REQ, "number < upper"), "upper": (_REQ, "number > lower")},
        "LaplaceBoundedDomain": {"epsilon": (_REQ, "> 0"), "delta": (0.0, "[0, 1)"), "sensitivity": (_REQ, "> 0"),
                                 "lower": (_REQ, "finite number < upper"), "upper": (_REQ, "finite number > lower")},
        "Geometric": {"epsilon": (_REQ, "> 0"), "sensitivity": (1, "whole number >= 1"),
                      "clip": (None, "[lower, upper], either side inf")},
        "GeometricTruncated": {"epsilon": (_REQ, "> 0"), "sensitivity": (1, "whole number >= 1"),
                               "lower": (_REQ, "whole number < upper"), "upper": (_REQ, "whole number > lower")},
        "Gaussian": {"epsilon": (_REQ, "in (0, 1]"), "delta": (_REQ, "in (0, 1)"), "sensitivity": (_REQ, "> 0"),
                     "clip": (None, "[lower, upper], either side inf")},
        "GaussianAnalytic": {"epsilon": (_REQ, "> 0"), "delta": (_REQ, "in (0, 1)"), "sensitivity": (_REQ, "> 0"),
                             "clip": (None, "[lower, upper], either side inf")},
        "GaussianDiscrete": {"epsilon": (_REQ, "> 0"), "delta": (_REQ, "in (0, 1)"),
                             "sensitivity": (1, "whole number >= 1"), "clip": (None, "[lower, upper], either side inf")},
        "Binary": {"epsilon": (_REQ, "> 0"), "value0": ("0", "label of category 0"),
                   "value1": ("1", "label of category 1")},
    },
}


#: Releases whose law involves n itself (OpenDP's mean, sum / length: :mod:`.ratio`), analysed by pseudo_marginal
#: only; kept out of :func:`release_options` (the app's additive-release form) but mapped by the same calls.
RATIO_RELEASES: dict[str, dict[str, dict[str, tuple[Any, str]]]] = {
    "opendp": {"mean": {"sum_scale": (_REQ, "> 0 (summarize()'s Sum scale)"),
                        "length_scale": (_REQ, "> 0 (summarize()'s Length scale)"),
                        "bounds": (None, "[lower, upper] of dp.mean (default: the model's lo and hi)"),
                        "contributions": (1, "whole number >= 1 (rows per individual: the guarantee only)")}},
}


def _mechanisms(library: str) -> dict:
    return {**LIBRARIES[library], **RATIO_RELEASES.get(library, {})}


@dataclass(frozen=True)
class LibraryRelease:
    """One library call mapped: ``noise`` is the engine mechanism (the exact law of the release)."""

    library: str
    mechanism: str
    params: Mapping[str, Any]
    noise: Any
    sentence: str
    guarantee: Mapping[str, Any]
    neighbouring: str
    warnings: tuple[str, ...] = field(default=())


class _Stated:
    """The guarantee a library states for its noise, (epsilon, delta)-DP at the sensitivity given, which is what
    the user made; ``rho`` travels too: it is the same noise's zCDP, for the trade-off curves. Mixed into a noise
    law whose ``describe`` names the noise ``_noise``."""

    _noise = "noise"

    @property
    def guarantee(self) -> dict:
        return {"kind": "approx", "epsilon": self.epsilon_stated, "delta": self.delta_stated,
                "rho": self.sensitivity**2 / (2.0 * self.scale**2)}

    def describe(self) -> str:
        return (f"{self._noise}, sigma = {self.scale:.4g}; ({_fmt(self.epsilon_stated)}, {_fmt(self.delta_stated)})"
                f"-DP as {self.label} states it (L2 sensitivity {self.sensitivity:g})")


@dataclass(frozen=True)
class StatedGaussian(_Stated, Gaussian):
    """A diffprivlib Gaussian (``Gaussian`` or ``GaussianAnalytic``): the Gaussian noise law with the guarantee the
    library states for it (:class:`_Stated`; the lab's own Gaussian would state the analytic (epsilon, delta) of
    sigma, or rho-zCDP)."""

    epsilon_stated: float = 1.0
    delta_stated: float = 0.0
    label: str = "diffprivlib Gaussian"
    _noise = "Gaussian noise"


@dataclass(frozen=True)
class StatedDiscreteGaussian(_Stated, DiscreteGaussian):
    """diffprivlib's ``GaussianDiscrete``: the discrete Gaussian noise law with the (epsilon, delta) the library
    states (:class:`_Stated`)."""

    epsilon_stated: float = 1.0
    delta_stated: float = 0.0
    label: str = "diffprivlib GaussianDiscrete"
    _noise = "discrete Gaussian noise"


def release_options() -> dict:
    """Every library's mechanisms with their parameter names, defaults (None: optional, "required") and
    allowed ranges, as plain data for a form (OpenDP's ``mean``, the ratio of :data:`RATIO_RELEASES`, included)."""
    return {lib: {mech: {p: {"default": "required" if d is _REQ else d, "allowed": a} for p, (d, a) in params.items()}
                  for mech, params in _mechanisms(lib).items()} for lib in LIBRARIES}


# --- diffprivlib's own calibrations, line for line (diffprivlib 0.6.6, mechanisms/gaussian.py, laplace.py) ---

def _phi(v: float) -> float:
    return (1.0 + math.erf(v / math.sqrt(2.0))) / 2.0


def diffprivlib_analytic_sigma(epsilon: float, delta: float, sensitivity: float) -> float:
    """sigma of diffprivlib's ``GaussianAnalytic`` (Balle & Wang 2018, Alg. 1): the root of B+ or B- by
    doubling then bisection, then sigma = alpha Delta / sqrt(2 epsilon) with
    alpha = sqrt(1 + v/4) -+ sqrt(v/4), as the library computes it."""
    def b_plus(v):
        return _phi(math.sqrt(epsilon * v)) - math.exp(epsilon) * _phi(-math.sqrt(epsilon * (v + 2))) - delta

    def b_minus(v):
        return _phi(-math.sqrt(epsilon * v)) - math.exp(epsilon) * _phi(-math.sqrt(epsilon * (v + 2))) - delta

    delta_0 = b_plus(0)
    f = b_plus if delta_0 < 0 else b_minus
    left, right = 0.0, 1.0
    while f(left) * f(right) > 0:
        left, right = right, right * 2
    old = (right - left) * 2
    while old > right - left:
        old = right - left
        middle = (right + left) / 2
        if f(middle) * f(left) <= 0:
            right = middle
        if f(middle) * f(right) <= 0:
            left = middle
    alpha = math.sqrt(1 + (left + right) / 4) + (-1 if delta_0 < 0 else 1) * math.sqrt((left + right) / 4)
    return alpha * sensitivity / math.sqrt(2 * epsilon)


def diffprivlib_discrete_sigma(epsilon: float, delta: float, sensitivity: int) -> float:
    """sigma of diffprivlib's ``GaussianDiscrete``: the root of its privacy-loss objective for the discrete
    Gaussian (Canonne, Kamath & Steinke 2020, Thm. 7) by doubling then bisection to rtol 1e-6."""
    def objective(sigma):
        idx_0 = int(np.floor(epsilon * sigma**2 / sensitivity - sensitivity / 2))
        idx_1 = int(np.floor(epsilon * sigma**2 / sensitivity + sensitivity / 2))
        idx = 1
        lhs, rhs, denom = float(idx_0 < 0), 0.0, 1.0
        term, diff = 1.0, 1.0
        while term > 0 and diff > 0:
            term = math.exp(-idx**2 / 2 / sigma**2)
            if idx > idx_0:
                lhs += term
                if idx_0 < -idx:
                    lhs += term
                if idx > idx_1:
                    diff = -rhs
                    rhs += term
                    diff += rhs
            denom += 2 * term
            idx += 1
            if idx > 1e6:
                fail("release.epsilon", epsilon, "with this delta gives a sum that does not converge (diffprivlib "
                     "refuses it too)")
        return (lhs - math.exp(epsilon) * rhs) / denom - delta

    g0 = 1.0
    f0 = objective(g0)
    pwr = 1 if f0 > 0 else -1
    g1 = 2.0**pwr
    f1 = objective(g1)
    while f0 * f1 > 0:
        g0 *= 2.0**pwr
        g1 *= 2.0**pwr
        f0 = f1
        f1 = objective(g1)
    while not np.isclose(g0, g1, atol=1e-12, rtol=1e-6):
        mid = (g0 + g1) / 2
        fm = objective(mid)
        if fm * f0 <= 0:
            f1, g1 = fm, mid
        if fm * f1 <= 0:
            f0, g0 = fm, mid
    return (g0 + g1) / 2


def diffprivlib_bounded_scale(epsilon: float, delta: float, sensitivity: float, lower: float, upper: float) -> float:
    """b of diffprivlib's ``LaplaceBoundedDomain``: the fixed point b = Delta / (epsilon - log dC(b) -
    log(1 - delta)), dC(b) = (2 - e^(-Delta/b) - e^(-(D - Delta)/b)) / (1 - e^(-D/b)), D = upper - lower
    (Holohan et al. 2020, Thm. 4), by the library's bisection."""
    diam = upper - lower

    def f(b):
        dc = (2 - math.exp(-sensitivity / b) - math.exp(-(diam - sensitivity) / b)) / (1 - math.exp(-diam / b))
        return sensitivity / (epsilon - math.log(dc) - math.log(1 - delta))

    left = sensitivity / (epsilon - math.log(1 - delta))
    right = f(left)
    old = (right - left) * 2
    while old > right - left:
        old = right - left
        middle = (right + left) / 2
        if f(middle) >= middle:
            left = middle
        if f(middle) <= middle:
            right = middle
    return (right + left) / 2


# --- the mapping ---

def _num(field_: str, params, key, default=_REQ) -> float:
    v = params.get(key, default)
    if v is _REQ:
        fail(f"{field_}.{key}", None, "is required")
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        fail(f"{field_}.{key}", v, "must be a finite number")
    return float(v)


def _whole(field_: str, params, key, default=_REQ, library: str = "diffprivlib") -> int:
    v = _num(field_, params, key, default)
    if not v.is_integer() or v < 1:
        fail(f"{field_}.{key}", params.get(key, default),
             f"must be a whole number >= 1 ({library} requires an integer)")
    return int(v)


def _delta(field_: str, params, required: bool) -> float:
    d = _num(field_, params, "delta", _REQ if required else 0.0)
    if required and not 0.0 < d < 1.0:
        fail(f"{field_}.delta", params.get("delta"), "must be in (0, 1)")
    if not 0.0 <= d < 1.0:
        fail(f"{field_}.delta", params.get("delta"), "must be in [0, 1)")
    return d


def _bounds(field_: str, params, whole: bool = False, finite: bool = False) -> tuple[float, float]:
    """diffprivlib's ``lower`` and ``upper`` (both required), lower < upper."""
    for key in ("lower", "upper"):
        if key not in params:
            fail(f"{field_}.{key}", None, "is required")
    try:  # one check of the pair, reported on the field that is at fault with the value typed there
        lo, hi = clip_bounds(f"{field_}.lower", [params["lower"], params["upper"]])
    except ValueError:
        for key in ("lower", "upper"):
            v = params[key]
            if isinstance(v, bool) or not isinstance(v, (int, float)) or math.isnan(v):
                fail(f"{field_}.{key}", v, "must be a number (inf or -inf for an open side)")
        fail(f"{field_}.upper", params["upper"], f"must be greater than {field_}.lower = {params['lower']!r}")
    for key, v in (("lower", lo), ("upper", hi)):
        if finite and not math.isfinite(v):
            fail(f"{field_}.{key}", params[key], "must be a finite number")
        if whole and math.isfinite(v) and not float(v).is_integer():
            fail(f"{field_}.{key}", params[key], "must be a whole number (diffprivlib requires an integer)")
    return lo, hi


def _fmt(v: float) -> str:
    """1, 0.5, 1e-5 (not 1e-05)."""
    return f"{v:g}".replace("e-0", "e-").replace("e+0", "e+")


def _opendp_mean(params: Mapping[str, Any], field_: str):
    """OpenDP's ``dp.mean((lower, upper))``: a noisy sum over a noisy length, released as their ratio
    (:mod:`engine.mechanisms.ratio`)."""
    b = positive(f"{field_}.sum_scale", params.get("sum_scale"))
    t = positive(f"{field_}.length_scale", params.get("length_scale"))
    if params.get("bounds") is None:
        fail(f"{field_}.bounds", None, "is required: [lower, upper], the bounds dp.mean clamps to")
    bounds = params["bounds"]
    if not isinstance(bounds, (list, tuple)) or len(bounds) != 2:
        fail(f"{field_}.bounds", bounds, "must be [lower, upper], two finite numbers with lower < upper")
    lo, hi = (_num(f"{field_}.bounds", {"b": v}, "b") for v in bounds)
    if not lo < hi:
        fail(f"{field_}.bounds", list(bounds), "must be [lower, upper] with lower < upper")
    c = _whole(field_, params, "contributions", 1, library="opendp")
    noise = OpenDPMean(sum_scale=b, length_scale=t, lower=lo, upper=hi, contributions=c)
    g = noise.guarantee
    head = f"OpenDP mean (dp.mean) on [{lo:g}, {hi:g}], sum scale = {_fmt(b)}, length scale = {_fmt(t)}"
    law = (f"r = (clamped sum + Laplace noise b = {b:.4g}) / max(n + discrete Laplace noise t = {t:.4g}, 0), one "
           "number (a length <= 0 gives ±inf), n private")
    gtxt = (f"{g['epsilon']:.4g}-DP ({g['epsilon_sum']:.4g} for the sum, sensitivity {noise.sensitivity:g}; "
            f"{g['epsilon_length']:.4g} for the length) under add/remove-one neighbours")
    return noise, head, law, {"kind": "pure", "epsilon": g["epsilon"]}, gtxt


def _opendp(mechanism: str, params: Mapping[str, Any], default_sensitivity: float | None, field_: str,
            replace_sensitivity: float | None = None):
    if mechanism == "mean":
        return _opendp_mean(params, field_)
    domain = choice(f"{field_}.domain", params.get("domain"), ("int", "float"))
    scale = positive(f"{field_}.scale", params.get("scale"))
    g = None
    if "k" in params and params["k"] is not None:
        k = params["k"]
        if isinstance(k, bool) or not isinstance(k, (int, float)) or not float(k).is_integer() or not -1074 <= k <= 1023:
            fail(f"{field_}.k", k, "must be a whole number (the granularity is 2^k)")
        if domain == "int":
            fail(f"{field_}.k", k, "is for the float domain only (int noise is on the integers)")
        g = 2.0 ** int(k)
    given = params.get("sensitivity")
    sens = given if given is not None else default_sensitivity
    sens = 1.0 if sens is None else positive(f"{field_}.sensitivity", sens)
    # where the sensitivity comes from, for the sentence: the one given, the model's add/remove-one default (the
    # one the analysis uses), or none known yet (the guarantee is then stated per unit of sensitivity)
    source = "given" if given is not None else ("model" if default_sensitivity is not None else "unit")
    if domain == "int" and not float(sens).is_integer():
        fail(f"{field_}.sensitivity", sens, "must be a whole number on the int domain")
    if mechanism == "laplace":
        if domain == "int":
            noise, law = DiscreteLaplace(scale=scale, sensitivity=sens), f"discrete Laplace noise, t = {scale:.4g}"
        elif g is None:
            noise, law = Laplace(scale=scale, sensitivity=sens), f"Laplace noise, b = {scale:.4g}"
        else:
            noise = LatticeLaplace(scale=scale, sensitivity=sens, granularity=g)
            law = f"the statistic rounded to {g:g} plus Laplace noise on {g:g} Z, scale {scale:.4g}"
        eps = noise.guarantee["epsilon"]
        guarantee = {"kind": "pure", "epsilon": eps}
        gtext = f"{eps:.4g}-DP" if source != "unit" else f"(Δ / {scale:.4g})-DP"
        formula = f"ε = Δ / scale = {sens:g}/{scale:g} = {eps:.4g}" if g is None else f"ε = {eps:.4g}"
    else:
        if domain == "int":
            noise, law = DiscreteGaussian(scale=scale, sensitivity=sens), f"discrete Gaussian noise, σ = {scale:.4g}"
        elif g is None:
            noise, law = Gaussian(scale=scale, sensitivity=sens), f"Gaussian noise, σ = {scale:.4g}"
        else:
            noise = LatticeGaussian(scale=scale, sensitivity=sens, granularity=g)
            law = f"the statistic rounded to {g:g} plus Gaussian noise on {g:g} Z, σ = {scale:.4g}"
        rho = noise.guarantee["rho"]
        guarantee = {"kind": "zcdp", "rho": rho}
        gtext = f"{rho:.4g}-zCDP" if source != "unit" else f"({1.0 / (2.0 * scale * scale):.4g} Δ²)-zCDP"
        formula = f"ρ = Δ² / (2 scale²) = {rho:.4g}" if g is None else f"ρ = {rho:.4g}"
    k_txt = f", k = {int(params['k'])}" if g is not None else ""
    head = f"OpenDP {mechanism} ({domain} domain), scale = {_fmt(scale)}{k_txt}"
    at = {"given": f"for sensitivity {sens:g}",
          # the sensitivity and the budget it gives, in numbers: "Δ = 1 here, so ε = 1/3", not the rule for any model
          "model": f"at Δ = {sens:g} here (the model's add/remove-one sensitivity, which the analysis uses), so "
                   f"{formula}",
          "unit": "at the model's add/remove-one sensitivity Δ, which the analysis uses (sensitivity left blank; Δ = "
                  "1 for a count or a histogram cell, max(|lo|, |hi|) for a sum of values clamped to [lo, hi])"}
    # adding or removing a person is what OpenDP states; with n known What it protects attacks one record replaced,
    # which may move the statistic by d > Δ (hi − lo for a sum): "1-DP at Δ = 3" beside its "ε = 2" read as a clash
    # with d known (the sidebar's replace-one Δ) the clause says the pair's budget in numbers, as What it protects
    # does (the mechanism's own formula at sensitivity d: eps d / Delta, (|d| + g) / b on a lattice, rho (d / Delta)^2);
    # none where d <= Delta (an unknown n's neighbours, or a count): the budget stated covers that pair too
    per = "(d/Δ)·ε-DP" if mechanism == "laplace" else "(d/Δ)²·ρ-zCDP"
    by = "d"
    if replace_sensitivity is not None:
        d = positive(f"{field_}.replace_sensitivity", replace_sensitivity)
        at_d = _replace(noise, sensitivity=d).guarantee
        per = f"{at_d['epsilon']:.4g}-DP" if mechanism == "laplace" else f"{at_d['rho']:.4g}-zCDP"
        by = f"d = {d:.4g} = {d / sens:.4g}Δ"
    replaced = (f" (adding or removing a person; with n known, replacing one, which moves the statistic by up to {by}, "
                f"is {per}, as What it protects states)") if source == "model" and (
        replace_sensitivity is None or replace_sensitivity > sens * (1.0 + 1e-9)) else ""
    guarantee_txt = (f"{gtext} {at[source]}" + (f" (+ granularity {g:g})" if g is not None else "")
                     + " under add/remove-one neighbours" + replaced)
    return noise, head, law, guarantee, guarantee_txt


def _diffprivlib(mechanism: str, params: Mapping[str, Any], field_: str):
    eps = positive(f"{field_}.epsilon", params.get("epsilon"))
    if mechanism in ("Laplace", "LaplaceTruncated", "LaplaceBoundedDomain"):
        delta = _delta(field_, params, required=False)
        sens = positive(f"{field_}.sensitivity", params.get("sensitivity"))
        b = sens / (eps - math.log1p(-delta)) if delta else sens / eps
        guarantee = {"kind": "approx" if delta else "pure", "epsilon": eps, "delta": delta}
        head = f"diffprivlib {mechanism}, ε = {_fmt(eps)}, δ = {_fmt(delta)}, Δ = {_fmt(sens)}"
        if mechanism == "LaplaceBoundedDomain":
            lo, hi = _bounds(field_, params, finite=True)
            if sens > hi - lo:
                fail(f"{field_}.sensitivity", sens, f"must be at most upper - lower = {hi - lo:g}")
            b = diffprivlib_bounded_scale(eps, delta, sens, lo, hi)
            noise = BoundedLaplace(scale=b, lower=lo, upper=hi, sensitivity=sens, epsilon_stated=eps, delta=delta)
            law = f"Laplace noise b = {b:.4g} renormalised on [{lo:g}, {hi:g}] (the normaliser depends on s)"
        else:
            noise = Laplace(scale=b, sensitivity=sens)
            law = f"Laplace noise, b = {b:.4g}" + (" = Δ / (ε − log(1 − δ))" if delta else "")
            if mechanism == "LaplaceTruncated":
                lo, hi = _bounds(field_, params)
                noise = Clipped(noise, lo, hi)
                law += f", clipped to [{lo:g}, {hi:g}] (point masses at the bounds)"
    elif mechanism in ("Geometric", "GeometricTruncated"):
        if "delta" in params:
            fail(f"{field_}.delta", params["delta"], f"is not a parameter of {mechanism} (pure ε-DP)")
        sens = _whole(field_, params, "sensitivity", 1)
        t = sens / eps
        noise = DiscreteLaplace(scale=t, sensitivity=sens)
        guarantee = {"kind": "pure", "epsilon": eps, "delta": 0.0}
        head = f"diffprivlib {mechanism}, ε = {_fmt(eps)}, Δ = {sens}"
        law = f"two-sided geometric (discrete Laplace) noise, t = Δ/ε = {t:.4g}"
        if mechanism == "GeometricTruncated":
            lo, hi = _bounds(field_, params, whole=True)
            noise = Clipped(noise, lo, hi)
            law += f", clipped to [{lo:g}, {hi:g}] (point masses at the bounds)"
    elif mechanism in ("Gaussian", "GaussianAnalytic"):
        delta = _delta(field_, params, required=True)
        sens = positive(f"{field_}.sensitivity", params.get("sensitivity"))
        if mechanism == "Gaussian":
            if eps > 1.0:
                fail(f"{field_}.epsilon", eps, "must be in (0, 1] for the classic Gaussian (diffprivlib refuses "
                     "epsilon > 1; use GaussianAnalytic)")
            sigma = math.sqrt(2.0 * math.log(1.25 / delta)) * sens / eps
            law = f"Gaussian noise σ = {sigma:.4g}"
            head = f"diffprivlib Gaussian (classic), ε = {_fmt(eps)}, δ = {_fmt(delta)}, Δ = {_fmt(sens)}"
        else:
            sigma = diffprivlib_analytic_sigma(eps, delta, sens)
            law = f"Gaussian noise σ = {sigma:.4g}"
            head = f"diffprivlib GaussianAnalytic, ε = {_fmt(eps)}, δ = {_fmt(delta)}, Δ = {_fmt(sens)}"
        noise = StatedGaussian(scale=sigma, sensitivity=sens, epsilon_stated=eps, delta_stated=delta,
                               label=f"diffprivlib {mechanism}")
        guarantee = {"kind": "approx", "epsilon": eps, "delta": delta}
    elif mechanism == "GaussianDiscrete":
        delta = _delta(field_, params, required=True)
        sens = _whole(field_, params, "sensitivity", 1)
        sigma = diffprivlib_discrete_sigma(eps, delta, sens)
        noise = StatedDiscreteGaussian(scale=sigma, sensitivity=sens, epsilon_stated=eps, delta_stated=delta)
        guarantee = {"kind": "approx", "epsilon": eps, "delta": delta}
        head = f"diffprivlib GaussianDiscrete, ε = {_fmt(eps)}, δ = {_fmt(delta)}, Δ = {sens}"
        law = f"discrete Gaussian noise σ = {sigma:.4g}"
    else:  # Binary
        for key in ("value0", "value1"):
            if key in params and not isinstance(params[key], str):
                fail(f"{field_}.{key}", params[key], "must be a label (a string), as diffprivlib requires")
        if ("value0" in params) != ("value1" in params):  # one label given, the other left to the engine's default
            key = "value1" if "value0" in params else "value0"
            fail(f"{field_}.{key}", None, "is required with the other label: give both value0 and value1 (diffprivlib "
                 "requires both) or neither (the labels \"0\" and \"1\")")
        if "value0" in params and params["value0"] == params["value1"]:
            fail(f"{field_}.value1", params["value1"], f"must differ from {field_}.value0 = {params['value0']!r}: the "
                 "two categories need two labels (diffprivlib refuses equal ones)")
        noise = RandomizedResponse(log_transition=k_ary_log_transition(eps, 2), scheme="k_ary")
        guarantee = {"kind": "pure", "epsilon": eps, "delta": 0.0}
        head = f"diffprivlib Binary, ε = {_fmt(eps)}"
        law = f"randomized response on each record, kept with probability e^ε/(1 + e^ε) = {math.exp(eps) / (1 + math.exp(eps)):.4g}"
    if guarantee.get("delta"):
        gtext = f"({_fmt(eps)}, {_fmt(guarantee['delta'])})-DP"
    else:
        gtext = f"{_fmt(eps)}-DP"
    guarantee_txt = gtext + (" for the sensitivity given (diffprivlib fixes no neighbouring notion)"
                             if mechanism != "Binary" else " per record (local)")
    return noise, head, law, guarantee, guarantee_txt


def _check_keys(library: str, mechanism: str, params: Mapping[str, Any], field_: str) -> None:
    table = _mechanisms(library)[mechanism]
    unknown = sorted(set(params) - set(table))
    if unknown:
        fail(f"{field_}.{unknown[0]}", params[unknown[0]], f"is not a parameter of {library} {mechanism}; allowed: "
             + ", ".join(table))


def _map(library: str, mechanism: str, params: Mapping[str, Any], default_sensitivity: float | None,
         field_: str = "release", replace_sensitivity: float | None = None):
    library = choice(f"{field_}.library", library, tuple(LIBRARIES))
    mechanism = choice(f"{field_}.mechanism", mechanism, tuple(_mechanisms(library)))
    _check_keys(library, mechanism, params, field_)
    given = {k: params[k] for k in ("epsilon", "delta", "scale", "sensitivity") if k in params}
    try:
        if library == "opendp":
            noise, head, law, guarantee, gtxt = _opendp(mechanism, params, default_sensitivity, field_,
                                                        replace_sensitivity)
        else:
            noise, head, law, guarantee, gtxt = _diffprivlib(mechanism, params, field_)
    except (OverflowError, ZeroDivisionError):  # a budget or scale past double precision (epsilon = 1e300)
        check_scale(field_, given, math.inf)
    scale = getattr(getattr(noise, "base", noise), "scale", None)
    if scale is not None:
        check_scale(field_, given, scale)
    if params.get("clip") is not None:
        lo, hi = clip_bounds(f"{field_}.clip", params["clip"])
        noise = Clipped(noise, lo, hi)
        law += f", clipped to [{lo:g}, {hi:g}] (point masses at the bounds)"
    return noise, head, law, guarantee, gtxt


def release_from(library: str, mechanism: str, *, default_sensitivity: float | None = None,
                 replace_sensitivity: float | None = None, **params) -> LibraryRelease:
    """Map a library call to the exact noise law of its release.

    ``library = "opendp"``: ``mechanism = "laplace" | "gaussian"``, ``domain = "int" | "float"``,
    OpenDP's ``scale``, optional ``k`` (granularity 2^k, float only), ``sensitivity`` (d_in, for the
    guarantee only) and ``clip``. ``library = "diffprivlib"``: ``mechanism`` is the class name and the
    parameters are the class's own (``epsilon``, ``delta``, ``sensitivity``, ``lower``, ``upper``).
    ``default_sensitivity``: the model's add/remove-one sensitivity, which an OpenDP release without
    ``sensitivity`` is analysed at (``engine.spec``); the sentence then states the guarantee at it, and without
    it (no model known) states it as a function of that sensitivity Δ rather than at Δ = 1.
    ``replace_sensitivity``: with ``default_sensitivity``, the model's replace-one Δ (what one record replaced moves
    the statistic by, n known), so the sentence states that pair's budget in numbers ("replacing one, which moves the
    statistic by up to d = 6 = 2Δ, is 2-DP"); without it the sentence gives the rule, ``(d/Δ)·ε-DP``.
    Returns a :class:`LibraryRelease` with the engine mechanism, the mapping in one sentence, the guarantee
    and warnings where the library's convention differs from the lab's default."""
    noise, head, law, guarantee, gtxt = _map(library, mechanism, params, default_sensitivity,
                                             replace_sensitivity=replace_sensitivity)
    warnings = []
    if library == "diffprivlib" and mechanism == "Gaussian":
        warnings.append("diffprivlib's Gaussian is the classic mechanism, σ = √(2 ln(1.25/δ))·Δ/ε; the lab's own "
                        "gaussian with epsilon and delta is the analytic Gaussian (smaller σ)")
    if library == "diffprivlib" and mechanism.startswith("Laplace") and params.get("delta"):
        warnings.append("diffprivlib's Laplace with δ > 0 uses b = Δ/(ε − log(1 − δ)), not Δ/ε")
    if isinstance(noise, (Clipped, BoundedLaplace)):
        warnings.append("the release is clipped or bounded: its law has point masses at the bounds or a "
                        "renormalised density; analysing it as plain noise would be wrong")
    if library == "opendp" and mechanism == "mean":
        warnings.append("OpenDP's mean releases one number, sum / length, both noisy: reading it as a noisy mean "
                        "(or as exact) ignores the length's noise and n's privacy; only the pseudo-marginal chain "
                        "on (μ, n) analyses it")
    elif library == "opendp":
        warnings.append("OpenDP's neighbours are add/remove-one: a sum of values in [lo, hi] has sensitivity "
                        "max(|lo|, |hi|), where the lab's default for a known n is hi − lo")
    sentence = f"{head} → {law}; {gtxt}."
    neighbouring = ("add/remove-one (symmetric distance)" if library == "opendp"
                    else "as implied by the sensitivity given")
    return LibraryRelease(library=library, mechanism=mechanism, params=dict(params), noise=noise, sentence=sentence,
                          guarantee=guarantee, neighbouring=neighbouring, warnings=tuple(warnings))


def make_release(table: Mapping[str, Any], *, default_sensitivity: float | None = None):
    """The mechanism of a spec's ``[release]`` table (``library``, ``mechanism`` and the library's own keys)."""
    params = {k: v for k, v in table.items() if k not in ("library", "mechanism")}
    if "library" not in table:
        fail("release.library", None, "is required: one of " + ", ".join(LIBRARIES))
    if "mechanism" not in table:
        fail("release.mechanism", None, "is required (opendp: laplace or gaussian; diffprivlib: the class name)")
    return _map(table["library"], table["mechanism"], params, default_sensitivity)[0]


def describe_release(table: Mapping[str, Any], default_sensitivity: float | None = None) -> str:
    """The mapping sentence of a ``[release]`` table."""
    noise, head, law, guarantee, gtxt = _map(table.get("library"), table.get("mechanism"),
                                             {k: v for k, v in table.items() if k not in ("library", "mechanism")},
                                             default_sensitivity)
    return f"{head} → {law}; {gtxt}."

