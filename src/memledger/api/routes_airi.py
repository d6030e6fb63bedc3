"""The AIRI-style memory API (/api/...): the routes of AIRI's memory service
(moeru-ai/airi, services/memory-service/src/api/server.ts) over the ledger, so a
client written for that service works against memledger unchanged (docs/airi-api.md).

AIRI keeps one memory per ``modelName``; here a model name is a session scope key:
its messages and completions are the session's turns, its context reads that session."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse

from memledger.api.deps import Actor, ContextReader, Fenced, Reader, Tenant, database_of
from memledger.api.schemas import storable_text
from memledger.api.schemas_airi import (
    SWITCHES,
    Associated,
    CompletionIn,
    CompletionOut,
    ContextIn,
    ConversationMessage,
    ConversationsOut,
    Entity,
    Fragment,
    HealthOut,
    MessageIn,
    MessageOut,
    RecentCompletion,
    RecentMessage,
    SemanticMemory,
    SettingsIn,
    SettingsOut,
    SettingsSaved,
    StructuredContextOut,
    StructuredKnowledge,
    TestConnOut,
    WorkingMemory,
)
from memledger.api.schemas_airi import QueueStatusOut as QueueStatus
from memledger.bootstrap import build_worker, vector_search
from memledger.errors import Refused
from memledger.service import context, context_limits, conversations, health, tenant_settings
from memledger.service.record import TurnInput, record_turns
from memledger.service.tenant_settings import TenantSettings
from memledger.service.types import Scopes, SelectedItem, TenantSettingsChanged

router = APIRouter(prefix="/api", dependencies=[Depends(storable_text)], tags=["airi"])

DEFAULT_MODEL = "default"  # AIRI's name for memory of no model in particular
WORKING_MEMORY_TURNS = 10  # AIRI's maxWorkingMemoryMessages
BROAD_SCOPES = ("user", "org")  # a fact of these is AIRI's long-term memory


def _model(name: str | None) -> str:
    """The model name AIRI would use: trimmed, "default" when none is given."""
    return (name or "").strip() or DEFAULT_MODEL


def _ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def _record(
    request: Request, reader: Reader, role: Literal["user", "assistant"], text: str, model: str
) -> tuple[str, datetime]:
    """Record one turn of the model's session; its id and time."""
    turn_id, now = str(uuid.uuid4()), datetime.now(UTC)
    turn = TurnInput(
        role=role, text=text, scopes=Scopes(session=model), turn_id=turn_id, occurred_at=now, actor=reader.actor
    )
    limit = database_of(request).settings.max_payload_bytes
    record_turns(reader.engine, reader.tenant_id, [turn], max_payload_bytes=limit)
    return turn_id, now


def _writer(tenant_id: Tenant, engine: Fenced, actor: Actor) -> Reader:
    """The caller's tenant, fenced engine and actor, for a route that records turns."""
    return Reader(tenant_id, engine, actor)


Writer = Annotated[Reader, Depends(_writer)]


@router.post("/messages", response_model=MessageOut)
def post_message(body: MessageIn, request: Request, writer: Writer) -> MessageOut:
    """Record a user message (a user turn of the model's session); extracted later."""
    model = _model(body.modelName)
    turn_id, at = _record(request, writer, "user", body.content, model)
    return MessageOut(
        id=turn_id, content=body.content, platform=body.platform or "", created_at=_ms(at), modelName=model
    )


@router.post("/completions", response_model=CompletionOut)
def post_completion(body: CompletionIn, request: Request, writer: Writer) -> CompletionOut:
    """Record an AI response (an assistant turn). The prompt is echoed, not recorded:
    AIRI's client sent it already, as the message of /api/context."""
    model = _model(body.modelName)
    turn_id, at = _record(request, writer, "assistant", body.response, model)
    return CompletionOut(
        id=turn_id,
        prompt=body.prompt,
        response=body.response,
        platform=body.platform or "",
        created_at=_ms(at),
        modelName=model,
    )


def _record_asked(request: Request, reader: Reader, message: str, model: str) -> None:
    """Record the message asked about, as AIRI does before building context; skipped
    (not refused) when the tenant switched capture off: context is still served."""
    try:
        _record(request, reader, "user", message, model)
    except Refused as e:
        if e.code != "capture_off":
            raise


def _select_request(request: Request, reader: Reader, message: str, model: str) -> context.SelectRequest:
    return context.SelectRequest(
        tenant_id=reader.tenant_id,
        scopes=Scopes(session=model),
        request=message,
        budget_chars=5000,
        deadline_ms=database_of(request).settings.context_deadline_ms,
    )


def _block(request: Request, reader: Reader | None, message: str, model: str) -> str:
    """The memory block for ``message``; empty when memory cannot answer (it fails open)."""
    if reader is None:
        return ""
    app = database_of(request)
    select = _select_request(request, reader, message, model)
    served = context.build_context(
        reader.engine,
        select,
        vector_search=vector_search(app),
        actor=reader.actor,
        aging=app.aging,
        limit=app.selections,
    )
    return served.block.text


@router.post("/context", response_model=str)
def post_context(body: ContextIn, request: Request, reader: ContextReader) -> str:
    """Record the message, then return the memory block for it: a JSON string, as AIRI's."""
    model = _model(body.modelName)
    if reader is not None:
        _record_asked(request, reader, body.message, model)
    return _block(request, reader, body.message, model)


@router.get("/context", response_model=str)
def get_context(
    request: Request,
    reader: ContextReader,
    message: Annotated[str, Query(min_length=1, max_length=context_limits.MAX_REQUEST_CHARS)],
    modelName: Annotated[str | None, Query(max_length=200)] = None,  # noqa: N803 (AIRI's name)
) -> str:
    """The memory block for ``message``, as POST gives it, but recording nothing (a GET)."""
    return _block(request, reader, message, _model(modelName))


def _fragment(item: SelectedItem) -> Fragment:
    broad = item.scope in BROAD_SCOPES
    return Fragment(
        id=item.item_id,
        content=item.text,
        memory_type="long_term" if broad else "short_term",
        category=item.category or item.kind,
        importance=round(item.confidence * 10),
        created_at=_ms(item.valid_from) if item.valid_from else None,
    )


def _semantic(items: tuple[SelectedItem, ...]) -> SemanticMemory:
    facts = [_fragment(i) for i in items if i.kind == "fact"]
    return SemanticMemory(
        shortTerm=[f for f in facts if f.memory_type == "short_term"],
        longTerm=[f for f in facts if f.memory_type == "long_term"],
        associatedMemories=[
            Associated(content=i.text, association_type=i.kind, strength=round(i.score, 4))
            for i in items
            if i.kind in ("relationship", "turn")
        ],
    )


def _entities(items: tuple[SelectedItem, ...]) -> StructuredKnowledge:
    found = [
        Entity(
            name=i.text,
            entity_type=i.category or "entity",
            metadata={"item_id": i.item_id, "confidence": i.confidence, "source_turns": list(i.source_turns)},
        )
        for i in items
        if i.kind == "entity"
    ]
    return StructuredKnowledge(entities=found)


def _working(reader: Reader, model: str) -> WorkingMemory:
    turns, _ = conversations.recent(reader.engine, reader.tenant_id, model, before=None, limit=WORKING_MEMORY_TURNS)
    return WorkingMemory(
        recentMessages=[
            RecentMessage(content=t.text, created_at=_ms(t.occurred_at)) for t in turns if t.role == "user"
        ],
        recentCompletions=[
            RecentCompletion(response=t.text, created_at=_ms(t.occurred_at)) for t in turns if t.role == "assistant"
        ],
    )


@router.post("/context/structured", response_model=StructuredContextOut)
def post_structured(body: ContextIn, request: Request, reader: ContextReader) -> StructuredContextOut:
    """Record the message, then return the selection in AIRI's structured shape: the
    session's latest turns, facts as fragments, relationships and turns as associated
    memories, entities as entities. Empty when memory cannot answer."""
    empty = StructuredContextOut(
        workingMemory=WorkingMemory(recentMessages=[], recentCompletions=[]),
        semanticMemory=SemanticMemory(shortTerm=[], longTerm=[]),
        structuredKnowledge=StructuredKnowledge(entities=[]),
    )
    if reader is None:
        return empty
    model = _model(body.modelName)
    _record_asked(request, reader, body.message, model)
    select = _select_request(request, reader, body.message, model)
    app = database_of(request)
    selection = context.select(
        reader.engine, select, vector_search=vector_search(app), aging=app.aging, limit=app.selections
    )
    return StructuredContextOut(
        workingMemory=_working(reader, model),
        semanticMemory=_semantic(selection.items),
        structuredKnowledge=_entities(selection.items),
    )


@router.get("/conversations", response_model=ConversationsOut)
def get_conversations(
    tenant_id: Tenant,
    engine: Fenced,
    limit: Annotated[int, Query(ge=1, le=1000)] = 10,
    before: Annotated[int | None, Query(ge=0, le=253_402_300_799_000, description="milliseconds")] = None,
    modelName: Annotated[str | None, Query(max_length=200)] = None,  # noqa: N803
) -> ConversationsOut:
    """The model's conversation, a page at a time, newest page first, oldest first in it."""
    model = _model(modelName)
    until = None if before is None else datetime.fromtimestamp(before / 1000, UTC)
    turns, more = conversations.recent(engine, tenant_id, model, before=until, limit=limit)
    messages = [
        ConversationMessage(
            id=t.turn_id,
            content=t.text,
            created_at=_ms(t.occurred_at),
            type="assistant" if t.role == "assistant" else "user",
            model_name=model,
            task="chat" if t.role == "assistant" else None,
        )
        for t in turns
    ]
    cursor = messages[0].created_at if messages else None
    return ConversationsOut(messages=messages, hasMore=more, nextCursor=cursor, modelName=model)


@router.get("/queue/status", response_model=QueueStatus)
def get_queue_status(request: Request, tenant_id: Tenant, engine: Fenced) -> QueueStatus:
    """The tenant's extraction backlog: its turns the worker has still to extract."""
    found = conversations.backlog(engine, build_worker(database_of(request)), tenant_id)
    return QueueStatus(
        extractor=found.extractor, pending=found.pending, processed=found.total - found.pending, total=found.total
    )


def _settings_out(current: TenantSettings) -> SettingsOut:
    return SettingsOut(
        capture=current.capture,
        recall=current.recall,
        autoPromote=current.auto_promote,
        broadScopeWrites=current.broad_scope_writes,
        extractionMode=current.extraction_mode,
    )


@router.get("/settings", response_model=SettingsOut)
def get_settings(tenant_id: Tenant, engine: Fenced) -> SettingsOut:
    """The tenant's switches."""
    return _settings_out(tenant_settings.current(engine, tenant_id))


@router.post("/settings", response_model=SettingsSaved)
def post_settings(body: SettingsIn, tenant_id: Tenant, engine: Fenced, actor: Actor) -> SettingsSaved:
    """Change the tenant's switches (an event); AIRI's provider settings are ignored
    and listed as such: the server's configuration decides them."""
    given = body.model_dump(exclude_none=True)
    switches = {SWITCHES[name]: value for name, value in given.items() if name in SWITCHES}
    ignored = sorted(name for name in given if name not in SWITCHES)
    if switches:
        change = TenantSettingsChanged(**switches, changed_by=actor)
        current = tenant_settings.change(engine, tenant_id, change, actor=actor)
    else:
        current = tenant_settings.current(engine, tenant_id)
    return SettingsSaved(message="Settings updated successfully", settings=_settings_out(current), ignored=ignored)


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


@router.get("/health", response_model=HealthOut)
def get_health(request: Request) -> JSONResponse:
    """Up or down, for anyone (no key), as memledger's /health says it, with AIRI's timestamp."""
    app = database_of(request)
    report = health.check(app.engine, build_worker(app), datetime.now(UTC), app.embedder)
    status = "ok" if report["ok"] else "unavailable"
    return JSONResponse(status_code=200 if report["ok"] else 503, content={"status": status, "timestamp": _now()})


@router.get("/test-conn", response_model=TestConnOut)
def get_test_conn(tenant_id: Tenant) -> TestConnOut:
    """200 when the request's API key is valid (401 otherwise)."""
    return TestConnOut(timestamp=_now())
