"""As-of selection reads the folded graph as the live reads do: a merged entity is found as
the kept one and walks its edges, a rarely mentioned stale entity is hidden, and edges rank
by their weight at the as-of moment. Pure: folds and ``from_state.gather``, no database."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memledger.events.catalogue import EntitiesMerged, EntityObserved, Event, RelationshipObserved, Scopes
from memledger.events.envelope import Metadata, Recorded
from memledger.projectors.entities import projector as entities
from memledger.projectors.entities.projector import EntityRow
from memledger.projectors.relationships import projector as relationships
from memledger.selection import from_state

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _state(
    timed: list[tuple[Event, datetime]],
) -> tuple[dict[str, EntityRow], dict[str, relationships.RelationshipRow]]:
    rows: dict[tuple[str, str], EntityRow] = {}
    edges = relationships.Rows([])
    for i, (event, at) in enumerate(timed, start=1):
        rec = Recorded(
            tenant_id="t",
            position=i,
            tx_id=i,
            stream_id="s",
            stream_version=i,
            event_id=f"e{i}",
            occurred_at=at,
            recorded_at=at,
            metadata=Metadata(),
            event=event,
        )
        entities.evolve(rows, rec, set())
        relationships.evolve(edges, rec)
    return {k: r for (_, k), r in rows.items()}, {k: r for (_, k), r in edges.by_key.items()}


def _org(name: str) -> EntityObserved:
    return EntityObserved(name=name, entity_type="organization", confidence=0.8)


def _edge(person: str, org: str, confidence: float) -> RelationshipObserved:
    return RelationshipObserved(
        relationship_id=f"r-{person}",
        source_name=person,
        source_type="person",
        relation="WORKS_ON",
        target_name=org,
        target_type="organization",
        confidence=confidence,
    )


def _graph_items(timed: list[tuple[Event, datetime]], request: str, at: datetime | None = None) -> list[str]:
    found, edges = _state(timed)
    pool = from_state.gather({}, found, edges, Scopes(), request, min_confidence=0.0, categories=None, at=at)
    ranked = sorted((c for c in pool if "graph" in c.ranks), key=lambda c: c.ranks["graph"])
    return [c.item.item_id for c in ranked]


MERGED: list[tuple[Event, datetime]] = [
    (_org("ACME"), T0),
    (_org("ACME"), T0),
    (_org("Acme Inc"), T0),
    (_edge("Ada Lovelace", "Acme Inc", 0.9), T0),
    (
        EntitiesMerged(
            kept_entity_id="organization:acme",
            merged_entity_ids=("organization:acme inc",),
            rule="normalised_name",
            score=1.0,
            merged_by="test",
        ),
        T0,
    ),
]


def test_a_merged_entity_is_found_as_the_kept_one_with_its_edges() -> None:
    items = _graph_items(MERGED, "Who works at Acme Inc?")
    assert items == ["organization:acme", "person:ada lovelace|WORKS_ON|organization:acme inc"]


def test_a_rarely_mentioned_stale_entity_is_hidden() -> None:
    timed = [(_org("Globex"), T0), (_org("Initech"), T0 + timedelta(days=200))]
    assert _graph_items(timed, "Globex or Initech?") == ["organization:initech"]


def test_edges_rank_by_their_weight_at_the_as_of_moment() -> None:
    timed: list[tuple[Event, datetime]] = [
        (_org("ACME"), T0),
        (_org("ACME"), T0),
        (_edge("Old Friend", "ACME", 0.9), T0),  # more confident, but said long ago
        (_edge("New Hire", "ACME", 0.6), T0 + timedelta(days=180)),
    ]
    at = T0 + timedelta(days=180)
    assert _graph_items(timed, "ACME", at=at)[1:] == [
        "person:new hire|WORKS_ON|organization:acme",
        "person:old friend|WORKS_ON|organization:acme",
    ]
    assert _graph_items(timed, "ACME", at=T0)[1:] == [  # as of then, the old edge was fresh
        "person:old friend|WORKS_ON|organization:acme",
        "person:new hire|WORKS_ON|organization:acme",
    ]
