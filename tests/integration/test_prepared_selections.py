"""A selection's statements stay prepared, with generic plans, and choose the same.

A selection ends its read-only transaction with COMMIT: psycopg deallocates every
prepared statement of a connection at each ROLLBACK, so selections that rolled back
never ran a prepared statement and PostgreSQL planned each statement of each request
anew (~30 % of its CPU per selection at 100k facts). With them prepared, the
transaction asks for generic plans (``context.SELECT_SETTINGS``). The tests: the
statements are prepared and planned generically, and stay so with searches run on the
same pool (``db.reading``); they choose what plans made for each request's values
choose; and a projection rebuilt and swapped in under them is read.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from memledger.events.catalogue import Scopes
from memledger.library import MemoryLedger
from memledger.selection.types import Selection
from memledger.service import context, projections
from tests.e2e.conftest import PHOENIX_TURNS, said, select_with_vectors

if TYPE_CHECKING:
    from tests.conftest import TestDatabase

SCOPES = Scopes(session="s1", project="phoenix", user="ada", org="acme")
TURNS = (
    *PHOENIX_TURNS,
    "Ben Okafor works with me on Phoenix.",
    "I prefer tabs over spaces.",
    "Project Heron uses Redis and Kafka.",
    "Chloe Ito leads Heron.",
)
REQUESTS = (
    "Which datastore should the Phoenix service keep its records in?",
    "Refactor the Phoenix billing endpoint so it handles the timeout error",
    "Write an email to Ben Okafor about Phoenix, keep the tone formal",
    "Who works with Chloe Ito on Heron?",
    "What do I prefer?",
)
# psycopg prepares a statement at its 6th run on a connection (prepare_threshold 5); the
# nearest facts run beside on a second connection, and the two take turns in the pool.
RUNS = 14


@pytest.fixture(scope="module")
def ledger(database: TestDatabase) -> Iterator[tuple[MemoryLedger, str]]:
    with said(database, "prepared", TURNS, SCOPES) as made:
        yield made


def _select(library: MemoryLedger, engine: Engine, tenant: str, request: str) -> Selection:
    return select_with_vectors(library, engine, tenant, SCOPES, request)


def _shown(selection: Selection) -> list[tuple[str, float, tuple[str, ...]]]:
    assert selection.empty_reason is None or selection.empty_reason == "no memory matches this request"
    return [(item.item_id, item.score, item.reasons) for item in selection.items]


def _prepared(engine: Engine) -> list[tuple[int, str, str, int, int]]:
    """The prepared statements of every connection of ``engine``'s pool: the server
    process, the statement's name, its text (on one line), generic and custom plan counts."""
    out: list[tuple[int, str, str, int, int]] = []
    held = [engine.connect() for _ in range(engine.pool.checkedin())]
    try:
        for conn in held:
            # text(): the server's catalogue of this session's prepared statements.
            query = sa.text(
                "SELECT pg_backend_pid(), name, statement, generic_plans, custom_plans FROM pg_prepared_statements"
            )
            out += [(pid, name, " ".join(text.split()), g, c) for pid, name, text, g, c in conn.execute(query)]
            conn.commit()
    finally:
        for conn in held:
            conn.close()
    return out


def test_a_selections_statements_stay_prepared_with_generic_plans(ledger: tuple[MemoryLedger, str]) -> None:
    library, tenant = ledger
    engine = library.database.for_tenant(tenant)
    for _ in range(RUNS):
        _select(library, engine, tenant, REQUESTS[0])
    prepared = _prepared(engine)
    facts = [(generic, custom) for _, _, statement, generic, custom in prepared if " AS channel, " in statement]
    assert facts, f"the facts statement was not prepared: {sorted(p[2][:60] for p in prepared)}"
    assert all(generic > 0 and custom == 0 for generic, custom in facts)


def test_searches_between_selections_keep_their_statements_prepared(ledger: tuple[MemoryLedger, str]) -> None:
    """A search on a pooled connection ends with COMMIT too, so the statements the
    selections prepared stay prepared (a rollback deallocates every statement of the
    search's connection, and each selection after it would run unprepared again)."""
    library, tenant = ledger
    engine = library.database.for_tenant(tenant)
    for _ in range(RUNS):
        _select(library, engine, tenant, REQUESTS[0])
    before = {(pid, name) for pid, name, statement, _, _ in _prepared(engine) if " AS channel, " in statement}
    assert before
    for _ in range(RUNS):
        assert library.search(tenant, "Which datastore does Phoenix use?", scopes=SCOPES)
        _select(library, engine, tenant, REQUESTS[0])
    assert before <= {(pid, name) for pid, name, _, _, _ in _prepared(engine)}


def test_generic_plans_choose_what_plans_for_each_requests_values_choose(
    ledger: tuple[MemoryLedger, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    library, tenant = ledger
    engine = library.database.for_tenant(tenant)
    generic = {
        request: [_shown(_select(library, engine, tenant, request)) for _ in range(RUNS)] for request in REQUESTS
    }
    monkeypatch.setattr(context, "SELECT_SETTINGS", {**context.SELECT_SETTINGS, "plan_cache_mode": "force_custom_plan"})
    for request in REQUESTS:
        custom = _shown(_select(library, engine, tenant, request))
        assert custom, request
        assert all(run == custom for run in generic[request]), request


def test_a_projection_rebuilt_under_prepared_statements_is_read(ledger: tuple[MemoryLedger, str]) -> None:
    library, tenant = ledger
    engine = library.database.for_tenant(tenant)
    request = "Which message broker does Phoenix use?"
    for _ in range(RUNS):
        before = _select(library, engine, tenant, request)
    assert not any("RabbitMQ" in item.text for item in before.items)
    library.record_turn(tenant, "user", "Project Phoenix uses RabbitMQ as its message broker.", scopes=SCOPES)
    library.process()
    for name in ("facts", "entities", "relationships", "embeddings"):
        projections.rebuild(library.database.engine, name)  # a new copy, swapped in by renaming schemas
    after = _select(library, engine, tenant, request)
    assert after.empty_reason is None
    assert any("RabbitMQ" in item.text for item in after.items)
