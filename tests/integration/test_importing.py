"""Importing chat histories on a real PostgreSQL: mapping, idempotent re-runs and
all-or-nothing conversations, through the library (``MemoryLedger.import_turns``)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from memledger.config import Settings
from memledger.events.catalogue import TurnRecorded
from memledger.library import MemoryLedger
from memledger.service import importing, scope_ids
from memledger.service.types import Scopes
from memledger.store import event_reads

if TYPE_CHECKING:
    from tests.conftest import TestDatabase


@pytest.fixture(scope="module")
def ledger(database: TestDatabase) -> Iterator[MemoryLedger]:
    with MemoryLedger.open(Settings(DATABASE_URL=database.url.render_as_string(hide_password=False))) as opened:
        yield opened


@pytest.fixture
def tenant() -> str:
    return f"import-{uuid.uuid4().hex[:10]}"


def _turns(ledger: MemoryLedger, tenant: str) -> list[tuple[int, TurnRecorded]]:
    with ledger.engine.connect() as conn:
        found = event_reads.read_tenant(conn, tenant)
    return [(r.position, r.event) for r in found if isinstance(r.event, TurnRecorded)]


def _history(tmp_path: Path) -> Path:
    path = tmp_path / "history.jsonl"
    lines = [
        {"id": "c1", "messages": [
            {"role": "user", "content": "I adopted a cat named Miso.", "name": "Ana", "timestamp": 1_700_000_000},
            {"role": "assistant", "content": "Congratulations!", "timestamp": "2023-11-14T22:14:00+00:00"},
        ]},
        [{"role": "user", "content": "Second chat."}, {"role": "assistant", "content": "Sure."}],
        {"role": "user", "text": "A turn of my own.", "session": "own", "turn_id": "own-1", "speaker": "Bo"},
    ]  # fmt: skip
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    return path


def test_import_maps_speakers_sessions_and_times(ledger: MemoryLedger, tenant: str, tmp_path: Path) -> None:
    summary = ledger.import_turns(tenant, _history(tmp_path), scopes=Scopes(user="ana"))
    assert (summary.conversations, summary.recorded, summary.present, summary.refused) == (3, 5, 0, ())
    key = scope_ids.key_for(ledger.engine, tenant)
    turns = [event for _, event in _turns(ledger, tenant)]
    by_text = {t.text: t for t in turns}
    assert by_text["I adopted a cat named Miso."].speaker == "Ana"
    assert by_text["I adopted a cat named Miso."].scopes.session == key.stored_id("session", "c1")
    assert by_text["Second chat."].scopes.session == key.stored_id("session", "history.jsonl:2")
    assert by_text["A turn of my own."].turn_id == "own-1" and by_text["A turn of my own."].speaker == "Bo"
    with ledger.engine.connect() as conn:
        (first,) = event_reads.read_events(conn, tenant, ["turn:" + by_text["Congratulations!"].turn_id])
    assert first.occurred_at.isoformat() == "2023-11-14T22:14:00+00:00"


def test_importing_again_records_nothing_new(ledger: MemoryLedger, tenant: str, tmp_path: Path) -> None:
    path = _history(tmp_path)
    ledger.import_turns(tenant, path)
    before = _turns(ledger, tenant)
    again = ledger.import_turns(tenant, path)
    assert (again.recorded, again.present, again.refused) == (0, 5, ())
    assert _turns(ledger, tenant) == before


def test_a_killed_import_completes_on_a_rerun(ledger: MemoryLedger, tenant: str, tmp_path: Path) -> None:
    path = _history(tmp_path)
    first_two = path.read_text().splitlines()[:2]  # what a killed run had stored
    ledger.import_turns(tenant, first_two, source="history.jsonl")
    stored = _turns(ledger, tenant)
    resumed = ledger.import_turns(tenant, path)
    assert (resumed.recorded, resumed.present) == (1, 4)
    assert _turns(ledger, tenant)[:4] == stored


def test_a_long_conversation_is_appended_in_parts(ledger: MemoryLedger, tenant: str) -> None:
    messages = [{"role": "user", "content": f"message {i}"} for i in range(7)]
    engine = ledger.database.for_tenant(tenant)
    summary = importing.import_text(engine, tenant, json.dumps(messages), source="long", batch=3)
    assert (summary.recorded, summary.conversations) == (7, 1)
    assert [e.text for _, e in _turns(ledger, tenant)] == [m["content"] for m in messages]


def test_a_bad_line_is_refused_and_the_rest_imported(ledger: MemoryLedger, tenant: str) -> None:
    lines = [
        json.dumps([{"role": "user", "content": "fine one"}]),
        "{oops",
        json.dumps([{"role": "user", "content": "ok"}, {"role": "user", "content": "x", "name": "bad\u0000name"}]),
        json.dumps([{"role": "user", "content": "fine two"}]),
    ]
    summary = ledger.import_turns(tenant, lines)
    assert [r.line for r in summary.refused] == [2, 3]
    assert "messages.1.speaker" in summary.refused[1].reason
    assert sorted(e.text for _, e in _turns(ledger, tenant)) == ["fine one", "fine two"]
    assert (summary.conversations, summary.recorded) == (2, 2)
