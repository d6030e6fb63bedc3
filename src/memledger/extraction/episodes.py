"""Clauses that tell of a finished episode in the past. Pure.

"Last summer we booked everything through Hopper" and "I was working in Oracle
before" say nothing of what holds now: the clause is in a past tense and dated in
the past ("last <time>", "<time> ago", "back when", "when I was", a closing "before", "...
until it shut down"); the sentence's later clauses in a past tense go on with the same
story. A change whose result still holds ("last week we moved to X",
"since the spring", "now") is not such an episode, nor is a present perfect ("I've used
X for the last year").
"""

from __future__ import annotations

from typing import Final

from memledger.extraction import lexicon
from memledger.extraction.patterns import word_set
from memledger.extraction.senses import participle
from memledger.extraction.triggers import PAST_FORMS

_WORDS: Final = lexicon.sections("frame_words.txt")
TIME_NOUNS: Final = frozenset(_WORDS["TIME_NOUNS"])
_CHANGES: Final = frozenset(_WORDS["CHANGE_VERBS"])
# "for the last year", "over the past few years": a span reaching up to now.
_SPAN_TO_NOW: Final = word_set("the past these for over during")
_PRESENT: Final = word_set("now still since currently anymore today nowadays")
_PERFECT: Final = word_set("have has 've i've we've you've they've she's he's")
_THEN: Final = word_set("when then")
_DETERMINERS: Final = word_set("the my our his her their that this")
_BACK_AT: Final = word_set("at in during")
_OPENING_PHRASE: Final = _DETERMINERS | _BACK_AT  # "before the merger", "back at my first job"
_SUBJECTS: Final = word_set("i we he she they i'd we'd he'd she'd they'd")
_ADVERBS: Final = word_set("just only also still always never often all both really mostly usually")
_MONTHS: Final = word_set("january february march april may june july august september october november december")
_SCHOOLING: Final = word_set("undergrad college uni university school")
_ORDINALS: Final = word_set("first second third fourth fifth sixth final")
# Words that may open a date: the cheap test before the clause is read.
_DATING: Final = word_set("last ago back before until when in at of during throughout")
_THROUGH_A_YEAR: Final = word_set("of during throughout")


def finished_at(words: list[str]) -> int | None:
    """Where a clause (lower-case tokens) dates itself in a finished past, or None. The
    tense is its main verb's, the one after its first subject pronoun: in "I run X on the
    laptop my dad gave me last christmas" the date is the laptop's, not the use's."""
    if _DATING.isdisjoint(words):
        return None
    dated = _dated_at(words)
    main = _main_verb(words)
    past = past_tense(words) if main is None else past_tense(words[main - 1 : main + 2])
    if dated is None or not past:
        return None
    if any(w in _PRESENT or w in _PERFECT or w in _CHANGES for w in words):
        return None
    return dated


def _dated_at(words: list[str]) -> int | None:
    for i, word in enumerate(words):
        following = words[i + 1] if i + 1 < len(words) else ""
        if word == "last" and following in TIME_NOUNS and (i == 0 or words[i - 1] not in _SPAN_TO_NOW):
            return i
        if word == "ago" and i > 0:
            return i
        if word == "in" and (following in _MONTHS or _year(following) or _school_year(words[i + 1 : i + 3])):
            return i  # "in March my partner booked us on X", "in 2019", "in first year"
        if word in _THROUGH_A_YEAR and _year(following):
            return i  # "I spent all of 2016 on X", "throughout 2019"
        if word in ("in", "at") and (following in _SCHOOLING or former_setting(words[i + 1 : i + 3])):
            return i  # "in undergrad I wrote everything in X", "at my old job we were using X"
        if word == "back" and (following in _THEN or (following in _BACK_AT and i == 0)):
            return i  # "back when ...", "back at my first job" (not "came back at noon")
        if word in ("when", "before") and following in _SUBJECTS and past_tense(words[i + 2 : i + 3]):
            return i  # "when I was a teenager", "before I was using X"
        if word == "before" and i == 0 and following in _DETERMINERS and not _SUBJECTS.isdisjoint(words[2:6]):
            return i  # "before the merger we logged ... in X": an opening phrase, no comma

        if word == "before" and i == len(words) - 1 and i > 0:
            return i  # "I was working in Oracle before": a closing "before" dates the clause
        if word == "until" and i > 0:
            return i  # "we'd been using Mint for years until it shut down"
    return None


def _year(word: str) -> bool:
    """Whether a word is a year of the calendar ("2019")."""
    return len(word) == 4 and word.isdigit() and word[:2] in ("19", "20")


def _school_year(words: list[str]) -> bool:
    """ "first year", "sixth form": a year of one's schooling, gone by."""
    return len(words) == 2 and words[0] in _ORDINALS and words[1] in ("year", "form", "grade")


def former_setting(words: list[str]) -> bool:
    """ "my old job", "our previous flat": a former setting of the speaker's."""
    return len(words) == 2 and words[0] in ("my", "our") and words[1] in ("old", "previous", "former", "last")


def _main_verb(words: list[str]) -> int | None:
    """The index of the word after the clause's first subject pronoun (past adverbs)."""
    for i, word in enumerate(words[:-1]):
        if word in _SUBJECTS:
            k = i + 1
            while k < len(words) - 1 and words[k] in _ADVERBS:
                k += 1
            return k
    return None


def sets_the_past(words: list[str]) -> bool:
    """Whether a sentence's opening phrase, with no verb of its own, dates what follows
    in the past: "Before the merger, ...", "Back at my first job, ...", "Before, ..."."""
    if words in _FORMER_ADVERBS:
        return True  # "Before, I was using X, but now ..."
    opening = len(words) >= 2 and words[0] in ("before", "back") and words[1] in _OPENING_PHRASE
    return opening and len(words) <= 5 and not past_tense(words) and not _PRESENT_AUXILIARIES & set(words)


_FORMER_ADVERBS: Final = [opener.split() for opener in _WORDS["FORMER_OPENERS"]]


def narrated_past(words: list[str]) -> bool:
    """Whether a clause goes on with a story the sentence has dated in the past ("...
    last year, and Wanjiru wrote them in X"): a past main verb, and nothing of now."""
    main = _main_verb(words)
    past = past_tense(words) if main is None else past_tense(words[main - 1 : main + 2])
    now = _PRESENT_AUXILIARIES & set(words)  # "meds are tracked in X": a present passive
    return past and not now and not any(w in _PRESENT or w in _PERFECT or w in _CHANGES for w in words)


def still_so(words: list[str]) -> bool:
    """Whether a clause says that what the one before it told holds now ("which I
    still do", "and I still use it", "and now we do", "which I already use")."""
    if "still" in words:
        return any(w in _BACK_REFERENCES for w in words)
    again = any(w in _DONE_AGAIN for w in words) or ("which" in words and not _USE_OR_DO.isdisjoint(words))
    return not _HOLDING.isdisjoint(words) and again  # not "..., which I now regret"


_BACK_REFERENCES: Final = word_set("it them do does which there am are is")
_HOLDING: Final = word_set("already now")
_DONE_AGAIN: Final = _BACK_REFERENCES - {"there", "am", "are", "is", "which"}  # not "but now I am doing ..."
_PRESENT_AUXILIARIES: Final = word_set("is are am 's 're do does")
_USE_OR_DO: Final = word_set("use uses using do does")  # "which I already use", "which we now do"


def past_tense(words: list[str]) -> bool:
    """Whether a verb of the clause is in a past form: "was", "booked", "we'd been"."""
    for i, word in enumerate(words):
        if word in PAST_FORMS or (word.endswith("ed") and not word.endswith("eed") and len(word) > 3):
            return True
        if word.endswith("'d") and i + 1 < len(words) and participle(words[i + 1]):
            return True
    return False
