"""Which events an erasure covers. Pure: decided from a tenant's events, in memory.

For a subject (a stored user id), in order:

1. the subject's turns: ``TurnRecorded`` whose ``subject`` (or, for turns stored
   without one, ``scopes.user``) is the subject; in a conversation this includes
   the assistant's turns, whose subject is the conversation's user;
2. every event derived from those turns (``source_turns`` naming one of them),
   the ``ContextServed`` records of requests the subject made: for the subject
   (``scopes.user``), or naming no user, in a session the subject spoke in, and
   every ``MemoryPromoted`` into the subject's own user scope (``scope`` "user",
   ``scope_key`` the subject): a statement promoted there names no turn, yet it is
   about the subject and served only to them;
3. then, until nothing changes, every other event that refers only to items that
   exist because of events already covered (a reinforcement, retraction or
   restoration of such an item, a promotion from it, a resolution of its conflict,
   a context block that served it, a merge or split of entities naming it): their ids are made of the erased words, and
   nothing else keeps the item alive. An item that another person's events also
   create (the same entity named by two people) survives, and so do the events
   that refer to it.

For a whole tenant, every event with private fields.

Events erased before are never covered again, and create nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import msgspec

from memledger.events.catalogue import (
    ConflictResolved,
    ContextServed,
    EntitiesMerged,
    EntitiesSplit,
    EntityObserved,
    Event,
    FactExtracted,
    MemoryPromoted,
    MemoryReinforced,
    MemoryRestored,
    MemoryRetracted,
    RelationshipObserved,
    Scopes,
    TurnRecorded,
)
from memledger.events.envelope import Recorded
from memledger.events.keys import entity_id, relationship_key, slot_id
from memledger.projectors.embeddings.projector import item_text

Item = tuple[str, str]  # (kind, id): kind is "fact", "entity", "relationship" or "slot"
_ITEM_KINDS = ("fact", "entity", "relationship")


class Scope(msgspec.Struct, frozen=True):
    """What an erasure covers: the events to erase (none erased before), the turn ids
    among them, whether the subject was seen at all, and the texts the embedding
    cache holds vectors of: those of the covered events, and those of the others."""

    records: list[Recorded]
    turn_ids: list[str]
    subject_seen: bool
    texts: set[str]
    kept_texts: set[str]


def for_tenant(recs: Sequence[Recorded]) -> Scope:
    """Every event of the tenant that still holds private fields."""
    covered = {r.position for r in recs if not r.erased and type(r.event).private_fields}
    return _scope(recs, covered, subject_seen=bool(recs))


def for_subject(recs: Sequence[Recorded], subject: str) -> Scope:
    """The subject's turns, what was derived from them, and what only refers to that."""
    spoken = [r.event for r in recs if isinstance(r.event, TurnRecorded) and _speaker(r.event) == subject]
    turns = {turn.turn_id for turn in spoken}
    sessions = {turn.scopes.session for turn in spoken if turn.scopes.session}
    served = [r for r in recs if isinstance(r.event, ContextServed) and _asked_by(r.event.scopes, subject, sessions)]
    promoted = [r for r in recs if _promoted_to(r.event, subject)]
    live = [r for r in recs if not r.erased]
    covered = {r.position for r in live if _is_turn_of(r.event, turns) or _derived(r.event, turns)}
    covered |= {r.position for r in [*served, *promoted] if not r.erased}
    covered = _close(live, covered)
    return _scope(recs, covered, subject_seen=bool(turns or served or promoted))


def _speaker(event: TurnRecorded) -> str | None:
    return event.subject or event.scopes.user


def _asked_by(scopes: Scopes, subject: str, sessions: set[str]) -> bool:
    """Whether a request was the subject's: made for the subject, or, naming no user,
    in a session the subject spoke in."""
    if scopes.user is not None:
        return scopes.user == subject
    return scopes.session is not None and scopes.session in sessions


def _promoted_to(event: Event, subject: str) -> bool:
    """Whether an event promotes a memory into the subject's own user scope (the scope
    and its key are not erasable, so an erased promotion still says whose it was)."""
    return isinstance(event, MemoryPromoted) and event.scope == "user" and event.scope_key == subject


def _is_turn_of(event: Event, turns: set[str]) -> bool:
    return isinstance(event, TurnRecorded) and event.turn_id in turns


def _derived(event: Event, turns: set[str]) -> bool:
    sources: Iterable[str] = getattr(event, "source_turns", ())
    return any(turn in turns for turn in sources)


def _close(live: Sequence[Recorded], covered: set[int]) -> set[int]:
    """Add, until nothing changes, the events that refer to items only covered events create."""
    while True:
        made = {item for r in live if r.position in covered for item in creates(r.event)}
        kept = {item for r in live if r.position not in covered for item in creates(r.event)}
        dangling = made - kept
        added = {r.position for r in live if r.position not in covered and refers(r.event) & dangling}
        if not added:
            return covered
        covered = covered | added


def creates(event: Event) -> set[Item]:
    """The items an event brings into being (or restates). Pure."""
    match event:
        case FactExtracted() | MemoryPromoted():
            return {("fact", event.memory_id), ("slot", slot_id(event.scope, event.scope_key, event.key))}
        case EntityObserved():
            return {("entity", entity_id(event.entity_type, event.name))}
        case RelationshipObserved():
            key = relationship_key(
                event.source_type, event.source_name, event.relation, event.target_type, event.target_name
            )
            return {("relationship", event.relationship_id), ("relationship", key)}
        case _:
            return set()


def refers(event: Event) -> set[Item]:
    """The items an event refers to without creating them. Pure."""
    match event:
        case MemoryReinforced() | MemoryRetracted() | MemoryRestored():
            return {(event.item_kind, event.item_id)}
        case MemoryPromoted():
            return {("fact", event.promoted_from)} if event.promoted_from else set()
        case ConflictResolved():
            return {("slot", event.conflict_id)}
        case ContextServed():  # its ids do not say their kind
            return {(kind, item_id) for item_id in event.item_ids for kind in _ITEM_KINDS}
        case EntitiesMerged() | EntitiesSplit():  # erased with any entity only the subject named
            return {("entity", entity) for entity in (event.kept_entity_id, *event.merged_entity_ids)}
        case _:
            return set()


def _scope(recs: Sequence[Recorded], covered: set[int], *, subject_seen: bool) -> Scope:
    records = [r for r in recs if r.position in covered]
    turn_ids = sorted({r.event.turn_id for r in records if isinstance(r.event, TurnRecorded)})
    return Scope(
        records=records,
        turn_ids=turn_ids,
        subject_seen=subject_seen,
        texts=_texts(records),
        kept_texts=_texts(r for r in recs if r.position not in covered),
    )


def _texts(recs: Iterable[Recorded]) -> set[str]:
    """The texts the embeddings projection gives the items of these events."""
    return {found[1].text for r in recs if (found := item_text(r)) is not None}
