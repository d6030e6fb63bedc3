"""Which entities are one: conservative merge rules over names and aliases. Pure.

Two entities of the same type (and tenant: the caller passes one tenant's) are one
when their names compare equal once case, diacritics, punctuation, spacing and (for
organisations) legal suffixes are set aside; when the name of one is an alias of the
other; or, for people, when an initial stands for a first name and only one person
fits. A person known by one word ("Ada") is never merged by any rule: two people who
share a first name are not one person.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence

import msgspec
import numpy as np

from memledger.events.keys import stream_safe
from memledger.projectors.entities.merges import EntityVectors, MergeInput

RULE_SCORES = {"normalised_name": 1.0, "alias": 0.9, "initials": 0.8}
MIN_COSINE = 0.95  # the embedding rule: vectors this close (cosine similarity) are one
_BLOCK = 1024  # rows of the similarity matrix computed at once (1024 x n floats)

# Legal forms an organisation's name may end with ("Acme Inc.", "Müller GmbH").
LEGAL_SUFFIXES = frozenset(
    {
        *("inc", "incorporated", "corp", "corporation", "co", "company", "ltd", "limited", "llc", "llp", "plc"),
        *("gmbh", "ag", "kg", "sa", "sas", "sarl", "bv", "nv", "oy", "ab", "as", "asa", "srl", "spa", "pty"),
        *("pte", "kk"),
    }
)
_NOT_WORD = re.compile(r"[^\w]+")


class MergeCandidate(msgspec.Struct, frozen=True):
    """Entities the rules found to be one: the kept one, those merged into it, and
    the evidence (the weakest rule that joined them, its score, the matching keys)."""

    kept_entity_id: str
    merged_entity_ids: tuple[str, ...]
    entity_type: str
    rule: str
    score: float
    evidence: str


def name_key(name: str, entity_type: str) -> str:
    """``name`` compared as the rules compare names: case-folded, without diacritics or
    punctuation, single-spaced; an organisation's trailing legal forms dropped."""
    decomposed = unicodedata.normalize("NFKD", stream_safe(name))
    bare = "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()
    words = _NOT_WORD.sub(" ", bare).replace("_", " ").split()
    if entity_type == "organization":
        while len(words) > 1 and words[-1] in LEGAL_SUFFIXES:
            words.pop()
    return " ".join(words)


def _mergeable(row: MergeInput) -> bool:
    """Active, not merged already, and not a person known by one word only."""
    if row.status != "active" or row.merged_into is not None:
        return False
    return row.entity_type != "person" or len(name_key(row.name, "person").split()) > 1


def _safe_key(key: str, entity_type: str) -> bool:
    """Whether a key may join two entities: a person's needs two words or more."""
    return bool(key) and (entity_type != "person" or len(key.split()) > 1)


class _Groups:
    """Union-find over entity ids, remembering the weakest rule of each group."""

    def __init__(self, rows: Sequence[MergeInput]) -> None:
        self.parent = {r.entity_id: r.entity_id for r in rows}
        self.rule: dict[str, tuple[float, str, str]] = {}

    def find(self, node: str) -> str:
        while self.parent[node] != node:
            self.parent[node] = self.parent[self.parent[node]]
            node = self.parent[node]
        return node

    def join(self, a: str, b: str, rule: str, key: str, score: float | None = None) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return
        self.parent[rb] = ra
        none = (2.0, "", "")
        found = (RULE_SCORES[rule] if score is None else score, rule, key)
        self.rule[ra] = min(self.rule.get(ra, none), self.rule.pop(rb, none), found)


def find_candidates(rows: Sequence[MergeInput], vectors: EntityVectors | None = None) -> list[MergeCandidate]:
    """The merges the rules propose among one tenant's entities, one per group of two
    or more, in kept-id order; with ``vectors``, the embedding rule too. In each group
    the entity already kept by earlier merges, else the most mentioned, else the first
    seen, is kept. Deterministic."""
    live = [r for r in rows if _mergeable(r)]
    groups = _Groups(live)
    by_key: dict[tuple[str, str], list[str]] = {}
    for row in live:
        by_key.setdefault((row.entity_type, name_key(row.name, row.entity_type)), []).append(row.entity_id)
    for (_, key), ids in by_key.items():
        for other in ids[1:]:
            groups.join(ids[0], other, "normalised_name", key)
    _join_aliases(live, by_key, groups)
    _join_initials(live, by_key, groups)
    if vectors is not None:
        for a, b, cosine in similar_pairs(live, vectors):
            groups.join(a, b, "embedding", f"cosine {cosine:.3f}", score=cosine)
    return _candidates(rows, live, groups)


def similar_pairs(live: Sequence[MergeInput], vectors: EntityVectors) -> list[tuple[str, str, float]]:
    """Pairs of entities of one type whose vectors are closer than ``MIN_COSINE``, with
    their cosine (rounded to 3 places). People are left out: a person's vector is that of
    their name, and two people's names can be that close ("Jon Smith", "John Smith")."""
    kinds = {r.entity_id: r.entity_type for r in live if r.entity_type != "person"}
    out: list[tuple[str, str, float]] = []
    for kind in sorted(set(kinds.values())):
        rows = [i for i, entity in enumerate(vectors.ids) if kinds.get(entity) == kind]
        if len(rows) < 2:
            continue
        matrix = vectors.matrix[rows]
        matrix = matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
        for start in range(0, len(rows), _BLOCK):
            block = matrix[start : start + _BLOCK] @ matrix.T
            for i, j in zip(*np.nonzero(block > MIN_COSINE), strict=True):
                if start + i < j:
                    a, b = vectors.ids[rows[start + i]], vectors.ids[rows[j]]
                    out.append((a, b, round(float(block[i, j]), 3)))
    return out


def _join_aliases(live: Iterable[MergeInput], by_key: dict[tuple[str, str], list[str]], groups: _Groups) -> None:
    for row in live:
        for alias in row.aliases:
            key = name_key(alias, row.entity_type)
            if not _safe_key(key, row.entity_type):
                continue
            for other in by_key.get((row.entity_type, key), ()):
                groups.join(row.entity_id, other, "alias", key)


def _join_initials(live: Iterable[MergeInput], by_key: dict[tuple[str, str], list[str]], groups: _Groups) -> None:
    """ "J Smith" with "John Smith", when exactly one person's name fits the initial."""
    fitting: dict[tuple[str, ...], list[str]] = {}  # (initial, rest...) -> full names
    for kind, key in by_key:
        words = key.split()
        if kind == "person" and len(words) > 1 and len(words[0]) > 1:
            fitting.setdefault((words[0][0], *words[1:]), []).append(key)
    for row in live:
        words = name_key(row.name, row.entity_type).split()
        if row.entity_type != "person" or len(words) < 2 or len(words[0]) != 1:
            continue
        full = fitting.get(tuple(words), [])
        if len(full) == 1:  # "J Smith" with John and Jane Smith both known: ambiguous
            for other in by_key[("person", full[0])]:
                groups.join(other, row.entity_id, "initials", f"{' '.join(words)} = {full[0]}")


def _candidates(rows: Sequence[MergeInput], live: Sequence[MergeInput], groups: _Groups) -> list[MergeCandidate]:
    has_members = {r.merged_into for r in rows if r.merged_into is not None}
    members: dict[str, list[MergeInput]] = {}
    for row in live:
        members.setdefault(groups.find(row.entity_id), []).append(row)
    out = []
    for root, found in members.items():
        found.sort(key=lambda r: (r.entity_id not in has_members, -r.mention_count, r.first_position, r.entity_id))
        group = _kept_apart_removed(found)
        if len(group) < 2:
            continue
        score, rule, key = groups.rule[root]
        out.append(
            MergeCandidate(
                kept_entity_id=group[0].entity_id,
                merged_entity_ids=tuple(sorted(r.entity_id for r in group[1:])),
                entity_type=group[0].entity_type,
                rule=rule,
                score=score,
                evidence=key,
            )
        )
    return sorted(out, key=lambda c: c.kept_entity_id)


def _kept_apart_removed(group: list[MergeInput]) -> list[MergeInput]:
    """``group`` (kept first) without the entities a split keeps apart from one already
    in it: a split is never undone by the rules."""
    kept: list[MergeInput] = []
    for row in group:
        if all(row.entity_id not in k.kept_apart and k.entity_id not in row.kept_apart for k in kept):
            kept.append(row)
    return kept
