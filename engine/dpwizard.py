"""dp-wizard results packages: read one, rebuild each release's noise, write one spec per analysable statistic.

A dp-wizard package (the zip of its results panel, dp-wizard 0.10) holds ``README.txt``, the executed
notebook (``STEM.ipynb`` and ``.html``), the script (``STEM.py``), the released numbers (``STEM.csv``: rows
``"column: histogram: (a, b]", count``, ``"column: mean", value``, ...) and the analysis plan (``STEM.yaml``:
epsilon, contributions, max_rows, groups and, per column, the statistic, bounds, bin count and weight). The
numbers carry no noise scales; the plan determines them.

Noise scales, derived from the plan as OpenDP 0.16 calibrates the query dp-wizard writes
(``dp.Context.compositor(privacy_unit=unit_of(contributions=c), privacy_loss=loss_of(epsilon),
split_by_weights=weights)``):

* the budget of column j is epsilon_j = epsilon w_j / sum_k w_k (``split_by_weights``);
* a histogram is ``group_by(bin).agg(dp.len())`` with the bins' keys public: one individual's c rows
  change the counts' L1 norm by at most c, so each count gets integer Laplace noise of scale t = c / epsilon_j;
  OpenDP clamps the noisy counts at 0 (``dp.len`` is unsigned), so each is a ``clip = [0, inf]`` release;
  a bin absent from the report is absent from the data (the keys are public): its count is 0;
* a mean is ``dp.mean((lo, hi))``: a sum and a length, each with epsilon_j / 2; the sum's scale is
  c max(|lo|, |hi|) / (epsilon_j / 2) (add/remove-one sensitivity), the length's c / (epsilon_j / 2).

Where OpenDP and polars are installed, :func:`opendp_scales` asks OpenDP's own ``summarize()`` for the scales of
the same queries (one context per column with its share of epsilon; no data needed), and where the executed
notebook shows the ``summarize()`` tables dp-wizard printed, those are read too: all must agree with the plan
(to 1e-6 relative: OpenDP rounds float sensitivities up by a few ulps), and the scale used is ``summarize()``'s
when present (``scale_source``).

What is analysed: a histogram, whose total n is private. It is written twice. Once as one spec,
``COLUMN_histogram.toml``: a ``dirichlet_multinomial`` over the reported bins with ``alpha = [a, ..., a]`` and
``model.n_prior = { name = "negative_binomial", mean = k a / beta, dispersion = k a }`` (k bins), no
``[n_mechanism]`` (the total is released only through the bins), the clamped OpenDP release, method
``exact``: its posterior is over p[0..k-1] and n (:mod:`engine.methods.histogram_total`). And once per bin,
the view that the app's upload loads: by the Poisson construction (paper 002, Appendix B) that prior makes
the bins independent, lambda_j ~ Gamma(a, beta) and c_j ~ Poisson(lambda_j), so bin j is a ``poisson_gamma``
spec with ``n = 1`` (a count of events), prior Gamma(a, beta), and the clamped OpenDP release; p = lambda /
sum lambda and n = sum c_j over the bins' independent posteriors give the histogram spec's posterior. The
known fact that a present bin has count >= 1 (its key was seen) is not used (it matters only for a release
within a few noise scales of 0; such bins are flagged ``near_zero``).

A mean is analysed too, as one spec ``COLUMN_mean.toml``: ``dp.mean`` releases only the ratio r = sum / length
(the report, the executed notebook and its html hold that one number; the plan and the notebook's
``summarize()`` give the two scales, ``sum_scale`` and ``length_scale`` in ``import.json``), so the spec is the
ratio's own law, ``[release] library = "opendp", mechanism = "mean", sum_scale, length_scale, bounds = [lo, hi]``
(:mod:`engine.mechanisms.ratio`), over ``normal_known_sd`` records clamped to [lo, hi] with an assumed sd
(``mean_sd``, default (hi - lo) / 4), prior mu ~ Normal((lo + hi) / 2, (hi - lo) / 4) (95% inside the bounds),
``model.n_prior`` a negative binomial centred on the released total of a histogram of the same table when the
package has one (mean T, variance T + 2 k t^2: the total's noise), else of mean max_rows / 2 and dispersion 1; no
``[n_mechanism]`` (n is released only inside the ratio); method ``pseudo_marginal`` (an exact chain on (mu, n),
:mod:`engine.methods.mean_ratio`), whose draws include the clamped mean E[clip(X, lo, hi)].

What is not analysed, and why (``import.json`` names each): a median (a quantile by noisy
candidate scores, not an additive release), grouped statistics (per-group releases, thresholded when the groups'
keys are not public: the released groups themselves depend on the noise), synthetic data (a contingency table
fitted by MBI).
"""
from __future__ import annotations

import csv
import io
import json
import math
import os
import re
import zipfile
from dataclasses import dataclass, field
from typing import Any

from .core.spec import spec_to_toml
from .numerics.diagnostics import json_safe
from .core.validation import fail, model_positive, positive, seed_value
from .mechanisms.libraries import release_from
from .spec import spec_from_dict

__all__ = ["DpWizardPackage", "read_package", "import_dpwizard", "plan_scales", "opendp_scales"]

_BIN = re.compile(r"^(?P<column>.+): histogram: (?P<bin>.+)$")
_MEAN = re.compile(r"^(?P<column>.+): mean$")


@dataclass(frozen=True)
class DpWizardPackage:
    """What a package says: the plan (plain data), the report rows and the notebook's summarize() scales."""

    stem: str
    plan: dict
    report: tuple                    # ((key, value as text), ...) in file order
    notebook_scales: dict = field(default_factory=dict)  # {(column, aggregate): [scale, ...]} in notebook order


def _yaml_plan(text: str, path: str) -> dict:
    """The plan from dp-wizard's YAML: python/object tags become plain mappings, dp-wizard's scalar tags
    (!ColumnName, !StatisticName, !Product) plain strings. PyYAML is imported here only."""
    try:
        import yaml  # third-party, lazily: only this importer needs it
    except ImportError:  # pragma: no cover - PyYAML comes with dask in requirements.txt
        fail("PACKAGE", path, "needs PyYAML to read the plan (pip install pyyaml)")

    class Loader(yaml.SafeLoader):
        pass

    def mapping(loader, suffix, node):  # a python object: its fields, and its class (polars dtypes have no fields)
        fields = loader.construct_mapping(node, deep=True) if isinstance(node, yaml.MappingNode) else {}
        return {**fields, "__class__": suffix}

    def scalar(loader, suffix, node):
        return loader.construct_scalar(node)

    Loader.add_multi_constructor("tag:yaml.org,2002:python/object:", mapping)
    Loader.add_multi_constructor("!", scalar)
    try:
        doc = yaml.load(text, Loader=Loader)
    except yaml.YAMLError as exc:  # one line: what the parser found and where
        where = getattr(exc, "problem_mark", None)
        at = f" at line {where.line + 1}, column {where.column + 1}" if where is not None else ""
        what = getattr(exc, "problem", None) or type(exc).__name__
        fail("PACKAGE", path, f"holds a plan that is not valid YAML ({what}{at})")
    if not isinstance(doc, dict) or not isinstance(doc.get("analysis_plan"), dict):
        fail("PACKAGE", path, "holds a .yaml without an analysis_plan (is it a dp-wizard package?)")
    return doc["analysis_plan"]


def _notebook_scales(text: str) -> dict:
    """{(column, aggregate): [scale, ...]} from the summarize() tables printed in the executed notebook (a
    histogram's count shows as column "count", so several histograms share a key)."""
    out = {}
    try:
        nb = json.loads(text)
    except json.JSONDecodeError:
        return out
    for cell in nb.get("cells", []):
        for o in cell.get("outputs", []) if cell.get("cell_type") == "code" else []:
            plain = o.get("data", {}).get("text/plain") or o.get("text") or ""
            plain = "".join(plain) if isinstance(plain, list) else plain
            if "┆ scale" not in plain:
                continue
            for line in plain.splitlines():
                cells = [c.strip() for c in line.strip().strip("│").split("┆")]
                if len(cells) >= 4 and ("Laplace" in cells[2] or "Gaussian" in cells[2]):
                    try:
                        out.setdefault((cells[0], cells[1]), []).append(float(cells[3]))
                    except ValueError:
                        pass
    return out


def read_package(path: str) -> DpWizardPackage:
    """Read a dp-wizard results zip (module docstring); ``ValueError`` naming the package when it is not one."""
    if not os.path.isfile(path):
        fail("PACKAGE", path, "must be an existing dp-wizard results .zip")
    try:
        zf = zipfile.ZipFile(path)
    except zipfile.BadZipFile:
        fail("PACKAGE", path, "must be a .zip file (dp-wizard's results package)")
    with zf:
        names = [n for n in zf.namelist() if not n.endswith("/")]
        yamls = [n for n in names if n.endswith(".yaml")]
        csvs = [n for n in names if n.endswith(".csv") and not n.endswith(".contingency.csv")]
        if len(yamls) != 1 or len(csvs) != 1:
            fail("PACKAGE", path, f"must hold one .yaml (the plan) and one .csv (the report); it holds {names}")
        stem = os.path.basename(yamls[0])[:-5]
        plan = _yaml_plan(_text(zf, yamls[0], path), path)
        report = tuple((row[0], row[1]) for row in csv.reader(io.StringIO(_text(zf, csvs[0], path))) if len(row) >= 2)
        nb = [n for n in names if n.endswith(".ipynb") and not n.endswith(".unexecuted.ipynb")]
        scales = _notebook_scales(_text(zf, nb[0], path)) if nb else {}
    return DpWizardPackage(stem=stem, plan=plan, report=report, notebook_scales=scales)


def _text(zf: zipfile.ZipFile, name: str, path: str) -> str:
    """One file of the package as text; a file that is not UTF-8 is refused by name."""
    try:
        return zf.read(name).decode("utf-8")
    except UnicodeDecodeError as exc:
        fail("PACKAGE", path, f"holds {name}, which is not UTF-8 text (byte {exc.start}): is it the file dp-wizard "
                              "wrote?")


def _number(field_: str, value: Any, path: str, positive: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or (positive and not value > 0):
        fail(f"PACKAGE.{field_}", value, f"must be a finite number{' > 0' if positive else ''} in the plan of {path}")
    return float(value)


def plan_scales(plan: dict, path: str = "PACKAGE") -> dict:
    """{column: {"statistic", "epsilon", and the scales}} from the plan alone (module docstring)."""
    eps = _number("epsilon", plan.get("epsilon"), path, positive=True)
    c = _number("contributions", plan.get("contributions", 1), path, positive=True)
    columns = plan.get("analysis_columns") or {}
    if not isinstance(columns, dict) or not columns:
        fail("PACKAGE.analysis_columns", columns, "must list at least one analysed column")
    firsts = {name: (specs[0] if isinstance(specs, list) and specs else specs) for name, specs in columns.items()}
    total = sum(_number(f"{n}.weight", f.get("weight", 1), path, positive=True) for n, f in firsts.items())
    out = {}
    for name, col in firsts.items():
        eps_j = eps * _number(f"{name}.weight", col.get("weight", 1), path, positive=True) / total
        stat = str(col.get("statistic_name"))
        lo, hi = _number(f"{name}.lower_bound", col.get("lower_bound"), path), \
            _number(f"{name}.upper_bound", col.get("upper_bound"), path)
        if not hi > lo:
            fail(f"PACKAGE.{name}.upper_bound", col.get("upper_bound"),
                 f"must be above its lower_bound ({col.get('lower_bound')}) in the plan of {path}")
        entry = {"statistic": stat, "epsilon": eps_j, "lower": lo, "upper": hi, "contributions": c}
        if stat == "Histogram":
            entry["count_scale"] = c / eps_j
        elif stat == "Mean":
            entry["sum_scale"] = c * max(abs(lo), abs(hi)) / (eps_j / 2)
            entry["length_scale"] = c / (eps_j / 2)
        out[str(name)] = entry
    return out


def opendp_scales(plan: dict) -> dict | None:
    """{(column, aggregate): scale} from OpenDP's own ``summarize()`` of the queries dp-wizard writes, one
    context per column with that column's share of epsilon (no data needed: a one-row frame of the plan's
    schema); None when OpenDP or polars is not installed (third-party imports, lazily here only)."""
    try:
        import warnings

        import opendp.prelude as dp
        import polars as pl
    except ImportError:
        return None
    dp.enable_features("contrib")
    schema = {}
    for name, dtype in (plan.get("schema_columns") or {}).items():
        cls = str(dtype.get("__class__", "")) if isinstance(dtype, dict) else ""
        schema[str(name)] = getattr(pl, cls.rsplit(".", 1)[-1], pl.Float64) if cls.startswith("polars.") else pl.Float64
    out = {}
    for column, entry in plan_scales(plan).items():
        if entry["statistic"] not in ("Histogram", "Mean"):
            continue
        frame = pl.LazyFrame({c: [0] for c in schema}, schema=schema)
        margins = [dp.polars.Margin(by=[], max_length=int(plan.get("max_rows") or 10**6), max_groups=100)]
        if entry["statistic"] == "Histogram":
            frame = frame.with_columns(pl.col(column).cut([entry["lower"], entry["upper"]]).alias("_bin")
                                       .cast(pl.String))
            margins.append(dp.polars.Margin(by=["_bin"], invariant="keys"))
        ctx = dp.Context.compositor(data=frame, privacy_unit=dp.unit_of(contributions=int(entry["contributions"])),
                                    privacy_loss=dp.loss_of(epsilon=entry["epsilon"], delta=0), split_evenly_over=1,
                                    margins=margins)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # dp.len's clamp at 0 announces a future default
            if entry["statistic"] == "Histogram":
                table = ctx.query().group_by("_bin").agg(dp.len()).summarize()
            else:
                table = ctx.query().select(pl.col(column).cast(pl.Float64)
                                           .dp.mean((entry["lower"], entry["upper"]))).summarize()
        for agg, sc in zip(table["aggregate"], table["scale"]):
            out[(column, agg)] = float(sc)
    return out


def _not_analysed(column, stat, why) -> dict:
    return {"column": column, "statistic": stat, "analysed": False, "why": why}


def import_dpwizard(path: str, out: str, *, prior_alpha: float = 1.0, prior_rate: float | None = None,
                    seed: int = 0, use_opendp: bool = True, mean_sd: float | None = None) -> dict:
    """Read a dp-wizard package and write one spec per analysable statistic into ``out`` (module docstring),
    plus ``import.json`` (every statistic: its scales, where they came from, its specs or why it is not
    analysed). ``prior_alpha`` and ``prior_rate`` are the Gamma(alpha, rate) prior on each histogram bin's
    expected count (default rate: bins / max_rows, a prior mean of max_rows / bins per bin); ``use_opendp``
    asks OpenDP's ``summarize()`` where it is installed; ``mean_sd`` is the records' sd assumed for a mean
    (default (upper - lower) / 4). Returns the summary written to ``import.json``."""
    if mean_sd is not None:
        positive("mean_sd", mean_sd)
        model_positive("model.sd", mean_sd)  # the mean's spec field: out of range, it failed after the bins' specs
    model_positive("model.alpha", prior_alpha)  # checked before anything is written (the specs' own fields)
    if prior_rate is not None:
        model_positive("model.beta", prior_rate)
    seed_value(seed)  # written into every spec, checked like a spec's
    if not isinstance(out, (str, os.PathLike)) or os.path.isfile(out):
        fail("out", out, "must be a directory to write the specs into (not an existing file)")
    pkg = read_package(path)
    plan = pkg.plan
    scales = plan_scales(plan, path)
    product = str(plan.get("product", "STATISTICS")).upper()
    groups = plan.get("groups") or {}
    report = dict(pkg.report)
    rebuilt = opendp_scales(plan) if use_opendp and product == "STATISTICS" and not groups else None
    os.makedirs(out, exist_ok=True)
    summary = {"package": os.path.basename(path), "stem": pkg.stem, "epsilon": plan.get("epsilon"),
               "contributions": plan.get("contributions"), "statistics": []}
    pending = []
    if product != "STATISTICS":
        summary["statistics"].append(_not_analysed("*", product, "synthetic data (a contingency table fitted by MBI) "
                                                   "has no additive release to analyse"))
    for column, entry in scales.items():
        stat = entry["statistic"]
        if product != "STATISTICS":
            break
        if groups:
            summary["statistics"].append(_not_analysed(column, stat, "grouped by " + ", ".join(map(str, groups)) +
                                                       ": per-group releases (thresholded where the keys are not "
                                                       "public) are not analysed by this importer"))
            continue
        if stat == "Histogram":
            summary["statistics"].append(_histogram(pkg, column, entry, report, out, prior_alpha, prior_rate, seed,
                                                    rebuilt))
        elif stat == "Mean":
            pending.append((len(summary["statistics"]), column, entry))  # after the histograms: n's prior
            summary["statistics"].append(None)
        else:
            summary["statistics"].append(_not_analysed(column, stat, "a quantile chosen by noisy candidate scores "
                                                       "is not an additive release" if stat == "Median" else
                                                       f"statistic {stat!r} is not known to this importer"))
    for i, column, entry in pending:
        summary["statistics"][i] = _mean(pkg, column, entry, report, out, seed, rebuilt, summary, mean_sd)
    with open(os.path.join(out, "import.json"), "w") as fh:
        json.dump(json_safe(summary), fh, indent=2, allow_nan=False)  # strict JSON: null for a missing number
    return summary


def _histogram(pkg, column, entry, report, out, prior_alpha, prior_rate, seed, opendp=None) -> dict:
    bins = [(m.group("bin"), float(v)) for k, v in pkg.report if (m := _BIN.match(k)) and m.group("column") == column]
    if not bins:
        return _not_analysed(column, "Histogram", "no histogram rows for this column in the report")
    shown = pkg.notebook_scales.get(("count", "Frame Length"), []) + pkg.notebook_scales.get((column, "Frame Length"), [])
    scale, source = _checked_scale(column, "Frame Length", entry["count_scale"], opendp, shown, label="count",
                                   statistic="histogram")
    n_cells = max(len(bins), 1)
    max_rows = float(pkg.plan.get("max_rows") or 1e6)
    rate = prior_rate if prior_rate is not None else n_cells / max_rows
    release = {"library": "opendp", "mechanism": "laplace", "domain": "int", "scale": scale, "clip": [0, math.inf],
               "sensitivity": entry["contributions"]}
    specs = []
    for j, (label, count) in enumerate(bins):
        spec = {"seed": seed + j, "model": {"name": "poisson_gamma", "n": 1, "alpha": prior_alpha, "beta": rate},
                "release": release, "data": {"s_dp": [count]}, "method": {"name": "exact", "draws": 4000}}
        checked = spec_from_dict(spec)
        fname = f"{_slug(column)}_bin{j}.toml"
        with open(os.path.join(out, fname), "w") as fh:
            fh.write(f"# dp-wizard {pkg.stem}: column {column!r}, bin {label}: the bin's count, analysed as a\n"
                     f"# Poisson count with a Gamma prior on its expected value (engine.dpwizard)\n")
            fh.write(spec_to_toml(checked))
        specs.append({"bin": label, "released": count, "spec": fname, "near_zero": count < 5 * scale})
    histogram = _histogram_spec(pkg, column, bins, release, prior_alpha, rate, seed, out)
    return {"column": column, "statistic": "Histogram", "analysed": True, "epsilon": entry["epsilon"],
            "count_scale": scale, "scale_source": source, "plan_count_scale": entry["count_scale"],
            "histogram_spec": histogram,
            "mapping": release_from(**{k: v for k, v in release.items()}).sentence, "bins": specs,
            "prior": {"alpha": prior_alpha, "rate": rate},
            "note": "bins absent from the report are absent from the data (public keys): their count is 0"}


def _checked_scale(column, agg, plan_value, opendp, shown, *, label: str | None = None,
                   statistic: str = "mean") -> tuple[float, str]:
    """A scale from the plan, replaced by OpenDP's summarize() and the notebook's where they agree with it
    (``agg``: summarize()'s aggregate, named ``label`` in the messages; ``statistic``: what it released)."""
    label = label or agg
    scale, source = plan_value, "plan"
    rebuilt = (opendp or {}).get((column, agg))
    if rebuilt is not None:
        if abs(rebuilt - scale) > 1e-6 * scale:
            fail(f"PACKAGE.{column}", rebuilt, f"is OpenDP's summarize() {label} scale; the plan gives {scale:g}")
        scale, source = rebuilt, "OpenDP summarize()"
    match = [v for v in shown if abs(v - scale) <= 1e-6 * scale]
    if match:
        scale, source = match[0], "notebook summarize()" + (" and OpenDP summarize()" if rebuilt is not None else "")
    elif shown:
        fail(f"PACKAGE.{column}", shown, f"are the notebook's {label} scales; the plan gives {scale:g}: the package "
             f"does not say how its {statistic} was released")
    return scale, source


def _size_prior(pkg, summary) -> tuple[dict, str]:
    """The prior on n for a mean: from a histogram of the same table when the package has one (its released total
    T and the total's noise variance 2 k t^2 over k bins: a negative binomial of mean T and variance T + 2 k t^2,
    dispersion T^2 / (2 k t^2) to six significant digits), else a geometric-like negative binomial of mean
    max_rows / 2, dispersion 1."""
    for stat in summary["statistics"]:
        if stat.get("statistic") == "Histogram" and stat.get("analysed"):
            total = max(sum(max(b["released"], 0.0) for b in stat["bins"]), 1.0)
            noise_var = 2.0 * len(stat["bins"]) * stat["count_scale"] ** 2
            # six significant digits: a prior's setting a person reads in the sidebar's box (5955.59, not
            # 5955.592592592592); the variance it gives differs by a millionth
            dispersion = float(f"{total**2 / noise_var:.6g}")
            return ({"name": "negative_binomial", "mean": total, "dispersion": dispersion},
                    f"the released total of the {stat['column']!r} histogram ({total:g}, noise variance "
                    f"{noise_var:g}): the same table's rows")
    max_rows = float(pkg.plan.get("max_rows") or 1e6)
    return ({"name": "negative_binomial", "mean": max_rows / 2.0, "dispersion": 1.0},
            f"max_rows = {max_rows:g} (no histogram of the table in the package): a wide prior")


def _mean(pkg, column, entry, report, out, seed, opendp, summary, mean_sd) -> dict:
    """A mean as one spec, ``COLUMN_mean.toml`` (module docstring)."""
    key = f"{column}: mean"
    lo, hi = entry["lower"], entry["upper"]
    base = {"column": column, "statistic": "Mean", "epsilon": entry["epsilon"], "plan_sum_scale": entry["sum_scale"],
            "plan_length_scale": entry["length_scale"]}
    if key not in report:
        return {**base, **_not_analysed(column, "Mean", "no mean row for this column in the report")}
    r = float(report[key])
    sum_scale, src_sum = _checked_scale(column, "Sum", entry["sum_scale"], opendp,
                                        pkg.notebook_scales.get((column, "Sum"), []))
    length_scale, src_len = _checked_scale(column, "Length", entry["length_scale"], opendp,
                                           pkg.notebook_scales.get((column, "Length"), []))
    sd = float(mean_sd) if mean_sd is not None else (hi - lo) / 4.0
    n_prior, n_source = _size_prior(pkg, summary)
    release = {"library": "opendp", "mechanism": "mean", "sum_scale": sum_scale, "length_scale": length_scale,
               "bounds": [lo, hi], "contributions": int(entry["contributions"])}
    spec = {"seed": seed, "model": {"name": "normal_known_sd", "sd": sd, "lo": lo, "hi": hi,
                                    "prior_mean": (lo + hi) / 2.0, "prior_sd": (hi - lo) / 4.0, "n_prior": n_prior},
            "release": release, "data": {"s_dp": [r]},
            "method": {"name": "pseudo_marginal", "chains": 4, "draws": 2000, "warmup": 1000}}
    checked = spec_from_dict(spec)
    fname = f"{_slug(column)}_mean.toml"
    with open(os.path.join(out, fname), "w") as fh:
        fh.write(f"# dp-wizard {pkg.stem}: column {column!r}, its mean released as one number, sum / length (OpenDP\n"
                 f"# dp.mean): normal records clamped to [{lo:g}, {hi:g}] with sd {sd:g} (assumed), n private with a\n"
                 f"# prior from {n_source};\n# pseudo_marginal draws mu, n and the clamped mean (engine.dpwizard)\n")
        fh.write(spec_to_toml(checked))
    source = src_sum if src_sum == src_len else f"Sum: {src_sum}; Length: {src_len}"
    return {**base, "analysed": True, "spec": fname, "released_mean": r, "sum_scale": sum_scale,
            "length_scale": length_scale, "scale_source": source,
            "bins": [],  # a mean has no bins (a reader that lists bins of every analysed statistic lists none)
            "opendp": {k[1]: v for k, v in (opendp or {}).items() if k[0] == column},
            "notebook": {k[1]: v[0] for k, v in pkg.notebook_scales.items() if k[0] == column},
            "mapping": release_from(**release).sentence, "records_sd": sd, "n_prior": n_prior,
            "n_prior_source": n_source,
            "note": "the posterior is over mu (the records' normal mean), n and clamped_mean = E[clip(X, lo, hi)] (the "
                    "column's mean); the records' sd is assumed (mean_sd), the budget split between the sum and the "
                    "length is OpenDP's (half each)"}


def _histogram_spec(pkg, column, bins, release, prior_alpha, rate, seed, out) -> str:
    """The histogram as one dirichlet_multinomial spec with a private total (module docstring); its file name."""
    k = len(bins)
    spec = {"seed": seed, "model": {"name": "dirichlet_multinomial", "alpha": [prior_alpha] * k,
                                    "n_prior": {"name": "negative_binomial", "mean": k * prior_alpha / rate,
                                                "dispersion": k * prior_alpha}},
            "release": release, "data": {"s_dp": [count for _, count in bins]},
            "method": {"name": "exact", "draws": 4000}}
    checked = spec_from_dict(spec)
    fname = f"{_slug(column)}_histogram.toml"
    with open(os.path.join(out, fname), "w") as fh:
        fh.write(f"# dp-wizard {pkg.stem}: column {column!r}, the histogram over bins "
                 + ", ".join(label for label, _ in bins) + ",\n# with its total private: p over the bins and n "
                 "(engine.dpwizard, engine.methods.histogram_total)\n")
        fh.write(spec_to_toml(checked))
    return fname


def _slug(name: str) -> str:
    return re.sub(r"\W+", "_", str(name)).strip("_").lower() or "column"
