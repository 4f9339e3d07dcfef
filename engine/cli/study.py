"""``python -m engine study``: the papers' presets and calibration studies from the command line.

::

    python -m engine study PRESET [--quick] [--out DIR] [--workers N] [--scheduler ADDRESS]
    python -m engine study calibration SPEC.toml --replicates M [--methods a,b,...] [--seed S]
                                                 [--out DIR] [--workers N] [--scheduler ADDRESS]

A preset writes its tables as CSV, ``comparison.txt`` (the paper's numbers against ours) and each
figure as HTML and PNG. A calibration study writes ``calibration.csv`` (one row per replicate,
method and parameter), ``calibration_summary.csv`` (KS, coverage, MMD per method) and its
figures; its finished replicates are kept in ``DIR/store/`` (Parquet), so running the same command
again after an interruption resumes where it stopped. ``--scheduler tcp://host:8786`` runs the
replicates on a Dask cluster (``Client(address).get_executor()``); ``--workers N`` sizes the local
process pool instead. Figures are drawn by :mod:`figures.studies`, the plotly figure builders the app
uses too, imported only when a study draws them (so neither ``import engine`` nor ``import engine.cli``
loads plotly); PNGs need kaleido and Chromium (:mod:`figures.export`), else the HTML alone is written
and a note says why.
"""
from __future__ import annotations

import os
import sys
import time

from ..api import prepare, run_method
from ..methods import REGISTRY
from ..methods.base import check_mechanism_supported, check_model_supported
from ..methods.exact import has_closed_form
from ..spec import load_spec
from ..studies.calibration import REFERENCE, calibration_config, calibration_study, calibration_summary
from ..studies.presets import PRESETS, run_preset, write_preset
from .console import add_option, cli_error, closed_pipe, error_line, progress_bar

__all__ = ["add_parser", "run"]


def add_parser(sub) -> None:
    p = sub.add_parser("study", help="run a paper preset or a calibration study")
    p.add_argument("preset", metavar="PRESET", help="one of " + ", ".join(PRESETS) + ", or calibration")
    p.add_argument("spec", metavar="SPEC", nargs="?", help="calibration only: the scenario file (.toml or .json)")
    p.add_argument("--quick", action="store_true", help="the small size (CI)")
    p.add_argument("--out", metavar="DIR", help="output directory (default study-PRESET)")
    add_option(p, "--workers", type=int, metavar="N", allowed="must be an integer >= 1",
               help="local worker processes (default: all cores)")
    p.add_argument("--scheduler", metavar="ADDRESS", help="Dask scheduler address, e.g. tcp://10.0.0.1:8786")
    add_option(p, "--replicates", type=int, metavar="M", allowed="must be an integer >= 1",
               help="calibration: number of replicates")
    p.add_argument("--methods", metavar="LIST", help="calibration: comma-separated methods "
                   "(default: naive and the spec's method, plus exact where it has a closed form)")
    add_option(p, "--seed", type=int, metavar="S", allowed="must be an integer in [0, 2^63)",
               help="calibration: study seed (default: the spec's)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


#: calibration_study's arguments that only an option sets (the spec was read and checked before it runs)
_FLAGS = {"replicates": "--replicates", "seed": "--seed", "store": "--out"}


def _progress(quiet: bool):
    if quiet or not sys.stderr.isatty():
        return None
    return progress_bar(sys.stderr)


def _study_figures():
    """:mod:`figures.studies`, imported when a study draws: ``import engine.cli`` stays free of plotly."""
    from figures import studies

    return studies


def _write_figures(figs: dict, out: str) -> list[str]:
    from figures.export import StaticExportUnavailable, png_bytes  # plotly and kaleido: only when drawing

    notes = []
    png_ok = True
    for name, fig in figs.items():
        # plotly.js written once beside the figures and loaded from there: from a CDN the files were blank offline
        fig.write_html(os.path.join(out, f"{name}.html"), include_plotlyjs="directory")
        if not png_ok:
            continue
        try:
            data = png_bytes(fig)
        except StaticExportUnavailable as exc:
            png_ok = False
            notes.append(f"note: PNG figures not written ({exc})")
            continue
        with open(os.path.join(out, f"{name}.png"), "wb") as fh:
            fh.write(data)
    return notes


def _executor(args):
    if args.scheduler:
        from dask.distributed import Client

        try:
            # not the process's default scheduler: a Client that fails to connect would stay set as one (dask's
            # config "scheduler = dask.distributed"), and later dask work in this process (an InferenceData written
            # by a run) would try to reach the failed address
            client = Client(args.scheduler, set_as_default=False)
        except (OSError, ValueError, TypeError) as exc:  # nothing listening, or not an address: one line
            why = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise ValueError(f"--scheduler = {args.scheduler!r} is invalid: no dask scheduler answered there ({why}); "
                             "give the address a running dask-scheduler prints, e.g. tcp://10.0.0.5:8786") from None
        return client, client.get_executor()
    if args.workers is not None and args.workers < 1:
        raise ValueError(f"--workers = {args.workers} is invalid: must be an integer >= 1")
    return None, None


def _problem(spec):
    """The spec prepared once, as ``run`` would (None where its own data cannot be: the replicates draw their own)."""
    try:
        return prepare(spec)
    except ValueError:
        return None


#: methods that sample n and refuse a known one; their refusal is their first check, made before any draw
_NEEDS_UNKNOWN_N = ("rjmcmc",)


def _refuse_what_cannot_run(problem, methods: list) -> None:
    """Raise the ValueError ``run`` would give for a method that cannot run on the spec's model, release or n
    (rjmcmc on a known n), before any replicate runs: such a method fails in every replicate, after the
    study's whole cost. Names that are not methods are left to the study's own check."""
    if problem is None:
        return
    for table in methods:
        name = table if isinstance(table, str) else dict(table).get("name")
        if name not in REGISTRY:
            continue
        check_model_supported(name, problem.model)
        check_mechanism_supported(name, problem.mechanism)
        if name in _NEEDS_UNKNOWN_N and getattr(problem, "unknown_n", None) is None:
            run_method(problem, {"name": name}, 0)  # raises its one-line refusal at once


def _default_methods(spec, problem) -> list:
    names = ["naive"]
    own = dict(spec.method)
    if own["name"] not in names:
        names.append(own["name"])
    try:
        exact_ok = problem is not None and has_closed_form(problem)
    except ValueError:
        exact_ok = False
    if exact_ok and "exact" not in names:
        names.append("exact")
    common = {k: own[k] for k in ("chains", "draws", "warmup") if k in own}
    return [own if n == own["name"] else {"name": n, **({} if n == "naive" else common)} for n in names]


def _calibration(args, executor) -> int:
    if not args.spec:
        raise ValueError("SPEC = None is invalid: study calibration needs a scenario file, e.g. "
                         "python -m engine study calibration spec.toml --replicates 200")
    spec = load_spec(args.spec)  # the file first: a missing one is the first thing to say
    if args.replicates is None:
        raise ValueError("--replicates = None is invalid: give the number of replicates M, e.g. --replicates 200")
    problem = _problem(spec)
    methods = ([m.strip() for m in args.methods.split(",") if m.strip()] if args.methods
               else _default_methods(spec, problem))
    calibration_config(spec, methods)  # names, settings and estimators refused before --out is made
    _refuse_what_cannot_run(problem, methods)
    out = args.out or "study-calibration"
    os.makedirs(out, exist_ok=True)
    t0 = time.perf_counter()
    table = calibration_study(spec, methods, args.replicates, seed=args.seed, executor=executor, workers=args.workers,
                              on_progress=_progress(args.quiet), store=os.path.join(out, "store"))
    summary = calibration_summary(table)
    table.to_csv(os.path.join(out, "calibration.csv"), index=False)
    summary.to_csv(os.path.join(out, "calibration_summary.csv"), index=False)
    notes = []
    ran = table[table["error"].fillna("").astype(str) == ""]["method"]
    if set(ran) - {REFERENCE}:  # figures compare the methods with the reference: none if every method failed
        for param in table["param"].unique()[:1]:
            notes += _write_figures(_study_figures().calibration_figures(table, param), out)
    cols = ["method", "param", "M", "failed", "ks_stat", "ks_pvalue", "coverage_50", "coverage_90", "mmd2_mean"]
    try:
        print(f"calibration: {args.replicates} replicates in {time.perf_counter() - t0:.1f} s -> {out}")
        print(summary[cols].round(4).to_string(index=False))
        sys.stdout.flush()
    except BrokenPipeError:  # stdout's reader has gone (| head): the tables are written; a failed method still says so
        closed_pipe()
    for n in notes:
        sys.stderr.write(n + "\n")
    return _failures(table)


def _failures(table) -> int:
    """A method that failed in some replicates gets a warning with its first error (the rest are in
    calibration.csv); one that failed in every replicate was a bad choice for this spec (rjmcmc on a known n):
    its error, one line, and status 2, like ``run`` would have said before running."""
    status = 0
    for method, rows in table.groupby("method", sort=False):
        errors = rows.drop_duplicates("replicate")["error"].fillna("").astype(str)
        bad = errors[errors != ""]
        if bad.empty:
            continue
        if len(bad) == len(errors):
            error_line(f"{bad.iloc[0]} (every replicate of {method} failed: see calibration.csv)")
            status = 2
        else:
            error_line(f"{method} failed in {len(bad)} of {len(errors)} replicates, first: {bad.iloc[0]} (see "
                       "calibration.csv)", prefix="warning: ")
    return status


def _preset(args, executor) -> int:
    out = args.out or f"study-{args.preset}"
    t0 = time.perf_counter()
    result = run_preset(args.preset, quick=args.quick, executor=executor, workers=args.workers)
    write_preset(result, out)
    notes = _write_figures(_study_figures().preset_figures(result), out)
    print(f"{args.preset}{' (quick)' if args.quick else ''}: {time.perf_counter() - t0:.1f} s -> {out}")
    print(result.text)
    for n in notes:
        sys.stderr.write(n + "\n")
    return 0


def run(args) -> int:
    """Entry point of ``python -m engine study`` (args from :func:`add_parser`)."""
    client = None
    try:
        if args.preset != "calibration" and args.preset not in PRESETS:
            raise ValueError(f"PRESET = {args.preset!r} is invalid: must be one of {', '.join(PRESETS)}, calibration")
        if args.preset != "calibration" and args.spec:
            raise ValueError(f"SPEC = {args.spec!r} is invalid: only study calibration takes a scenario file")
        if args.preset != "calibration":  # a preset has its own replicates, methods and seed
            for flag in ("replicates", "methods", "seed"):
                if getattr(args, flag) is not None:
                    raise ValueError(f"--{flag} = {getattr(args, flag)!r} is invalid: only study calibration takes "
                                     "it (a preset sets its own)")
        client, executor = _executor(args)
        return _calibration(args, executor) if args.preset == "calibration" else _preset(args, executor)
    except BrokenPipeError:  # stdout's reader has gone: not a bad --out (engine.cli.main ends it quietly)
        raise
    except (ValueError, OSError) as exc:
        return cli_error(exc, args.out, _FLAGS)
    finally:
        if client is not None:
            client.close()
