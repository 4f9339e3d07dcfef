"""The Privacy budget page after a new-user audit: the sd figure's prior sd anchors its axis, and a frontier read
from draws says why it can fold back."""
import json
import math

from app_support import open_app

from ui import keys
from ui.compute import sweeps
from ui.params.scenario import Scenario
from ui.presets import REGRESSION


def _chart(at, key):
    return json.loads(next(c for c in at.get("plotly_chart") if c.proto.id and key in str(c.key)).proto.spec)


def test_prior_sds_are_the_models_prior_from_its_own_stream():
    """Regression: beta[j] ~ N(0, prior_sd^2), prior_sd = 2; Beta(1, 1): 1/sqrt(12). Within 5 Monte Carlo standard
    errors of an sd (sd / sqrt(2N), N = sweeps.PRIOR_DRAWS), the same on every call (the seed's own stream)."""
    tolerance = 5 / math.sqrt(2 * sweeps.PRIOR_DRAWS)
    sds = sweeps.prior_sds(REGRESSION, None)
    assert set(sds) == {"beta[0]", "beta[1]", "beta[2]"}
    assert all(abs(sd / 2.0 - 1) < tolerance for sd in sds.values()), sds
    (theta,) = sweeps.prior_sds(Scenario(), None).values()
    assert abs(theta * math.sqrt(12) - 1) < tolerance
    sweeps._prior_sds_cached.clear()
    assert sweeps.prior_sds(REGRESSION, None) == sds


def test_a_frontier_read_from_draws_says_why_it_can_fold_back():
    """Three-cell tables under randomized response have no exact posterior: the frontier's sd is each ε's naive
    draws' sd, and a sentence says neighbouring ε's within Monte Carlo error can cross."""
    at = open_app("pages/privacy_budget.py", timeout=180)
    at.multiselect(key=keys.W_SWEEP_METHODS).set_value(["naive"])
    at.selectbox(key=keys.W_MODEL).set_value("dirichlet_multinomial")
    at.selectbox(key=keys.W_MECHANISM).set_value("randomized_response").run()
    assert not at.exception, [e.value for e in at.exception]
    captions = [c.value for c in at.caption]
    assert any("estimated from its own run's draws" in c and "Monte Carlo error" in c for c in captions), captions
    assert not any(c.startswith("±: half the width of the exact posterior's") for c in captions)
    assert "prior_sd" in {t["meta"]["kind"] for t in _chart(at, keys.SD_CHART)["data"]}  # Dirichlet's marginals
