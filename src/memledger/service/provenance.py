"""Provenance: the chain of events behind an item, back to the turns it came from.

An item is named by its stored id, or by the id as a memory block cites it: from
formatter version 5 a block percent-encodes an id holding other characters than
letters, digits and ``- _ . : / @ |`` (``formatting.neutralise.cite``), so the
id an auditor copies from a block is looked up decoded when it names nothing as given.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

import msgspec
from sqlalchemy.engine import Connection, Engine

from memledger.errors import InvalidIdentifier, NotFound
from memledger.events.catalogue import FactExtracted, Scopes, TurnRecorded
from memledger.events.envelope import START, Recorded
from memledger.events.keys import item_stream
from memledger.formatting.neutralise import uncite
from memledger.projectors.entities import merges as entity_merges
from memledger.selection import visibility
from memledger.selection.candidates import scope_pairs
from memledger.service import scope_ids
from memledger.store import event_reads
from memledger.store.identifiers import check_identifier


class Step(msgspec.Struct, frozen=True):
    """One event in an item's history."""

    position: int
    event_id: str
    type: str
    occurred_at: datetime
    recorded_at: datetime
    extractor: str | None
    extractor_version: str | None
    actor: str | None
    caused_by: str | None
    payload: dict[str, object]


class SourceTurn(msgspec.Struct, frozen=True):
    """A turn an item came from, as it was said, and by whom (their name, when the turn
    was recorded with one)."""

    turn_id: str
    event_id: str
    position: int
    role: str
    text: str
    occurred_at: datetime
    speaker: str | None = None


class Provenance(msgspec.Struct, frozen=True):
    """Every event that made or changed an item, and the turns they came from."""

    item_id: str
    steps: list[Step]
    turns: list[SourceTurn]


def _step(rec: Recorded) -> Step:
    payload = msgspec.to_builtins(rec.event)
    return Step(
        position=rec.position,
        event_id=rec.event_id,
        type=str(payload.get("type")),
        occurred_at=rec.occurred_at,
        recorded_at=rec.recorded_at,
        extractor=rec.metadata.extractor,
        extractor_version=rec.metadata.extractor_version,
        actor=rec.metadata.actor,
        caused_by=rec.metadata.causation_id,
        payload=payload,
    )


def _entity_key(item_id: str) -> tuple[str, str] | None:
    kind, _, name = item_id.partition(":")
    if kind in {"person", "project", "tool", "concept", "organization"} and name:
        return kind, name
    return None


MAX_ITEM_ID = 1000
"""The longest stored item id (the catalogue's ``ItemId``): an entity's or a
relationship's id holds names."""
MAX_CITED_ITEM_ID = 12 * MAX_ITEM_ID
"""The longest id a block cites: a percent-encoded character takes up to 12 (``%F0%9F%98%80``)."""


def provenance(engine: Engine, tenant_id: str, item_id: str, scopes: Scopes | None = None) -> Provenance:
    """The events behind ``item_id`` (a fact, entity or relationship id, as stored or
    as a block cites it) and their turns; ``Provenance.item_id`` is the stored id. For a
    turn's id (or its event id), the turn and the events it caused (what was made of it).
    Raises ``NotFound`` naming each reading of ``item_id`` that was looked up.

    With ``scopes`` (an agent asking for a conversation), only an item the conversation
    could be shown is answered, with only the turns it may see: a fact of one of its
    scopes, else an item one of whose turns shares a scope key with it; any other item
    is not found, as one that does not exist. Without, the whole tenant's (an audit)."""
    if scopes is not None:
        scope_ids.check_scopes(scopes)  # an empty key is refused, not read as no scope at all
    found = _provenance(engine, tenant_id, item_id)
    if scopes is None or not scope_pairs(scopes):
        return found
    stored = scope_ids.stored_scopes(engine, tenant_id, scopes)
    cited = _cited_turns(found)
    with engine.connect() as conn:
        hidden = visibility.hidden_turns(conn, tenant_id, stored, cited)
    wanted = set(scope_pairs(stored))
    placed = {(p["scope"], p["scope_key"]) for p in (step.payload for step in found.steps) if _placed(p, found.item_id)}
    seen = bool(placed & wanted) if placed else visibility.shown(cited, hidden)
    if not seen:
        raise NotFound(f"tenant {tenant_id!r} has no item {item_id!r} that these scopes may see")
    # What else the steps place in a scope (a turn's facts) shows only in the request's scopes.
    steps = [s for s in found.steps if not _placed(s.payload) or (s.payload["scope"], s.payload["scope_key"]) in wanted]
    return msgspec.structs.replace(found, steps=steps, turns=[t for t in found.turns if t.turn_id not in hidden])


def _cited_turns(found: Provenance) -> list[str]:
    cited = [t.turn_id for t in found.turns]
    cited += [str(t) for step in found.steps for t in _list(step.payload.get("source_turns"))]
    return list(dict.fromkeys(cited))


def _list(value: object) -> list[object]:
    return list(value) if isinstance(value, list | tuple) else []


def _placed(payload: dict[str, object], item_id: str | None = None) -> bool:
    """Whether an event places an item (``item_id``, if given) in one scope (a fact, a
    promotion): not one that names it otherwise (the promotion of a project's fact to the
    org is the org's, not the fact's)."""
    placing = isinstance(payload.get("scope"), str) and isinstance(payload.get("scope_key"), str)
    return placing and (item_id is None or payload.get("memory_id") in (item_id, None))


def _provenance(engine: Engine, tenant_id: str, item_id: str) -> Provenance:
    check_identifier("tenant_id", tenant_id)
    check_identifier("item_id", item_id, max_length=MAX_CITED_ITEM_ID if "%" in item_id else MAX_ITEM_ID)
    with engine.connect() as conn:
        try:
            item_id, found = _events_naming(conn, tenant_id, item_id)
        except NotFound:
            derived = _from_turn(conn, tenant_id, item_id)
            if derived is None:
                raise
            return derived
        if _entity_key(item_id):
            found = _with_merges(conn, tenant_id, item_id, found)
        causes = {rec.metadata.causation_id for rec in found if rec.metadata.causation_id}
        turn_ids = {t for rec in found for t in getattr(rec.event, "source_turns", ())}
        turn_events = event_reads.read_events(conn, tenant_id, causes | {f"turn:{t}" for t in turn_ids})
    turns = [_source_turn(rec) for rec in turn_events if isinstance(rec.event, TurnRecorded)]
    return Provenance(item_id=item_id, steps=[_step(rec) for rec in found], turns=turns)


def _with_merges(conn: Connection, tenant_id: str, entity: str, found: list[Recorded]) -> list[Recorded]:
    """An entity's events with those of the entities merged into it, and the merges
    and splits naming it or the entity it was merged into: a kept entity's history is
    every merged one's too. In ledger order, each once."""
    members = entity_merges.members(conn, tenant_id, [entity]).get(entity, [])
    kept = entity_merges.roots(conn, tenant_id, [entity]).get(entity)
    more = [rec for m in members for rec in event_reads.events_about(conn, tenant_id, m, entity=_entity_key(m))]
    for each in {entity, *members, *([kept] if kept else [])}:
        more += event_reads.read_stream(conn, tenant_id, item_stream(each))
    if not more:
        return found
    by_id = {rec.event_id: rec for rec in [*found, *more]}
    return sorted(by_id.values(), key=lambda rec: rec.cursor)


def _source_turn(rec: Recorded) -> SourceTurn:
    event = rec.event
    assert isinstance(event, TurnRecorded)  # callers pass turns only
    return SourceTurn(
        turn_id=event.turn_id,
        event_id=rec.event_id,
        position=rec.position,
        role=event.role,
        text=event.text,
        occurred_at=rec.occurred_at,
        speaker=event.speaker,
    )


def _from_turn(conn: Connection, tenant_id: str, cited: str) -> Provenance | None:
    """For the id of a turn (as a block cites it, or its event id ``turn:ID``): the turn
    and what was made of it (the events it caused: extractions), so an auditor goes from
    a cited turn to its memories too. None if the tenant has no such turn."""
    for reading in _readings(cited):
        event_id = reading if reading.startswith(TURN_EVENT) else TURN_EVENT + reading
        turn = [r for r in event_reads.read_events(conn, tenant_id, [event_id]) if isinstance(r.event, TurnRecorded)]
        if turn:
            made = event_reads.caused_by(conn, tenant_id, event_id)
            turns = [_source_turn(turn[0])]
            return Provenance(
                item_id=event_id.removeprefix(TURN_EVENT), steps=[_step(r) for r in turn + made], turns=turns
            )
    return None


TURN_EVENT = "turn:"  # a recorded turn's event id is "turn:" and the turn's id


def _events_naming(conn: Connection, tenant_id: str, item_id: str) -> tuple[str, list[Recorded]]:
    """The stored id ``item_id`` stands for and the events naming it: with a ``%``, as a
    block's citation decodes it first, else as given (the stored form, as every surface
    but a block gives it)."""
    readings = _readings(item_id)
    for reading in readings:
        found = event_reads.events_about(conn, tenant_id, reading, entity=_entity_key(reading))
        if found:
            return reading, found
    if len(readings) == 1:
        raise NotFound(f"no event of tenant {tenant_id!r} names {item_id!r}")
    raise NotFound(
        f"no event of tenant {tenant_id!r} names {item_id!r} nor, decoded as a block's citation, {readings[0]!r}"
    )


def _readings(item_id: str) -> list[str]:
    """The ids ``item_id`` may mean, the likelier first: with a ``%``, its percent-decoded
    form (when that could be a stored id: UTF-8, no control character, at most
    ``MAX_ITEM_ID`` characters), then ``item_id`` as given. A block's citation encodes
    every ``%`` of a stored id, so a cited id always decodes to the item it cites, even
    when another item's stored id is that citation's very text."""
    if "%" not in item_id:
        return [item_id]
    try:
        decoded = check_identifier("item_id", uncite(item_id), max_length=MAX_ITEM_ID)
    except (UnicodeDecodeError, InvalidIdentifier):  # not a citation of a storable id: only as given
        return [item_id]
    return [item_id] if decoded == item_id else [decoded, item_id]


def key_history(engine: Engine, tenant_id: str, key: str) -> list[Step]:
    """Every fact ever extracted or promoted on ``key`` (any scope), in ledger order,
    with what later happened to each. A key without an owner also finds every owner's:
    "diet" finds "ada: diet" (a person's own facts are keyed by their speaker, and the
    person asking knows the subject, not the stored prefix); "ada: diet" finds only hers."""
    check_identifier("tenant_id", tenant_id)
    with engine.connect() as conn:
        wanted = key.casefold().strip()
        memory_ids: list[str] = []
        steps: list[Step] = []
        for page in _pages(conn, tenant_id):
            for rec in page:
                if rec.erased:  # its key is gone with its words: no key leads to it
                    continue
                event = rec.event
                if isinstance(event, FactExtracted) or type(event).__name__ == "MemoryPromoted":
                    if _on_key(str(getattr(event, "key", "")), wanted):
                        memory_ids.append(event.memory_id)  # type: ignore[attr-defined]
                        steps.append(_step(rec))
                elif (
                    getattr(event, "item_id", None) in memory_ids
                    or getattr(event, "chosen_memory_id", None) in memory_ids
                ):
                    steps.append(_step(rec))
    return steps


def _on_key(stated: str, wanted: str) -> bool:
    """Whether a fact stated on ``stated`` is on ``wanted`` (casefolded): the same key,
    or, for a key naming no owner, that key of an owner ("ada: diet" is on "diet")."""
    folded = stated.casefold().strip()
    return folded == wanted or (": " not in wanted and folded.partition(": ")[2] == wanted)


def _pages(conn: Connection, tenant_id: str) -> Iterator[list[Recorded]]:
    types = [
        "fact.extracted",
        "memory.promoted",
        "memory.reinforced",
        "memory.retracted",
        "memory.restored",
        "conflict.resolved",
    ]
    after = START
    while True:
        page = event_reads.read_all(conn, after=after, limit=5000, tenant_id=tenant_id, types=types)
        if not page:
            return
        yield page
        after = page[-1].cursor
