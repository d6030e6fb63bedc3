"""An agent's provenance answers for its conversation: a memory it could be shown, with
the turns it may see; another person's private memory is not found, as one that does not
exist. Without scopes (an audit) the whole tenant's."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from memledger.errors import InvalidIdentifier, NotFound
from memledger.library import MemoryLedger
from memledger.service.types import Scopes
from tests.conftest import TestDatabase
from tests.e2e.conftest import scratch

ALICE = Scopes(session="alice-1", project="phoenix", user="alice")  # her turns name no organisation
CAROL = Scopes(session="carol-1", project="atlas", user="carol", org="acme")
DAVE = Scopes(session="dave-1", user="dave", org="acme")


@pytest.fixture(scope="module")
def ledger(database: TestDatabase) -> Iterator[MemoryLedger]:
    with scratch(database, "scoped_provenance") as opened:
        yield opened


@pytest.fixture
def tenant(ledger: MemoryLedger) -> str:
    tenant = f"prov-{uuid.uuid4().hex[:8]}"
    ledger.record_turn(tenant, "user", "I'm vegetarian.", scopes=ALICE, turn_id="a-diet")
    ledger.record_turn(tenant, "user", "Project Phoenix uses PostgreSQL.", scopes=ALICE, turn_id="a-db")
    ledger.process()
    return tenant


def _fact(ledger: MemoryLedger, tenant: str, asked: str, said: str) -> str:
    return next(i.item_id for i in ledger.select(tenant, asked, scopes=ALICE).items if i.text == said)


def test_another_persons_private_fact_and_turn_are_not_found(ledger: MemoryLedger, tenant: str) -> None:
    diet = _fact(ledger, tenant, "Book me a dinner: what do I eat?", "I'm vegetarian.")
    for item in (diet, "a-diet"):
        with pytest.raises(NotFound, match="that these scopes may see"):
            ledger.provenance(tenant, item, scopes=CAROL)
    assert [t.turn_id for t in ledger.provenance(tenant, diet, scopes=ALICE).turns] == ["a-diet"]
    assert [t.turn_id for t in ledger.provenance(tenant, diet).turns] == ["a-diet"]  # an audit sees all


def test_a_shared_memory_answers_without_the_turns_the_conversation_may_not_see(
    ledger: MemoryLedger, tenant: str
) -> None:
    database = _fact(ledger, tenant, "Which database does Phoenix use?", "Project Phoenix uses PostgreSQL.")
    acme = Scopes(user="alice", org="acme")
    promoted = ledger.promote(tenant, kind="decision", scope="org", scopes=acme, memory_id=database)
    found = ledger.provenance(tenant, promoted, scopes=DAVE)  # the org's memory: Dave may see it
    assert found.item_id == promoted and found.steps
    assert found.turns == []  # Alice's project turn is not Dave's to read
    in_acme = Scopes(session="alice-2", project="phoenix", user="alice", org="acme")
    assert [t.turn_id for t in ledger.provenance(tenant, promoted, scopes=in_acme).turns] == ["a-db"]
    with pytest.raises(NotFound):
        ledger.provenance(tenant, database, scopes=DAVE)  # the project's fact itself: not his


def test_a_visible_turn_does_not_hand_over_its_private_facts(ledger: MemoryLedger, tenant: str) -> None:
    """Bob shares Alice's project, so her turn is his to read, but the fact it made in her
    own user scope is not: its id and words stay out of the turn's provenance (re-audit)."""
    ledger.record_turn(tenant, "user", "I'm allergic to peanuts.", scopes=ALICE, turn_id="a-allergy")
    ledger.process()
    bob = Scopes(session="bob-1", project="phoenix", user="bob")
    found = ledger.provenance(tenant, "a-allergy", scopes=bob)
    assert [t.turn_id for t in found.turns] == ["a-allergy"]
    assert [s.type for s in found.steps if s.type == "fact.extracted"] == []
    assert [s.type for s in ledger.provenance(tenant, "a-allergy").steps].count("fact.extracted") == 1  # an audit


def test_an_empty_scope_key_is_refused_not_read_as_no_scope(ledger: MemoryLedger, tenant: str) -> None:
    with pytest.raises(InvalidIdentifier, match="session"):
        ledger.provenance(tenant, "a-diet", scopes=Scopes(session=""))
