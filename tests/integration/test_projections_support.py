"""Helpers shared by the projection tests (this module holds no tests).

``compare_with_rebuild`` is the tests' own check that a projection's live tables
equal a clean rebuild. It does not use ``rebuild.verify``, which cannot see a
difference (see ``test_projections_read_models``): ``Connection.execution_options``
changes the connection in place, so verify checksums the scratch copy twice.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

import msgspec
import sqlalchemy as sa
from sqlalchemy.engine import URL, Engine

from memledger.events.envelope import START, NewEvent
from memledger.projectors import checkpoints, rebuild, registry
from memledger.projectors.base import Projector, live_schema
from memledger.store import db, event_reads, event_store, migrate
from memledger.store.schema import events
from tests.support.workload import Append

if TYPE_CHECKING:
    from tests.conftest import TestDatabase


def drop_database(server_url: URL, name: str) -> None:
    admin = sa.create_engine(server_url.set(database="postgres"), isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            quoted = admin.dialect.identifier_preparer.quote(name)
            # text(): DROP DATABASE takes no bind parameters; the name is quoted above.
            conn.execute(sa.text(f"DROP DATABASE IF EXISTS {quoted} WITH (FORCE)"))
    finally:
        admin.dispose()


@contextmanager
def fresh_database(database: TestDatabase, prefix: str, *, pool_size: int = 4) -> Iterator[Engine]:
    """A new, migrated database on the session's server, dropped afterwards."""
    url = database.new_database(prefix)
    engine = db.create_engine(url, pool_size=pool_size)
    try:
        migrate.upgrade(engine)
        yield engine
    finally:
        engine.dispose()
        drop_database(database.server_url, str(url.database))


def url_of(engine: Engine) -> str:
    return engine.url.render_as_string(hide_password=False)


class TableComparison(msgspec.Struct, frozen=True):
    table: str
    live: tuple[int, str]
    rebuilt: tuple[int, str]

    @property
    def equal(self) -> bool:
        return self.live == self.rebuilt


_copies = itertools.count()


def compare_with_rebuild(engine: Engine, projector: Projector) -> list[TableComparison]:
    """Build the projection from scratch up to its live checkpoint in a scratch
    schema, then compare every table's (rows, checksum) with the live copy.
    The projection must be idle (no runner applying batches meanwhile)."""
    with engine.connect() as conn:
        cp = checkpoints.get(conn, projector.name)
    assert cp is not None, f"{projector.name} is not installed"
    schema = f"proj_{projector.name}_cmp{next(_copies)}"
    name = rebuild.build_copy(engine, projector, schema, until=cp.cursor)
    try:
        tables = rebuild.projection_tables(projector)
        with engine.connect() as conn:
            live = [rebuild.table_checksum(conn, t) for t in tables]
        with engine.connect() as conn:
            mapped = conn.execution_options(schema_translate_map={live_schema(projector.name): schema})
            copy = [rebuild.table_checksum(mapped, t) for t in tables]
        return [TableComparison(t.name, a, b) for t, a, b in zip(tables, live, copy, strict=True)]
    finally:
        with engine.begin() as tx:
            # text(): DDL on a schema name of our own.
            tx.execute(sa.text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
            checkpoints.remove(tx, name)


def assert_equals_rebuild(engine: Engine, projector: Projector) -> None:
    diffs = compare_with_rebuild(engine, projector)
    assert diffs
    assert all(d.equal for d in diffs), f"{projector.name}: live differs from a rebuild: {diffs}"


def checksums(engine: Engine, projector: Projector) -> dict[str, tuple[int, str]]:
    """(rows, checksum) of each live table of the projection."""
    with engine.connect() as conn:
        return {t.name: rebuild.table_checksum(conn, t) for t in rebuild.projection_tables(projector)}


def handled_events(engine: Engine, projector: Projector) -> int:
    """How many committed events of the projection's types the ledger holds."""
    with engine.connect() as conn:
        return event_reads.count_after(conn, START, types=projector.handles)


READ_MODELS = ("turns", "facts", "entities", "relationships")


def read_models() -> tuple[Projector, ...]:
    """The four read models of DESIGN.md's Projections section."""
    return tuple(registry.by_name(name) for name in READ_MODELS)


def wait_until_visible(engine: Engine, count: int, *, tenant: str | None = None, timeout: float = 120.0) -> None:
    """Wait until gap-safe readers see ``count`` events (of ``tenant``). A write
    transaction left open anywhere on the server (another test run, say) holds them
    back until it ends."""
    deadline = time.monotonic() + timeout
    while True:
        with engine.connect() as conn:
            seen = event_reads.count_after(conn, START, tenant_id=tenant)
        if seen >= count:
            return
        assert time.monotonic() < deadline, f"only {seen} of {count} events became visible"
        time.sleep(0.05)


def coalesce(appends: Sequence[Append], per_append: int) -> list[Append]:
    """The same events in the same order per tenant, in few large appends (one
    stream per chunk and tenant): far faster to write than one append per stream."""
    out: list[Append] = []
    events = [(a.tenant_id, new) for a in appends for new in a.events]
    for start in range(0, len(events), per_append):
        by_tenant: dict[str, list[NewEvent]] = {}
        for tenant_id, new in events[start : start + per_append]:
            by_tenant.setdefault(tenant_id, []).append(new)
        out.extend(Append(t, f"bulk-{start}", news) for t, news in by_tenant.items())
    return out


def append_in_transactions(engine: Engine, appends: Sequence[Append], per_tx: int = 1, *, wait: bool = True) -> int:
    """Append everything, ``per_tx`` appends per transaction, and (if ``wait``) wait
    until gap-safe readers see it all. Returns the number of events the ledger holds."""
    for start in range(0, len(appends), per_tx):
        with engine.begin() as tx:
            for tenant_id, stream_id, news in appends[start : start + per_tx]:
                event_store.append(tx, tenant_id, stream_id, news, None)
    total = count_events(engine)
    if wait:
        wait_until_visible(engine, total)
    return total


def count_events(engine: Engine) -> int:
    """Every committed event, visible to gap-safe readers yet or not."""
    with engine.connect() as conn:
        return int(conn.execute(sa.select(sa.func.count()).select_from(events)).scalar_one())
