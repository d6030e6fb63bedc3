""" "Forget what I said about X": the extraction worker retracts what the speaker said
about it, their live facts and their own relationships, in the turn's scopes, whether
or not the projectors have caught up; another person's words stay, and nothing is
written for a request naming nothing."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from memledger.events.catalogue import MemoryRetracted
from memledger.library import MemoryLedger
from memledger.service.types import Scopes
from memledger.store import event_reads
from tests.conftest import TestDatabase
from tests.e2e.conftest import scratch

ADA = Scopes(session="ada-monday", project="apollo", user="ada")
ADA_LATER = Scopes(session="ada-friday", user="ada")
GRACE = Scopes(session="grace-tuesday", project="apollo", user="grace")
DINNER = "Book a table for dinner on my birthday; anything about my diet or birthday to mention?"


@pytest.fixture(scope="module")
def ledger(database: TestDatabase) -> Iterator[MemoryLedger]:
    """A database of its own: ``process`` extracts every pending turn of the database."""
    with scratch(database, "forgetting") as opened:
        yield opened


@pytest.fixture
def tenant() -> str:
    return f"forget-{uuid.uuid4().hex[:8]}"


def _retractions(ledger: MemoryLedger, tenant: str) -> list[MemoryRetracted]:
    with ledger.engine.connect() as conn:
        return [r.event for r in event_reads.read_tenant(conn, tenant) if isinstance(r.event, MemoryRetracted)]


@pytest.mark.parametrize("together", [True, False], ids=["in one batch", "after projection"])
def test_what_the_speaker_asks_to_forget_is_retracted(ledger: MemoryLedger, tenant: str, together: bool) -> None:
    ledger.record_turn(tenant, "user", "My birthday is July 14.", scopes=ADA)
    ledger.record_turn(tenant, "user", "I'm vegetarian.", scopes=ADA)
    if not together:
        ledger.process()
        assert "July 14" in ledger.context(tenant, DINNER, scopes=ADA_LATER).text
    ledger.record_turn(tenant, "user", "Please forget what I said about my birthday.", scopes=ADA)
    ledger.process()

    block = ledger.context(tenant, DINNER, scopes=ADA_LATER).text
    assert "July 14" not in block
    assert "vegetarian" in block  # not asked about
    [retracted] = _retractions(ledger, tenant)
    assert retracted.item_kind == "fact" and retracted.reason == "the speaker asked to forget it"
    steps = ledger.provenance(tenant, retracted.item_id).steps
    assert [s.type for s in steps][-1] == "memory.retracted"


def test_another_persons_words_on_the_topic_stay(ledger: MemoryLedger, tenant: str) -> None:
    ledger.record_turn(tenant, "user", "Project Apollo uses PostgreSQL.", scopes=GRACE)
    ledger.record_turn(tenant, "user", "I use Vim.", scopes=ADA)
    ledger.process()
    ledger.record_turn(tenant, "user", "Forget what I said about PostgreSQL. Forget that I use Vim.", scopes=ADA)
    ledger.process()

    retracted = _retractions(ledger, tenant)
    asked = "Which database does Apollo use, and which editor do I use?"
    block = ledger.context(tenant, asked, scopes=ADA).text
    assert "PostgreSQL" in block  # Grace's
    assert "I use Vim" not in block and "Vim" not in block  # the fact and the relationship
    assert {r.item_kind for r in retracted} == {"fact", "relationship"}


def test_a_request_naming_nothing_forgets_nothing(ledger: MemoryLedger, tenant: str) -> None:
    ledger.record_turn(tenant, "user", "I'm vegetarian.", scopes=ADA)
    ledger.record_turn(tenant, "user", "Forget everything.", scopes=ADA)
    ledger.record_turn(tenant, "user", "Forget it, I'll book the table myself.", scopes=ADA)
    ledger.process()
    assert _retractions(ledger, tenant) == []
    assert "vegetarian" in ledger.context(tenant, DINNER, scopes=ADA_LATER).text


def test_a_forgotten_fact_can_be_restored_and_said_again(ledger: MemoryLedger, tenant: str) -> None:
    ledger.record_turn(tenant, "user", "I'm allergic to peanuts.", scopes=ADA)
    ledger.record_turn(tenant, "user", "Forget that I'm allergic to peanuts.", scopes=ADA)
    ledger.process()
    [retracted] = _retractions(ledger, tenant)
    assert "peanuts" not in ledger.context(tenant, DINNER, scopes=ADA_LATER).text
    ledger.restore(tenant, retracted.item_id, reason="asked by mistake")
    assert "peanuts" in ledger.context(tenant, DINNER, scopes=ADA_LATER).text


@pytest.mark.parametrize("together", [True, False], ids=["in one batch", "after projection"])
def test_forgetting_a_fact_does_not_bring_back_the_one_it_replaced(
    ledger: MemoryLedger, tenant: str, together: bool
) -> None:
    """A retraction restores what the fact superseded; a person asking to forget it does
    not mean the older one holds again (the re-audit: "I'm vegetarian." came back)."""
    ledger.record_turn(tenant, "user", "I'm vegetarian.", scopes=ADA)
    if not together:
        ledger.process()
    ledger.record_turn(tenant, "user", "I'm pescatarian now.", scopes=ADA)
    ledger.process()
    ledger.record_turn(tenant, "user", "Forget that I'm pescatarian.", scopes=ADA)
    ledger.process()
    block = ledger.context(tenant, DINNER, scopes=ADA_LATER).text
    assert "pescatarian" not in block and "vegetarian" not in block


def test_a_turn_naming_nobody_forgets_nothing(ledger: MemoryLedger, tenant: str) -> None:
    """Whose words to forget cannot be told (the review: it retracted a colleague's)."""
    team = Scopes(session="standup", project="apollo")
    ledger.record_turn(tenant, "user", "Project Apollo uses PostgreSQL.", scopes=team)
    ledger.record_turn(tenant, "user", "Forget what I said about PostgreSQL.", scopes=team)
    ledger.process()
    assert _retractions(ledger, tenant) == []


def test_the_turns_subject_is_the_speaker_whose_words_are_forgotten(ledger: MemoryLedger, tenant: str) -> None:
    ledger.record_turn(tenant, "user", "I'm allergic to peanuts.", scopes=ADA)
    ledger.record_turn(tenant, "user", "Forget that I'm allergic to peanuts.", scopes=ADA, subject="grace")
    ledger.process()
    assert _retractions(ledger, tenant) == []  # Grace's words in Ada's session: Ada's allergy stays
