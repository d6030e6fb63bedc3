"""``POST /v1/import``: NDJSON turns imported as ``memledger import`` imports a file."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from fastapi.testclient import TestClient

from memledger.api.app import create_app
from memledger.config import Settings
from memledger.events.catalogue import TurnRecorded
from memledger.library import MemoryLedger
from memledger.service import scope_assertions
from memledger.store import event_reads
from tests.e2e.conftest import scratch_ledger

if TYPE_CHECKING:
    from tests.conftest import TestDatabase

NDJSON = {"Content-Type": "application/x-ndjson"}


@pytest.fixture(scope="module")
def ledger(database: TestDatabase) -> Iterator[MemoryLedger]:
    with MemoryLedger.open(Settings(DATABASE_URL=database.url.render_as_string(hide_password=False))) as opened:
        yield opened


@pytest.fixture(scope="module")
def http(ledger: MemoryLedger) -> Iterator[TestClient]:
    with TestClient(create_app(ledger.database, max_body_bytes=16 * 1024)) as client:
        yield client


@pytest.fixture
def tenant() -> str:
    return f"http-import-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def issued(ledger: MemoryLedger, tenant: str) -> tuple[str, str]:
    """(key id, key)."""
    return ledger.create_key(tenant, label="import")


@pytest.fixture
def key(issued: tuple[str, str]) -> str:
    return issued[1]


def _lines(count: int, session: str = "s1") -> list[str]:
    roles = ("user", "assistant")
    turns = [{"role": roles[i % 2], "text": f"turn {i} of {session}", "session": session} for i in range(count)]
    return [json.dumps(turn) for turn in turns]


def _stored(ledger: MemoryLedger, tenant: str) -> list[tuple[str, str | None]]:
    """(text, actor) of the tenant's turns, in ledger order."""
    with ledger.engine.connect() as conn:
        found = event_reads.read_tenant(conn, tenant)
    return [(r.event.text, r.metadata.actor) for r in found if isinstance(r.event, TurnRecorded)]


def _post(http: TestClient, key: str | None, body: str, **params: str | int) -> tuple[int, dict[str, object]]:
    headers = {**NDJSON, **({"X-API-Key": key} if key else {})}
    params.setdefault("source", "test.jsonl")
    answer = http.post("/v1/import", content=body.encode(), headers=headers, params=params)
    return answer.status_code, answer.json()


def test_import_answers_a_summary_records_the_key_and_is_idempotent(
    http: TestClient, ledger: MemoryLedger, tenant: str, issued: tuple[str, str], key: str
) -> None:
    body = "\n".join(_lines(4, "s1") + _lines(2, "s2")) + "\n"
    status, summary = _post(http, key, body, source="chat.jsonl")
    assert status == 200, summary
    assert (summary["conversations"], summary["recorded"], summary["present"], summary["refused"]) == (2, 6, 0, [])
    assert isinstance(summary["last_position"], int) and summary["last_position"] > 0
    stored = _stored(ledger, tenant)
    assert [text for text, _ in stored] == [json.loads(line)["text"] for line in body.splitlines()]
    assert {actor for _, actor in stored} == {f"api:key:{issued[0]}"}
    status, again = _post(http, key, body, source="chat.jsonl")
    assert (status, again["recorded"], again["present"]) == (200, 0, 6)
    assert len(_stored(ledger, tenant)) == 6


def test_parts_sent_with_their_first_line_agree_with_the_file_imported_whole(
    http: TestClient, ledger: MemoryLedger, tenant: str, key: str, tmp_path: Path
) -> None:
    lines = _lines(6, "whole")
    path = tmp_path / "history.jsonl"
    path.write_text("\n".join(lines) + "\n")
    assert ledger.import_turns(tenant, path).recorded == 6  # ids derived from "history.jsonl" and the lines
    for first in (1, 4):
        part = "\n".join(lines[first - 1 : first + 2])
        status, summary = _post(http, key, part, source="history.jsonl", first_line=first)
        assert (status, summary["recorded"], summary["present"]) == (200, 0, 3), summary
    assert len(_stored(ledger, tenant)) == 6


def test_bad_lines_are_named_and_nothing_is_written(
    http: TestClient, ledger: MemoryLedger, tenant: str, key: str
) -> None:
    lines = [*_lines(2), "{not json", json.dumps({"role": "robot", "text": "x"}), *_lines(1, "s9")]
    status, answer = _post(http, key, "\n".join(lines), first_line=10)
    assert status == 422, answer
    error = answer["error"]
    assert isinstance(error, dict)
    assert error["code"] == "invalid_request" and error["field"] == "line 12"
    assert "line 12: not JSON" in error["message"] and "line 13:" in error["message"]
    assert "nothing was imported" in error["message"]
    assert _stored(ledger, tenant) == []


def test_a_turn_the_ledger_cannot_store_refuses_the_body(
    http: TestClient, ledger: MemoryLedger, tenant: str, key: str
) -> None:
    nul = json.dumps({"role": "user", "text": "a\u0000b", "session": "s1"})
    status, answer = _post(http, key, "\n".join([*_lines(2), nul, *_lines(1, "s3")]))
    assert status == 422, answer
    error = answer["error"]
    assert isinstance(error, dict) and error["field"] == "line 3" and "NUL" in str(error["message"])
    assert _stored(ledger, tenant) == []


def test_import_needs_a_key_and_a_body_within_the_limit(
    http: TestClient, ledger: MemoryLedger, tenant: str, key: str
) -> None:
    assert _post(http, None, "\n".join(_lines(1)))[0] == 401
    too_big = "\n".join(_lines(400))
    assert len(too_big) > 16 * 1024
    assert _post(http, key, too_big)[0] == 413
    status, answer = _post(http, key, "\n".join(_lines(1)), format="yaml")
    assert status == 422, answer
    unnamed = http.post("/v1/import", content="\n".join(_lines(1)).encode(), headers={**NDJSON, "X-API-Key": key})
    assert unnamed.status_code == 422 and "source" in unnamed.text
    assert _stored(ledger, tenant) == []


SECRET = "an import deployment's scope secret"


@pytest.fixture(scope="module")
def asserting(database: TestDatabase) -> Iterator[MemoryLedger]:
    opened, drop = scratch_ledger(database, "importassert")
    url = opened.database.url.render_as_string(hide_password=False)
    try:
        with MemoryLedger.open(Settings(DATABASE_URL=url, scope_secret=SECRET)) as ledger:
            yield ledger
    finally:
        drop()


def test_with_scope_assertions_a_user_named_in_a_line_needs_one(asserting: MemoryLedger, tenant: str) -> None:
    _, key = asserting.create_key(tenant, label="import")
    lines = [*_lines(2), json.dumps({"role": "user", "text": "mine", "session": "s2", "scopes": {"user": "alice"}})]
    token = scope_assertions.mint(
        scope_assertions.tenant_secret(SECRET, tenant), tenant, "alice", expires_at=int(time.time()) + 60
    )
    with TestClient(create_app(asserting.database)) as client:
        params, body = {"source": "mine.jsonl"}, "\n".join(lines)
        refused = client.post("/v1/import", content=body, headers={**NDJSON, "X-API-Key": key}, params=params)
        assert refused.status_code == 403, refused.text
        assert scope_assertions.HEADER in refused.json()["error"]["message"]
        assert _stored(asserting, tenant) == []
        headers = {**NDJSON, "X-API-Key": key, scope_assertions.HEADER: token}
        accepted = client.post("/v1/import", content=body, headers=headers, params=params)
    assert accepted.status_code == 200, accepted.text
    assert accepted.json()["recorded"] == 3
