"""Names typed by the grammatical slot they fill. Pure.

A capitalised name that no list knows and no nearby cue word explains is typed by its
place in the clause: the object of a verb takes the type the verb's frame wants ("we
run Zephyr" makes Zephyr a tool, "she works at Quillon" an organization), and the
subject of a frame that only one type can fill takes that type ("Lantern is written in
Rust": a project; "Mirela is on the data team": a person; "Hollow Pine is where Tomasz
works": an organization). A name in a slot no frame explains stays unnamed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from memledger.events.catalogue import EntityType
from memledger.extraction import gazetteer as gz
from memledger.extraction import lexicon, name_guess
from memledger.extraction.appositions import apposition_close
from memledger.extraction.finite_verbs import (
    BE_FORMS,
    CLAUSE_ENDS,
    LED,
    NOT_VERBS,
    OBJECT_GAP,
    USED_BY,
    finite_verb_before,
)
from memledger.extraction.noun_types import (
    GROUPS,
    OWNED_WORK,
    SPEAKER_DOERS,
    SUBJECT_GAP,
    bracketed_type,
    common_noun,
    modifier_type,
    owned_institution,
    owned_work,
    working_as,
)
from memledger.extraction.owned_subjects import names_people
from memledger.extraction.patterns import (
    NAME_JOINS,
    POSSESSIVES,
    PROJECT_NOUNS,
    ROLE_ADJECTIVES,
    SITE_NOUNS,
    TEAM_NOUNS,
    Mention,
    span_text,
    word_set,
)
from memledger.extraction.roles import possessive_of
from memledger.extraction.rosters import opens_roster
from memledger.extraction.triggers import JOBS, OWNER_LABELS, RUNNING, WORK_VERBS, Trigger, find_triggers, is_filler

SLOT_CONFIDENCE = 0.7
_AFTER_A_GROUP: Final = frozenset(("and", "or", "but", "so", "as", "every", "since", "for", "in", "on", "at", "with"))
_WORDS: Final = lexicon.sections("frame_words.txt")

# What the object of each trigger kind is, when the verb alone decides it.
_OBJECT_TYPE: Final[dict[str, EntityType]] = {
    "USE": "tool",
    "KEEP": "tool",
    "PREFER": "tool",
    "DECIDE": "tool",
    "SWITCH": "tool",
    "RETRACT": "tool",
    "DEPEND": "tool",
    "WORK_ON": "project",
    "BUILD": "project",
    "KNOW": "person",
    "INTRO": "person",
    "PART": "organization",
    "LEAVE": "organization",
}
# Phrases of those kinds whose object is a person, not what the kind usually wants.
_PERSON_OBJECT: Final = frozenset(_WORDS["PERSON_OBJECT"])
_NOT_ALONE: Final = frozenset(_WORDS["NOT_ALONE"])
_BUILT_FRAMES: Final = frozenset(_WORDS["BUILT_FRAMES"])
_COMMERCE: Final = frozenset(_WORDS["COMMERCE"])
WORKS: Final = frozenset(_WORDS["WORKS"])
"""Verbs of working or studying somewhere: "... is where Tsiry works"."""
_SUBJECT_DETERMINERS: Final = word_set("the our my their")
_ALWAYS_INSTRUMENTS: Final = word_set("via using through")
INSTRUMENT_PREPOSITIONS: Final = word_set("in on with through via using")
"""Prepositions whose object is what a verb of use works with: "keep notes in Drovel"."""
_OBJECT_PREPOSITIONS: Final = INSTRUMENT_PREPOSITIONS | {"into", "onto"}
_ORDINALS: Final = word_set("first second third fourth fifth next last latest debut")
_SOMEONE, _REPS = word_set("someone somebody guy woman man lady people folks"), word_set("rep reps staff")
_THEY_ARE: Final = word_set("he's she's they're")  # "he's from Sylwan Soft": someone's firm
_PERSON_SUBJECT_KINDS: Final = frozenset(("WORK_ON", "WORK_WITH", "KNOW", "INTRO", "AT"))


def type_by_slot(
    words: list[str],
    lows: list[str],
    unknown: list[tuple[int, int]],
    add: Callable[[Mention], None],
    initial: set[int],
    taken: list[bool],
    found: list[Mention],
) -> None:
    """Add a mention for each unknown span (in order; ``taken`` marks tokens already
    named) whose slot decides its type."""
    if not unknown:
        return
    triggers = find_triggers(lows)
    ends = {trigger.end: trigger for trigger in triggers}
    starts = {trigger.start: trigger for trigger in triggers}
    orgs = {m.start for m in found if m.entity_type == "organization"}
    people = {m.start for m in found if m.entity_type == "person"}
    tools = {m.start for m in found if m.entity_type == "tool"}
    people_ends = {m.end for m in found if m.entity_type == "person"}
    for start, end in unknown:
        if any(taken[start:end]) or (end - start == 1 and len(words[start]) == 1):
            continue  # "my low E as an F": a letter names a note, a grade or a size, not a person
        owned = start >= 2 and lows[start - 1] == ":" and lows[start - 2] in OWNER_LABELS  # "Owner: Keahi."
        owned = owned and lows[end : end + 1] in ([], ["."])  # not "Owners: Halyard - Bao"
        owned = owned and lows[end - 1] not in gz.ORG_SUFFIXES  # not "Owner: Harrow Labs."
        kind: EntityType | None = "person" if owned or _listed_with_me(words, lows, start, end) else None
        kind = kind or ("organization" if _named_group(lows, start, end) else None)
        kind = kind or (_object_slot(words, lows, start, end, ends) if start not in initial else None)
        lone_word = end - start == 1 and name_guess.ordinary(words[start])  # "The Duchess of Cambridge"
        named_org = end + 1 in orgs or (lows[end + 1 : end + 2] == ["the"] and end + 2 in orgs)
        # "Lecturer Damla Kaya from the ...": an opening English word is no part of the name
        titled = start in initial and name_guess.english(lows[start])
        if kind is None and lows[end : end + 1] in (["from"], ["of"]) and named_org and not (lone_word or titled):
            kind = "person"  # "Radka from Brantwood Analytics", "Kaveh of the Larkrise Trust"
        place = start > 0 and name_guess.is_place(" ".join(lows[start:end]), _place_cue(lows, start, end))
        if kind == "organization" and place:
            continue  # "a guy from Lisbon": a place
        kind = kind or _subject_slot(lows, start, end, starts) or _made_in_relative(words, lows, end, starts)
        kind = kind or ("project" if _made_with_tool(lows, start, end, tools) else None)
        kind = kind or ("project" if owned_work(words, lows, start) else None)
        kind = kind or ("organization" if owned_institution(lows, start) or _site_of(lows, start) else None)
        kind = kind or modifier_type(words, lows, start, end) or bracketed_type(lows, start, end)
        kind = kind or ("organization" if _affiliation(lows, start, end, people_ends) else None)
        listed = end + 1 < len(lows) and (not taken[end + 1] or end + 1 in people)
        kind = kind or ("project" if listed and opens_roster(words, lows, start, end) else None)
        if kind == "tool" and place:
            continue  # "lives in Lyon": a place after a preposition of place is no instrument
        if kind == "person" and start in initial and end - start == 1 and name_guess.ordinary(words[start]):
            continue  # "Anyone know ...": an English word capitalised because it opens the sentence
        if kind is not None and "'" in words[start]:
            continue  # "Don't lean on ...": a contraction is no name
        if kind is not None:
            add(Mention(span_text(words[start:end]), kind, SLOT_CONFIDENCE, start, end))


def lowercase_tools(words: list[str], lows: list[str], taken: list[bool], add: Callable[[Mention], None]) -> None:
    """A lower-case word that is no English word, in the slot of a thing used ("logging
    meals in cronometer", "moved it to ghostfolio"): informal writing names tools so."""
    ends: dict[int, Trigger] | None = None
    for i, (word, low) in enumerate(zip(words, lows, strict=True)):
        if (
            taken[i]
            or not word.islower()
            or len(low) < 4
            or low in gz.NOT_NAMES
            or name_guess.english_form(low)
            or (name_guess.ordinary(word) and not _versioned(word))
        ):
            continue
        if name_guess.is_world_name(low) or gz.is_given_name(low) or i == 0:
            continue
        if ends is None:
            ends = {trigger.end: trigger for trigger in find_triggers(lows)}
        if _object_slot(words, lows, i, i + 1, ends) == "tool":
            add(Mention(word, "tool", name_guess.GUESS_CONFIDENCE, i, i + 1))


def _versioned(word: str) -> bool:
    """A lower-case product name with a number closing it ("libgit2", "python3")."""
    letters = word.rstrip("0123456789")
    return letters != word and len(letters) >= 3 and letters.isalpha()


def _made_in_relative(words: list[str], lows: list[str], end: int, starts: dict[int, Trigger]) -> EntityType | None:
    """ "Halyard, which Bao wrote in Odin, ...", "the Quince service, which we maintain":
    what a relative clause says someone built or works on is a project."""
    j = end + 1 if end < len(lows) and lows[end].isalpha() and not words[end][:1].isupper() else end
    return "project" if makers_verb(words, lows, j, starts) is not None else None


def makers_verb(words: list[str], lows: list[str], comma: int, starts: dict[int, Trigger]) -> int | None:
    """Where the verb of ", which|that <names, I, we> <builds / works on>" opening at
    ``comma`` starts, or None when the tokens there are not such a relative clause."""
    if lows[comma : comma + 2] not in ([",", "which"], [",", "that"]):
        return None
    k = comma + 2
    while k < len(lows) and k - comma <= 8 and k not in starts:
        if not (words[k][:1].isupper() or lows[k] in _MAKERS_BETWEEN):
            return None
        k += 1
    trigger = starts.get(k)
    running = trigger is not None and trigger.kind == "USE" and lows[k] in RUNNING  # "which Ama runs at ..."
    made = trigger is not None and (trigger.kind in ("BUILD", "WORK_ON") or running)
    return k if made and k > comma + 2 else None


# Words between "which" and the makers' verb: the makers, and the auxiliary of a progressive
# or perfect ("which I'm coordinating", "which Tadhg has led").
_MAKERS_BETWEEN: Final = SPEAKER_DOERS | word_set("and , & am are is have has been")
_PLURAL_VERBS: Final = word_set("are r were have both")


def _affiliation(lows: list[str], start: int, end: int, people_ends: set[int]) -> bool:
    """ "Ilse Vermeulen (Rijnpoort Fysio)", "Szymon (guide, Tatra Trails)": a name in the
    bracket after a person's, after their role at most, is where they work, unless a town."""
    if lows[end : end + 1] != [")"] or lows[start] in gz.ROLES:
        return False  # not "AirTag (Dad)": a role names whose it is
    opening = start - 1 if lows[start - 1 : start] == ["("] else start - 3
    role = opening == start - 3 and lows[start - 1 : start] == [","] and lows[start - 2].isalpha()
    bracketed = opening >= 1 and lows[opening] == "(" and (opening == start - 1 or role) and opening in people_ends
    return bracketed and not name_guess.is_place(" ".join(lows[start:end]), "in")  # not "Ruth (Bergen)": a town


def _named_group(lows: list[str], start: int, end: int) -> bool:
    """ "in the Quay Brass Band": a name after "the" whose last word is a group's, with no
    noun after it ("the Kinevo Flex Band sensor" is a product)."""
    following = lows[end] if end < len(lows) else ""
    grouped = end - start > 1 and lows[end - 1] in GROUPS and lows[start - 1 : start] == ["the"]
    return grouped and not (following.isalpha() and common_noun(following) and following not in _AFTER_A_GROUP)


def _listed_with_me(words: list[str], lows: list[str], start: int, end: int) -> bool:
    """Whether a name is listed with the speaker's "me" as only a person is: a full name
    ("me + Marosa Mirosaade on nights"), one of several ("on shift: me, Baren, Sarosa"), or
    the subject of a plural verb ("me n Jasur are on ..."); not "just me and Krita tonight"."""
    whole = start == 0 or not words[start - 1][:1].isupper()  # not the end of a longer name
    if whole and lows[end : end + 1] and lows[end] in NAME_JOINS and lows[end + 1 : end + 2] == ["me"]:
        return end - start > 1 or lows[end + 2 : end + 3] in (["are"], ["were"])  # "Ana and me are ..."
    j, others = start - 1, 0
    while j >= 1 and lows[j] in NAME_JOINS:
        if lows[j - 1] == "me":
            alone = j >= 2 and lows[j - 2] in ("just", "only")
            plural = lows[end : end + 1] and lows[end] in _PLURAL_VERBS
            return not alone and (end - start > 1 or others > 0 or bool(plural) or _listed_on(words, lows, end))
        if not words[j - 1][:1].isupper():
            return False
        j, others = j - 2, others + 1  # past one more listed name: "me, Baren, Sarosa"
    return False


def _listed_on(words: list[str], lows: list[str], end: int) -> bool:
    """Whether another name follows in the list ("me, Hyun-woo, Itziar")."""
    return (
        lows[end : end + 1] in ([","], ["and"], ["&"], ["+"])
        and words[end + 1 : end + 2] != []
        and words[end + 1][:1].isupper()
    )


def _object_slot(
    words: list[str], lows: list[str], start: int, end: int, ends: dict[int, Trigger]
) -> EntityType | None:
    if start >= 2 and lows[start - 1] == "by" and lows[start - 2] in LED:
        return "person"  # "maintained by Osric Vale"
    agent = start >= 3 and lows[start - 1] == "by" and lows[start - 3] in BE_FORMS
    if agent and end - start == 1 and lows[start - 2] not in USED_BY:
        return "person"  # "reviewed by Vojtěch" (but "handled by Kestra": a tool's work)
    if agent and end - start == 1 and not _person_name(lows[start:end]):
        return "tool"  # "exports are handled by Kestra": a thing used, unless a person's name
    owned = start >= 2 and lows[start - 2] in POSSESSIVES and lows[start - 1] not in ROLE_ADJECTIVES
    noun = lows[start - 1] if owned else ""
    work = noun in OWNED_WORK  # "our app Lantern": the speaker's work
    role = owned and common_noun(noun) and noun not in gz.ORG_SUFFIXES and noun not in _ORDINALS and not work
    if role or _apposed_to_own_people(lows, start, end):  # "my guitar teacher, Obiageli, records ..."
        return "person"  # "my physio Tewodros", "our landlord Cengiz"; not "our first EP", "my gym Corefit"
    j = start
    while j > 0 and (lows[j - 1] in OBJECT_GAP or is_filler(lows[j - 1])) and start - j < 3:
        j -= 1
    if j >= 2 and _employer_slot(lows, j - 1):
        return "organization"
    if j >= 2 and lows[j - 1] == "from" and _someone_before(lows, j - 1, group=j < start or end - start > 1):
        return "organization"  # "the electrician from Voltaro Servicios", "someone from the Paddlers"
    if j >= 2 and lows[j - 1] in ("from", "with") and _COMMERCE & set(lows[max(0, j - 6) : j - 1]):
        return "organization"  # "ordered from Toolhaus Direct", "booked with Andes Lumbre Travel"
    trigger = ends.get(j)
    if trigger is None:
        return _instrument(words, lows, j, end, ends)
    phrase = " ".join(lows[trigger.start : trigger.end])
    if phrase in _PERSON_OBJECT:
        return "person"
    if phrase in _NOT_ALONE or phrase.endswith(" by"):
        return None  # "run Hollow Pine", "managed by Quillon": the verb does not fix the type
    if _workplace(words[start:end], lows, trigger):
        return "organization"
    return _OBJECT_TYPE.get(trigger.kind)


def _apposed_to_own_people(lows: list[str], start: int, end: int) -> bool:
    """Whether the name between commas follows a noun for people that "my"/"our" owns
    ("my teacher, Obiageli, ...", "our guitar teacher, Obiageli, ..."); not a team's name
    ("our five-a-side team, Rovers of Kellsbridge, ...")."""
    if start < 3 or lows[start - 1] != "," or lows[end : end + 1] != [","]:
        return False
    noun = lows[start - 2]
    return possessive_of(lows, start - 2) is not None and names_people(noun) and noun not in TEAM_NOUNS


def _employer_slot(lows: list[str], k: int) -> bool:
    """Whether the preposition at ``k`` follows someone's job: "the warehouse lead for
    Orrin Freight", "a paramedic with Tidewater", "I work as a cook in Trattoria Ferrucci"."""
    if lows[k] in ("at", "for", "with") and _job_before(lows, k):
        return True
    copula = not (BE_FORMS | {"am", "i'm"}).isdisjoint(lows[max(0, k - 4) : k])
    described = _job_before(lows, k) and copula  # "I am backend developer in Kairomark"
    return lows[k] in ("at", "for", "with", "in") and (working_as(lows[max(0, k - 5) : k]) or described)


def _workplace(name: list[str], lows: list[str], trigger: Trigger) -> bool:
    """Whether the trigger names where one works: "works at X", "she work in Fysio Nordlys"
    (a name of more than one word, not all English: "work in Python", "work in Digital
    Marketing" name a language and a field)."""
    if trigger.kind == "AT" and trigger.end - trigger.start > 1:
        return True
    named = len(name) > 1 and not all(name_guess.ordinary(word) for word in name)
    return lows[trigger.start] in WORK_VERBS and lows[trigger.end - 1] == "in" and named


def _instrument(words: list[str], lows: list[str], j: int, end: int, ends: dict[int, Trigger]) -> EntityType | None:
    """ "keep our recipes in Paprika", "train on Zwift": the object of an instrument
    preposition after a verb of use, in the same clause, is what is used."""
    if lows[j - 1 : j + 1] == ["through", "the"] and not (end < len(lows) and common_noun(lows[end])):
        return None  # "through the Balkans": a region, unless the name modifies a noun ("the X portal")
    if j >= 1 and lows[j - 1] in ("to", "onto", "from", "off") and _switched_before(lows, j - 1, ends):
        return "tool"  # "switch the booking sheet to Teamup", "move the chat from Viber"
    if j < 1 or lows[j - 1] not in _OBJECT_PREPOSITIONS:
        return None
    if lows[j - 1] in _ALWAYS_INSTRUMENTS:
        return "tool"  # "paid via Quillpay", "sent through Tallyfin"
    by_verb = lows[j - 1] != "with"
    if not by_verb and (_person_name(lows[j:end]) or name_guess.word_type(words[j]) == "person"):
        return None  # "playing Ultima Online with Ruaridh": a companion
    verb = finite_verb_before(words, lows, j - 1) if by_verb else None
    if verb is not None and lows[verb] not in _NOT_ALONE:
        return "tool"  # "Keoni designs every frame in FreeCAD", "is recorded in Zencastr"
    for k in range(j - 1, max(0, j - 9), -1):
        if lows[k - 1] in CLAUSE_ENDS:
            return None
        trigger = ends.get(k)
        if trigger is not None and trigger.kind in ("USE", "KEEP"):
            phrase = " ".join(lows[trigger.start : trigger.end])
            placed = phrase in _NOT_ALONE  # "runs a farm in Minas Gerais": where, not with what
            return None if placed or phrase.endswith((" by", " in", " on", " at")) else "tool"
    return None


def _made_with_tool(lows: list[str], start: int, end: int, tools: set[int]) -> bool:
    """ "Night Ferry is recorded in Zencastr": what is made with a known tool is a piece
    of work, unless the name is a person's."""
    if lows[end : end + 1] not in (["is"], ["was"], ["are"]) or end + 3 >= len(lows):
        return False
    participle = lows[end + 1].endswith("ed") or lows[end + 1] in LED or lows[end + 1] in USED_BY
    if not participle or lows[end + 2] not in ("in", "with", "on", "using"):
        return False
    k = end + 4 if lows[end + 3] in ("a", "an", "the") else end + 3
    return k in tools and not _person_name(lows[start:end])


def _person_name(lows: list[str]) -> bool:
    return gz.is_given_name(lows[0]) or name_guess.is_world_name(lows[0])


def _someone_before(lows: list[str], k: int, *, group: bool) -> bool:
    """Whether the two tokens before ``k`` end in someone who works (a job, a role one pays
    for) or, before a group's name ("the Paddlers"), anyone: "a woman from Kerikeri" is from a place."""
    before = lows[max(0, k - 2) : k]
    working = any(
        w in JOBS or w in gz.WORK_ROLES or w in gz.SERVICE_ROLES or w in _REPS or _agent_noun(w) for w in before
    )
    if working or not group:
        return working
    # a name of more words (no town's): "the consultants from X", "he's from X", "someone from X"
    plural_job = any(w[:-1] in JOBS or w[:-1] in gz.WORK_ROLES for w in before if w.endswith("s"))
    someone = before[-1:] in ([w] for w in _THEY_ARE) or before in (["he", "is"], ["she", "is"])
    return plural_job or someone or not _SOMEONE.isdisjoint(before)


def _agent_noun(low: str) -> bool:
    """A noun for someone by what they practise, by its ending: "agronomist",
    "electrician" (not "playlist")."""
    return (
        len(low) >= 7
        and low.isalpha()
        and (low.endswith("ician") or (low.endswith("ist") and not low.endswith("list")))
    )


def _job_before(lows: list[str], k: int, since: int | None = None) -> bool:
    """Whether a job or role noun is among the three tokens before ``k`` (from ``since``)."""
    start = max(since if since is not None else 0, k - 3)
    return any(word in JOBS or word in gz.WORK_ROLES for word in lows[start:k])


def _after_head_nouns(lows: list[str], end: int, starts: dict[int, Trigger]) -> int:
    """ "The Fennel greenhouse controller depends on ...": past up to three lower-case
    head nouns to the trigger the modified name's phrase is the subject of."""
    for j in range(end + 1, min(end + 4, len(lows)) + 1):
        if not all(word.isalpha() and word not in NOT_VERBS for word in lows[end:j]):
            break
        trigger = starts.get(j)
        if trigger is not None and trigger.kind in ("DEPEND", "USE"):
            return j
    return end


def _switched_before(lows: list[str], k: int, ends: dict[int, Trigger]) -> bool:
    """Whether a verb of switching opens the clause before token ``k``."""
    for i in range(k, max(0, k - 8), -1):
        if lows[i - 1] in CLAUSE_ENDS:
            return False
        trigger = ends.get(i)
        if trigger is not None and trigger.kind == "SWITCH":
            return True
    return False


def _subject_slot(lows: list[str], start: int, end: int, starts: dict[int, Trigger]) -> EntityType | None:
    j = end
    while j < len(lows) and (lows[j] in SUBJECT_GAP or is_filler(lows[j])) and j - end < 4:
        j += 1
    following = lows[end + 2 : end + 7]
    led = lows[end : end + 1] in (["is"], ["was"]) and lows[end + 1 : end + 2] != [] and lows[end + 1] in LED
    work = lows[end : end + 2] in (["is", "a"], ["is", "an"]) and _work_named(lows, end + 2)  # "X is an R package"
    if led or work:
        return "project"
    if start and lows[start - 1] == "where" and lows[end : end + 1] and lows[end] in WORKS:
        return "person"  # "... is where Tsiry works"
    if lows[end : end + 2] == ["is", "where"]:
        return "organization"
    described = lows[end : end + 1] in (["is"], ["was"]) and lows[end + 1 : end + 2] in (["the"], ["a"], ["an"])
    if described and _job_before(lows, min(end + 5, len(lows)), since=end + 2):
        return "person"  # "Joost is the warehouse lead for ..."
    if lows[end : end + 2] == [",", "who"] and end - start <= 3:
        return "person"  # "Bartosz, who maintains ...": "who" refers to people
    modified = start and lows[start - 1] in _SUBJECT_DETERMINERS
    if modified and j == end:
        j = _after_head_nouns(lows, end, starts)
    if lows[end : end + 2] in (["is", "on"], ["was", "on"], ["'s", "on"]) and TEAM_NOUNS & set(following):
        return "person"
    if j == end:
        j = apposition_close(lows, end) or j  # "Quillon, the CLI that I maintain, relies on ..."
    trigger = starts.get(j)
    if trigger is None:
        return None
    phrase = " ".join(lows[trigger.start : trigger.end])
    if phrase in _BUILT_FRAMES or trigger.kind in ("DEPEND", "DEPENDED"):
        return "project"
    verb = trigger.kind != "AT" or trigger.end - trigger.start > 1  # a bare "at" is a preposition
    if trigger.kind in _PERSON_SUBJECT_KINDS and verb and end - start <= 2:
        return "person"
    return None


def _work_named(lows: list[str], k: int) -> bool:
    """Whether a noun for a piece of work ends the noun phrase at ``k`` ("an R package",
    "a small booking app"), within four words and before any other."""
    for j in range(k, min(k + 4, len(lows))):
        if lows[j] in PROJECT_NOUNS:
            return j + 1 == len(lows) or not lows[j + 1].isalpha() or lows[j + 1] in ("that", "which", "for")
        if not lows[j].isalpha():
            return False
    return False


def _place_cue(lows: list[str], start: int, end: int) -> str:
    """The word that may make the name at ``start`` a place: the one before it, or the
    preposition before "the" when the name is a site's ("in the Tashkent office of X")."""
    before = lows[start - 1]
    if before == "the" and start >= 2 and lows[end : end + 1] and lows[end] in SITE_NOUNS:
        return lows[start - 2]
    return before


def _site_of(lows: list[str], start: int) -> bool:
    """Whether the name at ``start`` owns a site named before it ("the Lisbon office of X")."""
    site = start >= 2 and lows[start - 1] == "of" and lows[start - 2] in SITE_NOUNS
    return site and not name_guess.is_world_name(lows[start])  # not "the studio of Olafur Eliasson"
