"""A general request about something else than the person gets no memory found only
for being recent (selector 5); a request about the person or their work still does."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from memledger.library import MemoryLedger
from memledger.service.types import Scopes
from tests.conftest import TestDatabase
from tests.e2e.conftest import scratch

SAM = Scopes(session="sam-monday", user="sam")
LATER = Scopes(session="sam-friday", user="sam")


@pytest.fixture(scope="module")
def ledger(database: TestDatabase) -> Iterator[MemoryLedger]:
    with scratch(database, "relevance") as opened:
        yield opened


@pytest.fixture(scope="module")
def tenant(ledger: MemoryLedger) -> str:
    tenant = f"relevance-{uuid.uuid4().hex[:8]}"
    for said in ("I'm allergic to peanuts.", "My birthday is July 14.", "I live in Munich."):
        ledger.record_turn(tenant, "user", said, scopes=SAM)
    ledger.process()
    return tenant


def test_an_unrelated_question_gets_an_empty_block_with_the_reason(ledger: MemoryLedger, tenant: str) -> None:
    block = ledger.context(tenant, "What is the capital of Mongolia?", scopes=LATER).text
    assert "no memory matches this request" in block
    assert "peanuts" not in block and "July 14" not in block


def test_a_question_about_the_person_still_gets_what_is_recent(ledger: MemoryLedger, tenant: str) -> None:
    block = ledger.context(tenant, "Draft a short note introducing me to the new team.", scopes=LATER).text
    assert "Munich" in block and "peanuts" in block


def test_a_question_whose_words_match_gets_the_fact(ledger: MemoryLedger, tenant: str) -> None:
    block = ledger.context(tenant, "Is there a good bakery in Munich?", scopes=LATER).text
    assert "Munich" in block


def test_a_task_done_for_the_person_gets_what_bears_on_it(ledger: MemoryLedger, tenant: str) -> None:
    """ "Book a table for dinner" names no "I" or "my", and its words match none of theirs."""
    block = ledger.context(tenant, "Book a table for dinner on Friday.", scopes=LATER).text
    assert "peanuts" in block
