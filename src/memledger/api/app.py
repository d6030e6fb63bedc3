"""The FastAPI application: authentication, body limits, errors, and the routes."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from sqlalchemy import exc as sa_exc
from starlette.exceptions import HTTPException as StarletteHTTPException

from memledger import bootstrap
from memledger.api import errors, routes_airi, routes_check, routes_import, routes_memory, routes_ops
from memledger.api.intake import Intake
from memledger.api.schemas import ErrorOut
from memledger.bootstrap import App
from memledger.errors import LedgerError
from memledger.service import keys

DEFAULT_MAX_BODY = 2 * 1024 * 1024


def _operator_key_of(database: App) -> str | None:
    secret = database.settings.operator_key
    return None if secret is None else secret.get_secret_value()


def _lifespan(database: App) -> Callable[[FastAPI], AbstractAsyncContextManager[None]]:
    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        # At once, in the background: ready to serve before litellm is imported.
        bootstrap.warm_tokenizers(database)
        yield

    return lifespan


def create_app(database: App, *, max_body_bytes: int = DEFAULT_MAX_BODY, operator_key: str | None = None) -> FastAPI:
    """The HTTP API over ``database``. Every request but /health needs an API key, and
    /health's details need the operator key (default: ``MEMLEDGER_OPERATOR_KEY``)."""
    errors_documented: dict[int | str, dict[str, Any]] = {
        status: {"model": ErrorOut, "description": description}
        for status, description in (
            (400, "an unknown event type, or both Transfer-Encoding and Content-Length"),
            (401, "no valid API key (a request with a body is refused before its body is read)"),
            (403, "refused by the tenant's switches (e.g. capture is off)"),
            (404, "no such item for this tenant"),
            (408, "the request body came too slowly (request_timeout)"),
            (409, "a concurrency conflict"),
            (413, "the request body is too large (counted as it arrives)"),
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
        lifespan=_lifespan(database),
    )
    app.state.database = database
    app.add_exception_handler(LedgerError, errors.ledger_error)
    app.add_exception_handler(sa_exc.DBAPIError, errors.database_error)
    app.add_exception_handler(RequestValidationError, errors.validation_error)
    app.add_exception_handler(StarletteHTTPException, errors.http_error)

    app.state.operator_key = operator_key if operator_key is not None else _operator_key_of(database)
    app.add_middleware(Intake, max_body_bytes=max_body_bytes, lookup=lambda key: keys.holder_for(database.engine, key))
    app.include_router(routes_memory.router)
    app.include_router(routes_ops.router)
    app.include_router(routes_airi.router)  # AIRI's memory-service routes (docs/airi-api.md)
    app.include_router(routes_check.router)
    app.include_router(routes_import.router)  # bulk import of NDJSON turns
    return app
