"""``MemoryLedger.import_turns(wait=True)``: it returns once the tenant's context
reflects the import, with no ``process()`` call; a worker holding the extractor's lock
is waited for, and a timeout keeps the import. On a scratch database: holding the
extraction lock would stall every other test's extraction."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable, Iterator

import pytest
import sqlalchemy as sa

from memledger import bootstrap
from memledger.library import MemoryLedger
from memledger.service.types import Scopes
from tests.conftest import TestDatabase
from tests.e2e.conftest import scratch

SCOPES = Scopes(session="s1", project="phoenix", user="dana")
ASKED = "Which database does Phoenix use?"
HISTORY = [
    json.dumps({"role": "user", "text": "Project Phoenix uses PostgreSQL.", "session": "s1"}),
    json.dumps({"role": "assistant", "text": "Noted.", "session": "s1"}),
]


@pytest.fixture(scope="module")
def ledger(database: TestDatabase) -> Iterator[MemoryLedger]:
    with scratch(database, "import_wait") as opened:
        yield opened


@pytest.fixture
def tenant() -> str:
    return f"wait-{uuid.uuid4().hex[:8]}"


def _facts(ledger: MemoryLedger, tenant: str) -> list[str]:
    return [item.text for item in ledger.select(tenant, ASKED, scopes=SCOPES).items if item.kind == "fact"]


def test_an_import_waited_for_is_in_the_next_selection(ledger: MemoryLedger, tenant: str) -> None:
    summary = ledger.import_turns(tenant, HISTORY, scopes=SCOPES, wait=True)
    assert summary.recorded == 2 and summary.ready_seconds is not None, summary.readiness
    assert any("PostgreSQL" in text for text in _facts(ledger, tenant))  # no process() in between


def test_a_timeout_while_a_worker_holds_the_extraction_lock_keeps_the_import(ledger: MemoryLedger, tenant: str) -> None:
    name = bootstrap.build_worker(ledger.database).name
    release = _hold_extraction_lock(ledger, name)
    try:
        summary = ledger.import_turns(tenant, HISTORY, scopes=SCOPES, wait=True, wait_timeout_s=0.5)
    finally:
        release()
    assert summary.readiness is not None and not summary.readiness.ready
    assert summary.ready_seconds is None and summary.readiness.behind == (name,)
    assert summary.recorded == 2  # the import is kept
    again = ledger.import_turns(tenant, HISTORY, scopes=SCOPES, wait=True)  # the lock is free: it works itself
    assert (again.recorded, again.present) == (0, 2) and again.ready_seconds is not None
    assert any("PostgreSQL" in text for text in _facts(ledger, tenant))


def test_a_wait_outlasts_a_worker_batch_holding_the_lock(ledger: MemoryLedger, tenant: str) -> None:
    release = _hold_extraction_lock(ledger, bootstrap.build_worker(ledger.database).name)
    timer = threading.Timer(1.0, release)
    timer.start()
    try:
        summary = ledger.import_turns(tenant, HISTORY, scopes=SCOPES, wait=True, wait_timeout_s=60)
    finally:
        timer.join()
    assert summary.ready_seconds is not None and summary.ready_seconds >= 0.9
    assert any("PostgreSQL" in text for text in _facts(ledger, tenant))


def _hold_extraction_lock(ledger: MemoryLedger, name: str) -> Callable[[], None]:
    """Take the session lock a running extraction worker holds, on a connection of its
    own; the function that releases it."""
    conn = ledger.engine.connect()
    key = sa.func.hashtextextended(sa.literal(name), 0)
    assert conn.execute(sa.select(sa.func.pg_try_advisory_lock(key))).scalar()
    conn.commit()

    def release() -> None:
        conn.execute(sa.select(sa.func.pg_advisory_unlock(key)))
        conn.commit()
        conn.close()

    return release
