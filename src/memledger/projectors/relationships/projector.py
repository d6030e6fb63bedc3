"""The relationships projector: typed, directed edges; symmetric ones stored once."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from datetime import datetime
from functools import lru_cache

import msgspec
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.engine import Connection

from memledger.events.catalogue import (
    MemoryReinforced,
    MemoryRestored,
    MemoryRetracted,
    RelationshipObserved,
)
from memledger.events.codec import tag_of
from memledger.events.envelope import Recorded
from memledger.events.keys import SYMMETRIC_RELATIONS, entity_id, relationship_key
from memledger.projectors import bulk
from memledger.projectors.base import live_schema, read_models
from memledger.projectors.confidence import mention_again, merge_ordered
from memledger.projectors.entities.projector import entities, shown_ids

NAME = "relationships"
VERSION = 3  # v2: a retracted edge said again in a new turn comes back; v3: covering end indexes
HANDLES = frozenset(tag_of(t) for t in (RelationshipObserved, MemoryReinforced, MemoryRetracted, MemoryRestored))
_TS = sa.DateTime(timezone=True)

relationships = sa.Table(
    "relationships",
    read_models,
    sa.Column("tenant_id", sa.Text, primary_key=True),
    sa.Column("relationship_key", sa.Text, primary_key=True),
    sa.Column("relationship_ids", ARRAY(sa.Text), nullable=False),
    sa.Column("source_entity_id", sa.Text, nullable=False),
    sa.Column("source_name", sa.Text, nullable=False),
    sa.Column("source_type", sa.Text, nullable=False),
    sa.Column("relation", sa.Text, nullable=False),
    sa.Column("target_entity_id", sa.Text, nullable=False),
    sa.Column("target_name", sa.Text, nullable=False),
    sa.Column("target_type", sa.Text, nullable=False),
    sa.Column("is_symmetric", sa.Boolean, nullable=False),
    sa.Column("context", sa.Text),
    sa.Column("confidence", sa.Double, nullable=False),
    sa.Column("mention_count", sa.Integer, nullable=False),
    sa.Column("status", sa.Text, nullable=False),
    sa.Column("first_seen_at", _TS, nullable=False),
    sa.Column("last_seen_at", _TS, nullable=False),
    sa.Column("first_position", sa.BigInteger, nullable=False),
    sa.Column("last_position", sa.BigInteger, nullable=False),
    sa.Column("source_turns", ARRAY(sa.Text), nullable=False),
    schema=live_schema(NAME),
)


class RelationshipRow(msgspec.Struct):
    """One row of ``relationships``."""

    tenant_id: str
    relationship_key: str
    relationship_ids: list[str]
    source_entity_id: str
    source_name: str
    source_type: str
    relation: str
    target_entity_id: str
    target_name: str
    target_type: str
    is_symmetric: bool
    context: str | None
    confidence: float
    mention_count: int
    status: str
    first_seen_at: datetime
    last_seen_at: datetime
    first_position: int
    last_position: int
    source_turns: list[str]


# Pure and costly (NFKC and a regex per name), and a ledger repeats few edges many
# times (spelt a few ways each: the cache is large enough not to thrash).
_key = lru_cache(maxsize=1 << 18)(relationship_key)
_entity_id = lru_cache(maxsize=1 << 16)(entity_id)


def key_of(event: RelationshipObserved) -> str:
    """The edge an observation belongs to."""
    return _key(event.source_type, event.source_name, event.relation, event.target_type, event.target_name)


def _new(rec: Recorded, event: RelationshipObserved) -> RelationshipRow:
    source = (_entity_id(event.source_type, event.source_name), event.source_name, event.source_type)
    target = (_entity_id(event.target_type, event.target_name), event.target_name, event.target_type)
    symmetric = event.relation in SYMMETRIC_RELATIONS
    if symmetric and target[0] < source[0]:
        source, target = target, source
    return RelationshipRow(
        tenant_id=rec.tenant_id,
        relationship_key=key_of(event),
        relationship_ids=[event.relationship_id],
        source_entity_id=source[0],
        source_name=source[1],
        source_type=source[2],
        relation=event.relation,
        target_entity_id=target[0],
        target_name=target[1],
        target_type=target[2],
        is_symmetric=symmetric,
        context=event.context or None,
        confidence=round(event.confidence, 6),
        mention_count=1,
        status="active",
        first_seen_at=rec.occurred_at,
        last_seen_at=rec.occurred_at,
        first_position=rec.position,
        last_position=rec.position,
        source_turns=list(dict.fromkeys(event.source_turns)),
    )


def _seen(row: RelationshipRow, rec: Recorded) -> None:
    row.last_seen_at = max(row.last_seen_at, rec.occurred_at)
    row.last_position = rec.position


class _Rows:
    """Loaded edges, findable by key or by any relationship id they were observed under."""

    def __init__(self, rows: list[RelationshipRow]) -> None:
        self.by_key = {(r.tenant_id, r.relationship_key): r for r in rows}
        self.by_id = {(r.tenant_id, i): r for r in rows for i in r.relationship_ids}
        self.changed: set[tuple[str, str]] = set()

    def find(self, tenant_id: str, item_id: str) -> RelationshipRow | None:
        return self.by_key.get((tenant_id, item_id)) or self.by_id.get((tenant_id, item_id))

    def put(self, row: RelationshipRow) -> None:
        key = (row.tenant_id, row.relationship_key)
        self.by_key[key] = row
        for rid in row.relationship_ids:
            self.by_id[(row.tenant_id, rid)] = row
        self.changed.add(key)


def evolve(rows: _Rows, rec: Recorded) -> None:
    """Apply one event; references to unknown edges are ignored. Pure."""
    event = rec.event
    if isinstance(event, RelationshipObserved):
        row = rows.by_key.get((rec.tenant_id, key_of(event)))
        if row is None:
            rows.put(_new(rec, event))
            return
        if row.status == "retracted" and not set(event.source_turns) <= set(row.source_turns):
            # Said again in a new turn after it was withdrawn ("I prefer Emacs." once more after
            # "I prefer Vim." retracted it): it holds again. The same turns extracted again do not.
            row.status = "active"
        row.relationship_ids = merge_ordered(row.relationship_ids, (event.relationship_id,))
        row.context = event.context or row.context
        mention_again(row, event.confidence, event.source_turns)
        _seen(row, rec)
        rows.put(row)
    elif isinstance(event, MemoryReinforced | MemoryRetracted | MemoryRestored):
        if event.item_kind != "relationship":
            return
        found = rows.find(rec.tenant_id, event.item_id)
        if found is None:
            return
        if isinstance(event, MemoryReinforced):
            mention_again(found, event.confidence, event.source_turns)
        else:
            found.status = "retracted" if isinstance(event, MemoryRetracted) else "active"
        _seen(found, rec)
        rows.put(found)


def _referenced(batch: Sequence[Recorded]) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    keys: set[tuple[str, str]] = set()
    ids: set[tuple[str, str]] = set()
    for rec in batch:
        event = rec.event
        if isinstance(event, RelationshipObserved):
            keys.add((rec.tenant_id, key_of(event)))
        elif isinstance(event, MemoryReinforced | MemoryRetracted | MemoryRestored) and (
            event.item_kind == "relationship"
        ):
            keys.add((rec.tenant_id, event.item_id))
            ids.add((rec.tenant_id, event.item_id))
    return keys, ids


class RelationshipsProjector:
    """Projects RelationshipObserved, and reinforcement, retraction and restore of edges."""

    name = NAME
    version = VERSION
    handles = HANDLES

    def apply(self, tx: Connection, batch: Sequence[Recorded]) -> None:
        keys, ids = _referenced(batch)
        if not keys:
            return
        loaded = bulk.load_keys(tx, relationships, RelationshipRow, _KEY, keys)
        found = {(r.tenant_id, r.relationship_key) for r in loaded}
        # An id that is no edge's key may be one an edge was observed under.
        loaded += _load_by_ids(tx, [k for k in ids if k not in found])
        rows = _Rows(loaded)
        for rec in batch:
            evolve(rows, rec)
        bulk.upsert(tx, relationships, [rows.by_key[k] for k in sorted(rows.changed)])

    def replayer(self) -> RelationshipsReplay:
        """A fold that keeps every edge in memory between batches (for a rebuild)."""
        return RelationshipsReplay()


class RelationshipsReplay:
    """``RelationshipsProjector.apply`` for a copy that only this object writes,
    every write of which commits in order: the edges stay in memory, so nothing is
    read back. ``evolve`` takes a batch a page at a time; ``flush`` returns what
    writes the edges the batch changed."""

    def __init__(self) -> None:
        self.rows = _Rows([])
        self.written: set[tuple[str, str]] = set()

    def evolve(self, page: Sequence[Recorded]) -> None:
        for rec in page:
            evolve(self.rows, rec)

    def flush(self) -> Callable[[Connection], None]:
        rows = self.rows
        changed, rows.changed = rows.changed, set()
        return bulk.Changes(relationships, [rows.by_key[k] for k in sorted(changed)], self.written).write


_KEY = ("tenant_id", "relationship_key")

_IDS = ("tenant_id", "item_id")
_wanted = bulk.key_list("ids", _IDS)
# Edges observed under any of the ids: one statement for the whole batch, each
# id probing the GIN index on relationship_ids.
_BY_IDS = bulk.as_json(
    sa.select(*(relationships.c[f] for f in RelationshipRow.__struct_fields__)).select_from(
        relationships.join(
            _wanted,
            sa.and_(
                relationships.c.tenant_id == _wanted.c.tenant_id,
                relationships.c.relationship_ids.contains(postgresql.array([_wanted.c.item_id])),
            ),
        )
    )
)


def _load_by_ids(tx: Connection, ids: Sequence[tuple[str, str]]) -> list[RelationshipRow]:
    if not ids:
        return []
    return bulk.fetch(tx, _BY_IDS, RelationshipRow, {"ids": bulk.encode_keys(_IDS, ids)})


class RelationCount(msgspec.Struct, frozen=True):
    """How many of a tenant's edges have a relation and a status."""

    relation: str
    status: str
    count: int


class ConnectedEntity(msgspec.Struct, frozen=True):
    """An entity and its degree: how many active edges touch it or an entity merged into
    it (a self-loop once). Its name and type are those an edge stored for it."""

    entity_id: str
    name: str
    entity_type: str
    degree: int


def count_by_relation(conn: Connection, tenant_id: str) -> list[RelationCount]:
    """The tenant's edges counted by relation and status (every user's), in that order.
    Reads ``conn``'s snapshot; writes nothing."""
    r = relationships.c
    stmt = (
        sa.select(r.relation, r.status, sa.func.count())
        .where(r.tenant_id == tenant_id)
        .group_by(r.relation, r.status)
        .order_by(r.relation, r.status)
    )
    return [RelationCount(*row) for row in conn.execute(stmt).all()]


def _active_ends(tenant_id: str) -> sa.Subquery:
    """Each end of the tenant's active edges: (entity_id, name, entity_type), one row
    per edge and end, the id read as the entity it was merged into (one merge deep: the
    rules merge into entities that were not merged); a self-loop's target is its source,
    so counted once."""
    r = relationships.c
    live = (r.tenant_id == tenant_id, r.status == "active")
    sources = sa.select(
        r.source_entity_id.label("entity_id"), r.source_name.label("name"), r.source_type.label("entity_type")
    ).where(*live)
    targets = sa.select(r.target_entity_id, r.target_name, r.target_type).where(
        *live, r.target_entity_id != r.source_entity_id
    )
    said = sa.union_all(sources, targets).subquery("said")
    e = entities.c
    merged = sa.and_(e.tenant_id == tenant_id, e.entity_id == said.c.entity_id)
    resolved = sa.func.coalesce(e.merged_into, said.c.entity_id).label("entity_id")
    return (
        sa.select(resolved, said.c.name, said.c.entity_type)
        .select_from(said.outerjoin(entities, merged))
        .subquery("ends")
    )


def most_connected(
    conn: Connection, tenant_id: str, limit: int, *, users: Collection[str] | None
) -> list[ConnectedEntity]:
    """The ``limit`` entities with the highest degree (ties by id); of the user entities,
    only ``users`` (``entities.shown_ids``). Reads ``conn``'s snapshot; writes nothing."""
    ends = _active_ends(tenant_id)
    degree = sa.func.count()
    stmt = (
        sa.select(ends.c.entity_id, sa.func.min(ends.c.name), sa.func.min(ends.c.entity_type), degree)
        .where(shown_ids(ends.c.entity_id, users))
        .group_by(ends.c.entity_id)
        .order_by(degree.desc(), ends.c.entity_id)
        .limit(limit)
    )
    return [ConnectedEntity(*row) for row in conn.execute(stmt).all()]


def degrees(conn: Connection, tenant_id: str, entity_ids: Iterable[str]) -> dict[str, int]:
    """The degree of each of ``entity_ids`` that has an active edge (absent: none).
    Reads ``conn``'s snapshot; writes nothing."""
    ids = sorted(set(entity_ids))
    if not ids:
        return {}
    ends = _active_ends(tenant_id)
    stmt = sa.select(ends.c.entity_id, sa.func.count()).where(ends.c.entity_id.in_(ids)).group_by(ends.c.entity_id)
    return {str(entity): int(count) for entity, count in conn.execute(stmt).all()}


# Public name for folds outside the projector (as-of reconstruction in service.history).
Rows = _Rows
