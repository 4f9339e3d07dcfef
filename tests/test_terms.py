"""Terms on this page: the budget terms the current scenario's noise uses, and no others (a pure-ε Laplace demo got
δ, ρ, zCDP and μ-GDP defined)."""
from __future__ import annotations

from dataclasses import replace

import pytest

from app_support import open_app
from ui import keys
from ui.presets import DEMO
from ui.terms import BUDGET_TERMS, budget_terms, scenario_terms

ALL = ("epsilon", "delta", "rho", "zcdp", "gdp", "sensitivity", "s_dp")


@pytest.mark.parametrize("changes, used", [
    ({}, set()),  # the demo: Laplace at ε = 0.3
    ({"mechanism": "discrete_laplace"}, set()),
    ({"mechanism": "randomized_response", "budget_form": "k_ary"}, set()),
    ({"mechanism": "gaussian", "budget_form": "rho"}, {"rho", "zcdp", "gdp"}),
    ({"mechanism": "gaussian", "budget_form": "epsilon_delta"}, {"delta", "rho", "zcdp", "gdp"}),
    ({"mechanism": "discrete_gaussian", "budget_form": "rho"}, {"rho", "zcdp", "gdp"}),
    ({"release": "diffprivlib", "release_mechanism": "Laplace", "release_params": (("epsilon", 1.0), ("delta", 0.0))},
     set()),
    ({"release": "diffprivlib", "release_mechanism": "Laplace", "release_params": (("epsilon", 1.0), ("delta", 1e-5))},
     {"delta"}),
    ({"release": "diffprivlib", "release_mechanism": "GaussianAnalytic",
      "release_params": (("epsilon", 1.0), ("delta", 1e-5))}, {"delta", "rho", "zcdp", "gdp"}),
    ({"release": "opendp", "release_mechanism": "gaussian"}, {"rho", "zcdp", "gdp"}),
    ({"sample_size": "unknown", "n_mechanism": "gaussian"}, {"rho", "zcdp", "gdp"}),
])
def test_the_budget_terms_are_those_of_the_scenarios_noise(changes, used):
    s = replace(DEMO, **changes)
    assert budget_terms(s) == used
    assert scenario_terms(ALL, s) == tuple(t for t in ALL if t not in BUDGET_TERMS or t in used)
    assert scenario_terms(ALL, None) == ALL


def _terms(at) -> str:
    return next(e for e in at.expander if e.label == "Terms on this page").markdown[0].value


@pytest.mark.parametrize("page", ["pages/compare.py", "pages/protection.py"])
def test_the_demos_terms_leave_out_delta_rho_zcdp_and_gdp_and_a_gaussian_brings_them(page):
    """The demo is Laplace at ε = 0.3 (pure ε-DP): its glossary defined δ, ρ, zCDP and μ-GDP. Switching the sidebar
    to Gaussian noise brings ρ and zCDP in the same run (the expander sits above the sidebar's reading of the
    widgets)."""
    at = open_app(page, {"methods": "naive"}, 120)
    assert not at.exception, [e.value for e in at.exception]
    text = _terms(at)
    assert "**ε (epsilon)**" in text and "**Sensitivity Δ**" in text
    for name in ("δ (delta)", "ρ (rho)", "zCDP", "μ-GDP"):
        assert f"**{name}**" not in text, (name, text)
    at.sidebar.selectbox(key=keys.W_MECHANISM).set_value("gaussian").run()
    assert not at.exception, [e.value for e in at.exception]
    text = _terms(at)
    assert "**ρ (rho)**" in text and "**zCDP**" in text and "**δ (delta)**" not in text
