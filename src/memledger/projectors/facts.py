"""The facts projector: facts per tenant, scope and key, and the conflicts among them.

``apply`` loads every fact of every slot a batch touches, folds the batch in
pure Python (``facts_fold``), then writes the changed rows with one upsert per
table: set-wise, so a rebuild does a few statements per thousand events.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import ARRAY, TSVECTOR
from sqlalchemy.engine import Connection

from memledger.events.catalogue import (
    ConflictResolved,
    FactExtracted,
    MemoryPromoted,
    MemoryReinforced,
    MemoryRestored,
    MemoryRetracted,
)
from memledger.events.codec import tag_of
from memledger.events.envelope import Recorded
from memledger.events.keys import slot_id
from memledger.projectors import bulk
from memledger.projectors.base import live_schema, read_models
from memledger.projectors.facts_fold import (
    ConflictRow,
    FactRow,
    FactsState,
    evolve,
    resolve_slot,
)

NAME = "facts"
VERSION = 1
HANDLES = frozenset(
    tag_of(t)
    for t in (
        FactExtracted,
        MemoryPromoted,
        MemoryReinforced,
        MemoryRetracted,
        MemoryRestored,
        ConflictResolved,
    )
)
_TS = sa.DateTime(timezone=True)

facts = sa.Table(
    "facts",
    read_models,
    sa.Column("tenant_id", sa.Text, primary_key=True),
    sa.Column("memory_id", sa.Text, primary_key=True),
    sa.Column("slot_id", sa.Text),
    sa.Column("scope", sa.Text),
    sa.Column("scope_key", sa.Text),
    sa.Column("key", sa.Text),
    sa.Column("statement", sa.Text),
    sa.Column("value", sa.Text),
    sa.Column("category", sa.Text),
    sa.Column("kind", sa.Text),
    sa.Column("promoted_from", sa.Text),
    sa.Column("confidence", sa.Double),
    sa.Column("status", sa.Text),
    sa.Column("conflicted", sa.Boolean),
    sa.Column("superseded_by", sa.Text),
    sa.Column("retracted", sa.Boolean),
    sa.Column("retracted_reason", sa.Text),
    sa.Column("retracted_at", _TS),
    sa.Column("valid_from", _TS),
    sa.Column("stated_valid_to", _TS),
    sa.Column("valid_to", _TS),
    sa.Column("recorded_at", _TS),
    sa.Column("updated_at", _TS),
    sa.Column("first_position", sa.BigInteger),
    sa.Column("last_position", sa.BigInteger),
    sa.Column("reinforcements", sa.Integer),
    sa.Column("source_turns", ARRAY(sa.Text)),
    sa.Column("source_events", ARRAY(sa.Text)),
    sa.Column("tsv", TSVECTOR),
    schema=live_schema(NAME),
)

conflicts = sa.Table(
    "conflicts",
    read_models,
    sa.Column("tenant_id", sa.Text, primary_key=True),
    sa.Column("conflict_id", sa.Text, primary_key=True),
    sa.Column("scope", sa.Text),
    sa.Column("scope_key", sa.Text),
    sa.Column("key", sa.Text),
    sa.Column("state", sa.Text),
    sa.Column("resolution", sa.Text),
    sa.Column("reason", sa.Text),
    sa.Column("memory_ids", ARRAY(sa.Text)),
    sa.Column("winner_ids", ARRAY(sa.Text)),
    sa.Column("manual_choice", sa.Text),
    sa.Column("manual_reason", sa.Text),
    sa.Column("resolved_by", sa.Text),
    sa.Column("updated_at", _TS),
    sa.Column("last_position", sa.BigInteger),
    schema=live_schema(NAME),
)


def _referenced(batch: Sequence[Recorded]) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    """(tenant, memory id) pairs the batch names, and (tenant, slot) pairs it creates."""
    ids: set[tuple[str, str]] = set()
    slots: set[tuple[str, str]] = set()
    for rec in batch:
        event = rec.event
        match event:
            case FactExtracted() | MemoryPromoted():
                ids.add((rec.tenant_id, event.memory_id))
                slots.add((rec.tenant_id, slot_id(event.scope, event.scope_key, event.key)))
            case MemoryReinforced() | MemoryRetracted() | MemoryRestored():
                if event.item_kind == "fact":
                    ids.add((rec.tenant_id, event.item_id))
            case ConflictResolved():
                ids.add((rec.tenant_id, event.chosen_memory_id))
            case _:
                pass
    return ids, slots


def _load_state(tx: Connection, batch: Sequence[Recorded]) -> FactsState:
    ids, slots = _referenced(batch)
    if ids:
        for row in bulk.load(tx, facts, FactRow, sa.tuple_(facts.c.tenant_id, facts.c.memory_id).in_(ids)):
            slots.add((row.tenant_id, row.slot_id))
    state = FactsState()
    if not slots:
        return state
    in_slots = sa.tuple_(facts.c.tenant_id, facts.c.slot_id).in_(slots)
    for row in bulk.load(tx, facts, FactRow, in_slots):
        state.facts[(row.tenant_id, row.memory_id)] = row
    in_conflicts = sa.tuple_(conflicts.c.tenant_id, conflicts.c.conflict_id).in_(slots)
    for c in bulk.load(tx, conflicts, ConflictRow, in_conflicts):
        state.conflicts[(c.tenant_id, c.conflict_id)] = c
    return state


def fold(state: FactsState, batch: Iterable[Recorded]) -> tuple[list[FactRow], list[ConflictRow]]:
    """Apply a batch to loaded state; return the rows to write. Pure."""
    for rec in batch:
        evolve(state, rec)
    by_slot: dict[tuple[str, str], list[FactRow]] = {}
    for row in state.facts.values():
        by_slot.setdefault((row.tenant_id, row.slot_id), []).append(row)
    out_facts: list[FactRow] = []
    out_conflicts: list[ConflictRow] = []
    for key in sorted(state.touched_slots):
        members = sorted(by_slot.get(key, []), key=lambda f: f.first_position)
        if not members:
            continue
        conflict = resolve_slot(members, state.conflicts.get(key))
        out_facts.extend(members)
        if conflict is not None:
            out_conflicts.append(conflict)
    return out_facts, out_conflicts


class FactsProjector:
    """Projects extraction, promotion, reinforcement, retraction and resolution
    events into ``facts`` and ``conflicts``."""

    name = NAME
    version = VERSION
    handles = HANDLES

    def apply(self, tx: Connection, batch: Sequence[Recorded]) -> None:
        rows, conflict_rows = fold(_load_state(tx, batch), batch)
        bulk.upsert(tx, facts, rows)
        bulk.upsert(tx, conflicts, conflict_rows)
