"""Soak the HTTP API: minutes of mixed traffic, then prove nothing was lost, doubled or bent.

    .venv/bin/python scripts/soak.py [--quick | --minutes N] [--clients 16] [--tenants 50] [--rebuild facts]

1. Database: a fresh one (``memledger_soak_<random>``) on ``DATABASE_URL``'s server if set, else on
   an embedded server of this run alone (as ``scripts/bench_api.py``); dropped at the end.
2. Tenants: ``--tenants`` (50), one API key each (the library's ``create_key``). What they say is
   the turns of ``tests.support.workload`` (realistic chat: facts, entities, relationships, small talk),
   with its roles, scopes and subjects.
3. Server: ``memledger serve --workers``: the HTTP API, and in its background threads the
   projectors, the hash-chain sealer and the extraction worker (heuristic), so facts appear.
4. Traffic: ``--clients`` (16) asyncio tasks for ``--minutes`` (10; 1 with ``--quick``). Each
   picks a tenant at random, then one of: turns (35%: POST /v1/turns, 1-4 turns whose ids are
   chosen here; a transport error or 5xx is retried with the same ids; one batch in 20 is sent a
   second time, as after a lost answer, and must come back ``replayed`` at the same positions),
   context (35%), search (20%), retract (7%: a fact, entity or relationship id from an earlier
   search of that tenant), restore (3%: one it retracted); then waits ``--think`` seconds.
   Halfway, ``memledger projections rebuild <--rebuild>`` runs as its own process while the
   traffic goes on. Every 5 s the server process's RSS, threads and open files are sampled,
   and the age of the oldest transaction holding an xid with the turns committed behind it
   (gap-safe readers cannot see them yet); every 15 s /health (extraction backlog, lags).
5. Then: wait until the worker's backlog and every projection's lag are 0 (the drain time),
   stop the server, and check:
   a. exactly once: every acknowledged turn is in the events table once, under its tenant; no
      turn of the run is there twice; an unacknowledged one at most once;
   b. ``memledger projections verify all --json``: every read model equals a scratch rebuild;
   c. ``memledger verify --json``: every tenant's hash chain;
   d. memory flat: the least-squares slope of the server's RSS over the last part of the
      traffic (the last half, at most 5 minutes) is at most ``--max-slope`` MB/min (not
      judged when that window is under 2 minutes, as with ``--quick``);
   e. no request failed (context blocks that failed open are counted, not failures) and the
      server logged no traceback.

The last line printed is one JSON object with every figure; the exit status is 1 if a check failed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter, deque
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import msgspec
import sqlalchemy as sa
from sqlalchemy.engine import URL

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.support.workload: the workload generator

from tests.support import workload  # noqa: E402

from memledger import bootstrap  # noqa: E402
from memledger.config import Settings  # noqa: E402
from memledger.events.catalogue import TurnRecorded  # noqa: E402
from memledger.library import MemoryLedger  # noqa: E402
from memledger.store import db, embedded_server  # noqa: E402
from memledger.store.schema import events  # noqa: E402

CLI = [sys.executable, "-m", "memledger.cli.main"]
OPS = ("turns", "context", "search", "retract", "restore")
# A change answers 200 once the next context shows it, 202 if its read model lagged.
EXPECTED = {"turns": frozenset({202}), "retract": frozenset({200, 202}), "restore": frozenset({200, 202})}
WEIGHTS = (35, 35, 20, 7, 3)
TURNS_PER_REQUEST = (1, 4)
TOPICS = ["database", "deploy day", "editor", "frontend framework", "packages", "tests", "dashboards", "coffee"]
SAMPLE_S = 5.0
HEALTH_EVERY = 3  # samples
RESEND_ONE_IN = 20
MIN_SLOPE_WINDOW_S = 120.0  # a shorter window says nothing about a leak: not judged
FAILED_OPEN = "memory unavailable"


def log(message: str) -> None:
    print(f"  ({message})", file=sys.stderr, flush=True)


def quantile_ms(samples: list[float], q: float) -> float:
    if not samples:
        return float("nan")
    ordered = sorted(samples)
    return 1000.0 * ordered[min(len(ordered) - 1, int(q * len(ordered)))]


# -- the database and the server ------------------------------------------------------------------


@contextmanager
def soak_database() -> Iterator[URL]:
    """A fresh database: on DATABASE_URL's server if set, else on an embedded server of
    this run alone; dropped (or the server deleted) at the end."""
    if Settings().database_url:
        server, _ = bootstrap.server_url(Settings())
        name = f"memledger_soak_{uuid.uuid4().hex[:12]}"
        url = db.ensure_database(server, name)
        try:
            yield url
        finally:
            db.drop_database(server, name)
        return
    pgdata = Path(tempfile.mkdtemp(prefix="memledger-soak-")) / "pgdata"
    server, stop = embedded_server.start_temporary(pgdata)
    try:
        yield db.ensure_database(server, "memledger_soak")
    finally:
        stop()
        shutil.rmtree(pgdata.parent, ignore_errors=True)


# The server's operator key, for /health's details (backlog and lags): public /health says up or down.
OPERATOR_KEY = secrets.token_urlsafe(24)


def env_for(url: URL) -> dict[str, str]:
    return {
        **os.environ,
        "DATABASE_URL": url.render_as_string(hide_password=False),
        "MEMLEDGER_OPERATOR_KEY": OPERATOR_KEY,
    }


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass
class Server:
    base: str
    process: subprocess.Popen[bytes]
    log_path: Path

    def stop(self) -> None:
        self.process.send_signal(2)  # SIGINT: uvicorn shuts down, then the background threads
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace")


def start_server(url: URL, log_dir: Path) -> Server:
    """``memledger serve --workers`` on a free loopback port, answering /health."""
    port = free_port()
    log_path = log_dir / "serve.log"
    with log_path.open("wb") as out:
        process = subprocess.Popen(
            [*CLI, "serve", "--workers", "--host", "127.0.0.1", "--port", str(port)],
            env=env_for(url),
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    server = Server(f"http://127.0.0.1:{port}", process, log_path)
    deadline = time.monotonic() + 180
    while True:
        if process.poll() is not None or time.monotonic() > deadline:
            server.stop()
            raise RuntimeError(f"memledger serve did not start:\n{server.log_text()}")
        try:
            httpx.get(f"{server.base}/health", timeout=10)
            return server
        except httpx.TransportError:
            time.sleep(0.3)


# -- tenants and what they say ---------------------------------------------------------------------


@dataclass(frozen=True)
class Tenant:
    name: str
    key: str
    turns: list[dict[str, Any]]  # role, text, scopes, subject: the bodies of its turns, in order

    def scopes(self, rng: random.Random) -> dict[str, str]:
        chosen: dict[str, str] = rng.choice(self.turns)["scopes"]
        return {k: v for k, v in chosen.items() if k in ("session", "project", "user") and v}


def make_tenants(url: URL, count: int, turns_each: int) -> list[Tenant]:
    """``count`` tenants with a key each, and the workload's turns of each."""
    start = datetime(2025, 1, 6, tzinfo=UTC)
    said: dict[str, list[dict[str, Any]]] = {}
    for append in workload.generate(seed=17, tenants=count, turns=turns_each, start=start):
        for new in append.events:
            if isinstance(new.event, TurnRecorded):
                turn = new.event
                scopes = {k: v for k, v in msgspec.to_builtins(turn.scopes).items() if v}
                body = {"role": turn.role, "text": turn.text, "scopes": scopes, "subject": turn.subject}
                said.setdefault(append.tenant_id, []).append(body)
    ledger = MemoryLedger.open(Settings(DATABASE_URL=url.render_as_string(hide_password=False)))
    try:
        return [
            Tenant(f"soak-t{i:02}", ledger.create_key(f"soak-t{i:02}", label="soak")[1], said[source])
            for i, source in enumerate(sorted(said))
        ]
    finally:
        ledger.close()


# -- traffic ---------------------------------------------------------------------------------------


@dataclass
class OpStats:
    """One kind of request: latency of each (s) and the count of each status seen."""

    expected: frozenset[int]
    latencies: list[float] = field(default_factory=list)
    statuses: Counter[str] = field(default_factory=Counter)

    @property
    def failures(self) -> int:
        return sum(n for status, n in self.statuses.items() if status not in {str(e) for e in self.expected})


@dataclass(frozen=True)
class Sample:
    seconds: float  # since the traffic started
    phase: str  # warm, traffic, drain
    rss_mb: float
    threads: int
    fds: int


@dataclass
class Traffic:
    """What the clients did and saw, and what the monitor sampled."""

    run: str
    tenants: list[Tenant]
    think: float
    stats: dict[str, OpStats] = field(
        default_factory=lambda: {op: OpStats(EXPECTED.get(op, frozenset({200}))) for op in OPS}
    )
    acked: dict[str, str] = field(default_factory=dict)  # turn id -> tenant
    unacked: dict[str, str] = field(default_factory=dict)
    next_turn: Counter[str] = field(default_factory=Counter)
    resends: int = 0
    resend_mismatches: list[str] = field(default_factory=list)
    failed_open: int = 0
    candidates: dict[str, deque[str]] = field(default_factory=dict)  # tenant -> retractable ids
    retracted: dict[str, deque[str]] = field(default_factory=dict)
    per_minute: Counter[int] = field(default_factory=Counter)
    samples: list[Sample] = field(default_factory=list)
    health: list[tuple[float, int, int]] = field(default_factory=list)  # seconds, backlog, max lag
    lags: dict[str, int] = field(default_factory=dict)  # the latest lag of each projection
    horizon: list[tuple[float, float, int]] = field(default_factory=list)  # seconds, oldest xid tx s, hidden turns
    lags_at_end: dict[str, int] = field(default_factory=dict)  # ... when the traffic stopped
    rebuild: dict[str, Any] = field(default_factory=dict)
    started: float = 0.0
    traffic_s: float = 0.0
    drain_s: float = float("nan")
    phase: str = "warm"

    def elapsed(self) -> float:
        return time.monotonic() - self.started


async def request(
    traffic: Traffic, http: httpx.AsyncClient, op: str, method: str, path: str, tenant: Tenant, **kwargs: Any
) -> httpx.Response | None:
    """One request as ``tenant``, timed and counted; None if it never got an answer."""
    sent = time.perf_counter()
    response: httpx.Response | None
    try:
        response = await http.request(method, path, headers={"Authorization": f"Bearer {tenant.key}"}, **kwargs)
        status = str(response.status_code)
    except httpx.TransportError as e:
        response, status = None, type(e).__name__
    stats = traffic.stats[op]
    stats.latencies.append(time.perf_counter() - sent)
    stats.statuses[status] += 1
    if traffic.phase == "traffic":
        traffic.per_minute[int(traffic.elapsed() // 60)] += 1
    return response


async def send_turns(traffic: Traffic, http: httpx.AsyncClient, rng: random.Random, tenant: Tenant, ids: str) -> None:
    """1-4 of the tenant's next turns; retried with the same ids until answered (or a 4xx)."""
    size = rng.randint(*TURNS_PER_REQUEST)
    first = traffic.next_turn[tenant.name]
    traffic.next_turn[tenant.name] += size
    bodies = [{**tenant.turns[(first + j) % len(tenant.turns)], "turn_id": f"{ids}-{j}"} for j in range(size)]
    turn_ids = [b["turn_id"] for b in bodies]
    body = {"turns": bodies} if size > 1 else bodies[0]
    answer = None
    for attempt in range(4):
        response = await request(traffic, http, "turns", "POST", "/v1/turns", tenant, json=body)
        if response is not None and response.status_code == 202:
            answer = response.json()
            break
        if response is not None and response.status_code < 500:
            break
        await asyncio.sleep(0.5 * 2**attempt)
    if answer is None or answer["turn_ids"] != turn_ids:
        traffic.unacked.update(dict.fromkeys(turn_ids, tenant.name))
        return
    traffic.acked.update(dict.fromkeys(turn_ids, tenant.name))
    if rng.randrange(RESEND_ONE_IN) == 0:  # as after an answer lost on the way
        traffic.resends += 1
        again = await request(traffic, http, "turns", "POST", "/v1/turns", tenant, json=body)
        same = again is not None and again.status_code == 202 and again.json()["positions"] == answer["positions"]
        if not (same and again is not None and again.json()["replayed"] == size):
            traffic.resend_mismatches.append(f"{ids}: {None if again is None else again.text[:200]}")


def ask(rng: random.Random, scopes: dict[str, str]) -> str:
    """A question about one of the tenant's topics; every one a different text."""
    return f"What is our {rng.choice(TOPICS)} for {scopes.get('project', 'this')}? (request {rng.randrange(10**6)})"


async def get_context(traffic: Traffic, http: httpx.AsyncClient, rng: random.Random, tenant: Tenant) -> None:
    scopes = tenant.scopes(rng)
    params = {"request": ask(rng, scopes), **scopes}
    response = await request(traffic, http, "context", "GET", "/v1/memory/context", tenant, params=params)
    if response is not None and response.status_code == 200:
        traffic.failed_open += (response.json()["empty_reason"] or "").startswith(FAILED_OPEN)


async def search(traffic: Traffic, http: httpx.AsyncClient, rng: random.Random, tenant: Tenant) -> None:
    """Search; remember the facts, entities and relationships found, to retract later."""
    scopes = tenant.scopes(rng)
    params: dict[str, Any] = {"q": f"{rng.choice(TOPICS)} {scopes.get('project', '')}", "k": 10, **scopes}
    if rng.random() < 0.5:
        params["kind"] = ["fact", "entity", "relationship"]
    response = await request(traffic, http, "search", "GET", "/v1/search", tenant, params=params)
    if response is not None and response.status_code == 200:
        found = [item["item_id"] for item in response.json() if item["kind"] != "turn"]
        traffic.candidates.setdefault(tenant.name, deque(maxlen=50)).extend(found)


async def change(traffic: Traffic, http: httpx.AsyncClient, op: str, tenant: Tenant) -> None:
    """Retract an item found earlier (the newest), or restore one retracted (the oldest)."""
    item = traffic.candidates[tenant.name].pop() if op == "retract" else traffic.retracted[tenant.name].popleft()
    path = f"/v1/memory/{quote(item, safe='')}/{op}"
    response = await request(traffic, http, op, "POST", path, tenant, json={"reason": "soak"})
    if op == "retract" and response is not None and response.status_code in (200, 202):
        traffic.retracted.setdefault(tenant.name, deque(maxlen=50)).append(item)


async def client(traffic: Traffic, http: httpx.AsyncClient, i: int, deadline: float) -> None:
    rng = random.Random(f"{traffic.run}-{i}")
    n = 0
    while time.monotonic() < deadline:
        tenant = rng.choice(traffic.tenants)
        op = rng.choices(OPS, WEIGHTS)[0]
        if op == "retract" and not traffic.candidates.get(tenant.name):
            op = "search"
        if op == "restore" and not traffic.retracted.get(tenant.name):
            op = "search"
        if op == "turns":
            await send_turns(traffic, http, rng, tenant, f"{traffic.run}-c{i:02}-{n}")
            n += 1
        elif op == "context":
            await get_context(traffic, http, rng, tenant)
        elif op == "search":
            await search(traffic, http, rng, tenant)
        else:
            await change(traffic, http, op, tenant)
        await asyncio.sleep(traffic.think * rng.uniform(0.5, 1.5))


# -- the monitor, the rebuild and the drain ----------------------------------------------------------


def process_sample(pid: int) -> tuple[float, int, int]:
    """RSS (MB), threads and open file descriptors of a live process."""
    status = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    rss_mb = int(status["VmRSS"].split()[0]) / 1024
    return rss_mb, int(status["Threads"]), sum(1 for _ in Path(f"/proc/{pid}/fd").iterdir())


async def health(http: httpx.AsyncClient) -> tuple[int, dict[str, int]]:
    """The extraction backlog (turns) and each projection's lag (events)."""
    answer = await http.get(
        "/health", params={"detail": "1"}, headers={"Authorization": f"Bearer {OPERATOR_KEY}"}, timeout=60
    )
    report = answer.json()
    lags = {name: int(p["lag_events"]) for name, p in report.get("projections", {}).items()}
    return int(report.get("worker", {}).get("pending_turns", -1)), lags


# text(): statistics views and a count the application never makes: how long the oldest
# transaction holding an xid has run (gap-safe readers see nothing committed after it
# started), and how many turns are committed but still behind that horizon.
HORIZON = sa.text(
    "SELECT coalesce(max(extract(epoch FROM now() - xact_start)), 0),"
    " (SELECT count(*) FROM events WHERE event_type = 'turn.recorded'"
    "  AND tx_id >= pg_snapshot_xmin(pg_current_snapshot()))"
    " FROM pg_stat_activity WHERE backend_xid IS NOT NULL AND datname = current_database() AND pid <> pg_backend_pid()"
)


def horizon(engine: sa.Engine) -> tuple[float, int]:
    """The age (s) of the oldest transaction holding an xid, and the turns it hides."""
    with engine.connect() as conn:
        age, hidden = conn.execute(HORIZON).one()
    return float(age), int(hidden)


async def monitor(traffic: Traffic, http: httpx.AsyncClient, pid: int, engine: sa.Engine, stop: asyncio.Event) -> None:
    n = 0
    while not stop.is_set():
        traffic.samples.append(Sample(traffic.elapsed(), traffic.phase, *process_sample(pid)))
        if n % HEALTH_EVERY == 0:
            backlog, lags = await health(http)
            traffic.health.append((traffic.elapsed(), backlog, max(lags.values(), default=-1)))
            traffic.lags = lags
        traffic.horizon.append((traffic.elapsed(), *horizon(engine)))
        n += 1
        with suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), SAMPLE_S)


async def rebuild_midway(traffic: Traffic, url: URL, names: list[str], at_s: float) -> None:
    """``memledger projections rebuild NAMES`` in its own process, ``at_s`` into the traffic."""
    await asyncio.sleep(at_s)
    started = time.monotonic()
    process = await asyncio.create_subprocess_exec(
        *CLI, "projections", "rebuild", *names, env=env_for(url), stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    output, _ = await process.communicate()
    lines = output.decode(errors="replace").replace("\r", "\n").strip().splitlines()
    traffic.rebuild = {
        "names": names,
        "started_s": round(started - traffic.started, 1),
        "seconds": round(time.monotonic() - started, 1),
        "exit": process.returncode,
        "output": [line for line in lines if line.strip()][-(2 * len(names) if process.returncode == 0 else 40) :],
    }
    log(f"rebuild: {traffic.rebuild}")


async def drain(traffic: Traffic, http: httpx.AsyncClient, timeout_s: float) -> None:
    """Wait until the backlog and every lag are 0 twice in a row; the time it took."""
    started, zeros = time.monotonic(), 0
    while time.monotonic() - started < timeout_s:
        backlog, lags = await health(http)
        traffic.lags = lags
        zeros = zeros + 1 if backlog == 0 and not any(lags.values()) else 0
        if zeros == 2:
            traffic.drain_s = time.monotonic() - started
            return
        await asyncio.sleep(1.0)
    log(f"not drained after {timeout_s:.0f} s")


async def drive(server: Server, url: URL, tenants: list[Tenant], args: argparse.Namespace) -> Traffic:
    """The whole of the traffic, on a running server."""
    traffic = Traffic(run=f"s{uuid.uuid4().hex[:6]}", tenants=tenants, think=args.think)
    traffic.started = time.monotonic()
    limits = httpx.Limits(max_connections=args.clients + 2)
    engine = sa.create_engine(url, pool_size=1)
    try:
        async with httpx.AsyncClient(base_url=server.base, timeout=60, limits=limits) as http:
            await traffic_with_monitor(traffic, http, server, url, engine, args)
    finally:
        engine.dispose()
    return traffic


async def traffic_with_monitor(
    traffic: Traffic, http: httpx.AsyncClient, server: Server, url: URL, engine: sa.Engine, args: argparse.Namespace
) -> None:
    """Warm up; the clients, the monitor and the rebuild halfway; then drain."""
    stop = asyncio.Event()
    watcher = asyncio.create_task(monitor(traffic, http, server.process.pid, engine, stop))
    rng = random.Random(0)
    for tenant in traffic.tenants[: args.clients]:  # the embedding model loads, statements compile
        await get_context(traffic, http, rng, tenant)
    warm, traffic.stats["context"], traffic.failed_open = traffic.stats["context"], OpStats(frozenset({200})), 0
    if warm.failures:
        raise RuntimeError(f"warm-up context requests failed: {dict(warm.statuses)}")
    traffic.phase, traffic.started = "traffic", time.monotonic()
    traffic.samples.append(Sample(0.0, "traffic", *process_sample(server.process.pid)))
    deadline = traffic.started + args.seconds
    names = args.rebuild.split(",")
    rebuild = asyncio.create_task(rebuild_midway(traffic, url, names, args.seconds / 2))
    await asyncio.gather(*(client(traffic, http, i, deadline) for i in range(args.clients)))
    traffic.traffic_s = traffic.elapsed()
    traffic.samples.append(Sample(traffic.traffic_s, "traffic", *process_sample(server.process.pid)))
    traffic.phase = "drain"
    traffic.lags_at_end = (await health(http))[1]
    log(f"traffic done: {len(traffic.acked)} turns acknowledged; draining")
    await rebuild
    await drain(traffic, http, args.drain_timeout)
    stop.set()
    await watcher


# -- the checks ------------------------------------------------------------------------------------


def check_turns(engine: sa.Engine, run: str, acked: dict[str, str], unacked: dict[str, str]) -> dict[str, Any]:
    """Each acknowledged turn in the ledger exactly once, under its tenant; unacknowledged
    ones at most once; no other turn of the run. Turn events' ids are ``turn:<turn id>``."""
    query = sa.select(events.c.tenant_id, events.c.event_id).where(events.c.event_id.startswith(f"turn:{run}-"))
    where: dict[str, list[str]] = {}
    with engine.connect() as conn:
        for tenant_id, event_id in conn.execute(query):
            where.setdefault(event_id.removeprefix("turn:"), []).append(tenant_id)
    claimed = {**unacked, **acked}
    out = {
        "acknowledged": len(acked),
        "found": sum(len(tenants) for tenants in where.values()),
        "missing": sorted(t for t in acked if t not in where),
        "duplicated": sorted(t for t, tenants in where.items() if len(tenants) > 1),
        "wrong_tenant": sorted(t for t, tenants in where.items() if t in claimed and set(tenants) != {claimed[t]}),
        "unknown": sorted(t for t in where if t not in claimed),
        "unacknowledged": len(unacked),
        "unacknowledged_found": sum(1 for t in unacked if t in where),
    }
    out["ok"] = not (out["missing"] or out["duplicated"] or out["wrong_tenant"] or out["unknown"])
    return out


def cli_json(url: URL, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*CLI, *args, "--json"], env=env_for(url), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def verify_ledger(url: URL) -> dict[str, Any]:
    """``memledger projections verify all`` and ``memledger verify``, side by side."""
    started = time.monotonic()
    projections, chain = cli_json(url, "projections", "verify", "all"), cli_json(url, "verify")
    out: dict[str, Any] = {}
    for name, process in (("projections", projections), ("chain", chain)):
        stdout, stderr = process.communicate(timeout=3600)
        rows = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
        out[name] = {"exit": process.returncode, "rows": rows, "stderr": stderr.strip()[-2000:]}
    tables = out["projections"]["rows"]
    chained = out["chain"]["rows"][-1] if out["chain"]["rows"] else {}
    return {
        "projections_equal": out["projections"]["exit"] == 0 and bool(tables) and all(t["equal"] for t in tables),
        "projection_tables": len(tables),
        "projection_rows": sum(t["live_rows"] for t in tables),
        "different_tables": [t["table"] for t in tables if not t["equal"]],
        "chain_ok": out["chain"]["exit"] == 0 and bool(chained.get("ok")),
        "chain_events": chained.get("events", 0),
        "chain_tenants": chained.get("tenants", 0),
        "chain_findings": chained.get("findings", [])[:5],
        "verify_seconds": round(time.monotonic() - started, 1),
        "errors": [f"{n}: {o['stderr']}" for n, o in out.items() if o["exit"] != 0],
    }


def slope_mb_per_min(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of (seconds, MB), in MB per minute."""
    if len(points) < 2:
        return float("nan")
    mean_t = sum(t for t, _ in points) / len(points)
    mean_m = sum(m for _, m in points) / len(points)
    spread = sum((t - mean_t) ** 2 for t, _ in points)
    return 60 * sum((t - mean_t) * (m - mean_m) for t, m in points) / spread if spread else float("nan")


def memory_figures(traffic: Traffic, max_slope: float) -> dict[str, Any]:
    """Server RSS over the traffic: start, peak, end, and the slope of the last part."""
    during = [s for s in traffic.samples if s.phase == "traffic"]
    window = min(300.0, traffic.traffic_s / 2)
    last = [(s.seconds, s.rss_mb) for s in during if s.seconds >= traffic.traffic_s - window]
    slope = slope_mb_per_min(last)
    warm = [s for s in traffic.samples if s.phase == "warm"]
    return {
        "rss_idle_mb": warm[0].rss_mb if warm else float("nan"),
        "rss_start_mb": during[0].rss_mb,
        "rss_peak_mb": max(s.rss_mb for s in during),
        "rss_end_mb": during[-1].rss_mb,
        "rss_slope_window_s": window,
        "rss_slope_mb_per_min": slope,
        "rss_flat": None if window < MIN_SLOPE_WINDOW_S else slope <= max_slope,
        "threads_start_end": [during[0].threads, during[-1].threads],
        "fds_start_end": [during[0].fds, during[-1].fds],
        "rss_after_drain_mb": traffic.samples[-1].rss_mb,
    }


def server_problems(log_text: str) -> list[str]:
    """The server log's tracebacks and ERROR lines (first line of each)."""
    return [line for line in log_text.splitlines() if line.startswith("Traceback") or "ERROR" in line]


# -- the run and the report --------------------------------------------------------------------------


def soak(url: URL, args: argparse.Namespace) -> dict[str, Any]:
    """Run the soak on the (fresh) database at ``url``; every figure and check."""
    tenants = make_tenants(url, args.tenants, args.turns_per_tenant)
    log(f"{len(tenants)} tenants with keys; starting the server")
    with tempfile.TemporaryDirectory(prefix="memledger-soak-") as logs:
        server = start_server(url, Path(logs))
        try:
            traffic = asyncio.run(drive(server, url, tenants, args))
        finally:
            server.stop()
        problems = server_problems(server.log_text())
        if problems:
            log("server log:\n" + server.log_text()[-6000:])
    engine = sa.create_engine(url)
    try:
        turns = check_turns(engine, traffic.run, traffic.acked, traffic.unacked)
    finally:
        engine.dispose()
    verified = verify_ledger(url)
    return figures(traffic, turns, verified, problems, args)


def figures(
    traffic: Traffic, turns: dict[str, Any], verified: dict[str, Any], problems: list[str], args: argparse.Namespace
) -> dict[str, Any]:
    memory = memory_figures(traffic, args.max_slope)
    requests = {
        op: {
            "requests": len(s.latencies),
            "p50_ms": quantile_ms(s.latencies, 0.5),
            "p99_ms": quantile_ms(s.latencies, 0.99),
            "max_ms": quantile_ms(s.latencies, 1.0),
            "failures": s.failures,
            "statuses": dict(s.statuses),
        }
        for op, s in traffic.stats.items()
    }
    failures = sum(s.failures for s in traffic.stats.values())
    checks = {
        "exactly_once": turns["ok"],
        "resends_replayed": not traffic.resend_mismatches,
        "projections_equal_rebuild": verified["projections_equal"],
        "chain_verifies": verified["chain_ok"],
        "memory_flat": memory["rss_flat"],
        "no_failed_requests": failures == 0,
        "rebuild_succeeded": traffic.rebuild.get("exit") == 0,
        "drained": traffic.drain_s == traffic.drain_s,  # not NaN
        "server_log_clean": not problems,
    }
    total = sum(len(s.latencies) for s in traffic.stats.values())
    return {
        "minutes": round(traffic.traffic_s / 60, 2),
        "clients": args.clients,
        "tenants": args.tenants,
        "think_s": args.think,
        "requests": total,
        "requests_per_s": total / traffic.traffic_s,
        "turns_acknowledged": turns["acknowledged"],
        "turns_per_s": turns["acknowledged"] / traffic.traffic_s,
        "by_request": requests,
        "failed_requests": failures,
        "context_failed_open": traffic.failed_open,
        "resends": traffic.resends,
        "resend_mismatches": traffic.resend_mismatches[:5],
        "rebuild": traffic.rebuild,
        "backlog_max_turns": max((b for _, b, _ in traffic.health), default=-1),
        "lag_max_events": max((lag for _, _, lag in traffic.health), default=-1),
        "lag_at_end_of_traffic": traffic.lags_at_end,
        "drain_s": traffic.drain_s,
        "lag_when_stopped": traffic.lags,
        "oldest_write_transaction_max_s": max((h[1] for h in traffic.horizon), default=-1.0),
        "turns_hidden_behind_it_max": max((h[2] for h in traffic.horizon), default=-1),
        "turns": {k: (v[:5] if isinstance(v, list) else v) for k, v in turns.items()},
        "verify": verified,
        "memory": memory,
        "per_minute_requests": [traffic.per_minute[m] for m in sorted(traffic.per_minute)],
        "timeline": timeline(traffic),
        "server_log_problems": problems[:10],
        "checks": checks,
        "ok": all(ok is not False for ok in checks.values()),
        "load_average": round(os.getloadavg()[0], 1),
        "cpus": os.cpu_count(),
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
    }


def timeline(traffic: Traffic) -> list[dict[str, Any]]:
    """About 15 rows over the run: RSS, threads, fds, the latest backlog and lag, and the
    oldest transaction holding an xid with the turns it hides from gap-safe readers."""
    step = max(1, len(traffic.samples) // 15)
    rows = []
    for s in [*traffic.samples[::step], traffic.samples[-1]]:
        seen = [h for h in traffic.health if h[0] <= s.seconds] or traffic.health[:1]
        backlog, lag = (seen[-1][1], seen[-1][2]) if seen else (-1, -1)
        near = min(traffic.horizon, key=lambda h: abs(h[0] - s.seconds), default=(0.0, -1.0, -1))
        rows.append(
            {
                "s": round(s.seconds),
                "phase": s.phase,
                "rss_mb": s.rss_mb,
                "threads": s.threads,
                "fds": s.fds,
                "backlog": backlog,
                "lag": lag,
                "oldest_tx_s": near[1],
                "hidden_turns": near[2],
            }
        )
    return rows


def report(out: dict[str, Any]) -> None:
    print(
        f"\nsoak: {out['minutes']:.1f} min, {out['clients']} clients, {out['tenants']} tenants; "
        f"{out['cpus']} CPUs, load average at the end {out['load_average']}"
    )
    print(f"{'request':10} {'count':>7} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8} {'failed':>7}")
    for op, r in out["by_request"].items():
        print(
            f"{op:10} {r['requests']:>7} {r['p50_ms']:>8.1f} {r['p99_ms']:>8.1f} {r['max_ms']:>8.0f} {r['failures']:>7}"
        )
    print(
        f"requests/s {out['requests_per_s']:.1f}; turns acknowledged {out['turns_acknowledged']} "
        f"({out['turns_per_s']:.1f}/s); resent batches {out['resends']}; context failed open "
        f"{out['context_failed_open']}"
    )
    rb = out["rebuild"]
    print(
        f"rebuild of {','.join(rb.get('names', []))} at {rb.get('started_s')} s: {rb.get('seconds')} s, "
        f"exit {rb.get('exit')}"
    )
    lagging = ", ".join(f"{k} {v}" for k, v in out["lag_at_end_of_traffic"].items() if v) or "none"
    print(
        f"extraction backlog max {out['backlog_max_turns']} turns, projection lag max {out['lag_max_events']} "
        f"events; lag when the traffic stopped: {lagging}; drained in {out['drain_s']:.1f} s"
    )
    t = out["turns"]
    print(
        f"exactly once: {t['acknowledged']} acknowledged, {t['found']} found; missing {len(t['missing'])}, "
        f"duplicated {len(t['duplicated'])}, wrong tenant {len(t['wrong_tenant'])}, unknown {len(t['unknown'])}; "
        f"unacknowledged {t['unacknowledged']} ({t['unacknowledged_found']} recorded)"
    )
    v = out["verify"]
    print(
        f"projections verify: {v['projection_tables']} tables, {v['projection_rows']} rows, "
        f"{'equal to a rebuild' if v['projections_equal'] else 'DIFFERENT: ' + str(v['different_tables'])}; "
        f"hash chains: {v['chain_events']} events of {v['chain_tenants']} tenants "
        f"{'verify' if v['chain_ok'] else 'BROKEN: ' + str(v['chain_findings'])} ({v['verify_seconds']} s)"
    )
    m = out["memory"]
    print(
        f"server RSS MB: idle {m['rss_idle_mb']:.0f}, start {m['rss_start_mb']:.0f}, peak {m['rss_peak_mb']:.0f}, "
        f"end {m['rss_end_mb']:.0f}; slope of the last {m['rss_slope_window_s']:.0f} s "
        f"{m['rss_slope_mb_per_min']:+.2f} MB/min{' (flat)' if m['rss_flat'] else ''}; "
        f"threads {m['threads_start_end']}, fds {m['fds_start_end']}"
    )
    print(
        f"oldest transaction holding an xid: up to {out['oldest_write_transaction_max_s']:.0f} s; turns committed "
        f"behind it (invisible to the worker and the projectors): up to {out['turns_hidden_behind_it_max']}"
    )
    print(
        f"{'s':>6} {'phase':8} {'RSS MB':>7} {'threads':>8} {'fds':>5} {'backlog':>8} {'lag':>7}"
        f" {'oldest tx s':>12} {'hidden turns':>13}"
    )
    for row in out["timeline"]:
        print(
            f"{row['s']:>6} {row['phase']:8} {row['rss_mb']:>7.1f} {row['threads']:>8} {row['fds']:>5} "
            f"{row['backlog']:>8} {row['lag']:>7} {row['oldest_tx_s']:>12.0f} {row['hidden_turns']:>13}"
        )
    failed = [name for name, ok in out["checks"].items() if ok is False]
    unjudged = [name for name, ok in out["checks"].items() if ok is None]
    print(
        "checks: "
        + ("all passed" if not failed else "FAILED " + ", ".join(failed))
        + (f" (not judged, the run is too short: {', '.join(unjudged)})" if unjudged else "")
    )
    summary = {k: v for k, v in out.items() if k not in ("timeline", "by_request")}
    summary["by_request"] = {
        op: {k: r[k] for k in ("requests", "p50_ms", "p99_ms", "failures")} for op, r in out["by_request"].items()
    }
    print(json.dumps(_rounded(summary)))


def _rounded(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 2)
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="length of the traffic (10)")
    parser.add_argument("--quick", action="store_true", help="1 minute of traffic")
    parser.add_argument("--seconds", type=float, default=None, help="length of the traffic in seconds (tests)")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--tenants", type=int, default=50)
    parser.add_argument("--think", type=float, default=0.1, help="mean pause of a client between requests (s)")
    parser.add_argument(
        "--rebuild",
        default="facts,entities,relationships",
        help="projections rebuilt halfway (comma-separated, or all)",
    )
    parser.add_argument("--max-slope", type=float, default=1.0, help="RSS slope that still counts as flat (MB/min)")
    parser.add_argument("--drain-timeout", type=float, default=900.0, help="longest wait for the backlog (s)")
    parser.add_argument("--turns-per-tenant", type=int, default=120, help="distinct turns of each tenant")
    args = parser.parse_args(argv)
    args.seconds = args.seconds or 60.0 * (1.0 if args.quick else args.minutes)
    with soak_database() as url:
        print(f"database: {url.render_as_string(hide_password=True)}")
        out = soak(url, args)
    report(out)
    return 0 if out["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
