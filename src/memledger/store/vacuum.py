"""VACUUM after an erasure, so the dead row versions that held erased text are removed.

An UPDATE or DELETE leaves the old row version in the table until VACUUM removes
it (SQL never sees it, but the data files still hold it). Plain VACUUM takes no
lock that blocks readers or writers, and skips pages the visibility map marks
all-visible, so after an erasure it mostly reads the pages the erasure touched.
It frees the space for reuse; the bytes stay in the file until they are
overwritten (only VACUUM FULL, which blocks the table, rewrites it). WAL segments
and backups keep their own copies until they are recycled or expire.
"""

from __future__ import annotations

from collections.abc import Iterable

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
            prep = auto.dialect.identifier_preparer
            for table in tables:
                name = str(prep.format_table(table))
                # text(): VACUUM has no Core construct and takes no bind parameters;
                # the name is quoted by the dialect.
                auto.execute(sa.text(f"VACUUM {'FULL ' if full else ''}{name}"))
                done.append(name)
    except sa_exc.DBAPIError as e:
        raise db.translate(e) from e
    return done
