"""Facts for the heuristic extractor. Pure."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from memledger.extraction.patterns import Sentence
from memledger.extraction.protocol import FactCandidate

if TYPE_CHECKING:
    from memledger.extraction.heuristic import Edge


def facts_for_sentence(sentence: Sentence, edges: Sequence[Edge]) -> list[FactCandidate]:
    return []
