"""The sidebar's upload, as an auditor met it (session 20): what a file's records become before the release, the
Column box, a link made from an upload, blank lines and missing values, and a typed release's example."""
from __future__ import annotations

import numpy as np

from app_support import open_app
from ui import keys
from ui.params.query import to_query

INCOMES = b"income\n" + b"\n".join(str(10_050 + 750 * i).encode() for i in range(400)) + b"\n"  # 10,050 .. 309,300
MULTI = b"region,age,employed,income,visits\nR0,22,0,11470.81,7\nR1,67,0,26827.84,3\nR2,41,1,30100,0\n"


def _texts(elements) -> list[str]:
    return [e.value for e in elements]


def _upload(at, name: str, content: bytes, model: str | None = None):
    if model is not None:
        at.selectbox(key=keys.W_MODEL).set_value(model).run()
    at.radio(key=keys.W_DATA).set_value("csv").run()
    at.file_uploader(key=keys.W_CSV).set_value((name, content, "text/csv")).run()
    assert not at.exception, _texts(at.exception)
    return at


def test_an_upload_far_outside_the_clamp_bounds_is_said_and_warned():
    """income.csv under normal_known_sd ran at once with the bounds [−3, 3]: every record became 3, unsaid."""
    at = _upload(open_app(), "income.csv", INCOMES, "normal_known_sd")
    warnings = _texts(at.sidebar.warning)
    assert any(w.startswith("400 of 400 records lie outside [−3, 3] and are clamped to it; the file's values run "
                            "from 10,050 to 309,300.") and "Most records are changed" in w
               for w in warnings), warnings
    helps = {b.label: b.help for b in at.sidebar.text_input if b.label in ("clamp low", "clamp high")}
    assert all("set to it" in h and "clamp high − clamp low" in h for h in helps.values()) and len(helps) == 2
    at.file_uploader(key=keys.W_CSV).set_value(("small.csv", b"x\n0.5\n-1\n2\n-3.5\n", "text/csv")).run()
    assert not any("clamped" in w for w in _texts(at.sidebar.warning))  # one of four: said, not warned
    assert "1 of 4 records lie outside [−3, 3] and are clamped to it; the file's values run from −3.5 to 2." \
        in _texts(at.sidebar.caption)
    at.file_uploader(key=keys.W_CSV).set_value(("small.csv", b"x\n0.5\n-1\n2\n", "text/csv")).run()
    assert "All 3 records lie inside the clamp bounds [−3, 3]; the file's values run from −1 to 2." \
        in _texts(at.sidebar.caption)


def test_poisson_records_beyond_the_sensitivity_are_said():
    at = _upload(open_app(), "visits.csv", b"visits\n0\n1\n1\n5\n8\n3\n", "poisson_gamma")
    assert any(w.startswith("3 records exceed the sensitivity 1 the noise is calibrated to (the file's largest is "
                            "8): for them the release is not ε-DP. Tick “Clamp records")
               for w in _texts(at.sidebar.warning))
    at.checkbox(key=keys.prior_key("poisson_gamma", "use_upper")).check().run()
    assert not any("sensitivity" in w for w in _texts(at.sidebar.warning))


def test_the_column_is_chosen_from_the_file_numbers_first_and_kept_in_the_link():
    """multi.csv said "… columns ['region', 'age', …] … (you entered None)": Python's words in a text box's
    error."""
    at = _upload(open_app(), "multi.csv", MULTI, "normal_known_sd")
    box = at.selectbox(key=keys.W_CSV_COLUMN)
    assert list(box.options) == ["age", "employed", "income", "visits", "region (not all numbers)"]
    assert box.value is None
    errors = _texts(at.sidebar.error)
    assert any("the file has columns region, age, employed, income, visits" in e and "(you entered nothing)" in e
               for e in errors), errors
    assert not any("[" in e or "None" in e for e in errors), errors
    box.set_value("income").run()
    assert not at.sidebar.error, _texts(at.sidebar.error)
    assert "n = 3 records, from the uploaded file" in _texts(at.sidebar.caption)
    assert at.query_params["column"] == ["income"] or at.query_params["column"] == "income"


def test_a_link_made_from_an_upload_says_links_carry_no_file():
    """Opened in a fresh browser, it said "The uploaded file is not usable" to someone who had uploaded nothing."""
    at = _upload(open_app(), "multi.csv", MULTI, "normal_known_sd")
    at.selectbox(key=keys.W_CSV_COLUMN).set_value("income").run()
    link = to_query(at.session_state[keys.SCENARIO])
    fresh = open_app(query=link)
    errors = _texts(fresh.sidebar.error)
    assert any(e.startswith("No file has been uploaded in this session. A link made from an uploaded file does not "
                            "carry the file") for e in errors), errors
    assert not any("not usable" in e for e in errors), errors
    assert "Column income (from the link), once the file is uploaded." in _texts(fresh.sidebar.caption)
    # someone who has just picked "Upload CSV" is not told about a link they did not open
    own = open_app()
    own.radio(key=keys.W_DATA).set_value("csv").run()
    errors = _texts(own.sidebar.error)
    assert any(e.startswith("No file yet: upload a CSV file of records above") for e in errors), errors
    assert not any("link" in e for e in errors), errors
    assert fresh.selectbox(key=keys.W_MODEL).value == "normal_known_sd"
    _upload(fresh, "multi.csv", MULTI)
    assert fresh.selectbox(key=keys.W_CSV_COLUMN).value == "income" and not fresh.sidebar.error


def test_blank_lines_are_counted_and_missing_values_say_what_to_do():
    at = _upload(open_app(), "blankline.csv", b"employed\n1\n0\n\n1\n0\n1\n")
    assert "n = 5 records, from the uploaded file (1 blank line skipped)" in _texts(at.sidebar.caption)
    at.file_uploader(key=keys.W_CSV).set_value(("blanks.csv", b"employed\n1\n0\n\n1\nNA\n0\n", "text/csv")).run()
    assert ("Line 6 of the uploaded file (column employed) holds NA: must be a number; missing values are not "
            "supported: drop the rows that hold them (which changes n) or fill them in with a value.") \
        in _texts(at.sidebar.error)


def test_a_typed_release_gets_its_models_example_once():
    """"twelve" was told "… a list of numbers …, e.g. 104, 120, 74, 102 ('twelve' is not a number) (you entered
    twelve)": a list for a one-number model, and the same word twice."""
    at = open_app()
    at.radio(key=keys.W_DATA).set_value("s_dp").run()
    at.text_input(key=keys.s_dp_key("beta_binomial")).input("twelve").run()
    assert "Released s_dp must be a number, e.g. 23.5 (you entered twelve)." in _texts(at.sidebar.error)
    at.selectbox(key=keys.W_MODEL).set_value("dirichlet_multinomial").run()
    at.radio(key=keys.W_DATA).set_value("s_dp").run()
    at.text_input(key=keys.s_dp_key("dirichlet_multinomial")).input("10, x, 3").run()
    k = len(at.session_state[keys.SCENARIO].prior_dict["alpha"].split(","))
    errors = _texts(at.sidebar.error)
    assert any(e.startswith(f"Released s_dp must be {k} numbers separated by commas, e.g. ") and
               "(x is not a number)" in e for e in errors), errors
    assert np.isfinite(k)


def test_regression_records_outside_the_clamp_bounds_are_said_per_column():
    """A linear_regression upload said nothing of its clamp bounds: incomes in y ran clamped to [−10, 10] unsaid."""
    rows = "\n".join(f"{0.1 * i:g},{-0.2 * i:g},{1000 + i}" for i in range(30))
    at = _upload(open_app(), "reg.csv", ("x1,x2,y\n" + rows + "\n").encode(), "linear_regression")
    warnings = _texts(at.sidebar.warning)
    assert any(w.startswith("30 of 30 records have a value outside the clamp bounds and are clamped to them (y: 30 "
                            "outside [−10, 10], the file's y from 1,000 to 1,029).") and "Most records" in w
               for w in warnings), warnings
    small = "x1,x2,y\n0.5,1,2\n-12,0,1\n3,4,5\n1,1,1\n"
    at.file_uploader(key=keys.W_CSV).set_value(("reg.csv", small.encode(), "text/csv")).run()
    assert not any("clamped" in w for w in _texts(at.sidebar.warning))
    assert ("1 of 4 records have a value outside the clamp bounds and are clamped to them (x1: 1 outside [−10, 10], "
            "the file's x1 from −12 to 3).") in _texts(at.sidebar.caption)
    at.file_uploader(key=keys.W_CSV).set_value(("reg.csv", b"x1,x2,y\n0.5,1,2\n3,4,5\n", "text/csv")).run()
    assert "All 2 records lie inside the clamp bounds (x1 [−10, 10]; x2 [−10, 10]; y [−10, 10])." \
        in _texts(at.sidebar.caption)


def test_poisson_records_are_checked_against_a_library_releases_own_sensitivity():
    """The note compared the records with the model's Δ = 1 whatever sensitivity the library's release was made at."""
    at = _upload(open_app(), "visits.csv", b"visits\n0\n1\n1\n5\n8\n3\n", "poisson_gamma")
    at.sidebar.radio(key=keys.W_RELEASE).set_value("diffprivlib").run()
    at.sidebar.selectbox(key=keys.release_mechanism_key("diffprivlib")).set_value("Laplace").run()
    at.sidebar.text_input(key=keys.release_param_key("diffprivlib", "Laplace", "sensitivity")).set_value("5").run()
    warnings = _texts(at.sidebar.warning)
    assert any(w.startswith("1 record exceeds the sensitivity 5 the noise is calibrated to (the file's largest is 8)")
               for w in warnings), warnings
    assert not any("3 records exceed" in w for w in warnings), warnings
    at.sidebar.text_input(key=keys.release_param_key("diffprivlib", "Laplace", "sensitivity")).set_value("10").run()
    assert not any("sensitivity" in w and "exceed" in w for w in _texts(at.sidebar.warning))
