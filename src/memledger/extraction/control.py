"""Whose doing an infinitive is. Pure.

"Hemi taught me to write everything in LaTeX": the speaker writes in it, not Hemi.
"She wants every department to use Google Docs", "Sunniva keeps pushing for us to
adopt Hypothesis": a use someone asks for, not one that holds.
"""

from __future__ import annotations

from typing import Final

from memledger.extraction import lexicon
from memledger.extraction.patterns import word_set
from memledger.extraction.triggers import INTENTS

_TEACHING: Final = word_set(
    "taught teach teaches teaching showed show shows showing helped help helps helping trained train convinced got gets"
)
_ASKING: Final = (
    INTENTS
    | frozenset(lexicon.sections("frame_words.txt")["WANTING"])
    | word_set("told tell tells telling urged urging pushing pushed pushes begged begging")
)
_SPEAKER_OBJECTS: Final = word_set("me us")
_STOPS: Final = word_set(", ; : . ! ? and but because so")
_REACH = 6


def infinitive_of(words: list[str], verb: int) -> str | None:
    """Who does the verb at ``verb`` when "to" opens it: "speaker" after "taught me (how)
    to", "asked" after a verb of wanting or asking within a few words; else None."""
    if verb < 1 or words[verb - 1] != "to":
        return None
    k = verb - 2
    if k >= 0 and words[k] == "how":
        k -= 1
    if k >= 1 and words[k] in _SPEAKER_OBJECTS and words[k - 1] in _TEACHING:
        return "speaker"
    for word in reversed(words[max(0, verb - 1 - _REACH) : verb - 1]):
        if word in _STOPS:
            break
        if word in _ASKING:
            return "asked"
    return None
