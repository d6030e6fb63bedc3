"""The entities projector: named entities merged on normalised name + type + tenant."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from datetime import datetime
from functools import lru_cache

import msgspec
import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import ARRAY, TSVECTOR
from sqlalchemy.engine import Connection, Engine

from memledger.events.catalogue import (
    EntitiesMerged,
    EntitiesSplit,
    EntityObserved,
    MemoryReinforced,
    MemoryRestored,
    MemoryRetracted,
)
from memledger.events.codec import tag_of
from memledger.events.envelope import Recorded
from memledger.events.keys import USER_NODE, entity_id
from memledger.projectors import bulk, in_place_upgrade
from memledger.projectors.base import live_schema, read_models
from memledger.projectors.confidence import mention_again, merge_ordered

NAME = "entities"
VERSION = 3  # what each version changed: projections/entities/ and CHANGELOG.md
HANDLES = frozenset(
    tag_of(t)
    for t in (EntityObserved, MemoryReinforced, MemoryRetracted, MemoryRestored, EntitiesMerged, EntitiesSplit)
)
_TS = sa.DateTime(timezone=True)

entities = sa.Table(
    "entities",
    read_models,
    sa.Column("tenant_id", sa.Text, primary_key=True),
    sa.Column("entity_id", sa.Text, primary_key=True),
    sa.Column("name", sa.Text, nullable=False),
    sa.Column("entity_type", sa.Text, nullable=False),
    sa.Column("aliases", ARRAY(sa.Text), nullable=False),
    sa.Column("description", sa.Text),
    sa.Column("mention_count", sa.Integer, nullable=False),
    sa.Column("confidence", sa.Double, nullable=False),
    sa.Column("status", sa.Text, nullable=False),
    sa.Column("first_seen_at", _TS, nullable=False),
    sa.Column("last_seen_at", _TS, nullable=False),
    sa.Column("first_position", sa.BigInteger, nullable=False),
    sa.Column("last_position", sa.BigInteger, nullable=False),
    sa.Column("source_turns", ARRAY(sa.Text), nullable=False),
    sa.Column("tsv", TSVECTOR),
    sa.Column("merged_into", sa.Text),
    sa.Column("merged_at", _TS),
    sa.Column("merge_rule", sa.Text),
    sa.Column("kept_apart", ARRAY(sa.Text), nullable=False),
    schema=live_schema(NAME),
)


class EntityRow(msgspec.Struct):
    """One row of ``entities``."""

    tenant_id: str
    entity_id: str
    name: str
    entity_type: str
    aliases: list[str]
    description: str | None
    mention_count: int
    confidence: float
    status: str
    first_seen_at: datetime
    last_seen_at: datetime
    first_position: int
    last_position: int
    source_turns: list[str]
    merged_into: str | None = None  # the entity this one reads as since a merge (None: itself)
    merged_at: datetime | None = None
    merge_rule: str | None = None
    kept_apart: list[str] = []  # entities a split separated it from: never merged with again


# Pure and costly (NFKC and a regex), and a ledger names few entities many times.
_entity_id = lru_cache(maxsize=1 << 16)(entity_id)


def _observe(row: EntityRow | None, rec: Recorded, event: EntityObserved) -> EntityRow:
    aliases = list(event.aliases)
    if row is None:
        return EntityRow(
            tenant_id=rec.tenant_id,
            entity_id=_entity_id(event.entity_type, event.name),
            name=event.name,
            entity_type=event.entity_type,
            aliases=merge_ordered([], [a for a in aliases if a != event.name]),
            description=event.description or None,
            mention_count=1,
            confidence=round(event.confidence, 6),
            status="active",
            first_seen_at=rec.occurred_at,
            last_seen_at=rec.occurred_at,
            first_position=rec.position,
            last_position=rec.position,
            source_turns=list(dict.fromkeys(event.source_turns)),
        )
    if event.name != row.name:
        aliases.insert(0, event.name)
    if aliases:
        row.aliases = merge_ordered(row.aliases, [a for a in aliases if a != row.name])
    row.description = event.description or row.description
    mention_again(row, event.confidence, event.source_turns)
    _seen(row, rec)
    return row


def _seen(row: EntityRow, rec: Recorded) -> None:
    row.last_seen_at = max(row.last_seen_at, rec.occurred_at)
    row.last_position = rec.position


def evolve(rows: dict[tuple[str, str], EntityRow], rec: Recorded, changed: set[tuple[str, str]]) -> None:
    """Apply one event to ``rows``; references to unknown entities are ignored. Pure."""
    event = rec.event
    match event:
        case EntityObserved():
            key = (rec.tenant_id, _entity_id(event.entity_type, event.name))
            rows[key] = _observe(rows.get(key), rec, event)
            changed.add(key)
        case (
            MemoryReinforced(item_kind="entity")
            | MemoryRetracted(item_kind="entity")
            | MemoryRestored(item_kind="entity")
        ):
            key = (rec.tenant_id, event.item_id)
            row = rows.get(key)
            if row is None:
                return
            if isinstance(event, MemoryReinforced):
                mention_again(row, event.confidence, event.source_turns)
            else:
                row.status = "retracted" if isinstance(event, MemoryRetracted) else "active"
            _seen(row, rec)
            changed.add(key)
        case EntitiesMerged():
            _merge(rows, rec, event, changed)
        case EntitiesSplit():
            _split(rows, rec, event, changed)
        case _:
            pass


def _merge(
    rows: dict[tuple[str, str], EntityRow], rec: Recorded, event: EntitiesMerged, changed: set[tuple[str, str]]
) -> None:
    """Point each merged entity at the kept one. A merge into an unknown or merged
    entity, or of one merged already, of another type or kept apart by a split, is
    ignored (the service refuses it; a race may still append it)."""
    kept = rows.get((rec.tenant_id, event.kept_entity_id))
    if kept is None or kept.merged_into is not None:
        return
    for merged_id in event.merged_entity_ids:
        key = (rec.tenant_id, merged_id)
        row = rows.get(key)
        if row is None or row is kept or row.merged_into is not None or row.entity_type != kept.entity_type:
            continue
        if kept.entity_id in row.kept_apart:
            continue
        row.merged_into, row.merged_at, row.merge_rule = kept.entity_id, rec.occurred_at, event.rule
        changed.add(key)


def _split(
    rows: dict[tuple[str, str], EntityRow], rec: Recorded, event: EntitiesSplit, changed: set[tuple[str, str]]
) -> None:
    """Make each merged entity its own again, and keep both sides apart from now on."""
    kept_key = (rec.tenant_id, event.kept_entity_id)
    kept = rows.get(kept_key)
    for merged_id in event.merged_entity_ids:
        key = (rec.tenant_id, merged_id)
        row = rows.get(key)
        if row is None or row.merged_into != event.kept_entity_id:
            continue
        row.merged_into = row.merged_at = row.merge_rule = None
        row.kept_apart = merge_ordered(row.kept_apart, [event.kept_entity_id])
        changed.add(key)
        if kept is not None:
            kept.kept_apart = merge_ordered(kept.kept_apart, [merged_id])
            changed.add(kept_key)


def _keys(batch: Sequence[Recorded]) -> set[tuple[str, str]]:
    keys: set[tuple[str, str]] = set()
    for rec in batch:
        event = rec.event
        if isinstance(event, EntityObserved):
            keys.add((rec.tenant_id, _entity_id(event.entity_type, event.name)))
        elif isinstance(event, MemoryReinforced | MemoryRetracted | MemoryRestored) and event.item_kind == "entity":
            keys.add((rec.tenant_id, event.item_id))
        elif isinstance(event, EntitiesMerged | EntitiesSplit):
            keys.update((rec.tenant_id, i) for i in (event.kept_entity_id, *event.merged_entity_ids))
    return keys


class EntitiesProjector:
    """Projects EntityObserved, reinforcement, retraction and restore of entities, and
    their merges and splits."""

    name = NAME
    version = VERSION
    handles = HANDLES

    def apply(self, tx: Connection, batch: Sequence[Recorded]) -> None:
        keys = _keys(batch)
        if not keys:
            return
        loaded = bulk.load_keys(tx, entities, EntityRow, ("tenant_id", "entity_id"), keys)
        rows = {(r.tenant_id, r.entity_id): r for r in loaded}
        changed: set[tuple[str, str]] = set()
        for rec in batch:
            evolve(rows, rec, changed)
        bulk.upsert(tx, entities, [rows[k] for k in sorted(changed)])

    def replayer(self) -> EntitiesReplay:
        """A fold that keeps every entity in memory between batches (for a rebuild)."""
        return EntitiesReplay()


class EntitiesReplay:
    """``EntitiesProjector.apply`` for a copy that only this object writes, every
    write of which commits in order: the rows stay in memory, so nothing is read
    back. ``evolve`` takes a batch a page at a time; ``flush`` returns what writes
    the rows the batch changed."""

    def __init__(self) -> None:
        self.rows: dict[tuple[str, str], EntityRow] = {}
        self.changed: set[tuple[str, str]] = set()
        self.written: set[tuple[str, str]] = set()

    def evolve(self, page: Sequence[Recorded]) -> None:
        for rec in page:
            evolve(self.rows, rec, self.changed)

    def flush(self) -> Callable[[Connection], None]:
        changed, self.changed = self.changed, set()
        return bulk.Changes(entities, [self.rows[k] for k in sorted(changed)], self.written).write


class EntityCount(msgspec.Struct, frozen=True):
    """How many of a tenant's entities have a type and a status, and how many of those
    were mentioned fewer than twice."""

    entity_type: str
    status: str
    count: int
    mentioned_once: int


class MentionedEntity(msgspec.Struct, frozen=True):
    """An active entity and how often it was mentioned."""

    entity_id: str
    name: str
    entity_type: str
    mention_count: int


def shown_ids(column: sa.ColumnElement[str], users: Collection[str] | None) -> sa.ColumnElement[bool]:
    """Whether the entity id in ``column`` may be shown: not a user entity outside
    ``users`` (``graph_queries.shows`` in SQL; None: every user's)."""
    if users is None:
        return sa.true()
    return sa.or_(sa.not_(column.startswith(USER_NODE)), column == sa.any_(sa.literal(sorted(users), ARRAY(sa.Text))))


def count_by_type(conn: Connection, tenant_id: str) -> list[EntityCount]:
    """The tenant's entities counted by type and status (every user's), in that order;
    an entity merged into another counts as status "merged". Reads ``conn``'s snapshot;
    writes nothing."""
    e = entities.c
    status = sa.case((e.merged_into.is_not(None), "merged"), else_=e.status).label("status")
    stmt = (
        sa.select(e.entity_type, status, sa.func.count(), sa.func.count().filter(e.mention_count < 2))
        .where(e.tenant_id == tenant_id)
        .group_by(e.entity_type, status)
        .order_by(e.entity_type, status)
    )
    return [EntityCount(*row) for row in conn.execute(stmt).all()]


def most_mentioned(
    conn: Connection, tenant_id: str, limit: int, *, users: Collection[str] | None
) -> list[MentionedEntity]:
    """The ``limit`` active entities mentioned most (ties by id), none merged into
    another; of the user entities, only ``users`` (``shown_ids``). Reads ``conn``'s
    snapshot; writes nothing."""
    e = entities.c
    stmt = (
        sa.select(e.entity_id, e.name, e.entity_type, e.mention_count)
        .where(e.tenant_id == tenant_id, e.status == "active", e.merged_into.is_(None), shown_ids(e.entity_id, users))
        .order_by(e.mention_count.desc(), e.entity_id)
        .limit(limit)
    )
    return [MentionedEntity(*row) for row in conn.execute(stmt).all()]


_UPGRADED_FROM = 2


def upgrade_in_place(engine: Engine) -> bool:
    """Make a live v2 copy v3 where it stands (``projections/entities/v3_from_v2.sql``):
    v3 adds only the merge columns, empty for every event v2 applied, so this equals a
    rebuild and spares one. True if it upgraded; a copy of another version is left."""
    return in_place_upgrade.upgrade(engine, NAME, _UPGRADED_FROM, VERSION)
