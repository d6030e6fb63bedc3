"""The wide development set for the extractor (tests/data/extraction_dev_wide.jsonl) has the
corpus schema of ``scripts/eval_extraction.py``: 200 labelled user turns, allowed types and
relations only, and every non-user relationship end named among the line's entities."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WIDE = ROOT / "tests/data/extraction_dev_wide.jsonl"
TYPES = {"person", "project", "tool", "organization", "concept"}
RELATIONS = {"USES", "PREFERS", "DECIDED", "WORKS_WITH", "KNOWS", "WORKS_ON", "PART_OF", "DEPENDS_ON"}
ROW_KEYS = {"id", "text", "entities", "relationships"}
REL_KEYS = {"source", "source_type", "relation", "target", "target_type"}


def _rows() -> list[dict]:
    return [json.loads(line) for line in WIDE.read_text(encoding="utf-8").splitlines()]


def test_the_set_has_two_hundred_distinct_lines() -> None:
    rows = _rows()
    assert len(rows) == 200
    assert len({row["id"] for row in rows}) == 200
    assert len({row["text"] for row in rows}) == 200


def test_each_line_has_the_corpus_schema() -> None:
    for row in _rows():
        assert set(row) == ROW_KEYS, row["id"]
        assert isinstance(row["text"], str)
        assert row["text"].strip()
        for entity in row["entities"]:
            assert set(entity) == {"name", "type"}, row["id"]
            assert entity["type"] in TYPES, row["id"]
            assert entity["name"].strip(), row["id"]
        for rel in row["relationships"]:
            assert set(rel) == REL_KEYS, row["id"]
            assert rel["relation"] in RELATIONS, row["id"]
            assert rel["target_type"] in TYPES, row["id"]
            assert rel["source_type"] in TYPES | {"user"}, row["id"]
            assert (rel["source"] == "user") == (rel["source_type"] == "user"), row["id"]


def test_every_relationship_end_is_a_labelled_entity() -> None:
    for row in _rows():
        entities = {(e["name"], e["type"]) for e in row["entities"]}
        for rel in row["relationships"]:
            assert (rel["target"], rel["target_type"]) in entities, (row["id"], rel)
            if rel["source_type"] != "user":
                assert (rel["source"], rel["source_type"]) in entities, (row["id"], rel)


def test_every_relation_is_labelled_at_least_twelve_times() -> None:
    counts = dict.fromkeys(RELATIONS, 0)
    for row in _rows():
        for rel in row["relationships"]:
            counts[rel["relation"]] += 1
    assert min(counts.values()) >= 12, counts
