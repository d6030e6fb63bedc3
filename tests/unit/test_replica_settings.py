"""The read replicas' settings: a comma-separated list, each connected as the application role."""

from __future__ import annotations

import pytest
from sqlalchemy.engine import make_url

from memledger.bootstrap import replica_url
from memledger.config import Settings
from memledger.service.replica_reads import ReplicaLag


def test_read_urls_are_a_comma_separated_list(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMLEDGER_READ_DATABASE_URLS", "postgresql://a:5432, postgresql://b:5433/other")
    assert Settings().read_database_urls == ("postgresql://a:5432", "postgresql://b:5433/other")
    monkeypatch.setenv("MEMLEDGER_READ_DATABASE_URLS", "")
    assert Settings().read_database_urls == ()


def test_empty_entries_are_skipped_never_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """A refused setting is shown with its value (cli/startup.py), and these hold passwords."""
    monkeypatch.setenv("MEMLEDGER_READ_DATABASE_URLS", "postgresql://u:secret@a,, postgresql://b,")
    assert Settings().read_database_urls == ("postgresql://u:secret@a", "postgresql://b")


def test_a_replica_is_read_as_the_application_role_with_a_connect_timeout() -> None:
    app = make_url("postgresql+psycopg://memledger_app:pw@primary:5432/memledger")
    url = replica_url("postgresql://postgres:owner@standby:5433", app)
    assert (url.username, url.password, url.host, url.port, url.database) == (
        "memledger_app",
        "pw",
        "standby",
        5433,
        "memledger",
    )
    assert url.query["connect_timeout"] == "2"
    kept = replica_url("postgresql://standby/other?connect_timeout=9", app)
    assert (kept.database, kept.query["connect_timeout"]) == ("other", "9")


def test_a_replicas_state_reads_as_a_word() -> None:
    assert ReplicaLag(name="r", ok=True, in_recovery=True).state == "ok"
    assert ReplicaLag(name="r", ok=False, in_recovery=False).state == "not a standby"
    assert ReplicaLag(name="r", ok=False, in_recovery=True, replay_paused=True).state == "paused"
    assert ReplicaLag(name="r", ok=False, in_recovery=True).state == "behind"
    assert ReplicaLag(name="r", ok=False, error="refused").state == "refused"
