"""Graph maintenance through the CLI, HTTP and MCP on a real database: status and a
dry run write nothing, a run merges once, a bad merge is refused with exit code 2."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import anyio
import msgspec
import pytest
from fastapi.testclient import TestClient

from memledger.api.app import create_app
from memledger.events.catalogue import EntityObserved
from memledger.events.envelope import NewEvent
from memledger.library import MemoryLedger
from memledger.mcp_server import build_server
from memledger.service import maintenance, maintenance_schedule, projections
from memledger.store import event_store
from tests.conftest import TestDatabase
from tests.e2e.conftest import run_cli, scratch, scratch_ledger

SAID = [("organization", "Acme Inc"), ("organization", "ACME"), ("organization", "Acmé, Ltd"), ("person", "Ada")]
SAID += [("person", "Ada Lovelace"), ("person", "Ada Byron")]


@pytest.fixture(scope="module")
def ledger(database: TestDatabase) -> Iterator[MemoryLedger]:
    opened, drop = scratch_ledger(database, "maintenance")
    try:
        yield opened
    finally:
        drop()


def _tenant(ledger: MemoryLedger) -> str:
    tenant = f"upkeep-{uuid.uuid4().hex[:8]}"
    start = datetime(2026, 6, 1, tzinfo=UTC)
    news = [
        NewEvent(
            event=EntityObserved(name=name, entity_type=kind, confidence=0.8),  # type: ignore[arg-type]
            event_id=f"{tenant}-{i}",
            occurred_at=start + timedelta(seconds=i),
        )
        for i, (kind, name) in enumerate(SAID)
    ]
    with ledger.engine.begin() as tx:
        event_store.append(tx, tenant, "extraction:upkeep", news, None)
    projections.catch_up_all(ledger.engine, ["entities"])
    return tenant


def test_cli_status_dry_run_run_and_refusals(database: TestDatabase, ledger: MemoryLedger) -> None:
    tenant = _tenant(ledger)
    env = {**database.env, "DATABASE_URL": ledger.database.url.render_as_string(hide_password=False)}
    status = run_cli(env, "maintenance", "status", "--tenant", tenant, "--json")
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["pending_merges"] == 1
    dry = run_cli(env, "maintenance", "run", "--tenant", tenant, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "would merge 2 of 6 entities in 1 groups" in dry.stdout
    # The first seen is kept (all mentioned once); Ada, Ada Lovelace and Ada Byron stay apart.
    assert "organization:acme, organization:acmé, ltd -> organization:acme inc" in dry.stdout
    assert "person:" not in dry.stdout
    done = run_cli(env, "maintenance", "run", "--tenant", tenant, "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["entities_merged"], report["shown"], report["dry_run"]) == (2, True, False)
    bad = run_cli(
        env, "maintenance", "merge", "person:ada lovelace", "person:ada byron", "organization:acme", "--tenant", tenant
    )
    assert bad.returncode == 2 and "is a organization, not a person" in bad.stderr
    split = run_cli(env, "maintenance", "split", "organization:acme inc", "organization:acme", "--tenant", tenant)
    assert split.returncode == 0, split.stderr
    assert split.stdout.strip() == "split organization:acme from organization:acme inc"
    after = maintenance.status(ledger.database.for_tenant(tenant), tenant)
    assert (after.merged_entities, after.pending_merges) == (1, 0)


def test_http_and_mcp_answer_the_status_and_http_runs(ledger: MemoryLedger) -> None:
    tenant = _tenant(ledger)
    _, key = ledger.create_key(tenant, label="upkeep")
    with TestClient(create_app(ledger.database)) as http:
        refused = http.get("/v1/maintenance")
        status = http.get("/v1/maintenance", headers={"X-API-Key": key})
        dry = http.post("/v1/maintenance/run", params={"dry_run": "true"}, headers={"X-API-Key": key})
        ran = http.post("/v1/maintenance/run", headers={"X-API-Key": key})
        again = http.post("/v1/maintenance/run", headers={"X-API-Key": key})
    assert refused.status_code == 401
    assert status.status_code == 200 and status.json()["pending_merges"] == 1
    assert dry.status_code == 200 and dry.json()["dry_run"] and dry.json()["entities_merged"] == 2
    assert ran.status_code == 200 and ran.json()["shown"]
    assert again.json()["merges"] == []
    server = build_server(ledger.database, tenant_id=tenant)
    answer = anyio.run(server.call_tool, "maintenance_status", {})
    assert not answer.is_error, answer.content
    expected = msgspec.to_builtins(maintenance.status(ledger.database.for_tenant(tenant), tenant))
    assert answer.structured_content == expected
    assert expected["merged_entities"] == 2


def test_the_schedule_runs_the_rules_over_every_tenant(database: TestDatabase) -> None:
    with scratch(database, "upkeep_all") as ledger:
        tenants = [_tenant(ledger), _tenant(ledger)]
        schedule = maintenance_schedule.start(ledger.engine, ledger.database.for_tenant, 0.2)
        assert schedule is not None
        try:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and not all(_merged(ledger, t) for t in tenants):
                time.sleep(0.1)
        finally:
            schedule.stop()
        assert [_merged(ledger, t) for t in tenants] == [2, 2]
        assert maintenance_schedule.start(ledger.engine, ledger.database.for_tenant, 0) is None  # 0: never


def _merged(ledger: MemoryLedger, tenant: str) -> int:
    return maintenance.status(ledger.database.for_tenant(tenant), tenant).merged_entities
