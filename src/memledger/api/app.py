"""The FastAPI application: authentication, body limits, errors, and the routes."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import FastAPI, Request, Response
from fastapi.exceptions import RequestValidationError
from sqlalchemy import exc as sa_exc
from starlette.exceptions import HTTPException as StarletteHTTPException

from memledger.api import errors, routes_memory, routes_ops
from memledger.api.schemas import ErrorOut
from memledger.bootstrap import Database
from memledger.errors import LedgerError

DEFAULT_MAX_BODY = 2 * 1024 * 1024


def create_app(database: Database, *, max_body_bytes: int = DEFAULT_MAX_BODY) -> FastAPI:
    """The HTTP API over ``database``. Every request but /health needs an API key."""
    errors_documented: dict[int | str, dict[str, Any]] = {
        status: {"model": ErrorOut, "description": description}
        for status, description in (
            (400, "an unknown event type"),
            (401, "no valid API key"),
            (403, "refused by the tenant's switches (e.g. capture is off)"),
            (404, "no such item for this tenant"),
            (409, "a concurrency conflict"),
            (413, "the request body is too large"),
            (422, "the request is invalid: code invalid_request, naming the field when it is one"),
            (503, "the database is unavailable"),
        )
    }
    app = FastAPI(
        responses=errors_documented,
        title="memledger",
        version="1",
        description="An event-sourced memory ledger for LLM agents. Every request is authenticated with an "
        "API key bound to one tenant (Authorization: Bearer <key>, or X-API-Key).",
    )
    app.state.database = database
    app.add_exception_handler(LedgerError, errors.ledger_error)
    app.add_exception_handler(sa_exc.DBAPIError, errors.database_error)
    app.add_exception_handler(RequestValidationError, errors.validation_error)
    app.add_exception_handler(StarletteHTTPException, errors.http_error)

    @app.middleware("http")
    async def limit_body(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        length = request.headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > max_body_bytes):
            return errors.error_response(413, "body_too_large", f"request bodies are limited to {max_body_bytes} bytes")
        if length is None and request.method in {"POST", "PUT", "PATCH"}:
            body = await request.body()
            if len(body) > max_body_bytes:
                return errors.error_response(
                    413, "body_too_large", f"request bodies are limited to {max_body_bytes} bytes"
                )
        return await call_next(request)

    app.include_router(routes_memory.router)
    app.include_router(routes_ops.router)
    return app
