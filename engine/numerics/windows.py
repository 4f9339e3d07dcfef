"""Windowed sequences: a pmf over the integers held as (offset, values), values[i] the weight at offset + i
(the exact methods' count laws and their convolutions: :mod:`engine.methods.exact`,
:mod:`engine.methods.histogram_total`)."""
from __future__ import annotations

import numpy as np

__all__ = ["window_at"]


def window_at(seq, idx) -> np.ndarray:
    """The weights of the windowed sequence ``seq = (offset, values)`` at the integers ``idx`` (0 outside it)."""
    off, vals = seq
    i = np.asarray(idx) - off
    ok = (i >= 0) & (i < vals.size)
    out = np.zeros(np.shape(i))
    out[ok] = vals[i[ok]]
    return out
