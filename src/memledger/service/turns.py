"""Turns for context selections: at most ``limit`` of a process's selections run at
once, and the others wait in the order they came, each within its own deadline.

A selection is CPU work on both sides: the caller's Python (one GIL for all its
threads), the query embedding and PostgreSQL's. When more callers than cores select at
once, each of them gets a slice and all of them finish late, the slowest far behind
the median. Taking turns keeps the work that runs short and lets the rest start in
order, so the slowest waits least at the same throughput (docs/benchmarks-context.md).

The turns are first come, first served: a turn given back goes to the longest
waiter, never to a caller that comes later (``threading.Semaphore`` lets a thread
that gives one back take it again at once, and a waiter can starve).
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


class Turns:
    """At most ``limit`` holders at once (0: no limit), first come, first served."""

    def __init__(self, limit: int) -> None:
        if limit < 0:
            raise ValueError(f"limit must be 0 (no limit) or more, not {limit}")
        self.limit = limit
        self._free = limit
        self._lock = threading.Lock()
        self._waiting: deque[threading.Event] = deque()

    def acquire(self, timeout_s: float) -> bool:
        """Take a turn, waiting at most ``timeout_s``; whether one was taken."""
        with self._lock:
            if not self.limit or (self._free > 0 and not self._waiting):
                self._free -= 1
                return True
            handed = threading.Event()
            self._waiting.append(handed)
        if handed.wait(max(timeout_s, 0.0)):
            return True
        with self._lock:
            if handed.is_set():  # given to it just as it stopped waiting: it holds the turn
                return True
            self._waiting.remove(handed)
            return False

    def release(self) -> None:
        """Give a turn back: to the longest waiter, if any."""
        with self._lock:
            self._free += 1
            self._hand_out()

    def resize(self, limit: int) -> None:
        """Allow ``limit`` holders from now on (0: no limit); turns held stay held, and
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
    def turn(self, timeout_s: float) -> Iterator[None]:
        """Hold a turn for the block; ``TimeoutError`` if none came within ``timeout_s``."""
        if not self.acquire(timeout_s):
            raise TimeoutError(f"no turn to select within {timeout_s * 1000:.0f} ms ({self.limit} selecting)")
        try:
            yield
        finally:
            self.release()

    @property
    def held(self) -> int:
        """How many turns are held now (selections running)."""
        with self._lock:
            return self.limit - self._free  # free starts at the limit and counts down per turn taken

    @property
    def waiting(self) -> int:
        """How many callers wait for a turn now."""
        with self._lock:
            return len(self._waiting)


_turns = Turns(default_limit())


def selections() -> Turns:
    """The process's turns for context selections (``MEMLEDGER_CONTEXT_CONCURRENCY``)."""
    return _turns


def set_limit(limit: int | None) -> None:
    """How many selections of this process may run at once (0: no limit; None: ``default_limit``)."""
    _turns.resize(default_limit() if limit is None else limit)
