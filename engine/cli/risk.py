"""``python -m engine risk SPEC --out DIR``: what the release protects, written to ``DIR/risk.json``.

The content is :func:`engine.risk` of the spec (``epsilon``, ``tradeoff``, ``bound``,
``informed_adversary``, ``power_at_5pct``, ``advantage_at_5pct``, ``realistic_adversary``, ...).
Bad input prints one line, ``error: <field> = <value> is invalid: <what is allowed>``, exit status 2.
"""
from __future__ import annotations

import json
import os
import sys

from ..protection.report import risk
from ..spec import load_spec
from .console import cli_error

__all__ = ["add_parser", "run"]


def add_parser(sub) -> None:
    p = sub.add_parser("risk", help="what the release protects: trade-off curve, adversaries -> DIR/risk.json")
    p.add_argument("spec", metavar="SPEC", help="scenario file (.toml or .json)")
    p.add_argument("--out", required=True, metavar="DIR", help="output directory")


def run(args) -> int:
    try:
        out = risk(load_spec(args.spec))
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "risk.json"), "w", encoding="utf-8") as f:
            json.dump(out, f, indent=1, allow_nan=False)
    except (ValueError, OSError) as exc:
        return cli_error(exc, args.out)
    ia = out["informed_adversary"]
    top = "unbounded" if ia["max"] is None else f"{ia['max']:.3f}"
    try:
        print(f"{out['mechanism']}: informed adversary 50% -> q95 {ia['q95']:.3f} (max {top}); "
              f"power at 5% false positives {out['power_at_5pct']:.3f} -> {os.path.join(args.out, 'risk.json')}")
        sys.stdout.flush()
    except BrokenPipeError:
        sys.stdout = None
    return 0
