"""The facts fold: events change facts, then each touched slot is resolved. Pure.

A slot is one tenant, scope, scope key and key. Its facts that are not retracted
are candidates; candidates saying the same thing (normalised statement) form one
claim. With two or more claims the slot is in conflict, resolved in this order:
a person's choice (``ConflictResolved``); higher confidence; at equal confidence
the newer in valid time; still tied: both kept active and flagged ``conflicted``.

Resolution depends only on the candidates' current values, never on the order
batches arrived in, so a rebuild gives the same rows as live application.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from operator import attrgetter

import msgspec

from memledger.events.catalogue import (
    ConflictResolved,
    FactExtracted,
    MemoryPromoted,
    MemoryReinforced,
    MemoryRestored,
    MemoryRetracted,
)
from memledger.events.envelope import Recorded
from memledger.events.keys import normalise_statement, slot_id
from memledger.projectors.confidence import merge_ordered, reinforce

ACTIVE_THRESHOLD = 0.7


class FactRow(msgspec.Struct):
    """One row of ``facts``."""

    tenant_id: str
    memory_id: str
    slot_id: str
    scope: str
    scope_key: str
    key: str
    statement: str
    value: str | None
    category: str
    kind: str | None
    promoted_from: str | None
    confidence: float
    status: str
    conflicted: bool
    superseded_by: str | None
    retracted: bool
    retracted_reason: str | None
    retracted_at: datetime | None
    valid_from: datetime
    stated_valid_to: datetime | None
    valid_to: datetime | None
    recorded_at: datetime
    updated_at: datetime
    first_position: int
    last_position: int
    reinforcements: int
    source_turns: list[str]
    source_events: list[str]


class ConflictRow(msgspec.Struct):
    """One row of ``conflicts``; its id is the slot's id."""

    tenant_id: str
    conflict_id: str
    scope: str
    scope_key: str
    key: str
    state: str
    resolution: str
    reason: str
    memory_ids: list[str]
    winner_ids: list[str]
    manual_choice: str | None
    manual_reason: str | None
    resolved_by: str | None
    updated_at: datetime
    last_position: int


@dataclass
class FactsState:
    """The rows a batch may touch, keyed by (tenant, id); changed keys are tracked."""

    facts: dict[tuple[str, str], FactRow] = field(default_factory=dict)
    conflicts: dict[tuple[str, str], ConflictRow] = field(default_factory=dict)
    touched_slots: set[tuple[str, str]] = field(default_factory=set)
    changed_facts: set[tuple[str, str]] = field(default_factory=set)
    changed_conflicts: set[tuple[str, str]] = field(default_factory=set)


# Pure and costly (NFKC and a regex), and a ledger has few slots and many facts.
_slot_id = lru_cache(maxsize=1 << 16)(slot_id)


def new_fact(rec: Recorded, event: FactExtracted | MemoryPromoted) -> FactRow:
    """The row of a freshly extracted or promoted fact."""
    promoted = isinstance(event, MemoryPromoted)
    return FactRow(
        tenant_id=rec.tenant_id,
        memory_id=event.memory_id,
        slot_id=_slot_id(event.scope, event.scope_key, event.key),
        scope=event.scope,
        scope_key=event.scope_key,
        key=event.key,
        statement=event.statement,
        value=None if promoted else event.value,  # type: ignore[union-attr]
        category=event.kind if promoted else event.category,  # type: ignore[union-attr]
        kind=event.kind if promoted else None,  # type: ignore[union-attr]
        promoted_from=event.promoted_from if promoted else None,  # type: ignore[union-attr]
        confidence=round(event.confidence, 6),
        status="active",
        conflicted=False,
        superseded_by=None,
        retracted=False,
        retracted_reason=None,
        retracted_at=None,
        valid_from=(None if promoted else event.valid_from) or rec.occurred_at,  # type: ignore[union-attr]
        stated_valid_to=None if promoted else event.valid_to,  # type: ignore[union-attr]
        valid_to=None,
        recorded_at=rec.recorded_at,
        updated_at=rec.recorded_at,
        first_position=rec.position,
        last_position=rec.position,
        reinforcements=0,
        source_turns=list(dict.fromkeys(event.source_turns)),
        source_events=[rec.event_id],
    )


def _touch(state: FactsState, row: FactRow, rec: Recorded) -> None:
    """``rec`` changed ``row``: it is the row's latest event and one of its sources."""
    row.updated_at = rec.recorded_at
    row.last_position = rec.position
    _note_only(state, row, rec)


def _same_turns_again(row: FactRow, source_turns: Sequence[str]) -> bool:
    """Whether an extraction of ``row``'s memory id cites only turns it already cites:
    another extractor (or a re-extraction) reading the same words, not a new mention."""
    return bool(source_turns) and set(source_turns) <= set(row.source_turns)


def _note_only(state: FactsState, row: FactRow, rec: Recorded) -> None:
    """Keep ``rec`` among the row's source events (provenance names every extraction),
    and the row to be written; without a mention, its confidence, count and recency
    stay as they were."""
    if rec.event_id not in row.source_events:
        row.source_events.append(rec.event_id)
    state.changed_facts.add((row.tenant_id, row.memory_id))
    state.touched_slots.add((row.tenant_id, row.slot_id))


def _said_again(
    row: FactRow, rec: Recorded, turns: Sequence[str], valid_from: datetime | None, *, promoted: bool = False
) -> None:
    """A new mention of a retracted fact brings it back, valid from the new mention: the
    user said it again after it was withdrawn (or a person promoted it again). Only a
    turn the fact did not cite is a new mention: the same turns extracted or reinforced
    again, or an event citing no turn, never undo a retraction. Call before the turns
    are merged into the row."""
    if row.retracted and (promoted or (turns and not set(turns) <= set(row.source_turns))):
        row.retracted = False
        row.retracted_reason = None
        row.retracted_at = None
        row.valid_from = valid_from or rec.occurred_at


def _mentioned(state: FactsState, rec: Recorded, event: FactExtracted | MemoryPromoted) -> None:
    """A fact extracted or promoted: a new row, one more mention of a known one, or (the
    same turns again) only a source event noted."""
    key = (rec.tenant_id, event.memory_id)
    existing = state.facts.get(key)
    if existing is None:
        state.facts[key] = row = new_fact(rec, event)
    elif _same_turns_again(existing, event.source_turns):
        _note_only(state, existing, rec)
        return
    else:  # the same memory id extracted again: one more mention
        row = existing
        if isinstance(event, FactExtracted):
            _said_again(row, rec, event.source_turns, event.valid_from)
        else:
            _said_again(row, rec, event.source_turns, None, promoted=True)
        row.confidence = reinforce(row.confidence, event.confidence)
        row.reinforcements += 1
        row.source_turns = merge_ordered(row.source_turns, event.source_turns)
    _touch(state, row, rec)


def evolve(state: FactsState, rec: Recorded) -> None:
    """Apply one event to the rows in ``state``. Events naming a fact this tenant
    never had are ignored: a dangling reference must not stop the projection."""
    event = rec.event
    match event:
        case FactExtracted() | MemoryPromoted():
            _mentioned(state, rec, event)
        case MemoryReinforced(item_kind="fact"):
            if (row_ := state.facts.get((rec.tenant_id, event.item_id))) is not None:
                _said_again(row_, rec, event.source_turns, None)
                row_.confidence = reinforce(row_.confidence, event.confidence)
                row_.reinforcements += 1
                row_.source_turns = merge_ordered(row_.source_turns, event.source_turns)
                _touch(state, row_, rec)
        case MemoryRetracted(item_kind="fact"):
            if (row_ := state.facts.get((rec.tenant_id, event.item_id))) is not None:
                row_.retracted = True
                row_.retracted_reason = event.reason or None
                row_.retracted_at = rec.occurred_at
                _touch(state, row_, rec)
        case MemoryRestored(item_kind="fact"):
            if (row_ := state.facts.get((rec.tenant_id, event.item_id))) is not None:
                row_.retracted = False
                row_.retracted_reason = None
                row_.retracted_at = None
                _touch(state, row_, rec)
        case ConflictResolved():
            _resolve_by_person(state, rec, event)
        case _:
            pass


def _resolve_by_person(state: FactsState, rec: Recorded, event: ConflictResolved) -> None:
    chosen = state.facts.get((rec.tenant_id, event.chosen_memory_id))
    if chosen is None:
        return
    key = (rec.tenant_id, chosen.slot_id)
    conflict = state.conflicts.get(key) or _new_conflict(chosen, rec)
    conflict.manual_choice = event.chosen_memory_id
    conflict.manual_reason = event.reason or None
    conflict.resolved_by = event.resolved_by
    state.conflicts[key] = conflict
    state.changed_conflicts.add(key)
    _touch(state, chosen, rec)  # the choice is part of the chosen fact's provenance


@dataclass(frozen=True)
class _Stamp:
    recorded_at: datetime
    position: int


def _new_conflict(fact: FactRow, rec: Recorded | _Stamp) -> ConflictRow:
    return ConflictRow(
        tenant_id=fact.tenant_id,
        conflict_id=fact.slot_id,
        scope=fact.scope,
        scope_key=fact.scope_key,
        key=fact.key,
        state="dissolved",
        resolution="none",
        reason="",
        memory_ids=[],
        winner_ids=[],
        manual_choice=None,
        manual_reason=None,
        resolved_by=None,
        updated_at=rec.recorded_at,
        last_position=rec.position,
    )


class _Claim:
    """Candidates of a slot that say the same thing; ``lead`` speaks for them."""

    __slots__ = ("lead", "members")

    def __init__(self, lead: FactRow, members: tuple[FactRow, ...]) -> None:
        self.lead = lead
        self.members = members


@lru_cache(maxsize=1 << 16)
def _normalised(statement: str) -> str:
    return normalise_statement(statement)  # pure, and costly (NFKC and a regex): cached


_first_position = attrgetter("first_position")


def _lead_order(fact: FactRow) -> tuple[float, float, int]:
    return (-fact.confidence, -fact.valid_from.timestamp(), fact.first_position)


def _claims(candidates: list[FactRow]) -> list[_Claim]:
    groups: dict[str, list[FactRow]] = {}
    for fact in sorted(candidates, key=_first_position):
        statement = _normalised(fact.statement)
        group = groups.get(statement)
        if group is None:
            groups[statement] = [fact]
        else:
            group.append(fact)
    return [
        _Claim(members[0] if len(members) == 1 else min(members, key=_lead_order), tuple(members))
        for members in groups.values()
    ]


def _winners(claims: list[_Claim], manual: str | None) -> tuple[list[_Claim], str, str]:
    """The winning claims, the rule that chose them, and why, for people."""
    if manual is not None:
        for claim in claims:
            if any(f.memory_id == manual for f in claim.members):
                return [claim], "manual", "chosen by a person"
    if len(claims) <= 1:
        return claims, "none", "no disagreement"
    top = max(c.lead.confidence for c in claims)
    best = [c for c in claims if c.lead.confidence == top]
    if len(best) == 1:
        runner_up = max(c.lead.confidence for c in claims if c is not best[0])
        return best, "higher_confidence", f"confidence {top:g} over {runner_up:g}"
    newest = max(c.lead.valid_from for c in best)
    latest = [c for c in best if c.lead.valid_from == newest]
    if len(latest) == 1:
        return latest, "newer", f"equal confidence {top:g}; newer valid time {newest.astimezone(UTC).isoformat()}"
    return latest, "ambiguous", f"equal confidence {top:g} and equal valid time: kept all, flagged"


def resolve_slot(facts: list[FactRow], conflict: ConflictRow | None) -> ConflictRow | None:
    """Set status, supersession, flags and valid-to of one slot's facts; return the
    slot's conflict row (new or updated), or None if the slot never had one."""
    candidates = [f for f in facts if not f.retracted]
    claims = _claims(candidates)
    winners, rule, reason = _winners(claims, conflict.manual_choice if conflict else None)
    win_leads = {c.lead.memory_id for c in winners}
    leader = max((c.lead for c in winners), key=lambda f: f.valid_from, default=None)
    ambiguous = rule == "ambiguous"
    claim_of = {id(member): claim for claim in claims for member in claim.members}
    for fact in facts:
        _set_status(fact, win_leads, claim_of.get(id(fact)), leader, ambiguous)
    if conflict is None and len({_normalised(f.statement) for f in facts}) < 2:  # claims of all facts
        return None
    if conflict is None:
        conflict = _new_conflict(facts[0], _Stamp(facts[0].updated_at, facts[0].last_position))
    first = min(facts, key=_first_position)
    conflict.scope, conflict.scope_key, conflict.key = first.scope, first.scope_key, first.key
    conflict.memory_ids = [f.memory_id for f in sorted(candidates, key=_first_position)]
    conflict.winner_ids = sorted(win_leads)
    conflict.state = "dissolved" if len(claims) < 2 else ("open" if ambiguous else "resolved")
    conflict.resolution, conflict.reason = (rule, reason) if len(claims) >= 2 else ("none", reason)
    conflict.updated_at = max(f.updated_at for f in facts)
    conflict.last_position = max(f.last_position for f in facts)
    return conflict


def _set_status(
    fact: FactRow, win_leads: set[str], own: _Claim | None, leader: FactRow | None, ambiguous: bool
) -> None:
    fact.conflicted = False
    fact.superseded_by = None
    fact.valid_to = fact.stated_valid_to
    if fact.retracted:
        fact.status = "retracted"
        fact.valid_to = fact.retracted_at
        return
    if fact.memory_id in win_leads:
        fact.status = "active" if fact.confidence >= ACTIVE_THRESHOLD else "low_confidence"
        fact.conflicted = ambiguous
        return
    assert own is not None  # every candidate is in a claim
    by = own.lead if own.lead.memory_id in win_leads else leader
    fact.status = "superseded"
    fact.superseded_by = by.memory_id if by is not None else None
    if by is not None and by.valid_from > fact.valid_from and fact.stated_valid_to is None:
        fact.valid_to = by.valid_from
