"""Conjugate data models with a record-additive statistic (Ju et al. 2022, Assumption 2).

Each model knows: its prior and how to draw from it, how to draw confidential records given the
parameter, the record statistic ``s(x) = sum_i t(x_i)`` that the mechanism privatizes, the
conjugate posterior given confidential records (Assumption 1, sampled exactly), and its
sensitivity under the bounded ("replace one record") neighbouring notion used throughout:
n is public and neighbouring databases differ in the value of one record.

==========================  ==========================  ====================  ==================
model                       record and statistic         prior                 sensitivity
==========================  ==========================  ====================  ==================
``beta_binomial``           x_i in {0, 1}; s = sum x_i   theta ~ Beta(a, b)     1
``poisson_gamma``           x_i in N; s = sum min(x_i,   lam ~ Gamma(alpha,     upper; 1 without a
                            upper)                       rate beta)             clamp (counts, see below)
``dirichlet_multinomial``   x_i in {0..k-1}; s = cell    p ~ Dirichlet(alpha)   L1: 2, L2: sqrt 2
                            counts (k of them)
``normal_known_sd``         x_i real; s = sum of x_i     mu ~ N(prior_mean,     hi - lo
                            clamped to [lo, hi]          prior_sd^2)
``naive_bayes_loglinear``   x_i = (y, x_1..x_K); s = the pi ~ Dir(alpha 1_I),   L1: 2K, L2: sqrt 2K
                            K two-way tables n_ij^k      p[k][i] ~ Dir(alpha)
``linear_regression``       x_i = (x_1..x_p, y); s =     beta ~ N(0, tau^2 I)  L1: p^2 + 3p + 3,
                            sums of products of the                            L2: sqrt(2(p+1)(p+2))
                            clamped, normalised record
==========================  ==========================  ====================  ==================

Without ``upper`` a Poisson record is unbounded and so is the true sensitivity; the default
sensitivity 1 then follows Gong (2020)'s privatized count, where the released count is a
number of people and each person moves it by one. The engine does not claim the exp(-epsilon)
acceptance bound in that case.

Clamping (``upper``, ``lo``/``hi``) applies to the released statistic only; the latent records
of DA-MCMC are the unclamped ones, so ``theta | x`` stays conjugate.

One module per model (its record sampler, statistic, prior, conjugate update, sensitivity and the
derivations in its docstring), :mod:`.custom` for models given as Python callables, :mod:`.sample_size`
for the prior on an unknown n; this module is the registry: names, prior keys, :func:`make_model`.
"""
from __future__ import annotations

from typing import Any, Mapping

from ..core.validation import choice, fail, instance, positive_int
from . import (beta_binomial, dirichlet_multinomial, linear_regression, naive_bayes_loglinear, normal_known_sd,
               poisson_gamma)
from .base import MAX_N
from .beta_binomial import BetaBinomial
from .dirichlet_multinomial import DirichletMultinomial
from .linear_regression import MAX_P, LinearRegression
from .naive_bayes_loglinear import NaiveBayesLoglinear, feature_levels
from .normal_known_sd import NormalKnownSD
from .poisson_gamma import PoissonGamma

__all__ = ["BetaBinomial", "PoissonGamma", "DirichletMultinomial", "NormalKnownSD", "NaiveBayesLoglinear",
           "LinearRegression",
           "MODEL_NAMES", "make_model", "MODEL_INFO", "record_columns", "MAX_N"]

_MODULES = {m.__name__.rsplit(".", 1)[1]: m for m in (beta_binomial, poisson_gamma, dirichlet_multinomial,
                                                     normal_known_sd, naive_bayes_loglinear, linear_regression)}
MODEL_NAMES = tuple(_MODULES)

#: Parameters, prior keys and their defaults, for the spec loader, the README and the app.
MODEL_INFO = {name: module.INFO for name, module in _MODULES.items()}


def record_columns(model_table: Mapping[str, Any]) -> list | None:
    """CSV columns of a multi-column record (``y, x1..xK`` for naive_bayes_loglinear), else None."""
    if model_table.get("name") == "linear_regression":
        p = model_table.get("p", linear_regression.INFO["prior"]["p"])
        p = p if isinstance(p, int) and not isinstance(p, bool) and 1 <= p <= MAX_P else 1
        return [f"x{j + 1}" for j in range(p)] + ["y"]
    if model_table.get("name") != "naive_bayes_loglinear":
        return None
    levels = feature_levels(model_table.get("feature_levels", naive_bayes_loglinear.INFO["prior"]["feature_levels"]))
    return ["y"] + [f"x{k + 1}" for k in range(len(levels))]


def make_model(name: str, params: Mapping[str, Any]):
    """Build a model from its spec table (``[model]``): ``n`` plus the model's prior keys."""
    instance("params", params, Mapping, 'must be the model\'s spec table (a dict), e.g. {"n": 20}')
    params = dict(params)
    params.pop("name", None)
    choice("model.name", name, MODEL_NAMES)
    if "n" not in params:
        fail("model.n", None, "is required: the number of confidential records, an integer >= 1")
    n = positive_int("model.n", params.pop("n"), 1, MAX_N)
    keys = _MODULES[name].KEYS
    unknown = set(params) - keys
    if unknown:
        key = sorted(unknown)[0]
        fail(f"model.{key}", params[key], f"is not a key of {name}; allowed: n, " + ", ".join(sorted(keys)))
    return _MODULES[name].build(n, params)
