"""A general request about something else than the person gets no memory found only
for being recent (selector 5); a request about the person or their work still does."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from memledger.library import MemoryLedger
from memledger.projectors.base import live_schema
from memledger.projectors.embeddings.projector import text_sha256
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


def test_the_fact_is_embedded_without_its_speakers_hashed_prefix(ledger: MemoryLedger, tenant: str) -> None:
    """The test above held by chance before embeddings v2: the fact's key starts with
    8 hex digits of the speaker's keyed hash, different in every database, and kept in
    the embedded text they put the question 0.80-0.89 from the fact, across the 0.8 cutoff."""
    with ledger.database.engine.connect() as conn:
        key = conn.execute(
            sa.text(f"SELECT key FROM {live_schema('facts')}.facts WHERE tenant_id = :t AND statement LIKE :s"),
            {"t": tenant, "s": "%peanuts%"},
        ).scalar_one()
        embedded = conn.execute(
            sa.text(f"SELECT text_sha256 FROM {live_schema('embeddings')}.embeddings WHERE tenant_id = :t"),
            {"t": tenant},
        ).scalars()
        assert re.fullmatch(r"[0-9a-f]{8}: allergy: peanuts", key)  # the speaker, hashed
        assert text_sha256("allergy: peanuts: I'm allergic to peanuts.") in set(embedded)


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
