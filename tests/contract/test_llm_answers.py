"""The LLM adapter on recorded malformed answers (tests/data/llm_answers_corpus.json,
``malformed``): each is handled as the file says, offline through ``mock_response``."""

from __future__ import annotations

import json

import pytest

from memledger.adapters.llm_extractor import parse_answer
from memledger.events import codec
from memledger.events.catalogue import EntityObserved
from memledger.extraction.protocol import TurnExtraction, TurnText
from tests.contract.recorded import ITEMS, RecordedLlm, load
from tests.contract.test_extractor_contract import SECRET, stored, turn

MALFORMED = load()["malformed"]
T001 = turn("t001", "I'm using FastAPI for project Phoenix with my colleague Sarah.")


class Fallback:
    name, version = "fallback", "1"

    def extract(self, turns: list[TurnText]) -> dict[str, TurnExtraction]:
        return {t.turn_id: TurnExtraction() for t in turns}


def answered(case: str, retries: int = 2) -> tuple[RecordedLlm, dict[str, TurnExtraction]]:
    llm = RecordedLlm(Fallback(), fixed=MALFORMED[case]["content"], retries=retries)
    return llm, dict(llm.extract([T001]))


def test_every_malformed_answer_says_how_it_is_handled() -> None:
    assert all(case["content"] and case["handling"] for case in MALFORMED.values())


def test_an_answer_that_is_not_json_is_refused_retried_then_the_fallback_answers() -> None:
    llm, found = answered("not json")
    assert (llm.calls, llm.refused_answers, llm.fallbacks) == (2, 2, 1)
    assert found["t001"].answered_by == ("fallback", "1")


def test_an_unknown_field_in_the_frame_refuses_the_answer() -> None:
    llm, found = answered("unknown frame field")
    assert (llm.refused_answers, llm.fallbacks) == (2, 1)
    assert found["t001"].answered_by == ("fallback", "1")


def test_an_unknown_field_in_an_item_drops_that_item_only() -> None:
    llm, found = answered("unknown item field")
    assert (llm.refused_items, llm.fallbacks, llm.calls) == (1, 0, 1)
    assert [e.name for e in found["t001"].entities] == ["Sarah"]


def test_items_of_the_wrong_types_are_dropped_and_counted() -> None:
    llm, found = answered("wrong types")
    assert (llm.refused_items, llm.fallbacks) == (3, 0)
    assert [e.name for e in found["t001"].entities] == ["Phoenix"]
    assert found["t001"].relationships == ()


def test_an_answer_whose_every_item_is_wrong_is_refused() -> None:
    llm, _ = answered("every item wrong")
    assert (llm.refused_answers, llm.fallbacks) == (2, 1)


def test_a_credential_the_model_puts_in_an_entity_is_refused_by_the_policy() -> None:
    llm = RecordedLlm(Fallback(), fixed=MALFORMED["credential in an entity"]["content"])
    events, counts = stored(llm, [T001])
    assert [e.event.name for _, e in events if isinstance(e.event, EntityObserved)] == ["FastAPI"]
    assert counts.refused_secrets == 2
    stored_text = "".join(codec.encode(e.event).decode() for _, e in events)
    assert SECRET not in stored_text and "hunter22" not in stored_text


def test_answers_about_turns_not_sent_are_dropped() -> None:
    llm, found = answered("unknown turn id")
    assert found == {} and llm.fallbacks == 0


@pytest.mark.parametrize("name", ["llm_answers_corpus.json", "llm_answers_blind.json"])
def test_every_recorded_answer_passes_the_schema(name: str) -> None:
    answers = load(name)["answers"]
    content = json.dumps({"turns": [{"turn_id": key, **{k: a[k] for k in ITEMS}} for key, a in answers.items()]})
    parsed, refused = parse_answer(content)
    assert refused == 0 and len(parsed.turns) == len(answers)
