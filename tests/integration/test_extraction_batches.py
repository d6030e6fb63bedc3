"""The extraction worker's set-wise batch path on a real PostgreSQL: one append for
every turn of a batch, one read of the tenants' settings, one write of the counters,
and the same results as turn-by-turn appends when some turns were extracted before.
"""

from __future__ import annotations

import collections
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from memledger.events.catalogue import FactExtracted, MemoryPromoted, TenantSettingsChanged
from memledger.extraction.protocol import TurnExtraction, TurnText
from memledger.projectors import checkpoints
from memledger.service import tenant_settings
from memledger.store import counters, db
from tests.integration.test_extraction_worker import (
    ToyExtractor,
    drain,
    extracted,
    new_worker,
    per_turn,
    record,
    toy_name,
    visible,
)


@pytest.fixture
def statements(engine: Engine) -> Iterator[collections.Counter[str]]:
    """Statements the engine runs while the test does, by their first words."""
    seen: collections.Counter[str] = collections.Counter()

    def count(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        seen[" ".join(statement.split()[:3])] += 1

    sa.event.listen(engine, "before_cursor_execute", count)
    yield seen
    sa.event.remove(engine, "before_cursor_execute", count)


def test_a_batch_costs_the_same_statements_whatever_its_number_of_turns(
    engine: Engine, tenant: str, statements: collections.Counter[str]
) -> None:
    runs = []
    for size in (2, 12):
        worker = new_worker(engine, batch_turns=size)
        texts = [f"@fact k{i}|Statement {i}|0.9\n@entity Tool{i}|0.9" for i in range(size)]
        record(engine, tenant, *texts, session=f"s-{size}")
        visible(worker, size)
        statements.clear()
        report = worker.run_once()
        assert (report.turns, report.events) == (size, 2 * size)
        runs.append(sum(statements.values()))
    assert runs[0] == runs[1]
    assert runs[1] <= 14  # lock, reads, settings, counters, one append, checkpoint, unlock


def test_each_turn_of_a_batch_follows_its_own_tenants_settings(engine: Engine, tenant: str) -> None:
    other = f"{tenant}-b"
    tenant_settings.change(engine, other, TenantSettingsChanged(auto_promote=True))
    worker = new_worker(engine, batch_turns=10)
    record(engine, tenant, "decision: we ship on Fridays")
    record(engine, other, "decision: we ship on Fridays")
    drain(worker, 2)
    (plain,) = [r.event for r in extracted(engine, tenant, worker.extractor.name)]
    (promoted,) = [r.event for r in extracted(engine, other, worker.extractor.name)]
    assert isinstance(plain, FactExtracted)
    assert isinstance(promoted, MemoryPromoted)


def test_two_tenants_giving_a_turn_the_same_id_each_keep_their_own_words(engine: Engine, tenant: str) -> None:
    """Turn ids are unique per tenant only ("1", "msg-0"). The worker once keyed a
    batch's extractions by turn id alone: one tenant's words became the other's facts
    (an audit found "Project Lyra uses Redis" served to the tenant that said Orion)."""
    other = f"{tenant}-b"
    extractor = SeenExtractor(toy_name())
    worker = new_worker(engine, extractor, batch_turns=10)
    record(engine, tenant, "@fact stack|Project Orion uses Kafka|0.9", prefix="dup")
    record(engine, other, "@fact stack|Project Lyra uses Redis|0.9", prefix="dup")
    drain(worker, 2)
    (mine,) = [r.event for r in extracted(engine, tenant, extractor.name)]
    (theirs,) = [r.event for r in extracted(engine, other, extractor.name)]
    assert isinstance(mine, FactExtracted) and isinstance(theirs, FactExtracted)
    assert (mine.statement, theirs.statement) == ("Project Orion uses Kafka", "Project Lyra uses Redis")
    assert extractor.tenants_per_call == [{tenant}, {other}]  # no call sees two tenants' words


class SeenExtractor(ToyExtractor):
    """The toy extractor, noting which tenants each call was given."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.tenants_per_call: list[set[str]] = []

    def extract(self, turns: Sequence[TurnText]) -> Mapping[str, TurnExtraction]:
        self.tenants_per_call.append({t.tenant_id for t in turns})
        return super().extract(turns)


def test_settings_of_many_tenants_are_read_at_once(engine: Engine, tenant: str) -> None:
    on, off = f"{tenant}-on", f"{tenant}-off"
    tenant_settings.change(engine, on, TenantSettingsChanged(auto_promote=True))
    tenant_settings.change(engine, on, TenantSettingsChanged(recall=False))
    tenant_settings.change(engine, off, TenantSettingsChanged(capture=False))
    with engine.connect() as conn:
        many = tenant_settings.load_many(conn, [on, off, tenant])
        assert many == {t: tenant_settings.load(conn, t) for t in (on, off, tenant)}
    assert (many[on].auto_promote, many[on].recall, many[off].capture) == (True, False, False)
    assert many[tenant] == tenant_settings.TenantSettings()


def test_counters_of_many_conversations_are_saved_in_one_statement(
    engine: Engine, tenant: str, statements: collections.Counter[str]
) -> None:
    rows = {(tenant, f"s{i}"): {"entities": i, "refused_secrets": 1} for i in range(5)}
    with db.begin(engine) as tx:
        statements.clear()
        counters.save(tx, "toy@1", rows)
        assert sum(statements.values()) == 1
        counters.save(tx, "toy@1", {(tenant, "s3"): {"entities": 9}})  # an update replaces every count
    with engine.connect() as conn:
        got = counters.load(conn, "toy@1", rows)
        totals = counters.totals(conn, tenant)
    assert got[(tenant, "s3")] == dict.fromkeys(counters.COUNT_COLUMNS, 0) | {"entities": 9}
    assert (totals["entities"], totals["refused_secrets"]) == (0 + 1 + 2 + 9 + 4, 4)


def _move_back(engine: Engine, name: str, to: Any) -> None:
    with db.begin(engine) as tx:
        checkpoints.advance(tx, name, to, 0)


@pytest.mark.parametrize("answer_changed", [False, True])
def test_a_batch_mixing_extracted_and_new_turns_writes_only_the_new(
    engine: Engine, tenant: str, answer_changed: bool
) -> None:
    """Replayed turns are skipped inside the set-wise append; a turn whose answer changed
    makes it fall back to turn-by-turn appends, with the same outcome."""
    worker = new_worker(engine, ToyExtractor(toy_name()), batch_turns=10)
    with engine.connect() as conn:
        start = checkpoints.get(conn, worker.name).cursor  # type: ignore[union-attr]
    old = record(engine, tenant, *(f"@entity Old{i}|0.9" for i in range(3)))
    drain(worker, 3)
    before = extracted(engine, tenant, worker.extractor.name)
    _move_back(engine, worker.name, start)
    if answer_changed:
        worker.extractor.extra_entity = "Docker"  # type: ignore[attr-defined]
    new = record(engine, tenant, "@entity New0|0.9", "@entity New1|0.9")
    report = drain(worker, 5)
    after = extracted(engine, tenant, worker.extractor.name)
    assert after[: len(before)] == before  # nothing of the old turns was written again
    new_counts = (2 if answer_changed else 1, 1)
    assert per_turn(engine, tenant, worker.extractor.name) == dict.fromkeys(old, (1, 1)) | dict.fromkeys(
        new, new_counts
    )
    assert (report.turns, report.events) == (5, 4 if answer_changed else 2)
    with engine.connect() as conn:
        assert counters.totals(conn, tenant)["entities"] == 3 + report.events
