"""The entities and relationships folds without a database: merging, aliases,
mention counts, confidence under reinforcement, symmetric edges, retract/restore,
and independence from batch boundaries."""

from __future__ import annotations

import copy
import itertools
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from memledger.events.catalogue import (
    EntityObserved,
    Event,
    MemoryReinforced,
    MemoryRestored,
    MemoryRetracted,
    RelationshipObserved,
)
from memledger.events.envelope import Metadata, Recorded
from memledger.events.keys import entity_id, relationship_key
from memledger.projectors.confidence import merge_ordered, reinforce
from memledger.projectors.entities import projector as entities
from memledger.projectors.entities.projector import EntityRow
from memledger.projectors.relationships import projector as relationships
from memledger.projectors.relationships.projector import RelationshipRow

TENANT = "t1"
T0 = datetime(2024, 5, 1, tzinfo=UTC)


class Ledger:
    def __init__(self) -> None:
        self._positions = itertools.count(1)

    def rec(self, event: Event, *, tenant: str = TENANT, at: datetime | None = None) -> Recorded:
        position = next(self._positions)
        return Recorded(
            tenant_id=tenant,
            position=position,
            tx_id=100 + position,
            stream_id="s",
            stream_version=position,
            event_id=f"e{position}",
            occurred_at=at or T0 + timedelta(minutes=position),
            recorded_at=T0 + timedelta(minutes=position),
            metadata=Metadata(),
            event=event,
        )


def observed(name: str, confidence: float = 0.6, **kw: object) -> EntityObserved:
    return EntityObserved(name=name, entity_type=kw.pop("entity_type", "person"), confidence=confidence, **kw)  # type: ignore[arg-type]


def edge(source: str, relation: str, target: str, confidence: float = 0.6, **kw: object) -> RelationshipObserved:
    return RelationshipObserved(
        relationship_id=kw.pop("rid", f"{source}>{relation}>{target}"),  # type: ignore[arg-type]
        source_name=source,
        source_type=kw.pop("source_type", "person"),  # type: ignore[arg-type]
        relation=relation,
        target_name=target,
        target_type=kw.pop("target_type", "person"),  # type: ignore[arg-type]
        confidence=confidence,
        **kw,  # type: ignore[arg-type]
    )


def fold_entities(batch: Iterable[Recorded]) -> dict[str, EntityRow]:
    rows: dict[tuple[str, str], EntityRow] = {}
    changed: set[tuple[str, str]] = set()
    for rec in batch:
        entities.evolve(rows, rec, changed)
    assert changed == set(rows)
    return {key[1]: row for key, row in rows.items() if key[0] == TENANT}


def fold_edges(batch: Iterable[Recorded]) -> dict[str, RelationshipRow]:
    rows = relationships.Rows([])
    for rec in batch:
        relationships.evolve(rows, rec)
    return {key[1]: row for key, row in rows.by_key.items() if key[0] == TENANT}


# --- entities -------------------------------------------------------------------------


def test_mentions_merge_on_normalised_name_and_type() -> None:
    ledger = Ledger()
    found = fold_entities(
        [
            ledger.rec(observed("Alice Chen", 0.6, source_turns=("t1",))),
            ledger.rec(observed("alice chen", 0.5, source_turns=("t2", "t1"))),
            ledger.rec(observed(" ALICE   CHEN!", 0.7, aliases=("Ali",), description="platform lead")),
            ledger.rec(observed("Alice Chen", 0.9, entity_type="project")),
        ]
    )

    assert set(found) == {entity_id("person", "Alice Chen"), entity_id("project", "alice chen")}
    alice = found["person:alice chen"]
    assert alice.name == "Alice Chen"
    assert alice.aliases == ["alice chen", " ALICE   CHEN!", "Ali"]
    assert alice.mention_count == 3
    assert alice.description == "platform lead"
    assert alice.source_turns == ["t1", "t2"]
    assert (alice.first_position, alice.last_position) == (1, 3)
    assert (alice.first_seen_at, alice.last_seen_at) == (T0 + timedelta(minutes=1), T0 + timedelta(minutes=3))
    assert found["project:alice chen"].mention_count == 1


def test_aliases_are_not_repeated_and_never_repeat_the_name() -> None:
    ledger = Ledger()
    alice = fold_entities(
        [
            ledger.rec(observed("Alice Chen", aliases=("Ali",))),
            ledger.rec(observed("alice chen", aliases=("Ali", "Alice Chen", "A. Chen"))),
            ledger.rec(observed("alice chen", aliases=("A. Chen",))),
        ]
    )["person:alice chen"]

    assert alice.aliases == ["Ali", "alice chen", "A. Chen"]
    assert len(alice.aliases) == len(set(alice.aliases))


def test_the_first_mention_does_not_list_the_name_among_the_aliases() -> None:
    ledger = Ledger()
    alice = fold_entities([ledger.rec(observed("Alice", aliases=("Alice", "Al")))])["person:alice"]

    assert alice.aliases == ["Al"]


def test_a_later_mention_without_a_description_keeps_the_earlier_one() -> None:
    ledger = Ledger()
    alice = fold_entities(
        [
            ledger.rec(observed("Alice", description="designer")),
            ledger.rec(observed("Alice")),
        ]
    )["person:alice"]

    assert alice.description == "designer"


def test_last_seen_never_moves_back_for_a_mention_that_happened_earlier() -> None:
    ledger = Ledger()
    alice = fold_entities(
        [
            ledger.rec(observed("Alice"), at=T0 + timedelta(days=2)),
            ledger.rec(observed("Alice"), at=T0),
        ]
    )["person:alice"]

    assert alice.last_seen_at == T0 + timedelta(days=2)
    assert alice.last_position == 2


def test_an_entity_is_retracted_and_restored_and_references_to_unknown_ones_are_ignored() -> None:
    ledger = Ledger()
    base = [ledger.rec(observed("Alice", 0.8))]
    retract = ledger.rec(MemoryRetracted(item_id="person:alice", item_kind="entity", reason="wrong"))
    restore = ledger.rec(MemoryRestored(item_id="person:alice", item_kind="entity"))
    noise = [
        ledger.rec(MemoryRetracted(item_id="person:bob", item_kind="entity")),
        ledger.rec(MemoryRetracted(item_id="person:alice", item_kind="fact")),
        ledger.rec(MemoryRetracted(item_id="person:alice", item_kind="entity"), tenant="other"),
    ]

    assert fold_entities([*base, retract])["person:alice"].status == "retracted"
    found = fold_entities([*base, retract, restore, *noise])
    assert list(found) == ["person:alice"]
    assert found["person:alice"].status == "active"
    assert found["person:alice"].mention_count == 1, "retract and restore are not mentions"


def test_reinforcing_an_entity_counts_a_mention_and_raises_confidence() -> None:
    ledger = Ledger()
    alice = fold_entities(
        [
            ledger.rec(observed("Alice", 0.6)),
            ledger.rec(MemoryReinforced(item_id="person:alice", item_kind="entity", source_turns=("t9",))),
        ]
    )["person:alice"]

    assert alice.mention_count == 2
    assert alice.confidence == 0.68
    assert alice.source_turns == ["t9"]


_confidence = st.floats(0.0, 1.0, allow_nan=False)


@settings(max_examples=100, deadline=None)
@given(
    first=_confidence,
    later=st.lists(st.tuples(st.booleans(), st.one_of(st.none(), _confidence)), max_size=40),
)
def test_entity_confidence_rises_with_every_mention_and_never_exceeds_one(
    first: float, later: list[tuple[bool, float | None]]
) -> None:
    ledger = Ledger()
    events = [ledger.rec(observed("Alice", first))]
    rows: dict[tuple[str, str], EntityRow] = {}
    changed: set[tuple[str, str]] = set()
    entities.evolve(rows, events[0], changed)
    previous = rows[(TENANT, "person:alice")].confidence
    assert previous == round(first, 6)
    for as_observation, value in later:
        if as_observation:
            event: Event = observed("alice", value if value is not None else 0.5)
        else:
            event = MemoryReinforced(item_id="person:alice", item_kind="entity", confidence=value)
        entities.evolve(rows, ledger.rec(event), changed)
        now = rows[(TENANT, "person:alice")].confidence
        assert previous <= now <= 1.0
        assert now > previous or now == 1.0 or previous >= 0.999995, "a mention never leaves it unchanged below 1"
        previous = now
    assert rows[(TENANT, "person:alice")].mention_count == 1 + len(later)


@settings(max_examples=150, deadline=None)
@given(current=_confidence, observed_=st.one_of(st.none(), _confidence))
def test_reinforce_takes_the_better_estimate_moves_towards_one_and_stays_in_range(
    current: float, observed_: float | None
) -> None:
    after = reinforce(current, observed_)
    better = current if observed_ is None else max(current, observed_)

    assert 0.0 <= after <= 1.0
    assert after >= round(better, 6)
    assert after == round(after, 6)
    assert reinforce(1.0, observed_) == 1.0


def test_merge_ordered_keeps_order_and_adds_only_what_is_missing() -> None:
    assert merge_ordered(["a", "b"], ("b", "c", "a", "d", "c")) == ["a", "b", "c", "d"]
    existing = ["x"]
    assert merge_ordered(existing, ["y"]) == ["x", "y"]
    assert existing == ["x"], "the input list is not changed"


# --- relationships --------------------------------------------------------------------


def test_a_symmetric_relation_seen_both_ways_is_one_edge_in_canonical_order() -> None:
    ledger = Ledger()
    found = fold_edges(
        [
            ledger.rec(edge("Bob", "WORKS_WITH", "Alice", 0.6, rid="r1", source_turns=("t1",))),
            ledger.rec(edge("alice", "WORKS_WITH", "bob", 0.8, rid="r2", context="pairing")),
        ]
    )

    key = relationship_key("person", "Alice", "WORKS_WITH", "person", "Bob")
    assert key == relationship_key("person", "Bob", "WORKS_WITH", "person", "Alice")
    assert list(found) == [key]
    row = found[key]
    assert (row.source_entity_id, row.target_entity_id) == ("person:alice", "person:bob")
    assert (row.source_name, row.target_name) == ("Alice", "Bob"), "names of the first sighting"
    assert row.is_symmetric is True
    assert row.relationship_ids == ["r1", "r2"]
    assert row.mention_count == 2
    assert row.context == "pairing"
    assert row.source_turns == ["t1"]
    assert row.confidence == reinforce(0.6, 0.8)


def test_a_directed_relation_seen_both_ways_is_two_edges() -> None:
    ledger = Ledger()
    found = fold_edges(
        [
            ledger.rec(edge("Alice", "MENTORS", "Bob")),
            ledger.rec(edge("Bob", "MENTORS", "Alice")),
        ]
    )

    assert len(found) == 2
    assert {(r.source_entity_id, r.target_entity_id) for r in found.values()} == {
        ("person:alice", "person:bob"),
        ("person:bob", "person:alice"),
    }
    assert not any(r.is_symmetric for r in found.values())


def test_the_same_names_with_other_types_are_another_edge() -> None:
    ledger = Ledger()
    found = fold_edges(
        [
            ledger.rec(edge("Phoenix", "DEPENDS_ON", "Redis", source_type="project", target_type="tool")),
            ledger.rec(edge("Phoenix", "DEPENDS_ON", "Redis", source_type="project", target_type="concept")),
        ]
    )

    assert len(found) == 2


def test_an_edge_is_found_by_its_key_or_by_any_id_it_was_observed_under() -> None:
    ledger = Ledger()
    key = relationship_key("person", "Alice", "WORKS_WITH", "person", "Bob")
    base = [
        ledger.rec(edge("Alice", "WORKS_WITH", "Bob", 0.5, rid="r1")),
        ledger.rec(edge("Bob", "WORKS_WITH", "Alice", 0.5, rid="r2")),
    ]
    reinforced = [
        ledger.rec(MemoryReinforced(item_id="r2", item_kind="relationship", source_turns=("t7",))),
        ledger.rec(MemoryReinforced(item_id=key, item_kind="relationship")),
    ]
    retract = ledger.rec(MemoryRetracted(item_id="r1", item_kind="relationship"))
    restore = ledger.rec(MemoryRestored(item_id=key, item_kind="relationship"))
    ignored = [
        ledger.rec(MemoryRetracted(item_id="r-unknown", item_kind="relationship")),
        ledger.rec(MemoryRetracted(item_id="r1", item_kind="entity")),
        ledger.rec(MemoryRetracted(item_id="r1", item_kind="relationship"), tenant="other"),
    ]

    row = fold_edges([*base, *reinforced])[key]
    assert row.mention_count == 4
    assert row.source_turns == ["t7"]
    assert fold_edges([*base, *reinforced, retract])[key].status == "retracted"
    found = fold_edges([*base, *reinforced, retract, restore, *ignored])
    assert list(found) == [key]
    assert found[key].status == "active"
    assert found[key].mention_count == 4


@settings(max_examples=100, deadline=None)
@given(steps=st.lists(st.tuples(st.booleans(), st.one_of(st.none(), _confidence)), min_size=1, max_size=40))
def test_edge_confidence_rises_with_reinforcement_and_never_exceeds_one(
    steps: list[tuple[bool, float | None]],
) -> None:
    ledger = Ledger()
    rows = relationships.Rows([])
    relationships.evolve(rows, ledger.rec(edge("Alice", "KNOWS", "Bob", 0.5, rid="r1")))
    key = relationship_key("person", "Alice", "KNOWS", "person", "Bob")
    previous = rows.by_key[(TENANT, key)].confidence
    for as_observation, value in steps:
        if as_observation:
            event: Event = edge("bob", "KNOWS", "alice", value if value is not None else 0.5, rid="r2")
        else:
            event = MemoryReinforced(item_id="r1", item_kind="relationship", confidence=value)
        relationships.evolve(rows, ledger.rec(event))
        now = rows.by_key[(TENANT, key)].confidence
        assert previous <= now <= 1.0
        previous = now
    assert rows.by_key[(TENANT, key)].mention_count == 1 + len(steps)
    assert len(rows.by_key) == 1


# --- batch boundaries -----------------------------------------------------------------


class EntityTable:
    """What ``EntitiesProjector.apply`` does, with a dict for the table."""

    def __init__(self) -> None:
        self.rows: dict[tuple[str, str], EntityRow] = {}

    def apply(self, batch: Sequence[Recorded]) -> None:
        keys = entities._keys(batch)
        loaded = {k: copy.deepcopy(self.rows[k]) for k in keys if k in self.rows}
        changed: set[tuple[str, str]] = set()
        for rec in batch:
            entities.evolve(loaded, rec, changed)
        for key in changed:
            self.rows[key] = copy.deepcopy(loaded[key])


class EdgeTable:
    """What ``RelationshipsProjector.apply`` does, with a dict for the table."""

    def __init__(self) -> None:
        self.rows: dict[tuple[str, str], RelationshipRow] = {}

    def apply(self, batch: Sequence[Recorded]) -> None:
        keys, ids = relationships._referenced(batch)
        loaded = [copy.deepcopy(self.rows[k]) for k in sorted(keys) if k in self.rows]
        for tenant, item_id in sorted(ids):
            loaded += [
                copy.deepcopy(r)
                for k, r in sorted(self.rows.items())
                if k[0] == tenant and item_id in r.relationship_ids
            ]
        rows = relationships.Rows(loaded)
        for rec in batch:
            relationships.evolve(rows, rec)
        for key in rows.changed:
            self.rows[key] = copy.deepcopy(rows.by_key[key])


def _snapshot(rows: dict[tuple[str, str], msgspec.Struct]) -> list[object]:
    return [msgspec.to_builtins(rows[k]) for k in sorted(rows)]


PEOPLE = ["Alice", "alice", "ALICE.", "Bob", "bob ", "Carol"]
# relationship ids as extractors give them: one per (source, relation, target) as written
EDGE_IDS = ["Alice>WORKS_WITH>Bob", "bob >WORKS_WITH>alice", "Alice>MENTORS>Carol", "Carol>MENTORS>Alice"]
_graph_event: st.SearchStrategy[Event] = st.one_of(
    st.builds(
        observed,
        st.sampled_from(PEOPLE),
        st.sampled_from([0.5, 0.7, 0.9]),
        aliases=st.lists(st.sampled_from(["Al", "Bobby", "Alice"]), max_size=2).map(tuple),
        description=st.sampled_from([None, "lead", "designer"]),
        source_turns=st.lists(st.sampled_from(["t1", "t2"]), max_size=2).map(tuple),
    ),
    st.builds(
        edge,
        st.sampled_from(PEOPLE),
        st.sampled_from(["WORKS_WITH", "MENTORS"]),
        st.sampled_from(PEOPLE),
        st.sampled_from([0.5, 0.9]),
        context=st.sampled_from([None, "at work"]),
        source_turns=st.lists(st.sampled_from(["t1", "t2"]), max_size=2).map(tuple),
    ),
    st.builds(
        MemoryReinforced,
        item_id=st.sampled_from(["person:alice", "person:bob", *EDGE_IDS]),
        item_kind=st.sampled_from(["entity", "relationship"]),
        confidence=st.one_of(st.none(), st.sampled_from([0.6, 0.95])),
    ),
    st.builds(
        MemoryRetracted,
        item_id=st.sampled_from(["person:alice", *EDGE_IDS]),
        item_kind=st.sampled_from(["entity", "relationship"]),
    ),
    st.builds(
        MemoryRestored,
        item_id=st.sampled_from(["person:alice", *EDGE_IDS]),
        item_kind=st.sampled_from(["entity", "relationship"]),
    ),
)


@settings(max_examples=100, deadline=None)
@given(
    events=st.lists(st.tuples(_graph_event, st.integers(0, 5)), min_size=1, max_size=25),
    cuts=st.lists(st.integers(0, 25), max_size=6),
)
def test_entities_and_edges_are_the_same_whatever_the_batches(events: list[tuple[Event, int]], cuts: list[int]) -> None:
    ledger = Ledger()
    recorded = [ledger.rec(e, at=T0 + timedelta(hours=h)) for e, h in events]
    bounds = sorted({0, len(recorded), *(c % (len(recorded) + 1) for c in cuts)})

    for table_type in (EntityTable, EdgeTable):
        whole, cut, single = table_type(), table_type(), table_type()
        whole.apply(recorded)
        for start, end in itertools.pairwise(bounds):
            cut.apply(recorded[start:end])
        for rec in recorded:
            single.apply([rec])
        assert _snapshot(cut.rows) == _snapshot(whole.rows)  # type: ignore[arg-type]
        assert _snapshot(single.rows) == _snapshot(whole.rows)  # type: ignore[arg-type]
        for row in whole.rows.values():
            assert 0.0 <= row.confidence <= 1.0
            assert row.status in ("active", "retracted")
