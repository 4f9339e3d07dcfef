"""dp-wizard packages: tests/fixtures/dpwizard_grade_hours.zip was made by dp-wizard 0.10's own code path
(bench/make_dpwizard_package.py: the results panel's package_zip, its notebook executed, releasing through
OpenDP): a 5-bin histogram of ``grade`` (weight 2) and a mean of ``hours`` in [0, 40] (weight 1), epsilon 1.
The 400 private rows hold grade counts 2, 70, 84, 79, 84, 81 in (-inf, 0], (0, 20], ..., (80, 100].

Calibration of the written specs (the round trip): a bin's spec, with its Gamma prior, over releases made by
OpenDP's integer Laplace at the imported scale and clamped at 0 as ``dp.len`` does (tests/test_interop.py
checks that clamp on OpenDP's dataframe counts): theta ~ prior, the count ~ Poisson(theta), the release,
the exact posterior's CDF at theta (u), for M = 1000 replicates; KS p >= 1e-4 and the 90% interval's
coverage within 4.5 binomial sds. OpenDP cannot be seeded: false-failure rate about 1e-4. A prior rate of 1
(expected counts about 1) makes the clamp and the noise matter. The negative control reads the report at face
value (the noise scale divided by 20: the CSV taken as the data) and fails the same check (KS p ~ 1e-18 in a
trial run). A 2x scale error is not a usable control here: the posterior of a bin's expected count is
dominated by the Poisson variation of the count, and at M = 1000 a doubled scale moves KS p only to ~0.2-0.3
(tests/test_interop.py has the 2x controls for the noise law itself, scenarios where the noise dominates).
"""
from __future__ import annotations

import json
import math
import os
from dataclasses import replace

import numpy as np
import pytest
from scipy import stats

import engine
from engine.dpwizard import import_dpwizard, opendp_scales, plan_scales, read_package
from engine.methods.exact import exact_mixture

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = os.path.join(ROOT, "tests", "fixtures", "dpwizard_grade_hours.zip")
TRUE_COUNTS = [2, 70, 84, 79, 84, 81]


def test_package_reads_and_scales_match_the_notebooks_summarize(tmp_path):
    pkg = read_package(PACKAGE)
    assert pkg.plan["epsilon"] == 1.0 and pkg.plan["contributions"] == 1
    scales = plan_scales(pkg.plan)
    assert scales["grade"]["count_scale"] == pytest.approx(1.5)            # 1 / (1 * 2/3)
    assert scales["hours"]["sum_scale"] == pytest.approx(240.0)            # 40 / (1/3 / 2)
    assert scales["hours"]["length_scale"] == pytest.approx(6.0)           # 1 / (1/3 / 2)
    assert pkg.notebook_scales[("hours", "Sum")][0] == pytest.approx(240.0, rel=1e-6)
    assert pkg.notebook_scales[("hours", "Length")][0] == pytest.approx(6.0, rel=1e-9)
    summary = import_dpwizard(PACKAGE, str(tmp_path), use_opendp=False)  # OpenDP's rebuild: the next test
    grade, hours = summary["statistics"]
    assert grade["analysed"] and grade["scale_source"] == "notebook summarize()" and grade["count_scale"] == 1.5
    assert [b["bin"] for b in grade["bins"]] == ["(-inf, 0]", "(0, 20]", "(20, 40]", "(40, 60]", "(60, 80]",
                                                 "(80, 100]"]
    # the package holds only the ratio sum / length: analysed as the ratio itself (tests/test_dpwizard_mean.py)
    assert hours["analysed"] and hours["spec"] == "hours_mean.toml"
    assert hours["scale_source"] == "notebook summarize()" and hours["bins"] == []
    assert hours["sum_scale"] == pytest.approx(240.0, rel=1e-6) and hours["length_scale"] == pytest.approx(6.0)
    assert hours["notebook"] == {"Sum": pytest.approx(240.0, rel=1e-6), "Length": pytest.approx(6.0)}
    assert hours["released_mean"] == pytest.approx(11.471544262630847)
    assert json.loads((tmp_path / "import.json").read_text()) == summary
    # every spec loads and its exact posterior covers the bin's true count
    for b, true in zip(grade["bins"], TRUE_COUNTS):
        spec = engine.load_spec(str(tmp_path / b["spec"]))
        assert spec.release["clip"] == [0, math.inf]
        res = engine.run_method(engine.prepare(spec), {"name": "exact", "draws": 4000}, seed=1)
        lam = res.draws[..., 0].ravel()
        lo, hi = np.quantile(lam, [0.0005, 0.9995])
        assert lo < true < hi or true < 5  # a lambda near 0 can sit below a count of 2


def test_opendp_rebuild_of_the_plan_gives_the_same_scales():
    """OpenDP 0.16's summarize() of the queries dp-wizard writes (engine.dpwizard.opendp_scales: no data needed)
    gives the plan's scales and the ones dp-wizard's own run (OpenDP 0.14.2, the budget split by weight over the
    queries in order) printed in the notebook."""
    pytest.importorskip("opendp.prelude")
    pytest.importorskip("polars")
    pkg = read_package(PACKAGE)
    ours, plan = opendp_scales(pkg.plan), plan_scales(pkg.plan)
    assert ours[("grade", "Frame Length")] == pytest.approx(plan["grade"]["count_scale"], rel=1e-12)
    assert ours[("hours", "Sum")] == pytest.approx(plan["hours"]["sum_scale"], rel=1e-6)
    assert ours[("hours", "Length")] == pytest.approx(plan["hours"]["length_scale"], rel=1e-12)
    printed = pkg.notebook_scales  # polars prints 6 decimals: agreement to 5e-7
    assert ours[("grade", "Frame Length")] == pytest.approx(printed[("count", "Frame Length")][0], abs=5e-7)
    assert ours[("hours", "Sum")] == pytest.approx(printed[("hours", "Sum")][0], abs=5e-7)
    assert ours[("hours", "Length")] == pytest.approx(printed[("hours", "Length")][0], abs=5e-7)


def _pit(spec, releases, lam, scale_factor=1.0):
    problem = engine.prepare(spec)
    model, mech = problem.model, problem.mechanism
    if scale_factor != 1.0:
        mech = replace(mech, base=replace(mech.base, scale=scale_factor * mech.base.scale))
    releases, lam = np.asarray(releases, dtype=float), np.asarray(lam, dtype=float)
    u = np.empty(lam.size)
    values, index = np.unique(releases, return_inverse=True)  # one exact mixture per distinct release
    for j, v in enumerate(values):
        at = index == j
        u[at] = exact_mixture(engine.Problem(model=model, mechanism=mech, s_dp=np.array([v]))).cdf(0, lam[at])
    return u


def _calibrated(u):
    covered = int(np.sum((u >= 0.05) & (u <= 0.95)))
    return stats.kstest(u, "uniform").pvalue >= 1e-4 and abs(covered - 0.9 * u.size) <= 4.5 * math.sqrt(0.09 * u.size)


def test_written_specs_are_calibrated_over_opendp_releases(tmp_path):
    dp = pytest.importorskip("opendp.prelude")
    dp.enable_features("contrib")
    summary = import_dpwizard(PACKAGE, str(tmp_path), prior_rate=1.0, use_opendp=False)
    grade = summary["statistics"][0]
    spec = engine.load_spec(str(tmp_path / grade["bins"][1]["spec"]))
    m = 1000
    rng = np.random.default_rng(7)
    lam = rng.gamma(spec.model["alpha"], 1.0 / spec.model["beta"], size=m)
    counts = rng.poisson(lam)
    laplace = dp.m.make_laplace(dp.vector_domain(dp.atom_domain(T=int)), dp.l1_distance(T=int),
                                scale=grade["count_scale"])
    releases = np.maximum(np.asarray(laplace([int(c) for c in counts]), dtype=float), 0.0)
    assert _calibrated(_pit(spec, releases, lam))
    assert not _calibrated(_pit(spec, releases, lam, scale_factor=0.05))


def test_histogram_spec_has_a_private_total_and_covers_the_package_truth(tmp_path):
    """One dirichlet_multinomial spec per histogram, n_prior negative_binomial with dispersion k alpha (the per-bin
    specs' Poisson construction), no [n_mechanism]; its exact posterior covers the 400 rows and each bin's share."""
    summary = import_dpwizard(PACKAGE, str(tmp_path), use_opendp=False)
    grade = summary["statistics"][0]
    assert grade["histogram_spec"] == "grade_histogram.toml"
    spec = engine.load_spec(str(tmp_path / "grade_histogram.toml"))
    assert spec.model["name"] == "dirichlet_multinomial" and spec.n_mechanism is None
    assert spec.model["alpha"] == [1.0] * 6
    assert spec.model["n_prior"] == {"name": "negative_binomial", "mean": 6.0 / grade["prior"]["rate"],
                                     "dispersion": 6.0}
    assert spec.data["s_dp"] == [b["released"] for b in grade["bins"]]
    res = engine.run(spec)
    assert res.param_names[-1] == "n" and res.info["construction"].startswith("independent bins")
    lo, hi = np.quantile(res.flat("n"), [0.0005, 0.9995])
    assert lo <= sum(TRUE_COUNTS) <= hi
    for j, true in enumerate(TRUE_COUNTS):
        lo, hi = np.quantile(res.flat(f"p[{j}]"), [0.0005, 0.9995])
        assert lo <= true / sum(TRUE_COUNTS) <= hi


def test_histogram_spec_is_calibrated_over_opendp_releases(tmp_path):
    """The written histogram spec over OpenDP's own releases (M = 300): n ~ its n_prior, p ~ Dirichlet(alpha),
    the counts, OpenDP's integer Laplace at the imported scale clamped at 0; randomised ranks of n and p[0] among
    99 exact draws; the same releases read with half the scale (a 2x scale error) fail. OpenDP cannot be seeded:
    false-failure rate about 1e-4 per check."""
    dp = pytest.importorskip("opendp.prelude")
    dp.enable_features("contrib")
    summary = import_dpwizard(PACKAGE, str(tmp_path), prior_rate=0.1, use_opendp=False)
    grade = summary["statistics"][0]
    spec = engine.load_spec(str(tmp_path / grade["histogram_spec"]))
    problem = engine.prepare(spec)
    prior, alpha, k = problem.unknown_n.prior, np.asarray(spec.model["alpha"]), len(spec.model["alpha"])
    m = 300
    rng = np.random.default_rng(8)
    n = prior.sample(rng, size=m)
    p = rng.dirichlet(alpha, size=m)
    counts = np.array([rng.multinomial(int(nn), pp) for nn, pp in zip(n, p)])
    laplace = dp.m.make_laplace(dp.vector_domain(dp.atom_domain(T=int)), dp.l1_distance(T=int),
                                scale=grade["count_scale"])
    releases = np.maximum(np.asarray(laplace([int(c) for c in counts.ravel()]), dtype=float), 0.0).reshape(m, k)

    def ranks(scale_factor):
        mech = problem.mechanism
        mech = replace(mech, base=replace(mech.base, scale=scale_factor * mech.base.scale))
        u = np.empty((m, 2))
        for i in range(m):
            one = engine.Problem(model=problem.model, mechanism=mech, s_dp=releases[i], unknown_n=problem.unknown_n)
            res = engine.run_method(one, {"name": "exact", "draws": 99, "chains": 1}, seed=i)
            for col, (name, truth) in enumerate((("n", n[i]), ("p[0]", p[i, 0]))):
                d = res.flat(name)
                below, ties = int(np.sum(d < truth)), int(np.sum(d == truth))
                u[i, col] = (below + rng.integers(0, ties + 1) + rng.random()) / 100.0
        return u

    good = ranks(1.0)
    assert _calibrated(good[:, 0]) and _calibrated(good[:, 1])
    bad = ranks(0.5)
    assert not (_calibrated(bad[:, 0]) and _calibrated(bad[:, 1]))


def test_cli_imports_and_refuses_bad_packages(tmp_path, capsys):
    from engine.cli import main

    assert main(["import-dpwizard", PACKAGE, "--out", str(tmp_path / "out")]) == 0
    printed = capsys.readouterr().out
    assert "grade: Histogram, 6 spec(s), noise scale 1.5" in printed
    assert "hours: Mean, 1 spec (hours_mean.toml): the released ratio sum / length, sum scale 240" in printed
    assert "the whole histogram with its private total: grade_histogram.toml" in printed
    assert sorted(os.listdir(tmp_path / "out")) == ["grade_bin0.toml", "grade_bin1.toml", "grade_bin2.toml",
                                                     "grade_bin3.toml", "grade_bin4.toml", "grade_bin5.toml",
                                                     "grade_histogram.toml", "hours_mean.toml", "import.json"]
    assert main(["import-dpwizard", PACKAGE, "--out", str(tmp_path / "y"), "--mean-sd", "-1"]) == 2
    assert "error: --mean-sd = -1.0 is invalid" in capsys.readouterr().err  # the option as typed
    assert main(["import-dpwizard", os.path.join(ROOT, "README.md"), "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "PACKAGE = " in err and "must be a .zip" in err
