"""One table from error to HTTP status and stable code (STYLE.md section 6)."""

from __future__ import annotations

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

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

STATUS: tuple[tuple[type[LedgerError], int, str], ...] = (
    (Unauthorized, 401, "unauthorized"),
    (PayloadTooLarge, 413, "payload_too_large"),
    (InvalidIdentifier, 422, "invalid_identifier"),
    (InvalidEvent, 422, "invalid_event"),
    (InvalidCommand, 400, "invalid_request"),
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


async def ledger_error(request: Request, error: Exception) -> JSONResponse:
    """A LedgerError as JSON with its stable code."""
    assert isinstance(error, LedgerError)
    status, code = next((s, c) for kind, s, c in STATUS if isinstance(error, kind))
    if isinstance(error, Refused):
        code = error.code
    field = getattr(error, "field", None)
    return error_response(status, code, str(error), field if isinstance(field, str) else None)


async def validation_error(request: Request, error: Exception) -> JSONResponse:
    """A request that fails its schema: 422 naming the first field that was wrong."""
    assert isinstance(error, RequestValidationError)
    first = error.errors()[0] if error.errors() else {}
    location = ".".join(str(part) for part in first.get("loc", ()) if part not in ("body", "query", "path"))
    message = f"{location or 'request'}: {first.get('msg', 'invalid')}"
    return error_response(422, "validation_error", message, location or None)
