"""Reading the ledger: a stream, the whole ledger gap-safe, events by id or by what
they name, a tenant's events for erasure. Appending is ``event_store``.

Every function takes a ``Connection`` inside a transaction the caller owns
(``service/`` opens it); nothing here writes.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from datetime import datetime
from typing import Any

import msgspec
import psycopg
import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import ARRAY, JSONB
from sqlalchemy.engine import Connection

from memledger.errors import InvalidCommand
from memledger.events import codec
from memledger.events.catalogue import TurnRecorded
from memledger.events.envelope import START, Cursor, Recorded
from memledger.store import direct, recorded_rows
from memledger.store.identifiers import check_identifier
from memledger.store.schema import Xid8, events

# Rows per result when streaming: small, so the first rows decode while the server
# produces the rest; large enough that each result's own cost stays small.
_STREAM_ROWS = 128


def _fetch(conn: Connection, stmt: sa.Select[Any], params: dict[str, Any] | None = None) -> list[Recorded]:
    """Run a query of ``recorded_rows.COLUMNS`` and decode its rows.

    The rows come straight from the driver's cursor: their two texts need no
    SQLAlchemy result processing. The statement still runs through SQLAlchemy,
    so errors are translated as everywhere else.
    """
    result = conn.execute(stmt, params)
    rows = result.cursor.fetchall()
    result.close()
    return recorded_rows.decode(rows)


def read_stream(
    conn: Connection, tenant_id: str, stream_id: str, *, after_version: int = 0, limit: int | None = None
) -> list[Recorded]:
    """A stream's events in stream-version order, from ``after_version + 1``."""
    params = {
        "tenant_id": check_identifier("tenant_id", tenant_id),
        "stream_id": check_identifier("stream_id", stream_id),
        "after_version": after_version,
        "limit": limit,  # LIMIT NULL: no limit
    }
    return _fetch(conn, _READ_STREAM, params)


# Built once: building a statement costs as much as decoding a few
# hundred events.
_READ_STREAM = (
    sa.select(*recorded_rows.COLUMNS)
    .where(
        events.c.tenant_id == sa.bindparam("tenant_id", type_=sa.Text),
        events.c.stream_id == sa.bindparam("stream_id", type_=sa.Text),
        events.c.stream_version > sa.bindparam("after_version", type_=sa.Integer),
    )
    .order_by(events.c.stream_version)
    .limit(sa.bindparam("limit", type_=sa.Integer))
)


def read_stream_of_tenants(conn: Connection, tenant_ids: Iterable[str], stream_id: str) -> list[Recorded]:
    """Stream ``stream_id`` of every tenant in ``tenant_ids`` (e.g. each one's settings),
    in one query: by tenant, then stream version."""
    tenants = sorted({check_identifier("tenant_id", t) for t in tenant_ids})
    if not tenants:
        return []
    params = {"tenants": tenants, "stream_id": check_identifier("stream_id", stream_id)}
    return _fetch(conn, _READ_STREAM_OF_TENANTS, params)


_READ_STREAM_OF_TENANTS = (
    sa.select(*recorded_rows.COLUMNS)
    .where(
        events.c.tenant_id == sa.any_(sa.bindparam("tenants", type_=sa.ARRAY(sa.Text))),
        events.c.stream_id == sa.bindparam("stream_id", type_=sa.Text),
    )
    .order_by(events.c.tenant_id, events.c.stream_version)
)


def _visible_after(after: Cursor) -> list[sa.ColumnElement[bool]]:
    """Conditions that make a read gap-safe.

    A position alone is not a safe cursor: a transaction that took position 101
    can commit after one that took 102, and a reader that already moved past 102
    would skip 101 forever. So the ledger's order is (writing transaction id,
    position), and a reader only takes events whose transaction is older than
    the oldest one still running (``pg_snapshot_xmin``): every transaction below
    that has ended, so no event can ever appear before what we return. Ordering
    by ``e.tx_id`` (not its text alias) keeps the index order.
    """
    after_tx = sa.cast(sa.cast(sa.bindparam("after_tx", str(after.tx_id)), sa.Text), Xid8())
    return [
        sa.tuple_(events.c.tx_id, events.c.position)
        > sa.tuple_(after_tx, sa.bindparam("after_position", after.position, type_=sa.BigInteger)),
        events.c.tx_id < sa.func.pg_snapshot_xmin(sa.func.pg_current_snapshot()),
    ]


def _filters(tenant_id: str | None, types: Iterable[str] | None) -> list[sa.ColumnElement[bool]]:
    where: list[sa.ColumnElement[bool]] = []
    if tenant_id is not None:
        where.append(events.c.tenant_id == check_identifier("tenant_id", tenant_id))
    if types is not None:
        where.append(events.c.event_type.in_(_checked_types(types)))
    return where


def _checked_types(types: Iterable[str]) -> list[str]:
    if isinstance(types, str):
        raise InvalidCommand("types must be a list of event types, not one string")
    tags = list(types)
    for tag in tags:
        codec.event_class(tag)  # an unknown type is an error, not an empty page
    return tags


@functools.cache
def _read_all_statement(by_tenant: bool, by_types: bool) -> sa.Select[Any]:
    """read_all's query for one combination of filters, built once (see _READ_STREAM)."""
    stmt = (
        sa.select(*recorded_rows.COLUMNS)
        .where(*_visible_after(START))  # the cursor's values are bound per call
        .order_by(events.c.tx_id, events.c.position)
        .limit(sa.bindparam("limit", type_=sa.Integer))
    )
    if by_tenant:
        stmt = stmt.where(events.c.tenant_id == sa.bindparam("tenant_id", type_=sa.Text))
    if by_types:  # one array parameter, not a list: the driver runs the statement
        stmt = stmt.where(events.c.event_type == sa.any_(sa.bindparam("types", type_=ARRAY(sa.Text))))
    return stmt


def read_all(
    conn: Connection,
    *,
    after: Cursor = START,
    limit: int = 1000,
    tenant_id: str | None = None,
    types: Iterable[str] | None = None,
) -> list[Recorded]:
    """Up to ``limit`` events after ``after``, in the ledger's one stable order.

    Gap-safe: never returns an event while one that sorts before it may still
    commit (see ``_visible_after``). Re-reading from the same cursor returns the
    same events in the same order. Pass the last event's ``cursor`` to continue.
    """
    if limit < 1:
        raise InvalidCommand(f"limit must be at least 1, not {limit}")
    params: dict[str, Any] = {
        "after_tx": str(after.tx_id),
        "after_position": after.position,
        "limit": limit,
    }
    if tenant_id is not None:
        params["tenant_id"] = check_identifier("tenant_id", tenant_id)
    if types is not None:
        params["types"] = _checked_types(types)
    return _streamed(conn, _read_all_statement(tenant_id is not None, types is not None), params)


def _streamed(conn: Connection, stmt: sa.Select[Any], params: dict[str, Any]) -> list[Recorded]:
    """``_fetch`` on the driver, the rows decoded as they arrive (``recorded_rows.stream``):
    the server sends the last rows while the first decode."""
    if not conn.in_transaction():
        conn.begin()  # as a first statement through SQLAlchemy would: it then commits or rolls back
    sql, fixed = direct.driver_statement(stmt, conn.dialect)
    driver: psycopg.Connection[Any] = conn.connection.driver_connection  # type: ignore[assignment]
    found: list[Recorded] = []
    for part in recorded_rows.stream(driver, sql, {**fixed, **params}, _STREAM_ROWS):
        found.extend(part)
    return found


def has_events_after(
    conn: Connection, after: Cursor, *, tenant_id: str | None = None, types: Iterable[str] | None = None
) -> bool:
    """Whether ``read_all(after=...)`` would return anything now. Cheap: one index probe."""
    stmt = sa.select(sa.exists().where(*_visible_after(after), *_filters(tenant_id, types)))
    return bool(conn.execute(stmt).scalar())


def count_after(
    conn: Connection, after: Cursor, *, tenant_id: str | None = None, types: Iterable[str] | None = None
) -> int:
    """How many events ``read_all`` has still to return after ``after`` (a lag in events)."""
    stmt = sa.select(sa.func.count()).where(*_visible_after(after), *_filters(tenant_id, types))
    return int(conn.execute(stmt).scalar_one())


def visible_head(conn: Connection) -> Cursor:
    """The cursor of the last event ``read_all`` can return now (the start if none):
    a reader starting there reads exactly what is appended from now on."""
    stmt = (
        sa.select(sa.cast(events.c.tx_id, sa.Text), events.c.position)
        .where(events.c.tx_id < sa.func.pg_snapshot_xmin(sa.func.pg_current_snapshot()))
        .order_by(events.c.tx_id.desc(), events.c.position.desc())
        .limit(1)
    )
    row = conn.execute(stmt).first()
    return START if row is None else Cursor(int(row[0]), int(row[1]))


def committed_head(conn: Connection, *, types: Iterable[str] | None = None) -> Cursor:
    """The cursor of the last event committed (as this snapshot sees; of ``types`` only,
    if given), readable by ``read_all`` yet or not: a target to wait for (everything
    committed so far), never a place to read from (an older writer may still commit
    before it)."""
    stmt = (
        sa.select(sa.cast(events.c.tx_id, sa.Text), events.c.position)
        .where(*_filters(None, types))
        .order_by(events.c.tx_id.desc(), events.c.position.desc())
        .limit(1)
    )
    row = conn.execute(stmt).first()
    return START if row is None else Cursor(int(row[0]), int(row[1]))


def cursor_at(conn: Connection, position: int) -> Cursor:
    """The cursor of the event at ``position`` (reading after it returns what follows it).

    A position no event holds gives the cursor of the nearest event before it.
    """
    stmt = (
        sa.select(sa.cast(events.c.tx_id, sa.Text), events.c.position)
        .where(events.c.position <= position)
        .order_by(events.c.position.desc())
        .limit(1)
    )
    row = conn.execute(stmt).first()
    return START if row is None else Cursor(int(row[0]), int(row[1]))


def read_events(conn: Connection, tenant_id: str, event_ids: Iterable[str]) -> list[Recorded]:
    """The tenant's events with these ids, in ledger order (ids it lacks are skipped)."""
    ids = sorted(set(event_ids))
    if not ids:
        return []
    stmt = (
        sa.select(*recorded_rows.COLUMNS)
        .where(events.c.tenant_id == check_identifier("tenant_id", tenant_id), events.c.event_id.in_(ids))
        .order_by(events.c.tx_id, events.c.position)
    )
    return _fetch(conn, stmt)


def caused_by(conn: Connection, tenant_id: str, event_id: str) -> list[Recorded]:
    """The tenant's events whose metadata names ``event_id`` as their cause (what an
    extraction made of a turn), in ledger order. A scan of one tenant's events: for
    audits, not hot paths."""
    stmt = (
        sa.select(*recorded_rows.COLUMNS)
        .where(
            events.c.tenant_id == check_identifier("tenant_id", tenant_id),
            events.c.metadata["causation_id"].astext == event_id,
        )
        .order_by(events.c.tx_id, events.c.position)
    )
    return _fetch(conn, stmt)


class Voice(msgspec.Struct, frozen=True):
    """Who said a turn and when: the stored user id (``subject``), their name if the
    turn was recorded with one (None once erased), and the turn's time."""

    subject: str | None
    name: str | None
    said_at: datetime


def turn_voices(conn: Connection, tenant_id: str, turn_ids: Iterable[str]) -> dict[str, Voice]:
    """``Voice`` of each of these turns, by turn id; turns the tenant lacks are left
    out. Reads the payload's ids and the private part's name: no turn's text leaves
    the table."""
    ids = sorted({f"turn:{turn_id}" for turn_id in turn_ids})
    if not ids:
        return {}
    params = {"tenant_id": check_identifier("tenant_id", tenant_id), "event_ids": ids}
    return {
        turn_id: Voice(subject or None, name or None, said_at)
        for turn_id, subject, name, said_at in conn.execute(_voices_statement(), params).all()
    }


@functools.cache
def _voices_statement() -> sa.Select[Any]:
    payload = events.c.payload
    return sa.select(
        payload["turn_id"].astext,
        sa.func.coalesce(payload["subject"].astext, payload["scopes"]["user"].astext),
        events.c.private["speaker"].astext,
        events.c.occurred_at,
    ).where(
        events.c.tenant_id == sa.bindparam("tenant_id"),
        events.c.event_id == sa.any_(sa.bindparam("event_ids", type_=ARRAY(sa.Text))),
        events.c.event_type == codec.tag_of(TurnRecorded),
    )


def turn_scopes(conn: Connection, tenant_id: str, turn_ids: Iterable[str]) -> dict[str, frozenset[tuple[str, str]]]:
    """The scope keys each of these turns was recorded with, as (scope, stored key)
    pairs, by turn id; turns the tenant lacks are left out. Reads the payload's scopes
    alone: no turn's text leaves the table."""
    ids = sorted({f"turn:{turn_id}" for turn_id in turn_ids})
    if not ids:
        return {}
    params = {"tenant_id": check_identifier("tenant_id", tenant_id), "event_ids": ids}
    return {
        turn_id: frozenset((scope, key) for scope, key in (scopes or {}).items() if key)
        for turn_id, scopes in conn.execute(_scopes_statement(), params).all()
    }


@functools.cache
def _scopes_statement() -> sa.Select[Any]:
    payload = events.c.payload
    return sa.select(payload["turn_id"].astext, payload["scopes"]).where(
        events.c.tenant_id == sa.bindparam("tenant_id"),
        events.c.event_id == sa.any_(sa.bindparam("event_ids", type_=ARRAY(sa.Text))),
        events.c.event_type == codec.tag_of(TurnRecorded),
    )


def has_events_between(conn: Connection, after: Cursor, until: Cursor, *, types: Iterable[str] | None = None) -> bool:
    """Whether any committed event of ``types`` lies in (after, until], visible to
    readers yet or not (a writer waiting for its own append must keep waiting)."""
    after_tx = sa.cast(sa.cast(sa.literal(str(after.tx_id)), sa.Text), Xid8())
    until_tx = sa.cast(sa.cast(sa.literal(str(until.tx_id)), sa.Text), Xid8())
    where = [
        sa.tuple_(events.c.tx_id, events.c.position) > sa.tuple_(after_tx, sa.literal(after.position)),
        sa.tuple_(events.c.tx_id, events.c.position) <= sa.tuple_(until_tx, sa.literal(until.position)),
        *_filters(None, types),
    ]
    return bool(conn.execute(sa.select(sa.exists().where(*where))).scalar())


def events_about(
    conn: Connection, tenant_id: str, item_id: str, *, entity: tuple[str, str] | None = None
) -> list[Recorded]:
    """The tenant's events whose payload names ``item_id`` (as a memory, item,
    relationship or chosen id), or that observed ``entity`` (type, lower-cased name),
    in ledger order. A scan of one tenant's events: for audits, not hot paths.
    Looks at the private fields too (where ids made of names are kept)."""
    private = sa.func.coalesce(events.c.private, sa.cast(sa.literal("{}"), JSONB))
    payload = sa.type_coerce(events.c.payload.op("||")(private), JSONB)
    named = [
        payload["memory_id"].astext == item_id,
        payload["item_id"].astext == item_id,
        payload["relationship_id"].astext == item_id,
        payload["chosen_memory_id"].astext == item_id,
        payload["promoted_from"].astext == item_id,
    ]
    if entity is not None:
        named.append(
            sa.and_(
                events.c.event_type == "entity.observed",
                payload["entity_type"].astext == entity[0],
                sa.func.lower(payload["name"].astext) == entity[1],
            )
        )
    stmt = (
        sa.select(*recorded_rows.COLUMNS)
        .where(events.c.tenant_id == check_identifier("tenant_id", tenant_id), sa.or_(*named))
        .order_by(events.c.tx_id, events.c.position)
    )
    return _fetch(conn, stmt)


# Public: the gap-safe visibility conditions, for other readers of the events table;
# read_all's statement and type check, for readers that stream it.
visible_after = _visible_after
read_all_statement = _read_all_statement
checked_types = _checked_types


_READ_TENANT = (
    sa.select(*recorded_rows.COLUMNS)
    .where(
        events.c.tenant_id == sa.bindparam("tenant_id", type_=sa.Text),
        events.c.position > sa.bindparam("after_position", type_=sa.BigInteger),
    )
    .order_by(events.c.position)
    .limit(sa.bindparam("limit", type_=sa.Integer))
)


def read_tenant(conn: Connection, tenant_id: str, *, after_position: int = 0, limit: int = 5000) -> list[Recorded]:
    """A page of the tenant's events in position order, after ``after_position``:
    every event committed in the caller's snapshot, not only those gap-safe readers
    see yet (erasure must miss none). Not a follower's cursor: use ``read_all``."""
    params = {"tenant_id": check_identifier("tenant_id", tenant_id), "after_position": after_position, "limit": limit}
    return _fetch(conn, _READ_TENANT, params)
