"""Read replicas for real: a streaming standby of a primary of this module's own.

Writers append on the primary, readers read on the standby (``tests/support/standby.py``:
``pg_basebackup -R`` from the embedded server's binaries). Gap-safe reading stays
correct there, a read that follows a write waits for the standby or goes to the
primary, a standby killed mid-read leaves its reads to the primary, and once the
standby is promoted writes go on with nothing lost. The tests run in file order: the
last one promotes the standby.
"""

from __future__ import annotations

import json
import os
import random
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import URL, Engine

from memledger import bootstrap
from memledger.api.app import create_app
from memledger.config import Settings
from memledger.events.catalogue import Scopes
from memledger.events.envelope import START, Cursor
from memledger.library import MemoryLedger
from memledger.service import context, keys, replica_reads
from memledger.service.replica_reads import ReadReplicas
from memledger.store import db, event_reads, event_store
from memledger.store.schema import events
from tests.conftest import DEADLINE_MS, turn_event
from tests.e2e.conftest import run_cli
from tests.support.standby import Pair

SCOPES = Scopes(session="s1", project="phoenix", user="dana")
ASKED = "Which database does Phoenix use?"
OPERATOR_KEY = "operator-" + "k" * 40


@dataclass
class Setup:
    pair: Pair
    name: str
    database: bootstrap.App  # primary, with the standby as its read replica
    standby_owner: Engine
    settings: Settings

    def caught_up(self) -> None:
        self.pair.wait_caught_up(self.name)

    def reads(self, **options: Any) -> ReadReplicas:
        return ReadReplicas(self.database.app_engine, self.database.read_engines, **options)


def _url(url: URL) -> str:
    return url.render_as_string(hide_password=False)


@pytest.fixture(scope="module")
def setup() -> Iterator[Setup]:
    pair = Pair()
    opened: list[bootstrap.App] = []
    try:
        name = f"standby_{uuid.uuid4().hex[:10]}"
        primary_url = db.ensure_database(pair.primary_url, name)
        opened.append(bootstrap.connect(Settings(DATABASE_URL=_url(primary_url))))  # migrated before the copy
        pair.start_standby()
        standby_url = pair.standby_url.set(database=name)
        settings = Settings(DATABASE_URL=_url(primary_url), read_database_urls=(_url(standby_url),))
        database = bootstrap.connect(settings, run_migrations=False)
        opened.append(database)
        standby_owner = db.create_engine(standby_url)
        yield Setup(pair, name, database, standby_owner, settings)
        standby_owner.dispose()
    finally:
        for each in opened:
            each.close()
        pair.destroy()


def _positions(engine: Engine, tenant: str) -> list[int]:
    with engine.connect() as conn:
        stmt = sa.select(events.c.position).where(events.c.tenant_id == tenant).order_by(events.c.position)
        return list(conn.execute(stmt).scalars())


def test_snapshot_functions_differ_on_a_standby_and_gap_safe_reads_wait_for_an_older_writer(setup: Setup) -> None:
    tenant = f"gap-{uuid.uuid4().hex[:8]}"
    with setup.standby_owner.connect() as conn:
        with pytest.raises(sa_exc.DBAPIError) as refused:  # no transaction id can be given on a standby
            conn.execute(sa.text("SELECT pg_current_xact_id()"))
        assert getattr(refused.value.orig, "sqlstate", None) == "25006"
        conn.rollback()
        assert conn.execute(sa.text("SELECT pg_is_in_recovery()")).scalar_one() is True
    primary = setup.database.engine
    older = primary.connect()
    older_tx = older.begin()
    try:
        first = event_store.append(older, tenant, "older", [turn_event("older")], None).positions[0]
        older_xid = int(older.execute(sa.text("SELECT pg_current_xact_id()::text")).scalar_one())
        with primary.begin() as tx:
            second = event_store.append(tx, tenant, "newer", [turn_event("newer")], None).positions[0]
        assert first < second
        setup.caught_up()
        with setup.standby_owner.connect() as conn:
            # the newer transaction is visible on the standby, the older is still running on the primary
            assert _positions(setup.standby_owner, tenant) == [second]
            xmin = int(conn.execute(sa.text("SELECT pg_snapshot_xmin(pg_current_snapshot())::text")).scalar_one())
            assert xmin <= older_xid, "the standby's snapshot must count the primary's running writer"
            # so a gap-safe reader takes nothing yet (a position cursor would take `second`, then skip `first`)
            assert event_reads.read_all(conn, tenant_id=tenant) == []
        older_tx.commit()
    finally:
        older.close()
    setup.caught_up()
    with setup.standby_owner.connect() as conn:
        assert [r.position for r in event_reads.read_all(conn, tenant_id=tenant)] == [first, second]


def test_a_reader_tailing_the_standby_misses_nothing_that_concurrent_writers_commit(setup: Setup) -> None:
    tenant = f"tail-{uuid.uuid4().hex[:8]}"
    primary = setup.database.engine
    done = threading.Event()
    errors: list[BaseException] = []

    def write(seed: int) -> None:
        rng = random.Random(seed)
        try:
            for i in range(40):
                with primary.begin() as tx:
                    news = [turn_event(f"w{seed}-{i}-{j}") for j in range(3)]
                    event_store.append(tx, tenant, f"w{seed}-{i}", news, None)
                    time.sleep(rng.random() * 0.004)  # commit out of position order now and then
        except BaseException as e:  # noqa: BLE001 - reported by the test below
            errors.append(e)

    read: list[int] = []

    def tail() -> None:
        cursor: Cursor = START
        with setup.standby_owner.connect() as conn:
            while True:
                page = event_reads.read_all(conn, after=cursor, tenant_id=tenant, limit=50)
                conn.commit()
                read.extend(r.position for r in page)
                if page:
                    cursor = page[-1].cursor
                elif done.is_set():
                    return
                else:
                    time.sleep(0.002)

    writers = [threading.Thread(target=write, args=(seed,)) for seed in range(3)]
    reader = threading.Thread(target=tail)
    reader.start()
    for each in writers:
        each.start()
    for each in writers:
        each.join()
    setup.caught_up()
    with primary.connect() as conn:  # let the reader see past the last writer
        conn.execute(sa.text("SELECT 1"))
    time.sleep(0.2)
    done.set()
    reader.join(30)
    assert not errors
    assert len(read) == 3 * 40 * 3
    with primary.connect() as conn:
        expected = [r.position for r in event_reads.read_all(conn, tenant_id=tenant, limit=10_000)]
    assert read == expected  # every event once, in the ledger's order


@pytest.fixture(scope="module")
def ledger(setup: Setup) -> MemoryLedger:
    return MemoryLedger(setup.database)


def _pause(setup: Setup, paused: bool) -> None:
    with setup.standby_owner.connect() as conn:
        conn.execute(sa.text("SELECT pg_wal_replay_pause()" if paused else "SELECT pg_wal_replay_resume()"))
        conn.commit()


def test_a_read_after_a_write_waits_for_the_standby_or_goes_to_the_primary(setup: Setup, ledger: MemoryLedger) -> None:
    tenant = f"ryw-{uuid.uuid4().hex[:8]}"
    ledger.record_turn(tenant, "user", "Project Phoenix uses PostgreSQL.", scopes=SCOPES)
    ledger.process()
    setup.caught_up()
    _pause(setup, True)
    try:
        position = ledger.record_turn(tenant, "user", "Phoenix also uses Redis for caching.", scopes=SCOPES)
        reads = setup.reads()
        behind = reads.route(tenant, after=position, wait_s=0.2)
        assert behind.source == replica_reads.PRIMARY
        assert f"had not replayed position {position}" in (behind.reason or "")
        failing = setup.reads(fallback="fail_open")
        assert failing.route(tenant, after=position, wait_s=0.05).engine is None
        request = context.SelectRequest(tenant_id=tenant, scopes=SCOPES, request=ASKED, deadline_ms=200)
        refused = replica_reads.select_routed(failing, request, after=position)
        assert "had not replayed position" in (refused.empty_reason or "")
        assert reads.route(tenant).source != replica_reads.PRIMARY  # without `after` the standby serves as it is
        threading.Timer(0.3, _pause, args=(setup, False)).start()
        started = time.monotonic()
        waited = reads.route(tenant, after=position, wait_s=10)
        elapsed = time.monotonic() - started
    finally:
        _pause(setup, False)
    assert waited.source != replica_reads.PRIMARY
    assert 0.25 < elapsed < 5
    # served by the standby alone (fail_open: never the primary), recorded on the primary
    request = context.SelectRequest(tenant_id=tenant, scopes=SCOPES, request=ASKED, deadline_ms=DEADLINE_MS)
    selection = replica_reads.select_routed(failing, request, after=position)
    assert any("PostgreSQL" in item.text for item in selection.items), selection
    assert failing.down() == []
    served = replica_reads.build_context(failing, setup.database.for_tenant(tenant), request, after=position)
    assert served.event_id and "PostgreSQL" in served.block.text
    with setup.database.engine.connect() as conn:
        recorded = event_reads.read_events(conn, tenant, [served.event_id])
    assert recorded and recorded[0].event.read_cursors  # type: ignore[attr-defined]


def test_a_standby_killed_mid_read_leaves_the_read_to_the_primary(setup: Setup, ledger: MemoryLedger) -> None:
    tenant = f"kill-{uuid.uuid4().hex[:8]}"
    ledger.record_turn(tenant, "user", "Project Phoenix uses PostgreSQL.", scopes=SCOPES)
    ledger.process()
    setup.caught_up()
    reads = setup.reads(fallback="fail_open", down_for_s=60)
    statements: list[str] = []

    def kill_on_the_third(*args: Any) -> None:
        statements.append(args[2])
        if len(statements) == 3:  # inside the selection's transaction, between two of its statements
            setup.pair.kill()

    replica = setup.database.read_engines[0]
    sa.event.listen(replica, "before_cursor_execute", kill_on_the_third)
    try:
        request = context.SelectRequest(tenant_id=tenant, scopes=SCOPES, request=ASKED, deadline_ms=DEADLINE_MS)
        selection = replica_reads.select_routed(reads, request)
    finally:
        sa.event.remove(replica, "before_cursor_execute", kill_on_the_third)
    assert not setup.pair.running()
    assert len(statements) >= 3
    assert any("PostgreSQL" in item.text for item in selection.items), selection
    assert reads.down() == list(reads.names)
    started = time.monotonic()
    assert reads.route(tenant).source == replica_reads.PRIMARY  # left out: no connection attempt
    assert time.monotonic() - started < 0.5
    found = reads.read(tenant, lambda on: _positions(on, tenant))
    assert found == _positions(setup.database.engine, tenant)
    setup.pair.start()
    setup.caught_up()


def test_health_and_projections_status_show_the_replicas_lag(setup: Setup, ledger: MemoryLedger) -> None:
    tenant = f"http-{uuid.uuid4().hex[:8]}"
    _, key = keys.create(setup.database.engine, tenant)
    with TestClient(create_app(setup.database, operator_key=OPERATOR_KEY)) as http:
        auth = {"Authorization": f"Bearer {key}"}
        accepted = http.post("/v1/turns", json={"turns": [{"role": "user", "text": "I use neovim."}]}, headers=auth)
        assert accepted.status_code == 202, accepted.text
        after = max(accepted.json()["positions"])
        served = http.get("/v1/memory/context", params={"request": "editor", "after": after}, headers=auth)
        assert served.status_code == 200 and served.json()["event_id"], served.text
        found = http.get("/v1/search", params={"q": "neovim", "after": after}, headers=auth)
        assert found.status_code == 200, found.text
        detail = http.get("/health", params={"detail": 1}, headers={"Authorization": f"Bearer {OPERATOR_KEY}"})
    replicas = detail.json()["replicas"]
    assert len(replicas) == 1 and replicas[0]["in_recovery"] is True, replicas
    assert isinstance(replicas[0]["bytes_behind"], int) and replicas[0]["error"] is None
    env = {
        "DATABASE_URL": _url(setup.database.url),
        "MEMLEDGER_READ_DATABASE_URLS": ",".join(setup.settings.read_database_urls),
    }
    done = run_cli({**os.environ, **env}, "projections", "status", "--json")
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    shown = [line["replica"] for line in lines if "replica" in line]
    assert len(shown) == 1 and shown[0]["in_recovery"] is True and shown[0]["ok"] is True, shown
    _pause(setup, True)
    try:
        printed = run_cli({**os.environ, **env}, "projections", "status")
    finally:
        _pause(setup, False)
    assert printed.returncode == 0, printed.stderr
    replica_line = printed.stdout.split("bytes behind")[1]
    assert shown[0]["name"] in replica_line and "paused" in replica_line, printed.stdout


def test_after_promotion_writes_go_on_and_nothing_is_lost(setup: Setup, ledger: MemoryLedger) -> None:
    tenant = f"promote-{uuid.uuid4().hex[:8]}"
    before = [ledger.record_turn(tenant, "user", f"turn {i}", scopes=SCOPES) for i in range(20)]
    with setup.database.engine.connect() as conn:
        every_before = [r.position for r in event_reads.read_all(conn, limit=100_000)]
    setup.database.close()
    setup.pair.stop_primary()  # a clean stop sends its last WAL to the standby first
    setup.pair.promote()
    promoted_url = setup.pair.standby_url.set(database=setup.name)
    promoted = MemoryLedger(bootstrap.connect(Settings(DATABASE_URL=_url(promoted_url))))
    try:
        with promoted.database.engine.connect() as conn:
            assert conn.execute(sa.text("SELECT pg_is_in_recovery()")).scalar_one() is False
            assert [r.position for r in event_reads.read_all(conn, limit=100_000)] == every_before
        assert _positions(promoted.database.engine, tenant) == before
        after = promoted.record_turn(tenant, "user", "written after the switch", scopes=SCOPES)
        assert after > max(every_before)
        promoted.process()
        with promoted.database.engine.connect() as conn:
            now = [r.position for r in event_reads.read_all(conn, limit=100_000)]
        assert now[: len(every_before)] == every_before and after in now[len(every_before) :]
    finally:
        promoted.close()
