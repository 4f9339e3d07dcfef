"""The budget split for a mean released as (noisy sum, noisy count): engine.studies.mean_split.

The posterior sd it minimises is checked against the engine's ``exact`` method in the limit where the count
is effectively noiseless (t_n = 1e-3: the count's pmf off n_dp is below e^-1000) and no record is clamped
(bounds +-50 sd away), where the sum is exactly Normal and both computations are exact up to their grids:
agreement to 1e-3 relative (the grids' errors are below 1e-4; cell averages of 4000 cells add h^2/12 to the
variance, 6e-8 relative). The negative control doubles the sum's noise scale and moves the sd by far more.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import engine
from engine.studies.mean_split import OPENDP_SUM_FRACTION, clamped_moments, mean_budget_split, mean_posterior_sd


def _exact_sd(s_dp, n, b):
    spec = {"seed": 1, "model": {"name": "normal_known_sd", "n": n, "sd": 1.0, "lo": -50.0, "hi": 50.0,
                                 "prior_mean": 0.0, "prior_sd": 2.0},
            "mechanism": {"name": "laplace", "scale": b}, "data": {"s_dp": [s_dp]}}
    res = engine.run_method(engine.prepare(spec), {"name": "exact", "draws": 10, "grid_size": 4000}, seed=1)
    x, dens = res.density["mu"]
    w = dens / dens.sum()
    mean = float(np.sum(w * x))
    return math.sqrt(float(np.sum(w * (x - mean) ** 2)))


@pytest.mark.parametrize("s_dp,b", [(12.0, 6.0), (-30.0, 25.0)])
def test_posterior_sd_matches_exact_with_a_known_size(s_dp, b):
    kw = dict(sd=1.0, lower=-50.0, upper=50.0, prior_mean=0.0, prior_sd=2.0, n_prior={"name": "poisson", "mean": 40})
    ours = mean_posterior_sd(s_dp, 40, b, 1e-3, **kw)[1]
    assert ours == pytest.approx(_exact_sd(s_dp, 40, b), rel=1e-3)
    wrong = mean_posterior_sd(s_dp, 40, 2 * b, 1e-3, **kw)[1]  # negative control: a 2x sum scale
    assert abs(wrong - ours) > 20 * 1e-3 * ours


def test_clamped_moments_by_simulation():
    rng = np.random.default_rng(0)
    x = np.clip(rng.normal(1.0, 2.0, 400_000), 0.0, 3.0)
    m, v = clamped_moments(np.array([1.0]), 2.0, 0.0, 3.0)
    assert abs(x.mean() - m[0]) < 4.5 * x.std() / math.sqrt(x.size)
    assert abs(x.var() - v[0]) < 4.5 * math.sqrt(np.var((x - x.mean()) ** 2) / x.size)


def test_best_split_beats_the_even_split():
    r = mean_budget_split(1.0, lower=0.0, upper=10.0, sd=2.0, n=100, prior_mean=5.0, prior_sd=3.0)
    assert 0.0 < r.fraction_sum < 1.0
    assert r.epsilon_sum + r.epsilon_count == pytest.approx(1.0)
    assert r.sum_scale == pytest.approx(10.0 / r.epsilon_sum) and r.count_scale == pytest.approx(1.0 / r.epsilon_count)
    assert r.posterior_sd <= min(sd for _, sd in r.curve) + 1e-12
    assert r.posterior_sd <= r.even_posterior_sd
    even = dict(r.curve)[OPENDP_SUM_FRACTION]
    assert r.even_posterior_sd == pytest.approx(even, rel=1e-12)
    assert r.improvement > 0.03  # here the sum deserves about 2/3 of the budget: the even split loses ~7%


@pytest.mark.parametrize("kwargs,field", [
    (dict(epsilon=0.0), "epsilon = 0.0 is invalid"),
    (dict(lower=5.0, upper=1.0), "lower = \\[5.0, 1.0\\] is invalid"),
    (dict(n=0), "n = 0 is invalid"),
    (dict(n_prior={"name": "poisson"}), "model.n_prior.mean = None is invalid"),
])
def test_bad_input_names_the_field(kwargs, field):
    args = dict(epsilon=1.0, lower=0.0, upper=10.0, sd=2.0, n=100, prior_mean=5.0, prior_sd=3.0)
    args.update(kwargs)
    eps = args.pop("epsilon")
    with pytest.raises(ValueError, match=field):
        mean_budget_split(eps, **args)


def test_opendp_mean_splits_evenly():
    """OpenDP's dp.mean (dp-wizard's means) gives the sum and the count half of the mean's epsilon each."""
    dp = pytest.importorskip("opendp.prelude")
    pl = pytest.importorskip("polars")
    dp.enable_features("contrib")
    ctx = dp.Context.compositor(data=pl.LazyFrame({"x": [1.0] * 5}), privacy_unit=dp.unit_of(contributions=1),
                                privacy_loss=dp.loss_of(epsilon=0.8), split_evenly_over=1,
                                margins=[dp.polars.Margin(max_length=1000)])
    table = ctx.query().select(pl.col("x").fill_null(0.0).dp.mean((-2.0, 10.0))).summarize()
    scales = dict(zip(table["aggregate"], table["scale"]))
    assert scales["Sum"] == pytest.approx(10.0 / (OPENDP_SUM_FRACTION * 0.8))
    assert scales["Length"] == pytest.approx(1.0 / ((1 - OPENDP_SUM_FRACTION) * 0.8))
