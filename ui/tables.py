"""Pure display tables and file exports built from method runs (no streamlit)."""
from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

import engine
from engine.numerics.diagnostics import rhat_up

from figures.labels import METHOD_LABELS, acceptance_text, info_label  # acceptance_text: Compare's too

__all__ = [
    "run_label",
    "comparison_table",
    "summary_csv",
    "verdict_text",
    "joined",
    "acceptance_of",
    "acceptance_text",
    "ess_full",
    "ess_short",
    "escape_spreadsheet_cell",
    "diagnostics_csv",
    "draws_csv",
    "abc_report",
    "formatted",
    "draws_and_time_per_method",
]

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def acceptance_of(result) -> float:
    """DA-MCMC: mean acceptance probability of the record sweeps; ABC: accepted / proposed;
    NaN for methods without an accept step."""
    if "acceptance_rate" in result.sample_stats:
        return float(np.mean(result.sample_stats["acceptance_rate"]))
    if "acceptance_rate" in result.info:
        return float(result.info["acceptance_rate"])
    return math.nan


def run_label(method: str, run: Any) -> str:
    """The name a page gives a method's run: its result's (:func:`figures.labels.result_label`: "Exact (numerical)"
    for a grid posterior, "Closed form given plug-in n = 21") where the run produced one, else the method's label
    (a run that failed or was not started has only its method). The captions keyed by method name said "Exact
    (closed form)" beside a table row and legend entry "Exact (numerical)"."""
    result = getattr(run, "result", None)
    if result is None or method == "confidential":
        return METHOD_LABELS.get(method, method)
    return info_label(method, getattr(result, "info", None) or {})  # result_label's, keyed by the run's method


def verdict_text(convergence: Mapping[str, Any] | None, several: bool = False) -> str:
    """The convergence verdict in a table cell, short enough to read whole: "yes", "no: R-hat 1.034,
    ESS 17" (a chain that has not mixed), "yes (independent)" / "no: 2 draws" (independent draws,
    enough or too few for a density) or "— (estimator)" (a point estimator such as MCEM's MLE).
    ``several``: the method has several parameters, and the verdict, one for the run, gives the worst of them
    ("no: worst R-hat 1.156, ESS 19"), which a row's own R-hat and ESS need not be."""
    v = convergence or {}
    if v.get("estimator"):
        return "— (estimator)"
    if v.get("independent"):
        return "yes (independent)" if v.get("converged") else f"no: {int(v.get('draws') or 0):,} draws"
    if not v.get("applicable"):
        return "—"
    if v.get("converged"):
        return "yes"
    ess = [x for x in (v.get("ess_bulk_min"), v.get("ess_tail_min")) if x is not None]
    rhat = v.get("r_hat_max")
    # rounded up as the verdict's own message writes it: 1.01004 is "1.011", which reads as failing ("1.010" did not)
    parts = ([f"R-hat {rhat_up(rhat)}"] if rhat is not None and math.isfinite(rhat) else ["R-hat —"]) + \
        ([f"ESS {ess_full(min(ess))}"] if ess else [])
    return ("no: worst " if several else "no: ") + ", ".join(parts)


def comparison_table(runs: Mapping[str, Any]) -> pd.DataFrame:
    """One row per (method, parameter): mean, sd, 90% interval, R-hat, ESS, the convergence verdict,
    acceptance, wall time.

    ``runs`` maps method name to an object with ``.result`` (engine Result or None) and
    ``.summary`` (``engine.summary`` frame); failed runs are skipped. A point estimator (MCEM) gives
    its estimate as the mean, its standard error as the sd and its 90% Wald interval as q5/q95, with
    no draws; a method run at the plug-in n of an unknown-n release is named with that n.
    """
    rows = []
    for method, run in runs.items():
        if run is None or getattr(run, "result", None) is None:
            continue
        result, summary = run.result, run.summary
        estimator = bool(result.info.get("estimator"))
        verdict = {"estimator": True} if estimator else getattr(run, "convergence", None)
        label = run_label(method, run)
        for param, s in summary.iterrows():
            rows.append({
                "method": label,
                "parameter": param,
                "mean": s["mean"],
                "sd": s["sd"],
                "q5": s["q5"],
                "q95": s["q95"],
                "R-hat": s["r_hat"],
                "ESS bulk": s["ess_bulk"],
                "ESS tail": s["ess_tail"],
                "converged": verdict_text(verdict, several=len(summary) > 1),
                "acceptance": acceptance_of(result),
                "draws": math.nan if estimator else int(result.n_chains * result.n_draws),
                "wall time (s)": float(result.info.get("wall_time_s", math.nan)),
            })
    # the answer first (a phone shows the first columns: the estimate, its interval and whether to trust it),
    # the sampler's details after
    columns = ["method", "parameter", "mean", "sd", "q5", "q95", "converged", "R-hat", "ESS bulk", "ESS tail",
               "acceptance", "draws", "wall time (s)"]
    return pd.DataFrame(rows, columns=columns)


def summary_csv(runs: Mapping[str, Any]) -> bytes:
    """Compare's table as a CSV, with every number in full (the page rounds them): one row per method and parameter,
    ``method`` (the CLI's id) and ``method_name`` (the page's) first, then :func:`comparison_table`'s columns, the
    convergence verdict among them (a sampler's mean travels with its verdict); text that a spreadsheet would read
    as a formula is quoted."""
    frames = []
    for method, run in runs.items():
        frame = comparison_table({method: run}).rename(columns={"method": "method_name"})
        frame.insert(0, "method", method)
        frames.append(frame)
    columns = ["method", "method_name", *list(comparison_table({}).columns)[1:]]
    frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)
    for col in ("method", "method_name", "parameter", "converged"):
        frame[col] = frame[col].map(escape_spreadsheet_cell)
    return frame.to_csv(index=False).encode("utf-8")


def diagnostics_csv(method: str, run) -> bytes:
    """Diagnostics' table of one run as a CSV, every number in full (the page rounds them): ``method`` (the CLI's
    id), ``method_name`` (the page's), ``parameter``, then the engine's summary columns (mean, sd, q5, q50, q95,
    r_hat, ess_bulk, ess_tail, mcse_mean, mcse_q5, mcse_q95) and the run's verdict, ``converged``."""
    frame = run.summary.rename_axis("parameter").reset_index()
    frame.insert(0, "method_name", run_label(method, run))
    frame.insert(0, "method", method)
    verdict = run.convergence or {}
    frame["converged"] = bool(verdict.get("converged")) if verdict.get("applicable") else "not applicable"
    for col in ("method", "method_name", "parameter", "converged"):
        frame[col] = frame[col].map(escape_spreadsheet_cell)
    return frame.to_csv(index=False).encode("utf-8")


def joined(table: pd.DataFrame, left: str, right: str, name: str) -> pd.DataFrame:
    """``table`` with the text columns ``left`` and ``right`` shown as one column ``name`` ("830 / 766"), in
    ``left``'s place: a desktop then shows every column of the comparison without scrolling."""
    if left not in table.columns or right not in table.columns:
        return table
    out = table.copy()
    out.insert(list(out.columns).index(left), name, out[left].astype(str) + " / " + out[right].astype(str))
    return out.drop(columns=[left, right])


def escape_spreadsheet_cell(value: Any) -> Any:
    """Prefix text that a spreadsheet would read as a formula (= + - @, tab, CR) with a quote.

    Numbers are left alone: a negative draw stays a number, only text cells can inject formulas.
    """
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def draws_csv(results: Sequence) -> bytes:
    """All methods' draws in one long CSV: method (the CLI's and the TOML's name), method_name (the page's: "auto"
    is "Exact (best method)", a grid posterior's "exact" is "Exact (numerical)"), chain, draw, one column per
    parameter."""
    frames = []
    for r in (r for r in results if not r.info.get("estimator")):  # an estimate is not a draw
        f = engine.draws_frame(r)
        f.insert(0, "method", r.method)
        f.insert(1, "method_name", info_label(r.method, r.info or {}))
        frames.append(f)
    frame = pd.concat(frames, ignore_index=True) if frames else \
        pd.DataFrame(columns=["method", "method_name", "chain", "draw"])
    frame.columns = [escape_spreadsheet_cell(str(c)) for c in frame.columns]
    for col in frame.columns:
        if frame[col].dtype == object or pd.api.types.is_string_dtype(frame[col]):
            frame[col] = frame[col].map(escape_spreadsheet_cell)
    return frame.to_csv(index=False).encode("utf-8")


def draws_csv_size(results: Sequence) -> float:
    """The bytes :func:`draws_csv` would write, estimated without writing it: each method's rows times the
    mean text width of a sample of its values (shortest round-trip text, or "nan"), plus the method, its name, chain and
    draw columns."""
    total = 0.0
    for r in (r for r in results if not r.info.get("estimator")):
        c, d, k = r.draws.shape
        flat = r.draws.reshape(-1)
        sample = flat[:: max(1, flat.size // 200)]  # a rerun of Compare computes it: 200 values give 0.5%
        width = float(np.mean([len(repr(float(v))) if np.isfinite(v) else 3 for v in sample])) if flat.size else 0.0
        named = len(r.method) + len(info_label(r.method, r.info or {})) + 1
        total += c * d * (named + len(str(c - 1)) + len(str(d - 1)) + 3 + k * (width + 1))
    return total


def draws_csv_label(results: Sequence) -> str:
    """The draws button's label, with the file's size where it matters: "Draws (CSV, about 69 MB)" (the
    log-linear model's 25 parameters over every method's draws gave no warning)."""
    size = draws_csv_size(results)
    if size < 1e6:
        return "Draws (CSV)"
    return f"Draws (CSV, about {size / 1e6:.0f} MB)" if size < 1e9 else f"Draws (CSV, about {size / 1e9:.1f} GB)"


def ess_full(v: float) -> str:
    """An effective sample size in full, as every sentence and Diagnostics' table write it: 381, 4,566; rounded
    down, as :func:`ess_short` rounds it (399.6 fails the verdict's 400 and must not read as 400, and a row's
    381.6 must not read 382 beside the same ESS written 381 elsewhere); "—" where there is none (NaN)."""
    return f"{math.floor(v):,}" if math.isfinite(v) else "—"


def rhat_at_most(v: float) -> str:
    """A chain's largest R-hat as the bound a verdict states ("R-hat ≤ 1.010"): rounded up to three decimals
    (1.00949 is not ≤ 1.009); "—" where there is none (NaN)."""
    return rhat_up(v) if math.isfinite(v) else "—"


def ess_short(v: float) -> str:
    """An effective sample size short enough for Compare's small "ESS bulk / tail" column: 830, 4.0k, 40k
    ("39776 / 15791" lost its leading digits there, and a wider column pushes a desktop's table past its width);
    below 1,000, where the verdict's 400 is decided, it is :func:`ess_full`'s (rounded down), and Diagnostics
    shows every ESS in full."""
    if v < 1000:
        return ess_full(v)
    return f"{math.floor(v / 100) / 10:.1f}k" if v < 10_000 else f"{math.floor(v / 1000):,}k"


def draws_and_time_per_method(table: pd.DataFrame) -> str:
    """"Naive: 4,000 draws, 0.002 s · DA-MCMC: 3,491 draws, 1.204 s · MLE (Monte Carlo EM): 0.512 s": the draws
    and the sampler's wall time behind each method's rows of a comparison table, in its order, each method named (a
    list of bare counts did not say which was whose; without the colon "Naive at plug-in n = 21 4,000" ran two
    numbers together). Compare's caption writes them once per method: the table's own time column was its last,
    cut at a 1,280 px window."""
    parts = {}
    for m, d, t in zip(table["method"], table["draws"], table["wall time (s)"]):
        said = ([f"{int(d):,} draws"] if pd.notna(d) else []) + ([f"{t:.3f} s"] if pd.notna(t) else [])
        if said:
            parts.setdefault(m, ", ".join(said))
    return " · ".join(f"{m}: {s}" for m, s in parts.items())


def formatted(table: pd.DataFrame, formats: Mapping[str, Any], missing: str = "—") -> pd.DataFrame:
    """Columns named in ``formats`` as text (a ``"{:.4g}"``-style string, or a function such as
    ``figures.labels.summary_number``), NaN shown as ``missing``: a table for reading, where "not applicable"
    should not look like a number or like None."""
    out = table.copy()
    for col, fmt in formats.items():
        if col in out.columns:
            show = fmt if callable(fmt) else fmt.format
            out[col] = [missing if (v is None or (isinstance(v, float) and math.isnan(v))) else show(v)
                        for v in table[col]]
    return out


def abc_report(result) -> dict:
    """ABC rejection's proposals, accepted draws, acceptance rate and why it stopped."""
    info = result.info
    return {"proposals": int(info.get("proposals", 0)), "accepted": int(info.get("accepted", 0)),
            "acceptance_rate": float(info.get("acceptance_rate", math.nan)),
            "stopped_by": str(info.get("stopped_by", "")), "requested": int(info.get("requested", 0))}
