"""Privacy mechanisms: frozen records that know their noise distribution and their guarantee.

Additive mechanisms release ``s_dp = s + u`` (Laplace, discrete Laplace, Gaussian, discrete Gaussian
noise); randomized response reports each record through a noisy channel. Conversions between noise
scale and budget are one function each way (:func:`scale_from_budget`, :func:`budget_from_scale`);
:func:`make_mechanism` accepts either.

=============================  ==========================================================
module                         holds
=============================  ==========================================================
:mod:`.additive`               the four additive noise laws, their scales and guarantees
:mod:`.randomized_response`    per-record randomized response (k-ary and coin schemes)
:mod:`.budgets`                noise scale <-> budget, the analytic Gaussian mechanism
:mod:`.release`                the release itself: records in, s_dp out
:mod:`.clipped`                clipped releases (point masses at the bounds), diffprivlib's bounded domain
:mod:`.lattice`                OpenDP's float noise on a granularity 2^k
:mod:`.libraries`              OpenDP / diffprivlib calls mapped to these laws (``release_from``)
this module                    the registry: names, :func:`make_mechanism`, release checks
=============================  ==========================================================
"""
from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np

from ..core.validation import choice, fail, instance, positive, positive_int, probability_open
from .additive import (ABS_KERNEL, SQUARE_KERNEL, DiscreteGaussian, DiscreteLaplace, Gaussian, Laplace,
                       discrete_gaussian_log_normalizer, discrete_laplace_log_pmf, sample_discrete_gaussian,
                       sample_discrete_laplace, whole_root)
from .budgets import (analytic_gaussian_epsilon, analytic_gaussian_sigma, budget_from_scale, check_scale,
                      scale_from_budget)
from .randomized_response import MAX_RR_TABLE_N, RandomizedResponse, coin_log_transition, k_ary_log_transition

__all__ = [
    "Laplace",
    "Gaussian",
    "DiscreteLaplace",
    "DiscreteGaussian",
    "RandomizedResponse",
    "MECHANISM_NAMES",
    "make_mechanism",
    "check_release_value",
    "scale_from_budget",
    "budget_from_scale",
    "analytic_gaussian_sigma",
    "analytic_gaussian_epsilon",
    "discrete_laplace_log_pmf",
    "discrete_gaussian_log_normalizer",
    "sample_discrete_laplace",
    "sample_discrete_gaussian",
    "MAX_RR_TABLE_N",
    "ABS_KERNEL",
    "SQUARE_KERNEL",
]

MECHANISM_NAMES = ("laplace", "gaussian", "discrete_laplace", "discrete_gaussian", "randomized_response")

_ADDITIVE = {"laplace": Laplace, "gaussian": Gaussian, "discrete_laplace": DiscreteLaplace,
             "discrete_gaussian": DiscreteGaussian}


_KNOWN_KEYS = {
    "laplace": {"scale", "epsilon", "sensitivity"},
    "discrete_laplace": {"scale", "epsilon", "sensitivity"},
    "gaussian": {"sigma", "rho", "epsilon", "delta", "sensitivity"},
    "discrete_gaussian": {"sigma", "rho", "sensitivity"},
    "randomized_response": {"epsilon", "scheme", "truth_prob", "k"},
}


def make_mechanism(name: str, params: Mapping[str, Any] | None = None, *, default_sensitivity: float = 1.0,
                   k: int = 2, integer_sensitivity: bool = False, statistic_entries: int = 1):
    """Build a mechanism from its spec table (``[mechanism]`` without ``name``).

    Noise is given either directly (``scale`` for laplace/discrete_laplace, ``sigma`` for
    gaussian/discrete_gaussian) or by budget: ``epsilon`` (laplace, discrete_laplace),
    ``rho`` (gaussian, discrete_gaussian) or ``epsilon`` + ``delta`` (gaussian), with
    ``sensitivity`` defaulting to the model's. Randomized response takes ``epsilon`` (k-ary) or
    ``scheme = "coin"`` with ``truth_prob`` (default 0.5); ``k`` comes from the model.

    ``integer_sensitivity`` (an integer statistic, ``statistic_entries`` numbers): discrete noise then moves
    between whole-number statistics, so two neighbours' statistics differ by a whole-number vector ``d``. Its
    L1 norm (discrete Laplace's sensitivity), and on a one-number statistic any norm, is a whole number; its L2
    norm (discrete Gaussian's) is the square root of a whole number (``sqrt(2)``: one count down, another up).
    Any other ``sensitivity`` names a move no record can make: 1.5 for counts made the risk pair 0 against 1.5
    and the stated eps = 1.5 / t belong to no two datasets, so it is refused (say 1 with the eps it gives).
    """
    if params is not None:
        instance("params", params, Mapping, 'must be the mechanism\'s spec table (a dict) or None, e.g. '
                 '{"epsilon": 1.0}')
    params = dict(params or {})
    choice("mechanism.name", name, MECHANISM_NAMES)
    unknown = set(params) - _KNOWN_KEYS[name] - {"name"}
    if unknown:
        fail(f"mechanism.{sorted(unknown)[0]}", params[sorted(unknown)[0]],
             f"is not a key of {name}; allowed keys: " + ", ".join(sorted(_KNOWN_KEYS[name])))
    if name == "randomized_response":  # k comes from the model: two categories, or a histogram's 2 to 64 cells
        return _make_rr(params, positive_int("k", k, 2, 64))
    positive_int("k", k, 2)  # the model's number of categories (unused by additive noise, but not any number)

    sens = positive("mechanism.sensitivity", params.get("sensitivity", default_sensitivity))
    if integer_sensitivity and name in ("discrete_laplace", "discrete_gaussian"):
        _check_whole_shift(name, sens, statistic_entries)
    scale_key = "scale" if name in ("laplace", "discrete_laplace") else "sigma"
    given = [key for key in (scale_key, "epsilon", "rho") if key in params]
    if len(given) != 1:
        budgets = {"laplace": "epsilon", "discrete_laplace": "epsilon",
                   "gaussian": "rho, or epsilon with delta", "discrete_gaussian": "rho"}[name]
        fail("mechanism", {k_: params[k_] for k_ in given} or params,
             f"{name} needs exactly one of {scale_key} (noise scale) or {budgets} (budget)")
    delta = None
    if "delta" in params:
        delta = probability_open("mechanism.delta", params["delta"])
    if scale_key in params:
        scale = positive(f"mechanism.{scale_key}", params[scale_key])
    elif "epsilon" in params:
        eps = positive("mechanism.epsilon", params["epsilon"])
        if name == "gaussian":
            if delta is None:
                fail("mechanism.delta", None, "gaussian with epsilon needs delta in (0, 1); or give rho")
            scale = analytic_gaussian_sigma(eps, delta, sens)
        elif name == "discrete_gaussian":
            fail("mechanism.epsilon", params["epsilon"], "discrete_gaussian takes rho or sigma")
        else:
            scale = sens / eps
    else:
        if name not in ("gaussian", "discrete_gaussian"):
            fail("mechanism.rho", params["rho"], f"{name} takes epsilon or scale")
        rho = positive("mechanism.rho", params["rho"])
        scale = sens / math.sqrt(2.0 * rho)
    if not math.isfinite(scale) or scale <= 0:
        fail(f"mechanism.{scale_key}", scale, "the budget implies a noise scale that is not a positive finite number")
    field, value = f"mechanism.{given[0]}", params[given[0]]  # the field the user gave, and the scale it makes
    if given[0] != scale_key and "sensitivity" in params and abs(math.log10(sens)) > abs(math.log10(
            float(params[given[0]]))):  # scale = sensitivity / budget: blame the factor further from 1
        field, value = "mechanism.sensitivity", params["sensitivity"]
    check_scale(field, value, scale)
    if name == "gaussian":
        return Gaussian(scale=scale, sensitivity=sens, delta=delta)
    if delta is not None:
        fail("mechanism.delta", delta, f"{name} does not use delta")
    return _ADDITIVE[name](scale=scale, sensitivity=sens)


def _make_rr(params: dict, k: int) -> RandomizedResponse:
    scheme = params.get("scheme", "coin" if "truth_prob" in params else "k_ary")
    if scheme not in ("k_ary", "coin"):
        fail("mechanism.scheme", scheme, "must be one of k_ary, coin")
    if "k" in params and positive_int("mechanism.k", params["k"], 2) != k:
        fail("mechanism.k", params["k"], f"must equal the model's number of categories ({k})")
    if scheme == "coin":
        if "epsilon" in params:
            fail("mechanism.epsilon", params["epsilon"], "the coin scheme's budget follows from truth_prob; give one of them")
        tp = probability_open("mechanism.truth_prob", params.get("truth_prob", 0.5))
        return RandomizedResponse(log_transition=coin_log_transition(tp, k), scheme="coin")
    if "truth_prob" in params:  # the k-ary scheme's truth probability follows from epsilon
        fail("mechanism.truth_prob", params["truth_prob"], "is the coin scheme's; the k_ary scheme's follows from "
             "epsilon (give scheme = \"coin\" with truth_prob, or k_ary with epsilon)")
    if "epsilon" not in params:
        fail("mechanism.epsilon", None, "randomized_response needs epsilon > 0 (or scheme = \"coin\")")
    eps = positive("mechanism.epsilon", params["epsilon"])
    return RandomizedResponse(log_transition=k_ary_log_transition(eps, k), scheme="k_ary")


#: why a discrete mechanism's release is a whole number, as the error of a release with fractions says it (a
#: library's release maps to these laws too: OpenDP's int domain, diffprivlib's Geometric and Binary), in words, not
#: by the mechanism's spec key
_CONTINUOUS = "(a release with fractions was made with continuous noise: Laplace, or OpenDP's float domain)"
_WHOLE_NUMBERS = {
    "discrete_laplace": f"discrete Laplace noise on a whole-number statistic gives whole numbers {_CONTINUOUS}",
    "discrete_gaussian": f"discrete Gaussian noise on a whole-number statistic gives whole numbers {_CONTINUOUS}",
    "randomized_response": "randomized response releases counts of the answers it reports"}


def check_release_value(mech, s_dp: np.ndarray, field: str = "data.s_dp") -> None:
    """Discrete mechanisms release integers: s_dp must be whole numbers."""
    if getattr(mech, "discrete", False) and not np.all(np.equal(np.round(s_dp), s_dp)):
        name = getattr(getattr(mech, "base", mech), "name", "")
        why = _WHOLE_NUMBERS.get(name, f"this release's integer noise gives whole numbers {_CONTINUOUS}")
        fail(field, s_dp.tolist(), f"must be whole numbers (integers): {why}")
    g = getattr(getattr(mech, "base", mech), "granularity", None)
    if g is not None and not np.all(np.equal(np.round(s_dp / g) * g, s_dp)):
        fail(field, s_dp.tolist(), f"this release lies on the lattice {g:g} Z; every entry must be a multiple of {g:g}")
    finite_all = np.all(np.isfinite(s_dp))
    if not finite_all:
        fail(field, s_dp.tolist(), "must be finite numbers")


def _check_whole_shift(name: str, sens: float, entries: int) -> None:
    """The sensitivity of discrete noise on an integer statistic is a norm of a whole-number move (make_mechanism)."""
    l2_root = name == "discrete_gaussian" and entries > 1 and whole_root(sens) is not None
    if float(sens).is_integer() or l2_root:
        return
    allowed = "must be an integer ≥ 1 for discrete noise on an integer statistic (records move it by whole numbers"
    if name == "discrete_gaussian" and entries > 1:
        allowed += ("; or, as an L2 norm over its entries, the square root of a whole number, e.g. "
                    "√2 = 1.4142135623730951 for one count down and another up")
    fail("mechanism.sensitivity", sens, allowed + ")")
