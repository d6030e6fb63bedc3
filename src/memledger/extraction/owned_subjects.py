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
_NOT_VERBS: Final = word_set("the a an of to for and or but with from by at in on as")


def owned_subject(lows: list[str], prep: int) -> int | None:
    """The verb of the clause before the preposition at ``prep`` when the clause reads
    "my/our <noun> <verb> [particle]" from its start: a thing of the speaker's does it."""
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


def _someone(noun: str) -> bool:
    """Whether a noun names people ("partner", "kids"): their doing is not the speaker's."""
    forms = (noun, noun[:-1]) if noun.endswith("s") else (noun,)
    return any(f in gz.ROLES or f in JOBS for f in forms)
