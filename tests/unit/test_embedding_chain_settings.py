"""The embedding chain's settings and what the composition root builds of them, offline
(nothing is embedded: building a chain loads nothing)."""

from __future__ import annotations

import pydantic
import pytest

from memledger import bootstrap
from memledger.adapters.embedding import MINILM_MODEL, LitellmEmbedder, MiniLmEmbedder
from memledger.adapters.embedding_chain import EmbeddingChain, Single, as_chain
from memledger.config import Settings

FIRST, SECOND = "openai/text-embedding-3-small", "openai/second-choice"
NAMES = (
    "MEMLEDGER_EMBEDDING_THREADS",
    "MEMLEDGER_EMBEDDING_MODEL",
    "MEMLEDGER_EMBEDDING_MODELS",
    "MEMLEDGER_EMBEDDING_RETRIES",
    "MEMLEDGER_EMBEDDING_COOLDOWN_S",
)


def settings(monkeypatch: pytest.MonkeyPatch, **env: str) -> Settings:
    for name in NAMES:
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(f"MEMLEDGER_{name.upper()}", value)
    return Settings()


def test_the_chain_is_an_ordered_comma_separated_list(monkeypatch: pytest.MonkeyPatch) -> None:
    assert settings(monkeypatch, embedding_models=f" {FIRST} , {SECOND},minilm").embedding_chain == (
        FIRST,
        SECOND,
        "minilm",
    )


def test_without_a_chain_the_one_model_is_a_chain_of_one(monkeypatch: pytest.MonkeyPatch) -> None:
    assert settings(monkeypatch).embedding_chain == ("minilm",)
    assert settings(monkeypatch, embedding_model=FIRST).embedding_chain == (FIRST,)
    assert settings(monkeypatch, embedding_model=FIRST, embedding_models=f"{FIRST},minilm").embedding_chain == (
        FIRST,
        "minilm",
    )


@pytest.mark.parametrize(
    ("env", "says"),
    [
        ({"embedding_models": f"{FIRST},,minilm"}, "MEMLEDGER_EMBEDDING_MODELS has an empty entry"),
        ({"embedding_models": f"{FIRST},"}, "MEMLEDGER_EMBEDDING_MODELS has an empty entry"),
        ({"embedding_models": f"{FIRST},{SECOND},{FIRST}"}, "MEMLEDGER_EMBEDDING_MODELS names a model twice"),
        ({"embedding_models": f"minilm,{FIRST}"}, "the offline model .* can only be the last"),
        ({"embedding_models": f"{FIRST},minilm-float32,minilm"}, "can only be the last of the chain, and only once"),
        ({"embedding_model": SECOND, "embedding_models": f"{FIRST},minilm"}, "is not the first of"),
        ({"embedding_cooldown_s": "-1"}, "embedding_cooldown_s"),
        ({"embedding_retries": "0"}, "embedding_retries"),
    ],
    ids=["empty entry", "trailing comma", "twice", "offline first", "two offline", "two first", "cooldown", "retries"],
)
def test_a_bad_chain_setting_is_refused_naming_it(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], says: str
) -> None:
    with pytest.raises(pydantic.ValidationError, match=says):
        settings(monkeypatch, **env)


def test_the_composition_root_builds_a_chain_whose_first_model_is_the_tenants(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    chosen = settings(
        monkeypatch,
        embedding_models=f"{FIRST},{SECOND},minilm",
        embedding_retries="3",
        embedding_cooldown_s="7",
        embedding_threads="3",  # an offline model of its own (the default one may be loaded by now),
        embedding_timeout_s="29.25",  # and a cache key no other test uses
    )
    built = bootstrap.build_embedder(chosen)
    assert isinstance(built, EmbeddingChain)
    assert (built.model, built.models) == (FIRST, (FIRST, SECOND, MINILM_MODEL))
    assert (built.providers, built.retries, built.cooldown_s) == ((FIRST, SECOND), 3, 7.0)
    assert isinstance(built.offline, MiniLmEmbedder) and not built.offline.loaded, "nothing loads until used"
    assert bootstrap.build_embedder(chosen) is built, "one chain per process: its cool-downs must outlive a call"
    assert as_chain(built) is built


def test_a_chain_of_providers_alone_has_no_offline_model(monkeypatch: pytest.MonkeyPatch) -> None:
    built = bootstrap.build_embedder(settings(monkeypatch, embedding_models=f"{FIRST},{SECOND}"))
    assert isinstance(built, EmbeddingChain) and built.offline is None
    assert built.models == (FIRST, SECOND)


def test_one_model_is_built_as_before_and_is_a_chain_of_one(monkeypatch: pytest.MonkeyPatch) -> None:
    built = bootstrap.build_embedder(settings(monkeypatch, embedding_model=FIRST))
    assert isinstance(built, LitellmEmbedder)
    chain = as_chain(built)
    assert isinstance(chain, Single) and chain.models == (FIRST,)
    offline = bootstrap.build_embedder(settings(monkeypatch))
    assert isinstance(offline, MiniLmEmbedder) and as_chain(offline).models == (MINILM_MODEL,)


def test_a_chain_refuses_a_model_twice_or_no_provider() -> None:
    with pytest.raises(ValueError, match="distinct"):
        EmbeddingChain((FIRST, FIRST))
    with pytest.raises(ValueError, match="a provider first"):
        EmbeddingChain((), MiniLmEmbedder())


def test_only_a_chain_naming_a_provider_loads_litellm(monkeypatch: pytest.MonkeyPatch) -> None:
    assert not bootstrap.names_a_model(settings(monkeypatch))
    assert bootstrap.names_a_model(settings(monkeypatch, embedding_models=f"{FIRST},minilm"))
