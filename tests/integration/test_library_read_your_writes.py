"""A command given through the library shows in the next ``context`` of the same
process, with no worker running and no ``process()`` call: a user who says "forget
that" must not find it in the next prompt. (Before, a retraction waited for the
projectors: with none running, the retracted fact was served until ``process()``.)
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from memledger.errors import InvalidCommand
from memledger.library import MemoryLedger
from memledger.service import scope_ids, tenant_settings
from memledger.service.types import Scopes
from memledger.store import event_reads
from tests.conftest import TestDatabase
from tests.e2e.conftest import scratch

SCOPES = Scopes(session="s1", project="phoenix", user="dana")
ASKED = "Which database does Phoenix use?"
# Read-your-writes, not latency, is under test: a loaded machine must not fail a read open.
PATIENT_MS = 10_000


@pytest.fixture(scope="module")
def ledger(database: TestDatabase) -> Iterator[MemoryLedger]:
    with scratch(database, "read_your_writes") as opened:
        yield opened


@pytest.fixture
def tenant(ledger: MemoryLedger) -> str:
    tenant = f"ryw-{uuid.uuid4().hex[:8]}"
    ledger.record_turn(tenant, "user", "Project Phoenix uses PostgreSQL.", scopes=SCOPES)
    ledger.process()
    return tenant


def _fact_of(ledger: MemoryLedger, tenant: str, words: str) -> str:
    selection = ledger.select(tenant, ASKED, scopes=SCOPES, deadline_ms=PATIENT_MS)
    return next(item.item_id for item in selection.items if item.kind == "fact" and words in item.text)


def test_a_retracted_fact_leaves_the_next_block_and_a_restored_one_comes_back(
    ledger: MemoryLedger, tenant: str
) -> None:
    fact = _fact_of(ledger, tenant, "PostgreSQL")
    retracted = ledger.retract(tenant, fact, "wrong")
    assert (retracted.kind, retracted.status, retracted.shown) == ("fact", "retracted", True)
    assert fact not in ledger.context(tenant, ASKED, scopes=SCOPES, deadline_ms=PATIENT_MS).item_ids
    assert ledger.restore(tenant, fact).status == "restored"
    assert fact in ledger.context(tenant, ASKED, scopes=SCOPES, deadline_ms=PATIENT_MS).item_ids


def test_a_promoted_fact_is_in_the_next_block(ledger: MemoryLedger, tenant: str) -> None:
    promoted = ledger.promote(
        tenant, kind="preference", scope="user", scopes=SCOPES, statement="Dana prefers short answers."
    )
    block = ledger.context(tenant, "How should answers be formatted?", scopes=SCOPES, deadline_ms=PATIENT_MS)
    assert promoted in block.item_ids


def test_settings_with_no_switch_only_reads_and_an_unknown_switch_is_refused(ledger: MemoryLedger, tenant: str) -> None:
    """Before, reading the switches appended an empty settings event, and a typo raised
    a bare TypeError."""
    before = ledger.settings(tenant)
    assert before.recall is True
    assert ledger.settings(tenant) == before
    with ledger.engine.connect() as conn:
        assert event_reads.read_stream(conn, tenant, tenant_settings.SETTINGS_STREAM) == []
    with pytest.raises(InvalidCommand, match="unknown switch 'captrue'"):
        ledger.settings(tenant, captrue=True)
    with pytest.raises(InvalidCommand, match="must be True or False"):
        ledger.settings(tenant, recall="no")  # type: ignore[arg-type]
    assert ledger.settings(tenant, recall=False).recall is False


def test_a_promotion_given_a_key_supersedes_the_last_one_on_that_key(ledger: MemoryLedger, tenant: str) -> None:
    """The library's promote takes the key as HTTP and MCP do (before, it had none)."""
    first = ledger.promote(
        tenant,
        kind="decision",
        scope="project",
        scopes=SCOPES,
        statement="Releases ship on Tuesdays.",
        key="release day",
    )
    second = ledger.promote(
        tenant,
        kind="decision",
        scope="project",
        scopes=SCOPES,
        statement="Releases ship on Thursdays.",
        key="release day",
    )
    shown = ledger.context(tenant, "Which day do releases ship?", scopes=SCOPES).item_ids
    assert second in shown and first not in shown


def test_a_turn_recorded_about_another_subject_is_stored_as_theirs(ledger: MemoryLedger, tenant: str) -> None:
    """The library's record_turn takes the subject as HTTP does (before, only TurnInput did)."""
    ledger.record_turn(tenant, "user", "Henry's badge number is 4471.", scopes=SCOPES, turn_id="badge", subject="henry")
    with ledger.engine.connect() as conn:
        [turn] = [r.event for r in event_reads.read_tenant(conn, tenant) if r.event_id == "turn:badge"]
    assert turn.subject == scope_ids.stored_id(ledger.engine, tenant, "user", "henry")  # type: ignore[attr-defined]
