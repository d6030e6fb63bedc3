"""Rebuilding a projection beside the live one, swapping it in, and verifying it.

Blue/green: the new copy is built from position 0 in ``proj_<name>_next`` (tables
first, secondary indexes after the bulk load), catches up with what arrived
meanwhile, then one short transaction locks the live checkpoint (pausing the
live runner), applies the last few events, renames the schemas and moves the
checkpoint. Readers see the old rows until that commit and the new ones after;
never an empty or half-built table.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from queue import Empty, Full, Queue
from typing import Any, Protocol

import msgspec
import sqlalchemy as sa
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import Connection, Engine

from memledger.errors import LedgerError, NotFound, ProjectionFailed
from memledger.events.envelope import Cursor, Recorded
from memledger.projectors import checkpoints
from memledger.projectors.base import Projector, live_schema, next_schema, read_models
from memledger.projectors.runner import (
    apply_next_batch,
    catch_up,
    create_indexes,
    create_tables,
    install,
)
from memledger.store import db, event_store

log = logging.getLogger(__name__)

REBUILD_BATCH = 5000
REPLAY_BATCH = 10_000


def _drop_schema(tx: Connection, schema: str) -> None:
    quoted = tx.dialect.identifier_preparer.quote_schema(schema)
    # text(): DDL on a schema name of our own, quoted by the dialect.
    tx.execute(sa.text(f"DROP SCHEMA IF EXISTS {quoted} CASCADE"))


def _rename_schema(tx: Connection, old: str, new: str) -> None:
    prep = tx.dialect.identifier_preparer
    # text(): as above.
    tx.execute(sa.text(f"ALTER SCHEMA {prep.quote_schema(old)} RENAME TO {prep.quote_schema(new)}"))


def build_copy(
    engine: Engine,
    projector: Projector,
    schema: str,
    *,
    until: Cursor | None = None,
    progress: Callable[[int], None] | None = None,
) -> str:
    """Build the projection from position 0 into ``schema``; return its checkpoint name."""
    name = f"{projector.name}@{schema}"
    with db.begin(engine) as tx:
        _drop_schema(tx, schema)
        checkpoints.remove(tx, name)
        create_tables(tx, projector, schema, indexes=False)
        checkpoints.ensure(tx, name, projector.version, schema)
    schema_map: dict[str | None, str | None] = {live_schema(projector.name): schema}
    done = 0
    replayer = getattr(projector, "replayer", None)
    if replayer is not None:
        done = replay(engine, projector, replayer(), name, schema_map, until=until, progress=progress)
    # What the replay left (all of it, for a projector without one; the rest,
    # event by event with failures recorded, if a batch failed).
    catch_up(
        engine, projector, checkpoint=name, schema_map=schema_map, batch_size=REBUILD_BATCH,
        until=until, progress=None if progress is None else lambda n: progress(done + n),
    )
    with db.begin(engine) as tx:
        create_indexes(tx, projector, schema)
    catch_up(engine, projector, checkpoint=name, schema_map=schema_map, until=until)
    return name


class Replayer(Protocol):
    """A projector's fold for a copy that nobody else writes: it keeps its state
    in memory between batches instead of reading it back, and splits a batch into
    the pure fold and the write, so the write can run while the next batch folds.
    Valid only while every write it returned has committed, in order."""

    def fold(self, batch: Sequence[Recorded]) -> Callable[[Connection], None]:
        """Fold ``batch``; return what writes its rows (not the checkpoint)."""


@dataclass
class _Pipe:
    """A bounded hand-over between two stages; ``None`` ends the stream."""

    queue: Queue[Any] = field(default_factory=lambda: Queue(maxsize=2))
    stop: threading.Event = field(default_factory=threading.Event)

    def put(self, item: Any) -> bool:
        while not self.stop.is_set():
            try:
                self.queue.put(item, timeout=0.1)
                return True
            except Full:
                continue
        return False

    def get(self) -> Any:
        while not self.stop.is_set():
            try:
                return self.queue.get(timeout=0.1)
            except Empty:
                continue
        return None


def replay(
    engine: Engine,
    projector: Projector,
    replayer: Replayer,
    checkpoint: str,
    schema_map: dict[str | None, str | None],
    *,
    batch_size: int = REPLAY_BATCH,
    until: Cursor | None = None,
    progress: Callable[[int], None] | None = None,
) -> int:
    """Fill a copy from its checkpoint with ``replayer``; return the events applied.

    Three stages overlap, so Python and PostgreSQL work at the same time (two
    cores, not one after the other): a thread reads and decodes the next page of
    the ledger, this thread folds, and a thread writes each batch with its
    checkpoint in one transaction (exactly once, as ``run_batch``). On any error
    it stops after the last batch that committed and returns; the caller's
    ``catch_up`` goes on from there the ordinary way, which applies, or isolates
    and records, what failed.
    """
    with engine.connect() as conn:
        start = checkpoints.get(conn, checkpoint)
    if start is None or start.state != "live":
        return 0
    pages, writes = _Pipe(), _Pipe()
    applied = [0]
    errors: list[BaseException] = []
    reader = threading.Thread(
        target=_read, args=(engine, projector, start.cursor, batch_size, until, pages, errors), daemon=True
    )
    writer = threading.Thread(
        target=_write, args=(engine, checkpoint, schema_map, start.cursor, writes, applied, progress, errors),
        daemon=True,
    )
    reader.start()
    writer.start()
    try:
        while (page := pages.get()) is not None:
            writes.put((replayer.fold(page), page[-1].cursor, len(page)))
    except (LedgerError, sa_exc.SQLAlchemyError, ValueError, TypeError, KeyError, AttributeError) as e:
        log.warning("projection %s: replay stopped (%s); going on batch by batch", checkpoint, e)
        pages.stop.set()
    writes.put(None)
    reader.join()
    writer.join()
    if errors:
        log.warning("projection %s: replay stopped (%s); going on batch by batch", checkpoint, errors[0])
    return applied[0]


def _read(
    engine: Engine,
    projector: Projector,
    after: Cursor,
    batch_size: int,
    until: Cursor | None,
    pages: _Pipe,
    errors: list[BaseException],
) -> None:
    try:
        with engine.connect() as conn:
            while True:
                page = event_store.read_all(conn, after=after, limit=batch_size, types=projector.handles)
                conn.rollback()  # a short read transaction per page: no snapshot held
                if until is not None:
                    page = [rec for rec in page if rec.cursor <= until]
                if not page:
                    break
                if not pages.put(page):
                    return
                after = page[-1].cursor
    except (LedgerError, sa_exc.SQLAlchemyError) as e:
        errors.append(e)
    pages.put(None)


def _write(
    engine: Engine,
    checkpoint: str,
    schema_map: dict[str | None, str | None],
    after: Cursor,
    writes: _Pipe,
    applied: list[int],
    progress: Callable[[int], None] | None,
    errors: list[BaseException],
) -> None:
    try:
        while (item := writes.get()) is not None:
            write, cursor, count = item
            with db.begin(engine) as tx:
                # A lost commit after a crash loses its checkpoint too, and a
                # rebuild starts over, so the copy need not wait for the disk.
                tx.execute(sa.text("SET LOCAL synchronous_commit = off"))  # text(): a setting
                conn = tx.execution_options(schema_translate_map=schema_map)
                cp = checkpoints.lock(conn, checkpoint)
                if cp is None or cp.cursor != after or cp.state != "live":
                    raise ProjectionFailed(checkpoint, cursor.position, "the copy moved under the replay")
                write(conn)
                checkpoints.advance(conn, checkpoint, cursor, count)
            after = cursor
            applied[0] += count
            if progress is not None:
                progress(applied[0])
    except (LedgerError, sa_exc.SQLAlchemyError, ValueError, TypeError, KeyError, AttributeError) as e:
        errors.append(e)
        writes.stop.set()


def rebuild(
    engine: Engine, projector: Projector, *, progress: Callable[[int], None] | None = None
) -> int:
    """Rebuild a projection (or build a new version of it) with no downtime.

    Returns the number of events the new copy applied.
    """
    install(engine, projector)
    live = live_schema(projector.name)
    copy = next_schema(projector.name)
    scratch = build_copy(engine, projector, copy, progress=progress)
    with db.begin(engine) as tx:
        if checkpoints.lock(tx, projector.name) is None:
            raise NotFound(f"projection {projector.name!r} has no checkpoint")
        mapped = tx.execution_options(schema_translate_map={live: copy})
        while apply_next_batch(mapped, projector, checkpoint=scratch, batch_size=REBUILD_BATCH):
            pass
        built = checkpoints.get(tx, scratch)
        assert built is not None
        _rename_schema(tx, live, f"{live}_old")
        _rename_schema(tx, copy, live)
        checkpoints.replace(
            tx, projector.name, msgspec.structs.replace(built, db_schema=live)
        )
        checkpoints.remove(tx, scratch)
    with db.begin(engine) as tx:
        _drop_schema(tx, f"{live}_old")
    return built.applied_events


class TableDiff(msgspec.Struct, frozen=True):
    """The comparison of one table between the live copy and a fresh rebuild."""

    table: str
    live_rows: int
    rebuilt_rows: int
    live_checksum: str
    rebuilt_checksum: str

    @property
    def equal(self) -> bool:
        """True when both copies hold the same rows."""
        return self.live_checksum == self.rebuilt_checksum and self.live_rows == self.rebuilt_rows


def table_checksum(conn: Connection, table: sa.Table) -> tuple[int, str]:
    """(rows, sha256 over every row's text in primary-key order) of ``table``."""
    row_text = sa.func.md5(sa.cast(table.table_valued(), sa.Text))
    stmt = sa.select(row_text).order_by(*table.primary_key.columns)
    digest = hashlib.sha256()
    count = 0
    for (value,) in conn.execute(stmt):
        digest.update(value.encode())
        count += 1
    return count, digest.hexdigest()


def projection_tables(projector: Projector) -> list[sa.Table]:
    """The Table objects of a projection (declared against its live schema)."""
    schema = live_schema(projector.name)
    return [t for t in read_models.sorted_tables if t.schema == schema]


def verify(
    engine: Engine, projector: Projector, *, progress: Callable[[int], None] | None = None
) -> list[TableDiff]:
    """Rebuild into a scratch copy up to the live checkpoint, compare per table, drop it."""
    install(engine, projector)
    live = live_schema(projector.name)
    scratch_schema = f"{live}_verify"
    with engine.connect() as conn:
        cp = checkpoints.get(conn, projector.name)
    if cp is None:
        raise NotFound(f"projection {projector.name!r} has no checkpoint")
    scratch = build_copy(engine, projector, scratch_schema, until=cp.cursor, progress=progress)
    try:
        with db.begin(engine) as tx:
            locked = checkpoints.lock(tx, projector.name)  # the live copy holds still
            assert locked is not None
            mapped = tx.execution_options(schema_translate_map={live: scratch_schema})
            while apply_next_batch(mapped, projector, checkpoint=scratch, until=locked.cursor):
                pass
            diffs = []
            for table in projection_tables(projector):
                live_count, live_sum = table_checksum(tx, table)
                copy_count, copy_sum = table_checksum(mapped, table)
                diffs.append(TableDiff(table.name, live_count, copy_count, live_sum, copy_sum))
    finally:
        with db.begin(engine) as tx:
            _drop_schema(tx, scratch_schema)
            checkpoints.remove(tx, scratch)
    return diffs
