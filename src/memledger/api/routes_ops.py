"""Endpoints for auditors and operators: ledger pages, projection status, health."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

import msgspec
from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse

from memledger.api.deps import Fenced, Tenant, database_of
from memledger.api.schemas import EventsPage
from memledger.bootstrap import build_worker
from memledger.service import health, ledger_pages, projections

router = APIRouter()


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


@router.get("/health", tags=["operators"])
def get_health(request: Request) -> JSONResponse:
    """Database, migrations, projector lag and the extraction worker's backlog. 503 if unhealthy."""
    database = database_of(request)
    report = health.check(database.engine, build_worker(database), datetime.now(UTC))
    return JSONResponse(status_code=200 if report["ok"] else 503, content=report)
