"""Tenant isolation through every surface: the library, the HTTP API, MCP and the CLI.

Two tenants share a project name (Phoenix), a session, a project and a user key, and
each says distinctive things about them; B's words (Quokkabase, Zephyrinelib,
Snorkelwave) appear nowhere in A's memory. Tenant A then asks every surface for B's
memory with crafted inputs: B's memory, entity, relationship, conflict, turn and
served-context ids, searches for B's words, graph walks from the entity both tenants
share (and from B's own entities), B's fact key, "as of" B's last position, B's turn
id for a turn of its own. Every answer is checked for B's words and B's tenant id
(after removing what A itself sent, which may be echoed back), and every write is
checked to have left B's memory as it was. Each surface also answers A's own
questions (the control), so an empty answer cannot pass for isolation.
"""

from __future__ import annotations

import json
import re
import sys
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from memledger.errors import NotFound
from memledger.library import MemoryLedger
from memledger.service.types import Scopes
from memledger.store import event_reads
from tests.e2e.conftest import Caller, Surfaces, run_cli_chains

SCOPES = {"session": "shared-session", "project": "phoenix", "user": "sam"}
A_TEXTS = ("Project Phoenix uses Marmaladebase.", "Project Tobermory uses Redis.", "Project Tobermory uses Memcached.")
B_TEXTS = (
    "Project Phoenix uses Quokkabase.",
    "The Phoenix service depends on the Quokkabase service.",
    "The Quokkabase service depends on the Zephyrinelib service.",  # two hops from Phoenix
    "Project Snorkelwave uses Redis.",
    "Project Snorkelwave uses Memcached.",
)
B_WORDS = ("Quokkabase", "Zephyrinelib", "Snorkelwave")
SHARED_ENTITY = "project:phoenix"
B_QUERY = "Which database does Phoenix use: Quokkabase, Zephyrinelib or Snorkelwave?"


@dataclass(frozen=True)
class Pair:
    """Tenants A and B, seeded, and B's ids for A to try."""

    a: Caller
    b: Caller
    b_turn_ids: list[str]
    b_positions: list[int]
    b_fact: str
    b_fact_key: str
    b_conflict: str
    b_cache: str  # a fact of B's conflict
    b_entities: list[str]
    b_relationships: list[str]
    b_context_event: str
    b_stored_scopes: dict[str, str]  # B's session and project as B's rows store them (keyed hashes)

    @property
    def b_entity(self) -> str:
        """An entity only B has."""
        return next(e for e in self.b_entities if "zephyrinelib" in e)

    def b_ids(self) -> list[str]:
        """Every id of B's that A will send."""
        return [
            *self.b_turn_ids,
            self.b_fact,
            self.b_fact_key,
            self.b_conflict,
            self.b_cache,
            *self.b_entities,
            *self.b_relationships,
            self.b_context_event,
        ]


def leaked(answer: Any, sent: Iterable[str], pair: Pair) -> list[str]:
    """B's words and tenant id found in ``answer`` once what A sent (which an answer may
    echo: a request, an id not found) is taken out."""
    text = answer if isinstance(answer, str) else json.dumps(answer, default=str)
    for echoed in sorted(set(sent), key=len, reverse=True):
        text = re.sub(re.escape(echoed), " ", text, flags=re.IGNORECASE)
        text = re.sub(re.escape(json.dumps(echoed)[1:-1]), " ", text, flags=re.IGNORECASE)
    return [w for w in (*B_WORDS, pair.b.tenant) if w.lower() in text.lower()]


def _seed(caller: Caller, texts: Iterable[str]) -> tuple[list[str], list[int]]:
    ids = [f"iso-{uuid.uuid4().hex[:10]}" for _ in texts]
    turns = [{"role": "user", "text": t, "scopes": SCOPES, "turn_id": i} for t, i in zip(texts, ids, strict=True)]
    response = caller.http.post("/v1/turns", json={"turns": turns})
    assert response.status_code == 202, response.text
    return ids, response.json()["positions"]


@pytest.fixture(scope="module")
def pair(new_caller: Callable[[str], Caller], surfaces: Surfaces) -> Pair:
    a, b = new_caller("iso-a"), new_caller("iso-b")
    _seed(a, A_TEXTS)
    b_turns, b_positions = _seed(b, B_TEXTS)
    surfaces.catch_up()
    found = b.http.get("/v1/search", params={"q": "Phoenix Quokkabase", "kind": "fact", **SCOPES}).json()
    b_fact = next(i["item_id"] for i in found if i["text"] == B_TEXTS[0])
    key = b.http.get(f"/v1/provenance/{b_fact}").json()["steps"][0]["payload"]["key"]
    [conflict] = b.http.get("/v1/memory/conflicts").json()
    graph = b.http.get("/v1/graph", params={"entity": "Phoenix", "depth": 3}).json()
    reached = {e[side] for e in graph["edges"] for side in ("source_entity_id", "target_entity_id")}
    entities = sorted(reached - {SHARED_ENTITY})  # B's alone: A has a Phoenix of its own
    served = b.http.get("/v1/memory/context", params={"request": "Which database does Phoenix use?", **SCOPES})
    stream = b.http.get("/v1/events", params={"type": "turn.recorded"}).json()["events"][0]["stream_id"]
    assert stream.startswith("conversation:hid.session.") and conflict["scope_key"].startswith("hid.project.")
    assert {"project:quokkabase", "project:zephyrinelib"} <= set(entities), graph  # B's own view: the control
    assert "Quokkabase" in served.json()["block"]
    return Pair(
        a=a,
        b=b,
        b_turn_ids=b_turns,
        b_positions=b_positions,
        b_fact=b_fact,
        b_fact_key=key,
        b_conflict=conflict["conflict_id"],
        b_cache=conflict["memory_ids"][0],
        b_entities=entities,
        b_relationships=[e["relationship_key"] for e in graph["edges"]],
        b_context_event=served.json()["event_id"],
        b_stored_scopes={"session": stream.split(":", 1)[1], "project": conflict["scope_key"]},
    )


def _b_unchanged(pair: Pair) -> None:
    """B's memory as B sees it: its fact active, its conflict open, its turns its own."""
    found = pair.b.http.get("/v1/search", params={"q": "Phoenix Quokkabase", "kind": "fact", **SCOPES}).json()
    assert pair.b_fact in [i["item_id"] for i in found]
    [conflict] = pair.b.http.get("/v1/memory/conflicts").json()
    assert (conflict["conflict_id"], conflict["state"]) == (pair.b_conflict, "open")
    turns = pair.b.http.get(f"/v1/provenance/{pair.b_fact}").json()["turns"]
    assert [t["text"] for t in turns] == [B_TEXTS[0]]


def test_the_leak_check_sees_b_s_memory_in_b_s_own_answers(pair: Pair) -> None:  # the control of ``leaked``
    searched = pair.b.http.get("/v1/search", params={"q": "Phoenix", **SCOPES}).json()
    graph = pair.b.http.get("/v1/graph", params={"entity": "Phoenix", "depth": 3}).json()
    assert set(leaked(searched, ["Phoenix"], pair)) >= {"Quokkabase"}
    assert set(leaked(graph, ["Phoenix"], pair)) == {"Quokkabase", "Zephyrinelib"}


# -- HTTP --------------------------------------------------------------------------------------


def test_http_reads_with_b_s_words_and_ids_find_nothing_of_b(pair: Pair) -> None:
    http = pair.a.http
    reads: list[tuple[str, dict[str, Any]]] = [
        ("/v1/search", {"q": B_QUERY}),
        ("/v1/search", {"q": B_QUERY, **SCOPES}),
        ("/v1/search", {"q": B_QUERY, **pair.b_stored_scopes}),  # B's stored ids are passed back as they are
        ("/v1/memory/context", {"request": B_QUERY, **pair.b_stored_scopes}),
        ("/v1/memory/context", {"request": B_QUERY, **SCOPES}),
        ("/v1/memory/context", {"request": B_QUERY, **SCOPES, "as_of": max(pair.b_positions)}),
        ("/v1/graph", {"entity": "Phoenix", "depth": 3}),
        ("/v1/graph", {"entity": "me", "user": SCOPES["user"], "depth": 3}),
        *(("/v1/graph", {"entity": e, "depth": 3}) for e in [SHARED_ENTITY, *pair.b_entities, *B_WORDS]),
        ("/v1/memory/conflicts", {}),
        ("/v1/events", {"limit": 1000}),
        ("/v1/events", {"after": str(min(pair.b_positions) - 1), "limit": 1000}),
        ("/v1/projections", {}),
        ("/v1/settings", {}),
    ]
    for path, params in reads:
        response = http.get(path, params=params)
        assert response.status_code == 200, (path, response.text)
        # A's served contexts are in A's ledger with the request A sent: B_QUERY is A's own text.
        assert leaked(response.json(), [B_QUERY, *map(str, params.values())], pair) == [], (path, params)
    selected = http.post("/v1/memory/select", json={"request": B_QUERY, "scopes": SCOPES})
    assert selected.status_code == 200 and leaked(selected.json(), [B_QUERY], pair) == []
    # "as of" B's last position went the position's way (memory as of a cursor TX:N),
    # not a Unix time's (as of 1970), in a query parameter and in a body alike.
    b_last = str(max(pair.b_positions))
    then = http.get("/v1/memory/context", params={"request": B_QUERY, **SCOPES, "as_of": b_last}).json()
    assert re.search(r"Memory as of \d+:\d+\.", then["block"]), then["block"]
    selected_then = http.post("/v1/memory/select", json={"request": B_QUERY, "scopes": SCOPES, "as_of": b_last})
    assert re.fullmatch(r"\d+:\d+", selected_then.json()["as_of"]), selected_then.text
    assert leaked(selected_then.json(), [B_QUERY], pair) == []
    for item_id in pair.b_ids():
        response = http.get(f"/v1/provenance/{item_id}")
        assert response.status_code == 404, (item_id, response.text)
        assert leaked(response.json(), [item_id], pair) == []


def test_http_answers_a_s_own_questions(pair: Pair) -> None:  # the control for the test above
    http = pair.a.http
    searched = http.get("/v1/search", params={"q": "Phoenix Marmaladebase", **SCOPES}).json()
    assert any("Marmaladebase" in i["text"] for i in searched)
    block = http.get("/v1/memory/context", params={"request": "Which database does Phoenix use?", **SCOPES}).json()
    assert "Marmaladebase" in block["block"]
    graph = http.get("/v1/graph", params={"entity": "Phoenix", "depth": 3}).json()
    assert [e["target_name"] for e in graph["edges"]] == ["Marmaladebase"]
    [conflict] = http.get("/v1/memory/conflicts").json()
    assert "tobermory" in conflict["conflict_id"]


def test_http_writes_aimed_at_b_s_items_are_refused_and_change_nothing(pair: Pair) -> None:
    http = pair.a.http
    refused = [
        http.post(f"/v1/memory/{pair.b_fact}/retract", json={"reason": "crafted"}),
        http.post(f"/v1/memory/{pair.b_fact}/restore", json={}),
        http.post(
            "/v1/memory/promote",
            json={"kind": "decision", "scope": "project", "scopes": SCOPES, "memory_id": pair.b_fact},
        ),
    ]
    for response in refused:
        assert response.status_code == 404, response.text
        assert leaked(response.json(), [pair.b_fact], pair) == []
    # Refused as for a fact that exists nowhere: the answer does not tell whether B has it.
    resolve = http.post(f"/v1/memory/conflicts/{pair.b_conflict}/resolve", json={"chosen_memory_id": pair.b_cache})
    assert resolve.status_code == 404 and "has no fact" in resolve.text, resolve.text
    assert leaked(resolve.json(), [pair.b_cache, pair.b_conflict], pair) == []
    # B's turn id, sent by A: a turn of A's own (turn ids are per tenant), not a replay of B's.
    mine = http.post(
        "/v1/turns",
        json={"role": "user", "text": "Project Phoenix is fast.", "scopes": SCOPES, "turn_id": pair.b_turn_ids[0]},
    )
    assert mine.status_code == 202 and mine.json()["replayed"] == 0, mine.text
    _b_unchanged(pair)


# -- the library ----------------------------------------------------------------------------


def _has_turn(ledger: MemoryLedger, tenant: str, turn_id: str) -> bool:
    with ledger.engine.connect() as conn:
        return bool(event_reads.read_events(conn, tenant, [f"turn:{turn_id}"]))


def test_the_library_finds_nothing_of_b_for_tenant_a(pair: Pair, surfaces: Surfaces) -> None:
    ledger, a, scopes = surfaces.ledger, pair.a.tenant, Scopes(**SCOPES)
    answers: list[tuple[Any, list[str]]] = [
        (ledger.search(a, B_QUERY, scopes=scopes), [B_QUERY]),
        (ledger.search(a, B_QUERY, scopes=Scopes(**pair.b_stored_scopes)), [B_QUERY]),
        (ledger.context(a, B_QUERY, scopes=Scopes(**pair.b_stored_scopes)).text, [B_QUERY]),
        (ledger.context(a, B_QUERY, scopes=scopes).text, [B_QUERY]),
        (ledger.select(a, B_QUERY, scopes=scopes, as_of=max(pair.b_positions)).items, [B_QUERY]),
        (ledger.graph(a, "Phoenix", depth=3), []),
        (ledger.graph(a, "me", depth=3, user=SCOPES["user"]), []),
        *((ledger.graph(a, e, depth=3), [e]) for e in [*pair.b_entities, *B_WORDS]),
        (ledger.history(a, pair.b_fact_key), [pair.b_fact_key]),
    ]
    for answer, sent in answers:
        assert leaked(answer if isinstance(answer, str) else repr(answer), sent, pair) == []
    assert ledger.history(a, pair.b_fact_key) == []
    assert "Marmaladebase" in ledger.context(a, "Which database does Phoenix use?", scopes=scopes).text  # control
    # A recorded turns of its own under some of B's turn ids (turn ids are per tenant): their
    # provenance is A's own turn, and nothing of B's.
    own = [i for i in pair.b_turn_ids if _has_turn(ledger, a, i)]
    for turn_id in own:
        mine = ledger.provenance(a, turn_id)
        assert [t.text for t in mine.turns] != [] and leaked(repr(mine), [turn_id], pair) == []
    crafted: list[Callable[[], object]] = [
        *(lambda i=i: ledger.provenance(a, i) for i in pair.b_ids() if i not in own),
        lambda: ledger.retract(a, pair.b_fact, "crafted"),
        lambda: ledger.restore(a, pair.b_fact),
        lambda: ledger.promote(a, kind="decision", scope="project", scopes=scopes, memory_id=pair.b_fact),
        lambda: ledger.replay(a, pair.b_context_event),
    ]
    for attempt in crafted:
        with pytest.raises(NotFound) as info:
            attempt()
        assert leaked(str(info.value), pair.b_ids(), pair) == []
    with pytest.raises(NotFound, match="has no fact") as refused:  # as for a fact that exists nowhere
        ledger.resolve_conflict(a, pair.b_conflict, pair.b_cache)
    assert leaked(str(refused.value), pair.b_ids(), pair) == []
    _b_unchanged(pair)


# -- MCP ------------------------------------------------------------------------------------


def _mcp_text(result: Any) -> str:
    return json.dumps(result.model_dump(mode="json"), default=str)


async def _mcp_calls(surfaces: Surfaces, pair: Pair) -> dict[str, Any]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memledger.cli.main", "mcp", "--transport", "stdio", "--tenant", pair.a.tenant],
        env=surfaces.env,
    )
    calls: dict[str, tuple[str, dict[str, Any]]] = {
        "search": ("memory_search", {"query": B_QUERY, **SCOPES}),
        "context": ("memory_context", {"request": B_QUERY, **SCOPES}),
        "graph": ("query_graph", {"entity": "Phoenix", "depth": 3}),
        "graph b": ("query_graph", {"entity": pair.b_entity, "depth": 3}),
        "provenance": ("memory_provenance", {"item_id": pair.b_fact}),
        "provenance turn": ("memory_provenance", {"item_id": pair.b_turn_ids[1]}),
        "promote": ("promote_memory", {"kind": "decision", "scope": "project", "memory_id": pair.b_fact, **SCOPES}),
        "record": (
            "record_turn",
            {"role": "user", "text": "Phoenix ships soon.", "turn_id": pair.b_turn_ids[2], **SCOPES},
        ),
        "own context": ("memory_context", {"request": "Which database does Phoenix use?", **SCOPES}),
    }
    results: dict[str, Any] = {}
    with anyio.fail_after(180):
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            for name, (tool, arguments) in calls.items():
                results[name] = await session.call_tool(tool, arguments)
    return results


def test_mcp_tools_for_tenant_a_find_nothing_of_b(pair: Pair, surfaces: Surfaces) -> None:
    results = anyio.run(_mcp_calls, surfaces, pair)
    for name, result in results.items():
        assert leaked(_mcp_text(result), [B_QUERY, *pair.b_ids()], pair) == [], name
    for name in ("provenance", "provenance turn", "promote"):
        assert results[name].is_error and "NotFound" in results[name].content[0].text, name
    assert results["record"].structured_content["replayed"] is False
    assert results["graph"].structured_content["edges"][0]["target_name"] == "Marmaladebase"  # the control
    assert "Marmaladebase" in _mcp_text(results["own context"])  # the control
    _b_unchanged(pair)


# -- the CLI --------------------------------------------------------------------------------


def test_cli_commands_for_tenant_a_find_nothing_of_b(pair: Pair, surfaces: Surfaces) -> None:
    a = ["--tenant", pair.a.tenant]
    scoped = [*a, "--session", SCOPES["session"], "--project", SCOPES["project"], "--user", SCOPES["user"]]
    commands: dict[str, list[str]] = {
        "search": ["search", B_QUERY, *scoped, "--json"],
        "context": ["context", B_QUERY, *scoped, "--json"],
        "context as of": ["context", B_QUERY, *scoped, "--as-of", str(max(pair.b_positions))],
        "graph": ["graph", "Phoenix", *a, "--depth", "3", "--json"],
        "graph b": ["graph", pair.b_entity, *a, "--depth", "3"],
        "provenance": ["provenance", pair.b_fact, *a, "--json"],
        "provenance turn": ["provenance", pair.b_turn_ids[1], *a],  # [0] and [2] become A's own turns
        "history": ["history", "--key", pair.b_fact_key, *a, "--json"],
        "replay": ["context", "replay", pair.b_context_event, *a],
        "tail": ["events", "tail", *a, "--type", "turn.recorded"],  # served blocks may say "deadline exceeded"
        "own search": ["search", "Phoenix Marmaladebase", *scoped],
    }
    names = list(commands)
    chains: list[list[tuple[str, Any]]] = [[(n, commands[n]) for n in names[i::3]] for i in range(3)]
    done = run_cli_chains(surfaces.env, chains)
    for name, result in done.items():
        assert leaked(result.stdout + result.stderr, [B_QUERY, *pair.b_ids(), *commands[name]], pair) == [], name
    # Not found, as for an id or key the tenant never had: nothing says B has them.
    expected_codes = {"provenance": 3, "provenance turn": 3, "replay": 3, "graph b": 3, "history": 3}
    assert {n: r.returncode for n, r in done.items()} == {n: expected_codes.get(n, 0) for n in commands}, {
        n: r.stderr[-300:] for n, r in done.items()
    }
    assert done["history"].stdout.strip() == ""
    assert pair.a.tenant in done["tail"].stdout  # the control: A's own events are there
    assert "Marmaladebase" in done["own search"].stdout  # the control
