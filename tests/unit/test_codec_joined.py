"""``codec.decode_joined`` reads a row whose payload and private part arrive joined
(as PostgreSQL's ``payload || private`` gives them) exactly as ``decode_stored``
reads the two apart: every event type, erased or not, and old versions."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from memledger.events import codec
from memledger.events.catalogue import Event
from tests.unit.test_codec import EXPECTED

FIXTURES = Path(__file__).parent / "fixtures" / "events"


def _joined(payload: bytes, private: bytes | None) -> bytes:
    """The one object PostgreSQL's ``payload || private`` makes (keys never overlap)."""
    data = msgspec.json.decode(payload)
    if private is not None:
        data.update(msgspec.json.decode(private))
    return msgspec.json.encode(data)


def _digest_only(payload: bytes, private: bytes | None) -> bool:
    return private is None and codec.DIGEST_KEY in msgspec.json.decode(payload)


_CURRENT = [e for (tag, v), e in EXPECTED.items() if v == codec.event_class(tag).schema_version]


@pytest.mark.parametrize("event", _CURRENT, ids=codec.tag_of)
@pytest.mark.parametrize("erased", [False, True], ids=["kept", "erased"])
def test_a_joined_row_decodes_as_its_parts_do(event: Event, erased: bool) -> None:
    tag, version = codec.tag_of(event), type(event).schema_version
    payload, private, _ = codec.split(event, "ab" * 16)
    if erased:
        private = None

    got = codec.decode_joined(tag, version, _joined(payload, private), _digest_only(payload, private))

    expected = codec.decode_stored(tag, version, payload.decode(), None if private is None else private.decode())
    assert got == expected
    assert got[1] is (erased and bool(type(event).private_fields))


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*/v*.json")), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_an_old_row_is_upcast_as_before(path: Path) -> None:
    tag, version, stored = path.parent.name, int(path.stem[1:]), path.read_bytes()

    got = codec.decode_joined(tag, version, stored, _digest_only(stored, None))

    assert got == codec.decode_stored(tag, version, stored.decode(), None)


def test_a_digest_on_a_type_without_private_fields_is_not_an_erasure() -> None:
    event = next(e for e in _CURRENT if not type(e).private_fields)
    data = msgspec.json.decode(codec.encode(event))
    stored = msgspec.json.encode({**data, codec.DIGEST_KEY: "0" * 64})

    got = codec.decode_joined(codec.tag_of(event), type(event).schema_version, stored, True)

    assert got == (event, False)
