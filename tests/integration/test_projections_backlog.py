"""A large backlog: a runner process killed in the middle of its batches, and
rebuilds with no downtime, while readers read and a writer writes.

One database for the module, filled once with a realistic mixed workload (facts,
entities, relationships, reinforcements, promotions, resolutions). Each test
brings the projections up to date itself, so any one of them can run alone.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from memledger.projectors import checkpoints, rebuild, runner
from memledger.projectors.facts.projector import FactsProjector, conflicts, facts
from memledger.projectors.relationships.projector import RelationshipsProjector
from memledger.store import event_reads
from tests.integration.test_projections_support import (
    READ_MODELS,
    append_in_transactions,
    assert_equals_rebuild,
    checksums,
    coalesce,
    count_events,
    fresh_database,
    handled_events,
    read_models,
    url_of,
)
from tests.support import workload

if TYPE_CHECKING:
    from tests.conftest import TestDatabase

CLI = [sys.executable, "-m", "memledger.cli.main"]
T0 = datetime(2025, 1, 6, 8, 0, tzinfo=UTC)
KILLS = 2


@pytest.fixture(scope="module")
def backlog(database: TestDatabase) -> Iterator[Engine]:
    """A database holding some 20,000 events and no projection yet."""
    appends = list(workload.generate(seed=11, tenants=3, turns=1700, start=T0))
    with fresh_database(database, "proj_backlog", pool_size=6) as engine:
        total = append_in_transactions(engine, coalesce(appends, 1000))
        assert total >= 20_000
        yield engine


def _catch_up_all(engine: Engine) -> None:
    for projector in read_models():
        runner.install(engine, projector)
        runner.catch_up(engine, projector)


def _run_projections(engine: Engine) -> subprocess.Popen[str]:
    """``memledger projections run`` following the ledger, in the background."""
    env = {**_env(engine), "MEMLEDGER_POLL_INTERVAL_S": "0.05"}
    return subprocess.Popen(
        [*CLI, "projections", "run", *READ_MODELS],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _env(engine: Engine) -> dict[str, str]:
    return {**os.environ, "DATABASE_URL": url_of(engine)}


def _writing_backends(engine: Engine) -> int:
    """Other sessions of this database inside a write transaction right now."""
    with engine.connect() as conn:
        # text(): a catalogue query (pg_stat_activity is not a table of ours).
        return int(
            conn.execute(
                sa.text(
                    "SELECT count(*) FROM pg_stat_activity"
                    " WHERE datname = current_database() AND pid <> pg_backend_pid()"
                    " AND backend_xid IS NOT NULL"
                )
            ).scalar_one()
        )


def _applied(engine: Engine) -> dict[str, int]:
    with engine.connect() as conn:
        return {cp.name: cp.applied_events for cp in checkpoints.all_checkpoints(conn) if cp.name in READ_MODELS}


def _wait_for(condition: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def _in_a_batch(engine: Engine, process: subprocess.Popen[str], applied_before: int) -> Callable[[], bool]:
    """True once the runner has applied more events and is inside a write transaction
    (or has exited, which the caller reports)."""
    return lambda: (
        process.poll() is not None
        or (sum(_applied(engine).values()) > applied_before and _writing_backends(engine) > 0)
    )


def test_a_runner_killed_in_the_middle_of_a_batch_loses_and_repeats_nothing(backlog: Engine) -> None:
    rng = random.Random()
    expected = {p.name: handled_events(backlog, p) for p in read_models()}
    for _ in range(KILLS):
        before = _applied(backlog)
        process = _run_projections(backlog)
        try:
            # wait until it applies batches and is inside one, then a moment more, then kill it
            _wait_for(_in_a_batch(backlog, process, sum(before.values())), 120, "a batch under way")
            time.sleep(rng.uniform(0.0, 0.3))
            assert process.poll() is None, process.communicate()
            process.send_signal(signal.SIGKILL)
        finally:
            if process.poll() is None:
                process.kill()
            process.wait(timeout=30)
        assert process.returncode == -signal.SIGKILL
        after = _applied(backlog)
        assert all(after.get(name, 0) >= count for name, count in before.items())
        assert sum(after.values()) < sum(expected.values()), "killed before it finished the backlog"

    done = subprocess.run(
        [*CLI, "projections", "run", "--once", *READ_MODELS],
        env=_env(backlog),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr

    with backlog.connect() as conn:
        states = {cp.name: cp for cp in checkpoints.all_checkpoints(conn) if cp.name in READ_MODELS}
    for projector in read_models():
        cp = states[projector.name]
        assert cp.state == "live", cp
        assert cp.applied_events == expected[projector.name], "every event applied exactly once"
        assert_equals_rebuild(backlog, projector)


def test_readers_never_see_an_empty_or_shrinking_table_while_a_rebuild_swaps_in(backlog: Engine) -> None:
    _catch_up_all(backlog)
    before = checksums(backlog, FactsProjector())
    floor = {"facts": before["facts"][0], "conflicts": before["conflicts"][0]}
    assert min(floor.values()) > 0
    seen: list[tuple[int, int, int]] = []  # (facts rows, conflicts rows, facts table oid)
    errors: list[BaseException] = []
    stop = threading.Event()

    def read() -> None:
        try:
            while not stop.is_set():
                with backlog.connect() as conn:
                    n_facts = conn.execute(sa.select(sa.func.count()).select_from(facts)).scalar_one()
                    n_conflicts = conn.execute(sa.select(sa.func.count()).select_from(conflicts)).scalar_one()
                    # text(): which physical table the name points at now.
                    oid = conn.execute(sa.text("SELECT 'proj_facts.facts'::regclass::oid::bigint")).scalar_one()
                seen.append((n_facts, n_conflicts, oid))
        except Exception as e:  # noqa: BLE001 - reported by the test
            errors.append(e)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        applied = rebuild.rebuild(backlog, FactsProjector())
        _wait_for(lambda: len({oid for *_, oid in seen}) > 1, 30, "a read after the swap")
        time.sleep(0.1)
    finally:
        stop.set()
        reader.join(timeout=30)

    assert not errors, errors
    assert applied == handled_events(backlog, FactsProjector())
    assert len(seen) > 10
    assert min(n for n, _, _ in seen) >= floor["facts"], "a reader saw an empty or partial facts table"
    assert min(n for _, n, _ in seen) >= floor["conflicts"], "a reader saw an empty or partial conflicts table"
    tables = [oid for *_, oid in seen]
    assert len(set(tables)) == 2, "readers saw the old table, then the new one"
    swapped = tables.index(tables[-1])
    assert set(tables[swapped:]) == {tables[-1]}, "and never the old one after the new"
    assert checksums(backlog, FactsProjector()) == before, "the rebuilt rows equal the live ones"
    with backlog.connect() as conn:
        cp = checkpoints.get(conn, "facts")
        schemas = set(conn.execute(sa.text("SELECT nspname FROM pg_namespace")).scalars())
    assert cp is not None
    assert (cp.state, cp.applied_events, cp.db_schema) == ("live", applied, "proj_facts")
    assert {s for s in schemas if s.startswith("proj_facts")} == {"proj_facts"}


def test_a_rebuild_while_a_writer_appends_and_a_live_runner_follows_catches_up(backlog: Engine) -> None:
    _catch_up_all(backlog)
    more = coalesce(list(workload.generate(seed=12, tenants=2, turns=500, start=T0)), 40)
    stop = threading.Event()
    errors: list[BaseException] = []

    def guarded(work: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                work()
            except Exception as e:  # noqa: BLE001 - reported by the test
                errors.append(e)

        return run

    def write() -> None:
        for start in range(0, len(more), 3):
            append_in_transactions(backlog, more[start : start + 3], per_tx=3, wait=False)

    follower = threading.Thread(
        target=guarded(
            lambda: runner.follow(
                backlog, [FactsProjector(), RelationshipsProjector()], poll_interval=0.02, should_stop=stop.is_set
            )
        ),
        daemon=True,
    )
    writer = threading.Thread(target=guarded(write), daemon=True)
    follower.start()
    writer.start()
    try:
        time.sleep(0.2)  # the writer is under way before the rebuild starts
        at_start = count_events(backlog)
        rebuild.rebuild(backlog, FactsProjector())
        at_end = count_events(backlog)
        writer.join(timeout=300)
        append_in_transactions(backlog, [])  # waits until everything written is visible
        _wait_for(lambda: _lag(backlog) == 0, 120, "the follower to catch up")
    finally:
        stop.set()
        writer.join(timeout=60)
        follower.join(timeout=60)

    assert not errors, errors
    assert at_end > at_start, "events were appended while the rebuild ran"
    for projector in (FactsProjector(), RelationshipsProjector()):
        with backlog.connect() as conn:
            cp = checkpoints.get(conn, projector.name)
        assert cp is not None
        assert (cp.state, cp.applied_events) == ("live", handled_events(backlog, projector))
        assert_equals_rebuild(backlog, projector)


def _lag(engine: Engine) -> int:
    with engine.connect() as conn:
        total = 0
        for projector in (FactsProjector(), RelationshipsProjector()):
            cp = checkpoints.get(conn, projector.name)
            assert cp is not None
            total += event_reads.count_after(conn, cp.cursor, types=projector.handles)
        return total
