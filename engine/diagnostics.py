"""The one adapter to ArviZ: InferenceData conversion, summaries (R-hat, ESS) and file output."""
from __future__ import annotations

import json
import os

import numpy as np
import pandas as pd

from .results import Result


def _arviz():
    """Import ArviZ quietly (0.23 announces its 1.0 refactor with a FutureWarning on import)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        import arviz as az
    return az

__all__ = ["to_inference_data", "summary", "draws_frame", "write_outputs", "summary_dict"]


def _var_name(param: str) -> str:
    return param.split("[")[0]


def to_inference_data(result: Result):
    """InferenceData with groups posterior, sample_stats and observed_data (ArviZ schema).

    Vector parameters (``p[0]..p[k-1]``) become one variable ``p`` with dimension ``p_dim_0``.
    """
    az = _arviz()
    posterior = {}
    for name in dict.fromkeys(_var_name(p) for p in result.param_names):
        idx = [i for i, p in enumerate(result.param_names) if _var_name(p) == name]
        arr = result.draws[:, :, idx]
        posterior[name] = arr if "[" in result.param_names[idx[0]] else arr[:, :, 0]
    stats = {k: np.asarray(v) for k, v in result.sample_stats.items()}
    return az.from_dict(posterior=posterior, sample_stats=stats or None,
                        observed_data={"s_dp": np.asarray(result.s_dp)},
                        attrs={"method": result.method})


def summary(result: Result) -> pd.DataFrame:
    """mean, sd, q5, q50, q95, r_hat, ess_bulk, ess_tail per parameter (R-hat needs >= 2 chains
    of >= 4 draws; otherwise NaN)."""
    az = _arviz()

    rows = {}
    for j, name in enumerate(result.param_names):
        x = result.draws[:, :, j]
        flat = x.reshape(-1)
        row = {"mean": float(flat.mean()), "sd": float(flat.std(ddof=1)) if flat.size > 1 else float("nan"),
               "q5": float(np.quantile(flat, 0.05)), "q50": float(np.quantile(flat, 0.5)),
               "q95": float(np.quantile(flat, 0.95))}
        enough = x.shape[1] >= 4
        row["r_hat"] = float(az.rhat(x)) if (x.shape[0] >= 2 and enough) else float("nan")
        row["ess_bulk"] = float(az.ess(x, method="bulk")) if enough else float("nan")
        row["ess_tail"] = float(az.ess(x, method="tail")) if enough else float("nan")
        rows[name] = row
    return pd.DataFrame.from_dict(rows, orient="index")


def draws_frame(result: Result) -> pd.DataFrame:
    """Long table: columns chain, draw, then one column per parameter."""
    c, d, _ = result.draws.shape
    frame = pd.DataFrame({"chain": np.repeat(np.arange(c), d), "draw": np.tile(np.arange(d), c)})
    for j, name in enumerate(result.param_names):
        frame[name] = result.draws[:, :, j].reshape(-1)
    return frame


def summary_dict(result: Result) -> dict:
    """summary.json content: per-parameter statistics, acceptance and wall time."""
    s = summary(result)
    out = {"method": result.method, "parameters": {}, "s_dp": result.s_dp.tolist()}
    for name, row in s.iterrows():
        out["parameters"][name] = {k: (None if not np.isfinite(v) else float(v)) for k, v in row.items()}
    info = dict(result.info)
    if "acceptance_rate" in result.sample_stats:
        acc = np.asarray(result.sample_stats["acceptance_rate"])
        out["acceptance"] = {"mean": float(acc.mean()), "min_per_chain": [float(a.min()) for a in acc],
                             "epsilon_bound": info.get("epsilon_bound")}
    elif "acceptance_rate" in info:
        out["acceptance"] = {"mean": float(info["acceptance_rate"])}
    out["wall_time_s"] = float(info.get("wall_time_s", float("nan")))
    out["info"] = {k: v for k, v in info.items() if isinstance(v, (int, float, str, list, type(None), bool))}
    return out


def write_outputs(result: Result, out_dir: str) -> None:
    """DIR/draws.csv, DIR/posterior.nc and DIR/summary.json."""
    os.makedirs(out_dir, exist_ok=True)
    draws_frame(result).to_csv(os.path.join(out_dir, "draws.csv"), index=False)
    to_inference_data(result).to_netcdf(os.path.join(out_dir, "posterior.nc"))
    with open(os.path.join(out_dir, "summary.json"), "w") as fh:
        json.dump(summary_dict(result), fh, indent=2)
