"""Statistics of a tenant's graph: how many entities and relationships of each kind,
the best-connected and most-mentioned entities, and how many were mentioned once."""

from __future__ import annotations

from collections.abc import Iterable

import msgspec
from sqlalchemy.engine import Engine

from memledger.errors import InvalidCommand
from memledger.projectors.entities import merges as entity_merges
from memledger.projectors.entities import projector as entities
from memledger.projectors.relationships import graph_aging, graph_queries
from memledger.projectors.relationships import projector as relationships
from memledger.service import scope_ids
from memledger.store import db
from memledger.store.identifiers import check_identifier

MAX_TOP = 100  # the longest top list one answer holds


class TopEntity(msgspec.Struct, frozen=True):
    """An entity of a top list: its active edges (``degree``) and its mentions (0 for a
    user's entity, which only edges name: it has no row of its own)."""

    entity_id: str
    name: str
    entity_type: str
    degree: int
    mention_count: int


class GraphStats(msgspec.Struct, frozen=True):
    """Counts over the tenant's whole graph (every user's entities included), and top
    lists that hold no other user's entity. ``entities`` and ``relationships`` count the
    active ones; the ``*_by_*`` maps count every status (active, retracted).
    ``mentioned_once`` counts the active entities mentioned fewer than twice, and
    ``mentioned_once_share`` is their share of ``entities`` (0 when there are none).
    ``merged_entities`` counts the entities that read as another since a merge (status
    "merged" in ``entities_by_type``, not in ``entities``); ``hidden_entities`` the
    active ones pruning hides from selection and search (``graph_aging``)."""

    tenant_id: str
    entities: int
    relationships: int
    entities_by_type: dict[str, dict[str, int]]
    relationships_by_relation: dict[str, dict[str, int]]
    mentioned_once: int
    mentioned_once_share: float
    top_by_degree: list[TopEntity]
    top_by_mentions: list[TopEntity]
    merged_entities: int = 0
    hidden_entities: int = 0


def check_top(top: int) -> int:
    """``top`` if a top list may be that long (1 to ``MAX_TOP``), else InvalidCommand."""
    if not 1 <= top <= MAX_TOP:
        raise InvalidCommand(f"top must be between 1 and {MAX_TOP} entities, not {top}")
    return top


def graph_stats(
    engine: Engine,
    tenant_id: str,
    *,
    top: int = 10,
    user: str | None = None,
    aging: graph_aging.Aging = graph_aging.DEFAULT_AGING,
) -> GraphStats:
    """Statistics of ``tenant_id``'s graph, read in one snapshot. The top lists name
    ``top`` entities each; of the user entities, only ``user``'s (raw or stored) and the
    nameless speaker's, as every answer (``graph_queries.users_shown``): another user's
    entity is keyed by their stored id. Counts include every user's; ``aging`` decides
    which entities are hidden."""
    check_identifier("tenant_id", tenant_id)
    check_top(top)
    if user:
        user = scope_ids.stored_id(engine, tenant_id, "user", user)
    users = graph_queries.users_shown(user)
    with db.reading(engine) as conn:
        entity_counts = entities.count_by_type(conn, tenant_id)
        relation_counts = relationships.count_by_relation(conn, tenant_id)
        connected = relationships.most_connected(conn, tenant_id, top, users=users)
        mentioned = entities.most_mentioned(conn, tenant_id, top, users=users)
        known = graph_queries.entities_by_id(conn, tenant_id, (c.entity_id for c in connected), users=users)
        degree_of = relationships.degrees(conn, tenant_id, (m.entity_id for m in mentioned))
        hidden = graph_aging.hidden_count(conn, tenant_id, aging)
        merged = entity_merges.merge_summary(conn, tenant_id).merged
    by_degree = _with_mentions(connected, {hit.entity_id: hit for hit in known})
    by_mentions = [
        TopEntity(m.entity_id, m.name, m.entity_type, degree_of.get(m.entity_id, 0), m.mention_count) for m in mentioned
    ]
    active = [c for c in entity_counts if c.status == "active"]
    total = sum(c.count for c in active)
    once = sum(c.mentioned_once for c in active)
    return GraphStats(
        tenant_id=tenant_id,
        entities=total,
        relationships=sum(c.count for c in relation_counts if c.status == "active"),
        entities_by_type=_nested((c.entity_type, c.status, c.count) for c in entity_counts),
        relationships_by_relation=_nested((c.relation, c.status, c.count) for c in relation_counts),
        mentioned_once=once,
        mentioned_once_share=round(once / total, 4) if total else 0.0,
        top_by_degree=by_degree,
        top_by_mentions=by_mentions,
        merged_entities=merged,
        hidden_entities=hidden,
    )


def _with_mentions(
    connected: Iterable[relationships.ConnectedEntity], known: dict[str, graph_queries.EntityHit]
) -> list[TopEntity]:
    """The best-connected entities with their mentions, and the name their entity row
    holds (an edge stores the name it was said with)."""
    top = []
    for c in connected:
        hit = known.get(c.entity_id)
        name, mentions = (hit.name, hit.mention_count) if hit else (c.name, 0)
        top.append(TopEntity(c.entity_id, name, c.entity_type, c.degree, mentions))
    return top


def _nested(counts: Iterable[tuple[str, str, int]]) -> dict[str, dict[str, int]]:
    """{kind: {status: count}} from (kind, status, count) rows."""
    nested: dict[str, dict[str, int]] = {}
    for kind, status, count in counts:
        nested.setdefault(kind, {})[status] = count
    return nested
