"""Benchmark the projections: full rebuild, raw read-and-decode, and live lag.

    .venv/bin/python scripts/bench_projections.py [--quick] [--events N] [--profile FILE]

Creates a fresh database (``memledger_bench_<random>``) on the embedded server
under ``MEMLEDGER_HOME`` (or on ``DATABASE_URL``'s server if set), migrates it,
measures, and drops it at the end, so user data is never touched.

1. Load: ``tests.support.workload.generate`` (seed 20250101, 100 tenants) makes about
   ``--events`` events of mixed, realistic traffic (1,000,000; 50,000 with
   ``--quick``); ``workload.append_all`` appends them, 1,000 appends per
   transaction, from ``--loaders`` processes (each takes a share of the tenants,
   keeping every tenant's order). Then ``VACUUM ANALYZE events`` (what autovacuum
   would have done on a live system; it also sets the hint bits, so no phase pays
   for that).
2. Raw read and decode (``raw_read_decode_eps``): ``event_reads.read_all`` from
   the start in pages of 5,000, following ``page[-1].cursor``, with ``types`` =
   the union of the projectors' handled types, in one read-only transaction:
   the ledger's query, the rows over the socket, the decoding into ``Recorded``
   with msgspec; no projection work. Events read / seconds. Measured before and
   after the rebuild; the higher of the two counts (the stricter baseline).
   Also printed: the same reads done once per projector with its own types
   (``raw_per_projector_eps``), which is exactly what the four rebuilds read.
3. Rebuild (``rebuild_eps``): ``rebuild.rebuild`` for each projector of
   ``registry.all_projectors()``, one after the other (each builds its copy
   beside the live one, builds the indexes, catches up and swaps); the sum of the
   events each applied divided by the total time. An event handled by several
   projectors (``memory.reinforced`` and the like) counts once per projector, as
   it is read and applied once per projector.
4. Live lag: ``runner.follow`` over every projector in a separate process
   (``poll_interval=0.05``, as a deployment runs projectors), while this process
   appends more workload at 500 events/s for 20 s (10 s with ``--quick``), in a
   transaction every 20 ms holding the appends due. For each appended turn and
   fact, the lag is from the commit of its transaction (taken just after
   ``commit()`` returns) to the moment a poller thread first sees its row in the
   read model (``proj_turns.turns`` by turn id, ``proj_facts.facts`` by memory
   id; the poller runs one query per table every 5 ms). p50/p99 over all of them.

The last line printed is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import math
import multiprocessing as mp
import os
import platform
import signal
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import URL, Engine, make_url

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.support.workload: the workload generator

from tests.support import workload  # noqa: E402

from memledger import bootstrap  # noqa: E402
from memledger.config import Settings  # noqa: E402
from memledger.events import FactExtracted, NewEvent, TurnRecorded  # noqa: E402
from memledger.events.envelope import START  # noqa: E402
from memledger.projectors import rebuild, registry, runner  # noqa: E402
from memledger.projectors.base import Projector  # noqa: E402
from memledger.service import projections  # noqa: E402
from memledger.store import db, event_reads, event_store, migrate  # noqa: E402

TARGETS = {"rebuild_eps": 25_000.0, "rebuild_vs_raw": 0.3}
LAG_TARGET_P99_MS = 1000.0
SEED = 20250101
TENANTS = 100
START_AT = datetime(2025, 1, 6, 9, 0, tzinfo=UTC)
PAGE = 5000
LOAD_EVENTS_PER_APPEND = 250
LOAD_APPENDS_PER_TX = 20


def quantile_ms(samples: list[float], q: float) -> float:
    """The q-quantile (0..1) of samples in seconds, in milliseconds."""
    ordered = sorted(samples)
    return 1000.0 * ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def log(message: str) -> None:
    print(f"  ({message})", file=sys.stderr, flush=True)


# -- load ---------------------------------------------------------------------------------


def make_workload(events: int) -> list[workload.Append]:
    """About ``events`` events over ``TENANTS`` tenants (turns per tenant calibrated)."""
    sample = workload.generate(seed=SEED, tenants=4, turns=200, start=START_AT)
    per_turn = sum(len(a.events) for a in sample) / (4 * 200)
    turns = max(1, math.ceil(events / (TENANTS * per_turn)))
    return workload.generate(seed=SEED, tenants=TENANTS, turns=turns, start=START_AT)


_SHARED: list[workload.Append] = []  # what forked loaders inherit


# The append statement's check for reused event ids is planned as a hash join
# over every event id of the tenant (jsonb_to_recordset is estimated at 100
# rows), so an append costs time in proportion to the tenant's size: ~4 ms at
# 2,000 events per tenant, hours for this load. The loaders steer the planner to
# the index probe it should use; the store is another engineer's (reported).
_LOADER_OPTIONS = "-c enable_hashjoin=off -c enable_mergejoin=off"


def _loader(url: str, share: int, shares: int) -> None:
    engine = sa.create_engine(make_url(url), connect_args={"options": _LOADER_OPTIONS})
    mine = (a for a in _SHARED if hash_share(a.tenant_id, shares) == share)
    workload.append_all(engine, mine, batch_per_tx=LOAD_APPENDS_PER_TX)
    engine.dispose()


def coalesced(appends: Sequence[workload.Append], per_append: int) -> list[workload.Append]:
    """The same events, in the same order per tenant, in appends of up to
    ``per_append`` events (one stream per tenant and chunk): an append costs
    ~0.6 ms of Python (validation, encoding, two statements) whatever its size,
    so a million one-event appends would take most of an hour to load."""
    out: list[workload.Append] = []
    pending: dict[str, list[NewEvent]] = {}
    chunks: dict[str, int] = {}
    for append in appends:
        held = pending.setdefault(append.tenant_id, [])
        held.extend(append.events)
        if len(held) >= per_append:
            chunk = chunks[append.tenant_id] = chunks.get(append.tenant_id, 0) + 1
            out.append(workload.Append(append.tenant_id, f"bulk-load:{chunk}", held))
            pending[append.tenant_id] = []
    for tenant_id, held in pending.items():
        if held:
            chunk = chunks[tenant_id] = chunks.get(tenant_id, 0) + 1
            out.append(workload.Append(tenant_id, f"bulk-load:{chunk}", held))
    return out


def hash_share(tenant_id: str, shares: int) -> int:
    """A stable split of the tenants between loaders (by the tenant's number)."""
    return int(tenant_id.rsplit("t", 1)[1]) % shares


def load(url: URL, appends: list[workload.Append], loaders: int, *, streams: bool = False) -> float:
    """Append everything from ``loaders`` forked processes; return events/s.
    Unless ``streams``, the events are coalesced per tenant first (see ``coalesced``)."""
    _SHARED[:] = appends if streams else coalesced(appends, LOAD_EVENTS_PER_APPEND)
    ctx = mp.get_context("fork")  # the parent holds no connection when it forks
    count = sum(len(a.events) for a in appends)
    start = time.perf_counter()
    args = [(url.render_as_string(hide_password=False), i, loaders) for i in range(loaders)]
    procs = [ctx.Process(target=_loader, args=a) for a in args]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join()
        if proc.exitcode != 0:
            raise RuntimeError(f"a loader failed with exit code {proc.exitcode}")
    _SHARED.clear()
    return count / (time.perf_counter() - start)


def vacuum(url: URL) -> None:
    engine = sa.create_engine(url, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        # text(): maintenance command with no SQLAlchemy construct.
        conn.execute(sa.text("VACUUM (ANALYZE) events"))
    engine.dispose()


# -- raw read -----------------------------------------------------------------------------


# The four read models of DESIGN.md. Of the rest of ``registry.all_projectors()``,
# ``embeddings`` spends its time in the embedding model (a few hundred texts a
# second on this CPU; scripts/bench_embeddings.py measures it) and ``api_keys``
# handles no event of this workload; ``--projectors`` can name any.
READ_MODELS = ("turns", "facts", "entities", "relationships")


def projectors(names: Sequence[str]) -> list[Projector]:
    return [registry.by_name(name) for name in names]


def handled_types(chosen: Sequence[Projector]) -> list[str]:
    return sorted(set().union(*(p.handles for p in chosen)))


def read_everything(engine: Engine, types: Sequence[str]) -> tuple[int, float]:
    """(events, seconds) reading and decoding every event of ``types`` in pages of PAGE."""
    with engine.connect() as conn:
        total, after = 0, START
        start = time.perf_counter()
        while page := event_reads.read_all(conn, after=after, limit=PAGE, types=types):
            total += len(page)
            after = page[-1].cursor
        return total, time.perf_counter() - start


def raw_rates(engine: Engine, chosen: Sequence[Projector]) -> tuple[float, float, int]:
    """(union eps, per-projector eps, events of the union)."""
    count, seconds = read_everything(engine, handled_types(chosen))
    per_count, per_seconds = 0, 0.0
    for projector in chosen:
        n, s = read_everything(engine, sorted(projector.handles))
        per_count += n
        per_seconds += s
    return count / seconds, per_count / per_seconds, count


# -- rebuild ------------------------------------------------------------------------------


def rebuild_all(
    engine: Engine, chosen: Sequence[Projector], profile: str | None, jobs: int
) -> tuple[float, int, dict[str, float]]:
    """(events/s, events applied, seconds per projector) of rebuilding every projector,
    ``jobs`` at a time in separate processes (as ``memledger projections rebuild all --jobs``)."""
    applied, per = 0, {}
    start = time.perf_counter()
    if jobs > 1:
        for name, count, seconds in projections.rebuild_side_by_side(engine, [p.name for p in chosen], jobs):
            applied += count
            per[name] = seconds
            log(f"rebuild {name}: {seconds:.1f} s")
        return applied / (time.perf_counter() - start), applied, per
    profiler = cProfile.Profile() if profile else None
    for projector in chosen:
        began = time.perf_counter()
        if profiler:
            profiler.enable()
        applied += rebuild.rebuild(engine, projector)
        if profiler:
            profiler.disable()
        per[projector.name] = time.perf_counter() - began
        log(f"rebuild {projector.name}: {per[projector.name]:.1f} s")
    elapsed = time.perf_counter() - start
    if profiler and profile:
        profiler.dump_stats(profile)
    return applied / elapsed, applied, per


# -- live lag -----------------------------------------------------------------------------


def _follower(url: str, names: Sequence[str], stop: Any) -> None:
    engine = db.create_engine(make_url(url), pool_size=2)
    runner.follow(engine, projectors(names), poll_interval=0.05, should_stop=stop.is_set)
    engine.dispose()


@dataclass
class Watched:
    """Rows the poller waits for: key -> commit time (monotonic)."""

    turns: dict[tuple[str, str], float]
    facts: dict[tuple[str, str], float]
    lags: list[float]
    lock: threading.Lock


# text(): benchmark probes of the read models, by a list of keys sent as one JSON
# parameter (the read models' modules have no "which of these exist" query).
_SEEN_TURNS = sa.text(
    "SELECT t.tenant_id, t.turn_id FROM proj_turns.turns t"
    " JOIN jsonb_to_recordset(CAST(:keys AS jsonb)) AS k(a text, b text)"
    " ON t.tenant_id = k.a AND t.turn_id = k.b"
)
_SEEN_FACTS = sa.text(
    "SELECT f.tenant_id, f.memory_id FROM proj_facts.facts f"
    " JOIN jsonb_to_recordset(CAST(:keys AS jsonb)) AS k(a text, b text)"
    " ON f.tenant_id = k.a AND f.memory_id = k.b"
)


def _poll(engine: Engine, watched: Watched, stop: threading.Event) -> None:
    with engine.connect() as conn:
        while not stop.is_set():
            for query, pending in ((_SEEN_TURNS, watched.turns), (_SEEN_FACTS, watched.facts)):
                with watched.lock:
                    keys = [{"a": a, "b": b} for a, b in pending]
                if not keys:
                    continue
                found = conn.execute(query, {"keys": json.dumps(keys)}).all()
                conn.rollback()
                now = time.monotonic()
                with watched.lock:
                    for row in found:
                        committed = pending.pop((row[0], row[1]), None)
                        if committed is not None:
                            watched.lags.append(now - committed)
            time.sleep(0.005)


def live_lag(url: URL, names: Sequence[str], seconds: float, rate: float = 500.0) -> dict[str, Any]:
    """Append at ``rate`` events/s while the follower runs; lags of turns and facts."""
    more = workload.generate(
        seed=SEED + 1,
        tenants=20,
        turns=max(1, int(seconds * rate / 20 / 3) + 50),
        start=START_AT + timedelta(days=400),
    )
    ctx = mp.get_context("spawn")
    stop_follower = ctx.Event()
    follower = ctx.Process(
        target=_follower, args=(url.render_as_string(hide_password=False), list(names), stop_follower)
    )
    follower.start()
    engine = db.create_engine(url, pool_size=3)
    watched = Watched({}, {}, [], threading.Lock())
    stop = threading.Event()
    poller = threading.Thread(target=_poll, args=(engine, watched, stop), daemon=True)
    time.sleep(3.0)  # the follower starts and catches up with what is there
    poller.start()
    appended, tick = 0, 0.02
    items = iter(more)
    begin = time.monotonic()
    deadline = begin + seconds
    while time.monotonic() < deadline:
        due = int((time.monotonic() - begin + tick) * rate) - appended
        batch: list[workload.Append] = []
        while due > 0:
            nxt = next(items)
            batch.append(nxt)
            due -= len(nxt.events)
        with engine.begin() as tx:
            for a in batch:
                event_store.append(tx, a.tenant_id, a.stream_id, a.events, None)
        committed = time.monotonic()
        appended += sum(len(a.events) for a in batch)
        with watched.lock:
            for a in batch:
                for new in a.events:
                    if isinstance(new.event, TurnRecorded):
                        watched.turns[(a.tenant_id, new.event.turn_id)] = committed
                    elif isinstance(new.event, FactExtracted):
                        watched.facts.setdefault((a.tenant_id, new.event.memory_id), committed)
        pause = begin + (appended / rate) - time.monotonic()
        if pause > 0:
            time.sleep(pause)
    elapsed = time.monotonic() - begin
    drain_until = time.monotonic() + 10.0
    while (watched.turns or watched.facts) and time.monotonic() < drain_until:
        time.sleep(0.05)
    stop.set()
    poller.join()
    stop_follower.set()
    follower.join(timeout=30)
    engine.dispose()
    lost = len(watched.turns) + len(watched.facts)
    return {
        "live_append_eps": appended / elapsed,
        "live_lag_p50_ms": quantile_ms(watched.lags, 0.5),
        "live_lag_p99_ms": quantile_ms(watched.lags, 0.99),
        "live_lag_max_ms": quantile_ms(watched.lags, 1.0),
        "live_lag_samples": len(watched.lags),
        "live_lag_unseen": lost,
    }


# -- the run ------------------------------------------------------------------------------


@contextmanager
def bench_database() -> Iterator[URL]:
    """A fresh, migrated database on the embedded or DATABASE_URL server; dropped afterwards."""
    server, _ = bootstrap.server_url(Settings())
    name = f"memledger_bench_{uuid.uuid4().hex[:12]}"
    url = db.ensure_database(server, name)
    engine = db.create_engine(url, pool_size=1)
    try:
        migrate.upgrade(engine)
        engine.dispose()
        yield url
    finally:
        engine.dispose()
        db.drop_database(server, name)


def timed(label: str, fn: Callable[[], Any]) -> Any:
    start = time.perf_counter()
    value = fn()
    log(f"{label}: {time.perf_counter() - start:.1f} s")
    return value


def run(url: URL, args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {}
    generated: list[workload.Append] = timed("generate", lambda: make_workload(args.events))
    out["events"] = sum(len(a.events) for a in generated)
    out["appends"] = len(generated)
    out["load_eps"] = timed("load", lambda: load(url, generated, args.loaders))
    generated.clear()
    timed("vacuum", lambda: vacuum(url))
    engine = db.create_engine(url, pool_size=4)  # a rebuild reads and writes side by side
    with engine.connect() as conn:
        out["server_version"] = conn.execute(sa.text("SHOW server_version")).scalar()
    chosen = projectors(args.projectors)
    out["projectors"] = [p.name for p in chosen]
    for projector in chosen:
        runner.install(engine, projector)
    before = timed("raw read", lambda: raw_rates(engine, chosen))
    out["rebuild_eps"], out["rebuild_events"], per = timed(
        "rebuild", lambda: rebuild_all(engine, chosen, args.profile, args.jobs)
    )
    out["rebuild_seconds"] = {k: round(v, 2) for k, v in per.items()}
    after = timed("raw read again", lambda: raw_rates(engine, chosen))
    out["raw_read_decode_eps"] = max(before[0], after[0])
    out["raw_read_decode_eps_runs"] = [before[0], after[0]]
    out["raw_read_events"] = before[2]
    out["raw_per_projector_eps"] = max(before[1], after[1])
    out["rebuild_vs_raw"] = out["rebuild_eps"] / out["raw_read_decode_eps"]
    out["rebuild_vs_raw_per_projector"] = out["rebuild_eps"] / out["raw_per_projector_eps"]
    engine.dispose()
    if args.lag_seconds > 0:
        out.update(timed("live lag", lambda: live_lag(url, args.projectors, args.lag_seconds)))
    return out


def report(out: dict[str, Any], args: argparse.Namespace) -> None:
    print(f"\nmode: {'quick' if args.quick else 'full'}; server: PostgreSQL {out['server_version']}")
    print(
        f"events in the ledger: {out['events']:,} ({out['appends']:,} appends), "
        f"loaded at {out['load_eps']:,.0f} events/s"
    )
    print(
        f"raw read + decode, union of handled types, pages of {PAGE:,}: "
        f"{out['raw_read_decode_eps']:>10,.0f} events/s ({out['raw_read_events']:,} events)"
    )
    print(
        f"raw read + decode, once per projector (what the rebuilds read): "
        f"{out['raw_per_projector_eps']:>10,.0f} events/s"
    )
    print(
        f"full rebuild of every projection: {out['rebuild_eps']:>10,.0f} events/s "
        f"({out['rebuild_events']:,} events applied; {out['rebuild_seconds']})"
    )
    print(
        f"rebuild / raw read: {out['rebuild_vs_raw']:.2f}x "
        f"(per-projector reads: {out['rebuild_vs_raw_per_projector']:.2f}x)"
    )
    met: dict[str, bool] = {}
    for key, target in TARGETS.items():
        met[key] = out[key] >= target
        print(f"target {key} >= {target:g}: {out[key]:,.2f} {'met' if met[key] else 'MISSED'}")
    if "live_lag_p99_ms" in out:
        print(
            f"live lag at {out['live_append_eps']:,.0f} events/s: p50 {out['live_lag_p50_ms']:.0f} ms,"
            f" p99 {out['live_lag_p99_ms']:.0f} ms, max {out['live_lag_max_ms']:.0f} ms"
            f" ({out['live_lag_samples']} rows; {out['live_lag_unseen']} never seen)"
        )
        met["live_lag_p99_ms"] = out["live_lag_p99_ms"] < LAG_TARGET_P99_MS and not out["live_lag_unseen"]
        print(f"target live_lag_p99_ms < {LAG_TARGET_P99_MS:g}: {'met' if met['live_lag_p99_ms'] else 'MISSED'}")
    out["targets_met"] = met
    out["quick"] = args.quick
    out["cpus"] = os.cpu_count()
    out["machine"] = platform.machine()
    out["date"] = datetime.now(UTC).strftime("%Y-%m-%d")
    print(json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in out.items()}))


def _terminate(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)  # unwinds, so bench_database drops the database


def main(argv: list[str] | None = None) -> int:
    signal.signal(signal.SIGTERM, _terminate)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="50,000 events and 10 s of lag, under a minute")
    parser.add_argument("--events", type=int, default=None, help="events to load (default 1,000,000)")
    parser.add_argument("--loaders", type=int, default=2, help="appending processes for the load")
    parser.add_argument("--lag-seconds", type=float, default=None, help="live-lag phase length (0: skip)")
    parser.add_argument("--profile", default=None, help="write a cProfile of the rebuilds here (with --jobs 1)")
    parser.add_argument(
        "--jobs", type=int, default=os.cpu_count() or 1, help="projections rebuilt at once (default: one per core)"
    )
    parser.add_argument("--projectors", nargs="+", default=list(READ_MODELS), help="projections to rebuild and follow")
    args = parser.parse_args(argv)
    if args.events is None:
        args.events = 50_000 if args.quick else 1_000_000
    if args.lag_seconds is None:
        args.lag_seconds = 10.0 if args.quick else 20.0
    with bench_database() as url:
        print(f"database: {url.render_as_string(hide_password=True)}")
        out = run(url, args)
    report(out, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
