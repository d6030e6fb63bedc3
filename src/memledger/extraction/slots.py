"""Names typed by the grammatical slot they fill. Pure.

A capitalised name that no list knows and no nearby cue word explains is typed by
its place in the clause: the object of a verb takes the type the verb's frame
wants ("we run Zephyr" makes Zephyr a tool, "she works at Quillon" an
organization), and the subject of a frame that only one type can fill takes
that type ("Lantern is written in Rust": a project; "Mirela is on the data team":
a person; "Hollow Pine is where Tomasz works": an organization). A name in a
slot no frame explains stays unnamed: precision first.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from memledger.events.catalogue import EntityType
from memledger.extraction.patterns import TEAM_NOUNS, Mention, word_set
from memledger.extraction.triggers import Trigger, find_triggers, is_filler

SLOT_CONFIDENCE = 0.7

# What the object of each trigger kind is, when the verb alone decides it.
_OBJECT_TYPE: Final[dict[str, EntityType]] = {
    "USE": "tool",
    "KEEP": "tool",
    "PREFER": "tool",
    "DECIDE": "tool",
    "SWITCH": "tool",
    "RETRACT": "tool",
    "DEPEND": "tool",
    "WORK_ON": "project",
    "KNOW": "person",
    "INTRO": "person",
    "PART": "organization",
}
# Phrases of those kinds whose object is a person, not what the kind usually wants.
_PERSON_OBJECT: Final = word_set("manages manage managing mentoring lead leads leading led")
_NOT_ALONE: Final = word_set("run runs running pick log logs store stores track tracks follow follows host hosts")
# Between a verb and its object: "use the new Zephyr", "joined our Quillon".
_OBJECT_GAP: Final = word_set("the a an my our their his her its some new old")
# Between a subject and its verb: "Lantern is also written in ...", "Mirela has been working at ...".
_SUBJECT_GAP: Final = word_set("is are was were has have had been 's also still now both all already just")
LED: Final = word_set("maintained led")
"""Participles whose agent is a person: "maintained by Osric Vale" (a company would "develop")."""
_BUILT_FRAMES: Final = frozenset(
    (
        "written in",
        "built with",
        "built in",
        "built on",
        "powered by",
        "hosted on",
        "deployed on",
        "deployed to",
        "depends on",
        "depend on",
        "relies on",
        "rely on",
        "requires",
        "built on top of",
    )
)
_WORKS: Final = word_set("works worked studies studied teaches taught volunteers")
_ALWAYS_INSTRUMENTS: Final = word_set("via using through")
_INSTRUMENT_PREPOSITIONS: Final = word_set("in on with through via using into onto")
_CLAUSE_ENDS: Final = word_set(", ; : . ! ? ( ) and but because so while when which who where that")
_PERSON_SUBJECT_KINDS: Final = frozenset(("WORK_ON", "WORK_WITH", "KNOW", "INTRO", "AT"))


def type_by_slot(
    words: list[str],
    lows: list[str],
    unknown: list[tuple[int, int]],
    add: Callable[[Mention], None],
    initial: set[int],
    taken: list[bool],
) -> None:
    """Add a mention for each unknown span (in order; ``taken`` marks tokens already
    named) whose slot decides its type."""
    if not unknown:
        return
    triggers = find_triggers(lows)
    ends = {trigger.end: trigger for trigger in triggers}
    starts = {trigger.start: trigger for trigger in triggers}
    for start, end in unknown:
        if any(taken[start:end]):
            continue
        kind = _object_slot(lows, start, ends) if start not in initial else None
        kind = kind or _subject_slot(lows, start, end, starts)
        if kind is not None:
            add(Mention(" ".join(words[start:end]), kind, SLOT_CONFIDENCE, start, end))


def _object_slot(lows: list[str], start: int, ends: dict[int, Trigger]) -> EntityType | None:
    if start >= 2 and lows[start - 1] == "by" and lows[start - 2] in LED:
        return "person"  # "maintained by Osric Vale"
    j = start
    while j > 0 and (lows[j - 1] in _OBJECT_GAP or is_filler(lows[j - 1])) and start - j < 3:
        j -= 1
    trigger = ends.get(j)
    if trigger is None:
        return _instrument(lows, j, ends)
    phrase = " ".join(lows[trigger.start : trigger.end])
    if phrase in _PERSON_OBJECT:
        return "person"
    if phrase in _NOT_ALONE or phrase.endswith(" by"):
        return None  # "run Hollow Pine", "managed by Quillon": the verb does not fix the type
    if trigger.kind == "AT" and trigger.end - trigger.start > 1:
        return "organization"
    return _OBJECT_TYPE.get(trigger.kind)


def _instrument(lows: list[str], j: int, ends: dict[int, Trigger]) -> EntityType | None:
    """ "keep our recipes in Paprika", "train on Zwift": the object of an instrument
    preposition after a verb of use, in the same clause, is what is used."""
    if j < 1 or lows[j - 1] not in _INSTRUMENT_PREPOSITIONS:
        return None
    if lows[j - 1] in _ALWAYS_INSTRUMENTS:
        return "tool"  # "paid via Quillpay", "sent through Tallyfin"
    for k in range(j - 1, max(0, j - 9), -1):
        if lows[k - 1] in _CLAUSE_ENDS:
            return None
        trigger = ends.get(k)
        if trigger is not None and trigger.kind in ("USE", "KEEP"):
            phrase = " ".join(lows[trigger.start : trigger.end])
            placed = phrase in _NOT_ALONE  # "runs a farm in Minas Gerais": where, not with what
            return None if placed or phrase.endswith((" by", " in", " on", " at")) else "tool"
    return None


def _subject_slot(lows: list[str], start: int, end: int, starts: dict[int, Trigger]) -> EntityType | None:
    j = end
    while j < len(lows) and (lows[j] in _SUBJECT_GAP or is_filler(lows[j])) and j - end < 4:
        j += 1
    following = lows[end + 2 : end + 7]
    if lows[end : end + 1] in (["is"], ["was"]) and lows[end + 1 : end + 2] and lows[end + 1] in LED:
        return "project"
    if start and lows[start - 1] == "where" and lows[end : end + 1] and lows[end] in _WORKS:
        return "person"  # "... is where Tsiry works"
    if lows[end : end + 2] == ["is", "where"]:
        return "organization"
    if lows[end : end + 2] in (["is", "on"], ["was", "on"], ["'s", "on"]) and TEAM_NOUNS & set(following):
        return "person"
    trigger = starts.get(j)
    if trigger is None:
        return None
    phrase = " ".join(lows[trigger.start : trigger.end])
    if phrase in _BUILT_FRAMES or trigger.kind in ("DEPEND", "DEPENDED"):
        return "project"
    verb = trigger.kind != "AT" or trigger.end - trigger.start > 1  # a bare "at" is a preposition
    if trigger.kind in _PERSON_SUBJECT_KINDS and verb and end - start <= 2:
        return "person"
    return None
