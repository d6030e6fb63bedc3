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

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from memledger.events.catalogue import Event, FactExtracted, MemoryPromoted, MemoryRetracted, RelationshipObserved
from memledger.events.keys import entity_id, slot_id
from memledger.extraction.directives import forget_topic
from memledger.extraction.patterns import split_sentences, word_set
from memledger.extraction.protocol import TurnText
from memledger.projectors import checkpoints
from memledger.projectors import facts as facts_projector
from memledger.projectors.relationships import relationships
from memledger.store import event_reads

_LIVE: Final = ("active", "low_confidence")
_WORD: Final = re.compile(r"[^\W_]+")
_NOT_CONTENT: Final = word_set(
    "i im me my mine myself you your we our us that this these those what which who whom when where how why "
    "said say told tell about the a an is am are was were be been to of in on at for and or with it its "
    "please just all any everything anything something thing things stuff"
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
    matching live facts and relationships. ``earlier``: this batch's events before it."""
    wanted = [w for w in (words(topic) for topic in asked) if w]
    if not wanted:
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


def _pairs(turn: TurnText) -> list[tuple[str, str]]:
    scopes = turn.scopes
    return [(kind, key) for kind in ("session", "project", "user") if (key := getattr(scopes, kind))]


def _about(wanted: list[frozenset[str]], *texts: str | None) -> bool:
    said = words(" ".join(t for t in texts if t))
    return any(topic <= said for topic in wanted)


def _facts(conn: Connection, turn: TurnText, wanted: list[frozenset[str]], before: list[Event]) -> list[str]:
    """The ids of the speaker's live facts on a wanted topic, in the turn's scopes, and of
    the facts on the same keys they superseded: forgetting "I'm pescatarian" must not
    bring back the "I'm vegetarian" it replaced (a retraction restores what it superseded)."""
    pairs = set(_pairs(turn))
    candidates: dict[str, tuple[str, ...]] = {}  # memory id -> its source turns
    slots: set[str] = set()
    f = facts_projector.facts
    rows = conn.execute(
        sa.select(f.c.memory_id, f.c.slot_id, f.c.key, f.c.statement, f.c.value, f.c.source_turns, f.c.status).where(
            f.c.tenant_id == turn.tenant_id,
            sa.tuple_(f.c.scope, f.c.scope_key).in_(sorted(pairs)),
            f.c.status.in_((*_LIVE, "superseded")),
        )
    ).all()
    for memory_id, slot, key, statement, value, source_turns, status in rows:
        if status in _LIVE and _about(wanted, key, statement, value):
            candidates[memory_id] = tuple(source_turns or ())
            slots.add(slot)
    for event in [*_unprojected(conn, turn.tenant_id), *before]:
        if not isinstance(event, FactExtracted | MemoryPromoted) or (event.scope, event.scope_key) not in pairs:
            continue
        if _about(wanted, event.key, event.statement, getattr(event, "value", None)):
            candidates.setdefault(event.memory_id, tuple(event.source_turns))
            slots.add(slot_id(event.scope, event.scope_key, event.key))
    for memory_id, slot, *_, source_turns, _status in rows:
        if slot in slots:  # what the forgotten facts replaced, or stand beside, on their keys
            candidates.setdefault(memory_id, tuple(source_turns or ()))
    retracted = {e.item_id for e in before if isinstance(e, MemoryRetracted)}
    return [m for m in _said_by(conn, turn, candidates) if m not in retracted]


def _unprojected(conn: Connection, tenant_id: str) -> list[Event]:
    """Facts in the ledger past the facts projection's checkpoint (not yet in its table)."""
    checkpoint = checkpoints.get(conn, facts_projector.NAME)
    if checkpoint is None:
        return []
    page = event_reads.read_all(
        conn, after=checkpoint.cursor, limit=5000, tenant_id=tenant_id, types=["fact.extracted", "memory.promoted"]
    )
    return [rec.event for rec in page if not rec.erased]


def _said_by(conn: Connection, turn: TurnText, candidates: dict[str, tuple[str, ...]]) -> list[str]:
    """The candidates whose every source turn is the speaker's (a promotion citing no
    turn is nobody's: left alone)."""
    speakers = event_reads.turn_speakers(conn, turn.tenant_id, {t for ts in candidates.values() for t in ts})
    speakers[turn.turn_id] = turn.scopes.user or ""
    return sorted(
        memory_id
        for memory_id, source_turns in candidates.items()
        if source_turns and all(speakers.get(t, "") == (turn.scopes.user or "") for t in source_turns)
    )


def _edges(conn: Connection, turn: TurnText, wanted: list[frozenset[str]], before: list[Event]) -> list[str]:
    """The keys of the speaker's own live relationships to a thing a topic names."""
    if not turn.scopes.user:
        return []
    speaker = entity_id("user", turn.scopes.user)
    r = relationships
    rows = conn.execute(
        sa.select(r.c.relationship_key, r.c.target_name).where(
            r.c.tenant_id == turn.tenant_id, r.c.source_entity_id == speaker, r.c.status == "active"
        )
    )
    found = {key for key, target in rows if _names(wanted, target)}
    for edge in (event for event in before if isinstance(event, RelationshipObserved)):
        if edge.source_type == "user" and edge.source_name == turn.scopes.user and _names(wanted, edge.target_name):
            found.add(edge.relationship_id)
    return sorted(found)


def _names(wanted: list[frozenset[str]], name: str) -> bool:
    """Whether a topic names the thing ``name`` (every word of the name is in it)."""
    named = words(name)
    return bool(named) and any(named <= topic for topic in wanted)
