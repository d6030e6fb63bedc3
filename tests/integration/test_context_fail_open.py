"""What a failed-open context says and records: the reason names the kind of failure,
never the SQL or its parameters (the block goes into a prompt, and the record into the
ledger, whose payloads erasure cannot reach); an event id is given only for a block the
ledger recorded; a token model the ledger could not record is refused up front.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
from sqlalchemy.engine import Engine

from memledger.errors import InvalidCommand, InvalidIdentifier
from memledger.events.catalogue import ContextServed, Scopes
from memledger.service import context
from memledger.store import event_reads
from tests.integration.test_projections_support import fresh_database

if TYPE_CHECKING:
    from tests.conftest import TestDatabase

SCOPES = Scopes(session="s1", project="phoenix", user="ada")
REQUEST = "How do I deploy Zorblaxify to Quentavius?"


@pytest.fixture(scope="module")
def no_read_models(database: TestDatabase) -> Iterator[Engine]:
    """A migrated ledger whose read models were never installed: every selection fails."""
    with fresh_database(database, "fail_open") as fresh:
        yield fresh


def _served(engine: Engine, tenant: str) -> list[ContextServed]:
    with engine.connect() as conn:
        return [r.event for r in event_reads.read_tenant(conn, tenant) if isinstance(r.event, ContextServed)]


def test_a_database_error_is_named_by_its_kind_without_sql_or_the_requests_words(no_read_models: Engine) -> None:
    tenant = f"t-{uuid.uuid4().hex[:8]}"
    served = context.build_context(no_read_models, context.SelectRequest(tenant, SCOPES, REQUEST))

    assert served.selection.empty_reason == "memory unavailable (database error: UndefinedTable)"
    assert "SELECT" not in served.block.text and "Zorblaxify" not in served.block.text
    [event] = _served(no_read_models, tenant)
    assert event.empty_reason == served.selection.empty_reason
    assert served.event_id  # recorded: the ledger itself was there


def test_an_as_of_position_beyond_a_bigint_is_refused_naming_as_of(no_read_models: Engine) -> None:
    """The caller's mistake is raised when the request is made, before anything is
    read or recorded (before, it failed open into an empty block)."""
    tenant = f"t-{uuid.uuid4().hex[:8]}"
    with pytest.raises(InvalidCommand, match=r"as_of must be a ledger position from 0 to 2\*\*63 - 1, not"):
        context.SelectRequest(tenant, SCOPES, REQUEST, as_of=2**63)
    assert _served(no_read_models, tenant) == []


def test_a_block_the_ledger_did_not_record_comes_without_an_event_id(no_read_models: Engine) -> None:
    tenant = f"t-{uuid.uuid4().hex[:8]}"
    too_long = "deploy " * 200_000  # 1.4 MB: above the ledger's 1 MiB payload limit
    served = context.build_context(no_read_models, context.SelectRequest(tenant, SCOPES, too_long))
    assert served.block.text  # the agent still gets its block
    assert served.event_id == ""
    assert _served(no_read_models, tenant) == []


@pytest.mark.parametrize("model", ["gpt\x00-4o", "x" * 300, "bad\ud800"])
def test_a_token_model_the_ledger_cannot_record_is_refused_and_nothing_is_recorded(
    no_read_models: Engine, model: str
) -> None:
    tenant = f"t-{uuid.uuid4().hex[:8]}"
    with pytest.raises(InvalidIdentifier, match="token_model"):
        context.build_context(no_read_models, context.SelectRequest(tenant, SCOPES, REQUEST), token_model=model)
    assert _served(no_read_models, tenant) == []
