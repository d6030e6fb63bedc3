"""Tamper evidence: seal the ledger into per-tenant hash chains, and verify them.

The sealer follows the ledger (gap-safe, with its own checkpoint) and appends one
link per event, in this release's link format. ``verify`` recomputes every link,
in the format it was sealed in, from the events as stored now and names the first
event of each tenant that does not match: altered (its hash differs, or it is no
longer in the order it was sealed in), deleted (its link points at nothing), or
inserted behind the sealer.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import msgspec
from sqlalchemy.engine import Engine

from memledger.errors import NotFound
from memledger.events import codec
from memledger.events.catalogue import SubjectErased
from memledger.events.envelope import Cursor
from memledger.projectors import checkpoints
from memledger.store import chain, db
from memledger.store.identifiers import check_identifier
from memledger.store.outage import OUTAGES, Backoff

log = logging.getLogger(__name__)

SEALER = "chain"
BATCH = 5000
ERASURE_TAG = codec.tag_of(SubjectErased)


class Finding(msgspec.Struct, frozen=True):
    """The first break in one tenant's chain. ``stopped``: found at a link, where the walk
    of the tenant's chain stopped (its later events were not checked); otherwise found
    after the whole chain was walked (an erasure without a record, events behind the sealer)."""

    tenant_id: str
    position: int
    event_id: str
    problem: str
    stopped: bool = False


class Verification(msgspec.Struct, frozen=True):
    """What ``verify`` checked and found."""

    tenants: int
    events: int
    findings: list[Finding]

    @property
    def ok(self) -> bool:
        """True when every chain verified."""
        return not self.findings


def seal(engine: Engine, *, batch: int = BATCH) -> int:
    """Chain every visible event not yet sealed; return how many were sealed now."""
    with db.begin(engine) as tx:
        checkpoints.ensure(tx, SEALER, 1, "event_chain")
    total = 0
    while True:
        with db.begin(engine) as tx:
            cp = checkpoints.lock(tx, SEALER)
            assert cp is not None
            page = chain.read_raw(tx, cp.cursor, batch)
            if not page:
                return total
            head = chain.heads(tx, {e.tenant_id for e in page})
            links = []
            for event in page:
                seq, previous = head.get(event.tenant_id, (0, chain.GENESIS))
                digest = chain.link(previous, event)
                head[event.tenant_id] = (seq + 1, digest)
                links.append((event.tenant_id, seq + 1, event.position, event.event_id, digest))
            chain.extend(tx, links)
            checkpoints.advance(tx, SEALER, page[-1].cursor, len(page))
            total += len(page)


def verify(engine: Engine, tenant_id: str | None = None) -> Verification:
    """Seal what is new, then recompute the chains (one tenant's, or all)."""
    seal(engine)
    findings: list[Finding] = []
    checked = 0
    with engine.connect() as conn:
        cp = checkpoints.get(conn, SEALER)
        head = cp.cursor if cp is not None else Cursor(0, 0)
        names = [check_identifier("tenant_id", tenant_id)] if tenant_id else chain.tenants(conn)
        for name in names:
            count, finding = _verify_tenant(conn, name, head)
            checked += count
            if finding is not None:
                findings.append(finding)
    if tenant_id and checked == 0:  # sealed just now: a tenant with events has a chain
        raise NotFound(f"tenant {tenant_id!r} has no events to verify (is the name right?)")
    return Verification(tenants=len(names), events=checked, findings=findings)


def _verify_tenant(conn: object, tenant_id: str, head: Cursor) -> tuple[int, Finding | None]:
    previous, last = chain.GENESIS, Cursor(0, 0)
    count = 0
    erasures = _Erasures(chain.erasure_payloads(conn, tenant_id, ERASURE_TAG))  # type: ignore[arg-type]
    for checked in chain.walk(conn, tenant_id):  # type: ignore[arg-type]
        count += 1
        problem = _problem(checked, previous, last)
        if problem is not None:  # the walk stops here: this event counts as checked, the rest not
            return count, Finding(tenant_id, checked.position, checked.event_id, problem, stopped=True)
        assert checked.event is not None  # a missing event is a problem
        erasures.see(checked.event, checked.private)
        previous, last = checked.stored_hash, checked.event.cursor
    unaccounted = erasures.unaccounted()
    if unaccounted is not None:
        return count, Finding(tenant_id, unaccounted[0], unaccounted[1], unaccounted[2])
    extra = chain.unsealed_before(conn, tenant_id, head, count)  # type: ignore[arg-type]
    if extra > 0:
        return count, Finding(
            tenant_id, head.position, "", f"{extra} event(s) appeared behind the sealer (inserted out of order)"
        )
    return count, None


def _problem(checked: chain.Checked, previous: str, last: Cursor) -> str | None:
    """What is wrong with one link, given the hash of the link before it and the
    cursor of that link's event; None when nothing is."""
    event = checked.event
    if event is None:
        return "deleted: the event sealed here is gone"
    if event.event_id != checked.event_id:
        return "replaced by another event"
    expected = chain.relink(previous, event, checked.stored_hash)
    if expected is None:
        return "unreadable: its link is in a format this release does not know (altered, or sealed by a newer one)"
    if expected != checked.stored_hash:
        return "altered: its content no longer matches its hash"
    if event.cursor <= last:
        # The sealer links in the ledger's order, so an event now ordered before the one
        # sealed ahead of it had its transaction id changed (format 1 links do not hash it).
        return f"altered: its transaction id ({event.tx_id}) puts it before the event sealed ahead of it"
    if not codec.private_intact(event.payload, checked.private):
        return "altered: its private content no longer matches the digest in its payload"
    return None


class _Erasures:
    """Counts a tenant's erased events against what its SubjectErased events say they
    erased: the trigger lets the application role null ``private``, so an erasure
    done behind the service's back (with no record) shows here. The records are
    every committed one (an erasure commits its record with its updates), the
    erased events those of the chain."""

    def __init__(self, records: list[str]) -> None:
        self.erased = 0
        self.recorded = sum(int(msgspec.json.decode(r).get("erased_events", 0)) for r in records)
        self.last: tuple[int, str] | None = None

    def see(self, event: chain.RawEvent, private: str | None) -> None:
        if codec.is_erased(event.payload, private):
            self.erased += 1
            self.last = (event.position, event.event_id)

    def unaccounted(self) -> tuple[int, str, str] | None:
        if self.erased <= self.recorded or self.last is None:
            return None
        return (
            *self.last,
            f"erased without a record: {self.erased} event(s) lost their private content, "
            f"SubjectErased events account for {self.recorded}",
        )


def run_sealer(engine: Engine, *, poll_interval: float = 0.5, should_stop: Callable[[], bool] = lambda: False) -> None:
    """Keep sealing as the ledger grows, until ``should_stop``. While the database is
    unavailable it waits with backoff, then goes on from its checkpoint."""
    backoff = Backoff("sealer", log)
    while not should_stop():
        try:
            sealed = seal(engine)
        except OUTAGES as e:
            backoff.wait(e, should_stop)
            continue
        backoff.succeeded()
        if not sealed:
            time.sleep(poll_interval)
