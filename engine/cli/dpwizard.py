"""``python -m engine import-dpwizard PACKAGE.zip --out DIR``: a dp-wizard results package to one spec per
analysable statistic (:mod:`engine.dpwizard`)."""
from __future__ import annotations

import sys

from ..dpwizard import import_dpwizard
from .console import cli_error

__all__ = ["add_parser", "run"]

#: the library's fields that only an option sets, by the option's name
_FLAGS = {"model.alpha": "--prior-alpha", "model.beta": "--prior-rate", "mean_sd": "--mean-sd"}


def add_parser(sub) -> None:
    p = sub.add_parser("import-dpwizard", help="write one spec per analysable statistic of a dp-wizard package")
    p.add_argument("package", metavar="PACKAGE.zip", help="dp-wizard's results package (zip)")
    p.add_argument("--out", required=True, metavar="DIR", help="output directory for the specs and import.json")
    p.add_argument("--prior-alpha", type=float, default=1.0, metavar="A",
                   help="Gamma(A, rate) prior on each histogram bin's expected count (default 1)")
    p.add_argument("--prior-rate", type=float, default=None, metavar="R",
                   help="its rate (default: bins / max_rows of the plan)")
    p.add_argument("--mean-sd", type=float, default=None, metavar="SD",
                   help="the records' sd assumed for a mean (default: (upper - lower) / 4 of its bounds)")


def run(args) -> int:
    try:
        summary = import_dpwizard(args.package, args.out, prior_alpha=args.prior_alpha, prior_rate=args.prior_rate,
                                  mean_sd=args.mean_sd)
    except (ValueError, OSError) as exc:
        return cli_error(exc, args.out, _FLAGS)
    for st in summary["statistics"]:
        if st["analysed"] and st["statistic"] == "Mean":
            print(f"{st['column']}: Mean, 1 spec ({st['spec']}): the released ratio sum / length, sum scale "
                  f"{st['sum_scale']:g}, length scale {st['length_scale']:g}; n's prior from {st['n_prior_source']}")
        elif st["analysed"]:
            print(f"{st['column']}: {st['statistic']}, {len(st['bins'])} spec(s), noise scale {st['count_scale']:g} "
                  f"({st['scale_source']}); the whole histogram with its private total: {st['histogram_spec']}")
        else:
            print(f"{st['column']}: {st['statistic']} not analysed: {st['why']}")
    print(f"-> {args.out}/import.json")
    sys.stdout.flush()
    return 0
