"""The Calibration page's figures and summary table as a newcomer reads them (audit 2, items 6, 9, 10 and 15):
p-values and MMD² without exponents, the SBC band under the bars and inside the panel, round ticks on log axes,
and the model's symbol (θ, λ, μ) in titles and axes. One small study (12 replicates, naive and exact) feeds them."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from engine.studies import InlineExecutor, calibration_study, calibration_summary
from engine.studies.presets import PresetResult
from figures import studies as plots
from ui import studies

SPEC = {"seed": 3, "model": {"name": "beta_binomial", "n": 30, "a": 2.0, "b": 2.0},
        "mechanism": {"name": "laplace", "epsilon": 0.5}, "data": {"simulate": {"theta": 0.5}}}
METHODS = ["naive", {"name": "exact", "chains": 1, "draws": 300, "grid_size": 10}]


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return calibration_study(SPEC, METHODS, replicates=12, executor=InlineExecutor(), mmd_draws=50)


def _traces(fig, kind):
    return [t for t in fig.to_dict()["data"] if (t.get("meta") or {}).get("kind") == kind]


# --------------------------------------------------------------------------- item 6: numbers without exponents
def test_summary_table_writes_mmd_as_decimals_and_tiny_p_values_as_a_bound(table):
    summary = calibration_summary(table)
    summary.loc[summary["method"] == "naive", "ks_pvalue"] = 4.9e-06  # as the audit's naive row read
    summary.loc[summary["method"] == "naive", "mmd2_mean"] = 0.4271
    summary.loc[summary["method"] == "exact", "mmd2_mean"] = 0.02514
    shown = studies.summary_table(summary).set_index("Method")
    assert shown.loc["Confidential data", "Mean MMD²"] == "—"  # it read "None"
    assert shown.loc["Naive", "Mean MMD²"] == "0.427" and shown.loc["Exact (closed form)", "Mean MMD²"] == "0.0251"
    assert shown.loc["Naive", "KS p-value"] == "< 0.001"  # it read "4.9e-06"
    assert not shown["KS p-value"].str.contains("e").any()
    assert studies.SUMMARY_HELP["Mean MMD²"]["type_config"]["type"] == "text"  # not a number format ("%.2e")


def test_mmd_text_keeps_three_significant_digits_and_no_exponent():
    assert [studies.mmd_text(v) for v in (0.4271, 0.251, 1.5e-05, -0.00123, 2.0, np.nan, None)] == \
        ["0.427", "0.251", "0.0000150", "-0.00123", "2.00", "—", "—"]


def test_the_ks_bar_says_p_below_0_001_as_a_bound(table):
    summary = calibration_summary(table)
    summary.loc[summary["method"] == "naive", "ks_pvalue"] = 4.9e-06
    texts = {t["meta"]["method"]: t["text"][0] for t in _traces(plots.ks_plot(summary, "theta"), "ks")}
    assert texts["naive"] == "p < 0.001" and all(re.fullmatch(r"p = [0-9.]+", v) for m, v in texts.items()
                                                 if m != "naive"), texts


# --------------------------------------------------------------------------- item 15: the model's symbol
def test_calibration_figures_name_a_one_parameter_model_by_its_symbol(table):
    figs = plots.calibration_figures(table, "theta")
    for name in ("ecdf", "ks", "coverage", "sbc"):
        title = figs[name].layout.title.text.replace("<br>", " ")
        assert title.endswith("(θ)") and "theta" not in title, (name, title)
    assert figs["ecdf"].layout.xaxis.title.text == "quantile U of the true θ among the draws"
    assert [plots.param_symbol(p) for p in ("theta", "lam", "mu", "p[0]", "beta[1]")] == ["θ", "λ", "μ", "p[0]",
                                                                                          "beta[1]"]
    shown = studies.summary_table(calibration_summary(table))
    assert set(shown["Parameter"]) == {"θ (theta)"}  # the symbol, and the replicate CSV's name beside it
    assert set(table["param"]) == {"theta"}  # the data keep the engine's name


# --------------------------------------------------------------------------- item 9: the SBC band
def test_sbc_band_lies_under_the_bars_inside_the_panel_with_axis_titles(table):
    fig = plots.sbc_plot(table, "theta")
    layout = fig.to_dict()["layout"]
    bands = {s["name"]: s for s in layout["shapes"]}
    assert set(bands) == {"sbc_band naive", "sbc_band exact", "sbc_band confidential"}
    for bars in (t for t in fig.data if t.meta["kind"] == "sbc"):
        band = bands[f"sbc_band {bars.meta['method']}"]
        # under the bars (a scatter band lay on top of them), and inside the panel (its top was cut off)
        assert band["layer"] == "below" and band["yref"] == bars.yaxis and band["y1"] > band["y0"]
        top = layout["yaxis" + bars.yaxis[1:]]["range"][1]
        assert top >= band["y1"] and top >= max(bars.y), (bars.yaxis, top, band)
    x_titles = [v["title"]["text"] for k, v in layout.items() if k.startswith("xaxis") and v.get("title")]
    y_titles = [v["title"]["text"] for k, v in layout.items() if k.startswith("yaxis") and v.get("title")]
    assert x_titles and set(x_titles) == {"rank of the true θ among the draws"}
    assert y_titles and set(y_titles) == {"replicates"}


# --------------------------------------------------------------------------- item 10: round ticks on log axes
def test_log_axes_have_round_ticks_only():
    assert plots._log_axis([10, 100, 1000]) == {"tickvals": [10.0, 100.0, 1000.0], "ticktext": ["10", "100", "1,000"]}
    assert plots._log_axis([0.1, 0.3, 1, 3, 10]) == {"tickvals": [0.1, 1.0, 10.0], "ticktext": ["0.1", "1", "10"]}
    assert plots._log_axis([0.15, 0.9]) == {"tickvals": [0.2, 0.5], "ticktext": ["0.2", "0.5"]}  # under a decade: 1-2-5
    assert plots._log_axis([3e-5, 2e-3])["ticktext"] == ["0.0001", "0.001"]  # never an exponent


def test_bernstein_figures_show_powers_of_ten_on_n(table):
    cells = [(n, e) for n in (10, 100, 1000) for e in (0.01, 0.1)]
    tab = pd.concat([table.assign(n=n, epsilon=e) for n, e in cells], ignore_index=True)
    summ = pd.concat([calibration_summary(table).assign(n=n, epsilon=e) for n, e in cells], ignore_index=True)
    result = PresetResult("bernstein2018_binomial", "t", True, {"calibration": tab, "calibration_summary": summ}, "")
    figs = plots.preset_figures(result)
    for name in ("ks_vs_n", "mmd_vs_n"):
        layout = figs[name].to_dict()["layout"]
        axes = [v for k, v in layout.items() if k.startswith("xaxis")]
        assert axes and all(a["type"] == "log" for a in axes)
        for a in axes:  # it read "10 2 5 100 2 5 1000"
            assert a["tickvals"] == [10, 100, 1000] and a["ticktext"] == ["10", "100", "1,000"], (name, a)
