"""``memledger mcp --transport http`` as an agent host reaches it: a subprocess on the
session's database, spoken to in JSON-RPC over HTTP. Every request needs an API key,
``initialize`` and ``tools/list`` included, and the key decides the tenant."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import httpx
import pytest
import sqlalchemy as sa

from memledger.service import keys
from memledger.store.schema import events

if TYPE_CHECKING:
    from tests.conftest import TestDatabase

ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}},
}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def server(database: TestDatabase) -> Iterator[str]:
    """The MCP server's URL, once it answers."""
    port = _free_port()
    command = [sys.executable, "-m", "memledger.cli.main", "mcp", "--transport", "http", "--port", str(port)]
    proc = subprocess.Popen(command, env=database.env, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            try:
                httpx.get(url, timeout=2)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "the MCP server did not start within 60 s"
                time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        proc.wait(30)


def _result(response: httpx.Response) -> Any:
    """The JSON-RPC result of a response sent as JSON or as one server-sent event."""
    if response.headers["content-type"].startswith("text/event-stream"):
        data = [line[5:] for line in response.text.splitlines() if line.startswith("data:")]
        return json.loads(data[-1])["result"]
    return response.json()["result"]


class Session:
    """An initialised MCP session over HTTP with one key."""

    def __init__(self, url: str, key: str) -> None:
        self.url = url
        self.headers = {**ACCEPT, "Authorization": f"Bearer {key}"}
        opened = httpx.post(url, json=INITIALIZE, headers=self.headers, timeout=60)
        assert opened.status_code == 200, opened.text
        self.headers["Mcp-Session-Id"] = opened.headers["mcp-session-id"]
        ready = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert httpx.post(url, json=ready, headers=self.headers, timeout=60).status_code == 202
        self.calls = 1

    def call(self, method: str, params: dict[str, Any]) -> Any:
        self.calls += 1
        message = {"jsonrpc": "2.0", "id": self.calls, "method": method, "params": params}
        response = httpx.post(self.url, json=message, headers=self.headers, timeout=120)
        assert response.status_code == 200, response.text
        return _result(response)


@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Bearer mlk_not-a-key"}, {"X-API-Key": "mlk_not-a-key"}],
    ids=["no key", "wrong bearer key", "wrong X-API-Key"],
)
def test_initialize_without_a_valid_key_is_401_naming_the_key(server: str, headers: dict[str, str]) -> None:
    response = httpx.post(server, json=INITIALIZE, headers={**ACCEPT, **headers}, timeout=60)

    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"
    assert "a valid API key is required" in response.json()["error"]
    assert "mcp-session-id" not in response.headers


def test_a_session_opened_with_a_key_cannot_go_on_without_it(database: TestDatabase, server: str) -> None:
    tenant = f"mcp-{uuid.uuid4().hex[:8]}"
    key_id, key = keys.create(database.engine, tenant, label="test", issued_by="test")
    session = Session(server, key)
    assert {tool["name"] for tool in session.call("tools/list", {})["tools"]} >= {"memory_context", "record_turn"}

    without = {k: v for k, v in session.headers.items() if k != "Authorization"}
    listing = {"jsonrpc": "2.0", "id": 99, "method": "tools/list", "params": {}}
    assert httpx.post(server, json=listing, headers=without, timeout=60).status_code == 401
    keys.revoke(database.engine, tenant, key_id, actor="test")
    assert httpx.post(server, json=listing, headers=session.headers, timeout=60).status_code == 401


def test_the_key_decides_the_tenant_a_turn_is_recorded_for(database: TestDatabase, server: str) -> None:
    tenant_a, tenant_b = (f"mcp-{uuid.uuid4().hex[:8]}" for _ in range(2))
    _, key_a = keys.create(database.engine, tenant_a, label="a", issued_by="test")
    keys.create(database.engine, tenant_b, label="b", issued_by="test")
    turn_id = f"turn-{uuid.uuid4().hex[:8]}"

    called = Session(server, key_a).call(
        "tools/call",
        {"name": "record_turn", "arguments": {"role": "user", "text": "Phoenix uses Postgres.", "turn_id": turn_id}},
    )

    assert not called.get("isError"), called
    with database.engine.connect() as conn:
        owners = conn.execute(
            sa.select(events.c.tenant_id).where(
                events.c.tenant_id.in_([tenant_a, tenant_b]), events.c.event_type == "turn.recorded"
            )
        ).scalars()
        assert list(owners) == [tenant_a]
