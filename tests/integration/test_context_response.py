"""GET /v1/memory/context answers its block encoded once: the body is ``ContextOut``,
field for field, and its served record is in the ledger when the answer arrives."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from memledger.api.app import create_app
from memledger.api.schemas import ContextOut
from memledger.library import MemoryLedger
from memledger.service.record import TurnInput
from memledger.service.types import Scopes
from memledger.store import event_reads
from tests.conftest import TestDatabase
from tests.e2e.conftest import scratch_ledger


@pytest.fixture(scope="module")
def ledger(database: TestDatabase) -> Iterator[MemoryLedger]:
    opened, drop = scratch_ledger(database, "ctxout")
    try:
        yield opened
    finally:
        drop()


def test_the_body_is_context_out_and_its_record_is_stored_before_it_arrives(ledger: MemoryLedger) -> None:
    tenant = f"ctxout-{uuid.uuid4().hex[:8]}"
    said = TurnInput(role="user", text="Project Atlas uses Kafka.", scopes=Scopes(session="s1"))
    ledger.record_turns(tenant, [said])
    ledger.process()
    _, key = ledger.create_key(tenant)
    with TestClient(create_app(ledger.database)) as client:
        response = client.get(
            "/v1/memory/context",
            params={"request": "What does Atlas use?", "session": "s1"},
            headers={"Authorization": f"Bearer {key}"},
        )
        assert response.status_code == 200
        assert response.headers["content-type"] == "application/json"
        body = response.json()
        assert list(body) == list(ContextOut.model_fields)  # every field, in the schema's order
        assert ContextOut.model_validate(body).item_ids, body
        with ledger.engine.connect() as conn:
            recorded = event_reads.read_stream(
                conn, tenant, "context:served:" + body["event_id"].removeprefix("context:")
            )
    assert [r.event_id for r in recorded] == [body["event_id"]]
    assert recorded[0].event.block_hash == body["sha256"]  # type: ignore[attr-defined]
