"""A small, thread-safe cache whose entries expire after a fixed time.

For answers that rarely change and are asked on every request (which tenant a key
reaches, a tenant's switches): a change made in this process drops the entries it
affects at once (``drop_where``); one made by another process is seen when the
entry expires, so ``ttl_s`` bounds how long another process's change can go unseen.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class TtlCache(Generic[K, V]):
    """At most ``max_entries`` answers, each kept ``ttl_s`` seconds after it was read
    (``clock``: seconds, monotonic). The least recently stored goes first when full."""

    def __init__(self, ttl_s: float, max_entries: int, clock: Callable[[], float] = time.monotonic) -> None:
        if ttl_s < 0 or max_entries < 1:
            raise ValueError(f"a cache needs ttl_s >= 0 and max_entries >= 1, not {ttl_s} and {max_entries}")
        self.ttl_s = ttl_s
        self.max_entries = max_entries
        self._clock = clock
        self._entries: OrderedDict[K, tuple[float, V]] = OrderedDict()
        self._lock = threading.Lock()
        self._generation = 0

    def get(self, key: K) -> V | None:
        """The answer stored for ``key``, or None when there is none or it expired."""
        with self._lock:
            found = self._entries.get(key)
            if found is None:
                return None
            if found[0] <= self._clock():
                del self._entries[key]
                return None
            return found[1]

    def generation(self) -> int:
        """A token to pass to ``put``: an answer read after it was taken is stored only
        if nothing was dropped meanwhile (a revocation racing the read wins)."""
        with self._lock:
            return self._generation

    def put(self, key: K, value: V, generation: int) -> None:
        """Keep ``value`` for ``key`` for ``ttl_s``, unless a drop happened since
        ``generation`` was taken (the value may be what the drop was for)."""
        with self._lock:
            if generation != self._generation or self.ttl_s == 0:
                return
            self._entries[key] = (self._clock() + self.ttl_s, value)
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)

    def get_or_load(self, key: K, load: Callable[[], V | None]) -> V | None:
        """The answer kept for ``key``, else ``load()``'s, kept unless it is None or a
        drop happened while it was read."""
        found = self.get(key)
        if found is None:
            generation = self.generation()
            found = load()
            if found is not None:
                self.put(key, found, generation)
        return found

    def drop_where(self, matches: Callable[[K, V], bool]) -> None:
        """Forget every entry ``matches``, and any answer being read now."""
        with self._lock:
            self._generation += 1
            for key in [k for k, (_, v) in self._entries.items() if matches(k, v)]:
                del self._entries[key]

    def clear(self) -> None:
        """Forget everything (and any answer being read now)."""
        self.drop_where(lambda _k, _v: True)
