"""Erased text leaves PostgreSQL's files only when the tables are rewritten (issue 26).

``erase`` NULLs the text and VACUUMs, but the old row versions' bytes stay in the
heap and index pages until overwritten; ``compaction.compact`` (``memledger db
compact``) rewrites every erasable table and its indexes, and CHECKPOINTs so the old
files are unlinked. This reads the relations' files on disk, in the server's data
directory (the embedded server of the session, or any server on this machine).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from memledger.events.catalogue import Scopes
from memledger.extraction.heuristic import HeuristicExtractor
from memledger.projectors import registry, runner
from memledger.service import compaction, erasure
from memledger.service.extraction import ExtractionWorker
from memledger.service.record import TurnInput, record_turns
from tests.integration.test_projections_support import fresh_database

if TYPE_CHECKING:
    from tests.conftest import TestDatabase

TENANT = "t-compaction"


@pytest.fixture(scope="module")
def engine(database: TestDatabase) -> Iterator[Engine]:
    with fresh_database(database, "compaction") as fresh:
        for projector in registry.all_projectors():
            runner.install(fresh, projector)
        yield fresh


def _files(engine: Engine) -> list[Path]:
    """Every file of every erasable table: heap, TOAST, and each index of either."""
    # text(): a catalogue query; the relations are named by their oids.
    query = sa.text(
        "SELECT pg_relation_filepath(c.oid) FROM pg_class c WHERE c.oid IN ("
        " SELECT r FROM unnest(CAST(:rels AS regclass[])) r"
        " UNION SELECT reltoastrelid FROM pg_class WHERE oid = ANY(CAST(:rels AS regclass[])) AND reltoastrelid <> 0"
        " UNION SELECT indexrelid FROM pg_index WHERE indrelid = ANY(CAST(:rels AS regclass[]))"
        " OR indrelid IN (SELECT reltoastrelid FROM pg_class WHERE oid = ANY(CAST(:rels AS regclass[]))))"
    )
    names = [f"{t.schema}.{t.name}" if t.schema else t.name for t in compaction.erasable_tables(engine)]
    with engine.connect() as conn:
        home = Path(conn.execute(sa.text("SHOW data_directory")).scalar_one())  # text(): a setting
        paths = conn.execute(query, {"rels": names}).scalars().all()
    found = []
    for relative in paths:
        base = home / relative
        found.extend(p for p in base.parent.glob(f"{base.name}*") if p.name.split(".")[0] == base.name)
    return found


def _holding(files: list[Path], needle: bytes) -> list[str]:
    return sorted(str(f) for f in files if f.exists() and needle in f.read_bytes())


def _checkpoint(engine: Engine) -> None:
    with engine.connect() as conn:
        conn.execution_options(isolation_level="AUTOCOMMIT").execute(sa.text("CHECKPOINT"))  # text(): no construct


def test_erased_text_is_in_no_file_of_the_erasable_tables_after_compaction(engine: Engine) -> None:
    word = f"Zq{uuid.uuid4().hex[:12]}vx"
    scopes = Scopes(session="s1", project="phoenix", user="ada")
    said = [f"I use {word} for all our Phoenix deploys.", f"decision: deploy Phoenix with {word} every Friday"]
    record_turns(engine, TENANT, [TurnInput(role="user", text=t, scopes=scopes) for t in said])
    ExtractionWorker(engine, HeuristicExtractor()).drain()
    for projector in registry.all_projectors():
        runner.catch_up(engine, projector)
    needle = word.encode()
    _checkpoint(engine)  # the pages written to the files
    assert _holding(_files(engine), needle), "the word is on disk before the erasure"

    erasure.erase(engine, TENANT, "ada", reason="test")
    _checkpoint(engine)
    left = _holding(_files(engine), needle)  # VACUUM frees the space; the bytes stay

    report = compaction.compact(engine)

    assert left, "plain VACUUM left the bytes in the files"
    assert report.checkpoint
    rewritten = {r.table for r in report.rewritten}
    assert {"events", "proj_turns.turns", "proj_facts.facts"} <= rewritten, rewritten
    assert _holding(_files(engine), needle) == []
