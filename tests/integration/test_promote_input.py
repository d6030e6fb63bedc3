"""A promotion's and a conflict resolution's input is checked before anything is written:
a fact promoted with other words than its own is refused (the promoted fact would cite
turns that never said them), and so is a scope that is none of the four, naming what was
wrong; a conflict that does not exist is not found, not an invalid command."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from memledger.errors import InvalidCommand, NotFound
from memledger.library import MemoryLedger
from memledger.service.types import Scopes
from memledger.store import event_reads
from tests.conftest import TestDatabase
from tests.e2e.conftest import scratch

ALICE = Scopes(session="a1", project="phoenix", user="alice", org="acme")
ASKED = "Which database does Phoenix use?"


@pytest.fixture(scope="module")
def ledger(database: TestDatabase) -> Iterator[MemoryLedger]:
    with scratch(database, "promote_input") as opened:
        yield opened


@pytest.fixture
def seeded(ledger: MemoryLedger) -> tuple[str, str]:
    """A tenant with one extracted fact; (tenant, fact id)."""
    tenant = f"promote-{uuid.uuid4().hex[:8]}"
    ledger.record_turn(tenant, "user", "Project Phoenix uses PostgreSQL.", scopes=ALICE, turn_id="t1")
    ledger.process()
    found = ledger.select(tenant, ASKED, scopes=ALICE).items
    return tenant, next(item.item_id for item in found if item.kind == "fact")


def _events(ledger: MemoryLedger, tenant: str) -> int:
    with ledger.engine.connect() as conn:
        return len(event_reads.read_tenant(conn, tenant))


def test_a_fact_promoted_with_other_words_is_refused_and_nothing_is_written(
    ledger: MemoryLedger, seeded: tuple[str, str]
) -> None:
    tenant, fact = seeded
    before = _events(ledger, tenant)
    with pytest.raises(InvalidCommand, match="give a memory_id or a statement, not both"):
        ledger.promote(
            tenant, kind="decision", scope="org", scopes=ALICE, memory_id=fact, statement="Phoenix ships on Tuesdays."
        )
    assert _events(ledger, tenant) == before


def test_a_fact_promoted_with_its_own_words_keeps_its_turns(ledger: MemoryLedger, seeded: tuple[str, str]) -> None:
    tenant, fact = seeded
    promoted = ledger.promote(
        tenant,
        kind="decision",
        scope="org",
        scopes=ALICE,
        memory_id=fact,
        statement=" Project Phoenix uses PostgreSQL.",
    )
    [step] = ledger.provenance(tenant, promoted).steps
    assert step.type == "memory.promoted"
    block = ledger.context(tenant, ASKED, scopes=Scopes(session="d1", user="dave", org="acme")).text
    assert "Project Phoenix uses PostgreSQL." in block and "t1" in block


@pytest.mark.parametrize("scope", ["galaxy", "Org", ""])
def test_a_scope_that_is_none_of_the_four_is_refused_by_name(ledger: MemoryLedger, scope: Any) -> None:
    tenant = f"promote-{uuid.uuid4().hex[:8]}"
    with pytest.raises(InvalidCommand, match=f"scope must be one of session, project, user, org, not {scope!r}"):
        ledger.promote(tenant, kind="decision", scope=scope, scopes=ALICE, statement="Phoenix ships on Tuesdays.")
    assert _events(ledger, tenant) == 0


def test_resolving_a_conflict_that_does_not_exist_is_not_found(ledger: MemoryLedger, seeded: tuple[str, str]) -> None:
    tenant, fact = seeded
    before = _events(ledger, tenant)
    with pytest.raises(NotFound, match="has no conflict 'nope'"):
        ledger.resolve_conflict(tenant, "nope", fact)
    assert _events(ledger, tenant) == before


def test_a_persons_own_fact_is_promoted_only_by_them(ledger: MemoryLedger) -> None:
    """Dave may not see Alice's user-scope allergy, so he may not promote it to the org,
    where Erin's agent would read it at full confidence (re-audit)."""
    tenant = f"promote-{uuid.uuid4().hex[:8]}"
    ledger.record_turn(tenant, "user", "I'm allergic to peanuts.", scopes=ALICE, turn_id="t1")
    ledger.process()
    [allergy] = [i.item_id for i in ledger.select(tenant, "What am I allergic to?", scopes=ALICE).items]
    dave = Scopes(session="d1", user="dave", org="acme")
    before = _events(ledger, tenant)
    with pytest.raises(NotFound, match="that these scopes may see"):
        ledger.promote(tenant, kind="preference", scope="org", scopes=dave, memory_id=allergy)
    assert _events(ledger, tenant) == before
    mine = Scopes(session="a2", user="alice", org="acme")
    assert ledger.promote(tenant, kind="preference", scope="org", scopes=mine, memory_id=allergy).startswith(
        "promoted-"
    )
