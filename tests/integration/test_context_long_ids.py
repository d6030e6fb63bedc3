"""A served context is recorded and replays whatever the length of its items' ids:
an entity's id is its type and its name, so a name of 200 characters (the longest
an event takes) makes an id longer than that."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from memledger.events.catalogue import EntityObserved, Scopes
from memledger.events.envelope import NewEvent
from memledger.events.keys import entity_id
from memledger.service import context, context_replay, projections
from memledger.store import event_store

SCOPES = Scopes(session="s-1", project="p-1", user="u-1", org="o-1")
NAME = ("Consolidated Interplanetary Shipping and Logistics Holding " * 4)[:200].strip()


def test_a_served_context_with_an_id_over_200_characters_is_recorded_and_replays(database: Any) -> None:
    engine = database.engine
    projections.install_all(engine)
    tenant = f"long-ids-{uuid.uuid4().hex[:8]}"
    observed = EntityObserved(name=NAME, entity_type="organization", confidence=0.95, source_turns=("t-1",))
    with engine.begin() as tx:
        new = NewEvent(event=observed, event_id=f"{tenant}-e1", occurred_at=datetime(2025, 3, 1, tzinfo=UTC))
        event_store.append(tx, tenant, "extraction:1", [new], None)
    projections.catch_up_all(engine, ["facts", "entities", "relationships"])
    long_id = entity_id("organization", NAME)
    assert len(long_id) > 200

    request = context.SelectRequest(
        tenant_id=tenant, scopes=SCOPES, request=f"What do we know about {NAME}?", deadline_ms=5000
    )
    served = context.build_context(engine, request)

    assert long_id in [item.item_id for item in served.selection.items]
    with engine.connect() as conn:
        event = context_replay.find_served(conn, tenant, served.event_id)
    assert long_id in event.item_ids
    replayed = context_replay.replay(engine, tenant, served.event_id)
    assert replayed.matches and replayed.block.text == served.block.text
