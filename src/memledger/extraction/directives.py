"""Memory directives in user turns: "preference: tabs over spaces". Pure.

Syntax: ``<kind> [(<scope>)]: <statement>`` at the start of a line, where kind
is one of the promotion kinds (decision, lesson learned, preference, procedure,
task update, terminology) and scope one of session, project, user, org. Without
a scope, the directive goes to the least lasting scope that fits (decided by
``policy``); never to the user or org scope unless named.

People also say it in words, at the start of a sentence: "Remember that deploys
are frozen on Fridays", "Note for the future: our fiscal year starts in April"
(also "please remember", "keep in mind that", "for future reference,", "don't
forget that", "can you remember that ...?"). The statement is what follows the
phrase; the kind is read from it (a term, a preference, a procedure, a lesson),
else "decision": a rule or fact the speaker wants kept.
"""

from __future__ import annotations

import re
from typing import get_args

import msgspec

from memledger.events.catalogue import PromotionKind, ScopeKind
from memledger.events.keys import normalise_statement
from memledger.extraction.patterns import split_sentences
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
# "Remember" needs "that" unless asked politely ("Please remember my name is Ada"), and
# then it must not be a reminder or a question ("please remember to ...", "... what we said").
_NATURAL = re.compile(
    r"(?:(?:also|and|oh|ok|okay|so|btw|actually),?\s+)?(?P<asked>(?:can|could|would|will) you\s+)?"
    r"(?:please,?\s+remember(?:\s+that\b|(?!\s+(?:to|when|what|how|where|why|who|whom|if|whether)\b))|"
    r"(?:please,?\s+)?(?:remember that|keep in mind that|note for the future|for future reference|"
    r"(?:don't|do not) forget that|make a note that))\b[\s,:\-\u2013\u2014]*(?P<body>.*)",
    re.IGNORECASE | re.DOTALL,
)
# A story, not something to keep: "Remember that time we broke prod?"
_NOT_CONTENT = re.compile(r"(?:(?:one|the) )?time (?:when|we|i|you)\b", re.IGNORECASE)
_NATURAL_KINDS: tuple[tuple[PromotionKind, re.Pattern[str]], ...] = (
    ("terminology", re.compile(r"\b(?:means|stands for|is short for|refers to)\b", re.IGNORECASE)),
    (
        "preference",
        re.compile(
            r"\b(?:i|we)(?:'d| would| really| always)? (?:prefer|like|love|hate|dislike|want)\b|"
            r"\b(?:always|never) (?:answer|respond|reply|write)\b",
            re.IGNORECASE,
        ),
    ),
    ("procedure", re.compile(r"^to [\w -]{1,60}, |\b(?:procedure|checklist|steps?) (?:is|are|for)\b", re.IGNORECASE)),
    ("lesson_learned", re.compile(r"\b(?:lesson|learned|learnt|the hard way|turns out)\b", re.IGNORECASE)),
)


# "Forget that I use Vim.", "Please forget what I said about my address.", "Stop
# remembering my birthday." ("Forget it, ..." is "never mind"; "Don't forget that ..."
# asks to remember and is read by _NATURAL.)
_FORGET = re.compile(
    r"(?:(?:also|and|oh|ok|okay|so|btw|actually),?\s+){0,3}(?:(?:can|could|would|will) you\s+)?(?:please,?\s+)?"
    r"(?:forget(?!\s+(?:it|about it)\b)|stop remembering|(?:don't|do not) remember|"
    r"(?:delete|erase|remove) (?:what i (?:said|told you)|everything|anything|that))\b",
    re.IGNORECASE,
)


# What comes between the request and its topic: "that", "about", "what I said about".
_FORGET_LEAD = re.compile(
    r"^\s*(?:(?:what|everything|anything|all)\s+(?:i(?:'ve| have)?\s+)?(?:said|told you|mentioned|shared)"
    r"(?:\s+(?:about|regarding|on))?|(?:everything|anything|all)\s+about|about|that|this:|:)\s*",
    re.IGNORECASE,
)


def asks_to_forget(sentence: str) -> bool:
    """Whether a sentence asks the assistant to forget something: what it says is
    not to become memory ("Forget that I use Vim." must not store that Ada uses Vim)."""
    return _FORGET.match(sentence.strip()) is not None


def forget_topic(sentence: str) -> str | None:
    """What a sentence asks to forget ("Forget what I said about my birthday." gives
    "my birthday"), or None when it asks nothing of the kind or names nothing."""
    stripped = sentence.strip()
    match = _FORGET.match(stripped)
    if match is None:
        return None
    rest = _FORGET_LEAD.sub("", stripped[match.end() :], count=1)
    return rest.strip(" \t.!?,;:") or None


def parse_directives(text: str) -> tuple[DirectiveCandidate, ...]:
    """Every directive in ``text``: the explicit ones, then those said in words;
    lines that merely contain a colon are ignored."""
    return _explicit(text) + _natural(text)


def _explicit(text: str) -> tuple[DirectiveCandidate, ...]:
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


def directive_content(sentence: str) -> str | None:
    """What a sentence asks to be remembered ("Remember that X." gives "X."), or None
    when it does not open with a directive phrase or states nothing after it."""
    match = _NATURAL.match(sentence.strip())
    if match is None:
        return None
    body = match.group("body").strip()
    asked = match.group("asked") is not None  # "Can you remember that X?" asks to keep X
    if _NOT_CONTENT.match(body) or not re.search(r"\w", body) or (body.endswith("?") and not asked):
        return None
    return body


def _natural(text: str) -> tuple[DirectiveCandidate, ...]:
    found = []
    for sentence in split_sentences(text):
        body = directive_content(sentence)
        if body is None:
            continue
        statement = body.rstrip(".!?").strip()
        kind: PromotionKind = next((kind for kind, cue in _NATURAL_KINDS if cue.search(statement)), "decision")
        found.append(DirectiveCandidate(kind=kind, statement=statement, key=_key(kind, statement)))
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
    twice ("decision: ship on Fridays" beside "ship on Fridays").

    A directive said in words gives way instead to a fact stating its very content
    ("Remember that Project Atlas uses MySQL" keyed "atlas: database"): that fact's
    key is the subject's, so a later "we moved Atlas to PostgreSQL" supersedes it,
    which a directive's key (its first words) would not."""
    if extraction.directives:
        directives = extraction.directives
    else:
        stated = {normalise_statement(fact.statement) for fact in extraction.facts}
        natural = tuple(d for d in _natural(text) if normalise_statement(d.statement) not in stated)
        directives = _explicit(text) + natural
    if not directives:
        return extraction
    facts = tuple(fact for fact in extraction.facts if not parse_directives(fact.statement))
    return msgspec.structs.replace(extraction, directives=directives, facts=facts)
