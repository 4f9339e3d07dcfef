"""A :class:`~ui.params.scenario.Scenario` as the engine's spec dict (``seed``, ``[model]``,
``[mechanism]`` (or ``[release]``: a release made with a library, :mod:`ui.params.release`), ``[data]``,
``[method]``, and ``[n_mechanism]`` when n is unknown).

Free-text fields are parsed here (:mod:`ui.params.parsing`), so a bad one raises ``ValueError``
naming the spec field, the value and what is allowed. Nothing here imports streamlit.
"""
from __future__ import annotations

from typing import Any

from .parsing import parse_matrix, parse_n_dp, parse_numbers
from .release import release_table
from .scenario import DATA_SOURCES, PRIOR_KINDS, Scenario, budget_forms, truth_key

__all__ = ["to_spec_dict", "release_spec_dict", "model_table", "mechanism_table", "noise_table", "n_prior_table",
           "n_mechanism_table", "method_settings", "best_method", "BEST_FIRST"]

#: the methods best first, for what a file offers first (the TOML's ``[method]``, the NetCDF file): the exact
#: posterior by the best method, the closed form, the exact samplers, the approximate and the estimator, then the
#: baselines (OPS, a second release; naive, which ignores the noise), so naive leads only when nothing else is on
BEST_FIRST = ("auto", "exact", "rjmcmc", "pseudo_marginal", "da_mcmc", "abc_rejection", "bernstein_sheldon", "mcem",
              "ops", "naive")


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
    if "sigma_a" in table or "sigma_b" in table:  # sigma unknown: its prior, and the box's sigma is the truth's
        table["sigma_prior"] = {"a": table.pop("sigma_a", None), "b": table.pop("sigma_b", None)}
        table.pop("sigma", None)
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


def noise_table(s: Scenario) -> dict:
    """The table that describes the noise: ``[release]`` (with ``library``) when a library made the release,
    else ``[mechanism]`` (``engine.spec.build_mechanism`` takes either)."""
    return release_table(s) if s.uses_library else mechanism_table(s)


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


def _data_table(s: Scenario, records) -> dict:
    if s.data == "simulate":
        if s.model == "naive_bayes_loglinear":
            if s.from_prior:
                return {"simulate": {"from_prior": True}}
            return {"simulate": {"pi": parse_numbers("data.simulate.pi", s.truth),
                                 "p": parse_numbers("data.simulate.p", s.truth_p)}}
        values = parse_numbers(f"data.simulate.{truth_key(s.model)}", s.truth)
        prior = s.prior_dict
        if s.model == "linear_regression" and prior.get("sigma_a") is not None:  # sigma^2 a parameter: its truth
            return {"simulate": {"beta": values, "sigma2": float(prior["sigma"]) ** 2}}
        if s.model in ("dirichlet_multinomial", "linear_regression"):
            return {"simulate": {truth_key(s.model): values}}
        if len(values) != 1:
            raise ValueError(f"data.simulate.{truth_key(s.model)} = {s.truth!r} is invalid: must be one number")
        return {"simulate": {truth_key(s.model): values[0]}}
    if s.data == "s_dp":
        if s.size_released:
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


def best_method(methods, unknown_n: bool = False) -> str | None:
    """The best of ``methods`` by :data:`BEST_FIRST` (a method not listed there comes after them, in its order).
    With an unknown n, RJMCMC first: the others (auto and exact included) run at the plug-in n, exact only given
    that n, so a file whose ``[method]`` was auto gave "Best method given plug-in n = 39", not the posterior."""
    methods = list(methods)
    order = ("rjmcmc",) + BEST_FIRST if unknown_n else BEST_FIRST
    return min(methods, key=lambda m: (order.index(m) if m in order else len(order), methods.index(m)), default=None)


def _as_run(s: Scenario, method: str) -> dict:
    """A method's settings as the page runs them, for a file: OPS releases its k draws as one chain, whatever
    chains, draws and warm-up the engine would fill in (its defaults, 4 × 2,000, read as if OPS ran them)."""
    table = method_settings(s, method)
    if method == "ops":
        table.update(chains=1, draws=s.ops_k, warmup=0)
    return table


def release_spec_dict(s: Scenario, records, s_dp=None, n_dp=None, *, keep_records: bool = False) -> dict:
    """The spec to download: the model, the mechanism, the seed and every switched-on method's settings
    as the page ran them (the best by :func:`best_method` in ``[method]``, which ``python -m engine run`` runs:
    the exact posterior, not the naive baseline; the others in ``[methods.<name>]``). Its data are what may leave the
    building: the release ``s_dp`` (and ``n_dp``) an upload gave, not its confidential records, unless
    ``keep_records`` (an explicit choice). A simulation keeps its ``simulate`` table (its records are
    synthetic, reproducible from the seed)."""
    # a file with the release only (an upload's records kept back) cannot run OPS, which needs the records
    released_only = s.data == "csv" and not keep_records
    methods = [m for m in s.methods if not (released_only and m == "ops")]
    spec = to_spec_dict(s, records, method=best_method(methods, s.unknown_n) or "da_mcmc")
    spec["method"] = _as_run(s, spec["method"]["name"])
    if released_only:
        released = {"s_dp": [float(v) for v in s_dp]}
        if s.size_released:
            released["n_dp"] = float(n_dp)
        if s.unknown_n:
            spec["model"].pop("n", None)
        spec["data"] = released
    others = {m: _as_run(s, m) for m in methods if m != spec["method"]["name"]}
    if others:
        spec["methods"] = others
    return spec


def to_spec_dict(s: Scenario, records=None, method: str | None = None) -> dict:
    """The engine's spec layout (``seed``, ``[model]``, ``[mechanism]`` or ``[release]``, ``[data]``,
    ``[method]``).

    ``records`` are the parsed rows of an uploaded CSV (data source ``csv``); they go into the
    spec inline, and ``model.n`` follows their number. ``method``: the ``[method]`` table's; by default DA-MCMC,
    which serves every model, or the pseudo-marginal sampler for OpenDP's mean (the one method of its law).
    """
    if method is None:
        method = "pseudo_marginal" if s.uses_library and s.release_mechanism == "mean" else "da_mcmc"
    spec = {
        "seed": int(s.seed),
        "model": model_table(s, records),
        **({"release": release_table(s)} if s.uses_library else {"mechanism": mechanism_table(s)}),
        "data": _data_table(s, records),
        "method": method_settings(s, method),
    }
    if s.size_released:
        spec["n_mechanism"] = n_mechanism_table(s)
    return spec
