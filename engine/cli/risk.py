"""``python -m engine risk SPEC --out DIR``: what the release protects, written to ``DIR/risk.json``.

The content is :func:`engine.risk` of the spec (``epsilon``, ``tradeoff``, ``bound``,
``informed_adversary``, ``power_at_5pct``, ``advantage_at_5pct``, ``realistic_adversary``, ...).
A bin's spec written by ``python -m engine import-dpwizard`` (``import.json`` beside it names it) is said as the
app says it (:func:`bin_line`). Bad input prints one line, ``error: <field> = <value> is invalid: <what is
allowed>``, exit status 2.
"""
from __future__ import annotations

import json
import os
import sys

from ..protection.report import (ATTACK_WORDS, directed_percent, for_bin, release_words, risk, share_decimals,
                                 unbounded_words, with_release)
from ..spec import load_spec
from .console import cli_error, closed_pipe, with_cause

__all__ = ["add_parser", "run"]


def add_parser(sub) -> None:
    p = sub.add_parser("risk", help="what the release protects: trade-off curve, adversaries -> DIR/risk.json")
    p.add_argument("spec", metavar="SPEC", help="scenario file (.toml or .json)")
    p.add_argument("--out", required=True, metavar="DIR", help="output directory")


def summary_line(out: dict) -> str:
    """risk.json in one sentence, in percentages like the app's: how far an adversary who knows everyone else moves
    a 50% guess (the ceiling of pure ε-DP, or none; the level 95% of releases stay at or below, where it differs from
    the ceiling as shown) and what the best attack catches at 5% false positives, after the release's description
    ("Laplace noise, scale b = 1; pure 1-DP (sensitivity 1)"; it began with the engine's key, "laplace:"). It printed
    "informed adversary 50% -> q95 0.574 (max 0.574)", shares and percentages mixed; then "to at most 73.1% (below
    73.1% in 95% of releases)" for Laplace, where half the releases reach the ceiling. diffprivlib's Laplace with
    delta > 0 (``out["release"]``, :func:`engine.protection.report.with_release`) says why its epsilon is not the one
    stated, in the page's words: "pure 1.105-DP (sensitivity 1) (diffprivlib's (1, 0.1)-DP Laplace, met as pure
    1.105-DP)"; it said only "pure 1.105-DP"."""
    ia = out["informed_adversary"]
    who = "whether one person is counted in this bin" if (out.get("package") or {}).get("kind") == "bin" else \
        "one person"
    ceiling = "with no firm ceiling" if ia["max"] is None else f"to at most {share(ia['max'])}"
    q95 = directed_percent(ia["q95"], 1, up=True)  # rounded up: 95% of releases stay at or below it
    if ia["max"] is None or float(q95[:-1]) < float(share(ia["max"])[:-1]):  # else it says the ceiling again
        ceiling += f" (at or below {q95} in 95% of releases)"
    why = release_words(out)
    what = (out.get("description") or out["mechanism"]) + (f" {why}" if why else "")
    return (f"{what}: someone who knew everyone else could move a 50% guess "
            f"about {who} {ceiling}; {ATTACK_WORDS.format(power=share(out['power_at_5pct']))}")


def bin_of(path: str) -> dict | None:
    """The dp-wizard histogram bin whose spec ``path`` is, where ``import.json`` beside it (``python -m engine
    import-dpwizard``) lists it: ``{"package", "kind": "bin", "column", "bins": [label]}``; None otherwise."""
    folder, name = os.path.split(os.path.abspath(path))
    try:
        with open(os.path.join(folder, "import.json"), encoding="utf-8") as f:
            summary = json.load(f)
    except (OSError, ValueError):
        return None
    for stat in summary.get("statistics") or [] if isinstance(summary, dict) else []:
        for b in stat.get("bins") or []:
            if b.get("spec") == name:
                return {"package": summary.get("package"), "kind": "bin", "column": stat.get("column"),
                        "bins": [b.get("bin")]}
    return None


def bin_line(out: dict, package: dict) -> dict:
    """risk.json of a histogram bin's count (:func:`bin_of`), as the app says it
    (:func:`engine.protection.report.for_bin`), with the line's description saying what the count is: the line said
    "records are unbounded, and a record of size r gets (r/1) x its epsilon"."""
    u = out.get("unbounded_records")
    out = for_bin(out, package)
    if u is not None:
        out["description"] = out["description"].removesuffix(unbounded_words(u))
    shift = max(abs(float(v)) for v in out["neighbours"]["shift"])
    out["description"] += (f"; the count in bin {' or '.join(package['bins'])} of {package['column']}, which one "
                           f"person's row moves by {shift:g}")
    return out


def share(p: float) -> str:
    """A share in percent for the line, one decimal unless it would then read 0.0% or 100.0%
    (:func:`engine.protection.report.share_decimals`): ``73.1%``, ``99.995%``."""
    return f"{100.0 * float(p):.{share_decimals(p)}f}%"


def run(args) -> int:
    spec = None
    try:
        spec = load_spec(args.spec)
        out = with_release(risk(spec), spec.release)  # diffprivlib's (eps, delta) Laplace: its statement, kept
        package = bin_of(args.spec)
        if package is not None and spec.model.get("name") == "poisson_gamma" and spec.model.get("n") == 1:
            out = bin_line(out, package)
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "risk.json"), "w", encoding="utf-8") as f:
            json.dump(out, f, indent=1, allow_nan=False)
    except (ValueError, OSError) as exc:  # the realistic adversary reads the exact law of s given s_dp
        return cli_error(with_cause(exc, spec), args.out)
    try:
        print(f"{summary_line(out)} -> {os.path.join(args.out, 'risk.json')}")
        sys.stdout.flush()
    except BrokenPipeError:
        return closed_pipe()
    return 0
