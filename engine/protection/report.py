"""``engine.risk(problem_or_spec)``: what the release protects, as one plain dictionary (risk.json).

Four numbers and two curves, every one computed from the mechanism's own noise law
(:mod:`engine.protection.tradeoff`) for the neighbouring pair at the sensitivity:

``tradeoff``
    the optimal attack's type II error ``beta`` at each type I error ``alpha`` on a grid of 201 values
    from 0 to 1 (the Neyman–Pearson curve between the two neighbours).
``bound``
    the curve the stated guarantee allows: pure epsilon-DP (laplace, discrete_laplace,
    randomized_response) ``max(0, 1 - e^eps alpha, e^-eps (1 - alpha))``; the Gaussian mechanism
    (rho-zCDP, and (epsilon, delta)-DP when delta is given) the mu-GDP curve with
    ``mu = sensitivity / sigma = sqrt(2 rho)``, which the Gaussian attains exactly; the discrete
    Gaussian the curve implied by rho-zCDP through its (epsilon, delta(epsilon)) family
    (:func:`~engine.protection.tradeoff.zcdp_tradeoff`): the mu-GDP curve is *not* a bound for discrete
    noise, whose lattice lets the first rejected outcome carry a whole atom (tests/test_risk.py shows it
    dipping below); a library's release stated in (epsilon, delta) with a rho (diffprivlib's Gaussians) its
    rho-zCDP curve, and one without (diffprivlib's Laplace with delta > 0) the (epsilon, delta)-DP curve.
``stated_bound``
    a release stated in (epsilon, delta) only (diffprivlib's Gaussian, GaussianAnalytic, GaussianDiscrete,
    Laplace with delta > 0; the lab's Gaussian in its (epsilon, delta) form): the (epsilon, delta)-DP curve
    ``max(0, 1 - delta - e^eps alpha, e^-eps (1 - delta - alpha))``, what the curator stated, which the
    pages draw as the guarantee (``bound`` keeps the meaning above for the command line's risk.json).
    The lab's Gaussian stated by rho (and a statistic and its size both so, composed: rho_s + rho_n): the
    curve rho-zCDP itself guarantees, :func:`~engine.protection.tradeoff.zcdp_tradeoff` (``kind: "zcdp"``).
    ``bound`` is there the mu-GDP curve, the Gaussian's exact curve; but mu-GDP implies mu^2/2-zCDP, not the
    reverse: another rho-zCDP mechanism may sit below it, so the mu-GDP curve is not what rho-zCDP allows.
``mechanism_curve``
    Gaussian noise stated in (epsilon, delta) or by rho: the Gaussian's own curve, set by its sigma, the mu-GDP
    curve with ``mu = sensitivity / sigma`` (and its zCDP budget ``rho = mu^2 / 2 = sensitivity^2 / (2
    sigma^2)``; composed with a Gaussian size, ``mu = sqrt(mu_s^2 + mu_n^2)``): tighter than the stated
    (epsilon, delta) curve, which it touches at most at one point, and than the rho-zCDP curve; the best
    attack on the unclipped noise lies on it.
``unbounded_records``
    a model whose records are unbounded (poisson_gamma without ``upper``: no record moves the sum by at most
    anything), so the noise is calibrated to a ``sensitivity`` Delta no record is held to: the guarantee covers
    only a person whose record moves the statistic by at most Delta; a record of size r is protected as a shift
    of r, i.e. (r / Delta) eps for pure eps-DP noise, (r / Delta) mu for Gaussian noise (rho times
    (r / Delta)^2). ``{"sensitivity", "scale": eps or mu per unit of Delta ("kind": "pure" | "gdp" | "zcdp"),
    "largest_record"}``, and where the records are known (simulated or uploaded) what the largest gets, computed
    exactly as for the pair at the sensitivity: ``epsilon`` (pure) or ``mu``/``rho``, ``max`` and ``q95`` of the
    informed adversary, ``power_at_5pct``. ``description`` then says it too (the command line's line). None
    elsewhere (key absent).
``noise``
    a clipped release only: the name of the noise under the clip (``mechanism`` is ``"clipped"``).
``informed_adversary``
    someone who knows the other n - 1 records and starts at 50/50 between the two neighbouring values:
    their posterior probability of the true value, ``e^L / (1 + e^L)`` with ``L`` the privacy loss, as a
    distribution over releases (truth drawn 50/50, release from it; ``histogram``: its probability in
    bins of 2.5%): ``q50``, ``q95``, ``q99`` and the
    largest value ``max = e^eps / (1 + e^eps)`` for pure eps-DP noise, ``None`` where ``L`` is unbounded
    (Gaussian and discrete Gaussian noise); ``at_max``: the share of releases whose belief reaches ``max``
    (pure DP puts an atom there: half the releases for Laplace noise on a two-valued record), ``None`` with it.
``neighbours``
    the pair attacked (:mod:`engine.protection.pairs`): replace-one at the sensitivity for a known n;
    add/remove-one for an unknown n, where the release is the pair ``(s_dp, n_dp)``: the target's record
    moves the statistic by ``t(x)`` *and* the size by one, the two noises are independent, so the pair of
    laws is the product of the statistic's pair and the size's pair (the curve of the joint release is the
    tensor product of the two curves, DRS19 §3; computed on the loss lattice of :mod:`.lattice`, or in
    closed form ``mu = sqrt(mu_s^2 + mu_n^2)`` when both noises are Gaussian). The bound is the
    composed guarantee: ``eps_s + eps_n`` when both are pure, ``mu``-GDP when both Gaussian, otherwise
    ``rho_s + rho_n``-zCDP with a pure eps counted as ``eps^2 / 2`` (Bun & Steinke 2016, Prop. 1.4).
``power_at_5pct``
    the optimal attack's power at 5% false positives, ``1 - beta(0.05)``; ``advantage_at_5pct`` is the
    power less the 5% a coin achieves, ``1 - beta(0.05) - 0.05`` (the membership/attribute-inference
    advantage).
``realistic_adversary``
    the model-and-prior adversary's view of one record (:mod:`engine.protection.realistic`).
"""
from __future__ import annotations

import math
import os

import numpy as np

from ..api import prepare
from ..core.results import Problem
from ..core.spec import Spec
from ..core.validation import fail
from ..mechanisms import DiscreteLaplace, Gaussian, Laplace, RandomizedResponse
from ..mechanisms.clipped import BoundedLaplace, Clipped
from ..mechanisms.ratio import OpenDPMean
from ..models import make_model
from ..models.sample_size import make_size_mechanism, make_size_prior, plug_in_n
from ..spec import build_mechanism, load_spec, spec_from_dict
from .pairs import Neighbours, base_mechanism, neighbours, noise_law
from .realistic import realistic_adversary
from .tradeoff import alpha_grid, epsilon_dp_tradeoff, experiment, gdp_tradeoff, zcdp_tradeoff

__all__ = ["risk", "privacy_side", "protection_of_spec", "unbounded_records", "QUANTILES", "FALSE_POSITIVE_RATE",
           "STATISTIC_WORDS"]

QUANTILES = (0.5, 0.95, 0.99)
FALSE_POSITIVE_RATE = 0.05
#: Bins of the informed adversary's belief (0 to 100% in steps of 2.5%) for its histogram.
BELIEF_EDGES = np.linspace(0.0, 1.0, 41)


def risk(problem_or_spec, *, realistic: bool = True) -> dict:
    """The privacy side of a scenario (module docstring): a Problem, a Spec, a spec dict or a spec file path.

    Returns the content of ``risk.json`` (plain floats, lists and ``None``)."""
    problem = _problem(problem_or_spec)
    size = problem.unknown_n.mechanism if problem.unknown_n is not None else None
    out = privacy_side(problem.model, problem.mechanism, n_mechanism=size, unknown_n=problem.unknown_n is not None,
                       records=problem.records)
    if realistic:
        out["realistic_adversary"] = realistic_adversary(problem)
    return out


def protection_of_spec(spec) -> dict:
    """:func:`privacy_side` of a spec without preparing its data (no simulation, no release)."""
    if not isinstance(spec, Spec):
        spec = spec_from_dict(spec)
    if not spec.unknown_n:
        model = make_model(spec.model["name"], spec.model)
        return privacy_side(model, build_mechanism(spec.mechanism, model))
    table = {k: v for k, v in spec.model.items() if k != "n_prior"}
    table.setdefault("n", plug_in_n(make_size_prior(spec.model["n_prior"]).mean))
    model = make_model(table["name"], table)
    size = None if spec.n_mechanism is None else make_size_mechanism(spec.n_mechanism)
    return privacy_side(model, build_mechanism(spec.mechanism, model, unbounded=True), n_mechanism=size,
                        unknown_n=True)


def privacy_side(model, mechanism, n_mechanism=None, unknown_n: bool | None = None, pair=None,
                 records=None) -> dict:
    """Trade-off, bound, informed adversary and power for a model and its mechanism (and, for an unknown n,
    the mechanism of the released size: add/remove-one neighbours, the joint release). ``unknown_n`` defaults
    to whether a size mechanism is given; a histogram whose total is private has add/remove-one neighbours
    and no size mechanism (only its cells are released). ``records``: the confidential records where known,
    for what the largest of unbounded records gets (``unbounded_records``)."""
    if isinstance(mechanism, OpenDPMean):
        return _opendp_mean_side(model, mechanism)
    unknown_n = n_mechanism is not None if unknown_n is None else unknown_n
    if pair is None:
        pair = neighbours(model, mechanism, unknown_n=unknown_n, size_released=n_mechanism is not None)
    exp = experiment(model, mechanism, pair, n_mechanism=n_mechanism)
    alpha = alpha_grid()
    beta = exp.tradeoff(alpha)
    bound = _bound(mechanism, alpha, n_mechanism)
    stated = _stated_bound(mechanism, alpha, n_mechanism)
    own = _mechanism_curve(mechanism, alpha, n_mechanism)
    q = exp.belief_quantile(QUANTILES)
    max_loss = exp.max_loss()
    top = None if math.isinf(max_loss) else float(1.0 / (1.0 + math.exp(-max_loss)))
    power = float(1.0 - exp.tradeoff(FALSE_POSITIVE_RATE))
    guarantee = _guarantee(mechanism, n_mechanism)
    description = mechanism.describe() + (f"; size n released with {n_mechanism.describe()}" if n_mechanism else "")
    out = {
        "epsilon": _float(guarantee["epsilon"]) if guarantee.get("kind") == "pure" else None,
        "mechanism": mechanism.name,
        "guarantee": {k: (_float(v) if isinstance(v, (int, float)) else v) for k, v in guarantee.items()},
        "description": description,
        "neighbours": _pair_dict(pair, exp, mechanism),
        "tradeoff": {"alpha": alpha.tolist(), "beta": beta.tolist(), "max_error": _float(exp.max_error)},
        "bound": bound,
        "informed_adversary": {"prior": 0.5, "q50": float(q[0]), "q95": float(q[1]), "q99": float(q[2]),
                               "max": top, "at_max": None if top is None else exp.belief_share_at_least(top),
                               "histogram": {"edges": BELIEF_EDGES.tolist(),
                                             "probability": exp.belief_histogram(BELIEF_EDGES).tolist()}},
        "power_at_5pct": power,
        "advantage_at_5pct": power - FALSE_POSITIVE_RATE,
    }
    if stated is not None:
        out["stated_bound"] = stated
    if own is not None:
        out["mechanism_curve"] = own
    if isinstance(mechanism, Clipped):  # the noise under the clip, for the legend ("clipped" named no noise)
        out["noise"] = mechanism.base.name
    unbounded = None if isinstance(mechanism, RandomizedResponse) else unbounded_records(model, mechanism, records,
                                                                                          n_mechanism)
    if unbounded is not None:
        out["unbounded_records"] = unbounded
        out["description"] = _unbounded_description(description, unbounded)
    return out


#: a record whose epsilon (or mu) past this tells the pair apart with certainty in double precision (unbounded_records)
CERTAIN = 40.0
#: the statistic one record moves, by model, for the sentences
STATISTIC_WORDS = {"poisson_gamma": "the sum"}


def unbounded_records(model, mechanism, records=None, n_mechanism=None) -> dict | None:
    """Unbounded records (module docstring, ``unbounded_records``): what the guarantee covers, per unit of the
    sensitivity, and, given the records, what the largest of them gets (the exact pair 0 against it, as for the
    pair at the sensitivity); None for a model whose records are bounded."""
    if getattr(model, "true_sensitivity", 0.0) is not None or getattr(model, "name", None) == "custom":
        return None
    base = base_mechanism(mechanism)
    delta = float(base.sensitivity)
    g = mechanism.guarantee
    if g.get("kind") == "pure":
        kind, per = "pure", float(g["epsilon"])
    elif noise_law(base) is Gaussian:
        kind, per = "gdp", float(base.sensitivity / base.scale)
    elif "rho" in g:
        kind, per = "zcdp", float(g["rho"])
    else:
        kind, per = None, None
    out = {"sensitivity": delta, "kind": kind, "scale": per, "statistic": STATISTIC_WORDS.get(model.name,
                                                                                               "the statistic"),
           "largest_record": None}
    if records is None or np.size(records) == 0:
        return out
    top = float(np.max(np.asarray(records, dtype=float)))
    out["largest_record"] = int(top) if top.is_integer() else top
    if top <= 0:
        return out
    k = top / delta
    certain = {"pure": k * per, "gdp": k * per, "zcdp": k * math.sqrt(2.0 * per)}.get(kind, 0.0) if per else 0.0
    if certain > CERTAIN:  # told apart with certainty to double precision: e^-40 is 4e-18; the binned law overflows
        if kind == "pure":
            out["epsilon"] = k * per
        else:
            out["mu"], out["rho"] = certain, certain**2 / 2.0
        out["max"] = 1.0 if kind == "pure" else None
        out["q95"] = out["power_at_5pct"] = 1.0
        return out
    add_remove = n_mechanism is not None
    pair = Neighbours(None if add_remove else 0, out["largest_record"], (top,), size_shift=1.0 if add_remove else 0.0)
    exp = experiment(model, mechanism, pair, n_mechanism=n_mechanism)
    if kind == "pure":
        out["epsilon"] = _float(exp.max_loss())
    elif kind == "gdp":
        out["mu"] = float(getattr(exp, "mu", k * per))
        out["rho"] = out["mu"] ** 2 / 2.0
    elif kind == "zcdp":
        out["rho"] = k * k * per
    loss = exp.max_loss()
    out["max"] = None if math.isinf(loss) else float(1.0 / (1.0 + math.exp(-loss)))
    out["q95"] = float(exp.belief_quantile([0.95])[0])
    out["power_at_5pct"] = float(1.0 - exp.tradeoff(FALSE_POSITIVE_RATE))
    return out


def _unbounded_description(description: str, u: dict) -> str:
    """The mechanism's line, qualified: the guarantee it states covers records that move the statistic by at most
    the sensitivity; what a record of size r gets; the largest record's, where the records are known."""
    d = f"{u['sensitivity']:g}"
    per = {"pure": "(r/{d}) x its epsilon", "gdp": "(r/{d}) x its mu", "zcdp": "(r/{d})^2 x its rho"}.get(u["kind"])
    text = (f"{description}; only for records that move {u['statistic']} by at most {d}: records are unbounded"
            + (f", and a record of size r gets {per.format(d=d)}" if per else ""))
    if u.get("largest_record") is not None and (u.get("epsilon") or u.get("mu") or u.get("rho")):
        got = (f"pure {u['epsilon']:.4g}-DP" if u.get("epsilon") is not None else
               f"mu = {u['mu']:.4g} Gaussian DP" if u.get("mu") is not None else f"{u['rho']:.4g}-zCDP")
        top = u["largest_record"]
        text += f" (the largest record here, {top:,}, gets {got})" if isinstance(top, int) else \
            f" (the largest record here, {top:g}, gets {got})"
    return text


def _opendp_mean_side(model, mech) -> dict:
    """OpenDP's mean releases one number, r = (S + L) / max(N + G, 0): the clamped sum S with Laplace noise L of
    scale b and the length N with discrete Laplace noise G of scale t, under add/remove-one neighbours (one
    person's c records in or out: S moves by at most c max(|lo|, |hi|), N by c). The ratio is computed from the
    pair (S + L, N + G), so every test on r is a test on the pair: the pair's trade-off curve (two independent
    coordinates, exactly as for a sum released with its size, :func:`privacy_side` with ``n_mechanism``) lies at
    or below the ratio's, and what an adversary who knows everyone else can conclude from r is at most what
    they could from the pair. The curve, the beliefs and the power are the pair's, said as such in
    ``neighbours["note"]``; the stated guarantee is OpenDP's own (eps_sum + eps_length)."""
    c = float(mech.contributions)
    value = mech.upper if abs(mech.upper) >= abs(mech.lower) else mech.lower  # dp.mean's bounds (= [lo, hi])
    sum_mech = Laplace(scale=mech.sum_scale, sensitivity=mech.sensitivity)
    length_mech = DiscreteLaplace(scale=mech.length_scale, sensitivity=c)
    pair = Neighbours(None, value, (c * abs(value),), size_shift=c,
                      note=f"add/remove-one: one dataset has the person's "
                           f"{'record' if c == 1 else f'{int(c)} records'}, the other not; the sum moves by "
                           f"{c * abs(value):g} and the "
                           f"length by {c:g}. OpenDP divides the noisy sum by the noisy length: the curve is the "
                           "best attack on that pair, and no attack on the released ratio does better")
    out = privacy_side(model, sum_mech, n_mechanism=length_mech, pair=pair)
    out["mechanism"] = mech.name
    out["description"] = mech.describe()
    out["guarantee"] = {k: (_float(v) if isinstance(v, (int, float)) else v) for k, v in mech.guarantee.items()}
    out["epsilon"] = out["guarantee"]["epsilon"]
    out["attack_on"] = "the (sum, length) pair"  # what the curve attacks (the figure's legend names it)
    return out


def _pair_dict(pair, exp, mechanism) -> dict:
    """The pair attacked; against a clip or a bounded domain, also where its statistic sits (``s0``)."""
    out = pair.as_dict()
    if isinstance(mechanism, (Clipped, BoundedLaplace)) and getattr(exp, "positions", None):
        out["s0"] = list(exp.positions)
    return out


def _guarantee(mechanism, n_mechanism=None) -> dict:
    """The stated guarantee; for an unknown n, the composition of the two (module docstring)."""
    g = dict(mechanism.guarantee)
    if n_mechanism is None:
        return g
    parts = [g, dict(n_mechanism.guarantee)]
    if all(p.get("kind") == "pure" for p in parts):
        return {"kind": "pure", "epsilon": sum(p["epsilon"] for p in parts), "composed_of": parts}
    if all(type(base_mechanism(m)) is Gaussian for m in (mechanism, n_mechanism)):
        mu = math.hypot(*(m.sensitivity / m.scale for m in (mechanism, n_mechanism)))
        return {"kind": "gdp", "mu": mu, "rho": mu * mu / 2.0, "composed_of": parts}  # mu-GDP is exactly mu^2/2-zCDP
    rho = sum(p["rho"] if "rho" in p else p["epsilon"] ** 2 / 2.0 for p in parts)
    return {"kind": "zcdp", "rho": rho, "composed_of": parts}


def _bound(mechanism, alpha, n_mechanism=None) -> dict:
    """The curve the stated guarantee allows (module docstring); a clip is post-processing and keeps its noise's."""
    g = _guarantee(mechanism, n_mechanism)
    base = base_mechanism(mechanism)
    if g.get("kind") == "gdp" or (n_mechanism is None and type(base) is Gaussian):
        mu = g["mu"] if "mu" in g else base.sensitivity / base.scale
        out = {"kind": "gdp", "mu": mu, "beta": gdp_tradeoff(alpha, mu)}
    elif g.get("kind") == "zcdp" or "rho" in g:
        out = {"kind": "zcdp", "rho": g["rho"], "beta": zcdp_tradeoff(alpha, g["rho"])}
    else:
        delta = float(g.get("delta", 0.0) or 0.0)
        out = {"kind": "epsilon_dp", "epsilon": g["epsilon"], "delta": delta,
               "beta": epsilon_dp_tradeoff(alpha, g["epsilon"], delta)}
    return _curve(out, alpha)


def _stated_bound(mechanism, alpha, n_mechanism=None) -> dict | None:
    """A release stated in (epsilon, delta): that statement's curve (module docstring, ``stated_bound``); None for
    any other statement (``bound`` is then its curve)."""
    g = _guarantee(mechanism, n_mechanism)
    if _gaussian_by_rho(mechanism, n_mechanism):  # what rho-zCDP allows, not the Gaussian's mu-GDP curve
        return _curve({"kind": "zcdp", "rho": g["rho"], "beta": zcdp_tradeoff(alpha, g["rho"])}, alpha)
    if g.get("kind") != "approx":
        return None
    delta = float(g["delta"])
    return _curve({"kind": "epsilon_dp", "epsilon": g["epsilon"], "delta": delta,
                   "beta": epsilon_dp_tradeoff(alpha, g["epsilon"], delta)}, alpha)


def _curve(out: dict, alpha) -> dict:
    out["alpha"] = np.asarray(alpha).tolist()
    out["beta"] = np.asarray(out["beta"]).tolist()
    return {k: (_float(v) if isinstance(v, float) else v) for k, v in out.items()}


def _gaussian_by_rho(mechanism, n_mechanism=None) -> bool:
    """The lab's Gaussian stated by rho (zCDP), alone or with a Gaussian size stated so: its stated guarantee
    (rho-zCDP) is looser than its own curve (mu-GDP)."""
    mechs = [mechanism] if n_mechanism is None else [mechanism, n_mechanism]
    return all(noise_law(base_mechanism(m)) is Gaussian and m.guarantee.get("kind") == "zcdp" for m in mechs)


def _mechanism_curve(mechanism, alpha, n_mechanism=None) -> dict | None:
    """Gaussian noise stated in (epsilon, delta) or by rho: its own mu-GDP curve, ``mu = sensitivity / sigma``
    (with a Gaussian size, ``mu = sqrt(mu_s^2 + mu_n^2)``; module docstring); None otherwise (the bound already is
    the noise's own curve, or there is none in closed form)."""
    base = base_mechanism(mechanism)
    if _gaussian_by_rho(mechanism, n_mechanism):
        mu = float(_guarantee(mechanism, n_mechanism).get("mu") or base.sensitivity / base.scale)
        return {"kind": "gdp", "mu": mu, "rho": mu * mu / 2.0, "alpha": np.asarray(alpha).tolist(),
                "beta": np.asarray(gdp_tradeoff(alpha, mu)).tolist()}
    if n_mechanism is not None or mechanism.guarantee.get("kind") != "approx" or noise_law(base) is not Gaussian:
        return None
    mu = float(base.sensitivity / base.scale)
    return {"kind": "gdp", "mu": mu, "rho": mu * mu / 2.0, "alpha": np.asarray(alpha).tolist(),
            "beta": np.asarray(gdp_tradeoff(alpha, mu)).tolist()}


def _problem(obj) -> Problem:
    if isinstance(obj, Problem):
        return obj
    if isinstance(obj, (str, os.PathLike)):
        return prepare(load_spec(os.fspath(obj)))
    if isinstance(obj, (Spec, dict)) or hasattr(obj, "keys"):
        return prepare(obj)
    fail("problem_or_spec", type(obj).__name__, "must be an engine.Problem, a Spec, a spec dict or a spec file path")


def _float(v):
    v = float(v)
    return v if math.isfinite(v) else None
