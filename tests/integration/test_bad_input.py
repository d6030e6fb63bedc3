"""Bad input to an append raises a clear typed error and writes nothing.

Each case runs the append inside a transaction that *commits* after catching the
error, then counts the whole events table: an append that inserted part of a
batch before failing would show up. (If a case does not raise, the failure
propagates through the transaction and rolls it back, so a bad row never stays
in the session database to trouble other tests.)
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from typing import Any, TypeVar

import msgspec
import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from memledger.errors import (
    InvalidCommand,
    InvalidEvent,
    InvalidIdentifier,
    LedgerError,
    PayloadTooLarge,
    UnknownEventType,
)
from memledger.events import Event, Metadata, NewEvent, Scopes, TurnRecorded, codec
from memledger.service.record import TurnInput, record_turns
from memledger.store import event_reads, event_store
from memledger.store.schema import events
from tests.conftest import turn_event


def _count(engine: Engine) -> int:
    with engine.connect() as conn:
        return int(conn.execute(sa.select(sa.func.count()).select_from(events)).scalar_one())


E = TypeVar("E", bound=LedgerError)


def _refused(engine: Engine, error: type[E], append: Callable[[Connection], object]) -> E:
    """Run ``append`` in a transaction that commits anyway; it must raise ``error``
    and leave the events table as it was."""
    before = _count(engine)
    with engine.begin() as tx, pytest.raises(error) as info:
        append(tx)
    assert _count(engine) == before, "a refused append wrote something"
    return info.value


def _with(base: NewEvent, **changes: Any) -> NewEvent:
    return msgspec.structs.replace(base, **changes)


def _turn(**changes: Any) -> NewEvent:
    """A valid turn event with ``changes`` made to its TurnRecorded."""
    base = turn_event("hello")
    return _with(base, event=msgspec.structs.replace(base.event, **changes))


# --- identifiers -------------------------------------------------------------------

BAD_IDS = [
    pytest.param("", id="empty"),
    pytest.param("   ", id="blank"),
    pytest.param("\u3000", id="blank-ideographic-space"),
    pytest.param("x" * 257, id="over-256"),
    pytest.param("a\x00b", id="nul"),
    pytest.param("a\nb", id="newline"),
    pytest.param("tab\t", id="tab"),
    pytest.param("del\x7f", id="del"),
    pytest.param("c1\x85", id="c1-control"),
    pytest.param(None, id="none"),
    pytest.param(42, id="int"),
    pytest.param(b"bytes", id="bytes"),
    pytest.param(["list"], id="list"),
]


@pytest.mark.parametrize("bad", BAD_IDS)
def test_append_refuses_a_bad_tenant_id(engine: Engine, bad: Any) -> None:
    error = _refused(engine, InvalidIdentifier, lambda tx: event_store.append(tx, bad, "s", [turn_event()], 0))
    assert error.field == "tenant_id"
    assert "tenant_id" in str(error)


@pytest.mark.parametrize("bad", BAD_IDS)
def test_append_refuses_a_bad_stream_id(engine: Engine, tenant: str, bad: Any) -> None:
    error = _refused(engine, InvalidIdentifier, lambda tx: event_store.append(tx, tenant, bad, [turn_event()], 0))
    assert error.field == "stream_id"


@pytest.mark.parametrize("bad", BAD_IDS)
def test_append_refuses_a_bad_event_id(engine: Engine, tenant: str, bad: Any) -> None:
    batch = [turn_event(), _with(turn_event(), event_id=bad)]
    error = _refused(engine, InvalidIdentifier, lambda tx: event_store.append(tx, tenant, "s", batch, 0))
    assert error.field == "events[1].event_id"


def test_an_identifier_of_exactly_256_characters_is_accepted(engine: Engine, tenant: str) -> None:
    longest = tenant.ljust(256, "t")
    with engine.begin() as tx:
        result = event_store.append(tx, longest, longest, [_with(turn_event(), event_id=longest)], 0)
    assert result.stream_version == 1


@pytest.mark.parametrize("bad", BAD_IDS[:5])
def test_reads_refuse_bad_identifiers(engine: Engine, bad: Any) -> None:
    with engine.connect() as conn:
        with pytest.raises(InvalidIdentifier):
            event_reads.read_stream(conn, bad, "s")
        with pytest.raises(InvalidIdentifier):
            event_reads.read_stream(conn, "t", bad)
        with pytest.raises(InvalidIdentifier):
            event_reads.read_all(conn, tenant_id=bad)


# --- wrong shapes and types ---------------------------------------------------------


@pytest.mark.parametrize(
    "bad_events",
    [
        pytest.param([], id="empty-list"),
        pytest.param(None, id="none"),
        pytest.param(turn_event(), id="a-single-NewEvent"),
        pytest.param({"event": "x"}, id="dict"),
        pytest.param(iter([turn_event()]), id="iterator"),
        pytest.param("turn", id="str"),
        pytest.param([turn_event(), "x"], id="element-str"),
        pytest.param([turn_event(), turn_event().event], id="element-bare-event"),
        pytest.param([turn_event(), None], id="element-none"),
    ],
)
def test_append_refuses_events_that_are_not_a_list_of_new_events(engine: Engine, tenant: str, bad_events: Any) -> None:
    _refused(engine, InvalidCommand, lambda tx: event_store.append(tx, tenant, "s", bad_events, 0))


@pytest.mark.parametrize(
    "occurred_at",
    [
        pytest.param(datetime(2025, 1, 1, 12, 0), id="naive"),
        pytest.param("2025-01-01T12:00:00Z", id="str"),
        pytest.param(1_735_732_800, id="int"),
        pytest.param(None, id="none"),
    ],
)
def test_append_refuses_an_occurred_at_that_is_not_an_aware_datetime(
    engine: Engine, tenant: str, occurred_at: Any
) -> None:
    batch = [_with(turn_event(), occurred_at=occurred_at)]
    error = _refused(engine, InvalidCommand, lambda tx: event_store.append(tx, tenant, "s", batch, 0))
    assert "occurred_at" in str(error)


def test_append_accepts_an_occurred_at_in_any_time_zone(engine: Engine, tenant: str) -> None:
    when = datetime(2025, 1, 1, 12, 0, tzinfo=timezone(timedelta(hours=-5)))
    with engine.begin() as tx:
        event_store.append(tx, tenant, "s", [_with(turn_event(), occurred_at=when)], 0)
    with engine.connect() as conn:
        (rec,) = event_reads.read_stream(conn, tenant, "s")
    assert rec.occurred_at == when
    assert rec.occurred_at.astimezone(UTC).hour == 17


@pytest.mark.parametrize(
    "expected",
    [
        pytest.param(-1, id="negative"),
        pytest.param("3", id="str"),
        pytest.param(True, id="bool"),
        pytest.param(1.0, id="float"),
    ],
)
def test_append_refuses_a_bad_expected_version(engine: Engine, tenant: str, expected: Any) -> None:
    error = _refused(
        engine,
        InvalidCommand,
        lambda tx: event_store.append(tx, tenant, "s", [turn_event()], expected),
    )
    assert "expected_version" in str(error)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        pytest.param({"turn_id": 7}, "$.turn_id", id="int-turn-id"),
        pytest.param({"role": "narrator"}, "$.role", id="role-outside-literal"),
        pytest.param({"text": None}, "$.text", id="none-text"),
        pytest.param({"text": ["a", "b"]}, "$.text", id="list-text"),
        pytest.param({"scopes": Scopes(session="")}, "$.scopes.session", id="empty-scope"),
        pytest.param({"subject": "s" * 201}, "$.subject", id="over-long-subject"),
        pytest.param({"text": "before\x00after"}, "$.text", id="nul-in-text"),
        pytest.param({"scopes": Scopes(user="u\x00")}, "$.scopes.user", id="nul-in-scope"),
    ],
)
def test_append_refuses_an_event_with_a_bad_field(
    engine: Engine, tenant: str, changes: dict[str, Any], field: str
) -> None:
    batch = [_turn(**changes)]
    error = _refused(engine, InvalidEvent, lambda tx: event_store.append(tx, tenant, "s", batch, 0))
    assert (error.event_type, error.field) == ("turn.recorded", field)


def test_append_refuses_metadata_that_is_not_a_metadata(engine: Engine, tenant: str) -> None:
    batch = [_with(turn_event(), metadata={"actor": "ada"})]
    error = _refused(engine, InvalidCommand, lambda tx: event_store.append(tx, tenant, "s", batch, 0))
    assert "metadata" in str(error)


def test_append_refuses_metadata_with_a_wrongly_typed_field(engine: Engine, tenant: str) -> None:
    batch = [_with(turn_event(), metadata=Metadata(actor=5))]  # type: ignore[arg-type]
    _refused(engine, InvalidCommand, lambda tx: event_store.append(tx, tenant, "s", batch, 0))


def test_append_refuses_metadata_holding_a_nul_character(engine: Engine, tenant: str) -> None:
    batch = [_with(turn_event(), metadata=Metadata(actor="ad\x00a"))]
    _refused(engine, InvalidCommand, lambda tx: event_store.append(tx, tenant, "s", batch, 0))


def test_append_refuses_a_new_event_whose_event_is_not_an_event(engine: Engine, tenant: str) -> None:
    batch = [_with(turn_event(), event="hello")]
    _refused(engine, LedgerError, lambda tx: event_store.append(tx, tenant, "s", batch, 0))


def test_append_refuses_text_holding_a_lone_surrogate(engine: Engine, tenant: str) -> None:
    batch = [_turn(text="\udc80")]
    _refused(engine, InvalidEvent, lambda tx: event_store.append(tx, tenant, "s", batch, 0))


# --- payload size ------------------------------------------------------------------


def test_append_refuses_a_payload_above_the_default_limit(engine: Engine, tenant: str) -> None:
    batch = [_turn(text="x" * event_store.DEFAULT_MAX_PAYLOAD_BYTES)]
    error = _refused(engine, PayloadTooLarge, lambda tx: event_store.append(tx, tenant, "s", batch, 0))
    assert error.event_type == "turn.recorded"
    assert error.limit == 1024 * 1024
    assert error.size > error.limit


def test_append_refuses_a_payload_above_a_configured_limit(engine: Engine, tenant: str) -> None:
    new = _turn(text="y" * 300)
    size = len(codec.encode(new.event))

    error = _refused(
        engine,
        PayloadTooLarge,
        lambda tx: event_store.append(tx, tenant, "s", [new], 0, max_payload_bytes=size - 1),
    )

    assert (error.size, error.limit) == (size, size - 1)
    with engine.begin() as tx:  # exactly at the limit is allowed
        event_store.append(tx, tenant, "s", [new], 0, max_payload_bytes=size)


def test_the_payload_limit_counts_bytes_not_characters(engine: Engine, tenant: str) -> None:
    new = _turn(text="\u00e9" * 200)  # 2 bytes each in UTF-8
    error = _refused(
        engine,
        PayloadTooLarge,
        lambda tx: event_store.append(tx, tenant, "s", [new], 0, max_payload_bytes=300),
    )
    assert error.size > 400


# --- unknown event types -----------------------------------------------------------


class _Unlisted(Event, tag="memory.unlisted", frozen=True):
    """A well-formed event that the catalogue does not know."""

    note: str


class _Impostor(Event, tag="turn.recorded", frozen=True):
    """Claims a catalogue tag without being the catalogue's class."""

    turn_id: str
    role: str
    text: str


class _LooksLikeATurn(TurnRecorded, frozen=True):
    """A subclass of a catalogue event is not in the catalogue."""


@pytest.mark.parametrize(
    "event",
    [
        pytest.param(_Unlisted(note="n"), id="tag-outside-catalogue"),
        pytest.param(_Impostor(turn_id="t", role="user", text="x"), id="impostor-tag"),
        pytest.param(_LooksLikeATurn(turn_id="t", role="user", text="x"), id="subclass"),
    ],
)
def test_append_refuses_an_event_type_outside_the_catalogue(engine: Engine, tenant: str, event: Event) -> None:
    batch = [turn_event(), _with(turn_event(), event=event)]
    error = _refused(engine, UnknownEventType, lambda tx: event_store.append(tx, tenant, "s", batch, 0))
    assert error.event_type == type(event).__name__


# --- batches -----------------------------------------------------------------------


def test_append_refuses_duplicate_event_ids_within_a_batch(engine: Engine, tenant: str) -> None:
    first = turn_event("a")
    batch = [first, turn_event("b"), _with(turn_event("c"), event_id=first.event_id)]
    error = _refused(engine, InvalidCommand, lambda tx: event_store.append(tx, tenant, "s", batch, 0))
    assert first.event_id in str(error)


@pytest.mark.parametrize(
    ("middle", "error_type"),
    [
        pytest.param(_turn(role="narrator"), InvalidEvent, id="invalid-event"),
        pytest.param(_turn(text="nul\x00"), InvalidEvent, id="nul"),
        pytest.param(_turn(text="z" * (1024 * 1024 + 1)), PayloadTooLarge, id="oversized"),
        pytest.param(_with(turn_event(), event=_Unlisted(note="n")), UnknownEventType, id="unknown"),
        pytest.param(_with(turn_event(), event_id=""), InvalidIdentifier, id="bad-event-id"),
        pytest.param(_with(turn_event(), occurred_at=datetime(2025, 1, 1)), InvalidCommand, id="naive"),
    ],
)
def test_a_bad_event_in_the_middle_of_a_batch_writes_none_of_it(
    engine: Engine, tenant: str, middle: NewEvent, error_type: type[LedgerError]
) -> None:
    batch = [turn_event("first"), middle, turn_event("last")]

    _refused(engine, error_type, lambda tx: event_store.append(tx, tenant, "s", batch, 0))

    with engine.connect() as conn:
        assert event_reads.read_stream(conn, tenant, "s") == []
        assert event_store.stream_version(conn, tenant, "s") == 0


def test_a_refused_batch_leaves_the_stream_ready_for_a_good_one(engine: Engine, tenant: str) -> None:
    _refused(
        engine,
        InvalidEvent,
        lambda tx: event_store.append(tx, tenant, "s", [turn_event(), _turn(role="bad")], 0),
    )
    with engine.begin() as tx:
        result = event_store.append(tx, tenant, "s", [turn_event("ok")], 0)
    assert result.stream_version == 1


# --- the record use case -----------------------------------------------------------


def _good_turn(text: str, session: str) -> TurnInput:
    return TurnInput(role="user", text=text, scopes=Scopes(session=session, user="ada"))


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param(
            TurnInput(role="narrator", text="x", scopes=Scopes(session="zz")),  # type: ignore[arg-type]
            id="role",
        ),
        pytest.param(TurnInput(role="user", text="nul\x00", scopes=Scopes(session="zz")), id="nul"),
        pytest.param(
            TurnInput(role="user", text="x", scopes=Scopes(session="zz"), turn_id="t" * 300),
            id="over-long-turn-id",
        ),
        pytest.param(
            TurnInput(role="user", text="x", scopes=Scopes(session="zz"), occurred_at=datetime(2025, 1, 1)),
            id="naive-time",
        ),
    ],
)
def test_record_turns_with_one_bad_turn_writes_none(engine: Engine, tenant: str, bad: Any) -> None:
    # The bad turn's stream ("conversation:zz") sorts last, so the good streams
    # are appended first inside the use case's transaction and must roll back.
    turns = [_good_turn("one", "aa"), _good_turn("two", "bb"), bad, _good_turn("three", "aa")]
    before = _count(engine)

    with pytest.raises(InvalidCommand):
        record_turns(engine, tenant, turns)

    assert _count(engine) == before
    with engine.connect() as conn:
        assert event_reads.read_all(conn, tenant_id=tenant) == []


def test_record_turns_refuses_a_turn_above_the_payload_limit(engine: Engine, tenant: str) -> None:
    turns = [_good_turn("short", "aa"), _good_turn("long" * 100, "zz")]
    before = _count(engine)

    with pytest.raises(PayloadTooLarge):
        record_turns(engine, tenant, turns, max_payload_bytes=200)

    assert _count(engine) == before
