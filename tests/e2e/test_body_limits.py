"""Body limits and authentication come before a body is read (issue 26, item 1).

A real ``memledger serve`` on loopback, spoken to over raw sockets, because the
attacks are in the framing: a chunked body with no Content-Length, a chunked body
with a Content-Length that lies, a key that is missing. Before, the first was read
whole before the size check and before the 401, and the second was accepted past
the limit (202) and stored.
"""

from __future__ import annotations

import http.client
import json
import select
import socket
import time
import uuid
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.e2e.conftest import (
    MAX_BODY_BYTES,
    ApiServer,
    Caller,
    Surfaces,
    start_server,
    stop_server,
    wait_until_serving,
)

CHUNK = 16 * 1024
# Far more than loopback's socket buffers hold (a few MB), so a server that read it
# all before answering is told apart from one that answered at the limit.
FLOOD = 32 * 1024 * 1024
RSS_LIMIT = 2 * 1024 * 1024  # the dedicated server's limit in the memory test: the default


def _turn_prefix() -> bytes:
    return b'{"role": "user", "scopes": {"project": "p", "session": "s1", "user": "u"}, "text": "'


@contextmanager
def raw_request(server: ApiServer, path: str, headers: dict[str, str]) -> Iterator[socket.socket]:
    """A socket that has sent ``POST path`` with ``headers`` and no body yet."""
    where = urlsplit(server.base_url)
    sock = socket.create_connection((str(where.hostname), int(where.port or 80)), timeout=30)
    with closing(sock):
        lines = [f"POST {path} HTTP/1.1", f"Host: {where.netloc}", *(f"{k}: {v}" for k, v in headers.items())]
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        yield sock


def send_chunk(sock: socket.socket, data: bytes) -> None:
    sock.sendall(b"%x\r\n%s\r\n" % (len(data), data))


def answered(sock: socket.socket) -> bool:
    """Whether the server has written something back (without waiting)."""
    return bool(select.select([sock], [], [], 0)[0])


def send_until_answered(sock: socket.socket, total: int) -> int:
    """Send up to ``total`` bytes of a turn as chunks, stopping as soon as the server
    answers or closes; the bytes sent."""
    sent = 0
    try:
        send_chunk(sock, _turn_prefix())
        while sent < total and not answered(sock):
            send_chunk(sock, b"y" * CHUNK)
            sent += CHUNK
    except (BrokenPipeError, ConnectionResetError):
        pass  # the server answered and closed: what it said is still to be read
    return sent


def response_of(sock: socket.socket) -> tuple[int, dict[str, str], dict[str, Any]]:
    """The status, headers and JSON body the server wrote on ``sock``."""
    response = http.client.HTTPResponse(sock)
    response.begin()
    body = response.read()
    return response.status, {k.lower(): v for k, v in response.getheaders()}, json.loads(body)


def auth(caller: Caller) -> dict[str, str]:
    return {"Authorization": f"Bearer {caller.key}", "Content-Type": "application/json"}


def recorded_turns(caller: Caller) -> list[dict[str, Any]]:
    page = caller.http.get("/v1/events", params={"type": "turn.recorded"})
    assert page.status_code == 200, page.text
    events: list[dict[str, Any]] = page.json()["events"]
    return events


def test_an_over_limit_chunked_body_is_refused_with_413_as_it_streams(server: ApiServer, new_caller: Any) -> None:
    caller: Caller = new_caller("chunked")
    with raw_request(server, "/v1/turns", {**auth(caller), "Transfer-Encoding": "chunked"}) as sock:
        sent = send_until_answered(sock, FLOOD)
        status, headers, body = response_of(sock)
    assert (status, body["error"]["code"]) == (413, "body_too_large"), body
    assert str(MAX_BODY_BYTES) in body["error"]["message"]
    assert headers.get("connection") == "close"
    assert sent < FLOOD, "the server read the whole body before answering"
    assert recorded_turns(caller) == []


def test_chunked_with_a_lying_content_length_is_refused_before_its_body(server: ApiServer, new_caller: Any) -> None:
    caller: Caller = new_caller("lying")
    headers = {**auth(caller), "Transfer-Encoding": "chunked", "Content-Length": "10"}
    with raw_request(server, "/v1/turns", headers) as sock:
        send_chunk(sock, _turn_prefix())
        status, _, body = response_of(sock)
    assert (status, body["error"]["code"]) == (400, "bad_request"), body
    assert recorded_turns(caller) == []


def test_a_declared_content_length_over_the_limit_is_refused_without_sending_it(
    server: ApiServer, new_caller: Any
) -> None:
    caller: Caller = new_caller("declared")
    headers = {**auth(caller), "Content-Length": str(100 * MAX_BODY_BYTES)}
    with raw_request(server, "/v1/turns", headers) as sock:
        status, _, body = response_of(sock)
    assert (status, body["error"]["code"]) == (413, "body_too_large"), body


@pytest.mark.parametrize("key", [None, "mlk_not-a-key"], ids=["no key", "unknown key"])
def test_a_body_without_a_valid_key_gets_401_before_it_is_sent(server: ApiServer, key: str | None) -> None:
    headers = {"Content-Type": "application/json", "Transfer-Encoding": "chunked"}
    if key is not None:
        headers["X-API-Key"] = key
    with raw_request(server, "/v1/turns", headers) as sock:
        send_chunk(sock, _turn_prefix())  # the first chunk only: the rest never comes
        status, headers_back, body = response_of(sock)
    assert (status, body["error"]["code"]) == (401, "unauthorized"), body
    assert headers_back.get("connection") == "close"


def test_a_chunked_body_within_the_limit_is_accepted(server: ApiServer, new_caller: Any) -> None:
    caller: Caller = new_caller("small")
    with raw_request(server, "/v1/turns", {**auth(caller), "Transfer-Encoding": "chunked"}) as sock:
        send_chunk(sock, _turn_prefix())
        send_chunk(sock, b"Project Wren uses Redis." + b'", "turn_id": "w-1"}')
        sock.sendall(b"0\r\n\r\n")
        status, _, body = response_of(sock)
    assert status == 202, body
    assert [e["payload"]["turn_id"] for e in recorded_turns(caller)] == ["w-1"]


# -- memory: peak RSS above idle stays under twice the limit ---------------------------------------


def _status_kb(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} in /proc/{pid}/status")


@pytest.fixture(scope="module")
def big_server(surfaces: Surfaces) -> Iterator[ApiServer]:
    """A server with the default 2 MB limit, so the memory bound is far above noise."""
    server = start_server({**surfaces.env, "MEMLEDGER_MAX_REQUEST_BYTES": str(RSS_LIMIT)}, "--no-workers")
    try:
        wait_until_serving(server)
        yield server
    finally:
        stop_server(server)


@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="needs Linux's /proc peak RSS")
def test_a_huge_body_never_raises_the_servers_peak_rss_past_twice_the_limit(
    big_server: ApiServer, surfaces: Surfaces
) -> None:
    tenant = f"rss-{uuid.uuid4().hex[:8]}"
    _, key = surfaces.ledger.create_key(tenant, label="e2e")
    pid = big_server.process.pid
    attempts = {"no key": {"Content-Type": "application/json"}, "a key": {"Authorization": f"Bearer {key}"}}
    for name, headers in attempts.items():
        idle_kb = _status_kb(pid, "VmRSS")
        Path(f"/proc/{pid}/clear_refs").write_text("5")  # peak RSS := current RSS
        started = time.monotonic()
        with raw_request(big_server, "/v1/turns", {**headers, "Transfer-Encoding": "chunked"}) as sock:
            sent = send_until_answered(sock, 100 * RSS_LIMIT)
            status, _, _ = response_of(sock)
        assert status == (401 if name == "no key" else 413), name
        assert sent < 100 * RSS_LIMIT, f"{name}: the server read all of a 200 MB body"
        assert time.monotonic() - started < 10, name
        grown = (_status_kb(pid, "VmHWM") - idle_kb) * 1024
        assert grown <= 2 * RSS_LIMIT, f"{name}: peak RSS grew by {grown} bytes"
