"""Gap-safe reading under real concurrency (PERFORMANCE-NOTES.md, "Reading gap-safe").

Writer *processes* append for a few seconds, sleeping inside their transactions
so that they commit out of order, while this process tails the ledger with
``read_all(after=cursor)``. The tail must see every committed event exactly
once, in the same order as any later re-read.

Each read of the tail runs in one REPEATABLE READ snapshot together with a
probe of what a naive ``WHERE position > last`` reader would have seen in that
same snapshot. That probe proves the workload really produced the gaps a
position cursor skips, so the test cannot pass by accident on a quiet ledger.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import random
import time
import uuid
from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from memledger.events.catalogue import Scopes, TurnRecorded
from memledger.events.envelope import START, Cursor, NewEvent, Recorded
from memledger.store import db, event_reads, event_store

if TYPE_CHECKING:
    from tests.conftest import TestDatabase as SessionDatabase

SPAWN = multiprocessing.get_context("spawn")
WRITERS = 4
RUN_SECONDS = 3.0
HOLD_AT_SECONDS = 0.8
HOLD_SECONDS = 1.0
SHARED_STREAM = "shared"


@dataclass(frozen=True)
class WriterPlan:
    """What one writer process does. Plain data: it crosses the process boundary."""

    index: int
    url: str
    tenant: str
    seconds: float
    log: str
    seed: int
    hold_ids: tuple[str, ...] = ()


def _turn(text: str, event_id: str | None = None) -> NewEvent:
    """A turn to append. Built here, not with ``tests.conftest.turn_event``, so that
    the writer processes need not import pytest's conftest (it takes seconds to
    spawn four of them as it is)."""
    return NewEvent(
        event=TurnRecorded(turn_id=uuid.uuid4().hex, role="user", text=text, scopes=Scopes(session="gap")),
        event_id=event_id or f"evt-{uuid.uuid4().hex}",
        occurred_at=datetime.now(UTC),
    )


def _log_commit(log: Any, event_ids: list[str]) -> None:
    log.write(" ".join(event_ids) + "\n")
    log.flush()


def _hold(engine: Engine, plan: WriterPlan, log: Any) -> None:
    """One batch whose transaction stays open for HOLD_SECONDS after its insert."""
    batch = [_turn(f"held {k}", event_id) for k, event_id in enumerate(plan.hold_ids)]
    with db.begin(engine) as tx:
        event_store.append(tx, plan.tenant, f"w{plan.index}-held", batch, 0)
        time.sleep(HOLD_SECONDS)
    _log_commit(log, list(plan.hold_ids))


def write_for_a_while(plan: WriterPlan, ready: Any) -> None:
    """The body of a writer process: append small batches until the time is up.

    Appends to its own streams with an exact expected version, and to the shared
    stream with ``expected_version=None``. Sleeps a little inside each
    transaction, after the insert, so that commits come out of position order.
    Writes every committed batch's event ids to its log, after the commit.
    """
    engine = db.create_engine(db.to_psycopg_url(plan.url), pool_size=1)
    rng = random.Random(plan.seed)
    own = [f"w{plan.index}-s{k}" for k in range(3)]
    versions = dict.fromkeys(own, 0)
    with engine.connect() as conn:  # connect before the start, not during the race
        conn.execute(sa.select(1))
    ready.wait(timeout=120)
    start = time.monotonic()
    held = not plan.hold_ids
    with Path(plan.log).open("w", encoding="utf-8") as log:
        while time.monotonic() - start < plan.seconds:
            if not held and time.monotonic() - start >= HOLD_AT_SECONDS:
                _hold(engine, plan, log)
                held = True
                continue
            shared = rng.random() < 0.3
            stream = SHARED_STREAM if shared else rng.choice(own)
            batch = [_turn(f"w{plan.index}") for _ in range(rng.randint(1, 10))]
            expected = None if shared else versions[stream]
            with db.begin(engine) as tx:
                event_store.append(tx, plan.tenant, stream, batch, expected)
                time.sleep(rng.uniform(0, 0.004))
            if not shared:
                versions[stream] += len(batch)
            _log_commit(log, [new.event_id for new in batch])
    engine.dispose()


@dataclass(frozen=True)
class Snapshot:
    """One read of the tail, and what a naive position reader saw in the same snapshot."""

    page: tuple[str, ...]
    max_position: int
    visible: int
    held_visible: int


@dataclass
class Tail:
    """Everything the tailing reader saw, in the order it saw it."""

    events: list[Recorded] = field(default_factory=list)
    snapshots: list[Snapshot] = field(default_factory=list)
    pages_while_writing: int = 0

    @property
    def cursor(self) -> Cursor:
        return self.events[-1].cursor if self.events else START

    @property
    def ids(self) -> list[str]:
        return [rec.event_id for rec in self.events]


# text(): a probe of the raw table, outside the store's API on purpose.
_PROBE = sa.text(
    "SELECT coalesce(max(position), 0), count(*),"
    " count(*) FILTER (WHERE event_id = ANY(:held))"
    " FROM events WHERE tenant_id = :tenant"
)


def _read(engine: Engine, tail: Tail, tenant: str, limit: int, held: list[str]) -> int:
    """One page of the tail; the probe runs in the same snapshot as the read."""
    snapshot = engine.connect().execution_options(isolation_level="REPEATABLE READ")
    with snapshot as conn, conn.begin():
        page = event_reads.read_all(conn, after=tail.cursor, limit=limit, tenant_id=tenant)
        max_position, visible, held_visible = conn.execute(_PROBE, {"tenant": tenant, "held": held}).one()
    tail.events.extend(page)
    ids = tuple(r.event_id for r in page)
    tail.snapshots.append(Snapshot(ids, int(max_position), int(visible), int(held_visible)))
    return len(page)


def _reread(engine: Engine, tenant: str) -> list[tuple[str, Cursor]]:
    """The whole tenant from the start, in pages."""
    got: list[tuple[str, Cursor]] = []
    cursor = START
    with engine.connect() as conn:
        while page := event_reads.read_all(conn, after=cursor, limit=97, tenant_id=tenant):
            got.extend((rec.event_id, rec.cursor) for rec in page)
            cursor = page[-1].cursor
    return got


def _committed(logs: list[Path]) -> list[str]:
    return [event_id for log in logs for event_id in log.read_text().split()]


def _run(
    database: SessionDatabase, engine: Engine, tenant: str, tmp_path: Path, held: list[str]
) -> tuple[Tail, list[str]]:
    """Start the writers, tail while they write, drain; return the tail and the committed ids."""
    url = database.url.render_as_string(hide_password=False)
    ready = SPAWN.Barrier(WRITERS + 1)
    logs = [tmp_path / f"writer-{i}.log" for i in range(WRITERS)]
    plans = [WriterPlan(i, url, tenant, RUN_SECONDS, str(logs[i]), seed=1000 + i) for i in range(WRITERS)]
    plans[0] = dataclasses.replace(plans[0], hold_ids=tuple(held))  # writer 0 holds, if asked
    procs = [SPAWN.Process(target=write_for_a_while, args=(plan, ready), daemon=True) for plan in plans]
    for proc in procs:
        proc.start()
    rng = random.Random(7)
    tail = Tail()
    try:
        ready.wait(timeout=120)
        while any(proc.is_alive() for proc in procs):
            if not _read(engine, tail, tenant, rng.randint(1, 40), held):
                time.sleep(0.001)
        tail.pages_while_writing = sum(1 for snap in tail.snapshots if snap.page)
        for proc in procs:
            proc.join(timeout=30)
        assert [proc.exitcode for proc in procs] == [0] * WRITERS, "a writer process failed"
        committed = _committed(logs)
        deadline = time.monotonic() + 60  # only reached if something holds the cluster back
        while len(tail.events) < len(committed) and time.monotonic() < deadline:
            if not _read(engine, tail, tenant, 200, held):
                time.sleep(0.01)
        assert _read(engine, tail, tenant, 200, held) == 0, "the tail found events nobody committed"
    finally:
        for proc in procs:
            if proc.is_alive():
                proc.terminate()
                proc.join(timeout=5)
    return tail, committed


def _naive_gaps(tail: Tail, final: list[tuple[str, Cursor]]) -> int:
    """Snapshots in which some event below the highest visible position was not yet
    visible: a ``WHERE position > last`` reader at that point would skip it forever."""
    positions = sorted(cursor.position for _, cursor in final)
    return sum(snap.visible < bisect_right(positions, snap.max_position) for snap in tail.snapshots)


def _assert_exactly_once_in_stable_order(
    engine: Engine, tenant: str, tail: Tail, committed: list[str]
) -> list[tuple[str, Cursor]]:
    duplicates = [event_id for event_id, n in Counter(tail.ids).items() if n > 1]
    assert duplicates == [], f"the tail saw {len(duplicates)} events twice"
    assert len(committed) == len(set(committed))
    missing = set(committed) - set(tail.ids)
    assert not missing, f"the tail skipped {len(missing)} of {len(committed)} committed events"
    assert set(tail.ids) == set(committed)
    first, second = _reread(engine, tenant), _reread(engine, tenant)
    assert first == second, "two re-reads from the start disagree"
    assert tail.ids == [event_id for event_id, _ in first], "the tail's order is not the re-read's"
    assert [rec.cursor for rec in tail.events] == [cursor for _, cursor in first]
    return first


def test_concurrent_writer_processes_are_tailed_exactly_once_in_stable_order(
    database: SessionDatabase, engine: Engine, tenant: str, tmp_path: Path
) -> None:
    tail, committed = _run(database, engine, tenant, tmp_path, held=[])

    assert len(committed) > 200, "the writers wrote too little for the test to mean anything"
    assert tail.pages_while_writing > 20, "the reader did not tail while they wrote"
    final = _assert_exactly_once_in_stable_order(engine, tenant, tail, committed)
    # The workload did commit out of position order while the tail read: a
    # position cursor would have skipped events here.
    assert _naive_gaps(tail, final) > 0


def test_a_long_open_transaction_holds_the_tail_back_and_is_not_skipped(
    database: SessionDatabase, engine: Engine, tenant: str, tmp_path: Path
) -> None:
    held = [f"held-{tenant}-{k}" for k in range(5)]
    tail, committed = _run(database, engine, tenant, tmp_path, held=held)

    final = _assert_exactly_once_in_stable_order(engine, tenant, tail, committed)
    order = [event_id for event_id, _ in final]
    first_held = order.index(held[0])
    assert order[first_held : first_held + len(held)] == held, "one transaction stays together"
    held_positions = [cursor.position for event_id, cursor in final if event_id in set(held)]

    open_snapshots = [snap for snap in tail.snapshots if snap.held_visible == 0]
    # While the held transaction was open (its events not yet visible), the tail
    # returned nothing that sorts after them...
    rank = {event_id: n for n, event_id in enumerate(order)}
    advanced = [eid for snap in open_snapshots for eid in snap.page if rank[eid] >= first_held]
    assert advanced == [], "the tail moved past a transaction that was still open"
    # ...although other writers had meanwhile committed events with higher
    # positions: a naive position reader would have moved past them and lost them.
    assert any(snap.max_position > min(held_positions) for snap in open_snapshots)
    assert all(snap.held_visible in (0, len(held)) for snap in tail.snapshots)
    assert _naive_gaps(tail, final) > 0
