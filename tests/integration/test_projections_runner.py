"""The runner on a real PostgreSQL: a projector that meets an event it cannot apply
stops there and says so, and two runners of one projection apply each event once.

Each test works in a database of its own: the projections' checkpoints are global,
and a failed ``facts`` projection must not leak into other tests.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import time
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from memledger.errors import ProjectionFailed
from memledger.events.catalogue import FactExtracted, Scopes, TurnRecorded
from memledger.events.envelope import NewEvent, Recorded
from memledger.projectors import checkpoints, runner
from memledger.projectors.facts.projector import FactsProjector, facts
from memledger.projectors.status import ProjectionStatus, status
from memledger.projectors.turns.projector import TurnsProjector, turns
from memledger.service import projections as service
from memledger.store import db, event_reads, event_store
from tests.integration.test_projections_support import (
    append_in_transactions,
    assert_equals_rebuild,
    coalesce,
    fresh_database,
    handled_events,
    read_models,
    url_of,
    wait_until_visible,
)
from tests.support import workload

if TYPE_CHECKING:
    from tests.conftest import TestDatabase

T0 = datetime(2025, 3, 1, tzinfo=UTC)
TENANT = "t-runner"


@pytest.fixture
def scratch(database: TestDatabase) -> Iterator[Engine]:
    with fresh_database(database, "proj_runner") as engine:
        yield engine


class Refusing:
    """The facts projector (same name, version and tables) that cannot apply the
    events in ``bad``: it raises ValueError, or fails an SQL statement if ``sql``."""

    name = FactsProjector.name
    version = FactsProjector.version
    handles = FactsProjector.handles

    def __init__(self, bad: set[str], *, sql: bool = False) -> None:
        self.inner, self.bad, self.sql = FactsProjector(), bad, sql

    def apply(self, tx: Connection, batch: Sequence[Recorded]) -> None:
        for rec in batch:
            if rec.event_id in self.bad:
                if self.sql:
                    # text(): a statement that fails inside PostgreSQL (division by zero).
                    tx.execute(sa.text("SELECT 1 / 0"))
                raise ValueError(f"cannot apply {rec.event_id}")
        self.inner.apply(tx, batch)


class FailsOnceAsAWhole:
    """The facts projector whose first multi-event batch fails (a transient error),
    while every event applies on its own."""

    name = FactsProjector.name
    version = FactsProjector.version
    handles = FactsProjector.handles

    def __init__(self) -> None:
        self.inner, self.failed = FactsProjector(), False

    def apply(self, tx: Connection, batch: Sequence[Recorded]) -> None:
        if len(batch) > 1 and not self.failed:
            self.failed = True
            raise ValueError("the batch timed out")
        self.inner.apply(tx, batch)


def _append_facts_and_turns(engine: Engine, count: int) -> list[NewEvent]:
    """``count`` facts, each in a slot of its own, with a turn after every third."""
    news: list[NewEvent] = []
    for n in range(count):
        news.append(
            NewEvent(
                event=FactExtracted(
                    memory_id=f"m{n:02d}",
                    scope="user",
                    scope_key="ada",
                    key=f"key {n}",
                    statement=f"statement number {n}",
                    category="preference",
                    confidence=0.9,
                ),
                event_id=f"fact-{n:02d}",
                occurred_at=T0 + timedelta(minutes=n),
            )
        )
        if n % 3 == 2:
            news.append(
                NewEvent(
                    event=TurnRecorded(turn_id=f"turn-{n}", role="user", text=f"turn {n}", scopes=Scopes()),
                    event_id=f"turn-{n:02d}",
                    occurred_at=T0 + timedelta(minutes=n),
                )
            )
    for start in range(0, len(news), 7):  # several transactions
        with engine.begin() as tx:
            event_store.append(tx, TENANT, f"s{start}", news[start : start + 7], None)
    wait_until_visible(engine, len(news))
    return news


def _memory_ids(engine: Engine) -> list[str]:
    with engine.connect() as conn:
        return list(conn.execute(sa.select(facts.c.memory_id).order_by(facts.c.memory_id)).scalars())


def _positions(engine: Engine) -> dict[str, int]:
    with engine.connect() as conn:
        return {rec.event_id: rec.position for rec in event_reads.read_all(conn, limit=10_000)}


def _status(engine: Engine) -> ProjectionStatus:
    with engine.connect() as conn:
        return status(conn, FactsProjector(), datetime.now(UTC))


def test_a_projector_stops_at_an_event_it_cannot_apply_says_why_and_goes_on_after_a_fix(
    scratch: Engine,
) -> None:
    _append_facts_and_turns(scratch, 20)
    positions = _positions(scratch)
    refusing = Refusing({"fact-12"})
    runner.install(scratch, refusing)

    with pytest.raises(ProjectionFailed) as failure:
        runner.catch_up(scratch, refusing, batch_size=100)  # the whole backlog is one batch

    assert failure.value.name == "facts"
    assert failure.value.position == positions["fact-12"]
    assert "fact-12" in str(failure.value)
    before = [f"m{n:02d}" for n in range(12)]
    assert _memory_ids(scratch) == before, "the events before it are applied, nothing after"
    state = _status(scratch)
    assert state.state == "failed"
    assert state.error_position == positions["fact-12"]
    assert state.error_event_id == "fact-12"
    assert state.error is not None
    assert "ValueError" in state.error
    assert "cannot apply fact-12" in state.error
    assert state.position == positions["fact-11"], "the checkpoint stays just before it"
    assert state.applied_events == 12
    assert state.lag_events == 8
    assert {s.name: s.state for s in service.statuses(scratch)}["facts"] == "failed"

    # it does not skip: asked again, in any batch size, it stops at the same event
    for batch_size in (1, 100):
        with pytest.raises(ProjectionFailed):
            runner.catch_up(scratch, refusing, batch_size=batch_size)
    with pytest.raises(ProjectionFailed):  # nor does a fixed projector go on before a reset
        runner.catch_up(scratch, FactsProjector())
    assert _memory_ids(scratch) == before

    # a follower leaves the failed projection stopped and keeps the others going
    deadline = time.monotonic() + 10
    runner.follow(
        scratch,
        [refusing, TurnsProjector()],
        poll_interval=0.02,
        should_stop=lambda: time.monotonic() > deadline or _count(scratch, turns) == 6,
    )
    assert _count(scratch, turns) == 6
    assert _memory_ids(scratch) == before
    assert _status(scratch).state == "failed"

    assert runner.reset_failure(scratch, "facts")
    assert runner.catch_up(scratch, FactsProjector()) == 8

    assert _memory_ids(scratch) == [f"m{n:02d}" for n in range(20)]
    state = _status(scratch)
    assert (state.state, state.error, state.error_position, state.error_event_id) == ("live", None, None, None)
    assert state.applied_events == 20 == handled_events(scratch, FactsProjector())
    assert state.lag_events == 0
    assert_equals_rebuild(scratch, FactsProjector())


def _count(engine: Engine, table: sa.Table) -> int:
    with engine.connect() as conn:
        return int(conn.execute(sa.select(sa.func.count()).select_from(table)).scalar_one())


def test_reset_failure_of_a_live_projection_changes_nothing(scratch: Engine) -> None:
    _append_facts_and_turns(scratch, 4)
    runner.install(scratch, FactsProjector())
    runner.catch_up(scratch, FactsProjector())
    with scratch.connect() as conn:
        before = checkpoints.get(conn, "facts")

    assert not runner.reset_failure(scratch, "facts"), "a live projection has nothing to retry"

    with scratch.connect() as conn:
        assert checkpoints.get(conn, "facts") == before


def test_an_event_whose_sql_fails_stops_the_projection_with_a_failed_status(scratch: Engine) -> None:
    _append_facts_and_turns(scratch, 6)
    refusing = Refusing({"fact-03"}, sql=True)
    runner.install(scratch, refusing)

    with pytest.raises(ProjectionFailed):
        runner.catch_up(scratch, refusing)

    state = _status(scratch)
    assert (state.state, state.error_event_id) == ("failed", "fact-03")
    assert _memory_ids(scratch) == ["m00", "m01", "m02"]


def test_a_batch_that_fails_once_as_a_whole_is_applied_exactly_once(scratch: Engine) -> None:
    _append_facts_and_turns(scratch, 10)
    flaky = FailsOnceAsAWhole()
    runner.install(scratch, flaky)

    with contextlib.suppress(ValueError):  # reporting the transient failure is fine
        runner.catch_up(scratch, flaky)
    runner.catch_up(scratch, flaky)

    assert flaky.failed
    with scratch.connect() as conn:
        reinforced = conn.execute(sa.select(sa.func.max(facts.c.reinforcements))).scalar_one()
        cp = checkpoints.get(conn, "facts")
    assert reinforced == 0, "each extraction was applied once"
    assert cp is not None
    assert cp.applied_events == 10 == handled_events(scratch, FactsProjector())
    assert_equals_rebuild(scratch, FactsProjector())


# --- two runners of one projection ---------------------------------------------------


def _run_all(url: str, barrier: Any, batch_size: int, results: Any) -> None:
    """A runner process: wait for the other, then catch every projection up."""
    engine = db.create_engine(db.to_psycopg_url(url), pool_size=2)
    try:
        barrier.wait(timeout=120)
        for projector in read_models():  # both install at once: safe to race
            runner.install(engine, projector)
        results.put({p.name: runner.catch_up(engine, p, batch_size=batch_size) for p in read_models()})
    except Exception as e:  # reported to the test, which fails with it
        results.put(f"{type(e).__name__}: {e}")
        raise
    finally:
        engine.dispose()


def test_two_runner_processes_apply_every_event_exactly_once(database: TestDatabase) -> None:
    appends = list(workload.generate(seed=7, tenants=2, turns=260, start=T0))
    with fresh_database(database, "proj_two_runners") as engine:
        append_in_transactions(engine, coalesce(appends, 500))
        expected = {p.name: handled_events(engine, p) for p in read_models()}
        assert sum(expected.values()) > 2000

        spawn = multiprocessing.get_context("spawn")
        barrier, results = spawn.Barrier(2), spawn.Queue()
        workers = [spawn.Process(target=_run_all, args=(url_of(engine), barrier, 30, results)) for _ in range(2)]
        for worker in workers:
            worker.start()
        try:
            applied = [results.get(timeout=300) for _ in workers]
        finally:
            for worker in workers:
                worker.join(timeout=30)
        assert all(isinstance(a, dict) for a in applied), applied
        assert [w.exitcode for w in workers] == [0, 0]

        for projector in read_models():
            name = projector.name
            by_each = [a[name] for a in applied]
            assert sum(by_each) == expected[name], f"{name}: {by_each} applied, {expected[name]} events"
            with engine.connect() as conn:
                cp = checkpoints.get(conn, name)
            assert cp is not None
            assert (cp.state, cp.applied_events) == ("live", expected[name])
            assert_equals_rebuild(engine, projector)
        shares = [sum(a.values()) for a in applied]
        assert min(shares) > 0, f"both runners took batches: {shares}"
