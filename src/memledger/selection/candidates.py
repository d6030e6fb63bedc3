"""Gathering candidates for a request from the read models (through their query
functions; no SQL here) and turning them into ``SelectedItem``s."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

import msgspec
from sqlalchemy.engine import Connection

from memledger.events.catalogue import Scopes
from memledger.events.envelope import Cursor
from memledger.events.keys import entity_id
from memledger.projectors.embeddings import queries as embedding_queries
from memledger.projectors.embeddings.projector import DIM as EMBEDDING_DIM
from memledger.projectors.facts import channels as facts_channels
from memledger.projectors.facts import queries as facts_queries
from memledger.projectors.relationships import graph_aging, graph_queries
from memledger.projectors.turns import projector as turns
from memledger.selection.items import edge_item, entity_item, fact_item
from memledger.selection.rank import SCOPE_ORDER, Candidate, conflict_ranks
from memledger.selection.types import SelectedItem
from memledger.selection.words import query_words, speaks_of_self

PER_CHANNEL = 40
TURNS_PER_CHANNEL = 20  # the turns each channel offers a selection: more than a block quotes
# Nearest neighbours always exist: beyond this cosine distance a fact is not taken as
# related to the request (search's cutoff too), so a request about nothing the person
# said finds nothing by meaning ("What is the capital of Mongolia?" and "I live in
# Munich." are 0.85 apart; "Is there a good bakery in Munich?", 0.52).
MAX_VECTOR_DISTANCE = 0.8


def scope_pairs(scopes: Scopes) -> list[tuple[str, str]]:
    """(scope, key) for each scope the request has, narrowest first."""
    return [(s, key) for s in SCOPE_ORDER if (key := getattr(scopes, s))]


def _add(pool: dict[str, Candidate], item: SelectedItem, channel: str, rank: int, **extra: object) -> Candidate:
    cand = pool.get(item.item_id)
    if cand is None:
        cand = pool[item.item_id] = Candidate(item=item)
    cand.ranks.setdefault(channel, rank)
    for name, value in extra.items():
        if value is not None and getattr(cand, name) is None:
            setattr(cand, name, value)
    return cand


def gather(
    conn: Connection,
    tenant_id: str,
    scopes: Scopes,
    request: str,
    *,
    min_confidence: float,
    categories: Iterable[str] | None,
    edges_per_hop: int = 200,
) -> list[Candidate]:
    """Facts from full text and recency, the other sides of their conflicts, entities
    named in the request and the graph around them (2 hops; the user's own edges when
    the request speaks of "I"/"my"). The vector channel is ``vector_facts``."""
    pool = gather_facts(conn, tenant_id, scopes, request, min_confidence=min_confidence, categories=categories)
    add_conflict_partners(conn, tenant_id, pool)
    add_graph(conn, tenant_id, scopes, request, pool, edges_per_hop=edges_per_hop)
    return list(pool.values())


def gather_facts(
    conn: Connection,
    tenant_id: str,
    scopes: Scopes,
    request: str,
    *,
    min_confidence: float,
    categories: Iterable[str] | None,
) -> dict[str, Candidate]:
    """The facts ``gather`` finds by full text and recency, by item id: one round
    trip. ``add_graph`` adds the rest of ``gather``'s candidates to them."""
    pairs = scope_pairs(scopes)
    pool: dict[str, Candidate] = {}
    cats = None if categories is None else sorted(categories)
    found = facts_channels.channels(
        conn,
        tenant_id,
        pairs,
        query_words(request),
        min_confidence=min_confidence,
        categories=cats,
        text_limit=PER_CHANNEL,
        recent_limit=PER_CHANNEL // 2,
    )  # search_text and recent in one round trip
    for hit in found.text:
        _add(pool, fact_item(hit), "text", hit.rank, key=hit.key, seen_at=hit.updated_at)
    for hit in found.recent:
        _add(pool, fact_item(hit), "recent", hit.rank, key=hit.key, seen_at=hit.updated_at)
    return pool


class QueryVector(msgspec.Struct, frozen=True):
    """A request's vector: what made it, its length and pgvector's text form of it;
    ``chain``, the models of the embedder that made it (a tenant's rows of a fallback
    model among them are no mismatch: ``embedding_queries.check_model``)."""

    model: str
    dim: int
    literal: str
    chain: tuple[str, ...] = ()

    def floats(self) -> list[float]:
        """The vector's numbers, read back from its text form."""
        return [float(v) for v in self.literal[1:-1].split(",")]


def vector_facts(
    conn: Connection,
    tenant_id: str,
    scopes: Scopes,
    query: QueryVector,
    *,
    min_confidence: float,
    categories: Iterable[str] | None,
) -> list[facts_queries.FactHit]:
    """The visible facts among the tenant's ``PER_CHANNEL`` nearest ``query``, nearest
    first, within ``MAX_VECTOR_DISTANCE``: one statement. Raises ``EmbeddingMismatch``
    if the tenant's vectors are another model's."""
    found = (
        facts_channels.nearest(
            conn,
            tenant_id,
            scope_pairs(scopes),
            query.literal,
            query.model,
            k=PER_CHANNEL,
            min_confidence=min_confidence,
            categories=categories,
            max_distance=MAX_VECTOR_DISTANCE,
        )
        if query.dim == EMBEDDING_DIM
        else facts_channels.NearFacts([], 0)
    )
    if found.found == 0:
        embedding_queries.check_model(conn, tenant_id, query.model, query.dim, query.chain)
    return found.hits


def add_vector_hits(pool: dict[str, Candidate], hits: Iterable[facts_queries.FactHit]) -> None:
    """Add ``vector_facts``' hits to ``pool``: channel "vector", ranked by their place
    among the nearest (what a search of those ids would add)."""
    for hit in hits:
        _add(pool, fact_item(hit), "vector", hit.rank, key=hit.key, seen_at=hit.updated_at)


def add_conflict_partners(conn: Connection, tenant_id: str, pool: dict[str, Candidate]) -> None:
    """Add to ``pool`` the other sides of every conflict a fact in it is flagged with
    (a flag saying "both were said" must not come with one side only): one
    statement, and none when no fact in the pool is in conflict. A side found only
    this way ranks in channel "conflict" as its best found side ranks in any."""
    best = conflict_ranks(pool.values())
    if not best:
        return
    for hit in facts_queries.conflict_partners(conn, tenant_id, best):
        if hit.memory_id not in pool:
            _add(pool, fact_item(hit), "conflict", best[hit.slot_id], key=hit.key, seen_at=hit.updated_at)


def add_graph(
    conn: Connection,
    tenant_id: str,
    scopes: Scopes,
    request: str,
    pool: dict[str, Candidate],
    *,
    edges_per_hop: int = 200,
    aging: graph_aging.Aging = graph_aging.DEFAULT_AGING,
) -> None:
    """Add to ``pool`` the entities named in ``request`` and the edges within 2 hops of
    them (and of the user, when the request speaks of "I"/"my"), the
    ``edges_per_hop`` most confident of each hop, ranked by decayed weight; entities
    pruning hides are not among them (``aging``). Entity ids ("type:name") and
    relationship keys ("a|REL|b") never equal a fact's memory id, so this adds
    candidates and changes none that ``gather_facts`` found. Of the user entities, only
    the request's own user's is shown or walked through (``graph_queries.users_shown``)."""
    words = query_words(request)
    users = graph_queries.users_shown(scopes.user)
    named = graph_queries.named_in(conn, tenant_id, words, request, users=users, aging=aging)
    start = {hit.entity_id for hit in named}
    for rank, hit in enumerate(named, start=1):
        _add(pool, entity_item(hit), "graph", rank, hops=0, seen_at=hit.last_seen_at)
    if speaks_of_self(request) and scopes.user:
        start.add(entity_id("user", scopes.user))
    walked = graph_queries.walk(conn, tenant_id, start, depth=2, limit_per_hop=edges_per_hop, users=users, aging=aging)
    # Ranked by weight (confidence decayed since the last reinforcement) within a hop.
    walked.sort(key=lambda edge: (edge.hop, -edge.weight, edge.relationship_key))
    for rank, edge in enumerate(walked, start=1):
        _add(pool, edge_item(edge), "graph", rank, hops=edge.hop, seen_at=edge.last_seen_at)


def text_turns(
    conn: Connection,
    tenant_id: str,
    words: Sequence[str],
    *,
    limit: int = TURNS_PER_CHANNEL,
    until: Cursor | datetime | None = None,
    scopes: Scopes | None = None,
) -> list[turns.Said]:
    """The ``limit`` turns best matching ``words`` (BM25, any of them), best first;
    with ``until``, of those recorded by then; with ``scopes``, of those the request
    may see (sharing a scope key with it)."""
    if not words:
        return []
    seen_from = None if scopes is None else scope_pairs(scopes)
    return turns.search(conn, tenant_id, words, limit=limit, until=until, seen_from=seen_from)


def speakers_among(conn: Connection, tenant_id: str, subjects: Iterable[str]) -> set[str] | None:
    """Those of ``subjects`` (stored user ids) who said a turn; None when the tenant
    has no turn (``turns.speakers_among``)."""
    return turns.speakers_among(conn, tenant_id, subjects)


def vector_turns(conn: Connection, tenant_id: str, query: QueryVector, k: int = TURNS_PER_CHANNEL) -> dict[str, float]:
    """The tenant's ``k`` turns nearest ``query`` within ``MAX_VECTOR_DISTANCE``,
    nearest first: turn id to cosine distance. Ask only of a tenant that has turns: the
    index, shared by every tenant and kind, would be scanned for vectors none of which
    is one."""
    if query.dim != EMBEDDING_DIM:
        return {}
    found = embedding_queries.nearest(
        conn, tenant_id, query.floats(), query.model, kinds=["turn"], k=k, chain=query.chain
    )
    return {n.item_id: n.distance for n in found if n.distance <= MAX_VECTOR_DISTANCE}


def turn_texts(
    conn: Connection, tenant_id: str, turn_ids: Iterable[str], scopes: Scopes | None = None
) -> dict[str, tuple[str, str | None]]:
    """The text and speaker of each of these turns, by id; with ``scopes``, of those the
    request may see (``turns.texts_by_id``)."""
    return turns.texts_by_id(conn, tenant_id, turn_ids, None if scopes is None else scope_pairs(scopes))
