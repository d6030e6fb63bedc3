"""Erasure and promotions: erasing a subject removes what was promoted into their own
user scope (a statement names no turn, yet it is about them and served to them only),
with everything that refers only to it; another person's promotion into their own
scope stays. Rebuilds stay erased, erasing again finds nothing, the chain verifies.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from memledger.events.catalogue import FactExtracted, MemoryPromoted, MemoryRestored, MemoryRetracted, Scopes
from memledger.events.envelope import Recorded
from memledger.projectors import rebuild, registry, runner
from memledger.service import context, erasure, integrity, memory
from memledger.service.search import search
from memledger.store import event_reads
from tests.conftest import DEADLINE_MS
from tests.integration.test_erasure import _learn, _say, find_everywhere
from tests.integration.test_projections_support import fresh_database

if TYPE_CHECKING:
    from tests.conftest import TestDatabase

QUINN_SECRET = "Quinn's diagnosis is type 1 diabetes; mention low-sugar options."
RITA_WISH = "Rita wants answers mentioning her parrot Featherwick."


@pytest.fixture(scope="module")
def engine(database: TestDatabase) -> Iterator[Engine]:
    with fresh_database(database, "erasure_promotions") as fresh:
        for projector in registry.all_projectors():
            runner.install(fresh, projector)
        yield fresh


def _scopes(user: str) -> Scopes:
    return Scopes(session=f"{user}-session", project="phoenix", user=user)


def _promote(engine: Engine, tenant: str, user: str, statement: str) -> str:
    return memory.promote(engine, tenant, kind="preference", scope="user", scopes=_scopes(user), statement=statement)


def _catch_up(engine: Engine) -> None:
    for projector in registry.all_projectors():
        runner.catch_up(engine, projector)


def _served(engine: Engine, tenant: str, user: str, request: str) -> str:
    request_ = context.SelectRequest(tenant, _scopes(user), request, min_confidence=0.0, deadline_ms=DEADLINE_MS)
    return context.build_context(engine, request_).block.text


def _found(engine: Engine, tenant: str, user: str, query: str) -> set[str]:
    return {item.text for item in search(engine, tenant, _scopes(user), query, kinds=["fact"])}


def _fact_statements(engine: Engine, tenant: str) -> set[str]:
    with engine.connect() as conn:
        # text(): a test's direct look at the facts read model.
        rows = conn.execute(sa.text("SELECT statement FROM proj_facts.facts WHERE tenant_id = :t"), {"t": tenant})
        return set(rows.scalars())


def _events(engine: Engine, tenant: str) -> list[Recorded]:
    with engine.connect() as conn:
        return event_reads.read_tenant(conn, tenant, limit=100_000)


def test_a_statement_promoted_into_the_subjects_own_scope_is_erased_with_them(engine: Engine) -> None:
    tenant = "t-promoted"
    _say(engine, tenant, "quinn", ["Project Phoenix uses PostgreSQL."])
    _say(engine, tenant, "rita", ["I prefer Vim over Emacs."])
    _learn(engine)
    quinns = _promote(engine, tenant, "quinn", QUINN_SECRET)
    ritas = _promote(engine, tenant, "rita", RITA_WISH)
    _catch_up(engine)
    memory.retract(engine, tenant, quinns, reason="too personal")  # commands that name only Quinn's promotion
    memory.restore(engine, tenant, quinns)
    _catch_up(engine)
    assert "diabetes" in _served(engine, tenant, "quinn", "what is my diagnosis")
    assert QUINN_SECRET in _found(engine, tenant, "quinn", "diabetes diagnosis")
    assert ("diabetes", "proj_facts", "facts", "statement") in find_everywhere(engine, ["diabetes"])

    report = erasure.erase(engine, tenant, "quinn", reason="request 42")

    assert report.position is not None and all(report.projections.values())
    assert find_everywhere(engine, ["diabetes", "low-sugar"]) == set()  # events, facts, search, vectors, cache
    erased = {type(r.event) for r in _events(engine, tenant) if r.erased}
    assert {MemoryPromoted, MemoryRetracted, MemoryRestored} <= erased
    assert not [r for r in _events(engine, tenant) if r.erased and getattr(r.event, "memory_id", None) == ritas]
    result = integrity.verify(engine, tenant)
    assert result.ok, result.findings
    again = erasure.erase(engine, tenant, "quinn", refresh=False, vacuum_after=False)
    assert again.position is None and again.erased_events == 0
    # Served and found no more; Rita's promotion into her own scope stays, served to her.
    assert "diabetes" not in _served(engine, tenant, "quinn", "what is my diagnosis")
    assert _found(engine, tenant, "quinn", "diabetes diagnosis") == set()
    assert QUINN_SECRET not in _fact_statements(engine, tenant)
    assert RITA_WISH in _fact_statements(engine, tenant)
    assert "Featherwick" in _served(engine, tenant, "rita", "answers parrot")
    for projector in registry.all_projectors():
        rebuild.rebuild(engine, projector)
    assert QUINN_SECRET not in _fact_statements(engine, tenant)
    assert find_everywhere(engine, ["diabetes", "low-sugar"]) == set()
    assert RITA_WISH in _fact_statements(engine, tenant)


def test_a_subject_known_only_by_a_promotion_into_their_scope_can_be_erased(engine: Engine) -> None:
    tenant = "t-promoted-only"
    _say(engine, tenant, "rita", ["I prefer Vim over Emacs."])
    _promote(engine, tenant, "sol", "Sol's salary is 93,417 a year; never mention it.")
    _catch_up(engine)

    report = erasure.erase(engine, tenant, "sol")

    assert report.erased_events == 1 and report.turns == 0 and report.position is not None
    assert find_everywhere(engine, ["93,417"]) == set()
    again = erasure.erase(engine, tenant, "sol", refresh=False, vacuum_after=False)  # seen, nothing left
    assert again.position is None and again.erased_events == 0


def test_a_fact_of_the_subjects_promoted_to_a_shared_scope_is_erased_with_them(engine: Engine) -> None:
    """A promotion from a fact carries the fact's turns, so it goes with them."""
    tenant = "t-promoted-from"
    _say(engine, tenant, "quinn", ["I use Zorblaxify for all our Phoenix deploys."])
    _learn(engine)
    facts = [r.event for r in _events(engine, tenant) if isinstance(r.event, FactExtracted)]
    fact = next(f for f in facts if "Zorblaxify" in f.statement)
    memory.promote(engine, tenant, kind="decision", scope="project", scopes=_scopes("rita"), memory_id=fact.memory_id)
    _catch_up(engine)
    assert "Zorblaxify" in _served(engine, tenant, "rita", "Phoenix deploys Zorblaxify")

    erasure.erase(engine, tenant, "quinn")

    assert find_everywhere(engine, ["Zorblaxify"]) == set()
    assert "Zorblaxify" not in _served(engine, tenant, "rita", "how does Phoenix deploy")
