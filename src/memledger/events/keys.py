"""Deterministic identities shared by extractors and projectors. Pure.

Entities merge on normalised name + type (+ tenant, which keys every table);
a relationship is one edge per (source, relation, target), with the endpoints
of a symmetric relation in a canonical order so either direction finds it.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

SYMMETRIC_RELATIONS = frozenset({"WORKS_WITH", "KNOWS", "RELATED_TO", "MARRIED_TO", "SIBLING_OF"})

_SPACE = re.compile(r"\s+")
_EDGE_PUNCTUATION = "\"'`.,;:!?()[]{}<>"


def normalise_name(name: str) -> str:
    """Case-folded, NFKC, single-spaced, without surrounding quotes or punctuation."""
    folded = unicodedata.normalize("NFKC", name).casefold()
    return _SPACE.sub(" ", folded).strip().strip(_EDGE_PUNCTUATION).strip()


def normalise_statement(text: str) -> str:
    """A statement reduced for comparing whether two facts say the same thing."""
    return normalise_name(text)


def entity_id(entity_type: str, name: str) -> str:
    """The id of the entity a (type, name) mention merges into."""
    return f"{entity_type}:{normalise_name(name)}"


def relationship_key(source_type: str, source_name: str, relation: str, target_type: str, target_name: str) -> str:
    """The id of the edge; the same for A-B and B-A when ``relation`` is symmetric."""
    source = entity_id(source_type, source_name)
    target = entity_id(target_type, target_name)
    if relation in SYMMETRIC_RELATIONS and target < source:
        source, target = target, source
    return f"{source}|{relation}|{target}"


def slot_id(scope: str, scope_key: str, key: str) -> str:
    """The id of the place facts compete for: one tenant, scope, scope key and key."""
    return f"{scope}:{scope_key}:{normalise_name(key)}"


def conflict_stream(slot: str) -> str:
    """The stream of the decisions on a slot's conflict: "conflict:" and the slot,
    or the slot's sha256 where that would be longer than an id may be (a fact's key
    may be 1,000 characters)."""
    stream = f"conflict:{slot}"
    return stream if len(stream) <= 200 else "conflict:sha256:" + hashlib.sha256(slot.encode()).hexdigest()
