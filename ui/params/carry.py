"""The privacy budget carried over when the sidebar's mechanism or release changes, so a switch compares noises at
one budget instead of quietly changing it.

At the defaults (Laplace, ε = 0.3) choosing Gaussian showed ρ = 0.5, about ε = 1, so Gaussian noise looked about
four times leakier only because the budget had changed; diffprivlib's ε box started at 1 and OpenDP's scale at 3.
Now the budget of the release as it was (:func:`stated_budget`: the engine's own guarantee of its noise, ε for pure
or (ε, δ)-DP, ρ for zCDP) is restated in the new form's terms (:func:`carried_lab`, :func:`carried_release`):

=========================  ========================================================================================
new form                   carried value
=========================  ========================================================================================
ε (Laplace, k-ary, (ε, δ))  ε; from a zCDP budget ε = √(2ρ)
ρ (Gaussian-type noise)    ρ = ε²/2, the Gaussian counterpart of ε the Learn page's "What ε = 1 means" uses
coin (randomized response) the truth probability whose k-ary ε is ε: tanh(ε / (2 log2 k))
diffprivlib ``epsilon``    ε (the other boxes, δ and the sensitivity, keep their values)
OpenDP ``scale``           Δ / ε (laplace), Δ / √(2ρ) (gaussian), Δ the sensitivity box's or else the model's
                           add/remove-one sensitivity, the one the analysis uses
OpenDP ``mean``            as OpenDP calibrates a mean to a budget (``dp.Context.compositor(privacy_loss=
                           dp.loss_of(epsilon=ε))``, dp-wizard's way): one global scale g = 2/ε times each query's
                           sensitivity, half the budget each: sum_scale = 2 Δ_sum / ε, length_scale = 2 c / ε,
                           Δ_sum = c max(|lo|, |hi|), c = ``contributions`` (checked against OpenDP's own
                           ``summarize()`` in tests/test_dpwizard_mean.py); the normal model's records only
=========================  ========================================================================================

A change of the budget's form for the same mechanism restates the same noise (:func:`carried_form`): the Gaussian's ρ
as (ε, δ) at the δ box's value is the analytic Gaussian mechanism's ε for its σ (Balle & Wang 2018, the engine's own
calibration of (ε, δ)), and (ε, δ) as ρ = Δ²/(2σ²); randomized response's ε as its coin, and back, as above.

Carried values are rounded to six significant digits (:func:`rounded`), two more than the pages state a budget in,
so the pages state the budget as before and a switch there and back gives the number typed. Only a switch
carries: a link or a preset states its budget, which opens exactly as stated. Nothing here imports streamlit.
"""
from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import engine
from engine.mechanisms.budgets import analytic_gaussian_epsilon
from engine.spec import build_mechanism

from .release import is_mean
from .scenario import Scenario, budget_forms
from .spec import model_table, noise_table

__all__ = ["stated_budget", "carried_lab", "carried_release", "carried_form", "lab_equivalent", "model_sensitivities",
           "rounded", "carried_note"]

#: the lab's mechanisms by the names the sidebar shows them (figures.labels.MECHANISM_LABELS in lower case: this
#: module draws nothing)
_LAB_WORDS = {"laplace": "Laplace", "discrete_laplace": "discrete Laplace", "gaussian": "Gaussian",
              "discrete_gaussian": "discrete Gaussian", "randomized_response": "randomized response"}


def rounded(v: float) -> float:
    """``v`` to six significant digits: a box reads 3.33333, not 3.3333333333333335, and the budget it gives still
    reads the same to the four digits the pages state (a scale rounded to 3.333 stated ρ = 0.04501 for 0.045)."""
    return float(f"{float(v):.6g}")


def _model(s: Scenario):
    """The engine's model of the scenario's [model] table (a typed release of an unknown n: the widget's n)."""
    table = model_table(s)
    table.pop("n_prior", None)
    table.setdefault("n", max(int(s.n), 1))
    return engine.make_model(table["name"], table)


def stated_budget(s: Scenario) -> tuple[str, float] | None:
    """The budget of the scenario's noise as the engine states it: ("epsilon", ε) for pure or (ε, δ)-DP, ("rho", ρ)
    for zCDP; None where the model or the noise does not build (an invalid entry: nothing to carry)."""
    try:
        noise = build_mechanism(noise_table(s), _model(s), unbounded=s.unknown_n)
    except ValueError:
        return None
    g = dict(getattr(noise, "base", noise).guarantee)
    if g.get("kind") in ("pure", "approx") and g.get("epsilon"):
        return "epsilon", float(g["epsilon"])
    if g.get("rho"):
        return "rho", float(g["rho"])
    return None


def _epsilon(budget: tuple[str, float]) -> float:
    kind, value = budget
    return value if kind == "epsilon" else math.sqrt(2.0 * value)


def _rho(budget: tuple[str, float]) -> float:
    kind, value = budget
    return value if kind == "rho" else value * value / 2.0


def carried_lab(budget: tuple[str, float], mechanism: str, form: str, s: Scenario) -> dict[str, float]:
    """The lab form's field carrying ``budget`` for ``mechanism`` stated as ``form``: {"epsilon": ε}, {"rho": ρ}
    or {"truth_prob": t} (the coin of a model with k categories); {} where the model has no categories."""
    form = form if form in budget_forms(mechanism) else budget_forms(mechanism)[0]
    if form == "rho":
        return {"rho": rounded(_rho(budget))}
    if form == "coin":
        try:
            k = _model(s).k
        except ValueError:
            return {}
        if not k or k < 2:
            return {}
        return {"truth_prob": rounded(math.tanh(_epsilon(budget) / (2.0 * math.log2(k))))}
    return {"epsilon": rounded(_epsilon(budget))}


def carried_form(s: Scenario, form: str, delta: float) -> tuple[dict[str, float], str] | None:
    """The same noise as scenario ``s`` (its mechanism, stated in its own form) restated in ``form`` of that mechanism,
    and the note that says so; ``delta``: the δ box's value, for (ε, δ). None where ``s`` does not build (an invalid
    entry) or states the budget in ``form`` already.

    Gaussian: the noise N(0, σ²) at L2 sensitivity Δ is ρ-zCDP with ρ = Δ²/(2σ²) and (ε, δ)-DP for the ε the analytic
    Gaussian mechanism gives σ and δ (the inverse of the calibration the engine applies to an (ε, δ) budget), so
    either form gives back the σ of the other (to the six digits of :func:`rounded`). Randomized response: k-ary ε
    and the coin whose ε it is (:func:`carried_lab`); the same ε either way."""
    if s.budget_form == form:
        return None
    try:
        noise = build_mechanism(noise_table(s), _model(s), unbounded=s.unknown_n)
    except ValueError:
        return None
    if s.mechanism == "gaussian" and form in ("rho", "epsilon_delta"):
        noise = getattr(noise, "base", noise)  # a clipped release: the Gaussian it clips
        sigma, sens = float(noise.scale), float(noise.sensitivity)
        was = (f"ρ = {rounded(s.rho):g}" if s.budget_form == "rho"
               else f"(ε, δ) = ({rounded(s.epsilon):g}, {s.delta:g})")
        if form == "rho":
            rho = rounded(sens * sens / (2.0 * sigma * sigma))
            return {"rho": rho}, (f"ρ = {rho:g}: the same noise as {was} (σ = {sigma:.4g}), stated as zCDP, "
                                  "ρ = Δ²/(2σ²).")
        eps = rounded(analytic_gaussian_epsilon(sigma, delta, sens))
        return {"epsilon": eps}, (f"ε = {eps:g}: the same noise as {was} (σ = {sigma:.4g}), stated as (ε, δ) at "
                                  f"δ = {delta:g}: the analytic Gaussian mechanism's ε for this σ.")
    budget = stated_budget(s)
    if budget is None:
        return None
    values = carried_lab(budget, s.mechanism, form, s)
    if not values:
        return None
    field, value = next(iter(values.items()))
    return values, carried_note(budget, field, value)


def lab_equivalent(s: Scenario) -> tuple[Scenario, str] | None:
    """The lab's own mechanism with the same noise law as the library release of ``s``, and the note that says so;
    None where the lab has no such mechanism (a clipped, truncated or bounded release, OpenDP's float noise on a
    2^k lattice, its mean) or the release does not build.

    The engine maps every library release to a noise law (``engine.release_from``): Laplace or discrete Laplace of
    scale b at sensitivity Δ is the lab's own at ε = Δ/b with Δ as its sensitivity (diffprivlib's Laplace with
    δ > 0 included: its b is Δ/(ε − log(1 − δ))); Gaussian or discrete Gaussian of σ is the lab's at ρ = Δ²/(2σ²)
    with that Δ; diffprivlib's Binary is k-ary randomized response at its ε. The Privacy budget page sweeps ε with
    the lab's mechanism, so this is how a library's release gets its sweep: the same noise at the sidebar's ε, and
    the grid rescales it."""
    if not s.uses_library:
        return None
    try:
        noise = build_mechanism(noise_table(s), _model(s), unbounded=s.unknown_n)
    except ValueError:
        return None
    name = getattr(noise, "name", None)
    if hasattr(noise, "base") or getattr(noise, "granularity", None) is not None or name not in _LAB_WORDS:
        return None
    if name == "randomized_response":
        if getattr(noise, "scheme", "k_ary") != "k_ary":
            return None
        eps = rounded(noise.guarantee["epsilon"])
        lab = replace(s, release="lab", mechanism=name, budget_form="k_ary", epsilon=eps, sensitivity=None)
        how = f"ε = {eps:g}"
    else:
        sens, scale = float(noise.sensitivity), float(noise.scale)
        if name in ("laplace", "discrete_laplace"):
            eps = rounded(sens / scale)
            lab = replace(s, release="lab", mechanism=name, budget_form="epsilon", epsilon=eps, sensitivity=sens)
            how = f"ε = Δ/{'b' if name == 'laplace' else 't'} = {eps:g} with Δ = {sens:g}"
        else:
            rho = rounded(sens * sens / (2.0 * scale * scale))
            lab = replace(s, release="lab", mechanism=name, budget_form="rho", rho=rho, sensitivity=sens)
            how = f"ρ = Δ²/(2σ²) = {rho:g} with Δ = {sens:g}"
    lib = f"{'OpenDP' if s.release == 'opendp' else 'diffprivlib'} {s.release_mechanism}"
    return lab, (f"The {lib} release's noise is the lab's own {_LAB_WORDS[name]} mechanism at {how} (the same "
                 "noise law, to six digits).")


def model_sensitivities(s: Scenario) -> tuple[float, float] | None:
    """(Δ the analysis uses for the scenario's OpenDP release with its sensitivity left blank: the model's
    add/remove-one one, Δ of the lab's own simulation of the same noise: replace-one for a known n), both as the
    engine builds the mechanisms (``engine.spec.build_mechanism``); None where the model or the release does not
    build yet (the section's error says why) or the release is not OpenDP's laplace or gaussian."""
    if s.release != "opendp" or s.release_mechanism not in ("laplace", "gaussian"):
        return None
    # Δ does not depend on the domain or the granularity (an int domain on a real statistic is the section's error)
    blank = replace(s, release_params=tuple((k, v) for k, v in s.release_params if k not in ("sensitivity", "k",
                                                                                              "domain"))
                    + (("domain", "float"),))
    lab = {"name": s.release_mechanism, **({"rho": 0.5} if s.release_mechanism == "gaussian" else {"epsilon": 1.0})}
    try:
        model = _model(s)
        released = build_mechanism(noise_table(blank), model, unbounded=s.unknown_n)
        own = build_mechanism(lab, model, unbounded=s.unknown_n)
    except ValueError:
        return None
    return float(getattr(released, "base", released).sensitivity), float(own.sensitivity)


def _mean_scales(budget: tuple[str, float], s: Scenario) -> tuple[dict[str, Any], tuple[float, int] | None]:
    """OpenDP's mean at ``budget`` as OpenDP splits it (module table): sum_scale = 2 Δ_sum / ε and length_scale =
    2 c / ε, so that the mean's ε = Δ_sum / sum_scale + c / length_scale is the budget; ({}, None) for a model
    without a mean."""
    try:
        model = _model(s)
    except ValueError:
        return {}, None
    if model.name != "normal_known_sd":
        return {}, None
    c = dict(s.release_params).get("contributions", 1)
    c = int(c) if isinstance(c, (int, float)) and not isinstance(c, bool) and c >= 1 and c == int(c) else 1
    d_sum = c * max(abs(float(model.lo)), abs(float(model.hi)))
    eps = _epsilon(budget)
    return {"sum_scale": rounded(2.0 * d_sum / eps), "length_scale": rounded(2.0 * c / eps)}, (d_sum, c)


def carried_release(budget: tuple[str, float], s: Scenario) -> tuple[dict[str, Any], Any]:
    """The library form's parameters carrying ``budget`` for the release of ``s`` (its library, mechanism and the
    parameters its boxes hold), and the Δ an OpenDP scale is computed at: diffprivlib ({"epsilon": ε}, None);
    OpenDP ({"scale": Δ / ε} or {"scale": Δ / √(2ρ)}, Δ); OpenDP's mean ({"sum_scale": 2 Δ_sum / ε,
    "length_scale": 2 c / ε}, (Δ_sum, c)); ({}, None) where Δ is not known yet or the model has no mean."""
    if s.release == "diffprivlib":
        return {"epsilon": rounded(_epsilon(budget))}, None
    if is_mean(s.release, s.release_mechanism):
        return _mean_scales(budget, s)
    if s.release != "opendp" or s.release_mechanism not in ("laplace", "gaussian"):
        return {}, None
    given = dict(s.release_params).get("sensitivity")
    if isinstance(given, (int, float)) and not isinstance(given, bool) and given > 0:
        delta = float(given)
    else:
        found = model_sensitivities(s)
        if found is None:
            return {}, None
        delta = found[0]
    if s.release_mechanism == "laplace":
        return {"scale": rounded(delta / _epsilon(budget))}, delta
    return {"scale": rounded(delta / math.sqrt(2.0 * _rho(budget)))}, delta


def carried_note(budget: tuple[str, float], field: str, value: float, delta: Any = None) -> str:
    """What the sidebar says under a box the budget was carried into: ``ρ = 0.045: the budget before the switch,
    ε = 0.3, carried over (ρ = ε²/2, the Gaussian counterpart of ε).`` (a library's parameter by its own name;
    OpenDP's mean's two scales in one note, ``delta`` = (Δ_sum, c))."""
    kind, before = budget
    was = f"{'ε' if kind == 'epsilon' else 'ρ'} = {rounded(before):g}"
    if field in ("sum_scale", "length_scale"):  # one note for both boxes, whichever is written last
        d_sum, c = delta
        eps = _epsilon(budget)
        return (f"sum_scale = {rounded(2.0 * d_sum / eps):g}, length_scale = {rounded(2.0 * c / eps):g}: the budget "
                f"before the switch, {was}, carried over as OpenDP calibrates a mean to it (half of "
                f"{'ε' if kind == 'epsilon' else 'ε = √(2ρ)'} each: scale = 2Δ/ε at Δ_sum = {d_sum:g}, "
                f"Δ_length = {c}).")
    how = {("rho", "epsilon"): "ρ = ε²/2, the Gaussian counterpart of ε", ("epsilon", "rho"): "ε = √(2ρ)",
           ("truth_prob", "epsilon"): "the coin whose ε that is",
           ("truth_prob", "rho"): "the coin whose ε is √(2ρ)"}
    if field == "scale":
        how = {"epsilon": f"scale = Δ/ε at Δ = {delta:g}", "rho": f"scale = Δ/√(2ρ) at Δ = {delta:g}"}[kind]
    else:
        how = how.get((field, kind), "")
    name = {"rho": "ρ", "truth_prob": "P(first coin says: answer truthfully)"}.get(field, field)
    return f"{name} = {value:g}: the budget before the switch, {was}, carried over" + (f" ({how})" if how else "") + "."
