"""Search and graph questions over a tenant's memory, with provenance."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from typing import get_args

import msgspec
from sqlalchemy.engine import Connection, Engine

from memledger.errors import InvalidCommand, InvalidIdentifier
from memledger.events.catalogue import EntityType, Scopes
from memledger.events.keys import entity_id, normalise_name
from memledger.formatting.names import Names
from memledger.projectors.embeddings import queries as embedding_queries
from memledger.projectors.entities import merges as entity_merges
from memledger.projectors.facts import queries as facts_queries
from memledger.projectors.relationships import graph_aging, graph_queries
from memledger.projectors.relationships.graph_queries import Edge, EntityHit
from memledger.selection import candidates, speakers, visibility
from memledger.selection.candidates import QueryVector
from memledger.selection.excerpts import best_cited
from memledger.selection.items import entity_item, fact_item
from memledger.selection.rank import Candidate, fuse
from memledger.selection.types import ITEM_KINDS, SelectedItem
from memledger.selection.words import query_words
from memledger.service import episodes, scope_ids
from memledger.service.context import VectorSearch
from memledger.store import db
from memledger.store.identifiers import check_identifier, check_text

MAX_K = 100  # the most items one search returns
MAX_DEPTH = graph_queries.MAX_DEPTH
# The types an edge's far end may have: the catalogue's, and the speaker's ("user").
ENTITY_TYPES: tuple[str, ...] = (*get_args(EntityType), "user")
_RELATION = re.compile(r"[A-Z][A-Z0-9_]{0,63}")  # events.catalogue.RelationshipObserved.relation
SELF_WORDS = frozenset({"user", "me", "i", "myself"})  # words for the speaker in a graph question


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
    vector_search: VectorSearch | None = None,
    aging: graph_aging.Aging = graph_aging.DEFAULT_AGING,
) -> list[SelectedItem]:
    """The ``k`` best items for ``query`` of ``kinds`` (default: all of ``ITEM_KINDS``):
    facts of the given scopes, entities and relationships (hybrid: full text, vectors
    and the graph), and turns (full text, any of the query's words, and vectors).
    Ranked by ``_rank``: evidence first. Each item cites at most ``MAX_CITED`` source
    turns (the caller's own ids when it gave them), those the query's turn search found
    first (``excerpts.best_cited``), and carries each one's speaker and time
    (``cited``); a turn or a fact of a shared scope also says who said it (``said_by``:
    the request's own stored user id, else "another user" and maybe its first digits,
    never another user's id, which would name their memory; ``speakers``, their names).
    Raw scope keys are looked up by their stored ids. Without ``vector_search`` there is no
    vector channel; with it, vectors of another model than its embedder's raise
    ``EmbeddingMismatch``. ``k`` is 1 to ``MAX_K``; a query with a NUL or a lone surrogate
    is refused (InvalidField naming ``query``), and so is an unknown kind (InvalidIdentifier).
    Of the users' own entities and edges, only the request's user's are found
    (``graph_queries.users_shown``), and of those, none ``aging`` prunes."""
    wanted = _check_search(tenant_id, query, k, kinds)
    scopes = scope_ids.stored_scopes(engine, tenant_id, scopes)
    embedded = wanted & EMBEDDED_KINDS
    # Embedding the query (the longest step) runs while the text and graph channels do.
    wait = vector_search.start(query) if vector_search is not None and embedded else None
    with db.reading(engine) as conn:
        named = episodes.speakers_named(conn, tenant_id, query)
        if named and wait is not None and vector_search is not None:  # who is asked about is not what
            wait = vector_search.start(episodes.without_names(query, named.values()))
        pool = candidates.gather(conn, tenant_id, scopes, query, min_confidence=min_confidence, categories=categories)
        near_turns: dict[str, float] = {}
        if wait is not None and (vector := wait(VECTOR_WAIT_S)) is not None:
            pairs, users = candidates.scope_pairs(scopes), graph_queries.users_shown(scopes.user)
            nearest = _Nearest(conn, tenant_id, pairs, users, min_confidence, categories, aging)
            pool = nearest.add(pool, vector, sorted(embedded - {"turn"}), max(2 * k, candidates.PER_CHANNEL))
            if "turn" in wanted and named is not None:  # None: the tenant has no turn
                near_turns = candidates.vector_turns(conn, tenant_id, vector, max(k * 2, TURNS_READ))
        if "turn" in wanted and named is not None:
            pool += _turns(conn, tenant_id, scopes, query, near_turns, named, limit=max(k * 2, TURNS_READ))
        shown = visibility.keep_visible(conn, tenant_id, scopes, [c for c in pool if c.item.kind in wanted])
        ranked = _rank(shown, query, datetime.now(UTC))
        attached = speakers.attach(conn, tenant_id, [c.item for c in ranked[:k]], every=True)
        return [others_unnamed(item, scopes.user) for item in attached]


def _check_search(tenant_id: str, query: str, k: int, kinds: Iterable[str] | None) -> set[str]:
    """The item kinds a search asks for, once its tenant, query and ``k`` are checked."""
    check_identifier("tenant_id", tenant_id)
    check_text("query", query)
    if not 1 <= k <= MAX_K:
        raise InvalidCommand(f"k must be between 1 and {MAX_K}, not {k}")
    return check_kinds(kinds)


def _turns(
    conn: Connection,
    tenant_id: str,
    scopes: Scopes,
    query: str,
    near_turns: dict[str, float],
    named: dict[str, str],
    *,
    limit: int,
) -> list[Candidate]:
    """The turn channel: turns with any of the query's words (a question rarely has all
    its words in one turn) or near its meaning (``near_turns``), best first."""
    found = episodes.rank_turns(
        conn, tenant_id, query, near_turns, episodes.shareable, limit=limit, speakers=named, scopes=scopes
    )
    channels = ("text", "vector") if near_turns else ("text",)
    return [
        Candidate(item=_turn_item(turn_id, text), ranks=dict.fromkeys(channels, rank))
        for rank, (turn_id, text) in enumerate(found, start=1)
    ]


def others_unnamed(item: SelectedItem, user: str | None) -> SelectedItem:
    """``item`` whose ``said_by`` keeps the request's own user id and puts any other in
    words: a stored user id named as ``user=`` reads that user's memory."""
    if not item.said_by or all(speaker == user for speaker in item.said_by):
        return item
    return msgspec.structs.replace(item, said_by=tuple(speaker_label(s, user) for s in item.said_by))


def speaker_label(speaker: str, user: str | None) -> str:
    """A speaker as an answer to ``user`` shows them: their own id as it is; another's
    stored id by its kind and first 8 digits (as a block does: not usable as a key);
    another's raw key (a tenant that does not hash) as "another user"."""
    if speaker == user:
        return speaker
    return Names().label(speaker) if scope_ids.is_stored(speaker) else "another user"


def check_kinds(kinds: Iterable[str] | None) -> set[str]:
    """The item kinds asked for (None or empty: all); InvalidIdentifier for an unknown one."""
    wanted = set(kinds or ())
    for kind in sorted(wanted - set(ITEM_KINDS), key=str):
        raise InvalidIdentifier("kind", str(kind), f"is not an item kind (the kinds are {', '.join(ITEM_KINDS)})")
    return wanted or set(ITEM_KINDS)


MAX_CITED = 3  # the most source turns a search result cites: evidence, not an item's history
TURNS_READ = 40  # the turns the text channel reads at least: the ranks that choose what items cite


EMBEDDED_KINDS = frozenset({"fact", "entity", "turn"})  # what the embeddings projector gives vectors
VECTOR_WAIT_S = 30.0  # a provider's embedding may be slow; the offline model takes milliseconds
# Nearest neighbours always exist: beyond this cosine distance an item is not taken
# as related to the query, so a query about nothing the tenant said finds nothing.
MAX_VECTOR_DISTANCE = candidates.MAX_VECTOR_DISTANCE
# Reciprocal rank fusion's constant for search (context selection keeps 60). A large
# constant lets an item ranked low by both channels outscore the one a channel put
# first, so every weak word match rides up with the vector channel; a small one lets
# one channel's first places swamp what two channels agree on. The choice and its
# recall figures: docs/benchmarks-context.md, "A held-out set".
SEARCH_RRF_K = 10


def _turn_item(turn_id: str, text: str) -> SelectedItem:
    return SelectedItem(item_id=turn_id, kind="turn", text=text, confidence=1.0, score=0.0, source_turns=(turn_id,))


@dataclass(frozen=True)
class _Nearest:
    """The vector channel of search: the tenant's items nearest the query, ranked by
    their place among all found; a fact only if the request may see it (as the text
    channel would), an entity or a turn of the tenant as found (of the user entities,
    only ``users``: ``graph_queries.users_shown``)."""

    conn: Connection
    tenant_id: str
    scopes: list[tuple[str, str]]
    users: frozenset[str]
    min_confidence: float
    categories: Iterable[str] | None
    aging: graph_aging.Aging

    def add(self, pool: list[Candidate], query: QueryVector, kinds: list[str], k: int) -> list[Candidate]:
        """``pool`` with the facts and entities of ``kinds`` nearest ``query``."""
        found = embedding_queries.nearest(
            self.conn, self.tenant_id, query.floats(), query.model, kinds=kinds, k=k, chain=query.chain
        )
        near = self._as_kept([n for n in found if n.distance <= MAX_VECTOR_DISTANCE])
        rank = {(n.item_kind, n.item_id): i for i, n in enumerate(near, start=1)}
        known = {(c.item.kind, c.item.item_id): c for c in pool}
        ids = {kind: {item_id for of, item_id in rank if of == kind} for kind in EMBEDDED_KINDS}
        for cand in self._candidates(ids["fact"], ids["entity"]):
            key = (cand.item.kind, cand.item.item_id)
            if key in known:
                known[key].ranks.setdefault("vector", rank[key])
            else:
                cand.ranks["vector"] = rank[key]
                pool.append(cand)
        return pool

    def _as_kept(self, near: list[embedding_queries.Neighbour]) -> list[embedding_queries.Neighbour]:
        """``near`` with each entity read as the one it was merged into (the nearest of a
        group ranks it) and without those pruning hides (``self.aging``)."""
        ids = [n.item_id for n in near if n.item_kind == "entity"]
        shown = entity_merges.shown_as(self.conn, self.tenant_id, ids, self.aging) if ids else {}
        out: dict[tuple[str, str], embedding_queries.Neighbour] = {}
        for n in near:
            if n.item_kind == "entity" and n.item_id not in shown:
                continue
            kept = msgspec.structs.replace(n, item_id=shown[n.item_id]) if n.item_kind == "entity" else n
            out.setdefault((kept.item_kind, kept.item_id), kept)
        return list(out.values())

    def _candidates(self, fact_ids: set[str], entity_ids: set[str]) -> Iterator[Candidate]:
        conn, tenant = self.conn, self.tenant_id
        visible = facts_queries.visible_by_ids(
            conn, tenant, self.scopes, fact_ids, min_confidence=self.min_confidence, categories=self.categories
        )
        for hit in visible:
            yield Candidate(item=fact_item(hit), key=hit.key, seen_at=hit.updated_at)
        for entity in graph_queries.entities_by_id(conn, tenant, entity_ids, users=self.users) if entity_ids else []:
            yield Candidate(item=entity_item(entity), seen_at=entity.last_seen_at)


def _rank(pool: list[Candidate], query: str, now: datetime) -> list[Candidate]:
    """A search's order: the evidence the query found first, then what it merely named,
    then the graph around it; each item citing its best turns.

    Context selection and search share the channels but not the question. Here the
    recent channel, which knows nothing of the query, neither adds an item nor raises
    one. Groups, in fused order within each:

    1. evidence: facts and turns, and edges found by words or meaning or sharing a
       word with the query beyond the names it holds;
    2. entities: a person or thing the query names is no answer by itself, and a
       speaker is named in hundreds of turns;
    3. edges reached only by walking from a named entity ("alice USES Go" for "which
       CI builds Phoenix?").

    Each item then cites at most ``MAX_CITED`` of its turns, those the query's turn
    channels ranked first; last, an item whose cited turns are all cited above it goes
    after the rest of its group (``_new_evidence_first``).
    """
    for cand in pool:
        cand.ranks.pop("recent", None)
    ranked = fuse((c for c in pool if c.ranks), now, rrf_k=SEARCH_RRF_K)
    words = set(query_words(query))
    for cand in ranked:
        if cand.hops == 0:  # the named entity's own words are evidence of nothing else
            words -= set(query_words(cand.item.text.split(" (", 1)[0]))
    turn_ranks = {c.item.item_id: i for i, c in enumerate((c for c in ranked if c.item.kind == "turn"), start=1)}
    evidenced: list[Candidate] = []
    named: list[Candidate] = []
    walked: list[Candidate] = []
    for cand in ranked:
        if cand.item.kind != "turn":
            cand.item = msgspec.structs.replace(
                cand.item, source_turns=best_cited(cand.item.source_turns, turn_ranks, MAX_CITED)
            )
        if cand.item.kind == "entity":
            named.append(cand)
        else:
            (evidenced if _has_evidence(cand, words) else walked).append(cand)
    return _new_evidence_first(evidenced, named, walked)


def _new_evidence_first(*groups: list[Candidate]) -> list[Candidate]:
    """Each group in turn, with every item whose turns are all cited by items above it
    moved after the group's others, in order: a fact and the turn it came from, both
    listed, say one thing twice and push out a turn that says another. Nothing is
    dropped, and no item leaves its group."""
    cited: set[str] = set()
    out: list[Candidate] = []
    for group in groups:
        new, repeated = [], []
        for cand in group:
            turns_ = set(cand.item.source_turns)
            if turns_ and turns_ <= cited:
                repeated.append(cand)
            else:
                new.append(cand)
                cited |= turns_
        out += new + repeated
    return out


def _has_evidence(cand: Candidate, words: set[str]) -> bool:
    if set(cand.ranks) - {"graph"}:
        return True
    return not words.isdisjoint(query_words(cand.item.text, limit=64))


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
    scopes: Scopes | None = None,
    every_user: bool = False,
    aging: graph_aging.Aging = graph_aging.DEFAULT_AGING,
) -> GraphAnswer:
    """Relationships around ``entity`` (a name, an entity id, or "user"/"me" for the
    speaker, given ``user``, raw or stored), up to ``depth`` hops (1 to 3), read both ways.
    With ``scopes`` (an agent's request), only the edges one of whose source turns shares
    a scope key with them, as a context block shows; without, the whole tenant's. Of
    the user entities, only the asking user's (``scopes``' user, else ``user``) is shown
    or walked through: another user's is keyed by their stored id, which reads their
    memory (``graph_queries.users_shown``); ``every_user`` (an operator's command line,
    which reads every scope anyway) shows all.

    ``relations`` are upper-cased (``uses`` is USES) and ``entity_types`` lower-cased
    (``TOOL`` is tool); one that cannot be a relation, or a type not in ``ENTITY_TYPES``,
    is refused (InvalidIdentifier naming it), as is a depth out of range (InvalidCommand).
    None, or an empty list, filters nothing. Edge weights decay by ``aging``."""
    check_identifier("tenant_id", tenant_id)
    check_identifier("entity", entity)
    depth = graph_queries.check_depth(depth)
    relations, entity_types = _relations(relations), _entity_types(entity_types)
    if user:
        user = scope_ids.stored_id(engine, tenant_id, "user", user)
    stored = scope_ids.stored_scopes(engine, tenant_id, scopes) if scopes is not None else None
    users = None if every_user else graph_queries.users_shown(stored.user if stored and stored.user else user)
    with db.reading(engine) as conn:
        if names_the_speaker(entity) and user:
            start = [entity_id("user", user)]
            found: EntityHit | None = None
        else:
            found = _entity_named(conn, tenant_id, entity, stored, users)
            if found is None:
                return GraphAnswer(entity=None, edges=[])
            start = [found.entity_id]
        walk = partial(graph_queries.walk, conn, tenant_id, users=users, aging=aging)
        edges = walk(start, depth=depth, relations=relations, entity_types=entity_types)
        if stored is not None:
            hidden = visibility.hidden_turns(conn, tenant_id, stored, (t for e in edges for t in e.source_turns))
            edges = [edge for edge in edges if visibility.shown(edge.source_turns, hidden)]
    return GraphAnswer(entity=found, edges=edges)


def names_the_speaker(entity: str) -> bool:
    """Whether ``entity`` is a word for the speaker ("me", "user"), who is no entity of
    the graph: ``query_graph`` starts from the user's own entity instead."""
    return normalise_name(entity) in SELF_WORDS


def _entity_named(
    conn: Connection, tenant_id: str, entity: str, stored: Scopes | None, users: frozenset[str] | None
) -> EntityHit | None:
    """The entity ``entity`` (an id, else a name) stands for among those the request
    may see: an exact name before a partial one, a merged entity as the one it was
    merged into; None if there is none."""
    words = [w for w in normalise_name(entity).split() if w.isalnum()]
    hits = graph_queries.entities_by_id(conn, tenant_id, [entity], users=users) or graph_queries.named_in(
        conn, tenant_id, words, entity, users=users
    )
    if stored is not None:  # an entity only the request's scopes have heard of
        hidden = visibility.hidden_turns(conn, tenant_id, stored, (t for h in hits for t in h.source_turns))
        hits = [h for h in hits if visibility.shown(h.source_turns, hidden)]
    exact = [h for h in hits if normalise_name(h.name) == normalise_name(entity) or h.entity_id == entity]
    chosen = exact or hits
    if not chosen:
        return None
    found = chosen[0]
    root = entity_merges.roots(conn, tenant_id, [found.entity_id]).get(found.entity_id)
    if root is not None:  # merged: answered as the entity it was merged into
        found = next(iter(graph_queries.entities_by_id(conn, tenant_id, [root], users=users)), found)
    return found


def _relations(relations: Iterable[str] | None) -> list[str] | None:
    """The relations asked for, upper-cased; InvalidIdentifier for one that cannot be a
    relation (whether or not the tenant has edges of it)."""
    wanted = []
    for relation in relations or ():
        upper = relation.upper() if isinstance(relation, str) and relation.isascii() else ""
        if not _RELATION.fullmatch(upper):
            reason = "is not a relation: a letter, then up to 63 letters, digits or underscores (e.g. USES)"
            raise InvalidIdentifier("relation", str(relation), reason)
        wanted.append(upper)
    return wanted or None


def _entity_types(entity_types: Iterable[str] | None) -> list[str] | None:
    """The entity types asked for, lower-cased; InvalidIdentifier for an unknown one."""
    wanted = []
    for entity_type in entity_types or ():
        lower = entity_type.lower() if isinstance(entity_type, str) else ""
        if lower not in ENTITY_TYPES:
            reason = f"is not an entity type (the types are {', '.join(ENTITY_TYPES)})"
            raise InvalidIdentifier("entity_type", str(entity_type), reason)
        wanted.append(lower)
    return wanted or None
