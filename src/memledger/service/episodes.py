"""The episodic channel: the turns that speak to a request, for search and for the block.

Extraction misses things, offline above all, so a request about something said
earlier must be able to get the turn that said it. Turns are found by the request's
words (BM25) and by its meaning (vectors) and ordered by ``rank.blend``.

A person the request names who spoke in the tenant's turns ("What did Noor adopt?")
is who said it, not what was said: their name is left out of the words searched
(in a long conversation it is in every "Take care, Noor!"), and the turns they said
come first among equals. A speaker is recognised by their name's stored id, the one
recording a turn with that name as its user key gave it; no name is stored for it.

The block quotes the best of them, where the request may see them (as ``visibility``),
they hold no credential and do not read as orders, and what they said still stands.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime

import msgspec
from sqlalchemy.engine import Connection

from memledger.events.catalogue import Scopes
from memledger.events.envelope import Cursor
from memledger.extraction.secrets import find_secret
from memledger.formatting.neutralise import neutralise
from memledger.projectors.facts import queries as facts_queries
from memledger.projectors.facts.fold import FactRow
from memledger.projectors.facts.queries import FactHit
from memledger.selection import candidates
from memledger.selection.candidates import QueryVector
from memledger.selection.excerpts import turn_item
from memledger.selection.rank import Candidate, blend, fuse
from memledger.selection.types import SelectedItem
from memledger.selection.words import query_words
from memledger.service import scope_ids

STANDING = frozenset({"active", "low_confidence"})  # a fact's statuses that still stand
# A capitalised word, maybe followed by others: the names a request may call a speaker by.
_NAME = re.compile(r"\b[A-Z][\w'\u2019-]*(?:\s+[A-Z][\w'\u2019-]*)?")
_POSSESSIVE = re.compile(r"['\u2019]s?$")
_MAX_NAMES = 8


class Nearby(msgspec.Struct, frozen=True):
    """What the request's vector found: visible facts and turns (id to distance)."""

    facts: list[FactHit]
    turns: dict[str, float]


NOTHING_NEAR = Nearby([], {})


def nearby(
    conn: Connection,
    tenant_id: str,
    scopes: Scopes,
    query: QueryVector,
    *,
    min_confidence: float,
    categories: Iterable[str] | None,
    with_turns: bool,
) -> Nearby:
    """The visible facts (``candidates.vector_facts``) and, ``with_turns`` (the tenant
    has some: ``speakers_named``), the turns nearest ``query``: one or two statements."""
    facts = candidates.vector_facts(
        conn, tenant_id, scopes, query, min_confidence=min_confidence, categories=categories
    )
    return Nearby(facts, candidates.vector_turns(conn, tenant_id, query) if with_turns else {})


def rank_turns(
    conn: Connection,
    tenant_id: str,
    request: str,
    near: Mapping[str, float],
    keep: Callable[[str], bool],
    *,
    limit: int = candidates.TURNS_PER_CHANNEL,
    until: Cursor | datetime | None = None,
    speakers: Mapping[str, str] | None = None,
    scopes: Scopes | None = None,
) -> list[tuple[str, str]]:
    """(turn id, text) of the turns for ``request``, best first: those its words find
    (recorded by ``until``, if given; a speaker's name is not searched as a word) and
    ``near`` (found by meaning), that ``scopes`` may see (if given) and whose text
    ``keep`` keeps, ordered by ``rank.blend`` with the turns of a speaker the request
    names (``speakers``, else looked up) favoured."""
    if speakers is None:
        speakers = speakers_named(conn, tenant_id, request) or {}
    names = {word for name in speakers.values() for word in query_words(name)}
    words = [word for word in query_words(request) if word not in names]
    said = candidates.text_turns(conn, tenant_id, words, limit=limit, until=until, scopes=scopes)
    found = {hit.turn_id: (hit.text, hit.subject) for hit in said}
    missing = [turn for turn in near if turn not in found]
    if missing:
        found |= candidates.turn_texts(conn, tenant_id, missing, scopes)
    kept = {turn for turn, (text, _) in found.items() if keep(text)}
    scores = {hit.turn_id: hit.score for hit in said if hit.turn_id in kept}
    favoured = {turn for turn in kept if found[turn][1] in speakers}
    order = blend(scores, {t: d for t, d in near.items() if t in kept}, candidates.MAX_VECTOR_DISTANCE, favoured)
    return [(turn, found[turn][0]) for turn in order]


def turns_for(
    conn: Connection,
    tenant_id: str,
    scopes: Scopes,
    request: str,
    near: Mapping[str, float],
    now: datetime,
    *,
    until: Cursor | datetime | None = None,
    facts_then: Mapping[str, FactRow] | None = None,
    speakers: Mapping[str, str] | None = None,
) -> list[SelectedItem]:
    """The turns a block may quote for ``request``, best first (``rank_turns``, of those
    ``scopes`` may see). A turn whose facts were all withdrawn (superseded or retracted:
    in ``facts_then``, the facts as of ``until``, or else now) is not quoted: what it
    said no longer stands, and its newer word is quoted instead."""
    ranked = rank_turns(conn, tenant_id, request, near, quotable, until=until, speakers=speakers, scopes=scopes)
    ids = {turn for turn, _ in ranked}
    gone = _withdrawn(conn, tenant_id, ids) if facts_then is None else _withdrawn_then(facts_then, ids)
    channels = ("text", "vector") if near else ("text",)
    pool = [
        Candidate(item=turn_item(turn, text, request), ranks=dict.fromkeys(channels, rank))
        for rank, (turn, text) in enumerate(((t, x) for t, x in ranked if t not in gone), start=1)
    ]
    return [c.item for c in fuse(pool, now)]


def shareable(text: str) -> bool:
    """Whether search may show a turn: not blank, and holding no credential. The secret
    guard keeps such a turn out of memory; search would hand it whole to whoever asks
    within its scopes, and to their model. It stays in the ledger, where provenance
    shows it to an auditor, and erasure removes it."""
    return bool(text.strip()) and find_secret(text) is None


def quotable(text: str) -> bool:
    """Whether a block may quote a turn: shareable, and not reading as an order
    (``neutralise``): a turn that asks to forget something, or tells the model what to
    do, is no evidence of what was said and would bring back what it asked to forget."""
    return shareable(text) and not neutralise(text).suspicious


def speakers_named(conn: Connection, tenant_id: str, request: str) -> dict[str, str] | None:
    """The speakers ``request`` names: stored user id to the name it used; None when
    the tenant has no turn, so there is nothing to quote. One statement."""
    named: dict[str, str] = {}
    for match in _NAME.finditer(request):
        whole = _POSSESSIVE.sub("", match.group(0))
        for name in dict.fromkeys([whole, *whole.split()]):
            if len(named) < _MAX_NAMES and len(name) <= scope_ids.MAX_RAW_LENGTH:
                named.setdefault(scope_ids.stored_id(conn, tenant_id, "user", name), name)
    spoke = candidates.speakers_among(conn, tenant_id, named)
    return None if spoke is None else {stored: name for stored, name in named.items() if stored in spoke}


def without_names(request: str, names: Iterable[str]) -> str:
    """``request`` without the speakers' ``names`` (and their possessive "'s"), for
    searching by meaning: a sentence model puts every short turn holding a name near
    any question holding it. ``request`` itself when nothing else would be left."""
    stripped = request
    for name in sorted(set(names), key=len, reverse=True):
        stripped = re.sub(rf"\b{re.escape(name)}(?:['\u2019]s?)?(?!\w)", " ", stripped)
    stripped = " ".join(stripped.split())
    return stripped if query_words(stripped) else request


def _withdrawn(conn: Connection, tenant_id: str, turn_ids: set[str]) -> set[str]:
    return facts_queries.withdrawn_turns(conn, tenant_id, turn_ids) if turn_ids else set()


def _withdrawn_then(facts: Mapping[str, FactRow], turn_ids: set[str]) -> set[str]:
    """``facts_queries.withdrawn_turns`` over facts folded in memory (as of a moment)."""
    standing = {t for f in facts.values() if f.status in STANDING for t in f.source_turns}
    cited = {t for f in facts.values() for t in f.source_turns if t in turn_ids}
    return cited - standing
