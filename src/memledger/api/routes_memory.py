"""Endpoints for agents: record turns, get context, search, the graph, memory commands."""

from __future__ import annotations

import uuid
from typing import Annotated, Any, Literal

import msgspec
from fastapi import APIRouter, Depends, Query, Request, Response

from memledger.api.deps import Actor, ContextReader, Fenced, Tenant, database_of
from memledger.api.schemas import (
    AFTER,
    AsOf,
    ChangedOut,
    ContextOut,
    Item,
    PromoteIn,
    PromoteOut,
    ReasonIn,
    ResolvedOut,
    ResolveIn,
    ScopesIn,
    SelectIn,
    SelectionOut,
    SettingsIn,
    SettingsOut,
    TurnIn,
    TurnsAccepted,
    TurnsIn,
    storable_text,
)
from memledger.bootstrap import vector_search
from memledger.service import (
    context,
    context_limits,
    graph_stats,
    memory,
    provenance,
    replica_reads,
    search,
    tenant_settings,
)
from memledger.service.record import TurnInput, record_turns
from memledger.service.types import Scopes, Selection, TenantSettingsChanged

router = APIRouter(dependencies=[Depends(storable_text)])  # one rule for text (schemas.storable_text)

# What a command's answer means: 200 when the read models show the change before the
# answer (the next context call does), 202 when it is recorded but they had not caught
# up within memory.READ_YOUR_WRITE_S (they follow by themselves).
SHOWN = "recorded, and shown by the next context, search or graph call"
NOT_YET_SHOWN: dict[int | str, dict[str, Any]] = {
    202: {
        "description": "recorded, but the read models had not caught up within "
        f"{memory.READ_YOUR_WRITE_S:g} s: the next context call may not show it yet"
    }
}
UNAVAILABLE = "memory unavailable (the database is unavailable)"


def _scopes(scopes: ScopesIn) -> Scopes:
    return Scopes(session=scopes.session, project=scopes.project, user=scopes.user, org=scopes.org)


def _query_scopes(session: str | None, project: str | None, user: str | None, org: str | None) -> Scopes:
    """Scopes from query parameters; an empty one (``?session=``) means none."""
    return Scopes(session=session or None, project=project or None, user=user or None, org=org or None)


def _reason(body: ReasonIn | None) -> str:
    """The reason a body gives; none without a body (the reason is optional)."""
    return body.reason if body is not None else ""


def _items(selection: Selection) -> list[Item]:
    return [Item(**msgspec.to_builtins(item)) for item in selection.items]


def _shown(response: Response, shown: bool) -> None:
    response.status_code = 200 if shown else 202


def _unavailable_block(request: str, budget: int, style: Literal["text", "xml"], max_tokens: int | None) -> ContextOut:
    """The empty block served when the database cannot even check the key: no tenant
    is known, so nothing is selected and nothing recorded (event_id "")."""
    selection = Selection(request=request, empty_reason=UNAVAILABLE)
    block = context.render_block(selection, style=style, max_chars=budget, max_tokens=max_tokens)
    return ContextOut(
        block=block.text,
        event_id="",
        item_ids=[],
        omitted=0,
        chars=block.chars,
        tokens=block.tokens,
        sha256=block.sha256,
        empty_reason=UNAVAILABLE,
    )


@router.post("/v1/turns", status_code=202, response_model=TurnsAccepted, tags=["agents"])
def post_turns(
    body: TurnIn | TurnsIn, request: Request, tenant_id: Tenant, engine: Fenced, actor: Actor
) -> TurnsAccepted:
    """Record one turn or a batch. Returns at once with the ledger positions;
    extraction happens later, in the background worker. Each turn records the API key
    that sent it (its actor)."""
    turns = body.turns if isinstance(body, TurnsIn) else [body]
    inputs = [
        TurnInput(
            role=t.role,
            text=t.text,
            scopes=_scopes(t.scopes),
            turn_id=t.turn_id or str(uuid.uuid4()),
            occurred_at=t.occurred_at,
            subject=t.subject,
            actor=actor,
            speaker=t.speaker,
        )
        for t in turns
    ]
    database = database_of(request)
    batch = isinstance(body, TurnsIn)  # a bad turn is named as sent: turns.2.occurred_at, or occurred_at
    results = record_turns(
        engine, tenant_id, inputs, max_payload_bytes=database.settings.max_payload_bytes, indexed=batch
    )
    positions = [p for r in results for p in r.positions]
    replayed = sum(r.appended_before for r in results)
    return TurnsAccepted(positions=sorted(positions), turn_ids=[t.turn_id or "" for t in inputs], replayed=replayed)


@router.get("/v1/memory/context", response_model=ContextOut, tags=["agents"])
def get_context(
    request: Request,
    reader: ContextReader,
    q: Annotated[str, Query(alias="request", min_length=1, max_length=context_limits.MAX_REQUEST_CHARS)],
    session: str | None = None,
    project: str | None = None,
    user: str | None = None,
    org: str | None = None,
    budget: Annotated[int, Query(ge=context_limits.MIN_BUDGET_CHARS, le=context_limits.MAX_BUDGET_CHARS)] = 5000,
    max_tokens: Annotated[int | None, Query(ge=1)] = None,
    model: str | None = None,
    style: Literal["text", "xml"] = "text",
    as_of: Annotated[AsOf, Query(description="a ledger position (digits), or a time with a timezone")] = None,
    deadline_ms: Annotated[int | None, Query(ge=1, le=context.MAX_DEADLINE_MS)] = None,
    after: Annotated[int | None, Query(ge=0, lt=2**63, description=AFTER)] = None,
) -> ContextOut | Response:
    """The read-only memory block for a request. Never an error for the agent's chat
    loop: when memory cannot answer, the block is empty and says why (with the
    database down, before the key can be checked: "memory unavailable", event_id "")."""
    if reader is None:
        return _unavailable_block(q, budget, style, max_tokens)
    tenant_id, engine, actor = reader
    database = database_of(request)
    select = context.SelectRequest(
        tenant_id=tenant_id,
        scopes=_query_scopes(session, project, user, org),
        request=q,
        budget_chars=budget,
        as_of=as_of,
        deadline_ms=deadline_ms or database.settings.context_deadline_ms,
    )
    served = replica_reads.build_context(
        database.reads,
        engine,
        select,
        after=after,
        style=style,
        max_tokens=max_tokens,
        token_model=model,
        vector_search=vector_search(database),
        actor=actor,
        aging=database.aging,
        limit=database.selections,
        tokenizers=database.tokenizers,
    )
    return _context_response(served)


def _context_response(served: context.ServedContext) -> Response:
    """``served`` as ``ContextOut`` JSON, encoded once: returned as a response, it is
    not validated again and re-encoded by FastAPI (in a worker thread) per request."""
    block = served.block
    out = ContextOut.model_construct(
        block=block.text,
        event_id=served.event_id,
        item_ids=list(block.item_ids),
        omitted=block.omitted,
        chars=block.chars,
        tokens=block.tokens,
        sha256=block.sha256,
        empty_reason=served.selection.empty_reason,
    )
    return Response(msgspec.json.encode(dict(out)), media_type="application/json")


@router.post("/v1/memory/select", response_model=SelectionOut, tags=["agents"])
def post_select(body: SelectIn, request: Request, reader: ContextReader) -> SelectionOut:
    """The items the selector would choose, and why each was chosen, unformatted. Fails
    open as context does: no items, and the reason."""
    if reader is None:
        return SelectionOut(request=body.request, items=[], empty_reason=UNAVAILABLE)
    tenant_id, engine, _ = reader  # select records nothing
    database = database_of(request)
    select = context.SelectRequest(
        tenant_id=tenant_id,
        scopes=_scopes(body.scopes),
        request=body.request,
        budget_chars=body.budget,
        min_confidence=body.min_confidence,
        as_of=body.as_of,
        deadline_ms=body.deadline_ms or database.settings.context_deadline_ms,
    )
    selection = replica_reads.select(
        database.reads,
        engine,
        select,
        after=body.after,
        vector_search=vector_search(database),
        aging=database.aging,
        limit=database.selections,
    )
    own = selection.scopes.user if selection.scopes else None
    unnamed = msgspec.structs.replace(selection, items=tuple(search.others_unnamed(i, own) for i in selection.items))
    return SelectionOut(
        request=selection.request,
        items=_items(unnamed),
        empty_reason=selection.empty_reason,
        as_of=selection.as_of,
    )


@router.get("/v1/memory/conflicts", tags=["auditors"])
def get_conflicts(
    tenant_id: Tenant, engine: Fenced, state: Literal["open", "resolved", "dissolved"] | None = None
) -> list[dict[str, Any]]:
    """The tenant's conflicts: which facts disagree, the resolution chosen and why."""
    found = memory.conflicts(engine, tenant_id, state)
    return [msgspec.to_builtins(c) for c in found]


# Ids may hold "/" (a relationship to "ci/cd"): path parameters take the rest of the
# path (sent as %2F or as a plain /), up to the fixed suffix of their route.
@router.post(
    "/v1/memory/conflicts/{conflict_id:path}/resolve",
    response_model=ResolvedOut,
    response_description=SHOWN,
    responses=NOT_YET_SHOWN,
    tags=["auditors"],
)
def resolve_conflict(
    conflict_id: str,
    body: ResolveIn,
    request: Request,
    response: Response,
    tenant_id: Tenant,
    engine: Fenced,
    actor: Actor,
) -> ResolvedOut:
    """Record which fact of a conflict stands (appends ConflictResolved); the next
    context shows the choice."""
    memory.resolve_conflict(engine, tenant_id, conflict_id, body.chosen_memory_id, reason=body.reason, actor=actor)
    _shown(response, memory.resolution_shown(database_of(request).engine, tenant_id, conflict_id))
    return ResolvedOut(conflict_id=conflict_id, chosen_memory_id=body.chosen_memory_id)


@router.post(
    "/v1/memory/promote",
    response_model=PromoteOut,
    response_description=SHOWN,
    responses=NOT_YET_SHOWN,
    tags=["agents"],
)
def promote(
    body: PromoteIn, request: Request, response: Response, tenant_id: Tenant, engine: Fenced, actor: Actor
) -> PromoteOut:
    """Copy a memory (or a new statement) to a longer-lived scope, with its kind; the
    next context shows it (in place of the broader facts it shadows)."""
    new_id = memory.promote(
        engine,
        tenant_id,
        kind=body.kind,
        scope=body.scope,
        scopes=_scopes(body.scopes),
        memory_id=body.memory_id,
        statement=body.statement,
        key=body.key,
        actor=actor,
    )
    _shown(response, memory.promotion_shown(database_of(request).engine, tenant_id, new_id))
    return PromoteOut(memory_id=new_id)


def _changed(response: Response, item_id: str, change: memory.Change) -> ChangedOut:
    _shown(response, change.shown)
    return ChangedOut(item_id=item_id, kind=change.kind, status=change.status, recorded=change.appended)


@router.post(
    "/v1/memory/{item_id:path}/retract",
    response_model=ChangedOut,
    response_description=SHOWN,
    responses=NOT_YET_SHOWN,
    tags=["agents"],
)
def retract(
    item_id: str,
    request: Request,
    response: Response,
    tenant_id: Tenant,
    engine: Fenced,
    actor: Actor,
    body: ReasonIn | None = None,
) -> ChangedOut:
    """Soft-delete a memory item; nothing is lost, and restore undoes it. Retracting an
    item retracted already records nothing (status "already retracted"): retrying is safe."""
    owner = database_of(request).engine
    change = memory.retract(engine, tenant_id, item_id, reason=_reason(body), actor=actor, owner=owner)
    return _changed(response, item_id, change)


@router.post(
    "/v1/memory/{item_id:path}/restore",
    response_model=ChangedOut,
    response_description=SHOWN,
    responses=NOT_YET_SHOWN,
    tags=["agents"],
)
def restore(
    item_id: str,
    request: Request,
    response: Response,
    tenant_id: Tenant,
    engine: Fenced,
    actor: Actor,
    body: ReasonIn | None = None,
) -> ChangedOut:
    """Undo a retraction. Restoring an item that is not retracted records nothing
    (status "not retracted")."""
    owner = database_of(request).engine
    change = memory.restore(engine, tenant_id, item_id, reason=_reason(body), actor=actor, owner=owner)
    return _changed(response, item_id, change)


@router.get("/v1/search", response_model=list[Item], tags=["agents"])
def get_search(
    request: Request,
    tenant_id: Tenant,
    q: Annotated[str, Query(min_length=1, max_length=10_000)],
    session: str | None = None,
    project: str | None = None,
    user: str | None = None,
    org: str | None = None,
    k: Annotated[int, Query(ge=1, le=search.MAX_K)] = 10,
    kind: Annotated[list[Literal["fact", "entity", "relationship", "turn"]] | None, Query()] = None,
    after: Annotated[int | None, Query(ge=0, lt=2**63, description=AFTER)] = None,
) -> list[Item]:
    """Hybrid search over facts, entities, relationships and turns, each citing its turns."""
    scopes = _query_scopes(session, project, user, org)
    database = database_of(request)
    vectors = vector_search(database)
    found = database.reads.read(
        tenant_id,
        lambda on: search.search(
            on, tenant_id, scopes, q, k=k, kinds=kind, vector_search=vectors, aging=database.aging
        ),
        after=after,
        wait_s=replica_reads.wait_s(database.settings.context_deadline_ms),
    )
    return [Item(**msgspec.to_builtins(item)) for item in found]


@router.get("/v1/graph", tags=["agents"])
def get_graph(
    request: Request,
    tenant_id: Tenant,
    entity: Annotated[str, Query(min_length=1, max_length=200)],
    depth: Annotated[int, Query(ge=1, le=search.MAX_DEPTH)] = 1,
    relation: Annotated[
        list[str] | None, Query(description="only these relations, e.g. USES (any case: uses is USES)")
    ] = None,
    entity_type: Annotated[
        list[str] | None, Query(description=f"only edges to these types: {', '.join(search.ENTITY_TYPES)}")
    ] = None,
    user: str | None = None,
    after: Annotated[int | None, Query(ge=0, lt=2**63, description=AFTER)] = None,
) -> dict[str, Any]:
    """Relationships around an entity ("me" for the user), with the turns behind each.
    A relation that cannot be one, or an unknown entity type, is refused (422)."""
    database = database_of(request)
    answer = database.reads.read(
        tenant_id,
        lambda on: search.query_graph(
            on,
            tenant_id,
            entity,
            depth=depth,
            relations=relation,
            entity_types=entity_type,
            user=user,
            aging=database.aging,
        ),
        after=after,
        wait_s=replica_reads.wait_s(database.settings.context_deadline_ms),
    )
    found: dict[str, Any] = msgspec.to_builtins(answer)
    return found


@router.get("/v1/graph/stats", tags=["agents"])
def get_graph_stats(
    request: Request,
    tenant_id: Tenant,
    engine: Fenced,
    top: Annotated[int, Query(ge=1, le=graph_stats.MAX_TOP, description="how many entities each top list names")] = 10,
    user: Annotated[str | None, Query(description="the asking user: their own entity may be listed")] = None,
) -> dict[str, Any]:
    """The tenant's graph in numbers: entities by type and relationships by relation and
    status (every user's), the entities with the most active relationships and the most
    mentions (no other user's), and how many entities were mentioned only once."""
    aging = database_of(request).aging
    stats = graph_stats.graph_stats(engine, tenant_id, top=top, user=user, aging=aging)
    found: dict[str, Any] = msgspec.to_builtins(stats)
    return found


@router.get("/v1/provenance/{item_id:path}", tags=["auditors"])
def get_provenance(item_id: str, tenant_id: Tenant, engine: Fenced) -> dict[str, Any]:
    """The chain of events behind an item, with extractor versions, back to its turns."""
    found: dict[str, Any] = msgspec.to_builtins(provenance.provenance(engine, tenant_id, item_id))
    return found


@router.get("/v1/settings", response_model=SettingsOut, tags=["operators"])
def get_settings(tenant_id: Tenant, engine: Fenced) -> SettingsOut:
    """The tenant's switches."""
    with engine.connect() as conn:
        current = tenant_settings.load(conn, tenant_id)
    return SettingsOut(**msgspec.to_builtins(current))


@router.post("/v1/settings", response_model=SettingsOut, tags=["operators"])
def post_settings(body: SettingsIn, tenant_id: Tenant, engine: Fenced, actor: Actor) -> SettingsOut:
    """Change the tenant's switches (recorded as an event); unset fields keep their value."""
    change = TenantSettingsChanged(**body.model_dump(), changed_by=actor)
    current = tenant_settings.change(engine, tenant_id, change, actor=actor)
    return SettingsOut(**msgspec.to_builtins(current))
