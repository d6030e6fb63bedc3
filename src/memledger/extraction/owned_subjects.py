"""Clauses whose subject is a thing of the speaker's: "my invoices go out through
Tallyfin", "our photos live on Ente". The speaker uses the instrument such a clause
names; "my partner handles it in X" is someone else's doing. Pure."""

from __future__ import annotations

from collections.abc import Container
from typing import Final

from memledger.extraction import gazetteer as gz
from memledger.extraction import lexicon, name_guess
from memledger.extraction.patterns import BULLETS, PEOPLE_NOUNS, TEAM_NOUNS, VERB_PARTICLES, word_set
from memledger.extraction.triggers import JOB_TITLES, JOBS, POSSESSIVE_USER, SERVING_PLACES, finite_form

_WANTING: Final = frozenset(lexicon.sections("frame_words.txt")["WANTING"])
_OPENERS: Final = word_set(", ; : and - \u2013 \u2014") | BULLETS
_ADVERBS: Final = word_set("all still also always now mostly mainly usually just")
_AFTER_NAME: Final = word_set("every each now too again since until because so when while then which that who")
_ORIGINS: Final = word_set("came comes come started starts began begins arrived arrives shipped ships")
_PEOPLE_ENDINGS: Final = ("man", "men", "woman", "women", "person", "people")
_DOING: Final = word_set("does did has had is was")
_NOT_VERBS: Final = word_set("the a an of to for and or but with from by at in on as")


def owned_subject(words: list[str], lows: list[str], prep: int, named_end: int, names: Container[int]) -> bool:
    """Whether the clause before the preposition at ``prep`` reads "my/our <noun> <verb>
    [particle]" from its start: a thing of the speaker's does it with the name after the
    preposition (ending at ``named_end``). Not when that name only modifies a noun
    ("sleeps on the Cozzo bed"), the verb tells where the thing came from ("my laptop
    came with Windows"), the clause wants rather than does ("my landlord wants rent via
    X") or a name (a start in ``names``) is the subject ("our Tidewell pipelines")."""
    if _modifies(words, lows, named_end):
        return False
    if lows[prep] == "with" and lows[prep - 1] in _ORIGINS:
        return False
    k = prep - 1
    if k >= 0 and lows[k] in VERB_PARTICLES:
        k -= 1
    while k >= 0 and lows[k] in _ADVERBS:
        k -= 1
    if k < 2 or not lows[k].isalpha() or lows[k] in _NOT_VERBS:
        return False  # k: the verb; a noun or two and "my"/"our" before it
    for owner in (k - 2, k - 3):
        if owner < 0 or lows[owner] not in POSSESSIVE_USER:
            continue
        nouns = lows[owner + 1 : k]
        opens = owner == 0 or lows[owner - 1] in _OPENERS
        plain = _WANTING.isdisjoint(lows[owner:prep]) and not any(i in names for i in range(owner, prep))
        # "my gym logs classes in X", "my dentist does all in X"; not "my uni email goes", "my uni notes live"
        second = nouns[1] if len(nouns) > 1 else ""
        verb = not second or second in _DOING or (finite_form(second) and lows[k].endswith("s"))
        place = nouns[0] in SERVING_PLACES and verb
        served = lows[owner] == "my" and place  # "my gym logs classes in X": the gym's doing
        return opens and plain and not served and all(n.isalpha() and not someone(n) for n in nouns)
    return False


def _modifies(words: list[str], lows: list[str], end: int) -> bool:
    """Whether the name ending at ``end`` modifies a lower-case noun after it."""
    if end >= len(words) or not words[end].isalpha() or not words[end].islower():
        return False
    return lows[end] not in _NOT_VERBS and lows[end] not in _AFTER_NAME and not lows[end].endswith("ly")


def someone(noun: str) -> bool:
    """Whether a noun names people ("partner", "kids", "handyman", "salespeople"): their
    doing is not the speaker's."""
    return any(f in gz.ROLES or f in JOBS for f in _singular_too(noun)) or people_by_ending(noun)


def names_people(noun: str) -> bool:
    """Whether a noun can only name people ("the doctors", "the other teams", "all my
    family", "the security folks"), where ``someone`` also takes words of work ("jobs")."""
    forms = _singular_too(noun)
    listed = any(f in gz.ROLES or f in JOB_TITLES or f in TEAM_NOUNS or f in PEOPLE_NOUNS for f in forms)
    return listed or people_by_ending(noun)


def _singular_too(noun: str) -> tuple[str, ...]:
    """A noun, and its singular if it may be a plural in "-s" ("nurses": "nurse")."""
    return (noun, noun[:-1]) if noun.endswith("s") else (noun,)


def people_by_ending(noun: str) -> bool:
    """Whether a noun names people by its ending ("handyman", "salespeople", "firemen"),
    a plural only of a word in -man ("regimen", "specimen" are not)."""
    if len(noun) <= 4 or not noun.endswith(_PEOPLE_ENDINGS):
        return False
    return not noun.endswith("men") or name_guess.english(noun[:-3] + "man")
