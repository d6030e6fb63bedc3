"""Sentences and tokens for the heuristic extractor, and the shapes of what it finds. Pure.

A turn is cut into sentences (fenced code dropped, abbreviations such as
"Mrs." kept whole) and each sentence into tokens; ``mentions`` then finds the
named entities among them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from memledger.events.catalogue import EntityType


def word_set(text: str) -> frozenset[str]:
    """The whitespace-separated words of ``text``, as a set."""
    return frozenset(text.split())


_CODE_FENCE = re.compile(r"```.*?(?:```|\Z)", re.S)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'(\[*•-])|\s*\n+\s*|;\s+")
_TOKEN = re.compile(r"(?:St|Mt|Ft)\.(?= [A-Z])|[^\W_](?:[\w'.+#&/-]*[\w+#])?|->|=>|→|\S")
_ABBREVIATIONS: Final = word_set("mr mrs ms dr prof st vs etc inc ltd jr sr no e.g i.e")
_CONTRACTED: Final = word_set("it he she that what there here who let where how")
_QUESTION_START: Final = word_set(
    "how what why which who whom whose where when should shall can could would will do "
    "does did is are was were have has any anyone anybody is there isn't aren't doesn't "
    "don't won't wouldn't shouldn't can't couldn't"
)
_REQUEST_LEADS: Final = ("remember that", "keep in mind that", "note that", "make a note that")
HEDGES: Final = re.compile(
    r"\b(?:i think|i guess|i believe|i suppose|i assume|maybe|perhaps|probably|possibly|"
    r"might|not sure|unsure|could be|likely|iirc|i reckon|seems like)\b"
)

@dataclass(slots=True)
class Mention:
    """One named entity found in a sentence, over tokens ``start`` to ``end``."""

    name: str
    entity_type: EntityType
    confidence: float
    start: int
    end: int
    role: str | None = None
    mine: bool = False  # the role is the speaker's: "my manager", "our CTO"
    kind: str | None = None  # a tool's kind, from the gazetteer


@dataclass(slots=True)
class Sentence:
    """A sentence's text and tokens, with its mentions in token order."""

    text: str
    words: list[str]
    lows: list[str]
    mentions: list[Mention]
    question: bool
    hedged: bool


def split_sentences(text: str) -> list[str]:
    """Prose sentences of ``text``; fenced code is dropped (it is code, not a statement)."""
    prose = _CODE_FENCE.sub("\n", text.replace("\u2019", "'"))
    parts: list[str] = []
    for part in _SENTENCE_END.split(prose):
        piece = part.strip()
        if not piece:
            continue
        if parts and _ends_with_abbreviation(parts[-1]):
            parts[-1] = f"{parts[-1]} {piece}"
        else:
            parts.append(piece)
    return parts


def _ends_with_abbreviation(text: str) -> bool:
    last = text.rsplit(" ", 1)[-1].lower().rstrip(".")
    return text.endswith(".") and last in _ABBREVIATIONS


def tokenize(sentence: str) -> list[str]:
    """Words and punctuation; a possessive "'s" becomes a token of its own."""
    tokens: list[str] = []
    for token in _TOKEN.findall(sentence):
        saint = bool(tokens) and tokens[-1] in ("St.", "Mt.", "Ft.")
        if len(token) > 2 and token[-2:] == "'s" and token[:-2].lower() not in _CONTRACTED and not saint:
            tokens.extend((token[:-2], "'s"))
        else:
            tokens.append(token)
    return tokens


def is_question(lowered: str, lows: list[str]) -> bool:
    if any(lead in lowered for lead in _REQUEST_LEADS):
        return False
    first = next((low for low in lows if low[0].isalnum()), "")
    return lowered.rstrip().endswith("?") or first in _QUESTION_START


