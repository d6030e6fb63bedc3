"""What a request must pass before its body is read: a framing that says one thing,
a valid API key, and the size limit, counted while the body streams in.

A pure ASGI middleware, because a ``@app.middleware("http")`` function and FastAPI's
routing read the whole body before anything can count it, and FastAPI reads a body
before it runs the dependencies that check the key: a stranger could make the server
hold hundreds of megabytes before being told 401.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from sqlalchemy import exc as sa_exc
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memledger.api import errors
from memledger.errors import DatabaseUnavailable

# The request state field where the key's holder, once looked up here, waits for the
# dependencies (deps.tenant), so a request with a body costs one lookup, not two.
HOLDER_STATE = "key_holder"

Lookup = Callable[[str], tuple[str, str] | None]


def key_of(headers: Headers) -> str | None:
    """The API key a request carries (``Authorization: Bearer``, then ``X-API-Key``),
    read as deps.api_key reads it."""
    scheme, _, credentials = headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and credentials.strip():
        return credentials.strip()
    return headers.get("x-api-key") or None


def _refusal(status: int, code: str, message: str) -> Callable[[Scope, Receive, Send], Awaitable[None]]:
    """An error response that closes the connection: the body it refuses was not read,
    so the connection cannot carry another request."""
    response = errors.error_response(status, code, message)
    response.headers["connection"] = "close"
    return response


class Intake:
    """Refuse, before the application reads a byte of the body:

    - a request with both Transfer-Encoding and Content-Length (400: RFC 9112 section
      6.3 calls such a message suspicious, and a Content-Length that lies let a body
      past the limit);
    - a declared Content-Length over the limit (413);
    - a request with a body and no valid key (401; ``lookup`` finds the key's holder).

    Then count the body's bytes as the application receives them and answer 413 as
    soon as they pass the limit, without reading the rest. A key the database cannot
    check (it is down) is left to the route, which answers 503 or, for context, an
    empty block; the body it reads is still limited.
    """

    def __init__(self, app: ASGIApp, *, max_body_bytes: int, lookup: Lookup) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.lookup = lookup
        self.too_large = f"request bodies are limited to {max_body_bytes} bytes"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        refusal = await self._refusal_before_body(scope, headers)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        await _Counted(self, scope, receive, send).run()

    async def _refusal_before_body(
        self, scope: Scope, headers: Headers
    ) -> Callable[[Scope, Receive, Send], Awaitable[None]] | None:
        length = headers.get("content-length")
        chunked = "transfer-encoding" in headers
        if chunked and length is not None:
            return _refusal(400, "bad_request", "a request may not have both Transfer-Encoding and Content-Length")
        if length is not None and (not length.isdigit() or int(length) > self.max_body_bytes):
            return _refusal(413, "body_too_large", self.too_large)
        if not chunked and (length is None or int(length) == 0):
            return None  # no body: the route's dependencies check the key, if it needs one
        return await self._unauthorized(scope, key_of(headers))

    async def _unauthorized(
        self, scope: Scope, key: str | None
    ) -> Callable[[Scope, Receive, Send], Awaitable[None]] | None:
        try:
            found = await run_in_threadpool(self.lookup, key) if key else None
        except (sa_exc.DBAPIError, DatabaseUnavailable):
            return None  # the route answers for the database (see the class docstring)
        if found is None:
            return _refusal(
                401, "unauthorized", "a valid API key is required (Authorization: Bearer <key> or X-API-Key)"
            )
        scope.setdefault("state", {})[HOLDER_STATE] = (key, found)
        return None


class _Counted:
    """One request passed to the application with its body counted."""

    def __init__(self, intake: Intake, scope: Scope, receive: Receive, send: Send) -> None:
        self.intake, self.scope, self.receive, self.send = intake, scope, receive, send
        self.received = 0
        self.started = False  # the application began its response
        self.refused = False  # we answered 413 ourselves

    async def run(self) -> None:
        await self.intake.app(self.scope, self._receive, self._send)

    async def _receive(self) -> Message:
        if self.refused:
            return {"type": "http.disconnect"}
        message = await self.receive()
        if message["type"] != "http.request":
            return message
        self.received += len(message.get("body", b""))
        if self.received <= self.intake.max_body_bytes:
            return message
        self.refused = True
        if not self.started:  # else the application answered already, without the body
            await _refusal(413, "body_too_large", self.intake.too_large)(self.scope, self.receive, self.send)
        # The application sees the client gone: it stops reading and what it then
        # answers is dropped by _send.
        return {"type": "http.disconnect"}

    async def _send(self, message: Message) -> None:
        if self.refused and not self.started:
            return
        if message["type"] == "http.response.start":
            self.started = True
        await self.send(message)
