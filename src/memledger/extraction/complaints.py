"""Faults the speaker reports ("the Zwift app freezes when I pair ...", "Zotero is not
syncing my library"): what a support ticket or a complaint says is broken is something
its writer uses, even when the sentence is negated. Pure."""

from __future__ import annotations

from typing import Final

from memledger.extraction import lexicon
from memledger.extraction.patterns import Edge, Mention, Party, Sentence, word_set
from memledger.extraction.triggers import find_triggers

_FAULTS: Final = frozenset(lexicon.sections("frame_words.txt")["FAULTS"])
_OPENERS: Final = word_set("the my our : , - * \u2022")
_FUNCTION_WORDS: Final = word_set("and or but to that which who one i we it he she")
_BE: Final = word_set("is are was were has have")
_BROKEN: Final = word_set("not down broken stuck still no n't")
_CONFIDENCE: Final = 0.75
_LEAVING: Final = frozenset(("SWITCH", "RETRACT", "LEAVE"))


def complaint_uses(speaker: Party, sentence: Sentence) -> list[Edge]:
    """The tools a sentence opens a fault report with, used by the speaker."""
    if sentence.question or any(t.kind in _LEAVING for t in find_triggers(sentence.lows)):
        return []  # "we moved off X because its runners kept timing out": a reason to leave
    return [
        Edge(speaker, "USES", Party.of(tool), _CONFIDENCE)
        for tool in sentence.mentions
        if tool.entity_type == "tool" and _opens(sentence.lows, tool) and _faulty(sentence.lows, tool.end)
    ]


def _opens(lows: list[str], tool: Mention) -> bool:
    """Whether the tool's name opens its clause ("The Zwift app ...", "..., and Epic ...")."""
    return tool.start == 0 or lows[tool.start - 1] in _OPENERS


def _faulty(lows: list[str], k: int) -> bool:
    """Whether a fault is reported from token ``k``, past up to two lower-case nouns the
    name qualifies ("app", "sensor", "card reader")."""
    for j in range(k, min(k + 3, len(lows))):
        low = lows[j]
        if low in _FAULTS:
            return True
        if low in _BE:
            return j + 1 < len(lows) and lows[j + 1] in _BROKEN
        if not low.isalpha() or low in _FUNCTION_WORDS:
            return False
    return False
