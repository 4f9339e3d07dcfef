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
    rho-zCDP curve, and one without (diffprivlib's LaplaceBoundedDomain with delta > 0) the (epsilon, delta)-DP
    curve. diffprivlib's Laplace and LaplaceTruncated with delta > 0 are stated (epsilon, delta) but their noise,
    ``b = Delta / (epsilon - log(1 - delta))``, is pure ``epsilon' = Delta / b = epsilon - log(1 - delta)``-DP
    (1.105 at epsilon = 1, delta = 0.1), which implies the statement and is stronger: they are reported as pure
    epsilon'-DP (``epsilon`` is epsilon', no ``stated_bound``).
``guarantee`` and ``epsilon``
    the guarantee that covers the attacked pair: the stated one, except where n is known and the replaced record
    moves the statistic by more than the sensitivity Delta the noise is calibrated to (an OpenDP release, stated
    for add/remove-one neighbours at ``Delta = max(|lo|, |hi|)``, analysed with n known: replacing a record moves
    the sum by up to ``hi - lo``). There it is the mechanism's guarantee at the pair's shift ``d`` (pure
    ``eps d / Delta``; Gaussian ``mu d / Delta``, ``rho (d / Delta)^2``; :func:`pair_guarantee` derives each), with
    the library's own statement under ``guarantee["stated"]``, the pair under ``guarantee["pair"]`` and a sentence
    under ``guarantee["note"]``; ``epsilon``, ``bound``, ``stated_bound`` and ``mechanism_curve`` then describe
    that guarantee, so the attack's curve never lies below the curve drawn as the guarantee (it lay up to 0.39
    below "what eps-DP allows (eps = 1)" for an OpenDP Laplace sum at scale 3, the pair being 2-DP). Where the
    pair moves the statistic by less than Delta (linear_regression's default Delta, a bound no record reaches) the
    stated guarantee stays, a valid looser one.
``stated_bound``
    a release stated in (epsilon, delta) only (diffprivlib's Gaussian, GaussianAnalytic, GaussianDiscrete,
    LaplaceBoundedDomain with delta > 0; the lab's Gaussian in its (epsilon, delta) form; not diffprivlib's Laplace
    with delta > 0, pure epsilon'-DP as said under ``bound``): the (epsilon, delta)-DP curve
    ``max(0, 1 - delta - e^eps alpha, e^-eps (1 - delta - alpha))``, what the curator stated, which the
    pages draw as the guarantee (``bound`` keeps the meaning above for the command line's risk.json).
    The lab's Gaussian stated by rho (and a statistic and its size both so, composed: rho_s + rho_n): the
    curve rho-zCDP itself guarantees, :func:`~engine.protection.tradeoff.zcdp_tradeoff` (``kind: "zcdp"``).
    ``bound`` is there the mu-GDP curve, the Gaussian's exact curve; but mu-GDP implies mu^2/2-zCDP, not the
    reverse: another rho-zCDP mechanism may sit below it, so the mu-GDP curve is not what rho-zCDP allows.
``mechanism_curve``
    Gaussian noise stated in (epsilon, delta) or by rho: the Gaussian's own curve, set by its sigma, the mu-GDP
    curve with ``mu = d / sigma``, ``d`` the L2 shift of the attacked pair where n is known (``shift`` and
    ``sensitivity`` say both; ``d`` may be below Delta, as for linear_regression, or above it, as for OpenDP's
    add/remove-one Delta), else ``mu = sensitivity / sigma`` (and its zCDP budget ``rho = mu^2 / 2``; composed
    with a Gaussian size, ``mu = sqrt(mu_s^2 + mu_n^2)``): tighter than the stated (epsilon, delta) curve, which it
    touches at most at one point, and than the rho-zCDP curve; the best attack on the unclipped noise lies on it.
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
    largest value ``max = e^eps / (1 + e^eps)`` for pure eps-DP noise (eps the pair's, ``epsilon``; below it where
    the pair moves the statistic by less than Delta), ``None`` where ``L`` is unbounded
    (Gaussian and discrete Gaussian noise, unclipped or clipped on one side only; clipped on both sides, over a
    statistic whose range is bounded, the largest atom's loss over placements,
    :class:`~engine.protection.tradeoff.ClippedWorst`); ``at_max``: the share of releases whose belief reaches ``max``
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
    advantage). The test is between the pair's two values of one person's record, everyone else known (a
    per-person worst case, not a screen of a population), said in :data:`ATTACK_WORDS`.
``realistic_adversary``
    the model-and-prior adversary's view of one record (:mod:`engine.protection.realistic`).
"""
from __future__ import annotations

import dataclasses
import math
import os

import numpy as np

from ..api import prepare
from ..core.results import Problem
from ..core.spec import Spec
from ..core.validation import fail
from ..mechanisms import DiscreteGaussian, DiscreteLaplace, Gaussian, Laplace, RandomizedResponse
from ..mechanisms.budgets import analytic_gaussian_epsilon
from ..mechanisms.clipped import BoundedLaplace, Clipped
from ..mechanisms.libraries import StatedDiscreteGaussian, StatedGaussian
from ..mechanisms.ratio import OpenDPMean
from ..models import make_model
from ..models.sample_size import make_size_mechanism, make_size_prior, plug_in_n
from ..spec import build_mechanism, load_spec, spec_from_dict
from .pairs import Neighbours, base_mechanism, neighbours, noise_law
from .realistic import realistic_adversary
from .tradeoff import alpha_grid, epsilon_dp_tradeoff, experiment, gdp_tradeoff, zcdp_delta, zcdp_tradeoff

__all__ = ["risk", "privacy_side", "protection_of_spec", "unbounded_records", "pair_guarantee", "QUANTILES",
           "FALSE_POSITIVE_RATE", "STATISTIC_WORDS", "ATTACK_WORDS", "unbounded_words", "with_release",
           "release_words", "for_bin", "share_decimals"]

QUANTILES = (0.5, 0.95, 0.99)
FALSE_POSITIVE_RATE = 0.05
#: the optimal attack at 5% false positives in words, ``{power}`` its power as a percentage (the command line's line
#: and the page's sentence): a test between two values of one person's record with everyone else known. It read
#: "the best attack that wrongly flags 5% of people catches 14% of the real ones", a screen of a population.
ATTACK_WORDS = ("the best attack on one person's record, wrong 5% of the time when it has the other value, "
                "detects it {power} of the time")


def share_decimals(p: float, least: int = 1, apart_from: float | None = None) -> int:
    """Decimals to write a share ``p`` in percent with: ``least``, more where that would write a share strictly
    between 0 and 1 as 0% or 100% (at ε = 10, "catches 100.0%" for 99.977%), or a share that differs from
    ``apart_from`` as the same number ("to at most 50%" from a 50% guess at ε = 0.01, for 50.25%: a move read as
    none). At most four. The page's shares (``figures.protection.percent``, whole from 1% to 99%) and the command
    line's (one decimal, ``engine.cli.risk.share``) both take it."""
    v, other = 100.0 * float(p), None if apart_from is None else 100.0 * float(apart_from)
    k = least
    while k < 4 and ((0.0 < v < 100.0 and float(f"{v:.{k}f}") in (0.0, 100.0))
                     or (other is not None and v != other and f"{v:.{k}f}" == f"{other:.{k}f}")):
        k += 1
    return k


def directed_percent(p: float, least: int, up: bool) -> str:
    """A share in percent for a bound ("at most X", "X or more"): at :func:`share_decimals` (``least``) where that
    rounding keeps the bound true, else rounded the safe way (up for "at most", down for "at least") at the same
    decimals, one at least, with more where the safe way would reach 100% or 0% for a share strictly between. The
    page (``figures.protection.percent_at_most`` / ``percent_at_least``, whole percentages from 1% to 99%) and the
    command line's 95% level (one decimal, ``engine.cli.risk.summary_line``) both take it."""
    v = 100.0 * float(p)
    k = share_decimals(p, least)
    said = f"{v:.{k}f}"
    if (float(said) >= v - 1e-9) if up else (float(said) <= v + 1e-9):
        return f"{said}%"
    k = max(1, k)
    while True:
        scale = 10.0 ** k
        safe = (math.ceil(scale * v - 1e-9) if up else math.floor(scale * v + 1e-9)) / scale
        if k >= 6 or not (0.0 < v < 100.0) or 0.0 < safe < 100.0:
            return f"{safe:.{k}f}%"
        k += 1


def with_release(out: dict, release: dict | None) -> dict:
    """``out`` (:func:`risk`) with the library's own statement under ``"release"`` where the budget reported is not
    the one stated: diffprivlib's Laplace or LaplaceTruncated with ``delta > 0`` use ``b = Delta / (eps - log(1 -
    delta))``, pure ``eps' = eps - log(1 - delta)``-DP, which implies the (eps, delta) stated and is stronger, so
    ``epsilon`` is eps' (module docstring, ``bound``). ``{"library", "mechanism", "epsilon", "delta"}``, read by
    :func:`release_words`; ``out`` itself for any other release (``release``: the spec's ``[release]`` table, None
    without one), or where the attacked pair's own guarantee already replaced the stated one (``guarantee["pair"]``,
    :func:`pair_guarantee`). The page and the command line both take it from here."""
    if (not release or release.get("library") != "diffprivlib"
            or release.get("mechanism") not in ("Laplace", "LaplaceTruncated") or not release.get("delta")
            or out.get("epsilon") is None or (out.get("guarantee") or {}).get("pair")):
        return out
    return {**out, "release": {"library": "diffprivlib", "mechanism": release["mechanism"],
                               "epsilon": float(release["epsilon"]), "delta": float(release["delta"])}}


def release_words(out: dict) -> str | None:
    """Why the budget is not the one typed (``out["release"]``, :func:`with_release`), in parentheses:
    ``(diffprivlib's (1, 0.1)-DP Laplace, met as pure 1.105-DP)``; budgets to four significant digits, as the
    mechanism's line states them. None elsewhere. The page put it after "At ε = 1.105"; the command line said only
    "pure 1.105-DP"."""
    r, eps = out.get("release"), out.get("epsilon")
    if not r or eps is None:
        return None
    return f"(diffprivlib's ({r['epsilon']:.4g}, {r['delta']:.2g})-DP {r['mechanism']}, met as pure {eps:.4g}-DP)"


def for_bin(out: dict, package: dict) -> dict:
    """``out`` (:func:`risk`) for a dp-wizard histogram bin's count, with ``package`` (``{"package", "kind": "bin",
    "column", "bins"}``) under ``"package"``: what the page (``ui.protection_text.for_package``) and the command line
    (``engine.cli.risk``) both say of it.

    A bin's count is analysed as one Poisson count (n = 1): its one "record" is the whole count, so the model-only
    adversary's "this person's record is 85" means nothing; it is left out, with why, and so is
    ``unbounded_records`` (one person moves the count by the sensitivity, not by a record of any size). The informed
    adversary and the curves stay: one person's row in or out of the data (OpenDP's add/remove-one neighbours)
    moves the bin's count by the sensitivity, which is the pair they attack, so the note on the pair says that."""
    out = {**out, "package": dict(package)}
    out.pop("unbounded_records", None)
    shift = max(abs(float(v)) for v in out["neighbours"]["shift"])
    out["neighbours"] = {**out["neighbours"], "note": (
        f"one person's row in the data or not (OpenDP's add/remove-one neighbours): the bin's count moves by "
        f"{shift:g}")}
    out["realistic_adversary"] = {"available": False, "reason": (
        "a histogram bin's count is analysed as one Poisson count (n = 1), so its one \"record\" is the whole "
        "count of the bin, not one person's row; what one person changes (the count, by one) is what the two "
        "views above bound")}
    return out


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
    # n known: the replaced record's shift d in the noise's norm, and the guarantee at d where d exceeds Delta
    shift = None if unknown_n or n_mechanism is not None or isinstance(mechanism, RandomizedResponse) else \
        _pair_distance(mechanism, pair)
    wider = None if shift is None else pair_guarantee(mechanism, pair, STATISTIC_WORDS.get(model.name))
    guarantee = wider or _guarantee(mechanism, n_mechanism)
    bound = _bound(mechanism, alpha, n_mechanism, guarantee)
    stated = _stated_bound(mechanism, alpha, n_mechanism, guarantee)
    own = _mechanism_curve(mechanism, alpha, n_mechanism, guarantee, shift)
    q = exp.belief_quantile(QUANTILES)
    max_loss = exp.max_loss()
    top = None if math.isinf(max_loss) else float(1.0 / (1.0 + math.exp(-max_loss)))
    power = float(1.0 - exp.tradeoff(FALSE_POSITIVE_RATE))
    description = mechanism.describe() + (f"; size n released with {n_mechanism.describe()}" if n_mechanism else "")
    if wider:
        description += f"; {wider['replaced']}"
    out = {
        "epsilon": _float(guarantee["epsilon"]) if guarantee.get("kind") == "pure" else None,
        "mechanism": mechanism.name,
        "guarantee": _plain(guarantee),
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
STATISTIC_WORDS = {"poisson_gamma": "the sum", "normal_known_sd": "the sum", "beta_binomial": "the count",
                   "dirichlet_multinomial": "the counts"}


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
    """The mechanism's line, qualified (:func:`unbounded_words`)."""
    return description + unbounded_words(u)


def unbounded_words(u: dict) -> str:
    """What the mechanism's line gets after it for unbounded records (``u``, :func:`unbounded_records`): the
    guarantee it states covers records that move the statistic by at most the sensitivity; what a record of size r
    gets; the largest record's, where the records are known. ``"; only for records that move the sum by at most 1:
    ..."``."""
    d = f"{u['sensitivity']:g}"
    per = {"pure": "(r/{d}) x its epsilon", "gdp": "(r/{d}) x its mu", "zcdp": "(r/{d})^2 x its rho"}.get(u["kind"])
    text = (f"; only for records that move {u['statistic']} by at most {d}: records are unbounded"
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


#: a pair's shift past the sensitivity by more than this share of it is the pair's own, not rounding
SHIFT_TOLERANCE = 1e-9


def _l2_noise(mechanism) -> bool:
    """Gaussian-type noise, whose curve depends on the L2 norm of the shift (Laplace-type: the L1 norm)."""
    return isinstance(base_mechanism(mechanism), (Gaussian, DiscreteGaussian))


def _pair_distance(mechanism, pair) -> float:
    """The attacked pair's shift ``|d|`` in the noise's norm (L2 for Gaussian-type noise, L1 otherwise)."""
    return float(np.linalg.norm(np.asarray(pair.shift, dtype=float), 2 if _l2_noise(mechanism) else 1))


def pair_guarantee(mechanism, pair, statistic: str | None = None) -> dict | None:
    """The guarantee that covers the attacked replace-one pair (n known) where its shift ``d`` exceeds the
    sensitivity ``Delta`` the noise is calibrated to; None where ``d <= Delta`` (the stated guarantee covers it).

    A release calibrated to ``Delta`` under add/remove-one neighbours (OpenDP's: a sum of values in [lo, hi] has
    ``Delta = max(|lo|, |hi|)``) states its budget for one person added or removed. With n known, the neighbours
    are one person's record replaced, which moves the sum by up to ``d = hi - lo`` (``2 Delta`` for lo = -hi) and a
    histogram by ``e_j - e_i`` (``|d|_1 = 2``, ``|d|_2 = sqrt 2``, against ``Delta = 1``). The statement at
    ``Delta`` then says nothing about that pair; what holds is the mechanism's guarantee at sensitivity ``d``, in
    the noise's norm:

    additive noise (Laplace, discrete Laplace, and on a lattice ``g Z``)
        the privacy loss between statistics ``d`` apart is at most ``|d|_1 / b`` (``(|d|_1 + g) / b`` on a
        lattice): pure ``eps d / Delta``-DP, the mechanism's own formula at ``d`` (and for diffprivlib's Laplace
        with ``delta > 0``, ``b = Delta / (eps - log(1 - delta))``, the pure ``d / b`` its noise gives).
    the Gaussian (continuous)
        ``mu = |d|_2 / sigma``-GDP exactly (Dong, Roth & Su 2019, Thm 2.7), i.e. ``rho = mu^2 / 2 = rho_stated
        (d / Delta)^2``-zCDP; a Gaussian stated in (eps, delta) keeps its delta and takes the smallest eps whose
        analytic-Gaussian ``delta(eps)`` at sensitivity ``d`` is at most it (Balle & Wang 2018, Thm 8):
        ``Phi(d / (2 sigma) - eps sigma / d) - e^eps Phi(-d / (2 sigma) - eps sigma / d) <= delta``.
    the discrete Gaussian
        ``|d|_2^2 / (2 sigma^2)``-zCDP (Canonne, Kamath & Steinke 2020, Thm 14, summed over independent
        coordinates); stated in (eps, delta), the smallest eps whose zCDP ``delta(eps)`` (:func:`zcdp_delta`) is at
        most the stated delta.
    a bounded domain (diffprivlib's LaplaceBoundedDomain)
        its noise depends on where the statistic sits, so no formula at ``d`` is given; the pair's two statistics
        are joined by ``m = ceil(d / Delta)`` steps of at most ``Delta`` inside the domain, and group privacy
        (Dwork & Roth 2014, Thm 2.2) gives ``(m eps, m e^{(m - 1) eps} delta)``.

    Returns that guarantee (``kind``, ``epsilon``/``rho``/``mu``/``delta``) with ``stated`` (the mechanism's own
    statement), ``pair`` (``shift`` d, ``sensitivity`` Delta, ``ratio`` d / Delta, ``norm``, ``statistic``) and
    ``note``, one sentence that says both (``replaced``: its second half, which the mechanism's line gets)."""
    base = base_mechanism(mechanism)
    delta_s, d = float(base.sensitivity), _pair_distance(mechanism, pair)
    if not d > delta_s * (1.0 + SHIFT_TOLERANCE):
        return None
    stated = dict(mechanism.guarantee)
    g = _at_sensitivity(base, d, stated)
    words = statistic or "the statistic"
    norm = ("L2" if _l2_noise(mechanism) else "L1") if len(pair.shift) > 1 else None
    g["stated"] = stated
    g["pair"] = {"shift": d, "sensitivity": delta_s, "ratio": d / delta_s, "norm": norm, "statistic": words}
    g["replaced"] = (f"with n known, replacing one person's record moves {words} by up to "
                     f"{d:.4g}{f' ({norm})' if norm else ''} = {d / delta_s:.4g}Δ, so this release is "
                     f"{_budget_words(g)} for that")
    g["note"] = (f"stated as {_budget_words(stated)} for a change of up to Δ = {delta_s:.4g} (such as adding or "
                 f"removing one person); {g['replaced']}")
    return g


def _at_sensitivity(base, d: float, stated: dict) -> dict:
    """The mechanism's guarantee at sensitivity ``d`` (:func:`pair_guarantee`)."""
    sigma = float(base.scale)
    if isinstance(base, BoundedLaplace):
        m = math.ceil(d / float(base.sensitivity) - SHIFT_TOLERANCE)
        eps, delta = float(stated["epsilon"]), float(stated.get("delta", 0.0) or 0.0)
        out = {"kind": "approx" if delta else "pure", "epsilon": m * eps, "group": m}
        if delta:
            out["delta"] = min(1.0, m * math.exp((m - 1) * eps) * delta)
        return out
    if isinstance(base, StatedGaussian):
        delta = float(stated["delta"])
        return {"kind": "approx", "epsilon": analytic_gaussian_epsilon(sigma, delta, d), "delta": delta,
                "rho": d * d / (2.0 * sigma * sigma), "mu": d / sigma}
    if isinstance(base, StatedDiscreteGaussian):
        rho, delta = d * d / (2.0 * sigma * sigma), float(stated["delta"])
        return {"kind": "approx", "epsilon": _zcdp_epsilon(rho, delta), "delta": delta, "rho": rho}
    out = dict(dataclasses.replace(base, sensitivity=d).guarantee)
    if type(base) is Gaussian:
        out["mu"] = d / sigma
    return out


def _zcdp_epsilon(rho: float, delta: float) -> float:
    """The smallest eps with ``zcdp_delta(rho, eps) <= delta``, by bisection from ``rho + 2 sqrt(rho log(1/delta))``,
    which always holds (Bun & Steinke 2016, Prop. 1.3); the upper end is returned, so the pair holds."""
    lo, hi = 0.0, rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if zcdp_delta(rho, mid) <= delta else (mid, hi)
    return hi


def _budget_words(g: dict) -> str:
    """A guarantee in words, as the mechanism's line states one: ``pure 2-DP``, ``2-zCDP (μ = 2 Gaussian DP)``,
    ``(1.5, 1e-05)-DP``."""
    mu = f" (μ = {g['mu']:.4g} Gaussian DP)" if g.get("mu") is not None else ""
    if g.get("kind") == "pure":
        return f"pure {g['epsilon']:.4g}-DP"
    if g.get("kind") == "zcdp":
        return f"{g['rho']:.4g}-zCDP{mu}"
    return f"({g['epsilon']:.4g}, {g.get('delta', 0.0):.2g})-DP{mu}"


def _plain(value):
    """Floats made JSON-safe (``None`` for inf and nan), through nested dicts and lists (risk.json)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return _float(value)
    return value


def _bound(mechanism, alpha, n_mechanism=None, g: dict | None = None) -> dict:
    """The curve the guarantee ``g`` allows (the stated one by default; the pair's, :func:`pair_guarantee`, where the
    replaced record moves the statistic further than Delta); a clip is post-processing and keeps its noise's."""
    g = _guarantee(mechanism, n_mechanism) if g is None else g
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


def _stated_bound(mechanism, alpha, n_mechanism=None, g: dict | None = None) -> dict | None:
    """A release stated in (epsilon, delta): that statement's curve (module docstring, ``stated_bound``); None for
    any other statement (``bound`` is then its curve). ``g``: the guarantee (default the stated one)."""
    g = _guarantee(mechanism, n_mechanism) if g is None else g
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


def _mechanism_curve(mechanism, alpha, n_mechanism=None, g: dict | None = None, shift: float | None = None):
    """Gaussian noise stated in (epsilon, delta) or by rho: its own mu-GDP curve, ``mu = d / sigma`` with ``d`` the
    L2 shift of the attacked pair (``shift``, n known), else ``mu = sensitivity / sigma`` (with a Gaussian size,
    ``mu = sqrt(mu_s^2 + mu_n^2)``; module docstring); None otherwise (the bound already is the noise's own curve,
    or there is none in closed form).

    The Gaussian's curve between two statistics ``d`` apart is exactly ``G_{|d|_2 / sigma}`` (DRS19 Thm 2.7), so
    the best attack lies on the curve at the pair's own ``d``, not at Delta: linear_regression's default
    ``Delta_2 = sqrt(24)`` (p = 2) bounds a change no record makes (the largest is 4), and the curve drawn at
    ``mu = Delta / sigma = 1`` as the one "the best attack lies on" lay below the attack's ``mu = 4 / sqrt(24)``.
    ``shift`` and ``sensitivity`` travel with the curve so the legend can say which it is."""
    base = base_mechanism(mechanism)
    if _gaussian_by_rho(mechanism, n_mechanism):
        g = _guarantee(mechanism, n_mechanism) if g is None else g
        mu = float(g.get("mu") or base.sensitivity / base.scale) if shift is None else float(shift / base.scale)
    elif n_mechanism is not None or mechanism.guarantee.get("kind") != "approx" or noise_law(base) is not Gaussian:
        return None
    else:
        mu = float((base.sensitivity if shift is None else shift) / base.scale)
    out = {"kind": "gdp", "mu": mu, "rho": mu * mu / 2.0, "alpha": np.asarray(alpha).tolist(),
           "beta": np.asarray(gdp_tradeoff(alpha, mu)).tolist()}
    if shift is not None:
        out.update(shift=float(shift), sensitivity=float(base.sensitivity))
    return out


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
