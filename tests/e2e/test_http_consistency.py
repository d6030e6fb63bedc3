"""What the HTTP API promises an agent between calls: a memory command shows in the
very next context call (the server here runs no workers, so only the command's own
read-your-write can make it show), retracting and restoring are idempotent, every
write records which API key made it, errors name the field the caller sent, and
context fails open (an empty block that says why) even when the database cannot
check the key.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from memledger.api.app import create_app
from memledger.formatting import CONFLICT_FLAG
from memledger.service import keys
from memledger.store import db
from tests.e2e.conftest import ApiServer, Caller, Surfaces
from tests.e2e.test_http_api import NewCaller, all_events, error_of, scopes, turn


def context_of(caller: Caller, request: str, project: str) -> dict[str, Any]:
    served = caller.http.get("/v1/memory/context", params={"request": request, **scopes(project)})
    assert served.status_code == 200, served.text
    body: dict[str, Any] = served.json()
    assert body["empty_reason"] in (None, "no memory matches this request"), body  # not failed open
    return body


def seeded(new_caller: NewCaller, surfaces: Surfaces, project: str, *texts: str) -> tuple[Caller, dict[str, str]]:
    """A tenant that said ``texts`` about ``project``, extracted and projected; its facts by last word."""
    caller = new_caller(project)
    batch = {"turns": [turn(text, project) for text in texts]}
    assert caller.http.post("/v1/turns", json=batch).status_code == 202
    surfaces.catch_up()
    found = caller.http.get("/v1/search", params={"q": " ".join(texts), "project": project, "kind": "fact"})
    facts = {i["text"].split()[-1].rstrip("."): i["item_id"] for i in found.json()}
    assert len(facts) == len(texts), found.json()
    return caller, facts


def test_a_retracted_fact_is_gone_from_the_next_context_and_a_restored_one_is_back(
    new_caller: NewCaller, surfaces: Surfaces
) -> None:
    caller, facts = seeded(new_caller, surfaces, "heron", "Project Heron uses PostgreSQL.")
    fact = facts["PostgreSQL"]
    asked = "Which database does Heron use?"
    assert fact in context_of(caller, asked, "heron")["item_ids"]
    retracted = caller.http.post(f"/v1/memory/{fact}/retract", json={"reason": "wrong"})
    assert fact not in context_of(caller, asked, "heron")["item_ids"]
    restored = caller.http.post(f"/v1/memory/{fact}/restore", json={})
    assert fact in context_of(caller, asked, "heron")["item_ids"]
    assert retracted.status_code == restored.status_code == 200  # 200: applied before the answer


def test_a_promoted_statement_is_in_the_next_context(new_caller: NewCaller) -> None:
    caller = new_caller("kestrel")
    body = {
        "kind": "decision",
        "scope": "project",
        "scopes": scopes("kestrel"),
        "statement": "Kestrel ships on Fridays.",
    }
    promoted = caller.http.post("/v1/memory/promote", json=body)
    assert promoted.json()["memory_id"] in context_of(caller, "When does Kestrel ship?", "kestrel")["item_ids"]
    assert promoted.status_code == 200, promoted.text


def test_a_resolved_conflict_is_not_flagged_in_the_next_context(new_caller: NewCaller, surfaces: Surfaces) -> None:
    caller, facts = seeded(
        new_caller, surfaces, "plover", "Project Plover uses Redis.", "Project Plover uses Memcached."
    )
    asked = "Which cache does Plover use?"
    assert CONFLICT_FLAG in context_of(caller, asked, "plover")["block"]
    [conflict] = caller.http.get("/v1/memory/conflicts").json()
    path = f"/v1/memory/conflicts/{conflict['conflict_id']}/resolve"
    resolved = caller.http.post(path, json={"chosen_memory_id": facts["Redis"], "reason": "we moved"})
    block = context_of(caller, asked, "plover")
    assert CONFLICT_FLAG not in block["block"]
    assert facts["Redis"] in block["item_ids"]
    assert resolved.status_code == 200, resolved.text


def test_retracting_twice_and_restoring_what_is_not_retracted_record_nothing_more(
    new_caller: NewCaller, surfaces: Surfaces
) -> None:
    caller, facts = seeded(new_caller, surfaces, "egret", "Project Egret uses Kafka.")
    fact = facts["Kafka"]
    never = caller.http.post(f"/v1/memory/{fact}/restore", json={})
    assert never.json() == {"item_id": fact, "kind": "fact", "status": "not retracted", "recorded": False}
    first = caller.http.post(f"/v1/memory/{fact}/retract", json={"reason": "wrong"})
    again = caller.http.post(f"/v1/memory/{fact}/retract", json={"reason": "wrong"})
    assert (first.json()["status"], first.json()["recorded"]) == ("retracted", True)
    assert (again.json()["status"], again.json()["recorded"]) == ("already retracted", False)
    assert caller.http.post(f"/v1/memory/{fact}/restore", json={}).json()["status"] == "restored"
    assert caller.http.post(f"/v1/memory/{fact}/restore", json={}).json()["status"] == "not retracted"
    kinds = [e["type"] for e in all_events(caller, type=["memory.retracted", "memory.restored"])]
    assert kinds == ["memory.retracted", "memory.restored"]


def test_every_write_records_the_api_key_that_made_it(
    new_caller: NewCaller, surfaces: Surfaces, server: ApiServer
) -> None:
    one = new_caller("audit")
    other_id, other_key = surfaces.ledger.create_key(one.tenant, label="second")
    other = server.client(other_key)
    assert one.http.post("/v1/turns", json=turn("Project Ibex uses Redis.", "ibex", "ibex-1")).status_code == 202
    assert other.post("/v1/turns", json=turn("Project Ibex uses Nginx.", "ibex", "ibex-2")).status_code == 202
    [one_id] = [k.key_id for k in keys.list_keys(surfaces.ledger.engine, one.tenant) if k.key_id != other_id]
    actors = {e["payload"]["turn_id"]: e["metadata"]["actor"] for e in all_events(one, type="turn.recorded")}
    assert actors == {"ibex-1": f"api:key:{one_id}", "ibex-2": f"api:key:{other_id}"}
    assert other.post("/v1/settings", json={"auto_promote": True}).status_code == 200
    [changed] = all_events(one, type="tenant.settings_changed")
    assert changed["metadata"]["actor"] == f"api:key:{other_id}"
    served = other.get("/v1/memory/context", params={"request": "What does Ibex use?"}).json()["event_id"]
    [context] = [e for e in all_events(one, type="context.served") if e["event_id"] == served]
    assert context["metadata"]["actor"] == f"api:key:{other_id}", "a served block is a write too"


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/v1/turns", {"turns": [turn("fine", "p"), turn("a NUL \x00 here", "p")]}, "turns.1.text"),
        ("/v1/turns", {"role": "user", "text": "hi", "turn_id": "t-\x00"}, "turn_id"),
        ("/v1/turns", {"turns": [{"role": "user", "text": "hi", "turn_id": "t-\x01"}]}, "turns.0.turn_id"),
        (
            "/v1/memory/promote",
            {"kind": "decision", "scope": "project", "scopes": scopes("p"), "statement": "\x00"},
            "statement",
        ),
    ],
    ids=["NUL in a batch's text", "NUL in a turn id", "control character in a batch's turn id", "NUL in a statement"],
)
def test_bad_input_names_the_field_the_caller_sent(
    new_caller: NewCaller, path: str, body: dict[str, Any], field: str
) -> None:
    caller = new_caller("fields")
    error = error_of(caller.http.post(path, json=body), 422, "invalid_request")
    assert error["field"] == field
    assert error["message"].startswith(f"{field}: ")
    assert "turn:" not in error["message"]  # the event id memledger makes is not the caller's business
    assert all_events(caller, type=["turn.recorded", "memory.promoted"]) == []


def test_a_statement_of_one_long_word_is_promoted(new_caller: NewCaller) -> None:
    """The key derived from the statement's first words used to exceed a key's 1,000
    characters and fail on a field ($.key) the caller never sent."""
    caller = new_caller("longword")
    word = "x" * 999
    body = {"kind": "terminology", "scope": "project", "scopes": scopes("p"), "statement": word}
    promoted = caller.http.post("/v1/memory/promote", json=body)
    assert promoted.status_code == 200, promoted.text
    [event] = all_events(caller, type="memory.promoted")
    assert event["payload"]["statement"] == word
    assert len(event["payload"]["key"]) <= 1000


@pytest.fixture
def dead_database(surfaces: Surfaces) -> Iterator[TestClient]:
    """The API over a database that does not exist: every connection fails."""
    url = surfaces.url.set(database=f"gone_{uuid.uuid4().hex[:8]}")
    dead = dataclasses.replace(surfaces.ledger.database, engine=db.create_engine(url), app_engine=db.create_engine(url))
    with TestClient(create_app(dead), raise_server_exceptions=False) as client:
        yield client
    dead.engine.dispose()
    dead.app_engine.dispose()


def test_context_fails_open_when_the_database_cannot_check_the_key(
    dead_database: TestClient, new_caller: NewCaller
) -> None:
    headers = {"Authorization": f"Bearer {new_caller('outage').key}"}
    served = dead_database.get("/v1/memory/context", params={"request": "Which database?"}, headers=headers)
    assert served.status_code == 200, served.text
    body = served.json()
    assert (body["item_ids"], body["event_id"]) == ([], "")
    assert body["empty_reason"].startswith("memory unavailable")
    assert body["empty_reason"] in body["block"]
    selected = dead_database.post("/v1/memory/select", json={"request": "Which database?"}, headers=headers)
    assert (selected.status_code, selected.json()["items"]) == (200, [])
    assert selected.json()["empty_reason"].startswith("memory unavailable")
    error_of(dead_database.get("/v1/search", params={"q": "database"}, headers=headers), 503, "database_unavailable")
