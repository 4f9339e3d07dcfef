"""The release: confidential records in, the privatized statistic s_dp out.

Additive mechanisms release s_dp = s(x) + u, u from the mechanism's noise law; randomized response
releases each record's reported category, summarised as counts per category (for beta_binomial, the
reported number of ones); OpenDP's mean releases (s + u) / max(n + v, 0) (:mod:`.ratio`). The model is used only through ``statistic`` and ``categories``.
"""
from __future__ import annotations

import numpy as np

from ..core.validation import fail, instance
from .randomized_response import RandomizedResponse
from .ratio import OpenDPMean

__all__ = ["privatize"]


def privatize(model, mechanism, records, rng: np.random.Generator, *, check: bool = True) -> np.ndarray:
    """The release s_dp: additive noise on the statistic, or per-record randomized response
    reported as counts per category (for beta_binomial, the reported number of ones). The records are checked
    against the model first (a beta_binomial record of 5.5 or a NaN is refused); ``check=False`` is for records
    the engine simulated or has already checked."""
    instance("rng", rng, np.random.Generator, "must be a numpy random Generator, e.g. numpy.random.default_rng(0)")
    if check and hasattr(model, "check_records"):
        records = model.check_records(records, "data.records")
    if len(records) == 0:  # a release of no one: no statistic to release, and no model has n = 0 records
        fail("records", [], "must hold at least one record: a release of no records has no statistic")
    if isinstance(mechanism, RandomizedResponse):
        z = mechanism.sample_records(rng, model.categories(records))
        counts = np.bincount(z, minlength=mechanism.k).astype(float)
        return counts[1:2] if model.name == "beta_binomial" else counts
    if isinstance(mechanism, OpenDPMean):  # OpenDP's mean: sum / length, the length's noise on n itself
        return mechanism.sample(rng, model.statistic(records), n=len(records))
    return mechanism.sample(rng, model.statistic(records))
