"""Fixtures for the surfaces (HTTP API, MCP, CLI), used as a client would use them.

The surfaces get a database of their own on the session's PostgreSQL server, so
the turns these tests (and the fuzzer) record never reach another module's
extraction or projections. ``memledger serve`` runs as a real subprocess on a
free loopback port; the first API key comes from ``memledger keys create --json``.
Extraction and projection are done in this process, on demand (``catch_up``), so
every test decides when memory learns; the server runs no workers.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import httpx
import pytest
import sqlalchemy as sa
from sqlalchemy.engine import URL

from memledger import bootstrap
from memledger.config import Settings
from memledger.events.catalogue import Scopes
from memledger.library import MemoryLedger
from memledger.selection.types import Selection
from memledger.service import context
from memledger.store import embedded_server

if TYPE_CHECKING:
    from tests.conftest import TestDatabase

CLI = [sys.executable, "-m", "memledger.cli.main"]
MAX_BODY_BYTES = 64 * 1024  # the server's request limit here, so a 413 costs little to provoke
START_TIMEOUT_S = 120.0


def run_cli(env: dict[str, str], *args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    """``memledger ARGS`` as a subprocess, to completion."""
    return subprocess.run([*CLI, *args], env=env, capture_output=True, text=True, timeout=timeout, check=False)


Done = subprocess.CompletedProcess[str]
Step = tuple[str, list[str] | Callable[[dict[str, Done]], list[str]]]


def run_cli_chains(env: dict[str, str], chains: list[list[Step]], timeout: float = 300) -> dict[str, Done]:
    """Chains of ``memledger`` commands, by name: each chain in order, the chains at once.
    Starting Python and importing memledger costs seconds, so independent commands
    overlap. A step's arguments may be a function of the results so far (its chain's
    earlier steps have finished). Their selections have the tests' generous deadline
    (``tests/conftest.py``): a CLI process selects once, cold."""
    done: dict[str, Done] = {}

    def run_chain(chain: list[Step]) -> None:
        for name, args in chain:
            done[name] = run_cli(env, *(args(done) if callable(args) else args), timeout=timeout)

    threads = [threading.Thread(target=run_chain, args=(chain,)) for chain in chains]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    missing = [name for chain in chains for name, _ in chain if name not in done]
    assert not missing, f"commands that never ran (see the chain's exception above): {missing}"
    return done


def issue_key_with_cli(env: dict[str, str], tenant: str) -> dict[str, Any]:
    """``memledger keys create --tenant T --json``, parsed."""
    result = run_cli(env, "keys", "create", "--tenant", tenant, "--json")
    assert result.returncode == 0, result.stderr
    issued: dict[str, Any] = json.loads(result.stdout)
    return issued


@dataclass(frozen=True)
class Surfaces:
    """The surfaces' database, the environment for subprocesses that use it, and a
    library handle on it for seeding and for extraction and projection."""

    url: URL
    env: dict[str, str]
    ledger: MemoryLedger

    def catch_up(self) -> int:
        """Extract every pending turn and bring every read model up to date."""
        return self.ledger.process()


def _drop(server_url: URL, name: str) -> None:
    admin = sa.create_engine(server_url.set(database="postgres"), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        quoted = admin.dialect.identifier_preparer.quote(name)
        # text(): DDL on a database name, quoted above.
        conn.execute(sa.text(f"DROP DATABASE IF EXISTS {quoted} WITH (FORCE)"))
    admin.dispose()


def scratch_ledger(database: TestDatabase, prefix: str) -> tuple[MemoryLedger, Callable[[], None]]:
    """A migrated database of its own (for a test that would break a shared one) and
    the function that drops it."""
    url = database.new_database(prefix)
    ledger = MemoryLedger.open(Settings(DATABASE_URL=url.render_as_string(hide_password=False)))

    def drop() -> None:
        ledger.close()
        _drop(database.server_url, str(url.database))

    return ledger, drop


@contextmanager
def scratch(database: TestDatabase, prefix: str) -> Iterator[MemoryLedger]:
    """``scratch_ledger`` as a context: the ledger, its database dropped after."""
    ledger, drop = scratch_ledger(database, prefix)
    try:
        yield ledger
    finally:
        drop()


@pytest.fixture(scope="session")
def surfaces(database: TestDatabase) -> Iterator[Surfaces]:
    """A fresh, migrated database for the surfaces' tests; dropped afterwards."""
    ledger, drop = scratch_ledger(database, "surfaces")
    env = {**database.env, "DATABASE_URL": ledger.database.url.render_as_string(hide_password=False)}
    try:
        yield Surfaces(url=ledger.database.url, env=env, ledger=ledger)
    finally:
        drop()


def free_port() -> int:
    """A loopback port nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass
class ApiServer:
    """``memledger serve`` running as a subprocess; its log goes to a file."""

    base_url: str
    process: subprocess.Popen[bytes]
    log: IO[bytes]
    clients: list[httpx.Client] = field(default_factory=list)

    def client(self, key: str | None = None, *, header: str = "bearer") -> httpx.Client:
        """An HTTP client of the server, authenticated with ``key`` if given."""
        headers = {}
        if key is not None:
            headers = {"Authorization": f"Bearer {key}"} if header == "bearer" else {"X-API-Key": key}
        client = httpx.Client(base_url=self.base_url, headers=headers, timeout=60.0)
        self.clients.append(client)
        return client

    def log_text(self) -> str:
        """What the server has logged so far."""
        return Path(self.log.name).read_text(errors="replace")


def start_server(env: dict[str, str], *extra: str) -> ApiServer:
    """Start ``memledger serve`` on a free loopback port (not waiting for it)."""
    port = free_port()
    log = tempfile.NamedTemporaryFile(prefix="memledger-serve-", suffix=".log")  # noqa: SIM115 - closed at stop
    process = subprocess.Popen(
        [*CLI, "serve", "--host", "127.0.0.1", "--port", str(port), *extra],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    return ApiServer(base_url=f"http://127.0.0.1:{port}", process=process, log=log)


def wait_until_serving(server: ApiServer, timeout: float = START_TIMEOUT_S) -> None:
    """Poll /health until the server answers (any status), or fail with its log."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            pytest.fail(f"memledger serve exited with {server.process.returncode}:\n{server.log_text()}")
        try:
            httpx.get(f"{server.base_url}/health", timeout=10)
        except httpx.TransportError:
            time.sleep(0.2)
            continue
        return
    pytest.fail(f"memledger serve did not answer within {timeout:.0f} s:\n{server.log_text()}")


def warm_up(server: ApiServer, key: str) -> None:
    """One context request, so the first test's does not pay for loading the embedding
    model and compiling the selection's statements inside selection's deadline."""
    served = server.client(key).get("/v1/memory/context", params={"request": "warming up"})
    assert served.status_code == 200, served.text


def stop_server(server: ApiServer) -> None:
    """Interrupt the server (as Ctrl-C would), then wait for it to exit."""
    for client in server.clients:
        client.close()
    server.process.send_signal(2)  # SIGINT: uvicorn shuts down gracefully
    try:
        server.process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        server.process.kill()
        server.process.wait(timeout=10)
    server.log.close()


@dataclass(frozen=True)
class CliKey:
    """A key issued by ``memledger keys create --json``."""

    tenant: str
    key_id: str
    key: str


@pytest.fixture(scope="session")
def api_server(surfaces: Surfaces) -> Iterator[tuple[ApiServer, CliKey]]:
    """The HTTP API as a subprocess, with a key issued by the CLI meanwhile."""
    # no workers: the tests extract and project when they choose (catch_up)
    server = start_server({**surfaces.env, "MEMLEDGER_MAX_REQUEST_BYTES": str(MAX_BODY_BYTES)}, "--no-workers")
    try:
        tenant = f"cli-{uuid.uuid4().hex[:8]}"
        issued = issue_key_with_cli(surfaces.env, tenant)  # while the server starts
        wait_until_serving(server)
        warm_up(server, issued["key"])
        yield server, CliKey(tenant=issued["tenant_id"], key_id=issued["key_id"], key=issued["key"])
    finally:
        stop_server(server)


@pytest.fixture(scope="session")
def server(api_server: tuple[ApiServer, CliKey]) -> ApiServer:
    """The running HTTP API."""
    return api_server[0]


@dataclass(frozen=True)
class Caller:
    """A tenant, its API key and an HTTP client authenticated with it."""

    tenant: str
    key: str
    http: httpx.Client


@pytest.fixture(scope="session")
def new_caller(server: ApiServer, surfaces: Surfaces) -> Callable[[str], Caller]:
    """Make a fresh tenant with a key (issued in-process: the CLI path has its own tests)."""

    def make(prefix: str) -> Caller:
        tenant = f"{prefix}-{uuid.uuid4().hex[:8]}"
        _, key = surfaces.ledger.create_key(tenant, label="e2e")
        return Caller(tenant=tenant, key=key, http=server.client(key))

    return make


# What a user said of project Phoenix, for the selection tests (said by ``said``).
PHOENIX_TURNS = (
    "Project Phoenix uses PostgreSQL.",
    "The Phoenix billing service runs on Kubernetes.",
    "Phoenix must not use MongoDB.",
    "I prefer dark roast coffee in the morning.",
    "We decided to deploy Phoenix every Friday.",
    "The Phoenix API answers within 200 ms.",
)


@contextmanager
def said(
    database: TestDatabase, prefix: str, texts: Sequence[str], scopes: Scopes
) -> Iterator[tuple[MemoryLedger, str]]:
    """A scratch ledger with a new tenant whose user said ``texts`` in ``scopes``,
    extracted and projected: the ledger and the tenant."""
    with scratch(database, prefix) as library:
        tenant = f"t-{uuid.uuid4().hex[:8]}"
        for text in texts:
            library.record_turn(tenant, "user", text, scopes=scopes)
        library.process()
        yield library, tenant


COMPARING_DEADLINE_MS = 10_000


def select_with_vectors(
    library: MemoryLedger, engine: sa.Engine, tenant: str, scopes: Scopes, request: str
) -> Selection:
    """``context.select`` with the ledger's vector channel, its model loaded first (so
    the channel is never skipped while it loads), and a deadline a busy test machine
    cannot reach: these tests compare what is chosen, not how fast. Its limit on
    selections at once is the ledger's, as ``MemoryLedger.select``'s."""
    app = library.database
    channel = bootstrap.vector_search(app)
    getattr(channel.embedder, "load", lambda: None)()
    select = context.SelectRequest(tenant, scopes, request, deadline_ms=COMPARING_DEADLINE_MS)
    return context.select(engine, select, vector_search=channel, aging=app.aging, limit=app.selections)


@pytest.fixture
def embedded_home(tmp_path: Path) -> Iterator[dict[str, str]]:
    """An environment with no DATABASE_URL and a scratch MEMLEDGER_HOME (not the session's
    server); its embedded server is stopped and its data deleted afterwards."""
    env = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
    env["MEMLEDGER_HOME"] = str(tmp_path / "home")
    try:
        yield env
    finally:
        embedded_server.stop_embedded(tmp_path / "home" / "pgdata")
        shutil.rmtree(tmp_path / "home", ignore_errors=True)
