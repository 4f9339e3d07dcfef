"""Command line: ``python -m engine run SPEC --out DIR [--method NAME] [--quiet]``,
``python -m engine study PRESET|calibration ...`` (:mod:`engine.cli.study`),
``python -m engine risk SPEC --out DIR`` (:mod:`engine.cli.risk`) and
``python -m engine import-dpwizard PACKAGE.zip --out DIR`` (:mod:`engine.cli.dpwizard`); what they print is
:mod:`engine.cli.console`.

Writes DIR/draws.csv, DIR/posterior.nc and DIR/summary.json. Invalid input prints one line,
``error: <field> = <value> is invalid: <what is allowed>``, and exits with status 2.
"""
from __future__ import annotations

import math
import os
import sys

from .. import api
from ..methods import METHOD_NAMES
from ..numerics import diagnostics
from ..numerics.plausibility import implausible_release
from ..spec import load_spec
from . import dpwizard as dpwizard_cli
from . import risk as risk_cli
from . import study as study_cli
from .console import Parser, add_option, cli_error, closed_pipe, progress_bar, with_cause

__all__ = ["main"]

#: the Monte Carlo standard errors of the summary (mean, 5% and 95% quantiles), written to two significant digits
MCSE = ("mcse_mean", "mcse_q5", "mcse_q95")

_MAX_SECONDS = "must be a number of seconds > 0"


def main(argv=None) -> int:
    """The command line (module docstring). A reader that closes the pipe early (``| head``) ends it quietly with
    status 0, its outputs written; Ctrl-C ends it with one line and status 130, the shell's code for it."""
    try:
        return _main(argv)
    except BrokenPipeError:
        return closed_pipe()
    except KeyboardInterrupt:
        sys.stderr.write("\ninterrupted\n")
        return 130


def _main(argv=None) -> int:
    # the name the user typed: the console script, else the module form the README uses
    prog = "dp-posterior" if os.path.basename(sys.argv[0] or "") == "dp-posterior" else "python -m engine"
    parser = Parser(prog=prog, description="Posterior inference from privatized data.")
    sub = parser.add_subparsers(dest="command", required=True)
    run_p = sub.add_parser("run", help="run a spec and write draws.csv, posterior.nc, summary.json")
    run_p.add_argument("spec", metavar="SPEC", help="scenario file (.toml or .json)")
    run_p.add_argument("--out", required=True, metavar="DIR", help="output directory")
    run_p.add_argument("--method", choices=METHOD_NAMES, help="override the spec's method")
    run_p.add_argument("--quiet", action="store_true", help="no progress bar")
    add_option(run_p, "--max-seconds", type=float, metavar="S", allowed=_MAX_SECONDS,
               help="refuse a run whose estimated cost on this machine is above S seconds")
    study_cli.add_parser(sub)
    dpwizard_cli.add_parser(sub)
    risk_cli.add_parser(sub)
    args = parser.parse_args(argv)
    if args.command == "study":
        return study_cli.run(args)
    if args.command == "risk":
        return risk_cli.run(args)
    if args.command == "import-dpwizard":
        return dpwizard_cli.run(args)

    spec = None
    try:
        spec = load_spec(args.spec)
        progress = None if args.quiet or not sys.stderr.isatty() else progress_bar(sys.stderr)
        if args.max_seconds is not None and not args.max_seconds > 0:
            raise ValueError(f"--max-seconds = {args.max_seconds:g} is invalid: {_MAX_SECONDS}")
        problem = api.prepare(spec)
        result = api.run_method(problem, api.method_table(spec, args.method), spec.seed, on_progress=progress,
                                max_seconds=args.max_seconds)
        # every method answers such a release, most of them confidently: say what the app says, here and in
        # summary.json (read later, without the terminal)
        far = implausible_release(problem)
        diagnostics.write_outputs(result, args.out, warnings=[far] if far else [])
    except (ValueError, OSError) as exc:
        return cli_error(with_cause(exc, spec), args.out, {"max_seconds": "--max-seconds"})
    if far:
        sys.stderr.write("warning: " + far + "\n")
    s = diagnostics.summary(result)
    verdict = diagnostics.convergence(result, s)
    if not verdict.converged:  # a chain that has not mixed, or too few independent draws
        try:
            sys.stderr.write("warning: " + verdict.message(result.method) + "\n")
        except BrokenPipeError:
            pass
    try:
        secs = result.info.get("wall_time_s", float("nan"))
        if result.info.get("estimator"):  # a point estimate, not draws: say what it is
            print(f"{result.method}: maximum-likelihood estimate (mean = estimate, sd = standard error, q5/q95 = "
                  f"90% Wald interval) after {result.info.get('iterations')} iterations in {secs:.2f} s -> {args.out}")
        else:
            print(f"{result.method}: {result.n_chains} chain(s) x {result.n_draws} draws in {secs:.2f} s -> {args.out}")
        if result.info.get("picked"):  # auto: which exact method ran, and why
            print(f"{result.method} picked {result.info['picked']}: {result.info.get('why', '')}".rstrip(": "))
        if result.info.get("plug_in_n") is not None and result.info.get("note"):  # an unknown n, taken as known
            print(f"{result.method}: {result.info['note']}")
        if result.info.get("claim") == "approximate":  # an approximation says so wherever its numbers go
            print(f"{result.method} is {result.info.get('approximation', 'approximate')}")
        table = s.round(4)
        if result.info.get("estimator"):  # an estimate has no chains: no R-hat, effective draws or MCSE to show
            table = table.drop(columns=[c for c in ("r_hat", "ess_bulk", "ess_tail", *MCSE) if c in table])
        for col in MCSE:  # two significant digits: four decimals wrote a small error as 0.0
            if col in table:
                table[col] = [float(f"{v:.2g}") if math.isfinite(v) else v for v in s[col]]
        for col in ("ess_bulk", "ess_tail"):  # effective draws: whole numbers, like arviz's own summary
            if col in table:
                table[col] = table[col].round().astype("Int64")
        print(table.to_string(na_rep="—"))  # independent draws have no R-hat: a dash, not NaN
        sys.stdout.flush()
    except BrokenPipeError:  # e.g. piped into `head`: the outputs are written, stay quiet
        return closed_pipe()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
