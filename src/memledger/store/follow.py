"""Following the ledger as it grows: authoritative polling, LISTEN/NOTIFY as a hint.

Polling is what makes following correct; a notification only shortens the wait.
A NOTIFY inside every append transaction takes a cluster-wide lock at commit,
so appends send one only when ``notify_on_append`` is on (see docs/BENCHMARKS.md).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator

import psycopg
from sqlalchemy.engine import URL, Engine

from memledger.events.envelope import START, Cursor, Recorded
from memledger.store import event_store


class Wakeup:
    """A LISTEN connection that ends a wait early when an append notifies."""

    def __init__(self, url: URL) -> None:
        conninfo = url.set(drivername="postgresql").render_as_string(hide_password=False)
        self._conn = psycopg.connect(conninfo, autocommit=True)
        self._conn.execute(f"LISTEN {event_store.NOTIFY_CHANNEL}")  # a constant identifier

    def wait(self, timeout: float) -> bool:
        """Block up to ``timeout`` seconds; True if a notification arrived."""
        for _ in self._conn.notifies(timeout=timeout, stop_after=1):
            return True
        return False

    def close(self) -> None:
        """Stop listening."""
        self._conn.close()


def follow(
    engine: Engine,
    *,
    after: Cursor = START,
    tenant_id: str | None = None,
    types: Iterable[str] | None = None,
    batch: int = 1000,
    poll_interval: float = 0.1,
    wakeup: Wakeup | None = None,
    should_stop: Callable[[], bool] = lambda: False,
) -> Iterator[list[Recorded]]:
    """Yield pages of new events, in ledger order, forever or until ``should_stop``.

    Each page is read gap-safe in its own short read-only transaction. When the
    ledger has nothing new, waits ``poll_interval`` (or less, if woken).
    """
    tags = None if types is None else list(types)
    while not should_stop():
        with engine.connect() as conn:
            page = event_store.read_all(conn, after=after, limit=batch, tenant_id=tenant_id, types=tags)
        if page:
            after = page[-1].cursor
            yield page
            continue
        if wakeup is not None:
            wakeup.wait(poll_interval)
        else:
            time.sleep(poll_interval)
