"""Per-tenant extraction modes: heuristic, llm or hybrid, chosen turn by turn.

The worker fills each turn's ``mode`` from its tenant's settings; ``ModeSwitch`` hands
the turn to that mode's extractor. It carries the default extractor's name and version,
so the worker's checkpoint and streams stay the default's: choosing a mode for a tenant
changes how its turns from now on are extracted, and never re-extracts the past. The
events' metadata names the extractor that answered (``TurnExtraction.answered_by``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

import msgspec

from memledger.events.catalogue import ExtractionMode
from memledger.extraction.protocol import Extractor, TurnExtraction, TurnText

log = logging.getLogger(__name__)

MODES: tuple[ExtractionMode, ...] = ("heuristic", "llm", "hybrid")


class ModeSwitch:
    """An extractor that passes each turn to its tenant's mode's extractor
    (``by_mode``), or to ``default`` when the tenant chose none or a mode not configured
    here (no model: logged, and the default extracts)."""

    def __init__(self, default: Extractor, by_mode: Mapping[ExtractionMode, Extractor]) -> None:
        self.default = default
        self.by_mode = dict(by_mode)
        self.name = default.name
        self.version = default.version

    def extract(self, turns: Sequence[TurnText]) -> Mapping[str, TurnExtraction]:
        """Each group of turns of one mode, by its extractor; in batch order of groups."""
        groups: dict[ExtractionMode | None, list[TurnText]] = {}
        for turn in turns:
            groups.setdefault(turn.mode, []).append(turn)
        out: dict[str, TurnExtraction] = {}
        for mode, group in groups.items():
            chosen = self._chosen(mode)
            found = chosen.extract(group)
            if chosen is not self.default:  # the events' metadata names who answered
                by = (chosen.name, chosen.version)
                found = {k: msgspec.structs.replace(v, answered_by=v.answered_by or by) for k, v in found.items()}
            out.update(found)
        return out

    def _chosen(self, mode: ExtractionMode | None) -> Extractor:
        if mode is None:
            return self.default
        chosen = self.by_mode.get(mode)
        if chosen is None:
            log.warning("extraction mode %r is not configured here (no model?); %s extracts", mode, self.name)
            return self.default
        return chosen

    def _models(self) -> list[object]:
        """Each distinct model extractor in use (a hybrid's model may be the llm mode's)."""
        found: dict[int, object] = {}
        for each in self.by_mode.values():
            inner = getattr(each, "llm", each)
            if hasattr(inner, "refused_answers"):
                found[id(inner)] = inner
        return list(found.values())

    def _sum(self, counter: str) -> int:
        return sum(int(getattr(m, counter, 0)) for m in self._models())

    # the model's counters, for the worker's report (service.extraction._model_counts)
    @property
    def refused_answers(self) -> int:
        return self._sum("refused_answers")

    @property
    def refused_items(self) -> int:
        return self._sum("refused_items")

    @property
    def fallbacks(self) -> int:
        return self._sum("fallbacks")

    @property
    def model_switches(self) -> int:
        return self._sum("model_switches")
