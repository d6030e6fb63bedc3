"""One oversized memory never hides the others (issue 26, item 5).

Selection used to stop at the first item that did not fit the budget: with three
short preferences and one 6,000-character memory ranked before them, the block was
empty ("no memory matches this request") even at a 20,000-character budget (the
facts get what the quoted turns leave them). Now an item that does not fit is
skipped and the shorter ones ranked after it are still chosen; and a promotion
refuses a statement above ``MAX_PROMOTED_STATEMENT`` characters, writing nothing.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from memledger.errors import InvalidCommand
from memledger.events.catalogue import FactExtracted
from memledger.events.envelope import NewEvent
from memledger.library import MemoryLedger
from memledger.service import projections, scope_ids
from memledger.service.memory import MAX_PROMOTED_STATEMENT
from memledger.service.types import Scopes
from memledger.store import db, event_reads, event_store
from tests.conftest import TestDatabase
from tests.e2e.conftest import scratch

ADA = Scopes(session="s1", project="phoenix", user="ada", org="acme")
SHORT = (
    "Ada prefers tabs over spaces when formatting code.",
    "Ada wants replies formatted as short bullet lists.",
    "Ada likes a formal tone when writing emails.",
)
REQUEST = "How should I format my reply to Ada?"


@pytest.fixture(scope="module")
def ledger(database: TestDatabase) -> Iterator[MemoryLedger]:
    with scratch(database, "oversized") as opened:
        yield opened


def _events(ledger: MemoryLedger, tenant: str) -> int:
    with ledger.engine.connect() as conn:
        return len(event_reads.read_tenant(conn, tenant))


def _promote_short_ones(ledger: MemoryLedger, tenant: str) -> list[str]:
    return [ledger.promote(tenant, kind="preference", scope="user", scopes=ADA, statement=s) for s in SHORT]


def test_a_statement_above_the_cap_is_refused_at_promotion_and_nothing_is_written(ledger: MemoryLedger) -> None:
    tenant = f"oversized-{uuid.uuid4().hex[:8]}"
    _promote_short_ones(ledger, tenant)
    before = _events(ledger, tenant)
    long = "Ada formats every report this way. " * 172  # 6,020 characters
    with pytest.raises(InvalidCommand) as refused:
        ledger.promote(tenant, kind="preference", scope="user", scopes=ADA, statement=long)
    assert "statement" in str(refused.value)
    assert f"{MAX_PROMOTED_STATEMENT:,}" in str(refused.value)
    assert _events(ledger, tenant) == before


def test_a_statement_at_the_cap_is_promoted(ledger: MemoryLedger) -> None:
    tenant = f"oversized-{uuid.uuid4().hex[:8]}"
    statement = ("Ada formats reports with headings. " * 60)[:MAX_PROMOTED_STATEMENT]
    assert len(statement) == MAX_PROMOTED_STATEMENT
    assert ledger.promote(tenant, kind="preference", scope="user", scopes=ADA, statement=statement)


def test_a_long_fact_ranked_first_does_not_hide_the_short_ones(ledger: MemoryLedger) -> None:
    """The issue's case: three short preferences, then a 6,000-character fact (as an
    extractor could once store, and promotion no longer can) in the same scope, seen
    last. At 20,000 characters the block holds the three short ones; at 5,000, where
    the long one cannot fit, it still does (it used to be empty)."""
    tenant = f"oversized-{uuid.uuid4().hex[:8]}"
    short_ids = _promote_short_ones(ledger, tenant)
    stored = scope_ids.stored_scopes(ledger.engine, tenant, ADA)
    assert stored.user is not None
    long = "Ada formats every reply with care: " + "tabs, bullets and a formal tone. " * 181  # 6,008 characters
    fact = FactExtracted(
        memory_id=f"fact-long-{uuid.uuid4().hex[:8]}",
        scope="user",
        scope_key=stored.user,
        key="reply formatting",
        statement=long,
        category="preference",
        confidence=0.99,
    )
    news = [NewEvent(event=fact, event_id=f"{tenant}-long", occurred_at=datetime.now(UTC))]
    with db.begin(ledger.engine) as tx:
        event_store.append(tx, tenant, "extraction:oversized", news, None)
    projections.catch_up_all(ledger.engine, ["facts"])

    for budget in (20_000, 5_000):
        block = ledger.context(tenant, REQUEST, scopes=ADA, budget_chars=budget)
        assert set(short_ids) <= set(block.item_ids), (budget, block.item_ids, block.text[:300])
    wide = ledger.context(tenant, REQUEST, scopes=ADA, budget_chars=20_000)
    assert fact.memory_id in wide.item_ids  # it fits 20,000 too: nothing was dropped that fits
