"""Health: is the database reachable and migrated, are the projectors and the worker keeping up,
and how the embedding chain fares (its switches, the rows waiting for the backfill)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import msgspec
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import Engine

from memledger.adapters.embedding import Embedder
from memledger.errors import LedgerError
from memledger.events.envelope import Recorded
from memledger.service import projections
from memledger.service.extraction import ExtractionWorker
from memledger.store import db, migrate

LAG_WARNING_S = 60.0


def event_record(rec: Recorded) -> dict[str, Any]:
    """An event as auditors read it: envelope fields, then the payload."""
    payload = msgspec.to_builtins(rec.event)
    return {
        "position": rec.position,
        "cursor": str(rec.cursor),
        "tenant_id": rec.tenant_id,
        "stream_id": rec.stream_id,
        "stream_version": rec.stream_version,
        "event_id": rec.event_id,
        "type": payload["type"],
        "schema_version": type(rec.event).schema_version,
        "occurred_at": rec.occurred_at.isoformat(),
        "recorded_at": rec.recorded_at.isoformat(),
        "metadata": msgspec.to_builtins(rec.metadata),
        "payload": payload,
    }


def check(engine: Engine, worker: ExtractionWorker, now: datetime, embedder: Embedder | None = None) -> dict[str, Any]:
    """A report with ``ok`` and what each part said; ``embedder`` is the application's."""
    report: dict[str, Any] = {"ok": True}
    try:
        with engine.connect() as conn:
            server = db.server_status(conn)
        report["database"] = {
            "ok": True,
            "postgres": server.server_version,
            "pgvector": server.pgvector_version,
            "oldest_write_transaction_s": server.oldest_write_transaction_s,
        }
        current, head = migrate.current(engine), migrate.head()
        report["migrations"] = {"ok": current == head, "current": current, "head": head}
        statuses = projections.statuses(engine)
        report["projections"] = {
            s.name: {
                "ok": s.state.startswith("live") and s.lag_seconds < LAG_WARNING_S,
                "state": s.state,
                "lag_events": s.lag_events,
                "lag_seconds": s.lag_seconds,
            }
            for s in statuses
        }
        report["worker"] = {"ok": True, "extractor": worker.name, "pending_turns": worker.pending()}
        # informative, never a 503: a fallback's rows are served by words until the backfill
        report["embeddings"] = msgspec.to_builtins(projections.embedding_chain_status(engine, embedder))
    except (LedgerError, sa_exc.SQLAlchemyError) as e:
        report["database"] = {"ok": False, "error": str(e)}
        report["ok"] = False
        return report
    parts = [report["migrations"], *report["projections"].values()]
    report["ok"] = all(part["ok"] for part in parts)
    return report
