"""Search and graph questions over a tenant's memory, with provenance."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

import msgspec
from sqlalchemy.engine import Engine

from memledger.events.catalogue import Scopes
from memledger.events.keys import entity_id, normalise_name
from memledger.projectors import graph_queries, turns
from memledger.projectors.graph_queries import Edge, EntityHit
from memledger.selection import candidates
from memledger.selection.rank import Candidate, fuse
from memledger.selection.types import SelectedItem
from memledger.selection.words import query_words
from memledger.store.identifiers import check_identifier


def search(
    engine: Engine,
    tenant_id: str,
    scopes: Scopes,
    query: str,
    *,
    k: int = 10,
    kinds: Iterable[str] | None = None,
    min_confidence: float = 0.0,
    categories: Iterable[str] | None = None,
) -> list[SelectedItem]:
    """The ``k`` best items for ``query``: facts of the given scopes, entities and
    relationships (hybrid: full text, recency, graph), and turns (full text); each
    cites its source turn ids (the caller's own ids when it gave them)."""
    check_identifier("tenant_id", tenant_id)
    wanted = set(kinds) if kinds is not None else {"fact", "entity", "relationship", "turn"}
    with engine.connect() as conn:
        pool = candidates.gather(conn, tenant_id, scopes, query, min_confidence=min_confidence, categories=categories)
        if "turn" in wanted and (words := query_words(query)):
            # Any of the words, best first: a question rarely has all its words in one turn.
            any_word = " or ".join(words)
            for rank, (turn_id, text, _) in enumerate(turns.search(conn, tenant_id, any_word, limit=k * 2), start=1):
                item = SelectedItem(
                    item_id=turn_id, kind="turn", text=text, confidence=1.0, score=0.0, source_turns=(turn_id,)
                )
                pool.append(Candidate(item=item, ranks={"text": rank}))
    # The recent channel says nothing about the query (context selection wants it;
    # a search ranks what matches): it neither adds an item nor raises its score.
    for cand in pool:
        cand.ranks.pop("recent", None)
    import os
    variant = os.environ.get("SV", "")
    if "support" in variant:
        _support(pool)
    if "noboost" in variant:
        for c in pool:
            c.hops = None
    if "nohop" in variant:
        for c in pool:
            if c.hops and set(c.ranks) == {"graph"}:
                c.hops = None
    matching = (c for c in pool if c.item.kind in wanted and c.ranks)
    ranked = fuse(matching, datetime.now(UTC))
    if "cover" in variant:
        qw = {_stem(w) for w in query_words(query)}
        def cov(c):
            iw = {_stem(w) for w in query_words(c.item.text.replace("_", " "), limit=200)}
            return len(qw & iw) / max(1, len(qw))
        ranked.sort(key=lambda c: -(c.item.score * (0.5 + 0.5 * cov(c))))
    if "demote" in variant:
        words = set(query_words(query))
        if "excl" in variant:
            for c in pool:
                if c.hops == 0:
                    words -= set(query_words(c.item.text.split(" (")[0]))
        ranked.sort(key=lambda c: not _evidence(c, words))
    return [c.item for c in ranked[:k]]


def _stem(w: str) -> str:
    for suf in ("ing", "es", "s", "ed"):
        if w.endswith(suf) and len(w) > len(suf) + 2:
            return w[: -len(suf)]
    return w


def _support(pool: list[Candidate]) -> None:
    best: dict[str, int] = {}
    for c in pool:
        if c.item.kind != "turn":
            rank = c.ranks.get("text")
            if rank is not None:
                for t in c.item.source_turns:
                    best[t] = min(best.get(t, rank), rank)
    for c in pool:
        if c.item.kind == "turn" and c.item.item_id in best:
            c.ranks["cited"] = best[c.item.item_id]


def _evidence(c: Candidate, words: set[str]) -> bool:
    if set(c.ranks) - {"graph"} or c.hops == 0 or c.item.kind == "entity":
        return True
    return bool(words & set(query_words(c.item.text.replace("_", " "), limit=64)))


class GraphAnswer(msgspec.Struct, frozen=True):
    """The entity asked about and the relationships around it, with provenance."""

    entity: EntityHit | None
    edges: list[Edge]


def query_graph(
    engine: Engine,
    tenant_id: str,
    entity: str,
    *,
    depth: int = 1,
    relations: Iterable[str] | None = None,
    entity_types: Iterable[str] | None = None,
    user: str | None = None,
) -> GraphAnswer:
    """Relationships around ``entity`` (a name, an entity id, or "user"/"me" for the
    speaker, given ``user``), up to ``depth`` hops (at most 3), read both ways."""
    check_identifier("tenant_id", tenant_id)
    with engine.connect() as conn:
        if normalise_name(entity) in {"user", "me", "i", "myself"} and user:
            start = [entity_id("user", user)]
            found: EntityHit | None = None
        else:
            hits = graph_queries.entities_by_id(conn, tenant_id, [entity]) or graph_queries.named_in(
                conn, tenant_id, [w for w in normalise_name(entity).split() if w.isalnum()], entity
            )
            exact = [h for h in hits if normalise_name(h.name) == normalise_name(entity) or h.entity_id == entity]
            candidates = exact or hits
            found = candidates[0] if candidates else None
            if found is None:
                return GraphAnswer(entity=None, edges=[])
            start = [found.entity_id]
        edges = graph_queries.walk(conn, tenant_id, start, depth=depth, relations=relations, entity_types=entity_types)
    return GraphAnswer(entity=found, edges=edges)
