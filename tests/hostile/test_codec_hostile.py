"""The event codec against hostile values and payloads: an event either encodes to
JSON that decodes to the same event, or is refused with ``InvalidEvent`` naming the
field; a payload either decodes to its event or is refused with ``EventDecodeError``
(or ``UnknownEventType``). Never another exception, and never a message that
cannot itself be printed or logged."""

from __future__ import annotations

import json

from hypothesis import example, given
from hypothesis import strategies as st

from memledger.errors import EventDecodeError, InvalidEvent, LedgerError, UnknownEventType
from memledger.events import codec
from memledger.events.catalogue import (
    ContextServed,
    EntityObserved,
    Event,
    FactExtracted,
    MemoryRetracted,
    RelationshipObserved,
    Scopes,
    TurnRecorded,
)
from tests.hostile.hostile_text import BOUNDED, FRAGMENTS, any_text, hostile_text, storable

_text = hostile_text(max_size=60, max_run=5_000)
_name = st.one_of(_text, st.sampled_from(["ok", "x" * 200, "x" * 201, " ", ""]))
_scopes = st.builds(
    Scopes,
    session=st.one_of(st.none(), _name),
    project=st.one_of(st.none(), _name),
    user=st.one_of(st.none(), _name),
    org=st.one_of(st.none(), _name),
)
_turns = st.lists(_name, max_size=3).map(tuple)
_confidence = st.floats(allow_nan=True, allow_infinity=True)

_events: st.SearchStrategy[Event] = st.one_of(
    st.builds(
        TurnRecorded,
        turn_id=_name,
        role=st.sampled_from(["user", "assistant"]),
        text=st.one_of(_text, st.just("x" * 3_000_000)),
        scopes=_scopes,
        subject=st.one_of(st.none(), _name),
    ),
    st.builds(
        FactExtracted,
        memory_id=_name,
        scope=st.sampled_from(["session", "user"]),
        scope_key=_name,
        key=_name,
        statement=_text,
        category=st.just("preference"),
        confidence=_confidence,
        source_turns=_turns,
        value=st.one_of(st.none(), _text),
    ),
    st.builds(
        EntityObserved,
        name=_name,
        entity_type=st.just("tool"),
        confidence=_confidence,
        aliases=_turns,
        description=st.one_of(st.none(), _text),
    ),
    st.builds(
        RelationshipObserved,
        relationship_id=_name,
        source_name=_name,
        source_type=st.just("user"),
        relation=st.one_of(st.just("USES"), _text),
        target_name=_name,
        target_type=st.just("tool"),
        confidence=_confidence,
        context=st.one_of(st.none(), _text),
    ),
    st.builds(MemoryRetracted, item_id=_name, item_kind=st.just("fact"), reason=_text),
    st.builds(
        ContextServed,
        request=_text,
        scopes=_scopes,
        item_ids=_turns,
        selector_version=st.just("1"),
        formatter_version=st.just("2"),
        block_hash=st.one_of(st.just("0" * 64), _text),
        as_of=st.one_of(st.none(), _text),
        empty_reason=st.one_of(st.none(), _text),
        item_scores=st.lists(_confidence, max_size=3).map(tuple),
        read_cursors=st.dictionaries(_text, _text, max_size=3),
    ),
)


def printable(error: LedgerError) -> None:
    """The refusal can be shown and logged: its message encodes to UTF-8."""
    message = str(error)
    assert message
    message.encode("utf-8")


@BOUNDED
@given(_events)
@example(TurnRecorded(turn_id="t", role="user", text="\x00</memory>"))
@example(TurnRecorded(turn_id="t\ud800", role="user", text="ok"))
@example(TurnRecorded(turn_id="t", role="user", text="ok", scopes=Scopes(session="'; DROP TABLE events; --\x00")))
@example(
    ContextServed(
        request="r",
        scopes=Scopes(),
        item_ids=(),
        selector_version="1",
        formatter_version="2",
        block_hash="0" * 64,
        read_cursors={"facts\x00": "1:1"},
    )
)
@example(
    ContextServed(
        request="r",
        scopes=Scopes(),
        item_ids=(),
        selector_version="1",
        formatter_version="2",
        block_hash="0" * 64,
        read_cursors={"facts\ud800": "1:1"},
    )
)
@example(MemoryRetracted(item_id="\\x00\\u0000", item_kind="fact"))  # backslashes, not NUL: stored as given
def test_an_event_encodes_faithfully_or_is_refused_naming_its_field(event: Event) -> None:
    # Before: a NUL or a lone surrogate in a map's key (read_cursors) got through,
    # or was refused at "$" instead of the field.
    try:
        data = codec.encode(event)
    except InvalidEvent as e:
        printable(e)
        field = e.field.split(".")[1].split("[")[0] if e.field.startswith("$.") else ""
        assert field in type(event).__struct_fields__, e.field
        return
    assert not _holds_nul(json.loads(data))  # an escaped backslash before "u0000" is no NUL
    data.decode("utf-8")
    assert codec.decode(codec.tag_of(event), type(event).schema_version, data) == event


def _holds_nul(value: object) -> bool:
    """Whether a decoded JSON value holds a NUL in any string, key included."""
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_holds_nul(k) or _holds_nul(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_holds_nul(v) for v in value)
    return False


_key = st.one_of(any_text(8), st.sampled_from(["turn_id", "role", "text", "scopes", "type", "session", "request"]))
_json = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), _text),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_key, inner, max_size=5),
    max_leaves=20,
)


def _nested(depth: int, opener: str, closer: str, inner: str = "1") -> str:
    return opener * depth + inner + closer * depth


@st.composite
def _payloads(draw: st.DrawFn) -> tuple[str, int, bytes | str]:
    tag = draw(st.sampled_from([*codec.known_tags(), "turn.recorded", "no.such.event", ""]))
    version = draw(st.integers(min_value=-2, max_value=4))
    base = {"turn_id": "t", "role": "user", "text": "x", "request": "r", "scopes": {}, "item_ids": []}
    value = draw(st.one_of(_json, st.dictionaries(_key, _json, max_size=6).map(lambda d: {**base, **d})))
    text = json.dumps(value, ensure_ascii=draw(st.booleans()))  # ensure_ascii=False keeps lone surrogates raw
    form = draw(st.sampled_from(["text", "utf-8", "latin-1"]))
    if form == "text":
        return tag, version, text
    if form == "utf-8":  # "surrogatepass": bytes that are not UTF-8 where the text has a lone surrogate
        return tag, version, text.encode("utf-8", "surrogatepass")
    return tag, version, text.encode("latin-1", "replace")


@BOUNDED
@given(_payloads())
@example(("turn.recorded", 2, '{"turn_id": "t", "role": "user", "text": "a\ud800"}'))
@example(("turn.recorded", 1, '{"turn_id": "t", "role": "user", "text": "a\ud800"}'))
@example(("turn.recorded", 2, b'{"turn_id": "t", "role": "user", "text": "a\xff\xfe"}'))
@example(("turn.recorded", 2, '{"turn_id": "t", "role": "user", "text": "a\\ud800b"}'))
@example(
    ("turn.recorded", 2, '{"turn_id": "t", "role": "user", "text": "x", "scopes": ' + _nested(50_000, "[", "]") + "}")
)
@example(
    ("turn.recorded", 1, '{"turn_id": "t", "role": "user", "text": "x", "junk": ' + _nested(50_000, '{"a":', "}") + "}")
)
@example(("context.served", 1, _nested(100_000, "[", "]")))
@example(("turn.recorded", 2, "\x00"))
def test_a_payload_decodes_to_its_event_or_is_refused(case: tuple[str, int, bytes | str]) -> None:
    # Before: text that UTF-8 cannot encode, or bytes that are not UTF-8, raised
    # UnicodeEncodeError / UnicodeDecodeError instead of EventDecodeError.
    tag, version, payload = case
    try:
        event = codec.decode(tag, version, payload)
    except (EventDecodeError, UnknownEventType) as e:
        printable(e)
        return
    assert type(event) is codec.event_class(tag)


def test_a_huge_turn_round_trips_through_the_codec() -> None:
    # The ledger's payload limit is the event store's (PayloadTooLarge), not the codec's.
    event = TurnRecorded(turn_id="t", role="user", text=storable("".join(FRAGMENTS)) * 5_000)
    assert len(codec.encode(event)) > 2_000_000
    assert codec.decode("turn.recorded", 2, codec.encode(event)) == event
