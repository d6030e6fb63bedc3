"""The import's fast path: conversations appended many to a transaction, each still all
or nothing, the one the store refuses refused alone."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from memledger.config import Settings
from memledger.errors import Refused
from memledger.events.catalogue import TenantSettingsChanged, TurnRecorded
from memledger.library import MemoryLedger
from memledger.service import importing, tenant_settings
from memledger.service.record import TurnInput, record_turns
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
    return f"groups-{uuid.uuid4().hex[:10]}"


@pytest.fixture
def small_groups(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importing, "GROUP_TURNS", 7)  # a few conversations per group


def _conversation(session: str, count: int) -> str:
    messages = [{"role": "user", "content": f"{session} #{i}"} for i in range(count)]
    return json.dumps({"id": session, "messages": messages})


def _turns(ledger: MemoryLedger, tenant: str) -> list[tuple[str, int, str]]:
    """(stream, stream version, text) of the tenant's turns, in ledger order."""
    with ledger.engine.connect() as conn:
        found = event_reads.read_tenant(conn, tenant)
    return [(r.stream_id, r.stream_version, r.event.text) for r in found if isinstance(r.event, TurnRecorded)]


def test_conversations_in_groups_each_land_in_their_stream_in_order(
    ledger: MemoryLedger, tenant: str, small_groups: None
) -> None:
    lines = [_conversation(f"c{i}", 2 + i % 4) for i in range(12)]  # 42 turns in groups of at most 7
    summary = ledger.import_turns(tenant, lines, source="groups.jsonl")
    assert (summary.conversations, summary.recorded, summary.present, summary.refused) == (12, 42, 0, ())
    turns = _turns(ledger, tenant)
    assert len(turns) == 42
    by_stream: dict[str, list[tuple[int, str]]] = {}
    for stream, version, text in turns:
        by_stream.setdefault(stream, []).append((version, text))
    assert len(by_stream) == 12
    with ledger.engine.connect() as conn:
        transactions = {r.tx_id for r in event_reads.read_tenant(conn, tenant)}
    assert 6 <= len(transactions) < 12  # several conversations to a transaction, never over 7 turns
    for kept in by_stream.values():
        session = kept[0][1].split(" #")[0]
        assert kept == [(i + 1, f"{session} #{i}") for i in range(len(kept))]
    again = ledger.import_turns(tenant, lines, source="groups.jsonl")
    assert (again.recorded, again.present, again.refused) == (0, 42, ())


def test_a_conversation_the_store_refuses_is_refused_alone(
    ledger: MemoryLedger, tenant: str, small_groups: None
) -> None:
    taken = "taken-1"
    record_turns(ledger.database.for_tenant(tenant), tenant, [TurnInput(role="user", text="first", turn_id=taken)])
    reused = json.dumps({"role": "user", "text": "other words", "session": "elsewhere", "turn_id": taken})
    lines = [_conversation("a", 2), reused, _conversation("b", 2), _conversation("c", 3)]
    summary = ledger.import_turns(tenant, lines, source="refused.jsonl")
    assert [r.line for r in summary.refused] == [2]
    assert "['turn:taken-1'] were already appended in another batch or stream" in summary.refused[0].reason
    assert (summary.conversations, summary.recorded) == (3, 7)
    texts = [text for _, _, text in _turns(ledger, tenant)]
    assert "other words" not in texts and texts.count("first") == 1
    assert sorted(texts) == sorted(["first", "a #0", "a #1", "b #0", "b #1", "c #0", "c #1", "c #2"])


def test_a_conversation_partly_imported_before_is_completed_in_a_group(
    ledger: MemoryLedger, tenant: str, small_groups: None
) -> None:
    whole = [{"role": "user", "content": f"part {i}"} for i in range(4)]
    lines = [_conversation("before", 2), json.dumps({"id": "split", "messages": whole}), _conversation("after", 1)]
    ledger.import_turns(tenant, [json.dumps({"id": "split", "messages": whole[:2]})], source="part.jsonl")
    summary = ledger.import_turns(tenant, lines, source="part.jsonl")
    assert (summary.refused, summary.recorded, summary.present) == ((), 5, 2)
    split = [(version, text) for stream, version, text in _turns(ledger, tenant) if text.startswith("part")]
    assert split == [(i + 1, f"part {i}") for i in range(4)]


def test_two_conversations_of_one_session_are_both_imported(
    ledger: MemoryLedger, tenant: str, small_groups: None
) -> None:
    messages = [{"role": "user", "content": f"same later {i}"} for i in range(3)]
    later = json.dumps({"session": "same", "messages": messages})
    lines = [_conversation("same", 2), _conversation("other", 1), later]  # one stream, twice: two groups
    summary = ledger.import_turns(tenant, lines, source="same.jsonl", scopes=Scopes(user="ana"))
    assert (summary.conversations, summary.recorded, summary.refused) == (3, 6, ())
    same = [(version, text) for stream, version, text in _turns(ledger, tenant) if text.startswith("same")]
    assert same == [(1, "same #0"), (2, "same #1"), (3, "same later 0"), (4, "same later 1"), (5, "same later 2")]


def test_capture_switched_off_stops_the_import_with_nothing_written(
    ledger: MemoryLedger, tenant: str, small_groups: None
) -> None:
    tenant_settings.change(ledger.engine, tenant, TenantSettingsChanged(capture=False))
    with pytest.raises(Refused, match="capture is switched off"):
        ledger.import_turns(tenant, [_conversation(f"off{i}", 3) for i in range(5)], source="off.jsonl")
    assert _turns(ledger, tenant) == []
