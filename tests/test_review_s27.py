"""Session 27: what the suite's speed work changed in the engine, each checked against what it replaces."""
from __future__ import annotations

import numpy as np
import pytest

from engine.models import make_model
from engine.studies.replicates import _confidential_means


@pytest.mark.parametrize("name, params", [
    ("naive_bayes_loglinear", {"n": 100}),
    ("naive_bayes_loglinear", {"n": 40, "class_levels": 2, "feature_levels": [2, 4]}),
    ("dirichlet_multinomial", {"n": 50, "alpha": [1.0, 2.0, 0.5, 3.0, 1.5]})])
def test_the_dirichlet_models_posterior_means_are_their_marginals_means_bitwise(name, params):
    """A study's confidential means came from one frozen scipy Beta per parameter (1 ms each, 15 of the log-linear
    quick study's 37 s); ``posterior_means`` computes the same numbers in scipy's own arithmetic."""
    model = make_model(name, params)
    rng = np.random.default_rng(27)
    for _ in range(20):
        records = model.sample_records(rng, model.sample_prior(rng, 1)[0])
        suff = model.suff(records)
        marginals = model.posterior_marginals(suff)
        expected = np.array([float(marginals[p].mean()) for p in model.param_names])
        np.testing.assert_array_equal(model.posterior_means(suff), expected)
        np.testing.assert_array_equal(_confidential_means(model, records), expected)


def test_the_other_models_confidential_means_still_come_from_their_marginals():
    model = make_model("beta_binomial", {"n": 30})
    records = np.array([1] * 12 + [0] * 18)
    assert not hasattr(model, "posterior_means")
    np.testing.assert_array_equal(_confidential_means(model, records), [(1.0 + 12) / (2.0 + 30)])
