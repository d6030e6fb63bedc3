"""The event store on a real PostgreSQL: append, read_stream and read_all.

Each test writes under its own tenant; whole-table counts and positions are
safe because tests run one at a time.
"""

from __future__ import annotations

import threading
import time
import uuid
from datetime import UTC, datetime

import msgspec
import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from memledger.errors import ConcurrencyConflict, InvalidCommand, LedgerError, UnknownEventType
from memledger.events import Event, FactExtracted, NewEvent, Recorded
from memledger.events.envelope import START, Cursor
from memledger.store import batch_append, event_reads, event_store
from memledger.store.batch_append import StreamAppend
from memledger.store.schema import events
from tests.conftest import settle, turn_event


def _count(conn: Connection) -> int:
    return int(conn.execute(sa.select(sa.func.count()).select_from(events)).scalar_one())


def _last_position(conn: Connection) -> int:
    return int(conn.execute(sa.select(sa.func.coalesce(sa.func.max(events.c.position), 0))).scalar_one())


def _snapshot(engine: Engine) -> tuple[int, int]:
    with engine.connect() as conn:
        return _count(conn), _last_position(conn)


def _fact_event(key: str = "k") -> NewEvent:
    return NewEvent(
        event=FactExtracted(
            memory_id=f"mem-{uuid.uuid4().hex[:8]}",
            scope="user",
            scope_key="ada",
            key=key,
            statement=f"statement about {key}",
            category="preference",
            confidence=0.5,
        ),
        event_id=f"evt-{uuid.uuid4().hex}",
        occurred_at=datetime.now(UTC),
    )


def _append(
    engine: Engine, tenant: str, stream: str, batch: list[NewEvent], expected: int | None
) -> event_store.AppendResult:
    with engine.begin() as tx:
        return event_store.append(tx, tenant, stream, batch, expected)


def _texts(recorded: list[Recorded]) -> list[str]:
    out: list[str] = []
    for rec in recorded:
        event: Event = rec.event
        out.append(str(getattr(event, "text", None) or getattr(event, "key", "")))
    return out


# --- expected versions ---------------------------------------------------------------


def test_append_to_a_new_stream_expects_version_zero(engine: Engine, tenant: str) -> None:
    result = _append(engine, tenant, "conv", [turn_event("a"), turn_event("b")], 0)

    assert result.stream_version == 2
    assert not result.replayed
    assert list(result.positions) == sorted(result.positions)
    with engine.connect() as conn:
        got = event_reads.read_stream(conn, tenant, "conv")
        assert event_store.stream_version(conn, tenant, "conv") == 2
    assert [(r.stream_version, r.position) for r in got] == [
        (1, result.positions[0]),
        (2, result.positions[1]),
    ]
    assert all(r.tenant_id == tenant and r.stream_id == "conv" for r in got)


def test_append_with_expected_version_zero_is_refused_on_an_existing_stream(engine: Engine, tenant: str) -> None:
    _append(engine, tenant, "conv", [turn_event("a")], 0)

    with pytest.raises(ConcurrencyConflict) as info:
        _append(engine, tenant, "conv", [turn_event("b")], 0)

    assert (info.value.expected, info.value.actual) == (0, 1)


def test_append_rejects_stale_expected_version(engine: Engine, tenant: str) -> None:
    _append(engine, tenant, "conv", [turn_event("a"), turn_event("b")], 0)
    rows_before, last_before = _snapshot(engine)

    with pytest.raises(ConcurrencyConflict) as info:
        _append(engine, tenant, "conv", [turn_event("late")], 1)

    conflict = info.value
    assert (conflict.tenant_id, conflict.stream_id) == (tenant, "conv")
    assert (conflict.expected, conflict.actual) == (1, 2)
    assert "'conv'" in str(conflict)
    assert "version 2, expected 1" in str(conflict)
    assert _snapshot(engine) == (rows_before, last_before), "a refused append wrote something"
    # The losing append took no position: the next one follows without a hole.
    after = _append(engine, tenant, "conv", [turn_event("c")], 2)
    assert after.positions == (last_before + 1,)
    assert after.stream_version == 3


def test_append_with_no_expected_version_appends_at_the_end(engine: Engine, tenant: str) -> None:
    first = _append(engine, tenant, "conv", [turn_event("a"), turn_event("b")], None)
    second = _append(engine, tenant, "conv", [turn_event("c")], None)

    assert (first.stream_version, second.stream_version) == (2, 3)
    with engine.connect() as conn:
        got = event_reads.read_stream(conn, tenant, "conv")
    assert _texts(got) == ["a", "b", "c"]
    assert [r.stream_version for r in got] == [1, 2, 3]


def test_streams_are_versioned_independently(engine: Engine, tenant: str) -> None:
    _append(engine, tenant, "one", [turn_event("a"), turn_event("b")], 0)
    other = _append(engine, tenant, "two", [turn_event("c")], 0)
    elsewhere = _append(engine, f"{tenant}-other", "one", [turn_event("d")], 0)

    assert other.stream_version == 1
    assert elsewhere.stream_version == 1


# --- idempotency -----------------------------------------------------------------------


def test_retrying_an_append_returns_the_original_positions_and_writes_nothing(engine: Engine, tenant: str) -> None:
    batch = [turn_event("a"), turn_event("b")]
    original = _append(engine, tenant, "conv", batch, 0)
    rows_before, last_before = _snapshot(engine)

    retried = _append(engine, tenant, "conv", batch, 0)  # the expectation is stale by now

    assert retried.replayed
    assert retried.positions == original.positions
    assert retried.stream_version == original.stream_version
    assert _snapshot(engine) == (rows_before, last_before)


def test_an_event_id_resent_with_other_content_is_refused_naming_it(engine: Engine, tenant: str) -> None:
    """A reused id is not a retry: before, the new content was answered "replayed" and dropped."""
    first = turn_event("We deploy on Fridays", turn_id="r1")
    _append(engine, tenant, "conv", [first], 0)
    before = _snapshot(engine)
    again = msgspec.structs.replace(first, occurred_at=datetime.now(UTC))  # another envelope: still a retry
    assert _append(engine, tenant, "conv", [again], None).replayed
    other = msgspec.structs.replace(first, event=msgspec.structs.replace(first.event, text="We deploy on Mondays"))
    with pytest.raises(InvalidCommand, match=rf"event id {first.event_id!r} was appended before with other content"):
        _append(engine, tenant, "conv", [other], None)
    assert _snapshot(engine) == before


def test_retrying_an_earlier_batch_after_later_appends_still_replays(engine: Engine, tenant: str) -> None:
    batch = [turn_event("a")]
    original = _append(engine, tenant, "conv", batch, 0)
    _append(engine, tenant, "conv", [turn_event("b")], 1)
    rows_before = _snapshot(engine)

    retried = _append(engine, tenant, "conv", batch, None)

    assert (retried.replayed, retried.positions, retried.stream_version) == (
        True,
        original.positions,
        1,
    )
    assert _snapshot(engine) == rows_before


def test_a_batch_partially_overlapping_earlier_event_ids_is_refused(engine: Engine, tenant: str) -> None:
    old = turn_event("a")
    _append(engine, tenant, "conv", [old], 0)
    before = _snapshot(engine)

    with pytest.raises(InvalidCommand, match="already appended"):
        _append(engine, tenant, "conv", [old, turn_event("new")], None)

    assert _snapshot(engine) == before
    with engine.connect() as conn:
        assert event_store.stream_version(conn, tenant, "conv") == 1


def test_reusing_event_ids_on_another_stream_is_refused(engine: Engine, tenant: str) -> None:
    batch = [turn_event("a")]
    _append(engine, tenant, "conv", batch, 0)
    before = _snapshot(engine)

    with pytest.raises(InvalidCommand, match="another batch or stream"):
        _append(engine, tenant, "elsewhere", batch, 0)

    assert _snapshot(engine) == before


def test_the_same_event_id_in_another_tenant_is_a_different_event(engine: Engine, tenant: str) -> None:
    batch = [turn_event("a")]
    first = _append(engine, tenant, "conv", batch, 0)
    second = _append(engine, f"{tenant}-b", "conv", batch, 0)

    assert not second.replayed
    assert second.positions != first.positions


# --- read_stream -----------------------------------------------------------------------


def test_read_stream_pages_by_version(engine: Engine, tenant: str) -> None:
    _append(engine, tenant, "conv", [turn_event(t) for t in "abcde"], 0)

    with engine.connect() as conn:
        page = event_reads.read_stream(conn, tenant, "conv", after_version=1, limit=2)
        rest = event_reads.read_stream(conn, tenant, "conv", after_version=3)
        empty = event_reads.read_stream(conn, tenant, "no-such-stream")

    assert _texts(page) == ["b", "c"]
    assert _texts(rest) == ["d", "e"]
    assert empty == []


def test_read_stream_returns_metadata_and_valid_time(engine: Engine, tenant: str) -> None:
    new = turn_event("a")
    _append(engine, tenant, "conv", [new], 0)

    with engine.connect() as conn:
        (rec,) = event_reads.read_stream(conn, tenant, "conv")

    assert rec.event_id == new.event_id
    assert rec.event == new.event
    assert rec.occurred_at == new.occurred_at
    assert rec.metadata == new.metadata
    assert rec.recorded_at.tzinfo is not None


# --- read_all --------------------------------------------------------------------------


def test_read_all_filters_by_tenant(engine: Engine, tenant: str) -> None:
    other = f"{tenant}-other"
    _append(engine, tenant, "conv", [turn_event("mine-1")], 0)
    _append(engine, other, "conv", [turn_event("theirs")], 0)
    _append(engine, tenant, "conv", [turn_event("mine-2")], 1)
    settle(engine, tenant)
    settle(engine, other)

    with engine.connect() as conn:
        mine = event_reads.read_all(conn, tenant_id=tenant)
        theirs = event_reads.read_all(conn, tenant_id=other)
        everyone = event_reads.read_all(conn, after=mine[0].cursor, limit=1000)

    assert _texts(mine) == ["mine-1", "mine-2"]
    assert _texts(theirs) == ["theirs"]
    assert {r.tenant_id for r in everyone} >= {tenant, other}


def test_read_all_filters_by_types(engine: Engine, tenant: str) -> None:
    _append(engine, tenant, "conv", [turn_event("a"), _fact_event("likes-tea"), turn_event("b")], 0)
    settle(engine, tenant)

    with engine.connect() as conn:
        facts = event_reads.read_all(conn, tenant_id=tenant, types=["fact.extracted"])
        turns = event_reads.read_all(conn, tenant_id=tenant, types=("turn.recorded",))
        both = event_reads.read_all(conn, tenant_id=tenant, types=["turn.recorded", "fact.extracted"])
        none = event_reads.read_all(conn, tenant_id=tenant, types=["subject.erased"])

    assert _texts(facts) == ["likes-tea"]
    assert _texts(turns) == ["a", "b"]
    assert _texts(both) == ["a", "likes-tea", "b"]
    assert none == []


def test_read_all_refuses_an_unknown_type(engine: Engine, tenant: str) -> None:
    with engine.connect() as conn, pytest.raises(UnknownEventType) as info:
        event_reads.read_all(conn, tenant_id=tenant, types=["turn.recorded", "memory.teleported"])
    assert info.value.event_type == "memory.teleported"


@pytest.mark.parametrize("limit", [0, -5])
def test_read_all_refuses_a_limit_below_one(engine: Engine, limit: int) -> None:
    with engine.connect() as conn, pytest.raises(InvalidCommand):
        event_reads.read_all(conn, limit=limit)


def test_read_all_from_the_same_cursor_returns_the_same_events(engine: Engine, tenant: str) -> None:
    _append(engine, tenant, "one", [turn_event("a"), turn_event("b")], 0)
    _append(engine, tenant, "two", [turn_event("c")], 0)
    _append(engine, tenant, "one", [turn_event("d")], 2)
    settle(engine, tenant)

    with engine.connect() as conn:
        (first,) = event_reads.read_all(conn, tenant_id=tenant, limit=1)
        again = event_reads.read_all(conn, tenant_id=tenant, after=first.cursor)
        once_more = event_reads.read_all(conn, tenant_id=tenant, after=first.cursor)

    assert _texts(again) == ["b", "c", "d"]
    assert once_more == again


def test_read_all_pages_through_every_event_once(engine: Engine, tenant: str) -> None:
    for stream in ("x", "y", "z"):
        _append(engine, tenant, stream, [turn_event(f"{stream}1"), turn_event(f"{stream}2")], 0)
    settle(engine, tenant)

    seen: list[str] = []
    cursor = START
    with engine.connect() as conn:
        while page := event_reads.read_all(conn, tenant_id=tenant, after=cursor, limit=4):
            seen += _texts(page)
            cursor = page[-1].cursor

    assert seen == ["x1", "x2", "y1", "y2", "z1", "z2"]


def test_read_all_does_not_skip_an_event_that_commits_late(engine: Engine, tenant: str) -> None:
    # A takes the earlier position but commits after B: a reader must not pass B
    # while A is in flight, or it would never see A.
    with engine.connect() as slow:
        slow_tx = slow.begin()
        event_store.append(slow, tenant, "slow", [turn_event("early-position")], 0)
        _append(engine, tenant, "fast", [turn_event("commits-first")], 0)
        with engine.connect() as conn:
            while_open = event_reads.read_all(conn, tenant_id=tenant)
        slow_tx.commit()
    settle(engine, tenant)

    with engine.connect() as conn:
        after_commit = event_reads.read_all(conn, tenant_id=tenant)

    assert while_open == []
    assert _texts(after_commit) == ["early-position", "commits-first"]


# --- cursors, counts -------------------------------------------------------------------


def test_cursor_at_a_position_is_the_cursor_of_that_event(engine: Engine, tenant: str) -> None:
    result = _append(engine, tenant, "conv", [turn_event(t) for t in "abc"], 0)
    settle(engine, tenant)

    with engine.connect() as conn:
        recorded = event_reads.read_all(conn, tenant_id=tenant)
        cursors = [event_reads.cursor_at(conn, p) for p in result.positions]
        after_first = event_reads.read_all(conn, tenant_id=tenant, after=cursors[0])
        beyond = event_reads.cursor_at(conn, result.positions[-1] + 1_000_000)

    assert cursors == [r.cursor for r in recorded]
    assert all(isinstance(c, Cursor) for c in cursors)
    assert _texts(after_first) == ["b", "c"]
    assert beyond == recorded[-1].cursor, "a position no event holds gives the nearest before it"
    assert str(cursors[0]) == f"{recorded[0].tx_id}:{recorded[0].position}"


def test_cursor_at_a_position_before_every_event_is_the_start(engine: Engine) -> None:
    with engine.connect() as conn:
        assert event_reads.cursor_at(conn, 0) == START


def test_count_after_and_has_events_after(engine: Engine, tenant: str) -> None:
    with engine.connect() as conn:
        assert event_reads.count_after(conn, START, tenant_id=tenant) == 0
        assert not event_reads.has_events_after(conn, START, tenant_id=tenant)

    _append(engine, tenant, "conv", [turn_event("a"), _fact_event(), turn_event("b")], 0)
    settle(engine, tenant)

    with engine.connect() as conn:
        recorded = event_reads.read_all(conn, tenant_id=tenant)
        assert event_reads.count_after(conn, START, tenant_id=tenant) == 3
        assert event_reads.count_after(conn, recorded[0].cursor, tenant_id=tenant) == 2
        assert event_reads.count_after(conn, recorded[-1].cursor, tenant_id=tenant) == 0
        assert event_reads.count_after(conn, START, tenant_id=tenant, types=["fact.extracted"]) == 1
        assert event_reads.has_events_after(conn, recorded[1].cursor, tenant_id=tenant)
        assert not event_reads.has_events_after(conn, recorded[-1].cursor, tenant_id=tenant)
        assert not event_reads.has_events_after(conn, recorded[1].cursor, tenant_id=tenant, types=["fact.extracted"])
        with pytest.raises(UnknownEventType):
            event_reads.count_after(conn, START, types=["nope"])
        with pytest.raises(UnknownEventType):
            event_reads.has_events_after(conn, START, types=["nope"])


# --- concurrency -----------------------------------------------------------------------


def _race(engine: Engine, tenant: str, stream: str, expected: int) -> list[object]:
    """Two writers, each on its own connection, append with the same expectation
    at the same moment. Returns each one's AppendResult or LedgerError."""
    barrier = threading.Barrier(2, timeout=10)
    outcomes: list[object] = [None, None]

    def writer(slot: int) -> None:
        try:
            with engine.begin() as tx:
                barrier.wait()
                outcomes[slot] = event_store.append(tx, tenant, stream, [turn_event(f"writer-{slot}")], expected)
        except LedgerError as e:
            outcomes[slot] = e

    threads = [threading.Thread(target=writer, args=(slot,)) for slot in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not any(t.is_alive() for t in threads), "a writer hung"
    return outcomes


@pytest.mark.parametrize("round_", range(3))
def test_two_writers_with_the_same_expected_version_exactly_one_wins(engine: Engine, tenant: str, round_: int) -> None:
    stream = f"race-{round_}"
    _append(engine, tenant, stream, [turn_event("seed")], 0)

    outcomes = _race(engine, tenant, stream, expected=1)

    wins = [o for o in outcomes if isinstance(o, event_store.AppendResult)]
    conflicts = [o for o in outcomes if isinstance(o, ConcurrencyConflict)]
    assert len(wins) == 1, outcomes
    assert len(conflicts) == 1, outcomes
    assert (conflicts[0].stream_id, conflicts[0].expected, conflicts[0].actual) == (stream, 1, 2)
    assert wins[0].stream_version == 2
    with engine.connect() as conn:
        got = event_reads.read_stream(conn, tenant, stream)
    assert [r.stream_version for r in got] == [1, 2]
    assert got[1].position == wins[0].positions[0]


def _waiting_on_a_lock(engine: Engine, pids: list[int], timeout: float = 10.0) -> None:
    """Wait until the session whose backend pid lands in ``pids`` waits on a lock."""
    waiting = sa.text("SELECT wait_event_type = 'Lock' FROM pg_stat_activity WHERE pid = :pid")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pids:
            with engine.connect() as conn:
                if conn.execute(waiting, {"pid": pids[0]}).scalar():
                    return
        time.sleep(0.01)
    raise AssertionError("the second writer never waited")


@pytest.mark.parametrize("many", [False, True])
def test_an_event_id_appended_concurrently_to_another_stream_is_refused(
    engine: Engine, tenant: str, many: bool
) -> None:
    """Neither writer's check can see the other's uncommitted row: the unique index
    holds the second until the first commits, and then refuses it whole."""
    shared = turn_event("said once")
    outcome: list[object] = []
    pids: list[int] = []

    def second() -> None:
        try:
            with engine.begin() as tx:
                pids.append(tx.connection.driver_connection.info.backend_pid)  # type: ignore[union-attr]
                sent = [turn_event("before"), shared]
                if many:
                    batch_append.append_many(tx, [StreamAppend(tenant, "second", sent, 0)])
                else:
                    event_store.append(tx, tenant, "second", sent, 0)
        except LedgerError as e:
            outcome.append(e)

    with engine.connect() as conn:
        with conn.begin():
            event_store.append(conn, tenant, "first", [shared], 0)
            writer = threading.Thread(target=second)
            writer.start()
            _waiting_on_a_lock(engine, pids)
        writer.join(timeout=30)
    assert not writer.is_alive(), "the second writer hung"
    assert len(outcome) == 1 and isinstance(outcome[0], InvalidCommand), outcome
    assert "appended concurrently" in str(outcome[0])
    with engine.connect() as conn:
        assert event_reads.read_stream(conn, tenant, "second") == []
        assert [r.event_id for r in event_reads.read_stream(conn, tenant, "first")] == [shared.event_id]
