"""Hybrid extraction and per-tenant modes: the rule that sends a turn to the model, the
merge of both answers, the fail-safe, the mode switch and the setting's event."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import msgspec
import pytest

from memledger.errors import InvalidCommand
from memledger.events import codec
from memledger.events.catalogue import TenantSettingsChanged
from memledger.extraction.heuristic import HeuristicExtractor
from memledger.extraction.hybrid import HybridExtractor, merged, name_shaped, unsettled_reasons
from memledger.extraction.modes import ModeSwitch
from memledger.extraction.protocol import (
    EntityCandidate,
    FactCandidate,
    RelationshipCandidate,
    TurnExtraction,
    TurnText,
)
from memledger.service import tenant_settings
from tests.contract.recorded import RecordedLlm
from tests.contract.test_extractor_contract import turn

FASTAPI = EntityCandidate(name="FastAPI", entity_type="tool", confidence=0.9)
USES = RelationshipCandidate(
    source_name="ann", source_type="user", relation="USES", target_name="FastAPI", target_type="tool", confidence=0.9
)


class Fixed:
    """An extractor answering ``found`` for every user turn, and counting calls."""

    def __init__(self, name: str, found: TurnExtraction) -> None:
        self.name, self.version, self.found, self.calls = name, "1", found, 0

    def extract(self, turns: Sequence[TurnText]) -> Mapping[str, TurnExtraction]:
        self.calls += 1
        return {t.turn_id: self.found for t in turns if t.role == "user"}


def test_name_shaped_words_skip_sentence_starts_quantities_and_i() -> None:
    text = "The staging box runs Postgres 15. We moved 4GB to S3 with FastAPI, and I told Wei."
    assert name_shaped(text) == ["Postgres", "S3", "FastAPI", "Wei"]


def test_a_turn_whose_names_are_all_placed_is_settled() -> None:
    t = turn("a", "I use FastAPI.")
    assert unsettled_reasons(t, TurnExtraction(entities=(FASTAPI,), relationships=(USES,))) == []


@pytest.mark.parametrize(
    ("text", "found", "reason"),
    [
        ("I use FastAPI.", TurnExtraction(entities=(FASTAPI,)), "unplaced_entity"),
        ("I use FastAPI with Sarah.", TurnExtraction(entities=(FASTAPI,), relationships=(USES,)), "unnamed_span"),
        (
            "I use FastAPI.",
            TurnExtraction(entities=(FASTAPI,), relationships=(msgspec.structs.replace(USES, confidence=0.6),)),
            "low_confidence",
        ),
        ("ok then", TurnExtraction(unsettled=("switched to",)), "reported"),
    ],
    ids=["unplaced entity", "unnamed span", "low confidence", "reported by the extractor"],
)
def test_a_turn_the_heuristic_left_unsettled_goes_to_the_model(text: str, found: TurnExtraction, reason: str) -> None:
    assert reason in unsettled_reasons(turn("a", text), found)


def test_questions_small_talk_credentials_and_assistant_turns_stay_home() -> None:
    assert unsettled_reasons(turn("q", "Is FastAPI any good?"), TurnExtraction(entities=(FASTAPI,))) == []
    assert unsettled_reasons(turn("s", "ok thanks, sounds good"), TurnExtraction()) == []
    secret = turn("k", "Sarah's key is sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv")
    assert unsettled_reasons(secret, TurnExtraction()) == []
    assert unsettled_reasons(turn("b", "Use Sarah's FastAPI.", role="assistant"), TurnExtraction()) == []


def test_sampling_sends_every_nth_turn_by_a_stable_hash() -> None:
    turns = [turn(f"t{i}", "ok") for i in range(200)]
    sampled = [t for t in turns if unsettled_reasons(t, TurnExtraction(), sample_every=10)]
    assert 5 <= len(sampled) <= 40
    assert sampled == [t for t in turns if unsettled_reasons(t, TurnExtraction(), sample_every=10)]


def test_merging_keeps_each_item_once_at_its_highest_confidence() -> None:
    fact = FactCandidate(key="Editor", statement="The user uses vim", category="preference", confidence=0.7)
    heuristic = TurnExtraction(entities=(FASTAPI,), facts=(fact,))
    model = TurnExtraction(
        entities=(msgspec.structs.replace(FASTAPI, name="fastapi", confidence=0.95),),
        relationships=(USES,),
        facts=(msgspec.structs.replace(fact, key="editor", statement="The user uses vim.", confidence=0.8),),
    )
    both = merged(heuristic, model)
    assert [(e.name, e.confidence) for e in both.entities] == [("fastapi", 0.95)]
    assert both.relationships == (USES,)
    assert [f.confidence for f in both.facts] == [0.8]


def test_hybrid_merges_for_unsettled_turns_and_names_the_heuristic_for_the_rest() -> None:
    heuristic = Fixed("heuristic", TurnExtraction(entities=(FASTAPI,)))
    model = Fixed("llm:m", TurnExtraction(relationships=(USES,)))
    hybrid = HybridExtractor(heuristic, model)
    found = hybrid.extract([turn("a", "I use FastAPI."), turn("q", "Is FastAPI fast?")])
    assert found["a"].answered_by is None and found["a"].relationships == (USES,)
    assert found["q"] == TurnExtraction(entities=(FASTAPI,), answered_by=("heuristic", "1"))
    assert (model.calls, hybrid.turns_sent, hybrid.turns_settled) == (1, 1, 1)


def test_when_the_model_fails_hybrid_keeps_the_heuristics_answer() -> None:
    heuristic = HeuristicExtractor()
    llm = RecordedLlm(heuristic, fixed="not json", retries=2)
    hybrid = HybridExtractor(heuristic, llm)
    t = turn("a", "Kenji, my teammate, set up the CI pipeline on GitHub Actions yesterday.")
    found = hybrid.extract([t])
    assert llm.fallbacks == 1 and hybrid.fallbacks == 1
    by = (heuristic.name, heuristic.version)
    assert found["a"] == msgspec.structs.replace(heuristic.extract([t])["a"], answered_by=by)


def test_the_mode_switch_routes_each_turn_and_keeps_the_defaults_name() -> None:
    heuristic = Fixed("heuristic", TurnExtraction(entities=(FASTAPI,)))
    llm = Fixed("llm:m", TurnExtraction(relationships=(USES,)))
    switch = ModeSwitch(heuristic, {"heuristic": heuristic, "llm": llm})
    turns = [
        turn("a", "x"),
        msgspec.structs.replace(turn("b", "y"), mode="llm"),
        msgspec.structs.replace(turn("c", "z"), mode="hybrid"),  # not configured: the default
    ]
    found = switch.extract(turns)
    assert (switch.name, switch.version) == ("heuristic", "1")
    assert found["a"].answered_by is None and found["c"].answered_by is None
    assert found["b"].answered_by == ("llm:m", "1") and found["b"].relationships == (USES,)


def test_the_extraction_mode_is_a_tenant_setting_and_old_changes_still_decode() -> None:
    old = codec.decode("tenant.settings_changed", 1, b'{"type": "tenant.settings_changed", "capture": false}')
    assert isinstance(old, TenantSettingsChanged) and old.extraction_mode is None
    change = tenant_settings.switches_change({"extraction_mode": "hybrid"})
    assert codec.decode("tenant.settings_changed", 1, codec.encode(change)) == change
    assert tenant_settings.fold([old, change]) == tenant_settings.TenantSettings(
        capture=False, extraction_mode="hybrid"
    )
    with pytest.raises(InvalidCommand, match="extraction_mode must be one of"):
        tenant_settings.switches_change({"extraction_mode": "magic"})
