"""Who said a fact of a shared scope: a project's memory holds each member's words,
and "Apollo prefers Vim" in Grace's words must not read as Ada's own words in Ada's
prompt (a person's own "I prefer Vim" goes to their user scope, which no one else
reads). Each chosen fact of a session, project or organisation carries its
speakers (its source turns' subjects, read from the ledger), and formatter
version 4 names them unless the request's user is one of them. The live block,
an as-of block and a replay agree.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import anyio
import pytest
from fastapi.testclient import TestClient

from memledger.api.app import create_app
from memledger.config import Settings
from memledger.events.catalogue import ContextServed
from memledger.library import MemoryLedger
from memledger.mcp_server import build_server
from memledger.service import context_replay, scope_ids
from memledger.service.types import Scopes
from memledger.store import event_reads
from tests.conftest import TestDatabase
from tests.e2e.conftest import scratch_ledger

ADA = Scopes(session="ada-monday", project="apollo", user="ada")
GRACE = Scopes(session="grace-tuesday", project="apollo", user="grace")
ASKED = "Which editor do I prefer?"
VIM = "Apollo prefers Vim over Emacs."


@pytest.fixture(scope="module")
def ledger(database: TestDatabase) -> Iterator[MemoryLedger]:
    """A database of its own: ``process`` extracts every pending turn of the database."""
    opened, drop = scratch_ledger(database, "speakers")
    try:
        yield opened
    finally:
        drop()


@pytest.fixture
def tenant(ledger: MemoryLedger) -> str:
    tenant = f"speakers-{uuid.uuid4().hex[:8]}"
    ledger.record_turn(tenant, "user", VIM, scopes=GRACE)
    ledger.record_turn(tenant, "user", "Apollo uses PostgreSQL for the billing data.", scopes=ADA)
    ledger.process()
    return tenant


def _line(text: str, words: str) -> str:
    [line] = [line for line in text.splitlines() if words in line]
    return line


def test_a_fact_another_member_said_is_named_as_theirs_in_the_block(ledger: MemoryLedger, tenant: str) -> None:
    adas = ledger.context(tenant, ASKED, scopes=ADA).text
    graces = ledger.context(tenant, ASKED, scopes=GRACE).text

    assert "## Project memory" in adas
    assert "said by another user (" in _line(adas, VIM)  # Grace, by her stored id's first digits
    assert "said by" not in _line(graces, VIM)  # her own words
    assert "grace" not in adas  # the stored id is a hash: her name is not in Ada's prompt


def test_the_selection_carries_the_speakers_stored_ids(ledger: MemoryLedger, tenant: str) -> None:
    [vim] = [item for item in ledger.select(tenant, ASKED, scopes=ADA).items if item.text == VIM]
    assert vim.scope == "project"
    assert vim.said_by == (scope_ids.stored_id(ledger.engine, tenant, "user", "grace"),)


def test_the_http_selection_gives_the_speakers(ledger: MemoryLedger, tenant: str) -> None:
    _, key = ledger.create_key(tenant, label="speakers")
    with TestClient(create_app(ledger.database), headers={"Authorization": f"Bearer {key}"}) as http:
        body = {"request": ASKED, "scopes": {"session": ADA.session, "project": ADA.project, "user": ADA.user}}
        answer = http.post("/v1/memory/select", json=body)
    assert answer.status_code == 200, answer.text
    [vim] = [item for item in answer.json()["items"] if item["text"] == VIM]
    grace = scope_ids.stored_id(ledger.engine, tenant, "user", "grace")
    assert vim["said_by"] == [f"another user ({grace.rsplit('.', 1)[-1][:8]})"]  # not an id Ada could name
    assert grace not in answer.text


def test_search_says_who_said_a_shared_fact_and_a_turn(ledger: MemoryLedger, tenant: str) -> None:
    grace = scope_ids.stored_id(ledger.engine, tenant, "user", "grace")
    found = {item.kind: item for item in ledger.search(tenant, "Vim over Emacs", scopes=ADA) if VIM in item.text}
    assert set(found) == {"fact", "turn"}
    # another user by their id's first digits, never the whole id (it would name their memory)
    assert found["fact"].said_by == found["turn"].said_by == (f"another user ({grace[9:17]})",)
    graces = {item.kind: item for item in ledger.search(tenant, "Vim over Emacs", scopes=GRACE) if VIM in item.text}
    assert graces["fact"].said_by == (grace,)  # her own id, which she named


def test_the_mcp_search_says_in_words_who_said_it(ledger: MemoryLedger, tenant: str) -> None:
    def said_by(scopes: Scopes) -> list[list[str]]:
        server = build_server(ledger.database, tenant_id=tenant)
        arguments = {"query": "Vim over Emacs", "session": scopes.session, "project": scopes.project}
        answer = anyio.run(server.call_tool, "memory_search", {**arguments, "user": scopes.user})
        assert not answer.is_error, answer.content
        return [r["said_by"] for r in answer.structured_content["result"] if r["text"] == VIM]

    [[adas], [also_adas]] = said_by(ADA)  # the fact and the turn
    assert adas == also_adas and adas.startswith("another user (")
    assert said_by(GRACE) == [["the user"], ["the user"]]


def test_a_served_block_replays_with_its_speakers_and_an_as_of_block_names_them_too(
    ledger: MemoryLedger, tenant: str
) -> None:
    served = ledger.context(tenant, ASKED, scopes=ADA)
    event_id = _served_event_id(ledger, tenant, served.sha256)
    replayed = context_replay.replay(ledger.database.for_tenant(tenant), tenant, event_id)
    assert replayed.matches and "said by another user (" in replayed.block.text

    position = _last_position(ledger, tenant)
    then = ledger.context(tenant, ASKED, scopes=ADA, as_of=position).text
    assert "said by another user (" in _line(then, VIM)


def test_a_raw_user_id_is_shown_when_the_tenant_does_not_hash(ledger: MemoryLedger) -> None:
    url = ledger.database.url.render_as_string(hide_password=False)
    with MemoryLedger.open(Settings(DATABASE_URL=url, hash_scope_ids=False)) as plain:
        tenant = f"speakers-raw-{uuid.uuid4().hex[:8]}"
        plain.record_turn(tenant, "user", VIM, scopes=GRACE)
        plain.process()
        assert "said by grace" in _line(plain.context(tenant, ASKED, scopes=ADA).text, VIM)
        assert "said by" not in _line(plain.context(tenant, ASKED, scopes=GRACE).text, VIM)


def _served_event_id(ledger: MemoryLedger, tenant: str, sha256: str) -> str:
    with ledger.engine.connect() as conn:
        found = [r for r in event_reads.read_tenant(conn, tenant) if isinstance(r.event, ContextServed)]
    [event_id] = [r.event_id for r in found if r.event.block_hash == sha256]
    return event_id


def _last_position(ledger: MemoryLedger, tenant: str) -> int:
    with ledger.engine.connect() as conn:
        return max(r.position for r in event_reads.read_tenant(conn, tenant))


def test_a_persons_own_fact_reaches_their_next_conversation_and_no_one_elses(ledger: MemoryLedger) -> None:
    """Said in one session with no project, read in the next: it is kept in their user scope."""
    tenant = f"speakers-{uuid.uuid4().hex[:8]}"
    ledger.record_turn(tenant, "user", "I'm allergic to peanuts.", scopes=Scopes(session="monday", user="ada"))
    ledger.process()
    asked = "Book a table for dinner; any allergies to mention?"
    assert "peanuts" in ledger.context(tenant, asked, scopes=Scopes(session="friday", user="ada")).text
    assert "peanuts" not in ledger.context(tenant, asked, scopes=Scopes(session="friday", user="grace")).text


def test_history_of_a_key_finds_each_persons_own_facts_on_it(ledger: MemoryLedger) -> None:
    """A person's own facts are keyed by their speaker ("ada: diet"); asking for "diet"
    finds them (before: "no facts on key 'diet'"), and the whole key finds one person's."""
    tenant = f"speakers-{uuid.uuid4().hex[:8]}"
    ledger.record_turn(tenant, "user", "I'm vegetarian.", scopes=Scopes(session="monday", user="ada"))
    ledger.record_turn(tenant, "user", "I'm vegan.", scopes=Scopes(session="tuesday", user="grace"))
    ledger.process()
    said = {step.payload["statement"] for step in ledger.history(tenant, "Diet")}
    assert said == {"I'm vegetarian.", "I'm vegan."}
    prefix = str(ledger.history(tenant, "diet")[0].payload["key"]).partition(": ")[0]  # Ada's, said first
    assert [s.payload["statement"] for s in ledger.history(tenant, f"{prefix}: diet")] == ["I'm vegetarian."]
