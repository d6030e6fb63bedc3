"""What ``memledger projections status`` reports for each projection."""

from __future__ import annotations

from datetime import datetime

import msgspec
from sqlalchemy.engine import Connection

from memledger.events.envelope import START
from memledger.projectors import checkpoints
from memledger.projectors.base import Projector
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
