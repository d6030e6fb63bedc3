"""Erasable content in the codec: an event's private fields split from its chained
payload (which keeps a salted digest of them), joined back on read, and read as
placeholders once erased."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from memledger.errors import InvalidEvent
from memledger.events import codec
from memledger.events.catalogue import (
    ALL_EVENT_TYPES,
    ApiKeyIssued,
    ConflictResolved,
    ContextServed,
    EntityObserved,
    Event,
    FactExtracted,
    MemoryPromoted,
    MemoryReinforced,
    MemoryRestored,
    MemoryRetracted,
    RelationshipObserved,
    Scopes,
    SubjectErased,
    TurnRecorded,
)

SALT = "a1" * 16
FIXTURES = Path(__file__).parent / "fixtures" / "events"

SAMPLES: list[Event] = [
    TurnRecorded(turn_id="t1", role="user", text="I use Zorblaxify", scopes=Scopes(user="ada"), subject="ada"),
    FactExtracted(
        memory_id="fact-1",
        scope="user",
        scope_key="ada",
        key="deploy tool",
        statement="I use Zorblaxify",
        category="technical_fact",
        confidence=0.9,
        source_turns=("t1",),
        value="Zorblaxify",
    ),
    EntityObserved(
        name="Zorblaxify",
        entity_type="tool",
        confidence=0.8,
        aliases=("Zorb",),
        description="a deploy tool",
        source_turns=("t1",),
    ),
    RelationshipObserved(
        relationship_id="user:ada|USES|tool:zorblaxify",
        source_name="ada",
        source_type="user",
        relation="USES",
        target_name="Zorblaxify",
        target_type="tool",
        confidence=0.9,
        context="for deploys",
        source_turns=("t1",),
    ),
    MemoryReinforced(item_id="tool:zorblaxify", item_kind="entity", confidence=0.9, source_turns=("t1",)),
    MemoryPromoted(
        memory_id="promoted-1",
        kind="decision",
        scope="project",
        scope_key="apollo",
        key="deploy tool",
        statement="Deploy with Zorblaxify",
        source_turns=("t1",),
    ),
    MemoryRetracted(item_id="user:ada|USES|tool:zorblaxify", item_kind="relationship", reason="no longer"),
    MemoryRestored(item_id="user:ada|USES|tool:zorblaxify", item_kind="relationship", reason="by mistake"),
    ConflictResolved(conflict_id="project:apollo:deploy tool", chosen_memory_id="fact-1", reason="newer"),
    ContextServed(
        request="what do I deploy with?",
        scopes=Scopes(user="ada"),
        item_ids=("fact-1", "tool:zorblaxify"),
        selector_version="1",
        formatter_version="1",
        block_hash="0" * 64,
    ),
]


def _pg_text(raw: bytes) -> str:
    """JSON as PostgreSQL's jsonb prints it: keys reordered (shortest first), ", " and ": "."""
    data = json.loads(raw)
    ordered = dict(sorted(data.items(), key=lambda kv: (len(kv[0].encode()), kv[0])))
    return json.dumps(ordered, ensure_ascii=False, separators=(", ", ": "))


def test_every_private_field_is_a_field_of_its_event() -> None:
    for cls in ALL_EVENT_TYPES:
        fields = set(cls.__struct_fields__)
        assert set(cls.private_fields) <= fields, cls.__name__


@pytest.mark.parametrize("event", SAMPLES, ids=lambda e: type(e).__name__)
def test_split_keeps_private_fields_out_of_the_payload_and_joins_them_back(event: Event) -> None:
    payload, private, _ = codec.split(event, SALT)
    assert private is not None
    public, secret = json.loads(payload), json.loads(private)
    names = set(type(event).private_fields)
    assert not names & set(public)
    assert set(secret) == names | {codec.SALT_KEY}
    assert public[codec.DIGEST_KEY] == codec.private_digest(SALT, {n: secret[n] for n in names})
    assert b"Zorblaxify" not in payload and b"zorblaxify" not in payload
    assert codec.split(event, SALT).size == len(codec.encode(event))

    decoded, erased = codec.decode_stored(
        codec.tag_of(event), type(event).schema_version, _pg_text(payload), _pg_text(private)
    )
    assert decoded == event
    assert not erased


def test_the_digest_depends_on_the_salt_and_on_every_private_byte() -> None:
    event = SAMPLES[0]
    first, _, _ = codec.split(event, SALT)
    other_salt, _, _ = codec.split(event, "b2" * 16)
    other_text, _, _ = codec.split(msgspec.structs.replace(event, text="I use Zorblaxifx"), SALT)
    digests = {json.loads(p)[codec.DIGEST_KEY] for p in (first, other_salt, other_text)}
    assert len(digests) == 3


def test_an_event_without_private_fields_is_stored_whole() -> None:
    event = ApiKeyIssued(key_id="k1", key_sha256="0" * 64, label="bot")
    encoded = codec.encode(event)
    assert codec.split(event, SALT) == (encoded, None, len(encoded))


def test_split_refuses_an_invalid_event_and_a_missing_salt() -> None:
    with pytest.raises(InvalidEvent) as info:
        codec.split(TurnRecorded(turn_id="", role="user", text="x"), SALT)
    assert info.value.field == "$.turn_id"
    with pytest.raises(ValueError, match="salt"):
        codec.split(SAMPLES[0], "")


@pytest.mark.parametrize("event", SAMPLES, ids=lambda e: type(e).__name__)
def test_an_erased_event_reads_as_placeholders_with_its_public_fields_intact(event: Event) -> None:
    payload, _, _ = codec.split(event, SALT)
    decoded, erased = codec.decode_stored(codec.tag_of(event), type(event).schema_version, _pg_text(payload), None)
    assert erased
    assert type(decoded) is type(event)
    for name in event.__struct_fields__:
        value = getattr(decoded, name)
        if name in type(event).private_fields:
            assert value in (codec.ERASED, (), None, ""), (name, value)
        else:
            assert value == getattr(event, name), name
    assert "Zorblaxify" not in msgspec.json.encode(decoded).decode()


def test_private_intact_detects_a_changed_or_smuggled_private_part() -> None:
    payload, private, _ = codec.split(SAMPLES[0], SALT)
    assert private is not None
    payload_text, private_text = _pg_text(payload), _pg_text(private)
    assert codec.private_intact(payload_text, private_text)
    assert codec.private_intact(payload_text, None)  # erased
    forged = private_text.replace("Zorblaxify", "something else")
    assert not codec.private_intact(payload_text, forged)
    resalted = private_text.replace(SALT, "c3" * 16)
    assert not codec.private_intact(payload_text, resalted)
    whole = codec.encode(SAMPLES[0]).decode()  # a payload that names no digest
    assert not codec.private_intact(whole, private_text)
    assert not codec.private_intact(payload_text, "not json")


def test_is_erased_only_for_a_split_event_without_its_private_part() -> None:
    payload, private, _ = codec.split(SAMPLES[0], SALT)
    assert private is not None
    assert codec.is_erased(payload.decode(), None)
    assert not codec.is_erased(payload.decode(), private.decode())
    assert not codec.is_erased(codec.encode(SAMPLES[0]).decode(), None)  # stored whole, before 0006


def test_events_stored_whole_before_private_parts_existed_still_decode() -> None:
    for path in sorted(FIXTURES.glob("*/v*.json")):
        tag, version = path.parent.name, int(path.stem[1:])
        text = path.read_text(encoding="utf-8")
        decoded, erased = codec.decode_stored(tag, version, text, None)
        assert not erased
        assert decoded == codec.decode(tag, version, text)


def test_the_erasure_record_has_no_private_fields() -> None:
    record = SubjectErased(subject="hid.user." + "0" * 32, turn_ids=("t1",), turns=1, erased_events=4)
    assert codec.split(record, SALT).private is None


@given(st.text(max_size=300).filter(lambda t: "\x00" not in t))
def test_any_text_round_trips_through_the_split(text: str) -> None:
    event = TurnRecorded(turn_id="t1", role="user", text=text)
    payload, private, _ = codec.split(event, SALT)
    assert private is not None
    decoded, _ = codec.decode_stored("turn.recorded", 2, _pg_text(payload), _pg_text(private))
    assert decoded == event
    assert codec.private_intact(_pg_text(payload), _pg_text(private))
