"""``ExtractorPool``: the heuristic read in worker processes gives what it gives in this
one, under the same name and version; a small batch stays here; a pool whose
processes died reads here instead; ``pooled`` swaps only the heuristic of a switch."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memledger.events.catalogue import Scopes
from memledger.extraction.heuristic import HeuristicExtractor
from memledger.extraction.modes import ModeSwitch
from memledger.extraction.protocol import TurnExtraction, TurnText
from memledger.service.extraction import checkpoint_name
from memledger.service.extraction_pool import MIN_PART, ExtractorPool, pooled

DEV_SET = Path(__file__).resolve().parents[1] / "data" / "conversations_dev.jsonl"


def dev_turns(count: int) -> list[TurnText]:
    """``count`` turns of the development conversations, every third an assistant's."""
    texts = [
        turn["text"]
        for line in DEV_SET.read_text(encoding="utf-8").splitlines()
        for session in json.loads(line)["sessions"]
        for turn in session["turns"]
    ]
    return [
        TurnText(
            tenant_id="t",
            turn_id=f"turn-{i}",
            event_id=f"event-{i}",
            role="assistant" if i % 3 == 2 else "user",
            text=text,
            scopes=Scopes(user="dana", project="atlas"),
            occurred_at=datetime(2026, 1, 1, tzinfo=UTC),
        )
        for i, text in enumerate(texts[:count])
    ]


@pytest.fixture
def pool() -> Iterator[ExtractorPool]:
    with ExtractorPool(HeuristicExtractor(), workers=2) as opened:
        yield opened


def test_the_pools_candidates_are_the_heuristics_own(pool: ExtractorPool) -> None:
    turns = dev_turns(300)
    found = pool.extract(turns)
    assert multiprocessing.active_children()  # read in processes of the pool
    expected = HeuristicExtractor().extract(turns)
    assert found == expected
    assert any(e.facts or e.entities for e in found.values())  # the text gives something to compare


def test_the_pool_extracts_under_the_heuristics_name_and_version(pool: ExtractorPool) -> None:
    heuristic = HeuristicExtractor()
    assert checkpoint_name(pool) == checkpoint_name(heuristic)


def test_a_small_batch_is_read_in_this_process(pool: ExtractorPool) -> None:
    before = set(multiprocessing.active_children())
    turns = dev_turns(MIN_PART)
    assert pool.extract(turns) == HeuristicExtractor().extract(turns)
    assert set(multiprocessing.active_children()) == before


def test_a_pool_whose_processes_died_reads_in_this_process(pool: ExtractorPool) -> None:
    turns = dev_turns(120)
    pool.extract(turns)
    for child in multiprocessing.active_children():
        os.kill(child.pid or 0, signal.SIGKILL)
        child.join()
    assert pool.extract(turns) == HeuristicExtractor().extract(turns)


class Model:
    """Stands for a model extractor: anything that is not the heuristic."""

    name = "llm"
    version = "1"

    def extract(self, turns: Sequence[TurnText]) -> Mapping[str, TurnExtraction]:
        return {}


def test_pooled_swaps_the_heuristic_of_a_switch_and_keeps_its_models(pool: ExtractorPool) -> None:
    heuristic, model = HeuristicExtractor(), Model()
    switch = pooled(ModeSwitch(heuristic, {"heuristic": heuristic, "llm": model}), pool)
    assert isinstance(switch, ModeSwitch)
    assert switch.default is pool and switch.by_mode == {"heuristic": pool, "llm": model}
    assert (switch.name, switch.version) == (heuristic.name, heuristic.version)
    assert pooled(heuristic, pool) is pool


def test_pooled_leaves_an_extractor_without_the_heuristic(pool: ExtractorPool) -> None:
    assert pooled(Model(), pool) is None
    assert pooled(ModeSwitch(Model(), {"llm": Model()}), pool) is None


def test_workers_below_one_are_refused() -> None:
    with pytest.raises(ValueError, match="workers"):
        ExtractorPool(HeuristicExtractor(), workers=0)
