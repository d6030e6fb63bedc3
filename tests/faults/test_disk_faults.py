"""The disk of the database full or read-only: a clear error, nothing half-written,
and everything resumes when the disk is back.

Each test puts a database's tables on a small tmpfs of its own, mounted for a
tablespace (tests/faults/own_server.py): filled with a ballast file, the kernel
refuses PostgreSQL's writes with ENOSPC; remounted read-only (the server is
stopped for the remount, since Linux refuses it while files are open for writing,
and started again on it), with EROFS. The catalogues and the WAL stay on the
data directory's disk, so the server stays up and the application meets the
errors statement by statement. A third test puts the server in read-only mode
(``default_transaction_read_only``, what managed PostgreSQL services do when
their storage quota is reached, and what a standby answers).
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Callable

import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient

from memledger import bootstrap
from memledger.api.app import create_app
from memledger.errors import DatabaseUnavailable
from memledger.projectors.status import ProjectionStatus
from memledger.service import integrity, keys, projections
from memledger.service.background import Background
from memledger.service.record import TurnInput, record_turns
from memledger.service.types import Scopes
from tests.faults.checks import (
    applied,
    assert_read_models_equal_a_rebuild,
    caught_up,
    extracted_turns,
    turns_in_ledger,
    wait_until,
)
from tests.faults.own_server import DataDisk, OwnServer
from tests.faults.test_database_restart import turn_text

TENANT = "disk"


def turns(prefix: str, count: int, *, padding: int = 0) -> list[TurnInput]:
    """``count`` turns with ids of their own; ``padding`` bytes make them take room on
    disk (random hex, which PostgreSQL cannot compress, in one "word", which the
    embedding model reads as one unknown token, so it costs no CPU there)."""
    return [
        TurnInput(
            role="user",
            text=turn_text(i) + (f" ref:{secrets.token_hex(padding // 2)}" if padding else ""),
            turn_id=f"{prefix}{i:03d}",
            scopes=Scopes(session=f"{prefix}-s{i // 5}", project="phoenix", user="ann"),
        )
        for i in range(count)
    ]


class Outage:
    """A database with the background running and an HTTP client, for a test that
    takes its disk away and gives it back."""

    def __init__(self, pg: OwnServer, prefix: str, disk: DataDisk | None) -> None:
        self.database = pg.database(prefix, disk=disk)
        self.engine = self.database.engine
        _, key = keys.create(self.engine, TENANT, label="faults")
        self.http = TestClient(create_app(self.database), raise_server_exceptions=False)
        self.auth = {"Authorization": f"Bearer {key}"}
        self.background: Background | None = None

    def record(self, batch: list[TurnInput]) -> None:
        record_turns(self.database.for_tenant(TENANT), TENANT, batch)

    def resend(self, batch: list[TurnInput], seconds: float = 10.0) -> None:
        """Send a refused batch again, as a client would, until it is accepted (a setting
        reload reaches the server's sessions a moment after it is asked for)."""
        deadline = time.monotonic() + seconds
        while True:
            try:
                self.record(batch)
            except DatabaseUnavailable:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
                continue
            return

    def start_background(self) -> None:
        self.background = bootstrap.start_background(self.database)

    def wait_caught_up(self, seconds: float = 60) -> float:
        assert self.background is not None
        worker = self.background.loop.worker

        def done() -> bool:
            dead = [t.name for t in self.background.threads if not t.is_alive()]  # type: ignore[union-attr]
            assert not dead, f"background threads that died: {dead}"
            return caught_up(self.engine, worker)

        def progress() -> str:
            lag = {s.name: (s.state, s.lag_events) for s in projections.statuses(self.engine)}
            return f"pending turns: {worker.pending()}, projections: {lag}"

        return wait_until(done, seconds, "the worker and projectors to catch up", detail=progress)

    def watch_while(self, seconds: float, states: list[str]) -> None:
        """For ``seconds``: the background threads stay alive, no projection is marked failed."""
        assert self.background is not None
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            dead = [t.name for t in self.background.threads if not t.is_alive()]
            assert not dead, f"background threads that died during the outage: {dead}"
            states.extend(f"{s.name} {s.state}: {s.error}" for s in _statuses_or_nothing(self.engine))
            time.sleep(0.1)

    def stop(self) -> None:
        if self.background is not None:
            self.background.stop()


def _statuses_or_nothing(engine: sa.Engine) -> list[ProjectionStatus]:
    try:
        return projections.statuses(engine)
    except (DatabaseUnavailable, sa.exc.DBAPIError):  # unreadable while the disk is away
        return []


def refused(call: Callable[[], object]) -> DatabaseUnavailable:
    """The DatabaseUnavailable ``call`` raises (fails if it raises nothing)."""
    with pytest.raises(DatabaseUnavailable) as raised:
        call()
    return raised.value


def background_warnings(caplog: pytest.LogCaptureFixture) -> dict[str, str]:
    """The first "database is unavailable" warning of each background loop."""
    found: dict[str, str] = {}
    for record in caplog.records:
        message = record.getMessage()
        if record.levelno >= logging.WARNING and "the database is unavailable" in message:
            found.setdefault(message.split(":", 1)[0], message)
    return found


def assert_resumed_whole(outage: Outage, every_turn: set[str]) -> None:
    """Every turn once, each extracted once, the chain intact, the read models a rebuild."""
    assert outage.background is not None
    worker = outage.background.loop.worker
    counts = turns_in_ledger(outage.engine, TENANT)
    assert set(counts) == every_turn and max(counts.values()) == 1, counts
    assert extracted_turns(outage.engine, worker) == every_turn
    assert applied(outage.engine)[worker.name] == len(every_turn), "a turn extracted twice or skipped"
    assert integrity.verify(outage.engine).ok
    assert_read_models_equal_a_rebuild(outage.engine)


def test_a_full_disk_refuses_whole_batches_with_the_reason_and_everything_resumes_when_space_returns(
    pg: OwnServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    disk = pg.disk(size_mb=32)
    outage = Outage(pg, "full", disk)
    try:
        before = turns("a", 20)
        outage.record(before)  # in the ledger; not yet extracted or projected (their tables are empty)
        disk.fill()
        big = turns("b", 20, padding=1500)  # 30 kB: more than the room left in the ledger's pages

        error = refused(lambda: outage.record(big))
        assert "disk is full" in str(error) and "No space left on device" in str(error), error
        assert not set(turns_in_ledger(outage.engine, TENANT)) & {str(t.turn_id) for t in big}, "half a batch"
        answer = outage.http.post(
            "/v1/turns",
            json={"turns": [{"role": t.role, "text": t.text, "turn_id": t.turn_id} for t in big]},
            headers=outage.auth,
        )
        assert answer.status_code == 503, answer.text
        assert "disk is full" in answer.json()["error"]["message"]

        outage.start_background()  # the worker and projectors meet the full disk
        states: list[str] = []
        outage.watch_while(3.0, states)
        assert not [s for s in states if " failed: " in s], "a projection was marked failed for want of disk"
        warned = background_warnings(caplog)
        assert {"projectors", "extraction"} <= set(warned), warned
        assert all("disk is full" in message for message in warned.values()), warned

        disk.make_room()
        outage.resend(big)
        took = outage.wait_caught_up()
        print(f"caught up {took:.1f} s after space returned")
    finally:
        disk.make_room()
        outage.stop()
    assert_resumed_whole(outage, {str(t.turn_id) for t in before + big})


def test_a_read_only_disk_is_named_in_every_refusal_and_everything_resumes_when_it_is_writable(
    pg: OwnServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    disk = pg.disk(size_mb=32)
    outage = Outage(pg, "readonly", disk)
    try:
        first = turns("a", 20)
        outage.record(first)
        outage.start_background()
        outage.wait_caught_up()
        outage.stop()  # the threads come back below, on the read-only disk

        pg.stop("fast")
        disk.remount(read_only=True)
        pg.start()
        second = turns("b", 10)
        error = refused(lambda: outage.record(second))
        assert "Read-only file system" in str(error), error
        answer = outage.http.post(
            "/v1/turns", json={"role": "user", "text": "hi", "turn_id": "b999"}, headers=outage.auth
        )
        assert answer.status_code == 503, answer.text
        assert "Read-only file system" in answer.json()["error"]["message"]

        outage.start_background()
        states: list[str] = []
        outage.watch_while(2.0, states)
        assert not [s for s in states if " failed: " in s]
        warned = background_warnings(caplog)
        assert {"projectors", "extraction watcher", "sealer"} <= set(warned), warned
        assert all("Read-only file system" in message for message in warned.values()), warned

        disk.remount(read_only=False)
        outage.resend(second)
        took = outage.wait_caught_up()
        print(f"caught up {took:.1f} s after the disk became writable")
    finally:
        if not pg.running():
            pg.start()
        disk.remount(read_only=False)
        outage.stop()
    assert_resumed_whole(outage, {str(t.turn_id) for t in first + second})


def test_a_server_in_read_only_mode_refuses_writes_with_the_reason_serves_reads_and_resumes(
    pg: OwnServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    outage = Outage(pg, "romode", None)
    admin = sa.create_engine(pg.url, isolation_level="AUTOCOMMIT")

    def read_only(on: bool) -> None:
        with admin.connect() as conn:
            # text(): server settings; reloaded into every session, pooled ones too.
            conn.execute(sa.text(f"ALTER SYSTEM SET default_transaction_read_only = {'on' if on else 'off'}"))
            conn.execute(sa.text("SELECT pg_reload_conf()"))

    try:
        first = turns("a", 20)
        outage.record(first)
        read_only(True)
        wait_until(lambda: _read_only_now(outage.engine), 10, "the reload to reach new sessions")
        second = turns("b", 10)
        error = refused(lambda: outage.record(second))
        assert "read-only" in str(error), error
        assert not set(turns_in_ledger(outage.engine, TENANT)) & {str(t.turn_id) for t in second}
        events = outage.http.get("/v1/events", headers=outage.auth)
        served = [e for e in events.json().get("events", []) if e["type"] == "turn.recorded"]
        assert events.status_code == 200 and len(served) == len(first), "reads are still served"

        outage.start_background()
        states: list[str] = []
        outage.watch_while(2.0, states)
        assert not [s for s in states if " failed: " in s]
        warned = background_warnings(caplog)
        assert {"projectors", "extraction"} <= set(warned), warned

        read_only(False)
        outage.resend(second)
        outage.wait_caught_up()
    finally:
        read_only(False)
        admin.dispose()
        outage.stop()
    assert_resumed_whole(outage, {str(t.turn_id) for t in first + second})


def _read_only_now(engine: sa.Engine) -> bool:
    with engine.connect() as conn:
        return bool(conn.execute(sa.text("SHOW default_transaction_read_only")).scalar() == "on")
