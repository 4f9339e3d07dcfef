"""The one adapter to ArviZ (InferenceData conversion, NetCDF output), summaries (R-hat and ESS by
ArviZ's definitions, computed in :mod:`engine.numerics.rank_diagnostics`), the convergence verdict and file
output.

Convergence verdict (Vehtari, Gelman, Simpson, Carpenter & Bürkner 2021, "Rank-normalization,
folding, and localization")
    An MCMC result is *converged* when, for every parameter, the rank-normalised split R-hat is at
    most 1.01 and the bulk and tail effective sample sizes are at least 400; otherwise it is not, and
    the verdict lists each failed criterion with the parameter and value. With one chain R-hat is
    computed on the chain's two halves (split R-hat of one chain), so a single-chain run is judged
    too. No MCMC number travels without it: :func:`summary` puts it in
    ``DataFrame.attrs["convergence"]``, :func:`summary_dict` (summary.json) under ``convergence``.

Independent draws (exact, ABC rejection, naive, OPS)
    The MCMC criteria do not apply (``applicable`` is False, ``independent`` is True), but the
    draws still have to be enough: ``N`` independent draws have an effective sample size of ``N``, so
    the same ``ESS ≥ 400`` rule is ``N ≥ 400``. ABC rejection stopped by its time or proposal limit
    can return a handful of draws (Dirichlet n = 200 at ε = 0.5: 2 in 10 s), which no density estimate
    or 90% interval can rest on; such a result has ``converged`` False and says how many draws it has.
    OPS is the exception: its k draws are the private release itself (``info["released_samples"]``),
    so their number is a privacy choice, not a Monte Carlo error to be run down. A point estimator
    (MCEM's MLE) has no draws and no verdict.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core.kept import Kept
from ..core.results import Result, expect_result
from ..core.validation import instance, shown_value
from . import rank_diagnostics


def _arviz():
    """Import ArviZ quietly (0.23 announces its 1.0 refactor with a FutureWarning on import)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        import arviz as az
    return az

__all__ = ["to_inference_data", "summary", "draws_frame", "write_outputs", "summary_dict", "convergence",
           "Convergence", "RHAT_MAX", "ESS_MIN", "rhat_up", "json_safe"]

RHAT_MAX = 1.01
ESS_MIN = 400.0


def rhat_up(r_hat: float) -> str:
    """R-hat to three decimals, rounded up (1.00949 is "1.010": "R-hat ≤ 1.009" would be false), as the verdict's
    reasons, its message and the pages' tables write it."""
    return f"{math.ceil(round(r_hat * 1000, 6)) / 1000:.3f}"


@dataclass(frozen=True)
class Convergence:
    """The verdict on one result. ``applicable`` is True for a Markov chain (the R-hat and ESS rule);
    ``independent`` is True for independent draws, judged by their number alone (``draws``)."""

    applicable: bool
    converged: bool
    reasons: tuple[str, ...] = ()
    r_hat_max: float = float("nan")
    ess_bulk_min: float = float("nan")
    ess_tail_min: float = float("nan")
    independent: bool = False
    draws: int = 0

    @property
    def too_few(self) -> bool:
        """Independent draws too few for a density or an interval (fewer than ``ESS_MIN``)."""
        return self.independent and not self.converged

    def as_dict(self) -> dict:
        clean = (lambda v: None if not math.isfinite(v) else float(v))
        return {"applicable": self.applicable, "converged": self.converged, "reasons": list(self.reasons),
                "r_hat_max": clean(self.r_hat_max), "ess_bulk_min": clean(self.ess_bulk_min),
                "ess_tail_min": clean(self.ess_tail_min), "independent": self.independent, "draws": self.draws,
                "criteria": {"r_hat_max": RHAT_MAX, "ess_bulk_min": ESS_MIN, "ess_tail_min": ESS_MIN}}

    def message(self, label: str) -> str:
        """One line for people: the verdict, and when it fails what failed and what to do."""
        if self.too_few:  # what raises them: ABC's limits too; exact or auto where this is not already one
            limits = " or its time and proposal limits" if label == "abc_rejection" else ""
            other = "" if label in ("exact", "auto") else ", or use method exact or auto"
            return f"{label} has too few draws: " + "; ".join(self.reasons) + f". Raise its draws{limits}{other}."
        if not self.applicable:
            return f"{label}: {self.draws:,} independent draws (enough: at least {ESS_MIN:.0f})"
        if self.converged:
            ess = min(self.ess_bulk_min, self.ess_tail_min)
            # bounds stated as bounds: R-hat rounded up, the ESS down (1.00949 is not ≤ 1.009, 400.6 is ≥ 400)
            return f"{label}: converged (R-hat ≤ {rhat_up(self.r_hat_max)}, ESS ≥ {math.floor(ess)})"
        # rjmcmc is the sampler of an unknown n: pseudo_marginal would give the posterior at the plug-in n instead
        other = "" if label in ("pseudo_marginal", "auto", "rjmcmc") else \
            ", or use the pseudo-marginal sampler (method pseudo_marginal) when ε is small"
        return f"{label} has not converged: " + "; ".join(self.reasons) + ". Run more draws" + other + "."


def _is_mcmc(result: Result) -> bool:
    """MCMC methods mark their results with ``info["mcmc"] = True`` (the registry's Method adds it
    when a method declared ``mcmc=True`` forgot)."""
    return bool(result.info.get("mcmc", False))


def _rhat(x: np.ndarray) -> float:
    """Rank-normalised split R-hat; one chain is split into its two halves."""
    if x.shape[0] == 1:
        h = x.shape[1] // 2
        x = np.stack([x[0, :h], x[0, h:2 * h]])
    if x.shape[1] < 4:
        return float("nan")
    return rank_diagnostics.rhat(x)


def convergence(result: Result, table: pd.DataFrame | None = None) -> Convergence:
    """The convergence verdict of a result (see the module docstring for the criteria)."""
    expect_result(result)
    if result.info.get("estimator"):
        return Convergence(applicable=False, converged=True)
    if not _is_mcmc(result):
        n = int(result.n_chains * result.n_draws)
        enough = n >= ESS_MIN or bool(result.info.get("released_samples"))
        reasons = () if enough else (f"only {n:,} independent draws (fewer than {ESS_MIN:.0f})",)
        return Convergence(applicable=False, converged=enough, reasons=reasons, ess_bulk_min=float(n),
                           ess_tail_min=float(n), independent=True, draws=n)
    table = summary(result, verdict=False) if table is None else table
    reasons = []
    rh, eb, et = [], [], []
    for j, name in enumerate(result.param_names):
        x = result.draws[:, :, j]
        if np.ptp(x) == 0.0:
            reasons.append(f"{name} never moved")
            rh.append(float("inf")), eb.append(0.0), et.append(0.0)
            continue
        # the table's R-hat where it has one (2 or more chains: the same number, not computed twice); one chain's
        # from its two halves, as a table without the column
        r = float(table.loc[name, "r_hat"]) if x.shape[0] >= 2 and "r_hat" in table else _rhat(x)
        b, t = float(table.loc[name, "ess_bulk"]), float(table.loc[name, "ess_tail"])
        if not all(math.isfinite(v) for v in (r, b, t)):  # too few draws or non-finite ones: no number to compare
            least = "8 draws for one chain" if x.shape[0] == 1 else "4 draws per chain"
            reasons.append(f"R-hat and ESS of {name} cannot be computed from {x.shape[0]} chain"
                           f"{'' if x.shape[0] == 1 else 's'} of {x.shape[1]:,} draws (they need at least {least}, "
                           "all finite)")
            rh.append(float("inf")), eb.append(0.0), et.append(0.0)
            continue
        rh.append(r), eb.append(b), et.append(t)
        # each number rounded the way its comparison stays true (R-hat up, ESS down: "ESS 400 < 400" for 399.6
        # read as a contradiction), as the tables and Convergence.message round them
        if not (r <= RHAT_MAX):
            reasons.append(f"R-hat of {name} is {rhat_up(r)} > {RHAT_MAX}")
        if not (b >= ESS_MIN):
            reasons.append(f"bulk ESS of {name} is {math.floor(b)} < {ESS_MIN:.0f}")
        if not (t >= ESS_MIN):
            reasons.append(f"tail ESS of {name} is {math.floor(t)} < {ESS_MIN:.0f}")
    finite = lambda v, f: f(v) if v else float("nan")  # noqa: E731
    return Convergence(applicable=True, converged=not reasons, reasons=tuple(reasons),
                       r_hat_max=finite(rh, max), ess_bulk_min=finite(eb, min), ess_tail_min=finite(et, min),
                       draws=int(result.n_chains * result.n_draws))


def _var_name(param: str) -> str:
    return param.split("[")[0]


def to_inference_data(result: Result):
    """InferenceData with groups posterior, sample_stats and observed_data (ArviZ schema).

    Vector parameters (``p[0]..p[k-1]``) become one variable ``p`` with dimension ``p_dim_0``.
    """
    expect_result(result)
    az = _arviz()
    posterior = {}
    for name in dict.fromkeys(_var_name(p) for p in result.param_names):
        idx = [i for i, p in enumerate(result.param_names) if _var_name(p) == name]
        arr = result.draws[:, :, idx]
        posterior[name] = arr if "[" in result.param_names[idx[0]] else arr[:, :, 0]
    stats = {k: np.asarray(v) for k, v in result.sample_stats.items()}
    attrs = _provenance(result)
    idata = az.from_dict(posterior=posterior, sample_stats=stats or None,
                         observed_data={"s_dp": np.asarray(result.s_dp)}, attrs=attrs)
    # ArviZ 0.23 puts ``attrs`` on observed_data alone: a posterior opened from the file did not say which method
    # drew it, nor what "auto" picked
    for group in idata.groups():
        idata[group].attrs.update(attrs)
    return idata


def _provenance(result: Result) -> dict:
    """What drew a result, as NetCDF attributes (text and numbers): ``method``; for ``auto`` the method it
    ``picked``; ``representation`` (``grid`` for a numerical posterior); the ``plug_in_n`` a known-n method ran at."""
    info = result.info
    picked_info = info.get("picked_info") or {}
    attrs = {"method": result.method}
    if info.get("picked"):
        attrs["picked"] = str(info["picked"])
    representation = info.get("representation") or picked_info.get("representation")
    if isinstance(representation, str):
        attrs["representation"] = representation
    plug_in = info.get("plug_in_n", picked_info.get("plug_in_n"))
    if plug_in is not None:
        attrs["plug_in_n"] = int(plug_in)
    return attrs


def summary(result: Result, verdict: bool = True, memo: bool = True) -> pd.DataFrame:
    """mean, sd, q5, q50, q95, r_hat, ess_bulk, ess_tail, mcse_mean, mcse_q5, mcse_q95 per parameter (R-hat needs
    >= 2 chains of >= 4 draws; otherwise NaN). ``mcse_mean`` is the Monte Carlo standard error of the mean: sd /
    sqrt(ESS of the mean) for a Markov chain (ArviZ's ``mcse(method="mean")``), sd / sqrt(N) for N independent
    draws, NaN for a point estimator (its Monte Carlo error is ``info["mc_se"]``); ``mcse_q5`` and ``mcse_q95``
    those of the 5% and 95% quantiles (ArviZ's ``mcse(method="quantile")``; for independent draws at an ESS of
    N). ``attrs["convergence"]`` holds the verdict
    as a dict (:func:`convergence`). R-hat, ESS and MCSE come from :mod:`engine.numerics.rank_diagnostics`
    (ArviZ's definitions, without importing ArviZ).

    Independent draws (exact, ABC, naive, OPS: no ``info["mcmc"]``) have no R-hat (NaN) and an ESS of their
    number N, bulk and tail, as the verdict says: an estimate of R-hat or ESS from them (0.99996, 19,520 of
    20,000) is Monte Carlo noise around 1 and N, and would contradict it."""
    expect_result(result)
    if result.info.get("estimator"):
        return _estimator_table(result)
    independent = not _is_mcmc(result)
    # memo=False: computed afresh and not kept (what a summary costs: engine.studies.cost times one)
    table = _memo_table(result, independent) if memo else _table(result, independent)
    if verdict:
        table.attrs["convergence"] = convergence(result, table).as_dict()
    return table


#: the last tables computed, by what they are computed from (:func:`_table_key`): a page's rerun, auto's verdict and
#: the run's table, and every page showing the same run (each a copy out of ``st.cache_data``) summarise the same
#: draws, at 1.4 s for the log-linear model's 80 parameters over 4 x 5,000 draws
_TABLES = Kept(64)


def _memo_table(result: Result, independent: bool) -> pd.DataFrame:
    """:func:`_table` from the memo, or computed and kept there; the caller's own copy (a column it adds or an attrs
    it sets stays out of the memo)."""
    key = _table_key(result, independent)
    table = _TABLES.get(key)
    if table is None:
        table = _table(result, independent)
        _TABLES.put(key, table)
    return table.copy()


def _table_key(result: Result, independent: bool) -> tuple:
    """All a table depends on: the parameters' names, whether the draws are a Markov chain, and the draws themselves
    (their shape and a SHA-256 of their bytes: 9 ms for 4 x 5,000 x 80 draws), so equal draws in another Result (a copy
    out of a cache) find the table too and nothing else can."""
    draws = np.ascontiguousarray(result.draws)
    digest = hashlib.sha256(draws.reshape(-1).view(np.uint8)).hexdigest()
    return (tuple(result.param_names), independent, draws.shape, str(draws.dtype), digest)


def _table(result: Result, independent: bool) -> pd.DataFrame:
    """The table of :func:`summary` without its verdict."""
    rows = {}
    for j, name in enumerate(result.param_names):
        x = result.draws[:, :, j]
        flat = x.reshape(-1)
        # the three quantiles in one call and the draws sorted once for both MCSEs: the same numbers as one
        # np.quantile per probability and a sort per MCSE, in a third of the time
        q5, q50, q95 = (float(q) for q in np.quantile(flat, (0.05, 0.5, 0.95)))
        ordered = np.sort(flat)
        row = {"mean": float(flat.mean()), "sd": float(flat.std(ddof=1)) if flat.size > 1 else float("nan"),
               "q5": q5, "q50": q50, "q95": q95}
        if independent:
            row.update(r_hat=float("nan"), ess_bulk=float(flat.size), ess_tail=float(flat.size),
                       mcse_mean=row["sd"] / math.sqrt(flat.size),
                       mcse_q5=rank_diagnostics.mcse_quantile(x, 0.05, ess=flat.size, ordered=ordered),
                       mcse_q95=rank_diagnostics.mcse_quantile(x, 0.95, ess=flat.size, ordered=ordered))
            rows[name] = row
            continue
        # NaN below 4 draws, R-hat NaN below 2 chains
        row.update(rank_diagnostics.diagnose(x, quantiles=(q5, q95), ordered=ordered))
        rows[name] = row
    return pd.DataFrame.from_dict(rows, orient="index")


def _estimator_table(result: Result) -> pd.DataFrame:
    """A point estimator (mcem): mean = the estimate, sd = its standard error, q5/q95 = the 90% Wald
    interval, q50 = the estimate; no R-hat or ESS (its draws are not a posterior sample)."""
    rows = {}
    for name, m in result.info["mle"].items():
        rows[name] = {"mean": m["estimate"], "sd": m["se"], "q5": m["q5"], "q50": m["estimate"], "q95": m["q95"],
                      "r_hat": float("nan"), "ess_bulk": float("nan"), "ess_tail": float("nan"),
                      "mcse_mean": float("nan"), "mcse_q5": float("nan"), "mcse_q95": float("nan")}
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.attrs["convergence"] = Convergence(applicable=False, converged=True).as_dict()
    table.attrs["estimator"] = True
    return table


def draws_frame(result: Result) -> pd.DataFrame:
    """Long table: columns chain, draw, then one column per parameter."""
    expect_result(result)
    c, d, _ = result.draws.shape
    columns = {"chain": np.repeat(np.arange(c), d), "draw": np.tile(np.arange(d), c)}
    # built at once: a column at a time fragments the frame (pandas' PerformanceWarning past 100 parameters)
    columns.update({name: result.draws[:, :, j].reshape(-1) for j, name in enumerate(result.param_names)})
    return pd.DataFrame(columns)


def summary_dict(result: Result, warnings=()) -> dict:
    """summary.json content: per-parameter statistics, acceptance and wall time, and ``warnings`` (sentences
    for people, e.g. :func:`engine.numerics.plausibility.implausible_release`'s; the CLI says them on stderr
    too) as a list, empty when there are none."""
    s = summary(result)  # which checks ``result`` first
    # OpenDP's mean may release r = +-inf: written as the spec takes it ("inf"), not as strict JSON's null
    s_dp = [v if not math.isinf(v) else ("inf" if v > 0 else "-inf") for v in result.s_dp.tolist()]
    out = {"method": result.method, "parameters": {}, "s_dp": s_dp}
    for name, row in s.iterrows():
        out["parameters"][name] = {k: (None if not np.isfinite(v) else float(v)) for k, v in row.items()}
    info = dict(result.info)
    if "acceptance_rate" in result.sample_stats:
        acc = np.asarray(result.sample_stats["acceptance_rate"])
        out["acceptance"] = {"mean": float(acc.mean()), "min_per_chain": [float(a.min()) for a in acc],
                             "epsilon_bound": info.get("epsilon_bound")}
    elif "acceptance_rate" in info:
        out["acceptance"] = {"mean": float(info["acceptance_rate"])}
    out["convergence"] = s.attrs["convergence"]
    if info.get("unknown_n") and "n" in result.param_names:
        values, probs = np.unique(np.rint(result.flat("n")).astype(np.int64), return_counts=True)
        out["n_pmf"] = {str(int(v)): float(c) / float(probs.sum()) for v, c in zip(values, probs)}
        out["jump_acceptance"] = {"add": info.get("add_acceptance"), "delete": info.get("delete_acceptance"),
                                  "jumps_per_iteration": info.get("jumps")}
    if info.get("estimator"):
        out["mle"] = {k: dict(v) for k, v in info["mle"].items()}
        out["history"] = [dict(h) for h in info.get("history", [])]
    out["warnings"] = [str(w) for w in warnings]
    out["wall_time_s"] = float(info.get("wall_time_s", float("nan")))
    out["info"] = {k: v for k, v in info.items() if isinstance(v, (int, float, str, list, type(None), bool))
                   and k not in out}
    return json_safe(out)


def json_safe(value):
    """``value`` with every non-finite number (NaN, ±inf) as None and numpy scalars and arrays as plain Python,
    all the way down (nested dicts, lists and tuples): strict JSON has no NaN, and R's jsonlite, JavaScript's
    ``JSON.parse`` and other strict parsers refuse the bare ``NaN`` that ``json.dump`` writes by default."""
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if isinstance(value, np.ndarray):
        return json_safe(value.tolist())
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    return value


class OutputFolderError(ValueError, OSError):
    """:func:`write_outputs`' folder cannot be made or written: a ``ValueError`` in the engine's shape (``out_dir =
    '/proc/nope' is invalid: ...``) that is also an ``OSError`` with the cause's ``errno``, ``strerror`` and
    ``filename`` (as :class:`io.UnsupportedOperation` is both), so a caller catching ``OSError`` there still does:
    the CLI's ``--out = '/proc/nope' is invalid: No such file or directory`` (exit status 2) is unchanged."""

    def __str__(self) -> str:
        return str(self.args[0])


def write_outputs(result: Result, out_dir: str, warnings=()) -> None:
    """DIR/draws.csv, DIR/posterior.nc and DIR/summary.json (strict JSON: a missing number is ``null``, never
    ``NaN``; ``allow_nan=False`` makes a stray one an error here rather than in the reader's parser).
    ``warnings``: sentences for summary.json's ``warnings`` list (:func:`summary_dict`). A folder that cannot be
    made or written raises :class:`OutputFolderError` (a ``ValueError`` naming ``out_dir`` and the reason)."""
    expect_result(result)
    instance("out_dir", out_dir, (str, os.PathLike), "must be the path of a folder to write the outputs to")
    try:
        os.makedirs(out_dir, exist_ok=True)
        draws_frame(result).to_csv(os.path.join(out_dir, "draws.csv"), index=False)
        to_inference_data(result).to_netcdf(os.path.join(out_dir, "posterior.nc"))
        with open(os.path.join(out_dir, "summary.json"), "w") as fh:
            json.dump(summary_dict(result, warnings), fh, indent=2, allow_nan=False)
    except OSError as exc:
        why = exc.strerror or str(exc)
        error = OutputFolderError(f"out_dir = {shown_value(out_dir)} is invalid: must be a folder that can be "
                                  f"created and written ({why})")
        error.errno, error.strerror, error.filename = exc.errno, why, exc.filename
        raise error from exc
