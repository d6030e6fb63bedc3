"""An embedder that spreads each call's texts over several threads of one process.

A backlog (an import waiting to be ready) is embedded by the embeddings projector in
runs of a few dozen texts, one ``embed`` call each; on its own that call keeps one
core busy. ``EmbedderPool`` splits every call into ``workers`` contiguous parts and
embeds them side by side with the embedder it wraps, then puts the vectors back in
the caller's order.

Threads, not processes: the offline model's inference and tokenizer run without
Python's global lock, and its ONNX session may be run by several threads at once, so
the parts use the cores without a second copy of the model in memory. A remote model
gets its parts' requests in flight together. The vectors are the wrapped embedder's
own (each text is embedded alone), so they share its cache entries: ``model`` and
``dim`` are the wrapped embedder's.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from memledger.errors import EmbeddingFailed

if TYPE_CHECKING:
    from memledger.adapters.embedding import Embedder

# A part smaller than this is not worth a thread of its own.
MIN_PART = 8


class EmbedderPool:
    """``inner``'s vectors, each call's texts embedded in up to ``workers`` parts at once.

    ``close`` (or leaving a ``with`` block) stops the threads; a closed pool refuses
    to embed. Loading the model stays ``inner``'s business (lazily, once).
    """

    def __init__(self, inner: Embedder, *, workers: int = 2) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, not {workers}")
        self.inner = inner
        self.workers = workers
        self._threads = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="memledger-embed")
        self._closed = False

    @property
    def model(self) -> str:
        return self.inner.model

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order, as ``inner.embed`` gives it."""
        if self._closed:
            raise EmbeddingFailed(f"the embedding pool of {self.model!r} is closed")
        parts = split(len(texts), self.workers)
        if len(parts) <= 1:
            return self.inner.embed(texts)
        futures = [self._threads.submit(self.inner.embed, texts[start:end]) for start, end in parts]
        vectors = [vector for future in futures for vector in future.result()]
        if len(vectors) != len(texts):
            raise EmbeddingFailed(f"embedder {self.model!r} returned {len(vectors)} vectors for {len(texts)} texts")
        return vectors

    def close(self) -> None:
        """Stop the threads once the calls running end."""
        self._closed = True
        self._threads.shutdown(wait=True)

    def __enter__(self) -> EmbedderPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def split(count: int, workers: int) -> list[tuple[int, int]]:
    """``count`` items as up to ``workers`` contiguous (start, end) parts of near-equal
    size, none under ``MIN_PART`` items unless there is only one. Pure."""
    if count <= 0:
        return []
    parts = max(1, min(workers, count // MIN_PART))
    size, extra = divmod(count, parts)
    bounds, start = [], 0
    for index in range(parts):
        end = start + size + (1 if index < extra else 0)
        bounds.append((start, end))
        start = end
    return bounds
