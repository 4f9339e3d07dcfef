"""The scenario through the engine, in the order a reader fills the sidebar in (model, size, mechanism,
data, methods); each ``ValueError`` message is assigned to the section whose field it names, and a
valid scenario is prepared (:mod:`ui.compute.problems`)."""
from __future__ import annotations

import engine

from ..compute import problems
from ..compute.records import Prepared, spec_json
from ..params.messages import in_words
from ..params.parsing import parse_numbers, release_example
from ..params.scenario import Scenario
from ..params.spec import method_settings, model_table, to_spec_dict


def _section_of(message: str) -> str:
    head = message.split(" = ", 1)[0].split(" ", 1)[0]
    if head.startswith("model.n_prior") or head.startswith("n_mechanism"):
        return "size"
    if head.startswith("model"):
        return "model"
    if head.startswith(("mechanism", "release")):
        return "mechanism"
    if head.startswith("method"):
        return "methods"
    return "data"


def _validate(s: Scenario, records, upload_error: str | None, typed: dict | None = None) -> tuple[
        dict, Prepared | None, str | None, str | None]:
    """``typed``: {section: message} of number boxes whose text is not a number; they come first in their
    section (the scenario holds the last valid value there, which the engine would otherwise judge)."""
    errors: dict[str, str] = {}
    noise = None
    if upload_error:
        errors["data"] = in_words(upload_error)
    try:
        problems.check_model(s, records)
    except ValueError as exc:
        errors["model"] = str(exc)
    if "model" in errors and _section_of(errors["model"]) == "size":
        errors["size"] = errors.pop("model")
    # the model's values the engine judges are valid (a box whose text is not a number holds the last valid one),
    # so the mechanism is judged too: a bad ε showed nothing while n's box held "4o"
    model_ok = "model" not in errors and "size" not in errors
    for section, message in (typed or {}).items():
        errors[section] = message
    if model_ok:
        try:
            noise = problems.describe_mechanism(s, records)
        except ValueError as exc:  # after a typed message in the same section: the box's text is what it shows
            section = _section_of(str(exc))
            errors.setdefault(section if section in ("model", "size") else "mechanism", str(exc))
    if s.size_released and "size" not in errors:
        try:
            problems.describe_size_mechanism(s)
        except ValueError as exc:
            errors["size"] = str(exc)
    for m in s.methods:
        try:
            problems.validate_method(method_settings(s, m))
        except ValueError as exc:
            errors.setdefault("methods", str(exc))
    if s.data == "s_dp" and model_ok and "data" not in errors:
        try:
            _typed_release(s)
        except ValueError as exc:
            errors["data"] = str(exc)
    if errors:
        return _worded(errors, typed), None, None, noise
    try:
        text = spec_json(to_spec_dict(s, records))
        return errors, problems.prepare(text), text, noise
    except ValueError as exc:
        errors.setdefault(_section_of(str(exc)), str(exc))
        return _worded(errors, typed), None, None, noise


def _typed_release(s: Scenario) -> None:
    """The typed release read as numbers, its message with this model's example: one number for a model of one
    statistic ("twelve" was told to type a list like "104, 120, 74, 102"), the list of the right length else. The
    engine judges the length afterwards."""
    try:
        table = model_table(s)
        table.pop("n_prior", None)
        table.setdefault("n", max(int(s.n), 1))
        count = int(getattr(engine.make_model(table["name"], table), "stat_dim", 0) or 0)
    except (ValueError, TypeError):
        count = 0
    parse_numbers("data.s_dp", s.s_dp, allowed=f"must be {release_example(count)}" if count else None)


def _worded(errors: dict, typed: dict | None) -> dict:
    """Every engine message in the sidebar's words (a typed-number message already is)."""
    return {k: v if (typed or {}).get(k) == v else in_words(v) for k, v in errors.items()}
