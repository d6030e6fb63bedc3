"""The turns read model: what was said, by whom, in which scopes; searchable."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import datetime

import msgspec
import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import TSVECTOR
from sqlalchemy.engine import Connection

from memledger.events.catalogue import TurnRecorded
from memledger.events.codec import tag_of
from memledger.events.envelope import Recorded
from memledger.projectors import bulk
from memledger.projectors.base import live_schema, read_models

NAME = "turns"
VERSION = 2  # v2: the first 50,000 characters are indexed (projections/turns/v2.sql)
HANDLES = frozenset({tag_of(TurnRecorded)})

turns = sa.Table(
    "turns",
    read_models,
    sa.Column("tenant_id", sa.Text, primary_key=True),
    sa.Column("turn_id", sa.Text, primary_key=True),
    sa.Column("role", sa.Text),
    sa.Column("text", sa.Text),
    sa.Column("session_key", sa.Text),
    sa.Column("project_key", sa.Text),
    sa.Column("user_key", sa.Text),
    sa.Column("org_key", sa.Text),
    sa.Column("subject", sa.Text),
    sa.Column("stream_id", sa.Text),
    sa.Column("event_id", sa.Text),
    sa.Column("position", sa.BigInteger),
    sa.Column("occurred_at", sa.DateTime(timezone=True)),
    sa.Column("recorded_at", sa.DateTime(timezone=True)),
    sa.Column("tsv", TSVECTOR),
    schema=live_schema(NAME),
)


class TurnRow(msgspec.Struct):
    """One row of ``turns``."""

    tenant_id: str
    turn_id: str
    role: str
    text: str
    session_key: str | None
    project_key: str | None
    user_key: str | None
    org_key: str | None
    subject: str | None
    stream_id: str
    event_id: str
    position: int
    occurred_at: datetime
    recorded_at: datetime


def to_row(rec: Recorded, event: TurnRecorded) -> TurnRow:
    """The row a TurnRecorded event gives. Pure."""
    scopes = event.scopes
    return TurnRow(
        rec.tenant_id,
        event.turn_id,
        event.role,
        event.text,
        scopes.session,
        scopes.project,
        scopes.user,
        scopes.org,
        event.subject,
        rec.stream_id,
        rec.event_id,
        rec.position,
        rec.occurred_at,
        rec.recorded_at,
    )


class TurnsProjector:
    """Projects TurnRecorded events into ``turns``. A turn id recorded twice keeps
    its first recording (the ledger refuses a second event id, but two events may
    name the same caller-given turn id)."""

    name = NAME
    version = VERSION
    handles = HANDLES

    def apply(self, tx: Connection, batch: Sequence[Recorded]) -> None:
        bulk.insert_new(tx, turns, _rows(batch))

    def replayer(self) -> TurnsReplay:
        """The same fold for a rebuild; turns keep no state between batches."""
        return TurnsReplay()


def _rows(batch: Sequence[Recorded]) -> list[TurnRow]:
    rows: dict[tuple[str, str], TurnRow] = {}
    for rec in batch:
        event = rec.event
        if isinstance(event, TurnRecorded):
            rows.setdefault((rec.tenant_id, event.turn_id), to_row(rec, event))
    return list(rows.values())


class TurnsReplay:
    """``TurnsProjector.apply`` for a rebuild. A turn id recorded again is dropped
    here, where the first recording is known, so no two batches write one row and
    they may be written side by side (``lanes``): the text search vectors, most
    of a rebuild's work, then use both cores."""

    lanes = 2
    flush_every = 10_000  # smaller batches than the default: more to share between lanes

    def __init__(self) -> None:
        self.seen: set[tuple[str, str]] = set()
        self.rows: list[TurnRow] = []

    def evolve(self, page: Sequence[Recorded]) -> None:
        for row in _rows(page):
            key = (row.tenant_id, row.turn_id)
            if key not in self.seen:
                self.seen.add(key)
                self.rows.append(row)

    def flush(self) -> Callable[[Connection], None]:
        rows, self.rows = self.rows, []
        return lambda tx: bulk.insert_new(tx, turns, rows)


def search(conn: Connection, tenant_id: str, query: str, *, limit: int = 10) -> list[tuple[str, str, float]]:
    """Turns matching ``query`` (all words), best first: (turn id, text, rank)."""
    tsquery = sa.func.websearch_to_tsquery("english", query)
    rank = sa.func.ts_rank(turns.c.tsv, tsquery)
    stmt = (
        sa.select(turns.c.turn_id, turns.c.text, rank)
        .where(turns.c.tenant_id == tenant_id, turns.c.tsv.op("@@")(tsquery))
        .order_by(rank.desc(), turns.c.position)
        .limit(limit)
    )
    return [(r[0], r[1], float(r[2])) for r in conn.execute(stmt).all()]


def texts_by_id(conn: Connection, tenant_id: str, turn_ids: Iterable[str]) -> dict[str, str]:
    """The text of each of these turns the tenant has, by turn id."""
    wanted = sorted(set(turn_ids))
    if not wanted:
        return {}
    stmt = sa.select(turns.c.turn_id, turns.c.text).where(turns.c.tenant_id == tenant_id, turns.c.turn_id.in_(wanted))
    return {r[0]: r[1] for r in conn.execute(stmt).all()}
