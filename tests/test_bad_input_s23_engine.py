"""Bad input found by the session-23 audit (/tmp/s23/badinput/report.md), engine side: a documented release that
could not be entered (OpenDP's mean at r = +-inf), a default method that failed specs which never named it, errors
that named a field or value the user did not type, input silently reinterpreted, and non-ValueErrors. Each test
failed before its fix."""
from __future__ import annotations

import io
import math
import warnings

import numpy as np
import pytest
from scipy import stats

import engine
from engine.core.results import Result
from engine.numerics.diagnostics import draws_frame

RATIO = {"seed": 3, "model": {"name": "normal_known_sd", "n_prior": {"name": "poisson", "mean": 20}, "sd": 1.0,
                              "lo": -3.0, "hi": 3.0},
         "release": {"library": "opendp", "mechanism": "mean", "sum_scale": 6.0, "length_scale": 2.0},
         "data": {"s_dp": [0.5]}}
S = {"seed": 1, "model": {"name": "beta_binomial", "n": 20}, "mechanism": {"name": "laplace", "epsilon": 1.0},
     "data": {"s_dp": [7]}}
METHODS = [{"name": "exact"}]


def _refused(pattern: str, call) -> None:
    with pytest.raises(ValueError, match=pattern):
        call()


# --------------------------------------------------------------------------- D2: OpenDP's mean released as +-inf
def _posterior_given_infinite_ratio(n_top: int = 80, draws: int = 40_000):
    """E[n | r = +inf] and E[mu | r = +inf] without the engine: P(r = +inf | S, n) = P(V <= -n) P(U > -S) with
    P(V <= -n) = a^n / (1 + a) (the 1 + a cancels), S the clamped sum of n records; mu from its N(0, 10) prior and
    every n's S from one cumulative sum of the same records, so the weights are a plain Monte Carlo average."""
    rng = np.random.default_rng(6)
    mu = rng.normal(0.0, 10.0, draws)
    x = np.clip(mu[:, None] + rng.standard_normal((draws, n_top)), -3.0, 3.0)
    s = np.concatenate([np.zeros((draws, 1)), np.cumsum(x, axis=1)], axis=1)
    n = np.arange(n_top + 1)
    w = stats.poisson.pmf(n, 20) * math.exp(-1.0 / 2.0) ** n * stats.laplace.cdf(s, scale=6.0)
    return float((w.sum(axis=0) * n).sum() / w.sum()), float((w.sum(axis=1) * mu).sum() / w.sum())


def test_an_infinite_opendp_mean_is_entered_and_its_posterior_matches_an_independent_computation():
    spec = engine.spec_from_dict({**RATIO, "data": {"s_dp": [math.inf]}, "method": {"name": "pseudo_marginal"}})
    assert engine.prepare(spec).s_dp.tolist() == [math.inf]
    result = engine.run(spec)
    table = engine.summary(result)
    assert engine.summary_dict(result)["s_dp"] == ["inf"]  # summary.json said null, which no spec takes back
    n_ref, mu_ref = _posterior_given_infinite_ratio()
    assert table.loc["n", "r_hat"] < 1.01
    assert abs(table.loc["n", "mean"] - n_ref) < 4 * table.loc["n", "mcse_mean"]
    assert abs(table.loc["mu", "mean"] - mu_ref) < 4 * table.loc["mu", "mcse_mean"] + 0.1  # the reference's own error
    # the likelihood's point mass is P(n + V <= 0) P(U > -S): V simulated as OpenDP draws it (two geometrics)
    mech = engine.prepare(spec).mechanism
    rng = np.random.default_rng(0)
    a = math.exp(-1.0 / 2.0)
    v = rng.geometric(1 - a, 400_000) - rng.geometric(1 - a, 400_000)
    for n, s in ((0, 0.0), (2, 1.5), (5, -4.0)):
        share = float(np.mean(n + v <= 0))
        mass = share * stats.laplace.sf(-s, scale=6.0)
        got = float(np.exp(mech.log_prob(math.inf, [s], n)[0]))
        assert abs(got - mass) < 4 * math.sqrt(share * (1 - share) / v.size) + 1e-12
        assert got + float(np.exp(mech.log_prob(-math.inf, [s], n)[0])) == pytest.approx(
            a ** n / (1 + a) if n else 1 / (1 + a), rel=1e-12)


def test_an_infinite_ratio_may_be_written_as_a_string_and_only_for_opendp_mean():
    low = engine.prepare({**RATIO, "data": {"s_dp": ["-inf"]}, "method": {"name": "pseudo_marginal"}})
    assert low.s_dp.tolist() == [-math.inf]
    _refused(r"^data\.s_dp = \[nan\] is invalid: must be one released mean \[r\]: a number, or inf / -inf",
             lambda: engine.spec_from_dict({**RATIO, "data": {"s_dp": [math.nan]}}))
    _refused(r"^data\.s_dp = \[1, 2\] is invalid: must be one released mean",
             lambda: engine.spec_from_dict({**RATIO, "data": {"s_dp": [1, 2]}}))
    _refused(r"^data\.s_dp = \[inf\] is invalid: must be a list of finite numbers",
             lambda: engine.spec_from_dict({**S, "data": {"s_dp": [math.inf]}}))
    _refused(r"is invalid: must be a list of finite numbers",
             lambda: engine.check_s_dp(engine.prepare(S).model, engine.prepare(S).mechanism, ["inf"]))


# --------------------------------------------------------------------------- D3: the implicit default method
def test_a_spec_without_a_method_defaults_to_one_its_release_supports():
    spec = engine.spec_from_dict(RATIO)
    assert spec.method["name"] == "auto"  # da_mcmc cannot analyse OpenDP's mean; auto picks pseudo_marginal
    assert engine.prepare(RATIO).s_dp.tolist() == [0.5]
    assert isinstance(engine.risk(RATIO), dict)  # risk runs no method: it failed on the default da_mcmc
    assert engine.spec_from_dict({**RATIO, "method": {"chains": 2}}).method == {
        "name": "auto", "chains": 2, "draws": 2000, "warmup": 500}
    assert engine.spec_from_dict(S).method["name"] == "da_mcmc"  # where it applies, the default is unchanged
    _refused(r"^method\.name = 'da_mcmc' is invalid for OpenDP mean",  # a method the user wrote is still checked
             lambda: engine.spec_from_dict({**RATIO, "method": {"name": "da_mcmc"}}))


# --------------------------------------------------------------------------- D5: the field typed, the value typed
def test_errors_name_the_field_and_value_the_user_typed():
    lam = {"seed": 1, "model": {"name": "poisson_gamma", "n": 1}, "mechanism": {"name": "laplace", "epsilon": 1},
           "data": {"simulate": {"lam": 1e12}}, "method": {"name": "exact"}}
    _refused(r"^data\.simulate = \{'lam': 1000000000000\.0\} is invalid: is too large for exact: .* use a smaller "
             r"total or method da_mcmc$", lambda: engine.run(lam))
    _refused(r"^mechanism\.sensitivity = 1e\+300 is invalid: makes a noise scale of 1e\+300",
             lambda: engine.prepare({**S, "mechanism": {"name": "laplace", "epsilon": 1, "sensitivity": 1e300}}))
    _refused(r"^mechanism\.epsilon = 1e-300 is invalid: makes a noise scale",  # the budget, when it is at fault
             lambda: engine.prepare({**S, "mechanism": {"name": "laplace", "epsilon": 1e-300, "sensitivity": 2}}))
    normal = {**S, "model": {"name": "normal_known_sd", "n": 10, "hi": 1e300}}
    _refused(r"^model\.hi = 1e\+300 is invalid: must be a number from -1e\+12 to 1e\+12",
             lambda: engine.prepare(normal))
    _refused(r"^release\.contributions = 0 is invalid: must be a whole number >= 1 \(opendp requires an integer\)",
             lambda: engine.prepare({**RATIO, "release": {**RATIO["release"], "contributions": 0}}))
    trunc = {**S, "mechanism": None, "release": {"library": "diffprivlib", "mechanism": "LaplaceTruncated",
                                                 "epsilon": 1, "sensitivity": 1, "lower": 20, "upper": 0}}
    del trunc["mechanism"]
    _refused(r"^release\.upper = 0 is invalid: must be greater than release\.lower = 20$",
             lambda: engine.prepare(trunc))
    nb = {"seed": 1, "model": {"name": "naive_bayes_loglinear", "n": 3}, "mechanism": {"name": "laplace",
                                                                                      "epsilon": 1},
          "data": {"records": [0, 1, 1]}, "method": {"name": "naive"}}
    _refused(r"^data\.records = \[0, 1, 1\] is invalid: must be rows of 3", lambda: engine.prepare(nb))


# --------------------------------------------------------------------------- D6: refused, not reinterpreted
def test_csv_column_lists_and_ragged_rows_are_refused(tmp_path):
    two = tmp_path / "two.csv"
    two.write_text("a,b\n1,0\n0,1\n")
    spec = {**S, "model": {"name": "beta_binomial"}, "data": {"csv": str(two), "column": ["a", "b"]}}
    _refused(r"^data\.column = \['a', 'b'\] is invalid: must be one column name", lambda: engine.spec_from_dict(spec))
    _refused(r"^data\.csv line 2 = '1' is invalid: must have 2 cells, one per column of the header \(a,b\); it has 1",
             lambda: engine.load_records_csv(b"a,b\n1\n1,2\n", "a"))
    _refused(r"^data\.csv line 3 = '1,2,3' is invalid: must have 2 cells",
             lambda: engine.load_records_csv(b"a,b\n1,2\n1,2,3\n", "a"))


def test_library_calls_refuse_what_they_used_to_ignore():
    _refused(r"^rho = 1 is invalid: laplace takes epsilon only",
             lambda: engine.scale_from_budget("laplace", 1, epsilon=1, rho=1))
    _refused(r"^rho = 1 is invalid: gaussian takes one budget",
             lambda: engine.scale_from_budget("gaussian", 1, epsilon=1, delta=1e-6, rho=1))
    _refused(r"^k = 0 is invalid: must be an integer >= 2", lambda: engine.make_mechanism("laplace", {"epsilon": 1},
                                                                                          k=0))
    _refused(r"^release\.value1 = 'a' is invalid: must differ from release\.value0 = 'a'",
             lambda: engine.release_from("diffprivlib", "Binary", epsilon=1, value0="a", value1="a"))
    _refused(r"^release\.value1 = None is invalid: is required with the other label",
             lambda: engine.release_from("diffprivlib", "Binary", epsilon=1, value0="a"))
    problem = engine.prepare(S)
    _refused(r"^records = \[\] is invalid: must hold at least one record",
             lambda: engine.privatize(problem.model, problem.mechanism, np.array([]), np.random.default_rng(0)))
    unknown = {"seed": 1, "model": {"name": "beta_binomial", "n_prior": {"name": "poisson", "mean": 20}},
               "mechanism": {"name": "laplace", "epsilon": 1}, "data": {"s_dp": [7], "n_dp": 20},
               "n_mechanism": {"name": "laplace", "epsilon": 1, "clip": [0, math.inf]}}
    _refused(r"^n_mechanism\.clip = \[0, inf\] is invalid: is not supported on the size's noise",
             lambda: engine.spec_from_dict(unknown))


# --------------------------------------------------------------------------- D7, D8: arguments of the library
def test_sweeps_need_a_list_of_positive_epsilons_and_a_positive_budget():
    _refused(r"^study\.epsilons = 0\.5 is invalid: must be a list of epsilon values > 0",
             lambda: engine.epsilon_sweep(S, 0.5, METHODS))
    _refused(r"^study\.epsilons = \[-1\] is invalid: every epsilon must be > 0",
             lambda: engine.estimate_sweep_cost(S, [-1], METHODS))
    _refused(r"^max_seconds = -1 is invalid: must be a finite number > 0",
             lambda: engine.fit_sweep_to_budget(S, [0.5], METHODS, -1))


def test_records_are_read_from_an_open_file_object():
    assert engine.load_records_csv(io.StringIO("x\n1\n2\n")).tolist() == [1.0, 2.0]
    assert engine.load_records_csv(io.BytesIO(b"x\n3\n")).tolist() == [3.0]
    _refused(r"^data\.csv = 5 is invalid: must be a CSV file's path, its bytes, or an open file object",
             lambda: engine.load_records_csv(5))


# --------------------------------------------------------------------------- D9: no warnings on stderr
def test_a_huge_prior_mean_is_refused_a_far_one_works_and_many_parameters_make_one_frame():
    _refused(r"^model\.prior_mean = 1e\+300 is invalid: must be a number from -1e\+12 to 1e\+12",
             lambda: engine.prepare({**S, "model": {"name": "normal_known_sd", "n": 10, "prior_mean": 1e300}}))
    far = {**S, "model": {"name": "normal_known_sd", "n": 10, "prior_mean": 1000.0}, "method": {"name": "exact"}}
    with warnings.catch_warnings():  # the exact grid's guesses lay outside the prior's caps: 0 / 0, sd = null
        warnings.simplefilter("error")
        mu = engine.summary(engine.run(far)).loc["mu"]
    # every record clamps to hi = 3 far above it: the likelihood is flat there and the posterior is the prior's
    assert abs(mu["mean"] - 1000.0) < 4 * mu["mcse_mean"] and abs(mu["sd"] - 10.0) < 0.4
    names = tuple(f"p{i}" for i in range(150))
    result = Result(method="naive", param_names=names, draws=np.zeros((2, 3, 150)), s_dp=np.zeros(1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        frame = draws_frame(result)
    assert list(frame.columns) == ["chain", "draw", *names] and frame.shape == (6, 152)
