"""Retracting and restoring are idempotent: a retraction of an item retracted already,
or a restore of one that is not retracted, appends nothing and says so (before, each
appended an event, and history showed a restore with no retraction before it). The
catch-up that makes a command show in the next context is bounded in time, and the
library's reads raise ``DatabaseUnavailable`` during an outage, as its writes do.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Iterator

import pytest

from memledger.errors import DatabaseUnavailable
from memledger.events.keys import item_stream
from memledger.library import MemoryLedger
from memledger.service import memory
from memledger.service.types import Scopes
from memledger.store import db, event_reads
from tests.conftest import TestDatabase
from tests.e2e.conftest import scratch

SCOPES = Scopes(session="s1", project="wren", user="dana")
ASKED = "Which database does Wren use?"


@pytest.fixture(scope="module")
def ledger(database: TestDatabase) -> Iterator[MemoryLedger]:
    with scratch(database, "idempotent_ops") as opened:
        yield opened


@pytest.fixture
def seeded(ledger: MemoryLedger) -> tuple[str, str]:
    """A tenant with one extracted fact; (tenant, fact id)."""
    tenant = f"ops-{uuid.uuid4().hex[:8]}"
    ledger.record_turn(tenant, "user", "Project Wren uses PostgreSQL.", scopes=SCOPES)
    ledger.process()
    found = ledger.select(tenant, ASKED, scopes=SCOPES).items
    return tenant, next(item.item_id for item in found if item.kind == "fact")


def commands(ledger: MemoryLedger, tenant: str, fact: str) -> list[str]:
    """The retractions and restores on ``fact``'s stream, in order."""
    with ledger.engine.connect() as conn:
        found = event_reads.read_stream(conn, tenant, item_stream(fact))
    return [type(rec.event).__name__ for rec in found if type(rec.event).__name__ != "FactExtracted"]


def test_a_second_retraction_and_a_restore_of_what_is_not_retracted_append_nothing(
    ledger: MemoryLedger, seeded: tuple[str, str]
) -> None:
    tenant, fact = seeded
    never = ledger.restore(tenant, fact)
    assert (never.status, never.appended) == ("not retracted", False)
    assert commands(ledger, tenant, fact) == []
    assert ledger.retract(tenant, fact, "wrong").status == "retracted"
    again = ledger.retract(tenant, fact, "wrong")
    assert (again.kind, again.status, again.appended) == ("fact", "already retracted", False)
    assert commands(ledger, tenant, fact) == ["MemoryRetracted"]
    assert fact not in ledger.context(tenant, ASKED, scopes=SCOPES).item_ids
    assert ledger.restore(tenant, fact).appended
    assert not ledger.restore(tenant, fact).appended
    assert commands(ledger, tenant, fact) == ["MemoryRetracted", "MemoryRestored"]


def test_the_catch_up_is_bounded_and_a_command_without_it_is_appended(
    ledger: MemoryLedger, seeded: tuple[str, str]
) -> None:
    """Without the owner's engine the read model cannot be caught up, so it is not
    trusted to skip the command: the retraction is appended, and shows only once caught up."""
    tenant, fact = seeded
    change = memory.retract(ledger.database.for_tenant(tenant), tenant, fact, actor="test")
    assert (change.appended, change.shown) == (True, False)
    stream = item_stream(fact)
    assert memory.read_your_write(ledger.engine, tenant, "fact", stream, timeout_s=0) is False
    assert fact in ledger.context(tenant, ASKED, scopes=SCOPES).item_ids  # not caught up yet
    assert memory.read_your_write(ledger.engine, tenant, "fact", stream) is True
    assert fact not in ledger.context(tenant, ASKED, scopes=SCOPES).item_ids


def test_a_statement_of_one_long_word_is_promoted_with_a_short_key(ledger: MemoryLedger) -> None:
    tenant = f"ops-{uuid.uuid4().hex[:8]}"
    word = "y" * 999
    promoted = ledger.promote(tenant, kind="terminology", scope="project", scopes=SCOPES, statement=word)
    [step] = ledger.provenance(tenant, promoted).steps
    assert step.type == "memory.promoted"
    assert len(memory.derived_key("terminology", word)) <= memory.DERIVED_KEY_CHARS


@pytest.mark.parametrize("scopes", [Scopes(), SCOPES], ids=["no scope", "scopes"])
def test_search_raises_database_unavailable_during_an_outage(ledger: MemoryLedger, scopes: Scopes) -> None:
    url = ledger.database.url.set(database=f"gone_{uuid.uuid4().hex[:8]}")
    dead = dataclasses.replace(ledger.database, engine=db.create_engine(url), app_engine=db.create_engine(url))
    try:
        with pytest.raises(DatabaseUnavailable):
            MemoryLedger(dead).search("acme", "Which database?", scopes=scopes)
    finally:
        dead.engine.dispose()
        dead.app_engine.dispose()
