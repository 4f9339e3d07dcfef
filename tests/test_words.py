"""Issue 20, the words: numbers typed into a box are read as typed or refused (item 4), the engine's errors
in the sidebar's language (item 12), the verdict in a table cell read whole (items 1, 15) and advice that
names an action that exists (items 7, 8)."""
from __future__ import annotations

import math
from dataclasses import dataclass

import pytest

from ui.glossary import GLOSSARY, TERMS, glossary_markdown
from ui.narrative import convergence_warning
from ui.params.messages import in_words
from ui.params.parsing import format_number, parse_number
from ui.tables import verdict_text


@pytest.mark.parametrize("text, integer, value", [
    ("0.5", False, 0.5), (".5", False, 0.5), (" 2 ", False, 2.0), ("2e6", True, 2_000_000), ("2E6", False, 2e6),
    ("-1.5e-3", False, -0.0015), ("2000", True, 2000),
])
def test_a_plain_number_is_read_as_typed(text, integer, value):
    got = parse_number("n", text, integer=integer)
    assert got == value and isinstance(got, int if integer else float)


@pytest.mark.parametrize("text, integer, message", [
    ("0,5", False, 'ε = "0,5" is not a number: write it with a point for decimals, e.g. 0.5'),
    ("2,000,000", True, 'ε = "2,000,000" is not a number: write it without thousands separators, e.g. 2000000 or 2e6'),
    ("abc", False, 'ε = "abc" is not a number'),
    ("", False, "ε is empty: type a number"),
    ("2.5", True, 'ε = "2.5" is not a whole number'),
    ("inf", False, 'ε = "inf" is not a number'),
    ("1e999", False, 'ε = "1e999" is not a finite number'),
])
def test_anything_else_is_refused_quoting_the_text(text, integer, message):
    """The browser's number field turned "0,5" into 5 and "2e6" into 2; "abc" left 0.0 standing."""
    with pytest.raises(ValueError) as info:
        parse_number("ε", text, integer=integer)
    assert str(info.value).startswith(message)


@pytest.mark.parametrize("value", [2000, 0.5, 1e-5, 0.3, 3.0, 123456789, 0.1 + 0.2, 2 ** 0.5, 3 ** 0.5, 0.5 ** 0.5])
def test_a_box_starts_with_text_that_reads_back_to_its_value(value):
    assert parse_number("x", format_number(value)) == value
    assert parse_number("x", format_number(value, root=True)) == value


def test_square_roots_of_whole_numbers_show_as_roots_and_any_root_reads_exactly():
    assert [format_number(v, root=True) for v in (2 ** 0.5, 50 ** 0.5, 1.5, 4.0, 0.5 ** 0.5)] == [
        "√2", "√50", "1.5", "4", repr(0.5 ** 0.5)]
    assert format_number(2 ** 0.5) == "1.4142135623730951"  # lists (parse_numbers) do not read roots
    for text, value in [("√2", 2 ** 0.5), ("sqrt(2)", 2 ** 0.5), (" √ 2.5 ", 2.5 ** 0.5), ("sqrt( 3 )", 3 ** 0.5)]:
        assert parse_number("σ", text) == value
    for text in ("√-2", "√", "sqrt(2", "2√2"):
        with pytest.raises(ValueError, match=r"or a square root \(√2\)$"):
            parse_number("σ", text)
    with pytest.raises(ValueError, match=r"power of ten \(2e6\)$"):  # counts are whole numbers
        parse_number("n", "√4", integer=True)


@pytest.mark.parametrize("engine_message, words", [
    ("mechanism.epsilon = 0.0 is invalid: must be a finite number > 0",
     "ε (epsilon) must be a finite number > 0 (you entered 0)."),
    ("model.a = -2.0 is invalid: must be a finite number > 0", "prior a (Beta) must be a finite number > 0 (you entered -2)."),
    ("model.n = 0 is invalid: must be an integer >= 1 and <= 10000000",
     "n (number of confidential records) must be an integer ≥ 1 and ≤ 10,000,000 (you entered 0)."),
    ("data.csv = 'uploaded file' is invalid: is empty; it needs a header row and at least one record",
     "The uploaded file is empty; it needs a header row and at least one record"),
    ("data.records record 4 = 2.0 is invalid: beta_binomial records must be 0 or 1",
     "Line 5 of the uploaded file (record 4) holds 2: Beta-binomial records must be 0 or 1."),
    ("data.csv line 3 column 'x' = 'yes' is invalid: must be a number",
     "Line 3 of the uploaded file (column x) holds yes: must be a number."),
    ("data.simulate.theta = 1.5 is invalid: must be in [0, 1]", "True θ (theta) must be in [0, 1] (you entered 1.5)."),
    ("something else entirely", "something else entirely"),
    # a release typed into the s_dp box comes back as the engine's list; the box said 12.4, not [12.4]
    ("data.s_dp = [12.4] is invalid: must be whole numbers: randomized response releases counts of the answers it "
     "reports", "Released s_dp must be whole numbers: randomized response releases counts of the answers it reports "
     "(you entered 12.4)."),
    ("data.s_dp = [3.0, 4.5] is invalid: must be whole numbers", "Released s_dp must be whole numbers (you entered "
     "2 numbers: 3, 4.5)."),
    # a release of the wrong length: how many numbers were typed, and its ends
    ("data.s_dp = [" + ", ".join(f"{v}.0" for v in range(17)) + "] is invalid: must list 18 numbers",
     "Released s_dp must list 18 numbers (you entered 17 numbers: 0, 1, 2, 3, 4, …, 15, 16)."),
])
def test_engine_errors_in_the_sidebars_words(engine_message, words):
    assert in_words(engine_message) == words


def test_verdict_cells_are_short_and_say_what_failed():
    assert verdict_text({"applicable": True, "converged": True}) == "yes"
    # R-hat rounded up, as the engine's own reason writes it (rhat_up: 1.0341 is "1.035"; audit s22 F2)
    assert verdict_text({"applicable": True, "converged": False, "r_hat_max": 1.0341, "ess_bulk_min": 17.2,
                         "ess_tail_min": 40.0, "reasons": ["R-hat of theta is 1.035 > 1.01"] * 3}) == \
        "no: R-hat 1.035, ESS 17"
    # one verdict per run: with several parameters its numbers are the worst, not the row's own (the audit read
    # "no: R-hat 1.156, ESS 19" on beta[0]'s row, whose R-hat was 1.017)
    assert verdict_text({"applicable": True, "converged": False, "r_hat_max": 1.156, "ess_bulk_min": 19.0},
                        several=True) == "no: worst R-hat 1.156, ESS 19"
    assert verdict_text({"independent": True, "converged": True, "draws": 4000}) == "yes (independent)"
    assert verdict_text({"independent": True, "converged": False, "draws": 2}) == "no: 2 draws"
    assert verdict_text({"estimator": True}) == "— (estimator)"


@dataclass
class _Run:
    convergence: dict
    stalled: bool = False
    too_few: bool = False


STALLED = {"applicable": True, "converged": False, "r_hat_max": 1.05, "ess_bulk_min": 30.0, "ess_tail_min": 60.0}


def test_advice_names_an_action_that_exists():
    """Issue 20 item 7: 'switch on Pseudo-marginal' was the advice for the pseudo-marginal sampler itself."""
    text = convergence_warning({"pseudo_marginal": _Run(STALLED, stalled=True)})
    assert "switch on Exact (best method)," in text and "switch on Pseudo-marginal" not in text
    both = convergence_warning({"pseudo_marginal": _Run(STALLED, stalled=True), "auto": _Run({}),
                                "da_mcmc": _Run(STALLED, stalled=True)})
    assert "switch on" not in both and "Their curves are faded" in both
    # Exact (best method) on and converged: read it (it said "run Exact (best method) alone")
    assert both.endswith("raise draws or chains in Method settings, or read Exact (best method), which has converged "
                         "here."), both
    # each method switched on for its own reason ("Exact (best method) / Pseudo-marginal, which mix fast when ε is
    # small" at n = 10,000, ε = 1, where Exact (best method) mixes for another reason)
    alone = convergence_warning({"da_mcmc": _Run(STALLED, stalled=True)})
    assert alone.endswith("or switch on Exact (best method), which picks the exact sampler that mixes best for this "
                          "model and ε; or Pseudo-marginal, which mixes fast when ε is small."), alone


def test_diagnostics_advice_knows_what_is_switched_on():
    """Diagnostics shows one method's run: with Exact (best method) on but not the one shown, the advice was to
    switch it on; with it shown and not converged (Pseudo-marginal on too), to run it alone."""
    shown = convergence_warning({"da_mcmc": _Run(STALLED, stalled=True)}, figure=False,
                                switched_on=["naive", "da_mcmc", "auto"])
    assert shown.endswith("or look at Exact (best method), which is switched on (pick it above)."), shown
    itself = convergence_warning({"auto": _Run(STALLED, stalled=True)}, figure=False,
                                 switched_on=["auto", "pseudo_marginal"])
    assert itself.endswith("raise draws or chains in Method settings."), itself
    alone = convergence_warning({"auto": _Run(STALLED, stalled=True)}, figure=False, switched_on=["auto"])
    assert alone.endswith("or switch on Pseudo-marginal, which mixes fast when ε is small."), alone


def test_a_page_without_curves_does_not_mention_one():
    """Issue 20 item 8: 'its curve is faded' on Diagnostics, which draws no curve."""
    assert "faded" not in convergence_warning({"da_mcmc": _Run(STALLED, stalled=True)}, figure=False)
    few = convergence_warning({"abc_rejection": _Run({"independent": True, "converged": False, "draws": 2},
                                                     too_few=True)}, figure=False)
    assert few.startswith("Too few draws for a posterior: ABC rejection (2 draws); at least 400 are needed.")
    assert "tick marks" not in few


def test_every_term_is_defined():
    assert {k for k, _ in TERMS} == set(GLOSSARY)
    text = glossary_markdown()
    assert all(f"**{name}**" in text for _, name in TERMS)


@pytest.mark.parametrize("key, name", TERMS)
def test_every_term_is_named_once_in_the_list(key, name):
    """"Terms on this page" read "**ε (epsilon)**: ε (epsilon), the privacy-loss budget…", "**Naive**: Naive: treats…":
    each definition opens with its term (it stands alone as a tooltip) and the list named it again before it."""
    line = glossary_markdown({key})
    assert GLOSSARY[key].startswith(name), (key, GLOSSARY[key])
    assert line == f"- **{name}**{GLOSSARY[key][len(name):]}"
    assert not line[len(f"- **{name}**"):].lstrip(":, ").startswith(name), line  # not named again right after
    assert name not in line.split("**")[2][:len(name) + 20], line


def test_range_refusals_read_as_sentences_in_the_sidebars_words():
    """The noise-scale and prior-range refusals (2026-11-27) in the sidebar's words: the noise scale's starts with
    its own verb (no "is not allowed: makes a noise scale"), and both say what was entered."""
    import engine

    base = {"seed": 1, "model": {"name": "beta_binomial", "n": 20}, "mechanism": {"name": "laplace", "epsilon": 1},
            "data": {"s_dp": [7]}}
    cases = (({"mechanism": {"name": "laplace", "epsilon": 1e300}}, "ε (epsilon) makes a noise scale of 1e-300; ",
              "(you entered 1e+300)."),
             ({"model": {"name": "beta_binomial", "n": 20, "b": 1e-300}}, "prior b (Beta) must be a number from 1e-12 "
              "to 1e+12", "(you entered 1e-300)."))
    for spec, start, end in cases:
        with pytest.raises(ValueError) as info:
            engine.prepare({**base, **spec})
        words = in_words(str(info.value))
        assert words.startswith(start) and words.endswith(end) and "is not allowed" not in words, words


@pytest.mark.parametrize("release, noise", [
    ({"library": "opendp", "mechanism": "laplace", "domain": "int", "scale": 3.0}, "discrete Laplace noise"),
    ({"library": "diffprivlib", "mechanism": "Geometric", "epsilon": 1.0}, "discrete Laplace noise"),
    ({"library": "diffprivlib", "mechanism": "Binary", "epsilon": 1.0}, "randomized response"),
    ({"library": "diffprivlib", "mechanism": "GaussianDiscrete", "epsilon": 1.0, "delta": 1e-5}, "discrete Gaussian"),
])
def test_a_release_with_fractions_is_refused_in_words_not_by_the_mechanisms_key(release, noise):
    """s_dp = 12.4 for a release with integer noise said "discrete_laplace releases whole numbers" (an OpenDP
    int-domain or a diffprivlib Geometric release: a key the form never shows) and "randomized_response" for Binary.
    It now says what gives whole numbers, in words, and where a release with fractions comes from."""
    import engine

    with pytest.raises(ValueError) as info:
        engine.prepare({"seed": 1, "model": {"name": "beta_binomial", "n": 40}, "release": release,
                        "data": {"s_dp": 12.4}})
    message = str(info.value)
    assert message.startswith("data.s_dp = [12.4] is invalid: must be whole numbers (integers): " + noise), message
    assert "_" not in message.split("is invalid:")[1], message


def test_a_spec_field_named_inside_a_message_reads_as_its_box():
    """Clamp low edited to 10 (= clamp high): the engine refuses model.hi and names model.lo in its sentence; the
    sidebar showed "greater than model.lo" under the clamp high box."""
    words = in_words("model.hi = 10 is invalid: must be greater than model.lo in every column (columns x1, x2, y); "
                     "column y has lo = 10, hi = 10")
    assert words.startswith("clamp high must be greater than clamp low in every column"), words
    assert "model." not in words


def test_the_pseudo_marginal_line_reads_without_nan_or_a_python_list():
    """Diagnostics printed "(target nan); [1, 1, 1, 1] statistic draws per likelihood estimate" for auto's pick
    (which did not carry the target) and for the regression's sampler (which has none)."""
    from ui.narrative import pseudo_marginal_caption

    assert pseudo_marginal_caption({"mean_acceptance": 0.287, "particles": [1, 1, 1, 1]}, ("theta",)) == (
        "Pseudo-marginal acceptance: 0.287 of proposed moves of θ; 1 statistic draw per likelihood estimate in "
        "every chain.")
    assert pseudo_marginal_caption({"mean_acceptance": 0.3, "target_acceptance": float("nan"),
                                    "particles": [3, 4]}, ("theta",)).endswith("chain by chain: 3, 4.")
    assert pseudo_marginal_caption({"mean_acceptance": 0.3, "target_acceptance": 0.234, "particles": [1200] * 2},
                                   ("theta",)) == (
        "Pseudo-marginal acceptance: 0.3 of proposed moves of θ (target 0.234); 1,200 statistic draws per "
        "likelihood estimate in every chain.")


def test_the_pseudo_marginal_line_names_the_models_own_parameters():
    """After the regression preset Diagnostics said "0.287 of proposed moves of θ": a regression has no θ (the
    symbol was written into the sentence). One-parameter models are named by their symbol, as the pages write
    them; several parameters are "the parameters"."""
    from ui.narrative import pseudo_marginal_caption

    info = {"mean_acceptance": 0.287, "target_acceptance": 0.18, "particles": [1, 1]}
    regression = pseudo_marginal_caption(info, ("beta[0]", "beta[1]", "beta[2]"))
    assert regression.startswith("Pseudo-marginal acceptance: 0.287 of proposed moves of the parameters (target ")
    assert "θ" not in regression
    assert "of the parameters" in pseudo_marginal_caption(info, ("p[0]", "p[1]", "p[2]"))  # Dirichlet, log-linear
    for name, symbol in (("theta", "θ"), ("lam", "λ"), ("mu", "μ"), ("rate", "rate")):
        assert f"of proposed moves of {symbol} (target" in pseudo_marginal_caption(info, (name,)), name


def test_numbers_read_without_scientific_notation_where_people_would_not_write_it():
    """The audit saw "centred 5.7e+03 away", "means 6.5e-05 apart", table cells and a figure label "-4.673e+04",
    and "Draws behind each row: 3,491, 4,000, 40,000" (whose?)."""
    import pandas as pd

    from figures.labels import summary_number as number
    from ui.narrative import _fmt
    from ui.tables import draws_and_time_per_method

    assert [_fmt(v) for v in (5700.4, 6.5e-5, 0.25, 3.14159, 999.9)] == ["5,700", "0.000065", "0.25", "3.14", "1,000"]
    assert [number(v) for v in (-46730.2, 9999.5, 0.012345, 123.456, -5700.0)] == [
        "-46,730", "10,000", "0.01235", "123.5", "-5,700"]
    table = pd.DataFrame({"method": ["Naive", "Naive", "DA-MCMC", "ABC rejection", "confidential"],
                          "draws": [4000, 4000, 3491, 40000, None], "wall time (s)": [None] * 5})
    assert draws_and_time_per_method(table) == "Naive: 4,000 draws · DA-MCMC: 3,491 draws · ABC rejection: 40,000 draws"


def test_a_list_boxs_example_is_one_for_that_box():
    """Feature levels "3, x" and a Dirichlet α "abc" were told "e.g. 104, 120, 74, 102", a release's counts."""
    from ui.params.parsing import parse_numbers

    cases = (("model.feature_levels", "3, x", "e.g. 3, 3, 3 "), ("model.alpha", "abc", "e.g. 1, 1, 1 "),
             ("data.s_dp", "x", "e.g. 104, 120, 74, 102 "))
    for field, typed, example in cases:
        with pytest.raises(ValueError) as refused:
            parse_numbers(field, typed)
        message = str(refused.value)  # the example ends the sentence where the one word typed is the wrong one
        assert example in message or message.endswith(example.rstrip()), message


def test_the_ess_cell_fits_its_column_and_never_rounds_up_to_the_threshold():
    """Compare's small "ESS bulk / tail" column cut "39776 / 15791" to "776 / 38591"; 399.6 must not read 400."""
    from ui.tables import ess_short

    assert [ess_short(v) for v in (399.6, 830.0, 1000.0, 4029.0, 9999.9, 39776.0, 123456.0)] == [
        "399", "830", "1.0k", "4.0k", "9.9k", "39k", "123k"]


def test_every_ess_and_acceptance_is_written_one_way():
    """The Dirichlet model's verdict said "ESS 382" where its p[2] row said "381 / 556"; default DA-MCMC's ESS read
    829 on Compare and 830 on Diagnostics, and its acceptance 0.9309 and 0.931. Every ESS is rounded down
    (ess_full, ess_short below 1,000) and every acceptance has four significant digits, never an exponent."""
    from types import SimpleNamespace

    from ui.narrative import convergence_warning
    from ui.tables import acceptance_text, ess_full, ess_short

    assert [ess_full(v) for v in (381.6, 399.99, 829.7, 4566.9, 39776.2, float("nan"))] == [
        "381", "399", "829", "4,566", "39,776", "—"]
    assert all(ess_short(v) == ess_full(v) for v in (0.4, 17.9, 381.6, 999.9))
    verdict = {"applicable": True, "converged": False, "r_hat_max": 1.004, "ess_bulk_min": 381.6,
               "ess_tail_min": 556.2}
    assert verdict_text(verdict, several=True) == "no: worst R-hat 1.004, ESS 381"
    warning = convergence_warning({"da_mcmc": SimpleNamespace(stalled=True, too_few=False, convergence=verdict)})
    assert warning.startswith("Not converged: DA-MCMC (R-hat 1.004, ESS 381)."), warning
    assert [acceptance_text(v) for v in (0.93094, 0.287, 1.359e-05, 0.18, 0.7408182, 1.0, float("nan"))] == [
        "0.9309", "0.287", "0.00001359", "0.18", "0.7408", "1", "—"]


def test_the_best_methods_reason_says_what_it_compared_in_plain_words():
    """Compare said, for the log-linear preset, "the noise is narrow for n = 100 records (3.67 sweeps of them per
    effective draw)" where the noise (scale 10) is wide against the cells and the rule had compared costs only; for
    the default log-linear model "costs O(cells), not O(n)"; for the regression preset "1 particle(s) ... and
    independence proposals". The reason now names the two costs compared and what each one pays for."""
    import numpy as np

    import engine
    from engine.methods.auto import choose
    from ui.narrative import auto_caption
    from ui.params.spec import to_spec_dict
    from ui.presets import PRESETS

    presets = {p.name: p.scenario for p in PRESETS}
    captions = {}
    for name in ("loglinear", "regression"):
        picked, why, _ = choose(engine.prepare(to_spec_dict(presets[name], method="auto")), np.random.default_rng(0))
        captions[name] = auto_caption({"picked": picked, "why": why})
    loglinear = {"name": "naive_bayes_loglinear", "class_levels": 3, "feature_levels": [3, 3], "n": 10_000}
    picked, why, _ = choose(engine.prepare({"seed": 1, "model": loglinear, "mechanism": {"name": "laplace",
                                                                                        "epsilon": 1.0},
                                            "data": {"simulate": {"from_prior": True}}}), np.random.default_rng(0))
    captions["tables"] = auto_caption({"picked": picked, "why": why})
    assert captions["loglinear"].startswith("Exact (best method) ran **DA-MCMC**: DA-MCMC is cheaper per effective "
                                            "draw here: about "), captions
    assert "sweeps of all n = 100 records) against " in captions["loglinear"], captions
    assert captions["tables"].startswith("Exact (best method) ran **Pseudo-marginal**: the pseudo-marginal chain on "
                                         "the tables is cheaper per effective draw here: about "), captions
    assert "its cost grows with the number of table cells, not with the number of records" in captions["tables"]
    assert "it simulates 1 data set of n = 100 records per step" in captions["regression"], captions
    for caption in captions.values():
        for jargon in ("O(", "particle(s)", "noise is narrow", "noise is wide", "sweeps of them", "da_mcmc",
                       "pseudo_marginal", "independence proposals", "e+"):
            assert jargon not in caption, (jargon, caption)


def test_auto_caption_names_models_as_the_pages_do():
    from ui.narrative import auto_caption
    info = {"picked": "da_mcmc", "why": "dirichlet_multinomial has neither a closed form nor a pseudo-marginal "
                                        "sampler: DA-MCMC"}
    assert auto_caption(info) == ("Exact (best method) ran **DA-MCMC**: Dirichlet-multinomial has neither a closed "
                                  "form nor a pseudo-marginal sampler: DA-MCMC.")


def test_a_largest_r_hat_is_stated_as_an_upper_bound():
    from ui.tables import rhat_at_most
    assert [rhat_at_most(v) for v in (1.00949, 1.004, 1.0, float("nan"))] == ["1.010", "1.004", "1.000", "—"]


def test_a_release_is_written_in_plain_numbers():
    """"release s_dp = [2.987e+04]" (the large-n preset): brackets around one value, an exponent, digits lost."""
    from ui.narrative import plain_number, release_text
    assert release_text([29873.456]) == "29,873.5" and release_text([17.94]) == "17.94"
    assert release_text([104, 120, 74, 102]) == "(104, 120, 74, 102)"
    assert release_text(range(20), 3) == "(0, 1, 2, … (20 numbers in all, listed below))"
    assert [plain_number(v) for v in (1e9, 2.5e-7, -3.25)] == ["1,000,000,000", "0.00000025", "-3.25"]
    assert plain_number(2.12e8, 3) == "212,000,000"


def test_a_mechanisms_description_writes_root_two_not_its_digits():
    """The admissions table with discrete Gaussian noise read "L2 sensitivity 1.41421"."""
    import math

    from engine.mechanisms.additive import DiscreteGaussian, Laplace, sensitivity_text
    assert DiscreteGaussian(scale=6.25, sensitivity=math.sqrt(2)).describe().endswith("(L2 sensitivity √2)")
    assert Laplace(scale=2.0, sensitivity=13.0).describe().endswith("(sensitivity 13)")
    assert [sensitivity_text(v) for v in (1.0, 4.0, math.sqrt(12), 9.4)] == ["1", "4", "√12", "9.4"]


def test_a_box_and_a_description_find_the_root_with_one_helper_at_their_own_tolerance():
    """format_number and sensitivity_text each had their own search for k with √k = v; one helper now, exact for a
    box (its text must read back to the same float), within 1e-12 for a description. A number too large to square
    (1e200 ** 2 overflows) made both raise OverflowError."""
    import math

    from engine.mechanisms.additive import sensitivity_text, whole_root
    near = math.sqrt(2) * (1 + 1e-15)  # a different float, 7 ulps away
    assert (whole_root(math.sqrt(2), rel_tol=0.0), whole_root(near, rel_tol=0.0), whole_root(near)) == (2, None, 2)
    assert format_number(near, root=True) == repr(near) and parse_number("σ", format_number(near, root=True)) == near
    assert sensitivity_text(near) == "√2"
    assert [whole_root(v) for v in (4.0, 1.0, -math.sqrt(2), math.sqrt(10_001), math.nan, math.inf)] == [None] * 6
    assert format_number(1e200, root=True) == "1e+200" and sensitivity_text(1e200) == "1e+200"


def test_nothing_chosen_reads_as_nothing_and_a_one_word_release_is_not_said_twice():
    from ui.params.messages import in_words
    from ui.params.parsing import parse_numbers, release_example

    assert in_words("data.column = None is invalid: is required: the file has columns a, b; name the one with the "
                    "records") == "Column is required: the file has columns a, b; name the one with the records " \
                                  "(you entered nothing)."
    with pytest.raises(ValueError) as one:
        parse_numbers("data.s_dp", "twelve", allowed=f"must be {release_example(1)}")
    assert in_words(str(one.value)) == "Released s_dp must be a number, e.g. 23.5 (you entered twelve)."
    with pytest.raises(ValueError) as many:
        parse_numbers("data.s_dp", "1, x, 3", allowed=f"must be {release_example(3)}")
    assert in_words(str(many.value)) == ("Released s_dp must be 3 numbers separated by commas, e.g. 104, 120, 74 "
                                         "(x is not a number) (you entered 1, x, 3).")


def test_the_privacy_terms_say_what_the_guarantees_are_and_their_numbers_hold():
    """Audit s22 (a DP expert): δ was "the small probability with which an (ε, δ)-DP release may exceed its ε", false
    for the lab's own Gaussian at (1, 10⁻⁵), whose privacy loss L ~ N(μ²/2, μ²) exceeds 1 with probability
    1.6·10⁻⁴; ρ = ε²/2 was "a Gaussian release comparable to ε", where that Gaussian is (4.4, 10⁻⁵)-DP; μ-GDP "is"
    ρ-zCDP (it implies it); the sensitivity named neither its norm nor the neighbours. The numbers the definitions
    now quote are computed here from the analytic Gaussian's δ(ε) = Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ)."""
    from scipy.optimize import brentq
    from scipy.stats import norm

    def delta(eps, mu):
        return norm.cdf(mu / 2 - eps / mu) - math.exp(eps) * norm.cdf(-mu / 2 - eps / mu)

    mu = brentq(lambda m: delta(1.0, m) - 1e-5, 0.01, 5.0)  # the Gaussian stated as (1, 1e-5)
    assert f"{norm.sf((1.0 - mu * mu / 2) / mu):.1e}" == "1.6e-04"
    assert "1.6·10⁻⁴" in GLOSSARY["delta"] and "not the chance that the privacy loss exceeds ε" in GLOSSARY["delta"]
    assert f"{brentq(lambda e: delta(e, 1.0) - 1e-5, 0.1, 20.0):.1f}" == "4.4"  # rho = 0.5: mu = 1
    assert "comparable" not in GLOSSARY["rho"] and "(4.4, 10⁻⁵)-DP" in GLOSSARY["rho"]
    assert "implies μ²/2-zCDP, not the reverse" in GLOSSARY["gdp"] and "is ρ-zCDP" in GLOSSARY["zcdp"]
    assert "(L1)" in GLOSSARY["sensitivity"] and "(L2)" in GLOSSARY["sensitivity"]
    assert "added or removed, for OpenDP" in GLOSSARY["sensitivity"]


def test_the_draws_and_the_samplers_time_are_written_once_per_method_in_the_tables_order():
    """Compare's time column was its last and was cut at a 1,280 px window: the caption writes each method's draws
    and sampler time once, an estimator's time without draws, a method without a time with its draws alone."""
    import math

    import pandas as pd

    from ui.tables import draws_and_time_per_method

    table = pd.DataFrame({"method": ["Naive", "Naive", "DA-MCMC", "MLE (Monte Carlo EM)", "Confidential data"],
                          "draws": [4000, 4000, 3491, math.nan, 4000],
                          "wall time (s)": [0.0021, 0.0021, 1.2, 0.5124, math.nan]})
    assert draws_and_time_per_method(table) == ("Naive: 4,000 draws, 0.002 s · DA-MCMC: 3,491 draws, 1.200 s · "
                                                "MLE (Monte Carlo EM): 0.512 s · Confidential data: 4,000 draws")
