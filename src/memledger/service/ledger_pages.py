"""Pages of the ledger for auditors: gap-safe, filterable by type and time."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from datetime import datetime

from sqlalchemy.engine import Engine

from memledger.errors import InvalidCommand, NotFound
from memledger.events.envelope import START, Cursor, Recorded
from memledger.store import event_reads
from memledger.store.follow import Wakeup
from memledger.store.follow import follow as store_follow
from memledger.store.identifiers import check_identifier

MAX_TX = 2**64
MAX_POSITION = 2**63


def require_tenant(engine: Engine, tenant_id: str) -> None:
    """``NotFound`` unless the tenant has an event: for an operator's command, whose
    mistyped tenant would otherwise be served (and recorded in the ledger, for good)."""
    with engine.connect() as conn:
        if not event_reads.read_tenant(conn, check_identifier("tenant_id", tenant_id), limit=1):
            raise NotFound(f"tenant {tenant_id!r} has no events (is the name right?)")


def position_of(digits: str) -> int | None:
    """ASCII ``digits`` as a ledger position; None beyond the last one. Their length is
    checked first: ``int`` refuses over 4,300 digits, and beyond 19 none is in range."""
    significant = digits.lstrip("0") or "0"
    if len(significant) > len(str(MAX_POSITION)) or int(significant) >= MAX_POSITION:
        return None
    return int(significant)


def parse_cursor(text: str | None, engine: Engine, name: str = "after") -> Cursor:
    """A cursor from "TX:POSITION", a plain position, or nothing (the start)."""
    if not text:
        return START
    try:
        if ":" in text:
            tx, at = (int(part) for part in text.split(":", 1))
            if not (0 <= tx < MAX_TX and 0 <= at < MAX_POSITION):
                raise ValueError(text)
            return Cursor(tx, at)
        position = int(text)
        if position >= MAX_POSITION:
            raise ValueError(text)
    except ValueError:
        raise InvalidCommand(f"{name} must be a position N or a cursor TX:N, not {text!r}") from None
    if position <= 0:
        return START
    with engine.connect() as conn:
        return event_reads.cursor_at(conn, position)


def page(
    engine: Engine,
    tenant_id: str,
    *,
    after: Cursor,
    limit: int = 100,
    types: Sequence[str] | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> tuple[list[Recorded], Cursor | None]:
    """Up to ``limit`` of the tenant's events after ``after`` (recorded between
    ``since`` and ``until``, if given), and the cursor to continue from (None at the end)."""
    check_identifier("tenant_id", tenant_id)
    for name, moment in (("since", since), ("until", until)):
        if moment is not None and moment.tzinfo is None:
            raise InvalidCommand(f"{name} needs a timezone (e.g. 2026-11-21T10:42:00+00:00)")
    if not 1 <= limit <= 1000:
        raise InvalidCommand(f"limit must be between 1 and 1000, not {limit}")
    found: list[Recorded] = []
    with engine.connect() as conn:
        while len(found) < limit:
            batch = event_reads.read_all(conn, after=after, limit=limit, tenant_id=tenant_id, types=types)
            if not batch:
                return found, None
            after = batch[-1].cursor
            found.extend(
                rec
                for rec in batch
                if (since is None or rec.recorded_at >= since) and (until is None or rec.recorded_at <= until)
            )
    return found[:limit], found[limit - 1].cursor if len(found) >= limit else after


def follow(
    engine: Engine,
    *,
    after: Cursor,
    tenant_id: str | None,
    types: Sequence[str] | None,
    poll_interval: float,
    notify: bool,
    url: object,
    should_stop: Callable[[], bool],
) -> Iterator[list[Recorded]]:
    """Pages of new events as they arrive (polling; woken by NOTIFY when appends send it)."""
    wakeup = Wakeup(url) if notify else None  # type: ignore[arg-type]
    try:
        yield from store_follow(
            engine,
            after=after,
            tenant_id=tenant_id,
            types=types,
            poll_interval=poll_interval,
            wakeup=wakeup,
            should_stop=should_stop,
        )
    finally:
        if wakeup is not None:
            wakeup.close()


def read_page(
    engine: Engine, *, after: Cursor, tenant_id: str | None, types: Sequence[str] | None, limit: int = 1000
) -> list[Recorded]:
    """One page of the ledger (any tenant, or one), gap-safe."""
    with engine.connect() as conn:
        return event_reads.read_all(conn, after=after, limit=limit, tenant_id=tenant_id, types=types)
