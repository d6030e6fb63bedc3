"""Streams named after memory items and conflicts hold no words: a stream id is in the
chained part of every event, which erasure cannot change, and keys and entity or
relationship ids are names people said."""

from __future__ import annotations

import pytest

from memledger.events.keys import conflict_stream, entity_id, item_stream, relationship_key, slot_id
from memledger.extraction.policy import fact_memory_id
from memledger.store.identifiers import check_identifier


@pytest.mark.parametrize("key_length", [1, 12, 190, 1000])
def test_a_conflict_stream_is_a_digest_the_store_accepts(key_length: int) -> None:
    slot = slot_id("session", "hid.session.0123456789abcdef", "k" * key_length)
    other = slot_id("session", "hid.session.0123456789abcdef", "k" * (key_length - 1) + "j")
    stream = conflict_stream(slot)
    assert check_identifier("stream_id", stream) == stream
    assert stream.startswith("conflict:sha256:") and "k" * min(key_length, 3) not in stream.removeprefix("conflict:")
    assert conflict_stream(slot) == stream  # the same slot, the same stream
    assert conflict_stream(other) != stream


def test_a_slot_with_a_secret_word_gives_a_stream_without_it() -> None:
    stream = conflict_stream(slot_id("project", "hid.project.0123456789abcdef", "Zorblaxify deploy day"))
    assert "zorblaxify" not in stream.lower()


@pytest.mark.parametrize(
    "item_id",
    [
        entity_id("tool", "Zorblaxify"),
        relationship_key("user", "hid.user.0123", "USES", "tool", "Zorblaxify"),
        entity_id("person", "Q" * 190),
    ],
)
def test_an_entity_or_relationship_stream_is_a_digest(item_id: str) -> None:
    stream = item_stream(item_id)
    assert stream.startswith("memory:sha256:") and "zorblaxify" not in stream.lower()
    assert check_identifier("stream_id", stream) == stream
    assert item_stream(item_id) == stream and item_stream(item_id + "x") != stream


def test_a_fact_stream_keeps_the_facts_id_which_is_a_digest_already() -> None:
    fact = fact_memory_id("project", "hid.project.0123", "deploy day", "We deploy Zorblaxify on Fridays")
    assert item_stream(fact) == f"memory:{fact}"


def test_a_promoted_items_stream_keeps_its_id() -> None:
    assert item_stream("promoted-0123456789abcdef") == "memory:promoted-0123456789abcdef"
