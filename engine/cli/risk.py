"""``python -m engine risk SPEC --out DIR``: what the release protects, written to ``DIR/risk.json``.

The content is :func:`engine.risk` of the spec (``epsilon``, ``tradeoff``, ``bound``,
``informed_adversary``, ``power_at_5pct``, ``advantage_at_5pct``, ``realistic_adversary``, ...).
Bad input prints one line, ``error: <field> = <value> is invalid: <what is allowed>``, exit status 2.
"""
from __future__ import annotations

import json
import math
import os
import sys

from ..protection.report import risk
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
    73.1% in 95% of releases)" for Laplace, where half the releases reach the ceiling."""
    ia = out["informed_adversary"]
    ceiling = "with no firm ceiling" if ia["max"] is None else f"to at most {share(ia['max'])}"
    k = _decimals(ia["q95"])
    q95 = math.ceil(round(10 ** (k + 2) * ia["q95"], 6)) / 10 ** k  # in %, rounded up: 95% of releases stay at or below
    if ia["max"] is None or q95 < round(100 * ia["max"], k):  # else it says the ceiling again
        ceiling += f" (at or below {q95:.{k}f}% in 95% of releases)"
    return (f"{out.get('description') or out['mechanism']}: someone who knew everyone else could move a 50% guess about one person "
            f"{ceiling}; the best attack that wrongly flags 5% of people catches {share(out['power_at_5pct'])} of the "
            "real ones")


def _decimals(p: float) -> int:
    """One decimal of a percentage, more where one would write a share strictly between 0 and 1 as 0.0% or 100.0%
    (at ε = 10 the line said "to at most 100.0%" and "catches 100.0%" for 99.9955% and 99.977%); at most four."""
    v, k = 100.0 * float(p), 1
    while k < 4 and 0.0 < v < 100.0 and float(f"{v:.{k}f}") in (0.0, 100.0):
        k += 1
    return k


def share(p: float) -> str:
    """A share in percent for the line (:func:`_decimals`): ``73.1%``, ``99.995%``."""
    return f"{100.0 * float(p):.{_decimals(p)}f}%"


def run(args) -> int:
    spec = None
    try:
        spec = load_spec(args.spec)
        out = risk(spec)
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
