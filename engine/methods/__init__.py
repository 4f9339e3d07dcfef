"""Inference methods, one module per algorithm, and the registry that names them.

=====================  =======================================  ==========================================
``method.name``        module                                   algorithm
=====================  =======================================  ==========================================
``naive``              :mod:`engine.methods.naive`              conjugate update on s_dp as if exact
                                                                (Bernstein & Sheldon 2018, Sec. 5)
``da_mcmc``            :mod:`engine.methods.da_mcmc`            data-augmentation Metropolis-within-Gibbs
                                                                (Ju, Gong, Awan & Rao 2022, Alg. 1)
``abc_rejection``      :mod:`engine.methods.abc_rejection`      ABC rejection, exact for DP data
                                                                (Gong 2020, Alg. 3)
``ops``                :mod:`engine.methods.ops`                one-posterior sampling baseline
                                                                (Wang et al. 2015)
``exact``              :mod:`engine.methods.exact`              closed-form finite mixture
``pseudo_marginal``    :mod:`engine.methods.pseudo_marginal`    pseudo-marginal Metropolis–Hastings on
                                                                theta (Andrieu & Roberts 2009)
``auto``               :mod:`engine.methods.auto`               the cheapest exact method for the scenario
``rjmcmc``             :mod:`engine.methods.rjmcmc`             reversible jump for an unknown n
                                                                (paper 002, Alg. 1; Green 1995)
``mcem``               :mod:`engine.methods.mcem`               Monte Carlo EM: the MLE with Louis's se
                                                                (paper 002, Alg. 2; Gong 2020)
``bernstein_sheldon``  :mod:`engine.methods.bernstein_sheldon`  APPROXIMATE: Gibbs on the sufficient
                                                                statistic, CLT for p(s | theta)
                                                                (paper 003, Alg. 1-3)
=====================  =======================================  ==========================================

Each module defines ``METHOD`` (an :class:`engine.methods.base.Method`): its claim (exact,
approximate, baseline, estimator), its own ``[method]`` keys and validation, and the entry point
that :func:`engine.run_method` calls. A new method is a new module plus one line here.
"""
from __future__ import annotations

from typing import Any, Mapping

from ..core.validation import choice, fail, positive_int
from . import abc_rejection, auto, bernstein_sheldon, da_mcmc, exact, mcem, naive, ops, pseudo_marginal, rjmcmc
from .base import COMMON_KEYS, Method

__all__ = ["REGISTRY", "METHOD_NAMES", "METHOD_WORDS", "Method", "COMMON_KEYS", "DEFAULT_METHOD", "validate_method",
           "READS_RECORDS"]

DEFAULT_METHOD = {"name": "da_mcmc", "chains": 4, "draws": 2000, "warmup": 500}

REGISTRY: dict[str, Method] = {m.name: m for m in (naive.METHOD, da_mcmc.METHOD, abc_rejection.METHOD,
                                                     ops.METHOD, exact.METHOD, pseudo_marginal.METHOD,
                                                     auto.METHOD, rjmcmc.METHOD, mcem.METHOD,
                                                     bernstein_sheldon.METHOD)}
METHOD_NAMES: tuple[str, ...] = tuple(REGISTRY)
#: the methods whose draws are computed from the confidential records themselves rather than from the release
#: s_dp (one-posterior sampling: a second release of the records, with its own privacy cost)
READS_RECORDS = frozenset({"ops"})

#: each method as the engine's sentences name it ("one DA-MCMC chain", "the costliest cell is ABC rejection"): a key
#: such as ``da_mcmc`` is for specs and tables, not for people. The pages label methods with their own capitalised
#: words (figures.labels.METHOD_LABELS, a layer the engine does not import); these are the mid-sentence forms.
METHOD_WORDS: dict[str, str] = {"naive": "naive", "da_mcmc": "DA-MCMC", "abc_rejection": "ABC rejection", "ops": "OPS",
                                "exact": "exact", "pseudo_marginal": "pseudo-marginal", "auto": "exact (best method)",
                                "rjmcmc": "RJMCMC", "mcem": "MLE (Monte Carlo EM)",
                                "bernstein_sheldon": "Bernstein–Sheldon (approximate)"}


def validate_method(method: Mapping[str, Any]) -> dict:
    """Check a [method] table; returns it with defaults filled in."""
    if not isinstance(method, Mapping):
        fail("method", method, "must be a table with at least name")
    m = dict(method)
    name = choice("method.name", m.get("name", DEFAULT_METHOD["name"]), METHOD_NAMES)
    entry = REGISTRY[name]
    allowed = COMMON_KEYS | entry.keys
    unknown = set(m) - allowed
    if unknown:
        key = sorted(unknown)[0]
        fail(f"method.{key}", m[key], f"is not a key of {name}; allowed: " + ", ".join(sorted(allowed)))
    out = {"name": name}
    out["chains"] = positive_int("method.chains", m.get("chains", DEFAULT_METHOD["chains"]), 1, 64)
    out["draws"] = positive_int("method.draws", m.get("draws", DEFAULT_METHOD["draws"]), 1, 10_000_000)
    out["warmup"] = positive_int("method.warmup", m.get("warmup", DEFAULT_METHOD["warmup"]), 0, 10_000_000)
    if "grid_size" in m:
        out["grid_size"] = positive_int("method.grid_size", m["grid_size"], 10, 100_000)
    entry.validate(m, out)
    return out
