"""Audit s25, the analyst who takes the files away: every download opens with the tool a user would use, says what
drew it, and is named and titled for its scenario (a file leaves the page, its sidebar and its captions)."""
from __future__ import annotations

import io
import re
import warnings
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from app_support import open_app, record_downloads

import engine
from engine.core.results import Result
from ui import keys
from ui.compute.files import download_stem
from ui.params.scenario import Scenario
from ui.studies import CalibrationInputs


def _page_with_two_kinds_of_button():
    import streamlit as st

    st.download_button("through st", data=lambda: b"from st", file_name="st.csv")
    st.container().download_button("through a container", data=lambda: b"from a container", file_name="c.csv")
    st.download_button("bytes at once", data=b"now", file_name="now.csv")


def test_record_downloads_sees_buttons_drawn_through_st_download_button(monkeypatch):
    """``st.download_button`` is bound to the main container when streamlit is imported: the helper patched only
    the class, so the Privacy budget sweep table and the Calibration tables went unrecorded, hence untested."""
    names: dict = {}
    recorded = record_downloads(monkeypatch, names)
    at = AppTest.from_function(_page_with_two_kinds_of_button).run()
    assert not at.exception, at.exception
    assert recorded["through st"][-1]() == b"from st"
    assert recorded["through a container"][-1]() == b"from a container"
    assert recorded["bytes at once"][-1]() == b"now"
    assert names == {"through st": ["st.csv"], "through a container": ["c.csv"], "bytes at once": ["now.csv"]}


def _grid_result(method="exact", **info):
    draws = np.random.default_rng(0).normal(size=(2, 50, 1))
    return Result(method=method, param_names=("lam",), draws=draws, s_dp=np.array([8.4]),
                  info={"representation": "grid", **info})


def test_a_grid_posteriors_diagnostics_figures_call_it_numerical_as_the_page_does():
    """The Diagnostics page says "Exact (numerical)" for a clamped model's grid posterior; its trace and rank figures
    (and their PNG and HTML files) were titled "Exact (closed form)"."""
    from figures import diagnostics

    result = _grid_result()
    for fig in (diagnostics.trace_plot(result), diagnostics.rank_plot(result)):
        title = fig.layout.title.text.replace("<br>", " ")
        assert title.startswith("Exact (numerical): ") and "closed form" not in title, title
    plug_in = _grid_result(method="da_mcmc", representation=None, plug_in_n=21)
    assert diagnostics.trace_plot(plug_in).layout.title.text.replace("<br>", " ").startswith(
        "DA-MCMC at plug-in n = 21: ")


def test_the_netcdf_file_says_in_its_posterior_which_method_drew_it_and_what_auto_picked(tmp_path):
    """A NetCDF file opened with ``az.from_netcdf`` had no word of its method in the posterior group (ArviZ puts
    ``attrs`` on observed_data alone), and "Exact (best method)" did not say what it ran."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        import arviz as az
    problem = engine.prepare(engine.spec_from_dict({**engine.DEMO_SPEC, "seed": 11}))
    result = engine.run_method(problem, {"name": "auto", "chains": 2, "draws": 200}, seed=11)
    path = tmp_path / "posterior.nc"
    engine.to_inference_data(result).to_netcdf(str(path))
    opened = az.from_netcdf(str(path))
    for group in ("posterior", "observed_data"):
        attrs = opened[group].attrs
        assert attrs["method"] == "auto" and attrs["picked"] == "exact", (group, dict(attrs))
        assert attrs["representation"] == "mixture"
    np.testing.assert_array_equal(opened.posterior["theta"].values, result.draws[:, :, 0])


def _record_charts(monkeypatch) -> list[dict]:
    """The figures the pages hand to ui.downloads.chart from now on: name and the figure its files hold."""
    from ui import downloads

    charts, chart = [], downloads.chart

    def recording(fig, *, key, name, container=None, for_file=None, camera=True):
        charts.append({"name": name, "file": downloads.file_figure(fig, for_file)})
        return chart(fig, key=key, name=name, container=container, for_file=for_file, camera=camera)

    monkeypatch.setattr(downloads, "chart", recording)
    return charts


def test_every_diagnostics_figure_file_is_named_and_titled_for_its_scenario(monkeypatch):
    """Diagnostics' files were "da_mcmc_trace.png", "da_mcmc_ranks.png" for every scenario (a second download
    overwrote the first) and carried neither ε nor the model: a colleague sent one could not tell what it showed."""
    charts = _record_charts(monkeypatch)
    at = open_app("pages/diagnostics.py")
    assert not at.exception, at.exception
    names = [c["name"] for c in charts]
    stem = names[0].rsplit("_da_mcmc_", 1)[0]
    assert re.fullmatch(r"beta_binomial_laplace_eps0\.3_n40_seed7_[0-9a-f]{6}", stem), stem
    assert {f"{stem}_da_mcmc_trace", f"{stem}_da_mcmc_ranks", f"{stem}_da_mcmc_acceptance"} <= set(names), names
    for chart in charts:
        layout = chart["file"]().to_dict()["layout"]
        title = layout["title"]["text"].replace("<br>", " ")
        sub = layout["title"]["subtitle"]["text"].replace("<br>", " ")
        assert title.endswith("; Laplace noise, scale b = 3.333; pure 0.3-DP (sensitivity 1)"), title
        assert sub.startswith("Beta-binomial (proportion θ), n = 40 · Laplace noise, sensitivity 1 · simulated "
                              "records (truth 0.3, seed 7)"), sub
    assert at.get("plotly_chart")[0].proto.spec  # the figures on the page are drawn as before


def test_comparess_camera_saves_the_figure_under_the_name_of_the_buttons_files(monkeypatch):
    """The posterior figure's own camera button saved "posterior.png" for every scenario, beside the buttons'
    scenario-named files."""
    import json

    names: dict = {}
    record_downloads(monkeypatch, names)
    at = open_app()
    assert not at.exception, at.exception
    camera = json.loads(at.get("plotly_chart")[0].proto.config)["toImageButtonOptions"]["filename"]
    assert re.fullmatch(r"beta_binomial_laplace_eps0\.3_n40_seed7_[0-9a-f]{6}_posterior", camera), camera
    assert names["Figure (HTML)"][-1] == f"{camera}.html"
    stem = camera.removesuffix("_posterior")
    assert names["Draws (CSV)"][-1] == f"{stem}_draws.csv" and names["Scenario (TOML)"][-1] == f"{stem}.toml"


def test_a_calibration_study_is_named_and_described_with_the_budget_it_ran_at():
    laplace = CalibrationInputs()
    assert laplace.stem() == "calibration_beta_binomial_laplace_eps0.2_n50_M100"
    assert laplace.words() == ("Beta-binomial (proportion θ), n = 50; Laplace noise, ε = 0.2; 100 replicates, "
                               "truth from the prior")
    gauss = CalibrationInputs(mechanism="gaussian", epsilon=1.0, n=20, replicates=10)
    assert gauss.stem() == "calibration_beta_binomial_gaussian_rho0.5_n20_M10"
    assert "Gaussian noise, ε = 1 (ρ = 0.5)" in gauss.words()
    assert gauss.spec()["mechanism"]["rho"] == 0.5  # the ρ the stem states is the one the study runs at


@pytest.fixture(scope="module")
def calibration():
    """A small study on the Calibration page, run once, with its downloads and figures recorded."""
    names: dict = {}
    with pytest.MonkeyPatch.context() as patch:
        recorded = record_downloads(patch, names)
        charts = _record_charts(patch)
        at = open_app("pages/calibration.py")
        at.selectbox(key=keys.W_CAL_MECHANISM).set_value("gaussian")
        at.text_input(key=keys.W_CAL_EPSILON).set_value("1").run()
        at.text_input(key=keys.W_CAL_N).set_value("20").run()
        at.text_input(key=keys.W_CAL_M).set_value("10").run()
        at.multiselect(key=keys.W_CAL_METHODS).set_value(["naive", "exact"]).run()
        at.button(key=keys.W_CAL_RUN).click().run()
    assert not at.exception, at.exception
    return at, recorded, names, charts


def test_a_calibration_studys_table_and_figures_are_named_and_titled_for_the_study(calibration):
    """Every study's table downloaded as calibration.csv and its figures as calibration_ecdf_theta.png and so on,
    with no word of the model, the mechanism, the budget, n or M in the files."""
    at, recorded, names, charts = calibration
    stem = "calibration_beta_binomial_gaussian_rho0.5_n20_M10"
    (label,) = [k for k in names if "replicate table" in k]
    assert names[label][-1] == f"{stem}.csv"
    table = pd.read_csv(io.BytesIO(recorded[label][-1]()))
    assert {"naive", "exact"} <= set(table["method"]) and table["replicate"].nunique() == 10
    names_of = table.groupby("method")["method_name"].first().to_dict()  # the page's names beside the ids
    assert names_of["naive"] == "Naive" and names_of["confidential"] == "Confidential data", names_of
    assert charts and all(c["name"].startswith(f"{stem}_") for c in charts), [c["name"] for c in charts]
    for chart in charts:
        sub = chart["file"]().layout.title.subtitle.text.replace("<br>", " ")
        assert sub == "Beta-binomial (proportion θ), n = 20 · Gaussian noise, ε = 1 (ρ = 0.5) · 10 replicates, " \
                      "truth from the prior", sub


def test_scenarios_that_differ_only_in_seed_prior_or_release_get_different_file_names():
    """The names said model, mechanism, budget and n only: seed 7 and seed 8, two typed releases, two uploaded files
    of one size, or two priors, gave the same draws.csv name, and one download overwrote the other."""
    base = Scenario()
    stem = download_stem(base, 40, (12.5,))
    assert re.fullmatch(r"beta_binomial_laplace_eps0\.3_n40_seed7_[0-9a-f]{6}", stem), stem
    assert download_stem(Scenario(), 40, (12.5,)) == stem  # the same scenario, the same name
    others = [download_stem(replace(base, seed=8), 40, (12.5,)), download_stem(base, 40, (13.5,)),
              download_stem(replace(base, prior=(("a", 2.0), ("b", 1.0))), 40, (12.5,)),
              download_stem(replace(base, sensitivity=2.0), 40, (12.5,))]
    assert len({stem, *others}) == 5, others
    upload = replace(base, data="csv")
    assert download_stem(upload, 40, (12.5,)) != download_stem(upload, 40, (20.5,))  # two files of one size
    assert "_upload_" in download_stem(upload, 40) and "_release_" in download_stem(replace(base, data="s_dp"), 40)


def test_the_draws_csv_names_each_method_as_the_page_does_beside_the_clis_name():
    """The draws file's method column said "auto" and "exact" where the page's table and legend say "Exact (best
    method)" and, for a grid posterior, "Exact (numerical)": a reader matching the file to the page could not."""
    from ui import tables

    auto = Result(method="auto", param_names=("lam",), draws=np.zeros((1, 2, 1)), s_dp=np.array([8.4]),
                  info={"picked": "exact"})
    frame = pd.read_csv(io.BytesIO(tables.draws_csv([_grid_result(), auto])))
    assert list(frame.columns) == ["method", "method_name", "chain", "draw", "lam"]
    assert frame.groupby("method")["method_name"].unique().map(list).to_dict() == {
        "exact": ["Exact (numerical)"], "auto": ["Exact (best method)"]}
    written = len(tables.draws_csv([_grid_result(), auto]))
    assert abs(tables.draws_csv_size([_grid_result(), auto]) - written) <= 0.1 * written  # the button's estimate


def test_the_sweep_csv_names_a_grid_posterior_numerical_as_the_privacy_budget_legends_do():
    """The Privacy budget page's table said "exact" and "auto" beside legends reading "Exact (numerical)" and
    "Exact (best method)"."""
    from types import SimpleNamespace

    from ui.compute import sweeps

    table = pd.DataFrame({"epsilon": [0.5, 1.0, 1.0], "method": ["exact", "exact", "auto"], "param": ["lam"] * 3,
                          "mean": [1.0, 1.1, 1.1], "sd": [0.5, 0.4, 0.4], "q5": [0.3, 0.4, 0.4],
                          "q95": [1.9, 1.8, 1.8], "converged": [True, True, True]})
    grid = SimpleNamespace(ok=True, result=_grid_result())
    runs = {0.5: {"exact": grid}, 1.0: {"exact": grid}}
    frame = pd.read_csv(io.StringIO(sweeps.sweep_csv(sweeps.Sweep(table=table, runs=runs, skipped={}))))
    assert frame.groupby("method")["method_name"].unique().map(list).to_dict() == {
        "exact": ["Exact (numerical)"], "auto": ["Exact (best method)"]}


def test_a_figure_of_one_parameter_of_several_is_saved_under_that_parameters_name(monkeypatch):
    """Compare's figure shows the picked cell of a Dirichlet-multinomial; its PNG and HTML were ``…_posterior``
    whichever cell it showed, so p[2]'s file overwrote p[0]'s."""
    from ui.compute.files import name_part
    from ui.params.query import to_query

    assert name_part("p[0][1]") == "p_0_1" and name_part("beta[2]") == "beta_2" and name_part("theta") == "theta"
    names: dict = {}
    record_downloads(monkeypatch, names)
    scenario = Scenario(model="dirichlet_multinomial", prior=(("alpha", "1, 1, 1"),), truth="0.2, 0.3, 0.5",
                        methods=("naive", "exact"))
    at = open_app(query=to_query(scenario))
    assert not at.exception, at.exception
    at.selectbox(key=keys.W_PARAM_COMPARE).set_value("p[2]").run()
    first, last = names["Figure (HTML)"][0], names["Figure (HTML)"][-1]
    assert first.endswith("_posterior_p_0.html") and last.endswith("_posterior_p_2.html"), (first, last)


def test_a_calibration_figure_of_a_cell_probability_has_no_brackets_in_its_file_name(monkeypatch):
    """A Dirichlet-multinomial study's figures were named calibration_ecdf_p[0].png: brackets a shell globs."""
    charts = _record_charts(monkeypatch)
    at = open_app("pages/calibration.py")
    at.selectbox(key=keys.W_CAL_MODEL).set_value("dirichlet_multinomial")
    at.text_input(key=keys.W_CAL_N).set_value("10").run()
    at.text_input(key=keys.W_CAL_M).set_value("10").run()
    at.multiselect(key=keys.W_CAL_METHODS).set_value(["naive"]).run()
    at.button(key=keys.W_CAL_RUN).click().run()
    assert not at.exception, at.exception
    names = [c["name"] for c in charts]
    assert "calibration_dirichlet_multinomial_laplace_eps0.2_n10_M10_ecdf_p_0" in names, names
    assert not [n for n in names if "[" in n or "]" in n], names


def test_the_toml_that_holds_an_uploads_records_has_a_name_of_its_own(monkeypatch):
    """With "Put the confidential records in the TOML" ticked the file holding every record was named like the one
    without, the one that may leave the building: a second download took its place, or was sent in its stead."""
    names: dict = {}
    recorded = record_downloads(monkeypatch, names)
    at = open_app()
    at.radio(key=keys.W_DATA).set_value("csv").run()
    at.file_uploader(key=keys.W_CSV).set_value(("records.csv", b"employed\n" + b"1\n0\n" * 10, "text/csv")).run()
    at.checkbox(key=keys.W_TOML_RECORDS).check().run()
    assert not at.exception, at.exception
    without, with_records = names["Scenario (TOML)"][-1], names["Scenario (TOML) with the records"][-1]
    assert with_records == without.removesuffix(".toml") + "_with_records.toml", (without, with_records)
    assert "records = [1.0, 0.0, 1.0" in recorded["Scenario (TOML) with the records"][-1]()
    assert "records = " not in recorded["Scenario (TOML)"][-1]()


def test_an_uploads_files_with_the_confidential_posterior_are_named_apart_from_the_shareable_ones(monkeypatch):
    """Ticking "Put what the records show directly in the files" put the confidential-data posterior (whose mean
    gives back the confidential count) and OPS's draws in files named exactly like the shareable ones."""
    names: dict = {}
    recorded = record_downloads(monkeypatch, names)
    at = open_app()
    at.radio(key=keys.W_DATA).set_value("csv").run()
    at.file_uploader(key=keys.W_CSV).set_value(("records.csv", b"employed\n" + b"1\n0\n" * 10, "text/csv")).run()
    shareable = {label: files[-1] for label, files in names.items()}
    shareable_draws = recorded["Draws (CSV)"][-1]
    at.checkbox(key=keys.W_SHARE_DIRECT).check().run()
    assert not at.exception, at.exception
    for label in ("Draws (CSV)", "Figure (HTML)"):
        assert "_with_confidential" not in shareable[label] and "_with_confidential" in names[label][-1], label
    assert "confidential" not in set(pd.read_csv(io.BytesIO(shareable_draws()))["method"])
    assert "confidential" in set(pd.read_csv(io.BytesIO(recorded["Draws (CSV)"][-1]()))["method"])


def test_the_n_posteriors_file_names_the_method_the_mechanism_and_the_scenario(monkeypatch):
    """Compare's figure of the unknown n's posterior left the page titled "Number of records n: posterior mean …"
    alone: no method, budget, model or data source."""
    from ui.params.query import to_query

    charts = _record_charts(monkeypatch)
    at = open_app(query=to_query(Scenario(sample_size="unknown", methods=("naive", "rjmcmc"))))
    assert not at.exception, at.exception
    (chart,) = [c for c in charts if c["name"].endswith("_n_posterior")]
    layout = chart["file"]().to_dict()["layout"]
    title = layout["title"]["text"].replace("<br>", " ")
    assert title.startswith("Number of records n: posterior mean ") and ", by RJMCMC (unknown n); Laplace noise" in \
        title, title
    assert layout["title"]["subtitle"]["text"].replace("<br>", " ").startswith("Beta-binomial (proportion θ), n = "), \
        layout["title"]["subtitle"]


def test_the_small_multiples_file_is_titled_with_the_scenario(monkeypatch):
    """The small multiples (every parameter) left the page with no title at all."""
    from ui.params.query import to_query

    charts = _record_charts(monkeypatch)
    scenario = Scenario(model="dirichlet_multinomial", prior=(("alpha", "1, 1, 1"),), truth="0.2, 0.3, 0.5",
                        methods=("naive", "exact"))
    at = open_app(query=to_query(scenario))
    at.session_state[keys.W_MULTIPLES] = True  # the expander opened
    at.run()
    assert not at.exception, at.exception
    (chart,) = [c for c in charts if "_posterior_all_parameters" in c["name"]]
    layout = chart["file"]().to_dict()["layout"]
    assert layout["title"]["text"].replace("<br>", " ").startswith(
        "Posterior of each parameter per method given s_dp = "), layout["title"]
    assert layout["title"]["subtitle"]["text"].replace("<br>", " ").startswith(
        "Dirichlet-multinomial (cell probabilities p), n = 40 · Laplace noise"), layout["title"]["subtitle"]


def test_compares_table_downloads_in_full_with_its_verdicts_and_the_pages_names(monkeypatch):
    """Compare's table, the numbers an analyst quotes, had no download: only the draws, from which R-hat, ESS and the
    verdict had to be recomputed. The file holds what the table shows, unrounded, under the page's names."""
    names: dict = {}
    recorded = record_downloads(monkeypatch, names)
    at = open_app()
    assert not at.exception, at.exception
    assert names["Summary table (CSV)"][-1].endswith("_summary.csv")
    file = pd.read_csv(io.BytesIO(recorded["Summary table (CSV)"][-1]()))
    assert list(file.columns[:4]) == ["method", "method_name", "parameter", "mean"] and "converged" in file.columns
    shown = at.dataframe[0].value
    assert list(file["method_name"]) == list(shown["method"])
    row = file[file["method"] == "auto"].iloc[0]
    assert row["method_name"] == "Exact (best method)" and row["converged"].startswith("yes")
    assert float(shown.loc[shown["method"] == "Exact (best method)", "mean"].iloc[0]) == pytest.approx(
        row["mean"], rel=5e-4)  # the page's four significant figures of the file's full number


def test_privacy_budget_files_of_a_cell_probability_have_no_brackets_and_uploads_are_told_apart(monkeypatch):
    """The Privacy budget page named a Dirichlet cell's figures …_sd_vs_epsilon_p[0].html, and its stem did not read
    an upload's records, so two uploads of the same size got one name."""
    from ui.compute import sweeps
    from ui.params.query import to_query

    names: dict = {}
    record_downloads(monkeypatch, names)
    scenario = Scenario(model="dirichlet_multinomial", prior=(("alpha", "1, 1, 1"),), truth="0.2, 0.3, 0.5",
                        methods=("naive", "exact"))
    at = open_app("pages/privacy_budget.py", query=to_query(scenario))
    assert not at.exception, at.exception
    files = [f for fs in names.values() for f in fs if f.endswith(".html")]
    assert files and all("[" not in f and "]" not in f for f in files), files
    assert any(f.endswith("_sd_vs_epsilon_p_0.html") for f in files), files
    upload = replace(Scenario(), data="csv")
    one, two = np.array([0.0, 1.0, 1.0]), np.array([1.0, 0.0, 1.0])
    assert sweeps.sweep_stem(upload, 3, (0.1, 1.0), one) != sweeps.sweep_stem(upload, 3, (0.1, 1.0), two)
    assert sweeps.sweep_stem(upload, 3, (0.1, 1.0), one) == sweeps.sweep_stem(upload, 3, (0.1, 1.0), one.copy())


def test_a_downloaded_spec_says_how_to_run_each_of_its_methods(tmp_path, cli):
    """The Compare page's TOML runs [method] (often auto) by default; the others need --method NAME, and nothing in
    the file said so (audit s25, finding 17). A comment says it and lists them; the file still reads back the same."""
    import tomllib

    spec = engine.spec_from_dict({"seed": 1, "model": {"name": "beta_binomial", "n": 10},
                                  "mechanism": {"name": "laplace", "epsilon": 1.0}, "data": {"s_dp": [3.0]},
                                  "method": {"name": "auto"},
                                  "methods": {"naive": {"name": "naive"}, "exact": {"name": "exact", "draws": 500}}})
    text = engine.spec_to_toml(spec)
    assert "# the methods below with its settings: naive, exact" in text and "--method NAME" in text
    assert engine.spec_to_dict(engine.spec_from_dict(tomllib.loads(text))) == engine.spec_to_dict(spec)
    path = tmp_path / "spec.toml"
    path.write_text(text)
    proc = cli("run", str(path), "--out", str(tmp_path / "o"), "--method", "exact", "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert pd.read_csv(tmp_path / "o" / "draws.csv").shape[0] == 4 * 500  # exact's settings: 4 chains of 500
    one = engine.spec_to_toml(engine.spec_from_dict({**engine.spec_to_dict(spec), "methods": {}}))
    assert "#" not in one  # a spec of one method has nothing to say


def test_a_calibration_studys_summary_downloads_with_every_number_in_full(calibration):
    """Left by audit s25: the summary table (KS, coverage, MMD per method) had no download of its own; a curator
    copied rounded numbers off the page. It is the CLI's calibration_summary.csv with the page's method names."""
    at, recorded, names, _ = calibration
    stem = "calibration_beta_binomial_gaussian_rho0.5_n20_M10"
    assert names["Download the summary (CSV)"][-1] == f"{stem}_summary.csv"
    summary = pd.read_csv(io.BytesIO(recorded["Download the summary (CSV)"][-1]()))
    assert list(summary.columns[:3]) == ["method", "method_name", "param"]
    assert {"ks_stat", "ks_pvalue", "coverage_90", "mmd2_mean"} <= set(summary.columns)
    assert set(summary["method"]) >= {"naive", "exact"} and (summary["M"] == 10).all()
    page = at.dataframe[0].value  # the page's numbers are these, rounded
    exact = summary.set_index("method").loc["exact"]
    assert page.set_index("Method").loc["Exact (closed form)", "90% coverage"] == pytest.approx(exact["coverage_90"])


def test_diagnostics_table_downloads_with_every_number_in_full(monkeypatch):
    """Left by audit s25: Diagnostics' R-hat / ESS / MCSE table had no download; the page rounds its numbers."""
    names: dict = {}
    recorded = record_downloads(monkeypatch, names)
    at = open_app("pages/diagnostics.py")
    assert not at.exception, at.exception
    (name,) = names["Table (CSV)"]
    assert re.fullmatch(r"beta_binomial_laplace_eps0\.3_n40_seed7_[0-9a-f]{6}_da_mcmc_diagnostics\.csv", name), name
    table = pd.read_csv(io.BytesIO(recorded["Table (CSV)"][-1]()))
    assert list(table.columns) == ["method", "method_name", "parameter", "mean", "sd", "q5", "q50", "q95", "r_hat",
                                   "ess_bulk", "ess_tail", "mcse_mean", "mcse_q5", "mcse_q95", "converged"]
    assert table.loc[0, "method"] == "da_mcmc" and table.loc[0, "method_name"] == "DA-MCMC"
    assert table.loc[0, "parameter"] == "theta" and 1.0 <= table.loc[0, "r_hat"] < 1.01
    assert bool(table.loc[0, "converged"]) and table.loc[0, "ess_bulk"] >= 400
