"""Audit s25, the curator whose number of records is private: RJMCMC where the prior on n and the released n_dp
disagree, and the Compare page's sentences when RJMCMC has not converged beside runs at the plug-in n.

The reference for the sampler is the enumerated posterior (as in tests/test_rjmcmc.py): with a Beta(a, b) prior,
a count s of n records released with Laplace noise, n ~ p(n) released with Laplace noise,

    P(n, s | s_dp, n_dp) ∝ p(n) eta_n(n_dp - n) BetaBin(s; n, a, b) eta(s_dp - s),
    theta | n, s ~ Beta(a + s, b + n - s),

so E[theta | data] = sum w(n, s) (a + s) / (a + b + n). The Laplace log density is written out, -|r| / b - log 2b:
scipy's logpdf underflows to -inf at a residual of 5,000. Tolerances are Z = 4 Monte Carlo standard errors, from the
bulk ESS; seeds are fixed.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import engine
from app_support import open_app
from ui import keys, narrative
from ui.params.query import to_query
from ui.presets import BAYES_VS_MLE

Z = 4.0


def _laplace(r, b):
    return -np.abs(r) / b - math.log(2 * b)


def _enumerated_means(a, b, s_dp, s_scale, n_dp, n_scale, prior_mean, n_max):
    """(E[theta], E[n]) of the beta-binomial's posterior with an unknown n, by enumeration of (n, s) up to n_max."""
    ns, ss, lw = [], [], []
    for n in range(n_max + 1):
        s = np.arange(n + 1)
        lw.append(stats.poisson.logpmf(n, prior_mean) + _laplace(n_dp - n, n_scale)
                  + stats.betabinom.logpmf(s, n, a, b) + _laplace(s_dp - s, s_scale))
        ns.append(np.full(n + 1, n))
        ss.append(s)
    n, s, lw = (np.concatenate(c) for c in (ns, ss, lw))
    w = np.exp(lw - lw.max())
    w /= w.sum()
    assert w[n > n_max - 50].sum() < 1e-12  # the truncation at n_max loses nothing
    return float(w @ ((a + s) / (a + b + n))), float(w @ n)


def test_rjmcmc_converges_at_the_defaults_where_the_prior_on_n_and_n_dp_disagree():
    """A Poisson(20) prior on n and n_dp = 5,000 (Laplace, scale 1): the posterior of n sits near 53. Each chain
    started at the plug-in n = 5,000 and walked down 10 sizes an iteration (the default jumps, from a normal guess of
    n's posterior variance of 1.8): R-hat 1.13, bulk ESS 20 at the defaults. It now starts at the mode of n given n_dp
    alone and takes jumps from that law's variance."""
    spec = {"seed": 3, "model": {"name": "beta_binomial", "a": 2.0, "b": 3.0,
                                 "n_prior": {"name": "poisson", "mean": 20.0}},
            "mechanism": {"name": "laplace", "scale": 2.0}, "n_mechanism": {"name": "laplace", "scale": 1.0},
            "data": {"s_dp": [10.0], "n_dp": 5000.0}, "method": {"name": "rjmcmc"}}
    result = engine.run(spec)
    verdict = engine.summary(result).attrs["convergence"]
    assert verdict["converged"], verdict["reasons"]
    theta_mean, n_mean = _enumerated_means(2.0, 3.0, 10.0, 2.0, 5000.0, 1.0, 20.0, n_max=250)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        import arviz as az
    for i, exact in ((0, theta_mean), (1, n_mean)):
        x = result.draws[:, :, i]
        mcse = x.std() / math.sqrt(float(az.ess(x, method="bulk")))
        assert abs(x.mean() - exact) < Z * mcse, (result.param_names[i], x.mean(), exact, mcse)


@dataclass(frozen=True)
class _Result:
    info: dict
    param_names: tuple = ("theta",)


@dataclass(frozen=True)
class _Run:
    summary: pd.DataFrame | None = None
    result: object = None
    stalled: bool = False
    too_few: bool = False
    convergence: dict | None = None


def _summary(mean, sd):
    rows = {"theta": (mean, sd, mean - 1.645 * sd, mean + 1.645 * sd)}
    return pd.DataFrame(rows, index=["mean", "sd", "q5", "q95"]).T


STALLED = {"applicable": True, "converged": False, "r_hat_max": 1.13, "ess_bulk_min": 20.0, "ess_tail_min": 60.0}
PLUG_IN = {"plug_in_n": 5000, "note": "n unknown: run at the naive plug-in n = round(n_dp) = 5000"}
#: the Compare page's runs with n_dp = 5,000 and a Poisson(20) prior before the fix above: RJMCMC has not converged
RUNS = {"naive": _Run(_summary(0.0042, 0.0014), _Result(PLUG_IN)),
        "exact": _Run(_summary(0.0042, 0.0020), _Result(PLUG_IN)),
        "rjmcmc": _Run(_summary(0.15, 0.07), _Result({"unknown_n": True}, ("theta", "n")), stalled=True,
                       convergence=STALLED)}


def test_the_headline_never_calls_a_run_at_the_plug_in_n_the_exact_posterior_of_an_unknown_n():
    """With RJMCMC not converged, the headline read "Naive is 1.4× too narrow, centred where the exact posterior is":
    the exact posterior was the closed form at the plug-in n = 5,000, where RJMCMC's posterior of θ is 40 times
    wider and centred at 0.15."""
    sentence = narrative.headline(RUNS, None)
    assert "the exact posterior is" not in sentence, sentence
    assert "the posterior given the plug-in n = 5,000 (Exact (closed form); n is unknown, so it is exact only given " \
           "that n)" in sentence, sentence
    # a converged RJMCMC is the reference, whatever else is on
    converged = {**RUNS, "rjmcmc": _Run(_summary(0.15, 0.07), RUNS["rjmcmc"].result)}
    assert narrative.reference_method(converged) == "rjmcmc"
    # one that treats n as unknown (OpenDP's mean: pseudo-marginal draws n with mu) comes before one at the plug-in n
    pm = _Run(_summary(0.1, 0.05), _Result({}, ("mu", "n")))
    assert narrative.reference_method({"naive": RUNS["naive"], "exact": RUNS["exact"], "pseudo_marginal": pm}) == \
        "pseudo_marginal"


def test_the_advice_for_rjmcmc_not_converged_never_switches_on_a_method_at_the_plug_in_n():
    """The warning said to "switch on Exact (best method) ...; or Pseudo-marginal, which mixes fast when ε is small":
    both run at the plug-in n, another posterior than RJMCMC's."""
    text = narrative.convergence_warning(RUNS)
    assert "switch on" not in text, text
    assert text.endswith("raise draws or chains in Method settings; the other methods run at the plug-in n (exact "
                         "only given that n) and do not stand in for it."), text
    # a chain at the plug-in n that has not mixed still gets the advice of its own kind
    da = _Run(_summary(0.1, 0.05), _Result(PLUG_IN), stalled=True, convergence=STALLED)
    assert "or switch on Exact (best method)" in narrative.convergence_warning({**RUNS, "da_mcmc": da})


def test_the_pmf_of_n_from_a_chain_that_has_not_converged_says_so_and_writes_sizes_as_counts():
    """The figure's title gave "posterior mean 53.71" from RJMCMC with R-hat 1.13 and ESS 20, its bars drawn as a
    converged chain's; and n_dp = 1,234,567 was "released n_dp = 1.235e+06"."""
    from figures.posteriors import n_pmf_plot

    values, probs = np.array([52, 53, 54]), np.array([0.3, 0.4, 0.3])
    fig = n_pmf_plot(values, probs, n_dp=5000.0, plug_in=5000, method="rjmcmc", converged=False)
    title = fig.layout.title.text.replace("<br>", " ")  # wrapped for a phone
    assert title == "Number of records n: posterior mean 53 (not converged)", title
    bars = next(t for t in fig.data if t.meta["kind"] == "n_pmf")
    assert bars.name.endswith("(not converged)") and bars.opacity < 1 and bars.meta["converged"] is False
    names = {t.meta["kind"]: t.name for t in fig.data}
    assert names["n_dp"] == "released n_dp = 5,000" and names["plug_in"] == "plug-in n = 5,000"
    big = n_pmf_plot(np.array([1234560, 1234570]), np.array([0.5, 0.5]), n_dp=1234567.0, plug_in=1234567)
    title = big.layout.title.text.replace("<br>", " ")
    assert title == "Number of records n: posterior mean 1,234,565", title
    assert {t.name for t in big.data} >= {"released n_dp = 1,234,567", "plug-in n = 1,234,567"}


def test_the_prior_on_n_says_what_it_means_and_which_methods_use_it():
    """The prior on n and its mean had no help: nothing said how firm a Poisson prior is, or that the methods at the
    plug-in n ignore it."""
    at = open_app("pages/compare.py", to_query(replace(BAYES_VS_MLE.scenario, methods=("naive",))), 120)
    prior_help = at.selectbox(key=keys.W_N_PRIOR).help
    assert "sd √mean" in prior_help and "plug-in n" in prior_help, prior_help
    assert "pulls n's posterior towards it" in at.text_input(key=keys.W_N_PRIOR_MEAN).help


def test_an_empty_or_wordy_n_dp_is_asked_for_as_one_number():
    """With the box emptied the sidebar said "Released n_dp must be a list of numbers separated by commas, e.g. 104,
    120, 74, 102 (you entered nothing)": n_dp is one number."""
    from ui.params.parsing import parse_n_dp

    one = "must be one number, the released noisy size, e.g. 21.4 (negative is possible: it is noise)"
    for text in ("", "lots", "3, 4"):
        with pytest.raises(ValueError) as err:
            parse_n_dp(text)
        assert str(err.value) == f"data.n_dp = {text!r} is invalid: {one}", str(err.value)
    assert parse_n_dp(" -7 ") == -7.0


def test_what_am_i_looking_at_says_which_results_treat_n_as_unknown():
    """Compare's explanation spoke of s_dp alone: nothing said which results treat n as unknown, what the second
    figure (the pmf of n) is, or what "at plug-in n = N" in the other methods' names means."""
    at = open_app("pages/compare.py", to_query(replace(BAYES_VS_MLE.scenario, methods=("naive",))), 120)
    text = " ".join(m.value for m in at.expander[0].markdown)
    assert "**RJMCMC (unknown n)** treats n as a parameter under your prior on it" in text, text
    assert "every other method runs at that plug-in n and says so in its name" in text, text


def _unknown_size(prior, n_dp, scale):
    spec = {"seed": 1, "model": {"name": "beta_binomial", "n_prior": prior}, "mechanism": {"name": "laplace",
            "scale": 2.0}, "n_mechanism": {"name": "laplace", "scale": scale}, "data": {"s_dp": [7.3], "n_dp": n_dp}}
    return engine.prepare(spec).unknown_n


def test_a_chain_starts_at_the_mode_of_n_given_n_dp_alone_however_wide_the_prior():
    """w(n) = p(n) eta_n(n_dp - n) rises while p(n + 1) / p(n) * eta_n ratio >= 1. A negative binomial of mean 10^6
    and r = 1e-6 (its 1 - 1e-12 quantile is 1e13: a grid up to there missed the mode and started at 1); under Laplace
    noise of scale 1 its mode is round(n_dp) = 500, where the prior's ratio q (n + r) / (n + 1) ~ 1 is beaten by
    the noise's e. A Poisson(10^6) prior against n_dp = 9e6 under Laplace scale 10^5 (the range is past the dense
    grid): w rises while 10^6 e^(1e-5) / (n + 1) >= 1, so the mode is 1,000,010 (to the last digit, p's rounding)."""
    from engine.methods.rjmcmc import size_weights, start_n

    assert start_n(_unknown_size({"name": "negative_binomial", "mean": 1e6, "dispersion": 1e-6}, 500.0, 1.0)) == 500
    wide = _unknown_size({"name": "poisson", "mean": 1e6}, 9e6, 1e5)
    assert abs(start_n(wide) - math.floor(1e6 * math.exp(1e-5))) <= 1
    grid, w = size_weights(wide)
    mean = float(w @ grid)
    tilted = 1e6 * math.exp(1e-5)  # w is the Poisson(10^6) tilted by e^(n / b): Poisson(10^6 e^(1e-5))
    assert abs(mean - tilted) < 1 and abs(float(w @ (grid - mean) ** 2) / tilted - 1) < 0.01


def test_rjmcmc_and_mcem_are_priced_at_the_n_their_chains_hold():
    """The chains start near the n that n_dp and the prior on n make likely (about 54 for a Poisson(20) prior and
    n_dp = 10^6); estimate_cost still priced them at the plug-in n = 10^6 (250 s), so the app's work budget refused a
    run of under a second."""
    from engine.cost import estimate_cost

    spec = {"seed": 1, "model": {"name": "beta_binomial", "n_prior": {"name": "poisson", "mean": 20.0}},
            "mechanism": {"name": "laplace", "epsilon": 1.0}, "n_mechanism": {"name": "laplace", "epsilon": 1.0},
            "data": {"s_dp": [3.0], "n_dp": 1e6}}
    problem = engine.prepare(spec)
    cost = estimate_cost(problem, {"name": "rjmcmc"})
    assert "n ~ 54 records" in cost.detail and cost.units < 2e6, cost
    assert estimate_cost(problem, {"name": "mcem"}).units < 1e7


def test_a_prior_on_n_for_a_model_without_an_unknown_n_says_so_for_any_model():
    """It said "{model} has fixed-n tables" for every model, words that fit only the log-linear one."""
    spec = {"seed": 1, "model": {"name": "linear_regression", "n_prior": {"name": "poisson", "mean": 5.0}},
            "mechanism": {"name": "laplace", "epsilon": 1.0}, "data": {"s_dp": [0.0] * 9, "n_dp": 5.0}}
    with pytest.raises(ValueError, match=r"model\.n_prior = .* is invalid: is for an unknown n, which "
                                         r"linear_regression does not support \(its n must be known\); the models "
                                         r"that do: beta_binomial"):
        engine.prepare(spec)
