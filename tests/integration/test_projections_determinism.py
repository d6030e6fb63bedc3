"""The issue's requirement: projections are deterministic. A realistic mixed stream
(several tenants; turns, facts with conflicts, entities, relationships,
reinforcements, retractions, restores, promotions, resolutions) is appended while
live projectors follow it; once they are caught up, every projection is rebuilt
from the ledger and the rebuilt tables must equal the live ones row for row.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import pytest
from sqlalchemy.engine import Engine

from memledger.events.catalogue import (
    ConflictResolved,
    MemoryPromoted,
    MemoryReinforced,
    MemoryRestored,
    MemoryRetracted,
)
from memledger.projectors import checkpoints, rebuild, runner
from memledger.projectors.checkpoints import Checkpoint
from memledger.store import event_reads
from tests.integration.test_projections_support import (
    READ_MODELS,
    append_in_transactions,
    checksums,
    coalesce,
    fresh_database,
    handled_events,
    read_models,
)
from tests.support import workload

if TYPE_CHECKING:
    from tests.conftest import TestDatabase

T0 = datetime(2025, 2, 3, 9, 0, tzinfo=UTC)


@dataclass
class Run:
    """What the module's one run observed, per projection name."""

    events: int
    applied_while_appending: int
    checkpoints: dict[str, Checkpoint]
    handled: dict[str, int]
    live: dict[str, dict[str, tuple[int, str]]]
    rebuilt_from: dict[str, int]
    rebuilt: dict[str, dict[str, tuple[int, str]]]


def _settled(engine: Engine) -> bool:
    """Every projection has applied all it can (or has stopped on a failure)."""
    with engine.connect() as conn:
        for projector in read_models():
            cp = checkpoints.get(conn, projector.name)
            if cp is None:
                return False
            if cp.state != "failed" and event_reads.has_events_after(conn, cp.cursor, types=projector.handles):
                return False
    return True


@pytest.fixture(scope="module")
def run(database: TestDatabase) -> Iterator[Run]:
    appends = workload.generate(seed=3, tenants=4, turns=500, start=T0)
    kinds = {type(new.event) for a in appends for new in a.events}
    assert {MemoryReinforced, MemoryRetracted, MemoryRestored, MemoryPromoted, ConflictResolved} <= kinds
    # small transactions of a few streams each, so the live runners see many batches
    batches = coalesce(appends, 40)
    with fresh_database(database, "proj_determinism", pool_size=6) as engine:
        errors: list[BaseException] = []

        def follower(stop: threading.Event) -> threading.Thread:
            def follow() -> None:
                try:
                    runner.follow(engine, read_models(), poll_interval=0.01, should_stop=stop.is_set)
                except Exception as e:  # noqa: BLE001 - reported by the fixture
                    errors.append(e)

            thread = threading.Thread(target=follow, daemon=True)
            thread.start()
            return thread

        # Most batches are appended while the live runners follow; the last ones while
        # none does, so the runners must also catch up on a backlog (however fast they are).
        stop = threading.Event()
        following = follower(stop)
        try:
            total = append_in_transactions(engine, batches[:-20], per_tx=2)
        finally:
            stop.set()
            following.join(timeout=60)
        with engine.connect() as conn:
            applied_meanwhile = sum(
                cp.applied_events for cp in checkpoints.all_checkpoints(conn) if cp.name in READ_MODELS
            )
        total = append_in_transactions(engine, batches[-20:], per_tx=2)  # the ledger's count of events
        stop = threading.Event()
        following = follower(stop)
        try:
            deadline = time.monotonic() + 180
            while not _settled(engine) and not errors:
                assert time.monotonic() < deadline, "the live runners did not catch up"
                time.sleep(0.05)
        finally:
            stop.set()
            following.join(timeout=60)
        assert not errors, errors

        with engine.connect() as conn:
            states = {cp.name: cp for cp in checkpoints.all_checkpoints(conn) if cp.name in READ_MODELS}
        handled = {p.name: handled_events(engine, p) for p in read_models()}
        live = {p.name: checksums(engine, p) for p in read_models()}
        rebuilt_from = {p.name: rebuild.rebuild(engine, p) for p in read_models()}
        rebuilt = {p.name: checksums(engine, p) for p in read_models()}
        yield Run(total, applied_meanwhile, states, handled, live, rebuilt_from, rebuilt)


def test_the_stream_is_large_and_was_projected_while_it_was_appended(run: Run) -> None:
    assert run.events > 7000
    assert run.applied_while_appending > 0, "the live runners followed the appends"
    assert run.applied_while_appending < sum(run.handled.values()), "and had to catch up"


@pytest.mark.parametrize("name", [pytest.param(n, marks=()) if n == "facts" else n for n in READ_MODELS])
def test_a_rebuild_equals_the_live_projection_row_for_row(run: Run, name: str) -> None:
    cp = run.checkpoints[name]
    assert (cp.state, cp.error) == ("live", None)
    assert cp.applied_events == run.handled[name], "the live runner applied every event once"
    assert run.rebuilt_from[name] == run.handled[name]
    assert all(rows > 0 for rows, _ in run.live[name].values())
    assert run.rebuilt[name] == run.live[name]
