"""``memledger projections ...`` as an operator runs it: a subprocess on a database
of its own (so the projections' state is this module's alone)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from memledger.projectors import registry, runner
from memledger.projectors.embeddings.projector import EmbeddingsProjector
from memledger.service import projections as service
from tests.integration.test_embedding_chain_rows import FIRST, Switchable, tenant, turn
from tests.integration.test_embeddings import Writer
from tests.integration.test_projections_support import (
    READ_MODELS,
    append_in_transactions,
    coalesce,
    fresh_database,
    url_of,
)
from tests.support import workload

if TYPE_CHECKING:
    from tests.conftest import TestDatabase

CLI = [sys.executable, "-m", "memledger.cli.main", "projections"]
T0 = datetime(2025, 4, 7, 10, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def ledger(database: TestDatabase) -> Iterator[Engine]:
    """A database with a small mixed workload and no projection installed yet."""
    with fresh_database(database, "proj_cli") as engine:
        append_in_transactions(engine, coalesce(workload.generate(seed=21, tenants=2, turns=60, start=T0), 200))
        yield engine


def projections(engine: Engine, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DATABASE_URL": url_of(engine), **(env or {})}
    return subprocess.run([*CLI, *args], env=env, capture_output=True, text=True, timeout=180, check=False)


def status(engine: Engine) -> dict[str, dict[str, Any]]:
    """Each projection's line (the embedding chain's and a replica's are keyed apart)."""
    result = projections(engine, "status", "--json")
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    return {row["name"]: row for row in rows if "name" in row}


def test_status_lists_every_projection_with_its_lag_before_and_after_a_run(ledger: Engine) -> None:
    before = status(ledger)

    assert set(READ_MODELS) <= set(before)
    assert list(before) == [p.name for p in registry.all_projectors()]
    for name in READ_MODELS:
        row = before[name]
        assert row["state"] in ("not installed", "live")  # connecting installs them
        assert row["applied_events"] == 0
        assert row["lag_events"] > 0, f"{name} has a backlog"
        assert row["lag_seconds"] > 0
        assert {"version", "code_version", "position", "cursor", "applied_events", "lag_seconds"} <= set(row)

    ran = projections(ledger, "run", "--once", *READ_MODELS)
    assert ran.returncode == 0, ran.stderr
    for name in READ_MODELS:
        assert f"{name}: applied {before[name]['lag_events']} events" in ran.stdout

    after = status(ledger)
    for name in READ_MODELS:
        row = after[name]
        assert (row["state"], row["lag_events"], row["lag_seconds"]) == ("live", 0, 0.0)
        assert row["applied_events"] == before[name]["lag_events"]
        code = next(p.version for p in registry.all_projectors() if p.name == name)
        assert row["version"] == row["code_version"] == code
        assert row["position"] > 0
        assert row["error"] is None


def test_verify_all_says_same_and_exits_zero(ledger: Engine) -> None:
    service.catch_up_all(ledger, READ_MODELS)

    result = projections(ledger, "verify", "all")

    assert result.returncode == 0, result.stderr
    for table in (
        "turns.turns",
        "facts.facts",
        "facts.conflicts",
        "entities.entities",
        "relationships.relationships",
    ):
        line = next((x for x in result.stdout.splitlines() if x.startswith(f"{table}:")), None)
        assert line is not None, result.stdout
        assert ": same (" in line
    assert "DIFFERENT" not in result.stdout


def test_verify_json_prints_one_object_per_table(ledger: Engine) -> None:
    service.catch_up_all(ledger, ["relationships"])

    result = projections(ledger, "verify", "relationships", "--json")

    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(r["table"], r["equal"]) for r in rows] == [("relationships", True)]
    assert rows[0]["live_rows"] == rows[0]["rebuilt_rows"] > 0


def test_rebuild_swaps_in_a_copy_and_the_projection_stays_live(ledger: Engine) -> None:
    service.catch_up_all(ledger, ["facts"])
    before = {s.name: s for s in service.statuses(ledger)}["facts"]
    assert before.applied_events > 0

    result = projections(ledger, "rebuild", "facts")

    assert result.returncode == 0, result.stderr
    assert f"facts: rebuilt from {before.applied_events:,} events and swapped in" in result.stdout
    after = {s.name: s for s in service.statuses(ledger)}["facts"]
    assert (after.state, after.applied_events, after.lag_events) == ("live", before.applied_events, 0)
    assert after.cursor == before.cursor


def test_rebuild_with_jobs_rebuilds_each_in_its_own_process_and_they_equal_the_live_rows(ledger: Engine) -> None:
    service.catch_up_all(ledger, ["entities", "relationships"])
    before = {s.name: s for s in service.statuses(ledger)}

    result = projections(ledger, "rebuild", "entities", "relationships", "--jobs", "2")

    assert result.returncode == 0, result.stderr
    for name in ("entities", "relationships"):
        applied = before[name].applied_events
        assert applied > 0
        assert f"{name}: rebuilt from {applied:,} events in " in result.stdout
    after = {s.name: s for s in service.statuses(ledger)}
    assert {n: (after[n].state, after[n].cursor) for n in ("entities", "relationships")} == {
        n: ("live", before[n].cursor) for n in ("entities", "relationships")
    }
    assert all(d.equal for n in ("entities", "relationships") for d in service.verify(ledger, n))


def test_rebuild_with_jobs_embeds_with_the_configured_model(ledger: Engine) -> None:
    """Each rebuilding process builds the embedder the settings name, not the default."""
    service.catch_up_all(ledger, ["embeddings"])  # with the default offline model
    configured = {"MEMLEDGER_EMBEDDING_MODELS": "minilm-float32"}

    result = projections(ledger, "rebuild", "embeddings", "turns", "--jobs", "2", env=configured)

    assert result.returncode == 0, result.stderr
    (table,) = [t for t in runner.projection_tables(registry.by_name("embeddings")) if "model" in t.c]
    with ledger.connect() as conn:
        models = set(conn.execute(sa.select(table.c.model).distinct()).scalars())
    assert models == {"all-MiniLM-L6-v2-onnx-int8"}, models


def test_an_unknown_projection_exits_3_and_lists_the_names_there_are(ledger: Engine) -> None:
    result = projections(ledger, "rebuild", "nosuch")

    assert result.returncode == 3, (result.stdout, result.stderr)
    assert "no projection named 'nosuch'" in result.stderr
    assert ", ".join(p.name for p in registry.all_projectors()) in result.stderr


def test_retry_of_a_projection_that_has_not_failed_says_there_is_nothing_to_retry(ledger: Engine) -> None:
    assert projections(ledger, "run", "--once", "facts").returncode == 0

    def places() -> dict[str, tuple[str, str]]:
        return {s.name: (s.state, s.cursor) for s in service.statuses(ledger)}

    before = places()
    result = projections(ledger, "retry", "facts")

    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "facts has not failed: nothing to retry"
    assert places() == before


def test_status_shows_the_embedding_chain_and_the_rows_waiting_for_its_backfill(database: TestDatabase) -> None:
    """Rows under the chain's second model wait for the backfill; the same rows, with the
    chain's first model alone configured, are of a model outside it. The chain's counters
    are a serving process's (GET /health?detail=1), never printed here."""
    with fresh_database(database, "proj_chain") as engine:
        chain = Switchable()  # answers as "fake/first": its rows are the second model's below
        projector = EmbeddingsProjector(chain)
        runner.install(engine, projector)
        who = tenant()
        Writer(engine, who).append(*(turn(f"t{i}", f"row {i} of the chain ({who})") for i in range(3)))
        runner.catch_up(engine, projector)
        chained = {"MEMLEDGER_EMBEDDING_MODELS": f"openai/fake-primary,{FIRST}"}

        result = projections(engine, "status", "--json", env=chained)
        assert result.returncode == 0, result.stderr
        lines = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
        assert {
            "embedding_chain": {"models": ["openai/fake-primary", FIRST], "waiting": {FIRST: 3}, "outside": {}}
        } in lines

        text = projections(engine, "status", env=chained)
        assert text.returncode == 0, text.stderr
        assert "embedding models: openai/fake-primary, fake/first (the first is the tenants')" in text.stdout
        assert f"rows waiting for the backfill: {FIRST} 3" in text.stdout

        alone = projections(engine, "status", env={"MEMLEDGER_EMBEDDING_MODELS": "openai/fake-primary"})
        assert "rows waiting for the backfill: none" in alone.stdout
        assert f"rows of a model outside the chain (rebuild embeddings): {FIRST} 3" in alone.stdout
