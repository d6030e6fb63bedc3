"""``memledger import`` as a user runs it: a subprocess reading stdin."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from typing import TYPE_CHECKING

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
