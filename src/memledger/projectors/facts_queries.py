"""Queries on the facts read model (the facts projector owns the table)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

import msgspec
import sqlalchemy as sa
from sqlalchemy.engine import Connection

from memledger.projectors.facts import conflicts, facts


def live_memory_ids(conn: Connection, keys: Iterable[tuple[str, str]]) -> set[tuple[str, str]]:
    """Which (tenant, memory id) pairs exist and are not retracted."""
    wanted = list(keys)
    if not wanted:
        return set()
    stmt = sa.select(facts.c.tenant_id, facts.c.memory_id).where(
        sa.tuple_(facts.c.tenant_id, facts.c.memory_id).in_(wanted), facts.c.retracted.is_(False)
    )
    return {(r[0], r[1]) for r in conn.execute(stmt).all()}


class FactHit(msgspec.Struct, frozen=True):
    """A fact found for a request, with the rank its channel gave it (1 = best)."""

    memory_id: str
    scope: str
    scope_key: str
    key: str
    statement: str
    category: str
    confidence: float
    conflicted: bool
    slot_id: str
    source_turns: list[str]
    valid_from: datetime
    updated_at: datetime
    rank: int


_HIT_COLUMNS = (
    facts.c.memory_id,
    facts.c.scope,
    facts.c.scope_key,
    facts.c.key,
    facts.c.statement,
    facts.c.category,
    facts.c.confidence,
    facts.c.conflicted,
    facts.c.slot_id,
    facts.c.source_turns,
    facts.c.valid_from,
    facts.c.updated_at,
)
_MATCH_CAP = 2000  # ranking every OR match is what makes OR queries slow; bound it


def _visible(
    tenant_id: str, scopes: Sequence[tuple[str, str]], min_confidence: float, categories: Iterable[str] | None
) -> list[sa.ColumnElement[bool]]:
    where = [
        facts.c.tenant_id == tenant_id,
        sa.tuple_(facts.c.scope, facts.c.scope_key).in_(list(scopes)),
        facts.c.status.in_(["active", "low_confidence"]),
        facts.c.confidence >= min_confidence,
    ]
    if categories is not None:
        where.append(facts.c.category.in_(sorted(categories)))
    return where


def _hits(conn: Connection, stmt: sa.Select[Any]) -> list[FactHit]:
    rows = conn.execute(stmt).all()
    return [FactHit(*row[:12], rank=i) for i, row in enumerate(rows, start=1)]  # type: ignore[misc]


def search_text(
    conn: Connection,
    tenant_id: str,
    scopes: Sequence[tuple[str, str]],
    words: Sequence[str],
    *,
    min_confidence: float,
    categories: Iterable[str] | None,
    limit: int,
) -> list[FactHit]:
    """Facts whose text matches any of ``words`` (full text), best ts_rank first.

    Matches are capped before ranking so a common word cannot make the query slow.
    """
    if not words or not scopes:
        return []
    query = sa.func.to_tsquery("english", " | ".join(words))
    matched = (
        sa.select(*_HIT_COLUMNS, facts.c.tsv)
        .where(*_visible(tenant_id, scopes, min_confidence, categories), facts.c.tsv.op("@@")(query))
        .limit(_MATCH_CAP)
        .subquery()
    )
    rank = sa.func.ts_rank(matched.c.tsv, query)
    stmt = sa.select(*(matched.c[c.name] for c in _HIT_COLUMNS)).order_by(rank.desc(), matched.c.memory_id).limit(limit)
    return _hits(conn, stmt)


def recent(
    conn: Connection,
    tenant_id: str,
    scopes: Sequence[tuple[str, str]],
    *,
    min_confidence: float,
    categories: Iterable[str] | None,
    limit: int,
) -> list[FactHit]:
    """The most recently learned or reinforced facts of the scopes."""
    if not scopes:
        return []
    stmt = (
        sa.select(*_HIT_COLUMNS)
        .where(*_visible(tenant_id, scopes, min_confidence, categories))
        .order_by(facts.c.updated_at.desc(), facts.c.memory_id)
        .limit(limit)
    )
    return _hits(conn, stmt)


def by_ids(conn: Connection, tenant_id: str, memory_ids: Sequence[str]) -> list[FactHit]:
    """Facts by id, whatever their status (for provenance and for the vector channel)."""
    if not memory_ids:
        return []
    stmt = sa.select(*_HIT_COLUMNS).where(facts.c.tenant_id == tenant_id, facts.c.memory_id.in_(list(memory_ids)))
    return _hits(conn, stmt)


class ConflictView(msgspec.Struct, frozen=True):
    """A conflict as people read it."""

    conflict_id: str
    scope: str
    scope_key: str
    key: str
    state: str
    resolution: str
    reason: str
    memory_ids: list[str]
    winner_ids: list[str]
    manual_choice: str | None
    resolved_by: str | None
    updated_at: datetime


def list_conflicts(
    conn: Connection, tenant_id: str, *, states: Iterable[str] | None = None, limit: int = 100
) -> list[ConflictView]:
    """The tenant's conflicts (open, resolved, dissolved), most recent first."""
    c = conflicts
    stmt = sa.select(
        c.c.conflict_id,
        c.c.scope,
        c.c.scope_key,
        c.c.key,
        c.c.state,
        c.c.resolution,
        c.c.reason,
        c.c.memory_ids,
        c.c.winner_ids,
        c.c.manual_choice,
        c.c.resolved_by,
        c.c.updated_at,
    ).where(c.c.tenant_id == tenant_id)
    if states is not None:
        stmt = stmt.where(c.c.state.in_(sorted(states)))
    stmt = stmt.order_by(c.c.updated_at.desc(), c.c.conflict_id).limit(limit)
    return [ConflictView(*row) for row in conn.execute(stmt).all()]  # type: ignore[call-arg]
