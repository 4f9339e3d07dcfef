"""The :class:`Scenario` record (the sidebar's widget values, frozen) and the choices its fields take.

A :class:`Scenario` is what the sidebar shows: model, prior, mechanism and budget, data source,
seed, which methods run and their settings. Free-text fields (a list of released values, a
Dirichlet prior, a vector of true probabilities) are kept exactly as typed, so a bad entry stays
in its box; they are parsed only when the spec is built (:mod:`ui.params.spec`).

The session's current scenario lives in ``st.session_state[keys.SCENARIO]`` (:mod:`ui.sidebar.state`);
this module holds no state. Nothing here imports streamlit.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from engine.models import MODEL_NAMES as _ENGINE_MODELS

__all__ = [
    "Scenario",
    "APP_MODELS",
    "MODELS",
    "MECHANISMS",
    "METHODS",
    "DEFAULT_METHODS",
    "MANY_NUMBER_MODELS",
    "default_methods",
    "DATA_SOURCES",
    "BUDGET_FORMS",
    "DEFAULT_PRIORS",
    "REGRESSION_BETA",
    "SIGMA_PRIOR_DEFAULTS",
    "SAMPLE_SIZES",
    "N_PRIORS",
    "N_MECHANISMS",
    "N_BUDGET_FORMS",
    "RELEASES",
    "PRIOR_KINDS",
    "budget_forms",
    "truth_key",
]

#: The models the app knows, in sidebar order; offered only when the engine can run them (a model the
#: engine does not have yet stays hidden rather than failing on every run).
APP_MODELS = ("beta_binomial", "poisson_gamma", "dirichlet_multinomial", "normal_known_sd", "naive_bayes_loglinear",
              "linear_regression")
MODELS = tuple(m for m in APP_MODELS if m in _ENGINE_MODELS)
MECHANISMS = ("laplace", "gaussian", "discrete_laplace", "discrete_gaussian", "randomized_response")
METHODS = ("naive", "da_mcmc", "abc_rejection", "ops", "exact", "pseudo_marginal", "auto", "bernstein_sheldon",
           "rjmcmc", "mcem")
#: Switched on when the app opens: the baseline that fails, the best exact method (``auto``: the closed
#: form or numerical grid where one exists, else the faster-mixing exact sampler) and the papers' samplers.
DEFAULT_METHODS = ("naive", "da_mcmc", "abc_rejection", "ops", "auto")
#: Models whose release is many numbers (regression's 9 sums, the log-linear model's tables): ABC rejection accepts
#: about one proposal in a million there (n = 200 regression: 9 draws in its 10 s; n = 10,000: none of 30,800), so it
#: starts switched off, and a box ticks it on.
MANY_NUMBER_MODELS = ("linear_regression", "naive_bayes_loglinear")


def default_methods(model: str) -> tuple[str, ...]:
    """The methods switched on for ``model`` when nothing says otherwise (:data:`DEFAULT_METHODS`, without ABC
    rejection for :data:`MANY_NUMBER_MODELS`)."""
    return tuple(m for m in DEFAULT_METHODS if not (m == "abc_rejection" and model in MANY_NUMBER_MODELS))


DATA_SOURCES = ("simulate", "csv", "s_dp")
#: Is the number of records known, or private and released with noise (``n_dp``, paper 002)?
SAMPLE_SIZES = ("known", "unknown")
#: ``model.n_prior`` names and the size mechanisms the sidebar offers (``[n_mechanism]``), stated by
#: a budget epsilon (sensitivity 1: one record more or less moves n by one) or by the noise scale.
N_PRIORS = ("poisson", "negative_binomial")
#: ``none``: the size is not released at all (a histogram whose total is private: its cells are the only trace of
#: n, paper 002 App. B; the Dirichlet-multinomial model only).
N_MECHANISMS = ("laplace", "discrete_laplace", "none")
N_BUDGET_FORMS = ("epsilon", "scale")
#: How was it released? The lab's own mechanism (``[mechanism]``, the default) or a release made with a library,
#: described in that library's terms (``[release]``: engine.release_options() lists its mechanisms and parameters).
RELEASES = ("lab", "opendp", "diffprivlib")

# How each mechanism's budget can be stated. "k_ary" and "coin" are the two randomized-response
# constructions (epsilon, or the coin scheme's truth probability).
BUDGET_FORMS = {
    "laplace": ("epsilon",),
    "discrete_laplace": ("epsilon",),
    "gaussian": ("rho", "epsilon_delta"),
    "discrete_gaussian": ("rho",),
    "randomized_response": ("k_ary", "coin"),
}

DEFAULT_PRIORS: dict[str, dict[str, Any]] = {
    "beta_binomial": {"a": 1.0, "b": 1.0},
    "poisson_gamma": {"alpha": 1.0, "beta": 1.0, "upper": None},
    "dirichlet_multinomial": {"alpha": "1, 1, 1"},
    "normal_known_sd": {"sd": 1.0, "lo": -3.0, "hi": 3.0, "prior_mean": 0.0, "prior_sd": 10.0},
    "naive_bayes_loglinear": {"class_levels": 2, "feature_levels": "2, 2", "alpha": 2.0},
    # paper 000 Sec. 5 / dapper Example 3: x ~ N((0.9, -1.17), I), sigma^2 = 2, clamp [-10, 10], beta ~ N(0, 2^2)
    "linear_regression": {"p": 2, "x_mean": "0.9, -1.17", "x_cov": "1, 0; 0, 1", "sigma": math.sqrt(2.0),
                          "lo": "-10", "hi": "10", "prior_sd": 2.0},
}
#: linear_regression's InvGamma(a, scale b) prior on sigma^2 when sigma is unknown, as the boxes start (mean b / (a - 1)
#: = 2, the paper's sigma^2). A scenario's prior holds sigma_a and sigma_b only then (the spec's sigma_prior; sigma
#: is then the simulation's true value), and a link prior.sigma_a / prior.sigma_b.
SIGMA_PRIOR_DEFAULTS = {"sigma_a": 3.0, "sigma_b": 4.0}
#: paper 000 Sec. 5's true coefficients (beta_0, beta_1, beta_2), the default simulation at p = 2.
REGRESSION_BETA = "-1.79, -2.89, -0.66"
#: How each prior field is typed: "text" (a list, kept exactly as typed and parsed when the spec is
#: built), "int" or "float" (a number box); fields not listed are floats.
PRIOR_KINDS: dict[tuple[str, str], str] = {
    ("dirichlet_multinomial", "alpha"): "text",
    ("poisson_gamma", "upper"): "int",
    ("naive_bayes_loglinear", "class_levels"): "int",
    ("naive_bayes_loglinear", "feature_levels"): "text",
    ("linear_regression", "p"): "int",
    ("linear_regression", "x_mean"): "text",
    ("linear_regression", "x_cov"): "matrix",
    ("linear_regression", "lo"): "bounds",
    ("linear_regression", "hi"): "bounds",
}

_TRUTH_KEYS = {"beta_binomial": "theta", "poisson_gamma": "lam", "dirichlet_multinomial": "p",
               "normal_known_sd": "mu", "naive_bayes_loglinear": "pi", "linear_regression": "beta"}


@dataclass(frozen=True)
class Scenario:
    """Everything the sidebar holds. Defaults are the demo scenario of the Compare page
    (``engine.DEMO_SPEC``; a test keeps the two equal)."""

    model: str = "beta_binomial"
    n: int = 40
    prior: tuple[tuple[str, Any], ...] = (("a", 1.0), ("b", 1.0))
    mechanism: str = "laplace"
    budget_form: str = "epsilon"
    epsilon: float = 0.3
    rho: float = 0.5
    delta: float = 1e-6
    truth_prob: float = 0.5
    sensitivity: float | None = None  # None: the model's default sensitivity
    data: str = "simulate"
    truth: str = "0.3"  # the true parameter as typed (naive_bayes_loglinear: pi)
    truth_p: str = ""  # naive_bayes_loglinear: the true p, flat in the order p[k][i][j] (j fastest)
    from_prior: bool = False  # naive_bayes_loglinear: simulate = { from_prior = true }
    seed: int = 7
    s_dp: str = ""
    csv_column: str = ""
    methods: tuple[str, ...] = DEFAULT_METHODS
    chains: int = 2
    draws: int = 2000
    warmup: int = 500
    abc_max_seconds: float = 10.0
    abc_max_proposals: int = 20_000_000
    ops_k: int = 100
    sample_size: str = "known"  # "unknown": n is private, released as n_dp (model.n = true size if simulated)
    n_prior: str = "poisson"
    n_prior_mean: float = 40.0
    n_prior_dispersion: float = 10.0
    n_mechanism: str = "laplace"
    n_budget_form: str = "epsilon"
    n_epsilon: float = 0.5
    n_scale: float = 2.0
    n_dp: str = ""  # typed release of the size (data source s_dp), kept as typed
    release: str = "lab"  # "lab": the [mechanism] above; "opendp" / "diffprivlib": a [release] in that library's terms
    release_mechanism: str = ""  # the library's mechanism name (OpenDP "laplace", diffprivlib "GaussianAnalytic", ...)
    # the library's parameters by its own names: numbers as numbers, domain / value0 / value1 / clip as typed text
    release_params: tuple[tuple[str, Any], ...] = ()

    @property
    def unknown_n(self) -> bool:
        return self.sample_size == "unknown"

    @property
    def size_released(self) -> bool:
        """Is the unknown n released as a noisy n_dp (``[n_mechanism]``)? Not for a histogram whose total is
        private and unreleased (``n_mechanism = "none"``)."""
        return self.unknown_n and self.n_mechanism != "none"

    @property
    def uses_library(self) -> bool:
        """Is the noise a library's release (``[release]``) rather than the lab's own ``[mechanism]``?"""
        return self.release != "lab"

    @property
    def prior_dict(self) -> dict[str, Any]:
        return dict(self.prior)


def budget_forms(mechanism: str) -> tuple[str, ...]:
    """The budget forms a mechanism accepts (first one is the default)."""
    return BUDGET_FORMS.get(mechanism, ("epsilon",))


def truth_key(model: str) -> str:
    """The key of ``[data] simulate = {..}`` for a model (theta, lam, p or mu)."""
    return _TRUTH_KEYS[model]
