"""What epsilon protects, in one computed sentence (pure: no streamlit; tested clause by clause).

:func:`clauses` turns the dictionary of :func:`engine.risk` into short clauses, each from its own
numbers; :func:`protection_sentence` joins them, optionally with the utility side ("θ is known to
±0.05"), and :func:`protection_markdown` sets its first clause as the pages' small heading, e.g.

    At ε = 1, someone who knew everyone else could move a 50% guess about one person to at most 73%;
    the best attack on one person's record, wrong 5% of the time when it has the other value, detects it 14% of
    the time; someone who knows
    only the model moves from 50% to 31% on "this person's record is 1"; that is, the model and the
    release make a record of 1 less likely for everyone alike: an inference about the population as a
    whole that applies to anyone, not something the release reveals about this one person beyond what
    the guarantee bounds.
"""
from __future__ import annotations

import json
import math

from engine.protection import epsilon_dp_ceiling
# the command line's line says the attack, and diffprivlib's (ε, δ) Laplace, in the same words
from engine.protection.report import ATTACK_WORDS, for_bin, release_words, with_release
from engine.spec import spec_from_dict
# the figures' legends say the same numbers
from figures.protection import budget_number, pair_shift, percent, percent_at_least, percent_at_most, stated_budget

from .params.messages import CLAMP_LABEL

__all__ = ["budget_clause", "pair_clause", "informed_clause", "package_clause", "power_clause", "realistic_clause",
           "population_clause", "utility_clause", "clauses", "protection_sentence", "protection_markdown",
           "percent", "beyond_informed", "for_package", "statistic_note",
           "POPULATION_REASON", "CLAMP_LABEL", "covered_clause", "unbounded_clause", "neighbours_note",
           "mechanism_line", "for_release", "release_clause"]


def budget_clause(risk: dict) -> str:
    """``At ε = 1`` (pure DP), else the guarantee's own budget: ``At ρ = 0.5`` (zCDP); to four significant digits,
    as the mechanism's line and the trade-off figure's legend state it (``figures.protection.budget_number``)."""
    if risk.get("epsilon") is not None:
        return f"At ε = {budget_number(risk['epsilon'])}"
    g = risk.get("guarantee", {})
    if g.get("kind") == "approx":
        return f"At (ε, δ) = ({budget_number(g['epsilon'])}, {g['delta']:.2g})"
    return f"At ρ = {budget_number(g['rho'])}"


def pair_clause(risk: dict) -> str | None:
    """Why the budget stated first is not the release's own (:func:`figures.protection.pair_shift`): n is known, so
    the attack replaces one person's record, which moves the statistic further than the Δ the release states its
    budget for; in parentheses after :func:`budget_clause`, ``(the release states ε = 1 for a change of up to Δ = 3,
    such as adding or removing one person; with n known, replacing one person's record moves the sum by up to 6 =
    2Δ)``, the semicolon a comma (the clauses are joined by semicolons). None where the stated budget holds. An
    OpenDP sum at scale 3 read "At ε = 1 … at most 88%", 88% being e²/(1+e²)."""
    p = pair_shift(risk)
    if p is None:
        return None
    norm = f" ({p['norm']})" if p.get("norm") else ""
    return (f"(the release states {stated_budget(p['stated'])} for a change of up to Δ = "
            f"{budget_number(p['sensitivity'])}, such as adding or removing one person, but with n known, replacing "
            f"one person's record moves {p['statistic']} by up to {budget_number(p['shift'])}{norm} = "
            f"{budget_number(p['ratio'])}Δ)")


def release_clause(risk: dict) -> str | None:
    """Why the budget is not the one typed (``risk["release"]``, :func:`for_release`): diffprivlib's Laplace with
    δ > 0 uses b = Δ/(ε − log(1 − δ)), pure (ε − log(1 − δ))-DP, which implies the (ε, δ) stated and is stronger:
    ``(diffprivlib's (1, 0.1)-DP Laplace, met as pure 1.105-DP)``, after :func:`budget_clause`. None elsewhere. The
    page read "At ε = 1.105" for ε = 1 typed, and only the sidebar said why. The words are the command line's
    (:func:`engine.protection.report.release_words`)."""
    return release_words(risk)


def for_release(risk: dict, spec_text: str | None) -> dict:
    """``risk`` with the library's own statement under ``"release"`` where the budget stated is not the one the
    release's noise gives (:func:`release_clause`: diffprivlib's Laplace or LaplaceTruncated with δ > 0, reported as
    pure DP); ``risk`` itself elsewhere. ``spec_text``: the scenario's spec as JSON (its ``[release]`` table), read as
    the command line reads its spec file (:func:`engine.protection.report.with_release`)."""
    release = spec_from_dict(json.loads(spec_text)).release if spec_text else None
    return with_release(risk, release)


def mechanism_line(text: str, risk: dict) -> str:
    """The mechanism's line over the page (its description, "Laplace noise, scale b = 1; pure 1-DP (sensitivity
    1)"), qualified for unbounded records as the command line's is
    (:func:`engine.protection.report.unbounded_words`): ``…; only for records that move the sum by at most 1
    (records are not clamped)``. It stated "pure 1-DP" for every record."""
    u = risk.get("unbounded_records")
    if not u:
        return text
    return (f"{text}; only for records that move {u['statistic']} by at most {u['sensitivity']:g} (records are not "
            "clamped)")


def informed_clause(risk: dict) -> str:
    """The informed adversary: ``at most`` the maximum where it is bounded, else the 95% belief. About a histogram
    bin's count (:func:`for_package`) the guess is whether one person is counted in the bin; for a statistic of a
    dp-wizard package, what all of the package allows follows (:func:`package_clause`)."""
    ia, package = risk["informed_adversary"], risk.get("package") or {}
    who = "whether one person is counted in this bin" if package.get("kind") == "bin" else "one person"
    start = f"someone who knew everyone else could move a {percent(ia['prior'])} guess about {who}"
    if ia["max"] is not None:
        out = f"{start} to at most {percent(ia['max'], apart_from=ia['prior'])}"
    else:
        out = (f"{start} to {percent_at_least(ia['q95'])} or more in 1 release in 20 (with this noise there is no firm "
               "ceiling)")
    whole = package_clause(risk)
    return f"{out}, and {whole}" if whole else out


def package_clause(risk: dict) -> str | None:
    """A dp-wizard package's statistic: what everything the package releases allows together, at its total ε (its
    statistics share it; someone in all of them is covered by the total only): ``from everything grade_hours.zip
    releases (its total ε = 1) to at most 73%``. None for a scenario that is no package's statistic. The page said
    only the statistic's share ("At ε = 0.3333 … at most 58%")."""
    package = risk.get("package")
    if not package:
        return None
    total = package["total_epsilon"]
    return (f"from everything {package['package']} releases (its total ε = {budget_number(total)}) to at most "
            f"{percent(epsilon_dp_ceiling(total))}")


def for_package(risk: dict, package: dict | None) -> dict:
    """``risk`` for a statistic of a dp-wizard package (:func:`ui.compute.protection.package_statistic`), with the
    package under ``"package"``; ``risk`` itself where ``package`` is None. A histogram bin's count is said as
    :func:`engine.protection.report.for_bin` has it (the command line's too)."""
    if not package:
        return risk
    return for_bin(risk, package) if package["kind"] == "bin" else {**risk, "package": dict(package)}


def statistic_note(risk: dict) -> str | None:
    """What the scenario is, for a statistic of a dp-wizard package: ``The count in bin (20, 40] of grade, from the
    dp-wizard package grade_hours.zip, …``; None otherwise."""
    package = risk.get("package")
    if not package:
        return None
    where = f"from the dp-wizard package {package['package']}"
    if package["kind"] == "bin":
        bins = " or ".join(package["bins"])
        return (f"The count in bin {bins} of {package['column']}, {where}, analysed as one Poisson count (n = 1): "
                "one person adds 1 to one bin of the histogram.")
    what = "the histogram" if package["kind"] == "histogram" else "the mean"
    return f"{what.capitalize()} of {package['column']}, {where}."


def power_clause(risk: dict) -> str:
    """The optimal attack's power at 5% false positives (:data:`engine.protection.report.ATTACK_WORDS`): a test
    between two values of one person's record, everyone else known. It read "the best attack that wrongly flags 5%
    of people catches 14% of the real ones", a screen of a population."""
    return ATTACK_WORDS.format(power=percent(risk["power_at_5pct"]))


#: why the model-only adversary can move further than the guarantee lets anyone move (said where it does)
POPULATION_REASON = ("from what the model and the release say about the population as a whole: the guarantee bounds "
                     "what one person's record changes, not what the data as a whole reveal")


def beyond_informed(risk: dict) -> bool:
    """Does the model-only adversary's move look larger than the informed adversary's reach? Yes where its posterior
    is above the informed level the sentence states (the ceiling, else the 95% belief), or its move in log-odds is
    larger than that level's (50% to 22% on "record is 0" is 50% to 78% on "record is 1"). With diffprivlib's Gaussian
    (ε = 1, δ = 1e-5) the sentence read "59%" for the informed adversary, then "from 50% to 90%" for the weaker one;
    pure DP does it too (Laplace at ε = 1, n = 20, s_dp = 18: at most 73%, then 50% to 11%)."""
    ra, ia = risk.get("realistic_adversary") or {}, risk.get("informed_adversary") or {}
    level = ia.get("max") if ia.get("max") is not None else ia.get("q95")
    if not ra.get("available") or level is None or not 0.0 < level < 1.0:
        return False
    c = ra["largest_change"]
    prior, post = (min(max(float(c[k]), 1e-300), 1.0 - 1e-16) for k in ("prior", "posterior"))
    move = abs(math.log(post / (1.0 - post)) - math.log(prior / (1.0 - prior)))
    return post > level or move > math.log(level / (1.0 - level))


def _largest_change(risk: dict) -> tuple[dict, str] | None:
    """The realistic adversary's largest move and the record value it is on, in words (a clamp's top value stands
    for "that or more"); None where that view is not available."""
    ra = risk.get("realistic_adversary") or {}
    if not ra.get("available"):
        return None
    c = ra["largest_change"]
    value = c["value"]
    if ra.get("labels"):
        value = ra["labels"][ra["values"].index(value)].replace("+", " or more")
    return c, value


def realistic_clause(risk: dict) -> str | None:
    """The realistic adversary's largest move on one record's value; None where not available. Where that move
    looks larger than the informed adversary's (:func:`beyond_informed`), the sentence says why
    (:data:`POPULATION_REASON`): the reason sat only in a collapsed expander."""
    moved = _largest_change(risk)
    if moved is None:
        return None
    c, value = moved
    clause = (f"someone who knows only the model moves from {percent(c['prior'])} to {percent(c['posterior'])} "
              f"on \"this person's record is {value}\"")
    return f"{clause}, {POPULATION_REASON}" if beyond_informed(risk) else clause


def population_clause(risk: dict) -> str | None:
    """What the model-only adversary's move is, said every time it is (:func:`realistic_clause`): the model and the
    release making one record's value more or less likely for everyone alike, an inference about the population, not
    something revealed about this one person. None where that view is not available. On the demo the move read as a
    leak that grows with privacy: 50% to 28% at ε = 0.1 against 55% at ε = 0.3, the reason said at 0.1 only (past the
    informed adversary's reach) and nowhere at ε = 1 (50% to 31%); a fall below 50% read as something learnt about the
    person. Where :func:`realistic_clause` already gave the reason (:data:`POPULATION_REASON`), the direction only."""
    moved = _largest_change(risk)
    if moved is None:
        return None
    c, value = moved
    direction = "less" if c["posterior"] < c["prior"] else "more"
    out = f"that is, the model and the release make a record of {value} {direction} likely for everyone alike"
    if beyond_informed(risk):
        return f"{out}, this person no more than anyone else"
    return (f"{out}: an inference about the population as a whole that applies to anyone, not something the release "
            "reveals about this one person beyond what the guarantee bounds")


def utility_clause(param: str, half_width: float) -> str:
    """The utility side: ``θ is known to ±0.05`` (half the 90% interval's width)."""
    return f"{param} is known to ±{half_width:.2g}"




def covered_clause(risk: dict) -> str | None:
    """Unbounded records (``risk["unbounded_records"]``, :func:`engine.protection.report.unbounded_records`): whom the
    budget covers, said before the numbers, ``for a person whose record moves the sum by at most 1``; None where
    every record is covered. "At ε = 0.3, … at most 57%" read as if the release were 0.3-DP for everyone."""
    u = risk.get("unbounded_records")
    if not u:
        return None
    return f"for a person whose record moves {u['statistic']} by at most {u['sensitivity']:g}"


def unbounded_clause(risk: dict) -> str | None:
    """Unbounded records: what a record of size r gets, what the largest record of the data gets where the records
    are known (simulated or uploaded), and the sidebar's remedy; None where every record is covered."""
    u = risk.get("unbounded_records")
    if not u:
        return None
    d = f"{u['sensitivity']:g}"
    g = {"pure": f"(r/{d})·ε-DP", "gdp": f"(r/{d})·μ Gaussian DP", "zcdp": f"(r/{d})²·ρ-zCDP"}.get(u["kind"])
    out = "records are not clamped, so a larger record is protected less"
    out += f": a record of size r gets {g}" if g else ""
    top = u.get("largest_record")
    if top is not None and top > u["sensitivity"] and u.get("q95") is not None:
        if u.get("epsilon") is not None:
            got = f"{budget_number(u['epsilon'])}-DP"
        elif u.get("mu") is not None:
            got = f"μ = {budget_number(u['mu'])} Gaussian DP"
        else:
            got = f"{budget_number(u['rho'])}-zCDP"
        if u.get("max") is not None:
            move = f"to at most {percent_at_most(u['max'])}"
        elif u["q95"] >= 0.999:  # "100.0% or more": past any whole or one-decimal level below it
            move = "past 99.9% in at least 1 release in 20"
        else:
            move = f"to {percent_at_least(u['q95'])} or more in 1 release in 20"
        out += (f"; your records reach {top:,}: for that person this release is {got}, and a 50% guess about them "
                f"can move {move}")
    elif top is not None:
        out += f"; your records reach {top:,}, within it: each of them is covered"
    return f"{out} (tick “{CLAMP_LABEL}” in the sidebar to bound every record)"


def neighbours_note(risk: dict) -> str | None:
    """Which two records the attack compares, where that is not obvious (``risk["neighbours"]["note"]``), in the
    sidebar's words: unbounded records read "records are unbounded (no model.upper): neighbours taken at the
    mechanism's sensitivity", a spec key no one at the sidebar sees."""
    note = risk["neighbours"].get("note")
    u = risk.get("unbounded_records")
    if note and u and note.startswith("records are unbounded"):
        return (f"records are not clamped (“{CLAMP_LABEL}” is off in the sidebar), so one record can move "
                f"{u['statistic']} by any amount; the two compared are {u['sensitivity']:g} apart, the sensitivity "
                "the noise is calibrated to")
    return note


def clauses(risk: dict) -> list[str]:
    """The privacy clauses in reading order (the first carries the budget, why it is the attacked pair's where that
    is not the one stated (:func:`pair_clause`), and whom it covers where records are unbounded; the last then says
    what the others get)."""
    covered, pair = covered_clause(risk), pair_clause(risk) or release_clause(risk)
    budget = f"{budget_clause(risk)} {pair}" if pair else budget_clause(risk)
    first = f"{budget}, {covered}," if covered else f"{budget},"
    out = [f"{first} {informed_clause(risk)}", power_clause(risk)]
    real = realistic_clause(risk)
    if real:
        out += [real, population_clause(risk)]
    if covered:
        out.append(unbounded_clause(risk))
    return out


def _parts(risk: dict, utility: tuple[str, float] | None) -> list[str]:
    parts = clauses(risk)
    if utility is not None:
        parts.append(utility_clause(*utility))
    return parts


def protection_sentence(risk: dict, utility: tuple[str, float] | None = None) -> str:
    """One sentence: the clauses joined by semicolons, then the utility ``(param, half_width)`` if given."""
    return "; ".join(_parts(risk, utility)) + "."


def protection_markdown(risk: dict, utility: tuple[str, float] | None = None) -> str:
    """The sentence as the pages show it: the first clause (the budget, and how far someone who knew everyone else
    could move a guess about one person: the guarantee itself) as a small heading, the other clauses as a paragraph
    under it, in the same words. As one heading the whole sentence ran to about 95 words of bold type, a phone's
    screen of it."""
    head, *rest = _parts(risk, utility)  # the rest opens with the attack's clause ("the best attack …")
    body = "; ".join(rest)
    return f"##### {head}.\n\n{body[:1].upper()}{body[1:]}."
