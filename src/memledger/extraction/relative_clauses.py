"""Relative clauses said of someone the sentence does not name ("the guy who did our
loft uses X"): their statements are no one's the extractor can record. Pure."""

from __future__ import annotations

from memledger.extraction.patterns import Mention
from memledger.extraction.triggers import DETERMINERS, POSSESSIVE_USER, SUBJECT_PRONOUNS, THIRD_PERSON, Clause, Item


def about_someone_unnamed(before: Clause | None, clause: Clause) -> bool:
    """Whether ``clause`` is a restrictive relative clause ("who ...", "that ...") about
    the common noun that ends the clause ``before`` it."""
    return clause.lead in ("who", "that") and _unnamed_before(before) and not _opens_with_subject(clause.items)


def _unnamed_before(clause: Clause | None) -> bool:
    """Whether a clause ends in a common noun ("the guy"), which a restrictive relative
    clause after it is about."""
    items = clause.items if clause is not None else []
    last = items[-1] if items else None
    if not isinstance(last, str) or not last.isalpha() or last in SUBJECT_PRONOUNS or last in THIRD_PERSON:
        return False
    return any(item in DETERMINERS or item in POSSESSIVE_USER for item in items[-3:-1])  # a noun phrase, not a verb


def _opens_with_subject(items: list[Item]) -> bool:
    """Whether a clause opens with its own subject ("that we use X"), so its lead is a
    conjunction, not a relative pronoun standing for the subject."""
    first = items[0] if items else ""
    return isinstance(first, Mention) or first in SUBJECT_PRONOUNS or first in THIRD_PERSON or first in POSSESSIVE_USER
