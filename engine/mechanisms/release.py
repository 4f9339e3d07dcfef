"""The release: confidential records in, the privatized statistic s_dp out.

Additive mechanisms release s_dp = s(x) + u, u from the mechanism's noise law; randomized response
releases each record's reported category, summarised as counts per category (for beta_binomial, the
reported number of ones). The model is used only through ``statistic`` and ``categories``.
"""
from __future__ import annotations

import numpy as np

from .randomized_response import RandomizedResponse

__all__ = ["privatize"]


def privatize(model, mechanism, records, rng: np.random.Generator) -> np.ndarray:
    """The release s_dp: additive noise on the statistic, or per-record randomized response
    reported as counts per category (for beta_binomial, the reported number of ones)."""
    if isinstance(mechanism, RandomizedResponse):
        z = mechanism.sample_records(rng, model.categories(records))
        counts = np.bincount(z, minlength=mechanism.k).astype(float)
        return counts[1:2] if model.name == "beta_binomial" else counts
    return mechanism.sample(rng, model.statistic(records))
