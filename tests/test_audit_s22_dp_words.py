"""DP audit s22, minor findings on the "What ε protects" side (/tmp/s22/dp_minor.md): the words, not the numbers.

F8: the page's mechanism line for unclamped Poisson counts said "pure 1-DP" for every record; F10: diffprivlib's
Laplace with δ > 0 read "At ε = 1.105" with no word why; F12: the command line called a dp-wizard bin's count
"records are unbounded"; the attack "wrongly flags 5% of people" read as a population screen; the informed adversary
was "the worst realistic case in privacy law"; OpenDP's "1-DP at Δ = 3" beside What it protects' "ε = 2".
"""
from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

import engine
from app_support import open_app
from engine.cli.risk import summary_line
from engine.protection.report import ATTACK_WORDS
from ui import protection_text as pt

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "tests" / "fixtures" / "dpwizard_grade_hours.zip"
BB = {"name": "beta_binomial", "n": 20, "a": 1.0, "b": 1.0}
DIFFPRIVLIB = {"library": "diffprivlib", "mechanism": "Laplace", "epsilon": 1.0, "delta": 0.1, "sensitivity": 1.0}


def _cli(cli, *args):
    done = cli(*args)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


# --------------------------------------------------------------------------- the attack, one person's record
def test_the_attack_is_said_as_a_test_on_one_persons_record_on_the_page_and_the_command_line():
    r = engine.risk({"seed": 1, "model": BB, "mechanism": {"name": "laplace", "epsilon": 1.0},
                     "data": {"s_dp": [6.0]}}, realistic=False)
    page, line = pt.power_clause(r), summary_line(r)
    assert page == ("the best attack on one person's record, wrong 5% of the time when it has the other value, "
                    f"detects it {pt.percent(r['power_at_5pct'])} of the time")
    assert line.endswith("; the best attack on one person's record, wrong 5% of the time when it has the other "
                         "value, detects it 13.6% of the time")
    assert page == ATTACK_WORDS.format(power=pt.percent(r["power_at_5pct"]))
    assert "wrongly flags" not in page + line and "real ones" not in page + line


# --------------------------------------------------------------------------- F8: the unclamped Poisson's line
def test_the_mechanism_line_says_whom_the_guarantee_covers_for_unclamped_counts():
    spec = {"seed": 1, "model": {"name": "poisson_gamma", "n": 40, "alpha": 2.0, "beta": 1.0},
            "mechanism": {"name": "laplace", "epsilon": 1.0}, "data": {"s_dp": [80.0]}}
    r = engine.risk(spec, realistic=False)
    text = "Laplace noise, scale b = 1; pure 1-DP (sensitivity 1)"
    assert pt.mechanism_line(text, r) == (f"{text}; only for records that move the sum by at most 1 (records are not "
                                          "clamped)")
    assert "only for records that move the sum by at most 1" in r["description"]  # the command line's says it too
    clamped = engine.risk({**spec, "model": {**spec["model"], "upper": 3}}, realistic=False)
    assert pt.mechanism_line(text, clamped) == text


def test_the_page_header_is_qualified_for_unclamped_counts():
    at = open_app("pages/protection.py", {"model": "poisson_gamma", "n": "40", "mech": "laplace",
                                          "budget": "epsilon", "epsilon": "1", "data": "simulate", "seed": "7",
                                          "methods": "naive"}, 120)
    assert not at.exception, [e.value for e in at.exception]
    head = next(m.value for m in at.markdown if " · " in m.value and "Laplace noise" in m.value)
    assert head.endswith("pure 1-DP (sensitivity 1); only for records that move the sum by at most 1 (records are "
                         "not clamped)"), head
    # the informed adversary, in the standard's words
    texts = " ".join(m.value for m in at.markdown)
    assert "The standard worst case of differential privacy: an adversary" in texts
    assert "privacy law" not in texts


# --------------------------------------------------------------------------- F10: diffprivlib's (ε, δ) Laplace
def test_diffprivlibs_laplace_with_delta_says_why_epsilon_is_1_105():
    spec = {"seed": 0, "model": BB, "release": DIFFPRIVLIB, "data": {"s_dp": [10.0]}}
    r = engine.risk(spec, realistic=False)
    assert r["epsilon"] == pytest.approx(1.0 - math.log(0.9), abs=1e-12) and "stated_bound" not in r
    said = pt.clauses(pt.for_release(r, json.dumps(spec)))[0]
    assert said.startswith("At ε = 1.105 (diffprivlib's (1, 0.1)-DP Laplace, met as pure 1.105-DP), someone who "
                           "knew everyone else"), said
    assert pt.clauses(r)[0].startswith("At ε = 1.105, ")  # without the release's table, nothing to say
    plain = {**spec, "release": {**DIFFPRIVLIB, "delta": 0.0}}
    assert "release" not in pt.for_release(engine.risk(plain, realistic=False), json.dumps(plain))
    # what the docs say stated_bound is for: LaplaceBoundedDomain with δ > 0 keeps the (ε, δ) statement
    bounded = {**spec, "release": {**DIFFPRIVLIB, "mechanism": "LaplaceBoundedDomain", "lower": 0, "upper": 20}}
    rb = engine.risk(bounded, realistic=False)
    assert rb["stated_bound"]["kind"] == "epsilon_dp" and rb["stated_bound"]["delta"] == 0.1
    assert "release" not in pt.for_release(rb, json.dumps(bounded))


def test_the_docs_no_longer_promise_a_stated_curve_for_diffprivlibs_laplace():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "pure ε' = Δ/b = ε − log(1 − δ)" in readme
    doc = engine.protection.report.__doc__
    assert "GaussianDiscrete,\n    Laplace with delta > 0" not in doc and "LaplaceBoundedDomain with delta > 0" in doc


# --------------------------------------------------------------------------- F12: a dp-wizard bin on the command line
def test_the_command_line_says_a_bins_count_as_one_persons_row(tmp_path, cli):
    _cli(cli, "import-dpwizard", PACKAGE, "--out", tmp_path / "imp")
    line = _cli(cli, "risk", tmp_path / "imp" / "grade_bin2.toml", "--out", tmp_path / "r")
    out = json.loads((tmp_path / "r" / "risk.json").read_text())
    assert "unbounded" not in line and "record of size r" not in line, line
    assert line.startswith("discrete Laplace noise, scale t = 1.5; pure 0.6667-DP (sensitivity 1); release clipped to "
                           "[0, inf] (point masses at the bounds); the count in bin (20, 40] of grade, which one "
                           "person's row moves by 1: someone who knew everyone else could move a 50% guess about "
                           "whether one person is counted in this bin to at most 66.1%; "), line
    assert "unbounded_records" not in out and out["package"]["kind"] == "bin"
    assert out["neighbours"]["note"] == ("one person's row in the data or not (OpenDP's add/remove-one neighbours): "
                                         "the bin's count moves by 1")
    assert out["realistic_adversary"]["available"] is False
    # the same spec away from its import.json is a Poisson count like any other: its records are unbounded
    shutil.copy(tmp_path / "imp" / "grade_bin2.toml", tmp_path / "alone.toml")
    assert "records are unbounded" in _cli(cli, "risk", tmp_path / "alone.toml", "--out", tmp_path / "r2")


# --------------------------------------------------------------------------- OpenDP's add/remove-one sentence
def test_opendps_sentence_says_what_replacing_a_record_gets():
    said = engine.release_from("opendp", "laplace", scale=3.0, domain="float", default_sensitivity=3.0).sentence
    assert ("ε = Δ / scale = 3/3 = 1 under add/remove-one neighbours (adding or removing a person; with n known, "
            "replacing one, which moves the statistic by up to d, is (d/Δ)·ε-DP, as What it protects states).") in said
    gauss = engine.release_from("opendp", "gaussian", scale=3.0, domain="float", default_sensitivity=3.0).sentence
    assert "is (d/Δ)²·ρ-zCDP, as What it protects states" in gauss
    given = engine.release_from("opendp", "laplace", scale=3.0, domain="float", sensitivity=6.0).sentence
    assert "replacing one" not in given  # a sensitivity given is the user's own statement



@pytest.mark.parametrize("release, model, said", [
    ({"mechanism": "laplace", "domain": "float", "scale": 3.0}, {"name": "normal_known_sd", "n": 20},
     "up to d = 6 = 2Δ, is 2-DP,"),
    ({"mechanism": "laplace", "domain": "float", "scale": 3.0, "k": -2}, {"name": "dirichlet_multinomial", "n": 20},
     "up to d = 2 = 2Δ, is 0.75-DP,"),
    ({"mechanism": "gaussian", "domain": "float", "scale": 3.0}, {"name": "dirichlet_multinomial", "n": 20},
     "up to d = 1.414 = 1.414Δ, is 0.1111-zCDP,"),
    ({"mechanism": "laplace", "domain": "int", "scale": 2.0}, {"name": "beta_binomial", "n": 20}, None),
])
def test_opendps_sentence_states_the_replaced_pairs_budget_as_risk_does(release, model, said):
    """Given the model's replace-one Δ (the sidebar's ``model_sensitivities``), the sentence says the pair's budget in
    numbers, the one engine.risk reports as ``epsilon`` (pure) or ``guarantee.rho``; nothing where replacing a record
    moves the statistic no further than adding one (a count)."""
    spec = {"seed": 1, "model": model, "release": {"library": "opendp", **release}, "data": {"s_dp": [3.0] * (
        3 if model["name"] == "dirichlet_multinomial" else 1)}}
    r = engine.risk(spec, realistic=False)
    pair = (r["guarantee"].get("pair") or {})
    delta = pair.get("sensitivity", 1.0)
    sentence = engine.release_from("opendp", default_sensitivity=delta, replace_sensitivity=pair.get("shift", delta),
                                   **release).sentence
    if said is None:
        assert not pair and "replacing one" not in sentence, sentence
        return
    assert said in sentence, sentence
    number = float(said.split(" is ")[1].split("-")[0])
    got = r["epsilon"] if r["guarantee"]["kind"] == "pure" else r["guarantee"]["rho"]
    assert number == pytest.approx(got, rel=5e-4)


def test_the_page_says_why_diffprivlibs_epsilon_became_1_105():
    at = open_app("pages/protection.py", {"model": "beta_binomial", "rel": "diffprivlib", "rel_mech": "Laplace",
                                          "rel.epsilon": "1", "rel.sensitivity": "1",
                                          "rel.delta": "0.1", "methods": "naive"}, 120)
    assert not at.exception, [e.value for e in at.exception]
    sentence = next(m.value for m in at.markdown if m.value.startswith("##### "))
    assert sentence.startswith("##### At ε = 1.105 (diffprivlib's (1, 0.1)-DP Laplace, met as pure 1.105-DP), "), \
        sentence
