"""What the heuristic extractor reads in one sentence, as plain sets and maps the
extraction tests compare."""

from __future__ import annotations

from memledger.extraction.heuristic import extract_text


def edges(text: str) -> set[tuple[str, str, str]]:
    """The (source, relation, target) names of the relationships ``text`` states."""
    return {(r.source_name, r.relation, r.target_name) for r in extract_text(text, "user").relationships}


def entities(text: str) -> dict[str, str]:
    """The names ``text`` mentions, with their types."""
    return {e.name: e.entity_type for e in extract_text(text, "user").entities}


def speakers(text: str, relation: str) -> set[str]:
    """The targets of the ``relation`` edges ``text`` gives the speaker."""
    return {target for source, rel, target in edges(text) if source == "user" and rel == relation}
