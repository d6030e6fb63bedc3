"""The codec: historical fixtures, round trips, typed errors and the upcasters.

Every stored version of every event has a JSON fixture under
``fixtures/events/<tag>/v<N>.json`` (STYLE.md section 3). Stored events are never
rewritten, so each fixture must keep decoding, through the upcasters, to the
event below.
"""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memledger.errors import EventDecodeError, InvalidEvent, LedgerError, UnknownEventType
from memledger.events import codec
from memledger.events.catalogue import (
    ALL_EVENT_TYPES,
    ApiKeyIssued,
    ApiKeyRevoked,
    ConflictResolved,
    ContextServed,
    EntitiesMerged,
    EntitiesSplit,
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
    TenantSettingsChanged,
    TurnRecorded,
)
from memledger.events.upcasters import UPCASTERS, turn_recorded_v1_to_v2

FIXTURES = Path(__file__).parent / "fixtures" / "events"

# What each stored fixture must decode to, field by field (Struct equality
# compares every field, defaults included).
EXPECTED: dict[tuple[str, int], Event] = {
    ("turn.recorded", 1): TurnRecorded(
        turn_id="turn-0001",
        role="user",
        text="We deploy on Fridays \u2014 never on Mondays. \u00a1Ol\u00e9! \U0001f680",
        scopes=Scopes(session="sess-42", project="apollo", user="ada"),
        subject=None,
    ),
    ("turn.recorded", 2): TurnRecorded(
        turn_id="turn-0002",
        role="assistant",
        text="Noted: deploys happen on Fridays.",
        scopes=Scopes(session="sess-42", project="apollo", user="ada"),
        subject="ada",
    ),
    ("fact.extracted", 1): FactExtracted(
        memory_id="mem-fact-7",
        scope="project",
        scope_key="apollo",
        key="deploy_day",
        statement="The team deploys on Fridays.",
        category="decision",
        confidence=0.85,
        source_turns=("turn-0001", "turn-0002"),
        value="Friday",
        valid_from=datetime(2025, 3, 1, 9, 0, tzinfo=UTC),
        valid_to=None,
    ),
    ("entity.observed", 1): EntityObserved(
        name="PostgreSQL",
        entity_type="tool",
        confidence=0.9,
        aliases=("Postgres", "PG"),
        description="The database the ledger lives in.",
        source_turns=("turn-0003",),
    ),
    ("relationship.observed", 1): RelationshipObserved(
        relationship_id="rel-11",
        source_name="ada",
        source_type="user",
        relation="WORKS_ON",
        target_name="apollo",
        target_type="project",
        confidence=0.75,
        context="said while planning the sprint",
        source_turns=("turn-0004",),
    ),
    ("memory.reinforced", 1): MemoryReinforced(
        item_id="mem-fact-7", item_kind="fact", confidence=0.95, source_turns=("turn-0009",)
    ),
    ("memory.promoted", 1): MemoryPromoted(
        memory_id="mem-lesson-3",
        kind="lesson_learned",
        scope="org",
        scope_key="acme",
        key="friday_deploys",
        statement="Friday deploys need a rollback plan.",
        confidence=0.8,
        promoted_from="mem-fact-7",
        source_turns=("turn-0001",),
    ),
    ("memory.retracted", 1): MemoryRetracted(
        item_id="rel-11",
        item_kind="relationship",
        reason="ada moved to another project",
        source_turns=("turn-0012",),
    ),
    ("memory.restored", 1): MemoryRestored(item_id="rel-11", item_kind="relationship", reason="retracted by mistake"),
    ("entities.merged", 1): EntitiesMerged(
        kept_entity_id="organization:acme",
        merged_entity_ids=("organization:acme inc.", "organization:acm\u00e9"),
        rule="normalised_name",
        score=1.0,
        merged_by="maintenance",
        evidence="acme",
    ),
    ("entities.split", 1): EntitiesSplit(
        kept_entity_id="organization:acme",
        merged_entity_ids=("organization:acm\u00e9",),
        split_by="cli",
        reason="two companies",
    ),
    ("conflict.resolved", 1): ConflictResolved(
        conflict_id="conflict-5",
        chosen_memory_id="mem-fact-7",
        reason="the newer statement is right",
        resolved_by="grace",
    ),
    ("context.served", 1): ContextServed(
        request="When do we deploy?",
        scopes=Scopes(session="sess-43", user="ada"),
        item_ids=("mem-fact-7", "mem-lesson-3"),
        selector_version="selector-1",
        formatter_version="formatter-1",
        block_hash="9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        as_of="2025-03-02T10:00:00Z",
        empty_reason=None,
    ),
    ("subject.erased", 1): SubjectErased(
        subject="ada", reason="GDPR request 2025-17", turn_ids=("turn-0001", "turn-0003")
    ),
    ("tenant.settings_changed", 1): TenantSettingsChanged(
        capture=False, recall=True, auto_promote=None, broad_scope_writes=False, changed_by="grace"
    ),
    ("api_key.issued", 1): ApiKeyIssued(
        key_id="k-7f3a",
        key_sha256="5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8",
        label="support bot",
        issued_by="grace",
    ),
    ("api_key.revoked", 1): ApiKeyRevoked(key_id="k-7f3a", reason="rotated"),
}


def _fixture_files() -> list[Path]:
    return sorted(FIXTURES.glob("*/v*.json"))


def _version_of(path: Path) -> int:
    return int(path.stem.removeprefix("v"))


def _tag(cls: type[Event]) -> str:
    return str(cls.__struct_config__.tag)


# --- historical fixtures -------------------------------------------------------


def test_every_version_of_every_event_has_a_fixture() -> None:
    on_disk = {(path.parent.name, _version_of(path)) for path in _fixture_files()}
    needed = {(_tag(cls), version) for cls in ALL_EVENT_TYPES for version in range(1, cls.schema_version + 1)}
    assert needed - on_disk == set(), "historical versions without a fixture"
    assert on_disk - needed == set(), "fixtures for versions the catalogue does not have"


@pytest.mark.parametrize("path", _fixture_files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_stored_fixture_decodes_to_its_event(path: Path) -> None:
    tag, version = path.parent.name, _version_of(path)
    assert (tag, version) in EXPECTED, f"no expected event written for {tag} v{version}"

    event = codec.decode(tag, version, path.read_bytes())

    assert type(event) is codec.event_class(tag)
    assert event == EXPECTED[(tag, version)]


@pytest.mark.parametrize("path", _fixture_files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_upcast_fixture_reencodes_at_the_current_version(path: Path) -> None:
    tag = path.parent.name
    event = codec.decode(tag, _version_of(path), path.read_text(encoding="utf-8"))

    again = codec.decode(tag, type(event).schema_version, codec.encode(event))

    assert again == event


def test_turn_recorded_v1_fixture_has_the_flat_shape_the_upcaster_expects() -> None:
    stored = json.loads((FIXTURES / "turn.recorded" / "v1.json").read_text(encoding="utf-8"))
    assert {"session_id", "project_id", "user_id", "org_id"} <= stored.keys()
    assert "scopes" not in stored


# --- round trips ---------------------------------------------------------------

SAMPLES: dict[type[Event], Event] = {type(e): e for e in EXPECTED.values()} | {
    TurnRecorded: TurnRecorded(
        turn_id="t-1",
        role="tool",
        text="line one\nline two\t\u00fcnic\u00f8de \U0001f9ea",
        scopes=Scopes(session="s", project="p", user="u", org="o"),
        subject="u",
    ),
    MemoryReinforced: MemoryReinforced(item_id="ent-1", item_kind="entity"),
}


def test_every_event_type_has_a_round_trip_sample() -> None:
    assert set(SAMPLES) == set(ALL_EVENT_TYPES)


@pytest.mark.parametrize("event", list(SAMPLES.values()), ids=lambda e: _tag(type(e)))
def test_encode_then_decode_returns_the_same_event(event: Event) -> None:
    data = codec.encode(event)

    decoded = codec.decode(_tag(type(event)), type(event).schema_version, data)

    assert decoded == event
    assert json.loads(data)["type"] == _tag(type(event))


@pytest.mark.parametrize("cls", ALL_EVENT_TYPES, ids=_tag)
def test_tag_of_and_event_class_are_inverse(cls: type[Event]) -> None:
    assert codec.event_class(codec.tag_of(cls)) is cls
    assert codec.tag_of(SAMPLES[cls]) == _tag(cls)


def test_known_tags_lists_the_whole_catalogue() -> None:
    assert codec.known_tags() == tuple(sorted(_tag(cls) for cls in ALL_EVENT_TYPES))


def test_decode_accepts_str_and_bytes_alike() -> None:
    data = codec.encode(SAMPLES[TurnRecorded])
    assert codec.decode("turn.recorded", 2, data.decode()) == codec.decode("turn.recorded", 2, data)


def test_decode_ignores_fields_a_newer_release_added() -> None:
    stored = json.loads(codec.encode(SAMPLES[FactExtracted]))
    stored["added_by_a_later_release"] = {"anything": [1, 2]}

    event = codec.decode("fact.extracted", 1, json.dumps(stored))

    assert event == SAMPLES[FactExtracted]


# --- unknown types -------------------------------------------------------------


def test_decode_of_an_unknown_tag_names_it() -> None:
    with pytest.raises(UnknownEventType) as info:
        codec.decode("memory.teleported", 1, b"{}")
    assert info.value.event_type == "memory.teleported"
    assert "memory.teleported" in str(info.value)


def test_event_class_of_an_unknown_tag_names_it() -> None:
    with pytest.raises(UnknownEventType, match=r"no\.such\.event"):
        codec.event_class("no.such.event")


class _Impostor(Event, tag="turn.recorded", frozen=True):
    """Claims a catalogue tag without being the catalogue's class."""

    turn_id: str


class _Stranger(Event, tag="stranger.arrived", frozen=True):
    name: str


@pytest.mark.parametrize(
    "event",
    [_Impostor(turn_id="t"), _Stranger(name="x")],
    ids=["impostor-with-catalogue-tag", "tag-outside-catalogue"],
)
def test_encode_of_a_type_outside_the_catalogue_is_refused(event: Event) -> None:
    with pytest.raises(UnknownEventType) as info:
        codec.encode(event)
    assert info.value.event_type == type(event).__name__


# --- invalid payloads on decode --------------------------------------------------


def _stored(event: Event, **changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(codec.encode(event))
    data.update(changes)
    return data


@pytest.mark.parametrize(
    ("tag", "payload", "field"),
    [
        ("fact.extracted", _stored(SAMPLES[FactExtracted], confidence=1.5), "$.confidence"),
        ("fact.extracted", _stored(SAMPLES[FactExtracted], confidence=-0.1), "$.confidence"),
        ("fact.extracted", _stored(SAMPLES[FactExtracted], confidence="high"), "$.confidence"),
        ("fact.extracted", _stored(SAMPLES[FactExtracted], category="gossip"), "$.category"),
        ("fact.extracted", _stored(SAMPLES[FactExtracted], valid_from="soon"), "$.valid_from"),
        (
            "fact.extracted",
            _stored(SAMPLES[FactExtracted], source_turns=["t", ""]),
            "$.source_turns[1]",
        ),
        ("turn.recorded", _stored(SAMPLES[TurnRecorded], role=5), "$.role"),
        ("turn.recorded", _stored(SAMPLES[TurnRecorded], text=None), "$.text"),
        (
            "turn.recorded",
            _stored(SAMPLES[TurnRecorded], scopes={"session": 7}),
            "$.scopes.session",
        ),
        ("turn.recorded", _stored(SAMPLES[TurnRecorded], turn_id="x" * 201), "$.turn_id"),
        ("turn.recorded", _stored(SAMPLES[TurnRecorded], type="fact.extracted"), "$.type"),
        (
            "relationship.observed",
            _stored(SAMPLES[RelationshipObserved], relation="works on"),
            "$.relation",
        ),
        ("context.served", _stored(SAMPLES[ContextServed], block_hash="ABC"), "$.block_hash"),
        ("turn.recorded", [1, 2], "$"),
        ("turn.recorded", "a string", "$"),
    ],
    ids=lambda v: v if isinstance(v, str) and v.startswith("$") else None,
)
def test_decode_of_an_invalid_payload_names_event_and_field(tag: str, payload: Any, field: str) -> None:
    with pytest.raises(EventDecodeError) as info:
        codec.decode(tag, codec.event_class(tag).schema_version, json.dumps(payload))
    assert info.value.event_type == tag
    assert info.value.field == field
    assert tag in str(info.value)
    assert field in str(info.value)


def test_decode_of_an_invalid_upcast_payload_names_event_and_field() -> None:
    stored = json.loads((FIXTURES / "turn.recorded" / "v1.json").read_text(encoding="utf-8"))
    stored["session_id"] = ["not", "a", "name"]

    with pytest.raises(EventDecodeError) as info:
        codec.decode("turn.recorded", 1, json.dumps(stored))

    assert (info.value.event_type, info.value.field) == ("turn.recorded", "$.scopes.session")


def test_decode_of_a_payload_missing_a_required_field_names_it_in_the_message() -> None:
    stored = _stored(SAMPLES[TurnRecorded])
    del stored["turn_id"]

    with pytest.raises(EventDecodeError) as info:
        codec.decode("turn.recorded", 2, json.dumps(stored))

    assert info.value.event_type == "turn.recorded"
    assert "turn_id" in info.value.message


def test_decode_of_a_payload_missing_a_required_field_names_it_as_the_field() -> None:
    stored = _stored(SAMPLES[TurnRecorded])
    del stored["turn_id"]

    with pytest.raises(EventDecodeError) as info:
        codec.decode("turn.recorded", 2, json.dumps(stored))

    assert info.value.field == "$.turn_id"


@pytest.mark.parametrize("payload", [b"", b"{", b"\xff\xfe", b'{"turn_id": "t",}', b"nul\x00"])
@pytest.mark.parametrize("version", [1, 2], ids=["upcast-path", "current-path"])
def test_decode_of_malformed_json_is_an_event_decode_error(payload: bytes, version: int) -> None:
    with pytest.raises(EventDecodeError) as info:
        codec.decode("turn.recorded", version, payload)
    assert (info.value.event_type, info.value.field) == ("turn.recorded", "$")


@pytest.mark.parametrize(
    ("tag", "version"),
    [("turn.recorded", 3), ("turn.recorded", 0), ("fact.extracted", 2), ("fact.extracted", -1)],
)
def test_decode_of_an_unsupported_version_names_schema_version(tag: str, version: int) -> None:
    with pytest.raises(EventDecodeError) as info:
        codec.decode(tag, version, codec.encode(EXPECTED[(tag, codec.event_class(tag).schema_version)]))
    assert (info.value.event_type, info.value.field) == (tag, "schema_version")
    assert str(version) in info.value.message


def test_decode_of_an_old_version_that_is_not_an_object_names_the_root() -> None:
    with pytest.raises(EventDecodeError) as info:
        codec.decode("turn.recorded", 1, b'["turn_id", "t"]')
    assert info.value.field == "$"


@pytest.mark.parametrize("version", [1, 2], ids=["upcast-path", "current-path"])
def test_decode_of_a_deeply_nested_payload_is_an_event_decode_error(version: int) -> None:
    deep = b'{"turn_id": "t", "role": "user", "text": "x", "junk": ' + b"[" * 100_000
    deep += b"]" * 100_000 + b"}"
    with pytest.raises(EventDecodeError) as info:
        codec.decode("turn.recorded", version, deep)
    assert info.value.field == "$"


# --- invalid events on encode ------------------------------------------------------


def _fact(**changes: Any) -> Event:
    return msgspec.structs.replace(SAMPLES[FactExtracted], **changes)


@pytest.mark.parametrize(
    ("event", "field"),
    [
        (_fact(confidence=1.5), "$.confidence"),
        (_fact(confidence=float("nan")), "$.confidence"),
        (_fact(category="gossip"), "$.category"),
        (_fact(statement=""), "$.statement"),
        (_fact(key="k" * 1001), "$.key"),
        (_fact(source_turns=("t", "")), "$.source_turns[1]"),
        (_fact(memory_id=42), "$.memory_id"),
        (TurnRecorded(turn_id="t", role="user", text="x", scopes=Scopes(org="")), "$.scopes.org"),
        (TurnRecorded(turn_id="t", role="user", text=["x"]), "$.text"),  # type: ignore[arg-type]
        (
            RelationshipObserved(
                relationship_id="r",
                source_name="a",
                source_type="user",
                relation="lower_case",
                target_name="b",
                target_type="tool",
                confidence=0.5,
            ),
            "$.relation",
        ),
        (TurnRecorded(turn_id="t", role="user", text="a\x00b"), "$.text"),
        (
            TurnRecorded(turn_id="t", role="user", text="x", scopes=Scopes(session="s\x00")),
            "$.scopes.session",
        ),
        (
            EntityObserved(name="n", entity_type="tool", confidence=1, aliases=("ok", "n\x00")),
            "$.aliases[1]",
        ),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_encode_of_an_invalid_event_names_the_field(event: Event, field: str) -> None:
    with pytest.raises(InvalidEvent) as info:
        codec.encode(event)
    assert info.value.event_type == _tag(type(event))
    assert info.value.field == field
    assert field in str(info.value)


def test_encode_of_a_nul_character_explains_postgresql_cannot_store_it() -> None:
    with pytest.raises(InvalidEvent, match="NUL"):
        codec.encode(TurnRecorded(turn_id="t", role="user", text="\x00"))


@pytest.mark.parametrize(
    ("event", "field"),
    [
        (TurnRecorded(turn_id="t", role="user", text=b"raw bytes"), "$.text"),  # type: ignore[arg-type]
        (TurnRecorded(turn_id="t", role="user", text="x", scopes={"session": "s"}), "$.scopes"),  # type: ignore[arg-type]
        (_fact(statement=datetime(2025, 1, 1, tzinfo=UTC)), "$.statement"),
    ],
    ids=["bytes-for-str", "dict-for-struct", "datetime-for-str"],
)
def test_encode_of_a_value_that_only_serialises_like_the_right_type_names_the_field(event: Event, field: str) -> None:
    # msgspec would store bytes as base64 text and a datetime as ISO text, which
    # decode as valid strings: the codec must compare, not just re-decode.
    with pytest.raises(InvalidEvent) as info:
        codec.encode(event)
    assert info.value.field == field


@pytest.mark.parametrize(
    ("event", "field"),
    [
        (TurnRecorded(turn_id="t", role="user", text="half \ud800 a pair"), "$.text"),
        (TurnRecorded(turn_id="t", role="user", text="x", scopes=Scopes(user="\udfff")), "$.scopes.user"),
    ],
    ids=["text", "nested"],
)
def test_encode_of_a_lone_surrogate_names_the_field(event: Event, field: str) -> None:
    with pytest.raises(InvalidEvent) as info:
        codec.encode(event)
    assert info.value.field == field


# --- upcasters ---------------------------------------------------------------------


def test_every_upcaster_starts_from_a_version_the_catalogue_has_passed() -> None:
    for tag, from_version in UPCASTERS:
        assert 1 <= from_version < codec.event_class(tag).schema_version


def test_turn_recorded_v1_to_v2_groups_the_scope_ids() -> None:
    v1 = {
        "type": "turn.recorded",
        "turn_id": "t-9",
        "role": "user",
        "text": "hi",
        "session_id": "s",
        "project_id": "p",
        "user_id": "u",
        "org_id": "o",
    }
    before = copy.deepcopy(v1)

    v2 = turn_recorded_v1_to_v2(v1)

    assert v2 == {
        "type": "turn.recorded",
        "turn_id": "t-9",
        "role": "user",
        "text": "hi",
        "scopes": {"session": "s", "project": "p", "user": "u", "org": "o"},
    }
    assert v1 == before, "an upcaster must not change its input"


def test_turn_recorded_v1_to_v2_drops_absent_and_null_scope_ids() -> None:
    v2 = turn_recorded_v1_to_v2({"turn_id": "t", "role": "user", "text": "x", "session_id": None, "user_id": "u"})
    assert v2 == {"turn_id": "t", "role": "user", "text": "x", "scopes": {"user": "u"}}


def test_turn_recorded_v1_to_v2_with_no_scope_ids_gives_empty_scopes() -> None:
    v2 = turn_recorded_v1_to_v2({"turn_id": "t", "role": "assistant", "text": "x"})
    assert v2["scopes"] == {}
    assert msgspec.convert(v2, TurnRecorded).scopes == Scopes()


def test_turn_recorded_v1_to_v2_is_deterministic() -> None:
    v1 = {"turn_id": "t", "role": "user", "text": "x", "org_id": "o"}
    assert turn_recorded_v1_to_v2(v1) == turn_recorded_v1_to_v2(dict(v1))


# --- properties --------------------------------------------------------------------

_json_leaf = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20)
)
_json_value = st.recursive(
    _json_leaf,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@st.composite
def _event_shaped_garbage(draw: st.DrawFn) -> tuple[str, int, bytes | str]:
    """A known tag, a version near the valid ones and a payload: plausible keys
    (the type's fields, v1 scope ids, ``type``) with arbitrary JSON values, or
    arbitrary JSON, or arbitrary bytes."""
    tag = draw(st.sampled_from(codec.known_tags()))
    cls = codec.event_class(tag)
    version = draw(st.integers(min_value=-1, max_value=cls.schema_version + 1))
    keys = st.sampled_from([*cls.__struct_fields__, "type", "session_id", "user_id", "scopes", "junk"])
    shaped = st.dictionaries(keys, _json_value, max_size=8)
    payload = draw(
        st.one_of(
            shaped.map(json.dumps),
            _json_value.map(lambda v: json.dumps(v).encode()),
            st.binary(max_size=40),
            st.text(max_size=40),
        )
    )
    return tag, version, payload


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_event_shaped_garbage())
def test_decode_of_garbage_raises_only_ledger_errors(case: tuple[str, int, bytes | str]) -> None:
    tag, version, payload = case
    try:
        event = codec.decode(tag, version, payload)
    except LedgerError:
        return
    assert type(event) is codec.event_class(tag)


@settings(max_examples=200, deadline=None)
@given(text=st.text(), turn_id=st.text(min_size=1, max_size=200))
def test_any_unicode_text_of_a_turn_round_trips(text: str, turn_id: str) -> None:
    event = TurnRecorded(turn_id=turn_id, role="user", text=text, scopes=Scopes(user="u"))
    if "\x00" in text or "\x00" in turn_id:
        with pytest.raises(InvalidEvent):
            codec.encode(event)
        return

    assert codec.decode("turn.recorded", 2, codec.encode(event)) == event
