"""Queries on the entities and relationships read models: who and what a request
names, and the graph around them (symmetric relations read both ways)."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

import msgspec
import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.engine import Connection
from sqlalchemy.types import NullType

from memledger.errors import InvalidCommand
from memledger.events.keys import USER_NODE, entity_id, normalise_name
from memledger.projectors.entities import merges as entity_merges
from memledger.projectors.entities.projector import entities
from memledger.projectors.relationships import graph_aging
from memledger.projectors.relationships.projector import relationships

MAX_DEPTH = 3


def users_shown(user: str | None) -> frozenset[str]:
    """The user entities an answer to ``user`` (a stored id; None: a request naming no
    user) may hold: their own, and "user:user", the speaker of turns that named no
    user (nobody's id). Another user's entity is keyed by their stored id, which read
    as ``user=`` reads their memory, and its edges are their personal memory anyway."""
    shown = {entity_id("user", "user")}
    if user:
        shown.add(entity_id("user", user))
    return frozenset(shown)


def shows(node_ids: Iterable[str], users: Collection[str] | None) -> bool:
    """Whether an answer may hold an item on these entities: unless one is a user entity
    outside ``users`` (``users_shown``; None: every user's, as an operator inspects)."""
    return users is None or all(not node.startswith(USER_NODE) or node in users for node in node_ids)


def check_depth(depth: int) -> int:
    """``depth`` if a walk may go that far (1 to ``MAX_DEPTH`` hops), else InvalidCommand
    naming it: a depth out of range is refused, never clamped."""
    if not 1 <= depth <= MAX_DEPTH:
        raise InvalidCommand(f"depth must be between 1 and {MAX_DEPTH} hops, not {depth}")
    return depth


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
    weight: float = 0.0  # confidence decayed from last_seen_at to the reading time (graph_aging)


_ENTITY_COLUMNS = (
    entities.c.entity_id,
    entities.c.name,
    entities.c.entity_type,
    sa.type_coerce(entities.c.aliases, NullType()).label("aliases"),  # lists already: no per-element processing
    entities.c.description,
    entities.c.confidence,
    entities.c.mention_count,
    entities.c.last_seen_at,
    sa.type_coerce(entities.c.source_turns, NullType()).label("source_turns"),
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
    sa.type_coerce(relationships.c.source_turns, NullType()).label("source_turns"),
)


def named_in(
    conn: Connection,
    tenant_id: str,
    words: Sequence[str],
    text: str,
    *,
    limit: int = 20,
    users: Collection[str] | None = None,
    aging: graph_aging.Aging | None = None,
) -> list[EntityHit]:
    """Active entities whose name or an alias appears, as whole words, in ``text``; of
    the user entities, only ``users`` (``shows``). An entity merged into another is
    found as the one it was merged into; with ``aging``, entities pruning hides are not
    found (``graph_aging.hidden``)."""
    if not words:
        return []
    haystack = f" {normalise_name(text)} "
    params = {"tenant_id": tenant_id, "tsquery": " | ".join(words), "haystack": haystack}
    hits: list[EntityHit] = []
    any_merged = False  # a hit was merged into another (the row's last column)
    for row in conn.execute(_named_in_statement(aging), params).all():
        hit = EntityHit(*row[:-1])
        names = [hit.name, *hit.aliases]
        if any(f" {n} " in haystack for n in map(normalise_name, names) if n) and shows([hit.entity_id], users):
            hits.append(hit)
            any_merged = any_merged or row[-1] is not None
    if any_merged:
        hits = _as_kept(conn, tenant_id, hits, users)
    return hits[:limit]


def _as_kept(conn: Connection, tenant_id: str, hits: list[EntityHit], users: Collection[str] | None) -> list[EntityHit]:
    """``hits`` with each merged entity replaced by the active one it reads as, each once."""
    root = entity_merges.roots(conn, tenant_id, (h.entity_id for h in hits))
    kept = {k.entity_id: k for k in entities_by_id(conn, tenant_id, set(root.values()), users=users, active=True)}
    out: dict[str, EntityHit] = {}
    for hit in hits:
        chosen = kept.get(root[hit.entity_id]) if hit.entity_id in root else hit
        if chosen is not None:
            out.setdefault(chosen.entity_id, chosen)
    return list(out.values())


# An entity's id ends with its normalised name (keys.entity_id), so the statement keeps
# only entities whose name is in the request or that have aliases, for the test above:
# most entities matching a word of the request (in a name or a description) are neither.
_NAME_IN_ID = sa.func.substr(entities.c.entity_id, sa.func.strpos(entities.c.entity_id, ":") + 1)


# Built once per aging: a statement built per call costs more Python than its round trip.
@lru_cache(maxsize=8)
def _named_in_statement(aging: graph_aging.Aging | None) -> sa.Select[Any]:
    tenant = sa.bindparam("tenant_id", type_=sa.Text)
    stmt = (
        sa.select(*_ENTITY_COLUMNS, entities.c.merged_into)
        .where(
            entities.c.tenant_id == tenant,
            entities.c.status == "active",
            entities.c.tsv.op("@@")(sa.func.to_tsquery("simple", sa.bindparam("tsquery", type_=sa.Text))),
            sa.or_(
                sa.func.strpos(sa.bindparam("haystack", type_=sa.Text), " " + _NAME_IN_ID + " ") > 0,
                sa.func.cardinality(entities.c.aliases) > 0,
            ),
        )
        .order_by(entities.c.mention_count.desc(), entities.c.entity_id)
        .limit(200)
    )
    return stmt if aging is None else stmt.where(sa.not_(graph_aging.hidden(tenant, aging)))


def entities_by_id(
    conn: Connection,
    tenant_id: str,
    entity_ids: Iterable[str],
    *,
    users: Collection[str] | None = None,
    active: bool = False,
) -> list[EntityHit]:
    """Entities by id (active or not, unless ``active``); of the user entities, only
    ``users`` (``shows``)."""
    ids = sorted(i for i in set(entity_ids) if shows([i], users))
    if not ids:
        return []
    stmt = sa.select(*_ENTITY_COLUMNS).where(entities.c.tenant_id == tenant_id, entities.c.entity_id.in_(ids))
    if active:
        stmt = stmt.where(entities.c.status == "active")
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
    users: Collection[str] | None = None,
    at: datetime | None = None,
    aging: graph_aging.Aging = graph_aging.DEFAULT_AGING,
) -> list[Edge]:
    """Active edges reachable from the ``start`` entity ids within ``depth`` hops
    (1 to 3: ``check_depth``), each edge once at the hop it was first reached. Edges are
    followed in both directions; ``entity_types`` filters the far end of an edge, and
    ``users`` the user entities an edge may touch (``shows``): no walk passes another's.

    Each hop reads the ``limit_per_hop`` most confident edges touching its frontier.
    The first two hops are read in one statement (the second hop's frontier worked
    out in SQL exactly as below), so a 2-hop walk costs one round trip, not two. In a
    tenant with merged entities, hops are read one at a time instead, each edge's ends
    read as the entities they were merged into (``_merged_hop``). Each edge's
    ``weight`` is its confidence decayed to ``at`` (default: now) by ``aging``'s half-life.
    """
    depth = check_depth(depth)
    frontier = {node for node in start if shows([node], users)}
    wanted_relations = sorted(set(relations)) if relations is not None else None
    wanted_types = sorted(set(entity_types)) if entity_types is not None else None
    read: dict[int, list[Any]] | None = {}
    if depth >= 2 and frontier:  # it also answers whether the tenant has merges
        read = _two_hops(conn, tenant_id, frontier, wanted_relations, wanted_types, limit_per_hop, users)
    merges = read is None or (depth < 2 and bool(frontier) and entity_merges.has_merges(conn, tenant_id))
    if merges:
        root = entity_merges.roots(conn, tenant_id, frontier)
        frontier = {root.get(node, node) for node in frontier}
    read = {} if read is None else read
    when, half_life = at or datetime.now(UTC), aging.half_life_days
    seen_nodes = set(frontier)
    seen_edges: set[str] = set()
    found: list[Edge] = []
    for hop in range(1, depth + 1):
        if not frontier:
            break
        rows: Sequence[Any]
        if hop in read:
            rows = read[hop]
        elif merges:
            rows = _merged_hop(conn, tenant_id, frontier, wanted_relations, limit_per_hop)
        else:
            rows = _hop(conn, tenant_id, frontier, wanted_relations, limit_per_hop)
        next_frontier: set[str] = set()
        for row in rows:
            weight = graph_aging.edge_weight(row[10], row[12], when, half_life)
            edge = Edge(*row, hop=hop, weight=weight)  # type: ignore[misc]
            if edge.relationship_key in seen_edges:
                continue
            far = edge.target_entity_id if edge.source_entity_id in frontier else edge.source_entity_id
            far_type = edge.target_type if far == edge.target_entity_id else edge.source_type
            if wanted_types is not None and far_type not in wanted_types:
                continue
            if not shows([far], users):  # the near end is in the frontier: shown already
                continue
            seen_edges.add(edge.relationship_key)
            found.append(edge)
            if far not in seen_nodes:
                seen_nodes.add(far)
                next_frontier.add(far)
        frontier = next_frontier
    return found


def _live(relations: bool) -> list[sa.ColumnElement[bool]]:
    """Active edges of the tenant (``tenant_id``), of ``relations`` if asked."""
    r = relationships.c
    where = [r.tenant_id == sa.bindparam("tenant_id", type_=sa.Text), r.status == "active"]
    if relations:
        where.append(r.relation == sa.any_(sa.bindparam("relations", type_=ARRAY(sa.Text))))
    return where


def _touching(nodes: sa.ColumnElement[Any], relations: bool) -> list[sa.ColumnElement[bool]]:
    """Active edges of the tenant with either end in the array ``nodes``."""
    r = relationships.c
    return [*_live(relations), sa.or_(r.source_entity_id == sa.any_(nodes), r.target_entity_id == sa.any_(nodes))]


def _hop(
    conn: Connection, tenant_id: str, frontier: set[str], relations: Sequence[str] | None, limit: int
) -> Sequence[Any]:
    params = {"tenant_id": tenant_id, "frontier": sorted(frontier), "relations": relations, "limit": limit}
    return conn.execute(_hop_statement(relations is not None), params).all()


def _merged_hop(
    conn: Connection, tenant_id: str, frontier: set[str], relations: Sequence[str] | None, limit: int
) -> list[list[Any]]:
    """``_hop`` for a frontier of kept entities: the edges touching them or any entity
    merged into them, their ends read through the merges (``entity_merges.resolve_ends``)."""
    groups = entity_merges.members(conn, tenant_id, frontier)
    rows = _hop(conn, tenant_id, frontier.union(*groups.values()), relations, limit)
    return entity_merges.resolve_ends(conn, tenant_id, rows)


@lru_cache(maxsize=4)
def _hop_statement(relations: bool) -> sa.Select[Any]:
    nodes = sa.bindparam("frontier", type_=ARRAY(sa.Text))
    return (
        sa.select(*_EDGE_COLUMNS)
        .where(*_touching(nodes, relations))
        .order_by(relationships.c.confidence.desc(), relationships.c.relationship_key)
        .limit(sa.bindparam("limit", type_=sa.Integer))
    )


def _two_hops(
    conn: Connection,
    tenant_id: str,
    start: set[str],
    relations: Sequence[str] | None,
    entity_types: Sequence[str] | None,
    limit: int,
    users: Collection[str] | None,
) -> dict[int, list[Any]] | None:
    """The rows hop 1 and hop 2 of ``walk`` read, in their order, in one statement;
    None (and no edge read) when the tenant has merged entities."""
    params = {
        "tenant_id": tenant_id,
        "start": sorted(start),
        "relations": relations,
        "types": entity_types,
        "limit": limit,
        "users": None if users is None else sorted(users),
    }
    out: dict[int, list[Any]] = {1: [], 2: []}
    statement = _two_hops_statement(relations is not None, entity_types is not None, users is not None)
    for row in conn.execute(statement, params).all():
        if row[0] == 0:
            return None
        out[row[0]].append(row[1:])
    return out


@lru_cache(maxsize=8)
def _two_hops_statement(relations: bool, entity_types: bool, users: bool) -> sa.Executable:
    """Hop 2's frontier is the far ends of hop 1's edges (the far end is the target
    when the source is a start node, else the source), of a wanted type, that are
    not start nodes (nor, with ``users``, other user entities): what ``walk``'s loop
    computes from the same rows."""
    r = relationships.c
    nodes = sa.bindparam("start", type_=ARRAY(sa.Text))
    order = (r.confidence.desc(), r.relationship_key)
    limit = sa.bindparam("limit", type_=sa.Integer)
    # A tenant with merges is walked hop by hop (``_merged_hop``): then this statement
    # reads no edge and answers one row of hop 0 instead, saving a round trip to ask.
    merged = entity_merges.any_merged(sa.bindparam("tenant_id", type_=sa.Text))
    hop1 = (
        sa.select(*_EDGE_COLUMNS)
        .where(*_touching(nodes, relations), sa.not_(merged))
        .order_by(*order)
        .limit(limit)
        .cte("hop1")
    )
    far = sa.case((hop1.c.source_entity_id == sa.any_(nodes), hop1.c.target_entity_id), else_=hop1.c.source_entity_id)
    far_type = sa.case((far == hop1.c.target_entity_id, hop1.c.target_type), else_=hop1.c.source_type)
    reached = sa.select(far.label("node")).where(far != sa.all_(nodes)).distinct()
    if entity_types:
        reached = reached.where(far_type == sa.any_(sa.bindparam("types", type_=ARRAY(sa.Text))))
    if users:
        shown = sa.bindparam("users", type_=ARRAY(sa.Text))
        reached = reached.where(sa.or_(sa.not_(far.startswith(USER_NODE)), far == sa.any_(shown)))
    frontier = reached.cte("frontier")
    # The edges touching the frontier, found by joining it with each end's index. (An
    # "= ANY (array built in the statement)" test is not a leakproof qual under
    # row-level security, so PostgreSQL would scan every edge of every tenant.) Each
    # end's best ``limit`` are ranked from its index alone (it holds the status,
    # relation, confidence and key), and only the ``limit`` kept are read whole: a hub
    # touches thousands of edges. An edge with both ends in the frontier is found
    # twice: UNION keeps it once.
    ends = [
        sa.select(r.confidence, r.relationship_key)
        .join_from(frontier, relationships, end == frontier.c.node)
        .where(*_live(relations))
        .order_by(*order)
        .limit(limit)
        .subquery()
        .select()
        for end in (r.source_entity_id, r.target_entity_id)
    ]
    touching = sa.union(*ends).subquery("touching")
    kept = touching.select().order_by(touching.c.confidence.desc(), touching.c.relationship_key).limit(limit)
    top = kept.subquery("top")
    by_key = sa.and_(
        r.tenant_id == sa.bindparam("tenant_id", type_=sa.Text), r.relationship_key == top.c.relationship_key
    )
    hop2_cte = sa.select(*_EDGE_COLUMNS).join_from(top, relationships, by_key).cte("hop2")
    return sa.union_all(
        sa.select(sa.literal(0).label("hop"), *_nulls_of(hop1.c)).where(merged),
        sa.select(sa.literal(1).label("hop"), *hop1.c),
        sa.select(sa.literal(2).label("hop"), *hop2_cte.c),
    ).order_by(sa.literal_column("hop"), sa.literal_column("confidence").desc(), sa.literal_column("relationship_key"))


def _nulls_of(columns: Iterable[sa.ColumnElement[Any]]) -> list[sa.ColumnElement[Any]]:
    """A NULL of each edge column's type, under its name (a row that is no edge)."""
    return [sa.cast(sa.null(), relationships.c[str(c.key)].type).label(c.key) for c in columns]


def edges_by_key(conn: Connection, tenant_id: str, keys: Iterable[str]) -> list[Edge]:
    """Relationships by key (any status), as hop-0 edges."""
    wanted = sorted(set(keys))
    if not wanted:
        return []
    stmt = sa.select(*_EDGE_COLUMNS).where(
        relationships.c.tenant_id == tenant_id, relationships.c.relationship_key.in_(wanted)
    )
    return [Edge(*row, hop=0) for row in conn.execute(stmt).all()]  # type: ignore[call-arg]


def live_edges_from(
    conn: Connection, tenant_id: str, source_entity_id: str, relation: str | None = None
) -> list[tuple[str, str]]:
    """(relationship key, target name) of the live relationships leaving an entity (of
    one relation, when given)."""
    r = relationships
    stmt = sa.select(r.c.relationship_key, r.c.target_name).where(
        r.c.tenant_id == tenant_id, r.c.source_entity_id == source_entity_id, r.c.status == "active"
    )
    if relation is not None:
        stmt = stmt.where(r.c.relation == relation)
    return [(key, target) for key, target in conn.execute(stmt).all()]
