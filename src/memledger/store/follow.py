"""Following the ledger as it grows: authoritative polling, LISTEN/NOTIFY as a hint.

Polling is what makes following correct; a notification only shortens the wait.
A NOTIFY inside every append transaction takes a cluster-wide lock at commit,
so appends send one only when ``notify_on_append`` is on (see docs/BENCHMARKS.md).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import psycopg
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import URL, Engine

from memledger.events.envelope import START, Cursor, Recorded
from memledger.store import event_reads, event_store
from memledger.store.outage import OUTAGES, Backoff, is_outage

log = logging.getLogger(__name__)


class Wakeup:
    """A LISTEN connection that ends a wait early when an append notifies.

    A connection lost to a server restart or an idle timeout is opened again by a
    later wait; until then each wait lasts its whole timeout, as a plain poll does.
    A notification sent meanwhile is missed, which costs one poll interval at most:
    the follower reads the ledger after every wait, whatever ended it.
    """

    def __init__(self, url: URL) -> None:
        self._conninfo = url.set(drivername="postgresql").render_as_string(hide_password=False)
        self._backoff = Backoff("listening for appends", log)
        self._closed = False
        self._conn: psycopg.Connection[Any] | None = self._listen()  # fails here if the server is down

    def _listen(self) -> psycopg.Connection[Any]:
        conn = psycopg.connect(self._conninfo, autocommit=True)
        try:
            conn.execute(f"LISTEN {event_store.NOTIFY_CHANNEL}")  # a constant identifier
        except psycopg.Error:
            conn.close()
            raise
        return conn

    def wait(self, timeout: float) -> bool:
        """Block up to ``timeout`` seconds; True if a notification arrived (never, once closed)."""
        started = time.monotonic()
        if self._closed:
            time.sleep(timeout)
            return False
        try:
            if self._conn is None:
                self._conn = self._listen()
                self._backoff.succeeded()
            for _ in self._conn.notifies(timeout=timeout, stop_after=1):
                return True
            return False
        except psycopg.OperationalError as e:  # the connection was lost, or cannot be opened yet
            self._backoff.failed(e)
            self._drop()
            time.sleep(max(0.0, timeout - (time.monotonic() - started)))
            return False

    def close(self) -> None:
        """Stop listening for good."""
        self._closed = True
        self._drop()

    def _drop(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


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
    ledger has nothing new, waits ``poll_interval`` (or less, if woken). While the
    database is unavailable (restarting, say), it waits with backoff and then goes
    on from the last event it yielded: a follower sees every event once.
    """
    tags = None if types is None else list(types)
    backoff = Backoff("following the ledger", log)
    while not should_stop():
        try:
            with engine.connect() as conn:
                page = event_reads.read_all(conn, after=after, limit=batch, tenant_id=tenant_id, types=tags)
        except OUTAGES as e:
            if isinstance(e, sa_exc.DBAPIError) and not is_outage(e):
                raise
            backoff.wait(e, should_stop)
            continue
        backoff.succeeded()
        if page:
            after = page[-1].cursor
            yield page
            continue
        if wakeup is not None:
            wakeup.wait(poll_interval)
        else:
            time.sleep(poll_interval)
