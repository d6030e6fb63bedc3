"""Relationships stated by sentence shapes the trigger reader does not cover. Pure.

- Passive: "Kafka is used by the ingestion jobs", "billing is handled by Stripe",
  "Nightjar is maintained by Osric". The agent after "by" is the verb's subject.
  An unnamed side ("the ingestion jobs", "billing") is the speaker's own.
- Location of work: "Hollow Pine is where Tomasz works".
- Relations by apposition: "my physio, Dr. Amara Nwosu", "my cousins Ana and Bo":
  a person named right after the speaker's noun for them. Work nouns make
  colleagues, any other noun someone the speaker knows.
- Belonging (workplaces, institutions, groups) is read in ``memberships``.
"""

from __future__ import annotations

from functools import cached_property
from itertools import pairwise, takewhile
from typing import Final

from memledger.extraction import gazetteer as gz
from memledger.extraction import lexicon, name_guess
from memledger.extraction.appositions import apposed_name
from memledger.extraction.control import infinitive_of, speaker_object
from memledger.extraction.ellipsis import instrument_verb
from memledger.extraction.episodes import TIME_NOUNS, past_tense
from memledger.extraction.finite_verbs import joined_verb, relative_after_comma
from memledger.extraction.made_in import made_in_edges
from memledger.extraction.memberships import FRAME_CONFIDENCE, grouped, listed_after, listed_before, membership_edges
from memledger.extraction.noun_types import SPEAKER_DOERS, own_work, work_described
from memledger.extraction.owned_subjects import owned_subject
from memledger.extraction.passives import BE, passive_edges
from memledger.extraction.patterns import (
    BULLETS,
    HONORIFICS,
    KNOWN_CONFIDENCE,
    ROLE_ADJECTIVES,
    Edge,
    Mention,
    Party,
    word_set,
)
from memledger.extraction.roles import relation_of
from memledger.extraction.senses import participle
from memledger.extraction.slots import INSTRUMENT_PREPOSITIONS, WORKS, makers_verb
from memledger.extraction.triggers import ADVERBS, PAST_FORMS, SUBJECT_PRONOUNS, THIRD_PERSON, Trigger, find_triggers

_WORDS: Final = lexicon.sections("frame_words.txt")
INSTRUMENT_CONFIDENCE = 0.75
_DETERMINERS: Final = word_set("a an the my our his her their its some")

_OTHERS: Final = word_set("his her their your 's")
_CLAUSE_ENDS: Final = word_set(". ; : ! ? , but because so while when which who")
_WANTING: Final = frozenset(_WORDS["WANTING"])
_OBJECT_OWNERS: Final = word_set("my his her their our your the")
_PLAIN_SUBJECTS: Final = word_set("i we they you")
_DAYS: Final = word_set("monday tuesday wednesday thursday friday saturday sunday")
# Verbs whose "with" names who takes part, not an instrument: "share the car with X".
_PARTNERED: Final = word_set("share shares split splits spend spends cover covers swap swaps")
# Past verbs whose doing goes on or whose result stays: "kept prod on X", "put it all in X".
_GOING_ON: Final = word_set("started began kept stayed put moved stored saved set")
_PAST_SUBJECTS: Final = word_set("i we")
# Words that make a past doing a habit or say it holds now: "paid with X, like every month".
_HOLDING_NOW: Final = word_set("now still currently nowadays always usually every again regularly often")


class _Phrases:
    """A sentence's trigger phrases, found at most once, and only if a frame asks."""

    def __init__(self, lows: list[str]) -> None:
        self._lows = lows

    @cached_property
    def starts(self) -> dict[int, Trigger]:
        return {t.start: t for t in find_triggers(self._lows)}

    @cached_property
    def inside(self) -> frozenset[int]:
        """The token indices inside trigger phrases."""
        return frozenset(i for t in self.starts.values() for i in range(t.start, t.end))


def frame_edges(speaker: Party, words: list[str], lows: list[str], mentions: list[Mention]) -> list[Edge]:
    """The edges the passive, "is where" and appositive frames of a sentence state."""
    by_start = {m.start: m for m in mentions}
    by_end = {m.end: m for m in mentions}
    phrases = _Phrases(lows)
    edges: list[Edge] = []
    edges.extend(passive_edges(speaker, words, lows, by_start, by_end))
    edges.extend(_where(speaker, lows, by_start, by_end))
    edges.extend(_appositions(speaker, words, lows, mentions, by_start))
    edges.extend(_instruments(speaker, words, lows, mentions, by_start, by_end, phrases))
    edges.extend(membership_edges(speaker, lows, mentions, by_start))
    edges.extend(_kin(lows, mentions))
    edges.extend(_titled_kin(speaker, words, lows, mentions))
    edges.extend(_pronoun_roles(speaker, lows, mentions))
    edges.extend(_role_on_work(speaker, lows, by_start))
    edges.extend(_company(speaker, lows, mentions, by_start, phrases))
    edges.extend(_relative_makers(speaker, words, lows, by_start, by_end, phrases))
    edges.extend(made_in_edges(lows, mentions))
    return edges


def _relative_makers(
    speaker: Party,
    words: list[str],
    lows: list[str],
    by_start: dict[int, Mention],
    by_end: dict[int, Mention],
    phrases: _Phrases,
) -> list[Edge]:
    """ "The Halyard scheduler, which Bao wrote in Odin, ...": who builds or runs the
    project a relative clause is about works on it ("which Tadhg and I maintain")."""
    edges: list[Edge] = []
    for comma in range(1, len(lows) - 1):
        if lows[comma] != "," or lows[comma + 1] not in ("which", "that"):
            continue
        verb = makers_verb(words, lows, comma, phrases.starts)
        project = by_end.get(comma) or _noun_headed(lows, by_end, comma)
        if verb is None or project is None or project.entity_type != "project":
            continue
        people = [Party.of(m) for k, m in by_start.items() if comma < k < verb and m.entity_type == "person"]
        makers = people + ([speaker] if not SPEAKER_DOERS.isdisjoint(lows[comma:verb]) else [])
        edges.extend(Edge(maker, "WORKS_ON", Party.of(project), FRAME_CONFIDENCE) for maker in makers)
    return edges


def _noun_headed(lows: list[str], by_end: dict[int, Mention], end: int) -> Mention | None:
    """A project named before the noun it qualifies: "the Halyard scheduler"."""
    named = by_end.get(end - 1)
    return named if named is not None and lows[end - 1].isalpha() else None


# Work done jointly, by its stem: "co-teach", "co-wrote", "co-authored", "co-founded", "co-led".
_CO_WORK: Final = tuple(
    f"co-{stem}"
    for stem in ("teach", "taught", "writ", "wrote", "author", "found", "lead", "led", "host", "present", "supervis")
)


def _company(
    speaker: Party, lows: list[str], mentions: list[Mention], by_start: dict[int, Mention], phrases: _Phrases
) -> list[Edge]:
    """ "I restarted the band with Jurgis and Cathal": whom the speaker does something
    with, they know; with whom they co-teach or co-author, they work. A verb's own "with"
    ("work with", "replaced X with Y") is the clause reader's."""
    edges: list[Edge] = []
    for person in mentions:
        w = person.start - 1
        if person.entity_type != "person" or person.role or w < 1 or lows[w] != "with":
            continue
        in_phrases = phrases.inside
        k = w - 1
        while (
            k >= 0
            and lows[k] not in _CLAUSE_ENDS
            and lows[k] not in ("i", "we", "i'm", "we're")
            and k not in in_phrases
        ):
            k -= 1
        if k < 0 or lows[k] not in ("i", "we", "i'm", "we're") or any(i in in_phrases for i in range(k, w + 1)):
            continue
        if grouped(lows, w):
            continue  # the speaker's teammates: ``_teammates``
        joint = any(lows[j].startswith(_CO_WORK) for j in range(k, w))  # "co-teaching with N": a colleague
        shared = "WORKS_WITH" if joint else "KNOWS"
        for named in (person, *listed_after(lows, person, by_start)):
            edges.append(Edge(speaker, shared, Party.of(named), FRAME_CONFIDENCE))
    return edges


def _kin(lows: list[str], mentions: list[Mention]) -> list[Edge]:
    """ "Nino is Giorgi's wife": a person named as another's relative knows them."""
    edges: list[Edge] = []
    for first, second in pairwise(mentions):
        if first.entity_type != "person" or second.entity_type != "person":
            continue
        between = [w for w in lows[first.end : second.start] if w not in HONORIFICS and w != "."]
        if between in (["is"], ["was"]) and lows[second.end : second.end + 1] == ["'s"]:
            role = lows[second.end + 1] if second.end + 1 < len(lows) else ""
            if role in gz.PERSONAL_ROLES:
                edges.append(Edge(Party.of(first), "KNOWS", Party.of(second), FRAME_CONFIDENCE, role))
    people = [m for m in mentions if m.entity_type == "person"]
    for earlier, person in pairwise(people):
        relative = _their_relative(lows, earlier, person)
        if relative is not None and not _I_ME.intersection(lows[earlier.end : person.start]):
            edges.append(Edge(Party.of(earlier), "KNOWS", Party.of(person), FRAME_CONFIDENCE, relative))
    return edges


def _their_relative(lows: list[str], earlier: Mention, person: Mention) -> str | None:
    """The relative's word in "her partner Maite", "his wife Abena", said of the person
    named before it: joined to that name ("My sister Itziar and her partner Maite") or
    opening a clause of its own (", and her fiancé Tigran uses ..."); not in an object
    ("Priya told Sam about her husband Raj": Priya's)."""
    k = person.start - 1
    if k < 1 or lows[k] not in gz.FAMILIAR_ROLES:
        return None
    j = k - 1
    while j > 0 and lows[j] in ROLE_ADJECTIVES:
        j -= 1
    if j < 1 or lows[j] not in ("his", "her"):
        return None
    joined = lows[j - 1] in ("and", "with", "&") and earlier.end == j - 1
    return lows[k] if joined or lows[j - 1] in (",", "and", "but") else None


_I_ME: Final = word_set("i me my i'm i've we us our")


def _titled_kin(speaker: Party, words: list[str], lows: list[str], mentions: list[Mention]) -> list[Edge]:
    """ "Aunt Rosa", "ask cousin Teo": a relative's word used as a title is the speaker's
    relative, unless someone else's ("his aunt Rosa")."""
    edges: list[Edge] = []
    for person in mentions:
        k = person.start - 1
        if person.entity_type != "person" or person.mine or k < 0 or lows[k] not in gz.FAMILIAR_ROLES:
            continue
        product = words[k][:1].isupper() and lows[k - 1] in ("a", "an", "the")  # "a Brother QL printer"
        if k == 0 or (lows[k - 1] not in _OTHERS and not product):
            edges.append(Edge(speaker, "KNOWS", Party.of(person), FRAME_CONFIDENCE, lows[k]))
    return edges


def _instruments(
    speaker: Party,
    words: list[str],
    lows: list[str],
    mentions: list[Mention],
    by_start: dict[int, Mention],
    by_end: dict[int, Mention],
    phrases: _Phrases,
) -> list[Edge]:
    """ "Keoni designs every frame in FreeCAD": the subject of a verb uses the tool
    its instrument phrase names."""
    edges: list[Edge] = []
    for tool in mentions:
        if tool.entity_type != "tool":
            continue
        p = tool.start - 1
        while p > 0 and lows[p] in _DETERMINERS:
            p -= 1
        if p < 1 or lows[p] not in INSTRUMENT_PREPOSITIONS:
            continue
        in_phrases = phrases.inside
        bare = phrases.starts.get(p)
        bare_on = bare is not None and bare.kind == "ON" and bare.end == p + 1
        if p in in_phrases and not bare_on:
            continue  # "depends on X", "works on X": the verb's own phrase, read elsewhere
        if lows[p] == "with" and tool.confidence < KNOWN_CONFIDENCE and not _object_before(lows, p, tool):
            continue  # "with Farrukh": a name only its slot typed may be a person
        # "my invoices go via X"; "Nadia is treasurer of X and keeps the accounts in Y"
        doer = speaker if owned_subject(words, lows, p, tool.end, by_start) else _joint_doer(lows, p, by_end)
        if doer is not None:
            edges.append(Edge(doer, "USES", Party.of(tool), INSTRUMENT_CONFIDENCE))
            continue
        verb, unsaid = instrument_verb(words, lows, p)
        if verb is None or lows[verb] in _WANTING or (bare_on and "," in lows[verb:p]) or _preferred(lows, verb, p):
            continue  # a lone "on" only in its verb's phrase ("I sell bowls on X"); not "I prefer to cook with X"
        agent = _agent(lows, verb, p, by_start)
        if agent is None and verb in in_phrases and not _unnamed_object(lows, verb, p, phrases, by_start, tool):
            continue  # a trigger verb's objects are the clause reader's ("replaced X with Y")
        to = max((k for k in range(verb, p) if lows[k] == "to"), default=verb - 1)
        controlled = infinitive_of(lows, to + 1)  # "taught me to write it in X", "wants us to log it in X"
        mine = controlled == "speaker" or unsaid or (to < verb and speaker_object(lows, verb, p))
        subject = speaker if mine else agent or _subject_of(speaker, lows, verb, by_end)
        if subject == speaker and not mine and _episode(lows, verb, p):
            continue  # "I drew the kitchen up in X", "we booked the trip through Y": done once, then
        if subject is not None and controlled != "asked":
            edges.append(Edge(subject, "USES", Party.of(tool), INSTRUMENT_CONFIDENCE))
        for doer in _co_doers(speaker, subject, lows, verb, by_end):
            edges.append(Edge(doer, "USES", Party.of(tool), INSTRUMENT_CONFIDENCE))
    return edges


# Kinds of verbs whose objects the clause reader takes no tool from: a tool after their
# unnamed object is their instrument ("I manage citations in X").
_TOOL_FREE_VERBS: Final = frozenset(("USE", "PLAY", "WORK_ON", "WORK_WITH"))


def _unnamed_object(
    lows: list[str], verb: int, prep: int, phrases: _Phrases, by_start: dict[int, Mention], tool: Mention
) -> bool:
    """Whether a verb of using, playing or working takes an object that names nothing
    before the instrument ("I play chess on X", "we use a shared calendar in Y", "I manage
    citations in Z"): the instrument is the one thing named, which the clause reader leaves."""
    trigger = phrases.starts.get(verb)
    if trigger is None or trigger.kind not in _TOOL_FREE_VERBS or not trigger.end < prep:
        return False
    if trigger.kind not in ("USE", "PLAY") and lows[prep] == "in" and tool.confidence < KNOWN_CONFIDENCE:
        return False  # "I manage a dairy farm in Taranaki": a guessed name after work may be a place
    between = range(trigger.end, prep)
    return all(lows[k].isalpha() and k not in by_start for k in between)


def _episode(lows: list[str], verb: int, prep: int) -> bool:
    """Whether the verb at ``verb`` tells one past doing of the speaker's ("I drew it in
    X", "we booked the trip through Y"): a simple past right after "I"/"we", not a
    perfect or a state ("I've moved it to X", "I'm stuck on X"), a beginning, keeping or
    placing that goes on ("started tracking with X", "kept prod on Y", "put it all in
    X"), nor one the rest of the sentence makes a habit or says holds now ("... and now I
    only post on X", "... as usual", "..., which I use for every ride")."""
    word = lows[verb]
    if not (word in PAST_FORMS or participle(word)) or word in _GOING_ON:
        return False
    k = verb - 1
    while k > 0 and lows[k] in ADVERBS:
        k -= 1
    said = k >= 0 and lows[k] in _PAST_SUBJECTS
    return said and not _habit(lows, verb, prep)


def _habit(lows: list[str], verb: int, prep: int) -> bool:
    """Whether the words from the verb to the end of its clause make its doing a habit or
    say it holds now ("... and now I only post on X", "... in X as usual", "with X, like
    every month", "with X, which I use for every ride")."""
    end = prep
    while end < len(lows) and lows[end] not in _CLAUSE_ENDS:
        end += 1
    said, more = lows[verb:end], []
    if lows[end : end + 1] == [","] and lows[end + 1 : end + 2] in (["like"], ["as"], ["which"]):
        more = list(takewhile(lambda w: w not in _CLAUSE_ENDS, lows[end + 2 :]))  # about the same doing
    which = lows[end + 1 : end + 2] == ["which"]
    used_again = which and not {"use", "uses"}.isdisjoint(more)
    alike = [] if which else more  # "..., which feels like another century now": no doing of it
    return used_again or not _HOLDING_NOW.isdisjoint(said + alike) or ("as", "usual") in pairwise(said)


def _preferred(lows: list[str], verb: int, prep: int) -> bool:
    """Whether the verb at ``verb`` is what someone prefers: an infinitive of a preference
    stands between it and the preposition ("I prefer to cook with X", "I am prefer to
    cook with X"), or a preference opens its clause ("he prefers we write the tests in X")."""
    tos = [k for k in range(max(verb, 1), prep) if lows[k] == "to"]
    if any(t.kind in ("PREFER", "LIKE") for k in tos for t in find_triggers(lows[k - 1 : k])):
        return True
    if verb < 2 or lows[verb - 1] not in _PLAIN_SUBJECTS:
        return False
    return any(t.kind == "PREFER" for t in find_triggers(lows[verb - 2 : verb - 1]))  # not "it's like we ..."


def _object_before(lows: list[str], p: int, tool: Mention) -> bool:
    """Whether "with" at ``p`` follows a verb's object ("tapes his wrists with X", "edit
    the photos with X"): the name after it is the instrument, unless a person's name."""
    owner = next((k for k in (p - 2, p - 3) if k >= 1 and lows[k] in _OBJECT_OWNERS), None)
    if owner is None or not all(w.isalpha() and not _time_noun(w) for w in lows[owner + 1 : p]):
        return False
    verb = owner - 1  # in the present: a habit, not an episode ("fixed the fence with a Ryobi drill")
    if lows[verb] in _PARTNERED:
        return False  # "I share the car with Oyelaran": a partner
    present = lows[verb].endswith("s") or (verb > 0 and lows[verb - 1] in _PLAIN_SUBJECTS)
    past = participle(lows[verb]) or lows[verb] in PAST_FORMS
    first = tool.name.split()[0]
    spelled = name_guess.word_type(first) == "tool" or not first.isalpha() or " " in tool.name  # not "Ngaio"
    return present and not past and spelled and not name_guess.is_world_name(first.lower())


def _time_noun(low: str) -> bool:
    """Whether a noun is a span of time or a day of it ("the weekend", "my Sundays")."""
    return low in TIME_NOUNS or low.removesuffix("s") in _DAYS


def _agent(lows: list[str], verb: int, end: int, by_start: dict[int, Mention]) -> Party | None:
    """The person a passive verb names as its doer before the instrument phrase: "the
    library is managed by Carys in MuseScore" (Carys uses MuseScore)."""
    if verb < 1 or lows[verb - 1] not in BE:
        return None
    for k in range(verb + 1, end):
        if lows[k] == "by" and (named := by_start.get(k + 1)) is not None and named.entity_type == "person":
            return Party.of(named)
    return None


def _subject_of(speaker: Party, lows: list[str], verb: int, by_end: dict[int, Mention]) -> Party | None:
    """Who does what the verb at ``verb`` says: "I"/"we", or a name ending right before
    it (past "is" and one comma: "Our podcast, Night Ferry, is recorded in ...", or ",
    who" and ", which")."""
    k = _subject_end(lows, verb)
    if k > 0 and lows[k - 1] in SUBJECT_PRONOUNS:
        return speaker
    if k > 0 and lows[k - 1] in ("he", "she"):
        return _last_person(by_end, k - 1)
    if relative_after_comma(lows, k):
        k -= 2  # "Ayşe, who books the pitches through X": the one "who" or "which" stands for
    named = by_end.get(k)
    if named is None:
        named = apposed_name(lows, k, by_end)  # "Mariam, our bookkeeper, reconciles ..."
    elif named.entity_type == "organization":
        named = _member_before(lows, named, by_end) or named
    if named is None and _reduced_passive(lows, verb, by_end):
        return speaker
    if named is None or named.entity_type not in ("person", "project", "organization"):
        return None
    if named.entity_type == "person" and lows[named.start - 1 : named.start] == ["in"]:
        return None  # "The hostel in Cusco handles ...": a place after its noun, no doer
    return Party.of(named)


def _joint_doer(lows: list[str], prep: int, by_end: dict[int, Mention]) -> Party | None:
    """The person the sentence opens with ("Nadia ...", "My partner, Ilse, ..."), who does
    the verb joined by "and" before the preposition at ``prep`` too, when no other subject
    stands between."""
    verb = joined_verb(lows, prep)
    if verb is None:
        return None
    joint = verb - 1
    people = [m for m in by_end.values() if m.entity_type == "person" and m.end <= joint]
    if not people:
        return None
    first = min(people, key=lambda m: m.start)
    opens = first.start == 0 or (first.mine and first.start <= 4)
    others = [m for m in people if m is not first] or _CLAUSE_BREAKS.intersection(lows[first.end : joint])
    subjects = not SUBJECT_PRONOUNS.isdisjoint(lows[first.end : joint]) or not {"he", "she"}.isdisjoint(lows[:joint])
    return Party.of(first) if opens and not others and not subjects else None


# A clause's ends, less the commas of an apposition ("My partner, Ilse, ... and keeps ...").
_CLAUSE_BREAKS: Final = (_CLAUSE_ENDS - {","}) | {"that", "if"}


def _member_before(lows: list[str], org: Mention, by_end: dict[int, Mention]) -> Mention | None:
    """The person an organization ending a subject is said of: "Kaveh from Lumenwright
    Electrical sends ...", "Kalani, the bookkeeper at Sunreef, reconciles ...", "Ms. Ng of
    Penfold & Marsh files ..."."""
    k = org.start - 1
    if k > 0 and lows[k] == "the":
        k -= 1
    if k < 1 or lows[k] not in ("from", "at", "of"):
        return None
    person = by_end.get(k)
    if person is None:
        opening = next((j for j in range(k - 1, max(0, k - 5), -1) if lows[j] == ","), None)
        plain = opening is not None and all(w.isalpha() for w in lows[opening + 1 : k])
        person = by_end.get(opening) if plain and opening is not None else None
    return person if person is not None and person.entity_type == "person" else None


def _reduced_passive(lows: list[str], verb: int, by_end: dict[int, Mention]) -> bool:
    """A note's "Receipts scanned w/ X": an unnamed thing the line opens with, then a
    participle; the speaker's own doing, as in the passive frame."""
    start = 1 if lows[:1] and lows[0] in BULLETS else 0
    opening = lows[start:verb]
    return (
        lows[verb].endswith("ed")
        and verb + 1 < len(lows)
        and lows[verb + 1] in INSTRUMENT_PREPOSITIONS  # "Backups stored on X", not "Mum recorded it in X"
        and 0 < len(opening) <= 2
        and all(
            low.isalpha() and low not in SUBJECT_PRONOUNS and low not in THIRD_PERSON and low not in gz.ROLES
            for low in opening
        )
        and not any(end > start for end in by_end if end <= verb)
    )


def _subject_end(lows: list[str], verb: int) -> int:
    """Where the subject of the verb at ``verb`` ends: before its adverbs, auxiliaries
    ("is recorded", "I've been logging") and one comma."""
    k = verb
    while k > 0 and lows[k - 1] in ADVERBS:
        k -= 1
    while k > 0 and lows[k - 1] in _AUXILIARIES:
        k -= 1
    if k > 0 and lows[k - 1] == ",":
        k -= 1
    return k


_NOT_DONE: Final = word_set("going gonna will told asked")  # a plan or an order, not a doing


def _co_doers(
    speaker: Party, subject: Party | None, lows: list[str], verb: int, by_end: dict[int, Mention]
) -> list[Party]:
    """Who does the verb with the subject: the person in "Soraya and I ...", the speaker in
    "Me and my colleague Aleksandra ..."."""
    if subject == speaker:
        partner = _joint_partner(lows, verb, by_end)
        return [partner] if partner is not None else []
    end = _subject_end(lows, verb)
    now = not past_tense(lows[end : verb + 1]) and not _NOT_DONE.intersection(lows[: verb + 1])
    if subject is not None and subject.kind == "person" and now and _me_and(lows, by_end.get(end)):
        return [speaker]  # "Me and my colleague N are doing it in X"; not "were doing", "are going to"
    return []


def _me_and(lows: list[str], person: Mention | None) -> bool:
    """Whether "me and" opens the subject the person ends ("Me and my colleague Aleksandra
    are doing ..."): the speaker does it too."""
    if person is None:
        return False
    k = person.start
    while k > 0 and k >= person.start - 3 and lows[k - 1] not in ("and", ",", "."):
        k -= 1  # past "my colleague"
    return k >= 2 and lows[k - 1] == "and" and lows[k - 2] == "me"


def _joint_partner(lows: list[str], verb: int, by_end: dict[int, Mention]) -> Party | None:
    """The person in "Soraya and I are rebuilding it in X": the speaker's co-subject."""
    k = _subject_end(lows, verb)
    named = by_end.get(k - 2) if k >= 3 and lows[k - 1] == "i" and lows[k - 2] == "and" else None
    opens = named is not None and (named.start == 0 or named.mine or lows[named.start - 1] in (",", ":", "-"))
    if named is None or named.entity_type != "person" or not opens:
        return None  # "I met Priya and I edit in X", "than Canon and I edit": no co-subject
    return Party.of(named)


def _last_person(by_end: dict[int, Mention], before: int) -> Party | None:
    """Whom "he" or "she" at ``before`` most likely means: the last person named before it
    in the sentence ("My coach Dilnoza she gives me ...")."""
    people = [m for end, m in by_end.items() if end <= before and m.entity_type == "person"]
    return Party.of(max(people, key=lambda m: m.end)) if people else None


_AUXILIARIES: Final = BE | word_set("am have has")


def _where(speaker: Party, lows: list[str], by_start: dict[int, Mention], by_end: dict[int, Mention]) -> list[Edge]:
    """ "Hollow Pine is where Tomasz works", "Ostervik Bank, where I work, ...": the
    worker belongs to the place."""
    edges: list[Edge] = []
    for i, low in enumerate(lows):
        if low != "where" or i < 2 or lows[i - 1] not in ("is", "was", ","):
            continue
        place = by_end.get(i - 1)
        if place is None or place.entity_type != "organization":
            continue
        worker: Party | None = None
        verb_at = len(lows)
        if lows[i + 1 : i + 2] and lows[i + 1] in SUBJECT_PRONOUNS:
            worker, verb_at = speaker, i + 2
        else:
            person = next((by_start[j] for j in range(i + 1, min(i + 5, len(lows))) if j in by_start), None)
            if person is not None and person.entity_type == "person":
                worker, verb_at = Party.of(person), person.end
        if worker is not None and verb_at < len(lows) and lows[verb_at] in WORKS:
            edges.append(Edge(worker, "PART_OF", Party.of(place), FRAME_CONFIDENCE))
    return edges


def _appositions(
    speaker: Party, words: list[str], lows: list[str], mentions: list[Mention], by_start: dict[int, Mention]
) -> list[Edge]:
    edges: list[Edge] = []
    for mention in mentions:
        if mention.entity_type == "project" and (
            own_work(words, lows, mention.start) or work_described(lows, mention.end)
        ):
            edges.append(Edge(speaker, "WORKS_ON", Party.of(mention), FRAME_CONFIDENCE))  # "my side project X"
        if mention.entity_type != "person":
            continue
        if mention.role and mention.mine:
            relation = relation_of(mention.role)
            for listed in [*listed_after(lows, mention, by_start), *_listed_before(lows, mention, mentions)]:
                edges.append(Edge(speaker, relation, Party.of(listed), FRAME_CONFIDENCE, mention.role))
    return edges


def _listed_before(lows: list[str], last: Mention, mentions: list[Mention]) -> list[Mention]:
    """People listed before ``last`` when the role follows the list: "Wulan and Budi, my
    old school friends"."""
    if lows[last.end : last.end + 2] != [",", "my"] and lows[last.end : last.end + 2] != [",", "our"]:
        return []
    return listed_before(lows, last, mentions)


def _role_on_work(speaker: Party, lows: list[str], by_start: dict[int, Mention]) -> list[Edge]:
    """ "Ferdinand is my tech lead on Cobalt Harbor", "my teammates on Atlas": a colleague's
    role the speaker has on a project puts the speaker on it too."""
    edges: list[Edge] = []
    for i, low in enumerate(lows):
        if low not in ("my", "our"):
            continue
        on = next((j for j in range(i + 2, min(i + 5, len(lows))) if lows[j] == "on"), None)
        if on is None or not all(w.isalpha() for w in lows[i + 1 : on]):
            continue
        work = by_start.get(on + 2 if lows[on + 1 : on + 2] == ["the"] else on + 1)
        role = " ".join(lows[i + 1 : on])
        if work is not None and work.entity_type == "project" and relation_of(role.rstrip("s")) == "WORKS_WITH":
            edges.append(Edge(speaker, "WORKS_ON", Party.of(work), FRAME_CONFIDENCE))
    return edges


def _pronoun_roles(speaker: Party, lows: list[str], mentions: list[Mention]) -> list[Edge]:
    """ "Joost is the warehouse lead, and he's my direct supervisor": a role said of
    "he" or "she" belongs to the last person named before it."""
    edges: list[Edge] = []
    for i, low in enumerate(lows):
        if low not in ("he", "she", "he's", "she's"):
            continue
        j = i + 1 if low.endswith("'s") else i + 2
        if low in ("he", "she") and lows[i + 1 : i + 2] not in (["is"], ["was"], ["'s"]):
            continue
        if lows[j : j + 1] != ["my"]:
            continue
        role = next((word for word in lows[j + 1 : j + 4] if word in gz.ROLES), "")
        named = [m for m in mentions if m.end <= i and m.entity_type == "person"]
        if named and role:
            edges.append(Edge(speaker, relation_of(role), Party.of(named[-1]), FRAME_CONFIDENCE, role))
    return edges
