"""Following the ledger: polling is what is correct, LISTEN/NOTIFY only shortens the wait."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from sqlalchemy.engine import Engine

from memledger.events.catalogue import MemoryRetracted
from memledger.events.envelope import NewEvent, Recorded
from memledger.store import event_store
from memledger.store.follow import Wakeup, follow
from tests.conftest import turn_event

if TYPE_CHECKING:
    from tests.conftest import TestDatabase as SessionDatabase


def _append(engine: Engine, tenant: str, texts: list[str], *, notify: bool = False) -> list[str]:
    batch = [turn_event(text) for text in texts]
    with engine.begin() as tx:
        event_store.append(tx, tenant, "conv", batch, None, notify=notify)
    return [new.event_id for new in batch]


def _in_background(work: Callable[[], None]) -> threading.Thread:
    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    return thread


def _until(condition: Callable[[], bool], seconds: float) -> Callable[[], bool]:
    """A should_stop: the condition holds, or a safety deadline passed."""
    deadline = time.monotonic() + seconds
    return lambda: condition() or time.monotonic() > deadline


def test_follow_yields_events_appended_by_another_thread_in_order(engine: Engine, tenant: str) -> None:
    appended: list[str] = []

    def writer() -> None:
        for n in range(1, 4):
            time.sleep(0.15)
            appended.extend(_append(engine, tenant, [f"batch {n} turn {k}" for k in range(n)]))

    thread = _in_background(writer)
    seen: list[Recorded] = []
    pages = 0
    for page in follow(engine, tenant_id=tenant, poll_interval=0.02, should_stop=_until(lambda: len(seen) >= 6, 15)):
        seen.extend(page)
        pages += 1
    thread.join(timeout=10)

    assert [rec.event_id for rec in seen] == appended
    assert len(appended) == 6
    assert pages >= 3, "each batch arrived while following, not all at once at the end"
    assert [rec.cursor for rec in seen] == sorted(rec.cursor for rec in seen)


def test_follow_starts_after_the_cursor_and_filters_by_tenant_and_type(engine: Engine, tenant: str) -> None:
    first = _append(engine, tenant, ["before"])
    _append(engine, f"{tenant}-other", ["another tenant"])
    with engine.connect() as conn:
        (start,) = event_store.read_all(conn, tenant_id=tenant)
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
        should_stop=_until(lambda: len(seen) >= 2, 10),
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
    assert time.monotonic() - started < 2.0


def test_a_notifying_append_ends_the_wait_early(database: SessionDatabase, engine: Engine, tenant: str) -> None:
    wakeup = Wakeup(database.url)
    appended: list[str] = []
    seen: list[Recorded] = []
    try:
        started = time.monotonic()

        def writer() -> None:
            time.sleep(0.3)
            appended.extend(_append(engine, tenant, ["wake"], notify=True))

        thread = _in_background(writer)
        for page in follow(
            engine,
            tenant_id=tenant,
            poll_interval=5.0,
            wakeup=wakeup,
            should_stop=_until(lambda: bool(seen), 15),
        ):
            seen.extend(page)
        elapsed = time.monotonic() - started
        thread.join(timeout=10)
    finally:
        wakeup.close()

    assert [rec.event_id for rec in seen] == appended
    assert elapsed < 2.0, f"the wait did not end early: {elapsed:.2f} s of a 5 s poll interval"


def test_without_a_notification_the_wait_lasts_the_poll_interval(
    database: SessionDatabase, engine: Engine, tenant: str
) -> None:
    # The control for the test above: same wakeup, an append that does not notify.
    wakeup = Wakeup(database.url)
    seen: list[Recorded] = []
    try:
        started = time.monotonic()

        def writer() -> None:
            time.sleep(0.2)
            _append(engine, tenant, ["quiet"])

        thread = _in_background(writer)
        for page in follow(
            engine,
            tenant_id=tenant,
            poll_interval=1.5,
            wakeup=wakeup,
            should_stop=_until(lambda: bool(seen), 15),
        ):
            seen.extend(page)
        elapsed = time.monotonic() - started
        thread.join(timeout=10)
    finally:
        wakeup.close()

    assert len(seen) == 1
    assert elapsed >= 1.2, "found before the poll interval ended, with nothing to wake it"


def test_wakeup_wait_reports_whether_a_notification_arrived(
    database: SessionDatabase, engine: Engine, tenant: str
) -> None:
    wakeup = Wakeup(database.url)
    try:
        started = time.monotonic()
        assert wakeup.wait(0.2) is False
        assert 0.15 <= time.monotonic() - started < 2.0

        _append(engine, tenant, ["ping"], notify=True)
        started = time.monotonic()
        assert wakeup.wait(5.0) is True
        assert time.monotonic() - started < 1.0
    finally:
        wakeup.close()
