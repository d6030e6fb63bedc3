"""Alembic environment. memledger runs migrations through ``store.migrate``, which
hands over an open connection in ``config.attributes["connection"]``."""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine

from memledger.store.schema import metadata

config = context.config


def run() -> None:
    connection = config.attributes.get("connection")
    if connection is None:
        url = config.get_main_option("sqlalchemy.url")
        if not url:
            raise RuntimeError("alembic needs a connection or sqlalchemy.url")
        with create_engine(url).begin() as conn:
            _migrate(conn)
    else:
        _migrate(connection)


def _migrate(connection: object) -> None:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        compare_type=True,
        transaction_per_migration=False,
    )
    with context.begin_transaction():
        context.run_migrations()


run()
