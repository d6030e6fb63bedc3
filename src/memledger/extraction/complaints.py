"""Faults the speaker reports about their own things ("my Garmin won't sync", "our
PracticePanther account won't invoice"): what a support ticket or a complaint says is
broken and calls the writer's own is something its writer uses, even when the sentence is
negated. A fault in a tool not said to be theirs ("TripIt is not connecting") states a
fault, not a use. Pure."""

from __future__ import annotations

from typing import Final

from memledger.extraction import lexicon, polarity
from memledger.extraction.clefts import HEARSAY
from memledger.extraction.owned_subjects import someone
from memledger.extraction.patterns import Edge, Mention, Party, Sentence, word_set
from memledger.extraction.triggers import POSSESSIVE_USER, find_triggers

_WORDS: Final = lexicon.sections("frame_words.txt")
_FAULTS: Final = frozenset(_WORDS["FAULTS"])
_FAULT_NEGATIONS: Final = frozenset(_WORDS["FAULT_NEGATIONS"])
FAILING: Final = _FAULTS | _FAULT_NEGATIONS
"""Words that report a thing failing ("stopped", "won't", "crashes")."""
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
    lows = sentence.lows
    if sentence.question or not any(m.entity_type == "tool" for m in sentence.mentions):
        return []
    if any(t.kind in _LEAVING for t in find_triggers(lows)):
        return []  # "we moved off X because its runners kept timing out": a reason to leave
    tools = [m for m in sentence.mentions if m.entity_type == "tool" and _owned(lows, m)]
    if tools and not any(_faulty(lows, k) for k in range(len(lows))):
        tools = []
    if not _CANNOT.isdisjoint(lows):
        tools += [m for m in _reached(lows, sentence.mentions) if m not in tools]
    if not tools:
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
    described = tool.start > 1 and lows[tool.start - 2] == "as"  # "we chose Toast as our POS": a role, no thing
    return tool.start > 0 and lows[tool.start - 1] in POSSESSIVE_USER and not described


def _reached(lows: list[str], mentions: list[Mention]) -> list[Mention]:
    """The tools the speaker, or a thing of theirs, fails to reach ("I can't log in to X",
    "my thermometer won't pair with the X app"): used, as a fault in it is reported
    from the inside; not "I can't stand X" (no preposition before the name)."""
    named = {k for m in mentions if m.entity_type != "tool" for k in range(m.start, m.end)}  # "my Fitbit scale"
    fault = next((k for k, low in enumerate(lows) if low in _CANNOT and _speakers(lows, k, named)), None)
    if fault is None or any(t.kind in _CHOICES for t in find_triggers(lows[fault + 1 : fault + 4])):
        return []  # "we didn't go with X": a choice not made, no fault
    if not _UNSAID.isdisjoint(lows[:fault]) or lows[fault + 1 : fault + 2] in _NO_ATTEMPT:
        return []  # "If I can't log in to X tomorrow", "the man say I cannot ...", "couldn't agree on X"
    end = next((k for k in range(fault + 1, len(lows)) if lows[k] in _FAULT_CLAUSE_ENDS), len(lows))
    reached = []
    for m in mentions:
        before = lows[max(0, m.start - 2) : m.start]
        into = before[-1:] and (before[-1] in _INTO or (before[-1] == "the" and before[:1] and before[0] in _INTO))
        if m.entity_type == "tool" and fault < m.start < end and into:
            reached.append(m)
    return reached


def _speakers(lows: list[str], k: int, named: set[int]) -> bool:
    """Whether the subject before the negated auxiliary at ``k`` is the speaker ("I",
    "we") or a thing of theirs ("my thermometer", "our card reader"); not a person of
    theirs ("my sister") or a thing named ("our club Ashgrove Cyclists")."""
    if k >= 1 and lows[k - 1] in ("i", "we"):
        tried = lows[k + 1 : k + 3] == ["manage", "to"]  # "I didn't manage to upload it to X": it failed
        return lows[k] not in _NOT_DONE or tried  # "I can't log in to X"; not "we didn't bother with X"
    nouns = lows[max(0, k - 2) : k]
    owner = k - len(nouns) - 1
    if len(nouns) == 2 and nouns[0] in POSSESSIVE_USER:
        nouns, owner = nouns[1:], k - 2
    things = all(low.isalpha() and not someone(low) for low in nouns) and not named & set(range(owner, k))
    return owner >= 0 and lows[owner] in POSSESSIVE_USER and things


_INTO: Final = word_set("to into in on with from")
_UNSAID: Final = HEARSAY | word_set("if unless whether when")  # a fault supposed or reported, not the writer's own
_NO_ATTEMPT: Final = tuple([w] for w in ("agree", "decide", "choose", "believe", "stand", "afford", "wait", "imagine"))
_CANNOT: Final = word_set("won't wont can't cannot couldn't doesn't didn't")
# A plain negation: the speaker did not do it, which tells no fault; a thing of theirs that
# didn't ("my scale didn't pair with X") still fails.
_NOT_DONE: Final = word_set("didn't doesn't")
# Verbs after "can't" that tell no fault: a choice not made, a trust ("can't rely on X").
_CHOICES: Final = frozenset(("DECIDE", "KEEP", "PREFER", "LIKE", "SWITCH", "RETRACT", "LEAVE", "DEPEND"))
_FAULT_CLAUSE_ENDS: Final = word_set(". ; but because so although")


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
            if j and lows[j - 1] in ("we", "i"):
                return False  # "we are not renewing our X": the speaker's doing, no state of a thing
            return following in _FAULT_STATES and (following != "not" or _verb_after_not(lows, j + 2))
        if not low.isalpha() or low in _NOT_A_VERB:
            return False
    return False


def _verb_after_not(lows: list[str], j: int) -> bool:
    """ "is not syncing", "is not detected", not "is not what we picked"."""
    return j < len(lows) and (lows[j].endswith("ing") or lows[j] in _FAULT_PARTICIPLES)
