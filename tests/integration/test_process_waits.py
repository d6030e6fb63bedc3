"""``MemoryLedger.process`` reads its own writes: a transaction left open in another
database of the same server holds every newer event back from gap-safe readers (the
oldest running transaction is the server's), and ``process`` waits for it, up to its
``timeout_s``, instead of returning with the turn unextracted and the block empty.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Connection

from memledger import bootstrap
from memledger.errors import InvalidCommand
from memledger.library import MemoryLedger
from memledger.service.types import Scopes
from tests.conftest import TestDatabase
from tests.e2e.conftest import scratch

SCOPES = Scopes(session="s1", project="apollo", user="ada")
SAID = "Apollo uses PostgreSQL for the billing data."
ASKED = "Which database does Apollo use?"


@pytest.fixture(scope="module")
def ledger(database: TestDatabase) -> Iterator[MemoryLedger]:
    with scratch(database, "process_waits") as opened:
        yield opened


@pytest.fixture
def elsewhere(database: TestDatabase) -> Iterator[Connection]:
    """A connection to another database of the server, inside a transaction that holds
    a transaction id (as a writer's does) until the test commits it."""
    engine = sa.create_engine(database.server_url.set(database="postgres"))
    with engine.connect() as conn:
        conn.execute(sa.text("SELECT pg_current_xact_id()"))  # text(): a server function, no table
        yield conn
        conn.rollback()
    engine.dispose()


def _tenant(ledger: MemoryLedger, name: str) -> str:
    ledger.process()  # what earlier tests of the module left is no longer pending
    return name


def test_process_waits_for_a_transaction_elsewhere_and_extracts_the_turn(
    ledger: MemoryLedger, elsewhere: Connection
) -> None:
    tenant = _tenant(ledger, "waits")
    ledger.record_turn(tenant, "user", SAID, scopes=SCOPES)
    ended = threading.Timer(0.5, elsewhere.commit)
    ended.start()
    try:
        extracted = ledger.process(timeout_s=60)
    finally:
        ended.join()

    assert extracted == 1
    assert "PostgreSQL" in ledger.context(tenant, ASKED, scopes=SCOPES).text


def test_process_returns_at_its_timeout_and_a_later_call_finishes(
    ledger: MemoryLedger, elsewhere: Connection, caplog: pytest.LogCaptureFixture
) -> None:
    tenant = _tenant(ledger, "times-out")
    ledger.record_turn(tenant, "user", SAID, scopes=SCOPES)
    with caplog.at_level(logging.WARNING, logger="memledger.service.readiness"):
        assert ledger.process(timeout_s=0.3) == 0
    assert any("not up to date" in r.getMessage() and "heuristic" in r.getMessage() for r in caplog.records)
    elsewhere.commit()

    assert ledger.process(timeout_s=60) == 1
    assert "PostgreSQL" in ledger.context(tenant, ASKED, scopes=SCOPES).text


@pytest.mark.parametrize("timeout_s", [-1.0, float("nan"), 1e9])
def test_a_timeout_out_of_range_is_refused_before_anything_is_extracted(ledger: MemoryLedger, timeout_s: float) -> None:
    tenant = _tenant(ledger, "refused")
    ledger.record_turn(tenant, "user", SAID, scopes=SCOPES)
    with pytest.raises(InvalidCommand, match="timeout_s"):
        ledger.process(timeout_s=timeout_s)

    assert bootstrap.build_worker(ledger.database).pending(tenant) == 1
