"""Benchmark of extraction: heuristic throughput through the whole worker, and the
delay from a turn being recorded to its facts being visible in the read models.

    python scripts/bench_extraction.py [--quick] [--batch-turns N]

1. Throughput: N realistic user turns (from tests.support.workload) are recorded, then
   timed: the worker reads them, extracts (heuristic), appends the results, and the
   read models (turns, facts, entities, relationships) project them. The embeddings
   projection is left out: it is measured in scripts/bench_context.py. Besides wall
   time, the CPU spent per turn: this process's (``time.process_time``: the worker,
   the extractor and the projectors' Python) and the PostgreSQL backends' serving its
   connections (from /proc, when the server runs on this machine). On a shared
   machine the CPU figures move much less than the wall-clock ones; the load average
   is printed with them.
2. Delay: with the worker loop and the projectors running live (woken by new turns,
   polling as a fallback), turns are recorded at 50 turns/s; for each, the time from
   the append's commit to a fact citing that turn being in the facts table.

With no DATABASE_URL, a private embedded server is started (and removed after), so
that no other process's open transaction holds the gap-safe readers back.
The last line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import ARRAY

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.support.workload: the workload generator

from tests.support.workload import generate  # noqa: E402

from memledger import bootstrap  # noqa: E402
from memledger.config import Settings  # noqa: E402
from memledger.events.catalogue import TurnRecorded  # noqa: E402
from memledger.projectors import registry, runner  # noqa: E402
from memledger.service.extraction_loop import WorkerLoop  # noqa: E402
from memledger.service.record import TurnInput, record_turns  # noqa: E402
from memledger.service.types import Scopes  # noqa: E402
from memledger.store import db, embedded_server, migrate  # noqa: E402

READ_MODELS = ("turns", "facts", "entities", "relationships")


class BackendCpu:
    """CPU seconds used so far by the PostgreSQL backends of an engine's connections,
    read from /proc; None when the server is not on this machine."""

    def __init__(self, engine: sa.engine.Engine) -> None:
        self.pids: set[int] = set()
        self.tick = os.sysconf("SC_CLK_TCK")
        sa.event.listen(engine, "connect", self._connected)

    def _connected(self, dbapi_connection: object, _record: object) -> None:
        self.pids.add(dbapi_connection.info.backend_pid)  # type: ignore[attr-defined]

    def seconds(self) -> float | None:
        total, seen = 0.0, False
        for pid in self.pids:
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue  # ended (its CPU is lost) or not on this machine
            total += (int(fields[11]) + int(fields[12])) / self.tick
            seen = True
        return total if seen else None


class Database:
    """A fresh benchmark database: on a private embedded server unless DATABASE_URL is set."""

    def __init__(self) -> None:
        settings = Settings()
        if settings.database_url:
            self.base, _ = bootstrap.server_url(settings)
            self.stop_server: Callable[[], None] = lambda: None
        else:
            self.base, self.stop_server = embedded_server.start_temporary(
                Path(tempfile.mkdtemp(prefix="bench-extraction-")) / "pg"
            )
        self.url = db.ensure_database(self.base.set(database="postgres"), f"bench_extraction_{uuid.uuid4().hex[:8]}")
        engine = db.create_engine(self.url, pool_size=8)
        self.cpu = BackendCpu(engine)
        migrate.upgrade(engine)
        for name in READ_MODELS:
            runner.install(engine, registry.by_name(name))
        self.database = bootstrap.assemble(settings, engine, self.url, not settings.database_url, engine)

    def close(self) -> None:
        self.database.close()
        drop(self.base, self.url)
        self.stop_server()


def drop(base: sa.engine.URL, url: sa.engine.URL) -> None:
    admin = sa.create_engine(base.set(database="postgres"), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        # text(): DDL on the benchmark's own database name.
        conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{url.database}" WITH (FORCE)'))
    admin.dispose()


def user_turns(count: int) -> list[TurnInput]:
    """Realistic user turns from the workload generator (its turns only)."""
    turns: list[TurnInput] = []
    for append in generate(seed=7, tenants=1, turns=count * 2, start=datetime(2026, 1, 1, tzinfo=UTC)):
        for new in append.events:
            event = new.event
            if isinstance(event, TurnRecorded) and event.role == "user":
                turns.append(TurnInput(role="user", text=event.text, scopes=event.scopes, turn_id=event.turn_id))
    return turns[:count]


def throughput(bench: Database, count: int, batch_turns: int | None) -> dict[str, Any]:
    database = bench.database
    turns = user_turns(count)
    for start in range(0, len(turns), 500):
        record_turns(database.engine, "bench", turns[start : start + 500])
    with database.engine.connect() as conn:
        # text(): a maintenance command. A live ledger has planner statistics (autovacuum);
        # a table loaded a moment ago has none, and the worker's gap-safe read of the next
        # turns would then be planned as a scan and sort of the whole backlog per batch.
        conn.execute(sa.text("ANALYZE events"))
        conn.commit()
    worker = bootstrap.build_worker(database)
    if batch_turns:
        worker.config.batch_turns = batch_turns
    worker.install()
    time.sleep(0.5)  # let the recording's backends settle before the clocks start
    marks = [(time.perf_counter(), time.process_time(), bench.cpu.seconds())]
    report = worker.drain()
    marks.append((time.perf_counter(), time.process_time(), bench.cpu.seconds()))
    for name in READ_MODELS:
        runner.catch_up(database.engine, registry.by_name(name))
    marks.append((time.perf_counter(), time.process_time(), bench.cpu.seconds()))

    def per_turn(stage: int, clock: int) -> float | None:
        before, after = marks[stage][clock], marks[stage + 1][clock]
        return None if before is None or after is None else round(1000 * (after - before) / report.turns, 3)

    cpu = [per_turn(0, 1), per_turn(0, 2), per_turn(1, 1), per_turn(1, 2)]
    return {
        # Turns per second of CPU, all of it: this process and the server's backends, worker
        # and projectors. On an idle machine with the stages one after another, wall time
        # approaches it (from below: round trips add waits); on a busy one, it does not move.
        "turns_per_cpu_s": None if None in cpu else round(1000 / sum(c for c in cpu if c is not None), 1),
        "turns": report.turns,
        "events": report.events,
        "worker_turns_per_s": report.turns / (marks[2][0] - marks[0][0]),
        "extract_append_turns_per_s": report.turns / (marks[1][0] - marks[0][0]),
        "project_s": marks[2][0] - marks[1][0],
        "batch_turns": worker.config.batch_turns,
        "worker_cpu_ms_per_turn": per_turn(0, 1),
        "worker_server_cpu_ms_per_turn": per_turn(0, 2),
        "project_cpu_ms_per_turn": per_turn(1, 1),
        "project_server_cpu_ms_per_turn": per_turn(1, 2),
    }


def delay(database: bootstrap.App, seconds: float, rate: float = 50.0) -> dict[str, float]:
    scopes = Scopes(session="live", project="nova", user="bench")
    engine = database.engine
    stop = threading.Event()
    loop = WorkerLoop(bootstrap.build_worker(database), interval_s=30.0, poll_interval_s=0.05)
    threads = [
        threading.Thread(target=loop.run, kwargs={"should_stop": stop.is_set}, daemon=True),
        threading.Thread(
            target=runner.follow,
            args=(engine, [registry.by_name(n) for n in READ_MODELS]),
            kwargs={"poll_interval": 0.05, "should_stop": stop.is_set},
            daemon=True,
        ),
    ]
    for thread in threads:
        thread.start()
    sent: dict[str, float] = {}
    seen: dict[str, float] = {}
    facts = sa.table("facts", sa.column("source_turns", ARRAY(sa.Text)), schema="proj_facts")

    def watch() -> None:
        while not stop.is_set() or len(seen) < len(sent):
            waiting = [t for t in list(sent) if t not in seen]
            if waiting:
                with engine.connect() as conn:
                    rows = conn.execute(
                        sa.select(sa.func.unnest(facts.c.source_turns)).where(facts.c.source_turns.overlap(waiting))
                    ).all()
                now = time.perf_counter()
                for (turn_id,) in rows:
                    if turn_id in sent and turn_id not in seen:
                        seen[turn_id] = now
            if stop.is_set() and time.perf_counter() - last_sent[0] > 10:
                return
            time.sleep(0.01)

    last_sent = [time.perf_counter()]
    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    n = 0
    begin = time.perf_counter()
    while time.perf_counter() - begin < seconds:
        turn_id = f"lag-{n}"
        text = f"Project Nova{n} uses PostgreSQL."
        turn = TurnInput(role="user", text=text, scopes=scopes, turn_id=turn_id)
        record_turns(engine, "bench-live", [turn])
        sent[turn_id] = last_sent[0] = time.perf_counter()
        n += 1
        time.sleep(max(0.0, begin + n / rate - time.perf_counter()))
    stop.set()
    watcher.join(15)
    loop.stop()
    for thread in threads:
        thread.join(15)
    delays = sorted((seen[t] - sent[t]) * 1000 for t in seen)
    return {
        "live_turns": n,
        "live_seen": len(seen),
        "delay_p50_ms": statistics.median(delays) if delays else float("nan"),
        "delay_p99_ms": delays[min(len(delays) - 1, int(len(delays) * 0.99))] if delays else float("nan"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a smaller run, under a minute")
    parser.add_argument("--batch-turns", type=int, default=None, help="turns per batch (default: the setting, 10)")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    bench = Database()
    try:
        count = 1000 if args.quick else 5000
        result = throughput(bench, count, args.batch_turns)
        print(
            f"worker throughput: {result['turns']} turns -> {result['events']} events in batches of "
            f"{result['batch_turns']}: {result['worker_turns_per_s']:.0f} turns/s through the whole worker "
            f"(extract+append alone {result['extract_append_turns_per_s']:.0f} turns/s; projecting took "
            f"{result['project_s']:.2f} s)"
        )
        print(
            f"CPU per turn: worker {result['worker_cpu_ms_per_turn']} ms here + "
            f"{result['worker_server_cpu_ms_per_turn']} ms in PostgreSQL; projecting "
            f"{result['project_cpu_ms_per_turn']} ms + {result['project_server_cpu_ms_per_turn']} ms "
            f"({result['turns_per_cpu_s']} turns per CPU-second in all)"
        )
        lag = delay(bench.database, 8 if args.quick else 20)
        print(
            f"delay at 50 turns/s: {lag['live_seen']}/{lag['live_turns']} turns seen; "
            f"p50 {lag['delay_p50_ms']:.0f} ms, p99 {lag['delay_p99_ms']:.0f} ms"
        )
        load = (round(load_before, 2), round(os.getloadavg()[0], 2))
        print(f"load average (1 min) before and after: {load[0]}, {load[1]} on {os.cpu_count()} cores")
        print(
            json.dumps(
                {
                    "worker_turns_per_s": round(result["worker_turns_per_s"], 1),
                    "extract_append_turns_per_s": round(result["extract_append_turns_per_s"], 1),
                    "turns": result["turns"],
                    "batch_turns": result["batch_turns"],
                    "turns_per_cpu_s": result["turns_per_cpu_s"],
                    "worker_cpu_ms_per_turn": result["worker_cpu_ms_per_turn"],
                    "worker_server_cpu_ms_per_turn": result["worker_server_cpu_ms_per_turn"],
                    "project_cpu_ms_per_turn": result["project_cpu_ms_per_turn"],
                    "project_server_cpu_ms_per_turn": result["project_server_cpu_ms_per_turn"],
                    "delay_p50_ms": round(lag["delay_p50_ms"], 1),
                    "delay_p99_ms": round(lag["delay_p99_ms"], 1),
                    "load_average": load,
                }
            )
        )
    finally:
        bench.close()


if __name__ == "__main__":
    main()
