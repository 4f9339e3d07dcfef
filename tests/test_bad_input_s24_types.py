"""Bad input found by the session-24 audit: exported engine functions given an argument of the wrong type raised
AttributeError or TypeError (``engine.summary(None)``: "'NoneType' object has no attribute 'info'"), an unhelpful
ValueError (``make_mechanism("laplace", "x")``: "dictionary update sequence element #0 has length 1") or a raw
FileNotFoundError (``write_outputs`` to a folder that cannot be made). Each now raises a ValueError naming the
argument, the value and what is allowed. Each case failed before its fix."""
from __future__ import annotations

import re

import numpy as np
import pytest

import engine
from engine.spec import build_mechanism

S = {"seed": 1, "model": {"name": "beta_binomial", "n": 20}, "mechanism": {"name": "laplace", "epsilon": 1.0},
     "data": {"s_dp": [7]}, "method": {"name": "exact"}}
MECHANISM = ("params = 'x' is invalid: must be the mechanism's spec table (a dict) or None, e.g. {\"epsilon\": 1.0}; "
             "got a str")
RESULT = "result = None is invalid: must be an engine Result (what engine.run or engine.run_method returns)"


@pytest.fixture(scope="module")
def made():
    """A prepared problem and its exact result: the right objects, passed where the other is wanted."""
    problem = engine.prepare(engine.spec_from_dict(S))
    return {"problem": problem, "result": engine.run(engine.spec_from_dict(S))}


CASES = {
    "summary(None)": ("^" + re.escape(RESULT) + "$", lambda m, tmp: engine.summary(None)),
    "summary(problem)": (r"^result = Problem\(.* is invalid: must be an engine Result .*; got a Problem$",
                         lambda m, tmp: engine.summary(m["problem"])),
    "summary(dict)": (r"^result = \{\} is invalid: .*; got a dict$", lambda m, tmp: engine.summary({})),
    "summary_dict(None)": (r"^result = None is invalid", lambda m, tmp: engine.summary_dict(None)),
    "convergence(None)": (r"^result = None is invalid", lambda m, tmp: engine.convergence(None)),
    "draws_frame(None)": (r"^result = None is invalid", lambda m, tmp: engine.draws_frame(None)),
    "to_inference_data('x')": (r"^result = 'x' is invalid: .*; got a str$",
                               lambda m, tmp: engine.to_inference_data("x")),
    "write_outputs(None, dir)": (r"^result = None is invalid", lambda m, tmp: engine.write_outputs(None, str(tmp))),
    "write_outputs(result, None)": (r"^out_dir = None is invalid: must be the path of a folder",
                                    lambda m, tmp: engine.write_outputs(m["result"], None)),
    "release_distance(None)": (r"^problem = None is invalid: must be a prepared Problem \(what engine\.prepare",
                               lambda m, tmp: engine.release_distance(None)),
    "implausible_release(None)": (r"^problem = None is invalid", lambda m, tmp: engine.implausible_release(None)),
    "exact_mixture(None)": (r"^problem = None is invalid", lambda m, tmp: engine.exact_mixture(None)),
    "has_closed_form(None)": (r"^problem = None is invalid", lambda m, tmp: engine.has_closed_form(None)),
    "spec_to_toml(None)": (r"^spec = None is invalid: must be a Spec", lambda m, tmp: engine.spec_to_toml(None)),
    "spec_to_dict(dict)": (r"^spec = \{'seed': 1, .* a dict goes through engine\.spec_from_dict first\); got a dict$",
                           lambda m, tmp: engine.spec_to_dict(S)),
    "fit_calibration_to_budget(None, 10)": (r"^cost = None is invalid: must be the Cost that",
                                            lambda m, tmp: engine.fit_calibration_to_budget(None, 10)),
    "fit_calibration_to_budget(cost, 'x')": (
        r"^max_seconds = 'x' is invalid",
        lambda m, tmp: engine.fit_calibration_to_budget(engine.Cost("calibration", 100.0, "replicates", 10.0, "d"),
                                                        "x")),
    "privatize(rng=None)": (r"^rng = None is invalid: must be a numpy random Generator",
                            lambda m, tmp: engine.privatize(m["problem"].model, m["problem"].mechanism,
                                                            np.ones(20), None)),
    "build_mechanism(None, model)": (
        r"^mechanism = None is invalid: must be a spec's \[mechanism\] or \[release\] table",
        lambda m, tmp: build_mechanism(None, m["problem"].model)),
    "make_model(name, None)": (r"^params = None is invalid: must be the model's spec table",
                               lambda m, tmp: engine.make_model("beta_binomial", None)),
    "smallest_epsilon_meeting(None, 0.1)": (r"^frame = None is invalid: must be the table epsilon_sweep returns",
                                            lambda m, tmp: engine.smallest_epsilon_meeting(None, 0.1)),
    "make_mechanism(name, 'x')": ("^" + re.escape(MECHANISM) + "$",
                                  lambda m, tmp: engine.make_mechanism("laplace", "x")),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_wrong_type_is_a_value_error_naming_the_argument(case, made, tmp_path):
    pattern, call = CASES[case]
    with pytest.raises(ValueError, match=pattern):
        call(made, tmp_path)


def test_an_output_folder_that_cannot_be_made_is_a_value_error_and_still_the_os_error(made, tmp_path):
    """write_outputs under a regular file (the audit's /proc/nope): a ValueError naming out_dir and why, which is
    also the OSError the CLI reports as ``--out = ... is invalid: Not a directory``."""
    (tmp_path / "file").write_text("")
    out = str(tmp_path / "file" / "out")
    with pytest.raises(ValueError) as caught:
        engine.write_outputs(made["result"], out)
    assert str(caught.value) == (f"out_dir = {out!r} is invalid: must be a folder that can be created and written "
                                 "(Not a directory)")
    assert isinstance(caught.value, OSError) and caught.value.strerror == "Not a directory"
