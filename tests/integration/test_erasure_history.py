"""Erasure and the past: the ledger's history (``as_of`` selections, ``history.state_at``,
a key's history) is folded without erased events, as the projectors fold it; and a fact
another person stated too survives the erasure whatever the order of extraction.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
from sqlalchemy.engine import Engine

from memledger.events.catalogue import Scopes, SubjectErased
from memledger.events.envelope import Recorded
from memledger.projectors import registry, runner
from memledger.service import context, erasure, history, provenance, scope_ids
from memledger.service.search import search
from memledger.store import event_reads
from tests.integration.test_erasure import ADA, GRACE, SECRET_WORDS, _learn, _say
from tests.integration.test_projections_support import fresh_database

if TYPE_CHECKING:
    from tests.conftest import TestDatabase

ERASED = "[erased]"


@pytest.fixture(scope="module")
def engine(database: TestDatabase) -> Iterator[Engine]:
    with fresh_database(database, "erasure_history") as fresh:
        for projector in registry.all_projectors():
            runner.install(fresh, projector)
        yield fresh


def _events(engine: Engine, tenant: str) -> list[Recorded]:
    with engine.connect() as conn:
        return event_reads.read_tenant(conn, tenant, limit=100_000)


def _scopes(user: str) -> Scopes:
    return Scopes(session=f"{user}-session", project="phoenix", user=user)


def test_the_past_is_folded_without_the_erased_events(engine: Engine) -> None:
    tenant = "t-history"
    _say(engine, tenant, "ada", ADA)
    _say(engine, tenant, "grace", GRACE)
    _learn(engine)
    before_erasure = max(rec.position for rec in _events(engine, tenant))
    with engine.connect() as conn:
        then = history.state_at(conn, tenant, event_reads.cursor_at(conn, before_erasure))
    assert any("Zorblaxify" in row.statement for row in then.facts.values())  # the past held Ada's words

    erasure.erase(engine, tenant, "ada")

    assert any(isinstance(rec.event, SubjectErased) for rec in _events(engine, tenant))
    with engine.connect() as conn:
        now_of_then = history.state_at(conn, tenant, event_reads.cursor_at(conn, before_erasure))
    statements = {row.memory_id: row.statement for row in now_of_then.facts.values()}
    assert ERASED not in statements.values() and ERASED not in {row.key for row in now_of_then.facts.values()}
    assert not [eid for eid in now_of_then.entities if "erased" in eid]
    assert not [key for key in now_of_then.relationships if "erased" in key]
    assert not [text for text in statements.values() for word in SECRET_WORDS if word.lower() in text.lower()]
    # Grace's facts are still there, and active: nothing "[erased]" superseded them.
    assert set(statements.values()) == set(GRACE)
    assert {row.status for row in now_of_then.facts.values()} == {"active"}
    # An as-of selection serves no placeholder either.
    request = context.SelectRequest(
        tenant, _scopes("grace"), "how do we deploy phoenix", as_of=before_erasure, min_confidence=0.0
    )
    selection = context.select(engine, request)
    assert selection.empty_reason is None and selection.items
    assert not [item for item in selection.items if ERASED in item.text or "erased" in item.item_id]
    # No key leads to the erased facts.
    assert provenance.key_history(engine, tenant, ERASED) == []


def test_a_fact_grace_states_after_ada_survives_adas_erasure(engine: Engine) -> None:
    """Ada's fact is projected before Grace says the same; erasing Ada leaves Grace's."""
    tenant = "t-said-later"
    said = "I use PostgreSQL for the Phoenix project."
    _say(engine, tenant, "ada", [said])
    _learn(engine)
    _say(engine, tenant, "grace", [said])
    _learn(engine)
    grace = scope_ids.stored_id(engine, tenant, "user", "grace")
    before = search(engine, tenant, _scopes("grace"), "PostgreSQL", kinds=["fact"])
    assert before and all(len(item.source_turns) == 2 for item in before)  # each fact mentioned by both

    erasure.erase(engine, tenant, "ada")
    for projector in registry.all_projectors():
        runner.catch_up(engine, projector)

    found = search(engine, tenant, _scopes("grace"), "PostgreSQL", kinds=["fact"])
    assert [item.text for item in found] and {item.text for item in found} == {said}
    grace_turns = {rec.event.turn_id for rec in _events(engine, tenant) if getattr(rec.event, "subject", None) == grace}
    assert grace_turns and set(found[0].source_turns) <= grace_turns
