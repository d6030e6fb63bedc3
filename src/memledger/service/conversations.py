"""A conversation's turns as it was said, and a tenant's extraction backlog: what the
AIRI-style API (api/routes_airi.py) shows as history, working memory and queue status."""

from __future__ import annotations

from datetime import datetime

import msgspec
from sqlalchemy.engine import Engine

from memledger.events.catalogue import Scopes, TurnRecorded
from memledger.events.envelope import START
from memledger.service import scope_ids
from memledger.service.extraction import TURN_TAG, ExtractionWorker
from memledger.service.record import conversation_stream
from memledger.store import event_reads


class SaidTurn(msgspec.Struct, frozen=True, kw_only=True):
    """One turn of a conversation: its id, role, words and when it was said."""

    turn_id: str
    role: str
    text: str
    occurred_at: datetime


class Backlog(msgspec.Struct, frozen=True, kw_only=True):
    """A tenant's turns: recorded in all, and not yet extracted by the worker's extractor."""

    extractor: str
    total: int
    pending: int


def recent(
    engine: Engine, tenant_id: str, session: str, *, before: datetime | None, limit: int
) -> tuple[list[SaidTurn], bool]:
    """Up to ``limit`` of the session's latest turns said before ``before`` (any time
    if None), oldest first, and whether older ones remain. Reads the session's
    conversation stream, so it needs no read model; an erased turn (its words gone) is
    left out."""
    stored = scope_ids.stored_scopes(engine, tenant_id, Scopes(session=session))
    with engine.connect() as conn:
        records = event_reads.read_stream(conn, tenant_id, conversation_stream(stored))
    said = [
        SaidTurn(turn_id=r.event.turn_id, role=r.event.role, text=r.event.text, occurred_at=r.occurred_at)
        for r in records
        if isinstance(r.event, TurnRecorded) and r.event.text and (before is None or r.occurred_at < before)
    ]
    said.sort(key=lambda t: t.occurred_at)  # valid time: a turn may be recorded late
    return said[-limit:], len(said) > limit


def backlog(engine: Engine, worker: ExtractionWorker, tenant_id: str) -> Backlog:
    """The tenant's turns recorded, and those its extraction has still to read.
    ``engine``: the tenant's (fenced) engine, which counts only its own events."""
    with engine.connect() as conn:
        total = event_reads.count_after(conn, START, tenant_id=tenant_id, types=[TURN_TAG])
    return Backlog(extractor=worker.name, total=total, pending=worker.pending(tenant_id))
