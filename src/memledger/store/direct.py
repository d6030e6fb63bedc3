"""Running the append statements on the driver's connection directly, prepared.

PostgreSQL may keep a prepared statement's generic plan, and one made while the events
table was small, when every index looks alike, could check event ids through the index
of the tenant alone and scan the tenant's every row on each append. So until the ledger
holds ``PREPARE_FROM_POSITION`` events, the stream lock that opens an append also sets
``plan_cache_mode`` to ``force_custom_plan`` for its transaction: the insert is planned
on each call, with the table as it is then, and only its parsing is spared. Past that
size PostgreSQL chooses (a generic plan made then tells the indexes apart). Driver
errors are raised as SQLAlchemy's, as ``Connection.execute`` raises them, so that
``db`` translates them alike.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import psycopg
import sqlalchemy as sa
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import Connection, Dialect
from sqlalchemy.sql.compiler import SQLCompiler

# From this ledger position on, the append statements may keep a generic plan (see above).
PREPARE_FROM_POSITION = 10_000
_large: set[tuple[str | int | None, ...]] = set()  # the databases this process has seen reach it

# Transaction-local, like every setting an append makes.
_CUSTOM_PLANS = sa.func.set_config("plan_cache_mode", "force_custom_plan", True)


def _database(tx: Connection) -> tuple[str | int | None, ...]:
    """Which database ``tx`` is on, whichever role it connects as."""
    url = tx.engine.url
    return (url.host, url.port, url.database, str(sorted(url.query.items())))


def seen(tx: Connection, positions: Iterable[int]) -> None:
    """Note positions an append took in ``tx``: once one reaches ``PREPARE_FROM_POSITION``,
    the append statements may keep generic plans on that database from then on."""
    if max(positions, default=0) >= PREPARE_FROM_POSITION:
        _large.add(_database(tx))


@functools.cache
def _planning_each_call(stmt: sa.Select[Any]) -> sa.Select[Any]:
    """``stmt`` that also makes its transaction plan prepared statements on each call."""
    return stmt.add_columns(_CUSTOM_PLANS)


@functools.cache
def driver_statement(stmt: sa.ClauseElement, dialect: Dialect) -> tuple[str, dict[str, Any]]:
    """``stmt`` as the driver's SQL text, and the values of its fixed parameters."""
    compiled = stmt.compile(dialect=dialect)
    if not isinstance(compiled, SQLCompiler):
        raise TypeError(f"{type(stmt).__name__} does not compile to SQL")
    return str(compiled), {name: bind.value for name, bind in compiled.binds.items() if bind.value is not None}


def locked(
    tx: Connection,
    lock: sa.Select[Any],
    lock_params: Mapping[str, Any],
    stmt: sa.ClauseElement,
    params: Mapping[str, Any],
) -> list[tuple[Any, ...]]:
    """Take an append's stream lock (``lock``, its rows dropped), then run ``stmt``: the
    rows ``stmt`` returns. Two statements, so ``stmt``'s snapshot is taken after the lock
    is held; sent in one round trip (a pipeline, with the BEGIN the driver adds) when
    ``tx`` is in its transaction already, else the lock goes through SQLAlchemy, which
    then begins it. While the ledger is small the lock also makes the transaction plan
    on each call."""
    if _database(tx) not in _large:
        lock = _planning_each_call(lock)
    if not tx.in_transaction():
        tx.execute(lock, dict(lock_params))
        return execute(tx, stmt, params)
    lock_sql, lock_fixed = driver_statement(lock, tx.dialect)
    sql, fixed = driver_statement(stmt, tx.dialect)
    with _translated(sql), _driver(tx).cursor() as first, _driver(tx).cursor() as second:
        with _driver(tx).pipeline():
            first.execute(lock_sql, {**lock_fixed, **lock_params}, prepare=True)
            second.execute(sql, {**fixed, **params}, prepare=True)
        return list(second.fetchall())


def execute(tx: Connection, stmt: sa.ClauseElement, params: Mapping[str, Any]) -> list[tuple[Any, ...]]:
    """Run ``stmt`` in ``tx``, prepared: the rows it returns. ``tx`` must be in its
    transaction, opened by ``locked`` (the stream lock): SQLAlchemy does not see
    this statement, and would not commit it otherwise."""
    if not tx.in_transaction():
        raise RuntimeError("direct.execute needs a connection in a transaction")
    sql, fixed = driver_statement(stmt, tx.dialect)
    with _translated(sql), _driver(tx).cursor() as cursor:
        cursor.execute(sql, {**fixed, **params}, prepare=True)
        return list(cursor.fetchall())


def _driver(tx: Connection) -> psycopg.Connection[Any]:
    return tx.connection.driver_connection  # type: ignore[return-value]


@contextlib.contextmanager
def _translated(sql: str) -> Iterator[None]:
    """Driver errors raised as SQLAlchemy's, as ``Connection.execute`` raises them."""
    try:
        yield
    except psycopg.Error as e:
        raise sa_exc.DBAPIError.instance(sql, None, e, psycopg.Error, hide_parameters=True) from e
