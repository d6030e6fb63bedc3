"""Which word of a clause is its finite verb, read back from a preposition: "Keoni
designs every frame in FreeCAD", "is recorded in Zencastr", "Mariam, our bookkeeper,
reconciles the accounts in Sage". Pure."""

from __future__ import annotations

from typing import Final

from memledger.extraction import lexicon
from memledger.extraction.appositions import name_before_apposition
from memledger.extraction.patterns import word_set
from memledger.extraction.triggers import ADVERBS, PAST_FORMS

_WORDS: Final = lexicon.sections("frame_words.txt")
# Between a verb and its object: "use the new Zephyr", "joined our Quillon".
OBJECT_GAP: Final = word_set("the a an my our their his her its some new old")
USED_BY: Final = frozenset(_WORDS["USED_BY"])
"""Participles whose subject uses their agent: "billing is handled by Stripe"."""
LED: Final = frozenset(_WORDS["LED"])
"""Participles whose agent is a person: "maintained by Osric Vale" (a company would "develop")."""
PRONOUN_SUBJECTS: Final = word_set("i we they he she you")
BE_FORMS: Final = word_set("is are was were")
_NOTE_OPENERS: Final = word_set(": - * •")
_PROGRESSIVE_AUXILIARIES: Final = word_set("been am i'm im we're were are")
# Closed-class words that are never the verb of "subject verb ... in X".
NOT_VERBS: Final = word_set(
    "the a an my our your their his her its this that these those some all every each any "
    "also always still just really often usually never not too very much more most and or "
    "but with for from into onto over about than then there here what which who whom whose "
    "was were are has have had been being does did will would can could should might must "
    "really only even ever already soon now today yesterday tomorrow"
)
CLAUSE_ENDS: Final = word_set(", ; : . ! ? ( ) and but because so while when which who where that")


def finite_verb_before(words: list[str], lows: list[str], prep: int) -> int | None:
    """The index of the clause's verb before token ``prep``, when the clause reads
    subject-verb: a verb right after "I"/"we"/"she" (past adverbs and auxiliaries), one
    in -s or -ed right after a name, or a participle after "is"/"are" ("is recorded")."""
    k = prep - 1
    if k >= 1 and lows[k].endswith("ed") and lows[k - 1] in _NOTE_OPENERS:
        return k  # "meds: tracked in Medisafe": a note's participle after its label
    while k > 0 and prep - k < 12 and (lows[k - 1] not in CLAUSE_ENDS or _verb_after_name(words, lows, k)):
        low = lows[k]
        if (_word(low) and len(low) > 1 and low not in NOT_VERBS) or _doing(lows, k):
            b = k - 1
            while b > 0 and lows[b] in ADVERBS:
                b -= 1
            before = lows[b]
            if b > 0 and before == ",":  # "My buddy, Makana, books ...", "Mariam, our bookkeeper, does ..."
                apposed = name_before_apposition(words, lows, b)
                if apposed is not None:
                    b = apposed - 1
                elif words[b - 1][:1].isupper():
                    b -= 1
                before = lows[b]
            relative = before in ("who", "which") and low.endswith("s") and low not in BE_FORMS  # not "who put in"
            after_pronoun = before in PRONOUN_SUBJECTS or (relative and _who_after_name(words, lows, b + 1))
            inflected = (low.endswith(("s", "ed")) and not low.endswith("ss")) or low in PAST_FORMS
            participle = before in BE_FORMS and (low in USED_BY or low in LED)
            progressive = low.endswith("ing") and before in _PROGRESSIVE_AUXILIARIES  # "I've been logging"
            if (
                after_pronoun
                or participle
                or progressive
                or (inflected and (before in BE_FORMS or (words[b][:1].isupper() and before not in NOT_VERBS)))
            ):
                return k
        k -= 1
    return None


def _word(low: str) -> bool:
    """A word of letters, hyphenated ones too ("video-call", "double-check")."""
    return low.isalpha() or (low.count("-") == 1 and low.replace("-", "").isalpha() and low[0] != "-")


def _verb_after_name(words: list[str], lows: list[str], k: int) -> bool:
    """Whether the token before ``k`` joins rather than ends a clause: an "and" joining two
    objects, or the comma closing a name's apposition ("My buddy, Makana, books ...")."""
    if _coordinated(lows, k - 1) or _who_after_name(words, lows, k):
        return True
    named = words[k - 2][:1].isupper() or name_before_apposition(words, lows, k - 1) is not None
    return lows[k - 1] == "," and k >= 2 and named and (lows[k] not in NOT_VERBS or _doing(lows, k))


def relative_after_comma(lows: list[str], k: int) -> bool:
    """Whether ", who" or ", which" stands right before ``k``: a relative clause about what
    the comma follows."""
    return k >= 2 and lows[k - 1] in ("who", "which") and lows[k - 2] == ","


def _who_after_name(words: list[str], lows: list[str], k: int) -> bool:
    """Whether ", who" or ", which" right before ``k`` follows a name ("Ayşe Demirci, who
    books ...", "Fernvale Dairy, which keeps ..."): the relative clause's verb has the one
    named as its subject."""
    return k >= 3 and relative_after_comma(lows, k) and words[k - 3][:1].isupper()


def joined_verb(lows: list[str], prep: int) -> int | None:
    """Where a present verb joined by "and" stands before the preposition at ``prep``, its
    object opening with a determiner ("... and keeps the accounts in X"); None otherwise."""
    for k in range(prep - 1, max(1, prep - 8), -1):
        low = lows[k]
        if not low.isalpha():
            return None
        if lows[k - 1] == "and" and low.endswith("s") and not low.endswith("ss") and low not in BE_FORMS:
            return k if lows[k + 1] in _DONE_OBJECTS else None
    return None


# Words opening what a main-verb "do" does: "does his taxes", "does all our plotting".
_DONE_OBJECTS: Final = OBJECT_GAP | word_set("his her its their our my all every everything most some")


def _doing(lows: list[str], k: int) -> bool:
    """ "does his taxes in GnuCash": a form of "do" as the main verb, before its object."""
    return lows[k] in ("do", "does", "did") and k + 1 < len(lows) and lows[k + 1] in _DONE_OBJECTS


def _coordinated(lows: list[str], k: int) -> bool:
    """An "and" joining two objects of one verb ("notes in Goodnotes and flashcards in
    Anki"), not two clauses ("and we ...")."""
    return lows[k] == "and" and k + 1 < len(lows) and lows[k + 1] not in PRONOUN_SUBJECTS
