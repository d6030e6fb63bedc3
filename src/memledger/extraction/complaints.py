"""Faults the speaker reports about their own things ("my Garmin won't sync", "our
PracticePanther account won't invoice"): what a support ticket or a complaint says is
broken and calls the writer's own is something its writer uses, even when the sentence is
negated. A fault in a tool not said to be theirs ("TripIt is not connecting") states a
fault, not a use. Pure."""

from __future__ import annotations

from typing import Final

from memledger.extraction import lexicon, polarity
from memledger.extraction.patterns import Edge, Mention, Party, Sentence, word_set
from memledger.extraction.triggers import POSSESSIVE_USER, find_triggers

_WORDS: Final = lexicon.sections("frame_words.txt")
_FAULTS: Final = frozenset(_WORDS["FAULTS"])
_FAULT_NEGATIONS: Final = frozenset(_WORDS["FAULT_NEGATIONS"])
_FAULT_STATES: Final = frozenset(_WORDS["FAULT_STATES"])
# "is not detected": participles whose negation reports a fault, not "is not included".
_FAULT_PARTICIPLES: Final = word_set(
    "detected recognised recognized connected paired synced found supported loaded saved charged configured updated"
)
_BE: Final = word_set("is are was were")
_NOT_A_VERB: Final = word_set("a an the my our something anything what that which who")
_CONFIDENCE: Final = 0.75
_LEAVING: Final = frozenset(("SWITCH", "RETRACT", "LEAVE"))


def complaint_uses(speaker: Party, sentence: Sentence) -> list[Edge]:
    """The writer's own tools ("won't load on my iPad", "my Garmin won't sync") in a
    sentence that reports a fault, used by the speaker."""
    if sentence.question or any(t.kind in _LEAVING for t in find_triggers(sentence.lows)):
        return []  # "we moved off X because its runners kept timing out": a reason to leave
    lows = sentence.lows
    tools = [m for m in sentence.mentions if m.entity_type == "tool" and _owned(lows, m)]
    if not tools or not any(_faulty(lows, k) for k in range(len(lows))):
        return []
    unsettled = polarity.unasserted(lows)
    return [
        Edge(speaker, "USES", Party.of(tool), _CONFIDENCE)
        for tool in tools
        if unsettled.get(tool.start) != "unsettled"  # "if the X app freezes again"
    ]


def _owned(lows: list[str], tool: Mention) -> bool:
    """Whether the tool's name follows "my" or "our": the writer's own device or account
    ("won't load on my iPad"), which a fault anywhere in the sentence is reported about."""
    return tool.start > 0 and lows[tool.start - 1] in POSSESSIVE_USER


def _faulty(lows: list[str], k: int) -> bool:
    """Whether a fault is reported from token ``k``, past up to two lower-case nouns the
    name qualifies ("app", "sensor", "card reader")."""
    for j in range(k, min(k + 3, len(lows))):
        low = lows[j]
        following = lows[j + 1] if j + 1 < len(lows) else ""
        if low in _FAULTS:
            return True
        if low in _FAULT_NEGATIONS:
            return following.isalpha() and following not in _NOT_A_VERB
        if low in _BE:
            return following in _FAULT_STATES and (following != "not" or _verb_after_not(lows, j + 2))
        if not low.isalpha() or low in _NOT_A_VERB:
            return False
    return False


def _verb_after_not(lows: list[str], j: int) -> bool:
    """ "is not syncing", "is not detected", not "is not what we picked"."""
    return j < len(lows) and (lows[j].endswith("ing") or lows[j] in _FAULT_PARTICIPLES)
