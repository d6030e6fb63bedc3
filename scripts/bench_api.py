"""Benchmark the HTTP API: recording turns and serving context, through a real server.

    .venv/bin/python scripts/bench_api.py [--quick] [--seconds S] [--clients N] [--batch B] [--rate R]

1. Database: a fresh one (``memledger_bench_api_<random>``) on the embedded server
   under ``MEMLEDGER_HOME`` (on ``DATABASE_URL``'s server if set), migrated, and
   dropped at the end, so user data is never touched.
2. Memory to recall: tenant ``bench-ctx`` says ``SEED_TURNS`` things (300; 100 with
   ``--quick``) about 8 projects, 10 tools and 6 colleagues, in 8 sessions; the
   heuristic extractor, the projectors and the embeddings projector then run
   (``MemoryLedger.process``), so context requests meet facts, entities,
   relationships and vectors.
3. Server: ``memledger serve`` (one uvicorn process, no workers: nothing extracts
   during the run) on a free loopback port, default settings. Keys are issued with
   the library (``keys.create``).
4. Load, from this process: ``--clients`` (16) asyncio tasks sharing one httpx
   ``AsyncClient`` (HTTP/1.1 keep-alive, one connection per task), each phase
   ``--seconds`` long (30; 10 with ``--quick``), after a short warm-up:

   a. turns: each client POSTs /v1/turns in a loop with ``--batch`` (50) turns per
      request (the batch form of the endpoint; every turn its own ``turn_id``,
      ~150 characters, the client's own sessions of one of 4 tenants). Turns/s is
      accepted turns over the phase; latency is per request.
   b. single turns (for comparison, a third of the time): the same with one turn
      per request.
   c. context, sustained: each client GETs /v1/memory/context in a loop: a question
      about one of the seeded projects (three forms), each request's text different (it
      names a ticket), so the process's cache of query embeddings never answers for the
      model; with the scopes of one of the tenant's sessions.
   d. context at ``--rate`` (50) requests/s: open loop, each request sent at its
      scheduled time by whichever client is free; latency is from the scheduled
      time (so queueing counts), which is the figure held to the target.

5. Where the time goes (``--profile``, and whenever a target is missed): the
   context path in this process on the same database and questions, stage by stage
   (API-key lookup, query embedding, selection, the whole ``build_context`` with
   rendering and recording), the HTTP baseline of GET /v1/settings (framework, key
   lookup and one read), and the top of a cProfile of ``build_context``.

Targets: at least 1,000 turns/s recorded; context p99 under 100 ms at 50 requests/s, with
at most 12 ms of the server process's CPU per context request.
The last line printed is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import json
import os
import platform
import pstats
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import sqlalchemy as sa
from sqlalchemy.engine import URL

from memledger import bootstrap
from memledger.config import Settings
from memledger.formatting import render
from memledger.library import MemoryLedger
from memledger.service import context, keys
from memledger.service.record import TurnInput
from memledger.service.types import Scopes
from memledger.store import db, embedded_server

TARGET_TURNS_PER_S = 1000.0
TARGET_CONTEXT_P99_MS = 100.0
# The server process's CPU per context request at the 50/s schedule (query embedding,
# selection, rendering, recording and the framework): a regression figure, held as a target.
TARGET_CONTEXT_SERVER_CPU_MS = 12.0
CONTEXT_TENANT = "bench-ctx"
PROJECTS = ["Phoenix", "Atlas", "Nimbus", "Orion", "Vega", "Lyra", "Draco", "Hydra"]
TOOLS = ["PostgreSQL", "Redis", "Kafka", "FastAPI", "React", "Docker", "Kubernetes", "Terraform", "Grafana", "Celery"]
PEOPLE = ["Sarah", "Miguel", "Aiko", "Priya", "Tom", "Lena"]
PHASES = ("turns", "single turns", "context", "context at rate")
QUESTIONS = [
    "Which database does {p} use?",
    "What tools do we use for project {p}?",
    "Who do I work with on {p}?",
]


def log(message: str) -> None:
    print(f"  ({message})", file=sys.stderr, flush=True)


def quantile_ms(samples: list[float], q: float) -> float:
    """The q-quantile (0..1) of samples in seconds, in milliseconds."""
    if not samples:
        return float("nan")
    ordered = sorted(samples)
    return 1000.0 * ordered[min(len(ordered) - 1, int(q * len(ordered)))]


# -- the database and the server ---------------------------------------------------------------


@dataclass(frozen=True)
class BenchDatabase:
    """The benchmark's database, and its server's postmaster when the server is ours."""

    url: URL
    postmaster: int | None


@contextmanager
def bench_database() -> Iterator[BenchDatabase]:
    """A fresh database: on DATABASE_URL's server if set, else on an embedded server of
    this run alone (so its CPU can be counted, and no other process's transaction
    holds its readers back); dropped (or the server deleted) at the end."""
    if Settings().database_url:
        server, _ = bootstrap.server_url(Settings())
        name = f"memledger_bench_api_{uuid.uuid4().hex[:12]}"
        url = db.ensure_database(server, name)
        try:
            yield BenchDatabase(url, None)
        finally:
            db.drop_database(server, name)
        return
    pgdata = Path(tempfile.mkdtemp(prefix="memledger-bench-api-")) / "pgdata"
    server, stop = embedded_server.start_temporary(pgdata)
    try:
        postmaster = int((pgdata / "postmaster.pid").read_text().split()[0])
        yield BenchDatabase(db.ensure_database(server, "memledger_bench_api"), postmaster)
    finally:
        stop()
        shutil.rmtree(pgdata.parent, ignore_errors=True)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def api_server(url: URL) -> Iterator[tuple[str, int]]:
    """``memledger serve`` on a free loopback port, until the block ends."""
    port = free_port()
    env = {**os.environ, "DATABASE_URL": url.render_as_string(hide_password=False)}
    with tempfile.TemporaryFile() as server_log:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "memledger.cli.main",
                "serve",
                "--no-workers",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
            ],
            env=env,
            stdout=server_log,
            stderr=subprocess.STDOUT,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 180
            while True:
                if process.poll() is not None or time.monotonic() > deadline:
                    server_log.seek(0)
                    raise RuntimeError(f"memledger serve did not start:\n{server_log.read().decode()}")
                try:
                    httpx.get(f"{base}/health", timeout=10)
                    break
                except httpx.TransportError:
                    time.sleep(0.2)
            yield base, process.pid
        finally:
            process.send_signal(2)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()


# -- data ------------------------------------------------------------------------------------


def seed_sentence(n: int) -> str:
    p, t, person = PROJECTS[n % 8], TOOLS[(n // 8) % 10], PEOPLE[(n // 3) % 6]
    forms = [
        f"Project {p} uses {t}.",
        f"I'm using {t} with my colleague {person}.",
        f"I prefer {t} for {p}.",
        f"{person} works on {p}.",
    ]
    return forms[(n // 80) % 4]


def seed_scopes(n: int) -> Scopes:
    return Scopes(session=f"ctx-s{n % 8}", project=PROJECTS[n % 8].lower(), user="alice")


def seed(ledger: MemoryLedger, turns: int) -> None:
    """The context tenant's memory: turns, extracted, projected and embedded."""
    batch = [TurnInput(role="user", text=seed_sentence(n), scopes=seed_scopes(n)) for n in range(turns)]
    ledger.record_turns(CONTEXT_TENANT, batch)
    extracted = ledger.process()
    log(f"seeded {CONTEXT_TENANT}: {turns} turns, {extracted} extracted")


def context_params(n: int) -> dict[str, str]:
    """The n-th context request: every one a different text (an agent asks about the turn
    at hand), so no cache of query embeddings answers for the model."""
    p = PROJECTS[n % 8]
    question = QUESTIONS[(n // 8) % 3].format(p=p) + f" I am working on ticket {p[:3].upper()}-{n}."
    return {"request": question, "session": f"ctx-s{n % 8}", "project": p.lower(), "user": "alice"}


def turn_text(client: int, n: int) -> str:
    p, t, person = PROJECTS[(client + n) % 8], TOOLS[n % 10], PEOPLE[n % 6]
    return (
        f"Turn {n} of client {client}: for {p} we should move the ingestion job to {t}; "
        f"{person} reviews the migration plan on Thursday and I will update the runbook."
    )


# -- load ------------------------------------------------------------------------------------


@dataclass
class Phase:
    """One phase's samples: per-request latency (s), items done, failures, duration."""

    name: str
    latencies: list[float] = field(default_factory=list)
    items: int = 0
    failures: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    def summary(self) -> dict[str, float]:
        requests = len(self.latencies)
        return {
            "requests": requests,
            "requests_per_s": requests / self.seconds if self.seconds else 0.0,
            "items_per_s": self.items / self.seconds if self.seconds else 0.0,
            "p50_ms": quantile_ms(self.latencies, 0.50),
            "p99_ms": quantile_ms(self.latencies, 0.99),
            "failures": sum(self.failures.values()),
        }


# A request of client i, its n-th (-1: warm-up): what failed (None: nothing) and the items it did.
Send = Callable[[httpx.AsyncClient, int, int], Awaitable[tuple[str | None, int]]]


def _count(phase: Phase, failure: str | None, items: int) -> None:
    if failure is None:
        phase.items += items
    else:
        phase.failures[failure] = phase.failures.get(failure, 0) + 1


async def closed_loop(name: str, base: str, send: Send, clients: int, seconds: float) -> Phase:
    """Each client sends its next request as soon as the last one answered."""
    phase = Phase(name)
    async with httpx.AsyncClient(base_url=base, timeout=60, limits=httpx.Limits(max_connections=clients)) as http:
        for i in range(clients):  # warm-up: connections open, code paths loaded
            await send(http, i, -1)
        loop = asyncio.get_running_loop()
        start = loop.time()
        deadline = start + seconds

        async def client(i: int) -> None:
            n = 0
            while loop.time() < deadline:
                sent = time.perf_counter()
                failure, items = await send(http, i, n)
                phase.latencies.append(time.perf_counter() - sent)
                _count(phase, failure, items)
                n += 1

        await asyncio.gather(*(client(i) for i in range(clients)))
        phase.seconds = loop.time() - start
    return phase


async def open_loop(name: str, base: str, send: Send, clients: int, seconds: float, rate: float) -> Phase:
    """Request k is due at start + k / rate; a free client sends it then. Latency runs
    from the due time, so a request that waited for a client counts its wait."""
    phase = Phase(name)
    total = int(seconds * rate)
    async with httpx.AsyncClient(base_url=base, timeout=60, limits=httpx.Limits(max_connections=clients)) as http:
        for i in range(clients):
            await send(http, i, -1)
        loop = asyncio.get_running_loop()
        start = loop.time() + 0.05
        next_due = iter(range(total))

        async def client(i: int) -> None:
            for k in next_due:
                due = start + k / rate
                await asyncio.sleep(max(0.0, due - loop.time()))
                failure, items = await send(http, i, k)
                phase.latencies.append(loop.time() - due)
                _count(phase, failure, items)

        await asyncio.gather(*(client(i) for i in range(clients)))
        phase.seconds = loop.time() - start
    return phase


def turn_sender(keys_by_tenant: list[str], batch: int) -> Send:
    async def send(http: httpx.AsyncClient, client: int, n: int) -> tuple[str | None, int]:
        key = keys_by_tenant[client % len(keys_by_tenant)]
        turns = [
            {
                "role": "user" if j % 2 == 0 else "assistant",
                "text": turn_text(client, n * batch + j),
                "scopes": {"session": f"c{client}-s{n % 4}", "project": PROJECTS[client % 8].lower()},
                "turn_id": f"c{client}-{n}-{j}-{uuid.uuid4().hex[:8]}",
            }
            for j in range(batch)
        ]
        body = {"turns": turns} if batch > 1 else turns[0]
        response = await http.post("/v1/turns", json=body, headers={"Authorization": f"Bearer {key}"})
        return (None if response.status_code == 202 else str(response.status_code)), batch

    return send


def context_sender(key: str) -> Send:
    async def send(http: httpx.AsyncClient, client: int, n: int) -> tuple[str | None, int]:
        """Items: 1 for a block with memory in it. A block that failed open (selection
        overran its deadline or raised) is a failure, though the API answers 200."""
        params = context_params(client * 7 + n)
        response = await http.get("/v1/memory/context", params=params, headers={"Authorization": f"Bearer {key}"})
        if response.status_code != 200:
            return str(response.status_code), 0
        served = response.json()
        reason = served["empty_reason"] or ""
        return (reason if reason.startswith("memory unavailable") else None), int(bool(served["item_ids"]))

    return send


# -- where the time goes ---------------------------------------------------------------------------


def _timed_ms(fn: Callable[[], object], times: int) -> float:
    """The median CPU time of ``fn`` in this process, in ms (CPU, not wall: other
    processes on a busy machine stretch wall time, not this)."""
    samples = []
    for _ in range(times):
        start = time.process_time()
        fn()
        samples.append(time.process_time() - start)
    return quantile_ms(samples, 0.5)


def _wall_ms(fn: Callable[[], object], times: int) -> float:
    samples = []
    for _ in range(times):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return quantile_ms(samples, 0.5)


def breakdown(ledger: MemoryLedger, base: str, server_pid: int, key: str, requests: int = 60) -> dict[str, Any]:
    """Median cost of each stage of the context path, in this process, and a profile;
    the same from 16 threads at once; the server's CPU per request for one client."""
    engine, database = ledger.engine, ledger.database
    embedder = bootstrap.build_embedder(database.settings)
    search = bootstrap.vector_search(database)  # its query cache never hits: every request is new

    def request(n: int) -> context.SelectRequest:
        p = context_params(n)
        scopes = Scopes(session=p["session"], project=p["project"], user=p["user"])
        return context.SelectRequest(tenant_id=CONTEXT_TENANT, scopes=scopes, request=p["request"])

    counter = iter(range(10**9))
    out: dict[str, Any] = {
        "key_lookup_cpu_p50_ms": _timed_ms(lambda: keys.tenant_for(engine, key), requests),
        "embed_query_cpu_p50_ms": _timed_ms(
            lambda: embedder.embed([context_params(next(counter))["request"]]), requests
        ),
        "select_cpu_p50_ms": _timed_ms(
            lambda: context.select(engine, request(next(counter)), vector_search=search), requests
        ),
        "select_without_vectors_cpu_p50_ms": _timed_ms(
            lambda: context.select(engine, request(next(counter))), requests
        ),
        "build_context_cpu_p50_ms": _timed_ms(
            lambda: context.build_context(engine, request(next(counter)), vector_search=search), requests
        ),
    }
    selection = context.select(engine, request(next(counter)), vector_search=search)
    out["render_cpu_p50_ms"] = _timed_ms(lambda: render(selection, max_chars=5000), requests)
    out["items_selected"] = len(selection.items)
    with ThreadPoolExecutor(16) as pool:  # as the server's threadpool runs them
        start = time.process_time()
        asked = [request(next(counter)) for _ in range(8 * 16)]
        list(pool.map(lambda ask: context.build_context(engine, ask, vector_search=search), asked))
        out["build_context_16_threads_cpu_ms_per_request"] = 1000 * (time.process_time() - start) / (8 * 16)
    headers = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=base, headers=headers) as http:
        out["http_settings_wall_p50_ms"] = _wall_ms(lambda: http.get("/v1/settings"), requests)
        before = cpu_seconds(server_pid)
        out["http_context_single_client_wall_p50_ms"] = _wall_ms(
            lambda: http.get("/v1/memory/context", params=context_params(next(counter))), requests
        )
        out["http_context_single_client_server_cpu_ms_per_request"] = (
            1000 * (cpu_seconds(server_pid) - before) / requests
        )
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(requests):
        context.build_context(engine, request(next(counter)), vector_search=search)
    profiler.disable()
    text = io.StringIO()
    stats = pstats.Stats(profiler, stream=text)
    stats.sort_stats("cumulative").print_stats("memledger", 30)
    stats.sort_stats("tottime").print_stats(15)
    out["profile_top"] = text.getvalue()
    return out


# -- the run ---------------------------------------------------------------------------------------


def _stat(pid: int) -> list[str]:
    """The fields of /proc/PID/stat after the command name ([] if the process is gone)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return []


def cpu_seconds(pid: int) -> float:
    """User + system CPU a process has used."""
    fields = _stat(pid)
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK") if fields else 0.0


def postgres_cpu_seconds(postmaster: int) -> float:
    """CPU of the whole PostgreSQL server: the postmaster, its exited children (which
    it has waited for), and its live children (backends, walwriter, ...)."""
    fields = _stat(postmaster)
    ticks = sum(int(f) for f in fields[11:15])  # utime, stime, cutime, cstime
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (child := _stat(int(entry.name))) and int(child[1]) == postmaster:
            ticks += int(child[11]) + int(child[12])
    return ticks / os.sysconf("SC_CLK_TCK")


def sessions(engine: sa.Engine) -> int:
    """Connections this database has accepted so far (PostgreSQL 14+)."""
    with engine.connect() as conn:
        # text(): a statistics view, read once per phase.
        query = sa.text("SELECT sessions FROM pg_stat_database WHERE datname = current_database()")
        return int(conn.execute(query).scalar_one())


def measured(
    phase_run: Callable[[], Phase], server_pid: int, bench: BenchDatabase, engine: sa.Engine
) -> dict[str, Any]:
    """Run a phase; its summary, with the CPU the server process and PostgreSQL spent,
    and the connections opened, per request."""
    postmaster = bench.postmaster

    def pg() -> float:
        return postgres_cpu_seconds(postmaster) if postmaster else float("nan")

    server_before, pg_before, sessions_before = cpu_seconds(server_pid), pg(), sessions(engine)
    phase = phase_run()
    summary: dict[str, Any] = phase.summary()
    requests = max(1, summary["requests"])
    summary["server_cpu_ms_per_request"] = 1000 * (cpu_seconds(server_pid) - server_before) / requests
    summary["postgres_cpu_ms_per_request"] = 1000 * (pg() - pg_before) / requests
    summary["connections_opened_per_request"] = (sessions(engine) - sessions_before - 2) / requests
    summary["failure_statuses"] = phase.failures
    log(f"{phase.name}: {summary}")
    return summary


def turns_breakdown(ledger: MemoryLedger, base: str, key: str, batch: int, times: int = 30) -> dict[str, float]:
    """Median cost of recording a batch: in this process, into a new and a big tenant, and over HTTP."""
    fresh = f"bench-fresh-{uuid.uuid4().hex[:6]}"

    def turns(n: int) -> list[TurnInput]:
        scopes = Scopes(session=f"bd-{n}")
        return [TurnInput(role="user", text=turn_text(99, n * batch + j), scopes=scopes) for j in range(batch)]

    counter = iter(range(10**9))
    out = {
        "record_batch_new_tenant_cpu_p50_ms": _timed_ms(
            lambda: ledger.record_turns(fresh, turns(next(counter))), times
        ),
        "record_batch_big_tenant_cpu_p50_ms": _timed_ms(
            lambda: ledger.record_turns("bench-w0", turns(next(counter))), times
        ),
    }
    send = turn_sender([key], batch)

    async def one() -> None:
        async with httpx.AsyncClient(base_url=base, timeout=60) as http:
            for _ in range(times):
                start = time.perf_counter()
                await send(http, 99, next(counter))
                samples.append(time.perf_counter() - start)

    samples: list[float] = []
    asyncio.run(one())
    out["http_batch_single_client_wall_p50_ms"] = quantile_ms(samples, 0.5)
    with ledger.engine.connect() as conn:
        # text(): a count for the report.
        out["big_tenant_events"] = conn.execute(
            sa.text("SELECT count(*) FROM events WHERE tenant_id = 'bench-w0'")
        ).scalar_one()
    return out


def run(bench: BenchDatabase, args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {}
    url = bench.url
    ledger = MemoryLedger.open(Settings(DATABASE_URL=url.render_as_string(hide_password=False)))
    engine = ledger.engine
    try:
        seed(ledger, args.seed_turns)
        ctx_key = keys.create(engine, CONTEXT_TENANT, label="bench")[1]
        writer_keys = [keys.create(engine, f"bench-w{i}", label="bench")[1] for i in range(4)]
        with api_server(url) as (base, pid):
            turns, one, ctx = turn_sender(writer_keys, args.batch), turn_sender(writer_keys, 1), context_sender(ctx_key)
            n, secs = args.clients, args.seconds
            phases: list[tuple[str, Callable[[], Coroutine[Any, Any, Phase]]]] = [
                ("turns", lambda: closed_loop("turns", base, turns, n, secs)),
                ("single turns", lambda: closed_loop("single turns", base, one, n, secs / 3)),
                ("context", lambda: closed_loop("context", base, ctx, n, secs)),
                ("context at rate", lambda: open_loop("context at rate", base, ctx, n, secs, args.rate)),
            ]
            for name, phase in phases:
                out[name] = measured(partial(asyncio.run, phase()), pid, bench, engine)
            missed = (
                out["turns"]["items_per_s"] < TARGET_TURNS_PER_S
                or out["context at rate"]["p99_ms"] >= TARGET_CONTEXT_P99_MS
            )
            if args.profile or missed:
                out["breakdown"] = {
                    **turns_breakdown(ledger, base, writer_keys[0], args.batch),
                    **breakdown(ledger, base, pid, ctx_key),
                }
    finally:
        ledger.close()
    return out


def report(out: dict[str, Any], args: argparse.Namespace) -> None:
    print(
        f"\nmode: {'quick' if args.quick else 'full'}; {args.clients} clients; {args.seconds:g} s per phase; "
        f"{os.cpu_count()} CPUs; load average at the end {os.getloadavg()[0]:.1f}"
    )
    print("(items: turns recorded; context blocks with memory in them. failures: non-2xx, and blocks failed open)")
    print(
        f"{'phase':16} {'requests/s':>11} {'items/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'failures':>9}"
        f" {'server CPU ms/req':>18} {'PG CPU ms/req':>14} {'connects/req':>13}"
    )
    for name in PHASES:
        s = out[name]
        print(
            f"{name:16} {s['requests_per_s']:>11,.1f} {s['items_per_s']:>9,.1f} "
            f"{s['p50_ms']:>8.1f} {s['p99_ms']:>8.1f} {s['failures']:>9}"
            f" {s['server_cpu_ms_per_request']:>18.1f} {s['postgres_cpu_ms_per_request']:>14.1f}"
            f" {s['connections_opened_per_request']:>13.2f}"
        )
    turns, rate = out["turns"], out["context at rate"]
    met_turns = turns["items_per_s"] >= TARGET_TURNS_PER_S and not turns["failures"]
    met_context = rate["p99_ms"] < TARGET_CONTEXT_P99_MS and not rate["failures"]
    print(
        f"target turns/s >= {TARGET_TURNS_PER_S:g} ({args.batch} turns per request): "
        f"{turns['items_per_s']:,.0f} {'met' if met_turns else 'MISSED'}"
    )
    print(
        f"target context p99 < {TARGET_CONTEXT_P99_MS:g} ms at {args.rate:g} requests/s: "
        f"{rate['p99_ms']:.1f} ms {'met' if met_context else 'MISSED'}"
    )
    cpu = rate["server_cpu_ms_per_request"]
    met_cpu = cpu <= TARGET_CONTEXT_SERVER_CPU_MS
    print(
        f"target server CPU per context request <= {TARGET_CONTEXT_SERVER_CPU_MS:g} ms (at {args.rate:g} "
        f"requests/s): {cpu:.1f} ms {'met' if met_cpu else 'MISSED'}"
    )
    if "breakdown" in out:
        print("\nwhere the time goes (medians; *_cpu_*: CPU of this process, on the same database):")
        for name, value in out["breakdown"].items():
            if name != "profile_top":
                print(f"  {name:36} {value:8.1f}")
        print(out["breakdown"].pop("profile_top"), file=sys.stderr)
    summary = {
        "turns_per_s": turns["items_per_s"],
        "turns_p99_ms": turns["p99_ms"],
        "context_per_s": out["context"]["requests_per_s"],
        "context_p99_ms": rate["p99_ms"],
        "turns_batch": args.batch,
        "turns_requests_per_s": turns["requests_per_s"],
        "turns_p50_ms": turns["p50_ms"],
        "single_turns_per_s": out["single turns"]["items_per_s"],
        "single_turns_p99_ms": out["single turns"]["p99_ms"],
        "context_sustained_p50_ms": out["context"]["p50_ms"],
        "context_sustained_p99_ms": out["context"]["p99_ms"],
        "context_rate": args.rate,
        "context_rate_achieved": rate["requests_per_s"],
        "context_p50_ms": rate["p50_ms"],
        "context_server_cpu_ms": cpu,
        "server_cpu_ms_per_request": {n: out[n]["server_cpu_ms_per_request"] for n in PHASES},
        "postgres_cpu_ms_per_request": {n: out[n]["postgres_cpu_ms_per_request"] for n in PHASES},
        "connections_opened_per_request": {n: out[n]["connections_opened_per_request"] for n in PHASES},
        "failures": sum(out[n]["failures"] for n in PHASES),
        "failures_by_phase": {n: out[n]["failure_statuses"] for n in PHASES if out[n]["failures"]},
        "context_blocks_with_memory": out["context"]["items_per_s"] / max(out["context"]["requests_per_s"], 1e-9),
        "targets_met": {"turns_per_s": met_turns, "context_p99_ms": met_context, "context_server_cpu_ms": met_cpu},
        **({"breakdown": out["breakdown"]} if "breakdown" in out else {}),
        "clients": args.clients,
        "seconds": args.seconds,
        "quick": args.quick,
        "cpus": os.cpu_count(),
        "load_average": round(os.getloadavg()[0], 1),
        "machine": platform.machine(),
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
    }
    print(json.dumps(_rounded(summary)))


def _rounded(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 2)
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="10 s phases and a smaller memory to recall")
    parser.add_argument("--seconds", type=float, default=None, help="length of each phase (30; 10 with --quick)")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--batch", type=int, default=50, help="turns per POST /v1/turns request (50)")
    parser.add_argument("--rate", type=float, default=50.0, help="context requests/s of the rate-limited phase")
    parser.add_argument("--seed-turns", type=int, default=None, help="turns of memory to recall (300; 100 quick)")
    parser.add_argument("--profile", action="store_true", help="also break the context path down by stage")
    args = parser.parse_args(argv)
    args.seconds = args.seconds or (10.0 if args.quick else 30.0)
    args.seed_turns = args.seed_turns or (100 if args.quick else 300)
    with bench_database() as bench:
        print(f"database: {bench.url.render_as_string(hide_password=True)}")
        out = run(bench, args)
    report(out, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
