"""What a person's newer words replace in their graph: "I now work at Globex."

A person's own personal fact or preference on a key they spoke of before supersedes
the older fact (the facts fold), but their relationship to the older fact's value
stayed: after "I work at Acme." and later "I now work at Globex." (or "I left Acme."),
the graph still said the user is PART_OF Acme, and a block showed it beside the new
employer. The extraction worker now retracts that edge as part of the newer turn's
extraction (``retractions``), as it retracts what a person asks to forget: the events
say it, so a rebuild, an as-of selection and provenance see it, and ``restore``
undoes it.

The speaker's own user-scope facts count with the relation their category is drawn
from: an employer's PART_OF, a preference's PREFERS. A project's facts count with the
edge the same turn said of the new value: after "Atlas uses MongoDB." and later "Atlas
now uses PostgreSQL instead of MongoDB.", the fact on Atlas's database was replaced but
the block still showed "Atlas USES MongoDB" beside it; the new turn's "Atlas USES
PostgreSQL" says which edge (source and relation) the older value's is.

Either is done only where the newer fact wins its slot as the facts fold decides
(``_wins``): it beats every older claim on the slot, by confidence, then valid time,
and no person chose between them (``ConflictResolved``). Two facts in conflict keep
both edges. Where the fold would weigh the newer fact otherwise (the same statement
said again is reinforced, not a new claim), nothing is retracted: an edge is left
rather than wrongly taken. The older facts and edges are read from the read models
and from this batch's earlier turns of the tenant; one said but not yet projected is
left (its edge stays until the next such turn).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Final, TypeGuard

from sqlalchemy.engine import Connection

from memledger.events.catalogue import Event, FactExtracted, MemoryRetracted, RelationshipObserved
from memledger.events.keys import entity_id, normalise_name, slot_id
from memledger.extraction.protocol import TurnText
from memledger.projectors.facts import queries as facts_queries
from memledger.projectors.relationships import graph_queries

_RELATION: Final = {"personal_fact": "PART_OF", "preference": "PREFERS"}
REASON: Final = "the speaker said something newer in its place"

Claim = tuple[float, datetime]  # a fact's confidence and valid time, as the facts fold weighs them
Via = tuple[str, str, str]  # an edge's source type, source name (normalised) and relation


def retractions(
    conn: Connection,
    turn: TurnText,
    written: Iterable[Event],
    earlier: Iterable[Event],
    said_at: Mapping[str, datetime],
) -> list[MemoryRetracted]:
    """Retractions of the edges to what the facts among ``written`` (this turn's events)
    replace: the speaker's own, and their project's. ``earlier``: this batch's events of
    the turn's tenant before the turn's; ``said_at``: when each of those turns was said."""
    written, before = list(written), list(earlier)
    speaker = _by_the_speaker(conn, turn, written, before, said_at)
    keys = sorted({*speaker, *_by_the_project(conn, turn, written, before, said_at)})
    return [
        MemoryRetracted(item_id=key, item_kind="relationship", reason=REASON, source_turns=(turn.turn_id,))
        for key in keys
    ]


def _by_the_speaker(
    conn: Connection, turn: TurnText, written: list[Event], before: list[Event], said_at: Mapping[str, datetime]
) -> list[str]:
    """The keys of the speaker's edges to what their newer facts replace."""
    user = turn.scopes.user
    if not user or turn.speaker != user:
        return []  # edges start from the turn's user: only theirs, said by them
    newer = {_slot(e): e for e in written if _own(e, user) and e.value}
    replaced = _replaced(conn, turn, newer, before, said_at)
    older: dict[str, set[str]] = {}  # relation -> the replaced values, normalised
    for slot, values in replaced.items():
        new = newer[slot]
        now = _values(new.value)
        left = {v.removeprefix("left ") for v in now if v.startswith("left ")}
        # "I left Globex." ends Globex alone, whatever else was said; else what is no longer said.
        gone = values & left if left else values - now
        older.setdefault(_RELATION[new.category], set()).update(gone)
    if not any(older.values()):
        return []
    source = entity_id("user", user)
    edges = [
        (key, relation, target)
        for relation in sorted(older)
        for key, target in graph_queries.live_edges_from(conn, turn.tenant_id, source, relation)
    ]
    edges += [
        (e.relationship_id, e.relation, e.target_name)
        for e in before
        if isinstance(e, RelationshipObserved) and e.source_type == "user" and e.source_name == user
    ]
    return [key for key, relation, target in edges if normalise_name(target) in older.get(relation, ())]


def _own(event: Event, user: str) -> TypeGuard[FactExtracted]:
    return (
        isinstance(event, FactExtracted)
        and event.scope == "user"
        and event.scope_key == user
        and event.category in _RELATION
    )


def _by_the_project(
    conn: Connection, turn: TurnText, written: list[Event], before: list[Event], said_at: Mapping[str, datetime]
) -> list[str]:
    """The keys of the edges to what the project's newer facts replace, each of the
    source and relation of the edge from a project that this turn said to the new value."""
    project = turn.scopes.project
    if not project:
        return []
    said_now = [e for e in written if isinstance(e, RelationshipObserved) and e.source_type == "project"]
    newer: dict[str, FactExtracted] = {}
    via: dict[str, set[Via]] = {}  # slot -> the edges saying its new value
    for fact in written:
        if _of_project(fact, project) and fact.value:
            values = _values(fact.value)
            saying = {_via(e) for e in said_now if normalise_name(e.target_name) in values}
            if saying:
                newer[_slot(fact)], via[_slot(fact)] = fact, saying
    replaced = _replaced(conn, turn, newer, before, said_at)
    gone: dict[Via, set[str]] = {}  # (source type, source name, relation) -> the replaced values
    for slot, values in replaced.items():
        for edge in via[slot]:
            gone.setdefault(edge, set()).update(values - _values(newer[slot].value))
    keys = [
        key
        for (source_type, source, relation), targets in gone.items()
        if targets
        for key, target in graph_queries.live_edges_from(conn, turn.tenant_id, entity_id(source_type, source), relation)
        if normalise_name(target) in targets
    ]
    return keys + [
        e.relationship_id
        for e in before
        if isinstance(e, RelationshipObserved) and normalise_name(e.target_name) in gone.get(_via(e), ())
    ]


def _replaced(
    conn: Connection,
    turn: TurnText,
    newer: Mapping[str, FactExtracted],
    before: list[Event],
    said_at: Mapping[str, datetime],
) -> dict[str, set[str]]:
    """Slot -> the older values (normalised) of the slots whose newer fact wins: it beats
    every older claim on its slot (``_wins``), and no person chose there."""
    if not newer:
        return {}
    best: dict[str, Claim] = {}
    values: dict[str, set[str]] = {}
    kept: set[str] = set()  # slots left as they are: a person chose there, or a claim's time is unknown

    def claim(slot: str, value: str | None, older: Claim) -> None:
        best[slot] = max(best.get(slot, older), older)
        values.setdefault(slot, set()).update(_values(value))

    for row in facts_queries.slot_claims(conn, turn.tenant_id, newer):
        claim(row.slot_id, row.value, (row.confidence, row.valid_from))
        if row.chosen:
            kept.add(row.slot_id)
    for e in before:
        if isinstance(e, FactExtracted) and (slot := _slot(e)) in newer:
            when = _valid_from(e, said_at)
            if when is None:
                kept.add(slot)  # the winner cannot be told
            else:
                claim(slot, e.value, (e.confidence, when))
    newest = {slot: (fact.confidence, fact.valid_from or turn.occurred_at) for slot, fact in newer.items()}
    return {slot: values[slot] for slot in best.keys() - kept if _wins(newest[slot], best[slot])}


def _wins(newer: Claim, older: Claim) -> bool:
    """Whether the newer fact takes the slot from the best older claim, as the facts fold
    decides (``facts_fold._winners``): the higher confidence, at equal confidence the
    newer valid time; a tie keeps both, flagged as a conflict."""
    return newer > older


def _slot(fact: FactExtracted) -> str:
    return slot_id(fact.scope, fact.scope_key, fact.key)


def _via(edge: RelationshipObserved) -> Via:
    return (edge.source_type, normalise_name(edge.source_name), edge.relation)


def _valid_from(fact: FactExtracted, said_at: Mapping[str, datetime]) -> datetime | None:
    """A fact of this batch's valid time, as the facts fold will have it (its stated
    time, else its turn's); None when its turn's time is not known."""
    return fact.valid_from or (said_at.get(fact.source_turns[0]) if fact.source_turns else None)


def _of_project(event: Event, project: str) -> TypeGuard[FactExtracted]:
    return isinstance(event, FactExtracted) and event.scope == "project" and event.scope_key == project


def _values(value: str | None) -> set[str]:
    """A fact's value as the names it holds ("Vim, Emacs" holds two), normalised."""
    return {normalise_name(part) for part in (value or "").split(",") if part.strip()}
