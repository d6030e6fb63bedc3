"""Quoted turns: the part of a turn that speaks to the request, and turns as items. Pure.

A turn of a long conversation may run to paragraphs, and a block quotes it within a
share of its budget: the sentences holding most of the request's words are kept, in
their order, cut where the turn was cut.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

from memledger.selection.types import SelectedItem
from memledger.selection.words import query_words

EXCERPT_CHARS: Final = 360
_SENTENCE: Final = re.compile(r"[^.!?\n]+(?:[.!?]+|\n|$)")
_GAP: Final = "\u2026"


def excerpt(text: str, request: str, limit: int = EXCERPT_CHARS) -> str:
    """``text`` whole when it fits ``limit`` characters, else the run of its sentences
    holding most of ``request``'s words (ties: the earliest), marked with an ellipsis
    where the turn goes on."""
    text = text.strip()
    if len(text) <= limit:
        return text
    sentences = [m.group(0).strip() for m in _SENTENCE.finditer(text) if m.group(0).strip()]
    wanted = set(query_words(request))
    hits = [len(wanted & set(query_words(s, limit=64))) for s in sentences]
    best, best_hits = (0, 0), -1
    for start in range(len(sentences)):
        length, end, found = 0, start, 0
        while end < len(sentences) and length + len(sentences[end]) + 1 <= limit:
            length += len(sentences[end]) + 1
            found += hits[end]
            end += 1
        if end > start and found > best_hits:
            best, best_hits = (start, end), found
    start, end = best
    if end <= start:  # one sentence longer than the limit: its opening
        return text[: limit - 1].rstrip() + _GAP
    chosen = " ".join(sentences[start:end])
    return (_GAP if start > 0 else "") + chosen + (_GAP if end < len(sentences) else "")


def turn_item(turn_id: str, text: str, request: str, *, score: float = 0.0) -> SelectedItem:
    """A turn as a block quotes it: its excerpt for ``request``, citing itself."""
    return SelectedItem(
        item_id=turn_id,
        kind="turn",
        text=excerpt(text, request),
        confidence=1.0,
        score=score,
        source_turns=(turn_id,),
    )


def best_cited(source_turns: Iterable[str], turn_ranks: dict[str, int], most: int) -> tuple[str, ...]:
    """At most ``most`` of an item's ``source_turns``: those the request's own turn
    search found, best first, then the others from the last cited back."""
    turns = list(dict.fromkeys(source_turns))
    found = sorted((t for t in turns if t in turn_ranks), key=lambda t: turn_ranks[t])
    rest = [t for t in reversed(turns) if t not in turn_ranks]
    return tuple((found + rest)[:most])
