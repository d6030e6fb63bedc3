"""Appending to many streams in one statement, all or nothing (``append_many``): the
extraction worker's batch. Each stream gets ``event_store.append``'s checks and
guarantees, and its events are stored exactly as ``append`` stores them.

Every function takes a ``Connection`` inside a transaction the caller owns
(``service/`` opens it); nothing here commits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import msgspec
import sqlalchemy as sa
from sqlalchemy import exc as sa_exc
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Connection

from memledger.errors import ConcurrencyConflict, InvalidCommand, PayloadTooLarge
from memledger.events.envelope import NewEvent
from memledger.store import direct, lock_keys, retries
from memledger.store.db import violated_constraint
from memledger.store.event_store import (
    DEFAULT_MAX_PAYLOAD_BYTES,
    NOTIFY_CHANNEL,
    RECORDSET,
    AppendResult,
    Row,
    prepare_rows,
)
from memledger.store.identifiers import check_identifier
from memledger.store.schema import events

_batch_encoder = msgspec.json.Encoder()


class StreamAppend(msgspec.Struct, frozen=True):
    """One stream's part of ``append_many``: what ``append`` takes for one stream."""

    tenant_id: str
    stream_id: str
    events: Sequence[NewEvent]
    expected_version: int | None


class _Part(msgspec.Struct, frozen=True):
    """One stream's rows as sent to PostgreSQL; ``rows`` are ``append``'s, encoded alike."""

    part: int
    tenant_id: str
    stream_id: str
    expected: int  # -1: append wherever the stream is
    rows: list[Row]


_parts = (
    sa.func.jsonb_to_recordset(sa.cast(sa.bindparam("parts", type_=sa.Text), JSONB))
    .table_valued(
        sa.column("part", sa.Integer),
        sa.column("tenant_id", sa.Text),
        sa.column("stream_id", sa.Text),
        sa.column("expected", sa.Integer),
        sa.column("rows", JSONB),
    )
    .render_derived(name="parts_json", with_types=True)
)
_parts_cte = sa.select(_parts).cte("parts")
# Each part's rows, with the very columns ``append`` expands (``RECORDSET``), so an
# event is stored the same whichever function wrote it: every column but ``seq``
# goes to the events column of its name.
_part_rows = (
    sa.func.jsonb_to_recordset(_parts_cte.c.rows)
    .table_valued(*(sa.column(c.name, c.type) for c in RECORDSET.c))
    .render_derived(name="part_rows", with_types=True)
    .lateral()
)
_ROW_FIELDS = [c.name for c in RECORDSET.c if c.name != "seq"]
_many = (
    sa.select(_parts_cte.c.part, _parts_cte.c.tenant_id, _parts_cte.c.stream_id, _part_rows)
    .select_from(_parts_cte.join(_part_rows, sa.true()))
    .cte("many")
)
_many_known = events.alias("many_known")
_many_state = sa.select(
    _parts_cte.c.part,
    _parts_cte.c.expected,
    sa.select(sa.func.coalesce(sa.func.max(_many_known.c.stream_version), 0))
    .where(_many_known.c.tenant_id == _parts_cte.c.tenant_id, _many_known.c.stream_id == _parts_cte.c.stream_id)
    .scalar_subquery()
    .label("version"),
).cte("many_state")
_stale = _many_state.alias("stale")
_reused = _many.alias("reused")
# One index probe per event id, as ``append``'s check (LIMIT keeps it from becoming a join).
_reused_hit = (
    sa.select(sa.literal(1).label("hit"))
    .where(_many_known.c.tenant_id == _reused.c.tenant_id, _many_known.c.event_id == _reused.c.event_id)
    .limit(1)
    .lateral("reused_hit")
)
# As ``_INSERT``, for many streams: rows go in only if every stream is at its
# expected version and no event id of the call exists in its tenant; otherwise
# nothing is inserted (no position is taken) and ``append_many`` finds out why.
_INSERT_MANY = (
    events.insert()
    .from_select(
        ["tenant_id", "stream_id", "stream_version", *_ROW_FIELDS],
        sa.select(
            _many.c.tenant_id,
            _many.c.stream_id,
            _many_state.c.version + _many.c.seq,
            *(_many.c[name] for name in _ROW_FIELDS),
        )
        .select_from(_many.join(_many_state, _many_state.c.part == _many.c.part))
        .where(
            ~sa.exists().where(_stale.c.expected >= 0, _stale.c.version != _stale.c.expected),
            ~sa.exists(sa.select(_reused_hit.c.hit).select_from(_reused.join(_reused_hit, sa.true()))),
        )
        .order_by(_many.c.part, _many.c.seq),
    )
    .returning(events.c.position, events.c.tenant_id, events.c.stream_id, events.c.stream_version)
)

_lock_pairs = (
    sa.func.unnest(sa.bindparam("tenants", type_=sa.ARRAY(sa.Text)), sa.bindparam("streams", type_=sa.ARRAY(sa.Text)))
    .table_valued(sa.column("tenant", sa.Text), sa.column("stream", sa.Text))
    .render_derived(name="pairs")
)
# The same lock key as ``append`` takes, so both kinds of writers of one stream
# queue on it. Taken in key order, so two callers locking overlapping streams
# cannot deadlock on each other.
_lock_keys = (
    sa.select(lock_keys.stream(_lock_pairs.c.tenant, _lock_pairs.c.stream).label("key"))
    .distinct()
    .order_by(sa.literal_column("key"))
    .subquery("lock_keys")
)
_STREAMS_LOCK = sa.select(sa.select(sa.func.count(sa.func.pg_advisory_xact_lock(_lock_keys.c.key))).scalar_subquery())
_notified = (
    sa.select(sa.func.unnest(sa.bindparam("tenants", type_=sa.ARRAY(sa.Text))).label("tenant")).distinct().subquery()
)
_STREAMS_LOCK_AND_NOTIFY = _STREAMS_LOCK.add_columns(
    sa.select(sa.func.count(sa.func.pg_notify(NOTIFY_CHANNEL, _notified.c.tenant))).scalar_subquery()
)

_VERSIONS = (
    sa.select(events.c.tenant_id, events.c.stream_id, sa.func.max(events.c.stream_version))
    .where(sa.tuple_(events.c.tenant_id, events.c.stream_id).in_(sa.bindparam("pairs", expanding=True)))
    .group_by(events.c.tenant_id, events.c.stream_id)
)

_wanted = (
    sa.func.unnest(sa.bindparam("tenants", type_=sa.ARRAY(sa.Text)), sa.bindparam("ids", type_=sa.ARRAY(sa.Text)))
    .table_valued(sa.column("tenant", sa.Text), sa.column("event_id", sa.Text))
    .render_derived(name="wanted")
)
# Two array parameters, whatever the number of ids (an IN list would bind two per id).
_EXISTING_MANY = sa.select(
    events.c.tenant_id, events.c.event_id, events.c.stream_id, events.c.position, events.c.stream_version
).select_from(
    events.join(_wanted, sa.and_(events.c.tenant_id == _wanted.c.tenant, events.c.event_id == _wanted.c.event_id))
)


def append_many(
    tx: Connection,
    appends: Sequence[StreamAppend],
    *,
    max_payload_bytes: int = DEFAULT_MAX_PAYLOAD_BYTES,
    notify: bool = False,
) -> list[AppendResult]:
    """Append to many streams at once, all or nothing: the results, one per append, in order.

    Each ``StreamAppend`` is checked as ``append`` checks its arguments, and the
    guarantees are ``append``'s, per stream: optimistic concurrency on
    ``expected_version`` (0: the stream must be new; None: wherever it is), and
    idempotency on event ids (a stream whose events were all appended to it before
    gets its original result with ``replayed`` set, and nothing is written for it).
    All or nothing across streams: if any stream is stale (``ConcurrencyConflict``)
    or reuses event ids elsewhere (``InvalidCommand``), nothing is written, and the
    error names that stream (the first in ``appends`` order). Bad input raises
    before the database is touched, naming ``appends[i]``; a stream may appear
    once per call. An empty list writes nothing and returns ``[]``.

    Two statements, whatever the number of streams: the stream locks (the lock
    ``append`` takes, in key order), then one insert of every event. Runs in the
    caller's transaction; with ``notify``, one notification per tenant goes out
    when it commits.
    """
    return append_prepared(tx, prepare(appends, max_payload_bytes=max_payload_bytes), notify=notify)


@dataclass(frozen=True)
class Prepared:
    """``append_many``'s arguments, checked and encoded (``prepare``)."""

    appends: Sequence[StreamAppend]
    parts: list[_Part]
    batch: str  # ``parts`` as the JSON text the insert takes


def prepare(appends: Sequence[StreamAppend], *, max_payload_bytes: int = DEFAULT_MAX_PAYLOAD_BYTES) -> Prepared:
    """Check and encode ``appends`` as ``append_many`` does (raising as it does), without
    the database: the CPU half of an append, which a caller may do while another
    append is under way, then hand to ``append_prepared``."""
    parts = _prepare_many(appends, max_payload_bytes)
    return Prepared(appends, parts, _batch_encoder.encode(parts).decode())


def append_prepared(tx: Connection, prepared: Prepared, *, notify: bool = False) -> list[AppendResult]:
    """``append_many`` of appends ``prepare`` checked and encoded: the same statements,
    results and errors."""
    parts, appends = prepared.parts, prepared.appends
    if not parts:
        return []
    tenants = [p.tenant_id for p in parts]
    locks = {"tenants": tenants, "streams": [p.stream_id for p in parts]}
    replayed: dict[int, AppendResult] = {}
    inserted = _insert_many(tx, parts, prepared.batch, (_STREAMS_LOCK_AND_NOTIFY if notify else _STREAMS_LOCK, locks))
    if inserted is None:
        replayed = _refused_many(tx, parts)
        _check_same(tx, appends, list(replayed))
        fresh = [p for p in parts if p.part not in replayed]
        inserted = _insert_many(tx, fresh, _batch_encoder.encode(fresh).decode()) if fresh else {}
        if inserted is None:  # Unreachable: the locks hold every stream still.
            raise RuntimeError("append_many inserted nothing, yet no check failed")
    return [replayed[p.part] if p.part in replayed else inserted[p.part] for p in parts]


def _check_same(tx: Connection, appends: Sequence[StreamAppend], parts: list[int]) -> None:
    """``retries.check_same`` for the retried parts: one query per tenant, and on a
    difference again part by part, so that the error names the part."""
    by_tenant: dict[str, list[NewEvent]] = {}
    for part in parts:
        by_tenant.setdefault(appends[part].tenant_id, []).extend(appends[part].events)
    try:
        for tenant_id, sent in by_tenant.items():
            retries.check_same(tx, tenant_id, sent)
    except InvalidCommand:
        for part in parts:
            retries.check_same(tx, appends[part].tenant_id, appends[part].events, f"appends[{part}]: ")
        raise


def _prepare_many(appends: Sequence[StreamAppend], max_payload_bytes: int) -> list[_Part]:
    """Validate and encode every part (``append``'s checks), naming the part at fault."""
    if isinstance(appends, StreamAppend) or not isinstance(appends, Sequence):
        raise InvalidCommand("appends must be a list of StreamAppend")
    parts: list[_Part] = []
    seen: dict[tuple[str, str], int] = {}
    for i, one in enumerate(appends):
        if not isinstance(one, StreamAppend):
            raise InvalidCommand(f"appends[{i}] is a {type(one).__name__}, not a StreamAppend")
        tenant_id = check_identifier(f"appends[{i}].tenant_id", one.tenant_id)
        stream_id = check_identifier(f"appends[{i}].stream_id", one.stream_id)
        expected = one.expected_version
        if expected is not None and (not isinstance(expected, int) or isinstance(expected, bool) or expected < 0):
            raise InvalidCommand(f"appends[{i}].expected_version must be an int >= 0 or None, not {expected!r}")
        if (tenant_id, stream_id) in seen:
            raise InvalidCommand(f"appends[{i}] is to the same stream as appends[{seen[tenant_id, stream_id]}]")
        seen[tenant_id, stream_id] = i
        try:
            rows = prepare_rows(one.events, max_payload_bytes)
        except PayloadTooLarge:
            raise
        except InvalidCommand as e:
            raise InvalidCommand(f"appends[{i}]: {e}") from e
        parts.append(_Part(i, tenant_id, stream_id, -1 if expected is None else expected, rows))
    return parts


def _insert_many(
    tx: Connection, parts: list[_Part], batch: str, lock: tuple[sa.Select[Any], dict[str, Any]] | None = None
) -> dict[int, AppendResult] | None:
    """Insert every part's rows (``batch``: them encoded), after taking ``lock`` (the
    streams' locks and their parameters) if given; their results by part, or None if
    the checks let nothing in."""
    try:
        if lock is None:
            inserted = direct.execute(tx, _INSERT_MANY, {"parts": batch})
        else:
            inserted = direct.locked(tx, *lock, _INSERT_MANY, {"parts": batch})
    except sa_exc.IntegrityError as e:
        if violated_constraint(e) == "uq_events_tenant_id_event_id":
            raise InvalidCommand("an event id of this batch was appended concurrently") from e
        raise
    if not inserted:
        return None
    direct.seen(tx, (row[0] for row in inserted))
    by_stream: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for position, tenant_id, stream_id, version in inserted:
        by_stream.setdefault((tenant_id, stream_id), []).append((version, position))
    results: dict[int, AppendResult] = {}
    for p in parts:
        ordered = sorted(by_stream[p.tenant_id, p.stream_id])
        results[p.part] = AppendResult(tuple(pos for _, pos in ordered), ordered[-1][0])
    return results


def _refused_many(tx: Connection, parts: list[_Part]) -> dict[int, AppendResult]:
    """Why the insert wrote nothing: the parts that are retries (their original results),
    or the first part that is stale (``ConcurrencyConflict``) or reuses event ids
    (``InvalidCommand``). Still under the stream locks."""
    tenants = [p.tenant_id for p in parts for _ in p.rows]
    ids = [row.event_id for p in parts for row in p.rows]
    found = {(r.tenant_id, r.event_id): r for r in tx.execute(_EXISTING_MANY, {"tenants": tenants, "ids": ids}).all()}
    pairs = [(p.tenant_id, p.stream_id) for p in parts]
    versions = {(r[0], r[1]): int(r[2]) for r in tx.execute(_VERSIONS, {"pairs": pairs}).all()}
    replayed: dict[int, AppendResult] = {}
    for p in parts:
        old = [found.get((p.tenant_id, row.event_id)) for row in p.rows]
        if any(old):
            if not all(old) or any(r.stream_id != p.stream_id for r in old if r is not None):
                clash = sorted(r.event_id for r in old if r is not None)[:3]
                raise InvalidCommand(
                    f"appends[{p.part}]: event ids {clash} were already appended in another batch or stream; "
                    "a retry must resend the same events to the same stream"
                )
            kept = [r for r in old if r is not None]
            replayed[p.part] = AppendResult(
                tuple(r.position for r in kept),
                max(r.stream_version for r in kept),
                replayed=True,
                appended_before=len(kept),
            )
            continue
        current = versions.get((p.tenant_id, p.stream_id), 0)
        if p.expected >= 0 and p.expected != current:
            raise ConcurrencyConflict(p.tenant_id, p.stream_id, p.expected, current)
    return replayed
