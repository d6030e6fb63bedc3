"""Embedders: one contract for both implementations (the offline MiniLM model, and
litellm with a fake provider call), then what each must do on its own: the offline
one loads with no network and refuses files that fail their sha256 check; the
litellm one refuses vectors of the wrong size."""

from __future__ import annotations

import hashlib
import math
import shutil
import socket
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memledger import bootstrap
from memledger.adapters.embedding import (
    MINILM_SHA256,
    TOKENIZER_SHA256,
    Embedder,
    LitellmEmbedder,
    MiniLmEmbedder,
    default_model_path,
    default_tokenizer_path,
    offline,
)
from memledger.config import Settings
from memledger.errors import EmbeddingFailed
from memledger.projectors.embeddings import queries as embedding_queries


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    return math.fsum(x * y for x, y in zip(a, b, strict=True))


class EmbedderContract:
    """What every Embedder does. Subclasses provide ``embedder``."""

    def embedder(self) -> Embedder:
        raise NotImplementedError

    def test_one_normalised_vector_of_dim_per_text_in_order(self) -> None:
        embedder = self.embedder()
        texts = ["the cat sat on the mat", "quarterly revenue grew", "the cat sat on the mat"]
        vectors = embedder.embed(texts)
        assert len(vectors) == 3
        for vector in vectors:
            assert len(vector) == embedder.dim
            assert all(isinstance(v, float) for v in vector)
            assert math.isclose(math.fsum(v * v for v in vector), 1.0, rel_tol=1e-4)
        assert vectors[0] == vectors[2], "the same text gives the same vector"
        assert vectors[0] != vectors[1]
        assert embedder.embed([texts[1]])[0] == pytest.approx(vectors[1], abs=1e-5), "order is kept"

    def test_no_texts_no_vectors(self) -> None:
        assert self.embedder().embed([]) == []

    def test_it_names_its_model(self) -> None:
        embedder = self.embedder()
        assert embedder.model
        assert embedder.dim == 384


class TestMiniLm(EmbedderContract):
    def embedder(self) -> Embedder:
        return offline()

    def test_similar_sentences_are_closer_than_unrelated_ones(self) -> None:
        a, b, c, d = offline().embed(
            [
                "I like to write code in Python",
                "Python is my favourite programming language",
                "The weather in Paris is rainy today",
                "Does she have a puppy?",
            ]
        )
        pet = offline().embed(["Ada owns a dog"])[0]
        assert cosine(a, b) > cosine(a, c) + 0.3
        assert cosine(d, pet) > max(cosine(d, a), cosine(d, c))

    def test_long_texts_are_cut_at_256_tokens(self) -> None:
        head = "memory ledgers keep every event. " * 60  # well over 256 tokens
        long_a, long_b = offline().embed([head + "apples and pears", head + "a completely different ending"])
        assert long_a == pytest.approx(long_b, abs=1e-6), "only the first 256 tokens count"

    def test_it_loads_and_embeds_with_no_network(self, monkeypatch: pytest.MonkeyPatch) -> None:
        def refuse(*args: Any, **kwargs: Any) -> None:
            raise AssertionError(f"network use: {args}")

        monkeypatch.setattr(socket.socket, "connect", refuse)
        monkeypatch.setattr(socket, "create_connection", refuse)
        monkeypatch.setattr(socket, "getaddrinfo", refuse)
        fresh = MiniLmEmbedder()  # not the cached one: this one loads here
        fresh.load()
        assert len(fresh.embed(["offline"])[0]) == 384

    def test_the_shipped_files_are_the_pinned_ones(self) -> None:
        assert hashlib.sha256(default_tokenizer_path().read_bytes()).hexdigest() == TOKENIZER_SHA256
        assert hashlib.sha256(default_model_path().read_bytes()).hexdigest() == MINILM_SHA256
        notice = default_tokenizer_path().with_name("NOTICE").read_text(encoding="utf-8")
        assert "Apache License" in notice and "minilm-tokenizer.json" in notice

    def test_a_changed_tokenizer_is_refused_naming_the_file(self, tmp_path: Path) -> None:
        copy = tmp_path / "minilm-tokenizer.json"
        data = bytearray(default_tokenizer_path().read_bytes())
        data[-2] = ord(" ") if data[-2] != ord(" ") else ord("\n")
        copy.write_bytes(bytes(data))
        with pytest.raises(EmbeddingFailed, match="sha256") as refused:
            MiniLmEmbedder(tokenizer_path=copy).embed(["hello"])
        assert str(copy) in str(refused.value)

    def test_a_changed_model_is_refused_naming_the_file(self, tmp_path: Path) -> None:
        copy = tmp_path / "model.onnx"
        shutil.copyfile(default_model_path(), copy)
        with copy.open("r+b") as f:
            f.seek(1000)
            byte = f.read(1)
            f.seek(1000)
            f.write(bytes([byte[0] ^ 0xFF]))
        with pytest.raises(EmbeddingFailed, match="sha256") as refused:
            MiniLmEmbedder(model_path=copy).load()
        assert str(copy) in str(refused.value)

    def test_a_missing_model_file_is_a_clear_error(self, tmp_path: Path) -> None:
        with pytest.raises(EmbeddingFailed, match="cannot read the embedding model file"):
            MiniLmEmbedder(model_path=tmp_path / "nothing.onnx").load()

    def test_building_one_loads_nothing(self) -> None:
        code = (
            "import sys\n"
            "from memledger import bootstrap\n"
            "from memledger.config import Settings\n"
            "from memledger.projectors import registry\n"
            "registry.all_projectors()\n"
            "bootstrap.build_embedder(Settings())\n"
            "assert 'onnxruntime' not in sys.modules, 'onnxruntime was imported'\n"
            "assert 'litellm' not in sys.modules, 'litellm was imported'\n"
        )
        subprocess.run([sys.executable, "-c", code], check=True)


def fake_provider(dim: int = 384, calls: list[dict[str, Any]] | None = None) -> Any:
    """A provider that answers in reverse order (litellm gives indexes) with
    unnormalised vectors derived from each text's hash."""

    def call(*, model: str, input: list[str], **options: Any) -> dict[str, Any]:
        if calls is not None:
            calls.append({"model": model, "input": input, **options})
        data = []
        for index, text in enumerate(input):
            digest = hashlib.sha256(text.encode()).digest()
            vector = [float(digest[i % 32]) - 127.5 for i in range(dim)]
            data.append({"index": index, "embedding": vector, "object": "embedding"})
        return {"data": list(reversed(data)), "model": model}

    return call


class TestLitellm(EmbedderContract):
    def embedder(self) -> Embedder:
        return LitellmEmbedder("openai/text-embedding-3-small", call=fake_provider())

    def test_it_asks_for_the_projection_dimension_in_batches(self) -> None:
        calls: list[dict[str, Any]] = []
        embedder = LitellmEmbedder("p/m", call=fake_provider(calls=calls), options={"api_base": "http://127.0.0.1:9"})
        embedder.embed([f"text {n}" for n in range(130)])
        assert [len(c["input"]) for c in calls] == [64, 64, 2]
        assert calls[0]["dimensions"] == 384
        assert calls[0]["api_base"] == "http://127.0.0.1:9"
        assert calls[0]["model"] == "p/m"

    def test_vectors_of_the_wrong_size_are_refused_naming_the_model(self) -> None:
        embedder = LitellmEmbedder("ollama/nomic-embed-text", call=fake_provider(dim=768))
        with pytest.raises(EmbeddingFailed, match=r"'ollama/nomic-embed-text' returned 768-dimensional"):
            embedder.embed(["hello"])

    def test_a_provider_error_is_an_embedding_failure(self) -> None:
        def broken(**_: Any) -> Any:
            raise ConnectionError("no route to host")

        with pytest.raises(EmbeddingFailed, match="no route to host"):
            LitellmEmbedder("p/m", call=broken).embed(["hello"])

    def test_through_litellm_itself_with_its_mock_response(self) -> None:
        vector = [3.0, 4.0] + [0.0] * 382
        embedder = LitellmEmbedder("openai/text-embedding-3-small", options={"mock_response": vector})
        (got,) = embedder.embed(["one text"])
        assert got[:2] == pytest.approx([0.6, 0.8])


def test_bootstrap_builds_the_embedder_the_settings_name_once_per_process() -> None:
    assert bootstrap.build_embedder(Settings()) is offline()
    assert isinstance(bootstrap.build_embedder(Settings(embedding_threads=2)), MiniLmEmbedder)
    chosen = bootstrap.build_embedder(Settings(embedding_model="openai/text-embedding-3-small"))
    assert isinstance(chosen, LitellmEmbedder)
    assert chosen.model == "openai/text-embedding-3-small"
    assert bootstrap.build_embedder(Settings(embedding_model="openai/text-embedding-3-small")) is chosen


def test_the_vector_channel_loads_the_offline_model_in_the_background() -> None:
    """A request's deadline starts when it is made; before, the first request of a process
    loaded the model (~0.6 s) before its clock started, and a 100 ms deadline took 0.9 s."""
    from types import SimpleNamespace

    from memledger import bootstrap
    from memledger.config import Settings

    embedder = MiniLmEmbedder()
    channel = bootstrap.vector_search(SimpleNamespace(settings=Settings()), embedder)  # type: ignore[arg-type]
    assert not embedder.loaded, "the caller did not wait for the model"
    vector = channel.start("Which database does Phoenix use?")(60)
    assert vector is not None and vector.dim == 384
    assert embedder.loaded


def test_a_query_vectors_text_form_gives_back_every_float32_exactly() -> None:
    """``to_literal`` writes 9 significant digits, not each number's shortest form:
    what pgvector parses (as float32) must be the vector itself, bit for bit."""
    rng = np.random.default_rng(7)
    for scale in (1.0, 1e-6, 1e-30, 1e37):  # finite float32s, small and large
        vector = (rng.standard_normal(384) * scale).astype(np.float32)
        literal = embedding_queries.to_literal(vector.tolist())
        assert literal.startswith("[") and literal.endswith("]") and " " not in literal
        parsed = np.array([float(part) for part in literal[1:-1].split(",")], dtype=np.float32)
        assert np.array_equal(parsed, vector)
    assert embedding_queries.to_literal([]) == "[]"
    assert embedding_queries.to_literal([0.5, -2.0]) == "[0.5,-2]"
