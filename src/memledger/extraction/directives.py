"""Memory directives in user turns: "preference: tabs over spaces". Pure.

Syntax: ``<kind> [(<scope>)]: <statement>`` at the start of a line, where kind
is one of the promotion kinds (decision, lesson learned, preference, procedure,
task update, terminology) and scope one of session, project, user, org. Without
a scope, the directive goes to the least lasting scope that fits (decided by
``policy``); never to the user or org scope unless named.
"""

from __future__ import annotations

import re
from typing import get_args

import msgspec

from memledger.events.catalogue import PromotionKind, ScopeKind
from memledger.extraction.protocol import DirectiveCandidate, TurnExtraction

_KINDS: dict[str, PromotionKind] = {k.replace("_", " "): k for k in get_args(PromotionKind)}
_KINDS.update({k: k for k in get_args(PromotionKind)})
_KINDS.update({"lesson": "lesson_learned", "lessons learned": "lesson_learned", "term": "terminology"})
_SCOPES = set(get_args(ScopeKind))

# The indent before a directive stays on its line ("\s*" would take the empty lines
# below too, and a long run of them would be scanned once per line: quadratic).
_DIRECTIVE = re.compile(
    r"^[^\S\n]*(?:[-*]\s*)?(?P<kind>[a-z][a-z _]{2,20}?)\s*(?:\((?P<scope>[a-z]+)\))?\s*:\s*(?P<body>\S.*)$",
    re.IGNORECASE | re.MULTILINE,
)
_TERM = re.compile(r"""^\s*['"“]?(?P<term>[^'"”]+?)['"”]?\s+(?:means|is|=|refers to)\s""", re.IGNORECASE)
_OVER = re.compile(r"^(?P<choice>.+?)\s+(?:over|instead of|rather than)\s+(?P<other>.+)$", re.IGNORECASE)


def parse_directives(text: str) -> tuple[DirectiveCandidate, ...]:
    """Every directive in ``text``; lines that merely contain a colon are ignored."""
    found = []
    for match in _DIRECTIVE.finditer(text):
        kind = _KINDS.get(" ".join(match.group("kind").lower().split()))
        scope_text = (match.group("scope") or "").lower()
        if kind is None or (scope_text and scope_text not in _SCOPES):
            continue
        statement = match.group("body").strip().rstrip(".").strip()
        if not re.search(r"\w", statement):
            continue  # "decision: ..." says nothing
        scope: ScopeKind | None = scope_text if scope_text else None  # type: ignore[assignment]
        found.append(DirectiveCandidate(kind=kind, statement=statement, key=_key(kind, statement), scope=scope))
    return tuple(found)


def _key(kind: PromotionKind, statement: str) -> str:
    """The subject a directive is about, so that a later directive can supersede it."""
    if kind == "terminology" and (term := _TERM.match(statement)):
        return f"terminology: {term.group('term').strip().lower()}"
    if kind == "preference" and (over := _OVER.match(statement)):
        options = sorted(o.strip().lower() for o in (over.group("choice"), over.group("other")))
        return f"preference: {' vs '.join(options)}"
    words = re.findall(r"[a-z0-9]+", statement.lower())[:6]
    return f"{kind.replace('_', ' ')}: {' '.join(words)}"


def with_directives(extraction: TurnExtraction, text: str) -> TurnExtraction:
    """``extraction`` with the directives of a user turn's ``text`` (unless the
    extractor gave its own). A fact an extractor drew from a directive's own line is
    dropped: the directive states that fact exactly, and both would show one memory
    twice ("decision: ship on Fridays" beside "ship on Fridays")."""
    directives = extraction.directives or parse_directives(text)
    if not directives:
        return extraction
    facts = tuple(fact for fact in extraction.facts if not parse_directives(fact.statement))
    return msgspec.structs.replace(extraction, directives=directives, facts=facts)
