"""The sentences that tell a visitor what the figures show, computed from the results (no streamlit).

:func:`headline` is the one sentence above the Compare figure: how much too narrow the naive
posterior is, how far off the exact posterior's centre (not the truth's: the release's noise moves every
method's centre alike), and whether each 90% interval covers the truth, or, when the noise
is small relative to the data, that naive and exact agree. Every number in it is read off the runs,
so it changes with the scenario and never claims more than they show. :func:`convergence_warning`
is the single warning about MCMC runs that have not converged.
"""
from __future__ import annotations

import math
import re
from decimal import Decimal
from typing import Any, Mapping, Sequence

from engine.cost import duration, listed
from engine.numerics.diagnostics import ESS_MIN
from figures.axes import param_symbol
from figures.labels import METHOD_LABELS, MODEL_LABELS, info_label
from .params.messages import FIELD_LABELS
from .tables import acceptance_text, ess_full, rhat_at_most, run_label

__all__ = ["headline", "reference_method", "convergence_warning", "mle_caption", "over_budget", "would_take",
           "too_few_to_converge", "pseudo_marginal_caption", "moved", "listed", "none_accepted", "auto_caption",
           "plain_number", "release_text", "AGREE_SD_RATIO", "AGREE_SHIFT"]

#: naive and exact "agree" when their sds are within this factor ...
AGREE_SD_RATIO = 1.25
#: ... and their means within this many exact posterior sds.
AGREE_SHIFT = 0.25
#: the exact methods, best first: closed form, the best-method pick, then the exact samplers. RJMCMC runs
#: only when n is unknown, and then it is the one exact posterior (the others assume the plug-in n).
_EXACT_ORDER = ("rjmcmc", "exact", "auto", "pseudo_marginal", "da_mcmc", "abc_rejection")


def _usable(run) -> bool:
    return run is not None and getattr(run, "result", None) is not None and not (
        getattr(run, "stalled", False) or getattr(run, "too_few", False))


def _plug_in_n(run) -> int | None:
    """The plug-in n a run of an unknown-n problem ran at (``info["plug_in_n"]``), None where it treated n as unknown
    or n was known."""
    return (getattr(getattr(run, "result", None), "info", None) or {}).get("plug_in_n")


def reference_method(runs: Mapping[str, Any]) -> str | None:
    """The exact posterior the sentence compares naive with: the first of RJMCMC, closed form, best method,
    pseudo-marginal, DA-MCMC, ABC that produced draws (and, for a chain, converged), one that treats an unknown n
    as unknown before one run at the plug-in n. With RJMCMC not converged, the closed form at the plug-in n was
    "the exact posterior" of an unknown n (audit s25)."""
    usable = [m for m in _EXACT_ORDER if _usable(runs.get(m))]
    return next((m for m in usable if _plug_in_n(runs[m]) is None), usable[0] if usable else None)


def _row(run, param: str) -> Mapping[str, float]:
    return run.summary.loc[param]


def _fmt(v: float) -> str:
    """A distance in the headline: 0.25, 0.000065, 3.14, 5,700 (no 6.5e-05 or 5.7e+03)."""
    a = abs(v)
    if a >= 1000:
        return f"{float(f'{v:.2g}'):,.0f}"
    if a >= 1 or a == 0:
        shown = f"{v:.3g}"
        return f"{float(shown):,.0f}" if "e" in shown else shown  # 999.9 rounds to 1e+03
    shown = f"{v:.2g}"
    return format(Decimal(shown), "f") if "e" in shown and a >= 1e-6 else shown  # 6.5e-05 as 0.000065


def plain_number(v: float, digits: int = 6) -> str:
    """A released value as people write it: ``digits`` significant digits, thousands separators, never an exponent
    (29,873.5, not 2.987e+04; 1,000,000,000, not 1e+09; 0.00000025)."""
    v = float(v)
    if not math.isfinite(v):
        return str(v)
    return format(Decimal(f"{v:.{digits}g}"), ",f")


def release_text(values, shown: int | None = None) -> str:
    """A release in a sentence: one value as itself ("17.94"), several in parentheses ("(104, 120, 74, 102)"),
    the first ``shown`` of a long one followed by how many there are in all."""
    values = [float(v) for v in values]
    if len(values) == 1:
        return plain_number(values[0])
    head = ", ".join(plain_number(v) for v in (values[:shown] if shown else values))
    more = f", … ({len(values)} numbers in all, listed below)" if shown and len(values) > shown else ""
    return f"({head}{more})"


def headline(runs: Mapping[str, Any], true_params: Mapping[str, Any] | None = None,
             param: str | None = None) -> str | None:
    """One sentence comparing naive with the exact posterior, or None when either is missing.

    ``runs`` maps method name to objects with ``.result``, ``.summary`` (``engine.summary``: mean,
    sd, q5, q95 per parameter) and ``.stalled``. ``param`` is the parameter the figure shows, which
    the sentence then describes (a sentence about p[1] above a figure of p[0] misleads); without it,
    with several parameters the one where naive is furthest off (in exact posterior sds) is described
    and named. With several parameters a sentence on the whole model comes first (:func:`_whole_model`:
    how many 90% intervals of each miss the truth, or, the truth unknown, for how many naive and exact
    differ), the per-parameter one is labelled as the parameter shown, and "naive and exact agree" is said
    only where they agree for every parameter (naive's interval can cover beta[0] and miss beta[1] and beta[2]).
    """
    naive, ref = runs.get("naive"), reference_method(runs)
    if not _usable(naive) or ref is None:
        return None
    exact = runs[ref]
    params = [p for p in exact.summary.index if p in naive.summary.index]
    if not params:
        return None
    truth = {k: float(v) for k, v in (true_params or {}).items() if not isinstance(v, (list, tuple))}

    def shift(p):
        return abs(_row(naive, p)["mean"] - _row(exact, p)["mean"]) / max(_row(exact, p)["sd"], 1e-300)

    def agree(p):
        r = _row(exact, p)["sd"] / _row(naive, p)["sd"] if _row(naive, p)["sd"] > 0 else math.inf
        return 1 / AGREE_SD_RATIO <= r <= AGREE_SD_RATIO and shift(p) <= AGREE_SHIFT

    param = param if param in params else max(params, key=shift)
    n, e = _row(naive, param), _row(exact, param)
    several = len(params) > 1
    where = "" if not several else f" for {param} (the parameter shown)"
    exact_name = "the exact posterior" if ref in ("exact", "auto") else \
        "the exact posterior (RJMCMC, n unknown)" if ref == "rjmcmc" else f"the exact posterior ({METHOD_LABELS[ref]})"
    if (plug := _plug_in_n(exact)) is not None:  # exact only given that n: the sentence says so
        exact_name = f"the posterior given the plug-in n = {plug:,} ({METHOD_LABELS[ref]}; n is unknown, so it is " \
                     "exact only given that n)"
    whole = _whole_model(naive, exact, params, truth, exact_name, agree)
    ratio = e["sd"] / n["sd"] if n["sd"] > 0 else math.inf
    apart = f"means {_fmt(abs(n['mean'] - e['mean']))} apart"
    if all(agree(p) for p in params):
        together = "" if not several else \
            f" for all {len(params)} {_noun(params)} ({param}, the parameter shown: sds within " \
            f"{round((AGREE_SD_RATIO - 1) * 100)}%, {apart})"
        return ("At this privacy budget the noise is small relative to the data: naive and exact agree"
                + (together or f" (sds within {round((AGREE_SD_RATIO - 1) * 100)}%, {apart})") + "."
                + (f" {whole}" if whole else ""))
    lead = f"{whole} " if whole else ""
    if f"{max(ratio, 1 / ratio):.1f}" == "1.0":  # "1.0× too wide" would say two things at once
        width = f"Naive is about as wide as {exact_name}{where}"
    elif ratio > 1:
        width = f"Naive is {ratio:.1f}× too narrow{where}"
    else:
        width = f"Naive is {1 / ratio:.1f}× too wide{where}"
    # naive's own offset is from the exact posterior: an offset from the truth is mostly this release's noise draw,
    # which every method shares (the demo: naive and exact both centred 0.15 from θ = 0.3, 0.002 apart)
    if shift(param) <= AGREE_SHIFT:
        off = f", centred where {exact_name} is ({apart})"
    else:
        off = f" and centred {_fmt(abs(n['mean'] - e['mean']))} away from the mean of {exact_name}"
    if param in truth:
        t = truth[param]
        sym = f"{param_symbol(param)} = {t:.4g}"  # as the line above the sentence writes it
        naive_in = n["q5"] <= t <= n["q95"]
        exact_in = e["q5"] <= t <= e["q95"]
        naive_part = f"its 90% interval {'covers' if naive_in else 'misses'} {sym}"
        exact_part = f"that of {exact_name} {'covers' if exact_in else 'misses'} it{'' if exact_in else ' too'}"
        return f"{lead}{width}{off}: {naive_part}; {exact_part}."
    return f"{lead}{width}{off}."


def _noun(params) -> str:
    """What the parameters are called together: a regression's β are coefficients, anything else parameters."""
    return "coefficients" if all(p.startswith("beta[") for p in params) else "parameters"


def _whole_model(naive, exact, params, truth, exact_name: str, agree) -> str | None:
    """The sentence on every parameter of a model with several: where two or more true values are known, how
    many of each 90% interval miss the truth ("Naive's 90% intervals miss the truth for 2 of 3 coefficients;
    those of the exact posterior for 0"), else for how many naive and exact differ (None where they agree for
    all, or there is one parameter)."""
    if len(params) < 2:
        return None
    known = [p for p in params if p in truth]
    if len(known) >= 2:
        def misses(run):
            return sum(not _row(run, p)["q5"] <= truth[p] <= _row(run, p)["q95"] for p in known)

        of = f"{len(known)} {_noun(known)}" if len(known) == len(params) else \
            f"the {len(known)} {_noun(known)} whose true value is known"
        chance = " (a 90% interval misses about 1 in 10 by chance)" if len(known) >= 10 else ""
        return (f"Naive's 90% intervals miss the truth for {misses(naive)} of {of}; those of {exact_name} for "
                f"{misses(exact)}{chance}.")
    differ = [p for p in params if not agree(p)]
    if not differ:
        return None
    # named where few: the sentence after this one is about the parameter shown, which may not be among them
    which = f", {listed(differ)}" if len(differ) <= 3 else ""
    return (f"Naive and {exact_name} differ for {len(differ)} of {len(params)} {_noun(params)}{which} (sds more "
            f"than {round((AGREE_SD_RATIO - 1) * 100)}% apart or means more than {AGREE_SHIFT:g} exact sds apart).")


def convergence_warning(runs: Mapping[str, Any], *, figure: bool = True, switched_on=None) -> str | None:
    """One warning naming every run whose numbers are not to be trusted, and what to do: MCMC runs
    that have not converged (with R-hat and ESS) and independent draws too few for a density (ABC
    rejection stopped by its limits, with the number of draws). ``figure`` says whether the page
    draws the curves (the warning then says how they are drawn). ``switched_on``: the scenario's methods,
    where ``runs`` holds only some of them (Diagnostics shows one), so the advice never says to switch on
    a method that is on."""
    parts, few, n_unknown = [], [], []
    for m, run in runs.items():
        if getattr(run, "too_few", False):
            few.append((run_label(m, run), int((run.convergence or {}).get("draws") or 0)))
            continue
        if not getattr(run, "stalled", False):
            continue
        v = run.convergence
        ess = min(x for x in (v.get("ess_bulk_min"), v.get("ess_tail_min")) if x is not None) \
            if any(x is not None for x in (v.get("ess_bulk_min"), v.get("ess_tail_min"))) else float("nan")
        rhat = v.get("r_hat_max")
        # rounded up as the tables and the verdict write it: 1.01027 read "R-hat 1.010" beside a table's failing 1.011
        parts.append(f"{run_label(m, run)} (R-hat {'—' if rhat is None else rhat_at_most(rhat)}, "
                     f"ESS {ess_full(ess)})")
        n_unknown.append(_treats_n_as_unknown(run))
    out = []
    if parts:
        its = "Its" if len(parts) == 1 else "Their"
        shown = f" {its} {'curve is' if len(parts) == 1 else 'curves are'} faded and {its.lower()}" if figure \
            else f" {its}"
        out.append("Not converged: " + "; ".join(parts) + "." + shown + " numbers are not to be trusted (a "
                   "sampler needs R-hat ≤ 1.01 and an effective sample size (ESS) ≥ 400): raise draws or chains "
                   "in Method settings" + (_PLUG_IN_NO_STAND_IN if all(n_unknown) else _switch_on(runs, switched_on))
                   + ".")
    if few:
        names = "; ".join(f"{name} ({d:,} draw{'' if d == 1 else 's'})" for name, d in few)
        drawn = " The draws are tick marks on the axis, not a curve, and the" if figure else " The"
        out.append(f"Too few draws for a posterior: {names}; at least 400 are needed.{drawn} numbers are not to "
                   "be trusted: raise the time limit or the maximum proposals in Method settings, or use Exact "
                   "(best method).")
    return " ".join(out) or None


#: the advice where every chain that has not mixed treats an unknown n as unknown (RJMCMC): the fast exact methods
#: _switch_on names would run at the plug-in n, another posterior (audit s25: it said to switch them on)
_PLUG_IN_NO_STAND_IN = ("; the other methods run at the plug-in n (exact only given that n) and do not stand in "
                        "for it")


def _treats_n_as_unknown(run) -> bool:
    """Did the run treat an unknown n as a parameter (RJMCMC; exact on a histogram; OpenDP's mean)?"""
    result = getattr(run, "result", None)
    info = getattr(result, "info", None) or {}
    return bool(info.get("unknown_n")) or "n" in (getattr(result, "param_names", None) or ())


#: why each fast exact method is worth switching on when a chain has not mixed
_WHY_ON = {"auto": "which picks the exact sampler that mixes best for this model and ε",
           "pseudo_marginal": "which mixes fast when ε is small"}


def _tried_by_auto(auto) -> list[str]:
    """The samplers Exact (best method) ran (its ``attempts`` not skipped, and its ``picked``), in order."""
    info = getattr(getattr(auto, "result", None), "info", None) or {}
    ran = [a.get("method") for a in info.get("attempts") or () if isinstance(a, Mapping) and not a.get("skipped")]
    return list(dict.fromkeys(m for m in ran + [info.get("picked")] if m))


def _switch_on(runs: Mapping[str, Any], switched_on=None) -> str:
    """The advice for a chain that has not mixed: read Exact (best method) where it is on and has converged
    (or is on but shown on its own, as on Diagnostics), else switch on the fast exact methods not already on,
    each with why; never a sampler Exact (best method) already ran here (its ``attempts``): where that leaves
    nothing to switch on, that it ran them (more draws is what is left; a larger ε would help DA-MCMC but slow the
    pseudo-marginal chain, which mixes best at small ε); nothing more where Exact (best method) itself has not
    converged and the others are on."""
    on = set(runs) if switched_on is None else set(switched_on) | set(runs)
    auto = runs.get("auto")
    if auto is not None and not getattr(auto, "stalled", False) and not getattr(auto, "too_few", False):
        return f", or read {METHOD_LABELS['auto']}, which has converged here"
    if auto is None and "auto" in on:
        return f", or look at {METHOD_LABELS['auto']}, which is switched on (pick it above)"
    tried = _tried_by_auto(auto) if auto is not None else []
    off = [f"{METHOD_LABELS[m]}, {_WHY_ON[m]}" for m in ("auto", "pseudo_marginal") if m not in on and m not in tried]
    if off:
        return ", or switch on " + "; or ".join(off)
    ran = [METHOD_LABELS.get(m, m) for m in tried if m in _WHY_ON and m not in runs]
    if ran:  # more draws is what is left: a larger ε helps DA-MCMC but not the pseudo-marginal chain
        return f" ({METHOD_LABELS['auto']} already ran {listed(ran)} here)"
    return "" if auto is not None else \
        f", or run {METHOD_LABELS['auto']} alone, which picks the method that mixes best here"


def would_take(cost: Mapping[str, Any]) -> str:
    """"would take about 7.1 h here (…), over this server's budget of 20 s per run": an estimated cost (a run's,
    a sweep's, a study's; "at least" where it is a floor) against the server's work budget."""
    return (f"would take {'at least' if cost.get('at_least') else 'about'} {duration(cost['seconds'])} here "
            f"({_detail(cost['detail'])}), over this server's budget of {cost['budget']:g} s per run")


_PICKS = re.compile(r"\bauto picks (\w+)")
_ENGINE_METHODS = re.compile(r"\b(da_mcmc|pseudo_marginal)\b")
_ENGINE_MODELS = re.compile(r"\b(" + "|".join(MODEL_LABELS) + r")\b")


def _labelled(text: str) -> str:
    """The engine's sentence with the chains' labels for their keys (DA-MCMC, not da_mcmc) and the models' names
    for theirs (Dirichlet-multinomial, not dirichlet_multinomial)."""
    text = _ENGINE_METHODS.sub(lambda m: METHOD_LABELS[m.group(1)], text)
    return _ENGINE_MODELS.sub(lambda m: MODEL_LABELS[m.group(1)].split(" (")[0], text)


def _detail(detail: str) -> str:
    """An estimate's detail (engine.Cost.detail) in the page's words: "it picks DA-MCMC: 4 chains × 6,000
    iterations", not "auto picks da_mcmc: 4 chains x 6,000 iterations"."""
    detail = _PICKS.sub(lambda m: f"it picks {METHOD_LABELS.get(m[1], m[1])}", detail)
    return _labelled(detail).replace(" x ", " × ")


def too_few_to_converge(fit: Mapping[str, Any]) -> str | None:
    """Where settings that fit the budget give fewer draws in all than the effective draws the convergence check
    asks for (ESS_MIN), the sentence under their button that says so: such a run cannot pass it."""
    total = int(fit["chains"]) * int(fit["draws"])
    if total >= ESS_MIN:
        return None
    return (f"These give {total:,} draws in all, fewer than the {ESS_MIN:,.0f} effective draws the convergence "
            "check asks for: expect the run to be flagged not converged. Reduce n for a run that can pass it.")


def over_budget(method: str, cost: Mapping[str, Any]) -> str:
    """Why a run was not started: its estimated cost against the server's work budget."""
    return f"{METHOD_LABELS[method]} was not run: it {would_take(cost)}."


#: the limit that stopped an ABC run (engine.NoneAccepted.stopped_by), and the Method settings box that sets it
_ABC_LIMITS = {"max_seconds": "its time limit", "max_proposals": "its limit of proposals"}


def none_accepted(proposals: int, stopped_by: str, far: bool, draws: int) -> str:
    """Why ABC rejection has no draws (:class:`engine.NoneAccepted`), in the words of the Method settings boxes:
    no accepted proposal in ``proposals`` puts the acceptance rate below 1 / proposals, so ``draws`` accepted
    draws would take more than ``draws`` × ``proposals`` proposals on average; a release far outside what the
    records can produce (``far``) is out of reach of any limit."""
    limit = _ABC_LIMITS.get(stopped_by)
    box = FIELD_LABELS.get(f"method.{stopped_by}")
    head = f"it accepted none of {proposals:,} proposals before " + (f"{limit} ({box})" if limit else "its limits")
    if far:
        return (head + ": the release lies so far outside what the n records can produce that no limit will do. "
                "Exact (best method) and DA-MCMC still answer.")
    return (head + f": fewer than 1 in {proposals:,} simulated releases land close enough to s_dp here, so its "
            f"{draws:,} draws would take more than {draws * proposals:,} proposals on average. Raise both limits in "
            "Method settings, or read Exact (best method) or DA-MCMC, which simulate no releases.")


def mle_caption(info: Mapping[str, Any]) -> str:
    """What the MLE's diamond and bar are, and when its Wald interval or convergence is in doubt
    (``info`` of an MCEM result: mle, converged, at_boundary, iterations)."""
    parts = [f"{METHOD_LABELS['mcem']}: the diamond is the maximum-likelihood estimate and its bar the 90% Wald "
             "interval (estimate ± 1.645 se, se from Louis's method, clipped to the parameter's range); an "
             "estimator, not a posterior"]
    if info.get("at_boundary"):
        parts.append("the estimate is at the edge of the parameter space, where the Wald interval is not valid")
    if not info.get("converged", True):
        parts.append(f"Monte Carlo EM stopped after {info.get('iterations', '?')} iterations without meeting its "
                     "stopping rule: raise draws in Method settings")
    return "; ".join(parts) + "."


_MAX_SECONDS = re.compile(r"max_seconds = ([0-9.e+-]+)")


def auto_caption(info: Mapping[str, Any], row: Mapping[str, Any] | None = None) -> str:
    """The caption under Compare's figure on what Exact (best method) ran and why, in the page's words:
    the engine's ``why`` with the methods' labels for their keys, and the work budget (the server's, which
    the app passes as ``max_seconds``) named as such where a fallback or a rerun did not fit in it. ``row``:
    the ``info`` of the table's own run of the picked sampler, where it has one; the caption then says that
    Exact (best method)'s run is another, and how its settings (``picked_info``) differ from the row's: "DA-MCMC
    did better" beside a DA-MCMC row that has not converged reads as a contradiction otherwise."""
    picked = info_label(info["picked"], info.get("picked_info") or {})  # "Exact (numerical)" for a grid
    why = _labelled(str(info.get("why") or ""))
    why = _MAX_SECONDS.sub(lambda m: f"this server's work budget of {float(m.group(1)):g} s", why)
    text = f"{METHOD_LABELS['auto']} ran **{picked}**" + (f": {why}" if why else "") + "."
    if row is None:
        return text
    own, theirs = info.get("picked_info") or {}, row
    differ = [k for k in _SETTINGS if own.get(k, _SETTINGS[k][1]) != theirs.get(k, _SETTINGS[k][1])
              and not (k in ("chains", "draws") and (k not in own or k not in theirs))]  # counts not recorded
    if not differ:
        return text + (f" Its {picked} is a run of its own, with the {picked} row's settings and other random "
                       "numbers.")
    mine = "; ".join(_setting(k, own) for k in differ)
    other = "; ".join(_setting(k, theirs) for k in differ)
    return text + f" Its {picked} is a run of its own, with settings of its own ({mine}), not the {picked} row's " \
                  f"({other})."


#: a sampler's settings that Exact (best method) sets its own way (engine.methods.auto.settings_for, its longer
#: reruns), as the samplers' ``info`` holds them: key -> (words for a value, the value where the key is absent)
_SETTINGS = {
    "shifts": (lambda k: f"{k} shift moves of β per iteration" if k else "no shift moves", 0),
    "orbit_moves": (lambda k: f"{k} orbit moves per iteration" if k else "no orbit moves", 0),
    "ancillary_moves": (lambda k: f"{k} moves of β and the records' frame per iteration" if k else
                        "no moves of the records' frame", 0),
    "tail_records": (lambda k: f"{k:,} records scanned per iteration by the tail moves" if k else "no tail moves", 0),
    "records_per_iteration": (lambda m: f"{m:,} records swept per iteration" if m else "every record swept each "
                              "iteration", None),
    "clamped_per_iteration": (lambda k: "every clamped record's y redrawn each iteration" if k is None else
                              f"{k:,} clamped records' y redrawn per iteration", None),
    "thin": (lambda k: "every iteration kept" if k == 1 else f"1 in {k} iterations kept", 1),
    "proposal": (lambda p: f"the {str(p).replace('_', '-')} proposal", "random_walk"),
    "chains": (lambda c: f"{c} chains", None),
    "draws": (lambda d: f"{d:,} draws per chain", None),
}


def _setting(key: str, info: Mapping[str, Any]) -> str:
    words, default = _SETTINGS[key]
    return words(info.get(key, default))


def moved(params) -> str:
    """What a chain moves, in the model's own words: θ, λ or μ for the one-parameter models (as the pages write
    them), a custom model's one parameter by its name, and "the parameters" where there are several (a
    regression's β and σ², a table's probabilities: no θ there). ``params``: the result's parameter names."""
    params = [p for p in (params or ()) if p != "n"]  # RJMCMC's n is not a move of this chain
    return param_symbol(params[0]) if len(params) == 1 else "the parameters"


def pseudo_marginal_caption(info: Mapping[str, Any], params: Sequence[str]) -> str:
    """Diagnostics' line on a pseudo-marginal run (or auto's, which carries the picked run's numbers): its
    acceptance (:func:`ui.tables.acceptance_text`, as Compare's table shows it) of moves of ``params`` (the
    result's parameter names: θ, λ, μ, or "the parameters"), the target where the sampler has one, and the
    particles per likelihood estimate (one count when every chain used the same, else per chain).

    The log-linear model's sampler (``likelihood = "augmented"``, also under auto's ``picked_info``) estimates no
    likelihood: it carries one set of tables and moves it with the parameters
    (:mod:`engine.methods.loglinear_pm`), so its line names those moves and the table refreshes instead."""
    rate = acceptance_text(info["mean_acceptance"])
    picked = info.get("picked_info")
    if "augmented" in (info.get("likelihood"), picked.get("likelihood") if isinstance(picked, Mapping) else None):
        return _table_chain_caption(rate, info.get("target_acceptance"), picked if isinstance(picked, Mapping)
                                    else info)
    text = f"Pseudo-marginal acceptance: {rate} of proposed moves of {moved(params)}"
    target = info.get("target_acceptance")
    if isinstance(target, (int, float)) and math.isfinite(target):
        text += f" (target {acceptance_text(target)})"
    particles = info.get("particles")
    counts = [int(p) for p in particles] if isinstance(particles, (list, tuple)) else \
        [int(particles)] if isinstance(particles, (int, float)) else []
    if counts and len(set(counts)) == 1:
        m = counts[0]
        text += f"; {m:,} statistic draw{'s' if m != 1 else ''} per likelihood estimate"
        text += " in every chain" if len(counts) > 1 else ""
    elif counts:
        text += "; statistic draws per likelihood estimate, chain by chain: " + ", ".join(f"{m:,}" for m in counts)
    return text + "."


def _table_chain_caption(rate: str, target, info: Mapping[str, Any]) -> str:
    """Diagnostics' line on the log-linear model's table chain (:mod:`engine.methods.loglinear_pm`): the
    acceptance of its coupled moves of each simplex with the tables, its target, the refreshes' acceptance."""
    text = (f"Pseudo-marginal acceptance: {rate} of the coupled moves of each probability vector (π, and every row "
            "of p) with the tables")
    if isinstance(target, (int, float)) and math.isfinite(target):
        text += f" (target {acceptance_text(target)})"
    refresh = info.get("refresh_acceptance")
    if isinstance(refresh, (int, float)) and math.isfinite(refresh):
        text += f"; {acceptance_text(refresh)} of the table refreshes (some records redrawn, the parameters fixed)"
    return text + (". The sampler carries one set of tables and moves it with the parameters: it estimates no "
                   "likelihood, so its cost grows with the number of table cells, not with n.")
