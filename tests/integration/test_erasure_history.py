"""Erasure and the past: the ledger's history (``as_of`` selections, ``history.state_at``,
a key's history) is folded without erased events, as the projectors fold it; and a fact
another person stated too survives the erasure whatever the order of extraction.
"""

from __future__ import annotations

import argparse
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import msgspec
import pytest
from sqlalchemy.engine import Engine

from memledger.cli import erasure_commands
from memledger.errors import InvalidCommand, NotFound
from memledger.events.catalogue import FactExtracted, Scopes, SubjectErased
from memledger.events.envelope import NewEvent, Recorded
from memledger.extraction.heuristic import HeuristicExtractor
from memledger.projectors import registry, runner
from memledger.service import context, context_replay, erasure, history, memory, provenance, reextraction, scope_ids
from memledger.service.record import TurnInput, record_turns
from memledger.service.search import search
from memledger.store import event_reads, event_store
from tests.conftest import DEADLINE_MS
from tests.integration.test_erasure import ADA, GRACE, SECRET_WORDS, _learn, _say, find_everywhere
from tests.integration.test_projections_support import fresh_database, url_of

if TYPE_CHECKING:
    from tests.conftest import TestDatabase

ERASED = "[erased]"


@pytest.fixture(scope="module")
def engine(database: TestDatabase) -> Iterator[Engine]:
    with fresh_database(database, "erasure_history") as fresh:
        for projector in registry.all_projectors():
            runner.install(fresh, projector)
        yield fresh


def _events(engine: Engine, tenant: str) -> list[Recorded]:
    with engine.connect() as conn:
        return event_reads.read_tenant(conn, tenant, limit=100_000)


def _scopes(user: str) -> Scopes:
    return Scopes(session=f"{user}-session", project="phoenix", user=user)


def test_the_past_is_folded_without_the_erased_events(engine: Engine) -> None:
    tenant = "t-history"
    _say(engine, tenant, "ada", ADA)
    _say(engine, tenant, "grace", GRACE)
    _learn(engine)
    before_erasure = max(rec.position for rec in _events(engine, tenant))
    with engine.connect() as conn:
        then = history.state_at(conn, tenant, event_reads.cursor_at(conn, before_erasure))
    assert any("Zorblaxify" in row.statement for row in then.facts.values())  # the past held Ada's words

    erasure.erase(engine, tenant, "ada")

    assert any(isinstance(rec.event, SubjectErased) for rec in _events(engine, tenant))
    with engine.connect() as conn:
        now_of_then = history.state_at(conn, tenant, event_reads.cursor_at(conn, before_erasure))
    statements = {row.memory_id: row.statement for row in now_of_then.facts.values()}
    assert ERASED not in statements.values() and ERASED not in {row.key for row in now_of_then.facts.values()}
    assert not [eid for eid in now_of_then.entities if "erased" in eid]
    assert not [key for key in now_of_then.relationships if "erased" in key]
    assert not [text for text in statements.values() for word in SECRET_WORDS if word.lower() in text.lower()]
    # Grace's facts are still there, and active: nothing "[erased]" superseded them.
    assert set(statements.values()) == set(GRACE)
    assert {row.status for row in now_of_then.facts.values()} == {"active"}
    # An as-of selection serves no placeholder either.
    request = context.SelectRequest(
        tenant,
        _scopes("grace"),
        "how do we deploy phoenix",
        as_of=before_erasure,
        min_confidence=0.0,
        deadline_ms=DEADLINE_MS,
    )
    selection = context.select(engine, request)
    assert selection.empty_reason is None and selection.items
    assert not [item for item in selection.items if ERASED in item.text or "erased" in item.item_id]
    # No key leads to the erased facts.
    assert provenance.key_history(engine, tenant, ERASED) == []


def test_a_fact_grace_states_after_ada_survives_adas_erasure(engine: Engine) -> None:
    """Ada's fact is projected before Grace says the same; erasing Ada leaves Grace's."""
    tenant = "t-said-later"
    said = "I use PostgreSQL for the Phoenix project."
    _say(engine, tenant, "ada", [said])
    _learn(engine)
    _say(engine, tenant, "grace", [said])
    _learn(engine)
    grace = scope_ids.stored_id(engine, tenant, "user", "grace")
    before = search(engine, tenant, _scopes("grace"), "PostgreSQL", kinds=["fact"])
    # "phoenix: database" is said by both; "ada: database" and "grace: database" by one each
    assert sorted(len(item.source_turns) for item in before) == [1, 1, 2]

    erasure.erase(engine, tenant, "ada")
    for projector in registry.all_projectors():
        runner.catch_up(engine, projector)

    found = search(engine, tenant, _scopes("grace"), "PostgreSQL", kinds=["fact"])
    assert [item.text for item in found] and {item.text for item in found} == {said}
    grace_turns = {rec.event.turn_id for rec in _events(engine, tenant) if getattr(rec.event, "subject", None) == grace}
    assert len(found) == 2  # the project's fact and Grace's own
    assert grace_turns and all(set(item.source_turns) <= grace_turns for item in found)


def test_a_block_served_before_an_erasure_replays_without_the_erased_words_and_says_why(engine: Engine) -> None:
    tenant = "t-replay"
    _say(engine, tenant, "ada", ADA)
    apollo = Scopes(session="grace-session", project="apollo", user="grace")
    record_turns(engine, tenant, [TurnInput(role="user", text="I prefer Vim over Emacs.", scopes=apollo)])
    _learn(engine)
    asked = "How do we deploy Phoenix with Zorblaxify?"
    adas = context.build_context(engine, context.SelectRequest(tenant, _scopes("ada"), asked, deadline_ms=DEADLINE_MS))
    graces = context.build_context(
        engine, context.SelectRequest(tenant, apollo, "Which editor do I prefer?", deadline_ms=DEADLINE_MS)
    )
    assert "Zorblaxify" in adas.block.text and "Vim" in graces.block.text

    erasure.erase(engine, tenant, "ada")

    # The record of a block that served Ada's words is erased with them.
    own = context_replay.replay(engine, tenant, adas.event_id)
    assert not own.matches and own.erasures_since == 1 and own.record_erased
    assert not [word for word in SECRET_WORDS if word in own.block.text]
    # A block made of Grace's words alone replays exactly, and says an erasure came since.
    hers = context_replay.replay(engine, tenant, graces.event_id)
    assert hers.matches and hers.erasures_since == 1 and not hers.record_erased and hers.erased_items == ()
    assert hers.block.text == graces.block.text


def test_commands_on_an_item_or_a_conflict_leave_no_name_in_a_stream_id(engine: Engine) -> None:
    """Stream ids are chained, so erasure cannot change them: the streams of a
    retraction, a restoration and a person's choice in a conflict hold no name."""
    tenant = "t-streams"
    _say(engine, tenant, "ada", ADA)
    _learn(engine)
    ada = scope_ids.stored_id(engine, tenant, "user", "ada")
    turns = [rec for rec in _events(engine, tenant) if getattr(rec.event, "subject", None) == ada]
    project = turns[0].event.scopes.project  # type: ignore[attr-defined]
    days = [
        FactExtracted(
            memory_id=f"fact-{i:016x}",
            scope="project",
            scope_key=project,
            key="zorblaxify deploy day",
            statement=f"Phoenix deploys with Zorblaxify on {day}",
            category="decision",
            confidence=0.9,
            source_turns=(rec.event.turn_id,),  # type: ignore[attr-defined]
        )
        for i, (rec, day) in enumerate(zip(turns, ["Fridays", "Mondays"], strict=False))
    ]
    news = [NewEvent(event=e, event_id=f"ext-{uuid.uuid4()}", occurred_at=datetime.now(UTC)) for e in days]
    with engine.begin() as tx:
        event_store.append(tx, tenant, f"test:{uuid.uuid4().hex[:8]}", news, None)
    _learn(engine)
    memory.retract(engine, tenant, "tool:zorblaxify", reason="not used")
    memory.restore(engine, tenant, "tool:zorblaxify")
    (conflict,) = memory.conflicts(engine, tenant)
    memory.resolve_conflict(engine, tenant, conflict.conflict_id, days[0].memory_id, reason="Fridays")
    _learn(engine)

    erasure.erase(engine, tenant, "ada")

    streams = {rec.stream_id for rec in _events(engine, tenant)}
    assert not [stream for stream in streams for word in SECRET_WORDS if word.lower() in stream.lower()]
    assert not find_everywhere(engine, list(SECRET_WORDS))


def test_a_turn_resent_after_its_erasure_is_a_retry_and_stays_erased(engine: Engine) -> None:
    tenant = "t-resent"
    turn = TurnInput(role="user", text="I use Zorblaxify every day.", scopes=_scopes("ada"), turn_id="ada-1")
    record_turns(engine, tenant, [turn])
    erasure.erase(engine, tenant, "ada")
    before = _events(engine, tenant)

    (again,) = record_turns(engine, tenant, [turn])  # e.g. a client retrying a send it saw fail

    assert again.replayed
    assert _events(engine, tenant) == before
    assert not find_everywhere(engine, list(SECRET_WORDS))
    # A turn id reused for other words is no retry: refused, not dropped as one.
    vim = TurnInput(role="user", text="I use Vim.", scopes=_scopes("grace"), turn_id="grace-1")
    record_turns(engine, "t-resent-2", [vim])
    with pytest.raises(InvalidCommand, match="'turn:grace-1' was appended before with other content"):
        record_turns(engine, "t-resent-2", [msgspec.structs.replace(vim, text="I use Emacs.")])


def test_a_request_naming_no_user_in_a_session_the_subject_spoke_in_is_erased(engine: Engine) -> None:
    tenant = "t-session-requests"
    _say(engine, tenant, "ada", ADA)
    _say(engine, tenant, "grace", GRACE)
    _learn(engine)
    adas = context.build_context(
        engine,
        context.SelectRequest(
            tenant, Scopes(session="ada-session"), "How do I ship Zorblaxify to Quentavius?", deadline_ms=DEADLINE_MS
        ),
    )
    graces = context.build_context(
        engine,
        context.SelectRequest(
            tenant, Scopes(session="grace-session"), "Which editor do I prefer?", deadline_ms=DEADLINE_MS
        ),
    )

    erasure.erase(engine, tenant, "ada")

    requests = {
        rec.event_id: rec.event.request for rec in _events(engine, tenant) if rec.event_id.startswith("context:")
    }
    assert requests[adas.event_id] == ERASED
    assert requests[graces.event_id] == "Which editor do I prefer?"


def test_the_erase_command_names_the_shadows_it_dropped(
    engine: Engine, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    tenant = "t-erase-command"
    _say(engine, tenant, "ada", ADA[:1])
    _learn(engine)
    reextraction.rebuild_into(engine, HeuristicExtractor(), "trial")
    monkeypatch.setenv("DATABASE_URL", url_of(engine))
    args = argparse.Namespace(
        tenant=tenant, subject="ada", reason="request 9", actor="dpo", no_wait=False, no_vacuum=True, json=False
    )

    assert erasure_commands.erase_command(args) == 0

    said = capsys.readouterr().out
    assert "re-extraction shadows dropped (build them again to compare): trial" in said
    with pytest.raises(NotFound):
        reextraction.diff(engine, "trial")
