"""``EmbedderPool``: a call's texts embedded in parts on several threads at once, the
vectors back in the caller's order and equal to the wrapped embedder's own."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import pytest

from memledger.adapters.embedding import offline
from memledger.adapters.embedding_pool import MIN_PART, EmbedderPool, split
from memledger.errors import EmbeddingFailed
from memledger.service import readiness


class Recording:
    """A fake embedder: the vector of a text is its length and first character's code;
    every call waits at a barrier, so calls that do not run side by side time out."""

    model = "fake"
    dim = 2

    def __init__(self, parties: int) -> None:
        self.barrier = threading.Barrier(parties, timeout=5)
        self.threads: set[str] = set()

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.threads.add(threading.current_thread().name)
        self.barrier.wait()
        return [[float(len(t)), float(ord(t[0]))] for t in texts]


@pytest.mark.parametrize(("count", "workers"), [(1, 2), (7, 2), (16, 2), (17, 2), (64, 2), (65, 3), (1000, 4)])
def test_split_covers_every_item_once_in_near_equal_parts(count: int, workers: int) -> None:
    parts = split(count, workers)
    assert [i for start, end in parts for i in range(start, end)] == list(range(count))
    sizes = [end - start for start, end in parts]
    assert len(parts) <= workers and max(sizes) - min(sizes) <= 1
    assert len(parts) == 1 or min(sizes) >= MIN_PART


def test_a_call_is_embedded_in_parts_side_by_side_in_the_callers_order() -> None:
    inner = Recording(parties=2)
    texts = [chr(ord("a") + i % 26) * (i + 1) for i in range(40)]
    with EmbedderPool(inner, workers=2) as pool:
        vectors = pool.embed(texts)
    assert vectors == [[float(len(t)), float(ord(t[0]))] for t in texts]
    assert len(inner.threads) == 2 and all(name.startswith("memledger-embed") for name in inner.threads)
    assert (pool.model, pool.dim) == ("fake", 2)


def test_a_small_call_runs_in_the_callers_thread() -> None:
    inner = Recording(parties=1)
    with EmbedderPool(inner, workers=2) as pool:
        assert pool.embed(["one", "two"]) == [[3.0, 111.0], [3.0, 116.0]]
        assert pool.embed([]) == []
    assert inner.threads == {threading.current_thread().name}


def test_a_closed_pool_refuses_to_embed() -> None:
    pool = EmbedderPool(Recording(parties=1), workers=2)
    pool.close()
    with pytest.raises(EmbeddingFailed, match="closed"):
        pool.embed(["text"])


def test_vectors_of_the_wrong_number_are_refused() -> None:
    class Short(Recording):
        def embed(self, texts: Sequence[str]) -> list[list[float]]:
            return super().embed(texts)[1:]

    with EmbedderPool(Short(parties=2), workers=2) as pool, pytest.raises(EmbeddingFailed, match="vectors for"):
        pool.embed(["x" * i for i in range(1, 33)])


def test_workers_below_one_are_refused() -> None:
    with pytest.raises(ValueError, match="workers"):
        EmbedderPool(Recording(parties=1), workers=0)


def test_the_offline_models_vectors_through_the_pool_equal_its_own() -> None:
    model = offline()
    texts = [f"Sam moved to Lisbon in {year} and works on project {year % 7}." for year in range(1990, 2030)]
    with EmbedderPool(model, workers=2) as pool:
        pooled = pool.embed(texts)
    assert pooled == model.embed(texts)


class Chained(Recording):
    """An embedding chain's shape: it can answer from a fallback model too."""

    models = ("fake", "fake-fallback")

    def embed_any(self, texts: Sequence[str]) -> tuple[str, list[list[float]]]:
        return self.model, self.embed(texts)


def test_the_wait_pools_a_single_model_but_leaves_a_chain_whole() -> None:
    single = Recording(1)
    with readiness._pooled_embedder(single, 2) as used:
        assert isinstance(used, EmbedderPool)
    with readiness._pooled_embedder(single, 1) as used:
        assert used is single, "one worker: no pool"
    chained = Chained(1)
    with readiness._pooled_embedder(chained, 2) as used:
        assert used is chained, "a pool would hide the chain's fallbacks"
