"""The passive frame: "billing is handled by Stripe" (the speaker's use of Stripe),
"Lantern is maintained by Osric" (Osric works on Lantern), "The Riverbank fieldwork
depends on X and is led by Y". An unnamed patient of a verb of use is the speaker's. Pure."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import takewhile
from typing import Final

from memledger.extraction import gazetteer as gz
from memledger.extraction import lexicon
from memledger.extraction.appositions import apposed_name
from memledger.extraction.finite_verbs import PRONOUN_SUBJECTS, USED_BY
from memledger.extraction.memberships import FRAME_CONFIDENCE, listed_after
from memledger.extraction.owned_subjects import names_people, someone
from memledger.extraction.patterns import KNOWN_CONFIDENCE, Edge, Mention, Party, word_set
from memledger.extraction.senses import participle as participle_form
from memledger.extraction.triggers import is_filler

# Participles whose agent, a person, works on their subject: "Nightjar is maintained by Osric".
MADE_BY: Final = frozenset(lexicon.sections("frame_words.txt")["MADE_BY"])
BE: Final = word_set("is are was were be been being 's")
_JOINING: Final = frozenset(["and", "or", "but", "then", "which", "that", "who"])
_INSTRUMENTS: Final = word_set("with in on through via using")
_PRONOUNS: Final = PRONOUN_SUBJECTS | {"it"}
# Participles whose "with"/"through" names a feeling's cause or a counterpart, no tool used.
_NO_INSTRUMENT: Final = word_set(
    "impressed shocked frustrated obsessed pleased disappointed annoyed bored stuck satisfied delighted "
    "thrilled fed closed signed agreed partnered funded financed sponsored mentored compared"
)
_THEIR: Final = word_set("his her their your")
_SUBJECT_STOPS: Final = _JOINING | word_set(", ; : . ( because when while")
_PRICED: Final = word_set("billed paid charged priced invoiced quoted")  # "... billed in GBP": a currency
_WITH_SPEAKER: Final = word_set("our me us")  # doers the speaker is among: "our team", "my family and me"
_RELATIVE_STOPS: Final = word_set("who that which , ; because when while")  # where the doers' phrase ends


def passive_edges(
    speaker: Party, words: list[str], lows: list[str], by_start: dict[int, Mention], by_end: dict[int, Mention]
) -> list[Edge]:
    """The edges of each "<patient> is <participle> by <agent>" in the sentence."""
    edges: list[Edge] = []
    for i, low in enumerate(lows):
        if low in _INSTRUMENTS and i >= 2 and participle_form(lows[i - 1]):
            edges.extend(_instrument_edge(lows, by_start, by_end, i))
        if low != "by" or i < 2:
            continue
        participle = i - 1
        be = participle - 1
        while be >= 0 and is_filler(lows[be]):
            be -= 1
        if be < 0 or lows[be] not in BE:
            continue
        if lows[be] == "being" and be > 0 and lows[be - 1] in BE:
            be -= 1  # "is being led by N": the progressive's own "is"
        patient = _before(lows, by_end, be)
        if patient is None and be > 0 and lows[be - 1] == "and":
            patient = _opening_subject(by_start)
        me_first = lows[i + 1 : i + 3] == ["me", "and"]  # "led by me and Temitope"
        agent = _after(lows, by_start, i + 3 if me_first else i + 1)
        if patient is None and agent is not None and agent.entity_type == "tool":
            patient = _setting(lows, by_start) or _set_after(lows, by_start, agent)  # "At O the X is tracked by T"
        if agent is None and (_named_doer(words, lows, i + 1) or _others(lows[i + 1 : i + 6])):
            continue  # "used by the Vaskel storefront", "used by all my family": someone else's
        if (patient is None or patient.entity_type == "tool") and _theirs(words, lows, be):
            continue  # "payroll at my cousin's bakery is handled by X": not the speaker's
        agents = [agent, *listed_after(lows, agent, by_start)] if agent is not None else [None]
        # "search in Pondskater is handled by X": Pondskater's; "backups in Proxmox" stay the speaker's
        contained = patient is not None and patient.confidence < KNOWN_CONFIDENCE and _inside(lows, patient)
        for doer in agents:  # "led by Ngaire and Tevita": each of them
            edge = _passive_edge(speaker, lows[participle], patient, doer, contained=contained)
            if edge is not None:
                edges.append(edge)
        edges.extend(_with_me(speaker, lows[participle], patient, agents, me_first or _me_among(lows[i + 1 :])))
    return edges


def _me_among(doers: list[str]) -> bool:
    """Whether the speaker closes the doers after "by": "led by Temitope and me"."""
    phrase = list(takewhile(lambda w: w not in _RELATIVE_STOPS and w not in (".", ";", "!"), doers))
    return "me" in phrase and phrase[phrase.index("me") - 1 : phrase.index("me")] == ["and"]


def _with_me(
    speaker: Party, verb: str, patient: Mention | None, agents: Sequence[Mention | None], among: bool
) -> list[Edge]:
    """The speaker's part in work done "by N and me" (``among``): the work, and the people
    beside them."""
    if not among or verb not in MADE_BY or patient is None or patient.entity_type not in ("project", "organization"):
        return []
    people = [a for a in agents if a is not None and a.entity_type == "person"]
    if not people:
        return []
    edges = [Edge(speaker, "WORKS_ON", Party.of(patient), FRAME_CONFIDENCE)]
    return edges + [Edge(speaker, "WORKS_WITH", Party.of(person), FRAME_CONFIDENCE) for person in people]


def _inside(lows: list[str], patient: Mention) -> bool:
    """Whether the name is what a function is part of: "search in Pondskater", "billing
    for Halyard" (a lower-case noun, then "in"/"for", then the name)."""
    k = patient.start - (lows[patient.start - 1 : patient.start] == ["the"])  # "secrets for the Juniper cluster"
    return k >= 2 and lows[k - 1] in ("in", "for") and lows[k - 2].isalpha() and lows[k - 2] not in BE


def _others(doers: list[str]) -> bool:
    """Whether the unnamed doers after "by" are people other than the speaker ("all my
    family", "the nurses"); not "our team", "my family and me"."""
    phrase = list(takewhile(lambda w: w not in _RELATIVE_STOPS, doers))  # not "a family who cooked us ..."
    return any(names_people(w) for w in phrase) and _WITH_SPEAKER.isdisjoint(phrase)


def _theirs(words: list[str], lows: list[str], be: int) -> bool:
    """Whether the subject before the verb at ``be`` is someone else's ("her payroll",
    "my cousin's bakery", "Maria's invoices"), back to the clause's start."""
    k = be - 1
    while k >= 0 and lows[k] not in _SUBJECT_STOPS:
        if lows[k] in _THEIR:
            return True
        named = k > 0 and words[k - 1][:1].isupper() and lows[k - 1] not in gz.NOT_NAMES  # not "Monday's"
        if lows[k] in ("'s", "'") and k > 0 and (someone(lows[k - 1]) or named):
            return True
        k -= 1
    return False


def _passive_edge(
    speaker: Party, verb: str, patient: Mention | None, agent: Mention | None, *, contained: bool = False
) -> Edge | None:
    if verb == "used" and agent is not None and patient is not None and patient.entity_type in ("tool", "project"):
        return Edge(Party.of(agent), "USES", Party.of(patient), FRAME_CONFIDENCE)  # "X is used by the Y app"
    if verb in USED_BY and agent is not None and agent.entity_type == "tool":
        user = speaker if patient is None or patient.entity_type == "tool" else Party.of(patient)
        if patient is not None and contained:
            user = Party.of(patient)  # "search in Pondskater is handled by X": Pondskater's
        if user.kind in ("user", "project", "organization", "person"):
            return Edge(user, "USES", Party.of(agent), FRAME_CONFIDENCE)
    if verb in USED_BY and patient is not None and patient.entity_type == "tool":
        if agent is None:
            return Edge(speaker, "USES", Party.of(patient), FRAME_CONFIDENCE)
        if agent.entity_type in ("project", "organization", "person"):
            return Edge(Party.of(agent), "USES", Party.of(patient), FRAME_CONFIDENCE)
    if agent is None or patient is None or verb not in MADE_BY:
        return None
    if agent.entity_type == "person" and patient.entity_type in ("project", "organization"):
        return Edge(Party.of(agent), "WORKS_ON", Party.of(patient), FRAME_CONFIDENCE)
    return None


def _instrument_edge(lows: list[str], by_start: dict[int, Mention], by_end: dict[int, Mention], i: int) -> list[Edge]:
    """ "At Fernleigh Logistics the pallets are scanned with X", "Tern is hosted on X":
    the organization or project the things are of, or the sentence is set at, uses the
    tool they are handled with."""
    be = i - 2
    while be >= 0 and is_filler(lows[be]):
        be -= 1
    tool = _after(lows, by_start, i + 1)
    verb = lows[i - 1]
    if verb in _NO_INSTRUMENT or (lows[i] == "in" and verb in _PRICED):
        return []  # "people are impressed with X", "the deal was closed with X", "billed in GBP"
    if be < 1 or lows[be] not in BE or lows[be - 1] in _PRONOUNS or tool is None or tool.entity_type != "tool":
        return []  # not "we were impressed with X": the speaker's feeling, no use
    user = _before(lows, by_end, be) or _setting(lows, by_start)
    if user is None or user.entity_type not in ("organization", "project"):
        return []
    return [Edge(Party.of(user), "USES", Party.of(tool), FRAME_CONFIDENCE)]


def _setting(lows: list[str], by_start: dict[int, Mention]) -> Mention | None:
    """The organization an opening "At X" or "In our factory X" sets the sentence at."""
    if lows[:1] not in (["at"], ["in"]):
        return None
    for start in range(1, 5):
        named = by_start.get(start)
        if named is not None:
            return named if named.entity_type == "organization" else None
        if not lows[start].isalpha():
            return None
    return None


def _set_after(lows: list[str], by_start: dict[int, Mention], agent: Mention) -> Mention | None:
    """The organization an "at X" right after the doer sets the doing at: "Deployments are
    handled by Argo CD at Ostrander Analytics"."""
    if lows[agent.end : agent.end + 1] != ["at"]:
        return None
    named = by_start.get(agent.end + 1 + (lows[agent.end + 1 : agent.end + 2] == ["the"]))
    return named if named is not None and named.entity_type == "organization" else None


def _opening_subject(by_start: dict[int, Mention]) -> Mention | None:
    """The named subject a sentence opens with ("The Riverbank fieldwork depends on ... and
    is led by ..."): what a second verb joined by "and" is said of."""
    for start in (0, 1):
        if (named := by_start.get(start)) is not None:
            return named
    return None


def _before(lows: list[str], by_end: dict[int, Mention], be: int) -> Mention | None:
    """The named subject before the verb, past an apposition ("Coinpurse, the billing
    module, is ..."), or the name modifying its head noun ("the Quarnby importer is ..."),
    or None when it is unnamed."""
    if be >= 1 and lows[be - 1] == ",":
        present = lows[be] in ("is", "are", "'s")  # not "..., which leans on Y, was owned by N until 2023"
        return apposed_name(lows, be - 1, by_end) or (_before_relative(lows, by_end, be - 1) if present else None)
    for end in range(be, max(be - 3, 0), -1):
        if (named := by_end.get(end)) is not None:
            return named
        if not lows[end - 1].isalpha() or lows[end - 1] in BE or lows[end - 1] in _JOINING:
            return None
    return None


def _before_relative(lows: list[str], by_end: dict[int, Mention], comma: int) -> Mention | None:
    """The name a relative clause closing at ``comma`` describes: "The Fenlight pipeline,
    which leans on X, is owned by N" (the name, or the noun phrase it heads)."""
    opening = next((k for k in range(comma - 1, max(comma - 16, 0), -1) if lows[k] == ","), None)
    if opening is None or lows[opening + 1 : opening + 2] not in (["which"], ["who"], ["that"]):
        return None
    for end in range(opening, max(opening - 3, 0), -1):
        if (named := by_end.get(end)) is not None:
            return named
        if not lows[end - 1].isalpha():
            return None
    return None


def _named_doer(words: list[str], lows: list[str], i: int) -> bool:
    """Whether the doer after "by" at ``i`` has a name no rule typed ("the Vaskel
    storefront"): then it is that name's, not the speaker's."""
    while i < len(lows) and lows[i] in ("the", "a", "an"):
        i += 1
    return i < len(words) and words[i][:1].isupper()


def _after(lows: list[str], by_start: dict[int, Mention], i: int) -> Mention | None:
    """The named agent after "by" (past an article), or None when it is unnamed."""
    while i < len(lows) and lows[i] in ("the", "a", "an", "our", "my"):
        i += 1
    return by_start.get(i)
