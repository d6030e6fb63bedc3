"""With ``MEMLEDGER_SCOPE_SECRET`` set, an API key alone names no user: a request
naming one (query or body, HTTP or MCP over HTTP) needs the app's signed assertion in
``X-Memledger-Scope``, else 403 naming the header. The real app, a real database."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from memledger import mcp_server
from memledger.api.app import create_app
from memledger.config import Settings
from memledger.errors import Refused
from memledger.library import MemoryLedger
from memledger.service import scope_assertions
from tests.conftest import TestDatabase
from tests.e2e.conftest import scratch_ledger

SECRET = "a deployment's scope secret"


@pytest.fixture(scope="module")
def ledger(database: TestDatabase) -> Iterator[MemoryLedger]:
    opened, drop = scratch_ledger(database, "assert")
    url = opened.database.url.render_as_string(hide_password=False)
    try:
        with MemoryLedger.open(Settings(DATABASE_URL=url, scope_secret=SECRET)) as asserting:
            yield asserting
    finally:
        drop()


@pytest.fixture(scope="module")
def http(ledger: MemoryLedger) -> Iterator[tuple[TestClient, str]]:
    tenant = f"assert-{uuid.uuid4().hex[:8]}"
    _, key = ledger.create_key(tenant, label="assert")
    with TestClient(create_app(ledger.database), headers={"Authorization": f"Bearer {key}"}) as client:
        yield client, tenant


def _assertion(tenant: str, user: str, ttl: int = 60) -> dict[str, str]:
    secret = scope_assertions.tenant_secret(SECRET, tenant)
    token = scope_assertions.mint(secret, tenant, user, expires_at=int(time.time()) + ttl)
    return {scope_assertions.HEADER: token}


def _requests(client: TestClient, user: str, headers: dict[str, str]) -> dict[str, httpx.Response]:
    turn = {"role": "user", "text": "I prefer tea.", "scopes": {"session": "s1", "user": user}}
    return {
        "context": client.get("/v1/memory/context", params={"request": "tea?", "user": user}, headers=headers),
        "select": client.post("/v1/memory/select", json={"request": "tea?", "scopes": {"user": user}}, headers=headers),
        "search": client.get("/v1/search", params={"q": "tea", "user": user}, headers=headers),
        "graph": client.get("/v1/graph", params={"entity": "me", "user": user}, headers=headers),
        "turns": client.post("/v1/turns", json={"turns": [turn]}, headers=headers),
    }


def test_a_request_naming_a_user_without_an_assertion_is_refused_naming_the_header(
    http: tuple[TestClient, str],
) -> None:
    client, _ = http
    for name, answer in _requests(client, "alice", {}).items():
        assert answer.status_code == 403, (name, answer.text)
        error = answer.json()["error"]
        assert error["code"] == scope_assertions.REFUSED_CODE and scope_assertions.HEADER in error["message"], name


@pytest.mark.parametrize("why", ["another user", "expired", "another tenant"])
def test_an_assertion_for_someone_else_or_expired_is_refused(http: tuple[TestClient, str], why: str) -> None:
    client, tenant = http
    headers = {
        "another user": _assertion(tenant, "bob"),
        "expired": _assertion(tenant, "alice", ttl=-1),
        "another tenant": _assertion("other-tenant", "alice"),
    }[why]
    for name, answer in _requests(client, "alice", headers).items():
        assert answer.status_code == 403, (name, answer.text)


def test_the_users_own_assertion_lets_each_request_through(http: tuple[TestClient, str]) -> None:
    client, tenant = http
    for name, answer in _requests(client, "alice", _assertion(tenant, "alice")).items():
        assert answer.status_code in (200, 202), (name, answer.text)


def test_a_request_naming_no_user_needs_no_assertion(http: tuple[TestClient, str]) -> None:
    client, _ = http
    assert client.get("/v1/memory/context", params={"request": "tea?", "session": "s1"}).status_code == 200
    assert client.get("/v1/search", params={"q": "tea", "session": "s1"}).status_code == 200


def test_an_mcp_call_over_http_naming_a_user_needs_the_apps_assertion(ledger: MemoryLedger) -> None:
    """The model picks a tool's arguments; the assertion on the HTTP request decides
    whom they may name (``mcp_server._check_scope``, called by every tool)."""

    def ctx(headers: dict[str, str]) -> Any:
        return SimpleNamespace(request_context=SimpleNamespace(request=SimpleNamespace(headers=headers)))

    asserted = {scope_assertions.HEADER.lower(): _assertion("acme", "alice")[scope_assertions.HEADER]}
    mcp_server._check_scope(ledger.database, ctx(asserted), "acme", "alice", fixed=False)
    mcp_server._check_scope(ledger.database, ctx({}), "acme", None, fixed=False)  # names no user
    for headers, user in ((asserted, "bob"), ({}, "alice")):
        with pytest.raises(Refused, match=scope_assertions.HEADER):
            mcp_server._check_scope(ledger.database, ctx(headers), "acme", user, fixed=False)
