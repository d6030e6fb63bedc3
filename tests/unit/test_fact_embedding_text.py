"""The text a fact is embedded by leaves out a hashed speaker's prefix (embeddings v2).

The prefix is 8 hex digits of a keyed hash, different in every database. Kept in the
text, it moved the fact's vector as far as real words do, so whether an unrelated
question ("What is the capital of Mongolia?") came within the meaning channel's
cutoff of "I'm allergic to peanuts." depended on the database (a CI failure)."""

from __future__ import annotations

from datetime import UTC, datetime

from memledger.events.catalogue import FactExtracted, MemoryPromoted
from memledger.events.envelope import Metadata, Recorded
from memledger.events.keys import key_words, speaker_prefix
from memledger.projectors.embeddings.projector import item_text

T0 = datetime(2026, 11, 27, tzinfo=UTC)
HASHED_SAM = "hid.user.347c74cd" + "0" * 24
HASHED_ADA = "hid.user.b3c4d5e6" + "f" * 24


def rec(event: FactExtracted | MemoryPromoted) -> Recorded:
    return Recorded(
        tenant_id="t",
        position=1,
        tx_id=1,
        stream_id="conv",
        stream_version=1,
        event_id="e1",
        occurred_at=T0,
        recorded_at=T0,
        metadata=Metadata(),
        event=event,
    )


def extracted(key: str) -> FactExtracted:
    return FactExtracted(
        memory_id="fact-1",
        scope="user",
        scope_key="u",
        key=key,
        statement="I'm allergic to peanuts.",
        category="personal_fact",
        confidence=0.85,
    )


def text_of(event: FactExtracted | MemoryPromoted) -> str:
    found = item_text(rec(event))
    assert found is not None
    return found[1].text


def test_a_hashed_speaker_prefix_is_left_out_so_every_database_embeds_the_same_text() -> None:
    sam, ada = speaker_prefix(HASHED_SAM), speaker_prefix(HASHED_ADA)
    assert (sam, ada) == ("347c74cd: ", "b3c4d5e6: ")
    texts = {text_of(extracted(f"{prefix}allergy: peanuts")) for prefix in (sam, ada)}
    assert texts == {"allergy: peanuts: I'm allergic to peanuts."}


def test_a_named_speaker_and_a_key_without_a_speaker_are_embedded_whole() -> None:
    assert speaker_prefix("ada") == "ada: "
    assert speaker_prefix("user") == ""  # the turn named no user
    assert text_of(extracted("ada: allergy: peanuts")) == "ada: allergy: peanuts: I'm allergic to peanuts."
    assert text_of(extracted("allergy: peanuts")) == "allergy: peanuts: I'm allergic to peanuts."


def test_only_a_prefix_of_eight_lowercase_hex_digits_and_a_colon_is_a_hashed_speaker() -> None:
    assert key_words("347c74cd: allergy") == "allergy"
    assert key_words("347c74cd allergy") == "347c74cd allergy"  # no colon
    assert key_words("347C74CD: allergy") == "347C74CD: allergy"  # upper case: not a digest
    assert key_words("347c74c: allergy") == "347c74c: allergy"  # seven digits
    assert key_words("database: 347c74cd: x") == "database: 347c74cd: x"  # not at the start


def test_a_promoted_memory_is_embedded_by_the_same_rule() -> None:
    promoted = MemoryPromoted(
        memory_id="m1",
        kind="preference",
        scope="user",
        scope_key="u",
        key="347c74cd: editor",
        statement="Use Vim",
    )
    assert text_of(promoted) == "editor: Use Vim"
