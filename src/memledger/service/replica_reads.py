"""Reads from streaming replicas: context, select, search and graph; every write stays on the primary.

A caller that recorded turns may pass ``after``, the last ledger position it was given
back: the read then waits (within a share of its deadline) until the replica holds the
event at that position, and is otherwise served by the primary, or fails open saying
why (``fallback``). A replica that cannot be reached, or fails mid-read, is left out
for ``down_for_s`` and the read is served by the primary within what is left of its
deadline.

Why a ledger position rather than a WAL position: the caller already holds it (every
append returns positions), it means the same on every server (a WAL position is one
server's, and a promoted standby's is only comparable by timeline), and a standby
shows a transaction's rows all at once, when its commit is replayed: holding the
event at ``after`` means holding every row the caller's append wrote. It costs one
index probe per poll and no round trip to the primary.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, TypeVar

import msgspec
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import Engine

from memledger.errors import DatabaseUnavailable
from memledger.selection.types import Selection
from memledger.service import context, failing_open, scope_ids
from memledger.store import db, read_replicas

log = logging.getLogger(__name__)

T = TypeVar("T")
Fallback = Literal["primary", "fail_open"]
PRIMARY = "primary"
# A read waits for its replica at most this share of its deadline, keeping the rest to select.
WAIT_SHARE = 0.5
POLL_S = 0.002
DOWN_FOR_S = 5.0
_UNAVAILABLE = "memory unavailable ("


@dataclass(frozen=True)
class Route:
    """Where a read goes: ``engine`` (fenced to the tenant; None: nowhere, fail open),
    ``source`` ("primary" or the replica's name), and why not a replica (None if one)."""

    engine: Engine | None
    source: str
    reason: str | None = None


class ReplicaLag(msgspec.Struct, frozen=True):
    """What an operator sees of one replica (``/health?detail=1``, ``projections status``)."""

    name: str
    ok: bool
    in_recovery: bool | None = None
    replay_lsn: str | None = None
    bytes_behind: int | None = None
    replay_age_s: float | None = None
    replay_paused: bool | None = None
    error: str | None = None

    @property
    def state(self) -> str:
        """For people: ok, behind, paused, not a standby (promoted?), or the error."""
        if self.error:
            return self.error
        if self.ok:
            return "ok"
        return "not a standby" if not self.in_recovery else "paused" if self.replay_paused else "behind"


class ReadReplicas:
    """The primary's application engine and the replicas' (all unfenced), chosen in turn."""

    def __init__(
        self,
        primary: Engine,
        replicas: Sequence[Engine] = (),
        *,
        names: Sequence[str] | None = None,
        fallback: Fallback = "primary",
        down_for_s: float = DOWN_FOR_S,
    ) -> None:
        self.primary = primary
        self.replicas = tuple(replicas)
        self.names = tuple(names) if names is not None else tuple(f"replica{i + 1}" for i in range(len(replicas)))
        self.fallback = fallback
        self.down_for_s = down_for_s
        self._down_until = [0.0] * len(self.replicas)
        self._turn = itertools.count()
        self._lock = threading.Lock()

    def _candidates(self) -> list[int]:
        """The replicas not left out, the next one in turn first."""
        start = next(self._turn)
        now = time.monotonic()
        count = len(self.replicas)
        with self._lock:
            return [i % count for i in range(start, start + count) if self._down_until[i % count] <= now]

    def down(self) -> list[str]:
        """The replicas left out now (they failed to answer within ``down_for_s``)."""
        now = time.monotonic()
        with self._lock:
            return [name for name, until in zip(self.names, self._down_until, strict=True) if until > now]

    def mark_down(self, index: int, error: BaseException) -> None:
        """Leave replica ``index`` out for ``down_for_s`` (it failed to answer)."""
        with self._lock:
            self._down_until[index] = time.monotonic() + self.down_for_s
        log.warning("read replica %s left out for %.0f s: %s", self.names[index], self.down_for_s, error)

    def route(self, tenant_id: str, *, after: int | None = None, wait_s: float = 0.0) -> Route:
        """A replica holding position ``after`` (waiting up to ``wait_s`` for one), else
        the primary or nowhere (``fallback``), with the reason."""
        primary = Route(db.for_tenant(self.primary, tenant_id), PRIMARY)
        if not self.replicas:
            return primary
        for index in self._candidates():
            engine = db.for_tenant(self.replicas[index], tenant_id)
            try:
                if after is None or _wait_for(engine, after, wait_s):
                    return Route(engine, self.names[index])
            except (DatabaseUnavailable, sa_exc.DBAPIError) as e:
                self.mark_down(index, e)
                continue
            # the others stream from the same primary: waiting for them too would double the wait
            reason = f"read replica {self.names[index]} had not replayed position {after} within {wait_s * 1000:.0f} ms"
            return Route(None, "none", reason) if self.fallback == "fail_open" else replace(primary, reason=reason)
        return replace(primary, reason="no read replica is reachable")  # fail_open or not: the primary can

    def read(self, tenant_id: str, run: Callable[[Engine], T], *, after: int | None = None, wait_s: float = 0.0) -> T:
        """``run`` on a routed engine; on the primary if the replica fails while it reads.
        ``DatabaseUnavailable`` with the reason when the routing fails open."""
        route = self.route(tenant_id, after=after, wait_s=wait_s)
        if route.engine is None:
            raise DatabaseUnavailable(route.reason or "no read replica is reachable")
        if route.source == PRIMARY:
            return run(route.engine)
        try:
            return run(route.engine)
        except (DatabaseUnavailable, sa_exc.DBAPIError) as e:
            self.note_failure(route, e)
            return run(db.for_tenant(self.primary, tenant_id))

    def note_failure(self, route: Route, error: BaseException) -> None:
        """A read on ``route``'s replica failed: leave it out, unless it refused a write
        (a first use of a tenant makes its key: that is the primary's to do, not a fault)."""
        if "read-only" not in str(error):
            self.mark_down(self.names.index(route.source), error)


def _wait_for(engine: Engine, after: int, wait_s: float) -> bool:
    """Poll ``engine`` until it holds position ``after``; False after ``wait_s``."""
    deadline = time.monotonic() + wait_s
    with db.reading(engine) as conn:
        while not read_replicas.holds_position(conn, after):  # each statement sees the latest replay
            if time.monotonic() >= deadline:
                return False
            time.sleep(POLL_S)
    return True


def wait_s(deadline_ms: int) -> float:
    """How long a read with this deadline waits for a replica to replay its ``after``."""
    return deadline_ms / 1000 * WAIT_SHARE


def _remaining(request: context.SelectRequest, started: float) -> context.SelectRequest:
    left_ms = request.deadline_ms - int((time.monotonic() - started) * 1000)
    return replace(request, deadline_ms=max(left_ms, 1))


def _failed_on_replica(selection: Selection) -> bool:
    """A selection that failed open for a reason other than its deadline: the replica
    failed under it (a deadline missed there would be missed again on the primary)."""
    reason = selection.empty_reason or ""
    return reason.startswith(_UNAVAILABLE) and "deadline exceeded" not in reason


# What ``context.select`` takes of ``context.build_context``'s options.
_SELECT_OPTIONS = ("vector_search", "aging", "limit")


def selector(
    reads: ReadReplicas, *, after: int | None, **options: Any
) -> Callable[[context.SelectRequest], tuple[Selection, dict[str, str]]]:
    """What ``context.build_context`` selects with: on a routed engine, with the read
    models' cursors read in the selection's own transaction (for the served record).
    ``options`` go to ``context.select``."""

    def select(stored: context.SelectRequest) -> tuple[Selection, dict[str, str]]:
        cursors: dict[str, str] = {}
        selection = select_routed(reads, stored, after=after, cursors=cursors, **options)
        return selection, cursors

    return select


def select_routed(
    reads: ReadReplicas,
    request: context.SelectRequest,
    *,
    after: int | None = None,
    cursors: dict[str, str] | None = None,
    **options: Any,
) -> Selection:
    """``context.select`` on a replica (``ReadReplicas.route``), failing open as it does:
    on the primary when the replica fails under it, within what is left of the deadline.
    ``options`` go to ``context.select`` (``vector_search``, ``aging``, ``limit``)."""
    started = time.monotonic()
    try:  # the tenant's key is the primary's to make on first use; a replica only reads it
        request = replace(request, scopes=scope_ids.stored_scopes(reads.primary, request.tenant_id, request.scopes))
        route = reads.route(request.tenant_id, after=after, wait_s=wait_s(request.deadline_ms))
    except Exception as e:  # noqa: BLE001 - fail open, as context.select does
        return failing_open.failed_open(request, e)  # its reason never quotes SQL or the request's words
    if route.engine is None:
        return Selection(request=request.request, empty_reason=f"memory unavailable ({route.reason})")
    if route.reason:
        log.info("read for tenant %s served by the primary: %s", request.tenant_id, route.reason)
    found: dict[str, str] = {}
    selection = context.select(route.engine, _remaining(request, started), cursors=found, **options)
    if route.source != PRIMARY and _failed_on_replica(selection):
        reads.note_failure(route, DatabaseUnavailable(selection.empty_reason or ""))
        found.clear()
        primary = db.for_tenant(reads.primary, request.tenant_id)
        selection = context.select(primary, _remaining(request, started), cursors=found, **options)
    if cursors is not None:
        cursors.update(found)
    return selection


def build_context(
    reads: ReadReplicas, engine: Engine, request: context.SelectRequest, *, after: int | None = None, **options: Any
) -> context.ServedContext:
    """``context.build_context``, selected on a replica when there are any (``select_routed``)
    and recorded through ``engine`` (the primary's, fenced to the tenant)."""
    if not reads.replicas:
        return context.build_context(engine, request, **options)
    chosen = selector(reads, after=after, **{k: v for k, v in options.items() if k in _SELECT_OPTIONS})
    return context.build_context(engine, request, selector=chosen, **options)


def select(
    reads: ReadReplicas, engine: Engine, request: context.SelectRequest, *, after: int | None = None, **options: Any
) -> Selection:
    """``context.select``, on a replica when there are any (``select_routed``)."""
    if not reads.replicas:
        return context.select(engine, request, **options)
    return select_routed(reads, request, after=after, **options)


def lag(reads: ReadReplicas, primary: Engine | None = None) -> list[ReplicaLag]:
    """Each replica's replay position, bytes behind the primary and age of its last
    replayed transaction; a replica that cannot be reached says why."""
    if not reads.replicas:
        return []
    try:
        with (primary or reads.primary).connect() as conn:
            head: str | None = read_replicas.current_lsn(conn)
    except sa_exc.DBAPIError as e:
        log.warning("could not read the primary's WAL position: %s", e)
        head = None
    return [_lag_of(name, engine, head) for name, engine in zip(reads.names, reads.replicas, strict=True)]


LAG_WARNING_S = 60.0


def _lag_of(name: str, engine: Engine, head: str | None) -> ReplicaLag:
    try:
        with engine.connect() as conn:
            state = read_replicas.replay_state(conn)
            behind = None
            if head is not None and state.replay_lsn is not None:
                behind = read_replicas.bytes_behind(conn, head, state.replay_lsn)
    except sa_exc.DBAPIError as e:
        return ReplicaLag(name=name, ok=False, error=str(e.orig or e).strip().partition("\n")[0])
    caught_up = behind == 0 or (state.replay_age_s is not None and state.replay_age_s < LAG_WARNING_S)
    return ReplicaLag(
        name=name,
        ok=state.in_recovery and caught_up and not state.replay_paused,
        in_recovery=state.in_recovery,
        replay_lsn=state.replay_lsn,
        bytes_behind=behind,
        replay_age_s=state.replay_age_s,
        replay_paused=state.replay_paused,
    )
