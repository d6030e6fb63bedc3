"""An OpenAI-compatible embeddings endpoint on loopback, scripted per model.

litellm talks to it over real HTTP (``api_base``), as it would to a provider; each
model the request names follows its own script (``Reply`` of ``fake_provider``:
an answer, an HTTP error, a hang or a dropped connection), the last reply
repeating. An answer's vectors are made from the model's name and each text's
words, so two models never give one text the same vector and a text always gets
the same one from a model.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.faults.fake_provider import Reply, answer

OK = answer("")  # an answer with the vectors of the texts asked about
DIM = 384


def vector(model: str, text: str, dim: int = DIM) -> list[float]:
    """The fake model's vector of ``text``: each word adds a direction of its own
    (texts sharing words are near), and the model's name turns every direction."""
    total = [0.0] * dim
    for word in text.lower().split() or [""]:
        seed = hashlib.sha256(f"{model}\x1f{word}".encode()).digest()
        for i in range(dim):
            total[i] += (seed[i % 32] - 127.5) * (1 if (i // 32) % 2 else -1) * ((i % 7) + 1)
    norm = math.sqrt(sum(v * v for v in total)) or 1.0
    return [v / norm for v in total]


class FakeEmbeddings:
    """Serves ``/v1/embeddings``; ``scripts`` maps a model (as the request names it,
    without the provider prefix) to its replies. ``asked`` lists each request's
    model and its number of texts, in order."""

    def __init__(self, **scripts: list[Reply]) -> None:
        self.scripts = {model: list(replies) for model, replies in scripts.items()}
        self.asked: list[tuple[str, int]] = []
        self._count: dict[str, int] = {}
        self._lock = threading.Lock()
        self._release = threading.Event()
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                provider.reply(self, json.loads(body or b"{}"))

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self._thread = threading.Thread(target=self.server.serve_forever, name="fake-embeddings", daemon=True)
        self._thread.start()

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def options(self) -> dict[str, Any]:
        """litellm options for this provider: no retries inside the client."""
        return {"api_base": self.api_base, "api_key": "test-key", "max_retries": 0}

    def script(self, model: str, *replies: Reply) -> None:
        """From now on ``model`` replies with ``replies`` (the last repeating)."""
        with self._lock:
            self.scripts[model] = list(replies)
            self._count[model] = 0

    def asked_of(self, model: str) -> int:
        """How many requests named ``model``."""
        with self._lock:
            return sum(1 for each, _ in self.asked if each == model)

    def reply(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        model = str(body.get("model", ""))
        texts = body.get("input") or []
        texts = [texts] if isinstance(texts, str) else list(texts)
        with self._lock:
            self.asked.append((model, len(texts)))
            replies = self.scripts.get(model, [OK])
            self._count[model] = self._count.get(model, 0) + 1
            scripted = replies[min(self._count[model], len(replies)) - 1]
        if scripted.kind == "hang":
            self._release.wait(scripted.seconds)
            return
        if scripted.kind == "drop":
            handler.close_connection = True
            return
        if scripted.kind == "status":
            self._send(handler, scripted.status, {"error": {"message": "provider unavailable", "type": "server_error"}})
            return
        dim = int(body.get("dimensions") or DIM)
        data = [
            {"object": "embedding", "index": i, "embedding": vector(model, str(text), dim)}
            for i, text in enumerate(texts)
        ]
        usage = {"prompt_tokens": len(texts), "total_tokens": len(texts)}
        self._send(handler, 200, {"object": "list", "data": data, "model": model, "usage": usage})

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, code: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        handler.send_response(code)
        handler.send_header("content-type", "application/json")
        handler.send_header("content-length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    def close(self) -> None:
        self._release.set()
        self.server.shutdown()
        self.server.server_close()


@contextmanager
def fake_embeddings(**scripts: list[Reply]) -> Iterator[FakeEmbeddings]:
    """A provider following ``scripts`` for the duration of the block."""
    provider = FakeEmbeddings(**scripts)
    try:
        yield provider
    finally:
        provider.close()
