"""The HTTP API as an agent, an auditor and an operator use it: a real ``memledger
serve`` on loopback, an httpx client, keys bound to tenants.

Memory learns only when a test says so (``surfaces.catch_up()``: the extraction
worker and the projectors, run in this process on the same database), so each test
sees exactly the state it set up.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import httpx
import pytest

from memledger.bootstrap import build_worker
from memledger.extraction.heuristic import HeuristicExtractor
from memledger.service import keys
from tests.e2e.conftest import MAX_BODY_BYTES, ApiServer, Caller, CliKey, Surfaces

NewCaller = Callable[[str], Caller]


def scopes(project: str, session: str = "s1", user: str = "alice") -> dict[str, str]:
    return {"session": session, "project": project, "user": user}


def turn(text: str, project: str, turn_id: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"role": "user", "text": text, "scopes": scopes(project)}
    if turn_id is not None:
        body["turn_id"] = turn_id
    return body


def all_events(caller: Caller, **params: Any) -> list[dict[str, Any]]:
    """Every event of the caller's tenant (matching ``params``), following next_after."""
    found: list[dict[str, Any]] = []
    after: str | None = None
    while True:
        page = caller.http.get("/v1/events", params={**params, **({"after": after} if after else {})})
        assert page.status_code == 200, page.text
        body = page.json()
        found.extend(body["events"])
        after = body["next_after"]
        if after is None:
            return found


def error_of(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    """The JSON error body of ``response``, checked for its status, code and message."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    error: dict[str, Any] = response.json()["error"]
    assert error["code"] == code, error
    assert isinstance(error["message"], str)
    assert error["message"].strip()
    return error


def fact_ids(items: list[dict[str, Any]]) -> list[str]:
    return [i["item_id"] for i in items if i["kind"] == "fact"]


def key_actor(surfaces: Surfaces, caller: Caller) -> str:
    """The actor the caller's writes are recorded as: its API key's id."""
    digest = keys.key_hash(caller.key)
    [key_id] = [k.key_id for k in keys.list_keys(surfaces.ledger.engine, caller.tenant) if k.key_sha256 == digest]
    return f"api:key:{key_id}"


@dataclass(frozen=True)
class Seeded:
    """A tenant that said two things about project Phoenix, extracted and projected."""

    caller: Caller
    turn_ids: tuple[str, str]
    fact_id: str


@pytest.fixture(scope="module")
def phoenix(new_caller: NewCaller, surfaces: Surfaces) -> Seeded:
    caller = new_caller("phoenix")
    ids = (f"t-{uuid.uuid4().hex[:8]}", f"t-{uuid.uuid4().hex[:8]}")
    batch = {
        "turns": [
            turn("Project Phoenix uses PostgreSQL.", "phoenix", ids[0]),
            turn("I'm using FastAPI with my colleague Sarah.", "phoenix", ids[1]),
        ]
    }
    assert caller.http.post("/v1/turns", json=batch).status_code == 202
    surfaces.catch_up()
    found = caller.http.get("/v1/search", params={"q": "Phoenix PostgreSQL", "project": "phoenix", "kind": "fact"})
    fact = next(i for i in found.json() if i["text"] == "Project Phoenix uses PostgreSQL.")
    return Seeded(caller=caller, turn_ids=ids, fact_id=fact["item_id"])


@pytest.fixture
def conflicting(new_caller: NewCaller, surfaces: Surfaces) -> tuple[Caller, dict[str, str]]:
    """A tenant whose project Falcon has two caches: an open conflict of two facts."""
    caller = new_caller("falcon")
    batch = {"turns": [turn("Project Falcon uses Redis.", "falcon"), turn("Project Falcon uses Memcached.", "falcon")]}
    assert caller.http.post("/v1/turns", json=batch).status_code == 202
    surfaces.catch_up()
    found = caller.http.get("/v1/search", params={"q": "Falcon Redis Memcached", "project": "falcon", "kind": "fact"})
    by_tool = {i["text"].split()[-1].rstrip("."): i["item_id"] for i in found.json()}
    assert set(by_tool) == {"Redis", "Memcached"}, found.json()
    return caller, by_tool


# -- recording turns -----------------------------------------------------------------------


def test_one_turn_is_accepted_with_its_position_before_extraction(new_caller: NewCaller, surfaces: Surfaces) -> None:
    caller = new_caller("one")
    response = caller.http.post("/v1/turns", json=turn("Project Lark uses Redis.", "lark", "lark-1"))
    assert response.status_code == 202
    body = response.json()
    assert body["turn_ids"] == ["lark-1"]
    assert body["replayed"] == 0
    assert len(body["positions"]) == 1
    assert body["positions"][0] > 0
    # Accepted, not yet learned from: no extraction has run, the worker has it pending.
    assert all_events(caller, type="fact.extracted") == []
    recorded = all_events(caller, type="turn.recorded")
    assert [e["position"] for e in recorded] == body["positions"]
    assert build_worker(surfaces.ledger.database).pending() >= 1


def test_a_batch_of_turns_gets_a_position_for_each_turn(new_caller: NewCaller) -> None:
    caller = new_caller("batch")
    batch = {
        "turns": [
            turn("first", "p", "b-1"),
            {"role": "assistant", "text": "second", "scopes": {"session": "other"}, "turn_id": "b-2"},
            turn("third", "p"),
        ]
    }
    response = caller.http.post("/v1/turns", json=batch)
    assert response.status_code == 202
    body = response.json()
    assert body["turn_ids"][:2] == ["b-1", "b-2"]
    assert body["turn_ids"][2]  # generated for the turn that had none
    assert len(set(body["positions"])) == 3
    assert body["positions"] == sorted(body["positions"])
    recorded = all_events(caller, type="turn.recorded")
    assert sorted(e["position"] for e in recorded) == body["positions"]
    assert {e["payload"]["turn_id"] for e in recorded} == set(body["turn_ids"])


def test_retrying_a_turn_with_the_same_turn_id_records_it_once(new_caller: NewCaller) -> None:
    caller = new_caller("retry")
    first = caller.http.post("/v1/turns", json=turn("Project Wren uses Kafka.", "wren", "wren-1"))
    again = caller.http.post("/v1/turns", json=turn("Project Wren uses Kafka.", "wren", "wren-1"))
    assert first.status_code == again.status_code == 202
    assert again.json()["positions"] == first.json()["positions"]
    assert (first.json()["replayed"], again.json()["replayed"]) == (0, 1)
    assert len(all_events(caller, type="turn.recorded")) == 1


def test_a_buffer_resent_with_new_turns_records_only_the_new_ones(new_caller: NewCaller) -> None:
    """A client that times out and flushes its buffer again, with turns added since,
    loses none of them (before, the whole batch was refused)."""
    caller = new_caller("resent")
    first = caller.http.post("/v1/turns", json=turn("Project Ibis uses Kafka.", "ibis", "ibis-1"))
    buffer = {"turns": [turn("Project Ibis uses Kafka.", "ibis", "ibis-1"), turn("And Redis.", "ibis", "ibis-2")]}

    again = caller.http.post("/v1/turns", json=buffer)

    assert again.status_code == 202, again.text
    assert again.json()["replayed"] == 1
    assert again.json()["positions"][0] == first.json()["positions"][0]
    recorded = all_events(caller, type="turn.recorded")
    assert sorted(e["payload"]["turn_id"] for e in recorded) == ["ibis-1", "ibis-2"]
    assert sorted(e["position"] for e in recorded) == again.json()["positions"]
    changed = {"turns": [turn("Project Ibis uses Pulsar.", "ibis", "ibis-1"), turn("Also S3.", "ibis", "ibis-3")]}
    error = error_of(caller.http.post("/v1/turns", json=changed), 422, "invalid_request")
    assert "was appended before with other content" in error["message"]
    assert len(all_events(caller, type="turn.recorded")) == 2, "nothing of a refused batch is written"


def test_a_batch_with_one_bad_turn_writes_none_of_them(new_caller: NewCaller) -> None:
    caller = new_caller("allornothing")
    batch = {"turns": [turn("fine", "p", "ok-1"), turn("holds a NUL \x00 here", "p", "bad-1")]}
    error = error_of(caller.http.post("/v1/turns", json=batch), 422, "invalid_request")
    assert error["field"] == "turns.1.text"  # the caller's field, not the event's ($.text)
    assert all_events(caller, type="turn.recorded") == []


# -- context, selection, search, graph, provenance ---------------------------------------------


def test_context_is_an_empty_block_that_says_why_when_nothing_matches(new_caller: NewCaller) -> None:
    caller = new_caller("empty")
    response = caller.http.get("/v1/memory/context", params={"request": "Which database does Phoenix use?"})
    assert response.status_code == 200
    body = response.json()
    assert body["item_ids"] == []
    assert body["empty_reason"] == "no memory matches this request"
    assert "no memory matches this request" in body["block"]
    assert body["event_id"].startswith("context:")
    assert body["chars"] == len(body["block"])


def test_context_cites_the_extracted_fact_and_its_turns(phoenix: Seeded) -> None:
    params = {"request": "Which database should the Phoenix API use?", **scopes("phoenix")}
    response = phoenix.caller.http.get("/v1/memory/context", params=params)
    assert response.status_code == 200
    body = response.json()
    assert body["empty_reason"] is None
    assert phoenix.fact_id in body["item_ids"]
    line = next(line for line in body["block"].splitlines() if f"[{phoenix.fact_id}]" in line)
    assert "Project Phoenix uses PostgreSQL." in line
    assert f"turns {phoenix.turn_ids[0]}" in line
    served = all_events(phoenix.caller, type="context.served")
    assert body["event_id"] in {e["event_id"] for e in served}


def test_selection_gives_the_reasons_for_each_item(phoenix: Seeded) -> None:
    body = {"request": "Which database does Phoenix use?", "scopes": scopes("phoenix")}
    response = phoenix.caller.http.post("/v1/memory/select", json=body)
    assert response.status_code == 200
    selection = response.json()
    assert selection["empty_reason"] is None
    assert selection["items"]
    assert all(item["reasons"] for item in selection["items"])
    fact = next(i for i in selection["items"] if i["item_id"] == phoenix.fact_id)
    assert fact["source_turns"] == [phoenix.turn_ids[0]]
    assert any(reason.startswith("text #") for reason in fact["reasons"])


def test_search_finds_facts_entities_and_turns_each_citing_its_turns(phoenix: Seeded) -> None:
    response = phoenix.caller.http.get("/v1/search", params={"q": "Phoenix PostgreSQL", "project": "phoenix"})
    assert response.status_code == 200
    items = response.json()
    assert {i["kind"] for i in items} >= {"fact", "entity", "turn"}
    assert all(i["source_turns"] for i in items)
    only_turns = phoenix.caller.http.get("/v1/search", params={"q": "PostgreSQL", "kind": "turn"}).json()
    assert [i["item_id"] for i in only_turns] == [phoenix.turn_ids[0]]


def test_graph_answers_with_relationships_and_their_turns(phoenix: Seeded) -> None:
    response = phoenix.caller.http.get("/v1/graph", params={"entity": "Phoenix"})
    assert response.status_code == 200
    graph = response.json()
    assert graph["entity"]["entity_id"] == "project:phoenix"
    edge = next(e for e in graph["edges"] if e["relation"] == "USES")
    assert (edge["source_name"], edge["target_name"]) == ("Phoenix", "PostgreSQL")
    assert edge["source_turns"] == [phoenix.turn_ids[0]]
    nobody = phoenix.caller.http.get("/v1/graph", params={"entity": "Atlantis"}).json()
    assert nobody == {"entity": None, "edges": []}


def test_provenance_goes_from_the_fact_back_to_its_turn(phoenix: Seeded) -> None:
    response = phoenix.caller.http.get(f"/v1/provenance/{phoenix.fact_id}")
    assert response.status_code == 200
    chain = response.json()
    step = chain["steps"][0]
    expected = ("fact.extracted", "heuristic", HeuristicExtractor.version)
    assert (step["type"], step["extractor"], step["extractor_version"]) == expected
    assert step["caused_by"] == f"turn:{phoenix.turn_ids[0]}"
    assert [(t["turn_id"], t["text"]) for t in chain["turns"]] == [
        (phoenix.turn_ids[0], "Project Phoenix uses PostgreSQL.")
    ]


# -- memory commands ---------------------------------------------------------------------------


def test_conflicts_are_listed_and_a_person_resolves_one(
    conflicting: tuple[Caller, dict[str, str]], surfaces: Surfaces
) -> None:
    caller, facts = conflicting
    listed = caller.http.get("/v1/memory/conflicts")
    assert listed.status_code == 200
    [conflict] = listed.json()
    assert conflict["state"] == "open"
    assert sorted(conflict["memory_ids"]) == sorted(facts.values())
    path = f"/v1/memory/conflicts/{conflict['conflict_id']}/resolve"
    resolved = caller.http.post(path, json={"chosen_memory_id": facts["Redis"], "reason": "we moved to Redis"})
    assert resolved.status_code == 200
    assert resolved.json() == {"conflict_id": conflict["conflict_id"], "chosen_memory_id": facts["Redis"]}
    surfaces.catch_up()
    [after] = caller.http.get("/v1/memory/conflicts", params={"state": "resolved"}).json()
    assert (after["resolution"], after["manual_choice"], after["winner_ids"]) == (
        "manual",
        facts["Redis"],
        [facts["Redis"]],
    )
    assert after["resolved_by"] == key_actor(surfaces, caller)
    assert caller.http.get("/v1/memory/conflicts", params={"state": "open"}).json() == []
    stranger = caller.http.post(path, json={"chosen_memory_id": "fact-0000000000000000"})
    error_of(stranger, 404, "not_found")


def test_retract_then_restore_change_what_search_finds(
    conflicting: tuple[Caller, dict[str, str]], surfaces: Surfaces
) -> None:
    caller, facts = conflicting
    gone = facts["Memcached"]

    def searched() -> list[str]:
        found = caller.http.get("/v1/search", params={"q": "Falcon cache Redis Memcached", "project": "falcon"})
        return fact_ids(found.json())

    assert gone in searched()
    retracted = caller.http.post(f"/v1/memory/{gone}/retract", json={"reason": "we never used it"})
    assert retracted.status_code == 200
    assert retracted.json() == {"item_id": gone, "kind": "fact", "status": "retracted", "recorded": True}
    surfaces.catch_up()
    assert gone not in searched()
    assert facts["Redis"] in searched()
    [conflict] = caller.http.get("/v1/memory/conflicts").json()
    assert conflict["state"] == "dissolved"
    restored = caller.http.post(f"/v1/memory/{gone}/restore", json={})
    assert restored.status_code == 200
    assert restored.json()["status"] == "restored"
    surfaces.catch_up()
    assert gone in searched()
    assert caller.http.get("/v1/memory/conflicts").json()[0]["state"] == "open"
    kinds = [e["type"] for e in all_events(caller, type=["memory.retracted", "memory.restored"])]
    assert kinds == ["memory.retracted", "memory.restored"]


def test_a_retracted_fact_leaves_the_context_block(
    conflicting: tuple[Caller, dict[str, str]], surfaces: Surfaces
) -> None:
    caller, facts = conflicting
    gone = facts["Memcached"]
    caller.http.post(f"/v1/memory/{gone}/retract", json={"reason": "we never used it"})
    surfaces.catch_up()
    params = {"request": "Which cache does Falcon use?", **scopes("falcon")}
    served = caller.http.get("/v1/memory/context", params=params).json()
    assert served["empty_reason"] is None, served  # a block was selected (not failed open) ...
    assert facts["Redis"] in served["item_ids"]
    assert gone not in served["item_ids"]  # ... without the retracted fact, by any channel (vectors too)


def test_retracting_the_only_fact_of_a_slot_and_restoring_it(new_caller: NewCaller, surfaces: Surfaces) -> None:
    caller = new_caller("ibis")
    assert caller.http.post("/v1/turns", json=turn("Project Ibis uses Redis.", "ibis", "ibis-1")).status_code == 202
    surfaces.catch_up()

    def searched() -> list[str]:
        return fact_ids(caller.http.get("/v1/search", params={"q": "Ibis Redis", "project": "ibis"}).json())

    [fact] = searched()
    assert caller.http.post(f"/v1/memory/{fact}/retract", json={"reason": "wrong"}).status_code == 200
    surfaces.catch_up()  # the facts projection keeps running (it used to halt on a slot left empty)
    assert searched() == []
    facts = next(p for p in caller.http.get("/v1/projections").json() if p["name"] == "facts")
    assert (facts["state"], facts["error"]) == ("live", None)
    assert caller.http.post(f"/v1/memory/{fact}/restore", json={}).status_code == 200
    surfaces.catch_up()
    assert searched() == [fact]


def test_promotion_copies_a_statement_into_the_project_scope(new_caller: NewCaller, surfaces: Surfaces) -> None:
    caller = new_caller("promote")
    body = {
        "kind": "decision",
        "scope": "project",
        "scopes": {"project": "osprey"},
        "statement": "Osprey ships on Fridays.",
    }
    response = caller.http.post("/v1/memory/promote", json=body)
    assert response.status_code == 200
    memory_id = response.json()["memory_id"]
    assert memory_id.startswith("promoted-")
    surfaces.catch_up()
    found = caller.http.get("/v1/search", params={"q": "Osprey Fridays", "project": "osprey", "kind": "fact"}).json()
    promoted = next(i for i in found if i["item_id"] == memory_id)
    assert (promoted["text"], promoted["scope"], promoted["category"]) == (
        "Osprey ships on Fridays.",
        "project",
        "decision",
    )
    [step] = caller.http.get(f"/v1/provenance/{memory_id}").json()["steps"]
    assert (step["type"], step["actor"]) == ("memory.promoted", key_actor(surfaces, caller))
    no_key = {**body, "scopes": {}}
    assert (
        "project scope key"
        in error_of(caller.http.post("/v1/memory/promote", json=no_key), 422, "invalid_request")["message"]
    )
    unknown = {**body, "statement": None, "memory_id": "fact-0000000000000000"}
    error_of(caller.http.post("/v1/memory/promote", json=unknown), 404, "not_found")


# -- auditors and operators ----------------------------------------------------------------------


def test_events_come_in_pages_linked_by_next_after(new_caller: NewCaller) -> None:
    caller = new_caller("pages")
    batch = {"turns": [turn(f"turn {n}", "p", f"page-{n}") for n in range(5)]}
    assert caller.http.post("/v1/turns", json=batch).status_code == 202
    everything = caller.http.get("/v1/events", params={"limit": 1000}).json()
    assert everything["next_after"] is None
    positions = [e["position"] for e in everything["events"]]
    assert positions == sorted(positions)
    assert len(positions) == 6  # the key's issue, then five turns
    paged: list[int] = []
    after: str | None = None
    pages = 0
    while True:
        page = caller.http.get("/v1/events", params={"limit": 2, **({"after": after} if after else {})}).json()
        pages += 1
        paged.extend(e["position"] for e in page["events"])
        after = page["next_after"]
        if after is None:
            break
    assert paged == positions
    assert pages >= 3
    from_position = caller.http.get("/v1/events", params={"after": positions[2]}).json()
    assert [e["position"] for e in from_position["events"]] == positions[3:]


def test_events_filter_by_type(new_caller: NewCaller) -> None:
    caller = new_caller("types")
    assert caller.http.post("/v1/turns", json=turn("hello", "p")).status_code == 202
    assert {e["type"] for e in all_events(caller)} == {"api_key.issued", "turn.recorded"}
    assert [e["type"] for e in all_events(caller, type="turn.recorded")] == ["turn.recorded"]
    assert len(all_events(caller, type=["turn.recorded", "api_key.issued"])) == 2
    assert all_events(caller, type="fact.extracted") == []


def test_events_filter_by_time_of_recording(new_caller: NewCaller) -> None:
    caller = new_caller("times")
    assert caller.http.post("/v1/turns", json=turn("hello", "p")).status_code == 202
    events = all_events(caller)
    first, last = (datetime.fromisoformat(e["recorded_at"]) for e in (events[0], events[-1]))
    assert first < last
    after_first = all_events(caller, since=(first + timedelta(microseconds=1)).isoformat())
    assert [e["event_id"] for e in after_first] == [e["event_id"] for e in events[1:]]
    up_to_first = all_events(caller, until=first.isoformat())
    assert [e["event_id"] for e in up_to_first] == [events[0]["event_id"]]
    assert all_events(caller, since=(last + timedelta(seconds=1)).isoformat()) == []


def test_projections_report_version_position_lag_and_state(phoenix: Seeded) -> None:
    response = phoenix.caller.http.get("/v1/projections")
    assert response.status_code == 200
    rows = {row["name"]: row for row in response.json()}
    assert set(rows) >= {"turns", "facts", "entities", "relationships", "api_keys", "embeddings"}
    for row in rows.values():
        assert row["state"] == "live"
        assert row["error"] is None
        assert {"version", "position", "lag_events", "lag_seconds"} <= set(row)


def test_public_health_says_up_or_down_only(server: ApiServer, surfaces: Surfaces) -> None:
    """Its details (every tenant's lag and backlog) need the operator key: test_health_access.py."""
    surfaces.catch_up()
    response = httpx.get(f"{server.base_url}/health", timeout=30)  # no key needed
    assert response.status_code == 200, response.text
    assert response.json() == {"status": "ok"}


# -- tenant settings -----------------------------------------------------------------------------


def test_with_capture_off_turns_are_refused_and_nothing_is_written(new_caller: NewCaller) -> None:
    caller = new_caller("capture")
    switched = caller.http.post("/v1/settings", json={"capture": False})
    assert switched.status_code == 200
    assert switched.json() == {
        "capture": False,
        "recall": True,
        "auto_promote": False,
        "broad_scope_writes": False,
        "extraction_mode": None,
    }
    assert caller.http.get("/v1/settings").json()["capture"] is False
    refused = caller.http.post("/v1/turns", json=turn("Project Kite uses Redis.", "kite"))
    assert "capture" in error_of(refused, 403, "capture_off")["message"]
    batch = caller.http.post("/v1/turns", json={"turns": [turn("one", "kite"), turn("two", "kite")]})
    error_of(batch, 403, "capture_off")
    assert all_events(caller, type="turn.recorded") == []
    assert caller.http.post("/v1/settings", json={"capture": True}).json()["capture"] is True
    assert caller.http.post("/v1/turns", json=turn("Project Kite uses Redis.", "kite")).status_code == 202


def test_a_settings_change_naming_no_switch_is_refused_and_records_nothing(new_caller: NewCaller) -> None:
    """Before, POST /v1/settings {} appended an empty settings event each time."""
    caller = new_caller("nosettings")
    message = error_of(caller.http.post("/v1/settings", json={}), 422, "invalid_request")["message"]
    assert "names at least one switch" in message
    assert all_events(caller, type="tenant.settings_changed") == []


def test_with_recall_off_context_is_an_empty_block_that_says_so(phoenix: Seeded) -> None:
    http = phoenix.caller.http
    params = {"request": "Which database should the Phoenix API use?", **scopes("phoenix")}
    try:
        assert http.post("/v1/settings", json={"recall": False}).json()["recall"] is False
        body = http.get("/v1/memory/context", params=params).json()
        assert body["item_ids"] == []
        assert body["empty_reason"] == "recall is switched off for this tenant"
        assert "recall is switched off" in body["block"]
        selection = http.post("/v1/memory/select", json={"request": params["request"], "scopes": scopes("phoenix")})
        assert selection.json()["empty_reason"] == "recall is switched off for this tenant"
    finally:
        assert http.post("/v1/settings", json={"recall": True}).json()["recall"] is True
    assert phoenix.fact_id in http.get("/v1/memory/context", params=params).json()["item_ids"]


# -- authentication and tenants ----------------------------------------------------------------


@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Bearer mlk_not-a-key"}, {"X-API-Key": "mlk_not-a-key"}, {"Authorization": "Basic eDp5"}],
    ids=["no key", "wrong bearer key", "wrong X-API-Key", "basic auth"],
)
@pytest.mark.parametrize(
    ("method", "path"),
    [("GET", "/v1/search?q=x"), ("POST", "/v1/turns"), ("GET", "/v1/events"), ("GET", "/v1/settings")],
)
def test_requests_without_a_valid_key_are_401(
    server: ApiServer, headers: dict[str, str], method: str, path: str
) -> None:
    response = server.client().request(method, path, headers=headers, json=turn("x", "p"))
    error_of(response, 401, "unauthorized")


def test_the_cli_issued_key_works_as_bearer_and_as_x_api_key(api_server: tuple[ApiServer, CliKey]) -> None:
    server, issued = api_server
    for header in ("bearer", "x-api-key"):
        response = server.client(issued.key, header=header).post("/v1/turns", json=turn("hi", "p"))
        assert response.status_code == 202, response.text
    events = server.client(issued.key).get("/v1/events", params={"type": "turn.recorded"}).json()["events"]
    assert {e["tenant_id"] for e in events} == {issued.tenant}
    assert len(events) == 2


def test_a_key_never_reaches_another_tenants_data(new_caller: NewCaller, surfaces: Surfaces) -> None:
    owner, other = new_caller("owner"), new_caller("other")
    assert (
        owner.http.post("/v1/turns", json=turn("Project Albatross uses Cassandra.", "albatross", "alb-1")).status_code
        == 202
    )
    surfaces.catch_up()
    found = owner.http.get("/v1/search", params={"q": "Albatross Cassandra", "project": "albatross"}).json()
    fact = fact_ids(found)[0]
    assert owner.http.get(f"/v1/provenance/{fact}").status_code == 200
    http = other.http
    assert http.get("/v1/search", params={"q": "Albatross Cassandra", "project": "albatross"}).json() == []
    context = http.get("/v1/memory/context", params={"request": "What does Albatross use?", "project": "albatross"})
    assert context.json()["item_ids"] == []
    selection = http.post(
        "/v1/memory/select", json={"request": "Albatross Cassandra", "scopes": {"project": "albatross"}}
    )
    assert selection.json()["items"] == []
    assert http.get("/v1/graph", params={"entity": "Albatross"}).json() == {"entity": None, "edges": []}
    assert http.get("/v1/memory/conflicts").json() == []
    events = all_events(other)
    assert {e["tenant_id"] for e in events} == {other.tenant}
    assert "alb-1" not in str(events)
    for item in (fact, "project:albatross", "alb-1"):
        error_of(http.get(f"/v1/provenance/{item}"), 404, "not_found")
    error_of(http.post(f"/v1/memory/{fact}/retract", json={}), 404, "not_found")
    error_of(http.post(f"/v1/memory/{fact}/restore", json={}), 404, "not_found")
    promote = {"kind": "decision", "scope": "project", "scopes": {"project": "albatross"}, "memory_id": fact}
    error_of(http.post("/v1/memory/promote", json=promote), 404, "not_found")
    assert fact in fact_ids(owner.http.get("/v1/search", params={"q": "Albatross", "project": "albatross"}).json())


# -- errors ------------------------------------------------------------------------------------


def test_errors_are_json_with_a_stable_code_and_a_message(new_caller: NewCaller) -> None:
    http = new_caller("errors").http
    error_of(http.get("/v1/provenance/fact-0000000000000000"), 404, "not_found")
    error_of(http.post("/v1/memory/nothing-here/retract", json={}), 404, "not_found")
    error_of(http.post("/v1/memory/nothing-here/retract"), 404, "not_found")  # the body (a reason) is optional
    error_of(http.get("/v1/events", params={"after": "yesterday"}), 422, "invalid_request")


@pytest.mark.parametrize(
    ("method", "path", "kwargs", "field"),
    [
        ("GET", "/v1/search", {}, "q"),
        ("GET", "/v1/search", {"params": {"q": "x", "k": 0}}, "k"),
        ("GET", "/v1/memory/context", {"params": {"request": "x", "budget": 10}}, "budget"),
        ("GET", "/v1/memory/context", {"params": {"request": "x", "style": "html"}}, "style"),
        ("POST", "/v1/memory/select", {"json": {"request": ""}}, "request"),
        ("POST", "/v1/memory/select", {"json": {"request": "x", "budgets": 1}}, "budgets"),
        ("POST", "/v1/settings", {"json": {"capture": "maybe"}}, "capture"),
        ("GET", "/v1/events", {"params": {"limit": 0}}, "limit"),
        ("GET", "/v1/graph", {"params": {"entity": "x", "depth": 9}}, "depth"),
    ],
)
def test_validation_errors_name_the_field(
    new_caller: NewCaller, method: str, path: str, kwargs: dict[str, Any], field: str
) -> None:
    http = new_caller("invalid").http
    error = error_of(http.request(method, path, **kwargs), 422, "invalid_request")
    assert error["field"] == field
    assert error["message"].startswith(f"{field}: ")


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"role": "bot", "text": "x"}, "role"),
        ({"role": "user"}, "text"),
        ({"turns": [{"role": "user", "text": "x", "bogus": 1}]}, "turns.0.bogus"),
        ({"turns": [{"role": "bot", "text": "x"}]}, "turns.0.role"),
        ({"turns": []}, "turns"),
    ],
    ids=["one turn", "one turn without text", "batch unknown field", "batch bad role", "empty batch"],
)
def test_validation_errors_of_turns_name_the_field_of_the_shape_sent(
    new_caller: NewCaller, body: dict[str, Any], field: str
) -> None:
    error = error_of(new_caller("turnfield").http.post("/v1/turns", json=body), 422, "invalid_request")
    assert error["field"] == field


def test_bodies_over_the_limit_are_refused_with_413(new_caller: NewCaller) -> None:
    caller = new_caller("big")
    text = "x" * (MAX_BODY_BYTES + 1)
    error = error_of(caller.http.post("/v1/turns", json=turn(text, "p")), 413, "body_too_large")
    assert str(MAX_BODY_BYTES) in error["message"]

    def chunks() -> Iterator[bytes]:  # no Content-Length: the server must count
        yield b'{"role": "user", "scopes": {}, "text": "'
        for _ in range(MAX_BODY_BYTES // 1024 + 1):
            yield b"y" * 1024
        yield b'"}'

    chunked = caller.http.post("/v1/turns", content=chunks(), headers={"content-type": "application/json"})
    error_of(chunked, 413, "body_too_large")
    assert all_events(caller, type="turn.recorded") == []
    assert caller.http.post("/v1/turns", json=turn("x" * 1000, "p")).status_code == 202


@pytest.mark.parametrize(
    ("method", "path", "status", "code"),
    [("GET", "/v1/nothing", 404, "not_found"), ("DELETE", "/v1/search", 405, "method_not_allowed")],
    ids=["unknown route", "wrong method"],
)
def test_unknown_routes_and_methods_answer_in_the_error_format(
    new_caller: NewCaller, method: str, path: str, status: int, code: str
) -> None:
    error_of(new_caller("routes").http.request(method, path), status, code)


def test_an_unparsable_body_answers_in_the_error_format(new_caller: NewCaller) -> None:
    response = new_caller("json").http.post(
        "/v1/memory/select", content=b'{"request": ', headers={"content-type": "application/json"}
    )
    error_of(response, 422, "invalid_request")


def test_an_unparsable_body_names_no_field(new_caller: NewCaller) -> None:
    response = new_caller("json").http.post(
        "/v1/memory/select", content=b'{"request": ', headers={"content-type": "application/json"}
    )
    assert "field" not in response.json()["error"]


@pytest.mark.parametrize(
    ("path", "params", "status", "code"),
    [
        ("/v1/memory/context", {"request": "x", "max_tokens": 1}, 422, "invalid_request"),
        ("/v1/search", {"q": "\x00"}, 422, "invalid_request"),
        ("/v1/provenance/%00", {}, 422, "invalid_request"),
        ("/v1/events", {"since": "2020-01-01T00:00:00"}, 422, "invalid_request"),
        ("/v1/events", {"after": str(2**64)}, 422, "invalid_request"),
    ],
    ids=["max_tokens below the block header", "NUL in search", "NUL in an item id", "naive since", "huge after"],
)
def test_bad_input_is_a_client_error_not_a_server_error(
    new_caller: NewCaller, path: str, params: dict[str, Any], status: int, code: str
) -> None:
    error_of(new_caller("badinput").http.get(path, params=params), status, code)


def test_a_turn_time_with_an_extreme_utc_offset_is_recorded_or_refused_as_bad_input(new_caller: NewCaller) -> None:
    caller = new_caller("offset")
    response = caller.http.post("/v1/turns", json={**turn("hi", "p"), "occurred_at": "2026-01-01T00:00:00-23:00"})
    assert response.status_code in {202, 422}, response.text


def test_an_empty_scope_key_means_no_scope_and_the_block_is_recorded(new_caller: NewCaller) -> None:
    caller = new_caller("emptyscope")
    response = caller.http.get("/v1/memory/context", params={"request": "anything", "project": ""})
    assert response.status_code == 200
    [served] = all_events(caller, type="context.served")
    assert served["event_id"] == response.json()["event_id"]
    assert served["payload"]["scopes"].get("project") is None
