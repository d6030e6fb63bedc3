"""A deterministic generator of realistic, mixed ledger traffic, for tests and benchmarks.

``generate`` plays ``turns`` conversation turns per tenant. Each tenant has a few
users, projects and sessions (each session belongs to one user and one project).
Every turn is a ``TurnRecorded`` in ``conversation:<session>``, followed by what a
heuristic extractor would append because of it, each event in its own item's
stream and caused by the turn:

- ``FactExtracted`` (``memory:<id>``): keys that recur per slot ("editor",
  "frontend framework", "deploy day", ...), so facts restate, supersede and
  conflict; the same memory id is sometimes extracted again; confidences from 0.5
  to 1.0 on a coarse grid, so exact ties happen; now and then two contradicting
  facts in one turn with equal confidence (an ambiguous conflict);
- ``EntityObserved`` (``entity:<id>``): recurring names in varied casing, so they
  merge, sometimes with aliases;
- ``RelationshipObserved`` (``relationship:<key>``): USES, PREFERS, WORKS_ON,
  DEPENDS_ON, PART_OF, and the symmetric WORKS_WITH and KNOWS observed in both
  directions; ``relationship_id`` is ``keys.relationship_key(...)``;
- ``MemoryReinforced`` of known facts, entities and relationships;
  ``MemoryRetracted`` / ``MemoryRestored`` of facts and relationships;
  ``MemoryPromoted`` of a fact to a broader scope; ``ConflictResolved``
  (``conflict:<slot>``) of a slot holding facts that disagree.

On average a turn gives one turn event and about three derived ones.
Deterministic: the same arguments give the same events, ids and times (a seeded
``random.Random`` per tenant; no clock). Event ids are ``wl<seed>-<tenant>-<n>``;
tenants are ``wl<seed>-t<index>``. ``occurred_at`` grows with the turn index.
"""

from __future__ import annotations

import gc
import random
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from functools import cache
from itertools import islice
from typing import NamedTuple, TypeVar

from sqlalchemy.engine import Engine

from memledger.events.catalogue import (
    ConflictResolved,
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
from memledger.events.envelope import Metadata, NewEvent
from memledger.events.keys import conflict_stream, entity_id, relationship_key, slot_id
from memledger.store import event_store
from tests.support import workload_vocabulary as vocab

T = TypeVar("T")


class Append(NamedTuple):
    """One call of ``event_store.append``: events for one stream of one tenant."""

    tenant_id: str
    stream_id: str
    events: list[NewEvent]


# -- per-tenant state ---------------------------------------------------------------------


class _Session(NamedTuple):
    name: str
    user: str  # user id (a scope key)
    who: str  # the user's display name
    project: str
    org: str


class _Fact(NamedTuple):
    memory_id: str
    slot: str
    value: str
    scope: str
    scope_key: str
    spec: int  # index into vocab.FACT_KEYS


@cache
def _entity_key(entity_type: str, name: str) -> str:
    return entity_id(entity_type, name)


@cache
def _edge_key(st: str, sn: str, rel: str, tt: str, tn: str) -> str:
    return relationship_key(st, sn, rel, tt, tn)


@cache
def _slot(scope: str, scope_key: str, key: str) -> str:
    return slot_id(scope, scope_key, key)


class _Rng(random.Random):
    """``random.Random`` with a cheaper choice (``Random.choice`` costs ~10x more)."""

    def pick(self, seq: Sequence[T]) -> T:
        return seq[int(self.random() * len(seq))]


class _Known:
    """Ids seen so far: a list to draw from at random, a set to test membership."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self._seen: set[str] = set()

    def add(self, item: str) -> None:
        if item not in self._seen:
            self._seen.add(item)
            self.items.append(item)

    def __contains__(self, item: str) -> bool:
        return item in self._seen


class _Tenant:
    """One tenant's cast, what it has said so far, and its id counter."""

    def __init__(self, seed: int, index: int, start: datetime) -> None:
        self.rng = rng = _Rng(seed * 1_000_003 + index)
        self.id = f"wl{seed}-t{index:04d}"
        self.prefix = f"wl{seed}-{index}-"
        self.start = start + timedelta(milliseconds=index * 7)
        self.counter = 0
        people = rng.sample([f"{f} {la}" for f in vocab.FIRST for la in vocab.LAST], rng.randint(8, 14))
        self.people = people
        self.projects = rng.sample(vocab.PROJECTS, rng.randint(2, 4))
        self.tools = rng.sample(vocab.TOOLS, rng.randint(10, 16))
        self.org = rng.pick(vocab.ORGS)
        self.sessions: list[_Session] = []
        for who in people[: rng.randint(3, 6)]:
            user = "u-" + who.split()[0].lower()
            for _ in range(rng.randint(2, 4)):
                session = f"s-{len(self.sessions):03d}-{user[2:]}"
                self.sessions.append(_Session(session, user, who, rng.pick(self.projects), self.org))
        self.slots: dict[str, list[_Fact]] = {}  # slot id -> facts in it, oldest first
        self.by_value: dict[tuple[str, str], list[_Fact]] = {}  # (slot id, value) -> facts
        self.current: dict[str, str] = {}  # slot id -> the value it holds now
        self.facts: list[_Fact] = []  # for reinforcement, retraction and promotion
        self.entities = _Known()  # entity ids observed
        self.edges = _Known()  # relationship keys observed
        self.live: dict[str, int] = {}  # slot id -> facts in it not retracted
        self.retracted: list[tuple[str, str, _Fact | None]] = []  # (kind, item id, fact)
        self.retracted_facts: set[str] = set()
        self.contested = _Known()  # slots that hold two or more values
        self.small_talk = [  # rendered once: formatting per turn was half the generator's time
            rng.pick(vocab.FILLER).format(
                person=rng.pick(people).split()[0],
                tool=rng.pick(self.tools),
                proj=rng.pick(self.projects),
                org=self.org,
            )
            for _ in range(160)
        ]

    def next_id(self) -> str:
        self.counter += 1
        return f"{self.prefix}{self.counter}"


class _Turn:
    """What one turn appends, in order, with the provenance of its derived events."""

    def __init__(self, tenant: _Tenant, at: datetime, session: _Session, turn_id: str) -> None:
        self.tenant, self.at, self.session, self.turn_id = tenant, at, session, turn_id
        self.turn_event_id = tenant.next_id()
        self.appends: list[Append] = []
        self.meta = Metadata(
            causation_id=self.turn_event_id,
            correlation_id=session.name,
            extractor="heuristic",
            extractor_version="1",
        )
        self.sentences: list[str] = []
        self.mentioned: list[str] = []

    def emit(self, stream: str, *events: Event) -> None:
        tenant = self.tenant
        news = [
            NewEvent(
                event=event,
                event_id=tenant.next_id(),
                occurred_at=self.at + timedelta(milliseconds=len(self.appends) + 1 + i),
                metadata=self.meta,
            )
            for i, event in enumerate(events)
        ]
        self.appends.append(Append(tenant.id, stream, news))


def _confidence(rng: _Rng) -> float:
    if rng.random() < 0.15:
        return round(rng.uniform(0.5, 1.0), 3)
    return rng.pick(vocab.CONFIDENCES)


def _variant(rng: _Rng, name: str) -> str:
    """The name as a person might type it: usually as is, sometimes cased or punctuated."""
    roll = rng.random()
    if roll < 0.7:
        return name
    if roll < 0.85:
        return name.lower()
    if roll < 0.93:
        return name.upper()
    return name + rng.pick((".", ",", "!", " "))


# -- derived events -----------------------------------------------------------------------


def _fact(
    turn: _Turn, rng: _Rng, spec: int | None = None, value: str | None = None, confidence: float | None = None
) -> tuple[str, str, float]:
    tenant, session = turn.tenant, turn.session
    if spec is None:
        spec = rng.choices(range(len(vocab.FACT_KEYS)), vocab.KEY_WEIGHTS)[0]
    key, category, scope, values, template = vocab.FACT_KEYS[spec]
    scope_key = {"user": session.user, "project": session.project, "org": session.org, "session": session.name}[scope]
    slot = _slot(scope, scope_key, key)
    held = tenant.slots.setdefault(slot, [])
    if value is None:
        value = tenant.current.get(slot)
        if value is None or rng.random() < 0.2:  # a first mention, or a switch
            value = values[min(int(rng.expovariate(0.9)), len(values) - 1)]
    if held and value != tenant.current.get(slot):
        tenant.contested.add(slot)
    tenant.current[slot] = value
    same = tenant.by_value.setdefault((slot, value), [])
    if same and rng.random() < 0.3:
        memory_id = rng.pick(same).memory_id  # the extractor saw the same fact again
    else:
        memory_id = f"fact-{tenant.next_id()}"
        fact = _Fact(memory_id, slot, value, scope, scope_key, spec)
        held.append(fact)
        same.append(fact)
        tenant.facts.append(fact)
        tenant.live[slot] = tenant.live.get(slot, 0) + 1
    statement = template.format(who=session.who, proj=session.project, v=value)
    if rng.random() < 0.15:
        statement = statement.lower() + "."
    confidence = _confidence(rng) if confidence is None else confidence
    turn.emit(
        f"memory:{memory_id}",
        FactExtracted(
            memory_id=memory_id,
            scope=scope,  # type: ignore[arg-type]
            scope_key=scope_key,
            key=key if rng.random() < 0.8 else key.title(),
            statement=statement,
            category=category,  # type: ignore[arg-type]
            confidence=confidence,
            source_turns=(turn.turn_id,),
            value=value,
        ),
    )
    turn.sentences.append(statement)
    return key, value, confidence


def _facts(turn: _Turn, rng: _Rng, role: str) -> None:
    roll = rng.random()
    count = (0 if roll < 0.2 else 1 if roll < 0.8 else 2) if role == "user" else int(roll < 0.3)
    for _ in range(count):
        _fact(turn, rng)
    if role == "user" and rng.random() < 0.04:  # "we use React, or maybe Vue": a real tie
        spec = rng.choices(range(len(vocab.FACT_KEYS)), vocab.KEY_WEIGHTS)[0]
        values = vocab.FACT_KEYS[spec][3]
        first, second = rng.sample(values, 2)
        confidence = rng.pick(vocab.CONFIDENCES)
        _fact(turn, rng, spec, first, confidence)
        _fact(turn, rng, spec, second, confidence)


def _entity(turn: _Turn, rng: _Rng, entity_type: str, name: str) -> None:
    shown = _variant(rng, name)
    key = _entity_key(entity_type, name)
    alias = vocab.ALIASES.get(name)
    turn.emit(
        f"entity:{key}",
        EntityObserved(
            name=shown,
            entity_type=entity_type,  # type: ignore[arg-type]
            confidence=_confidence(rng),
            aliases=(alias,) if alias and rng.random() < 0.5 else (),
            description=f"{entity_type} mentioned by {turn.session.who}" if rng.random() < 0.1 else None,
            source_turns=(turn.turn_id,),
        ),
    )
    turn.tenant.entities.add(key)
    turn.mentioned.append(shown.strip(" .,!"))


def _entities(turn: _Turn, rng: _Rng) -> None:
    tenant = turn.tenant
    for _ in range(rng.pick((0, 1, 1, 1, 2, 2, 3))):
        roll = rng.random()
        if roll < 0.35:
            _entity(turn, rng, "person", rng.pick(tenant.people))
        elif roll < 0.7:
            _entity(turn, rng, "tool", rng.pick(tenant.tools))
        elif roll < 0.85:
            _entity(turn, rng, "project", rng.pick(tenant.projects))
        elif roll < 0.93:
            _entity(turn, rng, "concept", rng.pick(vocab.CONCEPTS))
        else:
            _entity(turn, rng, "organization", rng.pick((tenant.org, *vocab.VENDORS)))


def _edge(turn: _Turn, rng: _Rng) -> None:
    tenant, session = turn.tenant, turn.session
    roll = rng.random()
    if roll < 0.25:
        ends = [("user", session.user, rng.pick(("USES", "USES", "PREFERS")), "tool", rng.pick(tenant.tools))]
    elif roll < 0.4:
        ends = [("user", session.user, "WORKS_ON", "project", session.project)]
    elif roll < 0.7:  # symmetric: the extractor saw it both ways round
        a, b = rng.sample(tenant.people, 2)
        rel = rng.pick(("WORKS_WITH", "WORKS_WITH", "KNOWS"))
        ends = [("person", a, rel, "person", b), ("person", b, rel, "person", a)]
    elif roll < 0.9:
        ends = [("project", session.project, "DEPENDS_ON", "tool", rng.pick(tenant.tools))]
    else:
        ends = [("person", rng.pick(tenant.people), "PART_OF", "organization", tenant.org)]
    first = ends[0]
    key = _edge_key(*first)
    events = [
        RelationshipObserved(
            relationship_id=key,
            source_name=_variant(rng, sn),
            source_type=st,  # type: ignore[arg-type]
            relation=rel,
            target_name=_variant(rng, tn),
            target_type=tt,  # type: ignore[arg-type]
            confidence=_confidence(rng),
            context=f"said in {session.project}" if rng.random() < 0.3 else None,
            source_turns=(turn.turn_id,),
        )
        for st, sn, rel, tt, tn in ends
    ]
    turn.emit(f"relationship:{key}", *events)
    tenant.edges.add(key)


def _lifecycle(turn: _Turn, rng: _Rng) -> None:
    """Reinforcement, retraction, restoring, promotion and resolution of earlier items."""
    tenant = turn.tenant
    src = (turn.turn_id,)
    if rng.random() < 0.3:
        roll = rng.random()
        if roll < 0.45 and tenant.facts:
            kind, item, stream = "fact", rng.pick(tenant.facts).memory_id, "memory"
        elif roll < 0.75 and tenant.entities.items:
            kind, item, stream = "entity", rng.pick(tenant.entities.items), "entity"
        elif tenant.edges.items:
            kind, item, stream = "relationship", rng.pick(tenant.edges.items), "relationship"
        else:
            kind = ""
        if kind:
            confidence = _confidence(rng) if rng.random() < 0.5 else None
            turn.emit(
                f"{stream}:{item}",
                MemoryReinforced(
                    item_id=item,
                    item_kind=kind,  # type: ignore[arg-type]
                    confidence=confidence,
                    source_turns=src,
                ),
            )
    if rng.random() < 0.04 and tenant.facts:
        _retract(turn, rng)
    if rng.random() < 0.015 and tenant.retracted:
        kind, item, fact = tenant.retracted.pop(rng.randrange(len(tenant.retracted)))
        if fact is not None:
            tenant.retracted_facts.discard(item)
            tenant.live[fact.slot] += 1
        stream = "memory" if kind == "fact" else "relationship"
        turn.emit(
            f"{stream}:{item}",
            MemoryRestored(
                item_id=item,
                item_kind=kind,  # type: ignore[arg-type]
                reason="restored on request",
            ),
        )
    if rng.random() < 0.03 and tenant.facts:
        _promote(turn, rng)
    if rng.random() < 0.02 and tenant.contested.items:
        slot = rng.pick(tenant.contested.items)
        chosen = rng.pick(tenant.slots[slot])
        turn.emit(
            conflict_stream(slot),
            ConflictResolved(
                conflict_id=slot,
                chosen_memory_id=chosen.memory_id,
                reason=rng.pick(("", "confirmed with the team", "the newer plan")),
                resolved_by=turn.session.user,
            ),
        )


def _retract(turn: _Turn, rng: _Rng) -> None:
    """Retract a fact (or else an edge). A fact is retracted only while another of its
    slot stays standing: retracting the last one stops the facts projection today
    (``facts_fold._winners`` calls ``max()`` on no claims; the strict xfail
    ``test_retracting_the_only_fact_of_a_slot_marks_it_retracted`` documents it)."""
    tenant = turn.tenant
    fact = rng.pick(tenant.facts) if rng.random() < 0.7 else None
    if fact is not None and (fact.memory_id in tenant.retracted_facts or tenant.live[fact.slot] < 2):
        fact = None
    if fact is not None:
        kind, item, stream = "fact", fact.memory_id, "memory"
        tenant.retracted_facts.add(item)
        tenant.live[fact.slot] -= 1
    elif tenant.edges.items:
        kind, item, stream = "relationship", rng.pick(tenant.edges.items), "relationship"
    else:
        return
    turn.emit(
        f"{stream}:{item}",
        MemoryRetracted(
            item_id=item,
            item_kind=kind,  # type: ignore[arg-type]
            reason=rng.pick(("", "I don't use that anymore", "that was wrong")),
            source_turns=(turn.turn_id,),
        ),
    )
    tenant.retracted.append((kind, item, fact))


def _promote(turn: _Turn, rng: _Rng) -> None:
    tenant, session = turn.tenant, turn.session
    fact = rng.pick(tenant.facts)
    key, category, _, _, template = vocab.FACT_KEYS[fact.spec]
    scope = rng.pick(vocab.BROADER.get(fact.scope, ("org",)))
    scope_key = {"project": session.project, "user": session.user, "org": session.org}[scope]
    memory_id = f"promo-{tenant.next_id()}"
    statement = template.format(who=session.who, proj=session.project, v=fact.value)
    turn.emit(
        f"memory:{memory_id}",
        MemoryPromoted(
            memory_id=memory_id,
            kind=vocab.PROMOTION.get(category, "lesson_learned"),  # type: ignore[arg-type]
            scope=scope,  # type: ignore[arg-type]
            scope_key=scope_key,
            key=key,
            statement=statement,
            confidence=_confidence(rng),
            promoted_from=fact.memory_id,
            source_turns=(turn.turn_id,),
        ),
    )
    slot = _slot(scope, scope_key, key)
    promoted = _Fact(memory_id, slot, fact.value, scope, scope_key, fact.spec)
    tenant.slots.setdefault(slot, []).append(promoted)
    tenant.live[slot] = tenant.live.get(slot, 0) + 1
    tenant.by_value.setdefault((slot, fact.value), []).append(promoted)
    tenant.facts.append(promoted)


# -- the turn text ------------------------------------------------------------------------


def _text(turn: _Turn, rng: _Rng, role: str) -> str:
    """100 to 600 characters about what the turn's events say, padded with small talk."""
    tenant, session = turn.tenant, turn.session
    parts = [
        rng.pick(vocab.ASSISTANT if role == "assistant" else vocab.OPENERS).format(s=s, proj=session.project)
        for s in turn.sentences
    ]
    if turn.mentioned:
        parts.append(f"This is about {', '.join(turn.mentioned)}.")
    target = rng.randint(100, 600)
    size = sum(len(p) + 1 for p in parts)
    while size < target:
        filler = rng.pick(tenant.small_talk)
        if size + len(filler) > 600 and size >= 100:
            break
        parts.append(filler)
        size += len(filler) + 1
    text = " ".join(parts)
    return text if len(text) <= 600 else text[:597].rsplit(" ", 1)[0] + "..."


def _play_turn(tenant: _Tenant, index: int) -> list[Append]:
    rng = tenant.rng
    session = tenant.sessions[min(int(rng.expovariate(0.35)), len(tenant.sessions) - 1)]
    at = tenant.start + timedelta(seconds=index * 40)
    turn = _Turn(tenant, at, session, f"turn-{tenant.prefix}{index}")
    role = "user" if rng.random() < 0.6 else "assistant"
    _facts(turn, rng, role)
    _entities(turn, rng)
    if rng.random() < 0.55:
        _edge(turn, rng)
    _lifecycle(turn, rng)
    recorded = NewEvent(
        event=TurnRecorded(
            turn_id=turn.turn_id,
            role=role,  # type: ignore[arg-type]
            text=_text(turn, rng, role),
            scopes=Scopes(session=session.name, project=session.project, user=session.user, org=session.org),
            subject=session.user if role == "user" else None,
        ),
        event_id=turn.turn_event_id,
        occurred_at=at,
        metadata=Metadata(correlation_id=session.name, actor=session.user if role == "user" else "agent"),
    )
    return [Append(tenant.id, f"conversation:{session.name}", [recorded]), *turn.appends]


def generate(*, seed: int, tenants: int, turns: int, start: datetime) -> list[Append]:
    """``turns`` turns per tenant and what was extracted from them, tenants interleaved
    turn by turn, in the order they should be appended. Deterministic."""
    cast = [_Tenant(seed, index, start) for index in range(tenants)]
    out: list[Append] = []
    # Millions of long-lived objects make each full garbage collection walk them
    # all; nothing here forms a cycle, so collecting is paused while generating.
    paused = gc.isenabled()
    gc.disable()
    try:
        for index in range(turns):
            for tenant in cast:
                out.extend(_play_turn(tenant, index))
    finally:
        if paused:
            gc.enable()
    return out


def append_all(engine: Engine, appends: Iterable[Append], *, batch_per_tx: int = 1) -> None:
    """Append each ``Append`` in order (``expected_version=None``), ``batch_per_tx`` of
    them per transaction. Idempotent: appending the same workload again writes nothing."""
    if batch_per_tx < 1:
        raise ValueError(f"batch_per_tx must be at least 1, not {batch_per_tx}")
    items = iter(appends)
    while chunk := list(islice(items, batch_per_tx)):
        with engine.begin() as tx:
            for tenant_id, stream_id, events in chunk:
                event_store.append(tx, tenant_id, stream_id, events, None)
