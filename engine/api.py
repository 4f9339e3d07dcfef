"""The library entry points: prepare a scenario, run a method on it, run a whole spec.

Seeding: ``SeedSequence(seed).spawn(2)`` gives a data stream (simulation and privatization) and a
method stream; DA-MCMC chains spawn from the method stream. Method streams use numpy's SFC64
bit generator: it passes the same statistical test batteries as PCG64 and makes the compiled
record sweep about 25% faster (bench/run.py). The same spec and seed therefore give
identical draws in any process, and chain c is the same whether 1 or many chains run.
"""
from __future__ import annotations

import numpy as np

from .core.data import load_records_csv
from .core.results import Problem, Result
from .core.spec import Spec, resolve_path
from .core.validation import fail, number_list, positive, positive_int, seed_value
from .cost import BudgetExceeded, estimate_cost, fit_to_budget
from .mechanisms import RandomizedResponse, check_release_value
from .mechanisms.ratio import OpenDPMean, ratio_release
from .mechanisms.release import privatize
from .methods import REGISTRY, validate_method
from .models import make_model
from .models.sample_size import (UnknownSize, check_n_dp, make_size_mechanism, make_size_prior, plug_in_n,
                                 plug_in_total)
from .numerics.conjugate import confidential_posterior as _confidential
from .spec import build_mechanism, is_ratio_release, spec_from_dict

__all__ = ["prepare", "run_method", "run", "method_table", "confidential_posterior", "data_rng", "method_rng",
           "check_s_dp", "check_budget", "METHODS"]

METHODS = REGISTRY  # name -> engine.methods.Method (one module per algorithm in engine/methods/)


def _seed(seed) -> int:
    """A run's seed, checked like a spec's (numpy's integers too: studies spawn them)."""
    return seed_value(int(seed) if isinstance(seed, np.integer) else seed)


def _check_problem(problem) -> None:
    if not isinstance(problem, Problem):
        fail("problem", type(problem).__name__, "must be an engine.Problem: engine.prepare(spec) makes one")


def data_rng(seed: int) -> np.random.Generator:
    """The generator a spec's ``seed`` gives for its data: the simulated records and the release's noise (the first
    of two streams spawned from the seed, so the method's draws never share it)."""
    return np.random.default_rng(np.random.SeedSequence(_seed(seed)).spawn(2)[0])


def method_rng(seed: int) -> np.random.Generator:
    """The generator a spec's ``seed`` gives for its method's draws (the second stream spawned from the seed, an
    SFC64 bit generator). Same seed, same draws."""
    return np.random.Generator(np.random.SFC64(np.random.SeedSequence(_seed(seed)).spawn(2)[1]))


#: the largest |s_dp| a count's release may hold: at 10^15 neighbouring counts are still 8 doubles apart; from 2^53
#: (about 9e15) they are one, and s_dp - s no longer tells them apart
MAX_COUNT_RELEASE = 1e15


def check_s_dp(model, mechanism, value, field: str = "data.s_dp") -> np.ndarray:
    """Validate a release: right length, finite, whole numbers for discrete mechanisms, and for
    randomized response non-negative counts (summing to n over k > 2 cells). OpenDP's mean: one r, which may be
    +-inf (:func:`engine.mechanisms.ratio.ratio_release`)."""
    if isinstance(mechanism, OpenDPMean):  # r = +-inf is a release of its own (a noisy length <= 0)
        return ratio_release(field, value)
    rr = isinstance(mechanism, RandomizedResponse)
    length = 1 if (rr and model.name == "beta_binomial") else model.stat_dim
    s = number_list(field, value, length)
    check_release_value(mechanism, s, field)
    if getattr(model, "integer_statistic", False) and np.any(np.abs(s) > MAX_COUNT_RELEASE):
        fail(field, s.tolist(), "must lie within ±10^15 for a count: beyond it a double cannot tell neighbouring "
             "counts apart in s_dp − s (from 2^53 ≈ 9e15 they are the same number)")
    if rr:
        if (s < 0).any() or (model.name == "beta_binomial" and s[0] > model.n):
            fail(field, s.tolist(), f"randomized-response counts must lie in 0..n = 0..{model.n}")
        if model.name != "beta_binomial" and s.sum() != model.n:
            fail(field, s.tolist(), f"randomized-response counts must sum to model.n = {model.n}")
    return s


def prepare(spec: Spec | dict) -> Problem:
    """Build model and mechanism, obtain the records (simulate / CSV / inline) and the release."""
    if not isinstance(spec, Spec):
        spec = spec_from_dict(spec)
    if spec.unknown_n:
        return _prepare_unknown_n(spec)
    model = make_model(spec.model["name"], spec.model)
    mech = build_mechanism(spec.mechanism, model)
    kind = spec.data_kind
    if kind == "s_dp":
        return Problem(model=model, mechanism=mech, s_dp=check_s_dp(model, mech, spec.data["s_dp"]))
    rng = data_rng(spec.seed)
    true = None
    columns = getattr(model, "csv_columns", None)  # multi-column records (naive_bayes_loglinear)
    if kind == "simulate":
        theta = model.theta_from(spec.data["simulate"])
        if theta is None:  # simulate = { from_prior = true }
            theta = model.sample_prior(rng, 1)[0]
        records = model.sample_records(rng, theta)
        true = dict(zip(model.param_names, theta.tolist()))
    elif kind == "csv":
        records = load_records_csv(resolve_path(spec.data["csv"], spec.base_dir), columns or spec.data.get("column"))
        records = model.check_records(records, "data.csv")
    elif columns:
        records = model.check_records(spec.data["records"], "data.records")
    else:
        records = model.check_records(number_list("data.records", spec.data["records"]), "data.records")
    if records.shape[0] != model.n:
        fail("model.n", model.n, f"must equal the number of records ({records.shape[0]})")
    s_dp = privatize(model, mech, records, rng, check=False)
    return Problem(model=model, mechanism=mech, s_dp=s_dp, records=records, true_params=true)


def _prepare_unknown_n(spec: Spec) -> Problem:
    """An unknown-n scenario (paper 002): with s_dp given, the model's n is the plug-in round(n_dp);
    otherwise the true size is model.n (or, in simulation without it, a draw from the prior on n),
    the engine releases s_dp with [mechanism] and n_dp with [n_mechanism], and model.n becomes the
    plug-in size. ``true_params["n"]`` is the true size when known."""
    from dataclasses import replace

    prior = make_size_prior(spec.model["n_prior"])
    # no [n_mechanism]: a histogram whose total is private through its cells alone (engine.spec)
    n_mech = None if spec.n_mechanism is None else make_size_mechanism(spec.n_mechanism)
    table = {k: v for k, v in spec.model.items() if k != "n_prior"}
    kind = spec.data_kind
    if kind == "s_dp":
        if n_mech is None and is_ratio_release(spec.mechanism):  # OpenDP's mean: n is released only inside r
            n_dp, plug = None, plug_in_n(prior.mean)
        elif n_mech is None:
            n_dp, plug = None, plug_in_total(number_list("data.s_dp", spec.data["s_dp"]))
        else:
            n_dp = check_n_dp(n_mech, spec.data["n_dp"])
            plug = plug_in_n(n_dp)
        model = make_model(table["name"], {**table, "n": plug})
        mech = build_mechanism(spec.mechanism, model, unbounded=True)
        return Problem(model=model, mechanism=mech, s_dp=check_s_dp(model, mech, spec.data["s_dp"]),
                       unknown_n=UnknownSize(prior, n_mech, n_dp))
    rng = data_rng(spec.seed)
    true = None
    if kind == "simulate":
        n_true = int(table["n"]) if "n" in table else int(prior.sample(rng))
        model = replace(make_model(table["name"], {**table, "n": max(n_true, 1)}), n=n_true)
        theta = model.theta_from(spec.data["simulate"])
        records = model.sample_records(rng, theta)
        true = {**dict(zip(model.param_names, theta.tolist())), "n": n_true}
    else:
        model = make_model(table["name"], table)
        if kind == "csv":
            records = model.check_records(load_records_csv(resolve_path(spec.data["csv"], spec.base_dir),
                                                           spec.data.get("column")), "data.csv")
        else:
            records = model.check_records(number_list("data.records", spec.data["records"]), "data.records")
        if records.shape[0] != model.n:
            fail("model.n", model.n, f"must equal the number of records ({records.shape[0]})")
    mech = build_mechanism(spec.mechanism, model, unbounded=True)
    s_dp = privatize(model, mech, records, rng, check=False)
    if n_mech is None and is_ratio_release(spec.mechanism):
        n_dp, plug = None, replace(model, n=plug_in_n(prior.mean))
    elif n_mech is None:
        n_dp, plug = None, replace(model, n=plug_in_total(s_dp))
    else:
        n_dp = float(n_mech.sample(rng, np.array([float(records.shape[0])]))[0])
        plug = replace(model, n=plug_in_n(n_dp))
    return Problem(model=plug, mechanism=mech, s_dp=s_dp, records=records, true_params=true,
                   unknown_n=UnknownSize(prior, n_mech, n_dp))


def run_method(problem: Problem, method: dict, seed: int, on_progress=None, max_seconds: float | None = None) -> Result:
    """Run one method (a [method] table) on a prepared problem with the seed's method stream.

    ``max_seconds``: refuse (:class:`engine.cost.BudgetExceeded`, a ValueError naming the settings that
    do fit) when the run's estimated cost on this machine is above it; no budget unless asked."""
    _check_problem(problem)
    settings = validate_method(method)
    rng = method_rng(seed)
    if max_seconds is not None:
        check_budget(problem, settings, max_seconds)
    name = settings.pop("name")
    return REGISTRY[name](problem, rng, settings, on_progress=on_progress)


def check_budget(problem: Problem, settings: dict, max_seconds: float) -> None:
    """Raise BudgetExceeded when the estimated cost of ``settings`` (a [method] table, checked and completed by
    ``validate_method`` first) is over ``max_seconds``."""
    max_seconds = positive("max_seconds", max_seconds)
    settings = validate_method(settings)
    cost = estimate_cost(problem, settings, ceiling=max_seconds)
    if cost.seconds <= max_seconds:
        return
    fits = fit_to_budget(problem, settings, max_seconds)
    hint = ("no settings of this method fit; try a smaller n or another method" if fits is None else
            # as a spec writes them (no thousands separator: "draws = 3,702" cannot be pasted into TOML)
            "settings that fit: " + ", ".join(f"{k} = {fits[k]}" for k in ("chains", "draws", "warmup")))
    raise BudgetExceeded(f"method.draws = {settings['draws']} is invalid: {settings['name']} would take "
                         f"{cost.describe()} on this machine, over the budget of {max_seconds:g} s; {hint}")


def method_table(spec: Spec, method: str | None = None) -> dict:
    """The ``[method]`` table a run of ``spec`` uses: the spec's own, or for ``method`` instead the spec's
    ``[methods.<name>]`` table when it has one, else the spec's common settings under that name."""
    settings = dict(spec.method)
    if method is not None and spec.methods and method in spec.methods:
        settings = dict(spec.methods[method])  # the spec's own settings for that method
    elif method is not None:
        settings = {k: v for k, v in settings.items() if k in ("chains", "draws", "warmup", "grid_size")}
        settings["name"] = method
    return settings


def run(spec: Spec | dict, method: str | None = None, on_progress=None, max_seconds: float | None = None) -> Result:
    """Prepare the spec's scenario and run its method (or ``method`` instead)."""
    if not isinstance(spec, Spec):
        spec = spec_from_dict(spec)
    problem = prepare(spec)
    return run_method(problem, method_table(spec, method), spec.seed, on_progress=on_progress, max_seconds=max_seconds)


def confidential_posterior(problem: Problem, seed: int = 0, draws: int = 4000) -> Result:
    """p(theta | x) from the confidential records (simulation or upload only)."""
    _check_problem(problem)
    return _confidential(problem, method_rng(seed), draws=positive_int("draws", draws, 1, 10_000_000))
