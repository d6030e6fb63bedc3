"""Endpoints for auditors and operators: ledger pages, projection status, health."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

import msgspec
from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse

from memledger.api.deps import Actor, Fenced, Tenant, database_of
from memledger.api.operator_key import is_operator
from memledger.api.schemas import EventsPage, storable_text
from memledger.bootstrap import build_worker
from memledger.errors import Unauthorized
from memledger.service import health, ledger_pages, maintenance, projections, replica_reads

router = APIRouter(dependencies=[Depends(storable_text)])  # one rule for text (schemas.storable_text)


@router.get("/v1/events", response_model=EventsPage, tags=["auditors"])
def get_events(
    tenant_id: Tenant,
    engine: Fenced,
    after: str | None = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    type: Annotated[list[str] | None, Query()] = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> EventsPage:
    """The tenant's ledger, a page at a time, in its one stable (gap-safe) order."""
    found, next_after = ledger_pages.page(
        engine,
        tenant_id,
        after=ledger_pages.parse_cursor(after, engine),
        limit=limit,
        types=type,
        since=since,
        until=until,
    )
    return EventsPage(
        events=[health.event_record(rec) for rec in found],
        next_after=None if next_after is None else str(next_after),
    )


@router.get("/v1/projections", tags=["operators"])
def get_projections(engine: Fenced) -> list[dict[str, Any]]:
    """Each projection's version, position and state, and its lag in the caller's
    events. A failure's message and event are the operator's business (they may
    quote another tenant's event): ``memledger projections status`` shows them."""
    return [
        msgspec.to_builtins(msgspec.structs.replace(s, error=None, error_event_id=None, error_position=None))
        for s in projections.statuses(engine)
    ]


@router.get("/v1/maintenance", tags=["operators"])
def get_maintenance(request: Request, tenant_id: Tenant, engine: Fenced) -> dict[str, Any]:
    """The graph's upkeep: entities merged and merges the rules would propose now,
    entities pruning hides from context and search, and the aging settings reads apply."""
    app = database_of(request)
    status = maintenance.status(engine, tenant_id, aging=app.aging, embedding_model=app.embedder.model)
    found: dict[str, Any] = msgspec.to_builtins(status)
    return found


@router.post("/v1/maintenance/run", tags=["operators"])
def run_maintenance(
    request: Request, tenant_id: Tenant, engine: Fenced, actor: Actor, dry_run: bool = False
) -> dict[str, Any]:
    """Merge the entities the rules find to be one (one ``EntitiesMerged`` event per
    group, with its evidence); with ``dry_run``, only say which. Running again merges
    nothing new."""
    app = database_of(request)
    report = maintenance.run(
        engine, tenant_id, owner=app.engine, dry_run=dry_run, actor=actor, embedding_model=app.embedder.model
    )
    found: dict[str, Any] = msgspec.to_builtins(report)
    return found


@router.get("/health", tags=["operators"])
def get_health(request: Request, detail: bool = False) -> JSONResponse:
    """Up or down for anyone: 200 ``{"status": "ok"}`` or 503 ``{"status": "unavailable"}``.

    With ``detail=1`` and ``Authorization: Bearer <operator key>`` (MEMLEDGER_OPERATOR_KEY):
    the database, migrations, every projection's lag and the worker's backlog, across
    tenants, which is why a tenant's key does not read them."""
    if detail and not is_operator(request):
        raise Unauthorized("the health details need the operator key (Authorization: Bearer <MEMLEDGER_OPERATOR_KEY>)")
    database = database_of(request)
    report = health.check(database.engine, build_worker(database), datetime.now(UTC), database.embedder)
    status = 200 if report["ok"] else 503
    if detail:
        if database.reads.replicas:  # reads fall back to the primary: a replica's lag is shown, not a 503
            report["replicas"] = msgspec.to_builtins(replica_reads.lag(database.reads, database.engine))
        return JSONResponse(status_code=status, content=report)
    return JSONResponse(status_code=status, content={"status": "ok" if report["ok"] else "unavailable"})
