"""A release far in the prior predictive's tail (an outlying record, no clamp): the exact mixture's window bound.

An audit uploaded four visit counts 1, 2, 99,999,999 and 3 to the unclamped Poisson-gamma model: `exact` (and so
`auto`, which picks it) refused with "the mixture needs more than 50,000,000 components", after a numpy overflow
warning, though the posterior is one window of s_dp ± 50 b wide. The window's own bound is relative to the prior
predictive's mass there (e^-2.2e7); the log-concave bound of :func:`engine.methods.exact._log_concave_tails`
certifies it. Where the closed form still cannot be evaluated, `auto` compares the chains instead of failing.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import special, stats

from engine import Problem, make_mechanism, make_model
from engine.methods.auto import auto
from engine.methods.exact import _log_concave_tails, exact

S_DP = 1e8 + 5.9  # the audit's four records sum to 100,000,005; Laplace noise of scale 1 on top


def _problem(alpha: float) -> Problem:
    model = make_model("poisson_gamma", {"n": 4, "alpha": alpha, "beta": 1.0})
    return Problem(model=model, mechanism=make_mechanism("laplace", {"epsilon": 1.0}), s_dp=np.array([S_DP]))


def test_an_outlying_release_has_its_exact_posterior():
    """The mixture's mean and sd against a brute-force sum written independently (scipy's negative binomial and
    Laplace densities over s_dp ± 3,000, far past where the weights fall below e^-2,000 of their peak); the draws
    are independent, so the mean's tolerance is 4 sd / sqrt(draws)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the overflow warning the CLI printed before its error line
        result = exact(_problem(1.0), np.random.default_rng(5), draws=2000, chains=4)
    assert result.info["neglected_mass_bound"] <= 1e-12
    s = np.arange(math.floor(S_DP) - 3000, math.floor(S_DP) + 3001, dtype=float)
    log_w = stats.nbinom.logpmf(s, 1.0, 1.0 / 5.0) + stats.laplace.logpdf(S_DP - s, scale=1.0)
    w = np.exp(log_w - special.logsumexp(log_w))
    shape, rate = 1.0 + s, 5.0
    mean = float(np.sum(w * shape / rate))
    sd = math.sqrt(float(np.sum(w * (shape / rate**2 + (shape / rate - mean) ** 2))))  # no cancellation at 4e14
    draws = result.draws.reshape(-1)
    assert abs(draws.mean() - mean) < 4 * sd / math.sqrt(draws.size), (draws.mean(), mean, sd)
    assert draws.std() == pytest.approx(sd, rel=0.05)  # sd of a sample of 8,000: its own sd is 0.8% of it


def test_the_log_concave_tail_bound_covers_the_weight_left_out():
    """Negative binomial (alpha = 2) times Laplace weights summed over their whole support: the bound on a window
    around the mode is at least the weight outside it; a window that misses the mode gets no bound."""
    s_all = np.arange(0, 5000, dtype=float)
    log_w = stats.nbinom.logpmf(s_all, 2.0, 0.2) + stats.laplace.logpdf(300.5 - s_all, scale=3.0)
    for lo, hi in ((280, 320), (290, 310), (295, 305)):
        inside = (s_all >= lo) & (s_all <= hi)
        outside = float(np.exp(special.logsumexp(log_w[~inside]) - special.logsumexp(log_w[inside])))
        bound = _log_concave_tails(s_all[inside], log_w[inside])
        assert outside <= bound < 50 * outside, (lo, hi, outside, bound)
    assert _log_concave_tails(s_all[400:450], log_w[400:450]) is None  # all of it right of the mode


def test_auto_compares_the_chains_where_exact_refuses():
    """With alpha = 0.5 the negative binomial is not log-concave and the closed form still refuses this release:
    `auto` says so and runs the chains (here neither converges in 100 draws, which the verdict says), not a
    ValueError in place of an answer."""
    result = auto(_problem(0.5), np.random.default_rng(7), chains=2, draws=100, warmup=50)
    first = result.info["attempts"][0]
    assert first["method"] == "exact" and first["converged"] is None and "mixture" in first["skipped"]
    assert result.info["picked"] in ("da_mcmc", "pseudo_marginal")
    assert result.info["why"].startswith("exact refused this release (")
    assert [a["method"] for a in result.info["attempts"][1:3]] == ["da_mcmc", "pseudo_marginal"]


def test_a_clamp_range_of_many_record_sds_is_refused_by_exact_not_computed_for_minutes():
    """Incomes uploaded to the normal model with clamp bounds [0, 400,000] and the record sd left at 1: one record's
    lattice law would have 25.6 million points (64 a record sd), seconds per mu and minutes per run (an app test
    ran six CPU-minutes). exact refuses it at once, naming the bounds, and auto runs a chain instead."""
    model = make_model("normal_known_sd", {"n": 40, "lo": 0.0, "hi": 400000.0})
    problem = Problem(model=model, mechanism=make_mechanism("laplace", {"epsilon": 0.3, "sensitivity": 400000.0}),
                      s_dp=np.array([1.9e6]))
    with pytest.raises(ValueError, match=r"model.hi = 400000 is invalid for exact: the clamp range \[0, 400000\] is "
                                         r"400,000 record sds \(sd = 1\) wide, and one record's law would need "
                                         r"25,600,000 lattice points \(at most 1,000,000\)"):
        exact(problem, np.random.default_rng(1), draws=10, chains=1)
    result = auto(problem, np.random.default_rng(2), chains=2, draws=200, warmup=100)
    assert result.info["picked"] in ("da_mcmc", "pseudo_marginal")
