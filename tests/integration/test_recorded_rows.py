"""Reading events as JSON rows the server builds (``store.recorded_rows``) gives what
decoding each column of the row gives, on a real PostgreSQL: every event type, old
schema versions, erased events, odd metadata and timestamps. The reference is the
column-by-column decoding (``codec.decode_stored``), written out here."""

from __future__ import annotations

import gc
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import msgspec
import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from memledger.errors import EventDecodeError
from memledger.events import codec
from memledger.events.catalogue import ALL_EVENT_TYPES, Event, TurnRecorded
from memledger.events.envelope import START, Metadata, NewEvent, Recorded
from memledger.store import event_reads, event_store, ledger_pages, recorded_rows
from tests.conftest import TestDatabase, settle
from tests.integration.test_projections_support import fresh_database
from tests.unit.test_codec import EXPECTED

FIXTURES = Path(__file__).parent.parent / "unit" / "fixtures" / "events"
_metadata = msgspec.json.Decoder(Metadata)

# The columns and their decoding, one value at a time: what reading was before rows came as JSON.
_REFERENCE = sa.text(
    "SELECT tenant_id, position, tx_id::text, stream_id, stream_version, event_id, event_type,"
    " schema_version, payload::text, metadata::text, occurred_at, recorded_at, private::text"
    " FROM events ORDER BY tx_id, position"
)  # text(): the test's own reference, apart from the code under test


def _reference(conn: Connection) -> list[Recorded]:
    out = []
    for row in conn.execute(_REFERENCE).all():
        event, erased = codec.decode_stored(row[6], row[7], row[8], row[12])
        out.append(
            Recorded(
                tenant_id=row[0],
                position=row[1],
                tx_id=int(row[2]),
                stream_id=row[3],
                stream_version=row[4],
                event_id=row[5],
                occurred_at=row[10],
                recorded_at=row[11],
                metadata=_metadata.decode(row[9]),
                event=event,
                erased=erased,
            )
        )
    return out


def _current_events() -> list[Event]:
    """One event of every type at its current version."""
    found = [e for (tag, v), e in EXPECTED.items() if v == codec.event_class(tag).schema_version]
    assert {type(e) for e in found} == set(ALL_EVENT_TYPES)
    return found


_METADATA = [
    Metadata(),
    Metadata(causation_id="evt-1", correlation_id="c-\u00e9\U0001f680", actor='quote " and \\ back'),
    Metadata(extractor="heuristic", extractor_version="7"),
]
_TIMES = [
    datetime(2025, 1, 2, 3, 4, 5, 123456, tzinfo=UTC),
    datetime(1, 1, 1, tzinfo=UTC),
    datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
    datetime(2024, 6, 1, 12, 0, tzinfo=timezone(timedelta(hours=5, minutes=30))),
]


def _fill(engine: Engine, tenant: str) -> None:
    """Every type (three times, in streams of different lengths), each historical
    fixture as it was stored, and the private parts of some events erased."""
    news = [
        NewEvent(
            event=event,
            event_id=f"evt-{uuid.uuid4().hex}",
            occurred_at=_TIMES[i % len(_TIMES)],
            metadata=_METADATA[i % len(_METADATA)],
        )
        for i, event in enumerate(_current_events() * 3)
    ]
    with engine.begin() as tx:
        for start in range(0, len(news), 7):
            event_store.append(tx, tenant, f"stream-{start}", news[start : start + 7], 0)
        for path in sorted(FIXTURES.glob("*/v*.json")):
            _insert_stored(tx, tenant, path.parent.name, int(path.stem[1:]), path.read_text(encoding="utf-8"))
        # Erased by the rule (no private part, a digest in the payload), though every
        # field is there: the rows msgspec could take as they are must still read as erased.
        whole = msgspec.json.decode(codec.encode(_current_events()[0]))
        _insert_stored(
            tx,
            tenant,
            whole["type"],
            _current_events()[0].schema_version,
            msgspec.json.encode({**whole, codec.DIGEST_KEY: "0" * 64}).decode(),
        )
        private = [r.position for r in event_reads.read_tenant(tx, tenant) if type(r.event).private_fields]
        assert len(private) > 4
        assert event_store.erase_private(tx, tenant, private[::2]) > 0


def _insert_stored(
    tx: Connection, tenant: str, tag: str, version: int, payload: str, private: str | None = None
) -> None:
    """A row as an older release stored it, or as no append would, written directly
    (appends store the current version, and a private part only beside its digest)."""
    tx.execute(
        sa.text(  # text(): a row no append of this release would write
            "INSERT INTO events (tenant_id, stream_id, stream_version, event_id, event_type,"
            " schema_version, payload, private, occurred_at)"
            " VALUES (:tenant, :stream, 1, :event_id, :tag, :version, CAST(:payload AS jsonb),"
            " CAST(:private AS jsonb), now())"
        ),
        {
            "tenant": tenant,
            "stream": f"old-{uuid.uuid4().hex}",
            "event_id": f"old-{uuid.uuid4().hex}",
            "tag": tag,
            "version": version,
            "payload": payload,
            "private": private,
        },
    )


@pytest.fixture(scope="module")
def filled(database: TestDatabase) -> Iterator[tuple[Engine, list[Recorded]]]:
    """A database of its own holding ``_fill``'s events, and their reference decoding."""
    with fresh_database(database, "recorded_rows") as engine:
        _fill(engine, "t-rows")
        settle(engine, "t-rows")  # the reads under test are gap-safe
        with engine.connect() as conn:
            expected = _reference(conn)
        yield engine, expected


def _assert_same(got: list[Recorded], expected: list[Recorded]) -> None:
    assert got == expected
    for a, b in zip(got, expected, strict=True):
        for name in ("occurred_at", "recorded_at"):
            assert getattr(a, name).utcoffset() == getattr(b, name).utcoffset()
            assert getattr(a, name).isoformat() == getattr(b, name).isoformat()
        assert type(a.tx_id) is int and type(a.position) is int and type(a.stream_version) is int
        assert type(a.event) is type(b.event)


def test_the_reference_holds_every_kind_of_row(filled: tuple[Engine, list[Recorded]]) -> None:
    _, expected = filled
    assert {type(r.event) for r in expected} == set(ALL_EVENT_TYPES)
    assert any(r.erased for r in expected) and any(not r.erased and type(r.event).private_fields for r in expected)
    assert any(r.erased and r.event == _current_events()[0] for r in expected)
    assert {r.occurred_at for r in expected} >= set(_TIMES)


def test_read_all_decodes_each_row_as_its_columns_do(filled: tuple[Engine, list[Recorded]]) -> None:
    engine, expected = filled
    got: list[Recorded] = []
    with engine.connect() as conn:
        while page := event_reads.read_all(conn, after=got[-1].cursor if got else START, limit=5):
            got.extend(page)
    _assert_same(got, expected)


def test_read_pages_decodes_each_row_as_its_columns_do(
    filled: tuple[Engine, list[Recorded]], monkeypatch: pytest.MonkeyPatch
) -> None:
    engine, expected = filled
    monkeypatch.setattr(ledger_pages, "PAGES_PER_STATEMENT", 3)
    monkeypatch.setattr(recorded_rows, "_SLICE_CHARS", 1)  # read the socket after every row
    with engine.connect() as conn:
        pages = list(ledger_pages.read_pages(conn, page=4))
    assert [len(p) for p in pages[:-1]] == [4] * (len(pages) - 1)
    _assert_same([r for p in pages for r in p], expected)


def test_the_other_reads_decode_alike(filled: tuple[Engine, list[Recorded]]) -> None:
    engine, expected = filled
    one = expected[len(expected) // 2]
    with engine.connect() as conn:
        tenant = event_reads.read_tenant(conn, "t-rows", limit=10_000)
        stream = event_reads.read_stream(conn, "t-rows", one.stream_id)
        by_id = event_reads.read_events(conn, "t-rows", [r.event_id for r in expected[::3]])
    _assert_same(tenant, sorted(expected, key=lambda r: r.position))
    _assert_same(stream, [r for r in expected if r.stream_id == one.stream_id])
    _assert_same(by_id, expected[::3])


def test_plain_pages_decode_without_codec_and_others_through_it(
    filled: tuple[Engine, list[Recorded]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The one-pass decoding is what reads plain rows; the codec, rows it cannot take."""
    engine, expected = filled
    with engine.connect() as conn:
        texts = [(row[0], row[1]) for row in conn.execute(sa.select(*recorded_rows.COLUMNS).order_by("position")).all()]
    by_position = sorted(expected, key=lambda r: r.position)
    plain = [i for i, r in enumerate(by_position) if not r.erased and r.stream_id.startswith("stream-")]
    calls: list[str] = []
    real = codec.decode_joined

    def counted(*args: Any) -> tuple[Event, bool]:
        calls.append(args[0])
        return real(*args)

    monkeypatch.setattr(codec, "decode_joined", counted)
    assert recorded_rows.decode([texts[i] for i in plain]) == [by_position[i] for i in plain]
    assert calls == []
    assert recorded_rows.decode(texts) == by_position
    assert len(calls) == len(texts)


def test_a_row_whose_tag_disagrees_with_its_type_fails_as_before(database: TestDatabase) -> None:
    event = next(e for e in _current_events() if e.schema_version == 1)
    payload = codec.encode(event).decode()
    wrong = next(t for t in codec.known_tags() if t != codec.tag_of(event) and codec.event_class(t).schema_version == 1)
    with fresh_database(database, "rows_bad") as engine:
        with engine.begin() as tx:
            _insert_stored(tx, "t-bad", wrong, codec.event_class(wrong).schema_version, payload)
        with engine.connect() as conn:
            with pytest.raises(EventDecodeError) as before:
                _reference(conn)
            conn.rollback()
            with pytest.raises(EventDecodeError) as now:
                event_reads.read_all(conn)
            conn.rollback()
            with pytest.raises(EventDecodeError) as paged:
                list(ledger_pages.read_pages(conn))
    assert str(now.value) == str(before.value) == str(paged.value)


_SAID = '{"text": "said }]", "_salt": "00"}'
_PAYLOAD = '{"type": "turn.recorded", "turn_id": "t-1", "role": "user", "_private": "00"}'


@pytest.mark.parametrize(
    ("payload", "private"),
    [("[1]", _SAID), ("{}", _SAID), ('"text"', _SAID), ("7", _SAID), (_PAYLOAD, "{}"), (_PAYLOAD, '["said"]')],
)
def test_a_private_part_and_payload_that_are_not_both_objects_fail_as_a_decode_error(
    database: TestDatabase, payload: str, private: str
) -> None:
    """No splice makes such a row readable, nor turns its fault into a bare JSON error."""
    with fresh_database(database, "rows_odd") as engine:
        with engine.begin() as tx:
            _insert_stored(tx, "t-odd", "turn.recorded", 2, payload, private)
        settle(engine, "t-odd")
        with engine.connect() as conn:
            with pytest.raises(EventDecodeError):
                event_reads.read_all(conn)
            conn.rollback()
            with pytest.raises(EventDecodeError):
                list(ledger_pages.read_pages(conn))


def test_an_empty_list_decodes_to_nothing() -> None:
    assert recorded_rows.decode([]) == []


def test_a_row_that_fails_mid_statement_leaves_the_transaction_usable(database: TestDatabase) -> None:
    """The rows after it are drained, not cancelled: more than a slice follow it."""
    event = next(e for e in _current_events() if e.schema_version == 1)
    wrong = next(t for t in codec.known_tags() if t != codec.tag_of(event) and codec.event_class(t).schema_version == 1)
    follow = [
        NewEvent(event=event, event_id=f"evt-{i}", occurred_at=_TIMES[0], metadata=Metadata(actor="x" * 2000))
        for i in range(300)
    ]
    with fresh_database(database, "rows_drain") as engine:
        with engine.begin() as tx:
            _insert_stored(tx, "t-bad", wrong, 1, codec.encode(event).decode())
        with engine.begin() as tx:
            event_store.append(tx, "t-bad", "after", follow, 0)
        with engine.connect() as conn:
            with pytest.raises(EventDecodeError):
                event_reads.read_all(conn, limit=1000)
            assert conn.execute(sa.select(sa.func.count()).select_from(sa.table("events"))).scalar_one() == 301


@pytest.mark.parametrize(
    "text",
    ['ends like a row "}]', 'braces {"a": [1]} and }], inside', "line\u2028separator \\ and \U0001f680 emoji", "}"],
)
def test_a_private_part_is_spliced_into_its_event_whatever_its_text(
    filled: tuple[Engine, list[Recorded]], text: str
) -> None:
    """The private part travels apart from the row and is spliced into it on the client:
    a text holding what the splice looks for still reads back as written."""
    engine, _ = filled
    tenant = f"t-splice-{uuid.uuid4().hex[:8]}"
    event = TurnRecorded(turn_id="turn-1", role="user", text=text, speaker='Ana "}]"')
    new = NewEvent(event=event, event_id=f"evt-{uuid.uuid4().hex}", occurred_at=_TIMES[0], metadata=_METADATA[1])
    with engine.begin() as tx:
        event_store.append(tx, tenant, "stream-splice", [new], 0)
    settle(engine, tenant)  # read_pages is gap-safe: another session's open transaction would hide it
    with engine.connect() as conn:
        expected = [r for r in _reference(conn) if r.tenant_id == tenant]
        got = event_reads.read_tenant(conn, tenant)
        paged = [r for page in ledger_pages.read_pages(conn, tenant_id=tenant) for r in page]
    assert [r.event for r in got] == [event]
    _assert_same(got, expected)
    _assert_same(paged, expected)


def test_events_read_are_not_tracked_by_the_garbage_collector(filled: tuple[Engine, list[Recorded]]) -> None:
    """A read of many events adds nothing for the collector to walk: neither the
    envelope nor the event (with its scopes) is tracked."""
    engine, expected = filled
    with engine.connect() as conn:
        got = event_reads.read_tenant(conn, "t-rows")
    assert len(got) == len(expected)
    assert not any(gc.is_tracked(r) or gc.is_tracked(r.event) or gc.is_tracked(r.metadata) for r in got)
    assert not any(gc.is_tracked(r.event.scopes) for r in got if isinstance(r.event, TurnRecorded))
