"""The extraction worker on a real PostgreSQL: the ledger is its queue.

Each test runs its own extractor name (so its own checkpoint), started at the
ledger's current end, so it sees only the turns the test records. The toy
extractor is deterministic: a turn line "@fact KEY|STATEMENT|CONFIDENCE" is a
fact, "@entity NAME|CONFIDENCE" a tool entity; nothing else is extracted (the
worker still parses directives in user turns itself).
"""

from __future__ import annotations

import logging
import multiprocessing
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from multiprocessing.synchronize import Event as MpEvent
from typing import Any

import msgspec
import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from memledger.events import codec
from memledger.events.catalogue import (
    FactExtracted,
    MemoryPromoted,
    Scopes,
    TenantSettingsChanged,
)
from memledger.events.envelope import START, Cursor, Metadata, Recorded
from memledger.extraction.protocol import (
    EntityCandidate,
    FactCandidate,
    RelationshipCandidate,
    TurnExtraction,
    TurnText,
)
from memledger.projectors import checkpoints
from memledger.projectors.facts.projector import facts
from memledger.service import projections, scope_ids, tenant_settings
from memledger.service.extraction import (
    BatchReport,
    ExtractionWorker,
    WorkerConfig,
    turn_stream,
)
from memledger.service.extraction_loop import WorkerLoop
from memledger.service.record import TurnInput, record_turns
from memledger.store import counters, db, event_reads
from memledger.store.schema import events

SPAWN = multiprocessing.get_context("spawn")


class ToyExtractor:
    """Deterministic extraction from "@fact"/"@entity" lines; can block in a chosen batch."""

    version = "1"

    def __init__(
        self,
        name: str,
        *,
        pause_s: float = 0.0,
        block_in_batch: int | None = None,
        entered: Any = None,
        release: Any = None,
        extra_entity: str | None = None,
    ) -> None:
        self.name = name
        self.pause_s = pause_s
        self.block_in_batch = block_in_batch
        self.entered = entered  # set when the blocking batch starts
        self.release = release  # waited on by the blocking batch (None: forever)
        self.extra_entity = extra_entity  # an entity added to every turn's answer
        self.batches = 0

    def extract(self, turns: Sequence[TurnText]) -> Mapping[str, TurnExtraction]:
        self.batches += 1
        if self.block_in_batch == self.batches:
            self.entered.set()
            if self.release is None:
                time.sleep(600)
            else:
                self.release.wait(30)
        if self.pause_s:
            time.sleep(self.pause_s)
        return {t.turn_id: self._one(t.text) for t in turns}

    def _one(self, text: str) -> TurnExtraction:
        found_facts, found_entities, found_edges = [], [], []
        for line in text.splitlines():
            kind, _, rest = line.partition(" ")
            parts = rest.split("|")
            if kind == "@fact":
                found_facts.append(
                    FactCandidate(
                        key=parts[0],
                        statement=parts[1],
                        category="technical_fact",
                        confidence=float(parts[2]),
                        scope="project",
                    )
                )
            elif kind == "@entity":
                found_entities.append(EntityCandidate(name=parts[0], entity_type="tool", confidence=float(parts[1])))
            elif kind == "@uses":
                found_edges.append(
                    RelationshipCandidate(
                        source_name="user",
                        source_type="user",
                        relation="USES",
                        target_name=parts[0],
                        target_type="tool",
                        confidence=float(parts[1]),
                    )
                )
        if self.extra_entity:
            found_entities.append(EntityCandidate(name=self.extra_entity, entity_type="tool", confidence=0.9))
        return TurnExtraction(
            facts=tuple(found_facts), entities=tuple(found_entities), relationships=tuple(found_edges)
        )


def toy_name() -> str:
    return f"toy-{uuid.uuid4().hex[:10]}"


def start_at_end(worker: ExtractionWorker) -> None:
    """Move the worker's new checkpoint to the ledger's last event."""
    worker.install()
    with db.begin(worker.engine) as tx:
        row = tx.execute(
            sa.select(sa.cast(events.c.tx_id, sa.Text), events.c.position)
            .order_by(events.c.tx_id.desc(), events.c.position.desc())
            .limit(1)
        ).first()
        head = Cursor(0, 0) if row is None else Cursor(int(row[0]), int(row[1]))
        checkpoints.advance(tx, worker.name, head, 0)


def new_worker(engine: Engine, extractor: ToyExtractor | None = None, **config: int) -> ExtractionWorker:
    worker = ExtractionWorker(engine, extractor or ToyExtractor(toy_name()), WorkerConfig(**config))
    start_at_end(worker)
    return worker


def record(
    engine: Engine,
    tenant: str,
    *texts: str,
    session: str = "s1",
    project: str | None = "p1",
    role: str = "user",
    prefix: str = "",
) -> list[str]:
    """Record user turns; their turn event ids."""
    prefix = prefix or uuid.uuid4().hex[:8]
    turns = [
        TurnInput(role=role, text=text, turn_id=f"{prefix}-{i}", scopes=Scopes(session=session, project=project))  # type: ignore[arg-type]
        for i, text in enumerate(texts)
    ]
    record_turns(engine, tenant, turns)
    return [f"turn:{t.turn_id}" for t in turns]


def committed(engine: Engine, *where: sa.ColumnElement[bool]) -> list[Recorded]:
    """Committed events, in ledger order. Not through the gap-safe reader: that one holds
    new events back while any older transaction on the server (even in another database)
    is open, and the test server may be shared."""
    stmt = (
        sa.select(
            events.c.tenant_id,
            events.c.position,
            sa.cast(events.c.tx_id, sa.Text),
            events.c.stream_id,
            events.c.stream_version,
            events.c.event_id,
            events.c.event_type,
            events.c.schema_version,
            sa.cast(events.c.payload, sa.Text),
            sa.cast(events.c.metadata, sa.Text),
            events.c.occurred_at,
            events.c.recorded_at,
            sa.cast(events.c.private, sa.Text),
        )
        .where(*where)
        .order_by(events.c.tx_id, events.c.position)
    )
    with engine.connect() as conn:
        rows = conn.execute(stmt).all()
    return [
        Recorded(
            tenant_id=r[0],
            position=r[1],
            tx_id=int(r[2]),
            stream_id=r[3],
            stream_version=r[4],
            event_id=r[5],
            occurred_at=r[10],
            recorded_at=r[11],
            metadata=msgspec.json.decode(r[9], type=Metadata),
            event=codec.decode_stored(r[6], r[7], r[8], r[12])[0],
        )
        for r in rows
    ]


def extracted(engine: Engine, tenant: str, extractor: str) -> list[Recorded]:
    """Every event the extractor appended for the tenant, in ledger order."""
    return committed(engine, events.c.tenant_id == tenant, events.c.metadata["extractor"].astext == extractor)


def per_turn(engine: Engine, tenant: str, extractor: str) -> dict[str, tuple[int, int]]:
    """Per causing turn event: (events, distinct streams) the extractor appended."""
    cause = events.c.metadata.op("->>")(sa.literal_column("'causation_id'")).label("cause")
    with engine.connect() as conn:
        rows = conn.execute(
            sa.select(cause, sa.func.count(), sa.func.count(sa.distinct(events.c.stream_id)))
            .where(events.c.tenant_id == tenant, events.c.metadata["extractor"].astext == extractor)
            .group_by(cause)
        ).all()
    return {r[0]: (r[1], r[2]) for r in rows}


def applied(engine: Engine, worker: ExtractionWorker) -> int:
    with engine.connect() as conn:
        cp = checkpoints.get(conn, worker.name)
    assert cp is not None
    return cp.applied_events


def wait_for(condition: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def visible(worker: ExtractionWorker, turns: int) -> None:
    """Wait until ``turns`` are pending: gap-safe reads hold new events back while any
    older transaction on the server (even another database's) is still open."""
    assert wait_for(lambda: worker.pending() >= turns, 30), f"{worker.pending()} of {turns} turns visible"


def project_facts(engine: Engine, tenant: str, done: Callable[[list[sa.Row[Any]]], bool]) -> list[sa.Row[Any]]:
    """Catch the facts projection up until the tenant's rows satisfy ``done`` (the projector
    reads gap-safe too, so new events may take a moment to reach it on a shared server)."""
    rows: list[sa.Row[Any]] = []

    def caught_up() -> bool:
        nonlocal rows
        projections.catch_up_all(engine, ["facts"])
        with engine.connect() as conn:
            rows = list(conn.execute(sa.select(facts).where(facts.c.tenant_id == tenant)).all())
        return done(rows)

    assert wait_for(caught_up, 30), rows
    return rows


def drain(worker: ExtractionWorker, turns: int) -> BatchReport:
    """``worker.drain()`` once the last ``turns`` recorded are visible to it."""
    visible(worker, turns)
    return worker.drain()


# --- the basics -------------------------------------------------------------------------


def test_drain_appends_each_turns_results_with_the_turn_as_cause(engine: Engine, tenant: str) -> None:
    worker = new_worker(engine, batch_turns=2)
    turn_ids = record(
        engine,
        tenant,
        "@fact editor|The user uses Vim|0.9\n@entity Vim|0.9",
        "@fact os|The user runs Linux|0.8",
        "just chatting",
        "@entity Docker|0.95",
    )
    visible(worker, 4)
    assert worker.pending() == 4
    report = worker.drain()
    assert (report.turns, report.events, report.busy_elsewhere) == (4, 4, False)
    assert worker.pending() == 0
    assert applied(engine, worker) == 4
    got = extracted(engine, tenant, worker.extractor.name)
    assert {r.metadata.causation_id for r in got} == {turn_ids[0], turn_ids[1], turn_ids[3]}
    for r in got:
        turn_id = r.metadata.causation_id.removeprefix("turn:")  # type: ignore[union-attr]
        assert r.stream_id == turn_stream(worker.extractor, turn_id)
        assert r.metadata.correlation_id == turn_id
        assert (r.metadata.extractor_version, r.metadata.actor) == ("1", f"extractor:{worker.extractor.name}")
        assert r.event_id.startswith(f"x:{worker.extractor.name}@1:{r.metadata.causation_id}:")
    assert worker.drain() == BatchReport()  # nothing pending: nothing done


def test_recording_a_turn_never_waits_for_extraction(engine: Engine, tenant: str) -> None:
    entered, release = threading.Event(), threading.Event()
    worker = new_worker(engine, ToyExtractor(toy_name(), block_in_batch=1, entered=entered, release=release))
    record(engine, tenant, "@fact a|First fact|0.9")
    visible(worker, 1)
    thread = threading.Thread(target=worker.drain)
    thread.start()
    try:
        assert entered.wait(10), "the worker never started extracting"
        # the worker holds its lock and sits in the extractor: recording still goes straight through
        started = time.monotonic()
        (later,) = record(engine, tenant, "@fact b|Second fact|0.9")
        assert time.monotonic() - started < 2
        assert extracted(engine, tenant, worker.extractor.name) == []  # nothing extracted yet
        visible(worker, 2)
    finally:
        release.set()
        thread.join(20)
    worker.drain()
    assert later in per_turn(engine, tenant, worker.extractor.name)
    assert worker.pending() == 0


def test_confidence_bands_reach_the_facts_read_model(engine: Engine, tenant: str) -> None:
    worker = new_worker(engine)
    record(
        engine,
        tenant,
        "@fact editor|The user uses Vim|0.9\n@fact mood|The user seems tired|0.6\n"
        "@fact music|The user might like jazz|0.3",
    )
    report = drain(worker, 1)
    assert (report.events, report.dropped_low_confidence) == (2, 1)
    rows = project_facts(engine, tenant, lambda rows: len(rows) >= 2)
    with engine.connect() as conn:
        totals = counters.totals(conn, tenant)
    assert {r.statement: r.status for r in rows} == {
        "The user uses Vim": "active",
        "The user seems tired": "low_confidence",
    }
    assert totals["dropped_low_confidence"] == 1


def test_limits_and_refusals_are_counted_per_conversation_across_batches(engine: Engine, tenant: str) -> None:
    worker = new_worker(engine, batch_turns=1, max_entities=2)
    # A turn holding a credential gives nothing at all: its secret has a turn of its own here.
    record(engine, tenant, "@entity A|0.9", "@entity B|0.9", "@entity C|0.9", "@fact pw|my password is hunter22|0.9")
    record(engine, tenant, "@entity D|0.9", session="s2")
    report = drain(worker, 5)
    assert (report.turns, report.skipped, report.refused_secrets) == (5, 1, 1)
    names = sorted(r.event.name for r in extracted(engine, tenant, worker.extractor.name))  # type: ignore[attr-defined]
    assert names == ["A", "B", "D"]  # C is over the limit of s1; s2 has its own
    with engine.connect() as conn:
        totals = counters.totals(conn, tenant)
    assert (totals["entities"], totals["skipped_entities"], totals["refused_secrets"]) == (3, 1, 1)


def test_a_candidate_the_store_refuses_does_not_stop_the_worker(engine: Engine, tenant: str) -> None:
    worker = new_worker(engine)
    (_, fine) = record(engine, tenant, f"@uses {'Very long tool name ' * 10}|0.9", "@fact os|The user runs Linux|0.9")
    drain(worker, 2)
    assert worker.pending() == 0
    assert fine in per_turn(engine, tenant, worker.extractor.name)


# --- exactly once ---------------------------------------------------------------------------


def _drain_then_move_back(engine: Engine, tenant: str, worker: ExtractionWorker, *texts: str) -> list[Recorded]:
    """Extract ``texts``, then move the checkpoint back before them (as an operator might)."""
    with engine.connect() as conn:
        start = checkpoints.get(conn, worker.name).cursor  # type: ignore[union-attr]
    record(engine, tenant, *texts)
    drain(worker, len(texts))
    with db.begin(engine) as tx:
        checkpoints.advance(tx, worker.name, start, 0)
    return extracted(engine, tenant, worker.extractor.name)


def test_replaying_a_batch_appends_nothing(engine: Engine, tenant: str) -> None:
    worker = new_worker(engine)
    before = _drain_then_move_back(engine, tenant, worker, *(f"@fact k{i}|Statement {i}|0.9" for i in range(5)))
    worker.drain()
    assert extracted(engine, tenant, worker.extractor.name) == before
    assert worker.pending() == 0


def test_a_turn_already_extracted_is_skipped_even_if_the_answer_changed(engine: Engine, tenant: str) -> None:
    worker = new_worker(engine)
    before = _drain_then_move_back(engine, tenant, worker, *(f"@fact k{i}|Statement {i}|0.9" for i in range(5)))
    worker.extractor.extra_entity = "Docker"  # type: ignore[attr-defined]
    worker.drain()
    assert extracted(engine, tenant, worker.extractor.name) == before
    assert worker.pending() == 0


def test_a_replayed_batch_reports_no_events_and_counts_nothing(engine: Engine, tenant: str) -> None:
    worker = new_worker(engine)
    _drain_then_move_back(engine, tenant, worker, "@entity A|0.9", "@entity B|0.9")
    report = worker.drain()
    with engine.connect() as conn:
        totals = counters.totals(conn, tenant)
    assert (report.events, totals["entities"]) == (0, 2)


def test_a_worker_that_lost_its_lock_appends_nothing_twice(engine: Engine, tenant: str) -> None:
    entered, release = threading.Event(), threading.Event()
    name = toy_name()
    slow = new_worker(engine, ToyExtractor(name, block_in_batch=1, entered=entered, release=release))
    turn_ids = record(engine, tenant, *(f"@fact k{i}|Statement {i}|0.9" for i in range(25)))
    visible(slow, 25)
    outcome: list[object] = []

    def run_slow() -> None:
        try:
            outcome.append(slow.run_once())
        except Exception as e:  # noqa: BLE001 - its lock connection was killed under it
            outcome.append(e)

    thread = threading.Thread(target=run_slow)
    thread.start()
    try:
        assert entered.wait(10)
        with engine.connect() as conn:  # the slow worker's session (and its lock) dies
            killed = conn.execute(
                sa.text(
                    "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' "
                    "AND objsubid = 1 AND granted "
                    "AND classid::text::bigint = ((hashtextextended(:n, 0) >> 32) & 4294967295) "
                    "AND objid::text::bigint = (hashtextextended(:n, 0) & 4294967295)"
                ),
                {"n": slow.name},
            ).all()
        assert killed == [(True,)]
        fast = ExtractionWorker(engine, ToyExtractor(name), WorkerConfig())
        assert wait_for(lambda: fast.drain().turns > 0 or fast.pending() == 0, 10)
        assert fast.pending() == 0
    finally:
        release.set()
        thread.join(20)
    (result,) = outcome
    assert not isinstance(result, BatchReport) or result.busy_elsewhere
    assert per_turn(engine, tenant, name) == dict.fromkeys(turn_ids, (1, 1))
    assert applied(engine, slow) == 25


def _child_drain(
    url: str, name: str, go: MpEvent, results: Any, block_in_batch: int | None = None, entered: MpEvent | None = None
) -> None:
    """A worker process: its own engine; drains until nothing is pending."""
    engine = db.create_engine(sa.engine.make_url(url), pool_size=2)
    worker = ExtractionWorker(
        engine,
        ToyExtractor(name, pause_s=0.002, block_in_batch=block_in_batch, entered=entered),
        WorkerConfig(batch_turns=10),
    )
    go.wait(60)
    done = 0
    deadline = time.monotonic() + 60
    while worker.pending() and time.monotonic() < deadline:
        done += worker.drain().turns
        time.sleep(0.001)
    results.put(done)
    engine.dispose()


def test_two_worker_processes_extract_each_turn_exactly_once(database: Any, tenant: str) -> None:
    engine = database.engine
    name = toy_name()
    worker = new_worker(engine, ToyExtractor(name))
    turn_ids = record(engine, tenant, *(f"@fact item {i}|Item {i} is tracked|0.9" for i in range(200)))
    visible(worker, 200)
    url = database.url.render_as_string(hide_password=False)
    go, results = SPAWN.Event(), SPAWN.Queue()
    procs = [SPAWN.Process(target=_child_drain, args=(url, name, go, results)) for _ in range(2)]
    for p in procs:
        p.start()
    go.set()
    done = [results.get(timeout=90) for _ in procs]
    for p in procs:
        p.join(30)
        assert p.exitcode == 0
    assert sum(done) == 200  # every batch was done by exactly one of them
    assert per_turn(engine, tenant, name) == dict.fromkeys(turn_ids, (1, 1))
    assert applied(engine, worker) == 200
    assert worker.pending() == 0


def test_a_worker_killed_mid_batch_loses_no_turn(database: Any, tenant: str) -> None:
    engine = database.engine
    name = toy_name()
    worker = new_worker(engine, ToyExtractor(name), batch_turns=10)
    turn_ids = record(engine, tenant, *(f"@fact item {i}|Item {i} is tracked|0.9" for i in range(60)))
    visible(worker, 60)
    go, entered, results = SPAWN.Event(), SPAWN.Event(), SPAWN.Queue()
    proc = SPAWN.Process(
        target=_child_drain, args=(database.url.render_as_string(hide_password=False), name, go, results, 3, entered)
    )
    proc.start()
    go.set()
    assert entered.wait(60), "the child never reached its third batch"
    proc.kill()  # mid-batch: two batches committed, the third extracted but never appended
    proc.join(10)
    assert applied(engine, worker) == 20
    assert len(per_turn(engine, tenant, name)) == 20
    # restart: the dead session's lock goes with it; every remaining turn is extracted once
    assert wait_for(lambda: worker.drain().turns > 0 or worker.pending() == 0, 10)
    worker.drain()
    assert worker.pending() == 0
    assert per_turn(engine, tenant, name) == dict.fromkeys(turn_ids, (1, 1))
    assert applied(engine, worker) == 60


# --- facts over time, tenant switches ------------------------------------------------------------


def test_a_fact_mentioned_again_later_is_reinforced(engine: Engine, tenant: str) -> None:
    """The second mention is extracted again in its own words (so that erasing the
    first speaker leaves the fact to the second), and the read model counts it as a
    reinforcement of the same fact."""
    worker = new_worker(engine)
    record(engine, tenant, "@fact editor|The user uses Vim|0.8")
    drain(worker, 1)
    project_facts(engine, tenant, lambda rows: len(rows) == 1)
    (again,) = record(engine, tenant, "@fact editor|the user uses vim.|0.8")
    drain(worker, 1)
    first, second = extracted(engine, tenant, worker.extractor.name)
    assert isinstance(first.event, FactExtracted) and isinstance(second.event, FactExtracted)
    assert second.event.memory_id == first.event.memory_id
    assert second.event.statement == "the user uses vim."
    assert second.metadata.causation_id == again
    (row,) = project_facts(engine, tenant, lambda rows: rows[0].reinforcements > 0)
    assert row.reinforcements == 1
    assert row.confidence > 0.8


def test_directives_are_promoted_once_the_tenant_switches_auto_promote_on(engine: Engine, tenant: str) -> None:
    worker = new_worker(engine)
    settings = tenant_settings.change(engine, tenant, TenantSettingsChanged(auto_promote=True))
    assert settings.auto_promote
    record(engine, tenant, "decision (project): we ship on Fridays", role="assistant")  # only user turns count
    record(
        engine,
        tenant,
        "decision (project): we ship on Fridays\nterminology (user): 'the box' means the build server",
        project="billing",
    )
    record(engine, tenant, "lesson learned: pin versions", project=None)
    drain(worker, 3)
    promoted = [r.event for r in extracted(engine, tenant, worker.extractor.name)]
    assert all(isinstance(p, MemoryPromoted) for p in promoted)
    billing = scope_ids.stored_id(engine, tenant, "project", "billing")  # scope keys are stored as keyed hashes
    s1 = scope_ids.stored_id(engine, tenant, "session", "s1")
    assert [(p.kind, p.scope, p.scope_key) for p in promoted] == [  # type: ignore[attr-defined]
        ("decision", "project", billing),
        ("terminology", "project", billing),  # named user scope, but the turn has no user key: narrower
        ("lesson_learned", "session", s1),  # no project: the session, never user or org
    ]


def test_directives_follow_the_tenants_auto_promote_switch(engine: Engine, tenant: str) -> None:
    worker = new_worker(engine)
    record(engine, tenant, "preference: tabs over spaces")
    drain(worker, 1)
    (plain,) = [r.event for r in extracted(engine, tenant, worker.extractor.name)]
    assert isinstance(plain, FactExtracted)
    assert (plain.category, plain.scope, plain.statement) == ("preference", "project", "tabs over spaces")
    tenant_settings.change(engine, tenant, TenantSettingsChanged(auto_promote=True))
    record(engine, tenant, "preference: tabs over spaces")
    drain(worker, 1)
    promoted = extracted(engine, tenant, worker.extractor.name)[1].event
    assert isinstance(promoted, MemoryPromoted)
    p1 = scope_ids.stored_id(engine, tenant, "project", "p1")  # scope keys are stored as keyed hashes
    assert (promoted.kind, promoted.scope, promoted.scope_key) == ("preference", "project", p1)


# --- the loop -----------------------------------------------------------------------------------


@contextmanager
def running(worker: ExtractionWorker) -> Iterator[WorkerLoop]:
    """The worker's loop in a thread (an hour between scheduled runs: only wakes drain),
    past its first, immediate run; stopped, and its thread gone, on exit."""
    loop = WorkerLoop(worker, interval_s=3600, poll_interval_s=0.05)
    thread = threading.Thread(target=loop.run, daemon=True)
    thread.start()
    try:
        time.sleep(0.3)  # the first, immediate run finds nothing
        yield loop
    finally:
        loop.stop()
        thread.join(10)
    assert not thread.is_alive()


def test_the_loop_wakes_early_when_turns_arrive(engine: Engine, tenant: str) -> None:
    worker = new_worker(engine)
    with running(worker):
        (turn,) = record(engine, tenant, "@fact editor|The user uses Vim|0.9")

        def done() -> bool:
            return turn in per_turn(engine, tenant, worker.extractor.name)

        assert wait_for(lambda: done() or worker.pending() > 0, 30)  # visible (see ``visible``)
        started = time.monotonic()
        assert wait_for(done, 10)
        assert time.monotonic() - started < 2.5


def test_a_wake_the_scheduler_is_late_for_still_runs(engine: Engine, tenant: str) -> None:
    """On a loaded machine the scheduler's thread can wake more than a second after the
    run it was asked for: that run must still happen, not wait for the next interval."""
    worker = new_worker(engine)
    with running(worker) as loop:
        loop.scheduler.pause()  # its thread held up
        (turn,) = record(engine, tenant, "@fact editor|The user uses Vim|0.9")
        assert wait_for(lambda: worker.pending() > 0, 30)  # visible; the watcher wakes a drain
        time.sleep(2.0)  # the woken run is now two seconds late
        loop.scheduler.resume()
        assert wait_for(lambda: turn in per_turn(engine, tenant, worker.extractor.name), 10)


def test_the_loop_does_not_log_a_warning_every_poll_during_a_long_drain(
    engine: Engine, tenant: str, caplog: pytest.LogCaptureFixture
) -> None:
    worker = new_worker(engine, ToyExtractor(toy_name(), pause_s=0.25), batch_turns=1)
    loop = WorkerLoop(worker, interval_s=3600, poll_interval_s=0.05)
    thread = threading.Thread(target=loop.run, daemon=True)
    with caplog.at_level(logging.WARNING):
        thread.start()
        try:
            turn_ids = record(engine, tenant, *(f"@fact k{i}|Statement {i}|0.9" for i in range(4)))
            assert wait_for(lambda: len(per_turn(engine, tenant, worker.extractor.name)) == len(turn_ids), 30)
        finally:
            loop.stop()
            thread.join(10)
    skipped = [r for r in caplog.records if "maximum number of running instances" in r.getMessage()]
    assert skipped == []


class FailingExtractor:
    """An extractor that raises every time (a model and its fallback both failing)."""

    version = "1"

    def __init__(self, name: str) -> None:
        self.name = name
        self.calls = 0

    def extract(self, turns: Sequence[TurnText]) -> Mapping[str, TurnExtraction]:
        self.calls += 1
        raise ValueError("the model answered nonsense and the fallback failed too")


def test_a_drain_that_keeps_failing_is_waited_out_not_retried_every_poll(
    engine: Engine, tenant: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Before, a failing batch was retried every poll (every 0.05 s here; a paid model
    call each time): ~40 attempts in 2 s. Now the waits double from 1 s."""
    failing = FailingExtractor(toy_name())
    worker = new_worker(engine, failing)
    record(engine, tenant, "@fact editor|The user uses Vim|0.9")
    assert wait_for(lambda: worker.pending() > 0, 30)
    loop = WorkerLoop(worker, interval_s=3600, poll_interval_s=0.05)
    thread = threading.Thread(target=loop.run, daemon=True)
    with caplog.at_level(logging.ERROR):
        thread.start()
        try:
            time.sleep(2.0)
        finally:
            loop.stop()
            thread.join(10)
    assert 1 <= failing.calls <= 3
    assert worker.pending() > 0  # nothing skipped: the turn waits for an extractor that works
    assert any("extraction failed (1 in a row)" in r.getMessage() for r in caplog.records)


def test_a_new_extractor_started_from_now_extracts_only_turns_recorded_after(engine: Engine, tenant: str) -> None:
    """Switching the extractor (or its model) once re-extracted the whole past, a model
    call per conversation, with no way to start at the end (an audit's 720 turns)."""
    record(engine, tenant, "@fact old|Said before the switch|0.9")
    worker = ExtractionWorker(engine, ToyExtractor(toy_name()), WorkerConfig())
    assert worker.is_new()
    assert wait_for(lambda: _turns_visible(engine, tenant) == 1, 30)  # the past is readable (gap-safe)
    assert worker.start_from_now()
    assert not worker.is_new() and worker.pending() == 0
    assert not worker.start_from_now(), "a worker that has run keeps its place"
    record(engine, tenant, "@fact new|Said after the switch|0.9")
    report = drain(worker, 1)
    assert report.turns == 1
    assert [r.event.statement for r in extracted(engine, tenant, worker.extractor.name)] == ["Said after the switch"]  # type: ignore[attr-defined]


def _turns_visible(engine: Engine, tenant: str) -> int:
    with engine.connect() as conn:
        return event_reads.count_after(conn, START, tenant_id=tenant, types=["turn.recorded"])
