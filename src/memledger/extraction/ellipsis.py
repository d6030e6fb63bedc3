"""Sentences that leave their subject unsaid, as diaries and chat do: "Recorded the demo
in Ardour", "Started tracking my sleep with an Oura Ring". Pure.

Such a sentence opens (past a bullet and the adverbs that may stand first) with a verb
in the past or in -ing, and its doer is the speaker. The verb must take an object
before the instrument phrase ("Obsessed with X", "Done with X" do not) and be no verb of
feeling or perceiving ("Loved the ending in X")."""

from __future__ import annotations

from typing import Final

from memledger.extraction.control import causing_verb
from memledger.extraction.finite_verbs import finite_verb_before
from memledger.extraction.patterns import BULLETS, VERB_PARTICLES, Edge, Party, word_set
from memledger.extraction.triggers import ELLIPTIC, PAST_FORMS, PREPOSITIONS


def instrument_verb(words: list[str], lows: list[str], prep: int) -> tuple[int | None, bool]:
    """The verb whose instrument the preposition at ``prep`` names, and whether its doer
    is the speaker left unsaid: a finite verb after its subject, a subjectless opening
    verb ("Recorded vocals in X"), or a verb that makes the speaker act ("my coach makes
    me log it in X")."""
    verb = finite_verb_before(words, lows, prep)
    opening = opening_verb(lows, prep)
    if opening is not None and (verb is None or opening < verb):
        return opening, True
    return (verb if verb is not None else causing_verb(lows, prep)), False


def opening_verb(lows: list[str], prep: int) -> int | None:
    """The index of the verb a subjectless sentence opens with, when it governs the
    preposition at ``prep`` through an object; None otherwise."""
    k = 1 if lows[:1] and lows[0] in BULLETS else 0
    while k < prep and lows[k] in ELLIPTIC and not _verb_form(lows[k]):
        k += 1
    if k >= prep or not _verb_form(lows[k]):
        return None
    between = lows[k + 1 : prep]
    if lows[k] in _FEELING or any(not low.isalpha() and low != "'s" for low in between):
        return None  # "Loved the ending in X"; a comma or a colon closes the verb's clause first
    return k if any(low not in VERB_PARTICLES and low not in PREPOSITIONS for low in between) else None


def _verb_form(low: str) -> bool:
    """A past form ("recorded", "drew") or a gerund ("tracking"), not a noun in -ing."""
    regular = len(low) > 4 and low.isalpha() and low.endswith(("ed", "ing")) and not low.endswith("thing")
    return (low in PAST_FORMS or regular) and low not in _NOT_VERBS and low not in _ING_PREPOSITIONS


# Verbs of feeling and perceiving: what they take is no work done with the instrument.
_FEELING: Final = word_set("loved liked hated enjoyed saw seen noticed heard watched read missed")
_NOT_VERBS: Final = word_set("wedding morning evening indeed feeling building ceiling")
# Prepositions in -ing: "During my two years at X I ran ..." opens with no verb.
_ING_PREPOSITIONS: Final = word_set("during regarding concerning including according pending following considering")


def echoed(speaker: Party, lows: list[str], edges: list[Edge]) -> list[Edge]:
    """ "N prefers X to Y, and honestly so do I": a closing "so do I" or "me too" takes up
    the verb said of someone else, so their preferences and uses hold for the speaker too."""
    tail = [w for w in lows[-5:] if w.isalpha()][-3:]
    if tail not in (["so", "do", "i"], ["so", "am", "i"]) and tail[-2:] != ["me", "too"]:
        return []
    taken = [e for e in edges if e.source.kind == "person" and e.relation in _ECHOED and not e.retracted]
    return [Edge(speaker, e.relation, e.target, e.confidence, e.context) for e in taken]


_ECHOED: Final = frozenset(("PREFERS", "USES"))
