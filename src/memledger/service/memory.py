"""Commands people and agents give memory: promote, retract, restore, resolve a conflict.

Each appends one event (to the item's own stream) and changes nothing else: the
read models follow from the ledger.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from sqlalchemy.engine import Engine

from memledger.errors import InvalidCommand, NotFound
from memledger.events.catalogue import (
    MAX_SLOT_ID,
    ConflictResolved,
    Event,
    ItemKind,
    MemoryPromoted,
    MemoryRestored,
    MemoryRetracted,
    PromotionKind,
    ScopeKind,
    Scopes,
)
from memledger.events.envelope import Metadata, NewEvent
from memledger.events.keys import conflict_stream, item_stream
from memledger.extraction.policy import short_hash
from memledger.projectors import facts_queries, graph_queries
from memledger.projectors.summaries import SUMMARIES
from memledger.service import scope_ids
from memledger.store import db, event_store
from memledger.store.event_store import AppendResult
from memledger.store.identifiers import check_identifier, check_text


def _append(engine: Engine, tenant_id: str, stream: str, event: Event, actor: str | None) -> AppendResult:
    new = NewEvent(
        event=event, event_id=f"cmd:{uuid.uuid4()}", occurred_at=datetime.now(UTC), metadata=Metadata(actor=actor)
    )
    with db.begin(engine) as tx:
        return event_store.append(tx, tenant_id, stream, [new], None)


def item_kind(engine: Engine, tenant_id: str, item_id: str) -> ItemKind:
    """Whether ``item_id`` names a fact, an entity or a relationship of the tenant."""
    check_identifier("tenant_id", tenant_id)
    check_identifier("item_id", item_id)
    with engine.connect() as conn:
        if facts_queries.by_ids(conn, tenant_id, [item_id]):
            return "fact"
        if graph_queries.entities_by_id(conn, tenant_id, [item_id]):
            return "entity"
        if graph_queries.edges_by_key(conn, tenant_id, [item_id]):
            return "relationship"
    raise NotFound(f"tenant {tenant_id!r} has no memory item {item_id!r}")


# The read model each kind of item lives in: what a command on the item changes.
READ_MODEL: dict[str, str] = {kind: name for kind, name, _ in SUMMARIES}


def retract(engine: Engine, tenant_id: str, item_id: str, *, reason: str = "", actor: str | None = None) -> ItemKind:
    """Soft-delete an item (nothing is lost; ``restore`` undoes it). Returns its kind."""
    kind = item_kind(engine, tenant_id, item_id)
    _append(
        engine, tenant_id, item_stream(item_id), MemoryRetracted(item_id=item_id, item_kind=kind, reason=reason), actor
    )
    return kind


def restore(engine: Engine, tenant_id: str, item_id: str, *, reason: str = "", actor: str | None = None) -> ItemKind:
    """Undo a retraction. Returns the item's kind."""
    kind = item_kind(engine, tenant_id, item_id)
    _append(
        engine, tenant_id, item_stream(item_id), MemoryRestored(item_id=item_id, item_kind=kind, reason=reason), actor
    )
    return kind


def promote(
    engine: Engine,
    tenant_id: str,
    *,
    kind: PromotionKind,
    scope: ScopeKind,
    scopes: Scopes,
    memory_id: str | None = None,
    statement: str | None = None,
    key: str | None = None,
    actor: str | None = None,
) -> str:
    """Copy a memory (or a new statement) to a longer-lived scope; returns the new id.

    Explicit promotion always works, whatever the tenant's automatic-promotion switch.
    The target scope's key is given raw (or as the stored id we showed) and stored hashed.
    """
    check_identifier("tenant_id", tenant_id)
    if memory_id is not None:
        check_identifier("memory_id", memory_id)
    for field, text in (("statement", statement), ("key", key)):
        if text is not None:
            check_text(field, text)
    scopes = scope_ids.stored_scopes(engine, tenant_id, scopes)
    scope_key = getattr(scopes, scope)
    if not scope_key:
        raise InvalidCommand(f"promotion to the {scope} scope needs the {scope} scope key")
    source_turns: tuple[str, ...] = ()
    if memory_id is not None:
        with engine.connect() as conn:
            found = facts_queries.by_ids(conn, tenant_id, [memory_id])
        if not found:
            raise NotFound(f"tenant {tenant_id!r} has no fact {memory_id!r}")
        fact = found[0]
        statement = statement or fact.statement
        key = key or fact.key
        source_turns = tuple(fact.source_turns)
    if not statement or not statement.strip():
        raise InvalidCommand("promotion needs a memory_id or a statement")
    key = key or f"{kind.replace('_', ' ')}: {' '.join(statement.lower().split()[:6])}"
    new_id = "promoted-" + short_hash(scope, scope_key, key, statement)
    event = MemoryPromoted(
        memory_id=new_id,
        kind=kind,
        scope=scope,
        scope_key=scope_key,
        key=key,
        statement=statement,
        promoted_from=memory_id,
        source_turns=source_turns,
    )
    _append(engine, tenant_id, item_stream(new_id), event, actor)
    return new_id


def resolve_conflict(
    engine: Engine,
    tenant_id: str,
    conflict_id: str,
    chosen_memory_id: str,
    *,
    reason: str = "",
    actor: str | None = None,
) -> None:
    """Record a person's choice of which fact stands in a conflict."""
    check_identifier("tenant_id", tenant_id)
    check_identifier("conflict_id", conflict_id, max_length=MAX_SLOT_ID)  # a slot: scope, its key, a fact's key
    check_identifier("chosen_memory_id", chosen_memory_id)
    with engine.connect() as conn:
        found = facts_queries.by_ids(conn, tenant_id, [chosen_memory_id])
    if not found:
        raise NotFound(f"tenant {tenant_id!r} has no fact {chosen_memory_id!r} (for conflict {conflict_id!r})")
    if found[0].slot_id != conflict_id:
        raise InvalidCommand(f"{chosen_memory_id!r} is not a fact of conflict {conflict_id!r}")
    event = ConflictResolved(
        conflict_id=conflict_id, chosen_memory_id=chosen_memory_id, reason=reason, resolved_by=actor
    )
    _append(engine, tenant_id, conflict_stream(conflict_id), event, actor)


def conflicts(engine: Engine, tenant_id: str, state: str | None = None) -> list[facts_queries.ConflictView]:
    """The tenant's conflicts, optionally only those in one state."""
    check_identifier("tenant_id", tenant_id)
    with engine.connect() as conn:
        return facts_queries.list_conflicts(conn, tenant_id, states=None if state is None else [state])
