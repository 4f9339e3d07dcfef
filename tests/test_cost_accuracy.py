"""The cost model against measured runs, with nothing timed in the suite: the cells ``bench/cost_accuracy.py``
recorded (linear_regression at Ju et al.'s design, n = 100 to 10^6, with the method and settings ``auto`` runs
there; the log-linear table chain over six designs) are priced again by ``engine.estimate_cost`` at the machine
rates recorded with them, and each estimate must lie within the factor of two the estimate promises
(``engine/cost.py``) of the recorded run. Before those prices were measured, the estimates were 2.4 to 8 times
the regression runs and 1.6 to 4.3 times the log-linear ones."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import engine
from engine.cost import estimate_cost

RECORD = json.loads((Path(__file__).resolve().parent.parent / "bench" / "results" / "cost_accuracy_2026-11-27.json")
                    .read_text())


def _label(cell) -> str:
    model = cell["spec"]["model"]
    if model["name"] == "linear_regression":
        mech = cell["spec"]["mechanism"]
        return f"regression-{model['n']}-{mech['name']}-{mech.get('epsilon', mech.get('rho')):g}"
    return f"loglinear-{model['class_levels']}x{model['feature_levels']}"


def test_the_record_covers_both_samplers_every_size_and_the_loglinear_designs():
    cells = RECORD["cells"]
    regression = [c for c in cells if c["spec"]["model"]["name"] == "linear_regression"]
    assert {c["method"]["name"] for c in regression} == {"da_mcmc", "pseudo_marginal"}
    assert {c["spec"]["model"]["n"] for c in regression} == {100, 1_000, 10_000, 100_000, 1_000_000}
    assert len([c for c in cells if c["spec"]["model"]["name"] == "naive_bayes_loglinear"]) == 6


@pytest.mark.parametrize("cell", RECORD["cells"], ids=_label)
def test_estimates_are_within_a_factor_of_two_of_the_runs(cell):
    problem = engine.prepare(cell["spec"])
    seconds = estimate_cost(problem, cell["method"], RECORD["rates"]).seconds
    assert 0.5 <= seconds / cell["wall_s"] <= 2.0, (seconds, cell)
