"""``batch_append.append_many`` on a real PostgreSQL: many streams in one statement,
with ``append``'s guarantees per stream and all or nothing across them.

Each test writes under its own tenant; whole-table counts and positions are safe
because tests run one at a time.
"""

from __future__ import annotations

import threading
import uuid
from datetime import UTC, datetime
from typing import Any

import msgspec
import psycopg
import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from memledger.errors import ConcurrencyConflict, InvalidCommand, InvalidIdentifier, PayloadTooLarge
from memledger.events import FactExtracted, NewEvent
from memledger.events.envelope import Metadata
from memledger.store import batch_append, event_reads, event_store
from memledger.store.batch_append import StreamAppend
from memledger.store.schema import events
from tests.conftest import turn_event


def _fact(key: str = "k", event_id: str | None = None) -> NewEvent:
    return NewEvent(
        event=FactExtracted(
            memory_id=f"mem-{uuid.uuid4().hex[:8]}",
            scope="user",
            scope_key="ada",
            key=key,
            statement=f"statement about {key}",
            category="preference",
            confidence=0.8,
        ),
        event_id=event_id or f"evt-{uuid.uuid4().hex}",
        occurred_at=datetime.now(UTC),
        metadata=Metadata(causation_id="turn:1", actor="extractor:test"),
    )


def _many(engine: Engine, appends: list[StreamAppend], **kw: Any) -> list[event_store.AppendResult]:
    with engine.begin() as tx:
        return batch_append.append_many(tx, appends, **kw)


def _snapshot(engine: Engine) -> tuple[int, int]:
    """Rows in the ledger, and the identity's next position (untouched by a refused insert)."""
    with engine.connect() as conn:
        count = int(conn.execute(sa.select(sa.func.count()).select_from(events)).scalar_one())
        # text(): the identity sequence's state, which no table models.
        last = conn.execute(sa.text("SELECT last_value FROM events_position_seq")).scalar_one()
    return count, int(last)


def _stored(engine: Engine, tenant: str, stream: str) -> list[tuple[Any, ...]]:
    stmt = (
        sa.select(
            events.c.stream_version,
            events.c.event_id,
            events.c.event_type,
            events.c.schema_version,
            # Without the per-event random salt of the private fields, and the digest it salts.
            sa.cast(events.c.payload.op("-")(sa.literal("_private")), sa.Text),
            sa.cast(events.c.private.op("-")(sa.literal("_salt")), sa.Text),
            sa.cast(events.c.metadata, sa.Text),
            events.c.occurred_at,
        )
        .where(events.c.tenant_id == tenant, events.c.stream_id == stream)
        .order_by(events.c.stream_version)
    )
    with engine.connect() as conn:
        return [tuple(r) for r in conn.execute(stmt).all()]


def test_appends_to_many_streams_in_order_as_append_would(engine: Engine, tenant: str) -> None:
    with engine.begin() as tx:
        event_store.append(tx, tenant, "s-old", [_fact("a")], 0)
    a, b = [_fact("x"), _fact("y")], [_fact("z")]
    results = _many(engine, [StreamAppend(tenant, "s-new", a, 0), StreamAppend(tenant, "s-old", b, 1)])
    assert [r.stream_version for r in results] == [2, 2]
    assert not any(r.replayed for r in results)
    positions = [p for r in results for p in r.positions]
    assert positions == sorted(positions) and len(set(positions)) == 3  # in call order, stream order
    with engine.connect() as conn:
        assert [r.event_id for r in event_reads.read_stream(conn, tenant, "s-new")] == [e.event_id for e in a]
        assert [r.event.key for r in event_reads.read_stream(conn, tenant, "s-old")] == ["a", "z"]  # type: ignore[attr-defined]
    # byte for byte the rows ``append`` writes for the same events
    twin = f"{tenant}-twin"
    with engine.begin() as tx:
        event_store.append(tx, twin, "s-new", a, 0)
    assert _stored(engine, twin, "s-new") == _stored(engine, tenant, "s-new")


def test_a_stale_stream_fails_the_whole_call_and_takes_no_position(engine: Engine, tenant: str) -> None:
    with engine.begin() as tx:
        event_store.append(tx, tenant, "s2", [_fact()], 0)
    before = _snapshot(engine)
    with pytest.raises(ConcurrencyConflict) as info:
        _many(engine, [StreamAppend(tenant, "s1", [_fact()], 0), StreamAppend(tenant, "s2", [_fact()], 0)])
    assert (info.value.stream_id, info.value.expected, info.value.actual) == ("s2", 0, 1)
    assert _snapshot(engine) == before  # nothing written, no hole in the positions


def test_a_retried_call_returns_the_original_results_and_writes_nothing(engine: Engine, tenant: str) -> None:
    call = [StreamAppend(tenant, f"s{i}", [_fact(), _fact()], 0) for i in range(3)]
    first = _many(engine, call)
    before = _snapshot(engine)
    again = _many(engine, call)
    assert _snapshot(engine) == before
    assert [(r.positions, r.stream_version) for r in again] == [(r.positions, r.stream_version) for r in first]
    assert all(r.replayed for r in again)


def test_a_retried_stream_with_other_content_is_refused_naming_the_append(engine: Engine, tenant: str) -> None:
    sent = _fact()
    _many(engine, [StreamAppend(tenant, "done", [sent], 0)])
    before = _snapshot(engine)
    changed = msgspec.structs.replace(sent, event=msgspec.structs.replace(sent.event, statement="something else"))
    with pytest.raises(InvalidCommand, match=r"appends\[1\]: event id .* was appended before with other content"):
        _many(engine, [StreamAppend(tenant, "fresh", [_fact()], 0), StreamAppend(tenant, "done", [changed], 0)])
    assert _snapshot(engine) == before


def test_retried_streams_are_skipped_and_new_ones_written_in_the_same_call(engine: Engine, tenant: str) -> None:
    old = StreamAppend(tenant, "done", [_fact()], 0)
    (original,) = _many(engine, [old])
    new = StreamAppend(tenant, "fresh", [_fact(), _fact()], 0)
    replayed, written = _many(engine, [old, new])
    assert replayed.replayed and replayed.positions == original.positions
    assert not written.replayed and written.stream_version == 2
    assert len(_stored(engine, tenant, "fresh")) == 2


def test_event_ids_used_in_another_stream_are_refused_naming_the_append(engine: Engine, tenant: str) -> None:
    taken = _fact()
    _many(engine, [StreamAppend(tenant, "first", [taken], 0)])
    before = _snapshot(engine)
    with pytest.raises(InvalidCommand, match=r"appends\[1\]: event ids .* another batch or stream"):
        _many(engine, [StreamAppend(tenant, "ok", [_fact()], 0), StreamAppend(tenant, "other", [taken], 0)])
    with pytest.raises(InvalidCommand, match=r"appends\[0\]"):  # a partial retry is no retry
        _many(engine, [StreamAppend(tenant, "first", [taken, _fact()], 1)])
    assert _snapshot(engine) == before


def test_the_same_event_id_in_another_tenant_is_no_clash(engine: Engine, tenant: str) -> None:
    shared = f"evt-{uuid.uuid4().hex}"
    results = _many(
        engine,
        [
            StreamAppend(tenant, "s", [_fact(event_id=shared)], 0),
            StreamAppend(f"{tenant}-b", "s", [_fact(event_id=shared)], 0),
        ],
    )
    assert [r.stream_version for r in results] == [1, 1]


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (
            lambda t: [StreamAppend(t, "s", [_fact()], 0), StreamAppend(t, "s", [_fact()], None)],
            r"appends\[1\] is to the same stream as appends\[0\]",
        ),
        (
            lambda t: [StreamAppend(t, "s", [_fact()], 0), StreamAppend("", "s", [_fact()], 0)],
            r"appends\[1\]\.tenant_id",
        ),
        (lambda t: [StreamAppend(t, "s\x00", [_fact()], 0)], r"appends\[0\]\.stream_id"),
        (lambda t: [StreamAppend(t, "s", [_fact()], -1)], r"appends\[0\]\.expected_version"),
        (lambda t: [StreamAppend(t, "s", [_fact()], True)], r"appends\[0\]\.expected_version"),
        (
            lambda t: [StreamAppend(t, "a", [_fact()], 0), StreamAppend(t, "b", [], 0)],
            r"appends\[1\]: an append needs at least one event",
        ),
        (
            lambda t: [StreamAppend(t, "a", [_fact(event_id="x"), _fact(event_id="x")], 0)],
            r"appends\[0\]: events\[1\]\.event_id 'x' appears twice",
        ),
        (
            lambda t: [StreamAppend(t, "a", ["not an event"], 0)],  # type: ignore[list-item]
            r"appends\[0\]: events\[0\] is a str",
        ),
        (lambda t: [(t, "a", [_fact()], 0)], r"appends\[0\] is a tuple, not a StreamAppend"),
        (lambda t: StreamAppend(t, "a", [_fact()], 0), r"appends must be a list"),
    ],
)
def test_bad_input_is_refused_naming_the_append_and_nothing_is_written(
    engine: Engine, tenant: str, bad: Any, message: str
) -> None:
    before = _snapshot(engine)
    with pytest.raises(InvalidCommand, match=message):
        _many(engine, bad(tenant))
    assert _snapshot(engine) == before


def test_a_blank_tenant_is_an_invalid_identifier(engine: Engine) -> None:
    with pytest.raises(InvalidIdentifier):
        _many(engine, [StreamAppend(" ", "s", [_fact()], 0)])


def test_a_payload_over_the_limit_keeps_its_error_type(engine: Engine, tenant: str) -> None:
    before = _snapshot(engine)
    with pytest.raises(PayloadTooLarge):
        _many(engine, [StreamAppend(tenant, "a", [_fact()], 0)], max_payload_bytes=10)
    assert _snapshot(engine) == before


def test_an_empty_call_writes_nothing(engine: Engine) -> None:
    before = _snapshot(engine)
    assert _many(engine, []) == []
    assert _snapshot(engine) == before


def test_writers_of_one_stream_queue_on_the_lock_append_takes(engine: Engine, tenant: str) -> None:
    """``append`` holds stream s's lock: ``append_many`` waits, then sees its event."""
    outcome: list[object] = []
    with engine.begin() as tx:
        event_store.append(tx, tenant, "s", [_fact()], 0)

        def other() -> None:
            try:
                outcome.append(_many(engine, [StreamAppend(tenant, "s", [_fact()], 0)]))
            except ConcurrencyConflict as e:
                outcome.append(e)

        thread = threading.Thread(target=other)
        thread.start()
        thread.join(0.5)
        assert thread.is_alive()  # waiting for the lock, not racing the first writer
    thread.join(10)
    (result,) = outcome
    assert isinstance(result, ConcurrencyConflict) and result.actual == 1


def test_overlapping_calls_in_any_order_do_not_deadlock(engine: Engine, tenant: str) -> None:
    streams = [f"s{i}" for i in range(6)]
    errors: list[BaseException] = []

    def writer(order: list[str]) -> None:
        try:
            for _ in range(15):
                _many(engine, [StreamAppend(tenant, s, [_fact()], None) for s in order])
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(o,)) for o in (streams, streams[::-1], streams[2:] + streams[:2])]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    for s in streams:
        assert [r[0] for r in _stored(engine, tenant, s)] == list(range(1, 46))  # no gap, no duplicate


def test_notify_tells_each_tenant_once_on_commit(database: Any, engine: Engine, tenant: str) -> None:
    url = database.url.set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(url, autocommit=True) as listener:
        listener.execute(f"LISTEN {event_store.NOTIFY_CHANNEL}")
        other = f"{tenant}-b"
        _many(
            engine,
            [
                StreamAppend(tenant, "a", [_fact()], 0),
                StreamAppend(other, "a", [_fact()], 0),
                StreamAppend(tenant, "b", [_fact()], 0),
            ],
            notify=True,
        )
        got = [n.payload for n in listener.notifies(timeout=2, stop_after=2)]
    assert sorted(got) == sorted([tenant, other])


def test_turns_and_facts_of_many_streams_read_back_intact(engine: Engine, tenant: str) -> None:
    turns = [turn_event(f"turn {i}") for i in range(3)]
    _many(engine, [StreamAppend(tenant, f"conv-{i}", [t], None) for i, t in enumerate(turns)])
    with engine.connect() as conn:
        back = event_reads.read_events(conn, tenant, [t.event_id for t in turns])
    assert [r.event for r in back] == [t.event for t in turns]
