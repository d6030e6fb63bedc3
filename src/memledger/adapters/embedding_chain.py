"""An ordered chain of embedding models: providers through litellm's Router, then
optionally the offline model.

The first model is the tenants' model: ``embed`` asks it alone (a request's vector
must be comparable with the rows it is searched against), and fails fast while the
Router has it cooling down. ``embed_any`` asks the chain (the projector's call) and
says which model answered: each provider with its timeout and retries, a provider
whose every attempt at a call failed skipped for the cool-down (the Router's
``fallbacks``, ``allowed_fails`` and ``cooldown_time``, as the extraction chain's),
and after them the offline model, which needs no network. Its vectors are that
model's: the caller keeps them under that model's name, never the first's. Every
answer by a model other than the first is logged and counted (``switches``).
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from memledger.adapters.embedding import MINILM_DIM, Embedder, normalised
from memledger.adapters.litellm_import import import_litellm
from memledger.adapters.llm_extractor import answering_model, router
from memledger.errors import EmbeddingFailed

log = logging.getLogger(__name__)

_MAX_CHARS = 16_000  # providers limit an input's length (OpenAI: 8,191 tokens); longer texts are cut


class ChainEmbedder(Protocol):
    """What the embeddings projector embeds with: ``models`` in order, the first the
    tenants' (``model``); ``embed_any`` answers with the model that made the vectors."""

    @property
    def model(self) -> str: ...

    @property
    def dim(self) -> int: ...

    @property
    def models(self) -> tuple[str, ...]: ...

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...

    def embed_any(self, texts: Sequence[str]) -> tuple[str, list[list[float]]]: ...


class Single:
    """One embedder as a chain of one."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder

    @property
    def model(self) -> str:
        return self.embedder.model

    @property
    def dim(self) -> int:
        return self.embedder.dim

    @property
    def models(self) -> tuple[str, ...]:
        return (self.embedder.model,)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return self.embedder.embed(texts)

    def embed_any(self, texts: Sequence[str]) -> tuple[str, list[list[float]]]:
        return self.embedder.model, self.embedder.embed(texts)


def as_chain(embedder: Embedder) -> ChainEmbedder:
    """``embedder`` as a chain: itself if it is one (``EmbeddingChain``), else a chain
    of one. A wrapper that hides ``embed_any`` makes a chain of its first model alone."""
    if hasattr(embedder, "embed_any"):
        return embedder  # type: ignore[return-value]
    return Single(embedder)


class EmbeddingChain:
    """``providers`` (litellm model names, in order) through one Router, then ``offline``
    if given. ``retries`` and ``timeout_s`` apply to each provider; ``cooldown_s`` is how
    long one whose every attempt at a call failed is skipped (0: never)."""

    def __init__(
        self,
        providers: Sequence[str],
        offline: Embedder | None = None,
        *,
        dim: int = MINILM_DIM,
        options: Mapping[str, Any] | None = None,
        retries: int = 2,
        timeout_s: float = 30.0,
        cooldown_s: float = 60.0,
    ) -> None:
        names = tuple(providers) + ((offline.model,) if offline is not None else ())
        if not providers or len(set(names)) != len(names):
            raise ValueError(f"an embedding chain needs distinct models, a provider first: {names!r}")
        if offline is not None and offline.dim != dim:
            raise ValueError(f"the offline model makes {offline.dim}-dimensional vectors, the chain's are {dim}")
        self.providers = tuple(providers)
        self.offline = offline
        self._dim = dim
        self._options = {"dimensions": dim, "drop_params": True, **(options or {})}
        self.retries, self.timeout_s, self.cooldown_s = retries, timeout_s, cooldown_s
        self._router: Any = None  # built on the first call: litellm loads slowly
        self._lock = threading.Lock()
        self.switches = 0  # calls a later model of the chain answered
        self.answered: Counter[str] = Counter()  # calls answered, by model
        self.provider_failures = 0  # calls every provider failed (or was cooling down for)

    @property
    def model(self) -> str:
        return self.providers[0]

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def models(self) -> tuple[str, ...]:
        return self.providers + ((self.offline.model,) if self.offline is not None else ())

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """The first model's vectors alone (no fallback): ``EmbeddingFailed`` when it fails
        or is cooling down."""
        if not texts:
            return []
        model, vectors = self._ask(texts, fallbacks=False)
        if model != self.model:  # the Router was told not to fall back; never trust another's vectors
            raise EmbeddingFailed(f"embedding model {model!r} answered for {self.model!r}")
        return vectors

    def embed_any(self, texts: Sequence[str]) -> tuple[str, list[list[float]]]:
        """Vectors of ``texts`` from the first model of the chain that answers, and its name."""
        if not texts:
            return self.model, []
        try:
            model, vectors = self._ask(texts, fallbacks=True)
        except EmbeddingFailed as e:
            with self._lock:
                self.provider_failures += 1
            if self.offline is None:
                raise
            log.warning("every embedding provider of the chain failed (%s); embedding with %s", e, self.offline.model)
            model, vectors = self.offline.model, self.offline.embed(texts)
        with self._lock:
            self.answered[model] += 1
            self.switches += model != self.model
        if model != self.model:
            log.warning("embedding model %s answered instead of %s (a fallback of the chain)", model, self.model)
        return model, vectors

    def _ask(self, texts: Sequence[str], *, fallbacks: bool) -> tuple[str, list[list[float]]]:
        """The Router's answer (its retries, fallbacks and cool-downs) and the model that
        gave it; ``EmbeddingFailed`` naming the cause when none did or the answer is not
        one vector of ``dim`` per text."""
        inputs = [text[:_MAX_CHARS] or " " for text in texts]  # providers refuse empty input
        call: dict[str, Any] = {} if fallbacks else {"fallbacks": []}
        try:
            response = self._chain().embedding(model=self.model, input=inputs, **call)
        except Exception as e:
            raise EmbeddingFailed(f"embedding chain {self.providers!r} failed: {type(e).__name__}: {e}") from e
        model = answering_model(response)
        if model not in self.providers:
            raise EmbeddingFailed(f"the Router did not say which model answered ({model!r}); its vectors are not kept")
        return model, self._checked(model, response, len(texts))

    def _checked(self, model: str, response: Any, wanted: int) -> list[list[float]]:
        data = response["data"] if isinstance(response, Mapping) else getattr(response, "data", None)
        if not isinstance(data, list) or len(data) != wanted:
            raise EmbeddingFailed(f"embedding model {model!r} returned no vectors or a wrong number of them")
        ordered = sorted(data, key=lambda item: int(_field(item, "index")))
        vectors = [list(_field(item, "embedding")) for item in ordered]
        if any(len(v) != self._dim for v in vectors):
            raise EmbeddingFailed(f"embedding model {model!r} returned vectors that are not {self._dim}-dimensional")
        return [normalised(v) for v in vectors]

    def _chain(self) -> Any:
        """The Router over the providers, built once: its cool-downs must outlive a call."""
        with self._lock:
            if self._router is None:
                self._router = self._build_router()
            return self._router

    def _build_router(self) -> Any:
        litellm = import_litellm()  # only a process that embeds through a provider needs it

        # litellm's embedding call reads a client max_retries of 0 as this default (BerriAI/litellm#7003),
        # so the OpenAI client would retry twice more inside every attempt the Router counts.
        setattr(litellm, "DEFAULT_MAX_RETRIES", 0)  # noqa: B010 - not in litellm's exported names
        return router(
            self.providers, self._options, retries=self.retries, timeout_s=self.timeout_s, cooldown_s=self.cooldown_s
        )


def _field(item: Any, name: str) -> Any:
    return item[name] if isinstance(item, Mapping) else getattr(item, name)
