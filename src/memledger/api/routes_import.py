"""Bulk import over HTTP: NDJSON of turns, as ``memledger import`` reads a file."""

from __future__ import annotations

import time
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool

from memledger.api.deps import Actor, Fenced, Tenant, database_of
from memledger.api.schemas import storable_text
from memledger.errors import InvalidField
from memledger.service import importing, scope_assertions
from memledger.service.import_formats import MAX_SOURCE_CHARS, Format, parse
from memledger.service.importing import ImportSummary
from memledger.service.types import Scopes

router = APIRouter(dependencies=[Depends(storable_text)])  # one rule for text (schemas.storable_text)


class RefusedLine(BaseModel):
    line: int
    reason: str


class ImportOut(BaseModel):
    conversations: int = Field(description="conversations imported (each all or nothing)")
    recorded: int = Field(description="turns appended by this request")
    present: int = Field(description="turns stored before under the same ids (a resent part)")
    refused: list[RefusedLine] = Field(description="conversations the store refused, by the line they start on")
    last_position: int = Field(description="the highest ledger position of a turn imported or present; 0 for none")
    seconds: float


@router.post(
    "/v1/import",
    response_model=ImportOut,
    tags=["agents"],
    openapi_extra={
        "requestBody": {
            "required": True,
            # text/plain too: the body is lines of text, and generic clients (and API fuzzers) send that.
            "content": {
                "application/x-ndjson": {"schema": {"type": "string"}},
                "text/plain": {"schema": {"type": "string"}},
            },
        }
    },
)
async def post_import(
    request: Request,
    tenant_id: Tenant,
    engine: Fenced,
    actor: Actor,
    source: Annotated[str, Query(min_length=1, max_length=MAX_SOURCE_CHARS)],
    first_line: Annotated[int, Query(ge=1)] = 1,
    fmt: Annotated[Format, Query(alias="format")] = "turns",
    user: str | None = None,
    project: str | None = None,
) -> ImportOut:
    """Import a part of a chat history: the body is NDJSON, one memledger turn per line
    (``{"role", "text", "session"?, "scopes"?, "turn_id"?, "occurred_at"?, "speaker"?,
    "subject"?}``; ``format=auto`` or ``messages`` also takes conversations of
    ``{role, content}`` messages), as ``memledger import`` reads a file. Send a long
    history in parts within the body limit, each with the file's ``source`` name (one
    name per history) and its ``first_line``: turn ids a line lacks are derived from
    both, so resending a part records nothing twice, and the CLI importing the same
    file agrees. Each conversation is appended all or nothing. A bad line refuses the
    whole part (422, naming its lines) and nothing is written; a conversation the store
    refuses (its ids were used for other turns) is listed in ``refused`` and the others
    imported. Every turn records the API key that sent it (its actor)."""
    body = await request.body()
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InvalidField("body", f"is not UTF-8 (byte {e.start})") from None
    defaults = Scopes(user=user or None, project=project or None)
    secret = database_of(request).settings.scope_secret
    if secret is not None:  # each user the body names must be asserted by the app
        users = await run_in_threadpool(_users, text, source=source, fmt=fmt, first_line=first_line, defaults=defaults)
        if users:
            header = request.headers.get(scope_assertions.HEADER)
            scope_assertions.check(secret.get_secret_value(), tenant_id, users, header, now=int(time.time()))
    summary = await run_in_threadpool(
        importing.import_request,
        engine,
        tenant_id,
        text,
        source=source,
        actor=actor,
        defaults=defaults,
        fmt=fmt,
        first_line=first_line,
    )
    return _out(summary)


def _users(text: str, *, source: str, fmt: Format, first_line: int, defaults: Scopes) -> tuple[str, ...]:
    """The users the body's turns name (their ``scopes.user``, or the ``user`` given)."""
    parsed = parse(text, source=source, defaults=defaults, fmt=fmt, first_line=first_line)
    return tuple(sorted({t.scopes.user for c in parsed.conversations for t in c.turns if t.scopes.user}))


def _out(summary: ImportSummary) -> ImportOut:
    return ImportOut(
        conversations=summary.conversations,
        recorded=summary.recorded,
        present=summary.present,
        refused=[RefusedLine(line=r.line, reason=r.reason) for r in summary.refused],
        last_position=summary.last_position,
        seconds=round(summary.seconds, 3),
    )
