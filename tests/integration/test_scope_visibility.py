"""A person's words reach only requests that share a scope with them. Turns, and the
entities and relationships drawn from them, used to be read tenant-wide: user u1's
"I'm seeing my therapist Dr. Miller on Fridays", said in project p1, came back to
user u2 of project p2 in search and in the context block's graph items. Facts were
always read from the request's scopes only.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from memledger.library import MemoryLedger
from memledger.service import search
from memledger.service.types import Scopes
from tests.conftest import TestDatabase
from tests.e2e.conftest import scratch

U1 = Scopes(session="s1", project="p1", user="u1")
U2 = Scopes(session="s2", project="p2", user="u2")
SAID = (
    "I'm seeing my therapist Dr. Miller on Fridays.",
    "I'm using Django with my colleague Priya.",
)


@pytest.fixture(scope="module")
def ledger(database: TestDatabase) -> Iterator[MemoryLedger]:
    with scratch(database, "scope_visibility") as opened:
        yield opened


def _said(ledger: MemoryLedger, u1: Scopes) -> str:
    tenant = f"vis-{uuid.uuid4().hex[:8]}"
    for text in SAID:
        ledger.record_turn(tenant, "user", text, scopes=u1)
    ledger.process()
    return tenant


def _found(ledger: MemoryLedger, tenant: str, query: str, scopes: Scopes) -> list[str]:
    return [f"{item.kind}: {item.text}" for item in ledger.search(tenant, query, scopes=scopes, k=20)]


def _graph_items(ledger: MemoryLedger, tenant: str, scopes: Scopes) -> list[str]:
    block = ledger.select(tenant, "Who is Priya? Should I use Django?", scopes=scopes)
    return [f"{item.kind}: {item.text}" for item in block.items if item.kind in ("entity", "relationship")]


def test_another_users_turns_and_graph_in_another_project_are_not_shown(ledger: MemoryLedger) -> None:
    tenant = _said(ledger, U1)

    assert any("therapist" in hit for hit in _found(ledger, tenant, "therapist", U1)), "the control: u1 finds it"
    assert _found(ledger, tenant, "therapist", U2) == []
    assert any("Priya" in item for item in _graph_items(ledger, tenant, U1)), "the control: u1's block has it"
    assert _graph_items(ledger, tenant, U2) == []
    head = 2**62  # as of a ledger position (beyond the head: the whole ledger), read from the ledger
    then = ledger.select(tenant, "Who is Priya? Should I use Django?", scopes=U2, as_of=head)
    assert [item for item in then.items if item.kind in ("entity", "relationship")] == []


def test_members_of_one_organisation_share_each_others_words(ledger: MemoryLedger) -> None:
    tenant = _said(ledger, Scopes(session="s1", project="p1", user="u1", org="acme"))
    colleague = Scopes(session="s2", project="p2", user="u2", org="acme")

    assert any("therapist" in hit for hit in _found(ledger, tenant, "therapist", colleague))
    shared = _graph_items(ledger, tenant, colleague)
    assert any("Django" in item for item in shared)
    assert not [item for item in shared if "hid.user." in item], "u1's own edges (u1 WORKS_WITH Priya) are u1's"


def test_a_search_with_no_scope_sees_the_whole_tenant(ledger: MemoryLedger) -> None:
    tenant = _said(ledger, U1)

    assert any("therapist" in hit for hit in _found(ledger, tenant, "therapist", Scopes()))


def test_the_graph_asked_with_scopes_answers_only_from_turns_sharing_one(ledger: MemoryLedger) -> None:
    """The agents' graph tool (MCP query_graph) passes the conversation's scopes; before,
    it answered for the whole tenant, and u2's agent read u1's edges."""
    tenant = _said(ledger, U1)

    def edges(scopes: Scopes | None, *, every_user: bool = False) -> list[str]:
        answer = search.query_graph(ledger.engine, tenant, "Priya", scopes=scopes, every_user=every_user)
        return [f"{e.source_name} {e.relation} {e.target_name}" for e in answer.edges]

    assert edges(U1) and edges(None, every_user=True) == edges(U1), "the controls: u1 and an operator see it"
    assert edges(None) == [], "an edge of u1's is not shown to a request naming no user"
    assert edges(U2) == []
    assert edges(Scopes(org="acme", user="u2")) == []
    hidden = ledger.graph(tenant, "Priya", scopes=U2)  # the library's, the same
    assert (hidden.entity, hidden.edges) == (None, [])  # not even that u1 spoke of her
    shown = ledger.graph(tenant, "Priya", scopes=U1)
    assert shown.entity is not None and shown.edges
