"""What it protects: the figures (through ``fig.to_dict()``), the computed sentence clause by clause
against the numbers, and the page in AppTest."""
from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

import engine
from app_support import assert_charts_fit_a_phone, open_app
from figures import protection as pf
from figures.frontier import frontier_figure
from ui import protection_text as pt

BB = {"name": "beta_binomial", "n": 20, "a": 1.0, "b": 1.0}


def _risk(mechanism, model=BB, s_dp=(6.0,)):
    return engine.risk({"seed": 1, "model": model, "mechanism": mechanism, "data": {"s_dp": list(s_dp)}})


@pytest.fixture(scope="module")
def laplace():
    return _risk({"name": "laplace", "epsilon": 1.0})


@pytest.fixture(scope="module")
def gaussian():
    return _risk({"name": "gaussian", "rho": 0.5})


def _traces(fig):
    return {t["meta"]["kind"]: t for t in fig.to_dict()["data"]}


# --------------------------------------------------------------------------- figures
def test_tradeoff_figure_draws_the_curve_the_bound_the_diagonal_and_the_power(laplace):
    tr = _traces(pf.tradeoff_figure(laplace))
    assert set(tr) == {"guess", "bound", "tradeoff", "power_at_5pct"}
    np.testing.assert_array_equal(tr["tradeoff"]["y"], laplace["tradeoff"]["beta"])
    np.testing.assert_array_equal(tr["bound"]["x"], laplace["bound"]["alpha"])
    np.testing.assert_array_equal(tr["bound"]["y"], laplace["bound"]["beta"])
    assert "ε-DP" in tr["bound"]["name"] and "ε = 1" in tr["bound"]["name"]
    assert list(tr["guess"]["x"]) == [0, 1] and list(tr["guess"]["y"]) == [1, 0]
    assert tr["power_at_5pct"]["x"][0] == 0.05
    assert tr["power_at_5pct"]["y"][0] == pytest.approx(1 - laplace["power_at_5pct"])
    assert tr["power_at_5pct"]["text"][0] == f"power {pt.percent(laplace['power_at_5pct'])}"
    # the guarantee's dashes over the attack's line (Laplace reaches the bound), the legend in reading order
    order = [t["meta"]["kind"] for t in pf.tradeoff_figure(laplace).to_dict()["data"]]
    assert order.index("bound") > order.index("tradeoff")
    assert sorted(tr, key=lambda k: tr[k]["legendrank"]) == ["guess", "bound", "tradeoff", "power_at_5pct"]


def test_tradeoff_figure_names_the_bound_in_the_budget_the_sentence_states(gaussian):
    """With mech=gaussian&budget=rho&rho=0.5 the sentence said "At ρ = 0.5" and the sidebar zCDP, while the legend
    said "what μ-GDP allows (μ = 1)", μ and GDP defined nowhere. Then it read "what ρ-zCDP allows (ρ = Δ²/(2σ²) =
    0.5, …; exactly μ = Δ/σ = 1 Gaussian DP)" on the μ-GDP curve, which is the Gaussian's own and not what ρ-zCDP
    allows (μ-GDP implies μ²/2-zCDP, not the reverse): the dashed curve is now the one every ρ-zCDP mechanism stays
    above, and the Gaussian's μ-GDP curve is drawn apart, named as its own."""
    tr = _traces(pf.tradeoff_figure(gaussian))
    assert tr["bound"]["name"] == "what ρ-zCDP allows (ρ = Δ²/(2σ²) = 0.5)"
    alpha = np.asarray(gaussian["bound"]["alpha"])
    np.testing.assert_allclose(tr["bound"]["y"], engine.protection.zcdp_tradeoff(alpha, 0.5))
    assert tr["mechanism_curve"]["name"] == ("this Gaussian's own curve: exactly<br>μ-GDP, μ = Δ/σ = 1<br>(the best "
                                             "attack lies on it)")
    np.testing.assert_allclose(tr["mechanism_curve"]["y"], engine.protection.gdp_tradeoff(alpha, 1.0))
    assert pt.budget_clause(gaussian) == "At ρ = 0.5"
    approx = {**{k: v for k, v in gaussian.items() if k != "stated_bound"},  # diffprivlib Laplace, δ > 0
              "bound": {"kind": "epsilon_dp", "epsilon": 1.0, "delta": 1e-5}}
    assert pf.bound_name(approx) == "what (ε, δ)-DP allows (ε = 1, δ = 1e-05)"
    discrete = _risk({"name": "discrete_gaussian", "rho": 0.5})
    assert pf.bound_name(discrete) == "what ρ-zCDP allows (ρ = Δ²/(2σ²) = 0.5)"
    from ui.glossary import GLOSSARY
    assert "μ-GDP" in GLOSSARY["gdp"] and "Gaussian" in GLOSSARY["gdp"]


@pytest.mark.parametrize("mechanism, table", [({"name": "gaussian", "epsilon": 1.0, "delta": 1e-5}, "mechanism"),
                                              ({"library": "diffprivlib", "mechanism": "Gaussian", "epsilon": 1.0,
                                                "delta": 1e-5, "sensitivity": 1}, "release"),
                                              ({"library": "diffprivlib", "mechanism": "GaussianAnalytic",
                                                "epsilon": 1.0, "delta": 1e-5, "sensitivity": 1}, "release")])
def test_a_gaussian_stated_in_epsilon_delta_is_drawn_against_that_statement(mechanism, table):
    """diffprivlib's Gaussian at (ε, δ) = (1, 1e-5): the sentence said "(ε, δ) = (1, 1e-05)" while the dashed curve,
    "what the privacy guarantee promises", was "what ρ-zCDP allows (ρ = 0.0213)", a ρ the curator never set and the
    page never explained (the lab's Gaussian in its (ε, δ) form drew μ-GDP as "the guarantee"). The dashed curve is
    now the stated (ε, δ)-DP curve, max(0, 1 - δ - e^ε α, e^-ε (1 - δ - α)); the Gaussian's own μ-GDP curve
    (μ = Δ/σ) is drawn as its own, dotted, named by its σ with its ρ = Δ²/(2σ²) said in words."""
    problem = engine.prepare({"seed": 1, "model": BB, table: mechanism, "data": {"s_dp": [6.0]}})
    r = engine.risk(problem, realistic=False)
    stated = r["stated_bound"]  # risk.json's "bound" keeps its meaning (the noise's μ-GDP or ρ-zCDP curve)
    alpha = np.asarray(stated["alpha"])
    assert stated["kind"] == "epsilon_dp" and stated["delta"] == 1e-5 and r["bound"]["kind"] in ("gdp", "zcdp")
    np.testing.assert_allclose(stated["beta"], np.maximum.reduce(
        [np.zeros_like(alpha), 1 - 1e-5 - math.e * alpha, (1 - 1e-5 - alpha) / math.e]), atol=1e-12)
    mu = 1.0 / problem.mechanism.scale
    own = r["mechanism_curve"]
    assert own["mu"] == pytest.approx(mu, rel=1e-12) and own["rho"] == pytest.approx(mu * mu / 2, rel=1e-12)
    np.testing.assert_allclose(own["beta"], engine.protection.gdp_tradeoff(alpha, mu), atol=1e-14)
    beta = np.asarray(r["tradeoff"]["beta"])
    np.testing.assert_allclose(beta, own["beta"], atol=1e-12)  # the attack reaches the Gaussian's own curve
    assert (beta - np.asarray(stated["beta"])).min() > -1e-12  # and never goes below the stated one
    assert (np.asarray(own["beta"]) - np.asarray(stated["beta"])).max() > 0.005  # the statement is looser
    tr = _traces(pf.tradeoff_figure(r))
    assert tr["bound"]["name"] == "what (ε, δ)-DP allows (ε = 1, δ = 1e-05)"
    assert tr["mechanism_curve"]["name"] == (
        f"this Gaussian's own curve, set by its σ<br>(μ = Δ/σ = {pf.budget_number(mu)}; ρ-zCDP, the Gaussian's<br>own "
        f"budget: ρ = Δ²/(2σ²) = {pf.budget_number(mu * mu / 2)})")
    assert tr["mechanism_curve"]["line"]["dash"] == "dot"
    assert not [t["name"] for t in tr.values() if "ρ-zCDP allows" in t["name"]]  # no ρ curve stands for the guarantee
    assert pt.budget_clause(r) == "At (ε, δ) = (1, 1e-05)"
    # diffprivlib's discrete Gaussian: the stated curve too; its own curve is the attack's (exact), none drawn twice
    table = {"library": "diffprivlib", "mechanism": "GaussianDiscrete", "epsilon": 1.0, "delta": 1e-5}
    discrete = engine.risk({"seed": 1, "model": BB, "release": table, "data": {"s_dp": [6.0]}})
    assert discrete["stated_bound"]["kind"] == "epsilon_dp" and "mechanism_curve" not in discrete


def test_the_page_states_a_budget_and_a_share_with_one_rounding_each():
    """OpenDP at scale 3: the mechanism's line said "pure 0.3333-DP" over "At ε = 0.333" and a legend "ε = 0.333";
    Gaussian noise: the sentence said "to 90% or more" over a legend "(89.5%)". One rounding each now."""
    third = _risk({"name": "laplace", "epsilon": 1 / 3})
    line = engine.prepare({"seed": 1, "model": BB, "mechanism": {"name": "laplace", "epsilon": 1 / 3},
                           "data": {"s_dp": [6.0]}}).mechanism.describe()
    assert "pure 0.3333-DP" in line
    assert pt.budget_clause(third) == "At ε = 0.3333"
    assert _traces(pf.tradeoff_figure(third))["bound"]["name"] == "what ε-DP allows (ε = 0.3333)"
    g = _risk({"name": "gaussian", "rho": 0.5}, model=dict(BB, n=40), s_dp=(12.0,))
    q95 = g["informed_adversary"]["q95"]
    assert 0.895 <= q95 < 0.8955  # the audit's case: 89.5% in the legend, 90% in the sentence
    # "90% or more" overstated 89.52%: a share said as "or more" rounds down, "at or below" rounds up, each true
    assert "to 89.5% or more" in pt.clauses(g)[0]
    assert _traces(pf.belief_figure(g))["q95"]["name"] == "95% of releases at or below (90%)"


def test_the_attack_is_named_in_words_not_by_the_engine_key(laplace, gaussian):
    # the legend read "best attack on laplace"
    assert _traces(pf.tradeoff_figure(laplace))["tradeoff"]["name"] == "best attack on Laplace noise"
    assert _traces(pf.tradeoff_figure(gaussian))["tradeoff"]["name"] == "best attack on Gaussian noise"
    assert set(pf._ATTACKED) == set(engine.MECHANISM_NAMES)


def test_belief_figure_draws_the_histogram_and_its_lines(laplace, gaussian):
    tr = _traces(pf.belief_figure(laplace))
    hist = laplace["informed_adversary"]["histogram"]
    np.testing.assert_allclose(tr["belief_histogram"]["y"], hist["probability"])
    assert sum(tr["belief_histogram"]["y"]) == pytest.approx(1.0)
    top = math.exp(1) / (1 + math.exp(1))
    assert tr["max"]["x"][0] == pytest.approx(100 * top)
    assert tr["prior"]["x"][0] == 50.0 and tr["prior"]["name"] == "before the release (50%)"
    # the mass sits where the beliefs are: nothing above the ceiling
    centres = np.asarray(tr["belief_histogram"]["x"])
    assert np.sum(np.asarray(tr["belief_histogram"]["y"])[centres > 100 * top + 2.5]) == 0
    g = _traces(pf.belief_figure(gaussian))
    assert "max" not in g and "q95" in g  # Gaussian noise: no ceiling drawn
    # a 95% level below the ceiling: the dashed 95% line is drawn over the solid ceiling, while the legend reads
    # histogram, start, 95%, ceiling
    below = {**laplace, "informed_adversary": {**laplace["informed_adversary"], "q95": 0.62}}
    fig = pf.belief_figure(below)
    tr = _traces(fig)
    order = [t["meta"]["kind"] for t in fig.to_dict()["data"]]
    assert order.index("q95") > order.index("max")
    assert sorted(tr, key=lambda k: tr[k]["legendrank"]) == ["belief_histogram", "prior", "q95", "max"]
    assert tr["q95"]["name"] == "95% of releases at or below (62%)" and tr["max"]["name"] == "never above (73%)"


def test_belief_figure_draws_one_line_where_the_95_percent_level_is_the_ceiling(laplace):
    """A two-valued record under pure DP: at least 5% of releases reach the ceiling, so the 95% level is the
    ceiling. "95% of releases below (57.4%)" lay exactly under "never above (57.4%)", a legend entry for a line no
    one could see; one line now says both: the ceiling and the share of releases that reach it (Laplace noise: its
    two tails, half of the releases)."""
    ia = laplace["informed_adversary"]
    assert ia["q95"] == pytest.approx(ia["max"]) and ia["at_max"] == pytest.approx(0.5, abs=1e-9)
    tr = _traces(pf.belief_figure(laplace))
    assert "q95" not in tr and tr["max"]["meta"]["q95"] == ia["q95"]
    assert tr["max"]["name"] == "never above (73%), reached by 50% of releases"


def test_belief_legend_says_how_many_releases_sit_at_a_pure_dp_ceiling():
    """rel=opendp&rel_mech=laplace&rel.domain=int&rel.scale=3 (discrete Laplace, t = 3, ε = 1/3): the legend read
    "95% of releases below and none above (58%)", while 58% of the releases sit at the 58% ceiling and 42% below
    it. The share at the ceiling is computed from the belief law (at_max) and the legend says it; the histogram's
    bar at the ceiling holds that share."""
    r = engine.risk({"seed": 1, "model": BB, "release": {"library": "opendp", "mechanism": "laplace", "domain": "int",
                                                         "scale": 3.0}, "data": {"s_dp": [6.0]}})
    ia = r["informed_adversary"]
    top = 1 / (1 + math.exp(-1 / 3))
    assert ia["max"] == pytest.approx(top, abs=1e-12)
    # discrete Laplace, shift 1: the ceiling is reached on the two tails, P1(y >= 1) = P0(y <= 0) = 1 / (1 + e^-1/t)
    assert ia["at_max"] == pytest.approx(top, abs=1e-9)
    tr = _traces(pf.belief_figure(r))
    assert tr["max"]["name"] == "never above (58%), reached by 58% of releases"
    assert "none above" not in tr["max"]["name"] and "q95" not in tr
    bars = tr["belief_histogram"]
    at_top = [y for x, y in zip(bars["x"], bars["y"]) if abs(x - 100 * top) <= 1.25]
    assert sum(at_top) == pytest.approx(ia["at_max"], abs=1e-9)
    # where the 95% level sits below the ceiling, the ceiling's entry says only that, the quantile's "at or below"
    names = pf.belief_line_names({"prior": 0.5, "q95": 0.62, "max": 0.73, "at_max": 0.01})
    assert names == {"prior": "before the release (50%)", "q95": "95% of releases at or below (62%)",
                     "max": "never above (73%)"}
    # a 95% level that only rounds to the ceiling: the 5% above it are within rounding, not at the ceiling
    names = pf.belief_line_names({"prior": 0.5, "q95": 0.5023, "max": 0.5025, "at_max": 1e-5})
    assert names["max"] == "never above (50.2%), at least 5% of releases within rounding of it" and "q95" not in names


def test_belief_figure_zooms_to_where_the_releases_land():
    """The default scenario (n = 40, Laplace ε = 0.3): every release lands between 43% and 57%, and the axis was
    fixed at 0-100% (bars a sliver, a phone showed the ticks 0 and 50 only). The axis now holds the bars, 50% and
    the lines, with a little padding."""
    r = _risk({"name": "laplace", "epsilon": 0.3}, model=dict(BB, n=40), s_dp=(12.0,))
    fig = pf.belief_figure(r).to_dict()
    lo, hi = fig["layout"]["xaxis"]["range"]
    tr = _traces(pf.belief_figure(r))
    x, y, w = (np.asarray(tr["belief_histogram"][k]) for k in ("x", "y", "width"))
    held = x[y > 0]
    assert lo <= held.min() - w[0] / 2 and held.max() + w[0] / 2 <= hi  # every bar with releases whole
    assert lo < 50 < hi and lo < 100 * r["informed_adversary"]["max"] < hi
    assert hi - lo <= 25 and (lo, hi) != (0, 100)
    g = _risk({"name": "gaussian", "rho": 0.5}, model=dict(BB, n=40), s_dp=(12.0,))
    lo, hi = pf.belief_figure(g).to_dict()["layout"]["xaxis"]["range"]
    assert lo < 100 * g["informed_adversary"]["q95"] < hi and 0 <= lo and hi <= 100


def test_record_figure_draws_prior_and_posterior(laplace):
    ra = laplace["realistic_adversary"]
    tr = _traces(pf.record_figure(ra))
    assert list(tr["prior"]["x"]) == ["0", "1"] and list(tr["posterior"]["x"]) == ["0", "1"]
    np.testing.assert_allclose(tr["prior"]["y"], ra["prior"])
    np.testing.assert_allclose(tr["posterior"]["y"], ra["posterior"])
    clamped = _risk({"name": "laplace", "epsilon": 1.0}, model={"name": "poisson_gamma", "n": 4, "upper": 2}, s_dp=(3.0,))
    assert list(_traces(pf.record_figure(clamped["realistic_adversary"]))["posterior"]["x"]) == ["0", "1", "2+"]
    unavailable = pf.record_figure({"available": False, "reason": "no discrete records"}).to_dict()
    assert unavailable["data"] == [] and unavailable["layout"]["annotations"][0]["text"] == "no discrete records"


def test_frontier_figure_from_plain_arrays():
    eps = [2.0, 0.5, 1.0]
    q95, power, sd = [0.88, 0.62, 0.73], [0.3, 0.08, 0.14], [0.02, 0.09, 0.05]
    fig = frontier_figure(eps, q95, power, sd, utility_label="posterior sd of θ", chosen=1.0)
    tr = _traces(fig)
    assert list(tr["q95"]["x"]) == [0.09, 0.05, 0.02]  # sorted by epsilon
    assert list(tr["q95"]["y"]) == [0.62, 0.73, 0.88] and list(tr["power_at_5pct"]["y"]) == [0.08, 0.14, 0.3]
    belief = {a["text"] for a in fig.to_dict()["layout"]["annotations"] if a["name"].startswith("label 0 ")}
    assert belief == {"ε = 0.5", "ε = 1", "ε = 2"}  # each ε once beside its belief point (figures.frontier)
    for kind in ("q95", "power_at_5pct"):  # and every point's ε in its hover
        assert list(tr[kind]["customdata"]) == ["ε = 0.5", "ε = 1", "ε = 2"]
        assert tr[kind]["hovertemplate"].startswith("%{customdata}")
        assert "smaller: more private" in tr[kind]["hovertemplate"]
    assert tr["chosen"]["meta"]["epsilon"] == 1.0 and list(tr["chosen"]["x"]) == [0.05, 0.05]
    assert list(tr["chosen"]["y"]) == [0.73, 0.14]
    layout = fig.to_dict()["layout"]
    assert layout["xaxis"]["title"]["text"].startswith("posterior sd of θ")
    title = layout["yaxis"]["title"]["text"]  # one line: a second ran over the ticks on a phone
    assert "<br>" not in title and len(title) <= 30, title
    with pytest.raises(ValueError, match="one value per epsilon"):
        frontier_figure([1.0, 2.0], [0.7], [0.1, 0.2], [0.1, 0.2])


def test_frontier_figure_takes_protection_sweep_columns():
    frame = engine.protection_sweep({"model": BB, "mechanism": {"name": "laplace", "epsilon": 1.0}, "data": {"s_dp": [1.0]}},
                                    [0.5, 1.0])
    fig = frontier_figure(frame["epsilon"], frame["q95"], frame["power_at_5pct"], [0.1, 0.05])
    np.testing.assert_allclose(_traces(fig)["q95"]["y"], frame["q95"])


# --------------------------------------------------------------------------- the sentence
def test_sentence_clause_by_clause_against_the_numbers(laplace):
    ia = laplace["informed_adversary"]
    parts = pt.clauses(laplace)
    assert parts[0] == ("At ε = 1, someone who knew everyone else could move a 50% guess about one person to "
                        f"at most {round(100 * ia['max'])}%")
    assert "at most 73%" in parts[0]  # e/(1+e) = 0.731
    power = laplace["power_at_5pct"]
    assert parts[1] == (f"the best attack on one person's record, wrong 5% of the time when it has the other "
                        f"value, detects it {round(100 * power)}% of the time")
    c = laplace["realistic_adversary"]["largest_change"]
    assert parts[2] == (f"someone who knows only the model moves from {round(100 * c['prior'])}% to "
                        f"{round(100 * c['posterior'])}% on \"this person's record is {c['value']}\"")
    sentence = pt.protection_sentence(laplace, utility=("θ", 0.0512))
    assert sentence == "; ".join(parts + ["θ is known to ±0.051"]) + "."
    # the pages: the guarantee as a small heading, the other clauses in plain type under it (a phone showed about 95
    # words of bold heading)
    rest = "; ".join(parts[1:])
    assert rest.startswith("the best attack ")
    assert pt.protection_markdown(laplace) == f"##### {parts[0]}.\n\nT{rest[1:]}."
    assert pt.protection_markdown(laplace, utility=("θ", 0.0512)) == \
        f"##### {parts[0]}.\n\nT{rest[1:]}; θ is known to ±0.051."


def test_sentence_for_gaussian_noise_has_no_ceiling(gaussian):
    first = pt.clauses(gaussian)[0]
    assert first.startswith("At ρ = 0.5, ")
    assert f"to {pf.percent_at_least(gaussian['informed_adversary']['q95'])} or more in 1 release in 20" in first
    assert "no firm ceiling" in first and "at most" not in first
    approx = _risk({"name": "gaussian", "epsilon": 1.0, "delta": 1e-5})
    assert pt.budget_clause(approx) == "At (ε, δ) = (1, 1e-05)"


def test_sentence_says_why_the_model_only_adversary_moves_further_than_the_guarantee():
    """diffprivlib's Gaussian (ε = 1, δ = 1e-5): the sentence said the informed adversary reaches "59%", then
    "someone who knows only the model moves from 50% to 90%": the weaker adversary seemed to beat the guarantee, the
    reason (it learns about the population, not the person) sitting in a collapsed expander. The sentence now says
    it wherever the model-only move looks larger than the informed adversary's; pure DP too (Laplace at ε = 1, a
    release of 18 of 20: at most 73%, then 50% to 11% on "record is 0", i.e. 89% on 1)."""
    gauss = engine.risk({"seed": 1, "model": BB, "data": {"s_dp": [18.0]},
                         "release": {"library": "diffprivlib", "mechanism": "Gaussian", "epsilon": 1.0, "delta": 1e-5,
                                     "sensitivity": 1}})
    lap = _risk({"name": "laplace", "epsilon": 1.0}, s_dp=(18.0,))
    for r in (gauss, lap):
        c = r["realistic_adversary"]["largest_change"]
        assert pt.beyond_informed(r)
        assert pt.realistic_clause(r) == (
            f"someone who knows only the model moves from {pt.percent(c['prior'])} to {pt.percent(c['posterior'])} on "
            "\"this person's record is 0\", from what the model and the release say about the population as a whole: "
            "the guarantee bounds what one person's record changes, not what the data as a whole reveal")
    assert "to 58.9% or more in 1 release in 20" in pt.clauses(gauss)[0]  # 58.96%: "59% or more" overstated
    assert lap["realistic_adversary"]["largest_change"]["posterior"] < 0.27  # 73% on the other value
    # a move within the informed adversary's reach (50% to 70% at ε = 1, whose ceiling is 73%) needs no reason
    within = _risk({"name": "laplace", "epsilon": 1.0})
    assert not pt.beyond_informed(within) and "population" not in pt.realistic_clause(within)
    # a posterior above the informed level says why even where the move is small (the model alone put it there)
    high = {**within, "realistic_adversary": {**within["realistic_adversary"], "largest_change": {
        "value": 1, "prior": 0.8, "posterior": 0.81, "difference": 0.01}}}
    assert pt.beyond_informed(high)


#: what the model-only move is, said after it where the reason above is not (the demo's ε = 0.3 and ε = 1)
_POPULATION = (": an inference about the population as a whole that applies to anyone, not something the release "
               "reveals about this one person beyond what the guarantee bounds")


@pytest.mark.parametrize("epsilon, value, prior, posterior, direction, after", [
    (0.1, 0, "50%", "28%", "less", ", this person no more than anyone else"),  # past the informed reach: reason above
    (0.3, 0, "50%", "55%", "more", _POPULATION),
    (1.0, 1, "50%", "31%", "less", _POPULATION),
])
def test_the_model_only_move_is_said_as_a_population_inference_at_every_epsilon(epsilon, value, prior, posterior,
                                                                                   direction, after):
    """The demo (Laplace, n = 40) at ε = 0.1, 0.3 and 1 read "moves from 50% to 28%", "to 55%", "to 31%": the most
    private setting seemed to leak the most, the reason (what the model and the release say about the population)
    came at ε = 0.1 only, and a fall below 50% read as something learnt about the person. Every ε now says what the
    move is, in its direction: a value made more or less likely for everyone alike."""
    import copy

    spec = copy.deepcopy(engine.DEMO_SPEC)
    spec["mechanism"]["epsilon"] = epsilon
    r = engine.risk(spec)
    c = r["realistic_adversary"]["largest_change"]
    assert (c["value"], pt.percent(c["prior"]), pt.percent(c["posterior"])) == (value, prior, posterior)
    parts = pt.clauses(r)
    opening = (f"someone who knows only the model moves from {prior} to {posterior} on "
               f"\"this person's record is {value}\"")
    assert parts[2].startswith(opening) and parts[2] == pt.realistic_clause(r)
    assert ("population as a whole" in parts[2]) == pt.beyond_informed(r) == (epsilon == 0.1)
    assert (c["posterior"] < c["prior"]) == (direction == "less")
    assert parts[3] == (f"that is, the model and the release make a record of {value} {direction} likely for everyone "
                        f"alike{after}")
    assert len(parts) == 4 and pt.protection_sentence(r) == "; ".join(parts) + "."


def test_sentence_leaves_out_an_unavailable_realistic_adversary():
    r = _risk({"name": "laplace", "epsilon": 2.0}, model={"name": "normal_known_sd", "n": 10}, s_dp=(1.0,))
    assert len(pt.clauses(r)) == 2 and "at most 88%" in pt.clauses(r)[0]


def test_percent_keeps_extremes_readable():
    assert pt.percent(0.731) == "73%" and pt.percent(0.996) == "99.6%" and pt.percent(0.004) == "0.4%"


# --------------------------------------------------------------------------- the page
def test_page_shows_three_figures_and_the_sentence():
    at = open_app("pages/protection.py", {"methods": "naive"}, 120)  # the landing page runs naive only: fast
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error
    assert at.title[0].value == "What it protects"
    assert len(at.get("plotly_chart")) == 3
    assert_charts_fit_a_phone(at)  # a name for screen readers, titles and legends a phone shows whole
    texts = [m.value for m in at.markdown]
    # the demo: Laplace at eps = 0.3 -> e^0.3 / (1 + e^0.3) = 57.4%
    assert any(t.startswith("##### At ε = 0.3, someone who knew everyone else") and "at most 57%" in t for t in texts)
    assert sum(1 for e in at.expander if e.label == "What am I looking at?") == 3


def test_a_gaussian_link_states_its_rho_in_the_sentence_the_legend_and_the_terms():
    """mech=gaussian&budget=rho&rho=0.5: the legend said "what μ-GDP allows (μ = 1)" under "At ρ = 0.5", and "Terms
    on this page" defined neither μ nor GDP."""
    import json

    at = open_app("pages/protection.py", {"model": "beta_binomial", "mech": "gaussian", "budget": "rho", "rho": "0.5",
                                          "methods": "naive"}, 120)
    assert not at.exception, [e.value for e in at.exception]
    assert any(m.value.startswith("##### At ρ = 0.5, ") for m in at.markdown)
    names = [t.get("name") for c in at.get("plotly_chart") for t in json.loads(c.proto.spec)["data"]]
    assert "what ρ-zCDP allows (ρ = Δ²/(2σ²) = 0.5)" in names  # the curve ρ-zCDP allows; the μ-GDP one apart
    assert "this Gaussian's own curve: exactly<br>μ-GDP, μ = Δ/σ = 1<br>(the best attack lies on it)" in names
    terms = next(e for e in at.expander if e.label == "Terms on this page")
    assert "**μ-GDP**" in terms.markdown[0].value and "μ = Δ/σ" in terms.markdown[0].value


@pytest.mark.parametrize("query", [{"model": "beta_binomial", "mech": "gaussian", "budget": "epsilon_delta",
                                    "epsilon": "1", "delta": "1e-05"},
                                   {"model": "beta_binomial", "rel": "diffprivlib", "rel_mech": "GaussianAnalytic",
                                    "rel.epsilon": "1", "rel.delta": "1e-05", "rel.sensitivity": "1"}])
def test_a_gaussian_stated_in_epsilon_delta_shows_that_statement_and_its_own_curve(query):
    """The lab's Gaussian in its (ε, δ) form and diffprivlib's GaussianAnalytic: the sentence, the dashed curve and
    its legend state the same (ε, δ); the Gaussian's own curve is drawn dotted in the colour the explanation names,
    and the explanation says what μ and ρ are."""
    import json

    from figures import palette

    at = open_app("pages/protection.py", {**query, "methods": "naive"}, 120)
    assert not at.exception, [e.value for e in at.exception]
    assert any(m.value.startswith("##### At (ε, δ) = (1, 1e-05), ") for m in at.markdown)
    traces = {t["meta"]["kind"]: t for c in at.get("plotly_chart") for t in json.loads(c.proto.spec)["data"]
              if "meta" in t}
    assert traces["bound"]["name"] == "what (ε, δ)-DP allows (ε = 1, δ = 1e-05)"
    assert traces["mechanism_curve"]["name"].startswith("this Gaussian's own curve, set by its σ")
    texts = " ".join(m.value for e in at.expander if e.label == "What am I looking at?" for m in e.markdown)
    said = re.search(r"the \*\*(\w+) dotted curve\*\* is this Gaussian's own", texts).group(1)
    assert palette.hue_name(traces["mechanism_curve"]["line"]["color"]) == said == "blue"
    assert "μ = Δ/σ" in texts and "ρ-zCDP, the Gaussian's own budget: ρ = Δ²/(2σ²)" in texts


@pytest.mark.parametrize("epsilon", ["0.3", "1"])
def test_every_download_names_its_scenario_and_is_titled_with_its_budget(monkeypatch, epsilon):
    """The downloads were tradeoff_curve.png, informed_adversary.png and realistic_adversary.png (and .html): no
    title, model, n or mechanism, two with no ε anywhere, so files exported at ε = 0.1 and ε = 1 could not be told
    apart. Each is now named after the scenario and titled with its view and ε, the scenario under it, as the
    Privacy budget page's are; the figures shown on the page are left untitled (the line above them says it)."""
    from ui import downloads

    saved = []
    chart = downloads.chart
    monkeypatch.setattr(downloads, "chart", lambda fig, **kw: saved.append((fig, kw)) or chart(fig, **kw))
    at = open_app("pages/protection.py", {"model": "beta_binomial", "epsilon": epsilon, "methods": "naive"}, 120)
    assert not at.exception, [e.value for e in at.exception]
    stem = saved[0][1]["name"].removesuffix("_tradeoff_curve")
    assert re.fullmatch(rf"beta_binomial_laplace_eps{re.escape(epsilon)}_n40_seed7_[0-9a-f]{{6}}", stem), stem
    assert [kw["name"] for _, kw in saved] == [f"{stem}_tradeoff_curve", f"{stem}_informed_adversary",
                                               f"{stem}_realistic_adversary"]
    titles = ["The best possible attack", "Someone who knows everyone else", "Someone who knows only the model"]
    for (fig, kw), title in zip(saved, titles):
        assert callable(kw["for_file"])  # titled when a file is asked for, not on every rerun
        kw["for_file"] = kw["for_file"]()
        layout = kw["for_file"].to_dict()["layout"]
        assert layout["title"]["text"].replace("<br>", " ") == f"{title}, at ε = {epsilon}"
        assert layout["title"]["subtitle"]["text"].replace("<br>", " ") == (
            "Beta-binomial (proportion θ), n = 40 · Laplace noise, sensitivity 1 · simulated records (truth 0.3, "
            "seed 7)")
        assert kw["for_file"].to_dict()["data"] == fig.to_dict()["data"]  # the same figure, titled
        assert not (fig.to_dict()["layout"].get("title") or {}).get("text")  # the page's figure as it was
    specs = [c.proto.spec for c in at.get("plotly_chart")]
    assert all('"subtitle"' not in spec for spec in specs)


def test_the_explanations_name_the_colours_the_figures_draw():
    """What am I looking at? said "blue curve" for the attack drawn in bluish green and "orange bars" for the
    posterior drawn in blue. The words now come from figures.palette.COLOR_WORDS, each held to its colour's hue.
    The guarantee's vermillion (#D55E00) was "the red dashed curve" beside an orange legend swatch: it is orange."""
    import json

    from figures import palette

    for color, word in palette.COLOR_WORDS.items():
        assert palette.hue_name(color) == word, (color, word)
    assert palette.hue_name("#7A5CE6") == "blue" and palette.hue_name("#BF8700") == "orange"
    assert palette.color_word("#D55E00") == "orange" and palette.hue_name("#CC6677") == "red"
    with pytest.raises(ValueError, match="color = '#123456' is invalid for color_word"):
        palette.color_word("#123456")
    at = open_app("pages/protection.py", {"methods": "naive"}, 120)
    texts = " ".join(m.value for e in at.expander if e.label == "What am I looking at?" for m in e.markdown)
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    colour = {t["meta"]["kind"]: t.get("line", t.get("marker", {})).get("color")
              for spec in specs for t in spec["data"] if "meta" in t}
    said = {"tradeoff": re.search(r"The \*\*(\w+) curve\*\* is the best any attack", texts).group(1),
            "bound": re.search(r"The \*\*(\w+) dashed curve\*\*", texts).group(1),
            "guess": re.search(r"The \*\*(\w+) diagonal\*\*", texts).group(1),
            "prior": re.search(r"(\w+) bars: what they believe", texts).group(1).lower(),
            "posterior": re.search(r"(\w+) bars: after it", texts).group(1)}
    assert said == {"tradeoff": "green", "bound": "orange", "guess": "grey", "prior": "grey", "posterior": "blue"}, said
    for kind, word in said.items():
        assert palette.hue_name(colour[kind]) == word, (kind, colour[kind], word)


def test_page_covers_linear_regression():
    """The nine-sum regression release: the trade-off and belief figures from the lattice product, the record
    view says why there is no record to guess, and the sentence's ceiling is the one of the exact L1
    sensitivity (below the stated epsilon's, since the release is calibrated to a larger Delta)."""
    at = open_app("pages/protection.py", {"model": "linear_regression", "methods": "naive"}, 120)
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error and not any("does not cover" in i.value for i in at.info)
    assert len(at.get("plotly_chart")) == 2  # the record view says why, in words, instead of an empty figure
    assert [i.value for i in at.info if i.value.startswith("Not drawn")] == [
        "Not drawn for this scenario: Linear regression has no discrete records to guess: its records are real "
        "numbers, and no one value has a probability of its own (the realistic adversary is computed for "
        "Beta-binomial, Dirichlet-multinomial, Poisson-gamma)."]
    sentence = next(m.value for m in at.markdown if m.value.startswith("##### At ε = "))
    eps = float(sentence.split("At ε = ")[1].split(",")[0])
    p = 2
    ceiling = 1 / (1 + math.exp(-eps * (p + 1) * (p + 3) ** 2 / (2 * (p + 2)) / (p * p + 3 * p + 3)))
    assert f"at most {pt.percent(ceiling)}" in sentence
    assert any("furthest apart in L1" in c.value for c in at.caption)  # the pair attacked is named


def test_realistic_clause_names_a_clamps_top_value_as_that_or_more():
    ra = {"available": True, "values": [0, 1, 2], "labels": ["0", "1", "2+"],
          "largest_change": {"value": 2, "prior": 0.2, "posterior": 0.6, "difference": 0.4}}
    assert pt.realistic_clause({"realistic_adversary": ra}).endswith("on \"this person's record is 2 or more\"")


def test_a_model_without_the_record_view_gets_a_sentence_not_an_empty_figure():
    """The log-linear model drew an empty chart (axes from -1 to 5, PNG and HTML buttons) whose only text was
    "naive_bayes_loglinear has no discrete records to guess": its records are discrete (a class and a level per
    feature), and the engine's keys are not the sidebar's words. The view now says why it is not drawn."""
    at = open_app("pages/protection.py", {"model": "naive_bayes_loglinear", "methods": "naive"}, 120)
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error and len(at.get("plotly_chart")) == 2
    note = [i.value for i in at.info if i.value.startswith("Not drawn")]
    assert note == ["Not drawn for this scenario: P(record = v | s_dp) is not computed for Naive-Bayes log-linear: it "
                    "is read off the exact law of the confidential statistic given the release, a finite mixture the "
                    "engine computes for Beta-binomial, Dirichlet-multinomial, Poisson-gamma."], note
    assert "no discrete records" not in note[0] and "_" not in note[0].replace("s_dp", "")
    assert sum(1 for e in at.expander if e.label == "What am I looking at?") == 3


# --------------------------------------------------------------------------- a dp-wizard package's statistics
PACKAGE = str(Path(__file__).resolve().parent / "fixtures" / "dpwizard_grade_hours.zip")


def _package_loaded(spec_file: str):
    """What it protects with the fixture package uploaded in the sidebar and ``spec_file``'s statistic loaded."""
    from ui import keys

    at = open_app("pages/protection.py", {"methods": "naive"}, 120)
    with open(PACKAGE, "rb") as fh:
        at.sidebar.file_uploader(key=keys.W_DPWIZARD).set_value(("grade_hours.zip", fh.read(), "application/zip")).run()
    at.sidebar.selectbox(key=keys.W_DPWIZARD_PICK).set_value(spec_file).run()
    at.sidebar.button(key=keys.W_DPWIZARD_LOAD).click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _chart_names(at) -> dict:
    import json

    return {t["meta"]["kind"]: t.get("name") for c in at.get("plotly_chart") for t in json.loads(c.proto.spec)["data"]
            if "meta" in t}


def test_a_dpwizard_bin_is_said_as_a_count_not_as_one_person():
    """grade: count in (20, 40] (released 85), loaded from the package: the page said "Poisson-gamma, n = 1 …
    someone who knows only the model moves from 0.1% to 32% on 'this person's record is 85'". A bin's count is one
    Poisson observation (n = 1) of the whole count, while one person adds 1 to one bin: the model-only adversary is
    left out, with why; the informed adversary's bound stays (one person's row in or out moves the count by 1), said
    about whether one person is counted in the bin; the page says what the statistic is; the legends name the
    clipped noise and the share of releases at the ceiling."""
    at = _package_loaded("grade_bin2.toml")
    sentence = next(m.value for m in at.markdown if m.value.startswith("##### "))
    assert sentence == ("##### At ε = 0.6667, someone who knew everyone else could move a 50% guess about whether one "
                        "person is counted in this bin to at most 66%, and from everything grade_hours.zip releases "
                        "(its total ε = 1) to at most 73%.\n\nThe best attack on one person's record, wrong 5% of the "
                        "time when it has the other value, detects it 10% of the time.")
    assert "record is" not in sentence and "only the model" not in sentence
    captions = [c.value for c in at.caption]
    assert ("The count in bin (20, 40] of grade, from the dp-wizard package grade_hours.zip, analysed as one Poisson "
            "count (n = 1): one person adds 1 to one bin of the histogram.") in captions
    assert ("The attack compares two neighbouring datasets: one person's row in the data or not (OpenDP's "
            "add/remove-one neighbours): the bin's count moves by 1.") in captions
    assert [i.value for i in at.info if i.value.startswith("Not drawn")] == [
        "Not drawn for this scenario: a histogram bin's count is analysed as one Poisson count (n = 1), so its one "
        "\"record\" is the whole count of the bin, not one person's row; what one person changes (the count, by one) "
        "is what the two views above bound."]
    assert len(at.get("plotly_chart")) == 2
    names = _chart_names(at)
    assert names["tradeoff"] == "best attack on discrete Laplace noise, clipped"
    assert names["max"] == "never above (66%), reached by 66% of releases"


@pytest.mark.parametrize("spec_file, own", [("hours_mean.toml", "at most 58%"),
                                             ("grade_histogram.toml", "at most 66%")])
def test_a_dpwizard_statistic_states_the_package_total_next_to_its_own(spec_file, own):
    """The package's statistics share a total ε = 1 (the sidebar said so), while the page said only the mean's
    "At ε = 0.3333 … at most 58%" and the histogram's "0.6667 … 66%": a person in every statistic is covered by the
    total only. The sentence now states the total and what it allows, e/(1 + e) = 73%, next to the statistic's."""
    at = _package_loaded(spec_file)
    sentence = next(m.value for m in at.markdown if m.value.startswith("##### "))
    assert f"about one person to {own}, and from everything grade_hours.zip releases (its total ε = 1) to at most " \
           f"{pt.percent(math.e / (1 + math.e))}.\n\n" in sentence
    what = "The mean of hours" if spec_file == "hours_mean.toml" else "The histogram of grade"
    assert f"{what}, from the dp-wizard package grade_hours.zip." in [c.value for c in at.caption]


def test_package_statistic_matches_the_loaded_spec_and_nothing_else(tmp_path):
    """Which of the package's statistics the sidebar's spec is: by model, release and released values (to the six
    digits the sidebar shows); a changed release is none of them; two bins released with the same count are both
    named (the spec cannot tell them apart)."""
    import json

    from engine.core.spec import read_spec_file
    from ui.compute.protection import package_statistic

    summary = engine.import_dpwizard(PACKAGE, str(tmp_path), use_opendp=False)
    specs = {f.name: read_spec_file(str(f)) for f in tmp_path.glob("*.toml")}
    kept = {"name": "grade_hours.zip", "result": {"summary": summary, "specs": specs}}
    mean = dict(specs["hours_mean.toml"], data={"s_dp": [round(specs["hours_mean.toml"]["data"]["s_dp"][0], 4)]})
    assert package_statistic(json.dumps(mean), kept) == {
        "package": "grade_hours.zip", "total_epsilon": 1.0, "statistics": 2, "column": "hours", "kind": "mean",
        "bins": [], "epsilon": pytest.approx(1 / 3)}
    bin2 = specs["grade_bin2.toml"]
    assert package_statistic(json.dumps(bin2), kept)["bins"] == ["(20, 40]"]
    assert package_statistic(json.dumps(dict(bin2, data={"s_dp": [86.0]})), kept) is None
    assert package_statistic(json.dumps(bin2), None) is None and package_statistic(None, kept) is None
    twin = json.loads(json.dumps(summary))
    twin["statistics"][0]["bins"][3]["released"] = 85.0
    twins = {**specs, "grade_bin3.toml": dict(specs["grade_bin3.toml"], data={"s_dp": [85.0]})}
    found = package_statistic(json.dumps(bin2), {"name": "x.zip", "result": {"summary": twin, "specs": twins}})
    assert found["kind"] == "bin" and found["bins"] == ["(20, 40]", "(40, 60]"]
    said = pt.statistic_note(pt.for_package(_risk({"name": "laplace", "epsilon": 1.0}), found))
    assert said.startswith("The count in bin (20, 40] or (40, 60] of grade, from the dp-wizard package x.zip")


def test_no_share_reads_as_none_or_all_and_no_ceiling_as_no_move():
    """Audit s22 (a DP expert): at ε = 0.01 the sentence said "to at most 50%" from a 50% guess (the ceiling is
    e^0.01/(1 + e^0.01) = 50.25%: a move read as none) and the legend "never above (50%)"; at ε = 10 "to at most
    100.0%" and "catches 100.0% of the real ones" for 99.9955% and 99.977%, and the Gaussian's 95% level "100.0% or
    more". A share strictly between 0 and 1 is never written 0% or 100%, and a ceiling never as the guess before."""
    def ceiling(eps):
        return math.exp(eps) / (1.0 + math.exp(eps))

    assert pf.percent(ceiling(0.01), apart_from=0.5) == "50.2%" and pf.percent(ceiling(0.001), apart_from=0.5) == \
        "50.02%"
    assert pf.percent(ceiling(1.0), apart_from=0.5) == "73%"  # the "at most 73%" where rounding moves nothing
    assert pf.percent(ceiling(10.0)) == "99.995%" and pf.percent(1.0 - math.exp(-10.0) / 0.2) == "99.98%"
    assert pf.percent_at_least(0.99996) == "99.996%" and pf.percent_at_most(0.999991) == "99.9991%"
    assert pf.percent(1e-5) == "0.001%" and pf.percent(1.0) == "100.0%" and pf.percent(0.0) == "0.0%"
    names = pf.belief_line_names({"prior": 0.5, "q95": 0.5023, "max": ceiling(0.01), "at_max": 1e-5})
    assert names["max"] == "never above (50.2%), at least 5% of releases within rounding of it"
    names = pf.belief_line_names({"prior": 0.5, "q95": 0.5011, "max": ceiling(0.01), "at_max": 1e-5})
    assert names["q95"] == "95% of releases at or below (50.2%)" and names["max"] == "never above (50.2%)"
    ia = {"prior": 0.5, "max": ceiling(0.01), "q95": 0.5023}
    assert pt.informed_clause({"informed_adversary": ia}).endswith("guess about one person to at most 50.2%")
