"""Who belongs where and with whom: a person described by a job at an organization, the
speaker's workplace, institutions and groups ("my running club, the Ferrous Striders",
"our ward at Mercy Vale", "I'm on the billing squad with Chidi"). Pure."""

from __future__ import annotations

from itertools import pairwise
from typing import Final

from memledger.extraction import gazetteer as gz
from memledger.extraction import lexicon
from memledger.extraction.noun_types import GROUPS, institution_after, owned_institution, working_as
from memledger.extraction.patterns import (
    CLIENT_NOUNS,
    FORMER_WORDS,
    HONORIFICS,
    ROLE_ADJECTIVES,
    SITE_NOUNS,
    TEAM_NOUNS,
    UNDERTAKINGS,
    Edge,
    Mention,
    Party,
    named_team,
    word_set,
)
from memledger.extraction.roles import owned_by_speaker, relation_of, role_words
from memledger.extraction.triggers import JOBS, NOT_WORKPLACE

FRAME_CONFIDENCE = 0.8
_WORDS: Final = lexicon.sections("frame_words.txt")
_AT_WORK: Final = word_set("at for with")
_FROM_WORK: Final = _AT_WORK | {"from"}  # "Radka, a contractor from Halyard Digital"
_DESCRIBING: Final = word_set("the a an who our my")
_WE: Final = word_set("we i we've we're we'd i'm i've")
_DASHES: Final = frozenset(("-", "\u2013", "\u2014"))
_DESCRIBED_AS: Final = _DASHES | {"is", "was", ","}
_NOT_WORKPLACE: Final = NOT_WORKPLACE | frozenset(_WORDS["NOT_WORKPLACE_EXTRA"])
_UNITS: Final = frozenset(_WORDS["UNITS"])
_CLAUSE_ENDS: Final = word_set(". ; : ! ? , but because so while when which who")
_WORKERS: Final = JOBS | gz.WORK_ROLES | gz.SERVICE_ROLES
_NOT_HELD: Final = word_set("former previous ex old customer customers client clients")
_WORK_TIMES: Final = word_set("nights days weekends mornings evenings shifts part-time full-time")
_STATES: Final = word_set("little bit lot tad day week month year minute hour late early bad big huge")
_CLIENTS: Final = CLIENT_NOUNS | word_set("regular regulars patient guest visitor fan")
_IN_GROUP: Final = word_set("in with for into")
_ADVERBS: Final = word_set("all both also still just now already")
_NOT_TAKING_PART: Final = word_set("not never against about to from was were")


def membership_edges(
    speaker: Party, lows: list[str], mentions: list[Mention], by_start: dict[int, Mention]
) -> list[Edge]:
    """The PART_OF and WORKS_WITH edges a sentence's descriptions of belonging state."""
    return [
        *_workplaces(speaker, lows, mentions),
        *_at_our_workplace(speaker, lows, by_start),
        *_speakers_workplace(speaker, lows, mentions, by_start),
        *_own_institutions(speaker, lows, mentions),
        *_teammates(speaker, lows, by_start),
        *_from_work(speaker, lows, mentions),
        *_said_to_be(speaker, lows, mentions),
        *_own_units(speaker, lows, mentions),
        *_relative_workplaces(speaker, lows, mentions, by_start),
        *_set_at_work(lows, by_start),
        *_team_at(lows, mentions),
    ]


def _team_at(lows: list[str], mentions: list[Mention]) -> list[Edge]:
    """ "Sakshi heads the growth team at Lumenvale", "Léa is on the data team at Halloran":
    a person who leads, or is on, a team at an organization belongs to the organization."""
    edges = []
    for person, team, org in zip(mentions, mentions[1:], mentions[2:], strict=False):
        if person.entity_type != "person" or not named_team(team.name) or org.entity_type != "organization":
            continue
        at = [w for w in lows[team.end : org.start] if w != "the"]
        verb = [w for w in lows[person.end : team.start] if w not in ("the", "now", "also")]
        if at == ["at"] and (verb[-1:] in _LEADING or verb in (["is", "on"], ["works", "on"], ["'s", "on"])):
            edges.append(Edge(Party.of(person), "PART_OF", Party.of(org), FRAME_CONFIDENCE))
    return edges


_LEADING: Final = tuple([w] for w in ("runs", "leads", "heads", "manages", "ran", "led", "headed", "managed"))


def _set_at_work(lows: list[str], by_start: dict[int, Mention]) -> list[Edge]:
    """ "Over at Dunmore Plastics, Yaw sits on the quality team": a person the sentence,
    set at an organization, says works there (a verb of a post or a unit) belongs to it."""
    k = 1 if lows[:1] == ["at"] else 2 if lows[:2] in (["over", "at"], ["here", "at"]) else 0
    k += lows[k : k + 1] == ["the"]
    org = by_start.get(k) if k else None
    if org is None or org.entity_type != "organization" or lows[org.end : org.end + 1] != [","]:
        return []
    person = by_start.get(org.end + 1)
    if person is None or person.entity_type != "person":
        return []
    verb = lows[person.end : person.end + 2]
    if verb[:1] not in _POSTS and verb not in _POST_PHRASES:
        return []
    return [Edge(Party.of(person), "PART_OF", Party.of(org), FRAME_CONFIDENCE)]


_POSTS: Final = tuple([w] for w in ("runs", "leads", "manages", "heads", "works", "sits", "serves"))
_POST_PHRASES: Final = (["is", "on"], ["is", "in"], ["is", "the"], ["is", "a"], ["is", "an"], ["is", "our"])


def _workplaces(speaker: Party, lows: list[str], mentions: list[Mention]) -> list[Edge]:
    """ "Joost is the warehouse lead for Orrin Freight", "Bence, a paramedic with
    Tidewater Ambulance", "Rosalinda, who leads QA at Lumenfold": a person described
    by their job at an organization is part of it."""
    edges: list[Edge] = []
    for person, org in pairwise(mentions):
        if _named_after(lows, org=person, person=org):  # the firm first: "the installer from X, Dmitri"
            edges.append(Edge(Party.of(org), "PART_OF", Party.of(person), FRAME_CONFIDENCE))
            continue
        if person.entity_type != "person" or org.entity_type != "organization":
            continue
        between = lows[person.end : org.start]
        team = named_team(org.name)  # "leads the security guild": WORKS_ON
        ran = _runs(between) and not team and _ends_phrase(lows, org)
        unit = _unit_at(between) and org.name.lower() not in gz.PLACES
        office = (_office_of(between) or _office_is(between)) and not org.name.islower()
        office = office or _is_with(lows, between, org)
        if _works_in(between) or ran or unit or _site_run(between) or office or _is_at(lows, person, org):
            edges.append(Edge(Party.of(person), "PART_OF", Party.of(org), FRAME_CONFIDENCE))
            continue
        if _takes_part(between, org):  # "Kasia plays cornet in the Quay Brass Band"
            members = [Party.of(p) for p in (person, *listed_before(lows, person, mentions))]
            if lows[org.end : org.end + 2] == ["with", "me"]:
                members.append(speaker)  # "Kwame and Ingrid play in the X Band with me"
            edges.extend(Edge(p, "PART_OF", Party.of(org), FRAME_CONFIDENCE) for p in members)
            continue
        roled = len(between) == 3 and between[0] == "(" and between[1].isalpha() and between[2] == ","
        if (between == ["("] or roled) and lows[org.end : org.end + 1] == [")"]:  # "Szymon (guide, Tatra Trails)"
            edges.append(
                Edge(Party.of(person), "PART_OF", Party.of(org), FRAME_CONFIDENCE)
            )  # "Leonor (Mistral Bakery)"
            continue
        if not 3 <= len(between) <= 8 or between[0] not in _DESCRIBED_AS or between[-1] not in _FROM_WORK:
            continue
        described = between[0] in _DASHES or any(word in _DESCRIBING for word in between[1:3])
        comma = next((j for j in range(1, len(between)) if between[j] == ","), None)
        closed = comma is not None and between[comma + 1] not in _FROM_WORK  # "N, our lawyer, reviewed ... with O"
        if described and not closed and not _NOT_WORKPLACE & set(between) and not FORMER_WORDS & set(between):
            edges.append(Edge(Party.of(person), "PART_OF", Party.of(org), FRAME_CONFIDENCE))
    return edges


def _is_at(lows: list[str], person: Mention, org: Mention) -> bool:
    """ "My bro Hakan is at Tharcombe Credit Union", "My GP, Dr. X, is at O", "Fionnuala is at
    O now": a person introduced by their role, or said to be there now, belongs to the
    organization they are at or from; not "Marek is at Heathrow", "Ana is at O for a meeting"."""
    between = lows[person.end : org.start]
    said = between[1:] if between[:1] == [","] else between
    said = [w for w in said if w not in ("now", "the")]
    if said not in (["is", "at"], ["'s", "at"], ["is", "from"], ["'s", "from"]):
        return False
    after = lows[org.end : org.end + 1]
    now = "now" in between or after == ["now"]
    return (person.role is not None or now) and after not in (["for"], ["on"], ["in"], ["with"], ["today"])


def _takes_part(between: list[str], org: Mention) -> bool:
    """ "Kasia plays cornet in the X Band", "Ana and Bo all swim with the X Club", "Wairimu
    got into the X Orchestra": a person doing something in, with or for a named group
    (its name ends in a word for one) takes part in it."""
    words = between[:-1] if between[-1:] == ["the"] else between
    while words and words[0] in _ADVERBS:
        words = words[1:]
    if not 2 <= len(words) <= 3 or words[-1] not in _IN_GROUP or org.name.lower().rsplit(" ", 1)[-1] not in GROUPS:
        return False
    return all(w.isalpha() and w not in _NOT_TAKING_PART for w in words)


def _runs(between: list[str]) -> bool:
    """ "Kofi runs Driftwood Systems", "Hrafnhildur, my sister-in-law, runs the bakery X":
    the person, past an apposition, runs the organization named after the verb."""
    verbs = [i for i, w in enumerate(between) if w in _BELONG_TO]
    if not verbs:
        return False
    k = verbs[-1]
    before, after = between[:k], between[k + 1 :]
    apposed = not before or (before[0] == "," and before[-1] == "," and len(before) <= 6) or before == [",", "who"]
    described = after[:1] == ["the"] and 2 <= len(after) <= 3 and all(w.isalpha() for w in after[1:])
    named = after in ([], ["the"]) or described  # "runs the bakery X", "who runs the pottery studio X"
    return apposed and named


def _site_run(between: list[str]) -> bool:
    """ "Fionn runs the Dublin office of X": a person running a site of an organization."""
    return (
        3 <= len(between) <= 5
        and between[0] in _RUNNING_UNITS
        and between[1] == "the"
        and between[-1] == "of"
        and between[-2] in SITE_NOUNS
    )


def _unit_at(between: list[str]) -> bool:
    """ "Halvard runs the cardiac rehab group at X", "Nilufar teaches year 9 science at X":
    a person running, leading or teaching a part of an organization is part of it."""
    if len(between) < 4 or between[0] not in _RUNNING_UNITS or between[-1] != "at" or between[1] != "the":
        return False
    phrase = between[2:-1]
    plain = all(w.isalpha() or "-" in w for w in phrase) and len(phrase) <= 4
    return plain and not _NOT_WORKPLACE & set(between)


def _ends_phrase(lows: list[str], org: Mention) -> bool:
    """Whether the organization is the verb's whole object, not a word before a noun ("leads
    the Deloitte audit", "owns Amazon shares") nor one word after "the" ("owns the Tesla")."""
    after = lows[org.end] if org.end < len(lows) else ""
    single = org.end - org.start == 1 and lows[org.start - 1] == "the"
    return not single and (not after.isalpha() or after in _AFTER_OBJECT)


def _office_of(between: list[str]) -> bool:
    """ "Ana, treasurer of the X", "I'm Yusra Qureshi, treasurer of X", "Ravi, contractor
    for X": an office or a job in it, said beside the name (not a former one)."""
    words = between[:-1] if between[-1:] == ["the"] else between
    words = words[1:] if words[:1] == ["here"] else words
    if len(words) not in (3, 4) or words[0] != "," or words[-1] not in ("of", "at", "for"):
        return False
    return not FORMER_WORDS.intersection(words) and _an_office(words[-2])


def _is_with(lows: list[str], between: list[str], org: Mention) -> bool:
    """ "Svetlana is with Deloitte now": employed there; not "with Vodafone on a contract",
    "with Tesla on this one", "with Vodafone, I'm with EE" (a customer's, an ally's)."""
    after = lows[org.end : org.end + 1]
    ends = after == [] or after[0] in _WITH_ENDS  # "is with Fenwick & Moor and she's ...", "with X's desk"
    if after == [","] and "with" in lows[org.end + 1 : org.end + 5]:
        return False  # "Sofia is with Vodafone, I'm with EE": customers compared
    said = between[:-1] if between[-1:] == ["the"] else between  # "is with the Riverbend Harriers"
    return said in (["is", "with"], [",", "is", "with"], ["'s", "with"]) and ends


# What may follow the organization someone "is with": the end of the clause, not a purpose
# or a term ("with Vodafone on a contract", "with Tesla on this one").
_WITH_ENDS: Final = word_set(". now these since as ! , and ; 's")


def _office_is(between: list[str]) -> bool:
    """ "Mbali is the captain of the X", "N is the director of the Y": an office in the
    organization, said with a copula (not "was": a former one)."""
    words = between[:-1] if between[-1:] == ["the"] else between
    if len(words) == 3:
        words = [words[0], "the", *words[1:]]  # "Emilia is captain of the X", without the article
    if len(words) != 4 or words[0] not in ("is", "'s") or words[1] not in ("the", "a", "an") or words[3] != "of":
        return False
    return _an_office(words[2]) and words[2] not in ("member", "owner")  # "the owner of the Tesla": a thing owned


def _an_office(role: str) -> bool:
    """Whether a noun names an office or a job held in an organization, not its client's."""
    return role in _OFFICES or (role in gz.WORK_ROLES and role not in _CLIENTS)


def _works_in(between: list[str]) -> bool:
    """ "Dilnoza works as a nurse in Sunvale Hospital", "Tomás is accountant in Ferreira &
    Lobo", "she is working in Saigontourist": a person's work in an organization."""
    if not 2 <= len(between) <= 6 or between[-1] not in ("in", "at", "for"):
        return False
    working = any(w.startswith("work") for w in between)
    job = between[0] in ("is", "was", "works", "work") and any(w in _WORKERS for w in between)
    return (working or job) and not _NOT_WORKPLACE & set(between) and "," not in between


def _named_after(lows: list[str], org: Mention, person: Mention) -> bool:
    """ "The installer from Brightspark Electrical, Dmitri, ...", "the cardiologist at
    Sint-Elooi Hospital, Dr. Maes": a worker described by a noun, then named."""
    if org.entity_type != "organization" or person.entity_type != "person" or org.start < 3:
        return False
    between = [w for w in lows[org.end : person.start] if w not in HONORIFICS and w != "."]
    described = lows[org.start - 1] in _FROM_WORK and lows[org.start - 3] in _DESCRIBING
    return between == [","] and described


def _at_our_workplace(speaker: Party, lows: list[str], by_start: dict[int, Mention]) -> list[Edge]:
    """ "At Quillfeather Press we typeset in ...": the speaker works where "we" are."""
    start = 1 if lows[:1] == ["at"] else None
    org = by_start.get(start) if start is not None else None
    if org is None or org.entity_type != "organization":
        return []
    following = lows[org.end : org.end + 2]
    if following[:1] == [","]:
        following = following[1:]
    if following[:1] and following[0] in _WE:
        return [Edge(speaker, "PART_OF", Party.of(org), FRAME_CONFIDENCE)]
    return []


def _speakers_workplace(
    speaker: Party, lows: list[str], mentions: list[Mention], by_start: dict[int, Mention]
) -> list[Edge]:
    """ "I'm a site manager for Veldmark Bouw", "I manage the front desk at the Kittiwake
    Hotel", "Kaveh and I are sous chefs at X": the speaker (and whoever is named with
    them), described by a job at an organization, is part of it."""
    edges: list[Edge] = []
    for i, low in enumerate(lows[:-3]):
        if low not in _SPEAKER_SUBJECTS:
            continue
        said = low in ("i'm", "we're") or lows[i + 1] in ("am", "are")  # what the speaker is, not does
        for k in range(i + 2, min(i + 9, len(lows) - 1)):
            if lows[k] in _CLAUSE_ENDS:
                break
            at_org = by_start.get(k + 1) or by_start.get(k + 2) if lows[k + 1] == "the" else by_start.get(k + 1)
            if at_org is None or at_org.entity_type != "organization":
                continue
            preposition = lows[k] in _AT_WORK or (lows[k] == "in" and _holds_job(lows[i + 1 : k]))  # "I am nurse in X"
            preposition = preposition or (lows[k] == "of" and _post_held(lows[i + 1 : k]))  # "the treasurer of X"
            if not preposition or (lows[k] == "in" and named_team(at_org.name)):
                continue
            if _job_said(lows[i + 1 : k], lows[k], several=said):
                edges.append(Edge(speaker, "PART_OF", Party.of(at_org), FRAME_CONFIDENCE))
                for person in _with_me(lows, i, mentions) if said else []:
                    edges.append(Edge(Party.of(person), "PART_OF", Party.of(at_org), FRAME_CONFIDENCE))
                break
    return edges


_SPEAKER_SUBJECTS: Final = word_set("i i'm we we're")


def _with_me(lows: list[str], i: int, mentions: list[Mention]) -> list[Mention]:
    """The people named before "and I" at ``i``: "Kaveh and I", "Ana, Bo and I"."""
    before = [m for m in mentions if m.end == i - 1 and lows[i - 1] == "and" and m.entity_type == "person"]
    return [*before, *(p for m in before for p in listed_before(lows, m, mentions))]


def _several_of_a_job(phrase: list[str]) -> bool:
    """ "(are) sous chefs", "(are) the only two nurses": a plural noun phrase for the job
    the speaker shares with others, not for clients ("regulars", "guests")."""
    while phrase[:1] and phrase[0] in _COUNTED:
        phrase = phrase[1:]
    plural = 1 <= len(phrase) <= 3 and phrase[-1].endswith("s") and all(w.isalpha() for w in phrase)
    return plural and _CLIENTS.isdisjoint(w.removesuffix("s") for w in phrase)


def _holds_job(words: list[str]) -> bool:
    """Whether the words name a job the lists know, one or several ("sous chefs"), or one
    worked as ("work as a cook")."""
    return any(_a_job(w) or (len(w) > 3 and _a_job(w.removesuffix("s"))) for w in words) or working_as(words)


def _a_job(word: str) -> bool:
    return word in JOBS or word in gz.WORK_ROLES


def _post_held(words: list[str]) -> bool:
    """ "(am) the treasurer", "the practice manager": a post the speaker holds, named by a
    job the lists know after "the"."""
    phrase = words[1:] if words[:1] == ["am"] else words
    held = phrase[:1] == ["the"] and 2 <= len(phrase) <= 4 and _holds_job(phrase[1:])
    return held and _CLIENTS.isdisjoint(phrase) and _NOT_HELD.isdisjoint(phrase)  # not "the former CEO of X"


def _job_said(words: list[str], preposition: str, *, several: bool = False) -> bool:
    """Whether the words after "I" name the speaker's job, studies or what they run at
    work: a job the lists know, or a short noun phrase the speaker is at or for a place
    ("I'm a line cook at X"), or, after "am"/"are" (``several``), a plural one ("we're sous
    chefs at X"), unless it names a client or a state ("a regular at X", "a little late
    with X", "a day late for X")."""
    if _holds_job(words) or words[:1] in (["manage"], ["run"], ["lead"]):
        return True
    if words[:1] in (["work"], ["volunteer"]) and 0 < len(words) - 1 <= 2 and _WORK_TIMES.issuperset(words[1:]):
        return True  # "I work nights at X"
    if words[:2] == ["doing", "my"] or words[:1] == ["studying"]:
        return _CLIENTS.isdisjoint(words)
    phrase = words[1:] if words[:1] in (["am"], ["are"]) else words
    described = phrase[:1] in (["a"], ["an"]) and 2 <= len(phrase) <= 4 and preposition in ("at", "for")
    plural = several and preposition in ("at", "for") and _several_of_a_job(phrase)
    described = described or _post_held(words) or plural
    return described and _CLIENTS.isdisjoint(phrase) and _STATES.isdisjoint(phrase) and not phrase[-1].endswith("ed")


def _own_institutions(speaker: Party, lows: list[str], mentions: list[Mention]) -> list[Edge]:
    """ "My running club, the Ferrous Striders, ...": the speaker is part of it."""
    return [
        Edge(speaker, "PART_OF", Party.of(m), FRAME_CONFIDENCE)
        for m in mentions
        if m.entity_type == "organization" and (owned_institution(lows, m.start) or institution_after(lows, m.end))
    ]


def _own_units(speaker: Party, lows: list[str], mentions: list[Mention]) -> list[Edge]:
    """ "Our ward at Mercy Vale Hospital", "my cohort at Stonebridge College": a group of
    the speaker's inside an organization makes the speaker part of it."""
    edges: list[Edge] = []
    # the tokens of people's names: "my best friend Nyasha coaches at X" is Nyasha's unit
    named = {k for m in mentions if m.entity_type == "person" for k in range(m.start, m.end)}
    for org in mentions:
        j = org.start - 1 - (lows[org.start - 1 : org.start] == ["the"])
        if org.entity_type != "organization" or j < 2 or lows[j] not in ("at", "in"):
            continue
        noun = lows[j - 1]
        unit = noun in TEAM_NOUNS or noun in gz.ORG_SUFFIXES or noun in _UNITS
        if unit and owned_by_speaker(lows, j - 2) and not {j - 1, j - 2, j - 3} & named:
            edges.append(Edge(speaker, "PART_OF", Party.of(org), FRAME_CONFIDENCE))
    return edges


def _teammates(speaker: Party, lows: list[str], by_start: dict[int, Mention]) -> list[Edge]:
    """ "I'm on the ingestion squad with Chidi and Ane", "I'm in the robotics club with
    Sora", "I'm on the Quayside Harvest project with Signe": the people the speaker is in a
    group or on a project with work with the speaker."""
    edges: list[Edge] = []
    for w, low in enumerate(lows):
        if low != "with" or w < 3 or not (grouped(lows, w) or _project_before(lows, w, by_start) is not None):
            continue
        window = lows[max(0, w - 7) : w]
        member = any(
            a in ("i'm", "im", "we're") or (a in ("i", "we") and b in ("am", "are")) for a, b in pairwise(window)
        )
        first = by_start.get(w + 1)
        if member and first is not None and first.entity_type == "person" and ("on" in window or "in" in window):
            for named in (first, *listed_after(lows, first, by_start)):
                edges.append(Edge(speaker, "WORKS_WITH", Party.of(named), FRAME_CONFIDENCE))
    return edges


def _project_before(lows: list[str], w: int, by_start: dict[int, Mention]) -> Mention | None:
    """The project named right before the "with" at ``w``, past a noun for a piece of work
    ("the Quayside Harvest project with ...")."""
    k = w - 1 if w and lows[w - 1] in UNDERTAKINGS else w
    return next((m for m in by_start.values() if m.end == k and m.entity_type == "project"), None)


def _from_work(speaker: Party, lows: list[str], mentions: list[Mention]) -> list[Edge]:
    """ "Dawit and Selam from work": people the speaker knows from work work with them."""
    edges: list[Edge] = []
    for person in mentions:
        if person.entity_type == "person" and lows[person.end : person.end + 2] == ["from", "work"]:
            for named in (person, *listed_before(lows, person, mentions)):
                edges.append(Edge(speaker, "WORKS_WITH", Party.of(named), FRAME_CONFIDENCE))
    return edges


def _said_to_be(speaker: Party, lows: list[str], mentions: list[Mention]) -> list[Edge]:
    """ "Kofi is on my team", "Kofi and Ama are on my team", "Kofi, Ama and Yaw are the
    other sous chefs on my shift", "Kofi and Ama are my cousins": each person named before
    the verb is said to be on the speaker's team or in a role of the speaker's."""
    edges: list[Edge] = []
    for person in mentions:
        k = person.end
        if person.entity_type != "person" or lows[k : k + 1] not in (["is"], ["are"]):
            continue
        k += 1
        while k < len(lows) and lows[k] in _ALL_OF_THEM:
            k += 1
        relation = _teams_or_roles(lows, k)
        if relation is not None:
            for named in (person, *listed_before(lows, person, mentions)):
                edges.append(Edge(speaker, relation, Party.of(named), FRAME_CONFIDENCE))
    return edges


def _teams_or_roles(lows: list[str], k: int) -> str | None:
    """The speaker's relation to whoever is what the words at ``k`` say: "on my team"
    (WORKS_WITH), "my cousins", "the other nurses on my ward" (the role's relation)."""
    said = lows[k : k + 5]
    if said[:2] in (["on", "my"], ["on", "our"], ["in", "my"], ["in", "our"]):
        return "WORKS_WITH" if any(w in TEAM_NOUNS for w in said[2:4]) else None
    if said[:1] == ["the"] and said[1:2] and said[1] in _OTHERS:  # "the other sous chefs on my shift": co-workers
        rest = lows[k + 2 : k + 8]
        if rest[:1] == [] or rest[0].removesuffix("s") in _CLIENTS | gz.FAMILIAR_ROLES:
            return None  # "the other patients on my ward", "the two kids on my team"
        at = next((i for i, w in enumerate(rest) if w in ("on", "in")), None)
        if at is None or not 0 < at <= 3 or rest[at + 1 : at + 2] not in (["my"], ["our"]):
            return None
        return "WORKS_WITH" if rest[at + 2 : at + 3] and rest[at + 2] in _WORK_UNITS else None
    if said[:1] not in (["my"], ["our"]):
        return None
    j = k + 1
    while j < len(lows) and lows[j] in ROLE_ADJECTIVES | {"other", "fellow"}:
        j += 1
    role, _ = role_words(lows, j + 1) if j + 1 < len(lows) else (None, j)
    word = lows[j] if j < len(lows) else ""
    single = word[:-1] if word.endswith("s") else word
    role = role if role is not None else single if single in gz.ROLES else None
    if role is None or "'s" in lows[j : j + 3] or "'" in lows[j : j + 3]:
        return None  # "Mr. Obrecht is my son's maths teacher", "my kids' teachers": theirs
    return relation_of(role)


_ALL_OF_THEM: Final = word_set("also both all still now")
_OTHERS: Final = word_set("other two three four five six seven eight nine ten")  # "the three backend devs on my squad"
_COUNTED: Final = _OTHERS | word_set("the only both all")  # "(are) the only two nurses at X"
_WORK_UNITS: Final = (TEAM_NOUNS | _UNITS | word_set("shift rota floor line")) - word_set("class cohort")


def grouped(lows: list[str], w: int) -> bool:
    """Whether a team, club or institution is named right before the "with" at ``w``."""
    return any(n in TEAM_NOUNS or n in gz.ORG_SUFFIXES for n in lows[max(0, w - 3) : w])


def listed_after(lows: list[str], first: Mention, by_start: dict[int, Mention]) -> list[Mention]:
    """People listed after ``first``: "my cousins Ana, Bo and Cy"."""
    listed: list[Mention] = []
    end = first.end
    while end < len(lows) and lows[end] in (",", "and", "&"):
        following = by_start.get(end + 1) or (by_start.get(end + 2) if lows[end + 1 : end + 2] == ["and"] else None)
        if following is None or following.entity_type != "person":
            break
        listed.append(following)
        end = following.end
    return listed


def listed_before(lows: list[str], last: Mention, mentions: list[Mention]) -> list[Mention]:
    """People listed right before ``last``, one joining word apart ("Wulan and Budi",
    "Ikaika, Mirela and Tenzin"), nearest first."""
    listed: list[Mention] = []
    start = last.start
    for mention in reversed([m for m in mentions if m.end <= last.start]):
        if mention.entity_type != "person" or lows[mention.end : start] not in (["and"], [","], ["&"]):
            break
        listed.append(mention)
        start = mention.start
    return listed


# Verbs whose doer belongs where a relative clause says: "X, where I volunteer",
# "X, which I manage", "Nadia, who now runs X".
_BELONG_THERE: Final = word_set("work works volunteer volunteers teach teaches study studies train trains intern")
_BELONG_TO: Final = word_set(
    "manage manages run runs own owns founded co-founded lead leads coach coaches chair chairs captain captains"
)
# Offices held in an organization, said of a person in apposition: "Ana, treasurer of X".
_OFFICES: Final = word_set(
    "treasurer secretary chair chairman chairwoman captain president founder owner director head member manager"
)
_RELATIVE: Final = word_set("where which that who")
# "runs the pastry section at X": a part of the organization led or taught, not owned.
_RUNNING_UNITS: Final = word_set(
    "run runs manage manages lead leads head heads teach teaches coach coaches supervise supervises oversee oversees"
    " chair chairs direct directs"
)
_AFTER_OBJECT: Final = word_set("with in at for since now on from and but")


def _there_for_good(lows: list[str], end: int) -> bool:
    """Whether "who's at X" ends at X (or "X now"), a place one belongs to, not one
    visited "right now", "for an interview", "since Monday"."""
    k = end + 1 if lows[end : end + 1] == ["now"] else end
    return k >= len(lows) or lows[k] in (",", ".", ";", ")", "!")


def _relative_workplaces(
    speaker: Party, lows: list[str], mentions: list[Mention], by_start: dict[int, Mention]
) -> list[Edge]:
    """ "The Riverside Co-op, where I volunteer, ...", "Crumbwell Bakery, which I manage",
    "Maison Calloway, the shop where Odile works", "The school where I teach, Larchfield
    High, ...", "Kofi, who now runs Driftwood Systems", "Citlali, who's at Bramwell
    College": whoever the relative clause says
    works there belongs to the organization."""
    edges: list[Edge] = []
    for org in mentions:
        if org.entity_type != "organization":
            continue
        after = org.end + 1 if lows[org.end : org.end + 1] == [","] else None
        if after is not None and lows[after : after + 1] == ["the"] and after + 2 < len(lows):
            after += 2  # "X, the shop where ..."
        member = _relative_member(speaker, lows, after, by_start) if after is not None else None
        if member is None and org.start >= 5 and lows[org.start - 1] == ",":
            opening = max((k for k in range(org.start - 5, org.start - 1) if lows[k] == "where"), default=None)
            member = _relative_member(speaker, lows, opening, by_start) if opening is not None else None
        if member is not None:
            edges.append(Edge(member, "PART_OF", Party.of(org), FRAME_CONFIDENCE))
    for person in mentions:
        if person.entity_type != "person" or lows[person.end : person.end + 1] != [","]:
            continue
        relative = lows[person.end + 1 : person.end + 3]
        being_at = relative[:1] == ["who's"] or relative == ["who", "is"]  # "Citlali, who's at X now"
        if not being_at and relative[:1] != ["who"]:
            continue
        k = _after_adverbs(lows, person.end + (2 if relative[:1] == ["who's"] else 3 if being_at else 2))
        led = by_start.get(k + 1) or (by_start.get(k + 2) if lows[k + 1 : k + 2] == ["the"] else None)
        if led is None or led.entity_type != "organization" or k >= len(lows):
            continue
        if being_at and (lows[k] != "at" or not _there_for_good(lows, led.end)):
            continue  # "Kofi, who's at Starbucks right now": a visit
        if being_at or lows[k] in _BELONG_TO:
            team = named_team(led.name)  # "leads the insights team"
            edges.append(Edge(Party.of(person), "WORKS_ON" if team else "PART_OF", Party.of(led), FRAME_CONFIDENCE))
    return edges


def _relative_member(speaker: Party, lows: list[str], at: int, by_start: dict[int, Mention]) -> Party | None:
    """Who belongs, when a relative clause opens at ``at``: "where I work", "which we run",
    "where Odile works"; None when it says no such thing."""
    if at >= len(lows) or lows[at] not in _RELATIVE:
        return None
    subject = at + 1
    named = by_start.get(subject)
    member = speaker if lows[subject : subject + 1] in (["i"], ["we"]) else None
    end = subject + 1
    if member is None and named is not None and named.entity_type == "person":
        member, end = Party.of(named), named.end
    end = _after_adverbs(lows, end)
    verbs = _BELONG_THERE if lows[at] == "where" else _BELONG_TO
    return member if member is not None and end < len(lows) and lows[end] in verbs else None


def _after_adverbs(lows: list[str], k: int) -> int:
    """The index after any adverbs at ``k`` ("who now runs", "where I still work")."""
    while k < len(lows) and lows[k] in ("now", "still", "also"):
        k += 1
    return k
