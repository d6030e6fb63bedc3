"""``memledger serve`` by itself: its own workers extract and project a POSTed turn, it
logs one startup line and one access line per request, and with the embedded server it
starts that server again when it dies."""

from __future__ import annotations

import os
import re
import signal
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from memledger.store import embedded_server
from tests.conftest import TestDatabase
from tests.e2e.conftest import ApiServer, scratch, start_server, stop_server, wait_until_serving

FACT_TIMEOUT_S = 30.0
RESTART_TIMEOUT_S = 30.0
TURN = {"role": "user", "text": "Project Phoenix uses PostgreSQL.", "scopes": {"project": "phoenix"}}
CONTEXT = {"request": "Which database does Phoenix use?", "project": "phoenix"}


def _wait_for(condition: str, check: object, timeout: float, server: ApiServer) -> None:
    """Poll ``check()`` until true, or fail with the server's log."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():  # type: ignore[operator]
            return
        time.sleep(0.3)
    pytest.fail(f"{condition} within {timeout:.0f} s; the server's log:\n{server.log_text()}")


@pytest.fixture
def serving(database: TestDatabase, request: pytest.FixtureRequest) -> Iterator[tuple[ApiServer, str]]:
    """``memledger serve`` with the test's extra arguments on a database of its own, and a key."""
    with scratch(database, "serve_workers") as ledger:
        _, key = ledger.create_key(f"serve-{uuid.uuid4().hex[:8]}")
        env = {**database.env, "DATABASE_URL": ledger.database.url.render_as_string(hide_password=False)}
        server = start_server(env, *getattr(request, "param", ()))
        try:
            wait_until_serving(server)
            yield server, key
        finally:
            stop_server(server)


def test_serve_extracts_and_projects_a_posted_turn_by_itself(serving: tuple[ApiServer, str]) -> None:
    server, key = serving
    http = server.client(key)

    assert http.post("/v1/turns", json=TURN).status_code == 202
    _wait_for(
        "the turn's fact never reached context",
        lambda: "Phoenix uses PostgreSQL" in http.get("/v1/memory/context", params=CONTEXT).json()["block"],
        FACT_TIMEOUT_S,
        server,
    )
    startup = [line for line in server.log_text().splitlines() if "memledger serving" in line]
    assert len(startup) == 1, server.log_text()
    assert f"memledger serving {server.base_url} on postgresql+psycopg://" in startup[0]
    assert "extractor heuristic" in startup[0]
    assert "Uvicorn running" not in server.log_text()  # one startup line, not uvicorn's banners
    # Common log format: host ident user [time] "request line" status.
    access = r'127\.0\.0\.1:\d+ - - \[\d\d/\w{3}/\d{4}:\d\d:\d\d:\d\d [+-]\d{4}\] "POST /v1/turns HTTP/1\.1" 202'
    assert re.search(access, server.log_text()), server.log_text()


@pytest.mark.parametrize("serving", [("--no-workers", "--no-access-log")], indirect=True)
def test_serve_no_workers_leaves_turns_to_other_processes_and_logs_no_requests(
    serving: tuple[ApiServer, str],
) -> None:
    server, key = serving
    http = server.client(key)

    assert http.post("/v1/turns", json=TURN).status_code == 202
    time.sleep(3)  # longer than the workers take to extract it when they run
    assert "Phoenix uses PostgreSQL" not in http.get("/v1/memory/context", params=CONTEXT).json()["block"]
    assert "no workers (--no-workers)" in server.log_text()
    assert "/v1/turns" not in server.log_text()


def test_serve_starts_the_embedded_server_again_when_it_dies(embedded_home: dict[str, str]) -> None:
    pgdata = Path(embedded_home["MEMLEDGER_HOME"]) / "pgdata"
    server = start_server(embedded_home)
    try:
        wait_until_serving(server)
        assert f"on embedded PostgreSQL in {pgdata}" in server.log_text()
        killed = embedded_server.embedded_pid(pgdata)
        assert killed is not None
        os.kill(killed, signal.SIGKILL)
        _wait_for(
            "serve did not say it restarted the embedded server",
            lambda: "is running again" in server.log_text(),
            RESTART_TIMEOUT_S,
            server,
        )
        assert embedded_server.embedded_pid(pgdata) not in {None, killed}
        assert "is not running; starting it again" in server.log_text()
        assert server.client().get("/health").status_code in {200, 503}  # answering, on the new server
    finally:
        stop_server(server)
