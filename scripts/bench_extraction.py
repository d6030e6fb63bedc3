"""Benchmark of extraction: heuristic throughput through the whole worker, and the
delay from a turn being recorded to its facts being visible in the read models.

    python scripts/bench_extraction.py [--quick]

1. Throughput: N realistic user turns (from memledger.workload) are recorded, then
   timed: the worker reads them, extracts (heuristic), appends the results, and the
   read models (turns, facts, entities, relationships) project them. The embeddings
   projection is left out: it is measured in scripts/bench_context.py.
2. Delay: with the worker loop and the projectors running live (woken by new turns,
   polling as a fallback), turns are recorded at 50 turns/s; for each, the time from
   the append's commit to a fact citing that turn being in the facts table.

The last line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import statistics
import threading
import time
import uuid
from datetime import UTC, datetime

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import ARRAY

from memledger import bootstrap
from memledger.config import Settings
from memledger.events.catalogue import TurnRecorded
from memledger.projectors import registry, runner
from memledger.service.extraction import WorkerLoop
from memledger.service.record import TurnInput, record_turns
from memledger.service.types import Scopes
from memledger.store import db, migrate
from memledger.workload import generate

READ_MODELS = ("turns", "facts", "entities", "relationships")


def fresh_database() -> tuple[bootstrap.Database, sa.engine.URL]:
    settings = Settings()
    base, _ = bootstrap.server_url(settings)
    name = f"bench_extraction_{uuid.uuid4().hex[:8]}"
    url = db.ensure_database(base.set(database="postgres"), name)
    engine = db.create_engine(url, pool_size=8)
    migrate.upgrade(engine)
    for name_ in READ_MODELS:
        runner.install(engine, registry.by_name(name_))
    return bootstrap.Database(engine=engine, url=url, embedded=not settings.database_url, settings=settings), base


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


def throughput(database: bootstrap.Database, count: int) -> dict[str, float]:
    turns = user_turns(count)
    for start in range(0, len(turns), 500):
        record_turns(database.engine, "bench", turns[start : start + 500])
    worker = bootstrap.build_worker(database)
    started = time.perf_counter()
    report = worker.drain()
    extracted = time.perf_counter()
    for name in READ_MODELS:
        runner.catch_up(database.engine, registry.by_name(name))
    done = time.perf_counter()
    return {
        "turns": report.turns,
        "events": report.events,
        "worker_turns_per_s": report.turns / (done - started),
        "extract_append_turns_per_s": report.turns / (extracted - started),
        "project_s": done - extracted,
        "batch_turns": worker.config.batch_turns,
    }


def delay(database: bootstrap.Database, seconds: float, rate: float = 50.0) -> dict[str, float]:
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
    args = parser.parse_args()
    database, base = fresh_database()
    try:
        count = 1000 if args.quick else 5000
        result = throughput(database, count)
        print(f"worker throughput: {result['turns']} turns -> {result['events']} events in batches of "
              f"{result['batch_turns']}: {result['worker_turns_per_s']:.0f} turns/s through the whole worker "
              f"(extract+append alone {result['extract_append_turns_per_s']:.0f} turns/s; projecting took "
              f"{result['project_s']:.2f} s)")
        lag = delay(database, 8 if args.quick else 20)
        print(f"delay at 50 turns/s: {lag['live_seen']}/{lag['live_turns']} turns seen; "
              f"p50 {lag['delay_p50_ms']:.0f} ms, p99 {lag['delay_p99_ms']:.0f} ms")
        print(json.dumps({
            "worker_turns_per_s": round(result["worker_turns_per_s"], 1),
            "extract_append_turns_per_s": round(result["extract_append_turns_per_s"], 1),
            "turns": result["turns"],
            "delay_p50_ms": round(lag["delay_p50_ms"], 1),
            "delay_p99_ms": round(lag["delay_p99_ms"], 1),
        }))
    finally:
        database.close()
        drop(base, database.url)


if __name__ == "__main__":
    main()
