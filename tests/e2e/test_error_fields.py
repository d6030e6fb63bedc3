"""Errors name the request's own field (issue 26, item 4), over a real ``memledger serve``.

Before: a naive time at ``turns[2]`` was reported as ``events[0].occurred_at`` with no
``field``, a duplicate turn id at ``turns[3]`` as ``events[1].event_id``, a NUL in
``turns[1].subject`` as ``subject``; a NUL in search ``q`` and a credential in a
promoted statement named no field; a body that is not UTF-8, JSON nested 5,000 deep or
an integer of 5,000 digits got 400 ``bad_request``; a NUL in a context request was
stored as U+FFFD while search refused it; and the schema let a promoted statement of
5,000 characters past, where the ledger caps it at 2,000.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from memledger.service.keys import KEYS_STREAM
from memledger.service.memory import MAX_PROMOTED_STATEMENT
from tests.e2e.conftest import Caller
from tests.e2e.test_http_api import NewCaller, all_events, error_of, scopes, turn


def batch(*turns: dict[str, Any]) -> dict[str, Any]:
    return {"turns": list(turns)}


def four_turns() -> list[dict[str, Any]]:
    return [turn(f"Turn number {i} of the batch.", "fields", f"f-{i}") for i in range(4)]


def written(caller: Caller) -> list[dict[str, Any]]:
    """The tenant's events but for its key's (the stream every tenant with a key has)."""
    return [e for e in all_events(caller) if e["stream_id"] != KEYS_STREAM]


def refused_naming(response: httpx.Response, field: str) -> dict[str, Any]:
    error = error_of(response, 422, "invalid_request")
    assert error.get("field") == field, error
    return error


def test_a_naive_time_in_a_batch_names_its_turn_and_writes_nothing(new_caller: NewCaller) -> None:
    caller = new_caller("naive")
    turns = four_turns()
    turns[2]["occurred_at"] = "2026-11-21T10:42:00"
    refused_naming(caller.http.post("/v1/turns", json=batch(*turns)), "turns.2.occurred_at")
    assert all_events(caller, type="turn.recorded") == []


def test_a_naive_time_in_one_turn_names_occurred_at(new_caller: NewCaller) -> None:
    caller = new_caller("naive1")
    body = {**turn("A turn without a timezone.", "fields"), "occurred_at": "2026-11-21T10:42:00"}
    refused_naming(caller.http.post("/v1/turns", json=body), "occurred_at")
    assert all_events(caller, type="turn.recorded") == []


def test_a_duplicate_turn_id_in_a_batch_names_its_turn_and_writes_nothing(new_caller: NewCaller) -> None:
    caller = new_caller("dupid")
    turns = four_turns()
    turns[3]["turn_id"] = turns[1]["turn_id"]
    turns[3]["scopes"] = scopes("fields", session="another")  # another stream: its own batch in the store
    error = refused_naming(caller.http.post("/v1/turns", json=batch(*turns)), "turns.3.turn_id")
    assert "turns.1" in error["message"]
    assert all_events(caller, type="turn.recorded") == []


def test_a_nul_in_a_batch_turns_subject_names_its_turn_and_writes_nothing(new_caller: NewCaller) -> None:
    caller = new_caller("nulsubject")
    turns = four_turns()
    turns[1]["subject"] = "al\x00ice"
    refused_naming(caller.http.post("/v1/turns", json=batch(*turns)), "turns.1.subject")
    assert all_events(caller, type="turn.recorded") == []


def test_a_blank_subject_in_a_batch_names_its_turn(new_caller: NewCaller) -> None:
    caller = new_caller("blanksubject")
    turns = four_turns()
    turns[2]["subject"] = "   "
    refused_naming(caller.http.post("/v1/turns", json=batch(*turns)), "turns.2.subject")
    assert all_events(caller, type="turn.recorded") == []


def test_a_nul_in_search_names_q(new_caller: NewCaller) -> None:
    refused_naming(new_caller("nulq").http.get("/v1/search", params={"q": "a\x00b"}), "q")


def test_a_credential_in_a_promoted_statement_names_statement(new_caller: NewCaller) -> None:
    caller = new_caller("secret")
    statement = "The API key is sk-proj-AbCdEfGhIjKlMnOpQrStUv"
    body = {"kind": "decision", "scope": "project", "scopes": scopes("vault"), "statement": statement}
    error = refused_naming(caller.http.post("/v1/memory/promote", json=body), "statement")
    assert "sk-proj" not in error["message"]
    assert all_events(caller, type="memory.promoted") == []


def test_the_promote_schema_caps_statements_where_the_ledger_does(new_caller: NewCaller) -> None:
    caller = new_caller("cap")
    schema = caller.http.get("/openapi.json").json()["components"]["schemas"]["PromoteIn"]
    [bounded] = [s for s in schema["properties"]["statement"]["anyOf"] if s.get("type") == "string"]
    assert bounded["maxLength"] == MAX_PROMOTED_STATEMENT
    body = {"kind": "preference", "scope": "user", "scopes": scopes("p"), "statement": "x" * 3000}
    refused_naming(caller.http.post("/v1/memory/promote", json=body), "statement")


# -- bodies that cannot be parsed -----------------------------------------------------------------

UNPARSABLE = {
    "not UTF-8": (b'{"role": "user", "text": "caf\xe9"}', "UTF-8"),
    "nested 5,000 deep": (b'{"role": "user", "text": ' + b"[" * 5000 + b"]" * 5000 + b"}", "nested"),
    "a 5,000-digit integer": (b'{"request": "x", "budget": ' + b"9" * 5000 + b"}", "digits"),
}


@pytest.mark.parametrize("path", ["/v1/turns", "/v1/memory/select", "/v1/memory/promote"])
@pytest.mark.parametrize("name", list(UNPARSABLE))
def test_an_unparsable_body_is_an_invalid_request_saying_why(new_caller: NewCaller, path: str, name: str) -> None:
    caller = new_caller("unparsable")
    content, said = UNPARSABLE[name]
    response = caller.http.post(path, content=content, headers={"content-type": "application/json"})
    error = error_of(response, 422, "invalid_request")
    assert said in error["message"], error
    assert "field" not in error
    assert written(caller) == []


# -- one rule for text the ledger cannot store ----------------------------------------------------

UNSTORABLE_TEXT = [
    ("GET", "/v1/memory/context", {"params": {"request": "what \x00 now"}}, "request"),
    ("GET", "/v1/memory/context", {"params": {"request": "x", "project": "p\x00"}}, "project"),
    ("GET", "/v1/search", {"params": {"q": "x", "session": "s\x00"}}, "session"),
    ("GET", "/v1/graph", {"params": {"entity": "a\x00"}}, "entity"),
    ("POST", "/v1/memory/select", {"json": {"request": "what \x00 now"}}, "request"),
    ("POST", "/v1/memory/select", {"content": b'{"request": "x", "scopes": {"user": "\\ud800"}}'}, "scopes.user"),
    ("POST", "/v1/turns", {"json": {"role": "user", "text": "hi", "speaker": "A\x00"}}, "speaker"),
    ("POST", "/v1/turns", {"json": {"role": "user", "text": "hi", "scopes": {"project": "\x00"}}}, "scopes.project"),
    ("POST", "/v1/turns", {"json": batch({"role": "user", "text": "hi"}, {"role": "user", "text": "\x00"})}, None),
    ("POST", "/v1/memory/fact-0000000000000000/retract", {"json": {"reason": "r\x00"}}, "reason"),
]


@pytest.mark.parametrize(("method", "path", "kwargs", "field"), UNSTORABLE_TEXT)
def test_text_the_ledger_cannot_store_is_refused_naming_its_field_everywhere(
    new_caller: NewCaller, method: str, path: str, kwargs: dict[str, Any], field: str | None
) -> None:
    caller = new_caller("unstorable")
    response = caller.http.request(method, path, **kwargs)
    refused_naming(response, field or "turns.1.text")
    assert written(caller) == []


@pytest.mark.parametrize("path", ["/v1/search?q=a%00b", "/v1/memory/context?request=a%00b"])
def test_a_request_without_a_key_is_refused_for_the_key_before_its_text(new_caller: NewCaller, path: str) -> None:
    """No word about the request reaches a caller that has not authenticated."""
    caller = new_caller("keyless-nul")
    with httpx.Client(base_url=str(caller.http.base_url)) as keyless:
        response = keyless.get(path)
    assert response.status_code == 401, response.text
    assert caller.http.get(path).status_code == 422  # with the key, the text rule answers
