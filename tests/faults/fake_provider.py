"""An OpenAI-compatible chat endpoint on loopback that fails as a test scripts it.

litellm talks to it over real HTTP (``api_base``), so its timeouts, connection
errors and status codes are exercised the way a provider's outage would; nothing
leaves the machine.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    """One scripted reply: ``answer`` (200 with ``content`` as the message), ``status``
    (an error with that HTTP status), ``hang`` (no reply for ``seconds``) or ``drop``
    (the connection closed with no reply)."""

    kind: str
    content: str = ""
    status: int = 500
    seconds: float = 30.0


def answer(content: str | dict[str, Any]) -> Reply:
    """A 200 whose message content is ``content`` (a dict is sent as JSON text)."""
    return Reply("answer", content if isinstance(content, str) else json.dumps(content))


def status(code: int) -> Reply:
    """An HTTP error, e.g. 500 or 429."""
    return Reply("status", status=code)


HANG = Reply("hang")
DROP = Reply("drop")


class FakeProvider:
    """Replies from ``script`` in order; the last one repeats. ``requests`` keeps every body."""

    def __init__(self, *script: Reply) -> None:
        self.script = list(script)
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._release = threading.Event()  # ends every hang (at shutdown)
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                provider.reply(self, json.loads(body or b"{}"))

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self._thread = threading.Thread(target=self.server.serve_forever, name="fake-provider", daemon=True)
        self._thread.start()

    @property
    def api_base(self) -> str:
        """The base URL to give litellm."""
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def options(self) -> dict[str, Any]:
        """litellm options for this provider; no retries inside the client, so the
        extractor's own retries are the only ones."""
        return {"api_base": self.api_base, "api_key": "test-key", "max_retries": 0}

    def reply(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        with self._lock:
            self.requests.append(body)
            scripted = self.script[min(len(self.requests), len(self.script)) - 1]
        if scripted.kind == "hang":
            self._release.wait(scripted.seconds)
            return
        if scripted.kind == "drop":
            handler.close_connection = True
            return
        if scripted.kind == "status":
            self._send(handler, scripted.status, {"error": {"message": "provider unavailable", "type": "server_error"}})
            return
        self._send(handler, 200, _completion(scripted.content, str(body.get("model", "fake"))))

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, code: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        handler.send_response(code)
        handler.send_header("content-type", "application/json")
        handler.send_header("content-length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    def close(self) -> None:
        """Stop serving (hanging requests end at once)."""
        self._release.set()
        self.server.shutdown()
        self.server.server_close()


def _completion(content: str, model: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


@contextmanager
def fake_provider(*script: Reply) -> Iterator[FakeProvider]:
    """A provider following ``script`` for the duration of the block."""
    provider = FakeProvider(*script)
    try:
        yield provider
    finally:
        provider.close()
