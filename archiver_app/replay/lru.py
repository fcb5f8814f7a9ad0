"""A small thread-safe LRU cache, bounded by entries and optionally by total size."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class LRUCache(Generic[K, V]):
    """Keep the ``max_entries`` most recently used values (and at most ``max_weight``)."""

    def __init__(
        self,
        max_entries: int,
        *,
        max_weight: int | None = None,
        weigh: Callable[[V], int] | None = None,
    ) -> None:
        self.max_entries = max_entries
        self.max_weight = max_weight
        self._weigh = weigh or (lambda _v: 1)
        self._data: OrderedDict[K, V] = OrderedDict()
        self._weight = 0
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: K) -> V | None:
        with self._lock:
            value = self._data.get(key)
            if value is None:
                self.misses += 1
                return None
            self._data.move_to_end(key)
            self.hits += 1
            return value

    def put(self, key: K, value: V) -> None:
        weight = self._weigh(value)
        if self.max_weight is not None and weight > self.max_weight:
            return
        with self._lock:
            old = self._data.pop(key, None)
            if old is not None:
                self._weight -= self._weigh(old)
            self._data[key] = value
            self._weight += weight
            while len(self._data) > self.max_entries or (
                self.max_weight is not None and self._weight > self.max_weight
            ):
                _, evicted = self._data.popitem(last=False)
                self._weight -= self._weigh(evicted)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self._weight = 0

    def __len__(self) -> int:
        return len(self._data)
