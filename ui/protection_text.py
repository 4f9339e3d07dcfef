"""What epsilon protects, in one computed sentence (pure: no streamlit; tested clause by clause).

:func:`clauses` turns the dictionary of :func:`engine.risk` into short clauses, each from its own
numbers; :func:`protection_sentence` joins them, optionally with the utility side ("θ is known to
±0.05"), e.g.

    At ε = 1, someone who knew everyone else could move a 50% guess about one person to at most 73%;
    the best attack that wrongly flags 5% of people catches 14% of the real ones; someone who knows
    only the model moves from 50% to 31% on "this person's record is 1".
"""
from __future__ import annotations

from figures.protection import budget_number, percent  # the figures' legends say the same numbers

__all__ = ["budget_clause", "informed_clause", "power_clause", "realistic_clause", "utility_clause", "clauses",
           "protection_sentence", "percent"]


def budget_clause(risk: dict) -> str:
    """``At ε = 1`` (pure DP), else the guarantee's own budget: ``At ρ = 0.5`` (zCDP); to four significant digits,
    as the mechanism's line and the trade-off figure's legend state it (``figures.protection.budget_number``)."""
    if risk.get("epsilon") is not None:
        return f"At ε = {budget_number(risk['epsilon'])}"
    g = risk.get("guarantee", {})
    if g.get("kind") == "approx":
        return f"At (ε, δ) = ({budget_number(g['epsilon'])}, {g['delta']:.2g})"
    return f"At ρ = {budget_number(g['rho'])}"


def informed_clause(risk: dict) -> str:
    """The informed adversary: ``at most`` the maximum where it is bounded, else the 95% belief."""
    ia = risk["informed_adversary"]
    start = f"someone who knew everyone else could move a {percent(ia['prior'])} guess about one person"
    if ia["max"] is not None:
        return f"{start} to at most {percent(ia['max'])}"
    return (f"{start} to {percent(ia['q95'])} or more in 1 release in 20 (with this noise there is no firm "
            "ceiling)")


def power_clause(risk: dict) -> str:
    """The optimal attack's power at 5% false positives."""
    return f"the best attack that wrongly flags 5% of people catches {percent(risk['power_at_5pct'])} of the real ones"


def realistic_clause(risk: dict) -> str | None:
    """The realistic adversary's largest move on one record's value; None where not available."""
    ra = risk.get("realistic_adversary") or {}
    if not ra.get("available"):
        return None
    c = ra["largest_change"]
    value = c["value"]
    if ra.get("labels"):  # a clamp's top value stands for "that or more"
        value = ra["labels"][ra["values"].index(value)].replace("+", " or more")
    return (f"someone who knows only the model moves from {percent(c['prior'])} to {percent(c['posterior'])} "
            f"on \"this person's record is {value}\"")


def utility_clause(param: str, half_width: float) -> str:
    """The utility side: ``θ is known to ±0.05`` (half the 90% interval's width)."""
    return f"{param} is known to ±{half_width:.2g}"


def clauses(risk: dict) -> list[str]:
    """The privacy clauses in reading order (the first carries the budget)."""
    out = [f"{budget_clause(risk)}, {informed_clause(risk)}", power_clause(risk)]
    real = realistic_clause(risk)
    if real:
        out.append(real)
    return out


def protection_sentence(risk: dict, utility: tuple[str, float] | None = None) -> str:
    """One sentence: the clauses joined by semicolons, then the utility ``(param, half_width)`` if given."""
    parts = clauses(risk)
    if utility is not None:
        parts.append(utility_clause(*utility))
    return "; ".join(parts) + "."
