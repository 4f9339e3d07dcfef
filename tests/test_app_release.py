"""Issue 22 in the app: "How was it released?" in the sidebar (a library's release in its own terms), the dp-wizard
upload, and the mean's budget split on Privacy budget. AppTest for each, the figure through ``fig.to_dict()``, the
link round trip, and a fresh interpreter showing the app's release code loads neither OpenDP nor diffprivlib."""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tomllib
from dataclasses import replace

import pytest

import engine
from engine.core.spec import spec_to_toml
from engine.spec import spec_from_dict
from app_support import assert_charts_fit_a_phone, open_app
from figures.budget import mean_split_plot
from figures.labels import METHOD_LABELS
from ui import keys
from ui.params.messages import in_words
from ui.params.query import from_query, to_query
from ui.params.release import release_table, scenario_from_spec
from ui.params.scenario import DEFAULT_METHODS, Scenario
from ui.params.spec import release_spec_dict, to_spec_dict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = os.path.join(ROOT, "tests", "fixtures", "dpwizard_grade_hours.zip")
TIMEOUT = 120
GAUSSIAN = replace(Scenario(), release="diffprivlib", release_mechanism="Gaussian",
                   release_params=(("epsilon", 1.0), ("delta", 1e-5), ("sensitivity", 1.0)))
COUNT = replace(Scenario(), release="opendp", release_mechanism="laplace",
                release_params=(("domain", "int"), ("scale", 3.0), ("clip", "0, inf")))


def _texts(elements) -> list[str]:
    return [e.value for e in elements]


def _clean(at) -> None:
    assert not at.exception, _texts(at.exception)
    assert not at.error, _texts(at.error)


# --------------------------------------------------------------------------- pure: spec and link
def test_the_lab_default_keeps_its_mechanism_table_and_its_link():
    s = Scenario()
    spec = to_spec_dict(s)
    assert "mechanism" in spec and "release" not in spec
    assert not [k for k in to_query(s) if k.startswith("rel")]
    assert from_query(to_query(s)) == s


@pytest.mark.parametrize("s", [GAUSSIAN, COUNT])
def test_a_library_release_is_a_release_table_and_round_trips_through_the_link(s):
    spec = to_spec_dict(s)
    assert "mechanism" not in spec
    assert spec["release"]["library"] == s.release and spec["release"]["mechanism"] == s.release_mechanism
    q = to_query(s)
    assert q["rel"] == s.release and q["rel_mech"] == s.release_mechanism
    assert from_query(q) == s
    problem = engine.prepare(spec)
    mapped = engine.release_from(s.release, s.release_mechanism, **{k: v for k, v in spec["release"].items()
                                                                     if k not in ("library", "mechanism")})
    assert problem.mechanism.describe() == mapped.noise.describe()


def test_the_toml_download_keeps_the_release_in_the_librarys_terms():
    text = spec_to_toml(spec_from_dict(release_spec_dict(COUNT, None)))
    assert "[release]" in text and "[mechanism]" not in text
    assert 'library = "opendp"' in text and "clip = [0.0, inf]" in text
    assert spec_from_dict(tomllib.loads(text)).mechanism == spec_from_dict(to_spec_dict(COUNT)).mechanism


def test_the_mapped_noise_is_the_librarys_not_the_labs():
    """diffprivlib's classic Gaussian at ε = 1, δ = 1e-5 has σ = √(2 ln(1.25/δ)) = 4.845; the lab's own gaussian with
    the same ε and δ (the analytic Gaussian) is narrower: the two specs must differ."""
    lib = engine.prepare(to_spec_dict(GAUSSIAN)).mechanism
    lab = engine.prepare(to_spec_dict(replace(Scenario(), mechanism="gaussian", budget_form="epsilon_delta",
                                              epsilon=1.0, delta=1e-5))).mechanism
    assert lib.noise_sd == pytest.approx(4.8448, abs=1e-3)
    assert lab.noise_sd < 4.0


def test_clip_is_parsed_and_a_bad_one_is_named_in_the_boxs_words():
    assert release_table(COUNT)["clip"] == [0.0, float("inf")]
    with pytest.raises(ValueError) as err:
        release_table(replace(COUNT, release_params=(("domain", "int"), ("scale", 3.0), ("clip", "0"))))
    assert in_words(str(err.value)).startswith("clip must be two numbers lower, upper")


@pytest.mark.parametrize("query, key", [({"rel": "numpy"}, "rel"), ({"rel": "opendp", "rel_mech": "Laplace"}, "rel_mech"),
                                        ({"rel": "opendp", "rel_mech": "laplace", "rel.epsilon": "1"}, "rel.epsilon"),
                                        ({"rel": "opendp", "rel_mech": "laplace", "rel.domain": "real"}, "rel.domain")])
def test_a_bad_link_names_its_parameter(query, key):
    with pytest.raises(ValueError, match=f"link parameter {key} = "):
        from_query({"model": "beta_binomial", **query})


def test_a_dpwizard_spec_becomes_the_sidebars_scenario():
    spec = {"seed": 3, "model": {"name": "poisson_gamma", "n": 1, "alpha": 1.0, "beta": 0.0006},
            "release": {"library": "opendp", "mechanism": "laplace", "domain": "int", "scale": 1.5,
                        "clip": [0, float("inf")], "sensitivity": 1.0},
            "data": {"s_dp": [85.0]}, "method": {"name": "exact"}}
    s = scenario_from_spec(spec)
    assert (s.model, s.n, s.data, s.s_dp, s.seed) == ("poisson_gamma", 1, "s_dp", "85", 3)
    assert s.prior_dict == {"alpha": 1.0, "beta": 0.0006, "upper": None}
    again = to_spec_dict(s, method="exact")
    assert again["release"] == {**spec["release"], "clip": [0.0, float("inf")]}
    assert again["data"] == spec["data"] and again["model"] == spec["model"]
    with pytest.raises(ValueError, match="data"):
        scenario_from_spec({**spec, "data": {"simulate": {"lam": 3}}})


# --------------------------------------------------------------------------- the figure
def test_mean_split_figure_marks_both_splits():
    curve = ((0.25, 0.9), (0.5, 0.8), (0.75, 0.7))
    fig = mean_split_plot(curve, fraction_sum=0.7, posterior_sd=0.69, even_sd=0.8, epsilon=1.0).to_dict()
    kinds = {t["meta"]["kind"]: t for t in fig["data"]}
    assert set(kinds) == {"curve", "even", "best"}
    assert list(kinds["curve"]["x"]) == [0.25, 0.5, 0.75] and list(kinds["curve"]["y"]) == [0.9, 0.8, 0.7]
    assert (kinds["even"]["x"][0], kinds["even"]["y"][0]) == (0.5, 0.8)
    assert (kinds["best"]["x"][0], kinds["best"]["y"][0]) == (0.7, 0.69)
    assert fig["layout"]["yaxis"]["type"] == "log"
    assert "ε = 1" in fig["layout"]["title"]["text"]


# --------------------------------------------------------------------------- AppTest: the sidebar
def test_sidebar_library_release_shows_the_mapping_and_the_warning_and_runs():
    at = open_app("pages/compare.py", timeout=TIMEOUT)
    assert not at.sidebar.warning  # the lab's own simulation: no convention warning
    at.sidebar.radio(key=keys.W_RELEASE).set_value("diffprivlib").run()
    at.sidebar.selectbox(key=keys.release_mechanism_key("diffprivlib")).set_value("Gaussian").run()
    _clean(at)
    labels = [t.label for t in at.sidebar.text_input]
    assert {"epsilon", "delta", "sensitivity"} <= set(labels)  # diffprivlib's own parameter names
    # the sidebar's ε = 0.3 carried over (diffprivlib's box started at 1, σ = 4.845, whatever the budget was)
    assert any("ε = 0.3, δ = 1e-5, Δ = 1 → Gaussian noise σ = 16.15" in c for c in _texts(at.sidebar.caption))
    assert any("classic mechanism" in w for w in _texts(at.sidebar.warning))
    assert at.query_params["rel"] == "diffprivlib" and at.query_params["rel_mech"] == "Gaussian"
    assert at.session_state[keys.SCENARIO].release_mechanism == "Gaussian"
    assert len(at.get("plotly_chart")) == 1  # Compare's posterior figure from the [release] spec
    # a bad value: the engine's message in the box's words, under the section; the entry is kept
    at.sidebar.text_input(key=keys.release_param_key("diffprivlib", "Gaussian", "epsilon")).set_value("2").run()
    errors = _texts(at.sidebar.error)
    assert any(e.startswith("epsilon must be in (0, 1] for the classic Gaussian") and "(you entered 2)" in e
               for e in errors), errors
    assert at.sidebar.text_input(key=keys.release_param_key("diffprivlib", "Gaussian", "epsilon")).value == "2"
    # back to the lab's own simulation: the link loses the release
    at.sidebar.radio(key=keys.W_RELEASE).set_value("lab").run()
    _clean(at)
    assert "rel" not in at.query_params


def test_a_link_with_a_release_opens_it_in_the_sidebar():
    at = open_app("pages/diagnostics.py", to_query(COUNT), timeout=TIMEOUT)
    _clean(at)
    assert at.session_state[keys.SCENARIO] == COUNT
    assert at.sidebar.radio(key=keys.W_RELEASE).value == "opendp"
    assert at.sidebar.text_input(key=keys.release_param_key("opendp", "laplace", "clip")).value == "0, inf"
    assert any("discrete Laplace noise, t = 3, clipped to [0, inf]" in c for c in _texts(at.sidebar.caption))
    # a count: add/remove-one and replace-one give it the same Δ = 1, so no neighbours warning (test below)
    assert not any("add/remove-one" in w for w in _texts(at.sidebar.warning))


def test_an_opendp_form_states_the_models_delta_and_only_the_warnings_that_apply():
    """OpenDP on the Beta-binomial count: the sentence said "(Δ / 3)-DP at the model's add/remove-one sensitivity Δ
    … Δ = 1 for a count …, max(|lo|, |hi|) for a sum", and a warning "a sum of values in [lo, hi] has sensitivity
    max(|lo|, |hi|), where the lab's default for a known n is hi − lo", irrelevant to a count. The sentence now
    states this model's Δ and the ε it gives; the neighbours warning shows where it changes the model's Δ, in its
    numbers (a sum clamped to [-3, 3]: 3 under add/remove-one, 6 replacing one record)."""
    at = open_app("pages/protection.py", to_query(replace(COUNT, release_params=(("domain", "int"), ("scale", 3.0)))),
                  timeout=TIMEOUT)
    _clean(at)
    captions = _texts(at.sidebar.caption)
    assert any("0.3333-DP at Δ = 1 here (the model's add/remove-one sensitivity, which the analysis uses), so "
               "ε = Δ / scale = 1/3 = 0.3333" in c for c in captions), captions
    assert not any("max(|lo|, |hi|)" in c for c in captions)
    assert not at.sidebar.warning  # nothing that applies to a count released without a clip
    assert any(m.startswith("##### At ε = 0.3333,") for m in _texts(at.markdown))
    normal = replace(Scenario(), model="normal_known_sd", prior=(("sd", 1.0), ("lo", -3.0), ("hi", 3.0),
                                                                   ("prior_mean", 0.0), ("prior_sd", 10.0)),
                     truth="0.5", release="opendp", release_mechanism="laplace",
                     release_params=(("domain", "float"), ("scale", 3.0)))
    at = open_app("pages/protection.py", to_query(normal), timeout=TIMEOUT)
    _clean(at)
    assert any("1-DP at Δ = 3 here" in c and "ε = Δ / scale = 3/3 = 1" in c for c in _texts(at.sidebar.caption))
    assert _texts(at.sidebar.warning) == [
        "OpenDP's neighbours are add/remove-one: one record added or removed moves this model's statistic by at most "
        "Δ = 3, the Δ the analysis uses, where the lab's own simulation (one record replaced) uses Δ = 6"]


# --------------------------------------------------------------------------- AppTest: dp-wizard upload
def test_dpwizard_upload_lists_statistics_and_loads_one_into_compare():
    at = open_app("pages/compare.py", timeout=TIMEOUT)
    with open(PACKAGE, "rb") as fh:
        data = fh.read()
    at.sidebar.file_uploader(key=keys.W_DPWIZARD).set_value(("grade_hours.zip", data, "application/zip")).run()
    _clean(at)
    captions = _texts(at.sidebar.caption)
    # the mean is analysed (engine.dpwizard writes hours_mean.toml); the sidebar names it, offering no bin of it
    assert any(c.startswith("**hours** (Mean): OpenDP mean (dp.mean) on [0, 40]") for c in captions)
    pick = at.sidebar.selectbox(key=keys.W_DPWIZARD_PICK)
    assert len(pick.options) == 8 and "grade: count in (20, 40] (released 85)" in pick.options
    assert "hours: the mean (released 11.47), n private" in pick.options
    assert pick.value == "grade_histogram.toml"  # the whole histogram first: its total is private
    pick.set_value("grade_bin2.toml").run()
    at.sidebar.button(key=keys.W_DPWIZARD_LOAD).click().run()
    _clean(at)
    s = at.session_state[keys.SCENARIO]
    assert (s.model, s.release, s.s_dp, s.data) == ("poisson_gamma", "opendp", "85", "s_dp")
    assert dict(s.release_params)["scale"] == pytest.approx(1.5)
    assert any("release **s_dp = 85**" in m for m in _texts(at.markdown))
    assert len(at.get("plotly_chart")) == 1
    # a file that is not a package: one message next to the upload, and the page carries on
    at.sidebar.file_uploader(key=keys.W_DPWIZARD).set_value(("notes.zip", b"not a zip", "application/zip")).run()
    assert not at.exception
    assert _texts(at.sidebar.error) == ["notes.zip is not a dp-wizard package the lab can read: must be a .zip file "
                                        "(dp-wizard's results package)"]


def test_dpwizard_histogram_loads_with_its_private_total_and_exact_reports_p_and_n():
    """The whole histogram (paper 002 App. B): an unknown n that is not released; the sidebar says so and offers
    no n_dp box, the link and the spec carry no [n_mechanism], and Exact draws p and n (the n pmf figure, drawn
    by Exact, has no n_dp line)."""
    at = open_app("pages/compare.py", timeout=TIMEOUT)
    with open(PACKAGE, "rb") as fh:
        data = fh.read()
    at.sidebar.file_uploader(key=keys.W_DPWIZARD).set_value(("grade_hours.zip", data, "application/zip")).run()
    at.sidebar.button(key=keys.W_DPWIZARD_LOAD).click().run()
    _clean(at)
    s = at.session_state[keys.SCENARIO]
    assert (s.model, s.sample_size, s.n_mechanism, s.n_prior) == ("dirichlet_multinomial", "unknown", "none",
                                                                  "negative_binomial")
    assert not s.size_released and "n_mechanism" not in to_spec_dict(s, method="exact")
    assert s.methods == ("naive", "exact")  # DA-MCMC would run at the plug-in n
    assert at.sidebar.selectbox(key=keys.W_N_MECHANISM).value == "none"
    assert keys.W_N_DP not in [t.key for t in at.sidebar.text_input]
    assert at.query_params["n_mech"] == "none" and "n_dp" not in at.query_params
    assert any("n unknown and not released" in m for m in _texts(at.markdown))
    methods = set(at.dataframe[0].value["method"])
    assert METHOD_LABELS["exact"] in methods
    charts = [c.proto.spec for c in at.get("plotly_chart")]
    n_chart = [json.loads(c) for c in charts if '"n_pmf"' in c]
    assert len(n_chart) == 1
    kinds = [t["meta"]["kind"] for t in n_chart[0]["data"]]
    assert kinds[0] == "n_pmf" and "n_dp" not in kinds and n_chart[0]["data"][0]["meta"]["method"] == "exact"
    # another model: "none" is not offered, and the section falls back to Laplace noise on n
    at.sidebar.selectbox(key=keys.W_MODEL).set_value("beta_binomial").run()
    assert at.sidebar.selectbox(key=keys.W_N_MECHANISM).options == ["Laplace", "Discrete Laplace"]
    assert at.session_state[keys.SCENARIO].n_mechanism == "laplace"


def _dpwizard_mean_loaded():
    """The Compare page with the fixture package's mean (hours_mean.toml) loaded from the sidebar's upload."""
    at = open_app("pages/compare.py", timeout=TIMEOUT)
    with open(PACKAGE, "rb") as fh:
        data = fh.read()
    at.sidebar.file_uploader(key=keys.W_DPWIZARD).set_value(("grade_hours.zip", data, "application/zip")).run()
    at.sidebar.selectbox(key=keys.W_DPWIZARD_PICK).set_value("hours_mean.toml").run()
    at.sidebar.button(key=keys.W_DPWIZARD_LOAD).click().run()
    return at


def test_dpwizard_mean_loads_and_the_pseudo_marginal_chain_answers():
    """OpenDP's mean (sum / length, n private) from the package: OpenDP's "mean" form in the sidebar with its own
    parameter names, n not released, and the pseudo-marginal chain's posterior of mu and of n."""
    at = _dpwizard_mean_loaded()
    _clean(at)
    s = at.session_state[keys.SCENARIO]
    assert (s.model, s.release, s.release_mechanism, s.n_mechanism, s.methods) == (
        "normal_known_sd", "opendp", "mean", "none", ("pseudo_marginal",))
    assert at.sidebar.text_input(key=keys.release_param_key("opendp", "mean", "bounds")).value == "0, 40"
    assert set(at.dataframe[0].value["method"]) == {METHOD_LABELS["pseudo_marginal"]}
    # n in the same words everywhere: private, not "released with noise" beside "noise on n: none", and not "the
    # released cells' total" (a histogram's plug-in n) for a mean; the prior's dispersion as a person reads it
    assert any("n unknown and not released apart from the mean's noisy length" in m for m in _texts(at.markdown))
    assert "unknown (private)" in at.sidebar.radio(key=keys.W_SAMPLE_SIZE).options
    assert at.sidebar.text_input(key=keys.W_N_PRIOR_DISPERSION).value == "5955.59"
    n_chart = [json.loads(c.proto.spec) for c in at.get("plotly_chart") if '"n_pmf"' in c.proto.spec]
    assert len(n_chart) == 1 and n_chart[0]["data"][0]["meta"]["method"] == "pseudo_marginal"
    # a bad bounds entry is named in the form's words and kept
    at.sidebar.text_input(key=keys.release_param_key("opendp", "mean", "bounds")).set_value("0").run()
    assert any("bounds" in e and "(you entered 0)" in e for e in _texts(at.sidebar.error)), _texts(at.sidebar.error)
    assert at.sidebar.text_input(key=keys.release_param_key("opendp", "mean", "bounds")).value == "0"


# --------------------------------------------------------------------------- AppTest: Privacy budget
def test_privacy_budget_mean_split_section():
    at = open_app("pages/privacy_budget.py", timeout=TIMEOUT)
    _clean(at)
    assert not [m for m in _texts(at.markdown) if "on the sum" in m]  # closed: nothing computed
    at.session_state[keys.W_MEAN_SPLIT] = True
    at.run()
    _clean(at)
    eps = at.session_state[keys.SCENARIO].epsilon
    split = engine.mean_budget_split(eps, lower=0.0, upper=10.0, sd=2.0, n=100, prior_mean=5.0, prior_sd=5.0)
    sentence = next(m for m in _texts(at.markdown) if "on the sum" in m)
    assert f"spending **{split.fraction_sum:.0%} of ε on the sum**" in sentence
    assert f"**{split.posterior_sd:.4g}**" in sentence and f"({split.even_posterior_sd:.4g})" in sentence
    assert_charts_fit_a_phone(at)
    figs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    fig = next(f for f in figs
               if "posterior sd by split" in (f["layout"].get("title") or {}).get("text", "").replace("<br>", " "))
    best = next(t for t in fig["data"] if t["meta"]["kind"] == "best")
    assert best["x"][0] == pytest.approx(split.fraction_sum)
    at.text_input(key=keys.W_MEAN_SD).set_value(str(-1.0)).run()
    assert not at.exception
    assert "The split could not be computed: sd of one record = -1.0 is invalid: must be a finite number > 0" in \
        _texts(at.error)
    # a library's release: the split still shows, the ε sweep says why it does not run by itself
    at.text_input(key=keys.W_MEAN_SD).set_value(str(2.0)).run()
    at.sidebar.radio(key=keys.W_RELEASE).set_value("opendp").run()
    _clean(at)
    assert any("fixed by the library's parameters" in c for c in _texts(at.caption))
    assert any("on the sum" in m for m in _texts(at.markdown))


def test_privacy_budget_sweeps_a_library_releases_noise_with_the_labs_own_mechanism():
    """A library's release showed only "Choose the lab's own simulation" on Privacy budget, under an intro that
    described a sweep the page did not draw. It now offers the lab's mechanism of the same noise law (OpenDP's int
    laplace at scale 3: discrete Laplace at ε = Δ/t = 1/3 with Δ = 1), and one click sweeps it; a clipped release,
    which has no such mechanism, says so."""
    at = open_app("pages/privacy_budget.py", to_query(COUNT), timeout=TIMEOUT)
    _clean(at)
    assert not at.get("plotly_chart")
    assert any(c.startswith("The sweep rescales the lab's own mechanism") for c in _texts(at.caption))
    assert not any(c.startswith("Every ε on the grid") for c in _texts(at.caption))
    assert any("has no lab mechanism of the same law" in i for i in _texts(at.info))  # COUNT is clipped at 0
    at.sidebar.text_input(key=keys.release_param_key("opendp", "laplace", "clip")).set_value("").run()
    _clean(at)
    info = next(i for i in _texts(at.info) if i.startswith("The OpenDP laplace release's noise"))
    assert "is the lab's own discrete Laplace mechanism at ε = Δ/t = 0.333333 with Δ = 1" in info
    before = engine.prepare(to_spec_dict(at.session_state[keys.SCENARIO])).mechanism
    at.button(key=keys.W_SWEEP_AS_LAB).click().run(timeout=300)
    _clean(at)
    s = at.session_state[keys.SCENARIO]
    assert (s.release, s.mechanism, s.epsilon, s.sensitivity) == ("lab", "discrete_laplace", 0.333333, 1.0)
    after = engine.prepare(to_spec_dict(s)).mechanism
    assert type(after) is type(before) and after.scale == pytest.approx(before.scale, rel=1e-5)
    assert at.sidebar.text_input(key=keys.W_EPSILON).value == "0.333333"
    assert "The OpenDP laplace release's noise is the lab's own discrete Laplace mechanism at ε = Δ/t = 0.333333 " \
        "with Δ = 1 (the same noise law, to six digits)." in _texts(at.sidebar.caption)
    assert at.get("plotly_chart")  # the sweep ran


def test_sweep_as_lab_reads_a_scale_typed_just_before_the_click():
    """A scale typed just before the click reaches the server with the click: the button loaded the scenario of the
    run that drew it (scale 3, ε = 1/3) and the typed 5 was lost. The click's own run reads the sidebar now."""
    at = open_app("pages/privacy_budget.py", to_query(COUNT), timeout=TIMEOUT)
    at.sidebar.text_input(key=keys.release_param_key("opendp", "laplace", "clip")).set_value("").run()
    _clean(at)
    at.sidebar.text_input(key=keys.release_param_key("opendp", "laplace", "scale")).set_value("5")
    at.button(key=keys.W_SWEEP_AS_LAB).click().run(timeout=300)  # one run: the typed value and the click
    _clean(at)
    s = at.session_state[keys.SCENARIO]
    assert (s.release, s.mechanism, s.epsilon) == ("lab", "discrete_laplace", 0.2)
    assert keys.SWEEP_AS_LAB_REQUEST not in at.session_state


# --------------------------------------------------------------------------- the libraries stay out of the app
def test_the_apps_release_code_loads_neither_opendp_nor_diffprivlib():
    code = ("import sys\n"
            "import ui.sidebar.inputs, ui.sidebar.dpwizard, ui.compute.release, ui.params.release\n"
            "import figures.budget\n"
            "from ui.params.scenario import Scenario\n"
            "from ui.params.spec import to_spec_dict\n"
            "import engine\n"
            f"engine.prepare(to_spec_dict(ui.params.release.scenario_from_spec({{'seed': 1, 'model': {{'name': "
            "'poisson_gamma', 'n': 1, 'alpha': 1.0, 'beta': 0.01}, 'release': {'library': 'diffprivlib', "
            "'mechanism': 'GaussianAnalytic', 'epsilon': 1.0, 'delta': 1e-5, 'sensitivity': 1.0}, "
            "'data': {'s_dp': [4.0]}})))\n"
            f"ui.compute.release.import_package(open({PACKAGE!r}, 'rb').read(), 'p.zip')\n"
            "bad = sorted({m.split('.')[0] for m in sys.modules} & {'opendp', 'diffprivlib', 'sklearn', 'polars'})\n"
            "print(bad)\n"
            "sys.exit(1 if bad else 0)\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"the app's release code loaded {proc.stdout.strip()} {proc.stderr[-800:]}"


def test_what_it_protects_reads_a_dpwizard_mean():
    """What it protects on OpenDP's mean said "This page does not cover this scenario yet: mechanism.name =
    'opendp_mean' is invalid: has no trade-off curve here". It now draws the curve of the (sum, length) pair the
    ratio is computed from, names it so in the legend and says why no attack on the ratio does better."""
    at = _dpwizard_mean_loaded()
    at.switch_page("pages/protection.py").run()
    _clean(at)
    assert not any("does not cover" in i.value for i in at.info)
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    names = [t.get("name") for spec in specs for t in spec["data"]]
    assert "best attack on the (sum, length) pair" in names
    assert any("no attack on the released ratio does better" in c for c in _texts(at.caption))
    # four significant digits, as the mechanism's own line ("0.3333-DP") and the legend state it
    assert any(m.startswith("##### At ε = 0.3333,") for m in _texts(at.markdown))


# --------------------------------------------------------------------------- a switch carries the budget over
def _rerun_state(at):
    s = at.session_state[keys.SCENARIO]
    notes = [c for c in _texts(at.sidebar.caption) if "carried over" in c or "the same noise as" in c]
    return s, notes


def test_switching_the_mechanism_carries_the_budget_over():
    """At the defaults (Laplace, ε = 0.3) choosing Gaussian showed ρ = 0.5 (Scenario.rho), about ε = 1: Gaussian
    looked four times leakier only because the budget had changed. The ε now carries over as ρ = ε²/2 (the Learn
    page's "comparable" Gaussian budget), says so under the box once, and comes back unchanged."""
    at = open_app("pages/protection.py", {"model": "beta_binomial", "methods": "naive"}, timeout=TIMEOUT)
    _clean(at)
    at.sidebar.selectbox(key=keys.W_MECHANISM).set_value("gaussian").run()
    _clean(at)
    s, notes = _rerun_state(at)
    assert (s.budget_form, s.rho) == ("rho", 0.045) and at.sidebar.text_input(key=keys.W_RHO).value == "0.045"
    assert notes == ["ρ = 0.045: the budget before the switch, ε = 0.3, carried over (ρ = ε²/2, the Gaussian "
                     "counterpart of ε)."]
    assert any(m.startswith("##### At ρ = 0.045, ") for m in _texts(at.markdown))
    at.sidebar.selectbox(key=keys.W_MECHANISM).set_value("laplace").run()
    _clean(at)
    s, notes = _rerun_state(at)
    assert (s.mechanism, s.epsilon) == ("laplace", 0.3) and not notes  # the box said 0.3 already
    # randomized response stated by its coin: the truth probability whose ε is the ε before the switch
    at.sidebar.selectbox(key=keys.W_MECHANISM).set_value("randomized_response").run()
    at.sidebar.radio(key=keys.budget_form_key("randomized_response")).set_value("coin").run()
    at.sidebar.selectbox(key=keys.W_MECHANISM).set_value("laplace").run()
    at.sidebar.text_input(key=keys.W_EPSILON).set_value("0.8").run()
    at.sidebar.selectbox(key=keys.W_MECHANISM).set_value("randomized_response").run()
    _clean(at)
    s, notes = _rerun_state(at)
    assert s.budget_form == "coin" and s.truth_prob == pytest.approx(math.tanh(0.4), abs=1e-6)
    assert engine.prepare(to_spec_dict(s, method="naive")).mechanism.guarantee["epsilon"] == pytest.approx(0.8, 1e-5)


def test_switching_the_release_carries_the_budget_over_and_a_link_keeps_its_own():
    """diffprivlib's ε box started at 1 and OpenDP's scale at 3 whatever the budget was. They now start from it:
    ε itself, and OpenDP's scale = Δ/ε at the model's Δ (1 for the count); OpenDP's mean, whose two scales share the
    budget, says it was not carried over for a count (its model has no mean). A link states its budget, and opens
    exactly as stated."""
    at = open_app("pages/protection.py", {"model": "beta_binomial", "methods": "naive"}, timeout=TIMEOUT)
    at.sidebar.radio(key=keys.W_RELEASE).set_value("diffprivlib").run()
    _clean(at)
    s, notes = _rerun_state(at)
    assert dict(s.release_params)["epsilon"] == 0.3
    assert notes == ["epsilon = 0.3: the budget before the switch, ε = 0.3, carried over."]
    at.sidebar.radio(key=keys.W_RELEASE).set_value("opendp").run()
    _clean(at)
    s, notes = _rerun_state(at)
    assert dict(s.release_params)["scale"] == 3.33333
    assert notes == ["scale = 3.33333: the budget before the switch, ε = 0.3, carried over (scale = Δ/ε at Δ = 1)."]
    assert any(m.startswith("##### At ε = 0.3, ") for m in _texts(at.markdown))
    at.sidebar.selectbox(key=keys.release_mechanism_key("opendp")).set_value("gaussian").run()
    _clean(at)
    assert any(m.startswith("##### At ρ = 0.045, ") for m in _texts(at.markdown))  # ρ = ε²/2 at Δ₂ = 1
    at.sidebar.selectbox(key=keys.release_mechanism_key("opendp")).set_value("mean").run()
    assert any(c.startswith("The budget was not carried over: OpenDP's mean is a mean of the Normal (known sd) "
                            "model's values") for c in _texts(at.sidebar.caption))
    at.sidebar.radio(key=keys.W_RELEASE).set_value("lab").run()
    s, _ = _rerun_state(at)
    assert (s.release, s.mechanism, s.epsilon) == ("lab", "laplace", 0.3)
    # links: the budget they state, not a carried one
    at = open_app("pages/protection.py", {"model": "beta_binomial", "mech": "gaussian", "budget": "rho", "rho": "0.5",
                                          "methods": "naive"}, timeout=TIMEOUT)
    _clean(at)
    assert at.session_state[keys.SCENARIO].rho == 0.5 and at.sidebar.text_input(key=keys.W_RHO).value == "0.5"
    at = open_app("pages/protection.py", to_query(COUNT), timeout=TIMEOUT)
    assert at.sidebar.text_input(key=keys.release_param_key("opendp", "laplace", "scale")).value == "3"
    assert not [c for c in _texts(at.sidebar.caption) if "carried over" in c]


def test_switching_to_opendps_mean_carries_the_budget_as_opendp_splits_it():
    """OpenDP's mean opened with both scale boxes blank (a "required" message each) whatever the budget. The budget
    now goes into them as OpenDP calibrates dp.mean to a budget (half each, scale = 2Δ/ε: checked against OpenDP in
    tests/test_dpwizard_mean.py), and the release's ε is the budget before the switch."""
    at = open_app("pages/protection.py", {"model": "normal_known_sd", "methods": "naive"}, timeout=TIMEOUT)
    _clean(at)
    at.sidebar.radio(key=keys.W_RELEASE).set_value("opendp").run()
    at.sidebar.selectbox(key=keys.release_mechanism_key("opendp")).set_value("mean").run()
    _clean(at)
    s, notes = _rerun_state(at)
    box = at.sidebar.text_input
    assert box(key=keys.release_param_key("opendp", "mean", "sum_scale")).value == "20"  # 2 · 3 / 0.3
    assert box(key=keys.release_param_key("opendp", "mean", "length_scale")).value == "6.66667"  # 2 · 1 / 0.3
    assert notes == ["sum_scale = 20, length_scale = 6.66667: the budget before the switch, ε = 0.3, carried over as "
                     "OpenDP calibrates a mean to it (half of ε each: scale = 2Δ/ε at Δ_sum = 3, Δ_length = 1)."]
    assert engine.prepare(to_spec_dict(s)).mechanism.guarantee["epsilon"] == pytest.approx(0.3, rel=1e-5)


def test_a_carried_budget_a_library_refuses_says_so_in_its_note():
    """ε = 3 carried into diffprivlib's classic Gaussian (which takes ε ≤ 1) showed the library's refusal under a
    note that read as if all were well. The note now says the mechanism does not take it; GaussianAnalytic does,
    and its note says nothing of the kind."""
    at = open_app("pages/protection.py", {"model": "beta_binomial", "epsilon": "3", "methods": "naive"},
                  timeout=TIMEOUT)
    _clean(at)
    at.sidebar.radio(key=keys.W_RELEASE).set_value("diffprivlib").run()
    at.sidebar.selectbox(key=keys.release_mechanism_key("diffprivlib")).set_value("Gaussian").run()
    _, notes = _rerun_state(at)
    assert notes == ["epsilon = 3: the budget before the switch, ε = 3, carried over. diffprivlib's Gaussian does not "
                     "take it (the message above says what it allows)."]
    assert any("must be in (0, 1] for the classic Gaussian" in e for e in _texts(at.sidebar.error))
    at.sidebar.selectbox(key=keys.release_mechanism_key("diffprivlib")).set_value("GaussianAnalytic").run()
    _clean(at)
    _, notes = _rerun_state(at)
    assert notes == ["epsilon = 3: the budget before the switch, ε = 3, carried over."]


def test_changing_the_budgets_form_restates_the_same_noise():
    """Gaussian noise stated as ρ = 0.045, then "Budget stated as (ε, δ)": the ε box kept whatever it held (0.3, the
    Laplace ε), a noise about 14 times wider. The form change now restates the same σ: the analytic Gaussian
    mechanism's ε for it at the δ box's value, and back to ρ = 0.045."""
    from engine.mechanisms.budgets import analytic_gaussian_epsilon

    at = open_app("pages/protection.py", {"model": "beta_binomial", "mech": "gaussian", "budget": "rho",
                                          "rho": "0.045", "methods": "naive"}, timeout=TIMEOUT)
    _clean(at)
    before = engine.prepare(to_spec_dict(at.session_state[keys.SCENARIO])).mechanism.scale
    at.sidebar.radio(key=keys.budget_form_key("gaussian")).set_value("epsilon_delta").run()
    _clean(at)
    s, notes = _rerun_state(at)
    eps = analytic_gaussian_epsilon(before, s.delta, 1.0)
    assert s.budget_form == "epsilon_delta" and s.epsilon == pytest.approx(eps, rel=1e-5) and eps > 1
    assert engine.prepare(to_spec_dict(s)).mechanism.scale == pytest.approx(before, rel=1e-5)
    assert notes == [f"ε = {s.epsilon:g}: the same noise as ρ = 0.045 (σ = {before:.4g}), stated as (ε, δ) at "
                     f"δ = {s.delta:g}: the analytic Gaussian mechanism's ε for this σ."]
    at.sidebar.radio(key=keys.budget_form_key("gaussian")).set_value("rho").run()
    _clean(at)
    s, notes = _rerun_state(at)
    assert (s.budget_form, s.rho) == ("rho", 0.045) and not notes  # the ρ box said 0.045 already
    at.sidebar.radio(key=keys.budget_form_key("gaussian")).set_value("epsilon_delta").run()
    at.sidebar.text_input(key=keys.W_EPSILON).set_value("2").run()
    at.sidebar.radio(key=keys.budget_form_key("gaussian")).set_value("rho").run()
    _clean(at)
    s, notes = _rerun_state(at)
    sigma = engine.prepare(to_spec_dict(replace(s, budget_form="epsilon_delta"))).mechanism.scale
    assert s.rho == pytest.approx(1.0 / (2.0 * sigma ** 2), rel=1e-5)
    assert engine.prepare(to_spec_dict(s)).mechanism.scale == pytest.approx(sigma, rel=1e-5)
    assert notes == [f"ρ = {s.rho:g}: the same noise as (ε, δ) = (2, {s.delta:g}) (σ = {sigma:.4g}), stated as "
                     "zCDP, ρ = Δ²/(2σ²)."]


# --------------------------------------------------------------------------- OpenDP's mean picked in the sidebar
MEAN_LINK = {"model": "normal_known_sd", "rel": "opendp", "rel_mech": "mean", "rel.sum_scale": "3",
             "rel.length_scale": "3"}


def test_a_mean_link_opens_with_its_methods_and_n_private():
    """The browser audit's link (no methods, no size) ran the default methods on the mean: four "not run" lines and
    a traceback from Exact (best method). It now opens as the dp-wizard loader sets a mean: the pseudo-marginal chain,
    n unknown and not released apart from the mean, its prior centred on n; a mean with a known n keeps size=known
    in its link, and a link's own methods and size are kept."""
    s = from_query(MEAN_LINK)
    assert (s.methods, s.sample_size, s.n_mechanism, s.n_prior_mean) == (("pseudo_marginal",), "unknown", "none", 40.0)
    assert from_query(to_query(s)) == s
    known = replace(s, sample_size="known", n_mechanism="laplace", methods=("auto",))
    assert to_query(known)["size"] == "known" and from_query(to_query(known)) == known
    assert from_query({**MEAN_LINK, "n": "250"}).n_prior_mean == 250.0
    spec = to_spec_dict(s)
    assert spec["model"]["n_prior"] == {"name": "poisson", "mean": 40.0} and "n_mechanism" not in spec
    assert engine.prepare(spec).unknown_n is not None


def test_the_mean_link_runs_its_one_method_without_a_traceback():
    at = open_app("pages/compare.py", MEAN_LINK, timeout=TIMEOUT)
    _clean(at)
    assert [st.label.split(":")[0] for st in at.status] == [METHOD_LABELS["pseudo_marginal"]]
    assert set(at.dataframe[0].value["method"]) == {METHOD_LABELS["pseudo_marginal"], "Confidential data"}
    assert "OpenDP's mean is analysed by Pseudo-marginal and Exact (best method); the other methods are skipped " \
           "for it." in _texts(at.sidebar.caption)
    # a method switched on anyway is skipped with its reason, not run into an error
    at.sidebar.toggle(key=keys.method_key("naive")).set_value(True).run()
    _clean(at)
    assert "Naive: not available for OpenDP's mean (it is analysed by Pseudo-marginal, Exact (best method))." in \
        _texts(at.caption)
    assert [st.label.split(":")[0] for st in at.status] == [METHOD_LABELS["pseudo_marginal"]]


def test_picking_opendps_mean_switches_the_methods_and_n_and_switching_back_restores_them():
    at = open_app("pages/compare.py", {"model": "normal_known_sd", "methods": "naive,auto"}, timeout=TIMEOUT)
    at.sidebar.radio(key=keys.W_RELEASE).set_value("opendp").run()
    at.sidebar.selectbox(key=keys.release_mechanism_key("opendp")).set_value("mean").run()
    _clean(at)
    s = at.session_state[keys.SCENARIO]
    assert (s.methods, s.sample_size, s.n_mechanism, s.n_prior_mean) == (("pseudo_marginal",), "unknown", "none", 40.0)
    assert not [c for c in _texts(at.caption) if "not available" in c]
    at.sidebar.selectbox(key=keys.release_mechanism_key("opendp")).set_value("laplace").run()
    s = at.session_state[keys.SCENARIO]
    assert (s.methods, s.sample_size) == (DEFAULT_METHODS, "known")
    # the radio too: back to the mean, then to the lab's own simulation
    at.sidebar.selectbox(key=keys.release_mechanism_key("opendp")).set_value("mean").run()
    assert at.session_state[keys.SCENARIO].methods == ("pseudo_marginal",)
    at.sidebar.radio(key=keys.W_RELEASE).set_value("lab").run()
    _clean(at)
    s = at.session_state[keys.SCENARIO]
    assert (s.release, s.methods, s.sample_size) == ("lab", DEFAULT_METHODS, "known")


def test_a_mean_with_a_known_n_is_not_flagged_for_the_n_that_cannot_move():
    """With a known n (a legitimate reading: the analyst may know the table's size) the page said "Not converged:
    Pseudo-marginal (R-hat —, ESS 0)", faded the curve and drew an n histogram of one bar at 40: n was a column of
    40s in the draws. It is now no parameter of the run: no banner, no n figure, rows for μ and the clamped mean."""
    at = open_app("pages/compare.py", {**MEAN_LINK, "methods": "pseudo_marginal", "size": "known", "chains": "4"},
                  timeout=TIMEOUT)
    _clean(at)
    assert not [w for w in _texts(at.warning) if "Not converged" in w], _texts(at.warning)
    assert not [c for c in at.get("plotly_chart") if '"n_pmf"' in c.proto.spec]
    rows = at.dataframe[0].value
    assert list(rows[rows["method"] == METHOD_LABELS["pseudo_marginal"]]["parameter"]) == ["mu", "clamped_mean"]
