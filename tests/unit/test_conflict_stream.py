"""The stream a conflict's decisions go to is an id the event store takes, whatever
the length of the slot (a fact's key may be 1,000 characters)."""

from __future__ import annotations

import pytest

from memledger.events.keys import conflict_stream, slot_id
from memledger.store.identifiers import check_identifier


def test_a_short_slot_keeps_its_readable_stream_name() -> None:
    slot = slot_id("project", "hid.project.0123456789abcdef", "Cloud provider")
    assert conflict_stream(slot) == f"conflict:{slot}"


@pytest.mark.parametrize("key_length", [190, 1000])
def test_a_long_slot_gets_a_hashed_stream_name_the_store_accepts(key_length: int) -> None:
    slot = slot_id("session", "hid.session.0123456789abcdef", "k" * key_length)
    other = slot_id("session", "hid.session.0123456789abcdef", "k" * (key_length - 1) + "j")
    stream = conflict_stream(slot)
    assert len(f"conflict:{slot}") > 200
    assert check_identifier("stream_id", stream) == stream
    assert stream.startswith("conflict:sha256:")
    assert conflict_stream(slot) == stream  # the same slot, the same stream
    assert conflict_stream(other) != stream
