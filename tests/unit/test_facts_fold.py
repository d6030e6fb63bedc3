"""The facts fold without a database: how a slot's facts compete, and that the
result does not depend on how the events were cut into batches."""

from __future__ import annotations

import copy
import itertools
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta, timezone

import msgspec
import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from memledger.events.catalogue import (
    ConflictResolved,
    Event,
    FactExtracted,
    MemoryPromoted,
    MemoryReinforced,
    MemoryRestored,
    MemoryRetracted,
)
from memledger.events.envelope import Metadata, Recorded
from memledger.events.keys import slot_id
from memledger.projectors.facts import projector as facts
from memledger.projectors.facts.fold import ConflictRow, FactRow, FactsState

TENANT = "t1"
T0 = datetime(2024, 1, 1, tzinfo=UTC)
SLOT = slot_id("project", "p1", "database")


class Ledger:
    """Numbers events the way the ledger would: positions, transactions, times."""

    def __init__(self) -> None:
        self._positions = itertools.count(1)

    def rec(
        self, event: Event, *, at: datetime | None = None, tenant: str = TENANT, event_id: str | None = None
    ) -> Recorded:
        position = next(self._positions)
        return Recorded(
            tenant_id=tenant,
            position=position,
            tx_id=1000 + position,
            stream_id="conv",
            stream_version=position,
            event_id=event_id or f"e{position}",
            occurred_at=at or T0 + timedelta(minutes=position),
            recorded_at=T0 + timedelta(minutes=position),
            metadata=Metadata(),
            event=event,
        )


def extracted(
    memory_id: str,
    statement: str,
    confidence: float = 0.9,
    *,
    key: str = "database",
    valid_from: datetime | None = None,
    valid_to: datetime | None = None,
    turns: tuple[str, ...] = (),
) -> FactExtracted:
    return FactExtracted(
        memory_id=memory_id,
        scope="project",
        scope_key="p1",
        key=key,
        statement=statement,
        category="decision",
        confidence=confidence,
        valid_from=valid_from,
        valid_to=valid_to,
        source_turns=turns,
    )


def fold_all(batch: Iterable[Recorded]) -> tuple[dict[str, FactRow], dict[str, ConflictRow]]:
    """Fold everything in one batch from an empty state: (facts, conflicts) by id."""
    rows, conflicts = facts.fold(FactsState(), list(batch))
    return {r.memory_id: r for r in rows}, {c.conflict_id: c for c in conflicts}


def at(days: int) -> datetime:
    return T0 + timedelta(days=days)


class Tables:
    """What the facts tables would hold: rows by key, as the projector writes them."""

    def __init__(self) -> None:
        self.facts: dict[tuple[str, str], FactRow] = {}
        self.conflicts: dict[tuple[str, str], ConflictRow] = {}

    def load(self, batch: Sequence[Recorded]) -> FactsState:
        """What ``facts._load_state`` reads for ``batch``: every fact of every slot it
        touches, and those slots' conflicts; copies, as if read from the database."""
        ids, slots = facts._referenced(batch)
        slots |= {(r.tenant_id, r.slot_id) for k, r in self.facts.items() if k in ids}
        state = FactsState()
        for key, row in self.facts.items():
            if (row.tenant_id, row.slot_id) in slots:
                state.facts[key] = copy.deepcopy(row)
        for key, conflict in self.conflicts.items():
            if key in slots:
                state.conflicts[key] = copy.deepcopy(conflict)
        return state

    def apply(self, batch: Sequence[Recorded]) -> None:
        rows, conflicts = facts.fold(self.load(batch), batch)
        for row in rows:
            self.facts[(row.tenant_id, row.memory_id)] = copy.deepcopy(row)
        for conflict in conflicts:
            self.conflicts[(conflict.tenant_id, conflict.conflict_id)] = copy.deepcopy(conflict)

    def snapshot(self) -> tuple[list[object], list[object]]:
        return (
            [msgspec.to_builtins(self.facts[k]) for k in sorted(self.facts)],
            [msgspec.to_builtins(self.conflicts[k]) for k in sorted(self.conflicts)],
        )


def in_batches(events: Sequence[Recorded], cuts: Iterable[int]) -> Tables:
    tables = Tables()
    bounds = sorted({0, len(events), *(c % (len(events) + 1) for c in cuts)})
    for start, end in itertools.pairwise(bounds):
        tables.apply(events[start:end])
    return tables


# --- competing facts ---------------------------------------------------------------


def test_a_single_fact_is_active_and_no_conflict_is_recorded() -> None:
    ledger = Ledger()
    rows, conflicts = fold_all([ledger.rec(extracted("m1", "We use PostgreSQL", 0.9))])

    assert rows["m1"].status == "active"
    assert rows["m1"].slot_id == SLOT
    assert rows["m1"].conflicted is False
    assert rows["m1"].superseded_by is None
    assert conflicts == {}


def test_higher_confidence_wins_even_when_it_is_older() -> None:
    ledger = Ledger()
    rows, conflicts = fold_all(
        [
            ledger.rec(extracted("old", "We use PostgreSQL", 0.95, valid_from=at(1))),
            ledger.rec(extracted("new", "We use MySQL", 0.8, valid_from=at(2))),
        ]
    )

    assert rows["old"].status == "active"
    assert rows["new"].status == "superseded"
    assert rows["new"].superseded_by == "old"
    assert rows["new"].valid_to is None, "an older winner does not end a newer fact's validity"
    conflict = conflicts[SLOT]
    assert conflict.state == "resolved"
    assert conflict.resolution == "higher_confidence"
    assert conflict.winner_ids == ["old"]
    assert conflict.memory_ids == ["old", "new"]


def test_equal_confidence_the_newer_valid_time_wins_and_ends_the_older_one() -> None:
    ledger = Ledger()
    rows, conflicts = fold_all(
        [
            # recorded in the opposite order of valid time: valid time decides
            ledger.rec(extracted("later", "We use MySQL", 0.9, valid_from=at(5))),
            ledger.rec(extracted("earlier", "We use PostgreSQL", 0.9, valid_from=at(1))),
        ]
    )

    assert rows["later"].status == "active"
    assert rows["earlier"].status == "superseded"
    assert rows["earlier"].superseded_by == "later"
    assert rows["earlier"].valid_to == at(5), "valid_to of the superseded is the winner's valid_from"
    assert rows["later"].valid_to is None
    assert conflicts[SLOT].resolution == "newer"
    assert conflicts[SLOT].state == "resolved"


def test_equal_confidence_and_equal_valid_time_keeps_both_active_and_flags_them() -> None:
    ledger = Ledger()
    rows, conflicts = fold_all(
        [
            ledger.rec(extracted("a", "We use PostgreSQL", 0.9, valid_from=at(1))),
            ledger.rec(extracted("b", "We use MySQL", 0.9, valid_from=at(1))),
        ]
    )

    for memory_id in ("a", "b"):
        assert rows[memory_id].status == "active"
        assert rows[memory_id].conflicted is True
        assert rows[memory_id].superseded_by is None
    conflict = conflicts[SLOT]
    assert conflict.state == "open"
    assert conflict.resolution == "ambiguous"
    assert conflict.winner_ids == ["a", "b"]


def test_a_persons_resolution_overrides_the_automatic_rules() -> None:
    ledger = Ledger()
    rows, conflicts = fold_all(
        [
            ledger.rec(extracted("strong", "We use PostgreSQL", 0.95, valid_from=at(1))),
            ledger.rec(extracted("weak", "We use MySQL", 0.75, valid_from=at(2))),
            ledger.rec(
                ConflictResolved(conflict_id=SLOT, chosen_memory_id="weak", reason="we migrated", resolved_by="ana"),
                event_id="resolution",
            ),
        ]
    )

    assert rows["weak"].status == "active"
    assert rows["strong"].status == "superseded"
    assert rows["strong"].superseded_by == "weak"
    assert rows["strong"].valid_to == at(2)
    assert "resolution" in rows["weak"].source_events
    conflict = conflicts[SLOT]
    assert conflict.resolution == "manual"
    assert conflict.state == "resolved"
    assert conflict.manual_choice == "weak"
    assert conflict.manual_reason == "we migrated"
    assert conflict.resolved_by == "ana"


def test_a_persons_resolution_of_an_ambiguous_conflict_closes_it() -> None:
    ledger = Ledger()
    rows, conflicts = fold_all(
        [
            ledger.rec(extracted("a", "We use PostgreSQL", 0.9, valid_from=at(1))),
            ledger.rec(extracted("b", "We use MySQL", 0.9, valid_from=at(1))),
            ledger.rec(ConflictResolved(conflict_id=SLOT, chosen_memory_id="a")),
        ]
    )

    assert (rows["a"].status, rows["a"].conflicted) == ("active", False)
    assert (rows["b"].status, rows["b"].superseded_by) == ("superseded", "a")
    assert conflicts[SLOT].state == "resolved"


def test_retracting_the_winner_restores_the_superseded_fact_and_restore_brings_it_back() -> None:
    ledger = Ledger()
    tables = Tables()  # one batch per step, as a live runner would apply them
    tables.apply(
        [
            ledger.rec(extracted("old", "We use MySQL", 0.9, valid_from=at(1))),
            ledger.rec(extracted("new", "We use PostgreSQL", 0.9, valid_from=at(3))),
        ]
    )
    old, new = tables.facts[(TENANT, "old")], tables.facts[(TENANT, "new")]
    assert (old.status, old.superseded_by, old.valid_to) == ("superseded", "new", at(3))
    assert new.status == "active"

    tables.apply([ledger.rec(MemoryRetracted(item_id="new", item_kind="fact", reason="wrong"), at=at(4))])
    old, new = tables.facts[(TENANT, "old")], tables.facts[(TENANT, "new")]
    assert (new.status, new.retracted, new.retracted_reason) == ("retracted", True, "wrong")
    assert new.valid_to == at(4), "a retracted fact is valid until it was retracted"
    assert (old.status, old.superseded_by, old.valid_to) == ("active", None, None)
    conflict = tables.conflicts[(TENANT, SLOT)]
    assert (conflict.state, conflict.memory_ids) == ("dissolved", ["old"])

    tables.apply([ledger.rec(MemoryRestored(item_id="new", item_kind="fact"), at=at(5))])
    old, new = tables.facts[(TENANT, "old")], tables.facts[(TENANT, "new")]
    assert (new.status, new.retracted, new.retracted_reason, new.valid_to) == (
        "active",
        False,
        None,
        None,
    )
    assert (old.status, old.superseded_by, old.valid_to) == ("superseded", "new", at(3))
    assert tables.conflicts[(TENANT, SLOT)].state == "resolved"


def test_retracting_the_only_fact_of_a_slot_marks_it_retracted() -> None:
    ledger = Ledger()
    tables = Tables()
    tables.apply([ledger.rec(extracted("m1", "We use PostgreSQL", 0.9))])
    tables.apply([ledger.rec(MemoryRetracted(item_id="m1", item_kind="fact", reason="wrong"))])

    row = tables.facts[(TENANT, "m1")]
    assert (row.status, row.retracted, row.superseded_by) == ("retracted", True, None)

    tables.apply([ledger.rec(MemoryRestored(item_id="m1", item_kind="fact"))])
    assert tables.facts[(TENANT, "m1")].status == "active"


def test_a_conflict_retracted_in_the_same_batch_or_the_next_gives_the_same_rows() -> None:
    ledger = Ledger()
    events = [
        ledger.rec(extracted("a", "We use MySQL", 0.9, valid_from=at(1))),
        ledger.rec(extracted("b", "We use PostgreSQL", 0.8, valid_from=at(3))),
        ledger.rec(MemoryRetracted(item_id="b", item_kind="fact")),
    ]
    whole = Tables()
    whole.apply(events)

    assert in_batches(events, [2]).snapshot() == whole.snapshot()


def test_a_retracted_manual_choice_falls_back_to_the_automatic_rules() -> None:
    ledger = Ledger()
    rows, conflicts = fold_all(
        [
            ledger.rec(extracted("a", "We use PostgreSQL", 0.95)),
            ledger.rec(extracted("b", "We use MySQL", 0.8)),
            ledger.rec(extracted("c", "We use SQLite", 0.7)),
            ledger.rec(ConflictResolved(conflict_id=SLOT, chosen_memory_id="b")),
            ledger.rec(MemoryRetracted(item_id="b", item_kind="fact")),
        ]
    )

    assert rows["a"].status == "active"
    assert (rows["c"].status, rows["c"].superseded_by) == ("superseded", "a")
    assert rows["b"].status == "retracted"
    assert conflicts[SLOT].resolution == "higher_confidence"
    assert conflicts[SLOT].manual_choice == "b", "the choice is remembered for a restore"


def test_the_same_turns_extracted_again_are_no_new_mention() -> None:
    """Another extractor (or a re-extraction) reading the same turn finds the same fact:
    that is not the user saying it again. Before, switching the extractor re-extracted
    history and reinforced every fact once more (0.85 -> 0.88)."""
    ledger = Ledger()
    first = ledger.rec(extracted("m1", "We use PostgreSQL", 0.85, turns=("t1",)))
    again = ledger.rec(extracted("m1", "We use PostgreSQL", 0.85, turns=("t1",)))
    rows, _ = fold_all([first, again])
    assert (rows["m1"].reinforcements, rows["m1"].confidence) == (0, 0.85)
    assert rows["m1"].source_events == ["e1", "e2"]  # provenance names both extractions
    assert (rows["m1"].updated_at, rows["m1"].last_position) == (first.recorded_at, first.position)


def test_a_retracted_fact_said_again_in_a_new_turn_comes_back_and_leads_its_slot_again() -> None:
    """Before, a retracted fact stayed retracted whatever the user said later, and the fact
    it had superseded was served as current."""
    ledger = Ledger()
    tables = Tables()
    tables.apply(
        [
            ledger.rec(extracted("old", "We use MySQL", 0.9, valid_from=at(1), turns=("t1",))),
            ledger.rec(extracted("new", "We use PostgreSQL", 0.9, valid_from=at(3), turns=("t2",))),
        ]
    )
    tables.apply([ledger.rec(MemoryRetracted(item_id="new", item_kind="fact", reason="wrong"), at=at(4))])
    assert tables.facts[(TENANT, "old")].status == "active"

    tables.apply([ledger.rec(extracted("new", "We use PostgreSQL", 0.9, turns=("t3",)), at=at(6))])

    old, new = tables.facts[(TENANT, "old")], tables.facts[(TENANT, "new")]
    assert (new.status, new.retracted, new.retracted_reason, new.valid_to) == ("active", False, None, None)
    assert new.valid_from == at(6), "valid from the new mention, not from before the retraction"
    assert (old.status, old.superseded_by) == ("superseded", "new")


def test_a_retracted_fact_extracted_again_from_its_own_turns_stays_retracted() -> None:
    """A re-extraction (another extractor reading the same turns) is no new mention, so it
    never undoes a person's retraction."""
    ledger = Ledger()
    rows, _ = fold_all(
        [
            ledger.rec(extracted("m1", "We use PostgreSQL", 0.9, turns=("t1",))),
            ledger.rec(MemoryRetracted(item_id="m1", item_kind="fact", reason="wrong")),
            ledger.rec(extracted("m1", "We use PostgreSQL", 0.9, turns=("t1",))),
        ]
    )
    assert (rows["m1"].status, rows["m1"].retracted_reason) == ("retracted", "wrong")


def test_the_same_memory_extracted_twice_is_one_reinforced_fact() -> None:
    ledger = Ledger()
    rows, conflicts = fold_all(
        [
            ledger.rec(extracted("m1", "We use PostgreSQL", 0.8, turns=("t1",))),
            ledger.rec(extracted("m1", "We use PostgreSQL", 0.8, turns=("t2", "t1"))),
        ]
    )

    assert list(rows) == ["m1"]
    assert rows["m1"].reinforcements == 1
    assert rows["m1"].confidence > 0.8
    assert rows["m1"].source_turns == ["t1", "t2"]
    assert rows["m1"].source_events == ["e1", "e2"]
    assert conflicts == {}


def test_the_same_statement_under_two_memory_ids_is_not_a_conflict() -> None:
    ledger = Ledger()
    rows, conflicts = fold_all(
        [
            ledger.rec(extracted("m1", "We use PostgreSQL.", 0.8)),
            ledger.rec(extracted("m2", "  we use   postgresql ", 0.9)),
        ]
    )

    assert conflicts == {}
    assert rows["m2"].status == "active"
    assert rows["m2"].conflicted is False
    assert rows["m1"].conflicted is False
    # the weaker copy of the same claim steps back behind the stronger one
    assert (rows["m1"].status, rows["m1"].superseded_by) == ("superseded", "m2")


def test_low_confidence_facts_are_marked_low_confidence() -> None:
    ledger = Ledger()
    rows, _ = fold_all(
        [
            ledger.rec(extracted("m1", "We might use Kafka", 0.5, key="queue")),
            ledger.rec(extracted("m2", "Deploys on Fridays", 0.69, key="deploys")),
            ledger.rec(extracted("m3", "Tabs not spaces", 0.7, key="indent")),
        ]
    )

    assert rows["m1"].status == "low_confidence"
    assert rows["m2"].status == "low_confidence"
    assert rows["m3"].status == "active", "0.7 is the threshold itself"


def test_reinforcement_lifts_a_low_confidence_fact_and_can_change_the_winner() -> None:
    ledger = Ledger()
    rows, conflicts = fold_all(
        [
            ledger.rec(extracted("a", "We use PostgreSQL", 0.85, valid_from=at(1))),
            ledger.rec(extracted("b", "We use MySQL", 0.6, valid_from=at(1))),
        ]
    )
    assert rows["a"].status == "active"
    assert rows["b"].status == "superseded"

    ledger = Ledger()
    rows, conflicts = fold_all(
        [
            ledger.rec(extracted("a", "We use PostgreSQL", 0.85, valid_from=at(1))),
            ledger.rec(extracted("b", "We use MySQL", 0.6, valid_from=at(1))),
            ledger.rec(MemoryReinforced(item_id="b", item_kind="fact", confidence=0.9)),
        ]
    )
    assert rows["b"].confidence == 0.92
    assert rows["b"].reinforcements == 1
    assert rows["b"].status == "active"
    assert (rows["a"].status, rows["a"].superseded_by) == ("superseded", "b")
    assert conflicts[SLOT].resolution == "higher_confidence"


def test_a_stated_valid_to_is_kept_and_not_overwritten_by_supersession() -> None:
    ledger = Ledger()
    rows, _ = fold_all(
        [
            ledger.rec(extracted("old", "Sprint goal: ship v1", 0.9, valid_from=at(1), valid_to=at(2))),
            ledger.rec(extracted("new", "Sprint goal: ship v2", 0.9, valid_from=at(10))),
        ]
    )

    assert rows["old"].status == "superseded"
    assert rows["old"].valid_to == at(2)
    assert rows["old"].stated_valid_to == at(2)


def test_valid_from_defaults_to_when_the_event_occurred() -> None:
    ledger = Ledger()
    rows, _ = fold_all([ledger.rec(extracted("m1", "We use PostgreSQL"), at=at(7))])

    assert rows["m1"].valid_from == at(7)


def test_a_promotion_is_a_fact_of_its_own_in_the_wider_scope() -> None:
    ledger = Ledger()
    promoted = MemoryPromoted(
        memory_id="p1",
        kind="lesson_learned",
        scope="org",
        scope_key="acme",
        key="database",
        statement="Prefer PostgreSQL",
        promoted_from="m1",
    )
    rows, _ = fold_all([ledger.rec(extracted("m1", "We use PostgreSQL")), ledger.rec(promoted)])

    assert rows["p1"].slot_id == slot_id("org", "acme", "database")
    assert (rows["p1"].kind, rows["p1"].category, rows["p1"].promoted_from) == (
        "lesson_learned",
        "lesson_learned",
        "m1",
    )
    assert rows["p1"].confidence == 1.0
    assert rows["p1"].status == "active"
    assert rows["m1"].status == "active", "promotion copies; the original stays"


def test_references_to_unknown_facts_and_to_other_tenants_are_ignored() -> None:
    ledger = Ledger()
    rows, conflicts = fold_all(
        [
            ledger.rec(extracted("m1", "We use PostgreSQL", 0.9)),
            ledger.rec(MemoryRetracted(item_id="m1", item_kind="fact"), tenant="other"),
            ledger.rec(MemoryReinforced(item_id="nope", item_kind="fact")),
            ledger.rec(MemoryRetracted(item_id="m1", item_kind="entity")),
            ledger.rec(ConflictResolved(conflict_id="x", chosen_memory_id="nope")),
        ]
    )

    assert list(rows) == ["m1"]
    assert rows["m1"].status == "active"
    assert rows["m1"].source_events == ["e1"]
    assert conflicts == {}


def test_the_same_slot_in_two_tenants_does_not_compete() -> None:
    ledger = Ledger()
    rows, conflicts = facts.fold(
        FactsState(),
        [
            ledger.rec(extracted("m1", "We use PostgreSQL", 0.9), tenant="a"),
            ledger.rec(extracted("m1", "We use MySQL", 0.9), tenant="b"),
        ],
    )

    assert [(r.tenant_id, r.status, r.reinforcements) for r in rows] == [
        ("a", "active", 0),
        ("b", "active", 0),
    ]
    assert conflicts == []


# --- batch boundaries: random sequences -----------------------------------------------


MEMORY_IDS = ["m1", "m2", "m3", "m4"]
STATEMENTS = ["We use PostgreSQL", "we use postgresql.", "We use MySQL", "We use SQLite"]
SAME_KEYS = ["database", "queue"]
CASED_KEYS = ["database", "Database ", "queue"]  # "Database " is the slot of "database"


def fact_events(keys: list[str], *, retractions: bool) -> st.SearchStrategy[Event]:
    """Events about a handful of facts in two slots: few ids, so they collide often."""
    item = st.sampled_from([*MEMORY_IDS, "p1"])
    options: list[st.SearchStrategy[Event]] = [
        st.builds(
            extracted,
            st.sampled_from(MEMORY_IDS),
            st.sampled_from(STATEMENTS),
            st.sampled_from([0.5, 0.6, 0.7, 0.8, 0.9]),
            key=st.sampled_from(keys),
            valid_from=st.one_of(st.none(), st.sampled_from([at(1), at(2), at(3)])),
            turns=st.lists(st.sampled_from(["t1", "t2", "t3"]), max_size=2).map(tuple),
        ),
        st.builds(
            MemoryPromoted,
            memory_id=st.sampled_from(["p1", "m1"]),
            kind=st.just("decision"),
            scope=st.just("project"),
            scope_key=st.just("p1"),
            key=st.sampled_from(keys),
            statement=st.sampled_from(STATEMENTS),
            confidence=st.sampled_from([0.8, 0.9, 1.0]),
            promoted_from=st.sampled_from(MEMORY_IDS),
        ),
        st.builds(
            MemoryReinforced,
            item_id=item,
            item_kind=st.just("fact"),
            confidence=st.one_of(st.none(), st.sampled_from([0.6, 0.95])),
        ),
        st.builds(ConflictResolved, conflict_id=st.just("c"), chosen_memory_id=item),
    ]
    if retractions:
        options += [
            st.builds(MemoryRetracted, item_id=item, item_kind=st.just("fact"), reason=st.just("no")),
            st.builds(MemoryRestored, item_id=item, item_kind=st.just("fact")),
        ]
    return st.one_of(*options)


def _recorded(events: list[tuple[Event, str, int]]) -> list[Recorded]:
    ledger = Ledger()
    return [ledger.rec(e, tenant=tenant, at=at(day)) for e, tenant, day in events]


def _same_rows_whatever_the_batches(events: list[tuple[Event, str, int]], cuts: list[int]) -> None:
    recorded = _recorded(events)
    whole = Tables()
    whole.apply(recorded)

    assert in_batches(recorded, cuts).snapshot() == whole.snapshot()
    assert in_batches(recorded, range(len(recorded))).snapshot() == whole.snapshot()
    _check_invariants(whole)


def _sequences(keys: list[str], *, retractions: bool) -> st.SearchStrategy[list[tuple[Event, str, int]]]:
    tenant = st.sampled_from(["t1", "t1", "t1", "t2"])
    event = fact_events(keys, retractions=retractions)
    return st.lists(st.tuples(event, tenant, st.integers(0, 3)), min_size=1, max_size=25)


_cuts = st.lists(st.integers(0, 25), max_size=6)


@settings(max_examples=150, deadline=None)
@given(events=_sequences(SAME_KEYS, retractions=False), cuts=_cuts)
def test_folding_in_one_batch_or_in_many_gives_the_same_rows(
    events: list[tuple[Event, str, int]], cuts: list[int]
) -> None:
    """Extractions, promotions, reinforcements and resolutions, cut anywhere."""
    _same_rows_whatever_the_batches(events, cuts)


@settings(max_examples=150, deadline=None, derandomize=True, phases=[Phase.generate])
@given(events=_sequences(CASED_KEYS, retractions=True), cuts=_cuts)
def test_folding_with_retractions_and_cased_keys_in_one_batch_or_in_many_gives_the_same_rows(
    events: list[tuple[Event, str, int]], cuts: list[int]
) -> None:
    """The same with retractions, restores, and keys that differ only in case."""
    _same_rows_whatever_the_batches(events, cuts)


def _check_invariants(tables: Tables) -> None:
    by_slot: dict[tuple[str, str], list[FactRow]] = {}
    for row in tables.facts.values():
        by_slot.setdefault((row.tenant_id, row.slot_id), []).append(row)
    for members in by_slot.values():
        live = [r for r in members if not r.retracted]
        standing = [r for r in live if r.status in ("active", "low_confidence")]
        assert bool(standing) == bool(live), "a slot with candidates keeps one standing"
        ids = {r.memory_id for r in standing}
        for row in members:
            assert 0.0 <= row.confidence <= 1.0
            assert (row.status == "retracted") == row.retracted
            if row.status == "superseded":
                assert row.superseded_by in ids, "superseded by a standing fact of its slot"
            else:
                assert row.superseded_by is None


def test_batch_boundaries_do_not_change_a_reason_that_quotes_valid_time() -> None:
    """A tie broken by valid time is explained with that time. The reason must not
    depend on the offset the time was written with: PostgreSQL hands it back in the
    session's zone, so a slot folded again after a reload must say the same."""
    plus_two = timezone(timedelta(hours=2))
    ledger = Ledger()
    events = [
        ledger.rec(extracted("a", "We use MySQL", 0.9, valid_from=datetime(2024, 3, 1, 12, tzinfo=plus_two))),
        ledger.rec(extracted("b", "We use PostgreSQL", 0.9, valid_from=at(1))),
    ]
    whole = Tables()
    whole.apply(events)

    reloaded = Tables()
    reloaded.apply(events[:1])
    for row in reloaded.facts.values():  # as the database returns it: in UTC
        row.valid_from = row.valid_from.astimezone(UTC)
    reloaded.apply(events[1:])

    assert reloaded.snapshot()[1] == whole.snapshot()[1]


def test_a_conflicts_key_does_not_depend_on_the_batch_that_created_it() -> None:
    ledger = Ledger()
    events = [
        ledger.rec(extracted("a", "We use MySQL", 0.9, key="database")),
        ledger.rec(extracted("b", "We use PostgreSQL", 0.8, key="Database")),
        ledger.rec(ConflictResolved(conflict_id=SLOT, chosen_memory_id="b")),
    ]
    whole = Tables()
    whole.apply(events)

    assert in_batches(events, [2]).snapshot() == whole.snapshot()


@pytest.mark.parametrize("turns", [("t1",), ()], ids=["its own turn", "no turn"])
def test_a_reinforcement_without_a_new_turn_never_undoes_a_retraction(turns: tuple[str, ...]) -> None:
    """Ledgers from before facts v3 hold re-extractions as ``MemoryReinforced``: one citing
    the fact's own turn (or none) is no new mention, so the person's retraction stands."""
    ledger = Ledger()
    rows, _ = fold_all(
        [
            ledger.rec(extracted("m1", "We use PostgreSQL", 0.9, turns=("t1",))),
            ledger.rec(MemoryRetracted(item_id="m1", item_kind="fact", reason="wrong")),
            ledger.rec(MemoryReinforced(item_id="m1", item_kind="fact", confidence=0.9, source_turns=turns)),
        ]
    )
    assert (rows["m1"].status, rows["m1"].retracted_reason) == ("retracted", "wrong")


def test_a_reinforcement_from_a_new_turn_brings_a_retracted_fact_back() -> None:
    ledger = Ledger()
    rows, _ = fold_all(
        [
            ledger.rec(extracted("m1", "We use PostgreSQL", 0.9, turns=("t1",))),
            ledger.rec(MemoryRetracted(item_id="m1", item_kind="fact", reason="wrong")),
            ledger.rec(MemoryReinforced(item_id="m1", item_kind="fact", confidence=0.9, source_turns=("t2",))),
        ]
    )
    assert rows["m1"].status == "active"
