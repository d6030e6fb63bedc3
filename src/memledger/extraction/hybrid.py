"""Hybrid extraction: the heuristic first, the model only for turns it left unsettled.

A user turn goes to the model when the heuristic's answer leaves any of these
(the rule is ``unsettled_reasons``; docs/llm-extraction.md has the why):

- ``reported``: the extractor named unsettled spans (``TurnExtraction.unsettled``);
- ``low_confidence``: a candidate below 0.7, which the policy would store flagged low;
- ``unplaced_entity``: an entity that no relationship end or fact mentions (unless every
  sentence is a question: a question asserts nothing to relate it by);
- ``unnamed_span``: a name-shaped word of the text (a capital letter past a sentence's
  start, an inner capital or a digit: "Sarah", "FastAPI", "S3") that no candidate names;
- ``sampled``: every ``sample_every``-th turn by a stable hash of its event id, to
  measure what the heuristic misses without the rule's bias.

Never sent: turns of other roles (the policy stores nothing of them) and turns whose text
holds a credential (the policy refuses every candidate of such a turn, and a credential
must not leave for a provider). A sent turn keeps the union of both answers, deduplicated
(``merged``); the policy then treats it as any extractor's. If the model fails, the
turn keeps the heuristic's answer alone. Pure, apart from the extractors it is given.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Final, TypeVar

import msgspec

from memledger.events.keys import normalise_name, normalise_statement, relationship_key
from memledger.extraction.protocol import (
    EntityCandidate,
    Extractor,
    FactCandidate,
    RelationshipCandidate,
    RetractionCandidate,
    TurnExtraction,
    TurnText,
)
from memledger.extraction.secrets import find_secret

SETTLED_CONFIDENCE: Final = 0.7  # below it the policy flags a candidate low: worth a second opinion
SCAN_CHARS: Final = 100_000  # as much of a turn as the heuristic reads
_WORD: Final = re.compile(r"[^\W_](?:[\w+#.-]*[\w+#])?")
_SENTENCE_END: Final = re.compile(r"[.!?:;\n\"'(\[*•-]\s*$")

T = TypeVar("T")


def name_shaped(text: str) -> list[str]:
    """The words of ``text`` that look like names: an upper-case letter not at a sentence's
    start ("with Sarah"), or anywhere past the first letter, or a digit ("FastAPI", "S3").
    "I", sentence-initial capitals ("The", "We") and words led by a digit ("4GB") are not."""
    found = []
    for match in _WORD.finditer(text[:SCAN_CHARS]):
        word = match.group()
        if word[0].isdigit() or word == "I":  # quantities and versions ("4GB", "3.11"), and "I"
            continue
        inner = any(c.isupper() or c.isdigit() for c in word[1:])
        start = not text[: match.start()].strip() or bool(_SENTENCE_END.search(text[: match.start()][-3:]))
        if inner or (word[0].isupper() and not start):
            found.append(word)
    return list(dict.fromkeys(found))


def _named(found: TurnExtraction) -> str:
    """Every name and statement the candidates hold, normalised and joined, to look words up in."""
    parts: list[str | None] = []
    for e in found.entities:
        parts += [e.name, *e.aliases]
    edges: list[RelationshipCandidate | RetractionCandidate] = [*found.relationships, *found.retractions]
    for r in edges:
        parts += [r.source_name, r.target_name]
    for f in found.facts:
        parts += [f.statement, f.value, f.key]
    parts += [d.statement for d in found.directives]
    return " \x1f ".join(normalise_name(p) for p in parts if p)


def unsettled_reasons(turn: TurnText, found: TurnExtraction, sample_every: int = 0) -> list[str]:
    """Why ``turn`` needs the model after the heuristic answered ``found`` (empty: it does not).
    See the module docstring for each reason."""
    if turn.role != "user" or find_secret(turn.text) is not None:
        return []
    reasons = []
    if found.unsettled:
        reasons.append("reported")
    confidences = [
        *(e.confidence for e in found.entities),
        *(r.confidence for r in found.relationships),
        *(f.confidence for f in found.facts),
    ]
    if any(c < SETTLED_CONFIDENCE for c in confidences):
        reasons.append("low_confidence")
    placed = " \x1f ".join(
        normalise_name(p)
        for p in [
            *(n for r in found.relationships for n in (r.source_name, r.target_name)),
            *(f.statement for f in found.facts),
            *(d.statement for d in found.directives),
        ]
    )
    # a question asserts nothing to relate its names by: "Is Bazel any good?" is settled
    if not _only_questions(turn.text) and any(normalise_name(e.name) not in placed for e in found.entities):
        reasons.append("unplaced_entity")
    named = _named(found)
    if any(normalise_name(word) not in named for word in name_shaped(turn.text)):
        reasons.append("unnamed_span")
    if sample_every > 0 and _bucket(turn.event_id, sample_every) == 0:
        reasons.append("sampled")
    return reasons


def _only_questions(text: str) -> bool:
    """Whether every sentence of ``text`` ends in a question mark (of any script's)."""
    sentences = [s for s in re.split(r"(?<=[.!?;\n\u3002\uff1f\uff01])\s*", text[:SCAN_CHARS]) if s.strip()]
    return bool(sentences) and all(s.rstrip().endswith(("?", "\uff1f", "\u061f")) for s in sentences)


def _bucket(event_id: str, n: int) -> int:
    """A stable bucket of ``n`` for an event id (no randomness: a retried batch samples alike)."""
    return int.from_bytes(hashlib.sha256(event_id.encode("utf-8", "surrogatepass")).digest()[:8], "big") % n


def _dedupe(items: Iterable[T], key: Callable[[T], Hashable]) -> tuple[T, ...]:
    """``items`` without repeats by ``key(item)``; of repeats, the most confident one, first seen on ties."""
    best: dict[Hashable, T] = {}
    for item in items:
        k = key(item)
        held = best.get(k)
        if held is None or getattr(item, "confidence", 0.0) > getattr(held, "confidence", 0.0):
            best[k] = item
    return tuple(best.values())


def _entity_key(e: EntityCandidate) -> tuple[str, str]:
    return normalise_name(e.name), e.entity_type


def _edge_key(r: RelationshipCandidate | RetractionCandidate) -> str:
    return relationship_key(r.source_type, r.source_name, r.relation, r.target_type, r.target_name)


def _fact_key(f: FactCandidate) -> tuple[str, str]:
    return normalise_name(f.key), normalise_statement(f.statement)


def merged(heuristic: TurnExtraction, model: TurnExtraction) -> TurnExtraction:
    """Both answers about one turn, each item once (the more confident of two alike; the
    heuristic's on a tie). Directives come from the heuristic alone: the model has none."""
    return TurnExtraction(
        entities=_dedupe((*heuristic.entities, *model.entities), _entity_key),
        relationships=_dedupe((*heuristic.relationships, *model.relationships), _edge_key),
        retractions=_dedupe((*heuristic.retractions, *model.retractions), _edge_key),
        facts=_dedupe((*heuristic.facts, *model.facts), _fact_key),
        directives=heuristic.directives,
    )


class HybridExtractor:
    """The heuristic for every turn, the model (``llm``) only for the unsettled ones.

    Each turn's ``answered_by`` names who answered it: the heuristic for a settled turn
    or one the model failed on, None (this extractor) for a merged answer. ``turns_sent``
    and ``turns_settled`` count user turns since construction; ``reasons`` counts why turns were sent.
    """

    version = "1"

    def __init__(self, heuristic: Extractor, llm: Extractor, *, sample_every: int = 0) -> None:
        self.heuristic = heuristic
        self.llm = llm
        self.name = f"hybrid:{llm.name}"
        self.sample_every = sample_every
        self.turns_sent = 0
        self.turns_settled = 0
        self.reasons: dict[str, int] = {}

    def extract(self, turns: Sequence[TurnText]) -> Mapping[str, TurnExtraction]:
        """Candidates for each user turn; the model sees only the unsettled ones."""
        first = self.heuristic.extract(turns)
        by = (self.heuristic.name, self.heuristic.version)
        out = {turn_id: _answered(found, by) for turn_id, found in first.items()}
        unsettled = []
        for turn in turns:
            reasons = unsettled_reasons(turn, first.get(turn.turn_id, TurnExtraction()), self.sample_every)
            for reason in reasons:
                self.reasons[reason] = self.reasons.get(reason, 0) + 1
            if reasons:
                unsettled.append(turn)
            elif turn.role == "user":
                self.turns_settled += 1
        self.turns_sent += len(unsettled)
        if not unsettled:
            return out
        fell_back = _fallback_of(self.llm)
        for turn_id, answer in self.llm.extract(unsettled).items():
            failed = answer.answered_by is not None and fell_back in (None, answer.answered_by)
            if failed or turn_id not in {t.turn_id for t in unsettled}:
                continue  # the model failed (its fallback answered): the heuristic's stands
            out[turn_id] = merged(first.get(turn_id, TurnExtraction()), answer)
        return out

    # the model's counters, for the worker's report (service.extraction._model_counts)
    @property
    def refused_answers(self) -> int:
        return int(getattr(self.llm, "refused_answers", 0))

    @property
    def refused_items(self) -> int:
        return int(getattr(self.llm, "refused_items", 0))

    @property
    def fallbacks(self) -> int:
        return int(getattr(self.llm, "fallbacks", 0))

    @property
    def model_switches(self) -> int:
        return int(getattr(self.llm, "model_switches", 0))


def _fallback_of(llm: Extractor) -> tuple[str, str] | None:
    """Who answers for ``llm`` when its models fail (None: unknown, so any answer
    naming another extractor is taken for the fallback's); a later model of its chain
    names itself, and its answer is the model's."""
    fallback = getattr(llm, "fallback", None)
    return None if fallback is None else (fallback.name, fallback.version)


def _answered(found: TurnExtraction, by: tuple[str, str]) -> TurnExtraction:
    return msgspec.structs.replace(found, answered_by=found.answered_by or by)
