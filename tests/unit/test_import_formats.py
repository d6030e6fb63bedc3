"""Reading chat histories for import: shapes, mapping and refusals, without a database."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from memledger.service.import_formats import parse
from memledger.service.types import Scopes


def _lines(*values: object) -> str:
    return "\n".join(v if isinstance(v, str) else json.dumps(v) for v in values) + "\n"


def test_a_conversation_maps_names_sessions_and_timestamps() -> None:
    text = _lines(
        {
            "id": "chat-7",
            "title": "ignored",
            "messages": [
                {"role": "user", "content": "I moved to Lisbon.", "name": "Ana", "timestamp": 1_700_000_000},
                {"role": "assistant", "content": [{"type": "text", "text": "Nice!"}], "created_at": 1_700_000_001_000},
                {"role": "user", "content": "Yes.", "timestamp": "2024-05-01T10:00:00+02:00"},
            ],
        }
    )
    parsed = parse(text, source="chats.jsonl", defaults=Scopes(user="ana", project="p"))
    (conversation,) = parsed.conversations
    first, second, third = conversation.turns
    assert first.speaker == "Ana" and first.scopes == Scopes(session="chat-7", project="p", user="ana")
    assert first.occurred_at == datetime.fromtimestamp(1_700_000_000, UTC)
    assert second.text == "Nice!" and second.occurred_at == datetime.fromtimestamp(1_700_000_001, UTC)
    assert third.occurred_at is not None and third.occurred_at.utcoffset() is not None


def test_turn_ids_are_derived_from_the_source_and_stable() -> None:
    text = _lines([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hi"}])
    once, again = (parse(text, source="a.jsonl") for _ in range(2))
    ids = [t.turn_id for t in once.conversations[0].turns]
    assert ids == [t.turn_id for t in again.conversations[0].turns]
    assert len(set(ids)) == 2
    assert once.conversations[0].turns[0].scopes.session == "a.jsonl:1"
    assert ids != [t.turn_id for t in parse(text, source="b.jsonl").conversations[0].turns]


def test_turn_lines_of_one_session_are_one_append() -> None:
    text = _lines(
        {"role": "user", "text": "a", "session": "s"},
        {"role": "assistant", "text": "b", "session": "s", "turn_id": "mine"},
        {"role": "user", "text": "c", "scopes": {"session": "t"}},
    )
    first, second = parse(text, source="x").conversations
    assert first.lines == (1, 2) and [t.turn_id for t in first.turns][1] == "mine"
    assert second.lines == (3,) and second.turns[0].scopes.session == "t"


def test_a_whole_file_list_of_messages_is_one_conversation() -> None:
    text = json.dumps([{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}], indent=2)
    (conversation,) = parse(text, source="x.json").conversations
    assert [t.text for t in conversation.turns] == ["a", "b"]


def test_bad_lines_are_refused_with_their_line_and_field() -> None:
    text = _lines(
        "{not json",
        [{"role": "user", "content": "a", "timestamp": "2024-01-01T00:00:00"}],
        [{"role": "wizard", "content": "a"}],
        {"role": "user", "content": "a lone message"},
        [{"role": "user", "content": "fine"}],
    )
    parsed = parse(text, source="x")
    assert [r.line for r in parsed.refused] == [1, 2, 3, 4]
    assert "messages.0.timestamp" in parsed.refused[1].reason and "timezone" in parsed.refused[1].reason
    assert "messages.0.role" in parsed.refused[2].reason
    assert [c.line for c in parsed.conversations] == [5]


def test_a_forced_format_refuses_the_other_shape() -> None:
    text = _lines({"role": "user", "text": "a"}, [{"role": "user", "content": "b"}])
    assert [r.line for r in parse(text, source="x", fmt="messages").refused] == [1]
    assert [r.line for r in parse(text, source="x", fmt="turns").refused] == [2]
