"""Deterministic identities shared by extractors and projectors. Pure.

Entities merge on normalised name + type (+ tenant, which keys every table);
a relationship is one edge per (source, relation, target), with the endpoints
of a symmetric relation in a canonical order so either direction finds it.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

# The longest name, key or relationship id kept as it is: a longer name is cut
# (extraction.policy.clean_name), a longer relationship key hashed (edge_id).
MAX_NAME_LENGTH = 200
SYMMETRIC_RELATIONS = frozenset({"WORKS_WITH", "KNOWS", "RELATED_TO", "MARRIED_TO", "SIBLING_OF"})

_SPACE = re.compile(r"\s+")
_EDGE_PUNCTUATION = "\"'`.,;:!?()[]{}<>"
# A hashed user scope key (service/scope_ids: "hid.user." and 32 hex digits), and how
# a key starts that it prefixes: the first 8 of them ("30c03654: allergy: peanuts").
_HASHED_USER = re.compile(r"hid\.user\.([0-9a-f]{8})[0-9a-f]{24}")
_HASHED_SPEAKER = re.compile(r"[0-9a-f]{8}: ")


def speaker_prefix(user: str) -> str:
    """What starts the keys of the speaker's own preferences and personal facts:
    "ada: ", none when the turn names no user ("user"). A hashed user id is cut to its
    first 8 digits, as the block names another user ("another user (30c03654)"), so
    two users' facts stay apart in a shared scope."""
    if user == "user":
        return ""
    hashed = _HASHED_USER.fullmatch(user)
    return f"{hashed.group(1) if hashed else user}: "


def key_words(key: str) -> str:
    """``key`` without a hashed speaker's prefix: the part of a key that means
    something, for the text a fact is embedded by. The prefix is a keyed hash that
    differs from one database to the next, and it would move a fact's vector as far
    as real words do, so whether an unrelated request matched the fact would be
    chance."""
    prefix = _HASHED_SPEAKER.match(key)
    return key[prefix.end() :] if prefix else key


# Unicode's stream-safe limit on marks in a row; normalising a longer run costs its square.
MAX_MARKS_IN_A_ROW = 30


def stream_safe(text: str) -> str:
    """``text`` with no more than 30 combining marks in a row (Unicode's stream-safe
    format), so that normalising a hostile run of thousands of them stays linear."""
    if text.isascii() or len(text) <= MAX_MARKS_IN_A_ROW:
        return text
    kept: list[str] = []
    run = 0
    for character in text:
        run = run + 1 if unicodedata.combining(character) else 0
        if run <= MAX_MARKS_IN_A_ROW:
            kept.append(character)
    return "".join(kept)


def normalise_name(name: str) -> str:
    """Case-folded, NFKC, single-spaced, without surrounding quotes or punctuation."""
    folded = unicodedata.normalize("NFKC", stream_safe(name)).casefold()
    return _SPACE.sub(" ", folded).strip().strip(_EDGE_PUNCTUATION).strip()


def normalise_statement(text: str) -> str:
    """A statement reduced for comparing whether two facts say the same thing."""
    return normalise_name(text)


def entity_id(entity_type: str, name: str) -> str:
    """The id of the entity a (type, name) mention merges into."""
    return f"{entity_type}:{normalise_name(name)}"


USER_NODE = "user:"  # how the id of a user's entity starts: entity_id("user", ...)


def relationship_key(source_type: str, source_name: str, relation: str, target_type: str, target_name: str) -> str:
    """The id of the edge; the same for A-B and B-A when ``relation`` is symmetric."""
    source = entity_id(source_type, source_name)
    target = entity_id(target_type, target_name)
    if relation in SYMMETRIC_RELATIONS and target < source:
        source, target = target, source
    return f"{source}|{relation}|{target}"


def edge_id(key: str) -> str:
    """A relationship key short enough to be an id (long names are hashed)."""
    return key if len(key) <= MAX_NAME_LENGTH else "rel-" + _digest(key)[:16]


def slot_id(scope: str, scope_key: str, key: str) -> str:
    """The id of the place facts compete for: one tenant, scope, scope key and key."""
    return f"{scope}:{scope_key}:{normalise_name(key)}"


def conflict_stream(slot: str) -> str:
    """The stream of the decisions on a slot's conflict: "conflict:sha256:" and the
    slot's digest. A stream id is in the chained part of every event, which erasure
    cannot change, and a slot holds a fact's key ("deploy day"): the words of
    whoever said it. (Streams named "conflict:<slot>" before stay as they were;
    nothing reads a conflict's decisions by their stream.)"""
    return "conflict:sha256:" + _digest(slot)


def item_stream(item_id: str) -> str:
    """The stream of the events on a memory item (extracted, promoted, retracted,
    restored): a fact's id as it is ("memory:fact-1a2b…", "memory:promoted-…": digests
    already), any other item's id digested, as ``conflict_stream`` does: entity and
    relationship ids are names ("tool:zorblaxify"). (Streams named "memory:<name>"
    before stay as they were; nothing reads an item's events by their stream.)"""
    if _FACT_ID.fullmatch(item_id):
        return f"memory:{item_id}"
    return "memory:sha256:" + _digest(item_id)


_FACT_ID = re.compile(r"(fact|promoted)-[0-9a-f]{16}")


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
