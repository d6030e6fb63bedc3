"""A relationship's id: its key when short enough, a digest of it otherwise, the same
for extraction (which writes it) and selection (which cites it)."""

from __future__ import annotations

from memledger.events.keys import MAX_NAME_LENGTH, edge_id, relationship_key
from memledger.extraction.policy import short_hash


def test_edge_id_keeps_a_key_of_the_longest_name_length() -> None:
    key = "k" * MAX_NAME_LENGTH
    assert edge_id(key) == key


def test_edge_id_hashes_a_longer_key_as_extraction_hashes_ids() -> None:
    key = relationship_key("person", "a" * 150, "WORKS_WITH", "person", "b" * 150)
    assert len(key) > MAX_NAME_LENGTH
    found = edge_id(key)
    assert found == "rel-" + short_hash(key)
    assert len(found) == len("rel-") + 16
    assert edge_id(key + "x") != found


def test_edge_id_is_the_same_either_way_round_a_symmetric_relation() -> None:
    there = relationship_key("person", "Ada " * 40, "KNOWS", "person", "Grace " * 40)
    back = relationship_key("person", "Grace " * 40, "KNOWS", "person", "Ada " * 40)
    assert edge_id(there) == edge_id(back)
