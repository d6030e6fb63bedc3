"""``memledger import`` as a user runs it: a subprocess reading stdin."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from typing import TYPE_CHECKING

import sqlalchemy as sa

from memledger import bootstrap
from memledger.library import MemoryLedger
from memledger.service.types import Scopes
from memledger.store import event_reads
from tests.e2e.conftest import scratch

if TYPE_CHECKING:
    from tests.conftest import TestDatabase

CLI = [sys.executable, "-m", "memledger.cli.main"]


def _import(database: TestDatabase, stdin: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, "import", "-", *args],
        input=stdin,
        check=False,
        env=database.env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_import_from_stdin_prints_a_json_summary_and_is_idempotent(database: TestDatabase) -> None:
    tenant = f"import-cli-{uuid.uuid4().hex[:8]}"
    history = "\n".join(
        [
            json.dumps(
                {"id": "c1", "messages": [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"}]}
            ),
            "not json",
            json.dumps({"role": "user", "text": "mine", "session": "s"}),
        ]
    )
    first = _import(database, history, "--tenant", tenant, "--user", "ana", "--json")
    assert first.returncode == 1, first.stderr  # a line was refused; the others were imported
    summary = json.loads(first.stdout)
    assert (summary["conversations"], summary["recorded"], summary["present"]) == (2, 3, 0)
    assert [r["line"] for r in summary["refused"]] == [2] and "not JSON" in summary["refused"][0]["reason"]
    again = json.loads(_import(database, history, "--tenant", tenant, "--user", "ana", "--json").stdout)
    assert (again["recorded"], again["present"], len(again["refused"])) == (0, 3, 1)
    other_user = json.loads(_import(database, history, "--tenant", tenant, "--json").stdout)
    assert other_user["recorded"] == 0  # the same turns with other scopes are refused, never recorded twice
    assert len(other_user["refused"]) == 3, other_user


def test_import_text_summary_and_usage_errors(database: TestDatabase) -> None:
    tenant = f"import-cli-{uuid.uuid4().hex[:8]}"
    done = _import(database, json.dumps([{"role": "user", "content": "one"}]), "--tenant", tenant)
    assert done.returncode == 0, done.stderr
    assert "1 turn(s) recorded, 0 already present" in done.stdout
    assert _import(database, "", "--tenant", tenant, "--format", "xml").returncode == 2
    missing = subprocess.run([*CLI, "import", "/nonexistent/h.jsonl", "--tenant", tenant], env=database.env,
                             capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert missing.returncode == 2 and "cannot read" in missing.stderr


def _scratch_env(database: TestDatabase, ledger: MemoryLedger) -> dict[str, str]:
    return {**database.env, "DATABASE_URL": ledger.database.url.render_as_string(hide_password=False)}


WAITED = json.dumps({"role": "user", "text": "Project Phoenix uses PostgreSQL.", "session": "s1"})
WAITED_SCOPES = Scopes(session="s1", project="phoenix", user="dana")


def test_import_wait_prints_ready_seconds_and_the_next_selection_has_the_fact(database: TestDatabase) -> None:
    tenant = f"import-wait-{uuid.uuid4().hex[:8]}"
    with scratch(database, "import_wait_cli") as ledger:
        env = _scratch_env(database, ledger)
        args = ["--tenant", tenant, "--user", "dana", "--project", "phoenix", "--wait", "--json"]
        done = subprocess.run([*CLI, "import", "-", *args], input=WAITED, env=env, capture_output=True, text=True,
                              timeout=300, check=False)  # fmt: skip
        assert done.returncode == 0, done.stderr
        summary = json.loads(done.stdout)
        assert summary["recorded"] == 1 and summary["behind"] == [] and summary["ready_seconds"] >= 0, summary
        found = ledger.select(tenant, "Which database does Phoenix use?", scopes=WAITED_SCOPES).items
        assert any(item.kind == "fact" and "PostgreSQL" in item.text for item in found)  # no catch-up call


def test_import_wait_timeout_exits_1_and_keeps_the_import(database: TestDatabase) -> None:
    tenant = f"import-wait-{uuid.uuid4().hex[:8]}"
    with scratch(database, "import_wait_cli") as ledger, ledger.engine.connect() as conn:
        name = bootstrap.build_worker(ledger.database).name
        key = sa.func.hashtextextended(sa.literal(name), 0)
        assert conn.execute(sa.select(sa.func.pg_try_advisory_lock(key))).scalar()  # as a running worker does
        conn.commit()
        args = ["--tenant", tenant, "--wait", "--wait-timeout", "0.5", "--json"]
        late = subprocess.run([*CLI, "import", "-", *args], input=WAITED, env=_scratch_env(database, ledger),
                              capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
        conn.execute(sa.select(sa.func.pg_advisory_unlock(key)))
        conn.commit()
        assert late.returncode == 1, late.stderr
        assert "not ready within 0.5 s" in late.stderr and "the import is stored" in late.stderr
        summary = json.loads(late.stdout)
        assert (summary["recorded"], summary["ready_seconds"], summary["behind"]) == (1, None, [name])
        with ledger.engine.connect() as reading:
            assert [r.event.text for r in event_reads.read_tenant(reading, tenant)] == [
                "Project Phoenix uses PostgreSQL."
            ]
