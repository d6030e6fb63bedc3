"""Terse notes, written without verbs. Who's-who lines ("Glowworm: me, Itzel and Joaquín;
Saltpan: Eilidh and Ruaridh", "Owners: Halyard - Bao"): a name opening a segment and
followed by a colon or a dash and then only people names a piece of work those people
do. Role lines ("Tutor: Zdravka Quill"): whom the speaker knows or works with. Tool
lines are read in ``note_lines``. Pure."""

from __future__ import annotations

from itertools import pairwise
from typing import Final

from memledger.extraction import gazetteer as gz
from memledger.extraction import name_guess
from memledger.extraction.noun_types import GROUPS
from memledger.extraction.patterns import BULLETS, HONORIFICS, TEAM_NOUNS, Edge, Mention, Party, Sentence, word_set
from memledger.extraction.roles import relation_of, role_words

_LINKS: Final = frozenset((":", "-", "\u2013", "\u2014"))
_SEGMENT_STARTS: Final = _LINKS | {";", ".", "(", "/"}
_JOINERS: Final = frozenset((",", "and", "&", "+", "/"))
_SPEAKER: Final = frozenset(("me", "i", "myself"))
_TEAM_OWNERS: Final = frozenset(("the", "our", "my"))
_AT_WORK: Final = word_set("work shift shifts rota ward office job project sprint on-call")
_CONFIDENCE: Final = 0.75


def opens_roster(words: list[str], lows: list[str], start: int, end: int) -> bool:
    """Whether the name at ``start:end`` heads a segment whose list after a colon or dash
    begins with a person's name or the speaker: then it names a piece of work."""
    if start > 0 and lows[start - 1] not in _SEGMENT_STARTS:
        return False
    if end + 1 >= len(lows) or lows[end] not in _LINKS:
        return False
    if end - start == 1 and name_guess.ordinary(words[start]):
        return False
    first, word = lows[end + 1], words[end + 1]
    return first in _SPEAKER or (word[:1].isupper() and (gz.is_given_name(first) or not name_guess.ordinary(word)))


def people_lines(speaker: Party, sentence: Sentence) -> list[Edge]:
    """The edges of a sentence's lists of people: rosters of work, role lines, a team or
    group said to be the speaker and others, a plural role said to be some people."""
    return [
        *roster_edges(speaker, sentence),
        *status_line(speaker, sentence),
        *role_lines(speaker, sentence),
        *crew_lines(speaker, sentence),
        *roles_listed(speaker, sentence),
    ]


def status_line(speaker: Party, sentence: Sentence) -> list[Edge]:
    """A standup's line ("- me: Ravensworth auth refactor", "Kwame on Halyard migration",
    "Yusra: finishing the Plover export"): who opens the line works on the project it
    names next, in a fragment with no verb of its own."""
    lows, by_start = sentence.lows, {m.start: m for m in sentence.mentions}
    k = 1 if lows[:1] and lows[0] in BULLETS else 0
    if lows[k + 1 : k + 2] == [":"] and k not in by_start and lows[k] not in _SPEAKER:
        k += 2  # "Standup: Kwame on ..."
    who = by_start.get(k)
    doer = speaker if lows[k : k + 1] == ["me"] else Party.of(who) if who and who.entity_type == "person" else None
    end = who.end if who is not None else k + 1
    if doer is None or lows[end : end + 1] not in ([":"], ["on"], ["-"]):
        return []
    j = end + 1
    while j < len(lows) and j - end <= 3 and (lows[j] in _STATUS_WORDS or lows[j].endswith("ing")):
        j += 1  # "still on the", "finishing the", "working on"
    work = by_start.get(j)
    rest = lows[j:]
    if work is None or work.entity_type != "project" or not _STATUS_FREE.isdisjoint(rest):
        return []
    return [Edge(doer, "WORKS_ON", Party.of(work), _CONFIDENCE)]


_STATUS_WORDS: Final = word_set("still on the finished started")
# Words of a clause with a verb of its own, which a status fragment has not ("Priya: Atlas is down").
_STATUS_FREE: Final = word_set("is are was were has have 's")


def roster_edges(speaker: Party, sentence: Sentence) -> list[Edge]:
    """The people listed after each work's name, who work on it."""
    by_start = {m.start: m for m in sentence.mentions}
    edges: list[Edge] = []
    for work in sentence.mentions:
        if work.entity_type != "project" or not opens_roster(sentence.words, sentence.lows, work.start, work.end):
            continue
        people = _listed_people(sentence.lows, by_start, work.end + 1, speaker)
        edges.extend(Edge(person, "WORKS_ON", Party.of(work), _CONFIDENCE) for person in people)
    return edges


def crew_lines(speaker: Party, sentence: Sentence) -> list[Edge]:
    """ "The night team is me, Eun-ji and Sipho": the people listed with the speaker as
    a team's members work with the speaker; a group's ("my gaming group") know them."""
    lows = sentence.lows
    k = next((k for k, low in enumerate(lows) if low in ("is", "are")), None)
    if k is None or not 2 <= k <= 4 or lows[0] not in _TEAM_OWNERS:
        return []
    plain = k == 2  # "The team is me, ...": no modifier says what the team is for
    at_work = lows[k - 1] != "team" or plain or not _AT_WORK.isdisjoint(lows) or ("on", "call") in pairwise(lows)
    relation = "WORKS_WITH" if lows[k - 1] in TEAM_NOUNS and at_work else None
    relation = relation or ("KNOWS" if lows[k - 1] in GROUPS else None)  # "My gaming group is me, A and B"
    if relation is None:
        return []
    people = _people_after(lows, {m.start: m for m in sentence.mentions}, k, speaker)
    if speaker not in people or len(people) < 2:
        return []
    return [Edge(speaker, relation, person, _CONFIDENCE) for person in people if person != speaker]


def roles_listed(speaker: Party, sentence: Sentence) -> list[Edge]:
    """ "My colleagues on cover this week are A, B and C": the people a plural role of the
    speaker's is said to be stand in that role to the speaker."""
    lows = sentence.lows
    if lows[:1] not in (["my"], ["our"]) or len(lows) < 4 or not lows[1].endswith("s"):
        return []
    role, _ = role_words(lows, 1)
    k = next((k for k in range(2, min(len(lows), 10)) if lows[k] == "are"), None)
    if role is None or k is None:
        return []
    people = [p for p in _people_after(lows, {m.start: m for m in sentence.mentions}, k, speaker) if p != speaker]
    relation = relation_of(role, ours=lows[0] == "our")
    return [Edge(speaker, relation, person, _CONFIDENCE) for person in people] if len(people) >= 2 else []


def _people_after(lows: list[str], by_start: dict[int, Mention], k: int, speaker: Party) -> list[Party]:
    """The people listed right after the verb at ``k``, up to where the list ends ("..., all
    on the same rota", "..., and we're ...")."""
    end = k + 1
    while end < len(lows) and (lows[end] in _SPEAKER or lows[end] in _JOINERS or end in by_start):
        end = by_start[end].end if end in by_start else end + 1
    while end > k + 1 and lows[end - 1] in _JOINERS:
        end -= 1
    return _listed_people([*lows[:end], "."], by_start, k + 1, speaker)


def role_lines(speaker: Party, sentence: Sentence) -> list[Edge]:
    """A note's role labels: "Tutor: Zdravka Quill", "advisor = Prof. Quill": the
    person after a role's colon or equals sign is the speaker's, in that role; so is one
    followed by the role in brackets or after "=" ("Bolat (neighbour)", "Lucía = my niece")."""
    lows = sentence.lows
    edges: list[Edge] = []
    for person in sentence.mentions:
        role = _role_after(lows, person) if person.entity_type == "person" else None
        if role is not None:
            edges.append(Edge(speaker, relation_of(role), Party.of(person), _CONFIDENCE, role))
            continue
        j = person.start - 1
        while j > 0 and (lows[j] in HONORIFICS or lows[j] == "."):
            j -= 1
        if person.entity_type != "person" or j < 1 or lows[j] not in (":", "="):
            continue
        role, start = role_words(lows, j - 1)
        if role is not None and (start == 0 or lows[start - 1] in _SEGMENT_STARTS):
            edges.append(Edge(speaker, relation_of(role), Party.of(person), _CONFIDENCE, role))
    return edges


def _role_after(lows: list[str], person: Mention) -> str | None:
    """The role right after a person's name: "(neighbour)", "(my sister)", "= my niece"."""
    k = person.end
    if "'s" in lows[max(0, person.start - 3) : person.start]:
        return None  # "Brightwell's new hire Ana Ruiz (manager)": someone else's
    if lows[k : k + 1] == ["("]:
        k += 1 + (lows[k + 1 : k + 2] == ["my"])
        role, _ = role_words(lows, k)
        return role if lows[k + 1 : k + 2] == [")"] else None
    if lows[k : k + 2] == ["=", "my"]:
        role, _ = role_words(lows, k + 2)
        return role if k + 3 >= len(lows) or not lows[k + 3].isalpha() else None
    return None


def _listed_people(lows: list[str], by_start: dict[int, Mention], i: int, speaker: Party) -> list[Party]:
    """The parties of a list of people from token ``i``; none when anything else is listed."""
    people: list[Party] = []
    while i < len(lows):
        mention = by_start.get(i)
        if lows[i] in _SPEAKER:
            people.append(speaker)
            i += 1
        elif mention is not None and mention.entity_type == "person":
            people.append(Party.of(mention))
            i = mention.end
        else:
            return []
        if i >= len(lows) or lows[i] in (";", ".", ")"):
            return people
        if lows[i] not in _JOINERS:
            return []
        i += 1 + (lows[i] == "," and lows[i + 1 : i + 2] == ["and"])  # "A, B, and C"
    return people
