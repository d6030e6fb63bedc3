"""What the faults tests check after a fault: every turn once, extraction once per
turn, read models equal to a rebuild, nothing of a refused answer anywhere."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from memledger.events.catalogue import TurnRecorded
from memledger.events.codec import tag_of
from memledger.projectors import checkpoints, registry
from memledger.service import projections
from memledger.service.extraction import ExtractionWorker
from memledger.store.schema import events
from tests.integration.test_projections_support import compare_with_rebuild

TURN_TAG = tag_of(TurnRecorded)


def wait_until(
    condition: Callable[[], bool],
    seconds: float,
    what: str,
    *,
    poll: float = 0.05,
    detail: Callable[[], str] = lambda: "",
) -> float:
    """Wait for ``condition``; the seconds it took. Fails naming ``what`` (and ``detail``) on timeout."""
    start = time.monotonic()
    while not condition():
        if time.monotonic() - start >= seconds:
            raise AssertionError(f"timed out after {seconds:.0f} s waiting for {what}; {detail()}")
        time.sleep(poll)
    return time.monotonic() - start


def turns_in_ledger(engine: Engine, tenant_id: str) -> Counter[str]:
    """How many times each turn id was recorded (the event id of a turn is ``turn:<id>``)."""
    with engine.connect() as conn:
        ids = conn.execute(
            sa.select(events.c.event_id).where(events.c.tenant_id == tenant_id, events.c.event_type == TURN_TAG)
        ).scalars()
        return Counter(event_id.removeprefix("turn:") for event_id in ids)


def extracted_turns(engine: Engine, worker: ExtractionWorker) -> set[str]:
    """The turn ids this extractor version wrote results for (one stream per turn)."""
    prefix = f"extraction:{worker.extractor.name}@{worker.extractor.version}:"
    with engine.connect() as conn:
        streams = conn.execute(
            sa.select(events.c.stream_id).distinct().where(events.c.stream_id.startswith(prefix, autoescape=True))
        ).scalars()
        return {stream.removeprefix(prefix) for stream in streams}


def caught_up(engine: Engine, worker: ExtractionWorker) -> bool:
    """True when no turn waits for extraction and every projection is live with no lag."""
    if worker.pending():
        return False
    return all(s.state == "live" and s.lag_events == 0 for s in projections.statuses(engine))


def applied(engine: Engine) -> dict[str, int]:
    """Events applied so far, per checkpoint."""
    with engine.connect() as conn:
        return {cp.name: cp.applied_events for cp in checkpoints.all_checkpoints(conn)}


def assert_read_models_equal_a_rebuild(engine: Engine) -> None:
    """Every projection's live tables equal a clean rebuild up to its checkpoint."""
    for projector in registry.all_projectors():
        diffs = compare_with_rebuild(engine, projector)
        assert diffs, projector.name
        different = [d for d in diffs if not d.equal]
        assert not different, f"{projector.name}: live rows differ from a rebuild: {different}"


def columns_containing(engine: Engine, needle: str) -> list[str]:
    """Every ``schema.table.column`` of the database, outside the catalogues, whose text holds ``needle``."""
    with engine.connect() as conn:
        columns = conn.execute(
            sa.text(  # text(): the catalogue, to search every table whatever its owner
                "SELECT c.table_schema, c.table_name, c.column_name FROM information_schema.columns c"
                " JOIN information_schema.tables t USING (table_schema, table_name)"
                " WHERE t.table_type = 'BASE TABLE'"
                " AND c.table_schema NOT IN ('pg_catalog', 'information_schema')"
                " AND c.data_type IN ('text', 'character varying', 'jsonb', 'json', 'ARRAY', 'tsvector')"
            )
        ).all()
        found = []
        for schema, table, column in columns:
            prep = conn.dialect.identifier_preparer
            where = f"{prep.quote_schema(schema)}.{prep.quote(table)}"
            # text(): identifiers quoted by the dialect; the needle is a bind parameter.
            hit = conn.execute(
                sa.text(f"SELECT 1 FROM {where} WHERE strpos(lower({prep.quote(column)}::text), :n) > 0 LIMIT 1"),
                {"n": needle.lower()},
            ).first()
            if hit:
                found.append(f"{schema}.{table}.{column}")
        return found
