"""The agent, auditor and key commands as a user runs them: ``memledger`` subprocesses
on the surfaces' database. A tenant is seeded (two turns, extracted and projected)
through the library; each command's own process does the rest.

Starting Python and importing memledger costs seconds, so the commands that do not
depend on each other run at once (``run_cli_chains``).
"""

from __future__ import annotations

import json
import os
import uuid
from dataclasses import dataclass
from typing import Any

import pytest

from memledger.events.envelope import START
from memledger.service import ledger_pages
from memledger.service.record import TurnInput
from memledger.service.types import Scopes
from tests.e2e.conftest import ApiServer, Done, Surfaces, run_cli_chains

STATEMENT = "Project Condor uses PostgreSQL."
SCOPE_ARGS = ["--project", "condor", "--session", "c1", "--user", "erin"]
REQUEST = "Which database does Condor use?"
MODEL_ARGS = ["--max-tokens", "300", "--json"]


@dataclass(frozen=True)
class Run:
    """The seeded tenant and what every command printed."""

    tenant: str
    turn_id: str
    fact_id: str
    turn_position: int
    fact_position: int
    key_tenant: str
    results: dict[str, Done]


def ok(done: Done) -> str:
    assert done.returncode == 0, f"exit {done.returncode}: {done.stderr}"
    return done.stdout


def json_lines(done: Done) -> list[dict[str, Any]]:
    return [json.loads(line) for line in ok(done).splitlines() if line.strip()]


def seed(surfaces: Surfaces, tenant: str, turn_id: str) -> tuple[str, int, int]:
    """Two turns for ``tenant``, extracted and projected: (fact id, turn's position, fact's position)."""
    ledger = surfaces.ledger
    scopes = Scopes(session="c1", project="condor", user="erin")
    turns = [
        TurnInput(role="user", text=STATEMENT, scopes=scopes, turn_id=turn_id),
        TurnInput(role="user", text="I work with Priya on Condor.", scopes=scopes),
    ]
    turn_position = ledger.record_turns(tenant, turns)[0]
    ledger.process()
    events, _ = ledger_pages.page(ledger.engine, tenant, after=START, limit=1000, types=["fact.extracted"])
    fact = next(e for e in events if e.event.statement == STATEMENT)  # type: ignore[attr-defined]
    return fact.event.memory_id, turn_position, fact.position  # type: ignore[attr-defined]


def issued(results: dict[str, Done]) -> dict[str, Any]:
    created: dict[str, Any] = json.loads(ok(results["keys create"]))
    return created


def served_event(results: dict[str, Done]) -> str:
    event_id: str = json.loads(ok(results["context"]))["event_id"]
    return event_id


@pytest.fixture(scope="module")
def run(surfaces: Surfaces) -> Run:
    tenant, turn_id, key_tenant = (f"{p}-{uuid.uuid4().hex[:8]}" for p in ("condor", "t", "keys"))
    fact_id, turn_position, fact_position = seed(surfaces, tenant, turn_id)
    t = ["--tenant", tenant]
    keys = ["keys", "create", "--tenant", key_tenant, "--label", "laptop", "--json"]
    results = run_cli_chains(
        surfaces.env,
        [
            [
                ("keys create", keys),
                ("keys list", ["keys", "list", "--tenant", key_tenant]),
                ("keys revoke", lambda done: ["keys", "revoke", issued(done)["key_id"], "--tenant", key_tenant]),
                ("keys list after revoke", ["keys", "list", "--tenant", key_tenant]),
                ("search k below 1", ["search", "Condor", *t, "-k", "-1"]),  # bad input from here: exit 2
                ("search k beyond the limit", ["search", "Condor", *t, "-k", "9999999999999999999"]),
            ],
            [  # one context at a time: a starved CPU would push selection past its deadline
                ("context", ["context", REQUEST, *t, *SCOPE_ARGS, "--json"]),
                ("replay", lambda done: ["context", "replay", served_event(done), *t]),
                ("replay, the id last", lambda done: ["context", "replay", *t, served_event(done)]),
                ("as of the turn", ["context", REQUEST, *t, *SCOPE_ARGS, "--as-of", str(turn_position), "--json"]),
                ("as of the fact", ["context", REQUEST, *t, *SCOPE_ARGS, "--as-of", str(fact_position), "--json"]),
                ("request saying replay", ["context", "--request", "replay", *t, *SCOPE_ARGS, "--json"]),
                ("by a model", ["context", REQUEST, *t, *SCOPE_ARGS, "--model", "gpt-4o", *MODEL_ARGS]),
            ],
            [
                ("search", ["search", "Condor PostgreSQL", *t, *SCOPE_ARGS, "--json"]),
                ("search turns", ["search", "Condor PostgreSQL", *t, *SCOPE_ARGS, "--kind", "turn"]),
                ("search unknown kind", ["search", "Condor", *t, "--kind", "memo"]),  # bad input: exit 2
                ("graph", ["graph", "Condor", *t, "--json"]),
                ("provenance", ["provenance", fact_id, *t, "--json"]),
                ("graph any case", ["graph", "Condor", *t, "--relation", "uses", "--type", "TOOL", "--json"]),
                ("search undecodable", ["search", os.fsdecode(b"Condor \xff"), *t]),  # bad input from here
                ("graph depth", ["graph", "Condor", *t, "--depth", "-5"]),
                ("graph unknown type", ["graph", "Condor", *t, "--type", "nope"]),
            ],
            [
                ("history", ["history", "--key", "condor: database", *t]),
                ("bad as-of", ["context", REQUEST, *t, "--as-of", "last tuesday"]),  # bad input from here
                ("missing argument", ["search", *t]),
                ("as-of superscript", ["context", REQUEST, *t, "--as-of", "\u00b2"]),
                ("as-of beyond the ledger", ["context", REQUEST, *t, "--as-of", "9" * 20]),
                ("graph bad relation", ["graph", "Condor", *t, "--relation", "not a relation"]),
                ("context two requests", ["context", "Which", "database?", *t]),
                ("context replay without its id", ["context", "replay", *t]),
                ("context request twice", ["context", REQUEST, "--request", REQUEST, *t]),
                ("context no request", ["context", *t]),
                ("context blank request", ["context", "  ", *t]),
            ],
        ],
    )
    return Run(tenant, turn_id, fact_id, turn_position, fact_position, key_tenant, results)


def test_keys_create_prints_the_new_key_as_json(run: Run) -> None:
    key = issued(run.results)
    assert set(key) == {"key_id", "tenant_id", "key"}
    assert key["tenant_id"] == run.key_tenant
    assert key["key"].startswith("mlk_")
    assert key["key_id"].startswith("k-")


def test_keys_list_shows_ids_and_labels_never_the_keys(run: Run) -> None:
    key = issued(run.results)
    listed = ok(run.results["keys list"])
    [line] = listed.splitlines()
    assert line.startswith(key["key_id"])
    assert "active" in line
    assert "laptop" in line
    assert key["key"] not in listed


def test_keys_revoke_stops_the_key(run: Run, server: ApiServer) -> None:
    key = issued(run.results)
    assert ok(run.results["keys revoke"]).strip() == f"revoked {key['key_id']}"
    [line] = ok(run.results["keys list after revoke"]).splitlines()
    assert "revoked" in line
    response = server.client(key["key"]).get("/v1/settings")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthorized"


def test_search_prints_the_fact_with_its_turns(run: Run) -> None:
    items = json_lines(run.results["search"])
    fact = next(i for i in items if i["item_id"] == run.fact_id)
    assert fact["text"] == STATEMENT
    assert fact["source_turns"] == [run.turn_id]


def test_search_by_kind_prints_only_turns_each_with_its_day(run: Run) -> None:
    lines = ok(run.results["search turns"]).splitlines()
    assert lines and all(" turn " in line for line in lines)
    assert any(line.split()[2] == f"{run.turn_id}:" and f"{run.turn_id} (" in line for line in lines)
    refused = run.results["search unknown kind"]
    assert refused.returncode == 2 and "memo" in refused.stderr


def test_graph_prints_the_relationships_with_their_turns(run: Run) -> None:
    [answer] = json_lines(run.results["graph"])
    assert answer["entity"]["entity_id"] == "project:condor"
    edge = next(e for e in answer["edges"] if e["relation"] == "USES")
    assert edge["target_name"] == "PostgreSQL"
    assert edge["source_turns"] == [run.turn_id]


def test_provenance_prints_the_chain_back_to_the_turn(run: Run) -> None:
    [chain] = json_lines(run.results["provenance"])
    assert chain["item_id"] == run.fact_id
    assert chain["steps"][0]["type"] == "fact.extracted"
    assert chain["steps"][0]["position"] == run.fact_position
    assert [(t["turn_id"], t["text"]) for t in chain["turns"]] == [(run.turn_id, STATEMENT)]


def test_history_prints_every_fact_stated_on_the_key(run: Run) -> None:
    lines = ok(run.results["history"]).splitlines()
    assert lines == [line for line in lines if line.startswith("#")]
    assert any(f"#{run.fact_position} " in line and "fact.extracted" in line and STATEMENT in line for line in lines)


def test_context_json_cites_the_fact_and_replay_matches(run: Run) -> None:
    [served] = json_lines(run.results["context"])
    assert served["event_id"].startswith("context:")
    assert served["selection"]["empty_reason"] is None, served["selection"]
    assert run.fact_id in [i["item_id"] for i in served["selection"]["items"]]
    assert f"turns {run.turn_id}" in served["block"]
    replayed = ok(run.results["replay"])
    assert served["block"] in replayed
    assert replayed.rstrip().endswith("matches the served block")
    assert "DOES NOT MATCH" not in replayed
    assert ok(run.results["replay, the id last"]) == replayed  # before: "unrecognized arguments"


def test_context_takes_a_request_saying_replay_with_the_request_option(run: Run) -> None:
    [served] = json_lines(run.results["request saying replay"])
    assert served["selection"]["request"] == "replay"
    assert served["event_id"].startswith("context:")


def test_context_as_of_a_position_shows_memory_as_it_was_then(run: Run) -> None:
    [then] = json_lines(run.results["as of the turn"])
    assert then["selection"]["items"] == []
    assert then["selection"]["as_of"] is not None
    assert then["selection"]["as_of"].endswith(f":{run.turn_position}")
    [later] = json_lines(run.results["as of the fact"])
    assert run.fact_id in [i["item_id"] for i in later["selection"]["items"]]
    assert later["selection"]["as_of"].endswith(f":{run.fact_position}")


def test_graph_takes_a_relation_and_an_entity_type_in_any_case(run: Run) -> None:
    [answer] = json_lines(run.results["graph any case"])
    assert [(e["relation"], e["target_name"]) for e in answer["edges"]] == [("USES", "PostgreSQL")]


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("bad as-of", "--as-of must be a position or an ISO 8601 time"),
        ("missing argument", "usage: memledger search"),
        ("search k below 1", "k must be between 1 and 100, not -1"),
        ("search k beyond the limit", "k must be between 1 and 100, not 9999999999999999999"),
        ("search undecodable", "query holds a lone surrogate"),
        ("as-of superscript", "--as-of must be a position or an ISO 8601 time"),
        ("as-of beyond the ledger", "is beyond the last ledger position, 9223372036854775807"),
        ("graph depth", "depth must be between 1 and 3 hops, not -5"),
        ("graph unknown type", "invalid entity_type 'nope': is not an entity type (the types are person,"),
        ("graph bad relation", "invalid relation 'not a relation': is not a relation"),
        ("context two requests", "context takes one request; 'database?' is one argument too many"),
        ("context replay without its id", "context replay needs the ContextServed event id"),
        ("context request twice", "give the request once"),
        ("context no request", "context needs a request"),
        ("context blank request", "the request is blank"),
    ],
)
def test_a_bad_argument_exits_2_with_a_message(run: Run, name: str, message: str) -> None:
    done = run.results[name]
    assert done.returncode == 2
    assert message in done.stderr
    assert done.stdout == ""


def test_context_naming_a_model_counts_by_its_tokenizer(run: Run) -> None:
    """A one-shot command has no deadline: it loads the model's tokenizer, not the estimate."""
    answer = json.loads(ok(run.results["by a model"]))
    assert answer["tokens_estimated"] is False
    assert "Condor" in answer["block"]
