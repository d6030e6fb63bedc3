"""Which version of a projection is live, as a serving process needs to know it.

A new projection version keeps serving the old copy until it is rebuilt (the swap
replaces the checkpoint's version), so a query that needs what only the new version
has (an index, a function) asks here first. The answer is kept per database for
``RECHECK_S``: a process learns of a swap within that time and meanwhile serves as
the old version did.
"""

from __future__ import annotations

import threading
import time

from sqlalchemy.engine import URL, Connection

from memledger.projectors import checkpoints

RECHECK_S = 30.0
# (database URL, projection name) -> (live version, when it was read: time.monotonic())
_known: dict[tuple[URL, str], tuple[int, float]] = {}
_lock = threading.Lock()


def at_least(conn: Connection, name: str, version: int) -> bool:
    """Whether the live copy of projection ``name`` is ``version`` or later (one
    statement in ``conn``'s transaction at most every ``RECHECK_S`` per database)."""
    key = (conn.engine.url, name)  # a URL is hashable: no string made per request
    now = time.monotonic()
    with _lock:
        known = _known.get(key)
    if known is None or now - known[1] > RECHECK_S:
        checkpoint = checkpoints.get(conn, name)
        known = (checkpoint.version if checkpoint is not None else 0, now)
        with _lock:
            _known[key] = known
    return known[0] >= version


def forget() -> None:
    """Drop what is known (a test that changes the live version in place)."""
    with _lock:
        _known.clear()
