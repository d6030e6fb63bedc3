"""The MCP server as an agent's host uses it: ``memledger mcp --transport stdio`` as a
subprocess, driven by the mcp SDK's own client session over its stdin and stdout.

Starting the server costs seconds, so one session runs the whole conversation
(``transcript``) and each test checks one part of what it answered.
"""

from __future__ import annotations

import json
import sys
import tempfile
import uuid
from dataclasses import dataclass, field
from typing import Any

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from memledger.formatting.tokens import estimate
from tests.e2e.conftest import Surfaces

TOOLS = {
    "memory_context",
    "memory_search",
    "query_graph",
    "graph_stats",
    "maintenance_status",
    "record_turn",
    "promote_memory",
    "memory_provenance",
}
NO_INPUT = {"graph_stats", "maintenance_status"}  # the whole graph: every argument has a default
STATEMENT = "Project Heron uses Kafka."
SCOPE = {"session": "m1", "project": "heron", "user": "dana"}


@dataclass
class Transcript:
    """What the server said, call by call."""

    tenant: str
    turn_id: str
    instructions: str | None = None
    tools: dict[str, Any] = field(default_factory=dict)
    results: dict[str, Any] = field(default_factory=dict)
    stderr: str = ""


def payload(result: Any) -> Any:
    """A tool result's value: the structured content (unwrapped), else the text."""
    assert not result.is_error, result.content
    if result.structured_content is not None:
        content = result.structured_content
        return content["result"] if set(content) == {"result"} else content
    return "\n".join(part.text for part in result.content)


async def converse(surfaces: Surfaces, transcript: Transcript) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memledger.cli.main", "mcp", "--transport", "stdio", "--tenant", transcript.tenant],
        env=surfaces.env,
    )
    with tempfile.TemporaryFile(mode="w+") as errlog:
        try:
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
                await _calls(session, surfaces, transcript)
        finally:
            errlog.seek(0)
            transcript.stderr = errlog.read()


async def _calls(session: ClientSession, surfaces: Surfaces, t: Transcript) -> None:
    with anyio.fail_after(180):
        t.instructions = (await session.initialize()).instructions
        t.tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        call = session.call_tool
        await call("memory_context", {"request": "warming up"})  # loads the embedding model (see conftest.warm_up)
        turn = {"role": "user", "text": STATEMENT, "turn_id": t.turn_id, **SCOPE}
        t.results["record"] = await call("record_turn", turn)
        t.results["record again"] = await call("record_turn", turn)
        t.results["context before"] = await call("memory_context", {"request": "Which broker does Heron use?", **SCOPE})
        await anyio.to_thread.run_sync(surfaces.catch_up)  # the worker and projectors, as a deployment runs them
        t.results["context"] = await call("memory_context", {"request": "Which broker does Heron use?", **SCOPE})
        asked = {"request": "Which broker does Heron use?", **SCOPE}
        t.results["context in tokens"] = await call("memory_context", {**asked, "max_tokens": 180, "style": "xml"})
        t.results["context past deadline"] = await call("memory_context", {**asked, "deadline_ms": 1})
        t.results["search"] = await call("memory_search", {"query": "Heron Kafka", "project": "heron"})
        t.results["other tenant"] = await call("memory_search", {"query": "Albatross Osprey Phoenix"})
        t.results["graph"] = await call("query_graph", {"entity": "Heron", "relation_types": ["USES"]})
        t.results["graph lower case"] = await call("query_graph", {"entity": "Heron", "relation_types": ["uses"]})
        t.results["graph too deep"] = await call("query_graph", {"entity": "Heron", "depth": 9})
        t.results["search k below 1"] = await call("memory_search", {"query": "Heron", "k": -5})
        facts = [i["id"] for i in payload(t.results["search"]) if i["kind"] == "fact"]
        if facts:
            t.results["provenance"] = await call("memory_provenance", {"item_id": facts[0]})
            elsewhere = {"item_id": facts[0], "session": "s-other", "project": "other"}
            t.results["provenance elsewhere"] = await call("memory_provenance", elsewhere)
            t.results["provenance here"] = await call("memory_provenance", {"item_id": facts[0], **SCOPE})
        promote = {"kind": "decision", "scope": "project", "statement": "Heron keeps Kafka.", "project": "heron"}
        t.results["promote"] = await call("promote_memory", promote)
        t.results["unknown provenance"] = await call("memory_provenance", {"item_id": "fact-0000000000000000"})
        t.results["promote nothing"] = await call("promote_memory", {"kind": "decision", "scope": "project"})


@pytest.fixture(scope="module")
def transcript(surfaces: Surfaces) -> Transcript:
    done = Transcript(tenant=f"mcp-{uuid.uuid4().hex[:8]}", turn_id=f"heron-{uuid.uuid4().hex[:8]}")
    surfaces.ledger.record_turn("mcp-other", "user", "Project Albatross uses Cassandra.")  # another tenant's
    anyio.run(converse, surfaces, done)
    return done


def test_the_server_lists_the_memory_tools_each_described(transcript: Transcript) -> None:
    assert set(transcript.tools) == TOOLS
    for name, tool in transcript.tools.items():
        description = tool.description or ""
        assert len(description) >= 120, (name, description)  # more than a title: what, when, and what comes back
        assert len(description.split()) >= 20, (name, description)
        assert tool.input_schema["type"] == "object"
        assert tool.input_schema.get("required") or name in NO_INPUT, name


def test_the_server_tells_the_agent_when_to_use_its_tools(transcript: Transcript) -> None:
    assert transcript.instructions is not None
    for name in ("memory_context", "record_turn", "memory_search", "query_graph"):
        assert name in transcript.instructions


def test_record_turn_returns_the_position_at_once_and_a_retry_is_a_replay(transcript: Transcript) -> None:
    first, again = payload(transcript.results["record"]), payload(transcript.results["record again"])
    assert first["replayed"] is False
    assert len(first["positions"]) == 1
    assert again == {"positions": first["positions"], "replayed": True}


def test_memory_context_is_empty_before_extraction_and_cites_the_turn_after(transcript: Transcript) -> None:
    before = payload(transcript.results["context before"])
    assert "no memory matches this request" in before
    block = payload(transcript.results["context"])
    assert block.startswith("<<< BEGIN PERSISTENT MEMORY")
    line = next(line for line in block.splitlines() if STATEMENT in line)
    assert f"turns {transcript.turn_id}" in line


def test_memory_context_takes_a_token_budget_and_a_deadline_as_http_does(transcript: Transcript) -> None:
    in_tokens = payload(transcript.results["context in tokens"])
    assert in_tokens.startswith("<memory") and estimate(in_tokens) <= 180
    assert STATEMENT in payload(transcript.results["context"])
    assert "deadline exceeded" in payload(transcript.results["context past deadline"])


def test_memory_search_finds_the_fact_with_its_turns(transcript: Transcript) -> None:
    found = payload(transcript.results["search"])
    fact = next(i for i in found if i["kind"] == "fact")
    assert fact["text"] == STATEMENT
    assert fact["turns"] == [transcript.turn_id]
    assert fact["score"] > 0
    # Another tenant's words find nothing of theirs. (The vector channel may find the
    # caller's own Heron here: herons, albatrosses and ospreys are all birds.)
    other = payload(transcript.results["other tenant"])
    assert not any("albatross" in i["text"].lower() or "cassandra" in i["text"].lower() for i in other)
    assert all(i["turns"] == [transcript.turn_id] or not i["turns"] for i in other), other


def test_query_graph_answers_with_the_edge_and_its_turns(transcript: Transcript) -> None:
    graph = payload(transcript.results["graph"])
    assert graph["entity"]["entity_id"] == "project:heron"
    [edge] = graph["edges"]
    assert (edge["source_name"], edge["relation"], edge["target_name"]) == ("Heron", "USES", "Kafka")
    assert edge["source_turns"] == [transcript.turn_id]


def test_query_graph_takes_a_relation_in_any_case(transcript: Transcript) -> None:
    assert payload(transcript.results["graph lower case"]) == payload(transcript.results["graph"])


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("graph too deep", "depth must be between 1 and 3 hops, not 9"),
        ("search k below 1", "k must be between 1 and 100, not -5"),
    ],
)
def test_a_number_out_of_range_is_refused_not_clamped(transcript: Transcript, name: str, reason: str) -> None:
    result = transcript.results[name]
    assert result.is_error
    assert reason in result.content[0].text


def test_memory_provenance_goes_back_to_the_turn(transcript: Transcript) -> None:
    chain = payload(transcript.results["provenance"])
    assert chain["steps"][0]["type"] == "fact.extracted"
    assert chain["steps"][0]["extractor"] == "heuristic"
    assert [(t["turn_id"], t["text"]) for t in chain["turns"]] == [(transcript.turn_id, STATEMENT)]


def test_promote_memory_returns_the_new_memory_id(transcript: Transcript) -> None:
    assert payload(transcript.results["promote"])["memory_id"].startswith("promoted-")


def test_a_failed_tool_call_is_an_error_result_not_a_broken_session(transcript: Transcript) -> None:
    for name in ("unknown provenance", "promote nothing"):
        assert transcript.results[name].is_error
    assert "Traceback" not in json.dumps(transcript.results["unknown provenance"].model_dump(mode="json"))


def test_provenance_for_a_conversation_answers_only_what_it_may_see(transcript: Transcript) -> None:
    here = payload(transcript.results["provenance here"])
    assert [t["turn_id"] for t in here["turns"]] == [transcript.turn_id]
    elsewhere = transcript.results["provenance elsewhere"]
    assert elsewhere.is_error and "may see" in elsewhere.content[0].text


def test_a_failed_tool_call_tells_the_agent_why(transcript: Transcript) -> None:
    unknown = transcript.results["unknown provenance"].content[0].text
    assert "fact-0000000000000000" in unknown
    nothing = transcript.results["promote nothing"].content[0].text
    assert "statement" in nothing
