"""The entities fold of merges and splits, without a database: a merge points the
merged rows at the kept one and deletes nothing; a split restores both and keeps them
apart; merges the service would refuse are ignored when a race appends them anyway."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memledger.events.catalogue import EntitiesMerged, EntitiesSplit, EntityObserved, Event, Scopes, TurnRecorded
from memledger.events.envelope import Metadata, Recorded
from memledger.projectors.entities import projector as entities
from memledger.projectors.entities.projector import EntityRow
from memledger.service import erasure_scope

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _fold(events: list[Event]) -> dict[str, EntityRow]:
    rows: dict[tuple[str, str], EntityRow] = {}
    changed: set[tuple[str, str]] = set()
    for i, event in enumerate(events, start=1):
        rec = Recorded(
            tenant_id="t",
            position=i,
            tx_id=i,
            stream_id="s",
            stream_version=i,
            event_id=f"e{i}",
            occurred_at=T0 + timedelta(minutes=i),
            recorded_at=T0 + timedelta(minutes=i),
            metadata=Metadata(),
            event=event,
        )
        entities.evolve(rows, rec, changed)
    return {entity_id: row for (_, entity_id), row in rows.items()}


def _org(name: str) -> EntityObserved:
    return EntityObserved(name=name, entity_type="organization", confidence=0.8)


def _merge(kept: str, *merged: str) -> EntitiesMerged:
    return EntitiesMerged(kept_entity_id=kept, merged_entity_ids=merged, rule="manual", score=1.0, merged_by="test")


SEEN = [_org("Acme"), _org("Acme Inc."), _org("ACME Ltd")]


def test_a_merge_points_the_merged_at_the_kept_and_keeps_every_row() -> None:
    rows = _fold([*SEEN, _merge("organization:acme", "organization:acme inc", "organization:acme ltd")])
    assert len(rows) == 3
    assert rows["organization:acme inc"].merged_into == "organization:acme"
    assert rows["organization:acme inc"].merge_rule == "manual"
    assert rows["organization:acme ltd"].merged_into == "organization:acme"
    assert rows["organization:acme"].merged_into is None


def test_a_split_restores_both_and_keeps_them_apart() -> None:
    merged = _merge("organization:acme", "organization:acme inc")
    split = EntitiesSplit(
        kept_entity_id="organization:acme", merged_entity_ids=("organization:acme inc",), split_by="t"
    )
    rows = _fold([*SEEN, merged, split, merged])  # the same merge again: kept apart now
    member, kept = rows["organization:acme inc"], rows["organization:acme"]
    assert (member.merged_into, member.merged_at, member.merge_rule) == (None, None, None)
    assert member.kept_apart == ["organization:acme"]
    assert kept.kept_apart == ["organization:acme inc"]


def test_merges_the_service_refuses_are_ignored_by_the_fold() -> None:
    tool = EntityObserved(name="Acme", entity_type="tool", confidence=0.8)
    rows = _fold(
        [
            *SEEN,
            tool,
            _merge("organization:acme", "tool:acme", "organization:nobody"),  # another type; unknown
            _merge("organization:acme inc", "organization:acme ltd"),
            _merge("organization:acme", "organization:acme inc"),  # kept by another merge: allowed
            _merge("organization:acme ltd", "organization:acme"),  # into a merged entity: ignored
        ]
    )
    assert rows["tool:acme"].merged_into is None
    assert "organization:nobody" not in rows
    assert rows["organization:acme ltd"].merged_into == "organization:acme inc"
    assert rows["organization:acme inc"].merged_into == "organization:acme"
    assert rows["organization:acme"].merged_into is None


def test_a_merged_entity_mentioned_again_stays_merged() -> None:
    rows = _fold([*SEEN, _merge("organization:acme", "organization:acme inc"), _org("Acme Inc.")])
    member = rows["organization:acme inc"]
    assert member.merged_into == "organization:acme"
    assert member.mention_count == 2


def _recs(events: list[Event]) -> list[Recorded]:
    return [
        Recorded(
            tenant_id="t",
            position=i,
            tx_id=i,
            stream_id="s",
            stream_version=i,
            event_id=f"e{i}",
            occurred_at=T0,
            recorded_at=T0,
            metadata=Metadata(),
            event=event,
        )
        for i, event in enumerate(events, start=1)
    ]


def test_erasing_a_subject_erases_the_merges_naming_an_entity_only_they_named() -> None:
    said = [
        TurnRecorded(turn_id="t-ada", role="user", text="I work at Acme Inc.", scopes=Scopes(user="ada")),
        TurnRecorded(turn_id="t-bob", role="user", text="ACME and Globex GmbH.", scopes=Scopes(user="bob")),
        EntityObserved(name="Acme Inc", entity_type="organization", confidence=0.8, source_turns=("t-ada",)),
        EntityObserved(name="ACME", entity_type="organization", confidence=0.8, source_turns=("t-bob",)),
        EntityObserved(name="Globex GmbH", entity_type="organization", confidence=0.8, source_turns=("t-bob",)),
        EntityObserved(name="Globex", entity_type="organization", confidence=0.8, source_turns=("t-bob",)),
        _merge("organization:acme", "organization:acme inc"),
        _merge("organization:globex", "organization:globex gmbh"),
    ]
    erased = erasure_scope.for_subject(_recs(said), "ada")
    assert [r.position for r in erased.records] == [1, 3, 7]  # Ada's turn, her entity, its merge
