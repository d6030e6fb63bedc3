"""``memledger db start|stop|status`` on a scratch embedded server (its own
MEMLEDGER_HOME, never the test session's server), and their refusal with DATABASE_URL."""

from __future__ import annotations

import json
from pathlib import Path

import psutil
import pytest

from memledger.store import embedded_server
from tests.conftest import TestDatabase
from tests.e2e.conftest import run_cli

USAGE_EXIT = 2


def test_db_stop_then_start_stops_the_embedded_server_cleanly_and_brings_it_back(
    embedded_home: dict[str, str],
) -> None:
    pgdata = Path(embedded_home["MEMLEDGER_HOME"]) / "pgdata"
    started = run_cli(embedded_home, "db", "start", timeout=240)
    assert started.returncode == 0, started.stderr
    first = embedded_server.embedded_pid(pgdata)
    assert first is not None and f"started (pid {first}); data in {pgdata}" in started.stdout

    stopped = run_cli(embedded_home, "db", "stop")

    assert stopped.returncode == 0, stopped.stderr
    assert f"stopped the embedded PostgreSQL; data in {pgdata}" in stopped.stdout
    assert not (pgdata / "postmaster.pid").exists(), "pg_ctl stop leaves no postmaster.pid"
    assert not _alive(first)
    assert "shut down" in (pgdata / "log").read_text()  # a clean shutdown, not a crash
    again = run_cli(embedded_home, "db", "stop")
    assert again.returncode == 0 and "was not running" in again.stdout

    restarted = run_cli(embedded_home, "db", "start")

    assert restarted.returncode == 0, restarted.stderr
    assert embedded_server.embedded_pid(pgdata) not in {None, first}
    status = run_cli(embedded_home, "db", "status", "--json")
    assert status.returncode == 0, status.stderr
    report = json.loads(status.stdout)
    assert report["embedded_was_running"] is True
    assert report["embedded_data"] == str(pgdata)
    assert report["embedded_pid"] == embedded_server.embedded_pid(pgdata)


@pytest.mark.parametrize("verb", ["start", "stop"])
def test_db_start_and_stop_refuse_with_database_url_as_they_manage_only_the_embedded_server(
    database: TestDatabase, verb: str
) -> None:
    result = run_cli(database.env, "db", verb)

    assert result.returncode == USAGE_EXIT
    assert f"db {verb} manages only the embedded PostgreSQL, and DATABASE_URL is set" in result.stderr
    assert result.stdout == ""


def test_db_status_with_database_url_reports_no_embedded_server(database: TestDatabase) -> None:
    result = run_cli(database.env, "db", "status", "--json")

    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["embedded"] is False
    assert report["embedded_data"] is None and report["embedded_pid"] is None


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, not yet reaped by its parent, does not)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
