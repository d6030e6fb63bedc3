"""Graph statistics: counts of a tenant's entities and relationships, and top lists
that hold no other user's entity, through the library, HTTP, MCP and the CLI, on a
real database."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator

import anyio
import msgspec
import pytest
from fastapi.testclient import TestClient
from mcp.server.mcpserver.exceptions import ToolError

from memledger.api.app import create_app
from memledger.errors import InvalidCommand
from memledger.library import MemoryLedger
from memledger.mcp_server import build_server
from memledger.service import graph_stats, scope_ids
from memledger.service.graph_stats import GraphStats
from memledger.service.types import Scopes
from tests.conftest import TestDatabase
from tests.e2e.conftest import run_cli_chains, scratch_ledger

ADA = Scopes(session="ada-1", project="apollo", user="ada")
GRACE = Scopes(session="grace-1", project="apollo", user="grace")
GRACE_SAID = ("I use Neovim for Apollo.", "I work on Apollo.", "Apollo uses PostgreSQL.")
ADA_SAID = ("Apollo uses Redis.", "Apollo depends on Kafka.", "I use Emacs.")


@pytest.fixture(scope="module")
def ledger(database: TestDatabase) -> Iterator[MemoryLedger]:
    opened, drop = scratch_ledger(database, "graphstats")
    try:
        yield opened
    finally:
        drop()


@pytest.fixture(scope="module")
def tenant(ledger: MemoryLedger) -> str:
    tenant = f"stats-{uuid.uuid4().hex[:8]}"
    for text in GRACE_SAID:
        ledger.record_turn(tenant, "user", text, scopes=GRACE)
    for text in ADA_SAID:
        ledger.record_turn(tenant, "user", text, scopes=ADA)
    ledger.process()
    ledger.retract(tenant, "project:apollo|DEPENDS_ON|tool:kafka", reason="wrong")
    ledger.retract(tenant, "tool:redis", reason="wrong")
    return tenant


def _stats(ledger: MemoryLedger, tenant: str, *, top: int = 10, user: str | None = None) -> GraphStats:
    return graph_stats.graph_stats(ledger.database.for_tenant(tenant), tenant, top=top, user=user)


def _users(ledger: MemoryLedger, tenant: str) -> tuple[str, str]:
    """Ada's and Grace's stored ids."""
    return tuple(scope_ids.stored_id(ledger.engine, tenant, "user", u) for u in ("ada", "grace"))  # type: ignore[return-value]


def test_counts_entities_by_type_and_edges_by_relation_and_status(ledger: MemoryLedger, tenant: str) -> None:
    found = _stats(ledger, tenant)
    assert found.entities_by_type == {"project": {"active": 1}, "tool": {"active": 4, "retracted": 1}}
    assert found.relationships_by_relation == {
        "DEPENDS_ON": {"retracted": 1},
        "USES": {"active": 5},
        "WORKS_ON": {"active": 1},
    }
    assert (found.entities, found.relationships) == (5, 6)
    assert (found.mentioned_once, found.mentioned_once_share) == (4, 0.8)  # all but Apollo


def test_top_lists_rank_by_degree_and_mentions_without_retracted_items(ledger: MemoryLedger, tenant: str) -> None:
    found = _stats(ledger, tenant)
    first = found.top_by_degree[0]
    assert (first.entity_id, first.name, first.degree, first.mention_count) == ("project:apollo", "Apollo", 4, 5)
    ranked = [(-e.degree, e.entity_id) for e in found.top_by_degree]
    assert ranked == sorted(ranked)
    assert [e.entity_id for e in found.top_by_mentions] == [
        "project:apollo",
        "tool:emacs",
        "tool:kafka",
        "tool:neovim",
        "tool:postgresql",
    ]  # Redis, retracted, is no longer listed; its edge still counts
    assert {e.entity_id: e.degree for e in found.top_by_mentions}["tool:kafka"] == 0  # its edge is retracted
    assert [e.entity_id for e in _stats(ledger, tenant, top=1).top_by_degree] == ["project:apollo"]


def test_top_lists_hold_the_users_own_entity_and_no_one_elses(ledger: MemoryLedger, tenant: str) -> None:
    ada, grace = _users(ledger, tenant)
    mine = json.dumps(msgspec.to_builtins(_stats(ledger, tenant, top=100, user="ada")))
    assert f"user:{ada}" in mine and grace not in mine
    nobody = json.dumps(msgspec.to_builtins(_stats(ledger, tenant, top=100)))
    assert "hid.user." not in nobody
    assert _stats(ledger, tenant, top=100).relationships == 6  # the counts hold both users' edges


def test_a_top_list_out_of_range_is_refused(ledger: MemoryLedger, tenant: str) -> None:
    for top in (0, graph_stats.MAX_TOP + 1):
        with pytest.raises(InvalidCommand, match="top must be between 1 and 100"):
            _stats(ledger, tenant, top=top)


def test_http_graph_stats_needs_the_tenants_key(ledger: MemoryLedger, tenant: str) -> None:
    ada, grace = _users(ledger, tenant)
    _, key = ledger.create_key(tenant, label="stats")
    with TestClient(create_app(ledger.database)) as http:
        refused = http.get("/v1/graph/stats")
        answer = http.get("/v1/graph/stats", params={"top": 50, "user": "ada"}, headers={"X-API-Key": key})
        too_many = http.get("/v1/graph/stats", params={"top": 101}, headers={"X-API-Key": key})
    assert refused.status_code == 401
    assert too_many.status_code == 422
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body == msgspec.to_builtins(_stats(ledger, tenant, top=50, user="ada"))
    assert f"user:{ada}" in answer.text and grace not in answer.text


def test_mcp_graph_stats_answers_the_counts_and_top_lists(ledger: MemoryLedger, tenant: str) -> None:
    _, grace = _users(ledger, tenant)
    server = build_server(ledger.database, tenant_id=tenant)
    answer = anyio.run(server.call_tool, "graph_stats", {"top": 3, "user": "ada"})
    assert not answer.is_error, answer.content
    found = answer.structured_content
    assert found == msgspec.to_builtins(_stats(ledger, tenant, top=3, user="ada"))
    assert set(found) >= {"entities_by_type", "relationships_by_relation", "top_by_degree", "top_by_mentions"}
    assert len(found["top_by_degree"]) == 3 and grace not in json.dumps(found)
    with pytest.raises(ToolError, match="top must be between 1 and 100"):
        anyio.run(server.call_tool, "graph_stats", {"top": 0})


def test_cli_stats_prints_json_and_text(database: TestDatabase, ledger: MemoryLedger, tenant: str) -> None:
    env = {**database.env, "DATABASE_URL": ledger.database.url.render_as_string(hide_password=False)}
    done = run_cli_chains(
        env,
        [
            [("json", ["stats", "--tenant", tenant, "--top", "2", "--json"])],
            [("text", ["stats", "--tenant", tenant])],
            [("zero", ["stats", "--tenant", tenant, "--top", "0"])],
        ],
    )
    assert done["json"].returncode == 0, done["json"].stderr
    assert json.loads(done["json"].stdout) == msgspec.to_builtins(_stats(ledger, tenant, top=2))
    assert done["text"].returncode == 0, done["text"].stderr
    assert "entities: 5 active; relationships: 6 active" in done["text"].stdout
    assert "  Apollo (project, project:apollo): 4 relationships, 5 mentions" in done["text"].stdout
    assert done["zero"].returncode == 2 and "--top" in done["zero"].stderr
