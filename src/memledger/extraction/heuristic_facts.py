"""Facts for the heuristic extractor: a category, a scope and a key per statement. Pure.

The key names the *subject* of a fact so that a later fact on the same subject
conflicts with or supersedes it:

- tools: the tool's kind from the gazetteer ("I use Vim", later "I switched to
  Emacs" both key "editor"); a named project prefixes it ("apollo: database");
  a tool the gazetteer does not know keys on its own name;
- preferences: "preferred <kind>" for tools, else a dimension ("ui theme" for dark
  or light mode, "indentation" for tabs or spaces), else "preference: <object>";
  the speaker's own are prefixed with the speaker ("ada: preferred editor") when the
  turn names its user: a shared project holds every member's words, and Grace's
  "I prefer Vim" must not supersede Ada's "I prefer Emacs", only Grace's older one;
- personal facts ("I'm allergic to ...", "my name is ...", "I work at ..."): their
  kind, prefixed with the speaker as preferences are ("ada: allergies");
- decisions, constraints, goals, procedures, terms and task updates: their kind
  and topic ("decision: database", "constraint: deploy", "task: onboarding docs").

Scopes: preferences and personal facts "user"; decisions, constraints and facts
about a named project "project"; task updates "session".

This module gathers a sentence's facts and has each quote its own clause. The facts
of the sentence's edges, and the keys, come from ``fact_keys``; those of the cue
patterns from ``fact_patterns`` (the speaker's people from ``fact_people``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

import msgspec

from memledger.extraction.fact_keys import edge_facts
from memledger.extraction.fact_patterns import SUBJECT_CLAUSE, pattern_facts, preference_verb
from memledger.extraction.patterns import Sentence
from memledger.extraction.protocol import FactCandidate

if TYPE_CHECKING:
    from memledger.extraction.patterns import Edge


def facts_for_sentence(sentence: Sentence, edges: Sequence[Edge], speaker: str = "") -> list[FactCandidate]:
    """The facts one (non-question) sentence states, given the edges read from it.
    ``speaker`` prefixes the keys of the speaker's own preferences and personal facts
    ("ada: "; "" when the turn names no user)."""
    confidence = 0.6 if sentence.hedged else 0.85
    statement = sentence.text[:1000]  # the patterns read what is stored, no more
    facts = list(edge_facts(statement, edges, speaker))
    categories, keys = {fact.category for fact in facts}, {fact.key for fact in facts}
    # A pattern's fact gives way to an edge's of its category, unless it is a personal
    # fact on another key: "I live in Berlin and I work at Acme" is a home and an employer.
    facts.extend(
        fact
        for fact in pattern_facts(statement, confidence, speaker, project_first=_opens_with_project(sentence))
        if fact.category not in categories or (fact.category == "personal_fact" and fact.key not in keys)
    )
    return _each_in_its_clause(statement, facts)


_LISTED: Final = re.compile(r"\s*,\s*(?:and\s+)?|\s+and\s+", re.IGNORECASE)


def _each_in_its_clause(statement: str, facts: list[FactCandidate]) -> list[FactCandidate]:
    """Facts on two or more keys quote each its own clause, where one holds its value alone.

    A sentence's facts are replaced one at a time: after "I'm vegetarian, and I'm allergic
    to peanuts." and later "I'm pescatarian now.", the allergy still holds and must not
    bring back the old diet with it. "I prefer dark mode and tabs over spaces." shares its
    verb: each preference quotes it with its own object ("I prefer tabs over spaces.").
    A fact whose value no single clause holds keeps the whole sentence."""
    if len({fact.key for fact in facts}) < 2 or _QUALIFIED.search(statement):
        return facts
    clauses = _clauses(statement)
    needles = [_needle(fact) for fact in facts]
    # A clause that states none of the facts qualifies them ("..., especially at night"):
    # quoted apart, the facts would lose it, so the sentence stays whole.
    if len(clauses) < 2 or not all(any(n and n in c.lower() for n in needles) for c in clauses):
        return facts
    return [_in_clause(fact, clauses, statement) for fact in facts]


# "If I'm vegetarian, I'm allergic to peanuts.", "... except on Fridays": a condition or an
# exception holds for the whole sentence, so its facts quote it whole.
_QUALIFIED: Final = re.compile(
    r"\b(?:if|unless|except|excepting|when|whenever|only|until|provided|as long as|otherwise)\b", re.IGNORECASE
)


def _needle(fact: FactCandidate) -> str:
    """What a clause must hold to state ``fact``: its value, else its key's topic."""
    return (fact.value or fact.key.rpartition(": ")[2]).lower()


def _clauses(statement: str) -> list[str]:
    """The statement's clauses: split where a new subject starts, else, after a verb of
    preference, its listed objects, each with the verb ("I prefer" + "dark mode")."""
    body = statement.rstrip(" .!")
    clauses = [part for part in SUBJECT_CLAUSE.split(body) if part.strip()]
    if len(clauses) > 1:
        return clauses
    verb = preference_verb(body.lower())
    if verb is None:
        return clauses
    head = body[: verb.end()]
    return [f"{head} {item}" for item in _LISTED.split(body[verb.end() :].strip()) if item.strip()]


def _in_clause(fact: FactCandidate, clauses: list[str], statement: str) -> FactCandidate:
    value = _needle(fact)  # "preference: dark themes" has no value: "dark themes"
    holding = [clause for clause in clauses if value and value in clause.lower()]
    if len(holding) != 1:
        return fact
    clause = holding[0].strip()
    end = statement.rstrip()[-1:] if statement.rstrip()[-1:] in ("!", ".") else "."
    return msgspec.structs.replace(fact, statement=clause[:1].upper() + clause[1:] + end)


def _opens_with_project(sentence: Sentence) -> bool:
    """Whether the sentence's subject is a project it names first ("Phoenix must ...",
    "Project Phoenix must ...")."""
    first = sentence.mentions[0] if sentence.mentions else None
    if first is None or first.entity_type != "project":
        return False
    return first.start == 0 or (first.start == 1 and sentence.lows[0] == "project")
