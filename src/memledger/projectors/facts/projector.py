"""The facts projector: facts per tenant, scope and key, and the conflicts among them.

``apply`` loads every fact of every slot a batch touches, folds the batch in
pure Python (``facts_fold``), then writes the changed rows with one upsert per
table: set-wise, so a rebuild does a few statements per thousand events.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import msgspec
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
from memledger.projectors.facts.fold import (
    ConflictRow,
    FactRow,
    FactsState,
    evolve,
    resolve_slot,
)

NAME = "facts"
VERSION = 5  # v2: the facts_recent index; v3: the same turns extracted again are no new mention;
# v4: a retracted fact said again in a new turn comes back; v5: the facts_scoped_words index
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
    sa.Column("slot_id", sa.Text, nullable=False),
    sa.Column("scope", sa.Text, nullable=False),
    sa.Column("scope_key", sa.Text, nullable=False),
    sa.Column("key", sa.Text, nullable=False),
    sa.Column("statement", sa.Text, nullable=False),
    sa.Column("value", sa.Text),
    sa.Column("category", sa.Text, nullable=False),
    sa.Column("kind", sa.Text),
    sa.Column("promoted_from", sa.Text),
    sa.Column("confidence", sa.Double, nullable=False),
    sa.Column("status", sa.Text, nullable=False),
    sa.Column("conflicted", sa.Boolean, nullable=False),
    sa.Column("superseded_by", sa.Text),
    sa.Column("retracted", sa.Boolean, nullable=False),
    sa.Column("retracted_reason", sa.Text),
    sa.Column("retracted_at", _TS),
    sa.Column("valid_from", _TS, nullable=False),
    sa.Column("stated_valid_to", _TS),
    sa.Column("valid_to", _TS),
    sa.Column("recorded_at", _TS, nullable=False),
    sa.Column("updated_at", _TS, nullable=False),
    sa.Column("first_position", sa.BigInteger, nullable=False),
    sa.Column("last_position", sa.BigInteger, nullable=False),
    sa.Column("reinforcements", sa.Integer, nullable=False),
    sa.Column("source_turns", ARRAY(sa.Text), nullable=False),
    sa.Column("source_events", ARRAY(sa.Text), nullable=False),
    sa.Column("tsv", TSVECTOR),
    sa.Column("scoped_tsv", TSVECTOR),  # v5 on: read only when the live copy has it (facts_channels)
    schema=live_schema(NAME),
)

conflicts = sa.Table(
    "conflicts",
    read_models,
    sa.Column("tenant_id", sa.Text, primary_key=True),
    sa.Column("conflict_id", sa.Text, primary_key=True),
    sa.Column("scope", sa.Text, nullable=False),
    sa.Column("scope_key", sa.Text, nullable=False),
    sa.Column("key", sa.Text, nullable=False),
    sa.Column("state", sa.Text, nullable=False),
    sa.Column("resolution", sa.Text, nullable=False),
    sa.Column("reason", sa.Text, nullable=False),
    sa.Column("memory_ids", ARRAY(sa.Text), nullable=False),
    sa.Column("winner_ids", ARRAY(sa.Text), nullable=False),
    sa.Column("manual_choice", sa.Text),
    sa.Column("manual_reason", sa.Text),
    sa.Column("resolved_by", sa.Text),
    sa.Column("updated_at", _TS, nullable=False),
    sa.Column("last_position", sa.BigInteger, nullable=False),
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


class _SlotOf(msgspec.Struct):
    tenant_id: str
    slot_id: str


def _load_state(tx: Connection, batch: Sequence[Recorded]) -> FactsState:
    ids, slots = _referenced(batch)
    for ref in bulk.load_keys(tx, facts, _SlotOf, _FACT_KEY, ids):
        slots.add((ref.tenant_id, ref.slot_id))
    state = FactsState()
    for row in bulk.load_keys(tx, facts, FactRow, _SLOT, slots):
        state.facts[(row.tenant_id, row.memory_id)] = row
    for c in bulk.load_keys(tx, conflicts, ConflictRow, _CONFLICT_KEY, slots):
        state.conflicts[(c.tenant_id, c.conflict_id)] = c
    return state


def fold(state: FactsState, batch: Iterable[Recorded]) -> tuple[list[FactRow], list[ConflictRow]]:
    """Apply a batch to loaded state; return the rows to write: every fact of every
    slot the batch touched, and those slots' conflicts. Pure."""
    for rec in batch:
        evolve(state, rec)
    by_slot: dict[tuple[str, str], list[FactRow]] = {}
    for row in state.facts.values():
        key = (row.tenant_id, row.slot_id)
        if key in state.touched_slots:
            by_slot.setdefault(key, []).append(row)
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


Slots = dict[tuple[str, str], list[FactRow]]


def _resolve_changed(state: FactsState, by_slot: Slots) -> tuple[list[FactRow], list[ConflictRow]]:
    """``fold``'s resolution of the touched slots, returning only the rows that
    differ from before the batch: facts an event changed, facts whose status the
    resolution changed, and conflicts that are new or changed. The rest of a
    touched slot is as it was (most of it, usually), and rewriting it was most
    of the database's work."""
    out_facts: list[FactRow] = []
    out_conflicts: list[ConflictRow] = []
    for key in sorted(state.touched_slots):
        members = sorted(by_slot.get(key, ()), key=lambda f: f.first_position)
        if not members:
            continue
        before = [(f.status, f.conflicted, f.superseded_by, f.valid_to) for f in members]
        old = state.conflicts.get(key)
        old_values = None if old is None else msgspec.structs.astuple(old)
        conflict = resolve_slot(members, old)
        for fact, was in zip(members, before, strict=True):
            now = (fact.status, fact.conflicted, fact.superseded_by, fact.valid_to)
            if now != was or (fact.tenant_id, fact.memory_id) in state.changed_facts:
                out_facts.append(fact)
        if conflict is not None and (
            old_values is None
            or key in state.changed_conflicts  # a person's choice, made on the loaded row
            or msgspec.structs.astuple(conflict) != old_values
        ):
            out_conflicts.append(conflict)
    return out_facts, out_conflicts


def _by_slot(rows: Iterable[FactRow], into: Slots | None = None) -> Slots:
    slots: Slots = {} if into is None else into
    for row in rows:
        slots.setdefault((row.tenant_id, row.slot_id), []).append(row)
    return slots


def _writer(rows: list[FactRow], conflict_rows: list[ConflictRow]) -> Callable[[Connection], None]:
    """What writes the rows as they are now (encoded at once: the rows change later)."""
    facts_json = _encoder.encode(rows) if rows else None
    conflicts_json = _encoder.encode(conflict_rows) if conflict_rows else None

    def write(tx: Connection) -> None:
        if facts_json is not None:
            bulk.upsert_encoded(tx, facts, _FACT_FIELDS, facts_json, keep=_IMMUTABLE)
        if conflicts_json is not None:
            bulk.upsert_encoded(tx, conflicts, _CONFLICT_FIELDS, conflicts_json)

    return write


# Columns a fact never changes once extracted (``facts_fold`` sets them in
# ``new_fact`` only): an update leaves them, and the generated ``tsv`` (of key
# and statement) with them, instead of recomputing the text search vector.
# (``valid_from`` is not one: a retracted fact said again is valid from then, v4.)
_IMMUTABLE = frozenset(
    {
        "slot_id",
        "scope",
        "scope_key",
        "key",
        "statement",
        "value",
        "category",
        "kind",
        "promoted_from",
        "stated_valid_to",
        "recorded_at",
        "first_position",
    }
)
_FACT_KEY = ("tenant_id", "memory_id")
_SLOT = ("tenant_id", "slot_id")
_CONFLICT_KEY = ("tenant_id", "conflict_id")
_FACT_FIELDS = tuple(FactRow.__struct_fields__)
_CONFLICT_FIELDS = tuple(ConflictRow.__struct_fields__)
_encoder = msgspec.json.Encoder()


class FactsProjector:
    """Projects extraction, promotion, reinforcement, retraction and resolution
    events into ``facts`` and ``conflicts``."""

    name = NAME
    version = VERSION
    handles = HANDLES

    def apply(self, tx: Connection, batch: Sequence[Recorded]) -> None:
        state = _load_state(tx, batch)
        for rec in batch:
            evolve(state, rec)
        _writer(*_resolve_changed(state, _by_slot(state.facts.values())))(tx)

    def replayer(self) -> FactsReplay:
        """A fold that keeps every fact in memory between batches (for a rebuild)."""
        return FactsReplay()


class FactsReplay:
    """``FactsProjector.apply`` for a copy that only this object writes, every
    write of which commits in order: the state stays in memory, so nothing is
    read back. ``evolve`` takes the events of a batch a page at a time; ``flush``
    ends the batch (resolves the touched slots) and returns what writes its rows."""

    # Large batches: every batch resolves each slot it touched again and rewrites
    # the facts whose status moved; fewer batches, fewer of both.
    flush_every = 100_000

    def __init__(self) -> None:
        self.state = FactsState()
        self.slots: Slots = {}
        self.written: set[tuple[str, str]] = set()
        self.written_conflicts: set[tuple[str, str]] = set()

    def evolve(self, page: Sequence[Recorded]) -> None:
        state = self.state
        known = len(state.facts)
        for rec in page:
            evolve(state, rec)
        if len(state.facts) > known:  # new facts: dicts keep insertion order
            _by_slot(list(state.facts.values())[known:], self.slots)

    def flush(self) -> Callable[[Connection], None]:
        state = self.state
        rows, conflict_rows = _resolve_changed(state, self.slots)
        for conflict in conflict_rows:
            state.conflicts[(conflict.tenant_id, conflict.conflict_id)] = conflict
        state.touched_slots.clear()
        state.changed_facts.clear()
        state.changed_conflicts.clear()
        changes = (
            bulk.Changes(facts, rows, self.written, keep=_IMMUTABLE),
            bulk.Changes(conflicts, conflict_rows, self.written_conflicts),
        )

        def write(tx: Connection) -> None:
            for change in changes:
                change.write(tx)

        return write
