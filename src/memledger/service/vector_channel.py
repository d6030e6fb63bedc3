"""The vector channel of retrieval: the request embedded off the caller's thread.

Embedding a request costs about as much CPU as all of the selector's SQL, so
``start`` hands it to a small pool of threads
(onnxruntime and the providers' HTTP clients release the GIL) and the selector
runs its other statements meanwhile; the search waits for the vector only when
it needs it. Vectors of requests are kept per process: agents often ask again.
They are kept by the SHA-256 of the request, not its words: a serving process
holds no text an erasure (run from another process) could not reach.

A request is embedded by the tenants' model alone (the first of an embedding chain),
never a fallback's: its vector is searched against that model's rows. With a chain,
that model failing (or cooling down) leaves the request without a vector channel,
logged and counted (``skipped``); the other channels answer it.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

from sqlalchemy.engine import Connection

from memledger.adapters.embedding import Embedder
from memledger.adapters.embedding_chain import as_chain
from memledger.errors import EmbeddingFailed
from memledger.projectors.embeddings import queries as embedding_queries
from memledger.selection.candidates import QueryVector
from memledger.service.context import VectorWait

log = logging.getLogger(__name__)

CACHED_VECTORS = 1024
# A few at once: the offline model keeps a core busy per embedding, a provider's
# HTTP call waits on the network; more requests than this wait their turn.
_pool = ThreadPoolExecutor(max_workers=max(4, os.cpu_count() or 2), thread_name_prefix="memledger-embed-request")
# (embedder, SHA-256 of the text) -> vector, least recently used first; shared by
# every channel of the process.
_vectors: OrderedDict[tuple[Embedder, bytes], QueryVector] = OrderedDict()
_lock = threading.Lock()


def load_soon(load: Callable[[], None]) -> None:
    """Run ``load`` (an embedder's model loading) on the pool, off the caller's thread:
    a request that needs the model waits for it within its own deadline."""
    _pool.submit(load)


class VectorChannel:
    """``start(text)`` for ``context.select``; calling it searches at once."""

    def __init__(self, embedder: Embedder, k: int) -> None:
        self.embedder = embedder
        self.k = k
        # a chain has fallbacks: its first model failing is an outage to ride out
        self.fail_open = hasattr(embedder, "embed_any")
        self.skipped = 0  # requests left without a vector: the model failed (fail_open)

    @property
    def ready(self) -> bool:
        """Whether the model is in memory. While the offline model loads (~1 s, on the
        pool), a context request goes without the vector channel instead of spending
        its deadline waiting (the block's other channels answer it)."""
        return bool(getattr(self.embedder, "loaded", True))

    def start(self, text: str) -> VectorWait:
        """Begin embedding ``text``; the returned function waits for its vector (at
        most its ``timeout_s``: ``TimeoutError`` after; None when ``text`` is blank).
        Embedding errors are raised there too."""
        if not text.strip():
            return lambda _timeout_s: None
        key = (self.embedder, _digest(text))
        with _lock:
            cached = _vectors.get(key)
            if cached is not None:
                _vectors.move_to_end(key)
        future: Future[QueryVector]
        if cached is None:
            future = _pool.submit(self._embed, text)
        else:
            future = Future()
            future.set_result(cached)
        return self._failing_open(future) if self.fail_open else future.result

    def _failing_open(self, future: Future[QueryVector]) -> VectorWait:
        """``future.result``, None when the model failed (the request goes without)."""

        def wait(timeout_s: float | None) -> QueryVector | None:
            try:
                return future.result(timeout_s)
            except EmbeddingFailed as e:
                self.skipped += 1
                log.warning("the request goes without the vector channel: %s", e)
                return None

        return wait

    def __call__(self, conn: Connection, tenant_id: str, text: str) -> list[str]:
        """The ids of the tenant's ``k`` facts nearest ``text``, best first."""
        query = self.start(text)(None)
        if query is None:
            return []
        vector = [float(v) for v in query.literal[1:-1].split(",")]
        found = embedding_queries.nearest(
            conn, tenant_id, vector, query.model, kinds=("fact",), k=self.k, chain=query.chain
        )
        return [n.item_id for n in found]

    def _embed(self, text: str) -> QueryVector:
        vector = self.embedder.embed([text])[0]
        literal = embedding_queries.to_literal(vector)
        query = QueryVector(self.embedder.model, len(vector), literal, as_chain(self.embedder).models)
        with _lock:
            _vectors[(self.embedder, _digest(text))] = query
            if len(_vectors) > CACHED_VECTORS:
                _vectors.popitem(last=False)
        return query


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
