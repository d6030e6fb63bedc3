"""Running the append statements on the driver's connection directly.

Until the ledger holds ``PREPARE_FROM_POSITION`` events, each statement is planned
afresh on every call, never a psycopg prepared statement: PostgreSQL keeps a prepared
statement's generic plan, and one made while the events table was small, when every
index looks alike, could check event ids through the index of the tenant alone and
scan the tenant's every row on each append. Past that size the statements may be
prepared (psycopg's threshold): a generic plan made then tells the indexes apart,
and planning is spared. Driver errors are raised as SQLAlchemy's, as
``Connection.execute`` raises them, so that ``db`` translates them alike.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from typing import Any

import psycopg
import sqlalchemy as sa
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import Connection, Dialect
from sqlalchemy.sql.compiler import SQLCompiler

# From this ledger position on, the append statements may be prepared (see above).
PREPARE_FROM_POSITION = 10_000
_large: set[tuple[str | int | None, ...]] = set()  # the databases this process has seen reach it


def _database(tx: Connection) -> tuple[str | int | None, ...]:
    """Which database ``tx`` is on, whichever role it connects as."""
    url = tx.engine.url
    return (url.host, url.port, url.database, str(sorted(url.query.items())))


def seen(tx: Connection, positions: Iterable[int]) -> None:
    """Note positions an append took in ``tx``: once one reaches ``PREPARE_FROM_POSITION``,
    the append statements may be prepared on that database from then on."""
    if max(positions, default=0) >= PREPARE_FROM_POSITION:
        _large.add(_database(tx))


def _prepare(tx: Connection) -> bool | None:
    """psycopg's ``prepare``: False (plan afresh) until the ledger is large, then None
    (its threshold decides)."""
    return None if _database(tx) in _large else False


@functools.cache
def _driver_statement(stmt: sa.ClauseElement, dialect: Dialect) -> tuple[str, dict[str, Any]]:
    """``stmt`` as the driver's SQL text, and the values of its fixed parameters."""
    compiled = stmt.compile(dialect=dialect)
    if not isinstance(compiled, SQLCompiler):
        raise TypeError(f"{type(stmt).__name__} does not compile to SQL")
    return str(compiled), {name: bind.value for name, bind in compiled.binds.items() if bind.value is not None}


def begin_with(tx: Connection, stmt: sa.Select[Any], params: Mapping[str, Any]) -> None:
    """Run ``stmt`` (its rows dropped) in ``tx``: on the driver when ``tx`` is in its
    transaction already, else through SQLAlchemy, which then begins it."""
    if tx.in_transaction():
        execute(tx, stmt, params)
    else:
        tx.execute(stmt, dict(params))


def execute(tx: Connection, stmt: sa.ClauseElement, params: Mapping[str, Any]) -> list[tuple[Any, ...]]:
    """Run ``stmt`` in ``tx``: the rows it returns. ``tx`` must be in its transaction
    (a statement run through it first, as the stream lock is, begins it): SQLAlchemy
    does not see this one, and would not commit it otherwise."""
    if not tx.in_transaction():
        raise RuntimeError("direct.execute needs a connection in a transaction")
    sql, fixed = _driver_statement(stmt, tx.dialect)
    driver: psycopg.Connection[Any] = tx.connection.driver_connection  # type: ignore[assignment]
    try:
        with driver.cursor() as cursor:
            cursor.execute(sql, {**fixed, **params}, prepare=_prepare(tx))
            return list(cursor.fetchall())
    except psycopg.Error as e:
        raise sa_exc.DBAPIError.instance(sql, None, e, psycopg.Error, hide_parameters=True) from e
