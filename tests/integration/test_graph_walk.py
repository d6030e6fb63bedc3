"""The graph walk's one statement for two hops reads what walking hop by hop reads.

``graph_queries.walk`` reads hops 1 and 2 in one statement, which ranks the edges
touching hop 2's frontier from each end's index and reads only those it keeps. The
reference here walks the same rules in Python over every row of the tenant: each hop
keeps the ``limit`` most confident active edges touching its frontier (ties by key),
each edge once, at the hop it was first reached. A hub with more edges than the limit
makes the limit bite; equal confidences make the tie-break count; retracted edges,
symmetric edges and edges with both ends in the frontier are among them.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from memledger.events.catalogue import Event, MemoryRetracted, RelationshipObserved
from memledger.events.keys import entity_id, relationship_key
from memledger.projectors.relationships import graph_queries
from memledger.projectors.relationships.projector import relationships
from tests.conftest import project_events

NODES = [("person", f"Person {i}") for i in range(12)] + [("tool", f"Tool {i}") for i in range(8)]
NODES += [("project", f"Project {i}") for i in range(6)]
HUB = ("person", "Hub Person")
RELATIONS = ("WORKS_WITH", "USES", "WORKS_ON", "KNOWS")


def _edge(i: int, source: tuple[str, str], relation: str, target: tuple[str, str], confidence: float) -> Event:
    return RelationshipObserved(
        relationship_id=f"e-{i}",
        source_name=source[1],
        source_type=source[0],  # type: ignore[arg-type]
        relation=relation,
        target_name=target[1],
        target_type=target[0],  # type: ignore[arg-type]
        confidence=confidence,
        source_turns=(f"t-{i}",),
    )


def _events(rng: random.Random) -> list[Event]:
    out: list[Event] = []
    said: set[str] = set()
    pairs = [(a, b) for a in [HUB, *NODES] for b in NODES if a != b]
    # The hub touches most nodes, in both directions, so hop 2 from its neighbours
    # meets far more edges than the limit.
    chosen = [(HUB, b) for b in NODES] + [(b, HUB) for b in NODES[::3]] + rng.sample(pairs, 120)
    for i, (a, b) in enumerate(chosen):
        relation = rng.choice(RELATIONS)
        key = relationship_key(a[0], a[1], relation, b[0], b[1])
        if key in said:
            continue
        said.add(key)
        out.append(_edge(i, a, relation, b, rng.choice((0.6, 0.7, 0.8, 0.9))))  # ties on purpose
    for key in rng.sample(sorted(said), 25):
        out.append(MemoryRetracted(item_id=key, item_kind="relationship"))
    return out


@pytest.fixture(scope="module")
def graph(database: Any) -> tuple[Engine, str]:
    engine: Engine = database.engine
    return engine, project_events(engine, "walk", _events(random.Random(5)), ["relationships"])


def _reference(
    rows: Sequence[Any],
    start: set[str],
    depth: int,
    limit: int,
    relations: Sequence[str] | None,
    entity_types: Sequence[str] | None,
) -> list[tuple[str, int]]:
    """``walk``'s rules over every row, one hop at a time."""
    active = [r for r in rows if r.status == "active" and (relations is None or r.relation in relations)]
    frontier, seen_nodes, seen_edges = set(start), set(start), set()
    found: list[tuple[str, int]] = []
    for hop in range(1, depth + 1):
        touching = [r for r in active if r.source_entity_id in frontier or r.target_entity_id in frontier]
        touching.sort(key=lambda r: (-r.confidence, r.relationship_key))
        next_frontier: set[str] = set()
        for r in touching[:limit]:
            if r.relationship_key in seen_edges:
                continue
            far = r.target_entity_id if r.source_entity_id in frontier else r.source_entity_id
            far_type = r.target_type if far == r.target_entity_id else r.source_type
            if entity_types is not None and far_type not in entity_types:
                continue
            seen_edges.add(r.relationship_key)
            found.append((r.relationship_key, hop))
            if far not in seen_nodes:
                seen_nodes.add(far)
                next_frontier.add(far)
        frontier = next_frontier
    return found


STARTS = [
    {entity_id(*HUB)},
    {entity_id("person", "Person 3")},
    {entity_id("tool", "Tool 2"), entity_id("project", "Project 1")},
]


@pytest.mark.parametrize("limit", [3, 8, 40, 200])
@pytest.mark.parametrize(
    ("relations", "entity_types"),
    [(None, None), (["WORKS_WITH", "USES"], None), (None, ["tool", "person"])],
)
def test_two_hops_in_one_statement_read_what_hop_by_hop_reads(
    graph: tuple[Engine, str], limit: int, relations: list[str] | None, entity_types: list[str] | None
) -> None:
    engine, tenant = graph
    with engine.connect() as conn:
        rows = conn.execute(sa.select(relationships).where(relationships.c.tenant_id == tenant)).all()
        assert sum(r.status != "active" for r in rows) == 25
        hops = set()
        for start in STARTS:
            walked = graph_queries.walk(
                conn, tenant, start, depth=2, relations=relations, entity_types=entity_types, limit_per_hop=limit
            )
            expected = _reference(rows, start, 2, limit, relations, entity_types)
            assert [(e.relationship_key, e.hop) for e in walked] == expected
            hops |= {hop for _, hop in expected}
    assert hops == {1, 2}


def test_the_limit_bites_at_hop_two(graph: tuple[Engine, str]) -> None:
    """The hub's neighbours touch more active edges than a limit of 8: the walk keeps
    the 8 most confident, not the first 8 it meets."""
    engine, tenant = graph
    with engine.connect() as conn:
        rows = conn.execute(sa.select(relationships).where(relationships.c.tenant_id == tenant)).all()
        walked = graph_queries.walk(conn, tenant, {entity_id("tool", "Tool 2")}, depth=2, limit_per_hop=8)
    by_key = {r.relationship_key: r for r in rows}
    hop2 = [by_key[e.relationship_key] for e in walked if e.hop == 2]
    assert hop2
    assert all(r.status == "active" for r in hop2)
    assert len(_reference(rows, {entity_id("tool", "Tool 2")}, 2, 10_000, None, None)) > 16
    confidences = [r.confidence for r in hop2]
    assert confidences == sorted(confidences, reverse=True)
