"""Following the ledger: polling is what is correct, LISTEN/NOTIFY only shortens the wait.

A committed event becomes readable once every older write transaction in the
*cluster* has ended (gap-safe reading). Another test process on the same server
can hold that back, so these tests wait for visibility where they need it and
time the waits themselves rather than the arrival of events.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import sqlalchemy as sa
from sqlalchemy.engine import URL, Engine

from memledger.events.catalogue import MemoryRetracted
from memledger.events.envelope import NewEvent, Recorded
from memledger.store import event_reads, event_store
from memledger.store.follow import Wakeup, follow
from tests.conftest import turn_event

if TYPE_CHECKING:
    from tests.conftest import TestDatabase as SessionDatabase

PATIENCE_S = 60  # a safety deadline, reached only when something is wrong


def _append(engine: Engine, tenant: str, texts: list[str], *, notify: bool = False) -> list[str]:
    batch = [turn_event(text) for text in texts]
    with engine.begin() as tx:
        event_store.append(tx, tenant, "conv", batch, None, notify=notify)
    return [new.event_id for new in batch]


# text(): the gap-safe horizon, compared with what has been committed.
_SETTLED = sa.text(
    "SELECT coalesce(max(tx_id) < pg_snapshot_xmin(pg_current_snapshot()), true) FROM events WHERE tenant_id = :t"
)


def _settle(engine: Engine, tenant: str) -> None:
    """Wait until gap-safe reads can see every committed event of ``tenant``."""
    deadline = time.monotonic() + PATIENCE_S
    while True:
        with engine.connect() as conn:
            if conn.execute(_SETTLED, {"t": tenant}).scalar():
                return
        assert time.monotonic() < deadline, "a write transaction in the cluster stayed open for a minute"
        time.sleep(0.01)


def _in_background(work: Callable[[], None]) -> threading.Thread:
    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    return thread


def _until(condition: Callable[[], bool], seconds: float = PATIENCE_S) -> Callable[[], bool]:
    """A should_stop: the condition holds, or a safety deadline passed."""
    deadline = time.monotonic() + seconds
    return lambda: condition() or time.monotonic() > deadline


class TimedWakeup(Wakeup):
    """A real Wakeup that also records how each wait ended and how long it took."""

    def __init__(self, url: URL) -> None:
        super().__init__(url)
        self.waits: list[tuple[bool, float]] = []
        self.waiting = threading.Event()

    def wait(self, timeout: float) -> bool:
        self.waiting.set()
        started = time.monotonic()
        woken = super().wait(timeout)
        self.waits.append((woken, time.monotonic() - started))
        return woken


def test_follow_yields_events_appended_by_another_thread_in_order(engine: Engine, tenant: str) -> None:
    appended: list[str] = []
    seen: list[Recorded] = []
    pages: list[int] = []

    def writer() -> None:
        # Each batch is appended only once the follower has yielded the previous
        # one, so every page must come from a separate append while following.
        for n in range(1, 4):
            time.sleep(0.05)
            appended.extend(_append(engine, tenant, [f"batch {n} turn {k}" for k in range(n)]))
            deadline = time.monotonic() + PATIENCE_S
            while len(seen) < len(appended) and time.monotonic() < deadline:
                time.sleep(0.005)

    thread = _in_background(writer)
    for page in follow(engine, tenant_id=tenant, poll_interval=0.02, should_stop=_until(lambda: len(seen) >= 6)):
        seen.extend(page)
        pages.append(len(page))
    thread.join(timeout=PATIENCE_S)

    assert [rec.event_id for rec in seen] == appended
    assert pages == [1, 2, 3], "one page per append, each yielded as it arrived"
    assert [rec.cursor for rec in seen] == sorted(rec.cursor for rec in seen)


def test_follow_starts_after_the_cursor_and_filters_by_tenant_and_type(engine: Engine, tenant: str) -> None:
    first = _append(engine, tenant, ["before"])
    _append(engine, f"{tenant}-other", ["another tenant"])
    _settle(engine, tenant)
    with engine.connect() as conn:
        (start,) = event_reads.read_all(conn, tenant_id=tenant)
    assert start.event_id == first[0]
    later = _append(engine, tenant, ["after 1"])
    retraction = NewEvent(
        event=MemoryRetracted(item_id="fact-1", item_kind="fact"),
        event_id=f"evt-{uuid.uuid4().hex}",
        occurred_at=datetime.now(UTC),
    )
    with engine.begin() as tx:
        event_store.append(tx, tenant, "memory:fact-1", [retraction], 0)
    later += _append(engine, tenant, ["after 2"])

    seen: list[Recorded] = []
    for page in follow(
        engine,
        after=start.cursor,
        tenant_id=tenant,
        types=["turn.recorded"],
        batch=1,
        poll_interval=0.02,
        should_stop=_until(lambda: len(seen) >= 2),
    ):
        assert len(page) == 1, "batch is the page size"
        seen.extend(page)

    assert [rec.event_id for rec in seen] == later, "not the cursor's event, nor other types"


def test_follow_stops_when_should_stop_says_so_on_a_quiet_ledger(engine: Engine, tenant: str) -> None:
    calls = 0

    def three_polls() -> bool:
        nonlocal calls
        calls += 1
        return calls > 3

    started = time.monotonic()
    pages = list(follow(engine, tenant_id=tenant, poll_interval=0.05, should_stop=three_polls))

    assert pages == []
    assert calls == 4
    assert time.monotonic() - started < 5.0


def test_a_notifying_append_ends_the_wait_early(database: SessionDatabase, engine: Engine, tenant: str) -> None:
    wakeup = TimedWakeup(database.url)
    appended: list[str] = []
    seen: list[Recorded] = []

    def writer() -> None:
        wakeup.waiting.wait(PATIENCE_S)  # the follower found nothing and began to wait
        time.sleep(0.2)
        appended.extend(_append(engine, tenant, ["wake"], notify=True))

    try:
        thread = _in_background(writer)
        for page in follow(
            engine, tenant_id=tenant, poll_interval=5.0, wakeup=wakeup, should_stop=_until(lambda: bool(seen))
        ):
            seen.extend(page)
        thread.join(timeout=PATIENCE_S)
    finally:
        wakeup.close()

    assert [rec.event_id for rec in seen] == appended
    # The first wait began on the empty ledger and ended with the append's
    # notification, long before its 5 s poll interval.
    woken, waited = wakeup.waits[0]
    assert woken, f"the wait was not woken: {wakeup.waits}"
    assert waited < 2.0, f"the wait did not end early: {waited:.2f} s of a 5 s poll interval"


def test_without_a_notification_the_wait_lasts_the_poll_interval(
    database: SessionDatabase, engine: Engine, tenant: str
) -> None:
    # The control for the test above: the same wakeup, an append that does not notify.
    wakeup = TimedWakeup(database.url)
    seen: list[Recorded] = []

    def writer() -> None:
        wakeup.waiting.wait(PATIENCE_S)
        time.sleep(0.2)
        _append(engine, tenant, ["quiet"])

    try:
        thread = _in_background(writer)
        for page in follow(
            engine, tenant_id=tenant, poll_interval=1.5, wakeup=wakeup, should_stop=_until(lambda: bool(seen))
        ):
            seen.extend(page)
        thread.join(timeout=PATIENCE_S)
    finally:
        wakeup.close()

    assert len(seen) == 1
    woken, waited = wakeup.waits[0]
    assert not woken
    assert waited >= 1.4, "the wait ended early with nothing to wake it"


def test_wakeup_wait_reports_whether_a_notification_arrived(
    database: SessionDatabase, engine: Engine, tenant: str
) -> None:
    wakeup = Wakeup(database.url)
    try:
        started = time.monotonic()
        assert wakeup.wait(0.2) is False
        assert time.monotonic() - started >= 0.15

        _append(engine, tenant, ["ping"], notify=True)
        started = time.monotonic()
        assert wakeup.wait(5.0) is True
        assert time.monotonic() - started < 2.0
    finally:
        wakeup.close()


# text(): the server's view of the connections listening for appends.
_LISTENERS = sa.text("SELECT pid FROM pg_stat_activity WHERE query = :listen AND pid <> pg_backend_pid()")


def _listeners(engine: Engine) -> set[int]:
    with engine.connect() as conn:
        return set(conn.execute(_LISTENERS, {"listen": f"LISTEN {event_store.NOTIFY_CHANNEL}"}).scalars())


def _cut_listeners(engine: Engine) -> set[int]:
    """Terminate every connection listening for appends, as a server restart would,
    wait until they are gone, and return their process ids."""
    pids = _listeners(engine)
    assert pids, "no connection was listening"
    with engine.connect() as conn:
        for pid in pids:
            conn.execute(sa.select(sa.func.pg_terminate_backend(pid)))
    deadline = time.monotonic() + PATIENCE_S
    while _listeners(engine) & pids:
        assert time.monotonic() < deadline, "the listening connections outlived pg_terminate_backend"
        time.sleep(0.01)
    return pids


def test_a_wakeup_whose_connection_was_cut_listens_again(
    engine: Engine, database: SessionDatabase, tenant: str
) -> None:
    wakeup = TimedWakeup(database.url)
    try:
        cut = _cut_listeners(engine)
        # The wait that finds the connection gone is an ordinary poll: no error, and
        # it lasts its timeout. (Before, it raised into the follower.)
        assert wakeup.wait(0.3) is False
        assert wakeup.waits[-1][1] >= 0.25
        wakeup.waiting.clear()

        def writer() -> None:
            wakeup.waiting.wait(PATIENCE_S)
            deadline = time.monotonic() + PATIENCE_S
            while not _listeners(engine) - cut and time.monotonic() < deadline:  # listening again
                time.sleep(0.01)
            time.sleep(0.1)
            _append(engine, tenant, ["after the cut"], notify=True)

        thread = _in_background(writer)
        woken = wakeup.wait(5.0)  # opens the connection again and listens
        thread.join(timeout=PATIENCE_S)
    finally:
        wakeup.close()

    assert woken, f"the wait after the cut was not woken: {wakeup.waits}"
    assert wakeup.waits[-1][1] < 2.0, f"the wait did not end early: {wakeup.waits}"


def test_a_closed_wakeup_stays_closed(database: SessionDatabase) -> None:
    wakeup = Wakeup(database.url)
    wakeup.close()
    started = time.monotonic()
    assert wakeup.wait(0.2) is False
    assert time.monotonic() - started >= 0.15
