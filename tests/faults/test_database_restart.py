"""PostgreSQL restarting in the middle of ingestion.

A client records turns in batches while the projectors, the sealer and the
extraction worker run in the background threads of ``bootstrap.start_background``; the
server crashes (``pg_ctl stop -m immediate``: sessions cut, no checkpoint, WAL
replayed at the next start) and comes back. The client sends a refused batch again,
unchanged, as any client would. Afterwards every turn is in the ledger once, each
was extracted once, and the read models equal a rebuild, with nobody restarting
the background threads. The HTTP API says 503 with the reason while the server is
down, never a 500 with a stack trace.
"""

from __future__ import annotations

import sys
import threading
import time
import traceback
from collections.abc import Sequence
from typing import Any

import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine

from memledger import bootstrap
from memledger.api.app import create_app
from memledger.errors import DatabaseUnavailable
from memledger.service import integrity, keys, projections
from memledger.service.background import Background
from memledger.service.extraction import ExtractionWorker
from memledger.service.record import TurnInput, record_turns
from memledger.service.types import Scopes
from memledger.store import event_store
from memledger.store.follow import Wakeup, follow
from tests.conftest import turn_event
from tests.faults.checks import (
    applied,
    assert_read_models_equal_a_rebuild,
    caught_up,
    extracted_turns,
    turns_in_ledger,
    wait_until,
)
from tests.faults.own_server import OwnServer

TENANT = "acme"
TOOLS = ("Docker", "PostgreSQL", "Kubernetes", "Terraform", "Grafana", "Redis", "Kafka")
PEOPLE = ("Sarah", "Omar", "Li Wei", "Priya")
PROJECTS = ("Phoenix", "Atlas", "Orion")


def turn_text(i: int) -> str:
    """A realistic user turn; every one names something the heuristic extractor picks up."""
    tool, person, project = TOOLS[i % len(TOOLS)], PEOPLE[i % len(PEOPLE)], PROJECTS[i % len(PROJECTS)]
    templates = (
        f"I use {tool} for the {project} project.",
        f"I work with {person} on {project}, mostly on {tool}.",
        f"We decided to move {project} to {tool} next sprint.",
        f"I prefer {tool} over the alternatives for {project}.",
    )
    return templates[i % len(templates)]


def turn_batches(count: int, per_batch: int, prefix: str) -> list[list[TurnInput]]:
    """``count`` turns with ids of their own, five per session, in batches."""
    turns = [
        TurnInput(
            role="user",
            text=turn_text(i),
            turn_id=f"{prefix}{i:04d}",
            scopes=Scopes(session=f"{prefix}-s{i // 5}", project=PROJECTS[i % len(PROJECTS)], user="ann"),
        )
        for i in range(count)
    ]
    return [turns[start : start + per_batch] for start in range(0, count, per_batch)]


class Sender(threading.Thread):
    """A client recording batches of turns. A batch refused because the database is
    unavailable is sent again unchanged (same turn ids) until it is accepted; it may
    have been written before the refusal (a lost acknowledgement).

    After ``fast`` batches it sends one every ``pace_s`` until its first refusal, then
    the rest at once: the crash always falls in the middle, however slow the machine."""

    def __init__(
        self, engine: Engine, batches: Sequence[Sequence[TurnInput]], *, fast: int, pace_s: float = 0.1
    ) -> None:
        super().__init__(name="sender", daemon=True)
        self.engine, self.batches, self.fast, self.pace_s = engine, batches, fast, pace_s
        self.acked: list[str] = []
        self.refusals: list[str] = []
        self.unexpected: list[BaseException] = []

    def run(self) -> None:
        deadline = time.monotonic() + 120.0
        for n, batch in enumerate(self.batches):
            if n >= self.fast and not self.refusals:
                time.sleep(self.pace_s)
            while time.monotonic() < deadline:
                try:
                    record_turns(self.engine, TENANT, batch)
                except DatabaseUnavailable as e:
                    self.refusals.append(str(e))
                    time.sleep(0.05)
                    continue
                except BaseException as e:  # noqa: BLE001 - reported by the test
                    self.unexpected.append(e)
                    return
                self.acked.extend(str(t.turn_id) for t in batch)
                break


def resumed(background: Background) -> bool:
    """True once the background has caught up; fails at once if one of its threads died."""
    dead = [t.name for t in background.threads if not t.is_alive()]
    assert not dead, f"background threads that died at the restart: {dead}"
    return caught_up(background.loop.worker.engine, background.loop.worker)


def behind(background: Background) -> str:
    """What has not caught up (turns waiting for extraction, projections not live), the
    database's sessions and every thread's stack: what a timeout needs to be understood."""
    frames = sys._current_frames()
    stacks = "".join(
        f"\n--- {t.name}\n" + "".join(traceback.format_stack(frames[t.ident], limit=8))
        for t in threading.enumerate()
        if t.ident in frames and t is not threading.current_thread()
    )
    try:
        state = _database_state(background.loop.worker)
    except Exception as e:  # noqa: BLE001 - the stacks are still worth printing
        state = f"the database could not be read: {e!r}"
    return f"{state}; threads:{stacks}"


def _database_state(worker: ExtractionWorker) -> str:
    lagging = [
        f"{s.name}: {s.state}, lag {s.lag_events}, error {s.error}"
        for s in projections.statuses(worker.engine)
        if s.state != "live" or s.lag_events
    ]
    with worker.engine.connect() as conn:
        # text(): the server's activity view, to name a session that holds the others back
        sessions = conn.execute(
            sa.text(
                "SELECT pid, state, backend_xid::text, wait_event, left(query, 80),"
                " (SELECT count(*) FROM pg_locks l WHERE l.pid = a.pid AND l.locktype = 'advisory')"
                " FROM pg_stat_activity a WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
        ).all()
    return f"pending extraction: {worker.pending()}; projections behind: {lagging}; sessions: {sessions}"


def test_a_crash_in_the_middle_of_ingestion_loses_and_repeats_no_turn_and_everything_resumes(pg: OwnServer) -> None:
    database = pg.database("restart")
    engine = database.engine
    batches = turn_batches(240, 4, "r")
    every_turn = {str(t.turn_id) for batch in batches for t in batch}
    background = bootstrap.start_background(database)
    worker = background.loop.worker
    try:
        sender = Sender(database.for_tenant(TENANT), batches, fast=15)
        sender.start()
        wait_until(
            lambda: (
                len(sender.acked) >= 60 and applied(engine).get(worker.name, 0) > 0 and applied(engine)["turns"] > 0
            ),
            60,
            f"ingestion, extraction and projection to be under way ({len(sender.acked)} turns sent)",
            detail=lambda: (
                f"applied: {applied(engine)}, background alive: {[t.is_alive() for t in background.threads]}"
            ),
        )
        assert len(sender.acked) < len(every_turn), "the sender finished before the crash; send more turns"
        pg.stop("immediate")
        time.sleep(1.0)  # down long enough for the sender and every background thread to meet it
        pg.start()
        sender.join(timeout=120)
        assert not sender.is_alive(), "the sender never got its turns accepted after the restart"
        assert not sender.unexpected, f"refusals other than DatabaseUnavailable: {sender.unexpected!r}"
        assert sender.refusals, "the crash never reached the sender"
        assert all("database" in reason for reason in sender.refusals), sender.refusals[:3]

        waited = wait_until(
            lambda: resumed(background), 120, "the worker and projectors to catch up", detail=lambda: behind(background)
        )
    finally:
        background.stop()
    print(f"caught up {waited:.1f} s after the sender finished; {len(sender.refusals)} refusals")

    counts = turns_in_ledger(engine, TENANT)
    assert set(counts) == every_turn, f"lost: {sorted(every_turn - set(counts))[:5]}"
    assert [t for t, n in counts.items() if n > 1] == [], "turns recorded twice"
    assert set(sender.acked) == every_turn
    assert extracted_turns(engine, worker) == every_turn, "turns the worker never extracted"
    done = applied(engine)
    assert done[worker.name] == len(every_turn), "turns extracted twice (or skipped) by the worker's checkpoint"
    assert done["turns"] == len(every_turn), "turns applied twice (or skipped) by the turns projection"
    assert integrity.verify(engine).ok, "the hash chain broke at the crash"
    assert_read_models_equal_a_rebuild(engine)


@pytest.fixture
def api(pg: OwnServer) -> tuple[TestClient, bootstrap.App, dict[str, str]]:
    database = pg.database("api_down")
    _, key = keys.create(database.engine, TENANT, label="faults")
    client = TestClient(create_app(database), raise_server_exceptions=False)
    return client, database, {"Authorization": f"Bearer {key}"}


def test_the_api_answers_503_with_the_reason_while_postgres_is_down_and_recovers_after(
    pg: OwnServer, api: tuple[TestClient, bootstrap.App, dict[str, str]]
) -> None:
    client, database, auth = api
    turn = {"role": "user", "text": "I use Docker.", "turn_id": "down-1", "scopes": {"session": "s1"}}
    assert client.post("/v1/turns", json=turn, headers=auth).status_code == 202

    pg.stop("fast")
    try:
        answers = {
            "record": client.post("/v1/turns", json={**turn, "turn_id": "down-2"}, headers=auth),
            "events": client.get("/v1/events", headers=auth),
            "projections": client.get("/v1/projections", headers=auth),
        }
        context = client.get("/v1/memory/context", params={"request": "tools?"}, headers=auth)
        health = client.get("/health")
    finally:
        pg.start()
    # Context fails open: an empty block that says why, never an error for the chat loop.
    assert context.status_code == 200, context.text
    assert context.json()["item_ids"] == [] and "memory unavailable" in context.json()["block"]
    for name, answer in answers.items():
        assert answer.status_code == 503, f"{name}: {answer.status_code} {answer.text[:300]}"
        error = answer.json()["error"]
        assert error["code"] == "database_unavailable", (name, error)
        assert "database" in error["message"] and "Traceback" not in answer.text, (name, error)
    assert (health.status_code, health.json()) == (503, {"status": "unavailable"})  # details: the operator's

    again = client.post("/v1/turns", json={**turn, "turn_id": "down-2"}, headers=auth)
    assert again.status_code == 202, again.text
    assert client.get("/health").json() == {"status": "ok"}
    assert turns_in_ledger(database.engine, TENANT) == {"down-1": 1, "down-2": 1}


def test_a_session_lost_between_the_pools_ping_and_its_transaction_is_refused_as_unavailable(
    pg: OwnServer, api: tuple[TestClient, bootstrap.App, dict[str, str]]
) -> None:
    """The window in which a server dies under a ping that just succeeded, made certain:
    each checkout of the application role's pool terminates its own backend."""
    client, database, auth = api
    admin = sa.create_engine(pg.url, isolation_level="AUTOCOMMIT")

    def kill_on_checkout(dbapi_connection: Any, record: Any, proxy: Any) -> None:
        with admin.connect() as conn:
            # text(): the server's admin function; waits (1 s at most) until the backend is gone.
            conn.execute(sa.text("SELECT pg_terminate_backend(:pid, 1000)"), {"pid": dbapi_connection.info.backend_pid})

    turn = TurnInput(role="user", text="I use Docker.", turn_id="lost-1", scopes=Scopes(session="s1"))
    sa.event.listen(database.app_engine, "checkout", kill_on_checkout)
    try:
        with pytest.raises(DatabaseUnavailable, match="unreachable"):
            record_turns(database.for_tenant(TENANT), TENANT, [turn])
        answer = client.post("/v1/turns", json={"role": "user", "text": "hi", "turn_id": "lost-2"}, headers=auth)
    finally:
        sa.event.remove(database.app_engine, "checkout", kill_on_checkout)
        admin.dispose()
    assert answer.status_code == 503, answer.text
    assert answer.json()["error"]["code"] == "database_unavailable"
    record_turns(database.for_tenant(TENANT), TENANT, [turn])  # the pool recovers
    assert turns_in_ledger(database.engine, TENANT) == {"lost-1": 1}


def _append_one(engine: Engine, text: str) -> str:
    new = turn_event(text)
    with engine.begin() as tx:
        event_store.append(tx, TENANT, "conv", [new], None, notify=True)
    return new.event_id


def test_a_follower_rides_out_a_crash_and_sees_every_event_once(pg: OwnServer) -> None:
    """``follow`` with a LISTEN wakeup, as ``memledger events tail --follow`` runs it,
    across a crash of the server: no error reaches the follower (before, the page read
    or the wakeup raised), and it yields each event once, in order."""
    database = pg.database("follow")
    engine = database.engine
    before = _append_one(engine, "before the crash")
    seen: list[str] = []
    errors: list[BaseException] = []
    deadline = time.monotonic() + 120
    wakeup = Wakeup(database.url)

    def follower() -> None:
        try:
            stop = lambda: len(seen) >= 2 or time.monotonic() > deadline  # noqa: E731
            for page in follow(engine, tenant_id=TENANT, poll_interval=0.05, wakeup=wakeup, should_stop=stop):
                seen.extend(rec.event_id for rec in page)
        except BaseException as e:  # noqa: BLE001 - reported by the assertion below
            errors.append(e)

    thread = threading.Thread(target=follower, daemon=True)
    thread.start()
    try:
        wait_until(lambda: len(seen) == 1, 60, "the follower to see the first event")
        pg.stop("immediate")
        time.sleep(0.5)  # the follower polls a server that is down
        pg.start()
        after = _append_one(engine, "after the crash")
        thread.join(timeout=120)
    finally:
        wakeup.close()
    assert not errors, f"the follower failed: {errors!r}"
    assert seen == [before, after]
