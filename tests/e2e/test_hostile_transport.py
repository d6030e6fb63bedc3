"""A hostile client over HTTP (issue 26): framings that lie, bodies that stall, bodies
that cannot be parsed, and generated malformed requests, against a real ``memledger
serve`` with a small body limit, spoken to over raw sockets where the attack is in the
framing. Whatever comes, the server never answers 5xx, always answers in the
documented error shape (``{"error": {"code", "message"[, "field"]}}``), stores
nothing it refused, keeps serving, and its peak RSS under one request grows by at
most twice the body limit.
"""

from __future__ import annotations

import http.client
import json
import socket
import time
import uuid
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from hypothesis import HealthCheck, Phase, event, given, settings
from hypothesis import strategies as st

from memledger.api.intake import BODY_TIMEOUT_S
from memledger.service.keys import KEYS_STREAM
from tests.e2e.conftest import ApiServer, Surfaces, start_server, stop_server, wait_until_serving

LIMIT = 256 * 1024  # the server's MEMLEDGER_MAX_REQUEST_BYTES here
CHUNK = 16 * 1024
TURN = b'{"role": "user", "scopes": {"project": "p", "session": "s1", "user": "u"}, "text": "'


@pytest.fixture(scope="module")
def hostile_server(surfaces: Surfaces) -> Iterator[ApiServer]:
    server = start_server({**surfaces.env, "MEMLEDGER_MAX_REQUEST_BYTES": str(LIMIT)}, "--no-workers")
    try:
        wait_until_serving(server)
        yield server
    finally:
        stop_server(server)


class Tenant:
    """A fresh tenant with a key, and what it has stored."""

    def __init__(self, server: ApiServer, surfaces: Surfaces) -> None:
        self.tenant = f"hostile-{uuid.uuid4().hex[:8]}"
        _, self.key = surfaces.ledger.create_key(self.tenant, label="hostile")
        self.http = server.client(self.key)

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}", "Content-Type": "application/json"}

    def stored(self) -> list[dict[str, Any]]:
        """Every event of the tenant but its key's, read through the API."""
        page = self.http.get("/v1/events", params={"limit": 1000})
        assert page.status_code == 200, page.text
        return [e for e in page.json()["events"] if e["stream_id"] != KEYS_STREAM]


@pytest.fixture
def tenant(hostile_server: ApiServer, surfaces: Surfaces) -> Tenant:
    return Tenant(hostile_server, surfaces)


# -- raw sockets -----------------------------------------------------------------------------------


@contextmanager
def raw(server: ApiServer, head: str, headers: dict[str, str], timeout: float = 30) -> Iterator[socket.socket]:
    """A socket that has sent ``head`` (``POST /v1/turns``) and ``headers``, no body yet."""
    where = urlsplit(server.base_url)
    sock = socket.create_connection((str(where.hostname), int(where.port or 80)), timeout=timeout)
    with closing(sock):
        lines = [f"{head} HTTP/1.1", f"Host: {where.netloc}", *(f"{k}: {v}" for k, v in headers.items())]
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        yield sock


def chunk(sock: socket.socket, data: bytes) -> None:
    sock.sendall(b"%x\r\n%s\r\n" % (len(data), data))


def answer(sock: socket.socket) -> tuple[int, dict[str, Any]]:
    """The status and the JSON error body the server wrote, checked for the documented shape."""
    response = http.client.HTTPResponse(sock)
    response.begin()
    body = json.loads(response.read())
    return response.status, error_shape(response.status, body)


def error_shape(status: int, body: Any) -> dict[str, Any]:
    """``body``'s error, asserted to be in the documented shape, for a 4xx."""
    assert 400 <= status < 500, (status, body)
    assert isinstance(body, dict) and set(body) == {"error"}, body
    error: dict[str, Any] = body["error"]
    assert isinstance(error.get("code"), str) and error["code"], error
    assert isinstance(error.get("message"), str) and error["message"].strip(), error
    assert set(error) <= {"code", "message", "field"}, error
    return error


def still_serving(server: ApiServer, tenant: Tenant) -> None:
    """The server still answers a tenant's read and /health. /health may say 503: the
    other surfaces tests leave projections behind on purpose (this server runs no
    workers), and a lag past a minute is "unavailable" by design."""
    assert tenant.http.get("/v1/events", params={"limit": 1}).status_code == 200
    health = httpx.get(f"{server.base_url}/health", timeout=10)
    assert (health.status_code, health.json()) in [(200, {"status": "ok"}), (503, {"status": "unavailable"})]


def test_a_chunked_body_over_the_limit_is_refused_as_it_streams(hostile_server: ApiServer, tenant: Tenant) -> None:
    with raw(hostile_server, "POST /v1/turns", {**tenant.auth, "Transfer-Encoding": "chunked"}) as sock:
        sent = 0
        try:
            chunk(sock, TURN)
            while sent < 40 * LIMIT:
                chunk(sock, b"y" * CHUNK)
                sent += CHUNK
        except (BrokenPipeError, ConnectionResetError):
            pass
        status, error = answer(sock)
    assert (status, error["code"]) == (413, "body_too_large"), error
    assert sent < 40 * LIMIT
    assert tenant.stored() == []


def test_chunked_with_a_lying_small_content_length_is_refused(hostile_server: ApiServer, tenant: Tenant) -> None:
    headers = {**tenant.auth, "Transfer-Encoding": "chunked", "Content-Length": "5"}
    with raw(hostile_server, "POST /v1/turns", headers) as sock:
        try:
            chunk(sock, TURN + b'hello"}')
            sock.sendall(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server may refuse on the headers alone and close before the body is sent
        status, error = answer(sock)
    assert (status, error["code"]) == (400, "bad_request"), error
    assert tenant.stored() == []


def test_a_body_shorter_than_its_content_length_then_closed_stores_nothing(
    hostile_server: ApiServer, tenant: Tenant
) -> None:
    whole = TURN + b'Project Lark uses Redis."}'
    with raw(hostile_server, "POST /v1/turns", {**tenant.auth, "Content-Length": str(len(whole) + 500)}) as sock:
        sock.sendall(whole)
        sock.shutdown(socket.SHUT_WR)  # the rest never comes
        sock.settimeout(BODY_TIMEOUT_S + 10)
        data = b"".join(iter(lambda: sock.recv(65536), b""))  # whatever it says, until it closes
    assert not data.startswith(b"HTTP/1.1 5"), data
    assert tenant.stored() == []
    still_serving(hostile_server, tenant)


def test_a_stalled_body_gets_an_answer_not_a_hung_connection(hostile_server: ApiServer, tenant: Tenant) -> None:
    started = time.monotonic()
    with raw(hostile_server, "POST /v1/turns", {**tenant.auth, "Content-Length": "4000"}, BODY_TIMEOUT_S + 15) as sock:
        for byte in TURN[:6]:  # trickled, then nothing more
            sock.sendall(bytes([byte]))
            time.sleep(0.3)
        status, error = answer(sock)
    assert (status, error["code"]) == (408, "request_timeout"), error
    assert time.monotonic() - started < BODY_TIMEOUT_S + 10
    assert tenant.stored() == []
    still_serving(hostile_server, tenant)


@pytest.mark.parametrize("path", ["/v1/turns", "/v1/nothing/here", "/v1/memory/promote"])
def test_a_body_without_a_key_is_refused_before_it_is_read(hostile_server: ApiServer, path: str) -> None:
    with raw(
        hostile_server, f"POST {path}", {"Content-Type": "application/json", "Content-Length": str(LIMIT)}
    ) as sock:
        sock.sendall(TURN)  # the rest never comes: the answer must not wait for it
        status, error = answer(sock)
    assert (status, error["code"]) == (401, "unauthorized"), error


UNPARSABLE = {
    "invalid UTF-8": TURN + b'caf\xe9 \xff\xfe"}',
    "JSON nested 5,000 deep": b'{"role": "user", "text": ' + b"[" * 5000 + b"]" * 5000 + b"}",
    "an integer of 5,000 digits": b'{"role": "user", "text": "x", "turn_id": ' + b"7" * 5000 + b"}",
    "a float of 5,000 digits": b'{"request": "x", "budget": 1' + b"0" * 5000 + b".5}",
}


@pytest.mark.parametrize("name", list(UNPARSABLE))
def test_an_unparsable_body_is_an_invalid_request_never_a_500(
    hostile_server: ApiServer, tenant: Tenant, name: str
) -> None:
    body = UNPARSABLE[name]
    with raw(hostile_server, "POST /v1/turns", {**tenant.auth, "Content-Length": str(len(body))}) as sock:
        sock.sendall(body)
        status, error = answer(sock)
    assert status == 422 and error["code"] == "invalid_request", error
    assert tenant.stored() == []


# -- generated malformed requests ------------------------------------------------------------------


def mostly(usual: st.SearchStrategy[Any], odd: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """``usual`` three times in four, else ``odd``: requests wrong in one place, not all."""
    return st.one_of(usual, usual, usual, odd)


HOSTILE_TEXT = st.text(alphabet=st.characters(codec="utf-8") | st.sampled_from("\x00\ud800\udfff\u202e"), max_size=40)
TEXT = mostly(st.text(st.characters(codec="utf-8", exclude_categories=["Cc"]), max_size=40), HOSTILE_TEXT)
SCALAR = st.none() | st.booleans() | st.integers() | st.floats() | TEXT
JSONISH = st.recursive(
    SCALAR, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4), max_leaves=12
)
TIME = st.sampled_from(["2026-11-21T10:42:00", "2026-11-21T10:42:00+00:00", "0001-01-01T00:00:00+14:00", "yesterday"])


def turn_like(draw: st.DrawFn) -> dict[str, Any]:
    """A turn with each field present, absent or wrong."""
    required = {
        "role": mostly(st.sampled_from(["user", "assistant"]), st.sampled_from(["bot", ""]) | JSONISH),
        "text": mostly(TEXT.filter(str.strip), JSONISH),
    }
    fields: dict[str, st.SearchStrategy[Any]] = {
        "scopes": st.fixed_dictionaries(
            {}, optional={k: mostly(TEXT, JSONISH) for k in ("session", "project", "user")}
        ),
        "turn_id": TEXT,
        "occurred_at": mostly(TIME, JSONISH),
        "subject": TEXT,
        "speaker": TEXT,
        "bogus": JSONISH,
    }
    return draw(st.fixed_dictionaries(required, optional=fields))


@st.composite
def turns_body(draw: st.DrawFn) -> Any:
    if draw(st.booleans()):
        return turn_like(draw)
    return {"turns": [turn_like(draw) for _ in range(draw(st.integers(0, 4)))]}


@st.composite
def promote_body(draw: st.DrawFn) -> Any:
    required = {
        "kind": mostly(st.sampled_from(["decision", "preference"]), st.just("nonsense")),
        "scope": mostly(st.just("project"), st.sampled_from(["user", "galaxy"])),
        "scopes": st.fixed_dictionaries({"project": mostly(st.just("p"), TEXT)}, optional={"user": TEXT}),
    }
    fields: dict[str, st.SearchStrategy[Any]] = {
        "memory_id": TEXT,
        "statement": TEXT | st.sampled_from(["The API key is sk-proj-AbCdEfGhIjKlMnOpQrStUv", "x" * 2001]),
        "key": TEXT,
    }
    return draw(st.fixed_dictionaries(required, optional=fields))


def mangled(draw: st.DrawFn, body: Any) -> bytes:
    """``body`` as JSON, or that JSON truncated, spliced with junk, or junk alone."""
    encoded = json.dumps(body).encode()  # \\u escapes for NUL and lone surrogates
    how = draw(st.sampled_from(["as is", "as is", "as is", "truncated", "spliced", "junk"]))
    if how == "truncated":
        return encoded[: draw(st.integers(0, max(len(encoded) - 1, 0)))]
    if how == "spliced":
        at = draw(st.integers(0, len(encoded)))
        return encoded[:at] + draw(st.binary(max_size=12)) + encoded[at:]
    if how == "junk":
        return draw(st.binary(max_size=64))
    return encoded


CONTENT_TYPES = mostly(
    st.just("application/json"),
    st.sampled_from([None, "application/json; charset=latin-1", "text/plain", "application/x-www-form-urlencoded"]),
)


@st.composite
def hostile_request(draw: st.DrawFn) -> tuple[str, str, dict[str, Any], dict[str, str]]:
    """A method, path, httpx arguments and extra headers for one of four endpoints."""
    headers: dict[str, str] = {}
    if (content_type := draw(CONTENT_TYPES)) is not None:
        headers["Content-Type"] = content_type
    endpoint = draw(st.sampled_from(["turns", "promote", "context", "search"]))
    if endpoint in {"turns", "promote"}:
        body = draw(turns_body() if endpoint == "turns" else promote_body())
        path = "/v1/turns" if endpoint == "turns" else "/v1/memory/promote"
        return "POST", path, {"content": mangled(draw, body)}, headers
    names = {"context": ["request", "budget", "as_of", "style", "project"], "search": ["q", "k", "kind", "user"]}
    asked = {names[endpoint][0]: mostly(TEXT.filter(str.strip), TEXT)}
    params = draw(st.fixed_dictionaries(asked, optional=dict.fromkeys(names[endpoint][1:], TEXT)))
    path = "/v1/memory/context" if endpoint == "context" else "/v1/search"
    content = draw(mostly(st.just(b""), st.binary(max_size=16)))  # a GET with a body, now and then
    return "GET", path, {"params": httpx.QueryParams(params_of(params)), "content": content}, headers


def params_of(params: dict[str, str]) -> dict[str, str]:
    """Query parameters httpx can encode (a lone surrogate becomes U+FFFD)."""
    return {k: v.encode("utf-8", "surrogatepass").decode("utf-8", "replace") for k, v in params.items()}


@settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(request=hostile_request())
def test_a_malformed_request_is_a_4xx_in_the_error_shape_and_stores_nothing(
    tenant: Tenant, request: tuple[str, str, dict[str, Any], dict[str, str]]
) -> None:
    method, path, kwargs, headers = request
    before = tenant.stored()
    response = tenant.http.request(method, path, headers=headers, **kwargs)
    event(f"{path} {response.status_code}")
    assert response.status_code < 500, (method, path, kwargs, response.text)
    if response.status_code >= 400:
        assert response.headers["content-type"].startswith("application/json"), response.text
        error_shape(response.status_code, response.json())
        assert tenant.stored() == before, (method, path, kwargs, response.text)


# -- memory ----------------------------------------------------------------------------------------


def _status_kb(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} in /proc/{pid}/status")


@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="needs Linux's /proc peak RSS")
@pytest.mark.parametrize("size", [LIMIT - 64, 4 * LIMIT], ids=["at the limit", "over the limit"])
def test_one_request_raises_peak_rss_by_at_most_twice_the_body_limit(
    hostile_server: ApiServer, tenant: Tenant, size: int
) -> None:
    pid = hostile_server.process.pid
    text = b"Wren " * ((size - len(TURN) - 2) // 5)
    body = TURN + text + b'"}'
    tenant.http.post("/v1/turns", content=TURN + b'warm"}', headers=tenant.auth)  # the path's code is loaded
    idle_kb = _status_kb(pid, "VmRSS")
    Path(f"/proc/{pid}/clear_refs").write_text("5")  # peak RSS := current RSS
    response = tenant.http.post("/v1/turns", content=body, headers=tenant.auth)
    assert response.status_code in {202, 413, 422}, response.text
    grown = (_status_kb(pid, "VmHWM") - idle_kb) * 1024
    assert grown <= 2 * LIMIT, f"a {len(body)}-byte request grew peak RSS by {grown} bytes"
