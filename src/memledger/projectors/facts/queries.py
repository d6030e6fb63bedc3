"""Queries on the facts read model (the facts projector owns the table): facts by id,
what a request may see, conflicts and the claims of slots. The selection channels
(text, recent, vector) are ``facts_channels``'."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from functools import lru_cache
from typing import Any

import msgspec
import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.engine import Connection
from sqlalchemy.types import NullType

from memledger.projectors.facts.projector import conflicts, facts


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


HIT_COLUMNS = (
    facts.c.memory_id,
    facts.c.scope,
    facts.c.scope_key,
    facts.c.key,
    facts.c.statement,
    facts.c.category,
    facts.c.confidence,
    facts.c.conflicted,
    facts.c.slot_id,
    # psycopg returns text[] as a list already; ARRAY's result processing per element
    # cost more than the rest of a hit.
    sa.type_coerce(facts.c.source_turns, NullType()).label("source_turns"),
    facts.c.valid_from,
    facts.c.updated_at,
)


def _hits(conn: Connection, stmt: sa.Select[Any]) -> list[FactHit]:
    rows = conn.execute(stmt).all()
    return [FactHit(*row[:12], rank=i) for i, row in enumerate(rows, start=1)]  # type: ignore[misc]


def visible_where(pairs: int, categories: bool) -> list[sa.ColumnElement[bool]]:
    """What a request may see, with bound parameters: the tenant (``tenant_id``), one of
    its scope pairs (``scope_<i>``, ``scope_key_<i>``), active, at least
    ``min_confidence`` and, if ``categories``, of one of ``categories``."""
    return [sa.or_(*(in_scope(i) for i in range(pairs))), *live_where(categories)]


def in_scope(pair: int) -> sa.ColumnElement[bool]:
    """The fact is of the request's scope pair ``pair`` (``scope_<pair>``, ``scope_key_<pair>``)."""
    c, p = facts.c, sa.bindparam
    return sa.and_(c.scope == p(f"scope_{pair}", type_=sa.Text), c.scope_key == p(f"scope_key_{pair}", type_=sa.Text))


def live_where(categories: bool) -> list[sa.ColumnElement[bool]]:
    """``visible_where`` but the scopes: the tenant, live, confident enough, of the categories."""
    p = sa.bindparam
    where = [
        facts.c.tenant_id == p("tenant_id", type_=sa.Text),
        facts.c.status.in_(["active", "low_confidence"]),
        facts.c.confidence >= p("min_confidence", type_=sa.Float),
    ]
    if categories:
        where.append(facts.c.category == sa.any_(p("categories", type_=ARRAY(sa.Text))))
    return where


def visible_params(
    tenant_id: str, scopes: Sequence[tuple[str, str]], min_confidence: float, categories: Iterable[str] | None
) -> dict[str, Any]:
    """The bound parameters of ``visible_where`` for a request."""
    params: dict[str, Any] = {
        "tenant_id": tenant_id,
        "min_confidence": min_confidence,
        "categories": None if categories is None else sorted(categories),
    }
    for i, (scope, key) in enumerate(scopes):
        params[f"scope_{i}"], params[f"scope_key_{i}"] = scope, key
    return params


_PARTNERS = sa.select(*HIT_COLUMNS).where(
    facts.c.tenant_id == sa.bindparam("tenant_id", type_=sa.Text),
    facts.c.slot_id == sa.any_(sa.bindparam("slot_ids", type_=ARRAY(sa.Text))),
    facts.c.conflicted.is_(True),
    facts.c.status.in_(["active", "low_confidence"]),
)


def conflict_partners(conn: Connection, tenant_id: str, slot_ids: Iterable[str]) -> list[FactHit]:
    """The live facts in conflict in these slots (the sides of each slot's open
    conflict), whatever their confidence or category: a conflict is shown whole."""
    slots = sorted(set(slot_ids))
    if not slots:
        return []
    rows = conn.execute(_PARTNERS, {"tenant_id": tenant_id, "slot_ids": slots}).all()
    return [FactHit(*row[:12], rank=0) for row in rows]  # type: ignore[misc]


def by_ids(conn: Connection, tenant_id: str, memory_ids: Sequence[str]) -> list[FactHit]:
    """Facts by id, whatever their status (for provenance and for the vector channel)."""
    if not memory_ids:
        return []
    stmt = sa.select(*HIT_COLUMNS).where(facts.c.tenant_id == tenant_id, facts.c.memory_id.in_(list(memory_ids)))
    return _hits(conn, stmt)


def withdrawn_turns(conn: Connection, tenant_id: str, turn_ids: Iterable[str]) -> set[str]:
    """Those of ``turn_ids`` whose facts were all withdrawn: each is a source turn of
    some fact and of no fact still standing (active or low confidence), so what it
    said was superseded or retracted. One statement, on the source turns' index."""
    wanted = sorted(set(turn_ids))
    if not wanted:
        return set()
    params = {"tenant_id": tenant_id, "turn_ids": wanted}
    return {row[0] for row in conn.execute(_withdrawn_statement(), params).all()}


@lru_cache(maxsize=1)
def _withdrawn_statement() -> sa.Select[Any]:
    ids = sa.bindparam("turn_ids", type_=ARRAY(sa.Text))
    turn = sa.func.unnest(facts.c.source_turns).table_valued("turn_id").render_derived(name="turn")
    standing = facts.c.status.in_(["active", "low_confidence"])
    return (
        sa.select(turn.c.turn_id)
        .select_from(facts.join(turn, sa.true()))
        .where(
            facts.c.tenant_id == sa.bindparam("tenant_id", type_=sa.Text),
            facts.c.source_turns.op("&&")(ids),
            turn.c.turn_id == sa.any_(ids),
        )
        .group_by(turn.c.turn_id)
        .having(sa.not_(sa.func.bool_or(standing)))
    )


def visible_by_ids(
    conn: Connection,
    tenant_id: str,
    scopes: Sequence[tuple[str, str]],
    memory_ids: Iterable[str],
    *,
    min_confidence: float,
    categories: Iterable[str] | None,
) -> list[FactHit]:
    """Those of these facts a request of ``scopes`` may see (as ``facts_channels.channels`` sees
    them), in no particular order (rank 0)."""
    scopes, wanted = list(scopes), sorted(set(memory_ids))
    if not scopes or not wanted:
        return []
    params = visible_params(tenant_id, scopes, min_confidence, categories)
    params["memory_ids"] = wanted
    rows = conn.execute(_visible_by_ids_statement(len(scopes), categories is not None), params).all()
    return [FactHit(*row, rank=0) for row in rows]  # type: ignore[misc]


@lru_cache(maxsize=16)
def _visible_by_ids_statement(pairs: int, categories: bool) -> sa.Select[Any]:
    wanted = facts.c.memory_id == sa.any_(sa.bindparam("memory_ids", type_=ARRAY(sa.Text)))
    return sa.select(*HIT_COLUMNS).where(*visible_where(pairs, categories), wanted)


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


def has_conflict(conn: Connection, tenant_id: str, conflict_id: str) -> bool:
    """Whether the tenant has (or had) a conflict of this id."""
    stmt = sa.select(sa.literal(1)).where(conflicts.c.tenant_id == tenant_id, conflicts.c.conflict_id == conflict_id)
    return conn.execute(stmt.limit(1)).first() is not None


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


class ScopeFact(msgspec.Struct, frozen=True):
    """A fact of a scope, live or superseded, with what a request to forget reads."""

    memory_id: str
    slot_id: str
    key: str
    statement: str
    value: str | None
    source_turns: list[str]
    status: str


class SlotClaim(msgspec.Struct, frozen=True):
    """A live fact of a slot, as the facts fold weighs it against a newer one."""

    slot_id: str
    value: str | None
    confidence: float
    valid_from: datetime
    chosen: bool  # a person chose between the slot's facts (``ConflictResolved``)


def slot_claims(conn: Connection, tenant_id: str, slot_ids: Iterable[str]) -> list[SlotClaim]:
    """The live facts (not superseded or retracted) of these slots, one statement."""
    wanted = sorted(set(slot_ids))
    if not wanted:
        return []
    f, c = facts, conflicts
    chosen = sa.and_(c.c.tenant_id == f.c.tenant_id, c.c.conflict_id == f.c.slot_id, c.c.manual_choice.is_not(None))
    stmt = sa.select(f.c.slot_id, f.c.value, f.c.confidence, f.c.valid_from, sa.exists().where(chosen)).where(
        f.c.tenant_id == tenant_id, f.c.slot_id.in_(wanted), f.c.status.in_(("active", "low_confidence"))
    )
    return [SlotClaim(*row) for row in conn.execute(stmt).all()]


def live_and_superseded(conn: Connection, tenant_id: str, scopes: Iterable[tuple[str, str]]) -> list[ScopeFact]:
    """The live and superseded facts of these (scope, scope key) pairs (not retracted)."""
    pairs = sorted(set(scopes))
    if not pairs:
        return []
    f = facts
    stmt = sa.select(f.c.memory_id, f.c.slot_id, f.c.key, f.c.statement, f.c.value, f.c.source_turns, f.c.status).where(
        f.c.tenant_id == tenant_id,
        sa.tuple_(f.c.scope, f.c.scope_key).in_(pairs),
        f.c.status.in_(("active", "low_confidence", "superseded")),
    )
    return [ScopeFact(*row[:5], list(row[5] or ()), row[6]) for row in conn.execute(stmt).all()]
