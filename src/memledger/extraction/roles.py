"""Roles that relate a named person to the speaker: "my manager Dave", "Ana, my
sister", "my old school friends". Pure.

A role the lists know types the name beside it. Said of a name already known to be a
person's, any noun phrase the speaker owns is a role ("Ebru is my financial planner",
"our landlord Cengiz"): the grammar carries it, not the noun."""

from __future__ import annotations

from collections.abc import Mapping

from memledger.extraction import gazetteer as gz
from memledger.extraction import lexicon
from memledger.extraction.appositions import apposition_close
from memledger.extraction.patterns import FORMER_WORDS, HONORIFICS, POSSESSIVES, PRODUCT_NOUNS, ROLE_ADJECTIVES
from memledger.extraction.triggers import DETERMINERS, PREPOSITIONS, SUBJECT_PRONOUNS, finite_form

# Nouns that put a role at work: "my business partner", "my lab partner", "my work wife".
_AT_WORK = frozenset(["business", "work", "lab", "research", "project", "study", "office", "team"])


def role_words(lows: list[str], j: int) -> tuple[str | None, int]:
    """The role ending at token ``j`` ("manager", "tech lead") and where it starts."""
    if j >= len(lows):
        return None, j
    last = lows[j][:-1] if lows[j].endswith("s") and lows[j] not in gz.ROLES else lows[j]  # "my lab partners"
    if j >= 1 and (f"{lows[j - 1]} {last}" in gz.ROLES or (lows[j - 1] in _AT_WORK and last in gz.ROLES)):
        return f"{lows[j - 1]} {last}", j - 1
    if j >= 0 and last in gz.ROLES:
        return last, j  # "my cousins Ana and Bo": the singular
    return None, j


def relation_of(role: str, *, ours: bool = False) -> str:
    """The speaker's relation to a person in ``role``: a colleague's role is work, any
    other (kin, friends, a teacher, a landlord) acquaintance; a service role the speaker
    shares with others (``ours``: "our accountant") is a colleague's."""
    work = role in gz.WORK_ROLES or role.rstrip("s") in gz.WORK_ROLES or role.startswith("co-")
    shared = ours and role in gz.SERVICE_ROLES
    return "WORKS_WITH" if work or shared or role.split(maxsplit=1)[0] in _AT_WORK else "KNOWS"


def said_as_ours(lows: list[str], start: int) -> bool:
    """Whether the role before the name at ``start`` is introduced by "our" ("our
    accountant, Mrs. Okafor")."""
    _, role_start = _role_before_name(lows, start)
    return possessive_of(lows, role_start - 1) == "our"


def owned_role(words: list[str], j: int) -> bool:
    """Whether "my"/"our" opens the role ending before ``j + 1``, past its adjectives."""
    while j >= 0 and words[j] in ROLE_ADJECTIVES:
        j -= 1
    return j >= 0 and words[j] in POSSESSIVES


def owned_by_speaker(lows: list[str], j: int) -> bool:
    """Whether "my"/"our" owns the noun phrase ending at ``j``, past its adjectives and
    up to two plain modifiers ("my travel buddy", "our old pottery teacher")."""
    return possessive_of(lows, j) is not None


def possessive_of(lows: list[str], j: int) -> str | None:
    """The "my" or "our" that owns the noun phrase ending at ``j``, if one does."""
    modifiers = 0
    while j >= 0 and (lows[j] in ROLE_ADJECTIVES or (_plain(lows[j]) and modifiers < 2)):
        modifiers += lows[j] not in ROLE_ADJECTIVES
        j -= 1
    return lows[j] if j >= 0 and lows[j] in POSSESSIVES else None


def _plain(low: str) -> bool:
    """A lower-case word that can be part of a role's noun phrase ("co-host" too)."""
    return low.replace("-", "").isalpha() and low not in POSSESSIVES and low not in _NOT_ROLE


def _head_noun(low: str) -> bool:
    """Whether a word can close a role's noun phrase: not a participle ("the plumber our
    neighbour recommended, ...")."""
    return _plain(low) and not low.endswith(("ed", "ing"))


# Nouns for things, never a person's role: "our system Skladnik", "my meditation app".
_THING_NOUNS = PRODUCT_NOUNS | frozenset(["system", "software", "tool", "platform", "service", "website", "bot"])
# Nouns that own a name without being a role of its person ("my app Lantern").
_NOT_ROLE_NOUNS = frozenset(lexicon.sections("frame_words.txt")["NOT_ROLE_NOUNS"])
# Words that end a role's noun phrase or cannot be in one.
_NOT_ROLE = frozenset(
    [
        "a",
        "an",
        "the",
        "is",
        "are",
        "was",
        "were",
        "and",
        "or",
        "but",
        "who",
        "which",
        "that",
        "at",
        "from",
        "for",
        "in",
        "on",
        "of",
        "with",
        "to",
        "by",
        "he",
        "she",
        "they",
        "it",
        "i",
        "we",
        "you",
        "me",
        "him",
        "her",
        "them",
        "his",
        "their",
        "its",
        "this",
        "these",
        "those",
    ]
)
_ROLE_ENDS = frozenset(
    [",", ".", ";", ":", "!", "?", ")", "(", "-", "and", "who", "at", "from", "for", "in", "on", "with"]
)


def any_role_before(lows: list[str], start: int, places: Mapping[int, int] | None = None) -> str | None:
    """The speaker's role for the name at ``start``, any noun phrase: "our landlord Cengiz",
    "my deputy is Dr. Joaquín", past where the role is held ("my doctor at X is ...":
    ``places`` maps the end of each organization's name to its start)."""
    j = start - 1
    while j >= 0 and (lows[j] in HONORIFICS or lows[j] in (",", ".")):
        j -= 1
    if j >= 0 and lows[j] in ("is", "was"):
        j -= 1
    if places and j + 1 in places:
        k = places[j + 1] - 1
        if k >= 1 and lows[k] == "the":
            k -= 1
        if k >= 1 and lows[k] in ("at", "from"):
            j = k - 1
    if j < 0 or not _head_noun(lows[j]) or lows[j] in _NOT_ROLE_NOUNS or lows[j] in ROLE_ADJECTIVES:
        return None
    if lows[j] in _THING_NOUNS:
        return None  # "our system Skladnik", "my app Lantern": a thing's name
    return lows[j] if owned_by_speaker(lows, j - 1) else None


def any_role_after(words: list[str], lows: list[str], end: int) -> str | None:
    """The speaker's role said of the name ending at ``end``, any noun phrase closed by
    punctuation or a preposition: "Rasa, my pottery teacher, ...", "Ebru is my financial
    planner at ..."."""
    j = end
    if j < len(lows) and lows[j] in (",", "is", "was", "("):
        j += 1
    if j >= len(lows) or lows[j] not in POSSESSIVES:
        return None
    j += 1
    if j < len(lows) and lows[j] in _NOT_ROLE_NOUNS:
        return None  # "Kale is my favourite vegetable": a liking, no role
    while j < len(lows) and lows[j] in ROLE_ADJECTIVES:
        j += 1
    k = j
    while k < len(lows) and k - j < 3 and _plain(lows[k]) and not words[k][:1].isupper():
        k += 1
    if k == j or (k < len(lows) and lows[k] not in _ROLE_ENDS) or not _head_noun(lows[k - 1]):
        return None
    if lows[k - 1] in _THING_NOUNS:
        return None  # "Aura is my meditation app": a thing
    return " ".join(lows[max(j, k - 2) : k])


def _past_apposition(lows: list[str], end: int) -> int:
    """Where the words after the name ending at ``end`` go on past an apposition to "is my
    ..." ("Ikaika, the SRE lead at Glimmerhook, is my new manager"), or ``end`` itself; not
    past a former one nor to "was"."""
    after = apposition_close(lows, end) if lows[end + 1 : end + 2] in (["the"], ["a"], ["an"]) else None
    if after is None or after - end > 10 or lows[after] != "is" or not FORMER_WORDS.isdisjoint(lows[end:after]):
        return end  # not "Dana, the recruiter, was my manager", "Kiri, the former head, is ..."
    return after


def _past_workplace(words: list[str], lows: list[str], end: int) -> int:
    """Where "is" stands after the workplace that follows the name ending at ``end`` ("Dr.
    Ruiz at Larchfield Practice is my GP"), or ``end`` itself."""
    if lows[end : end + 1] not in (["at"], ["from"]):
        return end
    k = end + 1
    while k < len(words) and k - end <= 5 and (words[k][:1].isupper() or lows[k] in ("&", "of")):
        k += 1
    return k if k > end + 1 and lows[k : k + 1] == ["is"] else end


def role_before(lows: list[str], start: int) -> tuple[str | None, bool]:
    """The role named right before a name ("my manager Dave", "Tutor: Dave"; "Dr." and
    commas skipped), and whether it is the speaker's."""
    role, role_start = _role_before_name(lows, start)
    if role is None:
        return None, False
    return role, owned_by_speaker(lows, role_start - 1)


def _role_before_name(lows: list[str], start: int) -> tuple[str | None, int]:
    """The role ending right before the name at ``start`` ("Dr." and commas skipped), and
    where it starts."""
    j = start - 1
    while j >= 0 and (lows[j] in HONORIFICS or lows[j] in (",", ".", ":", "=") or _title_after_comma(lows, j)):
        j -= 1
    return role_words(lows, j)


def _title_after_comma(lows: list[str], j: int) -> bool:
    """Whether a role word at ``j`` opens an apposition as the name's title ("my
    supervisor, Professor Njeri Kamau"): the role before the comma is the speaker's."""
    return j >= 2 and lows[j - 1] == "," and lows[j] in gz.ROLES and role_words(lows, j - 2)[0] is not None


def opens_next_clause(lows: list[str], start: int, end: int) -> bool:
    """ "at Otago my supervisor was ...", "the Yoto Player my sister bought", "in Agworld, my
    brother does ...": a name after a preposition or an article, met by "my <role>" and a
    verb, is followed by the next clause (or a relative one); the role is not the name's."""
    before = lows[start - 1] if start else ""
    if start >= 2 and before.replace("-", "").isalpha() and lows[start - 2] in DETERMINERS:
        before = lows[start - 2]  # "the old Kodak EasyShare my dad had"
    governed = before in PREPOSITIONS or before in DETERMINERS
    if governed and lows[end : end + 1] == [","]:
        end += 1  # "logging every spray in Agworld, my brother does the field entries"
    return governed and end < len(lows) and lows[end] in POSSESSIVES and _verb_follows_role(lows, end + 1)


def _verb_follows_role(lows: list[str], j: int) -> bool:
    """Whether a finite verb comes right after the role phrase at ``j`` ("my sister bought",
    "my supervisor was"), not punctuation or a new subject ("to Kamala my neighbour.")."""
    for k in range(j + 1, min(j + 4, len(lows))):
        low = lows[k]
        if not low.isalpha() or low in SUBJECT_PRONOUNS:
            return False
        if low in _FINITE or finite_form(low):
            return True
    return False


_FINITE = frozenset(("is", "was", "were", "has", "had", "does", "did"))


def role_after(words: list[str], lows: list[str], end: int) -> tuple[str | None, bool]:
    """The role said of a name right after it ("Ana, my sister", "Bo is our CTO"), and
    whether it is the speaker's; past an apposition ("Ikaika, the SRE lead at X, is my
    manager")."""
    if (after := _past_apposition(lows, end)) != end or (after := _past_workplace(words, lows, end)) != end:
        role, mine = role_after(words, lows, after)
        if role is not None and mine:
            return role, mine
    j = end
    link = lows[j] if j < len(lows) and lows[j] in (",", "is", "are", "was", "-", "(") else None
    j += link is not None
    mine = j < len(lows) and lows[j] in POSSESSIVES
    if mine or (link and j < len(lows) and lows[j] in ("the", "a", "an")):
        j += 1  # "Ana, my sister"; "Wiremu Tane, the contractor": a role, not the speaker's
    elif link != "(":  # "Bolat (neighbour)"
        return None, False
    while j < len(lows) and lows[j] in ROLE_ADJECTIVES:
        j += 1
    for skip in range(3):  # past up to two modifiers: "my old school friends"
        k = j + skip
        if k >= len(lows) or (k > j and not (lows[k - 1].isalpha() and lows[k - 1] not in gz.NOT_NAMES)):
            break
        for width in (2, 1):
            phrase = " ".join(lows[k : k + width])
            if phrase in gz.ROLES or phrase.rstrip("s") in gz.ROLES:
                if not _role_ends_here(words, lows, k + width):
                    return None, False
                role = phrase.rstrip("s") if phrase not in gz.ROLES else phrase
                if k > j and lows[k - 1] in _AT_WORK and role in gz.FAMILIAR_ROLES:
                    role = f"{lows[k - 1]} {role}"  # "Kofi, my business partner": a partner at work
                if link == "(" and not mine and role in gz.WORK_ROLES:
                    return None, False  # "Tollgate (lead)": a part taken in a piece of work
                return role, mine
    return None, False


def _role_ends_here(words: list[str], lows: list[str], after: int) -> bool:
    """Whether a role word closes the phrase: not "my daughter's teacher" (the daughter's)
    nor "Tallyfin, my partner Graciela" (Graciela's: a role names the name that follows)."""
    if after >= len(words):
        return True
    return lows[after] not in ("'s", "'") and not words[after][:1].isupper()  # "a kids' savings app": the app's
