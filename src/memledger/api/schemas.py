"""Request and response bodies of the HTTP API (pydantic, as FastAPI requires)."""

from __future__ import annotations

import re
from collections import deque
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field
from pydantic_core import PydanticCustomError

from memledger.errors import InvalidIdentifier
from memledger.service.context import MAX_DEADLINE_MS
from memledger.service.context_limits import MAX_BUDGET_CHARS, MAX_REQUEST_CHARS, MIN_BUDGET_CHARS
from memledger.service.input_checks import check_identifier
from memledger.service.ledger_pages import MAX_POSITION, position_of
from memledger.service.memory import MAX_PROMOTED_STATEMENT

Scope = Literal["session", "project", "user", "org"]
Kind = Literal["decision", "lesson_learned", "preference", "procedure", "task_update", "terminology"]


_AS_OF = "must be a ledger position or an ISO 8601 time with a timezone, not {value}"
# Read-your-writes on a read replica (docs/operations.md, Read replicas).
AFTER = "the last position POST /v1/turns gave back: read from a replica only once it holds it"


def _as_of(value: object) -> int | datetime | None:
    """A ledger position (a JSON integer, or a string of ASCII digits, as ``memledger
    context --as-of`` reads it) or a timezone-aware ISO 8601 time; else a validation
    error. Parsed here: pydantic would read "57" as a Unix time."""
    if value is None or isinstance(value, datetime):
        moment = value
    elif isinstance(value, str) and value.isascii() and value.isdecimal():
        return _position(position_of(value), value)
    elif isinstance(value, int) and not isinstance(value, bool):
        return _position(value if 0 <= value < MAX_POSITION else None, str(value))
    else:
        try:
            moment = datetime.fromisoformat(value) if isinstance(value, str) else None
        except ValueError:
            moment = None
        if moment is None:
            raise PydanticCustomError("as_of", _AS_OF, {"value": repr(value)[:60]})
    if moment is not None and moment.tzinfo is None:
        raise PydanticCustomError("as_of", "needs a timezone (e.g. 2026-11-21T10:42:00+00:00)")
    return moment


def _position(position: int | None, given: str) -> int:
    if position is None:
        template = "a ledger position is between 0 and {last}, not {given}"
        raise PydanticCustomError("as_of", template, {"last": MAX_POSITION - 1, "given": given[:40]})
    return position


AsOf = Annotated[int | datetime | None, BeforeValidator(_as_of)]


def _in_utc_range(moment: datetime | None) -> datetime | None:
    """The time, if it lies within years 1 to 9999 once in UTC (as the ledger stores it)."""
    if moment is not None and moment.tzinfo is not None:
        try:
            moment.astimezone(UTC)
        except OverflowError:
            template = "{moment} is outside the years 1 to 9999 in UTC"
            raise PydanticCustomError("datetime_range", template, {"moment": moment.isoformat()}) from None
    return moment


_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def _unstorable(text: str) -> str | None:
    """Why the ledger cannot store ``text``, or None: PostgreSQL cannot store NUL, and
    UTF-8 cannot encode a lone surrogate (which a JSON escape such as \\ud800 gives)."""
    found = _UNSTORABLE.search(text)
    if found is None:
        return None
    if found.group() == "\x00":
        return "holds a NUL character, which PostgreSQL cannot store"
    return "holds a lone surrogate, which UTF-8 cannot encode"


def _refuse_unstorable(location: tuple[str | int, ...], text: str, body: object = None) -> None:
    reason = _unstorable(text)
    if reason is not None:
        raise RequestValidationError([{"type": "storable", "loc": location, "msg": reason}], body=body)


async def storable_text(request: Request) -> None:
    """The one rule for text, a dependency of every route: a path parameter, query
    parameter or string of the JSON body (a key too) that the ledger cannot store is
    refused (422 ``invalid_request``) naming the caller's field (``turns.1.subject``,
    ``q``), before any use case sees it; nothing replaces it (no U+FFFD) and no
    error names the event's field (``$.text``). A route's body was read and parsed
    by FastAPI before its dependencies run, and the request keeps both: neither is done
    again."""
    if not (request.headers.get("authorization") or request.headers.get("x-api-key")):
        return  # no key: the route's own check answers 401 before any word about the request
    for name, value in request.path_params.items():
        if isinstance(value, str):
            _refuse_unstorable(("path", name), value)
    for name, value in request.query_params.multi_items():
        _refuse_unstorable(("query", name), value)
    if not await request.body():
        return
    try:
        parsed = await request.json()
    except (ValueError, RecursionError):
        return  # not JSON (a body of another type): the route's schema refuses it
    _walk_body(parsed)


def _walk_body(parsed: object) -> None:
    """Refuse the first unstorable string of a parsed body, breadth first (without
    recursion: a body may be nested as deep as the JSON parser allows)."""
    queue: deque[tuple[tuple[str | int, ...], object]] = deque([(("body",), parsed)])
    while queue:
        location, value = queue.popleft()
        if isinstance(value, str):
            _refuse_unstorable(location, value, parsed)
        elif isinstance(value, dict):
            for key, item in value.items():
                _refuse_unstorable((*location, str(key)), str(key), parsed)
                queue.append(((*location, str(key)), item))
        elif isinstance(value, list):
            queue.extend(((*location, index), item) for index, item in enumerate(value))


def _identifier(value: str | None) -> str | None:
    """An id the ledger can use (no control character, not blank), else a validation
    error naming the caller's field (not the event id it becomes, "turn:<id>")."""
    if value is not None:
        try:
            check_identifier("id", value)
        except InvalidIdentifier as e:
            raise PydanticCustomError("identifier", "{reason}", {"reason": e.reason}) from None
    return value


Identifier = AfterValidator(_identifier)


class Strict(BaseModel):
    """Unknown fields are refused, so a typo is an error rather than silently ignored."""

    model_config = ConfigDict(extra="forbid")


class ScopesIn(Strict):
    session: str | None = Field(default=None, max_length=200)
    project: str | None = Field(default=None, max_length=200)
    user: str | None = Field(default=None, max_length=200)
    org: str | None = Field(default=None, max_length=200)


class TurnIn(Strict):
    role: Literal["user", "assistant", "system", "tool"]
    text: str = Field(max_length=200_000)
    scopes: ScopesIn = ScopesIn()
    turn_id: Annotated[str | None, Identifier] = Field(default=None, min_length=1, max_length=200)
    occurred_at: Annotated[datetime | None, AfterValidator(_in_utc_range)] = None
    subject: str | None = Field(default=None, max_length=200)
    speaker: str | None = Field(
        default=None,
        max_length=200,
        description="the speaker's name as blocks show it (default: the user key, when it reads as a person's name)",
    )


class TurnsIn(Strict):
    turns: list[TurnIn] = Field(min_length=1, max_length=1000)


class TurnsAccepted(BaseModel):
    positions: list[int]
    turn_ids: list[str]
    replayed: int = Field(description="turns that were already recorded (idempotent retries)")


class SelectIn(Strict):
    request: str = Field(min_length=1, max_length=MAX_REQUEST_CHARS)
    scopes: ScopesIn = ScopesIn()
    budget: int = Field(default=5000, ge=MIN_BUDGET_CHARS, le=MAX_BUDGET_CHARS)
    min_confidence: float = Field(default=0.7, ge=0.0, le=1.0)
    as_of: AsOf = Field(default=None, description="a ledger position, or a time with a timezone")
    deadline_ms: int | None = Field(default=None, ge=1, le=MAX_DEADLINE_MS, description="default: the server's setting")
    after: int | None = Field(default=None, ge=0, lt=2**63, description=AFTER)


class CitedTurn(BaseModel):
    turn_id: str
    speaker: str | None = None
    said_at: datetime | None = None


class Item(BaseModel):
    item_id: str
    kind: str
    text: str
    confidence: float
    score: float
    scope: str | None = None
    scope_key: str | None = None
    category: str | None = None
    conflicted: bool = False
    conflict_id: str | None = None
    source_turns: list[str] = []
    reasons: list[str] = []
    said_by: list[str] = Field(
        default=[],
        description="a fact of a shared scope: who said it: the request's own stored user id, else 'another user (…)'",
    )
    speakers: list[str] = Field(default=[], description="their names, where their turns were recorded with one")
    cited: list[CitedTurn] = Field(default=[], description="each cited turn: its id, speaker and time (search)")


class SelectionOut(BaseModel):
    request: str
    items: list[Item]
    empty_reason: str | None = None
    as_of: str | None = None


class ContextOut(BaseModel):
    block: str
    event_id: str
    item_ids: list[str]
    omitted: int
    chars: int
    tokens: int
    sha256: str
    empty_reason: str | None = None


class PromoteIn(Strict):
    kind: Kind
    scope: Scope
    scopes: ScopesIn
    memory_id: Annotated[str | None, Identifier] = Field(default=None, max_length=200)
    statement: str | None = Field(default=None, max_length=MAX_PROMOTED_STATEMENT)
    key: str | None = Field(default=None, max_length=1000)


class PromoteOut(BaseModel):
    memory_id: str


class ReasonIn(Strict):
    reason: str = Field(default="", max_length=2000)


class ChangedOut(BaseModel):
    item_id: str
    kind: str
    status: Literal["retracted", "already retracted", "restored", "not retracted"]
    recorded: bool = Field(description="False when the item already was as asked: nothing was recorded")


class ResolveIn(Strict):
    chosen_memory_id: Annotated[str, Identifier] = Field(min_length=1, max_length=200)
    reason: str = Field(default="", max_length=2000)


class ResolvedOut(BaseModel):
    conflict_id: str
    chosen_memory_id: str


class SettingsIn(Strict):
    capture: bool | None = None
    recall: bool | None = None
    auto_promote: bool | None = None
    broad_scope_writes: bool | None = None
    extraction_mode: Literal["heuristic", "llm", "hybrid"] | None = Field(
        default=None, description="how this tenant's turns are extracted from now on (docs/llm-extraction.md)"
    )


class SettingsOut(BaseModel):
    capture: bool
    recall: bool
    auto_promote: bool
    broad_scope_writes: bool
    extraction_mode: Literal["heuristic", "llm", "hybrid"] | None = Field(
        default=None, description="None: the server's configured extractor (MEMLEDGER_EXTRACTOR)"
    )


class EventsPage(BaseModel):
    events: list[dict[str, Any]]
    next_after: str | None = Field(description="pass as `after` to read the next page")


class ErrorBody(BaseModel):
    code: str
    message: str
    field: str | None = None


class ErrorOut(BaseModel):
    error: ErrorBody
