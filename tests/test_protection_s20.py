"""What it protects, after two audits: the Gaussian preset's blurb against the engine, the ρ-zCDP curve apart from
the Gaussian's own μ-GDP curve, shares rounded the way their statement needs, the pair's note in the sidebar's
words, what unbounded records get, and the power label clear of the curves."""
from __future__ import annotations

import re

import numpy as np
import pytest
from scipy import special

import engine
from app_support import open_app
from engine.cli.risk import summary_line
from engine.protection import GaussianExperiment
from figures import protection as pf
from ui import presets
from ui import protection_text as pt

BB = {"name": "beta_binomial", "n": 100, "a": 1.0, "b": 1.0}
#: the audit's example file: a column of counts 0-8, 300 rows
COUNTS = (np.arange(300) % 9).tolist()


def _risk(mechanism, model=BB, data=None, realistic=False):
    return engine.risk({"seed": 1, "model": model, "mechanism": mechanism, "data": data or {"s_dp": [30.0]}},
                       realistic=realistic)


def _preset(name):
    return next(p for p in presets.EPSILON_ONE if p.name == name)


# --------------------------------------------------------------------------- 1: the Gaussian preset's blurb
def test_the_gaussian_preset_states_the_engines_figures():
    """It said "large moves are rarer than under Laplace noise of the same spread": at ρ = 0.5 (σ = 1) the best
    attack catches 26% at 5% false positives against Laplace ε = 1's 14%, the belief passes Laplace's 73% ceiling
    in 31% of releases, and Laplace b = 1 has sd √2, not 1. Every figure the blurb states is checked here."""
    gauss, lap = _preset("eps1_gaussian"), _preset("eps1_laplace")
    assert (gauss.scenario.mechanism, gauss.scenario.rho, gauss.scenario.n) == ("gaussian", 0.5, 100)
    assert (lap.scenario.mechanism, lap.scenario.epsilon, lap.scenario.n) == ("laplace", 1.0, 100)
    g = _risk({"name": "gaussian", "rho": 0.5})
    laplace = _risk({"name": "laplace", "epsilon": 1.0})
    blurb = gauss.blurb
    assert "rarer" not in blurb and "same spread" not in blurb
    assert "no firm ceiling" in blurb and "stronger attack than Laplace noise at ε = 1" in blurb
    assert f"detects it {pt.percent(g['power_at_5pct'])} of the time" in blurb
    assert f"({pt.percent(laplace['power_at_5pct'])} under Laplace)" in blurb
    assert g["power_at_5pct"] > laplace["power_at_5pct"]
    ceiling = laplace["informed_adversary"]["max"]
    own = GaussianExperiment(g["mechanism_curve"]["mu"])  # the engine's law of the Gaussian's belief
    above = float(own.belief_histogram([ceiling, 1.0])[0])
    assert f"in {pt.percent(above)} of releases someone who knew the other 99 answers ends more than " \
           f"{pt.percent(ceiling)} sure" in blurb
    past = float(own.belief_histogram([0.95, 1.0])[0])
    assert f"past 95% in {pt.percent(past)} of releases" in blurb


# --------------------------------------------------------------------------- 2: what ρ-zCDP allows
def test_a_gaussian_stated_by_rho_draws_what_rho_zcdp_allows_and_its_own_curve_apart():
    """The dashed "what ρ-zCDP allows" was the μ-GDP curve, the Gaussian's exact curve: μ-GDP implies μ²/2-zCDP, not
    the reverse. Now ``stated_bound`` is the zCDP curve (Canonne–Kamath–Steinke), ``mechanism_curve`` the μ-GDP
    curve the attack lies on; risk.json's ``bound`` keeps its meaning (the noise's μ-GDP curve)."""
    r = _risk({"name": "gaussian", "rho": 0.5})
    alpha = np.asarray(r["bound"]["alpha"])
    assert r["bound"]["kind"] == "gdp" and r["bound"]["mu"] == pytest.approx(1.0)
    stated, own = r["stated_bound"], r["mechanism_curve"]
    assert stated["kind"] == "zcdp" and stated["rho"] == pytest.approx(0.5)
    np.testing.assert_allclose(stated["beta"], engine.protection.zcdp_tradeoff(alpha, 0.5))
    np.testing.assert_allclose(own["beta"], engine.protection.gdp_tradeoff(alpha, 1.0))
    np.testing.assert_allclose(r["tradeoff"]["beta"], own["beta"], atol=1e-12)  # the attack on its own curve
    gap = np.asarray(own["beta"]) - np.asarray(stated["beta"])
    assert gap.min() > -1e-9 and gap.max() > 0.1  # ρ-zCDP allows more than this Gaussian does
    tr = {t["meta"]["kind"]: t for t in pf.tradeoff_figure(r).to_dict()["data"]}
    np.testing.assert_allclose(tr["bound"]["y"], stated["beta"])
    assert tr["bound"]["name"] == "what ρ-zCDP allows (ρ = Δ²/(2σ²) = 0.5)"
    assert "exactly<br>μ-GDP, μ = Δ/σ = 1" in tr["mechanism_curve"]["name"]
    assert "Gaussian DP" not in tr["bound"]["name"]


def test_two_gaussians_stated_by_rho_compose_to_the_zcdp_curve_and_their_own_mu():
    """An unknown n, statistic and size both Gaussian stated by ρ: the dashed curve is ρ_s + ρ_n-zCDP's, the dotted
    one the joint release's μ = sqrt(μ_s² + μ_n²)."""
    spec = {"seed": 1, "model": {"name": "beta_binomial", "n_prior": {"name": "poisson", "mean": 20}},
            "mechanism": {"name": "gaussian", "rho": 0.5}, "n_mechanism": {"name": "gaussian", "rho": 0.5},
            "data": {"s_dp": [6.0], "n_dp": 20.0}}
    r = engine.risk(spec, realistic=False)
    assert r["stated_bound"]["kind"] == "zcdp" and r["stated_bound"]["rho"] == pytest.approx(1.0)
    assert r["mechanism_curve"]["mu"] == pytest.approx(2 ** 0.5)
    assert pf.bound_name(r) == "what ρ-zCDP allows (ρ = 1)"
    assert pf.mechanism_curve_name(r).startswith("the two Gaussians' (statistic and size) own curve")


# --------------------------------------------------------------------------- 3: rounding that keeps bounds true
@pytest.mark.parametrize("p, least, most", [(0.8952, "89.5%", "90%"), (0.8948, "89%", "89.5%"), (0.73, "73%", "73%"),
                                            (0.5896, "58.9%", "59%"), (0.2604, "26%", "26.1%"),
                                            (0.9961, "99.6%", "99.7%")])
def test_a_share_said_as_at_least_rounds_down_and_at_most_up(p, least, most):
    assert pf.percent_at_least(p) == least and pf.percent_at_most(p) == most
    assert float(least.rstrip("%")) <= 100 * p + 1e-9 and float(most.rstrip("%")) >= 100 * p - 1e-9


def test_the_audited_gaussian_says_89_5_percent_or_more_not_90():
    """/protection?model=beta_binomial&n=500&mech=gaussian&budget=rho&rho=0.5: q95 = logistic(0.5 + 1.645) = 0.8952
    read "90% or more in 1 release in 20"."""
    r = _risk({"name": "gaussian", "rho": 0.5}, model=dict(BB, n=500), data={"s_dp": [150.0]})
    q95 = r["informed_adversary"]["q95"]
    assert q95 == pytest.approx(special.expit(0.5 + 1.6448536269514722), rel=1e-9)
    first = pt.clauses(r)[0]
    assert "to 89.5% or more in 1 release in 20" in first and "90% or more" not in first
    assert pf.belief_line_names(r["informed_adversary"])["q95"] == "95% of releases at or below (90%)"


# --------------------------------------------------------------------------- 4 and 5: unbounded records
def test_unbounded_records_say_whom_the_guarantee_covers_and_what_the_largest_record_gets():
    """Unclamped Poisson-gamma, Laplace at ε = 0.3 calibrated to Δ = 1, counts 0-8: "At ε = 0.3, … at most 57%" read
    as 0.3-DP for everyone. The record of 8 moves the sum by 8: 2.4-DP for that person, up to 91.7%."""
    r = _risk({"name": "laplace", "epsilon": 0.3}, model={"name": "poisson_gamma", "n": 300},
              data={"records": COUNTS}, realistic=True)
    u = r["unbounded_records"]
    assert (u["sensitivity"], u["kind"], u["scale"], u["largest_record"]) == (1.0, "pure", pytest.approx(0.3), 8)
    assert u["epsilon"] == pytest.approx(2.4, rel=1e-9) and u["max"] == pytest.approx(special.expit(2.4), rel=1e-9)
    first = pt.clauses(r)[0]
    assert first.startswith("At ε = 0.3, for a person whose record moves the sum by at most 1, someone who knew ")
    sentence = pt.protection_sentence(r)
    assert "a record of size r gets (r/1)·ε-DP" in sentence
    assert "your records reach 8: for that person this release is 2.4-DP" in sentence
    assert f"can move to at most {pf.percent_at_most(special.expit(2.4))}" in sentence
    assert f"tick “{pt.CLAMP_LABEL}” in the sidebar" in sentence
    # the pair's note in the sidebar's words, no spec key
    note = pt.neighbours_note(r)
    assert "model.upper" not in note and pt.CLAMP_LABEL in note and "1 apart" in note
    assert "model.upper" in r["neighbours"]["note"]  # risk.json keeps the spec's key
    # the command line's sentence (its description comes first)
    line = summary_line(r)
    assert "pure 0.3-DP (sensitivity 1); only for records that move the sum by at most 1" in line
    assert "the largest record here, 8, gets pure 2.4-DP" in line
    # the sidebar's checkbox is the one named: one label, which the checkbox and every sentence read
    from pathlib import Path

    from ui.params import messages
    assert pt.CLAMP_LABEL is messages.CLAMP_LABEL
    assert "st.checkbox(CLAMP_LABEL," in Path("ui/sidebar/model.py").read_text(encoding="utf-8")


def test_unbounded_gaussian_scales_mu_and_a_bare_release_still_says_whom_it_covers():
    g = _risk({"name": "gaussian", "rho": 0.5}, model={"name": "poisson_gamma", "n": 300}, data={"records": COUNTS})
    u = g["unbounded_records"]
    assert u["kind"] == "gdp" and u["mu"] == pytest.approx(8.0) and u["rho"] == pytest.approx(32.0)
    assert u["q95"] == pytest.approx(GaussianExperiment(8.0).belief_quantile([0.95])[0])
    sentence = pt.protection_sentence(g)
    assert "(r/1)·μ Gaussian DP" in sentence and "this release is μ = 8 Gaussian DP" in sentence
    assert "past 99.9% in at least 1 release in 20" in sentence and "100.0%" not in sentence
    bare = _risk({"name": "laplace", "epsilon": 0.3}, model={"name": "poisson_gamma", "n": 300},
                 data={"s_dp": [1200.0]})
    assert bare["unbounded_records"]["largest_record"] is None
    said = pt.protection_sentence(bare)
    assert "for a person whose record moves the sum by at most 1" in said and "your records" not in said
    assert "a record of size r gets (r/1)·ε-DP" in said
    clamped = _risk({"name": "laplace", "epsilon": 0.3}, model={"name": "poisson_gamma", "n": 300, "upper": 8},
                    data={"records": COUNTS})
    assert "unbounded_records" not in clamped and "only for records" not in clamped["description"]
    assert pt.covered_clause(clamped) is None and "for a person whose" not in pt.protection_sentence(clamped)


def test_the_page_says_it_for_unclamped_simulated_counts():
    at = open_app("pages/protection.py", {"model": "poisson_gamma", "n": "300", "mech": "laplace",
                                          "budget": "epsilon", "epsilon": "0.3", "data": "simulate", "seed": "7",
                                          "methods": "naive"}, 120)
    assert not at.exception, [e.value for e in at.exception]
    sentence = next(m.value for m in at.markdown if m.value.startswith("##### "))
    assert sentence.startswith("##### At ε = 0.3, for a person whose record moves the sum by at most 1, ")
    top = re.search(r"your records reach (\d+): for that person this release is ([\d.]+)-DP", sentence)
    assert top and float(top.group(2)) == pytest.approx(0.3 * int(top.group(1)), rel=1e-3)
    captions = " ".join(c.value for c in at.caption)
    assert "model.upper" not in captions and pt.CLAMP_LABEL in captions


# --------------------------------------------------------------------------- the power label
@pytest.mark.parametrize("mechanism", [{"name": "laplace", "epsilon": 1.0}, {"name": "gaussian", "rho": 0.5},
                                       {"name": "gaussian", "epsilon": 1.0, "delta": 1e-5},
                                       {"name": "laplace", "epsilon": 0.1}, {"name": "laplace", "epsilon": 8.0}])
def test_the_power_label_crosses_no_curve(mechanism):
    """"power 14%" sat "top right" of its point, across the diagonal and the guarantee's dashes."""
    r = _risk(mechanism)
    fig = pf.tradeoff_figure(r).to_dict()
    note = next(a for a in fig["layout"]["annotations"] if a.get("name") == "power_at_5pct")
    label = f"power {pt.percent(r['power_at_5pct'])}"
    x0, x1, y0, y1 = pf.power_label_box(r, label)
    assert note["text"] == label
    grid = np.linspace(x0, x1, 200)
    curves = [t for t in fig["data"] if t["meta"]["kind"] in ("guess", "tradeoff", "bound", "mechanism_curve")]
    heights = [np.interp(grid, np.asarray(t["x"], float), np.asarray(t["y"], float)) for t in curves]
    below = all(np.all(h > y1) for h in heights)
    above = all(np.all(h < y0) for h in heights)
    assert 0.0 <= y0 < y1 <= 1.0 and (below or above)
    if note["showarrow"]:  # the text's corner at the box, the arrow to the point
        assert below and (note["ax"], note["ay"]) == (x0, y1) and note["x"] == 0.05
    else:
        assert (note["x"], note["y"]) == (x0, y1)


def test_an_outlying_record_is_certain_to_be_told_apart_without_an_overflow_or_a_20_gb_table(tmp_path):
    """visits_huge.csv (records 1, 2, 99,999,999 and 3; no clamp; Laplace ε = 1): the largest record's pair overflowed
    the binned Laplace law, and the realistic adversary's table of one record's values (25 million values times the
    mixture's components) was killed for its memory. The pair is certain: ε = 10^8, belief and power 1."""
    import warnings

    from engine.protection.report import risk

    (tmp_path / "v.csv").write_text("visits\n1\n2\n99999999\n3\n")
    spec = {"seed": 7, "model": {"name": "poisson_gamma"}, "mechanism": {"name": "laplace", "epsilon": 1.0},
            "data": {"csv": str(tmp_path / "v.csv")}}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = risk(spec)
    u = out["unbounded_records"]
    assert (u["largest_record"], u["epsilon"], u["max"], u["q95"], u["power_at_5pct"]) == (99999999, 1e8 - 1, 1.0,
                                                                                             1.0, 1.0)
    assert "the largest record here, 99,999,999, gets pure 1e+08-DP" in out["description"]
    assert out["realistic_adversary"]["available"] is False
    assert "25,020,594" in out["realistic_adversary"]["reason"]
