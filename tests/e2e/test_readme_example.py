"""The README's example, run as written, against a database of its own on the session's
server: its ``process()`` extracts every pending turn of its database, and the session's
holds every other module's turns."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import pytest

from memledger.extraction.heuristic import HeuristicExtractor
from memledger.store import db
from tests.conftest import TestDatabase

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_example_runs_and_prints_a_cited_memory_block(
    database: TestDatabase, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code = re.search(r"## Using it\s+```python\n(.*?)```", README.read_text(), re.DOTALL)
    assert code is not None, "the README lost its example"
    url = database.new_database("readme")
    for name, value in {**database.env, "DATABASE_URL": url.render_as_string(hide_password=False)}.items():
        monkeypatch.setenv(name, value)
    source = code.group(1).replace('"acme"', repr(f"readme-{uuid.uuid4().hex[:8]}"))  # a tenant of its own
    try:
        exec(compile(source, str(README), "exec"), {"__name__": "readme"})
    finally:
        db.drop_database(database.server_url, str(url.database))
    out = capsys.readouterr().out
    assert "BEGIN PERSISTENT MEMORY" in out
    assert "Phoenix uses PostgreSQL" in out
    assert "\nTrue\n" in out  # the served block, replayed by its event id, matches its hash
    assert f"fact.extracted heuristic {HeuristicExtractor.version}" in out
    assert "USES" in out
