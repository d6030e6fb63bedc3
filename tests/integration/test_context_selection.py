"""Context selection: the shortcuts taken for speed choose exactly what the full
gathering chooses, and a served block is recorded so that a replay matches it.

- The graph (entities named in the request and the edges around them) is walked
  only when the facts leave room for its shortest item and the item cap is not
  reached: every fact is chosen before any graph item, so otherwise a walk could
  add nothing. Compared with gathering everything first, on requests and budgets
  where the facts fill the block and where they do not.
- An item that does not fit is skipped, not the end of the choice: one long
  memory never hides the shorter ones ranked after it.
- ``build_context`` reads the read models' cursors in the transaction that
  records ``ContextServed``; ``replay`` re-renders the same block from them.
"""

from __future__ import annotations

import dataclasses
import random
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any, cast

import msgspec
import psycopg
import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from memledger.events.catalogue import EntityObserved, Event, FactExtracted, RelationshipObserved, ScopeKind, Scopes
from memledger.events.envelope import NewEvent
from memledger.projectors import checkpoints
from memledger.projectors.facts import channels as facts_channels
from memledger.selection import candidates, visibility
from memledger.selection.rank import (
    SMALLEST_LATER_ITEM,
    Candidate,
    choose,
    choose_until_full,
    fuse,
    relevant,
    relevant_categories,
    request_category,
)
from memledger.selection.types import ItemKind, SelectedItem
from memledger.service import context, context_recording, context_replay, projections, scope_ids
from memledger.store import event_store

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
PEOPLE = ["Ada Novak", "Ben Okafor", "Chloe Ito", "Dmitri Silva", "Elena Roy"]
TOOLS = ["PostgreSQL", "Redis", "Kafka", "FastAPI", "React", "Terraform"]
PROJECTS = ["Phoenix", "Heron", "Atlas"]
CATEGORIES = ["decision", "constraint", "technical_fact", "preference", "procedure", "personal_fact"]
RAW = Scopes(session="sess-1", project="phoenix", user="ada", org="acme")
REQUESTS = (
    "Why does the Phoenix deploy with Kafka keep failing?",
    "Write an email to Ben Okafor about Heron, keep the tone formal",
    "Who works with Chloe Ito on Atlas?",
    "What tools do I use for Phoenix?",
    "How do I configure Redis for the billing service?",
    "Tell me about Elena Roy",
)


def _events(stored: Scopes, rng: random.Random, facts: int) -> list[Event]:
    out: list[Event] = []
    for name in PEOPLE:
        out.append(EntityObserved(name=name, entity_type="person", confidence=0.9, source_turns=("t-1",)))
    for name in TOOLS:
        out.append(EntityObserved(name=name, entity_type="tool", confidence=0.9, source_turns=("t-1",)))
    for name in PROJECTS:
        out.append(EntityObserved(name=name, entity_type="project", confidence=0.9, source_turns=("t-1",)))
    for i, (person, project) in enumerate((p, q) for p in PEOPLE for q in PROJECTS):
        out.append(
            RelationshipObserved(
                relationship_id=f"rel-{i}",
                source_name=person,
                source_type="person",
                relation="WORKS_ON",
                target_name=project,
                target_type="project",
                confidence=0.8,
                source_turns=(f"t-{i}",),
            )
        )
    for i, (project, tool) in enumerate((p, t) for p in PROJECTS for t in TOOLS):
        out.append(
            RelationshipObserved(
                relationship_id=f"uses-{i}",
                source_name=project,
                source_type="project",
                relation="USES",
                target_name=tool,
                target_type="tool",
                confidence=0.85,
                source_turns=(f"t-{i}",),
            )
        )
    out.append(
        RelationshipObserved(
            relationship_id="me",
            source_name=str(stored.user),
            source_type="user",
            relation="USES",
            target_name="Kafka",
            target_type="tool",
            confidence=0.9,
            source_turns=("t-9",),
        )
    )
    for i in range(facts):
        scope: ScopeKind = rng.choice(("session", "project", "user", "org"))
        tool, person, project = rng.choice(TOOLS), rng.choice(PEOPLE), rng.choice(PROJECTS)
        out.append(
            FactExtracted(
                memory_id=f"fact-{i}",
                scope=scope,
                scope_key=str(getattr(stored, scope)),
                key=f"{project} {tool} note {i % 40}",
                statement=f"{person} says the {project} deploy uses {tool} with setting {i} for the billing service",
                category=rng.choice(CATEGORIES),  # type: ignore[arg-type]
                confidence=round(rng.uniform(0.6, 1.0), 3),
                source_turns=(f"t-{i}",),
            )
        )
    return out


def _load(engine: Engine, tenant: str, facts: int) -> None:
    key = scope_ids.key_for(engine, tenant)  # requests carry raw scope keys; facts hold the stored ones
    stored = key.stored_scopes(RAW)
    events = _events(stored, random.Random(11), facts)
    news = [
        NewEvent(event=e, event_id=f"{tenant}-{i}", occurred_at=T0 + timedelta(minutes=i)) for i, e in enumerate(events)
    ]
    with engine.begin() as tx:
        for start in range(0, len(news), 200):
            event_store.append(tx, tenant, f"extraction:{start}", news[start : start + 200], None)
    projections.catch_up_all(engine, ["facts", "entities", "relationships"])


@pytest.fixture(scope="module")
def loaded(database: Any) -> Iterator[tuple[Engine, str, str]]:
    """A tenant whose facts fill any ordinary budget, and one whose few facts leave room."""
    engine: Engine = database.engine
    projections.install_all(engine)
    big, small = f"ctx-big-{uuid.uuid4().hex[:8]}", f"ctx-small-{uuid.uuid4().hex[:8]}"
    _load(engine, big, 400)
    _load(engine, small, 6)
    yield engine, big, small


def _reference(engine: Engine, request: context.SelectRequest) -> list[SelectedItem]:
    """What the selector chose before the shortcut: gather every channel, then choose."""
    category = request_category(request.request)
    categories = relevant_categories(category)
    floor = context._min_confidence(request, category)
    stored = scope_ids.stored_scopes(engine, request.tenant_id, request.scopes)
    with engine.connect() as conn:
        pool = candidates.gather(
            conn,
            request.tenant_id,
            stored,
            request.request,
            min_confidence=floor,
            categories=categories,
            edges_per_hop=context.EDGES_PER_HOP,
        )
        pool = visibility.keep_visible(conn, request.tenant_id, stored, relevant(pool, request.request, category))
    return choose(
        fuse(pool, datetime.now(UTC)), categories=categories, min_confidence=floor, budget_chars=request.budget_chars
    )


def _shown(items: Any) -> list[tuple[str, float, tuple[str, ...]]]:
    return [(item.item_id, item.score, item.reasons) for item in items]


class Statements:
    """The SQL an engine runs, to see whether the graph was read."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.sql: list[str] = []

    def __enter__(self) -> list[str]:
        sa.event.listen(self.engine, "before_cursor_execute", self._seen)
        return self.sql

    def __exit__(self, *_: object) -> None:
        sa.event.remove(self.engine, "before_cursor_execute", self._seen)

    def _seen(self, _conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        self.sql.append(statement)


@pytest.mark.parametrize("budget", [600, 2000, 5000, 20_000, 200_000])
def test_select_chooses_what_gathering_everything_chooses(
    loaded: tuple[Engine, str, str], budget: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine, big, small = loaded
    walks = {big: 0, small: 0}
    skipped = {big: 0, small: 0}  # walks skipped because the facts left no room for a graph item
    fulls: list[bool] = []

    def recorded(ranked: list[Candidate], *args: Any, **kwargs: Any) -> tuple[list[SelectedItem], bool]:
        chosen, full = choose_until_full(ranked, *args, **kwargs)
        fulls.append(full)
        return chosen, full

    monkeypatch.setattr(context, "choose_until_full", recorded)
    for tenant in (big, small):
        for i, text in enumerate(REQUESTS):
            request = context.SelectRequest(
                tenant_id=tenant,
                scopes=RAW,
                request=text,
                budget_chars=budget,
                min_confidence=(0.6, 0.7, 0.9)[i % 3],
                deadline_ms=5000,
            )
            fulls.clear()
            with Statements(engine) as sql:
                selection = context.select(engine, request)
            assert selection.empty_reason is None, selection.empty_reason
            assert _shown(selection.items) == _shown(_reference(engine, request))
            walked = any("relationships" in s for s in sql)
            assert walked or all(item.kind == "fact" for item in selection.items)
            assert walked is not fulls[0]  # the graph is walked exactly when the facts left room for it
            walks[tenant] += walked
            skipped[tenant] += not walked
    assert walks[small] == len(REQUESTS)  # six facts never fill a block: the graph is always read
    if budget == 2000:  # the big tenant's facts fill this budget to the last few characters for some requests
        assert skipped[big] > 0


def _candidate(item_id: str, kind: ItemKind, scope: ScopeKind | None, text_len: int, rank: int) -> Candidate:
    text = f"{item_id}:".ljust(text_len, "x")[:text_len]  # distinct texts: a repeated quotation is left out
    item = SelectedItem(
        item_id=item_id, kind=kind, text=text, confidence=0.9, score=0.0, scope=scope, category="decision"
    )
    return Candidate(item=item, ranks={"text": rank})


def test_choose_until_full_says_whether_a_later_item_could_still_be_chosen() -> None:
    """Full means no entity or relationship could still be chosen, so the graph walk
    may be skipped: the item cap is reached, or the room the facts leave is below
    SMALLEST_LATER_ITEM (what the shortest graph item costs). A fact that does not fit
    no longer makes the choice full: it is skipped, and the room it leaves may still
    hold a graph item."""
    facts = [_candidate(f"fact-{i}", "fact", "session", 60, i) for i in range(1, 6)]  # 5 x (60 + 6 + 40) = 530
    graph = [_candidate(f"person:p{i}", "entity", None, 10, i) for i in range(1, 4)]  # 3 x (10 + 9 + 40) = 59
    now = datetime.now(UTC)

    def pick(pool: list[Candidate], budget: int, max_items: int = 50) -> tuple[list[str], bool]:
        chosen, full = choose_until_full(
            fuse(pool, now), categories=None, min_confidence=0.5, budget_chars=budget, max_items=max_items
        )
        return [item.item_id for item in chosen], full

    first_three = ["fact-1", "fact-2", "fact-3"]
    assert SMALLEST_LATER_ITEM == 42  # a one-character id and text, and the 40 of markers
    assert pick(facts, 350) == (first_three, True)  # 318 used: 32 left is below any graph item
    assert pick(facts, 400) == (first_three, False)  # the 4th fact did not fit, but 82 left may hold a graph item
    assert pick(facts, 1000) == ([f"fact-{i}" for i in range(1, 6)], False)  # room left: graph items may come
    assert pick(facts, 1000, max_items=5)[1] is True  # the item cap is reached: nothing more can come
    for budget, cap in ((350, 50), (1000, 5)):  # full: graph candidates change nothing
        assert pick(facts + graph, budget, cap)[0] == pick(facts, budget, cap)[0]
    assert pick(facts + graph, 400)[0] == [*first_three, "person:p1"]  # not full: one fits the 82 left
    with_graph, _ = pick(facts + graph, 1000)
    assert with_graph[:5] == [f"fact-{i}" for i in range(1, 6)] and len(with_graph) == 8  # not full: they come


def test_an_item_that_does_not_fit_is_skipped_and_smaller_ones_after_it_are_chosen() -> None:
    """Issue 26, item 5: one long fact ranked first used to stop the choice, leaving the
    block empty; now it is skipped and the short facts ranked after it are chosen."""
    now = datetime.now(UTC)
    long = _candidate("fact-long", "fact", "session", 6000, 1)
    short = [_candidate(f"fact-{i}", "fact", "session", 60, i) for i in range(2, 5)]  # 106 each
    entity = _candidate("person:p1", "entity", None, 10, 1)

    def pick(budget: int) -> tuple[list[str], bool]:
        chosen, full = choose_until_full(
            fuse([long, *short, entity], now), categories=None, min_confidence=0.5, budget_chars=budget
        )
        return [item.item_id for item in chosen], full

    assert pick(20_000) == (["fact-long", "fact-2", "fact-3", "fact-4", "person:p1"], False)
    assert pick(5_000) == (["fact-2", "fact-3", "fact-4", "person:p1"], False)  # the long one alone is left out
    assert pick(250) == (["fact-2", "fact-3"], True)  # 212 used: 38 left holds no graph item


def test_psycopg_caches_the_conversion_of_the_selector_statements(loaded: tuple[Engine, str, str]) -> None:
    # Longer than psycopg's cache bound, a statement's placeholders are converted with a
    # regex on every execution (~1 ms a request); store.db raises the bound.
    engine, _, _ = loaded
    longest = max(
        len(str(cast(sa.ClauseElement, statement).compile(dialect=engine.dialect)))
        for statement in (
            facts_channels._channels_statement(4, True, True, True, False),
            facts_channels._channels_statement(4, True, True, True, True),  # facts v5: the scoped words
            facts_channels._nearest_statement(4, True, 40),
        )
    )
    assert longest > 4096  # the case the bound is raised for
    assert longest <= psycopg._queries.MAX_CACHED_STATEMENT_LENGTH


def test_the_sides_of_a_conflict_are_chosen_together_or_not_at_all() -> None:
    now = datetime.now(UTC)

    def side(item_id: str, rank: int) -> Candidate:
        cand = _candidate(item_id, "fact", "session", 60, rank)  # 106 characters each
        cand.item = msgspec.structs.replace(cand.item, conflicted=True, conflict_id="slot-db")
        cand.key = "database"
        return cand

    best, other = side("fact-db-a", 1), side("fact-db-b", 9)  # the other side ranks far below
    plain = [_candidate(f"fact-{i}", "fact", "session", 60, i) for i in range(2, 5)]

    def pick(budget: int, max_items: int = 50) -> list[str]:
        pool = [best, *plain, other]
        chosen, _ = choose_until_full(
            fuse(pool, now), categories=None, min_confidence=0.5, budget_chars=budget, max_items=max_items
        )
        return [item.item_id for item in chosen]

    assert pick(1000) == ["fact-db-a", "fact-db-b", "fact-2", "fact-3", "fact-4"]  # together, at the best's rank
    assert pick(150) == ["fact-2"]  # the pair takes 212: neither side alone; a plain fact after it fits
    assert pick(1000, max_items=1) == ["fact-2"]  # two sides do not fit a cap of one, a plain fact does
    assert pick(1000, max_items=3) == ["fact-db-a", "fact-db-b", "fact-2"]


def test_served_context_records_the_cursors_and_replays_to_the_same_block(loaded: tuple[Engine, str, str]) -> None:
    engine, big, small = loaded
    for tenant, budget in ((big, 5000), (small, 20_000)):
        request = context.SelectRequest(
            tenant_id=tenant, scopes=RAW, request=REQUESTS[3], budget_chars=budget, deadline_ms=5000
        )
        served = context.build_context(engine, request, style="xml")
        with engine.connect() as conn:
            event = context_replay.find_served(conn, tenant, served.event_id)
            expected = {
                name: str(cp.cursor) for name in context_recording.READ_MODELS if (cp := checkpoints.get(conn, name))
            }
        assert event.read_cursors == expected
        assert list(event.read_cursors) == list(context_recording.READ_MODELS)
        assert event.item_ids == tuple(item.item_id for item in served.selection.items)
        replayed = context_replay.replay(engine, tenant, served.event_id)
        assert replayed.matches and replayed.block.text == served.block.text


def test_a_request_unchanged_gives_the_same_block_twice(loaded: tuple[Engine, str, str]) -> None:
    engine, big, _ = loaded
    request = context.SelectRequest(tenant_id=big, scopes=RAW, request=REQUESTS[0], deadline_ms=5000)
    first = context.build_context(engine, request)
    again = context.build_context(engine, dataclasses.replace(request))
    assert first.block.sha256 == again.block.sha256
    assert first.event_id != again.event_id
