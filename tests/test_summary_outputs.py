"""What the run's files say (summary.json, posterior.nc, draws.csv) and the errors a spec's tables give.

Each test here pins one defect of the s21 audit: strict JSON (no bare NaN), the implausible-release warning
written to summary.json, the README's supported-methods claims, MCEM's estimate written as an estimate with an
interval inside the parameter's support, R-hat/ESS of independent draws, and the field an error in a
``[methods.<name>]`` table names.
"""
from __future__ import annotations

import json
import os
import re

import pytest


import engine
from engine.cli import main
from engine.methods import METHOD_NAMES
from engine.models import MODEL_INFO, MODEL_NAMES, make_model

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

BB = {"seed": 1, "model": {"name": "beta_binomial", "n": 30, "a": 1.0, "b": 1.0},
      "mechanism": {"name": "discrete_gaussian", "sigma": 4.0}, "data": {"s_dp": [3]},
      "method": {"name": "da_mcmc", "chains": 4, "draws": 5000, "warmup": 1000}}


def _refuse(token):
    raise ValueError(f"not strict JSON: {token}")


def strict_load(path):
    """JSON as a strict parser (R's jsonlite, JavaScript's JSON.parse) reads it: NaN and Infinity refused."""
    with open(path) as fh:
        return json.loads(fh.read(), parse_constant=_refuse)


def test_auto_summary_json_is_strict_json(tmp_path):
    """auto picking exact records its attempt with an R-hat of NaN; summary.json must still be strict JSON."""
    result = engine.run(BB, method="auto")
    assert result.info.get("picked") == "exact"
    engine.write_outputs(result, str(tmp_path))
    out = strict_load(tmp_path / "summary.json")
    assert out["info"]["attempts"][0]["r_hat_max"] is None


def test_summary_dict_has_no_non_finite_numbers():
    """summary_dict itself is JSON-safe: json.dumps(..., allow_nan=False) never raises."""
    result = engine.run(BB, method="auto")
    json.dumps(engine.summary_dict(result), allow_nan=False)


FAR_TOML = """\
seed = 1
[model]
name = "beta_binomial"
n = 30
[mechanism]
name = "laplace"
epsilon = 1.0
[data]
s_dp = [500]
[method]
name = "exact"
"""


def test_implausible_release_is_in_summary_json(tmp_path, capsys):
    """s_dp = 500 from n = 30 records: the stderr warning's sentence is summary.json's ``warnings`` too."""
    spec = tmp_path / "far.toml"
    spec.write_text(FAR_TOML)
    assert main(["run", str(spec), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    err = [line for line in capsys.readouterr().err.splitlines() if "implausible" in line]
    assert len(err) == 1 and err[0].startswith("warning: ")
    out = strict_load(tmp_path / "out" / "summary.json")
    assert out["warnings"] == [err[0][len("warning: "):]]
    assert "data.s_dp = [500] is implausible" in out["warnings"][0]


def test_plausible_release_has_no_warnings(tmp_path):
    spec = tmp_path / "near.toml"
    spec.write_text(FAR_TOML.replace("[500]", "[12]"))
    assert main(["run", str(spec), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    assert strict_load(tmp_path / "out" / "summary.json")["warnings"] == []


def _spec_table_rows():
    """The README's Spec format table, as (key cell, meaning cell) pairs."""
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as fh:
        text = fh.read()
    section = text.split("\n## Spec format\n", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        if len(cells) == 3:
            rows.append((cells[1], cells[2]))
    return rows


@pytest.mark.parametrize("model_name", MODEL_NAMES)
def test_readme_supported_methods_match_the_code(model_name):
    """A model row of the Spec format table that says "Supports `a`, `b` …; `c`, … refuse it" names exactly the
    model's ``methods`` and the rest of the method names; a model whose row says nothing lists none in code."""
    rows = [meaning for _, meaning in _spec_table_rows() if re.match(rf"{model_name}\b[ :(]", meaning)]
    assert rows, f"no Spec format row for {model_name}"
    claims = [m for m in rows if "Supports " in m]
    model = make_model(model_name, {"n": 10})
    if getattr(model, "methods", None) is None:  # the check_model_supported rule
        assert not claims, f"README limits {model_name}'s methods, the code does not"
        return
    assert len(claims) == 1, f"README does not say which methods {model_name} supports"
    clause = claims[0].split("Supports ", 1)[1]
    supported, _, refused = clause.partition(";")
    named = lambda text: {m for m in re.findall(r"`([a-z_]+)`", text) if m in METHOD_NAMES}  # noqa: E731
    assert named(supported) == set(model.methods)
    assert named(refused.split("|")[0]) == set(METHOD_NAMES) - set(model.methods)


@pytest.mark.parametrize("model_name", [m for m in MODEL_NAMES if m not in ("linear_regression", "custom")])
def test_readme_states_every_model_keys_default(model_name):
    """A spec that leaves out a model's keys runs on their defaults without a word (normal_known_sd at sd 1 and
    bounds [−3, 3]; dirichlet_multinomial with k = 3): the Spec format table states each, as the code has it."""
    rows = [meaning for _, meaning in _spec_table_rows() if re.match(rf"{model_name}\b[ :(]", meaning)]
    assert rows, f"no Spec format row for {model_name}"
    text = " ".join(rows).replace("−", "-")
    for key, value in MODEL_INFO[model_name]["prior"].items():
        if value is None:
            continue
        shown = (f"[{', '.join(f'{v:g}' for v in value)}]" if isinstance(value, list) else f"{value:g}")
        assert f"{key} = {shown}" in text, (model_name, key, shown)


FIELD_SPEC = {"seed": 1, "model": {"name": "beta_binomial", "n": 30}, "mechanism": {"name": "laplace", "epsilon": 1.0},
              "data": {"s_dp": [3]}, "method": {"name": "da_mcmc"}}


@pytest.mark.parametrize("methods, field", [
    ({"abc_rejection": {"draws": 100, "chain": 3}}, "methods.abc_rejection.chain = 3 is invalid: "),
    ({"pseudo_marginal": {"draws": 0}}, "methods.pseudo_marginal.draws = 0 is invalid: "),
    ({"foo": {"draws": 3}}, "methods.foo = {'draws': 3} is invalid: "),
])
def test_error_in_a_methods_table_names_its_field(methods, field, tmp_path, capsys):
    """An error inside [methods.<name>] names methods.<name>.<key> (or the table methods.<name>), not method.*,
    in the library and on the command line."""
    with pytest.raises(ValueError) as info:
        engine.prepare({**FIELD_SPEC, "methods": methods})
    assert str(info.value).startswith(field)
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({**FIELD_SPEC, "methods": methods}))
    assert main(["run", str(spec), "--out", str(tmp_path / "out"), "--quiet"]) == 2
    assert capsys.readouterr().err.startswith("error: " + field)


def test_method_a_model_refuses_in_a_methods_table_names_the_table():
    spec = {**FIELD_SPEC, "model": {"name": "naive_bayes_loglinear", "n": 30},
            "data": {"simulate": {"from_prior": True}}, "methods": {"exact": {}}}
    with pytest.raises(ValueError, match=r"^methods\.exact is invalid for model naive_bayes_loglinear: supported"):
        engine.prepare(spec)


@pytest.mark.parametrize("method", [{"name": "exact", "chains": 4, "draws": 500},
                                    {"name": "naive", "chains": 4, "draws": 500},
                                    {"name": "abc_rejection", "chains": 1, "draws": 300, "max_seconds": 30},
                                    {"name": "ops", "k": 5}])
def test_independent_draws_have_no_r_hat_and_ess_n(method, tmp_path):
    """README: independent draws get no R-hat and N of them have ESS N. summary(), summary.json's parameters and
    its convergence block say the same (they gave R-hat 0.99996 and ESS 19,520 beside ess_bulk_min 20,000)."""
    spec = {"seed": 4, "model": {"name": "beta_binomial"}, "mechanism": {"name": "laplace", "epsilon": 1.0},
            "data": {"records": [0, 1, 1, 0, 1, 0, 0, 1, 1, 1]}, "method": method}
    result = engine.run(spec)
    n = result.n_chains * result.n_draws
    table = engine.summary(result)
    assert table["r_hat"].isna().all()
    assert (table["ess_bulk"] == n).all() and (table["ess_tail"] == n).all()
    engine.write_outputs(result, str(tmp_path))
    out = strict_load(tmp_path / "summary.json")
    conv = out["convergence"]
    assert conv["independent"] and conv["r_hat_max"] is None
    for row in out["parameters"].values():
        assert row["r_hat"] is None and row["ess_bulk"] == conv["ess_bulk_min"] == n
        assert row["ess_tail"] == conv["ess_tail_min"] == n


def test_mcem_interval_stays_in_the_parameter_space(tmp_path):
    """README's spec with mcem: the 90% Wald interval of theta in [0, 1] had q5 = -0.13; clipped to the parameter
    space it starts at 0 (the upper end stays estimate + 1.645 se), in the mle block and summary.json."""
    result = engine.run(BB, method="mcem")
    mle = result.info["mle"]["theta"]
    assert mle["estimate"] - 1.6448536 * mle["se"] < 0.0  # the case the analyst met
    assert mle["q5"] == 0.0 and mle["q95"] == pytest.approx(mle["estimate"] + 1.6448536 * mle["se"])
    engine.write_outputs(result, str(tmp_path))
    row = strict_load(tmp_path / "summary.json")["parameters"]["theta"]
    assert (row["q5"], row["mean"], row["q95"]) == (mle["q5"], mle["estimate"], mle["q95"])
