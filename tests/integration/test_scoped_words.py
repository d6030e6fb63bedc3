"""Facts v5: the text channel finds a request's words in its own scopes through
``facts_scoped_words`` (each fact's lexemes prefixed with its tenant, scope and key),
and finds exactly what matching the whole full-text index found. A live copy from
before v5 is read as before until it is rebuilt."""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from memledger.events.catalogue import FactExtracted, Scopes
from memledger.events.envelope import NewEvent
from memledger.projectors import live_version
from memledger.projectors.facts import channels as facts_channels
from memledger.selection.candidates import scope_pairs
from memledger.selection.words import query_words
from memledger.service import context, projections, scope_ids
from memledger.store import db, event_store
from tests.conftest import DEADLINE_MS
from tests.integration.test_projections_support import fresh_database

if TYPE_CHECKING:
    from tests.conftest import TestDatabase

T0 = datetime(2025, 5, 1, 9, 0, tzinfo=UTC)
WORDS = ["deploy", "kafka", "timeout", "billing", "postgres", "vegetarian", "dashboard", "retry", "o'brien", "c:\\temp"]
LONG_KEY = "k" * 200  # the longest scope key an event may hold
ASKED = Scopes(session="s1", project="phoenix", user="ada", org="acme")
OTHERS = [Scopes(session="s2", project="heron", user="bob", org="globex"), Scopes(session=LONG_KEY, user="zed")]


def _facts(rng: random.Random, count: int) -> list[FactExtracted]:
    out = []
    for i in range(count):
        scopes = rng.choice([ASKED, ASKED, *OTHERS])
        scope = rng.choice([s for s in ("session", "project", "user", "org") if getattr(scopes, s)])
        words = " ".join(rng.sample(WORDS, 3))
        long_word = "x" * rng.choice([0, 300]) if i % 7 == 0 else ""
        out.append(
            FactExtracted(
                memory_id=f"f-{i}",
                scope=scope,  # type: ignore[arg-type]
                scope_key=str(getattr(scopes, scope)),
                key=f"note {i % 25}",
                statement=f"The team said {words} {long_word} matters for item {i}",
                category=rng.choice(["decision", "constraint", "preference", "technical_fact"]),  # type: ignore[arg-type]
                confidence=round(rng.uniform(0.5, 1.0), 3),
                source_turns=(f"t-{i}",),
            )
        )
    return out


def _load(engine: Engine, tenant: str, facts: list[FactExtracted]) -> None:
    scope_ids.set_default(engine, False)  # the facts hold their scope keys as given
    scope_ids.key_for(engine, tenant)
    news = [
        NewEvent(event=f, event_id=f"{tenant}-{i}", occurred_at=T0 + timedelta(minutes=i)) for i, f in enumerate(facts)
    ]
    with engine.begin() as tx:
        event_store.append(tx, tenant, "extraction:1", news, None)
    projections.catch_up_all(engine, ["facts", "entities", "relationships"])


@pytest.fixture(scope="module")
def scratch(database: TestDatabase) -> Iterator[tuple[Engine, str]]:
    """Two tenants with the same scope keys and words; facts in the asked scopes and others."""
    with fresh_database(database, "scoped_words") as engine:
        projections.install_all(engine)
        tenant, other = f"t-{uuid.uuid4().hex[:8]}", f"u-{uuid.uuid4().hex[:8]}"
        rng = random.Random(5)
        _load(engine, tenant, _facts(rng, 3000))
        _load(engine, other, _facts(rng, 1000))
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            # As autovacuum leaves a served database: statistics, and the GIN indexes'
            # pending entries merged (unmerged, every scan reads them all, and the
            # planner reads the tenant's facts instead).
            conn.execute(sa.text("VACUUM ANALYZE proj_facts.facts"))
        live_version.forget()
        yield engine, tenant
        live_version.forget()


def _requests() -> list[str]:
    rng = random.Random(9)
    pool = [*WORDS, "the", "what", "unknownword", "o", "temp"]
    asked = [" ".join(rng.sample(pool, rng.randint(1, 6))) for _ in range(40)]
    return [*asked, "what is the", "Kafka", "", "O'Brien's c:\\temp deploy"]


def _channels(engine: Engine, tenant: str, request: str, categories: list[str] | None) -> Any:
    with engine.connect() as conn:
        return facts_channels.channels(
            conn,
            tenant,
            scope_pairs(ASKED),
            query_words(request),
            min_confidence=0.7,
            categories=categories,
            text_limit=40,
            recent_limit=20,
        )


def _facts_statement(engine: Engine, run: Any) -> tuple[str, Any]:
    """The text and recent channels' statement ``run`` executes, with its parameters."""
    seen: list[tuple[str, Any]] = []

    def keep(_conn: Any, _cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        if "text_rank" in statement:
            seen.append((statement, parameters))

    sa.event.listen(engine, "before_cursor_execute", keep)
    try:
        run()
    finally:
        sa.event.remove(engine, "before_cursor_execute", keep)
    [found] = seen
    return found


def _as_tenant(engine: Engine, tenant: str) -> Engine:
    """The application role's engine for ``tenant``: row-level security applies, as it
    does to every request (an index a fenced query cannot use would show here)."""
    return db.for_tenant(db.create_app_engine(db.app_url(engine.url, None)), tenant)


@pytest.mark.parametrize("categories", [None, ["decision", "constraint"]])
def test_the_scoped_index_finds_what_the_whole_index_finds(
    scratch: tuple[Engine, str], categories: list[str] | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    owner, tenant = scratch
    engine = _as_tenant(owner, tenant)
    found_any = 0
    for request in _requests():
        scoped = _channels(engine, tenant, request, categories)
        with monkeypatch.context() as before_v5:
            before_v5.setattr(live_version, "at_least", lambda *_: False)
            whole = _channels(engine, tenant, request, categories)
        assert scoped == whole, request
        found_any += bool(scoped.text)
    assert found_any >= 30  # the requests' words are the facts' words: most find some


def test_the_text_channel_reads_the_scoped_index_and_not_the_whole_one(scratch: tuple[Engine, str]) -> None:
    """facts_tsv holds every tenant's and scope's matches: the channel reads only the
    request's own through facts_scoped_words, also under row-level security."""
    engine, tenant = scratch
    app = _as_tenant(engine, tenant)
    statement, parameters = _facts_statement(app, lambda: _channels(app, tenant, "kafka deploy timeout", None))
    with app.connect() as conn:
        # the captured statement, explained with its own parameters
        plan = "\n".join(conn.exec_driver_sql("EXPLAIN " + statement, parameters).scalars().all())
    assert "facts_scoped_words" in plan
    assert "facts_tsv" not in plan


def test_the_scoped_index_keeps_a_short_pending_list(scratch: tuple[Engine, str]) -> None:
    """Every search reads the index's unmerged entries whole: the list is bounded at 256 kB."""
    engine, _ = scratch
    with engine.connect() as conn:
        options = conn.execute(
            sa.text("SELECT reloptions FROM pg_class WHERE oid = 'proj_facts.facts_scoped_words'::regclass")
        ).scalar_one()
    assert "gin_pending_list_limit=256" in options


def test_a_fact_in_a_scope_with_the_longest_key_and_a_long_word_is_found(scratch: tuple[Engine, str]) -> None:
    engine, tenant = scratch
    with engine.connect() as conn:
        found = facts_channels.channels(
            conn,
            tenant,
            [("session", LONG_KEY)],
            ["kafka"],
            min_confidence=0.0,
            categories=None,
            text_limit=200,
            recent_limit=0,
        )
        expected = conn.execute(
            sa.text(
                "SELECT count(*) FROM proj_facts.facts WHERE tenant_id = :t AND scope = 'session' AND scope_key = :k"
                " AND tsv @@ to_tsquery('english', 'kafka') AND status IN ('active', 'low_confidence')"
            ),
            {"t": tenant, "k": LONG_KEY},
        ).scalar_one()
    assert expected > 0
    assert len(found.text) == expected


def test_a_live_copy_from_before_v5_is_read_as_before_until_it_is_rebuilt(
    database: TestDatabase, monkeypatch: pytest.MonkeyPatch
) -> None:
    with fresh_database(database, "before_v5") as engine:
        projections.install_all(engine)
        tenant = f"t-{uuid.uuid4().hex[:8]}"
        _load(engine, tenant, _facts(random.Random(3), 150))
        request = context.SelectRequest(tenant, ASKED, "Why does the kafka deploy time out?", deadline_ms=DEADLINE_MS)
        live_version.forget()
        expected = context.select(engine, request)
        assert expected.items and not expected.empty_reason

        with engine.begin() as tx:  # what a v4 copy lacks
            tx.execute(sa.text("ALTER TABLE proj_facts.facts DROP COLUMN scoped_tsv"))
            tx.execute(sa.text("UPDATE projection_checkpoints SET version = 4 WHERE name = 'facts'"))
        monkeypatch.setattr(live_version, "RECHECK_S", 0.0)
        as_v4 = context.select(engine, request)
        assert as_v4.empty_reason is None
        assert [i.item_id for i in as_v4.items] == [i.item_id for i in expected.items]

        statement, _ = _facts_statement(engine, lambda: context.select(engine, request))
        assert "scoped_tsv" not in statement

        projections.rebuild(engine, "facts")  # the upgrade: v5 built beside it and swapped in
        statement, _ = _facts_statement(engine, lambda: context.select(engine, request))
        assert "scoped_tsv" in statement
        rebuilt = context.select(engine, request)
        assert [i.item_id for i in rebuilt.items] == [i.item_id for i in expected.items]
