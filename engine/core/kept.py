"""The last values computed, by key: the memo the summaries (:func:`engine.numerics.diagnostics.summary`) and the
exact method's grid posteriors (:func:`engine.methods.exact.grid_posterior_of`) keep."""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Hashable

__all__ = ["Kept"]


class Kept:
    """The last ``size`` values put, by key, the least recently used dropped first; safe across threads. A caller
    computes a missing value outside the lock, so two threads may compute the same one at once (both keep what a
    deterministic computation gives: the same value)."""

    def __init__(self, size: int):
        self.size = size
        self._items: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> Any:
        """The value kept for ``key`` (now the most recently used), or None."""
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: Hashable, value: Any) -> None:
        with self._lock:
            self._items[key] = value
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._items
