"""What the ledger said at a past moment, computed from the ledger itself.

Auditors ask "what did memory hold at 10:42" or "at position 81,220": the
answer must not change when a fact is retracted later, so it is folded from the
ledger's events up to that point with the projectors' own pure folds, never read
from today's read models. Events erased since are left out, as the projectors
leave them out: the past is shown without the words a person had erased.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy.engine import Connection

from memledger.events.envelope import START, Cursor, Recorded
from memledger.projectors.entities import projector as entities
from memledger.projectors.entities.projector import EntityRow
from memledger.projectors.facts import projector as facts
from memledger.projectors.facts.fold import ConflictRow, FactRow, FactsState
from memledger.projectors.relationships import projector as relationships
from memledger.projectors.relationships.projector import RelationshipRow
from memledger.store import event_reads

PAGE = 5000
TYPES = sorted(facts.HANDLES | entities.HANDLES | relationships.HANDLES)


@dataclass
class LedgerState:
    """Facts, conflicts, entities and relationships of one tenant at one moment."""

    facts: dict[str, FactRow] = field(default_factory=dict)
    conflicts: dict[str, ConflictRow] = field(default_factory=dict)
    entities: dict[str, EntityRow] = field(default_factory=dict)
    relationships: dict[str, RelationshipRow] = field(default_factory=dict)
    cursor: Cursor = START
    events: int = 0


def _included(rec: Recorded, until: Cursor | datetime) -> bool:
    if isinstance(until, Cursor):
        return rec.cursor <= until
    return rec.recorded_at <= until


def state_at(conn: Connection, tenant_id: str, until: Cursor | datetime) -> LedgerState:
    """Fold the tenant's events up to ``until`` (a ledger cursor, or a time of recording)."""
    fact_state = FactsState()
    entity_rows: dict[tuple[str, str], EntityRow] = {}
    edges = relationships.Rows([])
    state = LedgerState()
    after = START
    while True:
        page = event_reads.read_all(conn, after=after, limit=PAGE, tenant_id=tenant_id, types=TYPES)
        if not page:
            break
        after = page[-1].cursor
        included = [rec for rec in page if _included(rec, until)]
        if included:
            state.cursor = included[-1].cursor
            # Erased events are folded by nobody, as by the projectors: their words are
            # gone, and "[erased]" placeholders would make facts, slots and entities up.
            batch = [rec for rec in included if not rec.erased]
            state.events += len(batch)
            _fold(fact_state, entity_rows, edges, batch)
        if isinstance(until, Cursor) and page[-1].cursor > until:
            break
    state.facts = {memory_id: row for (_, memory_id), row in fact_state.facts.items()}
    state.conflicts = {cid: row for (_, cid), row in fact_state.conflicts.items()}
    state.entities = {eid: row for (_, eid), row in entity_rows.items()}
    state.relationships = {key: row for (_, key), row in edges.by_key.items()}
    return state


def _fold(
    fact_state: FactsState,
    entity_rows: dict[tuple[str, str], EntityRow],
    edges: relationships.Rows,
    batch: list[Recorded],
) -> None:
    fact_batch = [r for r in batch if r.event.__struct_config__.tag in facts.HANDLES]
    if fact_batch:
        _, conflict_rows = facts.fold(fact_state, fact_batch)
        for row in conflict_rows:
            fact_state.conflicts[(row.tenant_id, row.conflict_id)] = row
        fact_state.touched_slots.clear()
    changed: set[tuple[str, str]] = set()
    for rec in batch:
        tag = rec.event.__struct_config__.tag
        if tag in entities.HANDLES:
            entities.evolve(entity_rows, rec, changed)
        if tag in relationships.HANDLES:
            relationships.evolve(edges, rec)
