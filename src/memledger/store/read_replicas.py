"""What a read replica (a streaming standby) has replayed, and where the primary's WAL stands.

Statements here read only: they run on a hot standby, where a transaction cannot
write and cannot be given a transaction id (``pg_current_xact_id()`` fails there).
"""

from __future__ import annotations

import msgspec
import sqlalchemy as sa
from sqlalchemy.engine import Connection

from memledger.store.schema import events


class ReplayState(msgspec.Struct, frozen=True):
    """Where a server is in the primary's WAL. On a primary (``in_recovery`` False) the
    replay fields are None; ``replay_age_s`` is the age of the last transaction replayed."""

    in_recovery: bool
    receive_lsn: str | None
    replay_lsn: str | None
    replay_paused: bool
    replay_age_s: float | None


# text(): server functions about WAL replay, with no table to model.
_REPLAY = sa.text(
    "SELECT pg_is_in_recovery(), pg_last_wal_receive_lsn()::text, pg_last_wal_replay_lsn()::text,"
    " CASE WHEN pg_is_in_recovery() THEN pg_is_wal_replay_paused() ELSE false END,"
    " extract(epoch FROM clock_timestamp() - pg_last_xact_replay_timestamp())"
)


def replay_state(conn: Connection) -> ReplayState:
    """The server's recovery state, in one statement (any role may ask)."""
    row = conn.execute(_REPLAY).one()
    age = None if row[4] is None else max(float(row[4]), 0.0)
    return ReplayState(bool(row[0]), row[1], row[2], bool(row[3]), age)


def current_lsn(conn: Connection) -> str:
    """The primary's current WAL write position."""
    # text(): a server function, as above.
    return str(conn.execute(sa.text("SELECT pg_current_wal_lsn()::text")).scalar_one())


def bytes_behind(conn: Connection, primary_lsn: str, replay_lsn: str) -> int:
    """How many bytes of WAL ``replay_lsn`` is behind ``primary_lsn`` (0 if ahead)."""
    # text(): pg_lsn arithmetic, as above.
    diff = conn.execute(
        sa.text("SELECT pg_wal_lsn_diff(CAST(:p AS pg_lsn), CAST(:r AS pg_lsn))"), {"p": primary_lsn, "r": replay_lsn}
    ).scalar_one()
    return max(int(diff), 0)


_HOLDS = sa.select(sa.exists().where(events.c.position == sa.bindparam("position", type_=sa.BigInteger)))


def holds_position(conn: Connection, position: int) -> bool:
    """Whether the event at ``position`` is visible here (one index probe). On a standby
    it is once the appending transaction's commit was replayed: the commit makes all of
    that transaction's rows visible at once, never some of them."""
    return bool(conn.execute(_HOLDS, {"position": position}).scalar())
