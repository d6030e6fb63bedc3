"""Queries on the entities and relationships read models: who and what a request
names, and the graph around them (symmetric relations read both ways)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

import msgspec
import sqlalchemy as sa
from sqlalchemy.engine import Connection

from memledger.events.keys import normalise_name
from memledger.projectors.entities import entities
from memledger.projectors.relationships import relationships

MAX_DEPTH = 3


class EntityHit(msgspec.Struct, frozen=True):
    """An entity named in a request."""

    entity_id: str
    name: str
    entity_type: str
    aliases: list[str]
    description: str | None
    confidence: float
    mention_count: int
    last_seen_at: datetime
    source_turns: list[str]


class Edge(msgspec.Struct, frozen=True):
    """A relationship reached by a graph walk, ``hop`` steps from the start."""

    relationship_key: str
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
    last_seen_at: datetime
    source_turns: list[str]
    hop: int


_ENTITY_COLUMNS = (
    entities.c.entity_id,
    entities.c.name,
    entities.c.entity_type,
    entities.c.aliases,
    entities.c.description,
    entities.c.confidence,
    entities.c.mention_count,
    entities.c.last_seen_at,
    entities.c.source_turns,
)
_EDGE_COLUMNS = (
    relationships.c.relationship_key,
    relationships.c.source_entity_id,
    relationships.c.source_name,
    relationships.c.source_type,
    relationships.c.relation,
    relationships.c.target_entity_id,
    relationships.c.target_name,
    relationships.c.target_type,
    relationships.c.is_symmetric,
    relationships.c.context,
    relationships.c.confidence,
    relationships.c.mention_count,
    relationships.c.last_seen_at,
    relationships.c.source_turns,
)


def named_in(conn: Connection, tenant_id: str, words: Sequence[str], text: str, *, limit: int = 20) -> list[EntityHit]:
    """Active entities whose name or an alias appears, as whole words, in ``text``."""
    if not words:
        return []
    query = sa.func.to_tsquery("simple", " | ".join(words))
    stmt = (
        sa.select(*_ENTITY_COLUMNS)
        .where(entities.c.tenant_id == tenant_id, entities.c.status == "active", entities.c.tsv.op("@@")(query))
        .order_by(entities.c.mention_count.desc(), entities.c.entity_id)
        .limit(200)
    )
    haystack = f" {normalise_name(text)} "
    hits = []
    for row in conn.execute(stmt).all():
        hit = EntityHit(*row)
        names = [hit.name, *hit.aliases]
        if any(f" {normalise_name(n)} " in haystack for n in names if normalise_name(n)):
            hits.append(hit)
    return hits[:limit]


def entities_by_id(conn: Connection, tenant_id: str, entity_ids: Iterable[str]) -> list[EntityHit]:
    """Entities by id (active or not)."""
    ids = sorted(set(entity_ids))
    if not ids:
        return []
    stmt = sa.select(*_ENTITY_COLUMNS).where(entities.c.tenant_id == tenant_id, entities.c.entity_id.in_(ids))
    return [EntityHit(*row) for row in conn.execute(stmt).all()]


def walk(
    conn: Connection,
    tenant_id: str,
    start: Iterable[str],
    *,
    depth: int = 2,
    relations: Iterable[str] | None = None,
    entity_types: Iterable[str] | None = None,
    limit_per_hop: int = 200,
) -> list[Edge]:
    """Active edges reachable from the ``start`` entity ids within ``depth`` hops
    (never more than 3), each edge once at the hop it was first reached. Edges are
    followed in both directions; ``entity_types`` filters the far end of an edge."""
    depth = max(1, min(depth, MAX_DEPTH))
    frontier = set(start)
    seen_nodes = set(frontier)
    seen_edges: set[str] = set()
    found: list[Edge] = []
    wanted_relations = sorted(set(relations)) if relations is not None else None
    wanted_types = set(entity_types) if entity_types is not None else None
    for hop in range(1, depth + 1):
        if not frontier:
            break
        ids = sorted(frontier)
        where = [
            relationships.c.tenant_id == tenant_id,
            relationships.c.status == "active",
            sa.or_(relationships.c.source_entity_id.in_(ids), relationships.c.target_entity_id.in_(ids)),
        ]
        if wanted_relations is not None:
            where.append(relationships.c.relation.in_(wanted_relations))
        stmt = (
            sa.select(*_EDGE_COLUMNS)
            .where(*where)
            .order_by(relationships.c.confidence.desc(), relationships.c.relationship_key)
            .limit(limit_per_hop)
        )
        next_frontier: set[str] = set()
        for row in conn.execute(stmt).all():
            edge = Edge(*row, hop=hop)  # type: ignore[call-arg]
            if edge.relationship_key in seen_edges:
                continue
            far = edge.target_entity_id if edge.source_entity_id in frontier else edge.source_entity_id
            far_type = edge.target_type if far == edge.target_entity_id else edge.source_type
            if wanted_types is not None and far_type not in wanted_types:
                continue
            seen_edges.add(edge.relationship_key)
            found.append(edge)
            if far not in seen_nodes:
                seen_nodes.add(far)
                next_frontier.add(far)
        frontier = next_frontier
    return found


def edges_by_key(conn: Connection, tenant_id: str, keys: Iterable[str]) -> list[Edge]:
    """Relationships by key (any status), as hop-0 edges."""
    wanted = sorted(set(keys))
    if not wanted:
        return []
    stmt = sa.select(*_EDGE_COLUMNS).where(
        relationships.c.tenant_id == tenant_id, relationships.c.relationship_key.in_(wanted)
    )
    return [Edge(*row, hop=0) for row in conn.execute(stmt).all()]  # type: ignore[call-arg]
