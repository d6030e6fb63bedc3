"""Relationships stated by sentence shapes the trigger reader does not cover. Pure.

- Passive: "Kafka is used by the ingestion jobs", "billing is handled by Stripe",
  "Nightjar is maintained by Osric". The agent after "by" is the verb's subject.
  An unnamed side ("the ingestion jobs", "billing") is the speaker's own.
- Location of work: "Hollow Pine is where Tomasz works".
- Relations by apposition: "my physio, Dr. Amara Nwosu", "my cousins Ana and Bo":
  a person named right after the speaker's noun for them. Work nouns make
  colleagues, any other noun someone the speaker knows.
"""

from __future__ import annotations

from typing import Final

from memledger.extraction import gazetteer as gz
from memledger.extraction.patterns import HONORIFICS, POSSESSIVES, ROLE_ADJECTIVES, Edge, Mention, Party, word_set
from memledger.extraction.triggers import is_filler

FRAME_CONFIDENCE = 0.8

_BE: Final = word_set("is are was were be been being 's")
# Participles of verbs whose subject uses (or, for a person, works on) their object.
_USED_BY: Final = word_set(
    "used handled managed powered run served backed stored processed orchestrated scheduled "
    "deployed monitored hosted driven done"
)
MADE_BY: Final = word_set("maintained owned led built developed written run managed designed created started")
_WORKS: Final = word_set("works worked work working studies studied teaches taught volunteers interns")
_NOT_ROLE_NOUNS: Final = word_set("own favourite favorite go-to usual main only")


def frame_edges(speaker: Party, lows: list[str], mentions: list[Mention]) -> list[Edge]:
    """The edges the passive, "is where" and appositive frames of a sentence state."""
    by_start = {m.start: m for m in mentions}
    by_end = {m.end: m for m in mentions}
    edges: list[Edge] = []
    edges.extend(_passive(speaker, lows, by_start, by_end))
    edges.extend(_where(lows, by_start, by_end))
    edges.extend(_appositions(speaker, lows, mentions, by_start))
    return edges


def _passive(
    speaker: Party, lows: list[str], by_start: dict[int, Mention], by_end: dict[int, Mention]
) -> list[Edge]:
    edges: list[Edge] = []
    for i, low in enumerate(lows):
        if low != "by" or i < 2:
            continue
        participle = i - 1
        be = participle - 1
        while be >= 0 and is_filler(lows[be]):
            be -= 1
        if be < 0 or lows[be] not in _BE:
            continue
        patient = _before(lows, by_end, be)
        agent = _after(lows, by_start, i + 1)
        edge = _passive_edge(speaker, lows[participle], patient, agent)
        if edge is not None:
            edges.append(edge)
    return edges


def _passive_edge(speaker: Party, verb: str, patient: Mention | None, agent: Mention | None) -> Edge | None:
    if verb in _USED_BY and agent is not None and agent.entity_type == "tool":
        user = speaker if patient is None or patient.entity_type == "tool" else Party.of(patient)
        if user.kind in ("user", "project", "organization", "person"):
            return Edge(user, "USES", Party.of(agent), FRAME_CONFIDENCE)
    if verb in _USED_BY and patient is not None and patient.entity_type == "tool":
        if agent is None:
            return Edge(speaker, "USES", Party.of(patient), FRAME_CONFIDENCE)
        if agent.entity_type in ("project", "organization", "person"):
            return Edge(Party.of(agent), "USES", Party.of(patient), FRAME_CONFIDENCE)
    if agent is None or patient is None or verb not in MADE_BY:
        return None
    if agent.entity_type == "person" and patient.entity_type in ("project", "organization"):
        return Edge(Party.of(agent), "WORKS_ON", Party.of(patient), FRAME_CONFIDENCE)
    return None


def _before(lows: list[str], by_end: dict[int, Mention], be: int) -> Mention | None:
    """The named subject right before the verb, or None when it is unnamed."""
    return by_end.get(be)


def _after(lows: list[str], by_start: dict[int, Mention], i: int) -> Mention | None:
    """The named agent after "by" (past an article), or None when it is unnamed."""
    while i < len(lows) and lows[i] in ("the", "a", "an", "our", "my"):
        i += 1
    return by_start.get(i)


def _where(lows: list[str], by_start: dict[int, Mention], by_end: dict[int, Mention]) -> list[Edge]:
    edges: list[Edge] = []
    for i, low in enumerate(lows):
        if low != "where" or i < 2 or lows[i - 1] not in ("is", "was"):
            continue
        place, person = by_end.get(i - 1), by_start.get(i + 1)
        if place is None or person is None or person.entity_type != "person":
            continue
        verb = lows[person.end] if person.end < len(lows) else ""
        if place.entity_type == "organization" and verb in _WORKS:
            edges.append(Edge(Party.of(person), "PART_OF", Party.of(place), FRAME_CONFIDENCE))
    return edges


def _appositions(
    speaker: Party, lows: list[str], mentions: list[Mention], by_start: dict[int, Mention]
) -> list[Edge]:
    edges: list[Edge] = []
    for mention in mentions:
        if mention.entity_type != "person":
            continue
        if mention.role and mention.mine:
            relation = "KNOWS" if mention.role in gz.PERSONAL_ROLES else "WORKS_WITH"
            for listed in _listed_after(lows, mention, by_start):
                edges.append(Edge(speaker, relation, Party.of(listed), FRAME_CONFIDENCE, mention.role))
            continue
        noun = None if mention.role else _owned_noun(lows, mention.start)
        if noun is None:
            continue
        relation = "WORKS_WITH" if _work_noun(noun) else "KNOWS"
        edges.append(Edge(speaker, relation, Party.of(mention), FRAME_CONFIDENCE, noun))
        for listed in _listed_after(lows, mention, by_start):
            edges.append(Edge(speaker, relation, Party.of(listed), FRAME_CONFIDENCE, noun))
    return edges


def _owned_noun(lows: list[str], start: int) -> str | None:
    """The noun of "my <noun>[,] [Dr.] <name>" before a name, if the speaker owns it."""
    j = start - 1
    while j >= 0 and (lows[j] in HONORIFICS or lows[j] in (",", ".")):
        j -= 1
    if j < 1 or not lows[j].isalpha() or lows[j] in _NOT_ROLE_NOUNS:
        return None
    noun = lows[j]
    k = j - 1
    while k >= 0 and (lows[k] in ROLE_ADJECTIVES or is_filler(lows[k])):
        k -= 1
    return noun if k >= 0 and lows[k] in POSSESSIVES else None


def _work_noun(noun: str) -> bool:
    return noun in gz.WORK_ROLES or noun.rstrip("s") in gz.WORK_ROLES


def _listed_after(lows: list[str], first: Mention, by_start: dict[int, Mention]) -> list[Mention]:
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
