"""How a context request fails open: never an exception into the agent's chat loop, but
an empty selection that says why, without SQL or the request's words in the reason."""

from __future__ import annotations

import logging
import time

import psycopg
from sqlalchemy import exc as sa_exc

from memledger.selection.types import Selection
from memledger.service.context_request import SelectRequest

log = logging.getLogger("memledger.service.context")
REASON_LIMIT = 300


def failed_open(request: SelectRequest, error: Exception) -> Selection:
    """The empty selection a failed request answers, with why (logged in full)."""
    reason = reason_of(error)
    log.warning("context selection failed open for tenant %s: %s (%r)", request.tenant_id, reason, error)
    return Selection(request=request.request, empty_reason=f"memory unavailable ({reason})")


def reason_of(error: Exception) -> str:
    """Why a selection failed, for the block and its ``ContextServed`` record. A
    statement's error names only its kind: its message holds the SQL, which has no
    place in a prompt, and its parameters, the request's words among them, which
    have none in the ledger's payloads (erasure cannot reach them). The log has all."""
    if is_timeout(error):
        return "deadline exceeded"
    if isinstance(error, sa_exc.StatementError):
        return f"database error: {type(error.orig or error).__name__}"
    first_line = str(error).partition("\n")[0][:REASON_LIMIT]
    return f"{type(error).__name__}: {first_line}" if first_line else type(error).__name__


def within_deadline(request: SelectRequest, selection: Selection, started: float) -> Selection:
    """``selection``, or an empty one if it came later than the request's deadline."""
    elapsed_ms = (time.monotonic() - started) * 1000
    if elapsed_ms > request.deadline_ms:
        log.warning("context selection took %.0f ms, over its %d ms deadline", elapsed_ms, request.deadline_ms)
        return Selection(request=request.request, empty_reason="memory unavailable (deadline exceeded)")
    return selection


def is_timeout(error: Exception) -> bool:
    """Whether ``error`` is the deadline: the request's vector late, or a statement cancelled."""
    if isinstance(error, TimeoutError):  # the request's vector was not ready in time
        return True
    return isinstance(error, sa_exc.DBAPIError) and isinstance(error.orig, psycopg.errors.QueryCanceled)
