"""The nearest facts and turns read on a connection of their own, beside the selection's.

A selection's statements run one after another on its connection: the facts
statement, then the nearest facts once the request's vector is ready. When the
process selects nothing else and the pool has a free connection, the nearest facts
are read on a second connection instead, as soon as the vector is ready, while the
facts statement runs: PostgreSQL works on both cores and the selection waits
for the longer of the two, not their sum.

When other selections run, it is not done. The second transaction costs CPU, a
checkout, setting the tenant and ending the transaction, which under contention
costs the slowest requests more than the overlap saves (docs/benchmarks-context.md).
The statement and its answer are the same either way: each statement of a selection
reads its own snapshot (READ COMMITTED), on this connection or that one.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

from sqlalchemy.engine import Connection, Engine
from sqlalchemy.pool import QueuePool

from memledger.selection.candidates import QueryVector
from memledger.service.episodes import NOTHING_NEAR, Nearby
from memledger.store import db

# Two: one selection at a time uses it (the process is otherwise idle); a second
# may start while the first one's transaction ends.
_pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="memledger-nearest")
# Reads the nearest facts and turns of a query vector in a connection's transaction.
Read = Callable[[Connection, QueryVector], Nearby]


def start(
    engine: Engine,
    wait: Callable[[float | None], QueryVector | None],
    read: Read,
    deadline: float,
    settings: dict[str, str],
    *,
    alone: bool,
) -> Future[Nearby] | None:
    """Begin ``read`` of the request's vector (``wait`` gives it) on a connection of
    ``engine``'s own, or None when the caller should read them itself: another selection
    runs (not ``alone``), or no connection is free. ``deadline``: ``time.monotonic()`` by
    which it must be done; ``settings``: the selection's transaction settings (``SET LOCAL``)."""
    if not alone:
        return None
    pool = engine.pool
    if isinstance(pool, QueuePool) and pool.checkedout() >= pool.size():
        return None  # a checkout could wait for another caller's connection
    return _pool.submit(_nearest, engine, wait, read, deadline, settings)


def _nearest(
    engine: Engine,
    wait: Callable[[float | None], QueryVector | None],
    read: Read,
    deadline: float,
    settings: dict[str, str],
) -> Nearby:
    query = wait(max(deadline - time.monotonic(), 0.0))
    if query is None:
        return NOTHING_NEAR
    with db.reading(engine) as conn:
        remaining_ms = max(int((deadline - time.monotonic()) * 1000), 1)
        return read(db.with_local_settings(conn, {**settings, "statement_timeout": str(remaining_ms)}), query)
