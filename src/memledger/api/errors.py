"""One table from error to HTTP status and stable code (STYLE.md section 6)."""

from __future__ import annotations

import logging
import re
import sys

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy import exc as sa_exc
from starlette.exceptions import HTTPException as StarletteHTTPException

from memledger.errors import (
    ConcurrencyConflict,
    DatabaseUnavailable,
    EventDecodeError,
    InvalidCommand,
    InvalidEvent,
    InvalidIdentifier,
    LedgerError,
    NotFound,
    PayloadTooLarge,
    ProjectionFailed,
    Refused,
    Unauthorized,
    UnknownEventType,
)
from memledger.service.driver_errors import translate

# The one code for "your input is wrong", whether the request fails its schema or a
# check behind it (an identifier, an event's field, a command): a client handles one.
INVALID_REQUEST = "invalid_request"

# When the database is down a client is told why (its disk is full, it is read-only),
# but not where it is: socket paths, data directories, URLs and hosts are the
# operator's, and the server's log has the whole reason.
_WHERE = re.compile(r"""["']?(?:[a-z][\w+.-]*://\S+|/[^\s"',;:]+|\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b)["']?""")

_log = logging.getLogger("memledger.api")

STATUS: tuple[tuple[type[LedgerError], int, str], ...] = (
    (Unauthorized, 401, "unauthorized"),
    (PayloadTooLarge, 413, "payload_too_large"),
    (InvalidIdentifier, 422, INVALID_REQUEST),
    (InvalidEvent, 422, INVALID_REQUEST),
    (InvalidCommand, 422, INVALID_REQUEST),
    (UnknownEventType, 400, "unknown_event_type"),
    (NotFound, 404, "not_found"),
    (ConcurrencyConflict, 409, "concurrency_conflict"),
    (Refused, 403, "refused"),
    (DatabaseUnavailable, 503, "database_unavailable"),
    (ProjectionFailed, 503, "projection_failed"),
    (EventDecodeError, 500, "event_decode_error"),
    (LedgerError, 500, "ledger_error"),
)


def error_response(status: int, code: str, message: str, field: str | None = None) -> JSONResponse:
    """The JSON body every error has."""
    body: dict[str, object] = {"code": code, "message": message}
    if field is not None:
        body["field"] = field
    return JSONResponse(status_code=status, content={"error": body})


async def database_error(request: Request, error: Exception) -> JSONResponse:
    """A driver error that reached a route untranslated (a connection lost outside
    ``store.db.begin``, as when PostgreSQL restarts): 503 with the reason, never a 500
    with a stack trace."""
    assert isinstance(error, sa_exc.DBAPIError)
    return await ledger_error(request, translate(error))


async def ledger_error(request: Request, error: Exception) -> JSONResponse:
    """A LedgerError as JSON with its stable code."""
    assert isinstance(error, LedgerError)
    status, code = next((s, c) for kind, s, c in STATUS if isinstance(error, kind))
    if isinstance(error, Refused):
        code = error.code
    if isinstance(error, DatabaseUnavailable):
        _log.warning("answered 503: %s", error)
        return error_response(status, code, unplaced(str(error)))
    field = getattr(error, "field", None)
    return error_response(status, code, str(error), field if isinstance(field, str) else None)


def _is_model_name(part: object) -> bool:
    return isinstance(part, str) and part[:1].isupper() and part.endswith("In")


async def validation_error(request: Request, error: Exception) -> JSONResponse:
    """A request that fails its schema: 422 naming the first field that was wrong.

    A body that may take two shapes (one turn, or {"turns": [...]}) is judged by the
    shape it has, so the error names the field of that shape."""
    assert isinstance(error, RequestValidationError)
    errors = list(error.errors())
    body = getattr(error, "body", None)
    batch = isinstance(body, dict) and "turns" in body
    shaped = [e for e in errors if ("TurnsIn" in e.get("loc", ())) == batch]
    first = (shaped or errors or [{}])[0]
    if first.get("type") == "json_invalid":
        return error_response(422, INVALID_REQUEST, f"the request body is not valid JSON: {first.get('msg', '')}")
    location = ".".join(
        str(part) for part in first.get("loc", ()) if part not in ("body", "query", "path") and not _is_model_name(part)
    )
    message = f"{location or 'request'}: {first.get('msg', 'invalid')}"
    return error_response(422, INVALID_REQUEST, message, location or None)


_HTTP_CODES = {400: "bad_request", 404: "not_found", 405: "method_not_allowed", 413: "body_too_large"}


def unparsable(cause: BaseException | None) -> str | None:
    """Why a body FastAPI could not parse (it answers 400 "There was an error parsing
    the body", the reason in its ``__cause__``) is wrong input, said as such; None for
    any other cause."""
    if isinstance(cause, UnicodeDecodeError):
        return f"the request body is not valid UTF-8 (byte {cause.start} cannot be decoded)"
    if isinstance(cause, RecursionError):
        return "the request body is not valid JSON here: it is nested too deeply"
    if isinstance(cause, ValueError) and "digits" in str(cause):
        limit = sys.get_int_max_str_digits()
        return f"the request body is not valid JSON here: it holds an integer of more than {limit} digits"
    if isinstance(cause, ValueError):
        return f"the request body could not be parsed: {cause}"
    return None


async def http_error(request: Request, error: Exception) -> JSONResponse:
    """Starlette's own errors (unknown route, wrong method) in the same JSON shape; a
    body that could not be parsed as ``invalid_request``, saying why."""
    assert isinstance(error, StarletteHTTPException)
    reason = unparsable(error.__cause__) if error.status_code == 400 else None
    if reason is not None:
        return error_response(422, INVALID_REQUEST, reason)
    code = _HTTP_CODES.get(error.status_code, "http_error")
    return error_response(error.status_code, code, str(error.detail))


def unplaced(reason: str) -> str:
    """``reason`` without where the database is (paths, URLs, hosts): each becomes "…"."""
    return _WHERE.sub("\u2026", reason)
