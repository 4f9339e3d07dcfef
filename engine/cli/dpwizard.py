"""``python -m engine import-dpwizard PACKAGE.zip --out DIR``: a dp-wizard results package to one spec per
analysable statistic (:mod:`engine.dpwizard`)."""
from __future__ import annotations

import sys

from ..core.validation import MODEL_NUMBER_RANGE
from ..dpwizard import import_dpwizard
from .console import add_option, cli_error

__all__ = ["add_parser", "run"]

#: the library's fields that an option sets, by the option's name; ``model.beta`` and ``model.sd`` only where the
#: option was given (else the package set them)
_FLAGS = {"model.alpha": "--prior-alpha", "mean_sd": "--mean-sd", "out": "--out"}

_IN_RANGE = "must be a number from {:g} to {:g}".format(*MODEL_NUMBER_RANGE)


def add_parser(sub) -> None:
    p = sub.add_parser("import-dpwizard", help="write one spec per analysable statistic of a dp-wizard package")
    p.add_argument("package", metavar="PACKAGE.zip", help="dp-wizard's results package (zip)")
    p.add_argument("--out", required=True, metavar="DIR", help="output directory for the specs and import.json")
    add_option(p, "--prior-alpha", type=float, default=1.0, metavar="A", allowed=_IN_RANGE,
               help="Gamma(A, rate) prior on each histogram bin's expected count (default 1)")
    add_option(p, "--prior-rate", type=float, default=None, metavar="R", allowed=_IN_RANGE,
               help="its rate (default: bins / max_rows of the plan)")
    add_option(p, "--mean-sd", type=float, default=None, metavar="SD", allowed=_IN_RANGE,
               help="the records' sd assumed for a mean (default: (upper - lower) / 4 of its bounds)")


def run(args) -> int:
    flags = dict(_FLAGS)
    if args.prior_rate is not None:
        flags["model.beta"] = "--prior-rate"
    if args.mean_sd is not None:  # --mean-sd 1e300 was reported as model.sd
        flags["model.sd"] = "--mean-sd"
    try:
        summary = import_dpwizard(args.package, args.out, prior_alpha=args.prior_alpha, prior_rate=args.prior_rate,
                                  mean_sd=args.mean_sd)
    except (ValueError, OSError) as exc:
        return cli_error(exc, args.out, flags)
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
