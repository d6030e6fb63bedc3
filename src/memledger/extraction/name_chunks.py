"""Where a capitalised name ends: across "&" in a firm's name ("Calloway & Finch"), name
particles ("Casa do Largo", "Van der Berg"), a possessive inside a business's name
("St Brendan's Hospital"), a product's model number ("Garmin Venu 3") and the initials
of its kind ("Tideshard DB"); at a word that is no name. Pure."""

from __future__ import annotations

from typing import Final

from memledger.extraction import gazetteer as gz
from memledger.extraction import name_guess
from memledger.extraction.name_finder import NameFinder
from memledger.extraction.patterns import (
    HONORIFICS,
    NAME_PARTICLES,
    PERSON_PREV,
    PRODUCT_KINDS,
    PROJECT_NOUNS,
    word_set,
)
from memledger.extraction.triggers import PREPOSITIONS


def chunk_end(f: NameFinder, i: int) -> int:
    """The end (exclusive) of the capitalised name that opens at ``i``, at most four words
    besides an "&"."""
    end = i + 1
    while end < len(f.words) and end - i - f.words[i:end].count("&") < 4 and not f.taken[end]:
        word, low = f.words[end], f.lows[end]
        if word == "&" and end + 1 < len(f.words) and f.words[end + 1][:1].isupper():
            if end - i == 1 and given_name(f.lows[i]) and given_name(f.lows[end + 1]):
                break  # "Harpreet & Iker": two people
            end += 1  # "Calloway & Finch": one firm's name
            continue
        particles = _particles(f, end, i)
        if particles:
            end += particles + 1  # "Casa do Largo", "Van der Berg": particles inside one name
            continue
        if low == "'s" and _possessive_inside(f, end):
            end += 2  # "St Brendan's Infirmary", "Marisol's Cantina": one name
            continue
        plural_owner = word == "'" and f.lows[end - 1].endswith("s") and end + 1 < len(f.words)
        if plural_owner and f.lows[end + 1] in gz.ORG_SUFFIXES and f.words[end + 1][:1].isupper():
            end += 2  # "Brookvale Residents' Association": one name; not "Chris' Lenovo"
            continue
        if not word[0].isupper():
            break
        inside = closing_noun(low) or _product_initials(f, end, i) or _name_part(f, i, end) or _titled_work(f, end)
        if low in gz.NOT_NAMES and not inside:
            break
        end += 1
    return end + 1 if model_number(f, end, i) or _dimension_code(f, end) else end


# Words after a number that make it a count, a size, a price or a time, not a model's
# number ("3 hours", "a month", "3 or 4").
_COUNTED: Final = word_set(
    "hour day week month year minute second time am pm km kg mi min mm cm gb tb mb gig percent % : x "
    "person people seat user more or a an per o'clock ever me"
)
# Verbs of money before a name: the number after it is an amount ("I owe Lena Fischer 20").
_PAYING: Final = word_set("owe owes owed pay pays paid cost costs spent gave give lent")


def model_number(f: NameFinder, at: int, start: int) -> bool:
    """Whether the bare number of one or two digits at ``at`` ends the name of two words or
    more that opens at ``start``, as a product's model number does ("Garmin Venu 3",
    "Bosch Serie 6"); not after a person's or a firm's name, nor a count, a size, an
    amount or a time ("... 3 times", "... 20 min")."""
    if at >= len(f.words) or f.taken[at] or at - start < 2 or not f.words[at].isdigit() or len(f.words[at]) > 2:
        return False
    if given_name(f.lows[start]) or f.lows[at - 1] in gz.ORG_SUFFIXES or f.prev(start) in _PAYING:
        return False
    following = f.lows[at + 1] if at + 1 < len(f.lows) else ""
    plural = following.isalpha() and following.endswith("s") and not following.endswith("ss")
    return not plural and following not in _COUNTED and not following.isdigit()


def _dimension_code(f: NameFinder, at: int) -> bool:
    """Whether the token at ``at`` counts dimensions closing a product's name ("Planner 5D",
    "Sweet Home 3D"); not a flat's number ("Flat 3B") nor a time ("3PM")."""
    word = f.words[at] if at < len(f.words) and not f.taken[at] else ""
    return len(word) == 2 and word[0].isdigit() and word[1] == "D"


def _product_initials(f: NameFinder, at: int, start: int) -> bool:
    """Whether the capitals at ``at`` close a product's name as its kind ("Tideshard DB",
    "Woodpecker CI", "Pipit UI"), after a name that is no person's ("Mr Okafor", "my
    manager Rangi", "Tell Brennan")."""
    word, before = f.words[at], f.prev(start)
    kind = word.isupper() and f.lows[at] in PRODUCT_KINDS
    cued = before in HONORIFICS or before in gz.ROLES or PERSON_PREV & {before, f.lows[start]}  # "Tell Brennan CRM"
    person = given_name(f.lows[start]) or cued
    return kind and not person


def _possessive_inside(f: NameFinder, at: int) -> bool:
    """Whether the "'s" at ``at`` joins a name to a capitalised noun for a business or an
    institution after it, as they are named ("St Brendan's Infirmary"), not to a name of
    its own ("Ana's Notion") or a piece of work ("Priya's Migration")."""
    after = at + 1
    if after >= len(f.words) or f.taken[after] or not f.words[after][:1].isupper():
        return False
    return f.lows[after] in gz.ORG_SUFFIXES  # "Tomás's Bakery"; not "Keoni's Scratch", "Priya's Migration"


def _particles(f: NameFinder, at: int, start: int) -> int:
    """How many lower-case name particles at ``at`` lead on to a capitalised word of the
    same name (at most two: "de la", "van der"), in the name opening at ``start``; "of"
    none after a person's name ("Radka of Brantwood", "Zainab Al-Khatib of Tallowmere
    Bank" are two names each)."""
    n = 0
    while n < 2 and at + n < len(f.words) and f.lows[at + n] in NAME_PARTICLES and f.words[at + n].islower():
        n += 1
    after = at + n
    if not n or after >= len(f.words) or f.taken[after] or not f.words[after][:1].isupper():
        return 0
    titled = f.prev(start) in HONORIFICS or (f.prev(start) == "." and f.prev(start, 2) in HONORIFICS)  # "Ms. X of Y"
    person_before = given_name(f.lows[at - 1] if at - start < 2 else f.lows[start]) or _role_named(f, start) or titled
    if f.lows[after] in gz.NOT_NAMES or (f.lows[at] == "of" and person_before):
        return 0
    return n


def _role_named(f: NameFinder, start: int) -> bool:
    """Whether the name opening at ``start`` follows a person's role, so names a person
    ("my accountant, Venkatesh Raghunathan of ...", "our lawyer Ines Rocha of ...")."""
    before = f.prev(start, 2) if f.prev(start) == "," else f.prev(start)
    plain = name_guess.ordinary(f.words[start])  # "our client, Bank of Ireland": an institution's name
    return (before in gz.ROLES or before in HONORIFICS) and not plain


def _name_part(f: NameFinder, start: int, at: int) -> bool:
    """Whether a calendar-like word at ``at`` ("Thu", "Sun") closes a name of two words or
    more that is its clause's subject ("Dang Thi Thu is ..."): a day would not stand there."""
    following = f.lows[at + 1] if at + 1 < len(f.lows) else ""
    subject = f.prev(start) not in PREPOSITIONS  # not "Dinner with Ana Lopez Sat was great"
    return at - start >= 2 and subject and len(f.lows[at]) > 2 and following in _FINITE_AFTER_SUBJECT  # not "I"


_FINITE_AFTER_SUBJECT: Final = word_set("is was has had will can does did")  # not "have": "X I'd have"


def _titled_work(f: NameFinder, at: int) -> bool:
    """Whether the capitalised word at ``at`` is inside a title-cased work's name that a
    lower-case noun for a piece of work closes ("the Sepsis Quick Response project")."""
    k = at + 1
    while k < len(f.words) and k - at < 3 and f.words[k][:1].isupper() and f.lows[k] not in gz.NOT_NAMES:
        k += 1
    return k > at + 1 and k < len(f.words) and f.words[k].islower() and f.lows[k] in PROJECT_NOUNS


def given_name(low: str) -> bool:
    """Whether a word is a given name somewhere in the world."""
    return gz.is_given_name(low) or name_guess.is_world_name(low)


def closing_noun(low: str) -> bool:
    """Whether a word may close a firm's or a work's name ("Labs", "Bakery", "service")."""
    return low in gz.ORG_SUFFIXES or low in PROJECT_NOUNS
