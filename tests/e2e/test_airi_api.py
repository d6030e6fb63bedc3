"""The AIRI-style API (/api/...) as a client written for AIRI's memory service uses it:
its routes, field names and bearer key (moeru-ai/airi, services/memory-service and
stage-ui's useMemoryService), against a real ``memledger serve`` and PostgreSQL."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

import httpx

from tests.e2e.conftest import ApiServer, Caller, Surfaces


class AiriMemoryClient:
    """What AIRI's client sends: JSON bodies with AIRI's names, ``Authorization: Bearer``."""

    def __init__(self, http: httpx.Client, model_name: str) -> None:
        self.http = http
        self.model_name = model_name

    def store_user_message(self, content: str, platform: str = "web") -> httpx.Response:
        body = {"content": content, "platform": platform, "modelName": self.model_name}
        return self.http.post("/api/messages", json=body)

    def store_ai_response(self, prompt: str, response: str, platform: str = "web") -> httpx.Response:
        body = {"prompt": prompt, "response": response, "platform": platform, "modelName": self.model_name}
        return self.http.post("/api/completions", json=body)

    def context(self, message: str) -> httpx.Response:
        return self.http.post("/api/context", json={"message": message, "modelName": self.model_name})

    def structured_context(self, message: str) -> httpx.Response:
        return self.http.post("/api/context/structured", json={"message": message, "modelName": self.model_name})

    def conversations(self, limit: int = 10, before: int | None = None) -> httpx.Response:
        params: dict[str, Any] = {"limit": limit, "modelName": self.model_name}
        if before is not None:
            params["before"] = before
        return self.http.get("/api/conversations", params=params)


def _client(new_caller: Callable[[str], Caller]) -> tuple[Caller, AiriMemoryClient]:
    caller = new_caller("airi")
    return caller, AiriMemoryClient(caller.http, f"model-{uuid.uuid4().hex[:6]}")


def test_a_message_recorded_is_in_a_later_context(new_caller: Callable[[str], Caller], surfaces: Surfaces) -> None:
    _, airi = _client(new_caller)
    stored = airi.store_user_message("Project Phoenix uses PostgreSQL.")
    assert stored.status_code == 200, stored.text
    assert stored.json()["modelName"] == airi.model_name and stored.json()["platform"] == "web"
    assert stored.json()["id"] and isinstance(stored.json()["created_at"], int)
    surfaces.catch_up()
    context = airi.context("Which database does Phoenix use?")
    assert context.status_code == 200, context.text
    assert isinstance(context.json(), str)
    assert "PostgreSQL" in context.json()
    by_get = airi.http.get("/api/context", params={"message": "Which database?", "modelName": airi.model_name})
    assert by_get.status_code == 200 and "PostgreSQL" in by_get.json()


def test_another_model_does_not_read_the_message(new_caller: Callable[[str], Caller], surfaces: Surfaces) -> None:
    caller, airi = _client(new_caller)
    airi.store_user_message("Project Kestrel uses CockroachDB.")
    surfaces.catch_up()
    other = AiriMemoryClient(caller.http, "another-model")
    assert "CockroachDB" not in other.context("Which database does Kestrel use?").json()


def test_structured_context_has_airis_shape(new_caller: Callable[[str], Caller], surfaces: Surfaces) -> None:
    _, airi = _client(new_caller)
    airi.store_user_message("Project Phoenix uses PostgreSQL.")
    airi.store_ai_response("Which database?", "Phoenix uses PostgreSQL.")
    surfaces.catch_up()
    found = airi.structured_context("Which database does Phoenix use?")
    assert found.status_code == 200, found.text
    body = found.json()
    assert set(body) == {"workingMemory", "semanticMemory", "structuredKnowledge", "goalContext"}
    recent = body["workingMemory"]
    assert "Project Phoenix uses PostgreSQL." in [m["content"] for m in recent["recentMessages"]]
    assert [c["response"] for c in recent["recentCompletions"]] == ["Phoenix uses PostgreSQL."]
    fragments = body["semanticMemory"]["shortTerm"] + body["semanticMemory"]["longTerm"]
    assert any("PostgreSQL" in f["content"] for f in fragments), body
    assert {"id", "content", "memory_type", "category", "importance", "emotional_impact"} <= set(fragments[0])
    assert body["goalContext"] == {"longTermGoals": [], "shortTermIdeas": []}


def test_conversations_page_back_through_messages_and_completions(new_caller: Callable[[str], Caller]) -> None:
    _, airi = _client(new_caller)
    for n in range(3):
        assert airi.store_user_message(f"question {n}").status_code == 200
        assert airi.store_ai_response(f"question {n}", f"answer {n}").status_code == 200
    first = airi.conversations(limit=4).json()
    assert [m["content"] for m in first["messages"]] == ["question 1", "answer 1", "question 2", "answer 2"]
    assert [m["type"] for m in first["messages"]] == ["user", "assistant"] * 2
    assert first["hasMore"] is True and first["modelName"] == airi.model_name
    rest = airi.conversations(limit=4, before=first["nextCursor"]).json()
    assert [m["content"] for m in rest["messages"]] == ["question 0", "answer 0"]
    assert rest["hasMore"] is False


def test_queue_status_counts_the_tenants_backlog(new_caller: Callable[[str], Caller], surfaces: Surfaces) -> None:
    _, airi = _client(new_caller)
    before = airi.http.get("/api/queue/status").json()
    assert before["pending"] == 0 and before["total"] == 0
    airi.store_user_message("I prefer tabs.")
    during = _status_once_counted(airi)
    assert (during["pending"], during["total"]) == (1, 1)
    surfaces.catch_up()
    after = airi.http.get("/api/queue/status").json()
    assert (after["pending"], after["processed"], after["total"]) == (0, 1, 1)


def test_settings_round_trip_and_airis_provider_settings_are_ignored(new_caller: Callable[[str], Caller]) -> None:
    _, airi = _client(new_caller)
    assert airi.http.get("/api/settings").json()["capture"] is True
    saved = airi.http.post("/api/settings", json={"capture": False, "llmModel": "gpt-4o", "llmTemperature": 0.7})
    assert saved.status_code == 200, saved.text
    assert saved.json()["status"] == "success"
    assert saved.json()["ignored"] == ["llmModel", "llmTemperature"]
    assert airi.http.get("/api/settings").json()["capture"] is False
    refused = airi.store_user_message("not recorded")
    assert refused.status_code == 403
    assert airi.context("still served").status_code == 200  # capture off: context serves, records nothing
    assert airi.conversations().json()["messages"] == []


def test_a_key_is_required_but_not_for_health(server: ApiServer, surfaces: Surfaces) -> None:
    surfaces.catch_up()  # other tests leave projections behind, and a minute's lag is a 503
    anonymous = AiriMemoryClient(server.client(), "m")
    assert anonymous.store_user_message("hello").status_code == 401
    assert anonymous.context("hello").status_code == 401
    assert anonymous.http.get("/api/conversations").status_code == 401
    assert anonymous.http.get("/api/queue/status").status_code == 401
    assert anonymous.http.get("/api/settings").status_code == 401
    assert anonymous.http.get("/api/test-conn").status_code == 401
    health = anonymous.http.get("/api/health")
    assert health.status_code == 200 and health.json()["status"] == "ok" and health.json()["timestamp"]


def test_bad_input_names_the_field(new_caller: Callable[[str], Caller]) -> None:
    caller, airi = _client(new_caller)
    cases = [
        ("/api/messages", {"platform": "web"}, "content"),
        ("/api/completions", {"prompt": "p", "response": 7}, "response"),
        ("/api/context", {"modelName": "m"}, "message"),
        ("/api/context/structured", {"message": ""}, "message"),
        ("/api/settings", {"captur": False}, "captur"),
    ]
    for path, body, field in cases:
        answer = caller.http.post(path, json=body)
        assert answer.status_code == 422, (path, answer.text)
        assert answer.json()["error"]["field"] == field, (path, answer.json())
    limit = airi.http.get("/api/conversations", params={"limit": 0})
    assert limit.status_code == 422 and limit.json()["error"]["field"] == "limit"
    assert caller.http.get("/api/test-conn").json()["status"] == "authenticated"


def _status_once_counted(airi: AiriMemoryClient, timeout: float = 30.0) -> dict[str, Any]:
    """The queue status once the stored turn is counted: the count reads gap-safe, so a
    transaction open anywhere on the shared server holds a new turn back for a moment."""
    deadline = time.monotonic() + timeout
    while True:
        status: dict[str, Any] = airi.http.get("/api/queue/status").json()
        if status["total"] or time.monotonic() > deadline:
            return status
        time.sleep(0.05)
