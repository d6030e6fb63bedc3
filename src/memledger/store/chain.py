"""The event_chain table: each tenant's hash chain over its events, in ledger order.

A link's hash is sha256 over the previous link's hash and the event's stored
bytes as PostgreSQL returns them (jsonb has one canonical text form), so any
change to a stored event, or a deleted one, breaks the chain at that event.

The stored hash names its link format (docs/adr/0007): ``2:<hex>`` covers every
column but ``private``, including when the event was recorded and the
transaction that wrote it, on which ``--as-of`` and the ledger's order rely.
A bare ``<hex>`` is format 1, sealed before format 2 existed: it covers neither
of those two. Verification recomputes each link in the format it was sealed in.

The chain does not cover ``events.private`` (erasure removes it): the payload
holds a salted digest of it instead, which verification checks separately
(``events.codec.private_intact``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import msgspec
import sqlalchemy as sa
from sqlalchemy.engine import Connection

from memledger.events.envelope import Cursor
from memledger.store.event_reads import visible_after
from memledger.store.schema import event_chain, events

GENESIS = "0" * 64
FORMAT = 2  # the link format this release seals in


class RawEvent(msgspec.Struct, frozen=True):
    """An event's stored bytes, as the chain covers them."""

    tenant_id: str
    position: int
    tx_id: int
    stream_id: str
    stream_version: int
    event_id: str
    event_type: str
    schema_version: int
    payload: str
    metadata: str
    occurred_at: str  # format 1's text of the time: UTC, to the microsecond
    # Format 2's times: seconds since 1970 as PostgreSQL's exact numeric text.
    occurred_epoch: str
    recorded_epoch: str

    @property
    def cursor(self) -> Cursor:
        """Where this event is in the ledger's order."""
        return Cursor(self.tx_id, self.position)


_RAW = (
    events.c.tenant_id,
    events.c.position,
    sa.cast(events.c.tx_id, sa.Text),
    events.c.stream_id,
    events.c.stream_version,
    events.c.event_id,
    events.c.event_type,
    events.c.schema_version,
    sa.cast(events.c.payload, sa.Text),
    sa.cast(events.c.metadata, sa.Text),
    # A fixed text form of the time, whatever the session's time zone; to_char gives
    # NULL for infinity, so a time set to it reads as such (and breaks the link).
    sa.func.coalesce(
        sa.func.to_char(sa.func.timezone("UTC", events.c.occurred_at), 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
        sa.cast(events.c.occurred_at, sa.Text),
    ),
    # Exact (numeric since PostgreSQL 14) and the same in every session time zone; unlike
    # to_char's text it tells a BC year from its AD twin.
    sa.cast(sa.extract("epoch", events.c.occurred_at), sa.Text),
    sa.cast(sa.extract("epoch", events.c.recorded_at), sa.Text),
)


def _raw(row: Sequence[Any]) -> RawEvent:
    return RawEvent(row[0], row[1], int(row[2]), *row[3:])


def link(previous: str, event: RawEvent) -> str:
    """The hash of ``event`` chained after ``previous``, in this release's format:
    every column but ``private``, each part prefixed with its length so that no
    two events' parts run together alike. Pure."""
    digest = hashlib.sha256()
    for part in (
        previous,
        event.tenant_id,
        str(event.position),
        str(event.tx_id),
        event.stream_id,
        str(event.stream_version),
        event.event_id,
        event.event_type,
        str(event.schema_version),
        event.payload,
        event.metadata,
        event.occurred_epoch,
        event.recorded_epoch,
    ):
        data = part.encode()
        digest.update(b"%d:" % len(data))
        digest.update(data)
    return f"{FORMAT}:{digest.hexdigest()}"


def link_v1(previous: str, event: RawEvent) -> str:
    """The hash of ``event`` chained after ``previous`` in format 1, which links
    sealed before format 2 keep: it leaves out ``recorded_at`` and ``tx_id``. Pure."""
    digest = hashlib.sha256(previous.encode())
    for part in (
        event.tenant_id,
        str(event.position),
        event.stream_id,
        str(event.stream_version),
        event.event_id,
        event.event_type,
        str(event.schema_version),
        event.payload,
        event.metadata,
        event.occurred_at,
    ):
        digest.update(b"\x1f")
        digest.update(part.encode())
    return digest.hexdigest()


_LINKS: dict[int, Callable[[str, RawEvent], str]] = {1: link_v1, FORMAT: link}


def format_of(stored_hash: str) -> int | None:
    """The link format a stored hash was sealed in: 1 for a bare digest, N for
    ``N:<digest>``; None when it is neither."""
    prefix, colon, _ = stored_hash.partition(":")
    if not colon:
        return 1
    return int(prefix) if prefix.isascii() and prefix.isdigit() else None


def relink(previous: str, event: RawEvent, stored_hash: str) -> str | None:
    """``event``'s hash after ``previous`` recomputed in the format ``stored_hash``
    was sealed in; None for a format this release does not know. Pure."""
    format_ = format_of(stored_hash)
    linker = _LINKS.get(format_) if format_ is not None else None
    return linker(previous, event) if linker is not None else None


def read_raw(conn: Connection, after: Cursor, limit: int) -> list[RawEvent]:
    """The next events of every tenant after ``after``, gap-safe, as stored bytes."""
    stmt = sa.select(*_RAW).where(*visible_after(after)).order_by(events.c.tx_id, events.c.position).limit(limit)
    return [_raw(row) for row in conn.execute(stmt).all()]


def heads(conn: Connection, tenants: Iterable[str]) -> dict[str, tuple[int, str]]:
    """Each tenant's last link: (seq, hash); tenants with no chain are absent."""
    wanted = sorted(set(tenants))
    if not wanted:
        return {}
    last = (
        sa.select(event_chain.c.tenant_id, sa.func.max(event_chain.c.seq))
        .where(event_chain.c.tenant_id.in_(wanted))
        .group_by(event_chain.c.tenant_id)
    )
    stmt = sa.select(event_chain.c.tenant_id, event_chain.c.seq, event_chain.c.hash).where(
        sa.tuple_(event_chain.c.tenant_id, event_chain.c.seq).in_(last)
    )
    return {row[0]: (row[1], row[2]) for row in conn.execute(stmt).all()}


def extend(tx: Connection, links: Sequence[tuple[str, int, int, str, str]]) -> None:
    """Append links (tenant, seq, position, event id, hash)."""
    if links:
        keys = ("tenant_id", "seq", "position", "event_id", "hash")
        tx.execute(event_chain.insert(), [dict(zip(keys, link_, strict=True)) for link_ in links])


class Checked(msgspec.Struct, frozen=True):
    """One link as verification sees it: the stored hash and the event now in the
    ledger, with its private part (None: erased, or the event has none)."""

    seq: int
    position: int
    event_id: str
    stored_hash: str
    event: RawEvent | None
    private: str | None = None


def walk(conn: Connection, tenant_id: str, page: int = 5000) -> Iterator[Checked]:
    """The tenant's chain in order, each link with the event at its position (None if gone)."""
    joined = event_chain.outerjoin(
        events, sa.and_(events.c.tenant_id == event_chain.c.tenant_id, events.c.position == event_chain.c.position)
    )
    after = 0
    while True:
        stmt = (
            sa.select(
                event_chain.c.seq,
                event_chain.c.position,
                event_chain.c.event_id,
                event_chain.c.hash,
                events.c.event_id.label("present"),
                sa.cast(events.c.private, sa.Text),
                *_RAW,
            )
            .select_from(joined)
            .where(event_chain.c.tenant_id == tenant_id, event_chain.c.seq > after)
            .order_by(event_chain.c.seq)
            .limit(page)
        )
        rows = conn.execute(stmt).all()
        if not rows:
            return
        for row in rows:
            yield Checked(row[0], row[1], row[2], row[3], None if row[4] is None else _raw(row[6:]), row[5])
        after = rows[-1][0]


def unsealed_before(conn: Connection, tenant_id: str, head: Cursor, sealed: int) -> int:
    """Events of the tenant at or before ``head`` beyond the ``sealed`` count: events
    that appeared behind the sealer (inserted out of order by someone bypassing the app)."""
    stmt = sa.select(sa.func.count()).where(
        events.c.tenant_id == tenant_id,
        sa.tuple_(events.c.tx_id, events.c.position)
        <= sa.tuple_(
            sa.cast(sa.cast(sa.literal(str(head.tx_id)), sa.Text), events.c.tx_id.type), sa.literal(head.position)
        ),
    )
    return int(conn.execute(stmt).scalar_one()) - sealed


def tenants(conn: Connection) -> list[str]:
    """Every tenant with a chain."""
    return [r[0] for r in conn.execute(sa.select(event_chain.c.tenant_id).distinct().order_by(event_chain.c.tenant_id))]


def erasure_payloads(conn: Connection, tenant_id: str, erasure_tag: str) -> list[str]:
    """The payloads of every committed erasure record of the tenant (sealed or not)."""
    stmt = sa.select(sa.cast(events.c.payload, sa.Text)).where(
        events.c.tenant_id == tenant_id, events.c.event_type == erasure_tag
    )
    return [str(r[0]) for r in conn.execute(stmt).all()]
