"""What ``memledger projections status`` reports for each projection, and for the
embedding chain: its models and the rows waiting for the backfill."""

from __future__ import annotations

from datetime import datetime

import msgspec
from sqlalchemy.engine import Connection

from memledger.adapters.embedding import Embedder
from memledger.adapters.embedding_chain import EmbeddingChain, as_chain
from memledger.events.envelope import START
from memledger.projectors import checkpoints
from memledger.projectors.base import Projector
from memledger.projectors.embeddings import backfill as embedding_backfill
from memledger.projectors.embeddings.projector import NAME as EMBEDDINGS
from memledger.store import event_reads


class ProjectionStatus(msgspec.Struct, frozen=True):
    """A projection's version, place in the ledger, lag and state."""

    name: str
    version: int
    code_version: int
    position: int
    cursor: str
    applied_events: int
    lag_events: int
    lag_seconds: float
    state: str
    error: str | None = None
    error_position: int | None = None
    error_event_id: str | None = None


def status(conn: Connection, projector: Projector, now: datetime) -> ProjectionStatus:
    """The status of one projection; ``state`` is "not installed" if it never ran."""
    cp = checkpoints.get(conn, projector.name)
    if cp is None:
        pending = event_reads.count_after(conn, START, types=projector.handles)
        return ProjectionStatus(projector.name, 0, projector.version, 0, "0:0", 0, pending, 0.0, "not installed")
    lag = event_reads.count_after(conn, cp.cursor, types=projector.handles)
    oldest = event_reads.read_all(conn, after=cp.cursor, limit=1, types=projector.handles)
    lag_s = max(0.0, (now - oldest[0].recorded_at).total_seconds()) if oldest else 0.0
    state = cp.state
    if state == "live" and cp.version != projector.version:
        state = "live (rebuild needed: new version)"
    return ProjectionStatus(
        name=projector.name,
        version=cp.version,
        code_version=projector.version,
        position=cp.cursor.position,
        cursor=str(cp.cursor),
        applied_events=cp.applied_events,
        lag_events=lag,
        lag_seconds=round(lag_s, 3),
        state=state,
        error=cp.error,
        error_position=cp.error_position,
        error_event_id=cp.error_event_id,
    )


class EmbeddingChainStatus(msgspec.Struct, frozen=True, omit_defaults=True):
    """The embedding chain: its ``models`` (the first the tenants'), the rows under a
    later model of it (``waiting``: the backfill's work) and under a model outside it
    (``outside``: a mismatch, a rebuild's work), by model. The counters are the
    calling process's chain's (None for a single model): calls a later model answered
    (``switches``), calls answered by model, calls every provider failed."""

    models: list[str]
    waiting: dict[str, int]
    outside: dict[str, int]
    switches: int | None = None
    answered: dict[str, int] | None = None
    provider_failures: int | None = None


def embedding_chain(conn: Connection, embedder: Embedder) -> EmbeddingChainStatus:
    """The chain ``embedder`` is (a single model is a chain of one) and its rows; no rows
    while the embeddings projection is not installed."""
    models = as_chain(embedder).models
    cp = checkpoints.get(conn, EMBEDDINGS)
    others = embedding_backfill.not_first(conn, models[0]) if cp is not None else {}
    waiting = {model: n for model, n in others.items() if model in models}
    outside = {model: n for model, n in others.items() if model not in models}
    if not isinstance(embedder, EmbeddingChain):
        return EmbeddingChainStatus(list(models), waiting, outside)
    return EmbeddingChainStatus(
        list(models),
        waiting,
        outside,
        switches=embedder.switches,
        answered=dict(sorted(embedder.answered.items())),
        provider_failures=embedder.provider_failures,
    )
