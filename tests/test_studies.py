"""Studies (engine/studies): calibration detects miscalibration, executors give identical tables,
cancel keeps what finished and a store resumes, the MMD estimator is unbiased, and every paper
preset's quick run passes through the CLI with its figures.

Statistical tests use fixed seeds; a calibrated method's KS p-value is Uniform(0, 1) over seeds,
so the 0.1% level below is the test's size (its chance of failing a calibrated method), not a
tolerance chosen to pass.
"""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from engine import cli
from engine.studies import (InlineExecutor, calibration_study, calibration_summary, coverage_table, ecdf, load_table,
                            mmd2_unbiased, sbc_histogram)
from engine.studies.presets import PRESETS

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Closed-form case: 50 Bernoulli records, Beta(2, 2) prior, Laplace noise at epsilon = 0.2 (scale 5,
# the count's own sd is at most 3.5): the naive posterior is too narrow at the wrong place.
SPEC = {"seed": 7, "model": {"name": "beta_binomial", "n": 50, "a": 2.0, "b": 2.0},
        "mechanism": {"name": "laplace", "epsilon": 0.2}, "data": {"simulate": {"theta": 0.5}}}
METHODS = ["naive", {"name": "exact", "chains": 1, "draws": 1000, "grid_size": 10},
           {"name": "da_mcmc", "chains": 2, "draws": 500, "warmup": 300}]


@pytest.fixture(scope="module")
def calibration_table():
    # in process: 300 replicates take ~12 s, less than starting and warming a process pool here
    return calibration_study(SPEC, METHODS, replicates=300, executor=InlineExecutor(), mmd_draws=100)


def test_exact_and_da_mcmc_pass_ks_where_naive_fails(calibration_table):
    s = calibration_summary(calibration_table).set_index("method")
    assert (s["M"] == 300).all() and (s["failed"] == 0).all()
    # a calibrated method's p-value is Uniform(0, 1): it fails this level 0.1% of the time; naive's
    # miscalibration is detected far beyond it in the same replicates
    for method in ("exact", "da_mcmc", "confidential"):
        assert s.loc[method, "ks_pvalue"] > 1e-3, (method, s.loc[method, "ks_stat"])
    assert s.loc["naive", "ks_pvalue"] < 1e-6, s.loc["naive", "ks_stat"]
    # naive's 90% intervals under-cover: the Wilson interval lies wholly below 0.9
    assert s.loc["naive", "coverage_90_hi"] < 0.9
    assert s.loc["exact", "coverage_90_lo"] <= 0.9 <= s.loc["exact", "coverage_90_hi"]
    # utility: exact is closer to the confidential posterior than naive
    assert s.loc["exact", "mmd2_mean"] < s.loc["naive", "mmd2_mean"]


def test_summaries_ecdf_and_sbc_shapes(calibration_table):
    grid, f = ecdf(calibration_table, "exact", "theta")
    assert 0.0 <= f[0] < 0.05 and f[-1] == 1.0 and np.all(np.diff(f) >= 0)  # U = 0: truth below every draw
    edges, counts, expected = sbc_histogram(calibration_table, "exact", "theta", bins=10)
    assert counts.sum() == 300 and len(counts) == 10 and np.allclose(expected.sum(), 300)
    cov = coverage_table(calibration_summary(calibration_table))
    assert set(cov["level"]) == {0.5, 0.8, 0.9, 0.95}
    ranks = calibration_table["rank"]
    assert ranks.between(0, calibration_table["rank_max"]).all()


SMALL = ["naive", {"name": "exact", "chains": 1, "draws": 300, "grid_size": 10}]


def test_dask_local_cluster_and_local_pool_give_identical_tables():
    distributed = pytest.importorskip("distributed")
    pool = calibration_study(SPEC, SMALL, replicates=8, workers=2)
    inline = calibration_study(SPEC, SMALL, replicates=8, executor=InlineExecutor(), batch_size=3)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as lc, \
            distributed.Client(lc) as client:
        dask = calibration_study(SPEC, SMALL, replicates=8, executor=client.get_executor(), batch_size=2)
    pd.testing.assert_frame_equal(pool, dask)
    pd.testing.assert_frame_equal(pool, inline)


def test_cancel_keeps_finished_replicates_and_resume_skips_them(tmp_path):
    store = str(tmp_path / "store")
    full = calibration_study(SPEC, SMALL, replicates=6, executor=InlineExecutor())
    seen = []

    def stop_after_two(done, total):
        seen.append(done)
        return done < 2

    part = calibration_study(SPEC, SMALL, replicates=6, executor=InlineExecutor(), store=store, on_progress=stop_after_two)
    assert part.attrs["cancelled"] and sorted(part["replicate"].unique()) == [0, 1]
    starts = []

    def record(done, total):
        starts.append(done)

    resumed = calibration_study(SPEC, SMALL, replicates=6, executor=InlineExecutor(), store=store, on_progress=record)
    assert starts[0] == 2 and starts[-1] == 6  # the two on disk were not rerun
    pd.testing.assert_frame_equal(resumed, full)
    pd.testing.assert_frame_equal(load_table(store).sort_values(["replicate"], kind="stable").reset_index(drop=True),
                                  full)
    with pytest.raises(ValueError, match="holds a different study"):
        calibration_study(SPEC, ["naive"], replicates=6, executor=InlineExecutor(), store=store)


def test_mmd_is_unbiased_against_its_closed_form():
    # P = N(0, 1), Q = N(mu, 1), kernel exp(-d^2 / (2 h^2)):
    # MMD^2 = 2 sqrt(h^2 / (h^2 + 2)) (1 - exp(-mu^2 / (2 (h^2 + 2))))
    rng = np.random.default_rng(3)
    h, m, reps = 1.0, 200, 40
    for mu in (0.0, 0.5):
        est = [mmd2_unbiased(rng.normal(0, 1, m), rng.normal(mu, 1, m), bandwidth=h) for _ in range(reps)]
        truth = 2 * np.sqrt(h * h / (h * h + 2)) * (1 - np.exp(-mu * mu / (2 * (h * h + 2))))
        se = np.std(est, ddof=1) / np.sqrt(reps)
        assert abs(np.mean(est) - truth) < 4 * se, (mu, np.mean(est), truth, se)


def test_calibration_cli_writes_tables_figures_and_resumes(tmp_path, capsys):
    spec = tmp_path / "spec.toml"
    spec.write_text('seed = 2\n[model]\nname = "beta_binomial"\nn = 20\n[mechanism]\nname = "laplace"\nepsilon = 1.0\n'
                    '[data]\nsimulate = { theta = 0.4 }\n[method]\nname = "exact"\ndraws = 200\nchains = 1\n')
    out = tmp_path / "cal"
    argv = ["study", "calibration", str(spec), "--replicates", "6", "--out", str(out), "--workers", "1"]
    assert cli.main(argv) == 0
    table = pd.read_csv(out / "calibration.csv", keep_default_na=False, na_values=[""])
    assert set(table["method"]) == {"confidential", "naive", "exact"} and table["replicate"].nunique() == 6
    assert (out / "calibration_summary.csv").exists() and (out / "ecdf.html").exists()
    assert cli.main(argv) == 0  # everything is on disk: nothing reruns, same table
    pd.testing.assert_frame_equal(pd.read_csv(out / "calibration.csv", keep_default_na=False, na_values=[""]), table)
    assert cli.main(["study", "calibration", str(spec), "--out", str(out)]) == 2
    assert "--replicates = None is invalid" in capsys.readouterr().err
    assert cli.main(["study", "nonsense", "--quick"]) == 2
    assert "PRESET = 'nonsense' is invalid" in capsys.readouterr().err


@pytest.mark.parametrize("name", list(PRESETS))
def test_preset_quick_run_through_the_cli(name, tmp_path, capsys):
    out = tmp_path / name
    assert cli.main(["study", name, "--quick", "--out", str(out), "--workers", "2"]) == 0
    printed = capsys.readouterr().out
    assert "[NO]" not in printed and "[ok]" in printed, printed
    files = set(os.listdir(out))
    assert "comparison.txt" in files and any(f.endswith(".csv") for f in files)
    html = {f[:-5] for f in files if f.endswith(".html")}
    assert html
    if os.path.exists("/usr/bin/chromium"):
        assert html == {f[:-4] for f in files if f.endswith(".png")}
        with open(out / f"{sorted(html)[0]}.png", "rb") as fh:
            assert fh.read(8) == b"\x89PNG\r\n\x1a\n"


def test_study_modules_and_cli_load_no_plotly():
    code = ("import sys, engine, engine.studies, engine.studies.presets, engine.cli\n"
            "bad = sorted({m.split('.')[0] for m in sys.modules} & {'streamlit', 'plotly'})\n"
            "assert not bad, bad\n")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
