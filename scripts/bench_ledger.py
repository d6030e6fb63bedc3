"""Benchmark the ledger's append and read paths against plain PostgreSQL.

    .venv/bin/python scripts/bench_ledger.py [--quick]

Creates a fresh database (``memledger_bench_<random>``) on the embedded server
under ``MEMLEDGER_HOME`` or ``--home DIR`` (or on ``DATABASE_URL``'s server if
set), migrates it, measures, and drops it at the end, so user data is never
touched. Other work on the same server shows in the figures: its WAL shares the
disk, and any long write transaction holds gap-safe reads back.

Events are ``TurnRecorded`` with 400 characters of text (payloads of ~590 bytes).
Measured, in one run:

- append events/s from one writer, 1, 100 and 1,000 events per call, one
  transaction per call;
- the raw rate of psycopg ``executemany`` of 1,000 rows per transaction into a
  bare table with the events table's columns and defaults but no index, key,
  constraint or trigger (``raw_executemany_eps``, the baseline of the ratio),
  and into a copy with the events table's six indexes (``raw_indexed_...``);
- 1, 4 and 16 writer processes, 1 event per call, each its own stream: events/s
  and p50/p99 latency of a call (transaction included); and 16 with
  ``notify=True``, while one connection LISTENs throughout;
- ``read_all`` from the start in pages of 1,000, decoding included;
- side by side with the ``eventsourcing`` library (its PostgreSQL recorder, through an
  ``Application``; the ``bench`` extra installs it), in a database of their own on the
  same server, the two taking turns round by round: appends of 10 events per
  transaction (one stream; one aggregate of 10 events) and of 100 (``append_many`` of
  10 streams of 10; ``save`` of 10 aggregates of 10), the same 400-character texts; then
  reading everything back, decoded, in pages of 1,000 (memledger: ``ledger_pages.read_pages``,
  its pages streamed from one statement per 20; the library: its notification pages). Without the library installed
  the script says so and measures memledger's side alone. ``--versus`` runs only this. memledger's
  append statements alone take their turn in each round too, in a database of their own,
  the rows encoded before the clock starts: the ratio no client-side work could pass.

The last line printed is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import functools
import json
import multiprocessing as mp
import os
import platform
import random
import statistics
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
import sqlalchemy as sa
from sqlalchemy.engine import URL, Engine, make_url

from memledger import bootstrap
from memledger.config import Settings
from memledger.events import Metadata, NewEvent, Scopes, TurnRecorded, codec
from memledger.events.envelope import START
from memledger.store import batch_append, db, direct, event_reads, event_store, ledger_pages, migrate
from memledger.store.batch_append import StreamAppend
from memledger.store.schema import events

TARGETS = {"batch1000_vs_raw": 0.5, "writers16_vs_1": 2.0, "read_all_eps": 50_000.0}
VERSUS_TARGETS = {"versus_append10_ratio": 2.0, "versus_append100_ratio": 2.0, "versus_read_ratio": 2.0}

_SAMPLE = (
    "the user prefers short answers and wants the deployment pipeline to run the integration "
    "tests before every merge into main because last week a migration broke staging for two "
    "days while the team was at the offsite in Lisbon so please remember that Alice owns the "
    "billing service and Bob reviews every change to the database schema we agreed to use "
    "PostgreSQL with pgvector instead of a separate vector store and to keep embeddings small "
    "the assistant suggested caching the retrieval results per session but the user said "
    "that stale memories are worse than slow ones and asked for a benchmark first"
)
_WORDS = _SAMPLE.split()


def turn_text(rng: random.Random, length: int = 400) -> str:
    """About ``length`` characters of plausible chat text, cut at a word."""
    words: list[str] = []
    size = 0
    while size < length:
        word = rng.choice(_WORDS)
        words.append(word)
        size += len(word) + 1
    text = " ".join(words)[:length]
    return text[0].upper() + text[1:] + "."


@functools.cache
def turn_texts() -> tuple[str, ...]:
    """256 texts to pick from: building one costs more than appending it locally."""
    rng = random.Random(42)
    return tuple(turn_text(rng) for _ in range(256))


def new_event(rng: random.Random, session: str) -> NewEvent:
    """A TurnRecorded event as an agent would append it."""
    return NewEvent(
        event=TurnRecorded(
            turn_id=f"turn-{uuid.uuid4().hex}",
            role=rng.choice(("user", "assistant")),
            text=rng.choice(turn_texts()),
            scopes=Scopes(session=session, project="phoenix", user="alice"),
        ),
        event_id=f"evt-{uuid.uuid4().hex}",
        occurred_at=datetime.now(UTC),
        metadata=Metadata(correlation_id=session, actor="bench"),
    )


def conninfo(url: URL) -> str:
    """A libpq connection string for psycopg from a SQLAlchemy URL."""
    return url.set(drivername="postgresql").render_as_string(hide_password=False)


def quantile_ms(samples: list[float], q: float) -> float:
    """The q-quantile (0..1) of samples in seconds, in milliseconds."""
    ordered = sorted(samples)
    return 1000.0 * ordered[min(len(ordered) - 1, int(q * len(ordered)))]


@dataclass(frozen=True)
class Plan:
    """How much work each phase does.

    The machine is shared and noisy, so the two sides of each ratio are measured
    in alternation, ``rounds`` times, and the median is reported.
    """

    batch1_seconds: float
    batch100_events: int
    batch1000_calls: int  # per side; the sides take turns, call by call
    writer_seconds: float  # per run of writers
    writer_rounds: int
    read_passes: int
    quick: bool


QUICK = Plan(2.0, 5_000, 12, 2.0, 2, 2, quick=True)
FULL = Plan(5.0, 20_000, 60, 5.0, 4, 3, quick=False)


@dataclass(frozen=True)
class VersusPlan:
    """The side-by-side run: ``rounds`` rounds, in each of which each library appends
    ``transactions`` transactions of 10 events, then of 100; then ``read_passes``
    passes of reading everything back, alternating."""

    rounds: int
    transactions10: int
    transactions100: int
    read_passes: int


VERSUS_QUICK = VersusPlan(4, 60, 12, 3)
VERSUS_FULL = VersusPlan(8, 150, 40, 5)


# -- one writer -------------------------------------------------------------------------------


class Stream:
    """A stream one writer appends to, tracking its version."""

    def __init__(self, engine: Engine, name: str, notify: bool = False) -> None:
        self.engine, self.name, self.version, self.notify = engine, name, 0, notify
        self.rng = random.Random(name)

    def batch(self, size: int) -> list[NewEvent]:
        return [new_event(self.rng, self.name) for _ in range(size)]

    def append(self, batch: list[NewEvent]) -> None:
        with self.engine.begin() as tx:
            result = event_store.append(tx, "bench", self.name, batch, self.version, notify=self.notify)
        self.version = result.stream_version


def append_rate(engine: Engine, size: int, events: int) -> float:
    """Events/s appending ``events`` in calls of ``size``, one transaction each."""
    stream = Stream(engine, f"batch{size}-{uuid.uuid4().hex[:8]}")
    batches = [stream.batch(size) for _ in range(events // size)]
    stream.append(stream.batch(size))  # warm up: statement caches, connection
    start = time.perf_counter()
    for batch in batches:
        stream.append(batch)
    return len(batches) * size / (time.perf_counter() - start)


def timed_append(stream: Stream, size: int = 1000) -> float:
    """Seconds to append ``size`` new events in one call (building them excluded)."""
    batch = stream.batch(size)
    start = time.perf_counter()
    stream.append(batch)
    return time.perf_counter() - start


def batch1000_durations(engine: Engine, url: URL, calls: int) -> dict[str, list[float]]:
    """Seconds per 1,000-event transaction of the ledger and of the two raw tables.

    The three take turns call by call, so a burst of other work on the machine
    (an autovacuum's WAL, another program's checkpoint) slows each alike.
    """
    stream = Stream(engine, f"batch1000-{uuid.uuid4().hex[:8]}")
    raw = RawTable(url, "bench_raw", indexed=False)
    raw_indexed = RawTable(url, "bench_raw_indexed", indexed=True)
    sides: dict[str, Callable[[], float]] = {
        "ledger": lambda: timed_append(stream),
        "raw": raw.timed_insert,
        "raw_indexed": raw_indexed.timed_insert,
    }
    durations: dict[str, list[float]] = {name: [] for name in sides}
    try:
        for side in sides.values():
            side()  # warm up: connections, statement caches
        for _ in range(calls):
            for name, side in sides.items():
                durations[name].append(side())
    finally:
        raw.close()
        raw_indexed.close()
    return durations


def append_rate_for(engine: Engine, seconds: float) -> float:
    """Events/s appending one event per call for ``seconds``."""
    stream = Stream(engine, f"batch1-{uuid.uuid4().hex[:8]}")
    stream.append(stream.batch(1))
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        stream.append(stream.batch(1))
        count += 1
    return count / (time.perf_counter() - start)


# -- raw PostgreSQL baseline ------------------------------------------------------------------

# The events table's columns and defaults (position identity, recorded_at now(),
# tx_id pg_current_xact_id()) and nothing else: no primary key, unique
# constraint, index or trigger.
_RAW_TABLE = """
CREATE TABLE {name} (
    tenant_id text NOT NULL,
    position bigint GENERATED BY DEFAULT AS IDENTITY,
    stream_id text NOT NULL,
    stream_version integer NOT NULL,
    event_id text NOT NULL,
    event_type text NOT NULL,
    schema_version smallint NOT NULL,
    payload jsonb NOT NULL,
    metadata jsonb NOT NULL DEFAULT '{{}}'::jsonb,
    occurred_at timestamptz NOT NULL,
    recorded_at timestamptz NOT NULL DEFAULT now(),
    tx_id xid8 NOT NULL DEFAULT pg_current_xact_id()
)
"""
# The same indexes as the events table (pk, two unique keys, three indexes).
_RAW_INDEXES = """
ALTER TABLE {name} ADD PRIMARY KEY (tenant_id, position);
ALTER TABLE {name} ADD UNIQUE (tenant_id, stream_id, stream_version);
ALTER TABLE {name} ADD UNIQUE (tenant_id, event_id);
CREATE INDEX ON {name} (tx_id, position);
CREATE INDEX ON {name} (tenant_id, tx_id, position);
CREATE INDEX ON {name} (position);
"""
_RAW_INSERT = (
    "INSERT INTO {name} (tenant_id, stream_id, stream_version, event_id, event_type,"
    " schema_version, payload, metadata, occurred_at)"
    " VALUES (%s, %s, %s, %s, %s, %s, %s::jsonb, %s::jsonb, %s)"
)


class RawTable:
    """A bare table written with plain psycopg ``executemany``."""

    def __init__(self, url: URL, name: str, *, indexed: bool) -> None:
        self.conn = psycopg.connect(conninfo(url))
        self.insert = _RAW_INSERT.format(name=name)
        self.conn.execute(_RAW_TABLE.format(name=name))
        if indexed:
            self.conn.execute(_RAW_INDEXES.format(name=name))
        self.conn.commit()
        self.rng = random.Random(name)
        self.version = 0

    def rows(self, size: int) -> list[tuple[Any, ...]]:
        """Rows encoded as the ledger would store them (payload and metadata JSON text)."""
        out = []
        for new in (new_event(self.rng, "raw") for _ in range(size)):
            self.version += 1
            out.append(
                (
                    "bench",
                    "raw",
                    self.version,
                    new.event_id,
                    "turn.recorded",
                    2,
                    codec.encode(new.event).decode(),
                    '{"correlation_id":"raw","actor":"bench"}',
                    new.occurred_at,
                )
            )
        return out

    def timed_insert(self, size: int = 1000) -> float:
        """Seconds to insert ``size`` new rows in one transaction (building them excluded)."""
        rows = self.rows(size)
        start = time.perf_counter()
        with self.conn.cursor() as cur:
            cur.executemany(self.insert, rows)
        self.conn.commit()
        return time.perf_counter() - start

    def close(self) -> None:
        self.conn.close()


# -- concurrent writers -----------------------------------------------------------------------


@dataclass(frozen=True)
class WriterResult:
    count: int
    started: float
    ended: float
    latencies: list[float]


@dataclass(frozen=True)
class Order:
    """Append from ``start`` (time.monotonic) for ``seconds``."""

    start: float
    seconds: float
    notify: bool


def _writer(url: str, orders: Any, results: Any) -> None:
    """One writer process, kept for the whole phase: on each order, one event per
    call (one transaction each) to its own stream until the time is up."""
    engine = db.create_engine(make_url(url), pool_size=1)
    stream = Stream(engine, f"writer-{uuid.uuid4().hex[:8]}")
    stream.append(stream.batch(1))  # connect and warm up before the first order
    results.put(None)
    while (order := orders.get()) is not None:
        stream.notify = order.notify
        time.sleep(max(0.0, order.start - time.monotonic()))
        latencies: list[float] = []
        started = now = time.monotonic()  # CLOCK_MONOTONIC: comparable across processes
        while now < order.start + order.seconds:
            batch = stream.batch(1)
            begin = time.monotonic()
            stream.append(batch)
            now = time.monotonic()
            latencies.append(now - begin)
        results.put(WriterResult(len(latencies), started, now, latencies))
    engine.dispose()


@dataclass(frozen=True)
class WritersRun:
    eps: float
    latencies: list[float]


class WriterPool:
    """Writer processes started once, so that no run pays for starting them."""

    def __init__(self, url: URL, size: int) -> None:
        ctx = mp.get_context("fork")  # the parent holds no connection when it forks (disposed)
        self.results: Any = ctx.Queue()
        self.orders: list[Any] = [ctx.Queue() for _ in range(size)]
        address = url.render_as_string(hide_password=False)
        self.procs = [ctx.Process(target=_writer, args=(address, orders, self.results)) for orders in self.orders]
        for proc in self.procs:
            proc.start()
        for _ in self.procs:
            self.results.get(timeout=120)

    def run(self, count: int, seconds: float, *, notify: bool = False) -> WritersRun:
        """``count`` of the writers appending one event per transaction for ``seconds``."""
        order = Order(time.monotonic() + 0.2, seconds, notify)
        for orders in self.orders[:count]:
            orders.put(order)
        done: list[WriterResult] = [self.results.get(timeout=seconds + 120) for _ in range(count)]
        elapsed = max(r.ended for r in done) - min(r.started for r in done)
        return WritersRun(sum(r.count for r in done) / elapsed, [lat for r in done for lat in r.latencies])

    def close(self) -> None:
        for orders in self.orders:
            orders.put(None)
        for proc in self.procs:
            proc.join(timeout=60)
            if proc.exitcode != 0:
                raise RuntimeError(f"a writer process failed with exit code {proc.exitcode}")


def writer_rounds(url: URL, plan: Plan, variants: dict[str, tuple[int, bool]]) -> dict[str, list[WritersRun]]:
    """Each variant (writer count, notify) once per round, in alternation."""
    pool = WriterPool(url, max(count for count, _ in variants.values()))
    runs: dict[str, list[WritersRun]] = {name: [] for name in variants}
    try:
        for _ in range(plan.writer_rounds):
            for name, (count, notify) in variants.items():
                runs[name].append(pool.run(count, plan.writer_seconds, notify=notify))
    finally:
        pool.close()
    return runs


def summarise(out: dict[str, Any], key: str, runs: list[WritersRun]) -> None:
    """Median events/s of the runs; p50 and p99 of all their latencies."""
    latencies = [lat for run in runs for lat in run.latencies]
    out[f"{key}_eps"] = statistics.median(run.eps for run in runs)
    out[f"{key}_p50_ms"] = quantile_ms(latencies, 0.5)
    out[f"{key}_p99_ms"] = quantile_ms(latencies, 0.99)


def paired_ratio(top: list[WritersRun], bottom: list[WritersRun]) -> float:
    """The median over rounds of top/bottom events/s."""
    return statistics.median(a.eps / b.eps for a, b in zip(top, bottom, strict=True))


@contextmanager
def listener(url: URL) -> Iterator[list[int]]:
    """A LISTEN connection drained by a thread, as a follower would hold one."""
    received = [0]
    stop = threading.Event()
    conn = psycopg.connect(conninfo(url), autocommit=True)
    conn.execute(f"LISTEN {event_store.NOTIFY_CHANNEL}")

    def drain() -> None:
        while not stop.is_set():
            for _ in conn.notifies(timeout=0.2):
                received[0] += 1

    thread = threading.Thread(target=drain, daemon=True)
    thread.start()
    try:
        yield received
    finally:
        stop.set()
        thread.join()
        conn.close()


# -- reading ----------------------------------------------------------------------------------


_VISIBLE = sa.select(
    sa.func.coalesce(sa.func.max(events.c.tx_id) < sa.func.pg_snapshot_xmin(sa.func.pg_current_snapshot()), True)
)


def settle(engine: Engine, timeout: float = 180.0) -> None:
    """Wait until every event is visible to gap-safe reads.

    Any write transaction running anywhere on the server holds read_all back,
    and the embedded server may be shared with other work.
    """
    deadline = time.monotonic() + timeout
    with engine.connect() as conn:
        while not conn.execute(_VISIBLE).scalar_one():
            if time.monotonic() > deadline:
                raise RuntimeError(
                    "a write transaction elsewhere on the server held gap-safe reads back for"
                    f" {timeout:.0f} s; run on a server of its own (--home DIR, or DATABASE_URL)"
                )
            conn.rollback()
            time.sleep(0.05)


def read_rate(engine: Engine) -> tuple[float, float, int]:
    """Events/s reading the whole ledger with read_all, pages of 1,000, decoded;
    this process's CPU time per event (µs), which a busy machine does not inflate
    as much; and the number of events."""
    with engine.connect() as conn:
        expected = conn.execute(sa.select(sa.func.count()).select_from(events)).scalar_one()
        event_reads.read_all(conn, limit=10)  # warm up
        conn.rollback()
        total, after = 0, START
        start, cpu = time.perf_counter(), time.process_time()
        while page := event_reads.read_all(conn, after=after, limit=1000):
            total += len(page)
            after = page[-1].cursor
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    if total != expected:
        raise RuntimeError(f"read_all returned {total} events of {expected}")
    return total / elapsed, cpu * 1e6 / total, total


# -- side by side with the eventsourcing library ----------------------------------------------


def new_streams(rng: random.Random, streams: int) -> list[StreamAppend]:
    """``streams`` new streams of 10 events each."""
    appends = []
    for _ in range(streams):
        session = f"conversation-{uuid.uuid4().hex}"
        appends.append(StreamAppend("bench", session, [new_event(rng, session) for _ in range(10)], 0))
    return appends


class LedgerSide:
    """memledger's side: 10 events per transaction to one stream (``append``); 100 as
    10 streams of 10 (``append_many``), as the other side saves 10 aggregates."""

    name = "memledger"

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.rng = random.Random("ledger-side")

    def prepare(self, streams: int) -> list[StreamAppend]:
        return new_streams(self.rng, streams)

    def write(self, appends: list[StreamAppend]) -> None:
        with self.engine.begin() as tx:
            if len(appends) == 1:
                one = appends[0]
                event_store.append(tx, one.tenant_id, one.stream_id, one.events, one.expected_version)
            else:
                batch_append.append_many(tx, appends)

    def read_all(self) -> int:
        with self.engine.connect() as conn:
            return sum(len(page) for page in ledger_pages.read_pages(conn, page=1000))


class StatementsSide:
    """memledger's own statements and nothing else, in a database of its own: the same
    appends as ``LedgerSide``'s, checked and encoded before the clock starts, sent on
    the driver (the lock and the insert in one pipeline, then the commit). Its time is
    the server's part and the round trips: the library's time over it bounds the ratio
    that any work on the client side could reach."""

    name = "statements"

    def __init__(self, url: URL) -> None:
        self.conn = psycopg.connect(conninfo(url))
        self.rng = random.Random("statements-side")
        dialect = sa.create_engine(url).dialect
        self.small = True  # planned on each call, as ``direct.locked`` does while the ledger is small
        one = (event_store._STREAM_LOCK, event_store._INSERT)
        many = (batch_append._STREAMS_LOCK, batch_append._INSERT_MANY)
        self.one = [direct.driver_statement(statement, dialect) for statement in one]
        self.many = [direct.driver_statement(statement, dialect) for statement in many]
        self.one_small = direct.driver_statement(direct._planning_each_call(one[0]), dialect)
        self.many_small = direct.driver_statement(direct._planning_each_call(many[0]), dialect)

    def prepare(self, streams: int) -> tuple[int, dict[str, Any], dict[str, Any]]:
        appends = new_streams(self.rng, streams)
        locks = {"tenants": [a.tenant_id for a in appends], "streams": [a.stream_id for a in appends]}
        if streams > 1:
            return streams, locks, {"parts": batch_append.prepare(appends).batch}
        (one,) = appends
        rows = event_store.prepare_rows(one.events, event_store.DEFAULT_MAX_PAYLOAD_BYTES)
        keys = {"tenant_id": one.tenant_id, "stream_id": one.stream_id}
        return 1, keys, {**keys, "expected": 0, "batch": event_store._batch_encoder.encode(rows).decode()}

    def write(self, prepared: tuple[int, dict[str, Any], dict[str, Any]]) -> None:
        streams, lock_params, insert_params = prepared
        (lock, lock_fixed), (insert, insert_fixed) = self.many if streams > 1 else self.one
        if self.small:
            lock, lock_fixed = self.many_small if streams > 1 else self.one_small
        with self.conn.cursor() as first, self.conn.cursor() as second:
            with self.conn.pipeline():
                first.execute(lock, {**lock_fixed, **lock_params}, prepare=True)
                second.execute(insert, {**insert_fixed, **insert_params}, prepare=True)
            positions = [row[0] for row in second.fetchall()]
        self.conn.commit()
        self.small = self.small and max(positions) < direct.PREPARE_FROM_POSITION

    def close(self) -> None:
        self.conn.close()


class LibrarySide:
    """The ``eventsourcing`` library's side: an Application on its PostgreSQL recorder
    (stdlib JSON), saving aggregates of 10 events (created, then 9 said). Each said
    text is lengthened so that a stored event is as long as memledger's (``payload_bytes``):
    the issue compares the two at the same payload size."""

    name = "eventsourcing"

    def __init__(self, url: URL, payload_bytes: int) -> None:
        from eventsourcing.application import Application
        from eventsourcing.domain import Aggregate, event

        class Conversation(Aggregate):
            @event("Said")
            def say(self, role: str, text: str) -> None:
                """A turn of the conversation."""

        self.conversation = Conversation
        self.app = Application(env=eventsourcing_env(url))
        self.rng = random.Random("library-side")
        self.padding = ""
        self.padding = " " + turn_text(random.Random(7), max(0, payload_bytes - self.said_bytes() - 1))[:-1].lower()

    def said_bytes(self) -> int:
        """The mean length of a said event's stored state as ``prepare`` makes them now."""
        (conversation,) = self.prepare(1)
        states = [self.app.mapper.to_stored_event(e).state for e in conversation.collect_events()]
        said = [len(state) for state in states[1:]]
        return round(statistics.mean(said))

    def prepare(self, aggregates: int) -> list[Any]:
        """``aggregates`` new aggregates of 10 pending events each."""
        made = []
        for _ in range(aggregates):
            conversation = self.conversation()
            for _ in range(9):
                conversation.say(self.rng.choice(("user", "assistant")), self.rng.choice(turn_texts()) + self.padding)
            made.append(conversation)
        return made

    def write(self, aggregates: list[Any]) -> None:
        self.app.save(*aggregates)

    def read_all(self) -> int:
        recorder, mapper = self.app.recorder, self.app.mapper
        total, start = 0, 1
        while page := recorder.select_notifications(start=start, limit=1000):
            for notification in page:
                mapper.to_domain_event(notification)
            total += len(page)
            start = page[-1].id + 1
        return total

    def payload_bytes(self) -> int:
        page = self.app.recorder.select_notifications(start=1, limit=100)
        said = [len(n.state) for n in page if n.topic.endswith("Said")]
        return round(statistics.mean(said)) if said else 0

    def close(self) -> None:
        self.app.close()


def ledger_payload_bytes() -> int:
    """How long a benchmark event's JSON is, its private part included."""
    return len(codec.encode(new_event(random.Random(0), "session-0000").event))


def eventsourcing_env(url: URL) -> dict[str, str]:
    """The library's settings for the database at ``url`` (host, or a unix socket directory)."""
    host = url.host or str(url.query.get("host") or "localhost")
    return {
        "PERSISTENCE_MODULE": "eventsourcing.postgres",
        "POSTGRES_DBNAME": str(url.database),
        "POSTGRES_HOST": host,
        "POSTGRES_PORT": str(url.port or 5432),
        "POSTGRES_USER": str(url.username or "postgres"),
        "POSTGRES_PASSWORD": str(url.password or ""),
        "CREATE_TABLE": "y",
    }


def eventsourcing_missing() -> str | None:
    """Why the library cannot be used, or None if it can."""
    try:
        import eventsourcing.postgres  # noqa: F401
    except ImportError as e:
        return f"{e} (install the bench extra: pip install -e '.[bench]')"
    return None


def versus(url: URL, plan: VersusPlan) -> dict[str, Any]:
    """Both sides in turn, round by round, on the database at ``url``: events/s of
    appends of 10 and of 100 per transaction and of reading everything back; the ratios
    (memledger / eventsourcing) are medians of the rounds' ratios. memledger's statements
    alone (``StatementsSide``) take their turn in each round of appends too."""
    engine = db.create_engine(url, pool_size=1)
    sides: list[Any] = [LedgerSide(engine)]
    missing = eventsourcing_missing()
    if missing is None:
        sides.append(LibrarySide(url, ledger_payload_bytes()))
    else:
        print(f"eventsourcing is not installed: {missing}; measuring memledger alone")
    floor = CommitFloor(url)
    try:
        with database_on(url.set(database="postgres")) as apart:
            statements = StatementsSide(apart)
            try:
                rates = versus_appends([*sides, statements], plan, floor)
            finally:
                statements.close()
        settle(engine)
        rates["read"], total = versus_reads(sides, plan)
        out = versus_figures(rates, [side.name for side in sides])
        out["versus_events_each"] = total
        out["versus_commit_floor_us"] = statistics.median(floor.seconds) * 1e6
        if missing is not None:
            return out
        for key, per_transaction in (("append10", 10), ("append100", 100)):
            theirs = per_transaction / out[f"versus_{key}_eventsourcing_eps"]
            out[f"versus_{key}_ceiling"] = theirs / statistics.median(floor.seconds)
            pairs = zip(rates[key]["statements"], rates[key]["eventsourcing"], strict=True)
            out[f"versus_{key}_statements_ratio"] = statistics.median(ours / lib for ours, lib in pairs)
        out["versus_library_payload_bytes"] = sides[1].payload_bytes()
        sides[1].close()
    finally:
        floor.close()
        engine.dispose()
    return out


class CommitFloor:
    """What any durable write transaction costs on this server, whatever it writes: a
    one-row insert into a bare table and its commit (the WAL flushed), timed between
    the rounds. No append of either side can take less, so the library's time per
    transaction over this bounds the ratio any memledger could reach."""

    def __init__(self, url: URL) -> None:
        self.conn = psycopg.connect(conninfo(url))
        self.conn.execute("CREATE TABLE bench_commit_floor (n integer)")
        self.conn.commit()
        self.seconds: list[float] = []

    def time(self, transactions: int) -> None:
        for n in range(transactions):
            start = time.perf_counter()
            self.conn.execute("INSERT INTO bench_commit_floor VALUES (%s)", (n,))
            self.conn.commit()
            self.seconds.append(time.perf_counter() - start)

    def close(self) -> None:
        self.conn.close()


def versus_appends(sides: list[Any], plan: VersusPlan, floor: CommitFloor) -> dict[str, dict[str, list[float]]]:
    """Events/s of each round, by kind of append and side; the sides take turns, and
    the commit floor is timed after each round."""
    rates: dict[str, dict[str, list[float]]] = {"append10": {}, "append100": {}}
    for side in sides:  # warm up: connections, statement caches, tables
        side.write(side.prepare(1))
    for _ in range(plan.rounds):
        floor.time(plan.transactions100)
        for key, per, count in (("append10", 1, plan.transactions10), ("append100", 10, plan.transactions100)):
            for side in sides:
                batches = [side.prepare(per) for _ in range(count)]
                start = time.perf_counter()
                for batch in batches:
                    side.write(batch)
                rates[key].setdefault(side.name, []).append(count * per * 10 / (time.perf_counter() - start))
    return rates


def versus_reads(sides: list[Any], plan: VersusPlan) -> tuple[dict[str, list[float]], int]:
    """Events/s of each pass reading everything back, by side; and how many events each read."""
    rates: dict[str, list[float]] = {}
    counts = set()
    for _ in range(plan.read_passes):
        for side in sides:
            start = time.perf_counter()
            total = side.read_all()
            rates.setdefault(side.name, []).append(total / (time.perf_counter() - start))
            counts.add(total)
    if len(counts) != 1:
        raise RuntimeError(f"the sides read different numbers of events: {sorted(counts)}")
    return rates, counts.pop()


def versus_figures(rates: dict[str, dict[str, list[float]]], names: list[str]) -> dict[str, Any]:
    """Medians by side, and the median of the rounds' ratios when both sides ran."""
    out: dict[str, Any] = {"versus_library": names[1] if len(names) > 1 else None, "versus_rounds": _rounded(rates)}
    for key, by_side in rates.items():
        for name, values in by_side.items():
            out[f"versus_{key}_{name}_eps"] = statistics.median(values)
        if len(names) > 1:
            pairs = zip(by_side[names[0]], by_side[names[1]], strict=True)
            out[f"versus_{key}_ratio"] = statistics.median(ours / theirs for ours, theirs in pairs)
    return out


def report_versus(out: dict[str, Any]) -> None:
    """The side-by-side table, and whether the ratios meet their targets."""
    library = out.get("versus_library")
    print(
        f"\nside by side ({out['versus_events_each']:,} events each; memledger payloads"
        f" {out['payload_bytes']} bytes, eventsourcing {out.get('versus_library_payload_bytes', '-')}):"
    )
    print(f"{'':<44} {'memledger':>11} {'eventsourcing':>14} {'ratio':>7}")
    for label, key in (
        ("append, 10 events per transaction", "append10"),
        ("append, 100 events per transaction", "append100"),
        ("read everything back, decoded, pages of 1,000", "read"),
    ):
        ours = out[f"versus_{key}_memledger_eps"]
        if library is None:
            print(f"{label:<44} {ours:>11,.0f} {'-':>14} {'-':>7}")
            continue
        theirs, ratio = out[f"versus_{key}_eventsourcing_eps"], out[f"versus_{key}_ratio"]
        print(f"{label:<44} {ours:>11,.0f} {theirs:>14,.0f} {ratio:>6.2f}x")
    floor = out["versus_commit_floor_us"]
    print(f"a durable one-row write transaction (the floor of any append): {floor:,.0f} us")
    if library is not None:
        for key, per_transaction in (("append10", 10), ("append100", 100)):
            theirs = per_transaction / out[f"versus_{key}_eventsourcing_eps"] * 1e6
            print(
                f"{key}: eventsourcing {theirs:,.0f} us per transaction, so at most"
                f" {out[f'versus_{key}_ceiling']:.2f}x for an append that cost nothing but the floor;"
                f" memledger's statements alone, encoded beforehand: {out[f'versus_{key}_statements_ratio']:.2f}x"
            )
        met = {key: out[key] >= target for key, target in VERSUS_TARGETS.items()}
        for key, target in VERSUS_TARGETS.items():
            print(f"target {key} >= {target:g}: {out[key]:,.2f} {'met' if met[key] else 'MISSED'}")
        out["versus_targets_met"] = met


# -- the run ----------------------------------------------------------------------------------


@contextmanager
def bench_database(home: Path | None = None) -> Iterator[URL]:
    """A fresh, migrated database on the embedded or DATABASE_URL server; dropped afterwards."""
    settings = Settings() if home is None else Settings(home=home)
    server, _ = bootstrap.server_url(settings)
    with database_on(server) as url:
        yield url


@contextmanager
def database_on(server: URL) -> Iterator[URL]:
    """A fresh, migrated database on ``server``; dropped afterwards."""
    name = f"memledger_bench_{uuid.uuid4().hex[:12]}"
    url = db.ensure_database(server, name)
    engine = db.create_engine(url, pool_size=1)
    try:
        migrate.upgrade(engine)
        engine.dispose()
        yield url
    finally:
        engine.dispose()
        admin = sa.create_engine(server.set(database="postgres"), isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            quoted = admin.dialect.identifier_preparer.quote(name)
            # text(): DDL on a database name, quoted above.
            conn.execute(sa.text(f"DROP DATABASE IF EXISTS {quoted} WITH (FORCE)"))
        admin.dispose()


def timed(label: str, fn: Callable[[], Any]) -> Any:
    start = time.perf_counter()
    value = fn()
    print(f"  ({label}: {time.perf_counter() - start:.1f} s)", file=sys.stderr)
    return value


def load_average() -> float | None:
    """The 1-minute load average (Linux), to show how busy the machine was."""
    try:
        return float(Path("/proc/loadavg").read_text(encoding="ascii").split()[0])
    except OSError:
        return None


def run(url: URL, plan: Plan) -> dict[str, Any]:
    out: dict[str, Any] = {"load_average_start": load_average()}
    engine = db.create_engine(url, pool_size=1)
    with engine.connect() as conn:
        out["server_version"] = conn.execute(sa.text("SHOW server_version")).scalar()
    sample = codec.encode(new_event(random.Random(0), "session-0000").event)
    out["payload_bytes"] = len(sample)
    print(f"payload: {len(sample)} bytes (TurnRecorded, 400 characters of text)")

    out["append_batch1_eps"] = timed("batch 1", lambda: append_rate_for(engine, plan.batch1_seconds))
    out["append_batch100_eps"] = timed("batch 100", lambda: append_rate(engine, 100, plan.batch100_events))
    durations = timed("batch 1,000", lambda: batch1000_durations(engine, url, plan.batch1000_calls))
    engine.dispose()
    # Rates from the median call, robust to bursts; the mean-based rates are kept too.
    medians = {name: statistics.median(times) for name, times in durations.items()}
    out["append_batch1000_eps"] = 1000 / medians["ledger"]
    out["raw_executemany_eps"] = 1000 / medians["raw"]
    out["raw_indexed_executemany_eps"] = 1000 / medians["raw_indexed"]
    out["batch1000_vs_raw"] = medians["raw"] / medians["ledger"]
    out["batch1000_vs_raw_indexed"] = medians["raw_indexed"] / medians["ledger"]
    out["batch1000_mean_eps"] = {name: 1000 * len(times) / sum(times) for name, times in durations.items()}

    # One listener drains notifications throughout, as a follower would; only
    # the notify=True variant sends any.
    variants = {f"writers{n}": (n, False) for n in (1, 4, 16)}
    variants["writers16_notify"] = (16, True)
    with listener(url) as received:
        runs = timed("writers", lambda: writer_rounds(url, plan, variants))
        time.sleep(0.5)
    for key, key_runs in runs.items():
        summarise(out, key, key_runs)
    out["writers16_vs_1"] = paired_ratio(runs["writers16"], runs["writers1"])
    out["notify_vs_no_notify"] = paired_ratio(runs["writers16_notify"], runs["writers16"])
    out["notifications_received"] = received[0]
    out["rounds_writers"] = {key: [run.eps for run in key_runs] for key, key_runs in runs.items()}

    engine = db.create_engine(url, pool_size=1)
    settle(engine)
    reads = [timed("read_all", lambda: read_rate(engine)) for _ in range(plan.read_passes)]
    engine.dispose()
    out["read_all_eps"] = statistics.median(rate for rate, _, _ in reads)
    out["read_all_client_cpu_us"] = statistics.median(cpu for _, cpu, _ in reads)
    out["read_all_events"] = reads[0][2]
    out["load_average_end"] = load_average()
    return out


def _rounded(value: Any) -> Any:
    """Floats to 3 decimals, inside dicts and lists too."""
    if isinstance(value, float):
        return round(value, 3)
    if isinstance(value, dict):
        return {key: _rounded(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_rounded(item) for item in value]
    return value


def report(out: dict[str, Any], plan: Plan) -> None:
    rows = [
        ("append, 1 event per call", "append_batch1_eps"),
        ("append, 100 events per call", "append_batch100_eps"),
        ("append, 1,000 events per call", "append_batch1000_eps"),
        ("raw executemany, 1,000 rows/tx, bare table (no index)", "raw_executemany_eps"),
        ("raw executemany, 1,000 rows/tx, events' 6 indexes", "raw_indexed_executemany_eps"),
        ("1 writer process, 1 event per call", "writers1_eps"),
        ("4 writer processes, 1 event per call", "writers4_eps"),
        ("16 writer processes, 1 event per call", "writers16_eps"),
        ("16 writer processes, notify=True", "writers16_notify_eps"),
        ("read_all, pages of 1,000, decoded", "read_all_eps"),
    ]
    print(
        f"\nmode: {'quick' if plan.quick else 'full'}; server: PostgreSQL {out['server_version']};"
        f" {os.cpu_count()} CPUs; load average {out['load_average_start']} -> {out['load_average_end']}"
    )
    print(
        "raw baseline: plain psycopg executemany, 1,000 rows per transaction, into a table with the"
        " events table's 12 columns and defaults (identity position, now(), pg_current_xact_id())"
        " and no primary key, constraint, index or trigger; 'indexed': the same table plus the"
        " events table's 6 indexes (primary key, 2 unique, 3 plain). 1,000-event rates are from"
        " the median call."
    )
    for label, key in rows:
        print(f"{label:<58} {out[key]:>10,.0f} events/s")
    for count in (1, 4, 16):
        print(
            f"latency, {count:>2} writers: p50 {out[f'writers{count}_p50_ms']:.2f} ms,"
            f" p99 {out[f'writers{count}_p99_ms']:.2f} ms"
        )
    print(
        f"latency, 16 writers, notify=True: p50 {out['writers16_notify_p50_ms']:.2f} ms,"
        f" p99 {out['writers16_notify_p99_ms']:.2f} ms"
    )
    print(f"read_all: {out['read_all_client_cpu_us']:.1f} µs of this process's CPU per event")
    print(f"notify=True / notify=False (16 writers): {out['notify_vs_no_notify']:.2f}x")
    print(f"batch 1,000 vs raw (indexed table): {out['batch1000_vs_raw_indexed']:.2f}x")
    met = {}
    for key, target in TARGETS.items():
        met[key] = out[key] >= target
        print(f"target {key} >= {target:g}: {out[key]:,.2f} {'met' if met[key] else 'MISSED'}")
    out["targets_met"] = met
    out["quick"] = plan.quick
    out["cpus"] = os.cpu_count()
    out["machine"] = platform.machine()
    out["date"] = datetime.now(UTC).strftime("%Y-%m-%d")
    print(json.dumps(_rounded(out)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="a smaller run, under a minute")
    parser.add_argument(
        "--home",
        type=Path,
        help="use (and start if needed) the embedded server under this directory instead of"
        " MEMLEDGER_HOME's, e.g. to keep other work on the machine's server out of the figures",
    )
    parser.add_argument(
        "--versus",
        action="store_true",
        help="only the side-by-side run with the eventsourcing library (the bench extra installs it)",
    )
    args = parser.parse_args(argv)
    plan = QUICK if args.quick else FULL
    versus_plan = VERSUS_QUICK if args.quick else VERSUS_FULL
    out: dict[str, Any] = {}
    if not args.versus:
        with bench_database(args.home) as url:
            print(f"database: {url.render_as_string(hide_password=True)}")
            out = run(url, plan)
    with bench_database(args.home) as url:
        print("side by side with eventsourcing, in a database of their own", file=sys.stderr)
        out.update(timed("versus", lambda: versus(url, versus_plan)))
    out.setdefault("payload_bytes", ledger_payload_bytes())
    if args.versus:
        out["load_average_end"] = load_average()
        report_versus(out)
        print(json.dumps(_rounded(out)))
    else:
        report_versus(out)
        report(out, plan)
    return 0


if __name__ == "__main__":
    sys.exit(main())
