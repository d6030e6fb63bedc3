"""What a failed-open context says and records: the reason names the kind of failure,
never the SQL or its parameters (the block goes into a prompt, and the record into the
ledger, whose payloads erasure cannot reach); an event id is given only for a block the
ledger recorded; a token model the ledger could not record is refused up front.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from memledger import bootstrap
from memledger.adapters.embedding import MiniLmEmbedder
from memledger.config import Settings
from memledger.errors import InvalidCommand, InvalidIdentifier
from memledger.events.catalogue import ContextServed, Scopes
from memledger.library import MemoryLedger
from memledger.service import context, context_limits, context_replay, served_blocks
from memledger.store import event_reads
from tests.conftest import DEADLINE_MS
from tests.e2e.conftest import scratch
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
    gone = sa.create_engine(no_read_models.url.set(database=f"gone_{uuid.uuid4().hex[:8]}"))  # no such database
    try:
        served = context.build_context(gone, context.SelectRequest(tenant, SCOPES, REQUEST))
    finally:
        gone.dispose()
    assert served.block.text  # the agent still gets its block
    assert served.selection.empty_reason is not None
    assert served.selection.empty_reason.startswith("memory unavailable")
    assert served.event_id == ""


@pytest.mark.parametrize("model", ["gpt\x00-4o", "x" * 300, "bad\ud800"])
def test_a_token_model_the_ledger_cannot_record_is_refused_and_nothing_is_recorded(
    no_read_models: Engine, model: str
) -> None:
    tenant = f"t-{uuid.uuid4().hex[:8]}"
    with pytest.raises(InvalidIdentifier, match="token_model"):
        context.build_context(no_read_models, context.SelectRequest(tenant, SCOPES, REQUEST), token_model=model)
    assert _served(no_read_models, tenant) == []


def test_a_request_too_long_to_record_is_served_empty_with_the_reason_and_recorded(engine: Engine, tenant: str) -> None:
    """HTTP and MCP refuse a request over MAX_REQUEST_CHARS; in process it is the chat's data,
    not the caller's bug, so it fails open. Before, ~1 MB was selected on but not recorded."""
    long_request = "Which database does Phoenix use? " * 40_000  # ~1.3 MB
    served = context.build_context(engine, context.SelectRequest(tenant, SCOPES, long_request))

    assert served.selection.items == ()
    assert served.selection.empty_reason == (
        f"request too long ({len(long_request)} characters, above 10000): ask with the question alone"
    )
    assert served.event_id, "recorded"
    [event] = _served(engine, tenant)
    assert event.request == long_request[: context_limits.MAX_REQUEST_CHARS]
    assert context_replay.replay(engine, tenant, served.event_id).matches


@pytest.fixture(scope="module")
def library(database: TestDatabase) -> Iterator[MemoryLedger]:
    """Requests through the application role's engine, as agents make them."""
    with scratch(database, "fail_open_app") as opened:
        yield opened


def test_a_block_past_its_deadline_is_still_recorded_and_replays(library: MemoryLedger, tenant: str) -> None:
    """Before, the application role's connection kept the selection's statement timeout for
    the record, the very deadline the selection had missed: a failed-open block was never
    recorded (event_id "")."""
    library.record_turn(tenant, "user", "Project Phoenix uses PostgreSQL.", scopes=SCOPES)
    library.process()

    served = library.context(tenant, REQUEST, scopes=SCOPES, deadline_ms=1)

    assert "memory unavailable (deadline exceeded)" in served.text
    assert served.event_id, "recorded"
    assert library.replay(tenant, served.event_id).matches


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("deadline_ms", True, "deadline_ms must be an int, not True"),
        ("deadline_ms", "100", "deadline_ms must be an int, not '100'"),
        ("budget_chars", 5000.0, "budget_chars must be an int, not 5000.0"),
        ("min_confidence", "0.7", "min_confidence must be a number from 0 to 1, not '0.7'"),
        ("min_confidence", 1.5, "min_confidence must be from 0 to 1, not 1.5"),
    ],
)
def test_a_request_argument_of_the_wrong_kind_is_refused_naming_it(field: str, value: object, message: str) -> None:
    """Before, ``deadline_ms=True`` reached PostgreSQL as a 1 ms timeout and "100" raised a
    bare TypeError."""
    with pytest.raises(InvalidCommand, match=re.escape(message)):
        context.SelectRequest("t", SCOPES, REQUEST, **{field: value})  # type: ignore[arg-type]


def test_an_as_of_time_to_come_reads_up_to_now_and_says_so(engine: Engine, tenant: str) -> None:
    """A time in the future used to label the block with it while its content still changed."""
    future = datetime(2999, 1, 1, tzinfo=UTC)
    served = context.build_context(
        engine, context.SelectRequest(tenant, SCOPES, REQUEST, as_of=future, deadline_ms=DEADLINE_MS)
    )

    assert served.selection.as_of is not None
    assert datetime.fromisoformat(served.selection.as_of) <= datetime.now(UTC)
    assert "2999" not in served.block.text


def test_a_served_block_happened_when_it_was_asked_for_not_after_it_was_recorded(engine: Engine, tenant: str) -> None:
    """Its occurred_at used to be taken after the selection, later than the recorded_at of
    the transaction that recorded it."""
    served = context.build_context(engine, context.SelectRequest(tenant, SCOPES, REQUEST))
    with engine.connect() as conn:
        [record] = [r for r in event_reads.read_tenant(conn, tenant) if r.event_id == served.event_id]
    assert record.occurred_at <= record.recorded_at


def test_a_request_made_while_the_model_loads_is_served_without_the_vector_channel(
    library: MemoryLedger, tenant: str
) -> None:
    """Before, the first request of a process waited for the model (~1 s) within its own
    deadline and failed open ("deadline exceeded"); the auditors' first block was empty."""
    library.record_turn(tenant, "user", "Project Phoenix uses PostgreSQL.", scopes=SCOPES)
    library.process()
    embedder = MiniLmEmbedder()  # a process's first: not loaded
    channel = bootstrap.vector_search(library.database, embedder)  # starts loading it in the background
    # A deadline a loaded machine's selection meets (300 ms failed once with two test workers):
    # had the selection waited for the model, its items would carry the vector channel's reason.
    asked = context.SelectRequest(tenant, SCOPES, "Which database does Phoenix use?", deadline_ms=3000)

    selection = context.select(library.engine, asked, vector_search=channel)

    assert selection.empty_reason is None
    assert any("PostgreSQL" in item.text for item in selection.items)
    assert not any("vector" in reason for item in selection.items for reason in item.reasons)
    embedder.load()  # waits for the background load
    assert channel.ready


def test_opening_the_library_starts_loading_the_model(library: MemoryLedger) -> None:
    """So that the first ``context`` of a process, a second later, has the vector channel."""
    url = library.database.url.render_as_string(hide_password=False)
    settings = Settings(DATABASE_URL=url, embedding_threads=3)  # an embedder no other test has loaded
    with MemoryLedger.open(settings):
        embedder = bootstrap.build_embedder(settings)
        assert isinstance(embedder, MiniLmEmbedder)
        waited = 0.0
        while not embedder.loaded and waited < 30:
            time.sleep(0.1)
            waited += 0.1
        assert embedder.loaded, "nothing loaded the model"


def test_a_block_the_formatter_fails_on_is_served_empty_with_the_reason_and_recorded(
    library: MemoryLedger, tenant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug in rendering a selection (once, a relative date the formatter misread) must not
    reach the chat loop: the block fails open, says why, and is recorded as served."""
    library.record_turn(tenant, "user", "Project Phoenix uses PostgreSQL.", scopes=SCOPES)
    library.process()
    render = served_blocks.render

    def fails_on_items(selection: object, **options: object) -> object:
        if getattr(selection, "items", ()):
            raise AttributeError("'NoneType' object has no attribute 'lower'")
        return render(selection, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(served_blocks, "render", fails_on_items)
    block = library.context(tenant, REQUEST, scopes=SCOPES)
    assert block.item_ids == ()
    assert "memory unavailable (AttributeError" in block.text
    assert block.event_id, "recorded"
    monkeypatch.setattr(served_blocks, "render", render)
    assert library.replay(tenant, block.event_id).matches
