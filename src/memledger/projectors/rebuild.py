"""Rebuilding a projection beside the live one, swapping it in, and verifying it.

Blue/green: the new copy is built from position 0 in ``proj_<name>_next`` (tables
first, secondary indexes after the bulk load), catches up with what arrived
meanwhile, then one short transaction locks the live checkpoint (pausing the
live runner), applies the last few events, renames the schemas and moves the
checkpoint. Readers see the old rows until that commit and the new ones after;
never an empty or half-built table.

Erased events never reach a copy (``replay`` and ``runner`` skip them), so a
rebuild after an erasure stays erased, and equals the live copy that the runner
refolded at the erasure record.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

import msgspec
import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from memledger.errors import NotFound
from memledger.events.envelope import Cursor
from memledger.projectors import checkpoints
from memledger.projectors import replay as replaying
from memledger.projectors.base import Projector, live_schema, next_schema
from memledger.projectors.runner import (
    apply_next_batch,
    catch_up,
    create_indexes,
    create_tables,
    install,
)
from memledger.projectors.runner import projection_tables as _tables
from memledger.store import db

REBUILD_BATCH = 5000


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
        done = replaying.replay(
            engine,
            projector,
            replayer(),
            name,
            schema_map,
            batch_size=replaying.REPLAY_BATCH,
            until=until,
            progress=progress,
        )
    # What the replay left (all of it, for a projector without one; the rest,
    # event by event with failures recorded, if a batch failed).
    catch_up(
        engine,
        projector,
        checkpoint=name,
        schema_map=schema_map,
        batch_size=REBUILD_BATCH,
        until=until,
        progress=None if progress is None else lambda n: progress(done + n),
    )
    with db.begin(engine) as tx:
        create_indexes(tx, projector, schema)
    catch_up(engine, projector, checkpoint=name, schema_map=schema_map, until=until)
    return name


def rebuild(engine: Engine, projector: Projector, *, progress: Callable[[int], None] | None = None) -> int:
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
        checkpoints.replace(tx, projector.name, msgspec.structs.replace(built, db_schema=live))
        checkpoints.remove(tx, scratch)
    with db.begin(engine) as tx:
        _drop_schema(tx, f"{live}_old")
    return built.applied_events


def projection_tables(projector: Projector) -> list[sa.Table]:
    """The Table objects of a projection (declared against its live schema)."""
    return _tables(projector)


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


def verify(engine: Engine, projector: Projector, *, progress: Callable[[int], None] | None = None) -> list[TableDiff]:
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
            live_sums = [table_checksum(tx, table) for table in projection_tables(projector)]
            mapped = tx.execution_options(schema_translate_map={live: scratch_schema})
            while apply_next_batch(mapped, projector, checkpoint=scratch, until=locked.cursor):
                pass
            diffs = []
            for table, (live_count, live_sum) in zip(projection_tables(projector), live_sums, strict=True):
                copy_count, copy_sum = table_checksum(mapped, table)
                diffs.append(TableDiff(str(table.name), live_count, copy_count, live_sum, copy_sum))
    finally:
        with db.begin(engine) as tx:
            _drop_schema(tx, scratch_schema)
            checkpoints.remove(tx, scratch)
    return diffs
