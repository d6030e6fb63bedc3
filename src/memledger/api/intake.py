"""What a request must pass before its body is read: a framing that says one thing,
a valid API key, and the size limit, counted while the body streams in.

A pure ASGI middleware, because a ``@app.middleware("http")`` function and FastAPI's
routing read the whole body before anything can count it, and FastAPI reads a body
before it runs the dependencies that check the key: a stranger could make the server
hold hundreds of megabytes before being told 401.
"""

from __future__ import annotations

import asyncio
import time
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

# How long a body may take: BODY_TIMEOUT_S from the first read, one second more per
# MIN_BODY_RATE bytes received (mod_reqtimeout's rule). Uvicorn has no timeout while a
# body arrives, so a client that stalls, or trickles a byte a minute, would hold its
# connection and the request's thread for ever. A client sending at 500 B/s or more
# never meets it.
BODY_TIMEOUT_S = 15.0
MIN_BODY_RATE = 500


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
    soon as they pass the limit, without reading the rest, or 408 when the body comes
    too slowly (``BODY_TIMEOUT_S``, ``MIN_BODY_RATE``). A key the database cannot
    check (it is down) is left to the route, which answers 503 or, for context, an
    empty block; the body it reads is still limited.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        max_body_bytes: int,
        lookup: Lookup,
        body_timeout_s: float = BODY_TIMEOUT_S,
        min_body_rate: int = MIN_BODY_RATE,
    ) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.lookup = lookup
        self.body_timeout_s = body_timeout_s
        self.min_body_rate = min_body_rate
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
        self.refused = False  # we answered 413 or 408 ourselves
        self.first_read: float | None = None
        self.body_done = False  # the whole body came: later reads wait for a disconnect, untimed

    async def run(self) -> None:
        await self.intake.app(self.scope, self._receive, self._send)

    async def _receive(self) -> Message:
        if self.refused:
            return {"type": "http.disconnect"}
        if self.body_done:
            return await self.receive()
        try:
            message = await asyncio.wait_for(self.receive(), self._time_left())
        except TimeoutError:
            return await self._refuse(408, "request_timeout", self._too_slow())
        if message["type"] != "http.request":
            return message
        self.body_done = not message.get("more_body", False)
        self.received += len(message.get("body", b""))
        if self.received <= self.intake.max_body_bytes:
            return message
        return await self._refuse(413, "body_too_large", self.intake.too_large)

    def _time_left(self) -> float:
        now = time.monotonic()
        if self.first_read is None:
            self.first_read = now
        allowed = self.intake.body_timeout_s + self.received / self.intake.min_body_rate
        return max(self.first_read + allowed - now, 0.0)

    def _too_slow(self) -> str:
        took = time.monotonic() - (self.first_read or 0.0)
        return (
            f"the request body came too slowly: {self.received} bytes in {took:.0f} s "
            f"(bodies get {self.intake.body_timeout_s:g} s, and 1 s more per {self.intake.min_body_rate} bytes)"
        )

    async def _refuse(self, status: int, code: str, message: str) -> Message:
        self.refused = True
        if not self.started:  # else the application answered already, without the body
            await _refusal(status, code, message)(self.scope, self.receive, self.send)
        # The application sees the client gone: it stops reading and what it then
        # answers is dropped by _send.
        return {"type": "http.disconnect"}

    async def _send(self, message: Message) -> None:
        if self.refused and not self.started:
            return
        if message["type"] == "http.response.start":
            self.started = True
        await self.send(message)
