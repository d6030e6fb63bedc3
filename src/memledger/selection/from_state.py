"""Candidates from a ledger state folded in memory (as-of selection). Pure.

The live path asks PostgreSQL (full text, vectors, graph); at a past moment the
read models cannot answer, so relevance here is lexical: the share of the
request's content words that an item's text contains, plus the same graph
boosts over the folded entities and relationships.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime

from memledger.events.catalogue import Scopes
from memledger.events.keys import entity_id, normalise_name
from memledger.projectors.entities.merges import follow
from memledger.projectors.entities.projector import EntityRow
from memledger.projectors.facts.fold import FactRow
from memledger.projectors.relationships import graph_aging
from memledger.projectors.relationships.graph_queries import shows, users_shown
from memledger.projectors.relationships.projector import RelationshipRow
from memledger.selection.items import edge_item, entity_item, fact_item
from memledger.selection.rank import Candidate, conflict_ranks
from memledger.selection.words import query_words, speaks_of_self

LIVE = ("active", "low_confidence")


def _overlap(words: list[str], text: str) -> float:
    present = set(query_words(text, limit=200))
    return sum(1 for w in words if w in present) / len(words) if words else 0.0


def gather(
    facts: Mapping[str, FactRow],
    entities: Mapping[str, EntityRow],
    edges: Mapping[str, RelationshipRow],
    scopes: Scopes,
    request: str,
    *,
    min_confidence: float,
    categories: Iterable[str] | None,
    at: datetime | None = None,
    aging: graph_aging.Aging = graph_aging.DEFAULT_AGING,
) -> list[Candidate]:
    """Facts of the request's scopes ranked by word overlap (then recency), and the
    graph around the entities the request names (of the user entities, only the
    request's own user's, as the live path), read through merges, without the entities
    pruning hides, edges ranked by their weight at ``at`` (default: the state's latest
    sighting), as the live path reads them (``aging``)."""
    wanted = {(s, k) for s in ("session", "project", "user", "org") if (k := getattr(scopes, s))}
    cats = None if categories is None else set(categories)
    words = query_words(request)
    live = [
        row
        for row in facts.values()
        if row.status in LIVE
        and (row.scope, row.scope_key) in wanted
        and row.confidence >= min_confidence
        and (cats is None or row.category in cats)
    ]
    scored = sorted(live, key=lambda r: (-_overlap(words, f"{r.key} {r.statement}"), -r.last_position))
    pool: dict[str, Candidate] = {}
    for rank, row in enumerate(scored[:60], start=1):
        channel = "text" if _overlap(words, f"{row.key} {row.statement}") > 0 else "recent"
        pool[row.memory_id] = Candidate(item=fact_item(row), key=row.key, ranks={channel: rank})
    _add_conflict_partners(facts, pool)
    haystack = f" {normalise_name(request)} "
    users = users_shown(scopes.user)
    graph = _Graph(entities, edges, at, aging)
    said = [
        e
        for e in entities.values()
        if e.status == "active"
        and shows([e.entity_id], users)
        and any(f" {normalise_name(n)} " in haystack for n in (e.name, *e.aliases) if normalise_name(n))
    ]
    named = list({e.entity_id: e for e in map(graph.kept, said) if e is not None and not graph.pruned(e)}.values())
    start = {e.entity_id for e in named}
    for rank, e in enumerate(sorted(named, key=lambda e: (-e.mention_count, e.entity_id)), start=1):
        pool[e.entity_id] = Candidate(item=entity_item(e), ranks={"graph": rank}, hops=0)
    if speaks_of_self(request) and scopes.user:
        start.add(entity_id("user", scopes.user))
    _walk(graph, start, pool, users)
    return list(pool.values())


class _Graph:
    """The folded entities and edges as the live reads see them: merged entities as the
    ones they were merged into, pruning, and edge weights at the reading time."""

    def __init__(
        self,
        entities: Mapping[str, EntityRow],
        edges: Mapping[str, RelationshipRow],
        at: datetime | None,
        aging: graph_aging.Aging,
    ) -> None:
        self.entities, self.edges = entities, edges
        self.parent = {e.entity_id: e.merged_into for e in entities.values() if e.merged_into is not None}
        seen = [e.last_seen_at for e in entities.values()]
        self.aging = aging
        self.since = graph_aging.window_start(max(seen), self.aging) if seen else None
        self.at = at or max([*seen, *(r.last_seen_at for r in edges.values())], default=None)
        self.latest_edge: dict[str, datetime] = {}
        for row in edges.values():
            if row.status == "active":
                for node in (row.source_entity_id, row.target_entity_id):
                    self.latest_edge[node] = max(row.last_seen_at, self.latest_edge.get(node, row.last_seen_at))
        self.kept_ids = set(self.parent.values())

    def root(self, entity: str) -> str:
        return follow(self.parent, entity) if self.parent else entity

    def kept(self, row: EntityRow) -> EntityRow | None:
        """The active entity ``row`` reads as (itself unless merged)."""
        kept = self.entities.get(self.root(row.entity_id), row)
        return kept if kept.status == "active" else None

    def pruned(self, row: EntityRow) -> bool:
        if self.since is None or row.merged_into is not None or row.entity_id in self.kept_ids:
            return False
        latest = self.latest_edge.get(row.entity_id)
        return graph_aging.is_pruned(row.mention_count, row.last_seen_at, latest, self.since, self.aging)

    def weight(self, row: RelationshipRow) -> float:
        if self.at is None:
            return row.confidence
        return graph_aging.edge_weight(row.confidence, row.last_seen_at, self.at, self.aging.half_life_days)


def _add_conflict_partners(facts: Mapping[str, FactRow], pool: dict[str, Candidate]) -> None:
    """The other sides of each conflict a fact in ``pool`` is flagged with, as the
    live path adds them (``candidates.add_conflict_partners``)."""
    best = conflict_ranks(pool.values())
    for row in facts.values():
        if row.conflicted and row.status in LIVE and row.slot_id in best and row.memory_id not in pool:
            item = fact_item(row)
            pool[row.memory_id] = Candidate(item=item, key=row.key, ranks={"conflict": best[row.slot_id]})


def _walk(graph: _Graph, start: set[str], pool: dict[str, Candidate], users: frozenset[str]) -> None:
    frontier, seen = set(start), set(start)
    rank = 0
    ordered = sorted(graph.edges.values(), key=lambda r: (-graph.weight(r), r.relationship_key))
    for hop in (1, 2):
        reached: set[str] = set()
        for row in ordered:
            if row.status != "active" or row.relationship_key in pool:
                continue
            if not shows((row.source_entity_id, row.target_entity_id), users):
                continue
            ends = (graph.root(row.source_entity_id), graph.root(row.target_entity_id))
            if ends[0] in frontier or ends[1] in frontier:
                rank += 1
                pool[row.relationship_key] = Candidate(item=edge_item(row), ranks={"graph": rank}, hops=hop)
                for node in ends:
                    if node not in seen:
                        seen.add(node)
                        reached.add(node)
        frontier = reached
