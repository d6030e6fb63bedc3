"""What a person asks the assistant to forget: "Forget what I said about my birthday."

The extraction worker reads such a request from a user's turn (``topics``) and
retracts what that person said about it (``retractions``): each live fact of the
turn's session, project or user scope whose every source turn is theirs and whose
words hold every content word of the topic, and each of their own relationships to
a thing the topic names. The retractions are events of the turn's extraction, so a
rebuild, an as-of selection and provenance all see them; ``restore`` undoes one.

Facts are read from the facts read model, from the ledger past its checkpoint (said
but not yet projected), and from this batch's earlier turns: a request to forget
is honoured whether or not the projectors have caught up.

Nothing is forgotten for a request without a content word ("forget everything" is
an erasure: ``memledger erase``), nor another person's words, nor the org scope's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Final

import msgspec
from sqlalchemy.engine import Connection

from memledger.events.catalogue import Event, FactExtracted, MemoryPromoted, MemoryRetracted, RelationshipObserved
from memledger.events.envelope import START
from memledger.events.keys import entity_id, slot_id
from memledger.extraction.directives import forget_topic
from memledger.extraction.patterns import split_sentences, word_set
from memledger.extraction.protocol import TurnExtraction, TurnText
from memledger.projectors import checkpoints
from memledger.projectors.facts import projector as facts_projector
from memledger.projectors.facts import queries as facts_queries
from memledger.projectors.relationships import graph_queries
from memledger.store import event_reads

_WORD: Final = re.compile(r"[^\W_]+")
_NOT_CONTENT: Final = word_set(
    "i im me my mine myself you your we our us that this these those what which who whom when where how why "
    "said say told tell about the a an is am are was were be been to of in on at for and or with it its "
    "please just all any everything anything something thing things stuff being having"
)


def topics(text: str) -> list[str]:
    """What a user's turn asks to forget, one topic per request ("my birthday")."""
    return [topic for sentence in split_sentences(text) if (topic := forget_topic(sentence))]


def words(text: str) -> frozenset[str]:
    """The content words of ``text``, lower-cased, a plural's "s" dropped."""
    found = (w for w in _WORD.findall(text.lower().replace("'", "")) if w not in _NOT_CONTENT)
    return frozenset(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in found)


def retractions(
    conn: Connection, turn: TurnText, asked: Sequence[str], earlier: Iterable[Event]
) -> list[MemoryRetracted]:
    """The retractions that honour ``asked`` (``topics`` of ``turn``): the speaker's
    matching live facts and relationships. ``earlier``: this batch's events before it.
    A turn whose speaker is unknown (no subject, no user) forgets nothing: whose words
    to forget cannot be told."""
    wanted = [w for w in (words(topic) for topic in asked) if w]
    if not wanted or not turn.speaker:
        return []
    before = list(earlier)
    reason = "the speaker asked to forget it"
    found = [
        MemoryRetracted(item_id=memory_id, item_kind="fact", reason=reason, source_turns=(turn.turn_id,))
        for memory_id in _facts(conn, turn, wanted, before)
    ]
    found += [
        MemoryRetracted(item_id=key, item_kind="relationship", reason=reason, source_turns=(turn.turn_id,))
        for key in _edges(conn, turn, wanted, before)
    ]
    return found


def without_forgotten(found: TurnExtraction, asked: Sequence[str]) -> TurnExtraction:
    """``found`` (the turn's own candidates) without the facts on a topic the turn asks
    to forget, nor relationships to what it names: a model may draw "the user uses Vim"
    from "Forget that I use Vim." (the heuristic extractor skips such sentences)."""
    wanted = [w for w in (words(topic) for topic in asked) if w]
    if not wanted:
        return found
    return msgspec.structs.replace(
        found,
        facts=tuple(f for f in found.facts if not _about(wanted, f.key, f.statement, f.value)),
        relationships=tuple(r for r in found.relationships if not _names(wanted, r.target_name)),
    )


def _pairs(turn: TurnText) -> list[tuple[str, str]]:
    scopes = turn.scopes
    return [(kind, key) for kind in ("session", "project", "user") if (key := getattr(scopes, kind))]


def _about(wanted: list[frozenset[str]], *texts: str | None) -> bool:
    said = words(" ".join(t for t in texts if t))
    return any(topic <= said for topic in wanted)


def _facts(conn: Connection, turn: TurnText, wanted: list[frozenset[str]], before: list[Event]) -> list[str]:
    """The ids of the speaker's live facts on a wanted topic, in the turn's scopes, and of
    the speaker's facts on the same keys they superseded: forgetting "I'm pescatarian"
    must not bring back the "I'm vegetarian" it replaced (a retraction restores it)."""
    pairs = set(_pairs(turn))
    rows = facts_queries.live_and_superseded(conn, turn.tenant_id, pairs)
    matched: dict[str, tuple[tuple[str, ...], str]] = {}  # memory id -> (source turns, slot)
    for row in rows:
        if row.status != "superseded" and _about(wanted, row.key, row.statement, row.value):
            matched[row.memory_id] = (tuple(row.source_turns), row.slot_id)
    for event in [*_unprojected(conn, turn.tenant_id), *before]:
        if not isinstance(event, FactExtracted | MemoryPromoted) or (event.scope, event.scope_key) not in pairs:
            continue
        if _about(wanted, event.key, event.statement, getattr(event, "value", None)):
            slot = slot_id(event.scope, event.scope_key, event.key)
            matched.setdefault(event.memory_id, (tuple(event.source_turns), slot))
    mine = _said_by(conn, turn, {m: turns for m, (turns, _) in matched.items()})
    slots = {matched[m][1] for m in mine}  # only the speaker's own facts bring their keys in
    beside = {row.memory_id: tuple(row.source_turns) for row in rows if row.slot_id in slots}
    retracted = {e.item_id for e in before if isinstance(e, MemoryRetracted)}
    return sorted((set(mine) | set(_said_by(conn, turn, beside))) - retracted)


def _unprojected(conn: Connection, tenant_id: str) -> list[Event]:
    """Facts in the ledger past the facts projection's checkpoint (not yet in its table;
    all of them when it has none), a page at a time."""
    checkpoint = checkpoints.get(conn, facts_projector.NAME)
    after = checkpoint.cursor if checkpoint is not None else START
    found: list[Event] = []
    while page := event_reads.read_all(
        conn, after=after, limit=5000, tenant_id=tenant_id, types=["fact.extracted", "memory.promoted"]
    ):
        found += [rec.event for rec in page if not rec.erased]
        after = page[-1].cursor
    return found


def _said_by(conn: Connection, turn: TurnText, candidates: dict[str, tuple[str, ...]]) -> list[str]:
    """The candidates whose every source turn is the speaker's (a promotion citing no
    turn is nobody's: left alone). A turn naming nobody is nobody's either."""
    voices = event_reads.turn_voices(conn, turn.tenant_id, {t for ts in candidates.values() for t in ts})
    return sorted(
        memory_id
        for memory_id, source_turns in candidates.items()
        if source_turns and all(t in voices and voices[t].subject == turn.speaker for t in source_turns)
    )


def _edges(conn: Connection, turn: TurnText, wanted: list[frozenset[str]], before: list[Event]) -> list[str]:
    """The keys of the speaker's own live relationships to a thing a topic names."""
    if not turn.scopes.user or turn.speaker != turn.scopes.user:
        return []  # edges start from the turn's user: only theirs, said by them
    user = turn.scopes.user
    edges = graph_queries.live_edges_from(conn, turn.tenant_id, entity_id("user", user))
    found = {key for key, target in edges if _names(wanted, target)}
    for edge in (event for event in before if isinstance(event, RelationshipObserved)):
        if edge.source_type == "user" and edge.source_name == user and _names(wanted, edge.target_name):
            found.add(edge.relationship_id)
    return sorted(found)


def _names(wanted: list[frozenset[str]], name: str) -> bool:
    """Whether a topic names the thing ``name`` (every word of the name is in it)."""
    named = words(name)
    return bool(named) and any(named <= topic for topic in wanted)
