"""Migrations: up, down and up again on a fresh database, and no drift between
``store.schema.metadata`` and what the migrations build."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy.engine import URL, Engine

from memledger.store import db, event_reads, event_store, migrate
from memledger.store.schema import metadata
from tests.conftest import turn_event

if TYPE_CHECKING:  # imported for the annotation only: pytest would try to collect it
    from tests.conftest import TestDatabase

# Every table the migrations own: exactly the tables of the ledger's MetaData.
LEDGER_TABLES = set(metadata.tables)


@pytest.fixture
def scratch(database: TestDatabase) -> Iterator[Engine]:
    """An engine on an extra, empty database, dropped after the test."""
    url = database.new_database("migrations")
    engine = db.create_engine(url, pool_size=2)
    try:
        yield engine
    finally:
        engine.dispose()
        _drop_database(database.server_url, url)


def _drop_database(server_url: URL, url: URL) -> None:
    admin = sa.create_engine(server_url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            quoted = admin.dialect.identifier_preparer.quote(str(url.database))
            # text(): DROP DATABASE takes no bind parameters; the name is quoted above.
            conn.execute(sa.text(f"DROP DATABASE IF EXISTS {quoted} WITH (FORCE)"))
    finally:
        admin.dispose()


def _tables(engine: Engine) -> set[str]:
    return set(sa.inspect(engine).get_table_names())


def _has_append_only_triggers(engine: Engine) -> bool:
    with engine.connect() as conn:
        # text(): a catalogue query; pg_trigger is not part of the ledger's schema.
        names = conn.execute(
            sa.text("SELECT tgname FROM pg_trigger WHERE tgrelid = to_regclass('events') AND NOT tgisinternal")
        ).scalars()
        return set(names) == {"events_refuse_update_delete", "events_refuse_truncate"}


def test_upgrade_downgrade_and_upgrade_again(scratch: Engine) -> None:
    assert migrate.current(scratch) is None
    assert not LEDGER_TABLES & _tables(scratch)

    migrate.upgrade(scratch)
    assert migrate.current(scratch) == migrate.head()
    assert _tables(scratch) >= LEDGER_TABLES
    assert _has_append_only_triggers(scratch)

    migrate.downgrade(scratch)
    assert migrate.current(scratch) is None
    assert not LEDGER_TABLES & _tables(scratch)

    migrate.upgrade(scratch)
    assert migrate.current(scratch) == migrate.head()
    assert _tables(scratch) >= LEDGER_TABLES
    assert _has_append_only_triggers(scratch)


def test_upgrade_to_head_twice_is_a_no_op(scratch: Engine) -> None:
    migrate.upgrade(scratch)
    migrate.upgrade(scratch)
    assert migrate.current(scratch) == migrate.head()


def test_a_migrated_fresh_database_takes_appends(scratch: Engine) -> None:
    migrate.upgrade(scratch)
    with scratch.begin() as tx:
        event_store.append(tx, "tenant", "conv", [turn_event("a")], 0)
    with scratch.connect() as conn:
        assert len(event_reads.read_stream(conn, "tenant", "conv")) == 1


def test_the_session_database_is_at_head(engine: Engine) -> None:
    assert migrate.head() is not None
    assert migrate.current(engine) == migrate.head()


def test_autogenerate_sees_no_difference_from_the_schema_metadata(engine: Engine) -> None:
    with engine.connect() as conn, warnings.catch_warnings():
        # SQLAlchemy's PostgreSQL dialect does not know the xid8 type and warns
        # while reflecting events.tx_id; alembic then cannot compare that one
        # column's type (it skips reflected NullTypes). Nothing is filtered out
        # of the comparison itself. The read models' proj_* schemas are outside
        # it by design: compare_metadata looks at the default schema only
        # (include_schemas is off), and their tables are in no migrated MetaData.
        warnings.filterwarnings("ignore", message="Did not recognize type 'xid8'")
        context = MigrationContext.configure(conn, opts={"compare_type": True, "compare_server_default": True})
        diff = compare_metadata(context, metadata)

    assert diff == []
