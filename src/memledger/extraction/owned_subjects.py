"""Clauses whose subject is a thing of the speaker's: "my invoices go out through
Tallyfin", "our photos live on Ente". The speaker uses the instrument such a clause
names; "my partner handles it in X" is someone else's doing. Pure."""

from __future__ import annotations

from typing import Final

from memledger.extraction import gazetteer as gz
from memledger.extraction.patterns import BULLETS, word_set
from memledger.extraction.triggers import JOBS, POSSESSIVE_USER

_PARTICLES: Final = word_set("out up off over back down away")
_OPENERS: Final = word_set(", ; : and - \u2013 \u2014") | BULLETS
_ADVERBS: Final = word_set("all still also always now mostly mainly usually just")
_AFTER_NAME: Final = word_set("every each now too again since until because so when while then which that who")
_ORIGINS: Final = word_set("came comes come started starts began begins arrived arrives shipped ships")
_NOT_VERBS: Final = word_set("the a an of to for and or but with from by at in on as")


def owned_subject(words: list[str], lows: list[str], prep: int, named_end: int) -> int | None:
    """The verb of the clause before the preposition at ``prep`` when the clause reads
    "my/our <noun> <verb> [particle]" from its start: a thing of the speaker's does it
    with the name after the preposition (ending at ``named_end``), unless that name only
    modifies a noun ("sleeps on the Cozzo bed") or the verb tells where the thing came
    from ("my laptop came with Windows")."""
    if _modifies(words, lows, named_end):
        return None
    if lows[prep] == "with" and lows[prep - 1] in _ORIGINS:
        return None
    k = prep - 1
    if k >= 0 and lows[k] in _PARTICLES:
        k -= 1
    while k >= 0 and lows[k] in _ADVERBS:
        k -= 1
    if k < 2 or not lows[k].isalpha() or lows[k] in _NOT_VERBS:
        return None  # k: the verb; a noun or two and "my"/"our" before it
    for owner in (k - 2, k - 3):
        if owner < 0 or lows[owner] not in POSSESSIVE_USER:
            continue
        nouns = lows[owner + 1 : k]
        opens = owner == 0 or lows[owner - 1] in _OPENERS
        return k if opens and all(n.isalpha() and not _someone(n) for n in nouns) else None
    return None


def _modifies(words: list[str], lows: list[str], end: int) -> bool:
    """Whether the name ending at ``end`` modifies a lower-case noun after it."""
    if end >= len(words) or not words[end].isalpha() or not words[end].islower():
        return False
    return lows[end] not in _NOT_VERBS and lows[end] not in _AFTER_NAME and not lows[end].endswith("ly")


def _someone(noun: str) -> bool:
    """Whether a noun names people ("partner", "kids"): their doing is not the speaker's."""
    forms = (noun, noun[:-1]) if noun.endswith("s") else (noun,)
    return any(f in gz.ROLES or f in JOBS for f in forms)
