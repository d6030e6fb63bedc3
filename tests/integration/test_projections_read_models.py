"""Each read model end to end on a real PostgreSQL: append, ``runner.install`` and
``catch_up`` (the inline mode), read the rows back.

The module works in a database of its own, so the live projections see only these
events and nobody else's; each test writes under its own tenant. ``catch_up`` runs
with tiny batches here, so the closing comparison with a rebuild (5000-event
batches) also proves a rebuild equals incremental application.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any

import psycopg
import pytest
import sqlalchemy as sa
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import Engine

from memledger.errors import ProjectionFailed
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
from memledger.events.envelope import Cursor, NewEvent
from memledger.events.keys import entity_id, relationship_key, slot_id
from memledger.projectors import checkpoints, rebuild, runner
from memledger.projectors.base import Projector
from memledger.projectors.entities.projector import EntitiesProjector, entities
from memledger.projectors.facts.projector import FactsProjector, conflicts, facts
from memledger.projectors.relationships.projector import RelationshipsProjector, relationships
from memledger.projectors.turns.projector import TurnsProjector, search, turns
from memledger.store import event_reads, event_store, outage
from tests.integration.test_projections_support import (
    assert_equals_rebuild,
    compare_with_rebuild,
    fresh_database,
    wait_until_visible,
)

if TYPE_CHECKING:
    from tests.conftest import TestDatabase

T0 = datetime(2025, 6, 1, 9, 0, tzinfo=UTC)
SMALL_BATCH = 2
ALL: tuple[Projector, ...] = (
    TurnsProjector(),
    FactsProjector(),
    EntitiesProjector(),
    RelationshipsProjector(),
)


@pytest.fixture(scope="module")
def models(database: TestDatabase) -> Iterator[Engine]:
    """This module's database, with every projection installed."""
    with fresh_database(database, "proj_models") as engine:
        for projector in ALL:
            runner.install(engine, projector)
        yield engine


@pytest.fixture
def scratch(database: TestDatabase) -> Iterator[Engine]:
    """A database for one test whose projections must start from nothing."""
    with fresh_database(database, "proj_scratch") as engine:
        yield engine


class Writer:
    """Appends events for one tenant, one minute apart, each with a fresh event id."""

    def __init__(self, engine: Engine, tenant: str) -> None:
        self.engine, self.tenant, self.n = engine, tenant, 0

    def append(self, *items: Event, stream: str = "s") -> list[str]:
        news = []
        for event in items:
            self.n += 1
            news.append(
                NewEvent(
                    event=event,
                    event_id=f"{self.tenant}-e{self.n}",
                    occurred_at=T0 + timedelta(minutes=self.n),
                )
            )
        with self.engine.begin() as tx:
            event_store.append(tx, self.tenant, stream, news, None)
        wait_until_visible(self.engine, self.n, tenant=self.tenant)
        return [new.event_id for new in news]


def catch_up(engine: Engine, *projectors: Projector) -> int:
    return sum(runner.catch_up(engine, p, batch_size=SMALL_BATCH) for p in projectors)


def rows(engine: Engine, table: sa.Table, tenant: str, *, by: str) -> dict[str, dict[str, Any]]:
    with engine.connect() as conn:
        found = conn.execute(sa.select(table).where(table.c.tenant_id == tenant)).mappings().all()
    return {row[by]: dict(row) for row in found}


def table_sums(engine: Engine, tables: Sequence[sa.Table]) -> list[tuple[int, str]]:
    with engine.connect() as conn:
        return [rebuild.table_checksum(conn, table) for table in tables]


def assert_reapplying_changes_nothing(engine: Engine, projector: Projector, *tables: sa.Table) -> None:
    before = table_sums(engine, tables)
    with engine.connect() as conn:
        cp = checkpoints.get(conn, projector.name)
    assert runner.catch_up(engine, projector, batch_size=SMALL_BATCH) == 0
    assert runner.catch_up(engine, projector) == 0
    assert table_sums(engine, tables) == before
    with engine.connect() as conn:
        assert checkpoints.get(conn, projector.name) == cp


def fact(
    memory_id: str,
    statement: str,
    confidence: float,
    *,
    key: str = "database",
    valid_from: datetime | None = None,
    turns_: tuple[str, ...] = (),
) -> FactExtracted:
    return FactExtracted(
        memory_id=memory_id,
        scope="project",
        scope_key="phoenix",
        key=key,
        statement=statement,
        category="technical_fact",
        confidence=confidence,
        valid_from=valid_from,
        source_turns=turns_,
    )


# --- turns ----------------------------------------------------------------------------


def test_turns_are_projected_searchable_and_a_turn_id_keeps_its_first_recording(models: Engine, tenant: str) -> None:
    writer = Writer(models, tenant)
    scopes = Scopes(session="s1", project="phoenix", user="u-ada", org="acme")
    first = writer.append(
        TurnRecorded(turn_id="t1", role="user", text="We deploy the billing service on Tuesdays", scopes=scopes),
        TurnRecorded(turn_id="t2", role="assistant", text="Noted, Tuesdays it is.", scopes=scopes),
        stream="conversation:s1",
    )
    writer.append(TurnRecorded(turn_id="t1", role="user", text="a second recording of t1"))

    assert catch_up(models, TurnsProjector()) == 3

    found = rows(models, turns, tenant, by="turn_id")
    assert set(found) == {"t1", "t2"}
    t1 = found["t1"]
    assert t1["text"] == "We deploy the billing service on Tuesdays"
    assert t1["event_id"] == first[0]
    assert (t1["session_key"], t1["project_key"], t1["user_key"], t1["org_key"]) == (
        "s1",
        "phoenix",
        "u-ada",
        "acme",
    )
    assert t1["stream_id"] == "conversation:s1"
    assert t1["occurred_at"] == T0 + timedelta(minutes=1)
    with models.connect() as conn:
        hits = search(conn, tenant, ["deploy", "billing"])
        assert [hit[0] for hit in hits] == ["t1"]
        assert search(conn, f"{tenant}-other", ["deploy", "billing"]) == []
    assert_reapplying_changes_nothing(models, TurnsProjector(), turns)


def test_turn_search_weighs_rare_words_above_common_ones_and_long_turns_below_short_ones(
    models: Engine, tenant: str
) -> None:
    """BM25 over the turns found. Each turn below holds one word of the search, once,
    and the ones it must rank lower come earlier in the ledger (``ts_rank`` would have
    tied them and put those first)."""
    writer = Writer(models, tenant)
    padding = " ".join(f"filler{i}" for i in range(60))
    writer.append(
        *(TurnRecorded(turn_id=f"common-{i}", role="user", text=f"Standup is on Monday, item {i}.") for i in range(6)),
        TurnRecorded(turn_id="long", role="user", text=f"{padding} Kindred is on my list. {padding}"),
        TurnRecorded(turn_id="short", role="user", text="Kindred is on my list."),
        TurnRecorded(turn_id="nothing", role="user", text="Unrelated words entirely."),
    )
    catch_up(models, TurnsProjector())
    with models.connect() as conn:
        found = search(conn, tenant, ["monday", "kindred"])
        ids = [hit[0] for hit in found]
        assert ids[0] == "short"  # the rare word first (the common turns are as short, and earlier)
        assert set(ids) == {"short", "long", *(f"common-{i}" for i in range(6))}  # any word: the common one too
        scores = [hit[2] for hit in found]
        assert scores == sorted(scores, reverse=True)
        assert [hit[0] for hit in search(conn, tenant, ["kindred"])] == ["short", "long"]  # the shorter first
        assert search(conn, tenant, ["the", "is"]) == []  # stop words match nothing
        assert search(conn, tenant, []) == []
        assert [hit[0] for hit in search(conn, tenant, ["kindred", "kindred"], limit=1)] == ["short"]


def test_turn_search_scores_every_turn_of_a_rare_word_past_the_cap(models: Engine, tenant: str) -> None:
    """The cap bounds the turns scored per word, not in all: the one turn holding a
    rare word is found however many turns hold the common one."""
    writer = Writer(models, tenant)
    writer.append(
        *(TurnRecorded(turn_id=f"c-{i:02}", role="user", text=f"A common remark, number {i}.") for i in range(40))
    )
    writer.append(TurnRecorded(turn_id="zebra", role="user", text="A common remark about a zebra."))
    writer.append(TurnRecorded(turn_id="odd", role="user", text="O'Brien's notes live in C:\\temp\\notes."))
    catch_up(models, TurnsProjector())
    with models.connect() as conn:
        found = [hit[0] for hit in search(conn, tenant, ["common", "zebra"], match_cap=10, limit=50)]
        assert found[0] == "zebra"
        assert len(found) <= 10
        assert len(search(conn, tenant, ["common"], match_cap=10, limit=50)) == 10
        assert len(search(conn, tenant, ["common"], limit=50)) == 41
        # quotes and backslashes in a word are matched as text, never parsed as a query
        assert [hit[0] for hit in search(conn, tenant, ["o'brien's", "c:\\temp"])] == ["odd"]


def _longest_tsvector_text(chars: int) -> str:
    """Distinct hyphenated words of four-byte letters: about the largest tsvector a
    text of ``chars`` characters makes (~9.6 bytes a character, measured)."""
    letters = [chr(c) for c in range(0x1D400, 0x1D6A4) if chr(c).isalpha()]
    pairs = ("".join(p) for p in itertools.product(letters, repeat=2))
    words: list[str] = []
    used = 0
    while used < chars - 12:
        word = f"{next(pairs)}-{next(pairs)}"
        words.append(word)
        used += len(word) + 1
    return " ".join(words)


def test_a_turn_whose_words_would_overflow_a_tsvector_is_projected_and_so_are_later_ones(
    models: Engine, tenant: str
) -> None:
    """A turn may hold 200,000 characters; a tsvector at most 1 MB. Before, such a turn
    failed the insert, was retried as an outage forever, and no later turn of any
    tenant was projected. Now its first 50,000 characters are indexed."""
    huge = _longest_tsvector_text(200_000)
    writer = Writer(models, tenant)
    writer.append(TurnRecorded(turn_id="huge", role="user", text=huge))
    later = Writer(models, f"{tenant}-later")
    later.append(TurnRecorded(turn_id="after", role="user", text="We deploy the billing service on Tuesdays"))

    catch_up(models, TurnsProjector())

    assert rows(models, turns, tenant, by="turn_id")["huge"]["text"] == huge  # stored whole
    with models.connect() as conn:
        assert [hit[0] for hit in search(conn, tenant, [huge.split()[0]])] == ["huge"]  # indexed from the start
        assert search(conn, tenant, [huge.split()[-1]]) == []  # not past 50,000 characters
        assert [hit[0] for hit in search(conn, f"{tenant}-later", ["deploy", "billing"])] == ["after"]


def test_a_value_too_big_for_its_type_is_not_an_outage() -> None:
    """Class 54 is an OperationalError in psycopg; waiting does not make the work fit."""
    too_big = sa_exc.OperationalError("INSERT ...", {}, psycopg.errors.ProgramLimitExceeded("string is too long"))
    cut = sa_exc.OperationalError("SELECT 1", {}, psycopg.OperationalError("server closed the connection"))
    assert not outage.is_outage(too_big)
    assert outage.is_outage(cut)


# --- facts ----------------------------------------------------------------------------


def test_facts_and_their_conflict_are_projected_and_a_persons_choice_wins(models: Engine, tenant: str) -> None:
    writer = Writer(models, tenant)
    slot = slot_id("project", "phoenix", "database")
    writer.append(fact("pg", "Phoenix stores its data in PostgreSQL", 0.9, turns_=("t1",)))
    writer.append(fact("my", "Phoenix stores its data in MySQL", 0.8, turns_=("t2",)))
    writer.append(fact("lang", "Phoenix is written in Go", 0.6, key="language"))
    assert catch_up(models, FactsProjector()) >= 3

    found = rows(models, facts, tenant, by="memory_id")
    assert (found["pg"]["status"], found["my"]["status"], found["my"]["superseded_by"]) == (
        "active",
        "superseded",
        "pg",
    )
    assert found["lang"]["status"] == "low_confidence"
    assert found["pg"]["source_turns"] == ["t1"]
    conflict = rows(models, conflicts, tenant, by="conflict_id")[slot]
    assert (conflict["state"], conflict["resolution"], conflict["winner_ids"]) == (
        "resolved",
        "higher_confidence",
        ["pg"],
    )

    resolution = writer.append(
        ConflictResolved(conflict_id=slot, chosen_memory_id="my", reason="migrated", resolved_by="ada"),
        MemoryReinforced(item_id="lang", item_kind="fact", confidence=0.7, source_turns=("t3",)),
    )
    catch_up(models, FactsProjector())

    found = rows(models, facts, tenant, by="memory_id")
    assert (found["my"]["status"], found["pg"]["status"], found["pg"]["superseded_by"]) == (
        "active",
        "superseded",
        "my",
    )
    assert resolution[0] in found["my"]["source_events"]
    assert found["lang"]["reinforcements"] == 1
    assert found["lang"]["confidence"] == pytest.approx(0.76)
    assert found["lang"]["status"] == "active"
    assert found["lang"]["source_turns"] == ["t3"]
    conflict = rows(models, conflicts, tenant, by="conflict_id")[slot]
    assert (conflict["resolution"], conflict["manual_choice"], conflict["resolved_by"]) == (
        "manual",
        "my",
        "ada",
    )
    with models.connect() as conn:  # the generated search column is filled
        hit = (
            conn.execute(
                sa.select(facts.c.memory_id).where(
                    facts.c.tenant_id == tenant,
                    facts.c.tsv.op("@@")(sa.func.plainto_tsquery("english", "mysql")),
                )
            )
            .scalars()
            .all()
        )
    assert hit == ["my"]
    assert_reapplying_changes_nothing(models, FactsProjector(), facts, conflicts)


def test_an_ambiguous_conflict_keeps_both_facts_and_a_retraction_and_restore_move_the_winner(
    models: Engine, tenant: str
) -> None:
    writer = Writer(models, tenant)
    slot = slot_id("project", "phoenix", "deploy day")
    same_time = T0 - timedelta(days=3)
    writer.append(
        fact("tue", "Deploys go out on Tuesday", 0.85, key="deploy day", valid_from=same_time),
        fact("thu", "Deploys go out on Thursday", 0.85, key="deploy day", valid_from=same_time),
    )
    catch_up(models, FactsProjector())
    found = rows(models, facts, tenant, by="memory_id")
    assert [(found[m]["status"], found[m]["conflicted"]) for m in ("tue", "thu")] == [
        ("active", True),
        ("active", True),
    ]
    assert rows(models, conflicts, tenant, by="conflict_id")[slot]["state"] == "open"

    writer.append(fact("fri", "Deploys go out on Friday", 0.85, key="deploy day"))
    catch_up(models, FactsProjector())
    found = rows(models, facts, tenant, by="memory_id")
    assert found["fri"]["status"] == "active", "equal confidence: the newer valid time wins"
    for older in ("tue", "thu"):
        assert (found[older]["status"], found[older]["superseded_by"]) == ("superseded", "fri")
        assert found[older]["valid_to"] == found["fri"]["valid_from"]

    writer.append(MemoryRetracted(item_id="fri", item_kind="fact", reason="not decided"))
    catch_up(models, FactsProjector())
    found = rows(models, facts, tenant, by="memory_id")
    assert (found["fri"]["status"], found["fri"]["retracted_reason"]) == ("retracted", "not decided")
    assert [(found[m]["status"], found[m]["conflicted"]) for m in ("tue", "thu")] == [
        ("active", True),
        ("active", True),
    ]

    writer.append(MemoryRestored(item_id="fri", item_kind="fact"))
    catch_up(models, FactsProjector())
    found = rows(models, facts, tenant, by="memory_id")
    assert found["fri"]["status"] == "active"
    assert found["tue"]["superseded_by"] == "fri"
    assert_reapplying_changes_nothing(models, FactsProjector(), facts, conflicts)


def test_a_promotion_becomes_a_fact_in_the_wider_scope(models: Engine, tenant: str) -> None:
    writer = Writer(models, tenant)
    writer.append(fact("src", "Run staging migrations on a copy first", 0.9, key="staging"))
    writer.append(
        MemoryPromoted(
            memory_id="promo",
            kind="lesson_learned",
            scope="org",
            scope_key="acme",
            key="staging",
            statement="Run staging migrations on a copy first",
            promoted_from="src",
        )
    )
    catch_up(models, FactsProjector())

    found = rows(models, facts, tenant, by="memory_id")
    assert (found["promo"]["scope"], found["promo"]["kind"], found["promo"]["promoted_from"]) == (
        "org",
        "lesson_learned",
        "src",
    )
    assert found["promo"]["status"] == found["src"]["status"] == "active"


# --- entities -------------------------------------------------------------------------


def test_entities_merge_on_normalised_name_and_type_with_aliases_and_mentions(models: Engine, tenant: str) -> None:
    writer = Writer(models, tenant)
    writer.append(
        EntityObserved(name="Alice Chen", entity_type="person", confidence=0.6, source_turns=("t1",)),
        EntityObserved(name="alice  chen", entity_type="person", confidence=0.5, source_turns=("t2",)),
        EntityObserved(
            name="ALICE CHEN.",
            entity_type="person",
            confidence=0.9,
            aliases=("Ali",),
            description="platform lead",
        ),
        EntityObserved(name="Alice Chen", entity_type="project", confidence=0.7),
    )
    catch_up(models, EntitiesProjector())

    found = rows(models, entities, tenant, by="entity_id")
    assert set(found) == {entity_id("person", "Alice Chen"), entity_id("project", "Alice Chen")}
    alice = found["person:alice chen"]
    assert alice["name"] == "Alice Chen", "the first spelling is kept as the name"
    assert alice["aliases"] == ["alice  chen", "ALICE CHEN.", "Ali"]
    assert alice["mention_count"] == 3
    assert alice["description"] == "platform lead"
    assert alice["source_turns"] == ["t1", "t2"]
    assert alice["first_seen_at"] == T0 + timedelta(minutes=1)
    assert alice["last_seen_at"] == T0 + timedelta(minutes=3)
    assert 0.9 < alice["confidence"] <= 1.0
    assert found["project:alice chen"]["mention_count"] == 1

    confidence = alice["confidence"]
    writer.append(MemoryReinforced(item_id="person:alice chen", item_kind="entity"))
    writer.append(MemoryRetracted(item_id="person:alice chen", item_kind="entity"))
    catch_up(models, EntitiesProjector())
    alice = rows(models, entities, tenant, by="entity_id")["person:alice chen"]
    assert (alice["status"], alice["mention_count"]) == ("retracted", 4)
    assert confidence < alice["confidence"] <= 1.0

    writer.append(MemoryRestored(item_id="person:alice chen", item_kind="entity"))
    catch_up(models, EntitiesProjector())
    assert rows(models, entities, tenant, by="entity_id")["person:alice chen"]["status"] == "active"
    assert_reapplying_changes_nothing(models, EntitiesProjector(), entities)


# --- relationships --------------------------------------------------------------------


def _edge(source: str, relation: str, target: str, confidence: float, **kw: Any) -> RelationshipObserved:
    return RelationshipObserved(
        relationship_id=kw.pop("rid", f"{source}-{relation}-{target}"),
        source_name=source,
        source_type=kw.pop("source_type", "person"),
        relation=relation,
        target_name=target,
        target_type=kw.pop("target_type", "person"),
        confidence=confidence,
        **kw,
    )


def test_a_symmetric_relation_seen_both_ways_is_one_edge_and_reinforcement_raises_confidence(
    models: Engine, tenant: str
) -> None:
    writer = Writer(models, tenant)
    writer.append(
        _edge("Bob Novak", "WORKS_WITH", "Alice Chen", 0.6, rid="r1", source_turns=("t1",)),
        _edge("alice chen", "WORKS_WITH", "Bob Novak", 0.7, rid="r2", context="pairing"),
        _edge("Alice Chen", "USES", "Neovim", 0.8, rid="r3", target_type="tool"),
    )
    catch_up(models, RelationshipsProjector())

    found = rows(models, relationships, tenant, by="relationship_key")
    works_with = relationship_key("person", "Bob Novak", "WORKS_WITH", "person", "Alice Chen")
    assert works_with == relationship_key("person", "Alice Chen", "WORKS_WITH", "person", "Bob Novak")
    assert set(found) == {works_with, relationship_key("person", "Alice Chen", "USES", "tool", "Neovim")}
    edge = found[works_with]
    assert (edge["source_entity_id"], edge["target_entity_id"]) == ("person:alice chen", "person:bob novak")
    assert edge["is_symmetric"] is True
    assert edge["relationship_ids"] == ["r1", "r2"]
    assert edge["mention_count"] == 2
    assert edge["context"] == "pairing"
    first_confidence = edge["confidence"]
    assert 0.7 < first_confidence <= 1.0
    uses = found[relationship_key("person", "Alice Chen", "USES", "tool", "Neovim")]
    assert (uses["source_entity_id"], uses["target_entity_id"], uses["is_symmetric"]) == (
        "person:alice chen",
        "tool:neovim",
        False,
    )
    with models.connect() as conn:  # either end finds the symmetric edge
        for person in ("person:alice chen", "person:bob novak"):
            count = conn.execute(
                sa.select(sa.func.count())
                .select_from(relationships)
                .where(
                    relationships.c.tenant_id == tenant,
                    relationships.c.relation == "WORKS_WITH",
                    sa.or_(
                        relationships.c.source_entity_id == person,
                        relationships.c.target_entity_id == person,
                    ),
                )
            ).scalar_one()
            assert count == 1

    writer.append(*(MemoryReinforced(item_id="r2", item_kind="relationship") for _ in range(12)))
    catch_up(models, RelationshipsProjector())
    edge = rows(models, relationships, tenant, by="relationship_key")[works_with]
    assert edge["mention_count"] == 14
    assert first_confidence < edge["confidence"] <= 1.0

    writer.append(MemoryRetracted(item_id=works_with, item_kind="relationship"))
    catch_up(models, RelationshipsProjector())
    assert rows(models, relationships, tenant, by="relationship_key")[works_with]["status"] == "retracted"
    writer.append(MemoryRestored(item_id="r1", item_kind="relationship"))
    catch_up(models, RelationshipsProjector())
    assert rows(models, relationships, tenant, by="relationship_key")[works_with]["status"] == "active"
    assert_reapplying_changes_nothing(models, RelationshipsProjector(), relationships)


def test_a_batch_rolled_back_with_its_checkpoint_is_applied_once_later(models: Engine, tenant: str) -> None:
    """A crash before the commit loses the rows and the checkpoint together."""
    runner.catch_up(models, EntitiesProjector())
    writer = Writer(models, tenant)
    writer.append(*(EntityObserved(name="Grafana", entity_type="tool", confidence=0.7) for _ in range(3)))
    before = table_sums(models, [entities])
    with models.connect() as conn:
        cp = checkpoints.get(conn, "entities")

    with models.connect() as conn:
        crashed = conn.begin()
        assert runner.apply_next_batch(conn, EntitiesProjector(), checkpoint="entities") == 3
        crashed.rollback()

    assert table_sums(models, [entities]) == before
    with models.connect() as conn:
        assert checkpoints.get(conn, "entities") == cp
    assert runner.catch_up(models, EntitiesProjector()) == 3
    assert rows(models, entities, tenant, by="entity_id")["tool:grafana"]["mention_count"] == 3


# --- read your writes -----------------------------------------------------------------


def _cursor_of(engine: Engine, event_id: str, tenant: str) -> Cursor:
    with engine.connect() as conn:
        found = [r for r in event_reads.read_all(conn, tenant_id=tenant, limit=10_000) if r.event_id == event_id]
    assert len(found) == 1
    return found[0].cursor


def test_wait_for_returns_once_the_live_runner_has_applied_an_append(models: Engine, tenant: str) -> None:
    runner.catch_up(models, FactsProjector())
    writer = Writer(models, tenant)
    (appended,) = writer.append(fact("rw", "Phoenix caches with Redis", 0.9, key="cache"))
    target = _cursor_of(models, appended, tenant)

    assert runner.wait_for(models, FactsProjector(), target, timeout=0.2) is False, "nobody applies it"

    stop = threading.Event()
    follower = threading.Thread(
        target=lambda: runner.follow(models, [FactsProjector()], poll_interval=0.02, should_stop=stop.is_set),
        daemon=True,
    )
    follower.start()
    try:
        assert runner.wait_for(models, FactsProjector(), target, timeout=30) is True
        assert rows(models, facts, tenant, by="memory_id")["rw"]["status"] == "active", "the write is readable"
    finally:
        stop.set()
        follower.join(timeout=30)

    (turn,) = writer.append(TurnRecorded(turn_id="rw-turn", role="user", text="not a fact"))
    started = time.monotonic()
    assert runner.wait_for(models, FactsProjector(), _cursor_of(models, turn, tenant), timeout=5) is True
    assert time.monotonic() - started < 1, "an event the projection does not handle is not waited for"


# --- the whole module: rebuilds equal what was applied in tiny batches -----------------


@pytest.mark.parametrize("projector", ALL, ids=lambda p: p.name)
def test_a_rebuild_equals_incremental_application(models: Engine, projector: Projector) -> None:
    runner.catch_up(models, projector, batch_size=SMALL_BATCH)

    assert_equals_rebuild(models, projector)


def _tamper(engine: Engine, tenant: str) -> dict[str, tuple[int, str]]:
    """A fact projected, then changed by hand; returns the checksums from before."""
    Writer(engine, tenant).append(fact("tamper", "Phoenix is written in Rust", 0.9, key="language"))
    runner.catch_up(engine, FactsProjector())
    before = {t.name: c for t, c in zip((facts, conflicts), table_sums(engine, [facts, conflicts]), strict=True)}
    with engine.begin() as tx:
        changed = tx.execute(
            sa.update(facts)
            .where(facts.c.tenant_id == tenant, facts.c.memory_id == "tamper")
            .values(statement="Phoenix is written in COBOL", confidence=0.1)
        ).rowcount
    assert changed == 1
    return before


def test_a_row_changed_by_hand_differs_from_a_rebuild_and_rebuild_repairs_it(models: Engine, tenant: str) -> None:
    before = _tamper(models, tenant)

    diffs = {d.table: d for d in compare_with_rebuild(models, FactsProjector())}
    assert not diffs["facts"].equal
    assert diffs["facts"].live[0] == diffs["facts"].rebuilt[0], "same rows, different content"
    assert diffs["conflicts"].equal

    rebuild.rebuild(models, FactsProjector())

    assert_equals_rebuild(models, FactsProjector())
    assert dict(zip(("facts", "conflicts"), table_sums(models, [facts, conflicts]), strict=True)) == before
    assert rows(models, facts, tenant, by="memory_id")["tamper"]["statement"] == "Phoenix is written in Rust"
    with models.connect() as conn:
        # text(): a catalogue query.
        schemas = set(conn.execute(sa.text("SELECT nspname FROM pg_namespace")).scalars())
    assert "proj_facts" in schemas
    assert not {s for s in schemas if s.startswith("proj_facts_")}, "no copy is left behind"


def test_verify_reports_a_row_changed_by_hand(scratch: Engine) -> None:
    runner.install(scratch, FactsProjector())
    _tamper(scratch, "t-tamper")

    diffs = {d.table: d for d in rebuild.verify(scratch, FactsProjector())}

    assert not diffs["facts"].equal
    assert diffs["facts"].live_checksum != diffs["facts"].rebuilt_checksum
    assert diffs["conflicts"].equal


# --- known bugs, each in a database of its own ----------------------------------------


def test_retracting_the_only_fact_of_a_slot_does_not_stop_the_projection(scratch: Engine) -> None:
    writer = Writer(scratch, "t-lone")
    writer.append(fact("only", "Phoenix is written in Go", 0.9, key="language"))
    writer.append(MemoryRetracted(item_id="only", item_kind="fact"))
    runner.install(scratch, FactsProjector())

    try:
        runner.catch_up(scratch, FactsProjector())
    except ProjectionFailed as e:
        pytest.fail(f"the facts projection stopped: {e}")
    assert rows(scratch, facts, "t-lone", by="memory_id")["only"]["status"] == "retracted"


def test_a_rebuild_equals_live_application_when_valid_times_carry_an_offset(scratch: Engine) -> None:
    plus_two = timezone(timedelta(hours=2))
    writer = Writer(scratch, "t-offset")
    writer.append(fact("a", "Phoenix stores its data in MySQL", 0.9, valid_from=T0.astimezone(plus_two)))
    writer.append(fact("b", "Phoenix stores its data in SQLite", 0.9, valid_from=T0 - timedelta(days=1)))
    runner.install(scratch, FactsProjector())
    runner.catch_up(scratch, FactsProjector(), batch_size=1)

    assert_equals_rebuild(scratch, FactsProjector())
