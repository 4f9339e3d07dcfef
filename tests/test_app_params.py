"""Pure app helpers: Scenario <-> spec dict <-> query string, grids, display tables and exports."""
import csv
import io
import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

import engine
from engine.core.results import Result
from ui import tables
from ui.params.defaults import default_truth, default_truth_p
from ui.params.parsing import log_grid, parse_grid, parse_numbers
from ui.params.query import from_query, to_query
from ui.params.scenario import DATA_SOURCES, DEFAULT_PRIORS, MECHANISMS, METHODS, MODELS, Scenario, budget_forms
from ui.params.spec import method_settings, to_spec_dict
from ui.presets import DEMO, PRESETS


# --------------------------------------------------------------------------- spec dicts
def test_demo_scenario_is_the_documented_demo():
    spec = to_spec_dict(DEMO)
    assert spec == {
        "seed": 7,
        "model": {"name": "beta_binomial", "n": 40, "a": 1.0, "b": 1.0},
        "mechanism": {"name": "laplace", "epsilon": 0.3},
        "data": {"simulate": {"theta": 0.3}},
        "method": {"name": "da_mcmc", "chains": 2, "draws": 2000, "warmup": 500},
    }
    engine.spec_from_dict(spec)  # the engine accepts it as is


@pytest.mark.parametrize("preset", PRESETS, ids=lambda p: p.name)
def test_presets_are_valid_engine_specs(preset):
    problem = engine.prepare(to_spec_dict(preset.scenario))
    assert problem.model.name == preset.scenario.model


@pytest.mark.parametrize("preset, builtin", [("demo", "demo"), ("gong", "gong_count"), ("admissions", "admissions_rr"),
                                             ("admissions_dg", "admissions_dg")])
def test_presets_are_the_engines_built_in_scenarios(preset, builtin):
    ours = DEMO if preset == "demo" else next(p.scenario for p in PRESETS if p.name == preset)
    theirs = engine.scenario(builtin)
    ours_problem, theirs_problem = engine.prepare(to_spec_dict(ours)), engine.prepare(theirs)
    assert ours_problem.model == theirs_problem.model
    assert ours_problem.mechanism.describe() == theirs_problem.mechanism.describe()
    np.testing.assert_array_equal(ours_problem.s_dp, theirs_problem.s_dp)


def test_admissions_preset_is_dapper_example_1():
    admissions = to_spec_dict(next(p.scenario for p in PRESETS if p.name == "admissions"))
    assert admissions["model"] == {"name": "dirichlet_multinomial", "n": 400, "alpha": [1.0, 1.0, 1.0, 1.0]}
    assert admissions["data"] == {"s_dp": [104.0, 120.0, 74.0, 102.0]}
    # two fair coin flips keep each answer with probability 3/4: epsilon = 2 log 3 (dapper, Example 1)
    assert engine.prepare(admissions).mechanism.epsilon == pytest.approx(2 * math.log(3))


@pytest.mark.parametrize("mechanism, form, expected", [
    ("laplace", "epsilon", {"epsilon": 0.3}),
    ("discrete_laplace", "epsilon", {"epsilon": 0.3}),
    ("gaussian", "rho", {"rho": 0.5}),
    ("gaussian", "epsilon_delta", {"epsilon": 0.3, "delta": 1e-6}),
    ("discrete_gaussian", "rho", {"rho": 0.5}),
    ("randomized_response", "k_ary", {"epsilon": 0.3}),
    ("randomized_response", "coin", {"scheme": "coin", "truth_prob": 0.5}),
])
def test_every_mechanism_budget_form_builds_an_engine_mechanism(mechanism, form, expected):
    s = replace(DEMO, mechanism=mechanism, budget_form=form)
    spec = to_spec_dict(s)
    assert spec["mechanism"] == {"name": mechanism, **expected}
    assert engine.prepare(spec).mechanism.describe()


def test_csv_records_go_inline_and_set_n():
    s = replace(DEMO, data="csv")
    spec = to_spec_dict(s, records=np.array([0.0, 1.0, 1.0]))
    assert spec["data"] == {"records": [0.0, 1.0, 1.0]} and spec["model"]["n"] == 3
    with pytest.raises(ValueError, match=r"^data\.csv = None is invalid: upload a CSV"):
        to_spec_dict(s)


@pytest.mark.parametrize("text, expected", [
    ("3", [3.0]), ("104, 120, 74, 102", [104.0, 120.0, 74.0, 102.0]), ("[1; 2 3]", [1.0, 2.0, 3.0]),
    ("-1.5e1", [-15.0]),
])
def test_parse_numbers_accepts_lists(text, expected):
    assert parse_numbers("data.s_dp", text) == expected


@pytest.mark.parametrize("text, why", [("", "list of numbers"), ("1, two", "(two is not a number)"),
                                       ("1, inf", "finite")])
def test_parse_numbers_names_field_value_and_rule(text, why):
    with pytest.raises(ValueError) as err:
        parse_numbers("data.s_dp", text)
    assert str(err.value).startswith(f"data.s_dp = {text!r} is invalid:") and why in str(err.value)


def test_method_settings_per_method():
    s = replace(DEMO, chains=3, draws=100, warmup=7, abc_max_seconds=2.0, abc_max_proposals=5000, ops_k=9)
    assert method_settings(s, "da_mcmc") == {"name": "da_mcmc", "chains": 3, "draws": 100, "warmup": 7}
    assert method_settings(s, "abc_rejection") == {"name": "abc_rejection", "chains": 1, "draws": 300,
                                                   "max_seconds": 2.0, "max_proposals": 5000}
    assert method_settings(s, "ops") == {"name": "ops", "k": 9}
    for m in METHODS:
        engine.spec.validate_method(method_settings(s, m))


# --------------------------------------------------------------------------- query string
def test_query_round_trip_of_demo_and_presets():
    for s in [DEMO] + [p.scenario for p in PRESETS]:
        q = to_query(s)
        assert all(isinstance(v, str) for v in q.values())
        assert from_query(q) == s


def test_query_without_model_means_no_scenario():
    assert from_query({}) is None
    assert from_query({"utm_source": "mail"}) is None


@pytest.mark.parametrize("query, message", [
    ({"model": "logistic"}, "link parameter model = 'logistic' is invalid: must be one of beta_binomial"),
    ({"model": "beta_binomial", "epsilon": "abc"}, "link parameter epsilon = 'abc' is invalid: must be a number"),
    ({"model": "beta_binomial", "n": "2.5"}, "link parameter n = '2.5' is invalid: must be a whole number"),
    ({"model": "beta_binomial", "mech": "laplace", "budget": "rho"}, "budget = 'rho' is invalid"),
    ({"model": "beta_binomial", "methods": "naive,magic"}, "link parameter methods = 'naive,magic'"),
])
def test_bad_links_are_reported(query, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        from_query(query)


_finite = st.floats(min_value=1e-3, max_value=1e3, allow_nan=False)


@settings(max_examples=60, deadline=None)
@given(model=st.sampled_from(MODELS), mech=st.sampled_from(MECHANISMS), data=st.data(),
       n=st.integers(1, 10_000), eps=_finite, rho=_finite, seed=st.integers(0, 2**40),
       methods=st.lists(st.sampled_from(METHODS), unique=True).map(tuple))
def test_query_round_trip_property(model, mech, data, n, eps, rho, seed, methods):
    form = data.draw(st.sampled_from(budget_forms(mech)))
    source = data.draw(st.sampled_from(DATA_SOURCES))
    prior = dict(DEFAULT_PRIORS[model])
    s = Scenario(model=model, n=n, prior=tuple(prior.items()), mechanism=mech, budget_form=form, epsilon=eps,
                 rho=rho, seed=seed, data=source, truth=default_truth(model, prior),
                 truth_p=default_truth_p(model, prior),
                 s_dp="1, 2" if source == "s_dp" else "", methods=methods)
    back = from_query(to_query(s))
    # the link carries only the budget fields the chosen form uses; everything it carries survives
    assert to_query(back) == to_query(s)
    assert back.methods == s.methods and back.seed == s.seed
    if source != "csv":
        assert back.n == s.n and to_spec_dict(back) == to_spec_dict(s)
    else:  # an upload's n is its number of records, which the link does not hold (issue 20 item 18)
        assert "n" not in to_query(s)


# --------------------------------------------------------------------------- budget grids
def test_log_grid_and_parse_grid():
    text = log_grid(0.1, 10.0, 5)
    assert text == "0.1, 0.316, 1, 3.16, 10"
    assert parse_grid("10, 0.1, 1, 1") == (0.1, 1.0, 10.0)
    with pytest.raises(ValueError, match=r"epsilon grid = '1, 0' is invalid: every value must be > 0"):
        parse_grid("1, 0")
    with pytest.raises(ValueError, match="at most 3 values"):
        parse_grid("1, 2, 3, 4", max_points=3)
    with pytest.raises(ValueError, match="needs 0 < low < high"):
        log_grid(1.0, 0.5, 3)


# --------------------------------------------------------------------------- tables and exports
def _result(method, draws, params_=("theta",), **kw):
    return Result(method=method, param_names=params_, draws=np.asarray(draws, float), s_dp=np.array([1.0]), **kw)


@pytest.mark.parametrize("cell, expected", [
    ("=HYPERLINK(1)", "'=HYPERLINK(1)"), ("+1", "'+1"), ("-cmd", "'-cmd"), ("@SUM", "'@SUM"), ("\tx", "'\tx"),
    ("da_mcmc", "da_mcmc"), (-0.5, -0.5), (3, 3),
])
def test_escape_spreadsheet_cell(cell, expected):
    assert tables.escape_spreadsheet_cell(cell) == expected


def test_draws_csv_long_format_escapes_text_but_keeps_numbers():
    a = _result("da_mcmc", [[[-0.25], [0.5]], [[0.75], [1.0]]])
    b = _result("=evil", [[[-3.0]]])
    rows = list(csv.reader(io.StringIO(tables.draws_csv([a, b]).decode())))
    assert rows[0] == ["method", "method_name", "chain", "draw", "theta"]
    assert rows[1] == ["da_mcmc", "DA-MCMC", "0", "0", "-0.25"]
    assert rows[4] == ["da_mcmc", "DA-MCMC", "1", "1", "1.0"]
    assert rows[5] == ["'=evil", "'=evil", "0", "0", "-3.0"]


def test_draws_csv_escapes_formula_like_parameter_names():
    rows = list(csv.reader(io.StringIO(tables.draws_csv([_result("naive", [[[1.0]]], ("=x",))]).decode())))
    assert rows[0][-1] == "'=x"


def test_the_draws_button_says_how_large_the_file_is_once_it_is_megabytes():
    """The log-linear model's draws CSV was about 69 MB behind a plain "Draws (CSV)" button."""
    rng = np.random.default_rng(1)
    names = tuple(f"p[0][{i}][{j}]" for i in range(5) for j in range(5))
    big = [_result(m, rng.dirichlet(np.ones(3), size=(4, 5000, 25))[..., 0], names) for m in ("naive", "da_mcmc")]
    small = [_result("naive", rng.normal(size=(4, 100, 1)))]
    for results in (big, small, big[:1]):
        written = len(tables.draws_csv(results))
        assert abs(tables.draws_csv_size(results) / written - 1) < 0.02, (tables.draws_csv_size(results), written)
    assert tables.draws_csv_label(big) == f"Draws (CSV, about {len(tables.draws_csv(big)) / 1e6:.0f} MB)"
    assert tables.draws_csv_label(small) == "Draws (CSV)"


class _Run:
    def __init__(self, result):
        self.result, self.summary = result, engine.summary(result)


def test_comparison_table_acceptance_and_wall_time():
    rng = np.random.default_rng(0)
    # marked a Markov chain as every real da_mcmc result is (the registry's Method adds info["mcmc"]): unmarked draws
    # are independent, with no R-hat
    da = _result("da_mcmc", rng.normal(size=(2, 100, 1)), sample_stats={"acceptance_rate": np.full((2, 100), 0.8)},
                 info={"wall_time_s": 0.5, "mcmc": True})
    abc = _result("abc_rejection", rng.normal(size=(1, 100, 1)), info={"acceptance_rate": 0.01, "wall_time_s": 2.0})
    table = tables.comparison_table({"da_mcmc": _Run(da), "abc_rejection": _Run(abc), "ops": None})
    assert list(table["method"]) == ["DA-MCMC", "ABC rejection"]
    assert table["acceptance"].tolist() == pytest.approx([0.8, 0.01])
    assert table["wall time (s)"].tolist() == [0.5, 2.0]
    assert table["draws"].tolist() == [200, 100]
    assert math.isnan(table["R-hat"].iloc[1]) and table["R-hat"].iloc[0] == pytest.approx(1.0, abs=0.05)
    assert table["q5"].iloc[0] < table["mean"].iloc[0] < table["q95"].iloc[0]


def test_formatted_shows_missing_values_as_a_dash():
    table = pd.DataFrame({"method": ["Naive", "DA-MCMC"], "R-hat": [math.nan, 1.00123], "draws": [4000, 4000]})
    out = tables.formatted(table, {"R-hat": "{:.3f}", "draws": "{:,}"})
    assert out["R-hat"].tolist() == ["—", "1.001"] and out["draws"].tolist() == ["4,000", "4,000"]
    assert out["method"].tolist() == ["Naive", "DA-MCMC"] and math.isnan(table["R-hat"][0])


# --------------------------------------------------------------------------- engine-backed exports
def test_netcdf_and_toml_exports_round_trip(tmp_path):
    from ui.compute.files import netcdf_bytes, scenario_toml

    spec = to_spec_dict(DEMO)
    result = engine.run_method(engine.prepare(spec), method_settings(DEMO, "da_mcmc"), DEMO.seed)
    blob = netcdf_bytes(result)
    assert blob[:8] == b"\x89HDF\r\n\x1a\n"
    path = tmp_path / "posterior.nc"
    path.write_bytes(blob)
    import arviz as az

    idata = az.from_netcdf(path)
    assert idata.posterior["theta"].shape == (2, 2000)
    toml = tmp_path / "scenario.toml"
    toml.write_text(scenario_toml(DEMO))
    back = engine.spec_to_dict(engine.load_spec(str(toml)))
    same = engine.spec_to_dict(engine.spec_from_dict(spec))
    assert {k: back[k] for k in ("seed", "model", "mechanism", "data")} == {k: same[k] for k in ("seed", "model",
                                                                                             "mechanism", "data")}
    # every switched-on method's settings travel (issue 20 item 18: ABC's time limit and OPS's k were lost)
    tables = {back["method"]["name"]: back["method"], **back.get("methods", {})}
    assert set(tables) == set(DEMO.methods)
    assert tables["abc_rejection"]["max_seconds"] == DEMO.abc_max_seconds and tables["ops"]["k"] == DEMO.ops_k


def test_the_toml_runs_the_best_method_and_says_how_ops_ran():
    """Audit s21 item 1: ``[method]`` was the first switched-on method (naive, the biased baseline), so ``python -m
    engine run`` on the download gave only naive; and ``[methods.ops]`` said 4 × 2,000 draws where OPS ran 1 × k."""
    import tomllib

    from ui.compute.files import scenario_toml

    back = tomllib.loads(scenario_toml(DEMO))
    assert DEMO.methods[0] == "naive" and "auto" in DEMO.methods
    assert back["method"]["name"] == "auto" and set(back["methods"]) == set(DEMO.methods) - {"auto"}
    assert back["methods"]["ops"] | {"name": "ops"} == {"name": "ops", "chains": 1, "draws": DEMO.ops_k, "warmup": 0,
                                                        "k": DEMO.ops_k}
    without = replace(DEMO, methods=("naive", "abc_rejection", "da_mcmc", "ops"))
    assert tomllib.loads(scenario_toml(without))["method"]["name"] == "da_mcmc"
    assert tomllib.loads(scenario_toml(replace(DEMO, methods=("ops", "naive"))))["method"]["name"] == "ops"
    assert tomllib.loads(scenario_toml(replace(DEMO, methods=("naive",))))["method"]["name"] == "naive"
    assert engine.spec_from_dict(back).method["name"] == "auto"  # the engine runs it as written



def test_an_unknown_ns_file_runs_rjmcmc_the_posterior_that_accounts_for_n():
    """Round-trip audit s23: with n unknown the TOML's [method] was auto ("Best method given plug-in n = 39", exact
    only given that n), and the NetCDF picker began there too; RJMCMC, which draws n, comes first now."""
    import tomllib

    from ui.compute.files import scenario_toml
    from ui.params.spec import best_method

    s = replace(DEMO, sample_size="unknown", methods=("naive", "rjmcmc", "auto"))
    assert s.unknown_n
    assert tomllib.loads(scenario_toml(s))["method"]["name"] == "rjmcmc"
    assert best_method(s.methods, s.unknown_n) == "rjmcmc" and best_method(s.methods) == "auto"
    assert tomllib.loads(scenario_toml(replace(s, methods=("naive", "auto"))))["method"]["name"] == "auto"


def test_the_toml_of_an_upload_holds_the_release_not_the_records(tmp_path):
    """Issue 20 item 18: the TOML download embedded every uploaded record in plain text, unasked."""
    from dataclasses import replace

    from ui.compute.files import scenario_toml

    records = np.array([0, 1, 1, 0, 1, 1, 1, 0, 0, 1] * 3, dtype=np.int64)
    s = replace(DEMO, data="csv", n=len(records), abc_max_seconds=7.5, ops_k=37)
    text = scenario_toml(s, records, s_dp=[18.25])
    assert "records" not in text and "s_dp = [18.25]" in text and "n = 30" in text
    # OPS needs the records (round-trip audit s23: --method ops on this file failed): the release alone leaves it out
    assert "max_seconds = 7.5" in text and "ops" in s.methods and "[methods.ops]" not in text and "k = 37" not in text
    path = tmp_path / "release.toml"
    path.write_text(text)
    assert engine.load_spec(str(path)).data == {"s_dp": [18.25]}
    full = scenario_toml(s, records, s_dp=[18.25], include_records=True)
    assert "records = [0.0, 1.0, 1.0" in full and "s_dp" not in full and "k = 37" in full


def test_run_method_uses_the_specs_own_settings_for_that_method():
    spec = {**to_spec_dict(DEMO), "methods": {"abc_rejection": {"draws": 40, "chains": 1, "max_seconds": 5.0}}}
    result = engine.run(spec, method="abc_rejection")
    assert result.info["requested"] == 40
    with pytest.raises(ValueError, match="methods.ops.name = 'abc_rejection' is invalid"):
        engine.spec_from_dict({**spec, "methods": {"ops": {"name": "abc_rejection"}}})


def test_oversized_upload_is_refused_with_the_limit():
    from ui.compute.files import parse_upload

    big = b"x\n" + b"0\n" * (26 * 1024 * 1024)  # 52 MiB
    with pytest.raises(ValueError, match=r"^data\.csv = 'uploaded file' is invalid: must be at most 50 MB"):
        parse_upload(big, "")


def test_downloads_are_named_for_their_scenario():
    """Every Compare download was draws.csv, posterior.png, scenario.toml, whatever the scenario."""
    from ui.compute.files import download_stem

    # then six hex digits of the scenario and its release, which tell apart what the words do not (audit s25)
    assert download_stem(Scenario(), 40).startswith("beta_binomial_laplace_eps0.3_n40_seed7_")
    assert download_stem(Scenario(model="linear_regression", mechanism="gaussian", budget_form="rho", rho=0.5),
                         100).startswith("linear_regression_gaussian_rho0.5_n100_seed7_")
