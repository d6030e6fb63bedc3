"""``memledger extract --once`` and ``memledger worker`` as a user runs them: subprocesses
on the session's database, with the default (heuristic) extractor.

The heuristic extractor's checkpoint is moved to the ledger's end first, so the
commands see only the turns these tests record (not every other test's turns).
"""

from __future__ import annotations

import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from typing import IO, TYPE_CHECKING

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from memledger.events import codec
from memledger.events.catalogue import EntityObserved, Event, Scopes
from memledger.events.envelope import Cursor
from memledger.projectors import checkpoints
from memledger.service.extraction import ExtractionWorker
from memledger.service.record import TurnInput, record_turns
from memledger.store import db
from memledger.store.schema import events
from tests.e2e.conftest import scratch_ledger

if TYPE_CHECKING:
    from tests.conftest import TestDatabase as SessionDatabase

CLI = [sys.executable, "-m", "memledger.cli.main"]
REPORT = (
    r"^{name}: extracted (\d+) turns into (\d+) events \(refused (\d+) secrets, "
    r"skipped (\d+) over limits, dropped (\d+) below confidence 0\.5\)$"
)
TEXT = "I use Docker at work."


@pytest.fixture(scope="module")
def heuristic(database: SessionDatabase) -> ExtractionWorker:
    """A worker on the heuristic extractor's checkpoint, moved to the ledger's end."""
    from memledger.extraction.heuristic import HeuristicExtractor  # the CLI's default extractor

    worker = ExtractionWorker(database.engine, HeuristicExtractor())
    worker.install()
    with db.begin(database.engine) as tx:
        checkpoints.lock(tx, worker.name)
        row = tx.execute(
            sa.select(sa.cast(events.c.tx_id, sa.Text), events.c.position)
            .order_by(events.c.tx_id.desc(), events.c.position.desc())
            .limit(1)
        ).first()
        if row is not None:
            checkpoints.advance(tx, worker.name, Cursor(int(row[0]), int(row[1])), 0)
    return worker


def record(engine: Engine, tenant: str, worker: ExtractionWorker) -> str:
    """Record one user turn and wait until the worker can see it; its event id."""
    turn_id = f"cli-{uuid.uuid4().hex[:8]}"
    scopes = Scopes(session="s1", project="p1")
    record_turns(engine, tenant, [TurnInput(role="user", text=TEXT, turn_id=turn_id, scopes=scopes)])
    deadline = time.monotonic() + 30  # gap-safe reads wait for older open transactions
    while worker.pending() == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    return f"turn:{turn_id}"


def caused_by(engine: Engine, tenant: str, turn_event_id: str) -> list[Event]:
    """The committed events a turn caused (not through the gap-safe reader, which holds new
    events back while any older transaction on the shared test server is open)."""
    stmt = (
        sa.select(
            events.c.event_type,
            events.c.schema_version,
            sa.cast(events.c.payload, sa.Text),
            sa.cast(events.c.private, sa.Text),  # an event's private fields are stored apart
        )
        .where(events.c.tenant_id == tenant, events.c.metadata["causation_id"].astext == turn_event_id)
        .order_by(events.c.position)
    )
    with engine.connect() as conn:
        return [codec.decode_stored(*row)[0] for row in conn.execute(stmt).all()]


def test_extract_once_prints_the_report_and_exits_0(
    database: SessionDatabase, engine: Engine, tenant: str, heuristic: ExtractionWorker
) -> None:
    turn = record(engine, tenant, heuristic)
    result = subprocess.run(
        [*CLI, "extract", "--once"], env=database.env, capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    match = re.search(REPORT.format(name=re.escape(heuristic.name)), result.stdout, re.MULTILINE)
    assert match, result.stdout
    assert int(match.group(1)) == 1
    assert int(match.group(2)) >= 1
    got = caused_by(engine, tenant, turn)
    assert len(got) == int(match.group(2))
    assert any(isinstance(e, EntityObserved) and e.name == "Docker" for e in got)
    assert heuristic.pending() == 0


class Lines:
    """A subprocess's output lines, read by a thread (so the pipe never fills and blocks
    the process) and kept, so a test can wait for a line with a timeout."""

    def __init__(self, stream: IO[str]) -> None:
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        self._thread = threading.Thread(target=self._pump, args=(stream,), daemon=True)
        self._thread.start()

    def _pump(self, stream: IO[str]) -> None:
        for line in stream:
            self.seen.append(line)
            self.lines.put(line)

    def text(self) -> str:
        """Everything read so far (all of it once the process has ended)."""
        self._thread.join(5)
        return "".join(self.seen)

    def wait_for(self, text: str, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                break
            if text in line:
                return line
        raise AssertionError(f"no line with {text!r} within {timeout} s")


def test_worker_extracts_turns_as_they_arrive_and_stops_on_sigterm(
    database: SessionDatabase, engine: Engine, tenant: str, heuristic: ExtractionWorker
) -> None:
    env = {**database.env, "MEMLEDGER_WORKER_INTERVAL_S": "3600", "PYTHONFAULTHANDLER": "1"}
    proc = subprocess.Popen([*CLI, "worker"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stderr is not None
    stderr = Lines(proc.stderr)
    try:
        Lines(proc.stdout).wait_for(f"worker {heuristic.name} running", 60)
        turn = record(engine, tenant, heuristic)
        deadline = time.monotonic() + 20
        while not caused_by(engine, tenant, turn) and time.monotonic() < deadline:
            assert proc.poll() is None, stderr.text()
            time.sleep(0.05)
        got = caused_by(engine, tenant, turn)
        assert any(isinstance(e, EntityObserved) and e.name == "Docker" for e in got)
        proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGABRT)  # faulthandler prints every thread's stack
            proc.wait(10)
            raise AssertionError(f"the worker ignored SIGTERM:\n{stderr.text()}") from None
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert code == 0, stderr.text()
    assert "Traceback" not in stderr.text()


def test_a_new_extractor_says_it_will_extract_the_past_and_from_now_skips_it(database: SessionDatabase) -> None:
    """On a database of its own: its heuristic extractor has never run there."""
    ledger, drop = scratch_ledger(database, "from_now")
    try:
        ledger.record_turn("fromnow", "user", TEXT, scopes=Scopes(session="s1", project="p1"))
        env = {**database.env, "DATABASE_URL": ledger.database.url.render_as_string(hide_password=False)}
        fresh = {**env, "MEMLEDGER_EXTRACTOR": "llm", "MEMLEDGER_LLM_MODEL": f"never-called-{uuid.uuid4().hex[:6]}"}

        def run(*args: str, environment: dict[str, str]) -> subprocess.CompletedProcess[str]:
            command = [*CLI, *args]
            return subprocess.run(command, env=environment, capture_output=True, text=True, timeout=120, check=False)

        skipped = run("extract", "--once", "--from-now", environment=fresh)
        assert skipped.returncode == 0, skipped.stderr
        assert "starts at the end of the ledger" in skipped.stderr
        assert "extracted 0 turns" in skipped.stdout  # no model was called for the past
        warned = run("extract", "--once", environment=env)
        assert warned.returncode == 0, warned.stderr
        assert "has not run here before: it extracts all 1 turns recorded so far" in warned.stderr
        assert "extracted 1 turns" in warned.stdout
    finally:
        drop()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_serve_with_workers_says_a_new_extractor_will_extract_the_past(database: SessionDatabase) -> None:
    """``serve --workers`` runs the same worker as ``memledger worker``: it warns the same way,
    and ``--from-now`` starts a new extractor at the end of the ledger."""
    ledger, drop = scratch_ledger(database, "serve_from_now")
    try:
        ledger.record_turn("servenow", "user", TEXT, scopes=Scopes(session="s1", project="p1"))
        env = {**database.env, "DATABASE_URL": ledger.database.url.render_as_string(hide_password=False)}

        def first_line(*args: str) -> str:
            model = f"never-called-{uuid.uuid4().hex[:6]}"  # a new extractor version each time
            environment = {**env, "MEMLEDGER_EXTRACTOR": "llm", "MEMLEDGER_LLM_MODEL": model}
            command = [*CLI, "serve", "--workers", "--port", str(free_port()), *args]
            proc = subprocess.Popen(command, env=environment, stderr=subprocess.PIPE, text=True)
            assert proc.stderr is not None
            try:
                return Lines(proc.stderr).wait_for(model, 60)
            finally:
                proc.terminate()
                proc.wait(30)

        assert "has not run here before: it extracts all 1 turns recorded so far" in first_line()
        assert "starts at the end of the ledger" in first_line("--from-now")
        refused = subprocess.run(
            [*CLI, "serve", "--no-workers", "--from-now"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert refused.returncode != 0
        assert "--from-now is for the extraction worker" in refused.stderr
    finally:
        drop()
