"""Bad input at the surfaces (the HTTP API and the MCP tools, in process) and at the
service and store beneath them: each is refused with a reason that names what was
wrong (a 4xx naming the field, a tool error saying why), never a 500, a reasonless
error or a silent clamp, and nothing is written. Inputs that look odd but are fine
(an id holding "/", a relation in lower case, a position given as digits) work.

The memory is seeded on a database of its own, so its extraction touches no other
test's turns.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any
from urllib.parse import quote

import anyio
import msgspec
import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError

from memledger.api.app import create_app
from memledger.cli.context_commands import parse_as_of
from memledger.config import Settings
from memledger.errors import InvalidCommand, InvalidField, InvalidIdentifier
from memledger.library import MemoryLedger
from memledger.mcp_server import build_server
from memledger.service import memory, search
from memledger.service.record import TurnInput
from memledger.service.types import Scopes
from memledger.store import event_store
from memledger.store.schema import events
from tests.conftest import TestDatabase, turn_event
from tests.e2e.conftest import scratch_ledger

SCOPES = Scopes(session="s1", project="phoenix", user="dana")
TEXTS = ("I use CI/CD pipelines with GitHub Actions.", "Project Phoenix uses PostgreSQL.")
EXTREME_TIMES = ("9999-12-31T23:59:59-14:00", "0001-01-01T00:00:00+14:00")  # years 10000 and 0 in UTC
ENTITY_TYPES = "person, project, tool, concept, organization, user"


@dataclass(frozen=True)
class Seeded:
    """A tenant that said ``TEXTS``, extracted and projected, and an HTTP client with its key."""

    ledger: MemoryLedger
    tenant: str
    http: TestClient
    positions: list[int]

    def written(self) -> int:
        """How many events the tenant has."""
        with self.ledger.engine.connect() as conn:
            count = sa.select(sa.func.count()).select_from(events).where(events.c.tenant_id == self.tenant)
            return int(conn.execute(count).scalar_one())

    def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        """A tool call on the MCP server of the tenant, in process."""
        server = build_server(self.ledger.database, tenant_id=self.tenant)
        return anyio.run(server.call_tool, name, arguments)


@pytest.fixture(scope="module")
def seeded(database: TestDatabase) -> Iterator[Seeded]:
    ledger, drop = scratch_ledger(database, "inputs")
    try:
        tenant = f"inputs-{uuid.uuid4().hex[:8]}"
        _, key = ledger.create_key(tenant, label="inputs")
        positions = ledger.record_turns(tenant, [TurnInput(role="user", text=t, scopes=SCOPES) for t in TEXTS])
        ledger.process()
        app = create_app(ledger.database)
        with TestClient(app, raise_server_exceptions=False, headers={"Authorization": f"Bearer {key}"}) as http:
            http.get("/v1/memory/context", params={"request": "warming up"})  # compiles selection's statements
            yield Seeded(ledger=ledger, tenant=tenant, http=http, positions=positions)
    finally:
        drop()


def refused(response: Any, status: int, field: str) -> str:
    """The message of an error response, checked for its status and the field it names."""
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error.get("field") == field, error
    message: str = error["message"]
    assert field in message, message
    return message


def edges(seeded: Seeded, **params: Any) -> list[tuple[str, str, str]]:
    answer = seeded.http.get("/v1/graph", params={"entity": "Phoenix", **params})
    assert answer.status_code == 200, answer.text
    return [(e["source_name"], e["relation"], e["target_name"]) for e in answer.json()["edges"]]


# -- times and positions -------------------------------------------------------------------------


@pytest.mark.parametrize("occurred_at", EXTREME_TIMES)
@pytest.mark.parametrize("batch", [False, True], ids=["one turn", "a batch"])
def test_a_turn_time_outside_years_1_to_9999_in_utc_is_refused_naming_occurred_at(
    seeded: Seeded, occurred_at: str, batch: bool
) -> None:
    one = {"role": "user", "text": "x", "occurred_at": occurred_at}
    before = seeded.written()
    response = seeded.http.post("/v1/turns", json={"turns": [one]} if batch else one)
    message = refused(response, 422, "turns.0.occurred_at" if batch else "occurred_at")
    assert "outside the years 1 to 9999 in UTC" in message
    assert seeded.written() == before


@pytest.mark.parametrize("hours", [-14, 14])
def test_the_store_refuses_a_time_outside_years_1_to_9999_in_utc(engine: sa.Engine, tenant: str, hours: int) -> None:
    edge = datetime.max if hours < 0 else datetime.min
    late = msgspec.structs.replace(turn_event(), occurred_at=edge.replace(tzinfo=timezone(timedelta(hours=hours))))
    with engine.begin() as tx, pytest.raises(InvalidCommand, match=r"events\[0\]\.occurred_at .* years 1 to 9999"):
        event_store.append(tx, tenant, "turns:s1", [late], None)
    with engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).where(events.c.tenant_id == tenant)).scalar_one() == 0


def test_as_of_digits_are_a_ledger_position_not_a_unix_time(seeded: Seeded) -> None:
    position = seeded.positions[-1]
    request = {"request": "Which database does Phoenix use?"}
    served = seeded.http.get("/v1/memory/context", params={**request, "as_of": str(position)})
    assert served.status_code == 200, served.text
    assert re.search(rf"Memory as of \d+:{position}\.", served.json()["block"]), served.json()["block"]
    for as_of in (str(position), position):
        selected = seeded.http.post("/v1/memory/select", json={**request, "as_of": as_of})
        assert selected.status_code == 200, selected.text
        assert re.fullmatch(rf"\d+:{position}", selected.json()["as_of"]), selected.json()


@pytest.mark.parametrize(
    ("as_of", "reason"),
    [
        (-1, "-1"),  # a query parameter: no position; JSON: a position below 0
        (2**63, "between 0 and 9223372036854775807"),
        ("9" * 5000, "between 0 and 9223372036854775807"),
        ("2020-01-01T00:00:00", "needs a timezone"),
        ("\u00b2", "must be a ledger position"),
    ],
    ids=["negative", "beyond bigint", "5000 digits", "no timezone", "superscript two"],
)
@pytest.mark.parametrize("route", ["context", "select"])
def test_an_as_of_out_of_range_or_without_a_timezone_is_refused_naming_as_of(
    seeded: Seeded, as_of: Any, reason: str, route: str
) -> None:
    before = seeded.written()
    request = {"request": "Which database does Phoenix use?", "as_of": as_of}
    if route == "context":
        response = seeded.http.get("/v1/memory/context", params=request)
    else:
        response = seeded.http.post("/v1/memory/select", json=request)
    assert reason in refused(response, 422, "as_of")
    assert seeded.written() == before  # no ContextServed for a refused request


# -- the deadline ----------------------------------------------------------------------------------


@pytest.mark.parametrize("deadline_ms", [0, -5, 60_001])
def test_a_deadline_out_of_range_is_refused_naming_deadline_ms(seeded: Seeded, deadline_ms: int) -> None:
    """0 would switch the deadline off (PostgreSQL reads a statement_timeout of 0 as none)."""
    before = seeded.written()
    request: dict[str, Any] = {"request": "Which database does Phoenix use?", "deadline_ms": deadline_ms}
    refused(seeded.http.get("/v1/memory/context", params=request), 422, "deadline_ms")
    refused(seeded.http.post("/v1/memory/select", json=request), 422, "deadline_ms")
    with pytest.raises(InvalidCommand, match=f"deadline_ms must be 1 to 60000, not {deadline_ms}"):
        seeded.ledger.context(seeded.tenant, "Which database does Phoenix use?", deadline_ms=deadline_ms)
    assert seeded.written() == before


@pytest.mark.parametrize(
    ("as_of", "reason"),
    [
        ("2026-11-26T00:00:00Z", "not '2026-11-26T00:00:00Z'"),
        (datetime(2026, 11, 26), "not a naive one"),  # naive, on purpose
        (True, "not True"),
        (12.0, "not 12.0"),
        (-1, "from 0 to 2**63 - 1, not -1"),
    ],
    ids=["a string", "naive", "a bool", "a float", "negative"],
)
def test_the_library_refuses_an_as_of_of_the_wrong_kind_and_records_nothing(
    seeded: Seeded, as_of: Any, reason: str
) -> None:
    """Before, a string gave an empty block reading "memory unavailable (TypeError: ...)":
    the caller's mistake hidden as a memory outage, and recorded."""
    before = seeded.written()
    for call in (seeded.ledger.context, seeded.ledger.select):
        with pytest.raises(InvalidCommand, match=re.escape(reason)):
            call(seeded.tenant, "Which database does Phoenix use?", as_of=as_of)
    assert seeded.written() == before


def test_the_library_gives_each_served_block_the_id_that_replays_it(seeded: Seeded) -> None:
    block = seeded.ledger.context(seeded.tenant, "Which database does Phoenix use?", scopes=SCOPES)
    assert "PostgreSQL" in block.text
    assert block.event_id.startswith("context:")
    replay = seeded.ledger.replay(seeded.tenant, block.event_id)
    assert replay.matches
    assert replay.block.sha256 == block.sha256


@pytest.mark.parametrize("kind", ["session", "project", "user", "org"])
@pytest.mark.parametrize(("key", "reason"), [("", "must not be empty"), ("  ", "must not be blank")])
def test_a_scope_key_that_cannot_be_one_is_refused_naming_it(seeded: Seeded, kind: str, key: str, reason: str) -> None:
    """By context as by recording a turn, not as the event codec would ("at $.scopes...");
    a blank key too, as a blank id is (before, "  " was a scope of its own)."""
    before = seeded.written()
    asked = re.escape(f"invalid scopes.{kind} {key!r}: {reason}")
    with pytest.raises(InvalidCommand, match=f"^{asked}"):
        seeded.ledger.context(seeded.tenant, "Which database does Phoenix use?", scopes=Scopes(**{kind: key}))
    with pytest.raises(InvalidCommand, match=f"^{asked}"):
        seeded.ledger.record_turn(seeded.tenant, "user", "Phoenix is on port 5432.", scopes=Scopes(**{kind: key}))
    assert seeded.written() == before


def test_a_calls_deadline_and_the_setting_decide_when_a_selection_fails_open(
    seeded: Seeded, database: TestDatabase
) -> None:
    """No selection takes under a millisecond: one that must fails open saying so."""
    request, exceeded = "Which database does Phoenix use?", "memory unavailable (deadline exceeded)"
    ledger, tenant = seeded.ledger, seeded.tenant
    assert "PostgreSQL" in ledger.context(tenant, request, scopes=SCOPES).text  # the setting: generous in tests
    assert exceeded in ledger.context(tenant, request, scopes=SCOPES, deadline_ms=1).text
    assert ledger.select(tenant, request, scopes=SCOPES, deadline_ms=1).empty_reason == exceeded
    params: dict[str, Any] = {"request": request, "user": "dana", "project": "phoenix", "deadline_ms": 1}
    assert seeded.http.get("/v1/memory/context", params=params).json()["empty_reason"] == exceeded
    body = {"request": request, "scopes": {"user": "dana"}, "deadline_ms": 1}
    assert seeded.http.post("/v1/memory/select", json=body).json()["empty_reason"] == exceeded

    url = ledger.database.url.render_as_string(hide_password=False)
    with MemoryLedger.open(Settings(DATABASE_URL=url, context_deadline_ms=1)) as strict:
        assert exceeded in strict.context(tenant, request, scopes=SCOPES).text
        assert "PostgreSQL" in strict.context(tenant, request, scopes=SCOPES, deadline_ms=30_000).text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("57", 57),
        ("0057", 57),
        (str(2**63 - 1), 2**63 - 1),
        ("2026-01-01T00:00:00Z", datetime.fromisoformat("2026-01-01T00:00:00Z")),
    ],
)
def test_the_cli_reads_ascii_digits_as_a_position_and_else_a_time(text: str, expected: object) -> None:
    assert parse_as_of(text) == expected


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("\u00b2", "must be a position or an ISO 8601 time"),
        ("\uff15\uff17", "must be a position or an ISO 8601 time"),  # fullwidth 57
        (str(2**63), "beyond the last ledger position"),
        ("9" * 5000, "beyond the last ledger position"),
    ],
    ids=["superscript two", "fullwidth digits", "beyond bigint", "5000 digits"],
)
def test_the_cli_refuses_an_as_of_that_is_no_position_nor_time(text: str, reason: str) -> None:
    with pytest.raises(InvalidCommand, match=reason):
        parse_as_of(text)


# -- ids -----------------------------------------------------------------------------------------


def test_an_id_with_a_slash_reaches_provenance_retract_and_restore(seeded: Seeded) -> None:
    asked = {"q": "CI/CD GitHub Actions", "kind": "relationship", "user": SCOPES.user}  # the edge is Dana's
    found = seeded.http.get("/v1/search", params=asked).json()
    item_id = next(i["item_id"] for i in found if "/" in i["item_id"])  # user:…|USES|concept:ci/cd
    path = quote(item_id, safe="")
    chain = seeded.http.get(f"/v1/provenance/{path}")
    assert chain.status_code == 200, chain.text
    assert chain.json()["item_id"] == item_id
    for command in ("retract", "restore"):
        changed = seeded.http.post(f"/v1/memory/{path}/{command}", json={})
        assert changed.status_code == 200, changed.text  # applied before the answer
        assert changed.json()["item_id"] == item_id
    stranger = seeded.http.post("/v1/memory/conflicts/a%2Fb/resolve", json={"chosen_memory_id": "fact-0"})
    assert stranger.status_code == 404, stranger.text  # reached the route: no fact 'fact-0' (for conflict 'a/b')
    assert "'a/b'" in stranger.json()["error"]["message"]


@pytest.mark.parametrize(
    ("method", "path", "body", "field"),
    [
        ("GET", "/v1/graph?entity=a%00b", None, "entity"),
        ("POST", "/v1/memory/conflicts/c1/resolve", {"chosen_memory_id": "a\x00b"}, "chosen_memory_id"),
        ("POST", "/v1/memory/conflicts/c%00/resolve", {"chosen_memory_id": "x"}, "conflict_id"),
        ("POST", "/v1/memory/promote", {"memory_id": "a\x00b"}, "memory_id"),
    ],
    ids=["graph entity", "chosen memory", "conflict", "promoted memory"],
)
def test_a_nul_in_an_id_is_refused_naming_it_and_nothing_is_written(
    seeded: Seeded, method: str, path: str, body: dict[str, str] | None, field: str
) -> None:
    if path.endswith("promote"):
        body = {"kind": "decision", "scope": "project", "scopes": {"project": "p"}, **(body or {})}
    before = seeded.written()
    response = seeded.http.request(method, path, json=body)
    assert "NUL character" in refused(response, 422, field)  # one rule for all text (schemas.storable_text)
    assert seeded.written() == before


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda e, t: memory.resolve_conflict(e, t, "c\ud800", "fact-0"), "conflict_id"),
        (lambda e, t: memory.resolve_conflict(e, t, "c1", "fact-\ud800"), "chosen_memory_id"),
        (lambda e, t: search.query_graph(e, t, "Docker\ud800"), "entity"),
    ],
    ids=["conflict", "chosen memory", "graph entity"],
)
def test_a_lone_surrogate_in_an_id_is_refused_naming_it(seeded: Seeded, call: Any, field: str) -> None:
    with pytest.raises(InvalidIdentifier, match="lone surrogate") as refusal:
        call(seeded.ledger.database.for_tenant(seeded.tenant), seeded.tenant)
    assert refusal.value.field == field


@pytest.mark.parametrize("text", ["Docker?\x00", "Docker?\ud800"], ids=["nul", "lone surrogate"])
def test_the_library_applies_the_one_rule_for_text_naming_the_field(seeded: Seeded, text: str) -> None:
    """As over HTTP and MCP: a search is refused naming ``query``; a context block, which
    never raises into the chat loop, is empty and says which field it could not use."""
    with pytest.raises(InvalidField) as refusal:
        seeded.ledger.search(seeded.tenant, text, scopes=SCOPES)
    assert refusal.value.field == "query"
    served = seeded.ledger.context(seeded.tenant, text, scopes=SCOPES)
    what = "a NUL character" if "\x00" in text else "a lone surrogate"
    assert f"request holds {what}" in served.text
    assert served.event_id and seeded.ledger.replay(seeded.tenant, served.event_id).matches  # recorded as served


# -- the graph's filters ---------------------------------------------------------------------------


def test_the_graph_reads_a_relation_and_an_entity_type_in_any_case(seeded: Seeded) -> None:
    uses = edges(seeded, relation="USES")
    assert ("Phoenix", "USES", "PostgreSQL") in uses
    assert edges(seeded, relation="uses") == edges(seeded, relation="Uses") == uses
    tools = edges(seeded, entity_type="tool")
    assert ("Phoenix", "USES", "PostgreSQL") in tools
    assert edges(seeded, entity_type="TOOL") == tools


@pytest.mark.parametrize(
    ("params", "field", "reason"),
    [
        ({"relation": "not a relation"}, "relation", "is not a relation"),
        ({"relation": "1USES"}, "relation", "is not a relation"),
        ({"entity_type": "nope"}, "entity_type", f"is not an entity type (the types are {ENTITY_TYPES})"),
    ],
    ids=["words", "a leading digit", "unknown type"],
)
def test_the_graph_refuses_a_relation_that_cannot_be_one_and_an_unknown_entity_type(
    seeded: Seeded, params: dict[str, str], field: str, reason: str
) -> None:
    response = seeded.http.get("/v1/graph", params={"entity": "Phoenix", **params})
    assert reason in refused(response, 422, field)


# -- MCP -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "arguments", "reason"),
    [
        ("query_graph", {"entity": "Docker\x00"}, "invalid entity"),
        ("query_graph", {"entity": "Docker\ud800"}, "invalid entity"),
        ("query_graph", {"entity": "Phoenix", "depth": -1}, "depth must be between 1 and 3 hops, not -1"),
        ("query_graph", {"entity": "Phoenix", "depth": 10**9}, "depth must be between 1 and 3 hops"),
        ("query_graph", {"entity": "Phoenix", "relation_types": ["NO SUCH"]}, "is not a relation"),
        ("query_graph", {"entity": "Phoenix", "entity_types": ["nope"]}, "is not an entity type"),
        ("promote_memory", {"memory_id": "a\x00"}, "invalid memory_id"),
        ("promote_memory", {"memory_id": "a\ud800"}, "invalid memory_id"),
        ("promote_memory", {"statement": "s\ud800"}, "statement holds a lone surrogate"),
        ("memory_search", {"query": "Docker \ud800"}, "query holds a lone surrogate"),
        ("memory_search", {"query": "Docker", "k": -5}, "k must be between 1 and 100, not -5"),
        ("memory_search", {"query": "Docker", "k": 101}, "k must be between 1 and 100, not 101"),
        # as over HTTP (before, MCP served and recorded these)
        ("memory_context", {"request": ""}, "request must not be empty or blank"),
        ("memory_context", {"request": "x" * 10_001}, "above 10000"),
        ("memory_context", {"request": "Docker?", "budget_chars": 100_000_000}, "budget_chars must be 600 to 200000"),
        ("memory_context", {"request": "Docker?\x00"}, "InvalidField: request holds a NUL character"),
        ("memory_context", {"request": "Docker?\ud800"}, "InvalidField: request holds a lone surrogate"),
        ("memory_search", {"query": "Docker\x00"}, "InvalidField: query holds a NUL character"),
        ("record_turn", {"role": "user", "text": "hi", "turn_id": ""}, "invalid turn_id ''"),  # a retry would double
    ],
)
def test_an_mcp_tool_refuses_bad_input_saying_why_and_writes_nothing(
    seeded: Seeded, tool: str, arguments: dict[str, Any], reason: str
) -> None:
    if tool == "promote_memory":
        arguments = {"kind": "decision", "scope": "project", "project": "p", **arguments}
    before = seeded.written()
    with pytest.raises(ToolError) as refusal:
        seeded.call_tool(tool, arguments)
    assert not isinstance(refusal.value, UnexpectedToolError), repr(refusal.value.__cause__)
    assert reason in str(refusal.value)
    assert seeded.written() == before


def test_mcp_query_graph_reads_relations_in_any_case(seeded: Seeded) -> None:
    answer = seeded.call_tool("query_graph", {"entity": "Phoenix", "relation_types": ["uses"]})
    assert not answer.is_error, answer.content
    assert [e["relation"] for e in answer.structured_content["edges"]] == ["USES"]
