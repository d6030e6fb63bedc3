"""Running projectors: one batch at a time, each with its checkpoint, in one transaction.

Exactly once: a batch's rows and its checkpoint commit together, and the
checkpoint row is locked for the batch, so a crash can neither skip nor repeat a
batch and two runners of one projection never apply the same events.

A projector that cannot apply an event stops there: the events before it are
applied, the checkpoint stays just before it, and ``status`` shows the event and
the error. It does not skip; after a fix, ``reset_failure`` lets it go on.

Erasure: erased events are skipped, and at a ``SubjectErased`` record the tenant
is refolded (``refold``) in the batch's transaction, so the live rows equal those
of a rebuild, which never sees the erased events (docs/adr/0006).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence

import sqlalchemy as sa
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import Connection, Engine

from memledger.errors import DatabaseUnavailable, LedgerError, ProjectionFailed
from memledger.events.catalogue import SubjectErased
from memledger.events.codec import tag_of
from memledger.events.envelope import START, Cursor, Recorded
from memledger.projectors import checkpoints, fences
from memledger.projectors.base import Projector, live_schema, load_sql, read_models
from memledger.store import db, event_reads, lock_keys
from memledger.store.follow import Wakeup
from memledger.store.outage import OUTAGES, Backoff, is_outage

log = logging.getLogger(__name__)

DEFAULT_BATCH = 1000


def create_tables(tx: Connection, projector: Projector, schema: str, *, indexes: bool) -> None:
    """Create ``schema`` and the projection's tables in it (and its indexes, if asked)."""
    sql = load_sql(projector.name, projector.version)
    quoted = tx.dialect.identifier_preparer.quote_schema(schema)
    # text(): DDL from the projection's own SQL file, run with its schema first
    # on the search_path; the schema name is quoted by the dialect.
    tx.execute(sa.text(f"CREATE SCHEMA {quoted}"))
    tx.execute(sa.text(f"SET LOCAL search_path TO {quoted}, public"))
    tx.execute(sa.text(sql.tables))
    if indexes and sql.indexes.strip():
        tx.execute(sa.text(sql.indexes))
    tx.execute(sa.text("SET LOCAL search_path TO DEFAULT"))
    fences.fence(tx, schema)  # row-level security and the application role's grants


def create_indexes(tx: Connection, projector: Projector, schema: str) -> None:
    """Build the secondary indexes of a copy after its bulk load."""
    sql = load_sql(projector.name, projector.version)
    quoted = tx.dialect.identifier_preparer.quote_schema(schema)
    # text(): as in create_tables.
    tx.execute(sa.text(f"SET LOCAL search_path TO {quoted}, public"))
    if sql.indexes.strip():
        tx.execute(sa.text(sql.indexes))
    tx.execute(sa.text("SET LOCAL search_path TO DEFAULT"))


def install(engine: Engine, projector: Projector) -> None:
    """Create the live copy and its checkpoint if they are missing. Safe to race."""
    schema = live_schema(projector.name)
    with db.begin(engine) as tx:
        tx.execute(sa.select(sa.func.pg_advisory_xact_lock(lock_keys.INSTALL_PROJECTIONS)))
        exists = tx.execute(
            sa.select(sa.func.count())
            .select_from(sa.table("pg_namespace", sa.column("nspname")))
            .where(sa.column("nspname") == schema)
        ).scalar_one()
        if not exists:
            create_tables(tx, projector, schema, indexes=True)
        checkpoints.ensure(tx, projector.name, projector.version, schema)


ERASURE = tag_of(SubjectErased)
REFOLD_PAGE = 5000


def reads(projector: Projector) -> frozenset[str]:
    """The tags the runner reads for ``projector``: those it handles, and erasures."""
    return projector.handles | {ERASURE}


def projection_tables(projector: Projector) -> list[sa.Table]:
    """The Table objects of a projection (declared against its live schema)."""
    schema = live_schema(projector.name)
    return [t for t in read_models.sorted_tables if t.schema == schema]


def apply_page(tx: Connection, projector: Projector, page: Sequence[Recorded]) -> None:
    """Fold a page read with ``reads(projector)`` into the projection.

    Erased events are skipped. At an erasure record, the tenant is refolded
    (``refold``), so the rows hold nothing of what was erased, exactly as a
    rebuild (which never sees the erased events) would give them.
    """
    run: list[Recorded] = []
    for rec in page:
        if isinstance(rec.event, SubjectErased):
            if run:
                projector.apply(tx, run)
                run = []
            refold(tx, projector, rec.tenant_id, rec.cursor)
        elif not rec.erased:
            run.append(rec)
    if run:
        projector.apply(tx, run)


def refold(tx: Connection, projector: Projector, tenant_id: str, until: Cursor) -> int:
    """Delete the tenant's rows from every table of the projection and fold its
    events before ``until`` again, skipping erased ones, through the projector's
    own ``apply``, in the caller's transaction. Returns how many events were folded.

    A projection's rows of one tenant depend only on that tenant's events (every
    key starts with the tenant), so this gives the rows a rebuild would.
    """
    refolding = getattr(projector, "refolding", None)
    refolded = refolding(tx, tenant_id) if refolding is not None else None
    for table in projection_tables(projector):
        tx.execute(table.delete().where(table.c.tenant_id == tenant_id))
    after, folded = START, 0
    while True:
        page = event_reads.read_all(tx, after=after, limit=REFOLD_PAGE, tenant_id=tenant_id, types=projector.handles)
        before = [rec for rec in page if rec.cursor < until]
        kept = [rec for rec in before if not rec.erased]
        if kept:
            projector.apply(tx, kept)
            folded += len(kept)
        if len(before) < REFOLD_PAGE:
            if refolded is not None:
                refolded()
            return folded
        after = before[-1].cursor


def apply_next_batch(
    tx: Connection,
    projector: Projector,
    *,
    checkpoint: str,
    batch_size: int = DEFAULT_BATCH,
    until: Cursor | None = None,
) -> int:
    """Apply the next batch after the checkpoint inside ``tx``; return how many events.

    ``tx`` may carry a ``schema_translate_map`` to fill a copy other than the live one.
    ``until`` stops at a cursor (verify compares copies at one ledger point).
    """
    cp = checkpoints.lock(tx, checkpoint)
    if cp is None:
        raise ProjectionFailed(checkpoint, 0, "not installed")
    if cp.state == "failed":
        raise ProjectionFailed(checkpoint, cp.error_position or 0, cp.error or "failed")
    page = event_reads.read_all(tx, after=cp.cursor, limit=batch_size, types=reads(projector))
    if until is not None:
        page = [rec for rec in page if rec.cursor <= until]
    if not page:
        return 0
    with tx.begin_nested():
        apply_page(tx, projector, page)
    checkpoints.advance(tx, checkpoint, page[-1].cursor, len(page))
    return len(page)


def run_batch(
    engine: Engine,
    projector: Projector,
    *,
    checkpoint: str | None = None,
    schema_map: dict[str | None, str | None] | None = None,
    batch_size: int = DEFAULT_BATCH,
    until: Cursor | None = None,
) -> int:
    """One batch in its own transaction. On an event the projector cannot apply,
    isolates it, records the failure and raises ``ProjectionFailed``."""
    name = checkpoint or projector.name
    _prepare(engine, projector, name, batch_size, until)
    try:
        with engine.begin() as tx:
            conn = tx.execution_options(schema_translate_map=schema_map) if schema_map else tx
            return apply_next_batch(conn, projector, checkpoint=name, batch_size=batch_size, until=until)
    except ProjectionFailed:
        raise
    except sa_exc.DBAPIError as e:
        if is_outage(e):  # not the events' fault: never isolate them nor mark the projection failed
            raise db.translate(e) from e
        log.warning("projection %s: batch failed (%s); isolating the event", name, e)
        return _isolate_failure(engine, projector, name, schema_map, batch_size, until)
    except (LedgerError, sa_exc.SQLAlchemyError, ValueError, TypeError, KeyError, AttributeError) as e:
        log.warning("projection %s: batch failed (%s); isolating the event", name, e)
        return _isolate_failure(engine, projector, name, schema_map, batch_size, until)


def _prepare(engine: Engine, projector: Projector, name: str, batch_size: int, until: Cursor | None) -> None:
    """Let a projector with slow work to do for the next batch (``prepare``: the
    embeddings projector's model) do it before the batch's write transaction: it
    peeks at the batch in a read-only transaction, which holds no reader back. Only
    a head start: whatever it leaves undone, or whatever the batch turns out to hold
    besides, ``apply`` does in the transaction as ever."""
    prepare = getattr(projector, "prepare", None)
    if prepare is None:
        return
    try:
        with engine.connect() as conn:
            cp = checkpoints.get(conn, name)
            if cp is None or cp.state == "failed":
                return
            page = event_reads.read_all(conn, after=cp.cursor, limit=batch_size, types=reads(projector))
        if until is not None:
            page = [rec for rec in page if rec.cursor <= until]
        if page:
            prepare(engine, page)
    except sa_exc.DBAPIError as e:
        if is_outage(e):
            raise db.translate(e) from e
        log.warning("projection %s: preparing the next batch failed (%s); the batch will do it", name, e)
    except DatabaseUnavailable:
        raise  # an outage, as above: never the events' fault
    except (LedgerError, sa_exc.SQLAlchemyError, ValueError, TypeError, KeyError, AttributeError) as e:
        # Only a head start: the batch does whatever is left, and isolates a failing event itself.
        log.warning("projection %s: preparing the next batch failed (%s); the batch will do it", name, e)


def _isolate_failure(
    engine: Engine,
    projector: Projector,
    name: str,
    schema_map: dict[str | None, str | None] | None,
    batch_size: int,
    until: Cursor | None,
) -> int:
    """Apply the failed batch event by event; stop and record at the first that fails."""
    with db.begin(engine) as tx:
        conn = tx.execution_options(schema_translate_map=schema_map) if schema_map else tx
        cp = checkpoints.lock(conn, name)
        assert cp is not None
        page = event_reads.read_all(conn, after=cp.cursor, limit=batch_size, types=reads(projector))
        if until is not None:
            page = [rec for rec in page if rec.cursor <= until]
        applied: list[Recorded] = []
        for rec in page:
            try:
                with conn.begin_nested():
                    apply_page(conn, projector, [rec])
            except (LedgerError, sa_exc.SQLAlchemyError, ValueError, TypeError, KeyError, AttributeError) as e:
                if applied:
                    checkpoints.advance(conn, name, applied[-1].cursor, len(applied))
                checkpoints.fail(conn, name, rec.position, rec.event_id, f"{type(e).__name__}: {e}")
                failure = ProjectionFailed(name, rec.position, f"event {rec.event_id}: {e}")
                break
            applied.append(rec)
        else:
            if applied:
                checkpoints.advance(conn, name, applied[-1].cursor, len(applied))
            return len(applied)
    raise failure


def catch_up(
    engine: Engine,
    projector: Projector,
    *,
    checkpoint: str | None = None,
    schema_map: dict[str | None, str | None] | None = None,
    batch_size: int = DEFAULT_BATCH,
    until: Cursor | None = None,
    progress: Callable[[int], None] | None = None,
) -> int:
    """Apply batches until nothing visible is left; return the number of events.

    This is the inline mode: a caller that appended and must read its own
    writes calls ``catch_up`` (or ``wait_for``) before reading.
    """
    total = 0
    while True:
        applied = run_batch(
            engine,
            projector,
            checkpoint=checkpoint,
            schema_map=schema_map,
            batch_size=batch_size,
            until=until,
        )
        if not applied:
            return total
        total += applied
        if progress is not None:
            progress(total)


def follow(
    engine: Engine,
    projectors: Sequence[Projector],
    *,
    poll_interval: float = 0.1,
    wakeup: Wakeup | None = None,
    should_stop: Callable[[], bool] = lambda: False,
    batch_size: int = DEFAULT_BATCH,
) -> None:
    """Keep every projector caught up until ``should_stop``; poll, or wait to be woken.

    A failed projector is left stopped (its status says why); the others go on. It is
    looked at again every ``RECHECK_FAILED_S``: once ``reset_failure`` (after a fix)
    has cleared its failure, it goes on by itself. While the database is unavailable
    (restarting, disk full or read-only) every projector waits, with backoff, and
    then resumes from its checkpoint.
    """
    backoff = Backoff("projectors", log)
    installed: set[str] = set()
    stopped: dict[str, float] = {}  # a failed projection's name -> when to look at it again
    try:  # before the first should_stop: a caller may read the tables in it
        _install(engine, projectors, installed)
    except OUTAGES as e:
        backoff.wait(e, should_stop)  # each round installs what is still missing
    while not should_stop():
        try:
            busy = _follow_round(engine, projectors, installed, stopped, batch_size)
        except OUTAGES as e:
            backoff.wait(e, should_stop)
            continue
        backoff.succeeded()
        if busy:
            continue
        if wakeup is not None:
            wakeup.wait(poll_interval)
        else:
            time.sleep(poll_interval)


RECHECK_FAILED_S = 1.0


def _follow_round(
    engine: Engine, projectors: Sequence[Projector], installed: set[str], stopped: dict[str, float], batch_size: int
) -> bool:
    """One batch for each projector that is not stopped; True if any applied events."""
    busy = False
    _install(engine, projectors, installed)
    for projector in projectors:
        if stopped.get(projector.name, 0.0) > time.monotonic():
            continue
        try:
            busy |= run_batch(engine, projector, batch_size=batch_size) > 0
        except ProjectionFailed as e:
            if projector.name not in stopped:
                log.error("projection %s stopped: %s", projector.name, e)
            stopped[projector.name] = time.monotonic() + RECHECK_FAILED_S
            continue
        if stopped.pop(projector.name, None) is not None:
            log.info("projection %s goes on: its failure was reset", projector.name)
    return busy


def _install(engine: Engine, projectors: Sequence[Projector], installed: set[str]) -> None:
    for projector in projectors:
        if projector.name not in installed:
            install(engine, projector)
            installed.add(projector.name)


def wait_for(
    engine: Engine,
    projector: Projector,
    target: Cursor,
    *,
    timeout: float = 5.0,
    poll_interval: float = 0.02,
) -> bool:
    """Wait until the live projection has applied every handled event up to
    ``target`` (the cursor of an append). True when caught up, False on timeout."""
    deadline = time.monotonic() + timeout
    while True:
        with engine.connect() as conn:
            cp = checkpoints.get(conn, projector.name)
            if cp is not None and (
                cp.cursor >= target
                or not event_reads.has_events_between(conn, cp.cursor, target, types=reads(projector))
            ):
                return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(poll_interval)


def reset_failure(engine: Engine, name: str) -> bool:
    """Let a failed projection try again from where it stopped; False (and nothing
    changed) when it had not failed."""
    with db.begin(engine) as tx:
        cp = checkpoints.lock(tx, name)
        if cp is None or cp.state != "failed":
            return False
        checkpoints.advance(tx, name, cp.cursor, 0)
        return True
