"""The keys of facts: the facts a sentence's edges state, keyed by their slot, the topic
words a key names, and the candidate built on a key. Pure.

A key names the subject of a fact (see ``heuristic_facts``); the speaker's own
preferences and personal facts start with the speaker ("ada: ").
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Final

from memledger.events.catalogue import FactCategory, ScopeKind
from memledger.extraction import gazetteer as gz
from memledger.extraction.patterns import word_set
from memledger.extraction.protocol import FactCandidate

if TYPE_CHECKING:
    from memledger.extraction.patterns import Edge

_STOP: Final = word_set(
    "the a an our my your their his her its to for of in on with and or at by from this "
    "that these those all some any it them is are be been"
)


def edge_facts(statement: str, edges: Sequence[Edge], speaker: str) -> Iterator[FactCandidate]:
    """The facts ``edges`` state, one per slot (key, category, scope), each quoting ``statement``."""
    grouped: dict[tuple[str, FactCategory, ScopeKind], list[Edge]] = {}
    singular = _SINGULAR.search(statement) is not None and _PLURAL.search(statement) is None
    for edge in edges:
        slot = _slot(edge, speaker, singular=singular)
        if slot is not None:
            grouped.setdefault(slot, []).append(edge)
    for (key, category, scope), group in grouped.items():
        kept = [edge for edge in group if not edge.retracted]
        value = ", ".join(dict.fromkeys(edge.target.name for edge in kept)) or None
        confidence = min(0.85, max(edge.confidence for edge in group))
        yield FactCandidate(
            key=key,
            statement=statement,
            category=category,
            confidence=confidence,
            scope=scope,
            value=value,
            about_speaker=_own(key, category, speaker),
        )


# "I use Neovim" is the speaker's; "we use Postgres" the team's (keyed by its subject alone).
_SINGULAR: Final = re.compile(r"\b(?:i|i'm|i've|i'd|my|me)\b", re.IGNORECASE)
_PLURAL: Final = re.compile(r"\b(?:we|we're|we've|we'd|our|us)\b", re.IGNORECASE)


def _own(key: str, category: FactCategory, speaker: str) -> bool:
    """Whether a fact is the speaker's own personal fact or preference, said by them."""
    return bool(speaker) and key.startswith(speaker) and category in ("personal_fact", "preference")


def _slot(edge: Edge, speaker: str, *, singular: bool = False) -> tuple[str, FactCategory, ScopeKind] | None:
    target = edge.target
    subject = _subject(edge)
    kind = gz.tool_kind(target.name) if target.kind == "tool" else None
    topic = kind or target.name.lower()
    scope: ScopeKind = "project" if edge.source.kind == "project" else "user"
    if edge.relation == "USES":
        owner = subject or (speaker if singular else "")  # Grace's "I use Vim" is not Ada's editor
        return f"{owner}{topic}", "technical_fact", scope
    if edge.relation == "PREFERS" and not edge.retracted:
        owner = subject or speaker
        return (f"{owner}preferred {kind}" if kind else f"{owner}preference: {topic}", "preference", "user")
    if edge.relation == "DECIDED" and not edge.retracted:
        return f"{subject}{topic}" if kind else f"{subject}decision: {topic}", "decision", "project"
    if edge.relation == "PART_OF" and edge.source.kind == "user" and target.kind == "organization":
        return f"{speaker}employer", "personal_fact", "user"
    if edge.relation == "DEPENDS_ON" and not edge.retracted:
        return f"{subject}depends on {target.name.lower()}", "technical_fact", scope
    return None


def _subject(edge: Edge) -> str:
    return "" if edge.source.kind == "user" else f"{edge.source.name.lower()}: "


def topic_of(text: str | None, words: int = 3) -> str:
    """The first few content words of ``text``: the subject a key names."""
    if not text:
        return ""
    content = [w for w in re.findall(r"[\w#+.-]+", text.lower()) if w not in _STOP]
    return " ".join(content[:words]).strip(".")


def candidate(
    key: str,
    statement: str,
    category: FactCategory,
    confidence: float,
    scope: ScopeKind,
    value: str | None = None,
    *,
    speaker: str = "",
) -> FactCandidate:
    """A candidate; ``speaker`` when ``key`` may start with the speaker's name (see ``_own``)."""
    return FactCandidate(
        key=key[:200],
        statement=statement,
        category=category,
        confidence=confidence,
        scope=scope,
        value=value.strip() if value else None,
        about_speaker=_own(key, category, speaker),
    )
