"""A ledger restored from a logical dump onto another server holds transaction ids
the server has not reached: gap-safe readers would wait for its events forever (an
audit's restore extracted nothing, rebuilt 10 of 722 turns and failed ``verify``).
memledger refuses to start on such a ledger, saying what to run, and
``memledger db advance-ids`` makes it readable.

The restore is played by moving one event's transaction id ahead of the server's,
as a dump from a busier server would have it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from memledger import bootstrap
from memledger.config import Settings
from memledger.errors import DatabaseUnavailable
from memledger.events.envelope import START
from memledger.library import MemoryLedger
from memledger.service.types import Scopes
from memledger.store import event_reads, restored
from tests.conftest import TestDatabase
from tests.e2e.conftest import scratch

AHEAD = 5_000


@pytest.fixture
def ledger(database: TestDatabase) -> Iterator[MemoryLedger]:
    with scratch(database, "restored") as opened:
        yield opened


def _url(ledger: MemoryLedger) -> str:
    return ledger.database.url.render_as_string(hide_password=False)


def _as_if_restored(ledger: MemoryLedger, tenant: str) -> int:
    """Record a turn, then give its event a transaction id ``AHEAD`` past the server's
    (as the owner, the append-only trigger off, as an operator's restore would write it)."""
    position = ledger.record_turn(tenant, "user", "Project Vega uses Kafka.", scopes=Scopes(session="s1"))
    # text(): the test plays a restore, bypassing the append-only trigger on purpose.
    with ledger.engine.begin() as tx:
        tx.execute(sa.text("ALTER TABLE events DISABLE TRIGGER USER"))
        tx.execute(
            sa.text(
                "UPDATE events SET tx_id = (pg_current_xact_id()::text::bigint + :ahead)::text::xid8"
                " WHERE position = :position"
            ),
            {"ahead": AHEAD, "position": position},
        )
        tx.execute(sa.text("ALTER TABLE events ENABLE TRIGGER USER"))
    return position


def test_a_ledger_ahead_of_its_server_is_refused_then_advanced_and_read(ledger: MemoryLedger) -> None:
    tenant = "restored"
    position = _as_if_restored(ledger, tenant)
    with ledger.engine.connect() as conn:
        assert restored.ids_behind(conn) > AHEAD - 10
        assert position not in [r.position for r in event_reads.read_all(conn, after=START, limit=100)]
    with pytest.raises(DatabaseUnavailable, match="memledger db advance-ids"):
        bootstrap.connect(Settings(DATABASE_URL=_url(ledger)))

    assert restored.advance_ids(ledger.engine) > AHEAD - 10
    with ledger.engine.connect() as conn:
        assert restored.ids_behind(conn) == 0
        assert position in [r.position for r in event_reads.read_all(conn, after=START, limit=100)]
    bootstrap.connect(Settings(DATABASE_URL=_url(ledger))).close()  # starts again


def test_the_command_line_names_the_fix_and_the_fix_works(ledger: MemoryLedger, database: TestDatabase) -> None:
    _as_if_restored(ledger, "restored-cli")
    env = {**os.environ, **database.env, "DATABASE_URL": _url(ledger)}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "memledger.cli.main", *args]
        return subprocess.run(command, env=env, capture_output=True, text=True, timeout=300, check=False)

    refused = cli("projections", "status")
    assert refused.returncode == 5, refused.stderr
    assert "memledger db advance-ids" in refused.stderr and "Traceback" not in refused.stderr
    status = cli("db", "status", "--json")
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["ledger_ids_ahead_of_server"] >= AHEAD - 10
    fixed = cli("db", "advance-ids")
    assert fixed.returncode == 0, fixed.stderr
    assert "advanced the server's transaction ids by" in fixed.stdout
    assert cli("projections", "status").returncode == 0
