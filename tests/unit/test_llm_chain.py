"""The LLM extractor's chain of models (litellm's Router), offline: each model's answer
is litellm's ``mock_response``, chosen per model by a wrapper of ``litellm.completion``
that also records which models were asked, in order.
"""

from __future__ import annotations

import os

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # no network fetch at import

import json
import logging
from collections.abc import Callable, Mapping
from typing import Any

import litellm
import pydantic
import pytest

from memledger.adapters.llm_extractor import LlmExtractor
from memledger.bootstrap import build_extractor
from memledger.config import Settings
from memledger.extraction.hybrid import HybridExtractor
from memledger.extraction.modes import ModeSwitch
from tests.unit.test_llm_extractor import TURNS, VALID, Fallback, from_fallback

litellm.suppress_debug_info = True
FIRST, SECOND = "openai/first-choice", "openai/second-choice"
DOWN = "litellm.InternalServerError"  # litellm's mock of a provider's 500


class ByModel:
    """Wraps ``litellm.completion``: answers each model with its own ``mock_response``
    and records the models asked; the real function still runs."""

    def __init__(self, real: Callable[..., Any], answers: Mapping[str, str]) -> None:
        self.real, self.answers = real, dict(answers)
        self.asked: list[str] = []

    def __call__(self, **kwargs: Any) -> Any:
        self.asked.append(kwargs["model"])
        kwargs["mock_response"] = self.answers[kwargs["model"]]
        return self.real(**kwargs)


def answering(monkeypatch: pytest.MonkeyPatch, **answers: str) -> ByModel:
    wrapper = ByModel(litellm.completion, {FIRST: answers["first"], SECOND: answers["second"]})
    monkeypatch.setattr(litellm, "completion", wrapper)
    return wrapper


def chain(**kw: Any) -> LlmExtractor:
    return LlmExtractor((FIRST, SECOND), Fallback(), retries=1, sleep=lambda _: None, **kw)


def test_a_failing_first_model_switches_to_the_second(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    models = answering(monkeypatch, first=DOWN, second=json.dumps(VALID))
    llm = chain()
    with caplog.at_level(logging.WARNING, logger="memledger.adapters.llm_extractor"):
        found = llm.extract(TURNS)
    assert models.asked == [FIRST, SECOND]
    assert (llm.model_switches, llm.fallbacks, llm.fallback.calls) == (1, 0, [])  # type: ignore[attr-defined]
    assert {f.answered_by for f in found.values()} == {(f"llm:{SECOND}", "1")}
    assert llm.name == f"llm:{FIRST}"  # the checkpoint stays the first model's
    assert f"model {SECOND} answered instead of {FIRST}" in caplog.text


def test_the_first_model_answering_names_no_one_else(monkeypatch: pytest.MonkeyPatch) -> None:
    models = answering(monkeypatch, first=json.dumps(VALID), second=DOWN)
    llm = chain()
    found = llm.extract(TURNS)
    assert models.asked == [FIRST]
    assert llm.model_switches == 0
    assert {f.answered_by for f in found.values()} == {None}


def test_every_model_failing_falls_back_to_the_heuristic(monkeypatch: pytest.MonkeyPatch) -> None:
    models = answering(monkeypatch, first=DOWN, second=DOWN)
    llm = chain()
    found = llm.extract(TURNS)
    assert models.asked == [FIRST, SECOND]
    assert (llm.fallbacks, llm.model_switches) == (1, 0)
    assert found == from_fallback(TURNS)


def test_a_failed_first_model_is_skipped_during_its_cool_down(monkeypatch: pytest.MonkeyPatch) -> None:
    models = answering(monkeypatch, first=DOWN, second=json.dumps(VALID))
    llm = chain(cooldown_s=60)
    llm.extract(TURNS)
    models.asked.clear()
    llm.extract(TURNS)
    assert models.asked == [SECOND]  # straight to the second: the first is cooling down
    assert llm.model_switches == 2


def test_no_cool_down_asks_the_first_model_every_time(monkeypatch: pytest.MonkeyPatch) -> None:
    models = answering(monkeypatch, first=DOWN, second=json.dumps(VALID))
    llm = chain(cooldown_s=0)
    llm.extract(TURNS)
    llm.extract(TURNS)
    assert models.asked == [FIRST, SECOND, FIRST, SECOND]


def test_a_hybrid_keeps_an_answer_of_the_second_model(monkeypatch: pytest.MonkeyPatch) -> None:
    from memledger.extraction.heuristic import HeuristicExtractor

    answering(monkeypatch, first=DOWN, second=json.dumps(VALID))
    heuristic = HeuristicExtractor()
    llm = LlmExtractor((FIRST, SECOND), heuristic, retries=1)
    hybrid = HybridExtractor(heuristic, llm, sample_every=1)
    found = hybrid.extract(TURNS)
    assert hybrid.model_switches == 1
    assert any(f.answered_by != (heuristic.name, heuristic.version) for f in found.values())


def test_a_chain_of_one_model_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="distinct"):
        LlmExtractor((FIRST, FIRST), Fallback())


# --- settings ------------------------------------------------------------------------------


def settings(monkeypatch: pytest.MonkeyPatch, **env: str) -> Settings:
    for name in ("MEMLEDGER_LLM_MODEL", "MEMLEDGER_LLM_MODELS", "MEMLEDGER_EXTRACTOR"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(f"MEMLEDGER_{name.upper()}", value)
    return Settings()


def test_the_models_setting_is_an_ordered_comma_separated_list(monkeypatch: pytest.MonkeyPatch) -> None:
    assert settings(monkeypatch, llm_models=f" {FIRST} , {SECOND}").llm_chain == (FIRST, SECOND)


def test_one_model_is_a_chain_of_one(monkeypatch: pytest.MonkeyPatch) -> None:
    assert settings(monkeypatch, llm_model=FIRST).llm_chain == (FIRST,)
    assert settings(monkeypatch).llm_chain == ()


def test_both_settings_agree_when_the_model_is_the_first(monkeypatch: pytest.MonkeyPatch) -> None:
    chosen = settings(monkeypatch, llm_model=FIRST, llm_models=f"{FIRST},{SECOND}")
    assert chosen.llm_chain == (FIRST, SECOND)


@pytest.mark.parametrize(
    ("env", "says"),
    [
        ({"llm_models": f"{FIRST},,{SECOND}"}, "MEMLEDGER_LLM_MODELS has an empty entry"),
        ({"llm_models": f"{FIRST},"}, "MEMLEDGER_LLM_MODELS has an empty entry"),
        ({"llm_models": f"{FIRST},{SECOND},{FIRST}"}, "MEMLEDGER_LLM_MODELS names a model twice"),
        ({"llm_model": SECOND, "llm_models": f"{FIRST},{SECOND}"}, "is not the first of MEMLEDGER_LLM_MODELS"),
        ({"llm_cooldown_s": "-1"}, "llm_cooldown_s"),
    ],
    ids=["empty entry", "trailing comma", "twice", "two first models", "negative cool-down"],
)
def test_a_bad_chain_setting_is_refused_naming_it(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], says: str
) -> None:
    with pytest.raises(pydantic.ValidationError, match=says):
        settings(monkeypatch, **env)


def test_the_composition_root_builds_the_chain(monkeypatch: pytest.MonkeyPatch) -> None:
    chosen = settings(monkeypatch, extractor="llm", llm_models=f"{FIRST},{SECOND}", llm_cooldown_s="5")
    built = build_extractor(chosen)
    assert isinstance(built, ModeSwitch)
    llm = built.by_mode["llm"]
    assert isinstance(llm, LlmExtractor)
    assert (llm.models, llm.cooldown_s, llm.name) == ((FIRST, SECOND), 5.0, f"llm:{FIRST}")
    assert built.model_switches == 0
