"""``import --wait`` of a backlog: extracted in worker processes (``ExtractorPool``)
and in large batches while a thread projects and embeds (``EmbedderPool``), it gives
the events and read models an ordinary worker's drain and catch-up give. On a scratch
database: the wait extracts every tenant's pending turns."""

from __future__ import annotations

import collections
import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from memledger import bootstrap
from memledger.adapters.embedding_pool import EmbedderPool
from memledger.events.catalogue import TurnRecorded
from memledger.extraction.protocol import TurnExtraction, TurnText
from memledger.library import MemoryLedger
from memledger.projectors.embeddings.projector import embeddings
from memledger.service import projections, readiness
from memledger.service.extraction_pool import ExtractorPool
from memledger.store import event_reads
from tests.conftest import TestDatabase
from tests.e2e.conftest import scratch

DEV_SET = Path(__file__).resolve().parents[1] / "data" / "conversations_dev.jsonl"


def history(sessions: int) -> list[str]:
    """Conversations of {role, content} messages from the development set's sessions."""
    found = [s for line in DEV_SET.read_text(encoding="utf-8").splitlines() for s in json.loads(line)["sessions"]]
    return [
        json.dumps({
            "id": s["session_id"],
            "messages": [{"role": "user", "content": t["text"], "name": t["speaker"]} for t in s["turns"]],
        })
        for s in found[:sessions]
    ]  # fmt: skip


@pytest.fixture
def ledger(database: TestDatabase) -> Iterator[MemoryLedger]:
    with scratch(database, "ready_backlog") as opened:
        yield opened


def extracted(ledger: MemoryLedger, tenant: str) -> collections.Counter[tuple[Any, ...]]:
    """What extraction wrote for ``tenant``'s turns: each event's type and its words
    (not its ids, which are the tenant's own)."""
    with ledger.engine.connect() as conn:
        recs = event_reads.read_all(conn, tenant_id=tenant, limit=100_000)
    words = ("statement", "name", "relation", "source_name", "target_name", "category", "confidence")
    return collections.Counter(
        (type(r.event).__name__, *(str(getattr(r.event, w, "")) for w in words))
        for r in recs
        if not isinstance(r.event, TurnRecorded)
    )


def vectors(ledger: MemoryLedger, tenant: str) -> dict[tuple[str, str], str]:
    with ledger.engine.connect() as conn:
        rows = conn.execute(
            sa.select(embeddings.c.item_kind, embeddings.c.text_sha256, sa.cast(embeddings.c.embedding, sa.Text)).where(
                embeddings.c.tenant_id == tenant
            )
        ).all()
    return {(kind, sha): vector for kind, sha, vector in rows}


def test_a_backlog_waited_for_gives_what_a_worker_and_catch_up_give(
    ledger: MemoryLedger, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(readiness, "POOL_FROM_TURNS", 10)  # this small backlog through the processes
    read_in_pool = collections.Counter[int]()
    extract = ExtractorPool.extract

    def counting(self: ExtractorPool, turns: Sequence[TurnText]) -> Mapping[str, TurnExtraction]:
        read_in_pool[len(turns)] += 1
        return extract(self, turns)

    monkeypatch.setattr(ExtractorPool, "extract", counting)
    lines = history(12)
    waited = ledger.import_turns("waited", lines, wait=True)
    assert waited.ready_seconds is not None, waited.readiness
    assert read_in_pool and max(read_in_pool) > 10  # batches larger than the worker's 10 turns
    assert not isinstance(ledger.database.embedder, EmbedderPool)  # the application's embedder is its own

    ledger.import_turns("drained", lines)
    bootstrap.build_worker(ledger.database).drain()
    projections.catch_up_all(ledger.engine)
    assert extracted(ledger, "waited") == extracted(ledger, "drained")
    assert sum(extracted(ledger, "waited").values()) > 0
    assert vectors(ledger, "waited") and vectors(ledger, "waited").keys() == vectors(ledger, "drained").keys()
    assert set(vectors(ledger, "waited").values()) == set(vectors(ledger, "drained").values())
