"""The checkpoints table: where each projection (or copy of one) has applied up to.

A checkpoint moves in the same transaction as the rows it covers; ``lock``
takes its row FOR UPDATE, so two runners of one projection apply batches one
after the other, never the same batch twice.
"""

from __future__ import annotations

from datetime import datetime

import msgspec
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql
from sqlalchemy.engine import Connection

from memledger.events.envelope import Cursor
from memledger.store.schema import Xid8, projection_checkpoints

t = projection_checkpoints


class Checkpoint(msgspec.Struct, frozen=True):
    """A checkpoint row."""

    name: str
    version: int
    db_schema: str
    cursor: Cursor
    applied_events: int
    state: str
    error: str | None
    error_position: int | None
    error_event_id: str | None
    updated_at: datetime


_COLUMNS = (
    t.c.name,
    t.c.version,
    t.c.db_schema,
    sa.cast(t.c.cursor_tx, sa.Text),
    t.c.cursor_position,
    t.c.applied_events,
    t.c.state,
    t.c.error,
    t.c.error_position,
    t.c.error_event_id,
    t.c.updated_at,
)


def _row(row: sa.Row[tuple[object, ...]]) -> Checkpoint:
    values = tuple(row)
    cursor = Cursor(int(str(values[3])), int(str(values[4])))
    return Checkpoint(*values[:3], cursor, *values[5:])  # type: ignore[arg-type, call-arg]


def _xid8(value: int) -> sa.ColumnElement[int]:
    return sa.cast(sa.cast(sa.literal(str(value)), sa.Text), Xid8())


def ensure(tx: Connection, name: str, version: int, db_schema: str) -> None:
    """Create the checkpoint at the ledger's start if it does not exist."""
    stmt = (
        postgresql.insert(t)
        .values(name=name, version=version, db_schema=db_schema)
        .on_conflict_do_nothing(index_elements=["name"])
    )
    tx.execute(stmt)


# Built once: lock and advance run once per batch of every runner and of the extraction
# worker, and building a statement cost more CPU than running it.
_LOCK = sa.select(*_COLUMNS).where(t.c.name == sa.bindparam("name", type_=sa.Text)).with_for_update()
_ADVANCE = (
    t.update()
    .where(t.c.name == sa.bindparam("checkpoint", type_=sa.Text))
    .values(
        cursor_tx=sa.cast(sa.bindparam("tx", type_=sa.Text), Xid8()),
        cursor_position=sa.bindparam("position", type_=sa.BigInteger),
        applied_events=t.c.applied_events + sa.bindparam("applied", type_=sa.BigInteger),
        state="live",
        error=None,
        error_position=None,
        error_event_id=None,
        updated_at=sa.func.now(),
    )
)


def lock(tx: Connection, name: str) -> Checkpoint | None:
    """The checkpoint, locked until the transaction ends (other runners wait)."""
    row = tx.execute(_LOCK, {"name": name}).first()
    return None if row is None else _row(row)


def get(conn: Connection, name: str) -> Checkpoint | None:
    """The checkpoint, without locking."""
    row = conn.execute(sa.select(*_COLUMNS).where(t.c.name == name)).first()
    return None if row is None else _row(row)


_CURSORS = sa.select(t.c.name, sa.cast(t.c.cursor_tx, sa.Text), t.c.cursor_position).where(
    t.c.name == sa.any_(sa.bindparam("names", type_=postgresql.ARRAY(sa.Text)))
)


def cursors(conn: Connection, names: list[str]) -> dict[str, Cursor]:
    """Where each of these checkpoints stands (those that exist), in one statement
    built once: ``ContextServed`` records them on every context served."""
    return {row[0]: Cursor(int(row[1]), int(row[2])) for row in conn.execute(_CURSORS, {"names": names}).all()}


def all_checkpoints(conn: Connection) -> list[Checkpoint]:
    """Every checkpoint, by name."""
    return [_row(r) for r in conn.execute(sa.select(*_COLUMNS).order_by(t.c.name)).all()]


def advance(tx: Connection, name: str, cursor: Cursor, applied: int) -> None:
    """Move the checkpoint to ``cursor`` after applying ``applied`` more events."""
    params = {"checkpoint": name, "tx": str(cursor.tx_id), "position": cursor.position, "applied": applied}
    tx.execute(_ADVANCE, params)


def fail(tx: Connection, name: str, position: int, event_id: str, error: str) -> None:
    """Mark the projection stopped at ``position`` by an event it cannot apply."""
    tx.execute(
        t.update()
        .where(t.c.name == name)
        .values(
            state="failed",
            error=error,
            error_position=position,
            error_event_id=event_id,
            updated_at=sa.func.now(),
        )
    )


def replace(tx: Connection, name: str, source: Checkpoint) -> None:
    """Make ``name`` the copy ``source`` describes (used by the swap of a rebuild)."""
    tx.execute(
        t.update()
        .where(t.c.name == name)
        .values(
            version=source.version,
            db_schema=source.db_schema,
            cursor_tx=_xid8(source.cursor.tx_id),
            cursor_position=source.cursor.position,
            applied_events=source.applied_events,
            state="live",
            error=None,
            error_position=None,
            error_event_id=None,
            updated_at=sa.func.now(),
        )
    )


def remove(tx: Connection, name: str) -> None:
    """Forget a checkpoint (a scratch copy's, after a rebuild or verify)."""
    tx.execute(t.delete().where(t.c.name == name))
