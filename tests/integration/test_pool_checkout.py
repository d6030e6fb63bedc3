"""The pool's checkout check (``store.db._refuse_closed``, instead of a ping per
checkout): a pooled connection the server ended is discarded and the caller gets a
working one, with no error; a live idle one is reused, with no round trip. And how
``db.reading`` ends a transaction."""

from __future__ import annotations

import uuid

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from memledger.store import db
from tests.conftest import TestDatabase

PID = sa.select(sa.func.pg_backend_pid())


def one_connection_engine(database: TestDatabase) -> Engine:
    engine = db.create_engine(database.url, pool_size=1)
    with engine.connect() as conn:
        conn.execute(PID)  # the pool now holds one idle connection
    return engine


def statements_of(engine: Engine) -> list[str]:
    """What reaches the server from now on: the caller's statements, and pings."""
    seen: list[str] = []
    sa.event.listen(engine, "before_cursor_execute", lambda *args: seen.append(args[2]))
    ping = engine.dialect.do_ping

    def counted_ping(dbapi_connection: object) -> bool:
        seen.append("<ping>")
        return ping(dbapi_connection)

    engine.dialect.do_ping = counted_ping  # type: ignore[method-assign]
    return seen


def test_a_connection_the_server_ended_is_replaced_without_an_error(database: TestDatabase) -> None:
    engine = one_connection_engine(database)
    try:
        with engine.connect() as conn:
            first = conn.execute(PID).scalar_one()
        with database.engine.connect() as admin:
            # Waits (5 s at most) until the backend has exited, so its socket is closed.
            ended = sa.select(sa.func.pg_terminate_backend(first, 5000))
            assert admin.execute(ended).scalar_one() is True
            admin.rollback()
        with engine.connect() as conn:  # the pooled one is dead: checkout must notice
            second = conn.execute(PID).scalar_one()
        assert second != first
        with engine.connect() as conn:
            assert conn.execute(PID).scalar_one() == second, "the new connection is pooled in turn"
    finally:
        engine.dispose()


def test_a_live_idle_connection_is_reused_without_a_ping(database: TestDatabase) -> None:
    engine = one_connection_engine(database)
    try:
        with engine.connect() as conn:
            first = conn.execute(PID).scalar_one()
        seen = statements_of(engine)
        for _ in range(3):
            with engine.connect() as conn:
                assert conn.execute(PID).scalar_one() == first
        assert len(seen) == 3, f"only the caller's statements reach the server: {seen}"
    finally:
        engine.dispose()


def test_reading_commits_at_the_end_and_rolls_back_on_an_error(database: TestDatabase) -> None:
    """``db.reading`` ends its transaction with COMMIT (a rollback would deallocate the
    connection's prepared statements), and an error inside still rolls back."""
    engine = one_connection_engine(database)
    table = f"reading_{uuid.uuid4().hex[:8]}"
    try:
        with engine.begin() as conn:
            conn.execute(sa.text(f"CREATE TABLE {table} (n int)"))  # text(): a scratch table of this test
        with db.reading(engine) as conn:
            conn.execute(sa.text(f"INSERT INTO {table} VALUES (1)"))
        with pytest.raises(RuntimeError), db.reading(engine) as conn:
            conn.execute(sa.text(f"INSERT INTO {table} VALUES (2)"))
            raise RuntimeError("the block failed")
        with engine.connect() as conn:
            assert conn.execute(sa.text(f"SELECT n FROM {table}")).scalars().all() == [1]
    finally:
        with engine.begin() as conn:
            conn.execute(sa.text(f"DROP TABLE IF EXISTS {table}"))
        engine.dispose()
