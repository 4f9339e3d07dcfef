"""Widget values as one frozen record, and its two outside forms: the engine's spec dict and the URL.

A :class:`Scenario` is what the sidebar shows: model, prior, mechanism and budget, data source,
seed, which methods run and their settings. Free-text fields (a list of released values, a
Dirichlet prior, a vector of true probabilities) are kept exactly as typed, so a bad entry stays
in its box; they are parsed only when the spec is built, and a bad one raises ``ValueError``
naming the spec field, the value and what is allowed (the engine's error shape).

Nothing here imports streamlit; tests call these functions directly.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, fields
from typing import Any, Mapping

from engine.models import MODEL_NAMES as _ENGINE_MODELS

__all__ = [
    "Scenario",
    "MODELS",
    "MECHANISMS",
    "METHODS",
    "DEFAULT_METHODS",
    "DATA_SOURCES",
    "METHOD_LABELS",
    "BUDGET_FORMS",
    "DEFAULT_PRIORS",
    "SAMPLE_SIZES",
    "N_PRIORS",
    "N_MECHANISMS",
    "N_BUDGET_FORMS",
    "UNKNOWN_N_MODELS",
    "budget_forms",
    "truth_key",
    "default_truth",
    "default_truth_p",
    "PRIOR_KINDS",
    "record_columns",
    "parse_numbers",
    "parse_matrix",
    "regression_defaults",
    "APP_MODELS",
    "to_spec_dict",
    "model_table",
    "mechanism_table",
    "n_prior_table",
    "n_mechanism_table",
    "parse_n_dp",
    "method_settings",
    "to_query",
    "from_query",
    "log_grid",
    "parse_grid",
    "result_label",
]

#: The models the app knows, in sidebar order; offered only when the engine can run them (a model the
#: engine does not have yet stays hidden rather than failing on every run).
APP_MODELS = ("beta_binomial", "poisson_gamma", "dirichlet_multinomial", "normal_known_sd", "naive_bayes_loglinear",
              "linear_regression")
MODELS = tuple(m for m in APP_MODELS if m in _ENGINE_MODELS)
MECHANISMS = ("laplace", "gaussian", "discrete_laplace", "discrete_gaussian", "randomized_response")
METHODS = ("naive", "da_mcmc", "abc_rejection", "ops", "exact", "pseudo_marginal", "auto", "bernstein_sheldon",
           "rjmcmc", "mcem")
#: Switched on when the app opens: the baseline that fails, the best exact method (``auto``: the closed
#: form or numerical grid where one exists, else the faster-mixing exact sampler) and the papers' samplers.
DEFAULT_METHODS = ("naive", "da_mcmc", "abc_rejection", "ops", "auto")
DATA_SOURCES = ("simulate", "csv", "s_dp")
METHOD_LABELS = {
    "naive": "Naive",
    "da_mcmc": "DA-MCMC",
    "abc_rejection": "ABC rejection",
    "ops": "OPS",
    "exact": "Exact (closed form)",
    "pseudo_marginal": "Pseudo-marginal",
    "auto": "Exact (best method)",
    "bernstein_sheldon": "Bernstein–Sheldon (approximate)",
    "rjmcmc": "RJMCMC (unknown n)",
    "mcem": "MLE (Monte Carlo EM)",
    "confidential": "Confidential data",
}
#: Is the number of records known, or private and released with noise (``n_dp``, paper 002)?
SAMPLE_SIZES = ("known", "unknown")
#: ``model.n_prior`` names and the size mechanisms the sidebar offers (``[n_mechanism]``), stated by
#: a budget epsilon (sensitivity 1: one record more or less moves n by one) or by the noise scale.
N_PRIORS = ("poisson", "negative_binomial")
N_MECHANISMS = ("laplace", "discrete_laplace")
N_BUDGET_FORMS = ("epsilon", "scale")
#: The models the engine accepts an unknown n for (the Dirichlet tables have a fixed n).
UNKNOWN_N_MODELS = ("beta_binomial", "poisson_gamma", "normal_known_sd")

# How each mechanism's budget can be stated. "k_ary" and "coin" are the two randomized-response
# constructions (epsilon, or the coin scheme's truth probability).
BUDGET_FORMS = {
    "laplace": ("epsilon",),
    "discrete_laplace": ("epsilon",),
    "gaussian": ("rho", "epsilon_delta"),
    "discrete_gaussian": ("rho",),
    "randomized_response": ("k_ary", "coin"),
}

DEFAULT_PRIORS: dict[str, dict[str, Any]] = {
    "beta_binomial": {"a": 1.0, "b": 1.0},
    "poisson_gamma": {"alpha": 1.0, "beta": 1.0, "upper": None},
    "dirichlet_multinomial": {"alpha": "1, 1, 1"},
    "normal_known_sd": {"sd": 1.0, "lo": -3.0, "hi": 3.0, "prior_mean": 0.0, "prior_sd": 10.0},
    "naive_bayes_loglinear": {"class_levels": 2, "feature_levels": "2, 2", "alpha": 2.0},
    # paper 000 Sec. 5 / dapper Example 3: x ~ N((0.9, -1.17), I), sigma^2 = 2, clamp [-10, 10], beta ~ N(0, 2^2)
    "linear_regression": {"p": 2, "x_mean": "0.9, -1.17", "x_cov": "1, 0; 0, 1", "sigma": math.sqrt(2.0),
                          "lo": "-10", "hi": "10", "prior_sd": 2.0},
}
#: paper 000 Sec. 5's true coefficients (beta_0, beta_1, beta_2), the default simulation at p = 2.
REGRESSION_BETA = "-1.79, -2.89, -0.66"
#: How each prior field is typed: "text" (a list, kept exactly as typed and parsed when the spec is
#: built), "int" or "float" (a number box); fields not listed are floats.
PRIOR_KINDS: dict[tuple[str, str], str] = {
    ("dirichlet_multinomial", "alpha"): "text",
    ("poisson_gamma", "upper"): "int",
    ("naive_bayes_loglinear", "class_levels"): "int",
    ("naive_bayes_loglinear", "feature_levels"): "text",
    ("linear_regression", "p"): "int",
    ("linear_regression", "x_mean"): "text",
    ("linear_regression", "x_cov"): "matrix",
    ("linear_regression", "lo"): "bounds",
    ("linear_regression", "hi"): "bounds",
}

_TRUTH_KEYS = {"beta_binomial": "theta", "poisson_gamma": "lam", "dirichlet_multinomial": "p",
               "normal_known_sd": "mu", "naive_bayes_loglinear": "pi", "linear_regression": "beta"}
_NUMBER = re.compile(r"[,;\s]+")


@dataclass(frozen=True)
class Scenario:
    """Everything the sidebar holds. Defaults are the demo scenario of the Compare page
    (``engine.DEMO_SPEC``; a test keeps the two equal)."""

    model: str = "beta_binomial"
    n: int = 40
    prior: tuple[tuple[str, Any], ...] = (("a", 1.0), ("b", 1.0))
    mechanism: str = "laplace"
    budget_form: str = "epsilon"
    epsilon: float = 0.3
    rho: float = 0.5
    delta: float = 1e-6
    truth_prob: float = 0.5
    sensitivity: float | None = None  # None: the model's default sensitivity
    data: str = "simulate"
    truth: str = "0.3"  # the true parameter as typed (naive_bayes_loglinear: pi)
    truth_p: str = ""  # naive_bayes_loglinear: the true p, flat in the order p[k][i][j] (j fastest)
    from_prior: bool = False  # naive_bayes_loglinear: simulate = { from_prior = true }
    seed: int = 7
    s_dp: str = ""
    csv_column: str = ""
    methods: tuple[str, ...] = DEFAULT_METHODS
    chains: int = 2
    draws: int = 2000
    warmup: int = 500
    abc_max_seconds: float = 10.0
    abc_max_proposals: int = 20_000_000
    ops_k: int = 100
    sample_size: str = "known"  # "unknown": n is private, released as n_dp (model.n = true size if simulated)
    n_prior: str = "poisson"
    n_prior_mean: float = 40.0
    n_prior_dispersion: float = 10.0
    n_mechanism: str = "laplace"
    n_budget_form: str = "epsilon"
    n_epsilon: float = 0.5
    n_scale: float = 2.0
    n_dp: str = ""  # typed release of the size (data source s_dp), kept as typed

    @property
    def unknown_n(self) -> bool:
        return self.sample_size == "unknown"

    @property
    def prior_dict(self) -> dict[str, Any]:
        return dict(self.prior)


# --------------------------------------------------------------------------- small helpers
def budget_forms(mechanism: str) -> tuple[str, ...]:
    """The budget forms a mechanism accepts (first one is the default)."""
    return BUDGET_FORMS.get(mechanism, ("epsilon",))


def result_label(result) -> str:
    """The legend and table name of an engine Result: its method's label and, for a method that needs
    a known n run on an unknown-n release, the plug-in size it ran at (``info["plug_in_n"]``)."""
    n = result.info.get("plug_in_n")
    return METHOD_LABELS.get(result.method, result.method) + (f" at plug-in n = {int(n)}" if n is not None else "")


def log_grid(lo: float, hi: float, points: int) -> str:
    """``points`` log-spaced values from ``lo`` to ``hi`` as grid text (3 significant digits)."""
    if not (lo > 0 and hi > lo and points >= 2):
        raise ValueError(f"grid = ({lo!r}, {hi!r}, {points!r}) is invalid: needs 0 < low < high and at least 2 points")
    ratio = (hi / lo) ** (1.0 / (points - 1))
    return ", ".join(f"{lo * ratio**i:.3g}" for i in range(points))


def parse_grid(text: str, symbol: str = "epsilon", max_points: int = 25) -> tuple[float, ...]:
    """A budget grid typed as text: positive numbers, at most ``max_points``, returned sorted and
    without duplicates. Raises ValueError naming the grid."""
    values = parse_numbers(f"{symbol} grid", text)
    bad = [v for v in values if v <= 0]
    if bad:
        raise ValueError(f"{symbol} grid = {text!r} is invalid: every value must be > 0 (got {bad[0]:g})")
    grid = tuple(sorted(set(values)))
    if len(grid) > max_points:
        raise ValueError(f"{symbol} grid = {text!r} is invalid: at most {max_points} values (got {len(grid)})")
    return grid


def truth_key(model: str) -> str:
    """The key of ``[data] simulate = {..}`` for a model (theta, lam, p or mu)."""
    return _TRUTH_KEYS[model]


def _simplex_text(k: int, weights=None) -> str:
    """``k`` probabilities as text, 4 decimals, the last one closing the sum to exactly 1."""
    w = [1.0] * k if weights is None else [float(v) for v in weights]
    shares = [round(v / sum(w), 4) for v in w[:-1]]
    return ", ".join([f"{v:g}" for v in shares] + [f"{round(1.0 - sum(shares), 4):g}"])


def _levels(prior: Mapping[str, Any] | None) -> tuple[int, list[int]] | None:
    """(I, [J_k]) of a naive-Bayes log-linear prior, or None when its fields do not parse."""
    d = {**DEFAULT_PRIORS["naive_bayes_loglinear"], **dict(prior or {})}
    try:
        levels = [int(v) for v in parse_numbers("model.feature_levels", d["feature_levels"])]
        big_i = int(d["class_levels"])
    except (TypeError, ValueError):
        return None
    if big_i < 2 or not levels or min(levels) < 2 or big_i * sum(levels) > 10_000:
        return None
    return big_i, levels


def default_truth(model: str, prior: Mapping[str, Any] | None = None) -> str:
    """A sensible true parameter for simulation, as the text the widget shows (naive_bayes_loglinear:
    equal class probabilities pi)."""
    if model == "beta_binomial":
        return "0.3"
    if model == "poisson_gamma":
        return "3.0"
    if model == "normal_known_sd":
        return "0.5"
    if model == "naive_bayes_loglinear":
        shape = _levels(prior)
        return _simplex_text(shape[0] if shape else 2)
    if model == "linear_regression":
        return regression_defaults(_regression_p(prior))["truth"]
    try:
        k = len(parse_numbers("model.alpha", (prior or {}).get("alpha", DEFAULT_PRIORS[model]["alpha"])))
    except ValueError:
        k = 3
    return _simplex_text(k)


def default_truth_p(model: str, prior: Mapping[str, Any] | None = None) -> str:
    """naive_bayes_loglinear: true feature probabilities p[k][i][j] as flat text (table k, class i,
    level j fastest), each row weighted 1 + ((i + j) mod J_k) so that the classes differ; "" for
    other models."""
    if model != "naive_bayes_loglinear":
        return ""
    big_i, levels = _levels(prior) or (2, [2, 2])
    rows = [_simplex_text(jk, [1 + (i + j) % jk for j in range(jk)]) for jk in levels for i in range(big_i)]
    return ", ".join(rows)


def _regression_p(prior: Mapping[str, Any] | None) -> int:
    try:
        p = int((prior or {}).get("p", DEFAULT_PRIORS["linear_regression"]["p"]))
    except (TypeError, ValueError):
        return 2
    return p if 1 <= p <= 10 else 2


def regression_defaults(p: int) -> dict[str, str]:
    """linear_regression's widgets for ``p`` predictors: x_mean, x_cov and the true beta as text. At
    p = 2 the paper's (000 Sec. 5) values; otherwise standard normal predictors and coefficients
    alternating 1, -1, ...; the intercept 0.5."""
    if p == 2:
        return {"x_mean": DEFAULT_PRIORS["linear_regression"]["x_mean"],
                "x_cov": DEFAULT_PRIORS["linear_regression"]["x_cov"], "truth": REGRESSION_BETA}
    return {"x_mean": ", ".join(["0"] * p),
            "x_cov": "; ".join(", ".join("1" if i == j else "0" for j in range(p)) for i in range(p)),
            "truth": ", ".join(["0.5"] + ["1" if j % 2 else "-1" for j in range(1, p + 1)])}


def parse_matrix(field: str, text: Any) -> list[list[float]]:
    """A matrix typed as rows separated by semicolons (or new lines), numbers by commas or spaces:
    ``"1, 0.5; 0.5, 1"`` -> ``[[1.0, 0.5], [0.5, 1.0]]``. Raises ValueError naming ``field`` for a
    bad number or rows of different lengths (the engine checks the size and positive definiteness)."""
    if isinstance(text, (list, tuple)):
        return [[float(v) for v in row] for row in text]
    raw = str(text if text is not None else "").strip()
    rows = [r for r in re.split(r"[;\n]+", raw) if r.strip()]
    allowed = "must be rows of numbers separated by semicolons, e.g. 1, 0.5; 0.5, 1"
    if not rows:
        raise ValueError(f"{field} = {raw!r} is invalid: {allowed}")
    out = []
    for row in rows:
        try:
            out.append(parse_numbers(field, row.replace("[", "").replace("]", "")))
        except ValueError:
            raise ValueError(f"{field} = {raw!r} is invalid: {allowed} ({row.strip()!r} is not a row of numbers)") \
                from None
    if len({len(r) for r in out}) != 1:
        raise ValueError(f"{field} = {raw!r} is invalid: every row needs the same number of entries")
    return out


def record_columns(model: str, prior: Mapping[str, Any] | None = None) -> tuple[str, ...] | None:
    """The CSV columns of a multi-column record (naive_bayes_loglinear: y, x1..xK; linear_regression:
    x1..xp, y), else None (one column, chosen by the Column box). None too when the feature levels do
    not parse yet."""
    if model == "linear_regression":
        return tuple(f"x{j + 1}" for j in range(_regression_p(prior))) + ("y",)
    if model != "naive_bayes_loglinear":
        return None
    shape = _levels(prior)
    if shape is None:
        return None
    return ("y",) + tuple(f"x{k + 1}" for k in range(len(shape[1])))


def parse_numbers(field: str, text: Any) -> list[float]:
    """``"104, 120, 74, 102"`` -> ``[104.0, 120.0, 74.0, 102.0]``; commas, semicolons or spaces
    separate. Raises ValueError naming ``field`` for empty text or a token that is not a number."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return [float(text)]
    if isinstance(text, (list, tuple)):
        text = ", ".join(str(t) for t in text)
    raw = str(text if text is not None else "").strip().strip("[]")
    tokens = [t for t in _NUMBER.split(raw) if t]
    allowed = "must be a list of numbers separated by commas, e.g. 104, 120, 74, 102"
    if not tokens:
        raise ValueError(f"{field} = {str(text)!r} is invalid: {allowed}")
    out = []
    for tok in tokens:
        try:
            v = float(tok)
        except ValueError:
            raise ValueError(f"{field} = {str(text)!r} is invalid: {allowed} ({tok!r} is not a number)") from None
        if not math.isfinite(v):
            raise ValueError(f"{field} = {str(text)!r} is invalid: every entry must be a finite number")
        out.append(v)
    return out


# --------------------------------------------------------------------------- spec dict
def model_table(s: Scenario, records=None) -> dict:
    """The ``[model]`` table; with CSV records, ``n`` is their number. With an unknown n it carries
    ``n_prior``, and ``n`` is the true size only when the engine releases the data (simulation or
    CSV); a typed release has no n."""
    n_records = len(records) if (s.data == "csv" and records is not None) else None
    table: dict[str, Any] = {"name": s.model, "n": int(n_records if n_records is not None else s.n)}
    if s.unknown_n:
        if s.data == "s_dp":
            del table["n"]
        table["n_prior"] = n_prior_table(s)
    for key, value in s.prior:
        if value is None:
            continue
        kind = PRIOR_KINDS.get((s.model, key))
        if kind == "text":
            value = parse_numbers(f"model.{key}", value)
            if s.model == "naive_bayes_loglinear":  # levels are counts; the engine names a non-integer
                value = [int(v) if float(v).is_integer() else v for v in value]
        elif kind == "matrix":
            value = parse_matrix(f"model.{key}", value)
        elif kind == "bounds":  # one number for every column, or one per column (x1..xp, y)
            value = parse_numbers(f"model.{key}", value)
            value = value[0] if len(value) == 1 else value
        table[key] = value
    return table


def mechanism_table(s: Scenario) -> dict:
    """The ``[mechanism]`` table: name, the budget in the chosen form, optional sensitivity."""
    table: dict[str, Any] = {"name": s.mechanism}
    form = s.budget_form if s.budget_form in budget_forms(s.mechanism) else budget_forms(s.mechanism)[0]
    if form in ("epsilon", "k_ary"):
        table["epsilon"] = s.epsilon
    elif form == "rho":
        table["rho"] = s.rho
    elif form == "epsilon_delta":
        table["epsilon"], table["delta"] = s.epsilon, s.delta
    else:  # coin
        table["scheme"], table["truth_prob"] = "coin", s.truth_prob
    if s.sensitivity is not None and s.mechanism != "randomized_response":
        table["sensitivity"] = s.sensitivity
    return table


def n_prior_table(s: Scenario) -> dict:
    """``model.n_prior``: Poisson(mean) or negative binomial(mean, dispersion)."""
    if s.n_prior == "negative_binomial":
        return {"name": "negative_binomial", "mean": s.n_prior_mean, "dispersion": s.n_prior_dispersion}
    return {"name": s.n_prior, "mean": s.n_prior_mean}


def n_mechanism_table(s: Scenario) -> dict:
    """The ``[n_mechanism]`` table: the noise on the released size, by epsilon or by its scale."""
    if s.n_budget_form == "scale":
        return {"name": s.n_mechanism, "scale": s.n_scale}
    return {"name": s.n_mechanism, "epsilon": s.n_epsilon}


def parse_n_dp(text: Any) -> float:
    """``data.n_dp`` typed as text: exactly one number (negative is fine: it is noise)."""
    values = parse_numbers("data.n_dp", text)
    if len(values) != 1:
        raise ValueError(f"data.n_dp = {text!r} is invalid: must be one number, the released noisy size")
    return values[0]


def _data_table(s: Scenario, records) -> dict:
    if s.data == "simulate":
        if s.model == "naive_bayes_loglinear":
            if s.from_prior:
                return {"simulate": {"from_prior": True}}
            return {"simulate": {"pi": parse_numbers("data.simulate.pi", s.truth),
                                 "p": parse_numbers("data.simulate.p", s.truth_p)}}
        values = parse_numbers(f"data.simulate.{truth_key(s.model)}", s.truth)
        if s.model in ("dirichlet_multinomial", "linear_regression"):
            return {"simulate": {truth_key(s.model): values}}
        if len(values) != 1:
            raise ValueError(f"data.simulate.{truth_key(s.model)} = {s.truth!r} is invalid: must be one number")
        return {"simulate": {truth_key(s.model): values[0]}}
    if s.data == "s_dp":
        if s.unknown_n:
            return {"s_dp": parse_numbers("data.s_dp", s.s_dp), "n_dp": parse_n_dp(s.n_dp)}
        return {"s_dp": parse_numbers("data.s_dp", s.s_dp)}
    if s.data == "csv":
        if records is None:
            raise ValueError("data.csv = None is invalid: upload a CSV file of records (one record per row)")
        if getattr(records, "ndim", 1) == 2:  # multi-column records (y, x1..xK): integer levels
            return {"records": [[int(v) if float(v).is_integer() else float(v) for v in row] for row in records]}
        return {"records": [float(r) for r in records]}
    raise ValueError(f"data = {s.data!r} is invalid: must be one of " + ", ".join(DATA_SOURCES))


def method_settings(s: Scenario, method: str) -> dict:
    """The ``[method]`` table the engine runs for one method of the scenario."""
    if method == "ops":
        return {"name": "ops", "k": s.ops_k}
    table: dict[str, Any] = {"name": method, "chains": s.chains, "draws": s.draws}
    if method in ("da_mcmc", "pseudo_marginal", "auto", "bernstein_sheldon", "rjmcmc", "mcem"):
        table["warmup"] = s.warmup
    if method == "mcem":
        del table["chains"]
    if method == "abc_rejection":
        table.update(chains=1, draws=s.chains * s.draws, max_seconds=s.abc_max_seconds,
                     max_proposals=s.abc_max_proposals)
    return table


def to_spec_dict(s: Scenario, records=None, method: str = "da_mcmc") -> dict:
    """The engine's spec layout (``seed``, ``[model]``, ``[mechanism]``, ``[data]``, ``[method]``).

    ``records`` are the parsed rows of an uploaded CSV (data source ``csv``); they go into the
    spec inline, and ``model.n`` follows their number.
    """
    spec = {
        "seed": int(s.seed),
        "model": model_table(s, records),
        "mechanism": mechanism_table(s),
        "data": _data_table(s, records),
        "method": method_settings(s, method),
    }
    if s.unknown_n:
        spec["n_mechanism"] = n_mechanism_table(s)
    return spec


# --------------------------------------------------------------------------- query string
_QUERY_FIELDS = {
    "model": "model", "n": "n", "mech": "mechanism", "budget": "budget_form", "epsilon": "epsilon",
    "rho": "rho", "delta": "delta", "truth_prob": "truth_prob", "sens": "sensitivity", "data": "data",
    "truth": "truth", "seed": "seed", "s_dp": "s_dp", "column": "csv_column", "chains": "chains",
    "draws": "draws", "warmup": "warmup", "abc_s": "abc_max_seconds", "abc_p": "abc_max_proposals",
    "ops_k": "ops_k", "size": "sample_size", "n_prior": "n_prior", "n_mean": "n_prior_mean",
    "n_disp": "n_prior_dispersion", "n_mech": "n_mechanism", "n_budget": "n_budget_form", "n_eps": "n_epsilon",
    "n_scale": "n_scale", "n_dp": "n_dp", "truth_p": "truth_p", "from_prior": "from_prior",
}
_INT_FIELDS = {"n", "seed", "chains", "draws", "warmup", "abc_max_proposals", "ops_k"}
_FLOAT_FIELDS = {"epsilon", "rho", "delta", "truth_prob", "sensitivity", "abc_max_seconds", "n_prior_mean",
                 "n_prior_dispersion", "n_epsilon", "n_scale"}
_BOOL_FIELDS = {"from_prior"}
_CHOICES = {"sample_size": ("size", SAMPLE_SIZES), "n_prior": ("n_prior", N_PRIORS),
            "n_mechanism": ("n_mech", N_MECHANISMS), "n_budget_form": ("n_budget", N_BUDGET_FORMS)}


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return repr(v)
    return str(v)


def to_query(s: Scenario) -> dict[str, str]:
    """A short, readable query string for the scenario (only the fields its forms use)."""
    q = {"model": s.model, "n": _fmt(s.n)}
    for key, value in s.prior:
        if value is not None:
            q[f"prior.{key}"] = _fmt(value)
    q["mech"] = s.mechanism
    q["budget"] = s.budget_form
    if s.budget_form in ("epsilon", "k_ary", "epsilon_delta"):
        q["epsilon"] = _fmt(s.epsilon)
    if s.budget_form == "epsilon_delta":
        q["delta"] = _fmt(s.delta)
    if s.budget_form == "rho":
        q["rho"] = _fmt(s.rho)
    if s.budget_form == "coin":
        q["truth_prob"] = _fmt(s.truth_prob)
    if s.sensitivity is not None:
        q["sens"] = _fmt(s.sensitivity)
    q["data"] = s.data
    if s.data == "simulate" and s.model == "naive_bayes_loglinear" and s.from_prior:
        q["from_prior"] = "1"
    elif s.data == "simulate":
        q["truth"] = s.truth
        if s.model == "naive_bayes_loglinear":
            q["truth_p"] = s.truth_p
    elif s.data == "s_dp":
        q["s_dp"] = s.s_dp
    elif s.csv_column:
        q["column"] = s.csv_column
    if s.unknown_n:  # a known n adds nothing: the landing page's link stays as it was
        q["size"] = s.sample_size
        q["n_prior"], q["n_mean"] = s.n_prior, _fmt(s.n_prior_mean)
        if s.n_prior == "negative_binomial":
            q["n_disp"] = _fmt(s.n_prior_dispersion)
        q["n_mech"], q["n_budget"] = s.n_mechanism, s.n_budget_form
        if s.n_budget_form == "scale":
            q["n_scale"] = _fmt(s.n_scale)
        else:
            q["n_eps"] = _fmt(s.n_epsilon)
        if s.data == "s_dp":
            q["n_dp"] = s.n_dp
    q["seed"] = _fmt(s.seed)
    q["methods"] = ",".join(s.methods)
    for qk in ("chains", "draws", "warmup", "abc_s", "abc_p", "ops_k"):
        q[qk] = _fmt(getattr(s, _QUERY_FIELDS[qk]))
    return q


def _link_error(key: str, value: Any, allowed: str) -> ValueError:
    return ValueError(f"link parameter {key} = {value!r} is invalid: {allowed}")


def _convert(key: str, name: str, raw: str) -> Any:
    if name in _BOOL_FIELDS:
        if raw not in ("0", "1"):
            raise _link_error(key, raw, "must be 0 or 1")
        return raw == "1"
    if name in _INT_FIELDS:
        try:
            return int(raw)
        except ValueError:
            raise _link_error(key, raw, "must be a whole number") from None
    if name in _FLOAT_FIELDS:
        try:
            v = float(raw)
        except ValueError:
            raise _link_error(key, raw, "must be a number") from None
        if not math.isfinite(v):
            raise _link_error(key, raw, "must be a finite number")
        return v
    return raw


def from_query(query: Mapping[str, Any]) -> Scenario | None:
    """The scenario a shared link describes, or None when the link carries none.

    Values outside the widgets' choices raise ValueError; numeric values are not range-checked
    here (the engine does that and the app shows its message next to the input).
    """
    q = {k: (v[-1] if isinstance(v, (list, tuple)) and v else v) for k, v in dict(query).items()}
    if "model" not in q:
        return None
    model = q["model"]
    if model not in MODELS:
        raise _link_error("model", model, "must be one of " + ", ".join(MODELS))
    values: dict[str, Any] = {"model": model}
    for key, name in _QUERY_FIELDS.items():
        if key in q and key != "model":
            values[name] = _convert(key, name, str(q[key]))
    mech = values.get("mechanism", Scenario.mechanism)
    if mech not in MECHANISMS:
        raise _link_error("mech", mech, "must be one of " + ", ".join(MECHANISMS))
    form = values.get("budget_form", budget_forms(mech)[0])
    if form not in budget_forms(mech):
        raise _link_error("budget", form, f"must be one of {', '.join(budget_forms(mech))} for {mech}")
    for name, (key, allowed) in _CHOICES.items():
        if name in values and values[name] not in allowed:
            raise _link_error(key, values[name], "must be one of " + ", ".join(allowed))
    if values.get("data", "simulate") not in DATA_SOURCES:
        raise _link_error("data", values["data"], "must be one of " + ", ".join(DATA_SOURCES))
    prior = dict(DEFAULT_PRIORS[model])
    for key in list(prior):
        if f"prior.{key}" in q:
            raw = str(q[f"prior.{key}"])
            kind = PRIOR_KINDS.get((model, key))
            if kind in ("text", "matrix", "bounds"):
                prior[key] = raw
            elif kind == "int":
                prior[key] = _convert(f"prior.{key}", "n", raw)
            else:
                prior[key] = _convert(f"prior.{key}", "epsilon", raw)
    values["prior"] = tuple(prior.items())
    if "methods" in q:
        chosen = tuple(m for m in str(q["methods"]).split(",") if m)
        bad = [m for m in chosen if m not in METHODS]
        if bad:
            raise _link_error("methods", q["methods"], "must be a comma-separated subset of " + ", ".join(METHODS))
        values["methods"] = chosen
    if "truth" not in values:
        values["truth"] = default_truth(model, prior)
    if model == "naive_bayes_loglinear" and "truth_p" not in values:
        values["truth_p"] = default_truth_p(model, prior)
    known = {f.name for f in fields(Scenario)}
    return Scenario(**{k: v for k, v in values.items() if k in known})
