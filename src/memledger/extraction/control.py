"""Whose doing an infinitive or a complement clause is. Pure.

"Hemi taught me to write everything in LaTeX", "my coach makes me review games in X":
the speaker writes in it, not Hemi.
"She wants every department to use Google Docs", "Sunniva keeps pushing for us to
adopt Hypothesis": a use someone asks for, not one that holds. "I'm sure the
underwriters use X": the complement clause has its own subject.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Final

from memledger.extraction import lexicon
from memledger.extraction.finite_verbs import PRONOUN_SUBJECTS
from memledger.extraction.patterns import VERB_PARTICLES, word_set
from memledger.extraction.senses import participle
from memledger.extraction.triggers import DETERMINERS, INTENTS, PREPOSITIONS

_TEACHING: Final = word_set(
    "taught teach teaches teaching showed show shows showing helped help helps helping trained train convinced got gets"
)
_ASKING: Final = (
    INTENTS
    | frozenset(lexicon.sections("frame_words.txt")["WANTING"])
    | word_set("told tell tells telling urged urging pushing pushed pushes begged begging")
)
_SPEAKER_OBJECTS: Final = word_set("me us")
# Verbs before "me to" that do not ask: the doing happened ("forced me to").
_NOT_ASKING: Final = word_set("forced forces persuaded convinced enabled allowed allows lets let")
_NOT_DOERS: Final = word_set("please just and to")  # "Please let me use X": a request
_LENDERS: Final = word_set("his her their your")  # "lets me use her Kindle": hers, lent
_CAUSING: Final = word_set("make makes made making let lets have has had help helps helped")
# Verbs that put someone on a service: "got me on X", "signed us up with X".
_PLACING: Final = word_set("got get gets put puts signed sign signs set sets added adds invited switched moved hooked")
_STOPS: Final = word_set(", ; : . ! ? and but because so")
_REACH = 6


def infinitive_of(words: list[str], verb: int) -> str | None:
    """Who does the verb at ``verb`` when "to" opens it: "speaker" after "taught me (how)
    to", "asked" after a verb of wanting or asking within a few words; else None. A bare
    verb after "and" shares the infinitive before it ("told me to drop X and practise with Y")."""
    if verb >= 2 and words[verb - 1] == "and":
        opened = _joined_infinitive(words, verb - 1)
        return infinitive_of(words, opened) if opened is not None else None
    if verb < 1 or words[verb - 1] != "to":
        return None
    k = verb - 2
    if k >= 0 and words[k] == "how":
        k -= 1
    if k >= 1 and words[k] in _SPEAKER_OBJECTS and words[k - 1] in _TEACHING:
        return "speaker"
    if (
        k >= 1
        and words[k] in _SPEAKER_OBJECTS
        and words[k - 1].isalpha()
        and words[k - 1] not in _NOT_ASKING | PREPOSITIONS
    ):
        return "asked"  # "Shirin keeps nagging us to move to X": a verb that puts "me to" asks
    for word in reversed(words[max(0, verb - 1 - _REACH) : verb - 1]):
        if word in _STOPS:
            break
        if word in _ASKING:
            return "asked"
    return None


def _joined_infinitive(words: list[str], joint: int) -> int | None:
    """The verb after "to" that the "and" at ``joint`` joins another verb to, within a few
    words and no subject between ("to drop X and practise", not "to drop X and we ...")."""
    for k in range(joint - 1, max(0, joint - 1 - _REACH), -1):
        if words[k] in _STOPS or words[k] in PRONOUN_SUBJECTS or words[k] == "it":
            return None
        if words[k] == "to" and k + 1 < joint and k >= 1:
            return k + 1
    return None


def speaker_object(lows: list[str], verb: int, prep: int) -> bool:
    """Whether the speaker, the verb's object, is the one with the instrument at ``prep``:
    put on it ("Sione got me on X", "signed us up with X") or made to act with it ("my
    coach makes me review every game in X"); not a recipient ("sent me the photos on X")."""
    if verb + 1 >= prep or lows[verb + 1] not in _SPEAKER_OBJECTS:
        return False
    rest = lows[verb + 2 : prep]
    if rest[:1] and participle(rest[0]):
        rest = rest[1:]  # "got me hooked on X", "got us set up with X"
    placed = lows[verb] in _PLACING and set(rest) <= VERB_PARTICLES  # not "Fatima texted me on Signal"
    return placed or (lows[verb] in _CAUSING and bool(rest) and rest[0] not in DETERMINERS)


def made_to(words: list[str], verb: int) -> bool:
    """Whether the bare verb at ``verb`` is what someone lets or makes the speaker do
    ("my boss finally let us use X", "she made me use Y"), or where someone puts the
    speaker ("put me on X"): the speaker's doing; not a proposal ("Let me use X for
    this"), nor someone's thing lent ("lets me use her X")."""
    if verb >= 2 and words[verb] == "on" and words[verb - 1] in _SPEAKER_OBJECTS and words[verb - 2] in _PLACING:
        return True  # "my manager put me on the X project": the speaker is the one on it
    if verb < 3 or words[verb - 1] not in _SPEAKER_OBJECTS or words[verb - 2] not in _CAUSING:
        return False
    doer = words[verb - 3]
    lent = any(w in _LENDERS for w in words[verb + 1 : verb + 3])
    return (doer == "" or doer.isalpha()) and doer not in _NOT_DOERS and not lent  # "" stands for a name


def causing_verb(lows: list[str], prep: int) -> int | None:
    """The index of a verb that causes or puts the speaker, its object, in the clause
    before ``prep`` ("my teacher makes me record every scale in X", "my sister got me on
    X"), or None."""
    for k in range(prep - 2, max(-1, prep - 2 - _REACH), -1):
        if lows[k] in _STOPS:
            return None
        if (lows[k] in _CAUSING or lows[k] in _PLACING) and lows[k + 1] in _SPEAKER_OBJECTS:
            return k
    return None


def opens_complement(words: list[str], determiner: int) -> bool:
    """Whether the determiner at ``determiner`` opens a complement clause's own subject
    ("I'm sure the underwriters use ..."), not a noun phrase that "is" links to the
    speaker's clause ("I think the problem is I run ...")."""
    if determiner < 1 or words[determiner - 1] not in _COMPLEMENT_VERBS:
        return False
    following = words[determiner + 1 : determiner + 5]
    linked = any(a in _BE and b in _PRONOUNS for a, b in pairwise(following))
    return not linked


_COMPLEMENT_VERBS: Final = word_set("sure think thought know knew believe guess heard reckon bet realised realized")
_BE: Final = word_set("is was")
_PRONOUNS: Final = word_set("i i'm we we're you he she they")
