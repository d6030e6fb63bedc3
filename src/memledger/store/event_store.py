"""The event store: append to a stream, a stream's version, and the one change
erasure may make. Appending to many streams at once is ``batch_append``; reading
is ``event_reads``.

Every function takes a ``Connection`` inside a transaction the caller owns
(``service/`` opens it); nothing here commits.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime

import msgspec
import sqlalchemy as sa
from sqlalchemy import exc as sa_exc
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Connection

from memledger.errors import ConcurrencyConflict, InvalidCommand, PayloadTooLarge
from memledger.events import codec
from memledger.events.envelope import Metadata, NewEvent
from memledger.store import direct, lock_keys, retries
from memledger.store.db import violated_constraint
from memledger.store.identifiers import check_identifier
from memledger.store.schema import events

DEFAULT_MAX_PAYLOAD_BYTES = 1024 * 1024
NOTIFY_CHANNEL = "memledger_events"

_metadata_encoder = msgspec.json.Encoder()
_metadata_decoder = msgspec.json.Decoder(Metadata)
_batch_encoder = msgspec.json.Encoder()
_SALT_BYTES = 16


class AppendResult(msgspec.Struct, frozen=True):
    """Where an append put its events. ``replayed`` is True for an idempotent retry;
    ``appended_before`` counts the events that were already there (all, for a retry)."""

    positions: tuple[int, ...]
    stream_version: int
    replayed: bool = False
    appended_before: int = 0


class Row(msgspec.Struct, frozen=True):
    """One row of the batch sent to PostgreSQL as a single JSON parameter.

    ``seq`` numbers the events of the batch from 1; the database adds the
    stream's current version to it.
    """

    seq: int
    event_id: str
    event_type: str
    schema_version: int
    payload: msgspec.Raw
    private: msgspec.Raw | None  # the event's private fields (codec.split), or None
    metadata: msgspec.Raw
    occurred_at: datetime


def _check_metadata(index: int, metadata: Metadata) -> bytes:
    """Metadata as JSON, refused (InvalidCommand) if it breaks its types or holds a NUL."""
    encoded = _metadata_encoder.encode(metadata)
    try:
        _metadata_decoder.decode(encoded)
    except msgspec.ValidationError as e:
        raise InvalidCommand(f"events[{index}].metadata is invalid: {e}") from e
    if b"\\u0000" in encoded:
        raise InvalidCommand(f"events[{index}].metadata holds a NUL character, which PostgreSQL cannot store")
    return encoded


def _metadata_json(index: int, metadata: Metadata, seen: dict[Metadata, bytes]) -> bytes:
    """``_check_metadata``'s JSON, checked once per distinct metadata of a batch."""
    try:
        found = seen.get(metadata)
    except TypeError:  # a field of a type that cannot be hashed: checking it names the fault
        return _check_metadata(index, metadata)
    if found is None:
        found = seen[metadata] = _check_metadata(index, metadata)
    return found


def _utc(index: int, occurred_at: object) -> datetime:
    """``occurred_at`` in UTC (PostgreSQL refuses offsets beyond 15:59), or InvalidCommand
    if it is not a timezone-aware datetime or falls outside years 1 to 9999 in UTC
    (9999-12-31T23:59:59-14:00 is in year 10000 there)."""
    if not isinstance(occurred_at, datetime) or occurred_at.tzinfo is None:
        raise InvalidCommand(f"events[{index}].occurred_at must be a timezone-aware datetime")
    try:
        return occurred_at.astimezone(UTC)
    except OverflowError:
        shown = occurred_at.isoformat()
        raise InvalidCommand(f"events[{index}].occurred_at {shown} is outside the years 1 to 9999 in UTC") from None


def prepare_rows(events_: Sequence[NewEvent], max_payload_bytes: int) -> list[Row]:
    """Validate and encode a batch before anything touches the database."""
    if isinstance(events_, NewEvent) or not isinstance(events_, Sequence):
        raise InvalidCommand("events must be a list of NewEvent")
    if not events_:
        raise InvalidCommand("an append needs at least one event")
    rows: list[Row] = []
    seen: set[str] = set()
    # A fresh salt per event, drawn for the whole batch at once: the payload's digest of
    # the private fields must not reveal a short text to someone who guesses it.
    salts = secrets.token_bytes(_SALT_BYTES * len(events_)).hex()
    metadata_seen: dict[Metadata, bytes] = {}
    for index, new in enumerate(events_):
        if not isinstance(new, NewEvent):
            raise InvalidCommand(f"events[{index}] is a {type(new).__name__}, not a NewEvent")
        event_id = check_identifier(f"events[{index}].event_id", new.event_id)
        if event_id in seen:
            raise InvalidCommand(f"events[{index}].event_id {event_id!r} appears twice in the batch")
        seen.add(event_id)
        occurred_at = _utc(index, new.occurred_at)
        if not isinstance(new.metadata, Metadata):
            raise InvalidCommand(f"events[{index}].metadata must be a Metadata")
        salt = salts[2 * _SALT_BYTES * index : 2 * _SALT_BYTES * (index + 1)]
        payload, private, size = codec.split(new.event, salt)
        tag = codec.tag_of(new.event)
        if size > max_payload_bytes:  # the event's whole JSON, however it is stored
            raise PayloadTooLarge(tag, size, max_payload_bytes)
        rows.append(
            Row(
                seq=index + 1,
                event_id=event_id,
                event_type=tag,
                schema_version=type(new.event).schema_version,
                payload=msgspec.Raw(payload),
                private=None if private is None else msgspec.Raw(private),
                metadata=msgspec.Raw(_metadata_json(index, new.metadata, metadata_seen)),
                occurred_at=occurred_at,
            )
        )
    return rows


RECORDSET = (
    sa.func.jsonb_to_recordset(sa.cast(sa.bindparam("batch", type_=sa.Text), JSONB))
    .table_valued(
        sa.column("seq", sa.Integer),
        sa.column("event_id", sa.Text),
        sa.column("event_type", sa.Text),
        sa.column("schema_version", sa.SmallInteger),
        sa.column("payload", JSONB),
        sa.column("private", JSONB),
        sa.column("metadata", JSONB),
        sa.column("occurred_at", sa.DateTime(timezone=True)),
    )
    .render_derived(name="batch_rows", with_types=True)
)
_batch = sa.select(RECORDSET).cte("batch")
_tenant = sa.bindparam("tenant_id", type_=sa.Text)
_stream = sa.bindparam("stream_id", type_=sa.Text)
_expected = sa.bindparam("expected", type_=sa.Integer)  # -1: append wherever the stream is
_known = events.alias("known")
_state = (
    sa.select(sa.func.coalesce(sa.func.max(_known.c.stream_version), 0).label("version"))
    .where(_known.c.tenant_id == _tenant, _known.c.stream_id == _stream)
    .cte("state")
)
_seen = _batch.alias("seen")
# One index probe per event id of the batch. LIMIT keeps the planner from turning this
# into a join, which a generic plan made on a small table can run as a scan of the
# tenant's every row, so that an append's cost grows with the tenant.
_hit = (
    sa.select(sa.literal(1).label("hit"))
    .where(_known.c.tenant_id == _tenant, _known.c.event_id == _seen.c.event_id)
    .limit(1)
    .lateral("hit")
)
_clash = sa.exists(sa.select(_hit.c.hit).select_from(_seen.join(_hit, sa.true())))

# The checks and the insert in one statement, run after the stream lock (a
# separate statement, so that this one's snapshot sees every earlier writer of
# the stream). The rows travel as one JSON text parameter that jsonb_to_recordset
# expands: one parameter for any number of rows, cheaper than executemany or
# unnest(arrays) (docs/BENCHMARKS.md). Nothing is inserted, and no position is taken from the
# identity, unless the stream is at the expected version and no event id of the
# batch exists in the tenant; then ``append`` finds out which check failed.
# ORDER BY makes the identity take positions in stream order.
_INSERT = (
    events.insert()
    .from_select(
        [
            "tenant_id",
            "stream_id",
            "stream_version",
            "event_id",
            "event_type",
            "schema_version",
            "payload",
            "private",
            "metadata",
            "occurred_at",
        ],
        sa.select(
            _tenant,
            _stream,
            _state.c.version + _batch.c.seq,
            _batch.c.event_id,
            _batch.c.event_type,
            _batch.c.schema_version,
            _batch.c.payload,
            _batch.c.private,
            _batch.c.metadata,
            _batch.c.occurred_at,
        )
        .select_from(_state.join(_batch, sa.true()))
        .where(sa.or_(_expected < 0, _state.c.version == _expected), ~_clash)
        .order_by(_batch.c.seq),
    )
    .returning(events.c.position, events.c.stream_version)
)

_lock = sa.func.pg_advisory_xact_lock(lock_keys.stream(_tenant, _stream))
_STREAM_LOCK = sa.select(_lock)
# NOTIFY is transactional: queued now, delivered only if the transaction commits,
# so it can ride on the lock's round trip instead of costing one of its own.
_STREAM_LOCK_AND_NOTIFY = sa.select(_lock, sa.func.pg_notify(NOTIFY_CHANNEL, _tenant))

_CURRENT_VERSION = sa.select(sa.func.coalesce(sa.func.max(events.c.stream_version), 0)).where(
    events.c.tenant_id == sa.bindparam("tenant_id"),
    events.c.stream_id == sa.bindparam("stream_id"),
)

_EXISTING = sa.select(events.c.event_id, events.c.stream_id, events.c.position, events.c.stream_version).where(
    events.c.tenant_id == sa.bindparam("tenant_id"),
    events.c.event_id == sa.any_(sa.bindparam("event_ids", type_=sa.ARRAY(sa.Text))),
)


def append(
    tx: Connection,
    tenant_id: str,
    stream_id: str,
    new_events: Sequence[NewEvent],
    expected_version: int | None,
    *,
    max_payload_bytes: int = DEFAULT_MAX_PAYLOAD_BYTES,
    notify: bool = False,
) -> AppendResult:
    """Append ``new_events`` to a stream, all or nothing.

    ``expected_version`` is the stream's current version (0: the stream must be
    new), or None to append wherever the stream is. A stale expectation raises
    ``ConcurrencyConflict`` before any position is taken from the sequence, so a
    losing writer leaves no hole. Writers of one stream queue on a transaction
    lock of that stream only; writers of other streams never wait for each other.

    Idempotent on event ids: if every event id was appended before, to this
    stream, with the same events (``retries``), the original positions are returned
    and nothing is written; the same ids with other content are an ``InvalidCommand``.

    Bad input raises before the database is touched. Runs in the caller's
    transaction; the events become visible when it commits. With ``notify``, a
    notification on ``NOTIFY_CHANNEL`` goes out when the transaction commits,
    also for a retried batch (a hint for followers, which poll anyway).
    """
    tenant_id = check_identifier("tenant_id", tenant_id)
    stream_id = check_identifier("stream_id", stream_id)
    if expected_version is not None and (
        not isinstance(expected_version, int) or isinstance(expected_version, bool) or expected_version < 0
    ):
        raise InvalidCommand(f"expected_version must be an int >= 0 or None, not {expected_version!r}")
    rows = prepare_rows(new_events, max_payload_bytes)
    keys = {"tenant_id": tenant_id, "stream_id": stream_id}

    params = {
        **keys,
        "expected": -1 if expected_version is None else expected_version,
        "batch": _batch_encoder.encode(rows).decode(),
    }
    try:
        inserted = direct.locked(tx, _STREAM_LOCK_AND_NOTIFY if notify else _STREAM_LOCK, keys, _INSERT, params)
    except sa_exc.IntegrityError as e:
        if violated_constraint(e) == "uq_events_tenant_id_event_id":
            raise InvalidCommand("an event id of this batch was appended concurrently") from e
        raise
    if not inserted:
        return _refused(tx, tenant_id, stream_id, rows, expected_version, new_events)
    direct.seen(tx, (row[0] for row in inserted))
    ordered = sorted(inserted, key=lambda row: row[1])
    return AppendResult(tuple(row[0] for row in ordered), ordered[-1][1])


class PartlyAppended(InvalidCommand):
    """Some of a batch's events (``positions``: their ids and positions) were appended
    to this stream before, the others not."""

    def __init__(self, message: str, positions: dict[str, int]) -> None:
        super().__init__(message)
        self.positions = positions


def append_resent(
    tx: Connection,
    tenant_id: str,
    stream_id: str,
    new_events: Sequence[NewEvent],
    *,
    max_payload_bytes: int = DEFAULT_MAX_PAYLOAD_BYTES,
    notify: bool = False,
) -> AppendResult:
    """``append`` for a client that may resend what it sent before together with new
    events (a buffer flushed again after a timeout): the events appended before to this
    stream (same ids, same content) keep their positions, and only the others are
    appended. The positions come in the order sent; ``replayed`` only if none was new.
    Other reuse of ids raises as ``append`` does."""
    try:
        return append(tx, tenant_id, stream_id, new_events, None, max_payload_bytes=max_payload_bytes, notify=notify)
    except PartlyAppended as partly:  # nothing was written; the stream's lock is still held
        seen = partly.positions
    retries.check_same(tx, tenant_id, [new for new in new_events if new.event_id in seen])
    fresh = [new for new in new_events if new.event_id not in seen]
    added = append(tx, tenant_id, stream_id, fresh, None, max_payload_bytes=max_payload_bytes)
    placed = iter(added.positions)
    positions = tuple(seen[new.event_id] if new.event_id in seen else next(placed) for new in new_events)
    return AppendResult(positions, added.stream_version, appended_before=len(new_events) - len(fresh))


def _refused(
    tx: Connection,
    tenant_id: str,
    stream_id: str,
    rows: list[Row],
    expected_version: int | None,
    sent: Sequence[NewEvent],
) -> AppendResult:
    """Why the insert wrote nothing: a retried batch (its original result), a
    stale expectation (``ConcurrencyConflict``) or reused event ids (``InvalidCommand``).

    Still under the stream lock, so the stream is as the insert saw it.
    """
    replay = _replayed(tx, tenant_id, stream_id, rows)
    if replay is not None:
        retries.check_same(tx, tenant_id, sent)
        return replay
    current = int(tx.execute(_CURRENT_VERSION, {"tenant_id": tenant_id, "stream_id": stream_id}).scalar_one())
    if expected_version is not None and expected_version != current:
        raise ConcurrencyConflict(tenant_id, stream_id, expected_version, current)
    # Unreachable: the lock holds the stream still and the ledger never loses rows.
    raise RuntimeError(f"append to {stream_id!r} inserted nothing, yet no check failed")


def _replayed(tx: Connection, tenant_id: str, stream_id: str, rows: list[Row]) -> AppendResult | None:
    """The original result if this batch was appended before; None if it is new."""
    ids = [row.event_id for row in rows]
    found = {r.event_id: r for r in tx.execute(_EXISTING, {"tenant_id": tenant_id, "event_ids": ids}).all()}
    if not found:
        return None
    if len(found) != len(ids) or any(r.stream_id != stream_id for r in found.values()):
        clash = sorted(found)[:3]
        message = (
            f"event ids {clash} were already appended in another batch or stream; "
            "a retry must resend the same events to the same stream"
        )
        if all(r.stream_id == stream_id for r in found.values()):
            raise PartlyAppended(message, {event_id: r.position for event_id, r in found.items()})
        raise InvalidCommand(message)
    ordered = [found[event_id] for event_id in ids]
    positions = tuple(r.position for r in ordered)
    version = max(r.stream_version for r in ordered)
    return AppendResult(positions, version, replayed=True, appended_before=len(positions))


def stream_version(conn: Connection, tenant_id: str, stream_id: str) -> int:
    """The stream's current version; 0 if it has no events."""
    return int(conn.execute(_CURRENT_VERSION, {"tenant_id": tenant_id, "stream_id": stream_id}).scalar_one())


# --- erasure ---------------------------------------------------------------------------

_ERASE = (
    events.update()
    .where(
        # Not named after columns: an UPDATE reserves those names for its SET values.
        events.c.tenant_id == sa.bindparam("of_tenant", type_=sa.Text),
        events.c.position == sa.any_(sa.bindparam("at_positions", type_=sa.ARRAY(sa.BigInteger))),
        events.c.private.is_not(None),
    )
    .values(private=sa.null())  # SQL NULL: a JSONB column would take None as JSON null
)


def erase_private(tx: Connection, tenant_id: str, positions: Iterable[int]) -> int:
    """Erase the private fields of the tenant's events at ``positions``: the one
    change the ledger's trigger allows. Returns how many events lost theirs (an
    event erased before, or with none, is left as it is). Nothing else changes, so
    the hash chain, which covers the payload and its digest, still verifies."""
    wanted = sorted(set(positions))
    if not wanted:
        return 0
    tenant_id = check_identifier("tenant_id", tenant_id)
    return int(tx.execute(_ERASE, {"of_tenant": tenant_id, "at_positions": wanted}).rowcount)
