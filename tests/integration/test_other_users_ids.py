"""An answer to one user never carries another user's stored id.

A stored user id (``hid.user.<hex>``) named as ``user=`` reads that user's private
memory, so it must not reach an answer served to anyone else: two people share a
project, and what one is served (context, selection, search, graph, provenance,
over HTTP and MCP) names the other by their name or as "another user", never by
their id. Shown by the real app over a real database.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime

import anyio
import msgspec
import pytest
from fastapi.testclient import TestClient

from memledger.api.app import create_app
from memledger.config import Settings
from memledger.library import MemoryLedger
from memledger.mcp_server import build_server
from memledger.service import scope_ids
from memledger.service.types import Scopes
from tests.conftest import TestDatabase
from tests.e2e.conftest import scratch_ledger

ADA = Scopes(session="ada-monday", project="apollo", user="ada")
GRACE = Scopes(session="grace-tuesday", project="apollo", user="grace")
GRACE_SAID = (
    "Apollo prefers Vim over Emacs.",
    "I use Neovim for Apollo.",
    "I work with Linus on Apollo.",
)
ASKED = "Which editor does Apollo prefer, and who uses Neovim?"


@pytest.fixture(scope="module")
def ledger(database: TestDatabase) -> Iterator[MemoryLedger]:
    opened, drop = scratch_ledger(database, "others")
    try:
        yield opened
    finally:
        drop()


@pytest.fixture(scope="module")
def tenant(ledger: MemoryLedger) -> str:
    tenant = f"others-{uuid.uuid4().hex[:8]}"
    for text in GRACE_SAID:
        ledger.record_turn(tenant, "user", text, scopes=GRACE)
    ledger.record_turn(tenant, "user", "Apollo uses PostgreSQL for the billing data.", scopes=ADA)
    ledger.process()
    return tenant


def _ada_params() -> dict[str, str]:
    return {"session": str(ADA.session), "project": str(ADA.project), "user": str(ADA.user)}


def _http(ledger: MemoryLedger, tenant: str) -> TestClient:
    _, key = ledger.create_key(tenant, label="others")
    return TestClient(create_app(ledger.database), headers={"Authorization": f"Bearer {key}"})


def test_http_context_and_search_name_another_speaker_without_their_id(ledger: MemoryLedger, tenant: str) -> None:
    grace = scope_ids.stored_id(ledger.engine, tenant, "user", "grace")
    ada = scope_ids.stored_id(ledger.engine, tenant, "user", "ada")
    with _http(ledger, tenant) as http:
        text = http.get("/v1/memory/context", params={"request": ASKED, **_ada_params()})
        xml = http.get("/v1/memory/context", params={"request": ASKED, "style": "xml", **_ada_params()})
        found = http.get("/v1/search", params={"q": "Vim Emacs Neovim PostgreSQL Apollo", "k": 50, **_ada_params()})
    assert text.status_code == xml.status_code == found.status_code == 200
    said = {who for item in found.json() for who in item["said_by"]}
    assert said == {"another user (" + grace.removeprefix("hid.user.")[:8] + ")", ada}  # Ada's own id stays
    for block in (text.json()["block"], xml.json()["block"]):
        shown = [line for line in block.splitlines() if "Vim over Emacs" in line]
        assert shown and all("another user (" in line and grace not in line for line in shown)
    assert not [item for item in found.json() if grace in json.dumps([item["said_by"], item["cited"]])]


def test_mcp_search_names_another_speaker_without_their_id(ledger: MemoryLedger, tenant: str) -> None:
    grace = scope_ids.stored_id(ledger.engine, tenant, "user", "grace")
    server = build_server(ledger.database, tenant_id=tenant)
    scopes = {"session": ADA.session, "project": ADA.project, "user": ADA.user}
    answer = anyio.run(server.call_tool, "memory_search", {"query": "Vim over Emacs", "k": 50, **scopes})
    assert not answer.is_error, answer.content
    said = {who for r in answer.structured_content["result"] for who in r["said_by"]}
    assert "another user (" + grace.removeprefix("hid.user.")[:8] + ")" in said
    assert not [r for r in answer.structured_content["result"] if grace in json.dumps([r["said_by"], r["cited"]])]


def test_search_of_a_tenant_that_does_not_hash_never_shows_another_users_key(ledger: MemoryLedger) -> None:
    url = ledger.database.url.render_as_string(hide_password=False)
    with MemoryLedger.open(Settings(DATABASE_URL=url, hash_scope_ids=False)) as plain:
        tenant = f"others-raw-{uuid.uuid4().hex[:8]}"
        plain.record_turn(tenant, "user", GRACE_SAID[0], scopes=GRACE)
        plain.process()
        found = plain.search(tenant, "Vim over Emacs", scopes=ADA)
        assert {who for item in found for who in item.said_by} == {"another user"}
        assert {who for item in plain.search(tenant, "Vim over Emacs", scopes=GRACE) for who in item.said_by} == {
            "grace"
        }


def test_no_http_answer_to_one_user_holds_another_users_stored_id_anywhere(ledger: MemoryLedger, tenant: str) -> None:
    grace = scope_ids.stored_id(ledger.engine, tenant, "user", "grace")
    with _http(ledger, tenant) as http:
        answers = [
            http.get("/v1/memory/context", params={"request": ASKED, **_ada_params()}),
            http.post("/v1/memory/select", json={"request": ASKED, "scopes": _ada_params(), "min_confidence": 0.0}),
            http.get("/v1/search", params={"q": "Vim Emacs Neovim Linus Apollo", "k": 50, **_ada_params()}),
            http.get("/v1/graph", params={"entity": "Neovim", "depth": 2, "user": "ada"}),
        ]
    assert all(answer.status_code == 200 for answer in answers)
    assert not [answer.request.url.path for answer in answers if grace in answer.text]


def test_graph_answers_keep_the_users_own_edges_and_no_one_elses(ledger: MemoryLedger) -> None:
    tenant = f"others-own-{uuid.uuid4().hex[:8]}"
    ledger.record_turn(tenant, "user", "I use Neovim for Apollo.", scopes=GRACE)
    ledger.record_turn(tenant, "user", "I use Emacs for Apollo.", scopes=ADA)
    ledger.process()
    grace = scope_ids.stored_id(ledger.engine, tenant, "user", "grace")
    ada = scope_ids.stored_id(ledger.engine, tenant, "user", "ada")
    mine = ledger.graph(tenant, "me", user="ada")
    assert ("USES", "Emacs") in {(e.relation, e.target_name) for e in mine.edges}
    around = json.dumps(msgspec.to_builtins(ledger.graph(tenant, "Apollo", depth=2, user="ada")))
    assert ada in around and grace not in around
    named_by_id = ledger.graph(tenant, f"user:{grace}", user="ada")
    assert named_by_id.entity is None and named_by_id.edges == []
    nobody = json.dumps(msgspec.to_builtins(ledger.graph(tenant, "Apollo", depth=2)))
    assert "hid.user." not in nobody and "Apollo" in nobody


def test_mcp_graph_and_a_past_block_hold_only_the_users_own_id(ledger: MemoryLedger, tenant: str) -> None:
    grace = scope_ids.stored_id(ledger.engine, tenant, "user", "grace")
    server = build_server(ledger.database, tenant_id=tenant)
    scopes = {"session": ADA.session, "project": ADA.project, "user": ADA.user}
    answer = anyio.run(server.call_tool, "query_graph", {"entity": "Neovim", "depth": 2, **scopes})
    assert not answer.is_error, answer.content
    assert "Apollo" in json.dumps(answer.structured_content) and grace not in json.dumps(answer.structured_content)
    past = ledger.context(tenant, ASKED, scopes=ADA, as_of=datetime.now(UTC))
    assert past.text and grace not in past.text
