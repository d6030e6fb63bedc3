"""A model that answers from recorded answers (tests/data/llm_answers_*.json), through
litellm's ``mock_response``: the adapter's call, parsing and fallback run for real, offline."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no network fetch at import

from memledger.adapters.llm_extractor import LlmExtractor
from memledger.extraction.protocol import Extractor, TurnText

DATA = Path(__file__).resolve().parents[1] / "data"
MODEL = "openai/gpt-4o-mini"
ITEMS = ("entities", "relationships", "retractions", "facts")


def text_key(text: str) -> str:
    """How a recorded answer is found: the first 16 hex digits of its turn text's sha256."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def load(name: str = "llm_answers_corpus.json") -> dict[str, Any]:
    """A recorded answers file of tests/data."""
    loaded: dict[str, Any] = json.loads((DATA / name).read_text(encoding="utf-8"))
    return loaded


class RecordedLlm(LlmExtractor):
    """``LlmExtractor`` whose every call is answered by ``mock_response``: the recorded
    answers for the call's turns (a turn with none gets no entry), or ``fixed`` if given.
    ``sent`` keeps the texts of each call's turns."""

    def __init__(
        self,
        fallback: Extractor,
        answers: Mapping[str, Any] | None = None,
        *,
        fixed: str | BaseException | None = None,
        **kw: Any,
    ) -> None:
        super().__init__(MODEL, fallback, sleep=lambda _: None, **kw)
        self.answers = dict(answers if answers is not None else load()["answers"])
        self.fixed = fixed
        self.sent: list[list[str]] = []

    def answer_for(self, turns: Sequence[TurnText]) -> str:
        """The recorded answer of a call about ``turns``, as the model's JSON."""
        found = [
            {"turn_id": t.turn_id, **{k: self.answers[text_key(t.text)].get(k, []) for k in ITEMS}}
            for t in turns
            if text_key(t.text) in self.answers
        ]
        return json.dumps({"turns": found})

    def _call(self, turns: Sequence[TurnText]) -> tuple[str, str]:
        self.sent.append([t.text for t in turns])
        self.options["mock_response"] = self.answer_for(turns) if self.fixed is None else self.fixed
        self._router = None  # the Router copies the options when built: rebuilt with this call's answer
        return super()._call(turns)
