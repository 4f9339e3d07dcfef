"""AppTest smoke test of the Calibration page: nothing runs until Run; a run shows the ECDF, KS,
coverage, MMD and SBC figures, the summary and a CSV download; reopening the same study is served
from the cache; a preset shows its comparison text and figures."""

import json

from streamlit.testing.v1 import AppTest

from app_support import assert_charts_fit_a_phone, open_app

from ui import keys

PAGE = "pages/calibration.py"


def _open() -> AppTest:
    at = open_app(PAGE, timeout=180)
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_calibration_page_runs_on_click_and_reopens_from_cache():
    at = _open()
    assert at.title[0].value == "Calibration"
    assert not at.get("plotly_chart") and any("nothing runs until" in i.value for i in at.info)
    at.text_input(key=keys.W_CAL_M).set_value(str(20)).run()
    assert not at.get("plotly_chart")  # a widget change starts nothing
    at.multiselect(key=keys.W_CAL_METHODS).set_value(["naive", "exact"]).run()
    at.button(key=keys.W_CAL_RUN).click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    assert len(at.get("plotly_chart")) == 5  # ECDF, coverage, KS, MMD, SBC
    assert_charts_fit_a_phone(at)
    table = at.dataframe[0].value
    assert set(table["Method"]) == {"Confidential data", "Naive", "Exact (closed form)"} and (table["M"] == 20).all()
    assert "ks_pvalue" not in table and table["KS p-value"].map(type).eq(str).all()  # the page's headings, p as text
    # MMD² as plain decimals, "—" for the reference (it read "None" and "4.27e-1"); p-values never as exponents
    assert table.set_index("Method").loc["Confidential data", "Mean MMD²"] == "—"
    assert table["Mean MMD²"].str.fullmatch(r"—|-?\d+\.\d+").all() and not table["KS p-value"].str.contains("e").any()
    assert set(table["Parameter"]) == {"θ (theta)"}  # the prose's symbol, beside the CSV's name
    assert all("(theta)" not in json.loads(c.proto.spec)["layout"]["title"]["text"] for c in at.get("plotly_chart"))
    data_downloads = [b for b in at.get("download_button") if b.label not in ("PNG", "HTML")]
    assert [b.label for b in data_downloads] == ["Download the summary (CSV)", "Download the replicate table (CSV)"]
    # every figure has its PNG and HTML download
    assert sum(b.label == "PNG" for b in at.get("download_button")) == len(at.get("plotly_chart"))
    at.switch_page("pages/learn.py").run()
    at.switch_page(PAGE).run()  # the last study is shown again from the cache
    assert not at.exception and len(at.get("plotly_chart")) == 5


def test_a_value_typed_just_before_run_is_the_one_the_study_uses():
    """A value typed into a box and the Run click reach the server in one rerun (the box is left by the click):
    the button's action held the inputs of the run that drew it, and the study ran at the old M (5 of 6 quick
    clicks, audit s24 races). The study is the one the boxes hold on the run the click starts."""
    at = _open()
    at.multiselect(key=keys.W_CAL_METHODS).set_value(["naive", "exact"]).run()
    assert at.text_input(key=keys.W_CAL_M).value != "20"
    at.text_input(key=keys.W_CAL_M).set_value("20")
    at.button(key=keys.W_CAL_RUN).click().run()
    assert not at.exception, [e.value for e in at.exception]
    table = at.dataframe[0].value
    assert (table["M"] == 20).all(), table["M"]
    assert not any("inputs above have changed" in c.value for c in [*at.caption, *at.info, *at.warning])


def test_preset_is_one_click_away():
    at = _open()
    at.selectbox(key=keys.W_CAL_PRESET).set_value("gong2020_count").run()
    at.button(key=keys.W_CAL_PRESET_RUN).click().run()
    assert not at.exception, [e.value for e in at.exception]
    (text,) = [c for c in at.code if "37.237" in c.value]
    # its lines run to 129 characters: wrapped, not cut at the column's edge behind a scroll bar
    assert max(map(len, text.value.splitlines())) > 100 and text.proto.wrap_lines
    csvs = [b for b in at.get("download_button") if b.label.endswith(".csv")]
    assert len(at.get("plotly_chart")) == 1 and len(csvs) == 2
    assert_charts_fit_a_phone(at)
