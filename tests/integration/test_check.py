"""The connection test (issue 28, item 4): read-only steps, the smoke round trip in a
scratch tenant, and the HTTP endpoints' operator key. Real PostgreSQL throughout; the
model step runs through litellm's ``mock_response``, so nothing reaches the network."""

from __future__ import annotations

import dataclasses
import secrets
import socket
import time
import uuid
from collections.abc import Iterator

import msgspec
import pytest
from fastapi.testclient import TestClient

from memledger import bootstrap
from memledger.api.app import create_app
from memledger.config import Settings
from memledger.library import MemoryLedger
from memledger.service import check
from memledger.store import event_reads
from tests.conftest import TestDatabase, _drop
from tests.e2e.conftest import scratch

READ_ONLY = ["database", "migrations", "projections", "embedder", "model"]
SMOKE = [*READ_ONLY, "record", "extract", "project", "context", "erase", "erased"]
OPERATOR_KEY = secrets.token_urlsafe(24)


@pytest.fixture(scope="module")
def ledger(database: TestDatabase) -> Iterator[MemoryLedger]:
    with scratch(database, "check") as opened:
        yield opened


def _statuses(report: check.Report) -> dict[str, str]:
    return {s.name: s.status for s in report.steps}


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def test_read_only_check_passes_on_a_healthy_database(ledger: MemoryLedger) -> None:
    report = check.run(lambda: bootstrap.check_probes(ledger.database))
    assert report.ok, report
    assert [s.name for s in report.steps] == READ_ONLY
    model = report.steps[-1]
    assert (model.status, model.detail) == ("skipped", "not configured (MEMLEDGER_LLM_MODEL is unset)")
    assert all(s.status == "ok" and s.ms > 0 for s in report.steps[:-1])
    assert report.steps[0].detail.startswith("PostgreSQL ")


def test_a_configured_model_is_asked_once_offline(ledger: MemoryLedger) -> None:
    settings = Settings(
        DATABASE_URL=ledger.database.url.render_as_string(hide_password=False),
        llm_model="openai/gpt-4o-mini",
        llm_options={"mock_response": "ok"},
    )
    configured = dataclasses.replace(ledger.database, settings=settings)
    report = check.run(lambda: bootstrap.check_probes(configured))
    assert _statuses(report)["model"] == "ok", report
    assert report.steps[-1].detail == "openai/gpt-4o-mini answered 'ok'"


def test_a_failing_model_fails_its_step_only(ledger: MemoryLedger) -> None:
    settings = Settings(
        DATABASE_URL=ledger.database.url.render_as_string(hide_password=False),
        llm_model="openai/gpt-4o-mini",
        llm_options={"mock_response": Exception("no route to the provider")},
    )
    configured = dataclasses.replace(ledger.database, settings=settings)
    report = check.run(lambda: bootstrap.check_probes(configured))
    assert not report.ok
    assert _statuses(report) == {**dict.fromkeys(READ_ONLY[:-1], "ok"), "model": "failed"}


def test_an_unreachable_database_fails_its_step_and_skips_the_rest() -> None:
    settings = Settings(DATABASE_URL=f"postgresql://memledger@127.0.0.1:{_closed_port()}/memledger")
    opened: list[bootstrap.App] = []

    def connect() -> check.Probes:
        opened.append(bootstrap.connect(bootstrap.check_settings(settings), run_migrations=False))
        return bootstrap.check_probes(opened[-1])

    began = time.monotonic()
    report = check.run(connect, smoke=True)
    for database in opened:
        database.close()
    assert time.monotonic() - began < 5
    assert not report.ok
    skipped = dict.fromkeys(SMOKE[1:], "skipped")
    assert _statuses(report) == {"database": "failed", **skipped, "embedder": "ok"}  # it needs no server
    assert report.steps[0].detail.startswith("OperationalError: connection failed")
    assert report.steps[1].detail == "needs database, which did not pass"


def test_the_connect_timeout_is_added_unless_the_url_sets_one() -> None:
    plain = bootstrap.check_settings(Settings(DATABASE_URL="postgresql://u@db.invalid/m"))
    assert plain.database_url is not None and "connect_timeout=5" in plain.database_url
    own = Settings(DATABASE_URL="postgresql://u@db.invalid/m?connect_timeout=30")
    assert bootstrap.check_settings(own).database_url == own.database_url


def _scratch_tenant(report: check.Report) -> str:
    record = next(s for s in report.steps if s.name == "record")
    tenant = record.detail.removeprefix("tenant ").split(",")[0]
    assert tenant.startswith(check.SCRATCH_PREFIX)
    return tenant


def test_the_smoke_run_passes_and_leaves_nothing_readable(ledger: MemoryLedger) -> None:
    report = check.run(lambda: bootstrap.check_probes(ledger.database), smoke=True)
    assert report.ok, report
    assert [s.name for s in report.steps] == SMOKE
    tenant = _scratch_tenant(report)
    assert not ledger.search(tenant, "PostgreSQL database Kestrel", scopes=check.SCOPES)
    assert not ledger.select(tenant, check.QUESTION, scopes=check.SCOPES).items
    with ledger.engine.connect() as conn:
        recs = event_reads.read_tenant(conn, tenant)
    assert recs, "the erasure keeps its record and the turns' skeletons"
    assert not [r for r in recs if check.MARKER.encode() in msgspec.json.encode(r.event)]
    assert all(r.erased for r in recs if type(r.event).__name__ == "TurnRecorded")


def test_http_check_needs_the_operator_key(ledger: MemoryLedger) -> None:
    _, tenant_key = ledger.create_key(f"check-{uuid.uuid4().hex[:8]}", label="check")
    with TestClient(create_app(ledger.database, operator_key=OPERATOR_KEY)) as http:
        for key in (None, tenant_key, OPERATOR_KEY + "x"):
            headers = {} if key is None else {"Authorization": f"Bearer {key}"}
            for method, path in (("GET", "/v1/check"), ("POST", "/v1/check/smoke")):
                response = http.request(method, path, headers=headers)
                assert response.status_code == 401, (key, path, response.text)
                assert "steps" not in response.text
        operator = {"Authorization": f"Bearer {OPERATOR_KEY}"}
        read_only = http.get("/v1/check", headers=operator)
        smoke = http.post("/v1/check/smoke", headers=operator)
    assert read_only.status_code == 200, read_only.text
    assert [s["name"] for s in read_only.json()["steps"]] == READ_ONLY
    assert smoke.status_code == 200, smoke.text
    assert smoke.json()["ok"] is True and smoke.json()["smoke"] is True
    assert [s["name"] for s in smoke.json()["steps"]] == SMOKE


def test_a_database_without_a_ledger_is_told_how_to_create_one(database: TestDatabase) -> None:
    """A fresh database: the check never migrates it, and says what to run."""
    url = database.new_database("unmigrated")
    settings = Settings(DATABASE_URL=url.render_as_string(hide_password=False))
    opened = bootstrap.connect(bootstrap.check_settings(settings), run_migrations=False)
    try:
        report = check.run(lambda: bootstrap.check_probes(opened))
    finally:
        opened.close()
        _drop(database.server_url, str(url.database))
    migrations = next(s for s in report.steps if s.name == "migrations")
    assert not report.ok and migrations.status == "failed"
    assert migrations.detail.startswith("the database holds no ledger yet (run `memledger migrate`")
