"""A limit on concurrent context selections: at most ``limit`` of an application's
selections run at once, and the others wait in the order they came, each within its
own deadline.

A selection is CPU work on both sides: the caller's Python (one GIL for all its
threads), the query embedding and PostgreSQL's. When more callers than cores select at
once, each of them gets a slice and all of them finish late, the slowest far behind
the median. Limiting them keeps the work that runs short and lets the rest start in
order, so the slowest waits least at the same throughput (docs/benchmarks-context.md).

Slots are first come, first served: a slot given back goes to the longest waiter,
never to a caller that comes later (``threading.Semaphore`` lets a thread that gives
one back take it again at once, and a waiter can starve). The composition root makes
one per application (``bootstrap``); a use case given none runs unlimited.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager


def default_limit() -> int:
    """Two selections per core: each spends about half its time waiting on PostgreSQL."""
    return 2 * (os.cpu_count() or 1)


class SelectionLimit:
    """At most ``limit`` holders at once (0: no limit), first come, first served."""

    def __init__(self, limit: int) -> None:
        if limit < 0:
            raise ValueError(f"limit must be 0 (no limit) or more, not {limit}")
        self.limit = limit
        self._free = limit
        self._lock = threading.Lock()
        self._waiting: deque[threading.Event] = deque()

    def acquire(self, timeout_s: float) -> bool:
        """Take a slot, waiting at most ``timeout_s``; whether one was taken."""
        with self._lock:
            if not self.limit or (self._free > 0 and not self._waiting):
                self._free -= 1
                return True
            handed = threading.Event()
            self._waiting.append(handed)
        if handed.wait(max(timeout_s, 0.0)):
            return True
        with self._lock:
            if handed.is_set():  # given to it just as it stopped waiting: it holds the slot
                return True
            self._waiting.remove(handed)
            return False

    def release(self) -> None:
        """Give a slot back: to the longest waiter, if any."""
        with self._lock:
            self._free += 1
            self._hand_out()

    def resize(self, limit: int) -> None:
        """Allow ``limit`` holders from now on (0: no limit); slots held stay held, and
        waiters keep their places (all of them go at once for no limit)."""
        if limit < 0:
            raise ValueError(f"limit must be 0 (no limit) or more, not {limit}")
        with self._lock:
            self._free += limit - self.limit
            self.limit = limit
            self._hand_out()

    def _hand_out(self) -> None:
        while self._waiting and (not self.limit or self._free > 0):
            self._free -= 1
            self._waiting.popleft().set()

    @contextmanager
    def hold(self, timeout_s: float) -> Iterator[None]:
        """Hold a slot for the block; ``TimeoutError`` if none came within ``timeout_s``."""
        if not self.acquire(timeout_s):
            raise TimeoutError(f"no slot to select within {timeout_s * 1000:.0f} ms ({self.limit} selecting)")
        try:
            yield
        finally:
            self.release()

    @property
    def held(self) -> int:
        """How many slots are held now (selections running)."""
        with self._lock:
            return self.limit - self._free  # free starts at the limit and counts down per slot taken

    @property
    def waiting(self) -> int:
        """How many callers wait for a slot now."""
        with self._lock:
            return len(self._waiting)


def of_settings(limit: int | None) -> SelectionLimit:
    """The limit ``MEMLEDGER_CONTEXT_CONCURRENCY`` names (0: no limit; None: ``default_limit``)."""
    return SelectionLimit(default_limit() if limit is None else limit)
