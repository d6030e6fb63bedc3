"""Graph maintenance on a real PostgreSQL: merges found by the rules are events, every
read resolves through them (named entities, graph walks, provenance), a rebuild gives
the same rows, and a split restores both sides; edges decay and rarely mentioned
entities are hidden when read, with nothing written."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from memledger.adapters.embedding import offline
from memledger.errors import InvalidCommand, NotFound
from memledger.events.catalogue import EntityObserved, Event, RelationshipObserved, Scopes, TurnRecorded
from memledger.events.envelope import NewEvent
from memledger.projectors import checkpoints, rebuild, registry, runner
from memledger.projectors.embeddings.projector import embeddings as embeddings_table
from memledger.projectors.entities import merges as entity_merges
from memledger.projectors.entities import projector as entities
from memledger.projectors.relationships import graph_aging, graph_queries
from memledger.selection.words import query_words
from memledger.service import erasure, graph_stats, maintenance, projections, provenance, scope_ids, search
from memledger.store import db, event_store, migrate
from memledger.store.db import drop_database
from memledger.store.schema import events as events_table
from tests.conftest import settle

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
AGING = graph_aging.Aging()


def _org(name: str) -> EntityObserved:
    return EntityObserved(name=name, entity_type="organization", confidence=0.8, source_turns=(f"t-{name}",))


def _person(name: str) -> EntityObserved:
    return EntityObserved(name=name, entity_type="person", confidence=0.8, source_turns=(f"t-{name}",))


def _works_at(person: str, org: str, confidence: float = 0.8) -> RelationshipObserved:
    return RelationshipObserved(
        relationship_id=f"r-{person}-{org}",
        source_name=person,
        source_type="person",
        relation="WORKS_ON",
        target_name=org,
        target_type="organization",
        confidence=confidence,
        source_turns=(f"t-{person}",),
    )


def _append(engine: Engine, tenant: str, timed: list[tuple[Event, datetime]]) -> None:
    news = [NewEvent(event=e, event_id=f"{tenant}-{uuid.uuid4().hex}", occurred_at=at) for e, at in timed]
    with engine.begin() as tx:
        event_store.append(tx, tenant, "extraction:maint", news, None)
    settle(engine, tenant)
    projections.catch_up_all(engine, ["entities", "relationships"])


def _graph(engine: Engine) -> str:
    tenant = f"maint-{uuid.uuid4().hex[:8]}"
    said = [
        _org("ACME"),
        _org("ACME"),
        _org("Acme Inc"),
        _person("Ada Lovelace"),
        _person("Ada Lovelace"),
        _person("Grace Hopper"),
        _person("Grace Hopper"),
        _person("Ada"),
        _person("Ada"),
        _works_at("Ada Lovelace", "ACME", 0.9),
        _works_at("Grace Hopper", "Acme Inc", 0.7),
    ]
    _append(engine, tenant, [(e, T0 + timedelta(seconds=i)) for i, e in enumerate(said)])
    return tenant


def _events(engine: Engine, tenant: str) -> int:
    with engine.connect() as conn:
        return int(conn.execute(sa.select(sa.func.count()).where(events_table.c.tenant_id == tenant)).scalar_one())


def _named(engine: Engine, tenant: str, text: str, aging: graph_aging.Aging | None = None) -> list[str]:
    with engine.connect() as conn:
        hits = graph_queries.named_in(conn, tenant, query_words(text), text, aging=aging)
    return [h.entity_id for h in hits]


def _walk(engine: Engine, tenant: str, start: str) -> list[tuple[str, str, str]]:
    with engine.connect() as conn:
        edges = graph_queries.walk(conn, tenant, [start], depth=1)
    return sorted((e.source_entity_id, e.relation, e.target_entity_id) for e in edges)


@pytest.fixture
def merged(database: Any) -> tuple[Engine, str]:
    engine: Engine = database.engine
    tenant = _graph(engine)
    report = maintenance.run(engine, tenant, owner=engine)
    assert report.shown
    return engine, tenant


def test_a_run_merges_near_equal_names_and_never_a_shared_first_name(database: Any) -> None:
    engine: Engine = database.engine
    tenant = _graph(engine)
    dry = maintenance.run(engine, tenant, dry_run=True)
    assert _events(engine, tenant) == 11  # a dry run writes nothing
    report = maintenance.run(engine, tenant, owner=engine)
    assert [(m.kept_entity_id, m.merged_entity_ids, m.rule) for m in report.merges] == [
        ("organization:acme", ("organization:acme inc",), "normalised_name")
    ]
    assert dry.merges == report.merges
    assert report.entities_merged == 1 and report.shown
    assert report.cosine_rule.startswith("skipped: no entity of the tenant has an embedding")
    assert maintenance.run(engine, tenant, owner=engine).merges == []  # nothing new the second time


def test_reads_resolve_through_a_merge(merged: tuple[Engine, str]) -> None:
    engine, tenant = merged
    assert _named(engine, tenant, "Who works at Acme Inc?") == ["organization:acme"]
    assert _walk(engine, tenant, "organization:acme") == [
        ("person:ada lovelace", "WORKS_ON", "organization:acme"),
        ("person:grace hopper", "WORKS_ON", "organization:acme"),
    ]
    # From the merged entity's own id too: it reads as the kept one.
    assert _walk(engine, tenant, "organization:acme inc") == _walk(engine, tenant, "organization:acme")
    assert _walk(engine, tenant, "person:grace hopper") == [("person:grace hopper", "WORKS_ON", "organization:acme")]
    answer = search.query_graph(engine, tenant, "organization:acme inc", every_user=True)
    assert answer.entity is not None and answer.entity.entity_id == "organization:acme"
    assert len(answer.edges) == 2
    with engine.connect() as conn:  # search's vector channel reads its entities so
        shown = entity_merges.shown_as(conn, tenant, ["organization:acme inc", "organization:acme", "tool:x"], AGING)
    assert shown == {"organization:acme inc": "organization:acme", "organization:acme": "organization:acme"}


def test_provenance_of_the_kept_entity_lists_both_histories(merged: tuple[Engine, str]) -> None:
    engine, tenant = merged
    found = provenance.provenance(engine, tenant, "organization:acme")
    named = [s.payload.get("name") for s in found.steps if s.type == "entity.observed"]
    assert named == ["ACME", "ACME", "Acme Inc"]
    assert [s.type for s in found.steps][-1] == "entities.merged"
    assert {t.turn_id for t in found.turns} <= {"t-ACME", "t-Acme Inc"}


def test_a_rebuild_after_merges_and_splits_equals_the_live_rows(merged: tuple[Engine, str]) -> None:
    engine, tenant = merged
    maintenance.split(engine, tenant, "organization:acme", owner=engine, reason="two companies")
    maintenance.merge(engine, tenant, "person:ada lovelace", ["person:ada"], owner=engine)
    diffs = rebuild.verify(engine, registry.by_name("entities"))
    assert diffs and all(d.equal for d in diffs), diffs


def test_a_split_restores_both_and_the_rules_leave_them_apart(merged: tuple[Engine, str]) -> None:
    engine, tenant = merged
    done = maintenance.split(engine, tenant, "organization:acme", owner=engine, reason="two companies")
    assert done.merged_entity_ids == ["organization:acme inc"] and done.shown
    assert sorted(_named(engine, tenant, "Acme Inc or ACME?")) == ["organization:acme", "organization:acme inc"]
    assert _walk(engine, tenant, "organization:acme") == [("person:ada lovelace", "WORKS_ON", "organization:acme")]
    assert maintenance.run(engine, tenant, owner=engine).merges == []
    with engine.connect() as conn:
        assert not entity_merges.has_merges(conn, tenant)


def _bad_merge_cases() -> list[tuple[str, list[str], type[Exception]]]:
    return [
        ("organization:acme", ["person:ada lovelace"], InvalidCommand),  # another type
        ("organization:acme", ["organization:acme"], InvalidCommand),  # itself
        ("organization:acme", [], InvalidCommand),
        ("organization:acme", ["organization:nobody"], NotFound),
        ("organization:nobody", ["person:ada"], NotFound),
        ("organization:acme inc", ["organization:acme"], InvalidCommand),  # into a merged one
    ]


def test_bad_merges_and_splits_are_refused_and_write_nothing(merged: tuple[Engine, str]) -> None:
    engine, tenant = merged
    before = _events(engine, tenant)
    for kept, ids, error in _bad_merge_cases():
        with pytest.raises(error):
            maintenance.merge(engine, tenant, kept, ids)
    with pytest.raises(InvalidCommand, match="not merged into"):
        maintenance.split(engine, tenant, "organization:acme", ["person:ada"])
    with pytest.raises(InvalidCommand, match="no entity is merged"):
        maintenance.split(engine, tenant, "person:ada lovelace")
    assert _events(engine, tenant) == before


def test_rarely_mentioned_stale_entities_are_hidden_but_counted(database: Any) -> None:
    engine: Engine = database.engine
    tenant = f"prune-{uuid.uuid4().hex[:8]}"
    old, later = T0, T0 + timedelta(days=200)
    _append(
        engine,
        tenant,
        [
            (_person("Zed Quill"), old),  # once, long ago, no edge: hidden
            (_person("Yara Quill"), old),  # once, long ago, but a recent edge: shown
            (_works_at("Yara Quill", "Quill Works"), later),
            (_person("Xavi Quill"), old),
            (_person("Xavi Quill"), old),  # twice: shown
            (_person("Wren Quill"), later),  # once, recently: shown
        ],
    )
    aging = graph_aging.Aging(min_mentions=2, recent_days=90)
    everyone = ["person:wren quill", "person:xavi quill", "person:yara quill", "person:zed quill"]
    text = "Zed Quill and Yara Quill and Xavi Quill and Wren Quill"
    assert sorted(_named(engine, tenant, text)) == everyone  # without aging: every one
    assert sorted(_named(engine, tenant, text, aging)) == everyone[:3]
    with engine.connect() as conn:
        assert graph_aging.hidden_count(conn, tenant, aging) == 1
        assert sorted(entity_merges.shown_as(conn, tenant, everyone, aging)) == everyone[:3]
        assert graph_aging.hidden_count(conn, tenant, graph_aging.Aging(min_mentions=0)) == 0
    assert graph_stats.graph_stats(engine, tenant, aging=aging).hidden_entities == 1
    assert maintenance.status(engine, tenant, aging=aging).hidden_entities == 1
    # An auditor still finds it.
    assert provenance.provenance(engine, tenant, "person:zed quill").steps


def test_edge_weights_decay_from_the_last_reinforcement_to_the_reading_time(database: Any) -> None:
    engine: Engine = database.engine
    tenant = f"decay-{uuid.uuid4().hex[:8]}"
    _append(engine, tenant, [(_works_at("Ada Lovelace", "ACME", 0.8), T0)])
    with engine.connect() as conn:
        at_once = graph_queries.walk(conn, tenant, ["organization:acme"], depth=1, at=T0)
        later = graph_queries.walk(conn, tenant, ["organization:acme"], depth=1, at=T0 + timedelta(days=90))
    assert [e.weight for e in at_once] == [0.8]
    assert [e.weight for e in later] == [0.4]
    assert [e.confidence for e in later] == [0.8]  # nothing written: the row keeps its confidence


class _EntitiesV2:
    """The entities projection as v2 declared it: its tables only (nothing is applied)."""

    name, version, handles = "entities", 2, frozenset[str]()


def test_a_live_v2_copy_is_made_v3_in_place_and_equals_a_rebuild(database: Any) -> None:
    url = database.new_database("upgrade")
    engine = db.create_engine(url)
    try:
        migrate.upgrade(engine)
        runner.install(engine, _EntitiesV2())  # type: ignore[arg-type]
        with engine.connect() as conn:
            assert checkpoints.get(conn, "entities").version == 2  # type: ignore[union-attr]
        projections.install_all(engine)  # upgrades it
        with engine.connect() as conn:
            assert checkpoints.get(conn, "entities").version == 3  # type: ignore[union-attr]
        assert not entities.upgrade_in_place(engine)  # v3 already: left as it is
        tenant = _graph(engine)
        maintenance.run(engine, tenant, owner=engine)
        projections.catch_up_all(engine, ["entities"])
        diffs = rebuild.verify(engine, registry.by_name("entities"))
        assert diffs and all(d.equal for d in diffs), diffs
    finally:
        engine.dispose()
        drop_database(database.server_url, str(url.database))


def test_the_embedding_rule_runs_over_the_entities_vectors(database: Any) -> None:
    engine: Engine = database.engine
    tenant = f"cosine-{uuid.uuid4().hex[:8]}"
    tools = ["Kubernetes cluster", "Kubernetes clusters", "Redis", "Kafka"]  # the first two: cosine 0.97
    said = [EntityObserved(name=t, entity_type="tool", confidence=0.8) for t in tools]
    said.append(EntityObserved(name="Kubernetes cluster", entity_type="tool", confidence=0.8))
    _append(engine, tenant, [(e, T0 + timedelta(seconds=i)) for i, e in enumerate(said)])
    projections.catch_up_all(engine, ["embeddings"])
    report = maintenance.run(engine, tenant, owner=engine)
    assert report.cosine_rule == "ran over 4 entity vectors (people left out)"
    assert [(m.kept_entity_id, m.merged_entity_ids, m.rule) for m in report.merges] == [
        ("tool:kubernetes cluster", ("tool:kubernetes clusters",), "embedding")
    ]
    assert report.merges[0].score > 0.95


def test_the_embedding_rule_compares_only_the_tenants_model(database: Any) -> None:
    """A fallback model's rows (waiting for the backfill) are never compared with the
    first model's: the rule reads one model's vectors."""
    engine: Engine = database.engine
    tenant = f"cosine-{uuid.uuid4().hex[:8]}"
    said = [EntityObserved(name=t, entity_type="tool", confidence=0.8) for t in ("Kubernetes cluster", "Redis")]
    _append(engine, tenant, [(e, T0 + timedelta(seconds=i)) for i, e in enumerate(said)])
    projections.catch_up_all(engine, ["embeddings"])
    rows = embeddings_table.c
    with db.begin(engine) as tx:
        tx.execute(
            sa.update(embeddings_table)
            .where(rows.tenant_id == tenant, rows.item_id == "tool:redis")
            .values(model="fallback/model")
        )
    with db.reading(engine) as conn:
        found = entity_merges.entity_vectors(conn, tenant, 100, offline().model)
        other = entity_merges.entity_vectors(conn, tenant, 100, "fallback/model")
    assert (found.count, found.ids) == (1, ["tool:kubernetes cluster"])
    assert (other.count, other.ids) == (1, ["tool:redis"])


def test_statistics_count_merged_entities_apart_and_degrees_through_merges(merged: tuple[Engine, str]) -> None:
    engine, tenant = merged
    found = graph_stats.graph_stats(engine, tenant)
    assert found.entities_by_type["organization"] == {"active": 1, "merged": 1}
    assert (found.entities, found.merged_entities) == (4, 1)  # acme, ada lovelace, grace hopper, ada
    by_degree = {t.entity_id: t.degree for t in found.top_by_degree}
    assert by_degree["organization:acme"] == 2
    assert "organization:acme inc" not in by_degree
    assert "organization:acme inc" not in {t.entity_id for t in found.top_by_mentions}


def test_erasing_the_one_who_named_a_merged_entity_erases_the_merge_too(database: Any) -> None:
    engine: Engine = database.engine
    tenant = f"erase-{uuid.uuid4().hex[:8]}"
    ada, bob = (scope_ids.stored_id(engine, tenant, "user", who) for who in ("ada", "bob"))
    said: list[Event] = [
        TurnRecorded(turn_id="t-ada", role="user", text="I work at Acme Inc.", scopes=Scopes(user=ada)),
        TurnRecorded(turn_id="t-bob", role="user", text="ACME, and ACME again.", scopes=Scopes(user=bob)),
        EntityObserved(name="Acme Inc", entity_type="organization", confidence=0.8, source_turns=("t-ada",)),
        EntityObserved(name="ACME", entity_type="organization", confidence=0.8, source_turns=("t-bob",)),
        EntityObserved(name="ACME", entity_type="organization", confidence=0.8, source_turns=("t-bob",)),
    ]
    _append(engine, tenant, [(e, T0 + timedelta(seconds=i)) for i, e in enumerate(said)])
    assert maintenance.run(engine, tenant, owner=engine).entities_merged == 1
    erasure.erase(engine, tenant, "ada", reason="asked")
    projections.catch_up_all(engine, ["entities"])
    with engine.connect() as conn:
        left = entity_merges.merge_inputs(conn, tenant)
    # Ada's entity is gone, and with it the merge that named it: ACME is merged with nothing.
    assert [(r.entity_id, r.mention_count, r.merged_into) for r in left] == [("organization:acme", 2, None)]
    diffs = rebuild.verify(engine, registry.by_name("entities"))
    assert diffs and all(d.equal for d in diffs), diffs
