"""The library's public functions on bad input (an audit of 1,433 calls, 2026-11-27): each case here raised a
TypeError, ZeroDivisionError, OverflowError, KeyError or MemoryError, hung, returned NaN draws, or silently ignored
or reinterpreted what it was given. Every one is now a ValueError naming the field, the value and what is allowed."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import engine

S = {"seed": 1, "model": {"name": "beta_binomial", "n": 20}, "mechanism": {"name": "laplace", "epsilon": 1.0},
     "data": {"s_dp": [7]}}
SIM = {**S, "data": {"simulate": {"theta": 0.3}}}
PACKAGE = "tests/fixtures/dpwizard_grade_hours.zip"


@pytest.fixture(scope="module")
def problem():
    return engine.prepare(S)


def _refused(pattern: str, call) -> None:
    with pytest.raises(ValueError, match=pattern):
        call()


# --------------------------------------------------------------------------- the spec: silently reinterpreted
def test_a_truth_probability_given_to_the_k_ary_scheme_is_refused_not_ignored():
    spec = {**S, "mechanism": {"name": "randomized_response", "epsilon": 1, "scheme": "k_ary", "truth_prob": 0.99}}
    _refused(r"^mechanism\.truth_prob = 0\.99 is invalid: is the coin scheme's", lambda: engine.spec_from_dict(spec))


def test_noise_scales_beyond_double_precision_name_the_field_given():
    """epsilon = 1e300 divided by zero in the samplers, sigma = 1e160 overflowed: the field the user gave, and the
    scale it makes."""
    for mech, field in (({"name": "laplace", "epsilon": 1e300}, "epsilon"), ({"name": "gaussian", "sigma": 1e160},
                                                                             "sigma"),
                        ({"name": "gaussian", "sigma": 1e-300}, "sigma"), ({"name": "laplace", "epsilon": 1e-300},
                                                                           "epsilon")):
        _refused(rf"^mechanism\.{field} = .* is invalid: makes a noise scale of .*; the engine computes with scales "
                 r"from 1e-10", lambda: engine.prepare({**S, "mechanism": mech}))
    assert engine.prepare({**S, "mechanism": {"name": "laplace", "epsilon": 1e6}}).mechanism.scale == 1e-6  # kept


def test_a_released_n_far_above_any_analysable_n_is_refused():
    spec = {"seed": 3, "model": {"name": "beta_binomial", "n_prior": {"name": "poisson", "mean": 20.0}},
            "mechanism": {"name": "laplace", "scale": 2.0}, "n_mechanism": {"name": "laplace", "scale": 1.0},
            "data": {"s_dp": [7.3], "n_dp": 1e9}}
    _refused(r"^data\.n_dp = 1000000000\.0 is invalid: lies more than 20 noise sds", lambda: engine.prepare(spec))
    assert engine.prepare({**spec, "data": {"s_dp": [7.3], "n_dp": 21.4}}).model.n == 21


def test_a_chain_that_would_store_billions_of_iterations_is_refused():
    _refused(r"^method\.thin = 10000 is invalid: makes warmup \+ draws x thin = 10,000,000,500 iterations",
             lambda: engine.validate_method({"name": "da_mcmc", "chains": 1, "draws": 10**6, "thin": 10_000}))


def test_opendp_mean_bounds_that_are_not_numbers():
    spec = {"seed": 1, "model": {"name": "normal_known_sd", "n": 20, "sd": 1.0, "lo": -3.0, "hi": 3.0},
            "release": {"library": "opendp", "mechanism": "mean", "sum_scale": 1.0, "length_scale": 1.0,
                        "bounds": ["a", "b"]}, "data": {"s_dp": [0.5]}}
    _refused(r"^release\.bounds = \['a', 'b'\] is invalid: must be the model's \[lo, hi\]",
             lambda: engine.spec_from_dict(spec))


# --------------------------------------------------------------------------- OPS
def test_ops_refuses_a_pair_truncation_for_beta_binomial_and_never_returns_nan():
    _refused(r"^method\.truncation = \[0\.1, 0\.9\] is invalid: must be one number in \(0, 0\.5\)",
             lambda: engine.run({**SIM, "method": {"name": "ops", "k": 10, "truncation": [0.1, 0.9]}}))
    _refused(r"^method\.epsilon = 1e\+300 is invalid: is too large for ops",
             lambda: engine.run({**SIM, "method": {"name": "ops", "k": 10, "epsilon": 1e300}}))


# --------------------------------------------------------------------------- exported helpers
def test_budget_conversions_check_their_arguments():
    _refused(r"^epsilon = 0 is invalid", lambda: engine.scale_from_budget("laplace", 1, epsilon=0))
    _refused(r"^epsilon = None is invalid", lambda: engine.scale_from_budget("laplace", 1))
    _refused(r"^epsilon = -1 is invalid", lambda: engine.scale_from_budget("laplace", 1, epsilon=-1))
    _refused(r"^rho = None is invalid: gaussian needs rho", lambda: engine.scale_from_budget("gaussian", 1, epsilon=1))
    _refused(r"^scale = 0 is invalid", lambda: engine.budget_from_scale("laplace", 1, 0))
    _refused(r"^mechanism\.name = 'coin' is invalid", lambda: engine.budget_from_scale("coin", 1, 1.0))
    assert engine.scale_from_budget("laplace", 1, epsilon=2) == 0.5
    _refused(r"^n_dp = inf is invalid", lambda: engine.plug_in_n(math.inf))


def test_runs_check_the_seed_the_budget_and_the_problem(problem):
    _refused(r"^seed = '1' is invalid: must be an integer in \[0, 2\^63\)",
             lambda: engine.run_method(problem, {"name": "exact"}, "1"))
    _refused(r"^seed = -1 is invalid", lambda: engine.run_method(problem, {"name": "exact"}, -1))
    _refused(r"^max_seconds = -1 is invalid", lambda: engine.run(S, max_seconds=-1))  # blamed method.draws
    _refused(r"^max_seconds = '5' is invalid", lambda: engine.run(S, max_seconds="5"))
    _refused(r"^problem = 'dict' is invalid: must be an engine\.Problem",
             lambda: engine.run_method(S, {"name": "exact"}, 1))
    _refused(r"^draws = 0 is invalid", lambda: engine.confidential_posterior(engine.prepare(SIM), draws=0))
    _refused(r"^SPEC = None is invalid", lambda: engine.load_spec(None))
    _refused(r"^max_seconds = -1 is invalid", lambda: engine.fit_to_budget(problem, {"name": "da_mcmc"}, -1))
    _refused(r"^k = 1000000 is invalid: must be an integer >= 2 and <= 64",
             lambda: engine.make_mechanism("randomized_response", {"epsilon": 1}, k=10**6))  # hung


def test_studies_refuse_what_would_read_as_an_answer():
    _refused(r"^mechanism = None is invalid", lambda: engine.protection_sweep({}, [1.0]))  # KeyError
    frame = pd.DataFrame({"epsilon": [1.0, 2.0], "method": ["exact", "exact"], "param": ["theta", "theta"],
                          "sd": [0.2, 0.1]})
    assert engine.smallest_epsilon_meeting(frame, 0.15) == 2.0 and engine.smallest_epsilon_meeting(frame, 0.01) is None
    _refused(r"^method = 'exakt' is invalid: is not in the sweep; it holds exact",
             lambda: engine.smallest_epsilon_meeting(frame, 10.0, method="exakt"))  # read as "no epsilon meets it"
    _refused(r"^target_sd = -1 is invalid", lambda: engine.smallest_epsilon_meeting(frame, -1))
    _refused(r"^param = 'lam' is invalid", lambda: engine.smallest_epsilon_meeting(frame, 0.15, param="lam"))
    _refused(r"^replicates = -5 is invalid", lambda: engine.estimate_calibration_cost(S, ["naive"], -5))


def test_size_priors_and_mean_splits_check_their_arguments():
    _refused(r"^SizePrior\.name = 'poison' is invalid", lambda: engine.SizePrior("poison", -5))
    _refused(r"^SizePrior\.dispersion = None is invalid", lambda: engine.SizePrior("negative_binomial", 20.0))
    args = dict(lower=0.0, upper=40.0, sd=10.0, n=400, prior_mean=20.0, prior_sd=10.0)
    _refused(r"^lower = 'a' is invalid", lambda: engine.mean_budget_split(1.0, **{**args, "lower": "a"}))
    _refused(r"^releases = 1000000000 is invalid", lambda: engine.mean_budget_split(1.0, **args, releases=10**9))
    _refused(r"^prior_mean = nan is invalid", lambda: engine.mean_budget_split(1.0, **{**args, "prior_mean": math.nan}))


def test_import_dpwizard_checks_its_seed_and_its_folder(tmp_path):
    _refused(r"^seed = 'x' is invalid", lambda: engine.import_dpwizard(PACKAGE, str(tmp_path / "o"), seed="x"))
    afile = tmp_path / "f.txt"
    afile.write_text("x")
    _refused(r"^out = .* is invalid: must be a directory", lambda: engine.import_dpwizard(PACKAGE, str(afile)))


def test_privatize_checks_the_records_it_is_given():
    model = engine.make_model("beta_binomial", {"n": 3})
    mech = engine.make_mechanism("laplace", {"epsilon": 1.0})
    _refused(r"^data\.records record 2 = 2\.0 is invalid: beta_binomial records must be 0 or 1",
             lambda: engine.privatize(model, mech, [0, 2, 5.5], np.random.default_rng(0)))
    _refused(r"^data\.records record 3 = nan is invalid",
             lambda: engine.privatize(model, mech, [0, 1, math.nan], np.random.default_rng(0)))
    # the engine's own simulated records skip the check: the same release either way
    one = engine.privatize(model, mech, [0, 1, 1], np.random.default_rng(5))
    two = engine.privatize(model, mech, np.array([0, 1, 1]), np.random.default_rng(5), check=False)
    assert one.tolist() == two.tolist()


def test_risk_refuses_a_discrete_noise_too_wide_to_sum_point_by_point():
    """risk() at discrete Gaussian sigma = 1e8 allocated 1.9e9 lattice points and ran out of memory after minutes."""
    spec = {**S, "mechanism": {"name": "discrete_gaussian", "sigma": 1e8}}
    _refused(r"^mechanism\.sigma = 100000000\.0 is invalid: spreads the release over 1,900,000,005 lattice points",
             lambda: engine.risk(spec))


def test_a_library_release_past_double_precision_is_refused():
    """diffprivlib's GaussianAnalytic at epsilon = 1e300 overflowed, LaplaceBoundedDomain at 1e-300 divided by
    zero: the release's own parameters are named, with the scales the engine computes with."""
    _refused(r"^release = \{'epsilon': 1e\+300, 'delta': 1e-05, 'sensitivity': 1\.0\} is invalid: makes a noise "
             r"scale outside", lambda: engine.release_from("diffprivlib", "GaussianAnalytic", epsilon=1e300,
                                                            delta=1e-5, sensitivity=1.0))
    _refused(r"^release = \{'epsilon': 1e-300, 'sensitivity': 1\.0\} is invalid",
             lambda: engine.release_from("diffprivlib", "LaplaceBoundedDomain", epsilon=1e-300, sensitivity=1.0,
                                         lower=0, upper=20))
    _refused(r"^release = \{'scale': 10000000000000\.0\} is invalid: makes a noise scale of 1e\+13",
             lambda: engine.release_from("opendp", "laplace", domain="float", scale=1e13))


def test_abc_on_many_simulated_records_checks_its_time_limit_every_few_proposals():
    """normal_known_sd's ABC simulates n records a proposal and ran at least 100 proposals between checks of its
    time limit: at n = 10^7 one batch took 17 s against a max_seconds of 5. A batch now holds about 20 million
    simulated records (20 proposals at n = 10^6); below n = 200,000 nothing changes."""
    from engine.methods.abc_rejection import abc_rejection

    def batches(n):
        spec = {"seed": 1, "model": {"name": "normal_known_sd", "n": n},  # nothing accepted: ends at max_proposals
                "mechanism": {"name": "laplace", "epsilon": 1.0}, "data": {"s_dp": [1e9]}}
        calls = []
        with pytest.raises(engine.NoneAccepted) as info:
            abc_rejection(engine.prepare(spec), np.random.default_rng(0), draws=10, max_proposals=50,
                          on_progress=lambda done, total: calls.append(done))
        assert info.value.proposals == 50
        return len(calls)

    assert batches(10**6) == 3  # 20 + 20 + 10
    assert batches(1000) == 1  # 50 in one batch of at most 20,000


def test_an_epsilon_sweep_of_an_invalid_spec_or_method_is_an_error_not_an_empty_table():
    """epsilon_sweep with n = -5 or a misspelt method returned an empty table, the reason only in attrs["skipped"];
    a method that does not apply at all (exact without a closed form) is still left out with its reason."""
    bad = {**S, "model": {"name": "beta_binomial", "n": -5}}
    _refused(r"^model\.n = -5 is invalid", lambda: engine.epsilon_sweep(bad, [0.5, 1.0], [{"name": "exact"}]))
    _refused(r"^method\.name = 'exakt' is invalid", lambda: engine.epsilon_sweep(S, [0.5, 1.0], [{"name": "exakt"}]))
    frame, _ = engine.epsilon_sweep(S, [0.5, 1.0], [{"name": "exact"}])
    assert sorted(frame["epsilon"]) == [0.5, 1.0]


def test_records_that_are_not_a_list_and_counts_given_as_huge_floats():
    spec = {**S, "model": {"name": "beta_binomial"}, "data": {"records": 1}}
    _refused(r"^data\.records = 1 is invalid: must be a non-empty list", lambda: engine.spec_from_dict(spec))  # model.n
    _refused(r"^method\.draws = 1e\+300 is invalid: must be an integer >= 1 and <= 10000000$",  # printed 301 digits
             lambda: engine.validate_method({"name": "da_mcmc", "draws": 1e300}))


def test_a_release_that_is_not_numbers_is_refused_when_the_spec_is_read_not_at_prepare():
    for bad in ("abc", [1, "x"], [], [float("nan")], True):
        _refused(r"^data\.s_dp = .* is invalid: must be a list of finite numbers",
                 lambda: engine.spec_from_dict({**S, "data": {"s_dp": bad}}))
    assert engine.spec_from_dict({**S, "data": {"s_dp": 7}}).data["s_dp"] == 7  # a bare number is a list of one


def test_prior_parameters_and_record_sds_past_double_precision_are_refused():
    """A normal prior sd of 1e-300 divided by zero in every method, a gamma rate of 1e-300 overflowed in exact, a
    beta prior of 1e-300 failed inside numpy ("a must be a positive integer unless no samples are taken")."""
    for model, field in (({"name": "normal_known_sd", "n": 20, "prior_sd": 1e-300}, "prior_sd"),
                         ({"name": "normal_known_sd", "n": 20, "sd": 1e-300}, "sd"),
                         ({"name": "normal_known_sd", "n": 20, "prior_sd": 1e300}, "prior_sd"),
                         ({"name": "poisson_gamma", "n": 20, "beta": 1e-300}, "beta"),
                         ({"name": "beta_binomial", "n": 20, "b": 1e-300}, "b")):
        _refused(rf"^model\.{field} = .* is invalid: must be a number from 1e-12 to 1e\+12",
                 lambda: engine.prepare({**S, "model": model}))
    assert engine.prepare({**S, "model": {"name": "beta_binomial", "n": 20, "a": 0.5, "b": 0.5}}).model.a == 0.5


def test_a_spreadsheet_export_with_semicolons_and_decimal_commas_or_tabs_is_read(tmp_path):
    """A CSV saved by a spreadsheet in a locale whose decimal mark is the comma separates cells with ';' and writes
    0,5: it was refused as one column named 'x;y'. Tabs likewise. A comma-separated file is read as before."""
    semi = tmp_path / "semi.csv"
    semi.write_bytes(b"\xef\xbb\xbfx;y\r\n0,5;1\r\n1;0\r\n")
    assert engine.load_records_csv(str(semi), "x").tolist() == [0.5, 1.0]
    tab = tmp_path / "tab.csv"
    tab.write_text("x\ty\n0\t1\n1\t0\n")
    assert engine.load_records_csv(str(tab), "y").tolist() == [1.0, 0.0]
    comma = tmp_path / "comma.csv"
    comma.write_text('x,y\n"0,5",1\n')
    _refused(r"^data\.csv line 2 column 'x' = '0,5' is invalid: must be a number",
             lambda: engine.load_records_csv(str(comma), "x"))  # a comma file's decimal mark is the point
    assert engine.load_records_csv(str(comma), "y").tolist() == [1.0]
