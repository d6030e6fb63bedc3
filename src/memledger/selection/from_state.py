"""Candidates from a ledger state folded in memory (as-of selection). Pure.

The live path asks PostgreSQL (full text, vectors, graph); at a past moment the
read models cannot answer, so relevance here is lexical: the share of the
request's content words that an item's text contains, plus the same graph
boosts over the folded entities and relationships.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from memledger.events.catalogue import Scopes
from memledger.events.keys import entity_id, normalise_name
from memledger.projectors.entities import EntityRow
from memledger.projectors.facts_fold import FactRow
from memledger.projectors.graph_queries import shows, users_shown
from memledger.projectors.relationships import RelationshipRow
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
) -> list[Candidate]:
    """Facts of the request's scopes ranked by word overlap (then recency), and the
    graph around the entities the request names (of the user entities, only the
    request's own user's, as the live path)."""
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
    named = [
        e
        for e in entities.values()
        if e.status == "active"
        and shows([e.entity_id], users)
        and any(f" {normalise_name(n)} " in haystack for n in (e.name, *e.aliases) if normalise_name(n))
    ]
    start = {e.entity_id for e in named}
    for rank, e in enumerate(sorted(named, key=lambda e: (-e.mention_count, e.entity_id)), start=1):
        pool[e.entity_id] = Candidate(item=entity_item(e), ranks={"graph": rank}, hops=0)
    if speaks_of_self(request) and scopes.user:
        start.add(entity_id("user", scopes.user))
    _walk(edges, start, pool, users)
    return list(pool.values())


def _add_conflict_partners(facts: Mapping[str, FactRow], pool: dict[str, Candidate]) -> None:
    """The other sides of each conflict a fact in ``pool`` is flagged with, as the
    live path adds them (``candidates.add_conflict_partners``)."""
    best = conflict_ranks(pool.values())
    for row in facts.values():
        if row.conflicted and row.status in LIVE and row.slot_id in best and row.memory_id not in pool:
            item = fact_item(row)
            pool[row.memory_id] = Candidate(item=item, key=row.key, ranks={"conflict": best[row.slot_id]})


def _walk(
    edges: Mapping[str, RelationshipRow], start: set[str], pool: dict[str, Candidate], users: frozenset[str]
) -> None:
    frontier, seen = set(start), set(start)
    rank = 0
    for hop in (1, 2):
        reached: set[str] = set()
        for row in sorted(edges.values(), key=lambda r: (-r.confidence, r.relationship_key)):
            if row.status != "active" or row.relationship_key in pool:
                continue
            if not shows((row.source_entity_id, row.target_entity_id), users):
                continue
            if row.source_entity_id in frontier or row.target_entity_id in frontier:
                rank += 1
                pool[row.relationship_key] = Candidate(item=edge_item(row), ranks={"graph": rank}, hops=hop)
                for node in (row.source_entity_id, row.target_entity_id):
                    if node not in seen:
                        seen.add(node)
                        reached.add(node)
        frontier = reached
