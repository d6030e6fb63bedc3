"""Benchmark reads from a streaming standby: context served there versus the primary, and
the read-your-writes wait at a steady write load.

    .venv/bin/python scripts/bench_replica.py [--full] [--requests N] [--rate TURNS_PER_S] [--seconds S]

1. Servers. A primary of this process alone and a hot standby streaming from it
   (``tests/support/standby.py``: ``pg_basebackup -R`` with the embedded server's
   binaries, on the same machine and disk, with the primary's memory settings),
   deleted at exit.
2. Data. ``bench_context.py``'s generated tenants (``--quick`` size unless ``--full``),
   built on the primary before the standby is copied, so both hold the same.
3. Context. ``--requests`` (200) requests of the main tenant, each embedded once first
   (query vectors are cached per process), then each selected and formatted on the
   primary and on the standby (``replica_reads.select_routed``), in turn, the order
   alternating: p50/p95/p99 of each, the standby's over the primary's.
4. Read-your-writes. Writers append turns to the primary at ``--rate`` turns/s (500;
   batches of 10 per transaction, since this disk commits ~200-250 single-event
   transactions/s), for ``--seconds`` (20). Meanwhile a caller records one turn, then
   routes a read with ``after`` its position and a 1 s wait, every 20 ms: the wait until
   the standby holds it (p50/p99/max), and how many reads fell back to the primary.

The last line printed is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from scripts import bench_context
from tests.support.standby import Pair

from memledger.adapters.embedding import MiniLmEmbedder
from memledger.bootstrap import App, vector_search
from memledger.events import NewEvent, Scopes, TurnRecorded
from memledger.formatting import render
from memledger.service import context, replica_reads
from memledger.store import db, event_store


def log(message: str) -> None:
    print(f"  ({message})", file=sys.stderr, flush=True)


def _turns(prefix: str, count: int) -> list[NewEvent]:
    now = datetime.now(UTC)
    return [
        NewEvent(
            event=TurnRecorded(turn_id=f"{prefix}-{i}", role="user", text=f"turn {i}", scopes=Scopes(session="w")),
            event_id=f"{prefix}-{i}",
            occurred_at=now,
        )
        for i in range(count)
    ]


def context_pair(
    database: App, reads: replica_reads.ReadReplicas, main: bench_context.Tenant, count: int, search: Any
) -> dict[str, Any]:
    """Select and format each request on the primary and on the standby, in turn."""
    requests = bench_context.make_requests(main, count + 20)
    primary = database.for_tenant(main.tenant_id)
    for request in requests:  # embeds each once, prepares statements, fills caches on both
        context.select(primary, request, vector_search=search)
        replica_reads.select_routed(reads, request, vector_search=search)
    timed: dict[str, list[float]] = {"primary": [], "standby": []}
    failed = {"primary": 0, "standby": 0}

    def one(where: str, request: context.SelectRequest) -> None:
        started = time.perf_counter()
        if where == "primary":
            selection = context.select(primary, request, vector_search=search)
        else:
            selection = replica_reads.select_routed(reads, request, vector_search=search)
        render(selection, max_chars=request.budget_chars)
        timed[where].append(time.perf_counter() - started)
        failed[where] += (selection.empty_reason or "").startswith("memory unavailable")

    for i, request in enumerate(requests[20:]):
        order = ("primary", "standby") if i % 2 == 0 else ("standby", "primary")
        for where in order:
            one(where, request)
    out: dict[str, Any] = {where: bench_context.quantiles(samples) for where, samples in timed.items()}
    for where in timed:
        out[where]["failed_open"] = failed[where]
    out["standby_over_primary"] = {
        q: round(out["standby"][q] / out["primary"][q], 2) for q in ("p50_ms", "p95_ms", "p99_ms")
    }
    out["requests"] = len(requests) - 20
    out["standby_left_out"] = reads.down()
    return out


def read_your_writes(database: App, reads: replica_reads.ReadReplicas, rate: float, seconds: float) -> dict[str, Any]:
    """Writers at ``rate`` turns/s on the primary; a caller's read after its own write."""
    stop = threading.Event()
    written = [0]
    batch, writers = 10, 4
    per_writer_s = batch * writers / rate

    def write(index: int) -> None:
        tenant = f"bench-w{index}"
        n = 0
        next_at = time.monotonic()
        while not stop.is_set():
            with db.begin(database.engine) as tx:
                news = _turns(f"w{index}-{n}-{uuid.uuid4().hex[:6]}", batch)
                event_store.append(tx, tenant, f"w{index}-{n}", news, None)
            written[0] += batch
            n += 1
            next_at += per_writer_s
            time.sleep(max(0.0, next_at - time.monotonic()))

    threads = [threading.Thread(target=write, args=(i,), daemon=True) for i in range(writers)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    waits: list[float] = []
    fell_back = 0
    tenant = "bench-reader"
    time.sleep(1.0)  # the writers settle
    while time.monotonic() - started < seconds:
        with db.begin(database.engine) as tx:
            appended = event_store.append(tx, tenant, f"r-{uuid.uuid4().hex}", _turns(uuid.uuid4().hex, 1), None)
        position = appended.positions[0]
        waited = time.perf_counter()
        route = reads.route(tenant, after=position, wait_s=1.0)
        waits.append(time.perf_counter() - waited)
        fell_back += route.source == replica_reads.PRIMARY
        time.sleep(0.02)
    stop.set()
    elapsed = time.monotonic() - started
    for thread in threads:
        thread.join()
    out: dict[str, Any] = bench_context.quantiles(waits)
    out.update(
        reads=len(waits), fell_back_to_primary=fell_back, write_rate_turns_s=round(written[0] / elapsed), target=rate
    )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--full", action="store_true", help="bench_context's full size (100,000 facts)")
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--rate", type=float, default=500.0, help="turns/s written during the read-your-writes test")
    parser.add_argument("--seconds", type=float, default=20.0)
    args = parser.parse_args(argv)
    size = bench_context.FULL if args.full else bench_context.QUICK
    out: dict[str, Any] = {"size": "full" if args.full else "quick"}
    pair = Pair(small=False)  # the standby with the primary's memory settings
    try:
        url = db.ensure_database(pair.primary_url, f"bench_replica_{uuid.uuid4().hex[:8]}")
        embedder = MiniLmEmbedder(threads=1)
        main_tenant = bench_context.build(url, size, out, embedder)
        started = time.perf_counter()
        pair.start_standby()
        log(f"standby copied and started: {time.perf_counter() - started:.1f} s")
        database, _ = bench_context.connect(url, main_tenant.tenant_id, 5)
        standby_app = db.create_app_engine(db.app_url(pair.standby_url.set(database=url.database), None))
        reads = replica_reads.ReadReplicas(database.app_engine, (standby_app,), names=["standby"])
        search = vector_search(database, embedder)
        out["context"] = context_pair(database, reads, main_tenant, args.requests, search)
        log(f"context: {json.dumps(out['context'])}")
        out["read_your_writes"] = read_your_writes(database, reads, args.rate, args.seconds)
        log(f"read your writes: {json.dumps(out['read_your_writes'])}")
        standby_app.dispose()
        database.close()
    finally:
        pair.destroy()
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
