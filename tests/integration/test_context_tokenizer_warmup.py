"""A context request naming a model never waits for litellm's import (issue 26).

litellm takes seconds to import (14-17 s seen): a request whose model's tokenizer is
not loaded yet counts by the estimate, says so, and records it, so its replay counts
the same way; servers start the import at startup when a model is configured. The
import here is a fake loader that blocks until released (the edge, not the database).
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Iterator
from types import ModuleType
from typing import TYPE_CHECKING

import pytest
from fastapi.testclient import TestClient

from memledger.adapters.tokenizers import Tokenizers
from memledger.api.app import create_app
from memledger.config import Settings
from memledger.events.catalogue import ContextServed, Scopes
from memledger.formatting import estimate, render
from memledger.library import MemoryLedger
from memledger.service import context, context_replay
from tests.e2e.conftest import scratch

if TYPE_CHECKING:
    from tests.conftest import TestDatabase

SCOPES = Scopes(session="s1", project="phoenix", user="ada")
MODEL = "fake-model"
MAX_TOKENS = 300
SAID = [
    "I use PostgreSQL for the Phoenix project.",
    "We decided to deploy Phoenix with Zorblaxify every Friday.",
    "I prefer Vim over Emacs for editing the Phoenix code.",
    "The Phoenix project is written in Python and uses FastAPI.",
    "My colleague Quentavius reviews every Phoenix pull request.",
]
REQUEST = "How do I deploy the Phoenix project and what does it use?"


def _model_tokens(model: str, text: str) -> int:
    return len(text) // 2  # twice the estimate: a budget fits less by it


def _fake_litellm() -> ModuleType:
    module = ModuleType("fake_litellm")
    module.get_model_info = lambda model: {"max_tokens": 8192}  # type: ignore[attr-defined]
    module.token_counter = _model_tokens  # type: ignore[attr-defined]
    return module


@dataclasses.dataclass
class Loading:
    """Tokenizers whose import lasts until ``release`` is set."""

    tokenizers: Tokenizers
    release: threading.Event


@pytest.fixture
def loading() -> Iterator[Loading]:
    release = threading.Event()

    def slow_import() -> ModuleType:
        release.wait(120)
        return _fake_litellm()

    yield Loading(Tokenizers(estimate, loader=slow_import), release)
    release.set()


@pytest.fixture(scope="module")
def library(database: TestDatabase) -> Iterator[MemoryLedger]:
    with scratch(database, "tokenizer_warmup") as opened:
        yield opened


def _serve(library: MemoryLedger, tenant: str, tokenizers: Tokenizers) -> context.ServedContext:
    request = context.SelectRequest(tenant, SCOPES, REQUEST, deadline_ms=context.DEFAULT_DEADLINE_MS)
    engine = library.database.for_tenant(tenant)
    return context.build_context(engine, request, max_tokens=MAX_TOKENS, token_model=MODEL, tokenizers=tokenizers)


def _recorded(library: MemoryLedger, tenant: str, event_id: str) -> ContextServed:
    with library.database.engine.connect() as conn:
        return context_replay.find_served(conn, tenant, event_id)


@pytest.fixture
def said(library: MemoryLedger, tenant: str) -> str:
    for text in SAID:
        library.record_turn(tenant, "user", text, scopes=SCOPES)
    library.process()
    first = context.SelectRequest(tenant, SCOPES, REQUEST)  # loads the embedder, off the clock below
    context.build_context(library.database.for_tenant(tenant), first)
    return tenant


def test_a_request_naming_a_model_is_served_in_its_deadline_by_the_estimate_while_the_tokenizer_loads(
    library: MemoryLedger, said: str, loading: Loading
) -> None:
    started = time.monotonic()
    served = _serve(library, said, loading.tokenizers)
    elapsed_ms = (time.monotonic() - started) * 1000

    assert elapsed_ms < context.DEFAULT_DEADLINE_MS, f"took {elapsed_ms:.0f} ms"
    assert served.selection.items, served.selection.empty_reason
    assert served.tokens_estimated
    assert served.block.tokens == estimate(served.block.text)
    assert _recorded(library, said, served.event_id).token_model is None, "recorded as counted: by the estimate"
    assert not loading.tokenizers.ready, "the import runs on"
    assert loading.tokenizers.warm().is_alive(), "in the background, started by the request"


def test_a_block_counted_by_the_estimate_replays_the_same_once_the_tokenizer_is_loaded(
    library: MemoryLedger, said: str, loading: Loading
) -> None:
    tokenizers = loading.tokenizers
    served = _serve(library, said, tokenizers)
    loading.release.set()
    tokenizers.warm().join(10)
    assert tokenizers.ready
    by_model = render(served.selection, max_chars=5000, max_tokens=MAX_TOKENS, count_tokens=tokenizers.counter(MODEL))
    assert by_model.sha256 != served.block.sha256, "the model's tokenizer would render another block"

    replayed = context_replay.replay(library.database.engine, said, served.event_id, tokenizers)

    assert replayed.matches
    assert replayed.block.text == served.block.text
    now = _serve(library, said, tokenizers)  # loaded: counted by the model, recorded so, replayed so
    assert not now.tokens_estimated
    assert now.block.text == by_model.text
    assert _recorded(library, said, now.event_id).token_model == MODEL
    assert context_replay.replay(library.database.engine, said, now.event_id, tokenizers).matches


@pytest.mark.parametrize(
    ("settings", "warmed"), [({"extractor": "llm", "llm_model": "gpt-4o-mini"}, True), ({}, False)]
)
def test_the_api_starts_loading_the_tokenizer_at_startup_when_a_model_is_configured(
    library: MemoryLedger, loading: Loading, settings: dict[str, str], warmed: bool
) -> None:
    configured = dataclasses.replace(
        library.database,
        settings=Settings(**settings),  # type: ignore[arg-type]
        tokenizers=loading.tokenizers,
    )
    with TestClient(create_app(configured)):
        assert loading.tokenizers.started is warmed
