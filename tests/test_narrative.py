"""The sentences of ui.narrative against the numbers they describe: a headline true for the whole model, advice
that names only what is left to try, and Exact (best method)'s note that tells its own run from a table row's."""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ui import narrative


@dataclass(frozen=True)
class _Run:
    summary: pd.DataFrame
    result: object = object()
    stalled: bool = False


def _summary(rows: dict) -> pd.DataFrame:
    """{param: (mean, sd, q5, q95)} as engine.summary's table."""
    return pd.DataFrame(rows, index=["mean", "sd", "q5", "q95"]).T


#: the browser audit's regression (n = 200, Laplace ε = 1, seed 7): naive covers beta[0] and misses the others
NAIVE = _summary({"beta[0]": (-1.667, 0.1333, -1.885, -1.447), "beta[1]": (-0.4151, 0.02044, -0.4486, -0.3811),
                  "beta[2]": (0.5399, 0.03911, 0.4755, 0.6054)})
EXACT = _summary({"beta[0]": (-0.7554, 1.599, -3.297, 1.805), "beta[1]": (-1.071, 1.611, -3.476, 1.785),
                  "beta[2]": (1.27, 1.446, -1.312, 3.437)})
TRUTH = {"beta[0]": -1.79, "beta[1]": -2.89, "beta[2]": -0.66}


def test_the_headline_counts_the_misses_of_every_coefficient_not_only_the_one_shown():
    """The headline said "its 90% interval covers beta[0] = -1.79" and nothing of beta[1] and beta[2], whose
    naive intervals miss the truth by far."""
    sentence = narrative.headline({"naive": _Run(NAIVE), "auto": _Run(EXACT)}, TRUTH, param="beta[0]")
    assert sentence.startswith("Naive's 90% intervals miss the truth for 2 of 3 coefficients; those of the exact "
                               "posterior for 0. "), sentence
    assert "too narrow for beta[0] (the parameter shown) and centred 0.91 away from the mean of the exact " \
           "posterior: its 90% interval covers beta[0] = -1.79" in sentence, sentence


def test_naive_and_exact_agree_only_where_they_agree_for_every_parameter():
    """"naive and exact agree for pi[0]" above a model of ten and more parameters where they differ for others."""
    rows = {f"pi[{i}]": (0.1, 0.01, 0.084, 0.116) for i in range(10)}
    exact = dict(rows, **{"pi[3]": (0.2, 0.02, 0.167, 0.233)})
    sentence = narrative.headline({"naive": _Run(_summary(rows)), "exact": _Run(_summary(exact))}, None,
                                  param="pi[0]")
    assert "agree" not in sentence and "noise is small" not in sentence, sentence
    # the one that differs named: the next sentence is about pi[0], the parameter shown (an audit read "differ for 1
    # of 4 parameters" above "Naive is 1.2× too narrow for p[0]", within the sentence's own 25%, where p[2] differed)
    assert sentence.startswith("Naive and the exact posterior differ for 1 of 10 parameters, pi[3] (sds"), sentence
    assert " for pi[0] (the parameter shown)" in sentence, sentence
    # with the truth known, the count is of intervals that miss it, and ten of them miss one by chance
    truth = {f"pi[{i}]": 0.1 for i in range(10)} | {"pi[3]": 0.2}
    sentence = narrative.headline({"naive": _Run(_summary(rows)), "exact": _Run(_summary(exact))}, truth,
                                  param="pi[0]")
    assert sentence.startswith("Naive's 90% intervals miss the truth for 1 of 10 parameters; those of the exact "
                               "posterior for 0 (a 90% interval misses about 1 in 10 by chance). "), sentence
    # agreeing for every parameter, the sentence says so for all of them
    same = narrative.headline({"naive": _Run(_summary(rows)), "exact": _Run(_summary(rows))}, None, param="pi[0]")
    assert same.startswith("At this privacy budget the noise is small relative to the data: naive and exact agree "
                           "for all 10 parameters (pi[0], the parameter shown: sds within 25%, means 0 apart)."), same


@dataclass(frozen=True)
class _Chain:
    convergence: dict
    result: object = None
    stalled: bool = True
    too_few: bool = False


@dataclass(frozen=True)
class _Result:
    info: dict


STALLED = {"applicable": True, "converged": False, "r_hat_max": 1.31, "ess_bulk_min": 5.0, "ess_tail_min": 12.0}


def test_the_advice_never_switches_on_a_sampler_the_best_method_already_ran():
    """σ unknown, Laplace ε = 1: the warning said to "switch on Pseudo-marginal, which mixes fast when ε is small"
    where Exact (best method) had run it (twice) without converging. What is left is said instead."""
    info = {"picked": "pseudo_marginal", "attempts": [
        {"method": "pseudo_marginal", "converged": False}, {"method": "da_mcmc", "converged": False},
        {"method": "pseudo_marginal", "draws": 8000, "converged": False}]}
    runs = {"da_mcmc": _Chain(STALLED), "auto": _Chain(STALLED, result=_Result(info))}
    text = narrative.convergence_warning(runs)
    assert "switch on Pseudo-marginal" not in text, text
    assert text.endswith("raise draws or chains in Method settings (Exact (best method) already ran Pseudo-marginal "
                         "here)."), text
    assert "larger ε" not in text  # it would slow the pseudo-marginal chain, which mixes best at small ε
    # a fallback it skipped (over the work budget) was not run: switching that one on is still advice
    skipped = {"picked": "da_mcmc", "attempts": [{"method": "da_mcmc", "converged": False},
                                                 {"method": "pseudo_marginal", "converged": None, "skipped": "22 s"}]}
    text = narrative.convergence_warning({"auto": _Chain(STALLED, result=_Result(skipped))})
    assert text.endswith("or switch on Pseudo-marginal, which mixes fast when ε is small."), text


def test_the_best_methods_note_tells_its_own_run_from_the_rows():
    """Regression records, n = 300: the note said Exact (best method) "ran DA-MCMC ... and DA-MCMC did better" beside
    a DA-MCMC row with R-hat 1.321 and ESS 5. Exact (best method)'s DA-MCMC is another run, tuned by the rule (shift
    moves, a window of records, more draws): the note says so, and how its settings differ from the row's."""
    info = {"picked": "da_mcmc", "why": "pseudo_marginal did not converge at 2000 draws per chain, so da_mcmc ran as "
                                        "well and da_mcmc did better",
            "picked_info": {"chains": 4, "draws": 2000, "warmup": 500, "shifts": 10, "records_per_iteration": 150,
                            "clamped_per_iteration": 40, "mean_acceptance": 0.9}}
    row = {"chains": 4, "draws": 1000, "warmup": 500, "mean_acceptance": 0.98}
    caption = narrative.auto_caption(info, row)
    assert caption.endswith("DA-MCMC ran as well and DA-MCMC did better. Its DA-MCMC is a run of its own, with "
                            "settings of its own (10 shift moves of β per iteration; 150 records swept per iteration; "
                            "40 clamped records' y redrawn per iteration; 2,000 draws per chain), not the DA-MCMC "
                            "row's (no shift moves; every record swept each iteration; every clamped record's y "
                            "redrawn each iteration; 1,000 draws per chain)."), caption
    same = narrative.auto_caption({"picked": "da_mcmc", "why": "", "picked_info": {"chains": 4, "draws": 1000}},
                                  {"chains": 4, "draws": 1000})
    assert same.endswith("Its DA-MCMC is a run of its own, with the DA-MCMC row's settings and other random "
                         "numbers."), same
    # no row of the picked sampler in the table: nothing to tell apart
    assert narrative.auto_caption(info) == ("Exact (best method) ran **DA-MCMC**: Pseudo-marginal did not converge at "
                                            "2000 draws per chain, so DA-MCMC ran as well and DA-MCMC did better.")


def test_the_warnings_r_hat_is_rounded_up_as_the_table_and_verdict_write_it():
    """Round-trip audit s23: the warning said "R-hat 1.010" for 1.01027 (a failing value) beside the table's 1.011."""
    runs = {"rjmcmc": _Chain({**STALLED, "r_hat_max": 1.01027})}
    text = narrative.convergence_warning(runs)
    assert "(R-hat 1.011, ESS 5)" in text, text
    assert "(R-hat 1.010," in narrative.convergence_warning({"da_mcmc": _Chain({**STALLED, "r_hat_max": 1.0091})})
