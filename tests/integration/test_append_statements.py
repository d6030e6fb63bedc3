"""How an append reaches PostgreSQL: planned on each call while the ledger is small (no
generic plan kept from a small table), prepared once it is large, and driver errors
translated as everywhere else."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING, NamedTuple

import pytest
import sqlalchemy as sa

from memledger.config import Settings
from memledger.errors import LedgerError
from memledger.events import Metadata, NewEvent, Scopes, TurnRecorded
from memledger.library import MemoryLedger
from memledger.store import batch_append, db, direct, event_reads, event_store
from memledger.store.batch_append import StreamAppend
from memledger.store.schema import events

if TYPE_CHECKING:
    from tests.conftest import TestDatabase


@pytest.fixture(scope="module")
def ledger(database: TestDatabase) -> Iterator[MemoryLedger]:
    with MemoryLedger.open(Settings(DATABASE_URL=database.url.render_as_string(hide_password=False))) as opened:
        yield opened


@pytest.fixture
def tenant() -> str:
    return f"statements-{uuid.uuid4().hex[:10]}"


def _events(count: int, text: str = "words " * 60) -> list[NewEvent]:
    return [
        NewEvent(
            event=TurnRecorded(turn_id=uuid.uuid4().hex, role="user", text=text, scopes=Scopes(session="s")),
            event_id=f"evt-{uuid.uuid4().hex}",
            occurred_at=datetime.now(UTC),
            metadata=Metadata(actor="test"),
        )
        for _ in range(count)
    ]


class Kept(NamedTuple):
    """A statement the connection holds prepared, and how often each kind of plan ran it."""

    statement: str
    generic_plans: int
    custom_plans: int


def _prepared(ledger: MemoryLedger, tenant: str) -> list[Kept]:
    """Append 12 times each way (more than PostgreSQL's 5 custom plans before it may keep
    a generic one) on one new connection: the statements it then holds prepared."""
    engine = db.create_engine(ledger.database.url, pool_size=1)
    version = 0
    try:
        with engine.connect() as conn:
            for _ in range(12):
                with conn.begin():
                    version = event_store.append(conn, tenant, "one", _events(2), version).stream_version
                with conn.begin():
                    batch_append.append_many(conn, [StreamAppend(tenant, f"many-{uuid.uuid4().hex}", _events(2), 0)])
            with conn.begin():
                rows = conn.execute(
                    sa.text("SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements")
                ).all()
    finally:
        engine.dispose()
    assert version == 24
    return [Kept(*row) for row in rows]


def _inserts(kept: list[Kept]) -> list[Kept]:
    return [k for k in kept if "jsonb_to_recordset" in k.statement]


def test_while_the_ledger_is_small_no_insert_runs_a_generic_plan(
    ledger: MemoryLedger, tenant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(direct, "PREPARE_FROM_POSITION", 2**62)
    monkeypatch.setattr(direct, "_large", set())
    inserts = _inserts(_prepared(ledger, tenant))
    assert len(inserts) == 2  # append's and append_many's: prepared, parsed once
    assert all(k.generic_plans == 0 and k.custom_plans == 12 for k in inserts), inserts


def test_once_the_ledger_is_large_the_inserts_may_run_a_generic_plan(
    ledger: MemoryLedger, tenant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(direct, "PREPARE_FROM_POSITION", 1)
    monkeypatch.setattr(direct, "_large", set())
    kept = _prepared(ledger, tenant)
    inserts = _inserts(kept)
    assert len(inserts) == 2
    assert all(k.generic_plans + k.custom_plans == 12 for k in inserts), inserts
    setting = [k for k in kept if "set_config" in k.statement]  # plan_cache_mode
    assert sum(k.generic_plans + k.custom_plans for k in setting) <= 1  # the first lock, before any position


def test_the_stream_locks_are_prepared_while_the_ledger_is_small(
    ledger: MemoryLedger, tenant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(direct, "PREPARE_FROM_POSITION", 2**62)
    monkeypatch.setattr(direct, "_large", set())
    locks = [k for k in _prepared(ledger, tenant) if "pg_advisory_xact_lock" in k.statement]
    assert len(locks) == 2  # append's and append_many's
    assert all("set_config" in k.statement for k in locks)  # plan_cache_mode, for the transaction


@pytest.mark.parametrize("count", [1, 100, 1000])
def test_an_append_of_any_size_lands_whole(ledger: MemoryLedger, tenant: str, count: int) -> None:
    sent = _events(count)
    with db.begin(ledger.database.for_tenant(tenant)) as tx:
        result = event_store.append(tx, tenant, "sized", sent, 0)
    assert result.stream_version == count and len(result.positions) == count
    with ledger.engine.connect() as conn:
        stored = event_reads.read_stream(conn, tenant, "sized")
    assert [r.event_id for r in stored] == [e.event_id for e in sent]
    assert [r.position for r in stored] == list(result.positions)


def test_a_driver_error_is_translated(ledger: MemoryLedger, tenant: str) -> None:
    fenced = ledger.database.for_tenant(tenant)  # row-level security refuses another tenant's rows
    other = f"{tenant}-other"
    with pytest.raises(LedgerError, match="the database refused") as raised, db.begin(fenced) as tx:
        event_store.append(tx, other, "fenced", _events(2), 0)
    assert type(raised.value) is LedgerError
    with ledger.engine.connect() as conn:
        assert event_reads.read_stream(conn, other, "fenced") == []


def test_each_event_of_a_batch_gets_its_own_salt(ledger: MemoryLedger, tenant: str) -> None:
    sent = _events(50, text="the same short text")
    with db.begin(ledger.database.for_tenant(tenant)) as tx:
        event_store.append(tx, tenant, "salted", sent, 0)
    salt = sa.cast(events.c.private["_salt"], sa.Text)
    digest = sa.cast(events.c.payload["_private"], sa.Text)
    stmt = sa.select(salt, digest).where(events.c.tenant_id == tenant, events.c.stream_id == "salted")
    with ledger.engine.connect() as conn:
        rows = conn.execute(stmt).all()
    assert len(rows) == 50
    assert len({s for s, _ in rows}) == 50 and all(len(s) == 2 + 32 for s, _ in rows)  # JSON strings of 32 hex digits
    assert len({d for _, d in rows}) == 50
