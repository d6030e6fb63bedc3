"""The blind extraction set (docs/extraction-sets.md, "The blind set") is frozen.

It is reported once per extractor release and never tuned on, so its bytes must not change:
a different hash means someone edited it. The shape checks only guard the schema; they say
nothing about what the lines contain, and this test must stay that way.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BLIND = ROOT / "tests/data/extraction_blind.jsonl"
FROZEN_SHA256 = "b096c5e60883779550b7a3cd7e72be34223a297a1723f20ffe5819f3141e150d"

ENTITY_TYPES = {"person", "project", "tool", "organization", "concept"}
RELATIONS = {"USES", "PREFERS", "DECIDED", "WORKS_WITH", "KNOWS", "WORKS_ON", "PART_OF", "DEPENDS_ON"}


def _lines() -> list[str]:
    return BLIND.read_text(encoding="utf-8").splitlines()


def test_the_blind_set_has_not_changed() -> None:
    assert hashlib.sha256(BLIND.read_bytes()).hexdigest() == FROZEN_SHA256


def test_the_blind_set_is_large_enough_and_well_formed() -> None:
    lines = _lines()
    assert len(lines) >= 300
    ids = []
    for number, line in enumerate(lines, 1):
        turn = json.loads(line)
        assert set(turn) == {"id", "text", "entities", "relationships"}, number
        assert re.fullmatch(r"b\d{3,}", turn["id"]), number
        ids.append(turn["id"])
        assert isinstance(turn["text"], str), number
        assert turn["text"].strip(), number
        entities = set()
        for entity in turn["entities"]:
            assert set(entity) == {"name", "type"}, number
            assert isinstance(entity["name"], str), number
            assert entity["name"].strip(), number
            assert entity["type"] in ENTITY_TYPES, number
            entities.add((entity["name"], entity["type"]))
        for rel in turn["relationships"]:
            assert set(rel) == {"source", "source_type", "relation", "target", "target_type"}, number
            assert rel["relation"] in RELATIONS, number
            if rel["source"] == "user":
                assert rel["source_type"] == "user", number
            else:
                assert rel["source_type"] in ENTITY_TYPES, number
                assert (rel["source"], rel["source_type"]) in entities, number
            assert rel["target_type"] in ENTITY_TYPES, number
            assert (rel["target"], rel["target_type"]) in entities, number
    assert ids == [f"b{n:03d}" for n in range(1, len(lines) + 1)]
