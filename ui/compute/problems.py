"""Validation of a scenario in the order the sidebar checks it, and the prepared-problem cache.

The sidebar asks these in turn (model, mechanism, size mechanism, method settings) so that each
``ValueError`` can be shown under the section whose field it names; a valid spec is then prepared
(simulated, uploaded or typed release) once and kept. Prepared problems are immutable and go through
``st.cache_resource`` (no copy).
"""
from __future__ import annotations

import json
import re
from typing import Any, Mapping

import streamlit as st

import engine
from engine.methods import validate_method as _validate_method
from engine.models.sample_size import check_n_prior, make_size_mechanism
from engine.numerics.plausibility import IMPLAUSIBLE_SDS
from engine.mechanisms import RandomizedResponse
from engine.mechanisms.ratio import OpenDPMean
from engine.protection.report import unbounded_records
from engine.spec import build_mechanism

from ..params.scenario import Scenario
from ..params.spec import model_table, n_mechanism_table, noise_table
from ..protection_text import mechanism_line
from .records import RESULT_TTL_S, Prepared

__all__ = ["check_model", "describe_mechanism", "in_symbols", "describe_size_mechanism", "validate_method", "prepare"]


def _checked_model(scenario: Scenario, records=None):
    """The engine's model for the [model] table (with an unknown n: the prior on n is checked, and a
    typed release's missing n is stood in by the widget's n, which only the full spec replaces)."""
    table = model_table(scenario, records)
    n_prior = table.pop("n_prior", None)
    if n_prior is not None:
        check_n_prior(n_prior, scenario.model)
        table.setdefault("n", max(int(scenario.n), 1))
    return engine.make_model(table["name"], table)


def check_model(scenario: Scenario, records=None) -> None:
    """Raise the engine's ValueError if the [model] table is invalid."""
    _checked_model(scenario, records)


def in_symbols(text: str) -> str:
    """A mechanism's description (the engine's, which a terminal prints) as the pages write it: σ for sigma, as
    the sidebar's boxes and the Learn texts do, and a zCDP budget as its ρ ("0.5-zCDP" read as a number glued to
    a name; the glossary defines ρ): "Gaussian noise, σ = 1; zCDP with ρ = 0.5 (L2 sensitivity 1)"."""
    return _ZCDP.sub(r"zCDP with ρ = \1", text.replace("sigma = ", "σ = "))


_ZCDP = re.compile(r"(?<![\w(])(\d[\d.]*(?:e[+-]?\d+)?)-zCDP")


def describe_mechanism(scenario: Scenario, records=None) -> str:
    """The mechanism's own description (noise scale and guarantee); raises ValueError. With an
    unknown n the default sensitivity is the unbounded (add/delete one record) one. A release made with a
    library is its ``[release]`` table, mapped by the engine to the exact noise law."""
    model = _checked_model(scenario, records)
    return _qualified(model, build_mechanism(noise_table(scenario), model, unbounded=scenario.unknown_n))


def _qualified(model, mechanism) -> str:
    """The mechanism's description qualified for unbounded records, as the sidebar's "Implied noise" and Compare's
    figure title both say it (:func:`ui.protection_text.mechanism_line`)."""
    return mechanism_line(in_symbols(mechanism.describe()), {"unbounded_records": _unbounded(model, mechanism)})


def _unbounded(model, mechanism) -> dict | None:
    """Whom the guarantee covers where the records are unbounded (:func:`engine.protection.report.unbounded_records`,
    which ``engine.risk`` reports): the sidebar's "Implied noise" says it as What it protects' line does
    (:func:`ui.protection_text.mechanism_line`); it said "pure 1-DP (sensitivity 1)" for every record of an unclamped
    Poisson count. None for a release whose guarantee is not additive noise's on the statistic (OpenDP's mean,
    randomized response), as ``engine.risk`` has it."""
    if isinstance(mechanism, (OpenDPMean, RandomizedResponse)):
        return None
    return unbounded_records(model, mechanism)


def describe_size_mechanism(scenario: Scenario) -> str:
    """The [n_mechanism]'s description (noise on the released size); raises ValueError."""
    return make_size_mechanism(n_mechanism_table(scenario)).describe()


def validate_method(settings: Mapping[str, Any]) -> dict:
    """The engine's check of a [method] table; raises ValueError naming the field."""
    return _validate_method(settings)


@st.cache_resource(show_spinner=False, max_entries=64, ttl=RESULT_TTL_S)
def _problem(spec_text: str) -> engine.Problem:
    return engine.prepare(json.loads(spec_text))


def prepare(spec_text: str) -> Prepared:
    """Validate and prepare a spec (simulation / upload / release); raises ValueError."""
    problem = _problem(spec_text)
    return Prepared(
        s_dp=tuple(float(v) for v in problem.s_dp),
        true_params=None if problem.true_params is None else dict(problem.true_params),
        has_records=problem.records is not None,
        mechanism_text=in_symbols(problem.mechanism.describe()),
        mechanism_title=_qualified(problem.model, problem.mechanism),
        param_names=tuple(problem.model.param_names),
        n=int(problem.model.n),
        epsilon=getattr(problem.mechanism, "epsilon", None),
        exact_available=engine.has_closed_form(problem),
        n_dp=None if problem.unknown_n is None or problem.unknown_n.n_dp is None else float(problem.unknown_n.n_dp),
        size_unknown=problem.unknown_n is not None,
        n_true=None if problem.unknown_n is None or problem.records is None else int(problem.records.shape[0]),
        model_name=str(getattr(problem.model, "name", "")),
        supported_methods=None if getattr(problem.model, "methods", None) is None else tuple(problem.model.methods),
        param_support=dict(getattr(problem.model, "param_support", None) or {}),
        release_methods=None if getattr(problem.mechanism, "methods", None) is None else tuple(
            problem.mechanism.methods),
        release_label=str(getattr(problem.mechanism, "label", getattr(problem.mechanism, "name", ""))),
        far=_far(problem),
    )


def _far(problem) -> dict | None:
    """``engine.release_distance`` when the release is implausible (beyond ``IMPLAUSIBLE_SDS``), else None."""
    far = engine.release_distance(problem)
    return far if far is not None and far["noise_sds"] > IMPLAUSIBLE_SDS else None
