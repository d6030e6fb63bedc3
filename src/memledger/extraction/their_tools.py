"""A named person's own tool, with which they do something: "Kristjan fixes everything
with his Metabo", "Anahit plays backgammon on her iPad". Only where "his"/"her" can
stand for no one else: the sentence names one person, as its subject (first, or after
their role), and no one else (a role, "and ...", "him"/"her") comes before the pronoun;
lending ("lent me his X") takes no preposition before the pronoun. Pure."""

from __future__ import annotations

from typing import Final

from memledger.extraction import gazetteer as gz
from memledger.extraction.patterns import HONORIFICS, Edge, Mention, Party, Sentence, word_set

_PRONOUNS: Final = word_set("his her")
_INSTRUMENTAL: Final = word_set("on with from into through via using")
# Words between the person and the pronoun that may name its owner instead: another
# clause ("Tevita ..., the agronomist ... with her X"), someone spoken to or owned.
_OTHERS: Final = word_set(", ; : ( ) - 's him her them his their")
_JOINED: Final = word_set("and & or 's")  # "Kofi and his wife ...", "Lena's son ...": not Kofi's or Lena's
_CONFIDENCE: Final = 0.75


def their_tools(sentence: Sentence) -> list[Edge]:
    """The tools the sentence's one named person acts with, as "<prep> his/her <tool>"."""
    people = [m for m in sentence.mentions if m.entity_type == "person"]
    if len(people) != 1 or not _subject(sentence.lows, people[0]):
        return []
    if sentence.lows[people[0].end : people[0].end + 1] and sentence.lows[people[0].end] in _JOINED:
        return []
    person, lows = people[0], sentence.lows
    return [
        Edge(Party.of(person), "USES", Party.of(tool), _CONFIDENCE)
        for tool in sentence.mentions
        if tool.entity_type == "tool"
        and tool.start > person.end + 1
        and lows[tool.start - 1] in _PRONOUNS
        and lows[tool.start - 2] in _INSTRUMENTAL
        and _alone(lows[person.end : tool.start - 1])
    ]


def _subject(lows: list[str], person: Mention) -> bool:
    """Whether the person opens the sentence, past their role or title ("My husband
    Kristjan ...", "Grandma Ọlá ..."), rather than being someone a verb acts on."""
    before = lows[: person.start]
    return all(w in ("my", "our") or w in gz.ROLES or w in HONORIFICS or w == "." for w in before)


def _alone(between: list[str]) -> bool:
    return _OTHERS.isdisjoint(between) and gz.ROLES.isdisjoint(between)
