"""Who reads what of /health (issue 26, item 7).

Anyone may ask whether the server is up: 200 ``{"status": "ok"}`` or 503
``{"status": "unavailable"}``. The details (every tenant's projection lag and the
worker's backlog, and the database's error, which names its socket) need the
operator key, MEMLEDGER_OPERATOR_KEY. A 503 answered to a tenant's key names no
socket, host or directory either.
"""

from __future__ import annotations

import dataclasses
import secrets
import uuid
from collections.abc import Iterator

import httpx
import pytest
from fastapi.testclient import TestClient

from memledger.api.app import create_app
from memledger.extraction.heuristic import HeuristicExtractor
from memledger.store import db
from tests.e2e.conftest import ApiServer, Surfaces, start_server, stop_server, wait_until_serving

OPERATOR_KEY = secrets.token_urlsafe(24)


@pytest.fixture(scope="module")
def operated(surfaces: Surfaces) -> Iterator[ApiServer]:
    """A server with an operator key."""
    server = start_server({**surfaces.env, "MEMLEDGER_OPERATOR_KEY": OPERATOR_KEY}, "--no-workers")
    try:
        wait_until_serving(server)
        yield server
    finally:
        stop_server(server)


def _health(server: ApiServer, key: str | None = None, **params: str) -> httpx.Response:
    headers = {} if key is None else {"Authorization": f"Bearer {key}"}
    return httpx.get(f"{server.base_url}/health", params=params, headers=headers, timeout=30)


def test_public_health_says_ok_and_nothing_else(operated: ApiServer, surfaces: Surfaces) -> None:
    surfaces.catch_up()
    response = _health(operated)
    assert (response.status_code, response.json()) == (200, {"status": "ok"})


def test_the_details_need_the_operator_key(operated: ApiServer, surfaces: Surfaces) -> None:
    _, tenant_key = surfaces.ledger.create_key(f"h-{uuid.uuid4().hex[:8]}", label="e2e")
    for key in (None, tenant_key, OPERATOR_KEY + "x", OPERATOR_KEY[:-1]):
        response = _health(operated, key, detail="1")
        assert response.status_code == 401, (key, response.text)
        assert response.json()["error"]["code"] == "unauthorized"
        assert "pending_turns" not in response.text


def test_the_operator_reads_database_migrations_projections_and_worker(operated: ApiServer, surfaces: Surfaces) -> None:
    surfaces.catch_up()
    response = _health(operated, OPERATOR_KEY, detail="1")
    assert response.status_code == 200, response.text
    health = response.json()
    assert health["ok"] is True
    assert health["database"]["ok"] is True
    assert health["database"]["postgres"]
    assert health["database"]["pgvector"]
    assert health["migrations"]["ok"] is True
    assert health["migrations"]["current"] == health["migrations"]["head"]
    assert {"turns", "facts", "entities", "relationships"} <= set(health["projections"])
    assert all(p["ok"] and p["state"] == "live" for p in health["projections"].values())
    extractor = f"extract:heuristic@{HeuristicExtractor.version}"
    assert health["worker"] == {"ok": True, "extractor": extractor, "pending_turns": 0}


def test_the_operator_sees_pending_turns_that_the_public_does_not(operated: ApiServer, surfaces: Surfaces) -> None:
    surfaces.ledger.record_turn(f"h-{uuid.uuid4().hex[:8]}", "user", "Project Finch uses Redis.")
    try:
        assert _health(operated, OPERATOR_KEY, detail="1").json()["worker"]["pending_turns"] >= 1
        assert _health(operated).json() == {"status": "ok"}
    finally:
        surfaces.catch_up()


@pytest.fixture
def dead(surfaces: Surfaces) -> Iterator[tuple[TestClient, str]]:
    """The API over a database that does not exist (every connection fails, naming the
    server's socket), and that socket's directory."""
    url = surfaces.url.set(database=f"gone_{uuid.uuid4().hex[:8]}")
    gone = dataclasses.replace(surfaces.ledger.database, engine=db.create_engine(url), app_engine=db.create_engine(url))
    socket_dir = str(surfaces.url.query.get("host") or surfaces.url.host)
    with TestClient(create_app(gone, operator_key=OPERATOR_KEY), raise_server_exceptions=False) as client:
        yield client, socket_dir
    gone.engine.dispose()
    gone.app_engine.dispose()


def test_when_the_database_is_down_no_answer_but_the_operators_names_its_socket(
    dead: tuple[TestClient, str], surfaces: Surfaces
) -> None:
    client, socket_dir = dead
    assert socket_dir
    public = client.get("/health")
    assert (public.status_code, public.json()) == (503, {"status": "unavailable"})
    _, key = surfaces.ledger.create_key(f"h-{uuid.uuid4().hex[:8]}", label="e2e")
    for answer in (
        client.get("/v1/events", headers={"Authorization": f"Bearer {key}"}),
        client.post("/v1/turns", json={"role": "user", "text": "hi"}, headers={"X-API-Key": key}),
    ):
        assert answer.status_code == 503, answer.text
        assert answer.json()["error"]["code"] == "database_unavailable"
        assert "database" in answer.json()["error"]["message"]
        assert socket_dir not in answer.text and "s.PGSQL" not in answer.text, answer.text
    detailed = client.get("/health", params={"detail": "1"}, headers={"Authorization": f"Bearer {OPERATOR_KEY}"})
    assert detailed.status_code == 503
    assert detailed.json()["database"]["ok"] is False  # the reason is the operator's to read
