"""What ε protects when the attacked pair's shift d is not the sensitivity Δ the noise is calibrated to.

F5 (d > Δ): an OpenDP release is calibrated to its add/remove-one sensitivity (a sum of values in [lo, hi]: Δ =
max(|lo|, |hi|); a histogram: Δ = 1), but with n known the attack replaces one record, which moves the sum by up to
hi - lo (the histogram by e_j - e_i). The guarantee drawn and said is then the mechanism's at d.
F2 (d < Δ): linear_regression's default L2 Δ = √24 (p = 2) bounds a change no record makes (the largest is 4); the
Gaussian's own curve is at μ = d/σ, where the best attack lies.
"""
from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import special, stats

import engine
from app_support import open_app
from engine.cli.risk import summary_line
from engine.mechanisms.budgets import analytic_gaussian_delta
from engine.protection.tradeoff import gdp_tradeoff, zcdp_delta
from figures import protection as pf
from ui import protection_text as pt

NKS = {"name": "normal_known_sd", "n": 20, "sd": 1.0, "lo": -3.0, "hi": 3.0}
DM = {"name": "dirichlet_multinomial", "n": 20, "alpha": [1.0, 1.0, 1.0]}
LR = {"name": "linear_regression", "n": 20}


def _risk(model, table, s_dp, key="release"):
    return engine.risk({"seed": 1, "model": model, key: table, "data": {"s_dp": list(s_dp)}}, realistic=False)


def _opendp(mechanism, domain, scale=3.0):
    return {"library": "opendp", "mechanism": mechanism, "domain": domain, "scale": scale}


@pytest.fixture(scope="module")
def opendp_sum():
    return _risk(NKS, _opendp("laplace", "float"), [1.0])


def test_an_opendp_laplace_sum_with_n_known_is_2_dp_for_one_record_replaced(opendp_sum):
    """Laplace, scale 3, Δ = max(|-3|, |3|) = 3: OpenDP states ε = 1 for a person added or removed; the record -3
    replaced by +3 moves the sum by 6 = 2Δ, so the pair is 6/3 = 2-DP, and someone who knows everyone else reaches
    e²/(1+e²) = 88.1%. risk.json said ε = 1 and drew its curve, which the attack crossed by up to 0.39."""
    r = opendp_sum
    assert r["neighbours"]["shift"] == [6.0]
    assert r["epsilon"] == 2.0 and r["guarantee"]["kind"] == "pure" and r["guarantee"]["epsilon"] == 2.0
    assert r["bound"]["kind"] == "epsilon_dp" and r["bound"]["epsilon"] == 2.0
    assert r["informed_adversary"]["max"] == pytest.approx(math.exp(2) / (1 + math.exp(2)), abs=1e-12)
    # the library's own statement stays, with the pair and why
    assert r["guarantee"]["stated"] == {"kind": "pure", "epsilon": 1.0}
    assert r["guarantee"]["pair"] == {"shift": 6.0, "sensitivity": 3.0, "ratio": 2.0, "norm": None,
                                      "statistic": "the sum"}
    assert r["guarantee"]["note"] == (
        "stated as pure 1-DP for a change of up to Δ = 3 (such as adding or removing one person); with n known, "
        "replacing one person's record moves the sum by up to 6 = 2Δ, so this release is pure 2-DP for that")
    # the contract's keys are all still there
    assert {"epsilon", "tradeoff", "bound", "informed_adversary", "power_at_5pct", "advantage_at_5pct",
            "neighbours"} <= set(r)
    json.dumps(r, allow_nan=False)


def test_the_command_line_says_the_pairs_budget_and_why(opendp_sum):
    line = summary_line(opendp_sum)
    assert line.startswith("Laplace noise, scale b = 3; pure 1-DP (sensitivity 3); with n known, replacing one "
                           "person's record moves the sum by up to 6 = 2Δ, so this release is pure 2-DP for that: ")
    assert "to at most 88.1%" in line


def test_the_sentence_and_the_legend_state_the_pairs_budget_and_why(opendp_sum):
    assert pt.protection_sentence(opendp_sum).startswith(
        "At ε = 2 (the release states ε = 1 for a change of up to Δ = 3, such as adding or removing one person, but "
        "with n known, replacing one person's record moves the sum by up to 6 = 2Δ), someone who knew everyone else "
        "could move a 50% guess about one person to at most 88%; ")
    assert pf.bound_name(opendp_sum) == ("what ε-DP allows (ε = 2<br>for one record replaced, a change of 6 = 2Δ;"
                                         "<br>stated ε = 1 at Δ = 3)")


def test_an_opendp_histogram_and_gaussian_take_the_pairs_budget():
    """A histogram under OpenDP's integer Laplace, scale 3 (Δ = 1, ε = 1/3 stated): one record moved from cell 0 to
    cell 1 shifts two counts, |d|_1 = 2, so 2/3-DP and a ceiling e^{2/3}/(1+e^{2/3}). OpenDP's float Gaussian, σ = 3
    (ρ = 0.5 stated): the sum moves by 6, so ρ = 0.5·2² = 2 and μ = 6/3 = 2, the attack's own μ."""
    h = _risk(DM, _opendp("laplace", "int"), [6.0, 7.0, 7.0])
    assert h["epsilon"] == pytest.approx(2 / 3, abs=1e-15) and h["guarantee"]["stated"]["epsilon"] == 1 / 3
    assert h["informed_adversary"]["max"] == pytest.approx(special.expit(2 / 3), abs=1e-12)
    assert h["guarantee"]["pair"]["norm"] == "L1" and h["guarantee"]["pair"]["shift"] == 2.0
    g = _risk(NKS, _opendp("gaussian", "float"), [1.0])
    assert g["guarantee"]["kind"] == "zcdp" and g["guarantee"]["rho"] == pytest.approx(2.0, abs=1e-15)
    assert g["guarantee"]["stated"] == {"kind": "zcdp", "rho": 0.5}
    assert g["bound"]["mu"] == pytest.approx(2.0, abs=1e-15) and g["stated_bound"]["rho"] == pytest.approx(2.0)
    assert g["mechanism_curve"]["mu"] == pytest.approx(2.0, abs=1e-15)
    alpha = np.asarray(g["tradeoff"]["alpha"])
    np.testing.assert_allclose(g["tradeoff"]["beta"], gdp_tradeoff(alpha, 2.0), atol=1e-14)
    assert pt.budget_clause(g) == "At ρ = 2"


def test_a_gaussian_stated_in_epsilon_delta_keeps_its_delta_at_the_pairs_shift():
    """diffprivlib's GaussianAnalytic at sensitivity 1 on records in [-3, 3] (one record replaced moves the sum by
    6): the pair is (ε', δ)-DP with ε' the analytic Gaussian's at sensitivity 6 (Balle & Wang 2018, Thm 8), its
    δ(ε') equal to the stated δ; μ = 6/σ."""
    table = {"library": "diffprivlib", "mechanism": "GaussianAnalytic", "epsilon": 1.0, "delta": 1e-5,
             "sensitivity": 1}
    problem = engine.prepare({"seed": 1, "model": NKS, "release": table, "data": {"s_dp": [1.0]}})
    r = engine.risk(problem, realistic=False)
    sigma = problem.mechanism.scale
    g = r["guarantee"]
    assert g["kind"] == "approx" and g["delta"] == 1e-5 and g["epsilon"] > 1.0
    assert analytic_gaussian_delta(g["epsilon"], sigma, 6.0) == pytest.approx(1e-5, rel=1e-6)
    assert g["mu"] == pytest.approx(6.0 / sigma, abs=1e-15) and r["mechanism_curve"]["mu"] == g["mu"]
    assert r["stated_bound"]["epsilon"] == g["epsilon"]
    # the discrete Gaussian stated in (ε, δ): ρ at the shift, ε the smallest whose zCDP δ(ε) is the stated δ
    table = {"library": "diffprivlib", "mechanism": "GaussianDiscrete", "epsilon": 1.0, "delta": 1e-5}
    d = _risk(DM, table, [6.0, 7.0, 7.0])["guarantee"]
    assert d["rho"] == pytest.approx(2 * d["stated"]["rho"], rel=1e-12)  # |d|_2² = 2 against Δ = 1
    assert zcdp_delta(d["rho"], d["epsilon"]) <= 1e-5 < zcdp_delta(d["rho"], d["epsilon"] - 1e-6)


SCENARIOS = {
    "opendp-laplace-sum": (NKS, _opendp("laplace", "float"), [1.0], "release", True),
    "opendp-laplace-lattice-histogram": (DM, {**_opendp("laplace", "float"), "k": -2}, [6.0, 7.0, 7.0], "release",
                                         True),
    "opendp-laplace-histogram": (DM, _opendp("laplace", "int"), [6.0, 7.0, 7.0], "release", True),
    "opendp-gaussian-sum": (NKS, _opendp("gaussian", "float"), [1.0], "release", True),
    "opendp-gaussian-histogram": (DM, _opendp("gaussian", "int", 2.0), [6.0, 7.0, 7.0], "release", True),
    "opendp-gaussian-lattice-histogram": (DM, {**_opendp("gaussian", "float"), "k": -1}, [6.0, 7.0, 7.0], "release",
                                          True),
    "diffprivlib-laplace-delta": (NKS, {"library": "diffprivlib", "mechanism": "Laplace", "epsilon": 1.0,
                                        "delta": 0.01, "sensitivity": 3}, [1.0], "release", True),
    "diffprivlib-gaussian": (NKS, {"library": "diffprivlib", "mechanism": "Gaussian", "epsilon": 1.0,
                                   "delta": 1e-5, "sensitivity": 3}, [1.0], "release", True),
    "diffprivlib-bounded-domain": (NKS, {"library": "diffprivlib", "mechanism": "LaplaceBoundedDomain",
                                         "epsilon": 1.0, "sensitivity": 3, "lower": -60, "upper": 60}, [1.0],
                                   "release", True),
    "lab-laplace": (NKS, {"name": "laplace", "epsilon": 1.0}, [1.0], "mechanism", False),
    "lab-gaussian-rho": (NKS, {"name": "gaussian", "rho": 0.5}, [1.0], "mechanism", False),
    "lab-gaussian-epsilon-delta": (NKS, {"name": "gaussian", "epsilon": 1.0, "delta": 1e-5}, [1.0], "mechanism",
                                   False),
    "lab-discrete-laplace-histogram": (DM, {"name": "discrete_laplace", "epsilon": 1.0}, [6.0, 7.0, 7.0],
                                       "mechanism", False),
}


@pytest.mark.parametrize("name", SCENARIOS)
def test_the_attack_never_lies_below_the_guarantee_drawn(name):
    """The page draws ``stated_bound`` (else ``bound``) as what the guarantee allows and says the attack's curve
    never goes below it; risk.json's ``bound`` is a guarantee too, and the Gaussian's own curve is the attack's. For
    the lab's mechanisms (calibrated to the replace-one Δ) nothing changes: the guarantee is the stated one."""
    model, table, s_dp, key, wider = SCENARIOS[name]
    r = _risk(model, table, s_dp, key)
    beta, err = np.asarray(r["tradeoff"]["beta"]), r["tradeoff"]["max_error"] or 0.0
    for curve in (pf.guarantee_curve(r), r["bound"]):
        assert (beta - np.asarray(curve["beta"])).min() >= -1e-12 - err, (name, curve["kind"])
    if r.get("mechanism_curve"):
        np.testing.assert_allclose(beta, r["mechanism_curve"]["beta"], atol=1e-12)
    if r["epsilon"] is not None and r["informed_adversary"]["max"] is not None:
        assert r["informed_adversary"]["max"] <= special.expit(r["epsilon"]) + 1e-12
    assert ("stated" in r["guarantee"]) == wider
    if not wider:
        mech = engine.prepare({"seed": 1, "model": model, key: table, "data": {"s_dp": s_dp}}).mechanism
        assert {k: v for k, v in r["guarantee"].items()} == pytest.approx(dict(mech.guarantee))
        assert "replacing one person's record" not in r["description"]


def test_linear_regression_gaussian_own_curve_is_at_the_largest_change_a_record_makes():
    """p = 2, ρ = 0.5: Δ₂ = √24 and σ = Δ/√(2ρ) = √24, but the largest L2 change one record makes is 4, so the best
    attack is μ = 4/√24 = 0.816-GDP (power 1 − Φ(z₀.₉₅ − μ) = 20.4%). The own curve was drawn at μ = Δ/σ = 1 and
    said "the best attack lies on it"; it is now at the pair's μ, and the stated ρ-zCDP (at Δ) stays the dashed
    bound, a valid looser one."""
    r = _risk(LR, {"name": "gaussian", "rho": 0.5}, [0.0] * 9, "mechanism")
    mu = 4.0 / math.sqrt(24.0)
    own = r["mechanism_curve"]
    assert own["mu"] == pytest.approx(mu, abs=1e-12) and own["rho"] == pytest.approx(mu * mu / 2, abs=1e-12)
    assert own["shift"] == pytest.approx(4.0, abs=1e-12) and own["sensitivity"] == pytest.approx(math.sqrt(24.0))
    assert r["power_at_5pct"] == pytest.approx(1 - stats.norm.cdf(stats.norm.isf(0.05) - mu), abs=1e-12)
    np.testing.assert_allclose(r["tradeoff"]["beta"], own["beta"], atol=1e-14)
    assert r["guarantee"] == {"kind": "zcdp", "rho": 0.5} and r["stated_bound"]["rho"] == 0.5
    name = pf.mechanism_curve_name(r)
    assert "μ = d/σ = 0.8165" in name and "d = 4, the largest change one record" in name and "Δ = 4.899" in name
    # the (ε, δ) form: the same own curve, the statement's (ε, δ) curve dashed
    r = _risk(LR, {"name": "gaussian", "epsilon": 1.0, "delta": 1e-5}, [0.0] * 9, "mechanism")
    sigma = math.sqrt(24.0) / r["bound"]["mu"]
    assert r["mechanism_curve"]["mu"] == pytest.approx(4.0 / sigma, abs=1e-12)
    np.testing.assert_allclose(r["tradeoff"]["beta"], r["mechanism_curve"]["beta"], atol=1e-14)
    assert "ρ = d²/(2σ²)" in pf.mechanism_curve_name(r)


def test_the_page_says_the_pairs_budget_and_why():
    """What it protects with model=normal_known_sd&rel=opendp&rel_mech=laplace&rel.domain=float&rel.scale=3: the
    sentence said "At ε = 1, … at most 88%" and the legend "what ε-DP allows (ε = 1)" over an attack 2-DP."""
    at = open_app("pages/protection.py", {"model": "normal_known_sd", "rel": "opendp", "rel_mech": "laplace",
                                          "rel.domain": "float", "rel.scale": "3", "methods": "naive"}, 120)
    assert not at.exception, [e.value for e in at.exception]
    sentence = next(m.value for m in at.markdown if m.value.startswith("##### "))
    assert sentence.startswith(
        "##### At ε = 2 (the release states ε = 1 for a change of up to Δ = 3, such as adding or removing one person, "
        "but with n known, replacing one person's record moves the sum by up to 6 = 2Δ), someone who knew everyone "
        "else could move a 50% guess about one person to at most 88%.\n\n")
    names = [t.get("name") for c in at.get("plotly_chart") for t in json.loads(c.proto.spec)["data"]]
    assert "what ε-DP allows (ε = 2<br>for one record replaced, a change of 6 = 2Δ;<br>stated ε = 1 at Δ = 3)" in names
    texts = " ".join(m.value for e in at.expander if e.label == "What am I looking at?" for m in e.markdown)
    assert ("The dashed curve is at ε = 2, the budget that covers one person's record replaced, not the ε = 1 stated "
            "for a change of up to Δ = 3") in texts
    # the sidebar's mapping sentence says the same pair's budget in numbers (it said "(d/Δ)·ε-DP")
    captions = " ".join(c.value for c in at.sidebar.caption)
    assert ("(adding or removing a person; with n known, replacing one, which moves the statistic by up to d = 6 = 2Δ, "
            "is 2-DP, as What it protects states)") in captions


def test_the_pages_line_names_the_noise_on_an_unknown_n():
    """Round-trip audit s23: with n unknown and released with noise, the line over the page said "n = 39 · Laplace
    noise, …; pure 0.3-DP" over a sentence "At ε = 0.8": the size's 0.5 was named nowhere above it."""
    from dataclasses import replace

    from ui.params.query import to_query
    from ui.presets import DEMO
    s = replace(DEMO, sample_size="unknown", n_prior="poisson", n_prior_mean=40.0, n_mechanism="laplace",
                n_budget_form="epsilon", n_epsilon=0.5, methods=("naive",))
    assert s.size_released
    at = open_app("pages/protection.py", to_query(s), 120)
    assert not at.exception, [e.value for e in at.exception]
    line = next(m.value for m in at.markdown if m.value.startswith("**Beta-binomial"))
    assert "pure 0.3-DP (sensitivity 1); size n released with Laplace noise, scale b = 2; pure 0.5-DP" in line, line
    sentence = next(m.value for m in at.markdown if m.value.startswith("##### "))
    assert sentence.startswith("##### At ε = 0.8"), sentence
