"""The fast paths of the projectors give the rows the ordinary path gives.

A rebuild replays the ledger with each projector's ``replayer`` (state kept in
memory, writes pipelined, turns written by two lanes); live application loads
state set-wise and writes only the rows a batch changed. With the same batch
boundaries, both must leave the tables exactly as the plain fold does, whatever
the workload holds (retractions, restores, conflicts, cased keys and names).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from memledger.events.envelope import START, Recorded
from memledger.projectors import checkpoints, rebuild, registry, runner
from memledger.projectors import replay as replaying
from memledger.projectors.base import Projector, live_schema
from memledger.projectors.facts.projector import FactsProjector
from memledger.projectors.turns.projector import TurnsReplay
from memledger.store import db, event_reads, migrate
from tests.conftest import TestDatabase
from tests.support import workload

T0 = datetime(2025, 2, 3, 9, 0, tzinfo=UTC)
BATCH = 700  # small, so that a few thousand events make many batches
READ_MODELS = ("turns", "facts", "entities", "relationships")


@pytest.fixture(scope="module")
def ledger(database: TestDatabase) -> Iterator[Engine]:
    """A database of its own holding a realistic mixed workload, untouched by others."""
    name = f"replay_{uuid.uuid4().hex[:10]}"
    url = db.ensure_database(database.server_url, name)
    engine = db.create_engine(url, pool_size=6)
    migrate.upgrade(engine)
    appends = workload.generate(seed=5, tenants=3, turns=700, start=T0)
    workload.append_all(engine, appends, batch_per_tx=200)
    try:
        yield engine
    finally:
        engine.dispose()
        admin = sa.create_engine(database.server_url.set(database="postgres"), isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            quoted = admin.dialect.identifier_preparer.quote(name)
            # text(): DDL on a database name of our own, quoted by the dialect.
            conn.execute(sa.text(f"DROP DATABASE IF EXISTS {quoted} WITH (FORCE)"))
        admin.dispose()


@pytest.fixture(autouse=True)
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rebuild, "REBUILD_BATCH", BATCH)
    monkeypatch.setattr(replaying, "REPLAY_BATCH", BATCH)
    monkeypatch.setattr(replaying, "REPLAY_PAGE", 300)  # batches read in pages: 300 + 300 + 100
    monkeypatch.setattr(TurnsReplay, "flush_every", BATCH)


class Plain:
    """A projector without its replayer: a copy is built batch by batch with ``apply``."""

    def __init__(self, inner: Projector) -> None:
        self.name, self.version, self.handles = inner.name, inner.version, inner.handles
        self.inner = inner

    def apply(self, tx: Connection, batch: Sequence[Recorded]) -> None:
        self.inner.apply(tx, batch)


def checksums(engine: Engine, projector: Projector, schema: str) -> dict[str, tuple[int, str]]:
    out = {}
    for table in rebuild.projection_tables(projector):
        with engine.connect() as conn:  # a connection per copy: the map changes it in place
            mapped = conn.execution_options(schema_translate_map={live_schema(projector.name): schema})
            out[table.name] = rebuild.table_checksum(mapped, table)
    return out


def built(engine: Engine, projector: Projector, schema: str) -> dict[str, tuple[int, str]]:
    name = rebuild.build_copy(engine, projector, schema)
    try:
        return checksums(engine, projector, schema)
    finally:
        with db.begin(engine) as tx:
            rebuild._drop_schema(tx, schema)
            checkpoints.remove(tx, name)


@pytest.mark.parametrize("name", READ_MODELS)
def test_a_replayed_copy_equals_one_folded_batch_by_batch(ledger: Engine, name: str) -> None:
    projector = registry.by_name(name)
    assert hasattr(projector, "replayer")

    fast = built(ledger, projector, f"proj_{name}_fast")
    plain = built(ledger, Plain(projector), f"proj_{name}_plain")

    assert fast == plain
    assert all(rows > 0 for rows, _ in fast.values())


@pytest.mark.parametrize("name", READ_MODELS)
def test_live_application_equals_a_replayed_copy(ledger: Engine, name: str) -> None:
    projector = registry.by_name(name)
    runner.install(ledger, projector)
    runner.catch_up(ledger, projector, batch_size=BATCH)

    live = checksums(ledger, projector, live_schema(name))
    replayed = built(ledger, projector, f"proj_{name}_cmp")

    assert live == replayed
    assert sum(rows for rows, _ in live.values()) > 0


class Stumbling:
    """The facts projector whose replayer fails on its third batch."""

    name, version, handles = FactsProjector.name, FactsProjector.version, FactsProjector.handles

    def __init__(self) -> None:
        self.inner = FactsProjector()

    def apply(self, tx: Connection, batch: Sequence[Recorded]) -> None:
        self.inner.apply(tx, batch)

    def replayer(self) -> object:
        inner, calls = self.inner.replayer(), [0]

        class Failing:
            def evolve(self, page: Sequence[Recorded]) -> None:
                inner.evolve(page)

            def flush(self) -> Callable[[Connection], None]:
                calls[0] += 1
                if calls[0] == 3:
                    raise ValueError("stumbled")
                return inner.flush()

        return Failing()


def test_a_replay_that_fails_hands_over_to_the_batch_by_batch_path(ledger: Engine) -> None:
    progress: list[int] = []
    name = rebuild.build_copy(ledger, Stumbling(), "proj_facts_stumbling", progress=progress.append)
    try:
        stumbled = checksums(ledger, FactsProjector(), "proj_facts_stumbling")
        with ledger.connect() as conn:
            cp = checkpoints.get(conn, name)
            total = event_reads.count_after(conn, START, types=FactsProjector.handles)
    finally:
        with db.begin(ledger) as tx:
            rebuild._drop_schema(tx, "proj_facts_stumbling")
            checkpoints.remove(tx, name)

    assert stumbled == built(ledger, Plain(FactsProjector()), "proj_facts_plain2")
    assert cp is not None and cp.applied_events == total
    assert progress[:2] == [BATCH, 2 * BATCH]  # two batches replayed, then batch by batch
    assert progress[-1] == total
