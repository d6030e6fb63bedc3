"""Relation trigger phrases and clause words for the heuristic extractor. Pure data.

A trigger is a phrase ("use", "switched", "depends on", "introduced me to") and
a *kind* saying what the named objects after it become; the relation depends on
the object's type as well (``RELATIONS``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

_PHRASES: Final[dict[str, str]] = {
    "USE": (
        "use, uses, using, utilise, utilize, utilising, utilizing, run, runs, running, write, "
        "writes, writing, written in, code in, coding in, program in, programming in, work in, "
        "works in, working in, develop in, built with, built in, built on, build with, "
        "building with, made with, trained with, trained on, deployed on, deployed to, "
        "deployed via, deploy to, deploy on, deploys to, deploy, host on, hosted on, "
        "hosting on, hosted at, powered by, handled by, managed by, go through, goes through, "
        "log, logs, store, stores, track, tracks, invoice with, pay, orchestrate, "
        "containerise, containerize, lives in, live in, talk over, prototype in, added, "
        "adopt, adopted, adopting, swear by, swears by, stack, all-in on, 'll use, will use"
    ),
    "BE": "is, are",
    "PREFER": (
        "prefer, prefers, preferred, preferring, rather, favorite, favourite, go-to, fan of, "
        "pick, 'd pick"
    ),
    "LIKE": "like, likes, love, loves",
    "DECIDE": (
        "decided, decide, decided on, chose, chosen, choose, picked, went with, go with, "
        "going with, settled on, opted for, opt for, standardising on, standardizing on, "
        "standardised on, standardized on, standardise on, standardize on, let's use, "
        "lets use, let's go with, agreed on, decision, selected, committed to"
    ),
    "KEEP": "keep, keeping, stick with, sticking with, stay with, stay on, staying with",
    "WORK_ON": (
        "work on, works on, working on, worked on, lead, leads, leading, led, co-lead, "
        "co-leads, co-leading, maintain, maintains, maintaining, own, owns, contribute to, "
        "contributes to, contributing to, in charge of, responsible for, pm for, lead on, "
        "tech lead on, all on"
    ),
    "BUILD": "build, building, built, builds",
    "WORK_WITH": (
        "work with, works with, working with, worked with, pair with, pairing with, "
        "paired with, pairs with, collaborate with, collaborating with, collaborates with, "
        "collaborated with, reports to, report to, reporting to, mentoring, mentor, mentors, "
        "manages, manage, managing, team up with, teamed up with"
    ),
    "KNOW": (
        "know, knows, met, meet, lunch with, dinner with, coffee with, drinks with, "
        "friends with, married to, dating, hang out with, hung out with, catch up with, "
        "caught up with"
    ),
    "INTRO": "introduced me to",
    "DEPEND": (
        "depends on, depend on, relies on, rely on, relying on, requires, require, "
        "built on top of"
    ),
    "DEPENDED": "is a dependency of, a dependency of, dependency of",
    "PART": (
        "part of, member of, joined, join, joining, belongs to, belong to, a module of, "
        "module of, component of, subproject of"
    ),
    "AT": (
        "work at, works at, working at, worked at, work for, works for, working for, "
        "worked for, started at, employed at, employed by, intern at, at"
    ),
    "ON": "on",
    "LEAVE": "left, leaving, quit",
    "RETRACT": (
        "stopped using, stop using, stopped, dropped, drop, dropping, ditched, ditch, "
        "got rid of, get rid of, moved off, move off, moving off, moved away from, "
        "moving away from, abandoned, gave up, give up, used to use, used to, uninstalled, "
        "removed, deprecated, sunset, sunsetting, phased out, phasing out, retired, replaced, "
        "replace, replacing, swapped, swap, swapping, traded, ripped out"
    ),
    "SWITCH": (
        "switched, switching, switch, moved, moving, move, migrated, migrating, migrate, "
        "migration, changed, transitioned, transitioning, went back to, go back to, "
        "going back to, back to, upgraded, upgrading, converted"
    ),
}

# What an object of each type becomes, per trigger kind.
RELATIONS: Final[dict[str, dict[str, str]]] = {
    "USE": {"tool": "USES", "concept": "USES"},
    "BE": {"tool": "USES"},
    "PREFER": {"tool": "PREFERS", "concept": "PREFERS"},
    "LIKE": {"tool": "PREFERS", "concept": "PREFERS"},
    "DECIDE": {"tool": "DECIDED", "concept": "DECIDED"},
    "KEEP": {"tool": "USES", "concept": "USES"},
    "WORK_ON": {"project": "WORKS_ON", "organization": "WORKS_ON", "person": "WORKS_WITH"},
    "BUILD": {"project": "WORKS_ON"},
    "WORK_WITH": {"person": "WORKS_WITH"},
    "KNOW": {"person": "KNOWS"},
    "INTRO": {"person": "KNOWS"},
    "DEPEND": {"tool": "DEPENDS_ON", "project": "DEPENDS_ON"},
    "DEPENDED": {"tool": "DEPENDS_ON", "project": "DEPENDS_ON"},
    "PART": {"organization": "PART_OF", "project": "PART_OF"},
    "AT": {"organization": "PART_OF"},
    "ON": {"project": "WORKS_ON", "organization": "PART_OF", "tool": "USES"},
}

# When a trigger with no objects runs into another, the stronger kind wins
# ("decided to use X" is a decision, "prefer to use X" a preference).
STRENGTH: Final[dict[str, int]] = {
    "RETRACT": 6, "SWITCH": 6, "DECIDE": 5, "PREFER": 4, "LIKE": 4, "KEEP": 3, "BE": 0,
}

BOUNDARIES: Final = frozenset(
    "but because although though while whereas so since unless if whether when which who "
    "where except until however cause yet that whom whose after before once . ; ! ? ( ) — – \""
    .split()
)
CONDITIONAL_LEADS: Final = frozenset("if whether unless".split())
RELATIVE_LEADS: Final = frozenset("which who that whom".split())
SUBJECT_PRONOUNS: Final = frozenset(
    "i i'm im i've ive i'd i'll we we're we've we'd we'll myself ourselves".split()
)
POSSESSIVE_USER: Final = frozenset("our my".split())
THIRD_PERSON: Final = frozenset(
    "he she they it he's she's it's they're they've his her their its them you you're "
    "anyone someone everyone nobody".split()
)
DETERMINERS: Final = frozenset("the a an this that these those some any every each".split())
PREPOSITIONS: Final = frozenset(
    "for with in on at to from of by about like than over instead via through into onto off "
    "under behind after before without across".split()
)
CONTRAST: Final = frozenset("instead rather than over vs vs. versus except unlike not".split())
NEGATIONS: Final = frozenset(
    "not never no don't dont doesn't doesnt didn't didnt won't wont isn't isnt aren't arent "
    "wasn't can't cant cannot shouldn't haven't hasn't nobody".split()
)
NO_LONGER: Final = frozenset("anymore longer".split())
DECISION_WORDS: Final = frozenset("decided decide decision agreed settled chose".split())
FILLERS: Final = frozenset(
    "also still now mostly mainly currently usually primarily heavily just really already "
    "only always actually honestly basically totally definitely both finally even generally "
    "typically normally lately recently closely kinda pretty very quite then again "
    "officially".split()
)
_LY_WORDS: Final = frozenset(
    "family fly only reply supply apply italy rely early daily weekly monthly yearly july "
    "holy ugly belly bully jelly lily emily molly holly sally kelly billy ally".split()
)
ARROWS: Final = frozenset(("->", "=>", "→"))
BE_FORMS: Final = frozenset("i'm im we're is are am was were".split())
SELF: Final = frozenset(("me", "us"))


@dataclass(frozen=True, slots=True)
class Trigger:
    """A trigger phrase found at items ``start`` to ``end`` (exclusive)."""

    kind: str
    start: int
    end: int


def _table() -> dict[str, list[tuple[tuple[str, ...], str]]]:
    table: dict[str, list[tuple[tuple[str, ...], str]]] = {}
    for kind, phrases in _PHRASES.items():
        for phrase in phrases.split(","):
            words = tuple(phrase.split())
            table.setdefault(words[0], []).append((words, kind))
    for entries in table.values():
        entries.sort(key=lambda entry: -len(entry[0]))
    return table


_TABLE: Final = _table()


def is_filler(word: str) -> bool:
    """Adverbs that never change a relation ("we also mostly use")."""
    return word in FILLERS or (len(word) > 4 and word.endswith("ly") and word not in _LY_WORDS)


def find_triggers(words: list[str]) -> list[Trigger]:
    """Trigger phrases in ``words`` (lower-case; mentions replaced by ""), longest first."""
    found: list[Trigger] = []
    i = 0
    while i < len(words):
        match = _match_at(words, i)
        if match is None:
            i += 1
            continue
        found.append(match)
        i = match.end
    return found


def _match_at(words: list[str], i: int) -> Trigger | None:
    entries = _TABLE.get(words[i])
    if entries is None:
        return None
    if words[i] == "rather" and i + 1 < len(words) and words[i + 1] == "than":
        return None
    for phrase, kind in entries:
        if tuple(words[i : i + len(phrase)]) == phrase:
            return Trigger(kind, i, i + len(phrase))
    return None
