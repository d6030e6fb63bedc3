"""A projector crashing in the middle of a batch, through the service: the background
threads of ``bootstrap.start_background`` follow the ledger, as ``memledger serve --workers``
runs them (tests/integration covers the runner alone and a killed runner process).

Two crashes: an event the turns projector cannot apply (a CHECK constraint stands in
for a bug), fixed and then reset through ``service.projections.reset_failure`` while
the service runs; and the background's write transactions killed by PostgreSQL in
the middle of their batches (``pg_terminate_backend``), as when a backend crashes.
Either way nothing is skipped or applied twice, and nobody restarts the threads.
"""

from __future__ import annotations

import time

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from memledger import bootstrap
from memledger.events.envelope import START
from memledger.projectors import registry
from memledger.projectors.base import live_schema
from memledger.projectors.status import ProjectionStatus
from memledger.service import integrity, projections
from memledger.service.background import Background
from memledger.service.record import TurnInput, record_turns
from memledger.service.types import Scopes
from memledger.store import event_reads
from tests.faults.checks import (
    applied,
    assert_read_models_equal_a_rebuild,
    caught_up,
    extracted_turns,
    turns_in_ledger,
    wait_until,
)
from tests.faults.own_server import OwnServer
from tests.faults.test_database_restart import turn_batches, turn_text

TENANT = "crash"
POISON = "b005"


def record(database: bootstrap.App, prefix: str, count: int) -> list[str]:
    """``count`` turns in one call (one transaction); their ids."""
    batch = [
        TurnInput(role="user", text=turn_text(i), turn_id=f"{prefix}{i:03d}", scopes=Scopes(session=prefix, user="ann"))
        for i in range(count)
    ]
    record_turns(database.for_tenant(TENANT), TENANT, batch)
    return [str(t.turn_id) for t in batch]


def turn_rows(engine: Engine) -> set[str]:
    """The turn ids in the turns read model."""
    with engine.connect() as conn:
        # text(): the live copy's table, by its schema; the tests read it as an operator would.
        rows = conn.execute(
            sa.text(f"SELECT turn_id FROM {live_schema('turns')}.turns WHERE tenant_id = :t"), {"t": TENANT}
        )
        return {str(r[0]) for r in rows}


def running(background: Background) -> None:
    dead = [t.name for t in background.threads if not t.is_alive()]
    assert not dead, f"background threads that died: {dead}"


def test_an_event_the_turns_projector_cannot_apply_stops_it_there_until_a_fix_and_a_reset_with_no_restart(
    pg: OwnServer,
) -> None:
    database = pg.database("poison")
    engine = database.engine
    background = bootstrap.start_background(database)
    worker = background.loop.worker
    turns_table = f"{live_schema('turns')}.turns"
    try:
        first = record(database, "a", 10)
        wait_until(lambda: caught_up(engine, worker), 60, "the first turns to be projected")
        with engine.begin() as tx:
            # text(): DDL. A constraint the projector does not know of: its insert of one turn fails.
            tx.execute(
                sa.text(
                    f"ALTER TABLE {turns_table} ADD CONSTRAINT faults_poison CHECK (turn_id <> '{POISON}') NOT VALID"
                )
            )
        second = record(database, "b", 10)  # b005, in the middle of the batch, cannot be applied

        def turns_status() -> ProjectionStatus:
            return next(s for s in projections.statuses(engine) if s.name == "turns")

        wait_until(lambda: turns_status().state == "failed", 30, "the turns projection to stop")
        stopped = turns_status()
        assert stopped.error_event_id == f"turn:{POISON}", stopped
        assert stopped.error is not None and "faults_poison" in stopped.error, stopped
        with engine.connect() as conn:
            (poison,) = event_reads.read_events(conn, TENANT, [f"turn:{POISON}"])
        assert stopped.error_position == poison.position
        assert turn_rows(engine) == set(first) | set(second[:5]), "the events before it applied, none after"

        third = record(database, "c", 10)  # the service goes on: ingestion, extraction, the other projections
        others = [p.name for p in registry.all_projectors() if p.name != "turns"]
        wait_until(
            lambda: (
                worker.pending() == 0
                and all(s.lag_events == 0 for s in projections.statuses(engine) if s.name in others)
            ),
            60,
            "the other projections and the worker to go on",
        )
        running(background)
        assert turns_status().error_position == poison.position, "it skipped the event"

        with engine.begin() as tx:
            tx.execute(sa.text(f"ALTER TABLE {turns_table} DROP CONSTRAINT faults_poison"))  # text(): DDL, the fix
        projections.reset_failure(engine, "turns")
        waited = wait_until(lambda: caught_up(engine, worker), 30, "the turns projection to go on by itself")
        running(background)
    finally:
        background.stop()
    print(f"the turns projection went on {waited:.1f} s after the reset")
    every_turn = set(first) | set(second) | set(third)
    assert turn_rows(engine) == every_turn
    assert applied(engine)["turns"] == len(every_turn), "a turn applied twice or skipped"
    assert_read_models_equal_a_rebuild(engine)


def _kill_writers(engine: Engine) -> int:
    """Terminate every session of this database, but ours, that is inside a write transaction."""
    with engine.connect() as conn:
        # text(): the server's activity view and its admin function.
        killed = conn.execute(
            sa.text(
                "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
                " AND backend_xid IS NOT NULL AND application_name = 'memledger'"
            )
        ).scalar_one()
        conn.commit()
        return int(killed)


def test_background_transactions_killed_mid_batch_lose_and_repeat_nothing(pg: OwnServer) -> None:
    database = pg.database("killed")
    engine = database.engine
    batches = turn_batches(200, 50, "k")
    for batch in batches:
        record_turns(database.for_tenant(TENANT), TENANT, batch)
    every_turn = {str(t.turn_id) for batch in batches for t in batch}
    background = bootstrap.start_background(database)
    worker = background.loop.worker
    kills: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while len(kills) < 5 and time.monotonic() < deadline and not caught_up(engine, worker):
            killed = _kill_writers(engine)
            if killed:
                kills.append(killed)
                time.sleep(0.3)  # let them get back to work, then strike again
            else:
                time.sleep(0.005)
        assert kills, "no background transaction was ever caught in the middle of a batch"
        waited = wait_until(lambda: caught_up(engine, worker), 90, "the background to catch up after the kills")
        running(background)
    finally:
        background.stop()
    print(f"{sum(kills)} sessions killed in {len(kills)} strikes; caught up {waited:.1f} s after")
    counts = turns_in_ledger(engine, TENANT)
    assert set(counts) == every_turn and max(counts.values()) == 1
    assert extracted_turns(engine, worker) == every_turn
    done = applied(engine)
    assert done[worker.name] == len(every_turn), "a turn extracted twice or skipped"
    with engine.connect() as conn:
        for projector in registry.all_projectors():
            handled = event_reads.count_after(conn, START, types=projector.handles)
            assert done[projector.name] == handled, f"{projector.name}: an event applied twice or skipped"
    assert integrity.verify(engine).ok
    assert_read_models_equal_a_rebuild(engine)
