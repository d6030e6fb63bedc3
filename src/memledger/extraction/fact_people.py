"""Facts about the people of the speaker's life: who their manager, partner or daughter
is, what the speaker is called and where they work. Pure."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from typing import Final

from memledger.extraction import gazetteer as gz
from memledger.extraction.fact_keys import candidate
from memledger.extraction.patterns import word_set
from memledger.extraction.protocol import FactCandidate

# The people (and pets) of the speaker's life, by the word the speaker uses: "My manager
# is Tom.", "Tom Baker is my manager.", "My daughter's name is Mia.", "I report to Tom."
_PEOPLE: Final = (
    r"manager|boss|team lead|tech lead|mentor|partner|wife|husband|spouse|girlfriend|boyfriend|"
    r"fianc[eé]e?|daughter|son|mother|mom|mum|father|dad|sister|brother|doctor|dentist|"
    r"therapist|landlord|assistant|co-?founder|dog|cat"
)
_SAME_PERSON: Final = {"boss": "manager", "mom": "mother", "mum": "mother", "dad": "father", "cofounder": "co-founder"}
_NAME: Final = r"([a-z][\w.'-]*(?: (?!and\b|but\b|who\b|since\b|because\b)[a-z][\w.'-]*){0,2})"
_NAME_ENDS: Final = r"\s*(?:$|[,.;!)]| (?:and|but|who|since|because|as|in|on|at|for|from) )"
_MY_PERSON = re.compile(
    rf"\bmy (?:new |current )?({_PEOPLE})(?:'s name)? is (?:now )?(?P<named>called |named )?{_NAME}{_NAME_ENDS}"
)
# Where the speaker works, when no relationship says it ("I changed jobs: I now work at
# Globex"), and that they left ("I left Acme.", superseding it on the same key).
_WORK_AT = re.compile(
    rf"\bi (?:now |currently |still )?work (?:at|for) {_NAME}{_NAME_ENDS}"
    rf"|\bi (?:just )?(?:left|quit) {_NAME}{_NAME_ENDS}"
)
_PERSON_IS_MY = re.compile(rf"(?:^|[,;:] )(?:and )?{_NAME} is my ({_PEOPLE})\b")
# "I'm Sam.", "Hi, I am Sam Lee!": the whole sentence introduces the speaker.
_I_AM = re.compile(r"^(?:(?:hi|hello|hey),? )?i(?:'m| am) ([a-z][\w'-]*(?: [a-z][\w'-]*)?)[.!]?$")
_REPORT_TO = re.compile(rf"\bi (?:report|reported) (?:directly )?to {_NAME}{_NAME_ENDS}")


def people(lowered: str, statement: str, confidence: float, speaker: str) -> Iterator[FactCandidate]:
    """Who the speaker's manager, partner, daughter ... is, and where they work: one fact
    per role, keyed "ada: manager", its value the name as typed."""
    if "my " not in lowered and not _ABOUT_SELF.search(lowered):
        return
    aligned = len(lowered) == len(statement)  # as typed, unless lower-casing changed the length
    if not aligned:
        return  # a name is told by its capitals, which a changed length no longer lines up
    found: dict[str, str] = {}
    for match in _MY_PERSON.finditer(lowered):
        _add(found, match.group(1), _person(statement, match.span(3), named=bool(match.group("named"))))
    for match in _PERSON_IS_MY.finditer(lowered):
        _add(found, match.group(2), _person(statement, match.span(1)))
    if (reports := _REPORT_TO.search(lowered)) is not None:
        _add(found, "manager", _person(statement, reports.span(1)))
    if (introduced := _I_AM.match(lowered)) is not None:
        _add(found, "name", _person(statement, introduced.span(1)))
    if (works := _WORK_AT.search(lowered)) is not None:
        place = _organisation(statement, works.span(1) if works.group(1) else works.span(2))
        if place and works.group(1):
            _add(found, "employer", place)
        elif place:  # "I left Acme.": on the employer's key, saying so
            _add(found, "employer", f"left {place}")
    for role, name in found.items():
        said_as = _SAME_PERSON.get(role.replace("-", ""), role)
        yield candidate(f"{speaker}{said_as}", statement, "personal_fact", confidence, "user", name, speaker=speaker)


def _add(found: dict[str, str], role: str, name: str | None) -> None:
    if name:
        found.setdefault(role, name)


def _capitalised(statement: str, span: tuple[int, int]) -> str:
    """The words of ``span`` up to the first one not typed capitalised ("Berlin last
    year" gives "Berlin"; "out sick" gives "")."""
    words = statement[span[0] : span[1]].rstrip(".'").split()
    return " ".join(itertools.takewhile(lambda w: w[:1].isupper(), words))


def _person(statement: str, span: tuple[int, int], *, named: bool = False) -> str | None:
    """A person's (or pet's) name: a known given name first ("Tom", "Laura Chen"), or two
    capitalised words ("Dana O'Neil"), or anything capitalised after "called"/"named";
    "My wife is Japanese." and "I'm French." name nobody."""
    name = _capitalised(statement, span)
    first = name.split()[0].lower() if name else ""
    if not first or first in _NOT_A_NAME or first in gz.PLACES:
        return None
    return name if named or gz.is_given_name(first) or len(name.split()) >= 2 else None


def _organisation(statement: str, span: tuple[int, int]) -> str | None:
    """Where the speaker works: capitalised, not a place ("I left Berlin last year") nor
    a tool ("I quit Slack")."""
    name = _capitalised(statement, span)
    low = name.lower()
    if not name or low in _NOT_A_NAME or low in gz.PLACES or low in gz.TOOL_KIND:
        return None
    return name


_ABOUT_SELF: Final = re.compile(r"\b(?:report|work|left|quit)\b|^(?:hi|hello|hey|i)\b")
_NOT_A_NAME: Final = word_set("it this that he she they who what i a an the not also here there")
