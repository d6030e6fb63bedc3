"""VACUUM after an erasure, so the dead row versions that held erased text are removed;
and compaction (``rewrite``), which rewrites the files themselves.

An UPDATE or DELETE leaves the old row version in the table until VACUUM removes
it (SQL never sees it, but the data files still hold it). Plain VACUUM takes no
lock that blocks readers or writers, and skips pages the visibility map marks
all-visible, so after an erasure it mostly reads the pages the erasure touched.
It frees the space for reuse; the bytes stay in the file until they are
overwritten (only VACUUM FULL, which blocks the table, rewrites it). WAL segments
and backups keep their own copies until they are recycled or expire.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

import msgspec
import psycopg
import sqlalchemy as sa
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import Engine

from memledger.store import db


def vacuum(engine: Engine, tables: Iterable[sa.Table], *, full: bool = False) -> list[str]:
    """VACUUM each table (FULL if asked), outside any transaction; the names done."""
    done: list[str] = []
    try:
        with engine.connect() as conn:
            auto = conn.execution_options(isolation_level="AUTOCOMMIT")
            for name in _names(auto, tables):
                _vacuum(auto, name, full=full)
                done.append(name)
    except sa_exc.DBAPIError as e:
        raise db.translate(e) from e
    return done


def _names(conn: sa.Connection, tables: Iterable[sa.Table]) -> list[str]:
    """Each table's name as the dialect quotes it."""
    prep = conn.dialect.identifier_preparer
    return [str(prep.format_table(table)) for table in tables]


def _vacuum(conn: sa.Connection, name: str, *, full: bool) -> None:
    # text(): VACUUM has no Core construct and takes no bind parameters; the name is
    # quoted by the dialect (``_names``).
    conn.execute(sa.text(f"VACUUM {'FULL ' if full else ''}{name}"))


class Rewritten(msgspec.Struct, frozen=True):
    """A table rewritten by ``rewrite``: its name, its size (table, TOAST and indexes)
    before and after in bytes, and how long the rewrite took."""

    table: str
    bytes_before: int
    bytes_after: int
    seconds: float


def rewrite(engine: Engine, tables: Iterable[sa.Table]) -> tuple[list[Rewritten], bool]:
    """VACUUM FULL each table, then CHECKPOINT; what was rewritten, and whether the
    checkpoint ran (it needs superuser or pg_checkpoint).

    VACUUM FULL writes each table, its TOAST table and every index into new files and
    drops the old ones (their blocks still held erased text); it takes an ACCESS
    EXCLUSIVE lock on each table in turn, so nothing reads or writes it meanwhile. The
    old files are unlinked at the next checkpoint, which also lets the WAL holding the
    old rows be recycled.
    """
    done: list[Rewritten] = []
    try:
        with engine.connect() as conn:
            auto = conn.execution_options(isolation_level="AUTOCOMMIT")
            for name in _names(auto, tables):
                before, started = _size(auto, name), time.monotonic()
                _vacuum(auto, name, full=True)
                done.append(Rewritten(name, before, _size(auto, name), round(time.monotonic() - started, 3)))
            return done, _checkpoint(auto)
    except sa_exc.DBAPIError as e:
        raise db.translate(e) from e


def _size(conn: sa.Connection, name: str) -> int:
    size = conn.execute(sa.select(sa.func.pg_total_relation_size(sa.func.to_regclass(name)))).scalar_one()
    return int(size or 0)


def _checkpoint(conn: sa.Connection) -> bool:
    try:
        # text(): CHECKPOINT has no Core construct.
        conn.execute(sa.text("CHECKPOINT"))
    except sa_exc.DBAPIError as e:
        if isinstance(e.orig, psycopg.errors.InsufficientPrivilege):  # the old files go at the next one
            return False
        raise
    return True
