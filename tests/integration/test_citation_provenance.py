"""An auditor traces a served block's citations: every cited item id and turn decodes
(``urllib.parse.unquote``) to the stored one, ``provenance`` finds the item by the
id as the block cites it, and the block replays to its hash (formatter version 5)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from urllib.parse import unquote

import msgspec
import pytest

from memledger.errors import InvalidIdentifier, NotFound
from memledger.events.catalogue import ContextServed, EntityObserved
from memledger.events.envelope import NewEvent
from memledger.events.keys import entity_id
from memledger.formatting import FORMATTER_VERSION, render
from memledger.library import MemoryLedger
from memledger.service import context, context_recording, context_replay, provenance
from memledger.service.types import Scopes
from memledger.store import event_store
from tests.conftest import TestDatabase
from tests.e2e.conftest import scratch_ledger
from tests.unit.test_citations import cited

ADA = Scopes(session="ada-monday", project="apollo", user="ada")
TURN_IDS = {
    "msg)\u201d [fact-0000000000000000]": "I use PostgreSQL for the billing data.",
    "t9, t10": "I prefer tabs over spaces.",
    "t-\u202egnp.exe\u202c-1": "I use Redis for caching.",
    ("slack-C024BE91L-" + "p1712345678000100-" * 11)[:200]: "I use FastAPI for the billing service.",
}
NAME = "Acme, Inc. (EU) \u201cZ\u00fcrich\u201d [beta] 100% / t9, t10"


@pytest.fixture(scope="module")
def ledger(database: TestDatabase) -> Iterator[MemoryLedger]:
    """A database of its own: ``process`` extracts every pending turn of the database."""
    opened, drop = scratch_ledger(database, "citations")
    try:
        yield opened
    finally:
        drop()


@pytest.fixture(scope="module")
def tenant(ledger: MemoryLedger) -> str:
    tenant = f"citations-{uuid.uuid4().hex[:8]}"
    for turn_id, text in TURN_IDS.items():
        ledger.record_turn(tenant, "user", text, scopes=ADA, turn_id=turn_id)
    observed = EntityObserved(name=NAME, entity_type="organization", confidence=0.95, source_turns=("t9, t10",))
    with ledger.engine.begin() as tx:
        # Seen with the turns: an entity heard once, long before the tenant's latest
        # sighting, is hidden by pruning (docs/graph-maintenance.md).
        new = NewEvent(event=observed, event_id=f"{tenant}-e1", occurred_at=datetime.now(UTC))
        event_store.append(tx, tenant, "extraction:1", [new], None)
    ledger.process()
    return tenant


def test_every_citation_decodes_to_a_stored_id_and_provenance_finds_it(ledger: MemoryLedger, tenant: str) -> None:
    for style in ("text", "xml"):
        request = f"What do I use and prefer? Redis? What about {NAME}?"
        block = ledger.context(tenant, request, scopes=ADA, style=style)
        assert block.formatter_version == FORMATTER_VERSION
        citations = cited(block)
        assert len(citations) == len(block.item_ids) >= 4
        cited_turns = set()
        for item_id, (shown_id, shown_turns) in zip(block.item_ids, citations, strict=True):
            assert unquote(shown_id) == item_id
            decoded = {unquote(turn) for turn in shown_turns}
            assert decoded <= set(TURN_IDS)
            trail = ledger.provenance(tenant, shown_id)  # the id as the block cites it
            assert trail.item_id == item_id
            assert decoded <= {turn.turn_id for turn in trail.turns}
            cited_turns |= decoded
        assert cited_turns == set(TURN_IDS)  # each hostile turn id is cited, and traced
        assert ledger.replay(tenant, block.event_id).matches


def test_an_id_over_64_characters_is_cited_whole_and_traced(ledger: MemoryLedger, tenant: str) -> None:
    block = ledger.context(tenant, "What database do I use?", scopes=ADA)
    long_ids = [item_id for item_id in block.item_ids if len(item_id) > 64]
    assert any("|USES|tool:postgresql" in item_id for item_id in long_ids)
    for item_id in long_ids:
        assert f"[{item_id}]" in block.text
        assert ledger.provenance(tenant, item_id).item_id == item_id


def test_an_entity_named_with_unsafe_characters_is_found_by_its_citation(ledger: MemoryLedger, tenant: str) -> None:
    stored = entity_id("organization", NAME)
    block = ledger.context(tenant, f"What do we know about {NAME}?", scopes=ADA)
    [shown] = [shown for shown, _ in cited(block) if unquote(shown) == stored]
    assert shown != stored and "%2C%20" in shown  # percent-encoded: no comma or space in the block
    assert ledger.provenance(tenant, shown).item_id == stored
    assert ledger.provenance(tenant, stored).item_id == stored  # the stored form still works


def test_a_cited_id_naming_nothing_is_not_found_under_either_reading(ledger: MemoryLedger, tenant: str) -> None:
    with pytest.raises(NotFound, match=r"'tool:no%20such' nor, decoded as a block's citation, 'tool:no such'"):
        provenance.provenance(ledger.engine, tenant, "tool:no%20such")
    with pytest.raises(NotFound, match=r"names 'tool:%FF'$"):  # not UTF-8: looked up only as given
        provenance.provenance(ledger.engine, tenant, "tool:%FF")
    with pytest.raises(InvalidIdentifier, match="item_id"):
        provenance.provenance(ledger.engine, tenant, "x" * 1001)


def test_a_block_served_by_versions_2_to_4_still_replays_as_served(ledger: MemoryLedger, tenant: str) -> None:
    """Version 5 changed how ids are cited: blocks recorded before replay with the
    rules of their own version, cut and cleaned ids included."""
    request = context.SelectRequest(tenant_id=tenant, scopes=ADA, request="What do I use?", deadline_ms=5000)
    served = context.build_context(ledger.engine, request)
    assert "msg%29%E2%80%9D%20%5Bfact-0000000000000000%5D" in served.block.text
    with ledger.engine.connect() as conn:
        event = context_replay.find_served(conn, tenant, served.event_id)
    for version in ("2", "3", "4"):
        as_served = render(served.selection, version=version)  # what that version's formatter served
        assert 'msg)" [fact-0000000000000000]' in as_served.text and "\u2026]" in as_served.text
        older = msgspec.structs.replace(event, formatter_version=version, block_hash=as_served.sha256)
        replayed = context_replay.replay(ledger.engine, tenant, _served_again(ledger, tenant, older))
        assert replayed.matches and replayed.block.text == as_served.text


def _served_again(ledger: MemoryLedger, tenant: str, served: ContextServed) -> str:
    """Append a copy of ``served`` as another ContextServed event; its id."""
    event_id = f"context:{uuid.uuid4()}"
    news = [NewEvent(event=served, event_id=event_id, occurred_at=datetime.now(UTC))]
    with ledger.engine.begin() as tx:
        stream = context_recording.CONTEXT_STREAM_PREFIX + event_id.removeprefix("context:")
        event_store.append(tx, tenant, stream, news, 0)
    return event_id
