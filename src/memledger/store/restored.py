"""A ledger restored from a logical dump (``pg_dump``) into another server.

Each event keeps the id of the transaction that appended it (``events.tx_id``), and
gap-safe reading takes only events of transactions older than every one still
running (ADR 0001). A logical dump keeps those ids, but not the server's counter of
transaction ids: restored on a server whose counter is lower, the events carry ids
the server has not reached, and every reader waits for them forever (nothing is
extracted, a rebuild sees a few events, ``verify`` reports events behind the sealer).

``ids_behind`` finds that; ``advance_ids`` moves the server's counter past the
ledger's ids by starting and committing that many empty transactions (~200,000 a
second on a small machine). A physical backup (``pg_basebackup``, or a copy of a
stopped server's data directory) keeps the counter and needs none of this.
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

# How far the ledger's newest transaction id is ahead of the next one this server
# will assign (0 or less: not ahead). No event this server committed can have an id
# at or above that: it comes from another server.
_AHEAD = sa.text(
    "SELECT coalesce(max(tx_id)::text::bigint + 1"
    " - pg_snapshot_xmax(pg_current_snapshot())::text::bigint, 0) FROM events"
)
# Transaction control in a DO block: each COMMIT ends one transaction that took an id.
_BURN = "DO $$ BEGIN FOR i IN 1..{count} LOOP PERFORM pg_current_xact_id(); COMMIT; END LOOP; END $$"
_CHUNK = 1_000_000


def ids_behind(conn: Connection) -> int:
    """How many transaction ids this server must assign before it reaches the
    ledger's (0: none; the ledger was written here, or restored physically)."""
    # text(): xid8 arithmetic through text; one index-only read of events' newest tx_id.
    return max(0, int(conn.execute(_AHEAD).scalar_one()))


def advance_ids(engine: Engine) -> int:
    """Assign empty transactions until the server is past the ledger's ids; how many."""
    done = 0
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        while (behind := ids_behind(conn)) > 0:
            count = min(behind, _CHUNK)
            # text(): a DO block with transaction control; the count is an int made here.
            conn.execute(sa.text(_BURN.format(count=int(count))))
            done += count
    return done
