"""The Privacy budget page after a new-user audit: the sd figure's floor says which posteriors stay above it, its
prior sd anchors the axis, each not-converged note sits with the figure that marks them its way, and a frontier
read from draws says why it can fold back."""
import json
import math

from app_support import open_app

from ui import keys
from ui.compute import sweeps
from ui.params.scenario import Scenario
from ui.presets import REGRESSION


def _in_order(node):
    """The page's elements in the order they are drawn (blocks opened depth-first)."""
    children = getattr(node, "children", None)
    if children:
        for k in sorted(children):
            yield from _in_order(children[k])
    else:
        yield node


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


def test_the_sd_figure_and_the_not_converged_notes_on_the_default_page():
    at = open_app("pages/privacy_budget.py", timeout=180)
    assert not at.exception, [e.value for e in at.exception]
    by_kind = {t["meta"]["kind"]: t for t in _chart(at, keys.SD_CHART)["data"]}
    assert by_kind["confidential_sd"]["name"].endswith("(no exact posterior goes below)")
    assert abs(by_kind["prior_sd"]["meta"]["value"] * math.sqrt(12) - 1) < 0.01  # Beta(1, 1)'s sd
    # the demo's DA-MCMC has not converged at ε = 0.1 and 0.215, the slider's ε: circled x on the interval and sd
    # figures, "(not converged)" in the legend of the densities at that ε; each note beside its own figure
    order = list(_in_order(at.main))
    place = {name: next(i for i, e in enumerate(order) if e.type == "plotly_chart" and key in str(e.key))
             for name, key in (("sd", keys.SD_CHART), ("frontier", keys.FRONTIER_CHART), ("step", keys.STEP_CHART))}
    captions = [(i, e.value) for i, e in enumerate(order) if e.type == "caption"]
    circled = [i for i, text in captions if text.startswith("Circled x")]
    assert len(circled) == 1 and place["sd"] < circled[0] < place["frontier"], captions
    note = [(i, text) for i, text in captions if "(not converged) in the legend" in text]
    assert len(note) == 1 and note[0][0] > place["step"] and "Circled" not in note[0][1], captions
    assert note[0][1].startswith("DA-MCMC (not converged) in the legend: its run at ε = 0.215 has not converged")
    step = _chart(at, keys.STEP_CHART)
    assert any(t.get("name") == "DA-MCMC (not converged)" for t in step["data"])
    assert not any("circle-x" in str((t.get("marker") or {}).get("symbol")) for t in step["data"])


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
