"""Capitalised or oddly shaped words typed by the words around them: a role beside a
name, "project X", "X Labs", "at X", CamelCase, "X said". Pure. What no cue explains
is left to its slot (``slots``) and then its spelling (``name_guess``)."""

from __future__ import annotations

from typing import Final

from memledger.extraction import gazetteer as gz
from memledger.extraction import name_guess
from memledger.extraction.clefts import described_clause, favourite_said, it_is_after
from memledger.extraction.name_chunks import chunk_end, given_name
from memledger.extraction.name_finder import NameFinder
from memledger.extraction.noun_types import NAMING_BE, work_described
from memledger.extraction.patterns import (
    APP_NOUNS,
    BUILT,
    CALLED_ORG,
    CALLED_PROJECT,
    CAME,
    CLIENT_NOUNS,
    COMMON_GIVEN,
    HONORIFICS,
    LOOKING,
    ORG_PREV,
    PERSON_NEXT,
    PERSON_PREV,
    POSSESSIVES,
    PRODUCT_NOUNS,
    PROJECT_CUES,
    PROJECT_NOUNS,
    PROJECT_VERBS,
    ROLE_ADJECTIVES,
    SWITCH_VERBS,
    TEAM_NOUNS,
    TO_PERSON,
    TOOL_PREV,
    WORK_FOR,
    WORKED,
    Mention,
    span_text,
    word_set,
)
from memledger.extraction.roles import opens_next_clause, role_after, role_before
from memledger.extraction.shapes import common_word, name_like, odd_shape
from memledger.extraction.triggers import (
    AUXILIARIES,
    BE_FORMS,
    BOUNDARIES,
    PREPOSITIONS,
    find_triggers,
    finite_form,
    is_filler,
    third_person,
)


def person_cue(f: NameFinder, start: int, end: int) -> bool:
    before = f.prev(start)
    if before == "." and f.prev(start, 2) in HONORIFICS:
        before = f.prev(start, 2)  # "Dr. Oyelaran"
    if before in ("called", "named") and _called_thing(f, start):
        return False  # "a PDF generator called Quillpress": a thing's name
    return (
        before in PERSON_PREV
        or before in gz.ROLES
        or before in HONORIFICS
        or f.next(end) in PERSON_NEXT
        or (f.next(end) == "and" and f.next(end, 1) == "i" and not _done_to(f, start, end))
        or f.next(end) in ("she", "he", "she's", "he's")
        or (before == "with" and f.prev(start, 2) in ("lunch", "dinner", "coffee", "drinks"))
    )


def _done_to(f: NameFinder, start: int, end: int) -> bool:
    """Whether the name before "and I" is a thing the clause before does something to or
    with ("writing CoffeeScript and I", "than Canon and I", "in Monarch Money and I"),
    not the speaker's co-subject ("for River and I")."""
    before = f.prev(start)
    gerund = len(before) > 4 and before.endswith("ing") and before.isalpha() and before not in _ING_NOUNS
    product = end - start > 1 and not given_name(f.lows[start])  # "a Withings BPM Connect and I"
    return before in _USING or before in _THING_MARKERS or gerund or product


def _called_thing(f: NameFinder, start: int) -> bool:
    """Whether "called"/"named" before ``start`` ends a noun phrase for a thing ("a PDF
    generator called X"), not for someone ("a friend of mine called X", "someone at work
    called X") or a group; a given name is never a thing's."""
    if given_name(f.lows[start]) or start < 2 or not f.words[start - 2].islower():
        return False
    for back in range(2, 8):
        word = f.prev(start, back)
        if word in gz.ROLES or word in _PEOPLE or word in gz.ORG_SUFFIXES or word in TEAM_NOUNS:
            return False
        if word in _PHRASE_OPENERS or not word.isalpha():
            break
    return True


# Verbs whose object a name before "and I" is: "writing CoffeeScript and I ...".
_USING: Final = word_set("use uses used learn learns learned learnt install installed write wrote written")
_THING_MARKERS: Final = word_set("a an the than app")
_ING_NOUNS: Final = word_set("during morning evening spring something nothing anything everything meeting wedding")
_PHRASE_OPENERS: Final = word_set("a an the my our your his her their this that some")


_PEOPLE: Final = word_set(
    "guy guys man men woman women girl girls boy boys lady ladies person people bloke chap kid kids "
    "baby dog cat puppy kitten horse pony someone somebody one band group"
)


def org_cue(f: NameFinder, start: int, end: int) -> bool:
    before = f.prev(start)
    return (
        (before in ORG_PREV and f.prev(start, 2) not in LOOKING)
        or (before == "from" and f.prev(start, 2) in CAME)
        or (before == "for" and f.prev(start, 2) in WORK_FOR)
        or (before == "by" and f.prev(start, 2) == "acquired")
        or (before == "from" and start >= 2 and _person_ends(f, start - 1) and not f.next(end)[:1].isdigit())
        or (f.next(end) == "'s" and f.next(end, 1) in ("ceo", "cto", "office", "engineers"))
    )


def _person_ends(f: NameFinder, end: int) -> bool:
    """Whether a person's name ends right before token ``end`` ("Björn from ...",
    "Zainab Al-Khatib from ...": a capitalised run opening with a given name)."""
    if any(m.end == end and m.entity_type == "person" for m in f.found):
        return True
    first = end - 1
    while first > 0 and end - first < 3 and f.words[first - 1][:1].isupper() and not f.taken[first - 1]:
        first -= 1
    return not f.taken[end - 1] and (gz.is_given_name(f.lows[end - 1]) or given_name(f.lows[first]))


def find_capitalised(f: NameFinder) -> list[tuple[int, int]]:
    """Classify capitalised or oddly shaped words; return the spans left unexplained."""
    unknown: list[tuple[int, int]] = []
    i = 0
    while i < len(f.words):
        if not f.taken[i] and i + 1 < len(f.lows) and f.lows[i + 1] in PRODUCT_NOUNS and _named_app(f, i):
            f.add(Mention(f.words[i], "tool", 0.7, i, i + 1))  # "the Calm app": a product's name, whatever word
            i += 1
            continue
        word = f.words[i]
        if f.taken[i] or (word.islower() and "." not in word) or not name_like(word):
            i += 1
            continue
        plain = _plain_word(word)
        end = chunk_end(f, i) if plain or i in f.initial else 0
        if end:
            apart = _set_apart(f, i, end, plain=plain)
            if apart is not None:
                f.add(apart)
                i = end
                continue
            if plain:
                i += 1
                continue
        if _title(f, i):
            i += 1  # "Professor Mekdes Haile", "Chef Ayse": the name is the person's, without the title
            continue
        end = end or chunk_end(f, i)
        institution = f.lows[end - 1] in gz.ORG_SUFFIXES
        # "Orchard Crest Farm decided ...": a whole institution's name opens the sentence as its subject
        opening_name = institution and (name_guess.ordinary(f.words[i]) is False or _said_of(f, end))
        # "Tell Fatima", "Inshallah Tunde": a word before a given name; "Kaimana Ruatapu said" is one name
        word_first = name_guess.ordinary(f.words[i]) or gz.is_given_name(f.lows[end - 1])
        firm = "&" in f.words[i:end]  # "Pan & Pestle, our deli, ...": a firm's name, whatever its words
        if i in f.initial and end - i > 1 and word_first and not _known_word(f.lows[i]) and not (opening_name or firm):
            unknown.append((i, end))  # named only if its slot says so ("Hollow Pine is where ...")
            # "Tell Fatima": an imperative verb, capitalised because it opens the sentence;
            # but a span a verb follows is the subject, whole ("Juniper Sync relies on ...").
            i = end if _verb_follows(f, end) else i + 1
            continue
        mention = _classify(f, i, end)
        if mention is not None:
            f.add(mention)
        elif f.lows[i] not in gz.PLACES:
            unknown.append((i, end))
        i = end
    return unknown


def _named_app(f: NameFinder, i: int) -> bool:
    """Whether a capitalised word inside a sentence names the app after it ("the Calm
    app", "Strong app"), though it is an ordinary word."""
    word = f.words[i]
    if i in f.initial or f.prev(i) in POSSESSIVES or f.next(i, 1) not in PRODUCT_NOUNS:
        return False  # "our Lantern app": the speaker's project
    capitalised = len(word) > 2 and word[:1].isupper() and not word.isupper() and word.isalpha()
    return capitalised and name_guess.english(f.lows[i])


def _title(f: NameFinder, i: int) -> bool:
    """Whether the word at ``i`` is a role or honorific written as a title before a
    capitalised name."""
    following = f.words[i + 1] if i + 1 < len(f.words) else ""
    titled = f.lows[i] in gz.ROLES or f.lows[i] in HONORIFICS
    if not (titled and following[:1].isupper() and following.isalpha() and not f.taken[i + 1]):
        return False
    low = following.lower()
    honorific = f.lows[i] in HONORIFICS  # "Herr Dimitrov": a name follows a title, whatever it spells
    return honorific or given_name(low) or not name_guess.english(low)  # "Professor Mekdes", not "Student Services"


def _said_of(f: NameFinder, end: int) -> bool:
    """Whether a verb in the present or the past follows the token before ``end``."""
    low = f.next(end)
    if low == "'s":
        return False  # "Members of Lumenfold Software's board": a possessive
    return _verb_follows(f, end) or (f.words[end : end + 1] == [low] and low.endswith("ed") and len(low) > 4)


def _verb_follows(f: NameFinder, end: int) -> bool:
    """Whether the token at ``end`` reads as a finite verb: a form of "be"/"have" or a
    lower-case word in -s ("relies", "crashes")."""
    low, word = f.next(end), f.words[end] if end < len(f.words) else ""
    if low in ("is", "was", "are", "were", "has", "had", "'s"):
        return True
    return word.islower() and third_person(low)


def _plain_word(word: str) -> bool:
    """A word that is no name: a common one ("Mondays"), or a short common one written
    with capitals inside ("PhD", "MSc"; not "iPod", which opens in lower case)."""
    low = word.lower()
    abbreviation = len(word) <= 4 and word[0].isupper() and odd_shape(word) and name_guess.common(low)
    return common_word(low) or abbreviation


def _known_word(low: str) -> bool:
    known = gz.is_given_name(low) or low in gz.FIRST_WORDS or low in gz.ORG_SUFFIXES
    return known or name_guess.is_world_name(low)


def _classify(f: NameFinder, start: int, end: int) -> Mention | None:
    name = span_text(f.words[start:end])
    last = f.lows[end - 1]
    if "&" in f.words[start:end]:
        return Mention(name, "organization", 0.8, start, end)
    trade_field = last in gz.TRADE_NOUNS and name_guess.ordinary(f.words[start])  # "Digital Marketing"
    if end - start > 1 and last in gz.ORG_SUFFIXES and not trade_field:
        if f.next(end) in APP_NOUNS:
            return Mention(name, "tool", 0.85, start, end)  # "the Sanvia Health app": its app
        return Mention(name, "organization", 0.85, start, end)
    if end - start > 2 and f.lows[start] in _INSTITUTION_HEADS and f.lows[start + 1] == "of":
        return Mention(name, "organization", 0.85, start, end)  # "University of Otago"
    if end - start > 2 and any(low in _BODY_HEADS for low in f.lows[start + 1 : end - 1]):
        return Mention(name, "organization", 0.85, start, end)  # "Tramping Club Ōtautahi": a body, then its town
    used = f.prev(start) in TOOL_PREV  # "using Organic Maps": a thing used, whatever its last word
    titled = f.prev(start) in HONORIFICS or (f.prev(start) == "." and f.prev(start, 2) in HONORIFICS)
    work_after = f.next(end) in PROJECT_NOUNS or _work_noun_after(f, end)  # "the Wetland Sensors project"
    if (
        end - start > 1
        and name_guess.plural_noun(last)
        and not gz.is_given_name(f.lows[start])
        and not (used or titled or work_after)
    ):
        return Mention(name, "organization", 0.7, start, end)  # "Windward Paddlers": a group
    if end - start > 1 and last in PROJECT_NOUNS and not (used or _chosen(f, start)):
        return Mention(name, "project", 0.8, start, end)  # not "we settled on Driftwood Deploy": a product
    if end - start > 1 and last in gz.TOOL_KIND and f.prev(start) in _PRODUCT_DETERMINERS:
        return Mention(name, "tool", 0.7, start, end)  # "a Breville Barista Express": a product's whole name
    for rule in (_as_person_by_role, _as_project, _as_org, _as_person, _as_tool):
        mention = rule(f, name, start, end)
        if mention is not None:
            return mention
    return None


def _chosen(f: NameFinder, start: int) -> bool:
    """Whether the name at ``start`` is what a verb of choosing takes ("chose X", "settled on X")."""
    before, before2 = f.prev(start), f.prev(start, 2)
    return before in _CHOOSING or (before, before2) in _CHOOSING_PHRASES


_CHOOSING: Final = word_set("chose chosen choose picked pick")
_CHOOSING_PHRASES: Final = frozenset(
    (
        ("on", "settled"),
        ("on", "decided"),
        ("with", "went"),
        ("with", "go"),
        ("for", "opted"),
    )
)


# Words that open a sentence as a clause's link, not a name: "Whenever my sister visits".
_OPENING_LINKS: Final = BOUNDARIES | word_set("whenever wherever whatever however anytime everytime")


def _opens_before_role(f: NameFinder, start: int, end: int) -> bool:
    """Whether a sentence's opening word before "my <role>" is no name: a link ("Whenever
    my sister ..."), an adverb ("Apparently my cousin ..."), or a verb whose object the
    role is, as no verb follows it ("Ask my boss about X"); "Sky my daughter uses X" is
    a name."""
    low = f.lows[start]
    if low in _OPENING_LINKS or _sentence_adverb(low):
        return True
    if end - start != 1 or f.words[start].isupper() or not name_guess.english(low):
        return False
    k = end + 1
    while k < len(f.lows) and (f.lows[k] in gz.ROLES or f.lows[k] in ROLE_ADJECTIVES or is_filler(f.lows[k])):
        k += 1
    following = f.next(k)
    return not (finite_form(following) or following in BE_FORMS or following in AUXILIARIES)


def _sentence_adverb(low: str) -> bool:
    """Whether a word is an adverb in -ly made from an English adjective ("apparently",
    "luckily"), not a name ending so ("Holly", "Lily", "Beverly")."""
    stem = low.removesuffix("ly")
    stems = (stem, stem[:-1] + "y") if stem.endswith("i") else (stem,)
    return low != stem and len(low) >= 6 and any(name_guess.common(s) for s in stems) and not given_name(low)


def _as_person_by_role(f: NameFinder, name: str, start: int, end: int) -> Mention | None:
    if any(ch.isdigit() for ch in name):
        return None  # "a Canon AE-1 my grandad left me": a model's code names no person
    role, mine = role_before(f.lows, start)
    opening_word = start in f.initial and f.next(end) in POSSESSIVES and _opens_before_role(f, start, end)
    if role is None and not opens_next_clause(f.lows, start, end) and not opening_word and not _placed(f, start):
        role, mine = role_after(f.words, f.lows, end)  # not "Whenever my sister ...", "Ask my boss"
    if role is None:
        return None
    return Mention(name, "person", 0.9, start, end, role=role, mine=mine)


def _placed(f: NameFinder, start: int) -> bool:
    """Whether the name at ``start`` is where the name before it works ("Dr. Ana Ruiz at
    Larchfield Practice is my GP"): the role after it is that person's."""
    return start >= 2 and f.prev(start) in ("at", "from") and f.words[start - 2][:1].isupper()


def _as_project(f: NameFinder, name: str, start: int, end: int) -> Mention | None:
    before, after = f.prev(start), f.next(end)
    subject_of = after in PROJECT_VERBS or (after == "is" and f.next(end, 1) in ("part", "a"))
    worked_on = before == "on" and f.prev(start, 2) in WORKED
    product = after in PRODUCT_NOUNS and before not in POSSESSIVES  # "the Fitbod app": a product
    cued = before in PROJECT_CUES or (after in PROJECT_NOUNS and not product) or named_as(f, start, CALLED_PROJECT)
    cued = cued or worked_on or _migrated(f, start, end) or _made_and_called(f, start) or _work_noun_after(f, end)
    cued = cued or _apposed_work(f, end) or work_described(f.lows, end)
    cued = cued or (after in ("deps", "dependencies") and f.next(end, 1) == ":")  # "Quillfen deps: X, Y"
    if cued or (subject_of and f.next(end, 1) != "a") or _part_of_dependency(f, after, end):
        return Mention(name, "project", 0.8, start, end)
    return None


def _work_noun_after(f: NameFinder, end: int) -> bool:
    """ "Coinpurse, the billing module,", "the Skylark search rewrite": a name set beside a
    noun for a piece of work (one describing word allowed) is that work's."""
    k = end + 2 if f.next(end) == "," and f.next(end, 1) in _APPOSITION_OPENERS else end
    if f.next(k) in PROJECT_NOUNS:
        return k > end and f.next(k) not in PRODUCT_NOUNS  # bare "X app" is read above
    described = f.next(k).isalpha() and f.next(k) not in gz.NOT_NAMES and k + 1 < len(f.words)
    noun = f.next(k, 1) in PROJECT_NOUNS - _COMPONENTS and f.words[k + 1].islower()  # not "leads Project Bramble"
    return described and f.words[k][:1].islower() and noun


def _set_apart(f: NameFinder, start: int, end: int, *, plain: bool) -> Mention | None:
    """A name an ordinary word or a sentence's opening makes no name of, typed by the words
    after it: "Firefly, my home lighting project, depends on ..." (a project), "Ardour is
    my favourite" (a tool, unless the word is a common one)."""
    described = work_described(f.lows, end) and f.lows[start] not in PROJECT_CUES  # "Project X": X alone
    if _apposed_work(f, end) or described:
        opener = f.lows[start] in PROJECT_CUES or f.lows[start] == "the"  # "Project X, my ...", "The X is my project"
        start += opener and end - start > 1
        return Mention(span_text(f.words[start:end]), "project", 0.75, start, end)
    if not plain and _favoured(f, end):
        return Mention(span_text(f.words[start:end]), "tool", 0.7, start, end)
    return None


def _apposed_work(f: NameFinder, end: int) -> bool:
    """Whether the name before ``end`` is set beside the speaker's piece of work between
    commas, with a verb after ("Firefly, my home lighting project, depends on ..."): the
    subject is that work, however ordinary its word or its place in the sentence."""
    if f.next(end) != "," or f.next(end, 1) not in POSSESSIVES:
        return False
    k = end + 2
    while k < len(f.words) and k - end < 6 and f.lows[k] not in PROJECT_NOUNS:
        if not (f.words[k].islower() and (f.lows[k].isalpha() or f.lows[k] == "'s" or "-" in f.lows[k])):
            return False
        k += 1
    following = f.next(k, 2)
    verb = finite_form(following) or following in BE_FORMS or following in AUXILIARIES
    return f.next(k) in PROJECT_NOUNS and f.next(k, 1) == "," and verb


def _favoured(f: NameFinder, end: int) -> bool:
    """Whether the name before ``end`` is called the speaker's favourite or choice
    ("Ardour is my favourite", "Wanderlog is what we use"): a thing one picks, not a person."""
    person = f.lows[end - 1] in gz.ROLES or given_name(f.lows[end - 1])  # "Mum is my favourite"
    fronted = f.next(end) in ("is", "was") and f.next(end, 1) == "what" and f.next(end, 2) in _CHOOSERS
    fronted = fronted and any(t.kind in _CHOSEN for t in find_triggers(f.lows[end + 3 : end + 6]))
    fronted = fronted or described_clause(f.lows, end) is not None  # "Vega is the charting library we use"
    fronted = fronted or _announced(f, end)  # "Planday it is for the café rota"
    return (favourite_said(f.lows, end) or fronted) and not person and f.lows[end - 1] not in gz.PLACES


def _announced(f: NameFinder, end: int) -> bool:
    """Whether the name before ``end`` is announced as a thing chosen ("Planday it is for the
    rota"); not an institution's name, "Whatever it is", a person's ("Kowalski it is")."""
    last = f.lows[end - 1]
    institution = last in gz.ORG_SUFFIXES or "&" in f.words[max(0, end - 4) : end]
    return it_is_after(f.lows, end) and not institution and last not in _OPENING_LINKS and not given_name(last)


# "Wanderlog is what we use": the subject of the clause after "what".
_CHOOSERS: Final = word_set("i we i've we've my our")
_CHOSEN: Final = frozenset(("USE", "DECIDE", "PREFER", "LIKE", "KEEP"))


_APPOSITION_OPENERS: Final = word_set("the our my a an")
_PRODUCT_DETERMINERS: Final = word_set("a an the my our his her their")
# Nouns that head an institution's "<Noun> of <Name>": not "Power of Attorney".
_INSTITUTION_HEADS: Final = word_set(
    "university college institute school bank church museum ministry department academy society council "
    "hospital library federation association conservatory"
)
# Nouns that make a name an institution's wherever they stand in it ("Tramping Club Ōtautahi").
_BODY_HEADS: Final = _INSTITUTION_HEADS | word_set("club union trust league co-operative cooperative")
# Work nouns that as often name a part bought in: "the Quill editor plugin" is a tool.
_COMPONENTS: Final = PRODUCT_NOUNS | word_set("plugin library package sdk api cli firmware integration platform")


def _made_and_called(f: NameFinder, start: int) -> bool:
    """ "building a rover called Scrapjack", "making the app for the farmers called
    AgroLink": a thing the clause makes, then names, is a piece of work."""
    if f.prev(start) not in ("called", "named") or not _called_thing(f, start):
        return False
    window = f.lows[max(0, start - 9) : start - 1]
    made = [i for i, w in enumerate(window) if w in _MAKING]
    return bool(made) and _GOVERNING.isdisjoint(window[made[-1] :])  # not "building a pc with a case called X"


_GOVERNING: Final = word_set("with to for on in at from of about into")
_MAKING: Final = word_set(
    "building built build making made make developing developed designing designed creating created"
)


def _migrated(f: NameFinder, start: int, end: int) -> bool:
    """ "We migrated Atlas from MySQL to ...", "we moved Atlas to Postgres": what is
    moved off or onto a known tool is a project (not a person or a place: "we moved
    Sarah to ..." keeps its name unexplained)."""
    if f.prev(start) not in SWITCH_VERBS or f.next(end) not in ("from", "off", "to", "onto"):
        return False
    if gz.is_given_name(f.lows[start]) or f.lows[start] in gz.PLACES:
        return False
    return any(m.start == end + 1 and m.entity_type == "tool" for m in f.found)


def _part_of_dependency(f: NameFinder, after: str, end: int) -> bool:
    return after == "is" and f.next(end, 1) == "a" and f.next(end, 2) == "dependency"


_BODIES: Final = gz.ORG_SUFFIXES - gz.TRADE_NOUNS


def named_as(f: NameFinder, start: int, nouns: frozenset[str]) -> bool:
    """Whether the name at ``start`` is introduced as one of ``nouns``: "a side project
    called X"; for organizations also a noun for a body of people right before ("a
    ukulele group called the X", "a swim team called X", "a tango orchestra, X") and an
    apposition, "our client, X"."""
    skip = int(f.prev(start) == "the" and f.prev(start, 2) in ("called", "named", ","))
    said = int(f.prev(start, 1 + skip) in ("called", "named") and f.prev(start, 2 + skip) in NAMING_BE)
    skip += said  # "my book club is called X": the noun before "is"
    noun = start - 2 - skip
    body = nouns is CALLED_ORG and noun >= 0 and f.words[noun].islower()  # not "Oakbeam Builders, X"
    body = body and f.prev(start, 3 + skip) not in PREPOSITIONS
    if f.prev(start, 1 + skip - said) in ("called", "named"):
        team = body and (f.lows[noun] in _BODIES or f.lows[noun] in TEAM_NOUNS)
        return team or any(f.prev(start, back) in nouns for back in range(2 + skip, 7 + skip))
    appositive = f.prev(start, 1 + skip) == "," and (
        f.prev(start, 2 + skip) in nouns or (body and f.lows[noun] in _BODIES)
    )
    return appositive and nouns is CALLED_ORG


def _as_org(f: NameFinder, name: str, start: int, end: int) -> Mention | None:
    low = name.lower()
    if low in gz.PLACES or gz.is_given_name(f.lows[start]):
        return None
    client = f.prev(start) == "is" and f.prev(start, 2) in CLIENT_NOUNS
    if org_cue(f, start, end) or named_as(f, start, CALLED_ORG) or client or _after_institution(f, start):
        return Mention(name, "organization", 0.8, start, end)
    return None


def _after_institution(f: NameFinder, start: int) -> bool:
    """ "the clinic Ventora Salud", "in restaurant Casa Lumenta": a name right after a
    lower-case noun for an institution is that institution's."""
    noun = f.prev(start)
    written = start >= 1 and f.words[start - 1].islower()
    plural = name_guess.plural_noun(noun) and noun not in CALLED_ORG  # "our vets Nnamdi Oduya and ...": people
    institution = (noun in CALLED_ORG or noun in gz.ORG_SUFFIXES) and noun not in PROJECT_NOUNS  # not "service"
    return written and not plural and institution and noun not in ("client", "customer")


def _as_person(f: NameFinder, name: str, start: int, end: int) -> Mention | None:
    first = f.lows[start]
    if gz.is_given_name(first) and (first not in COMMON_GIVEN or start not in f.initial):
        return Mention(name, "person", 0.85, start, end)
    if _double_given_name(f.words[start]):
        return Mention(name, "person", 0.8, start, end)
    if end - start == 1 and start in f.initial and name_guess.ordinary(f.words[start]):
        return None  # "Dad wants ...", "Anyone know ...": an English word capitalised as it opens
    if end - start == 1 and first in gz.PLACES:
        return None  # "Ana of Lisbon wrote ...": a place, whatever verb follows
    if person_cue(f, start, end) or (f.prev(start) == "to" and f.prev(start, 2) in TO_PERSON):
        return Mention(name, "person", 0.75, start, end)
    return None


def _double_given_name(word: str) -> bool:
    """ "Jean-Baptiste", "Mary-Kate": two capitalised parts, each a given name somewhere
    and one of them here."""
    parts = word.split("-")
    if len(parts) != 2 or not all(part[:1].isupper() and part.isalpha() for part in parts):
        return False
    lows = [part.lower() for part in parts]
    return any(gz.is_given_name(low) for low in lows) and all(given_name(low) for low in lows)


def _as_tool(f: NameFinder, name: str, start: int, end: int) -> Mention | None:
    if name.lower() in gz.PLACES:
        return None
    if odd_shape(f.words[start]) and end - start == 1:
        return Mention(name, "tool", 0.75, start, end)
    before, before2 = f.prev(start), f.prev(start, 2)
    cued = (
        before in TOOL_PREV
        or (before == "to" and before2 in SWITCH_VERBS)
        or (before in ("in", "with") and before2 in BUILT)
        or (before in ("called", "named") and _called_thing(f, start))
    )
    switched = (
        before == "to"
        and "from" in f.lows[max(0, start - 8) : start]
        and any(low in SWITCH_VERBS for low in f.lows[max(0, start - 10) : start])
    )
    if (cued or switched) and start not in f.initial:
        return Mention(name, "tool", 0.7, start, end)
    return None
