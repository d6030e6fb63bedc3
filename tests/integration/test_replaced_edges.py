""" "I now work at Globex.": a person's newer fact on a key retracts their relationship
to what the older fact named (employer's PART_OF, a preference's PREFERS), as part of
the newer turn's extraction, whether the older one was projected or said in the same
batch; what was not replaced, and another person's edges, stay. A project's newer fact
("Atlas now uses PostgreSQL instead of MongoDB.") does the same for the project's edge."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
import sqlalchemy as sa

from memledger.config import Settings
from memledger.events.catalogue import MemoryRetracted
from memledger.library import MemoryLedger
from memledger.projectors.facts.projector import conflicts, facts
from memledger.service.record import TurnInput
from memledger.service.replaced_edges import REASON
from memledger.service.types import Scopes
from memledger.store import event_reads
from tests.conftest import TestDatabase
from tests.e2e.conftest import scratch

SAM = Scopes(session="sam-w1", user="sam")
SAM_LATER = Scopes(session="sam-w3", user="sam")
RAJ = Scopes(session="raj-w1", user="raj")


@pytest.fixture(scope="module")
def ledger(database: TestDatabase) -> Iterator[MemoryLedger]:
    """A database of its own: ``process`` extracts every pending turn of the database."""
    with scratch(database, "replaced") as opened:
        yield opened


@pytest.fixture
def tenant() -> str:
    return f"replaced-{uuid.uuid4().hex[:8]}"


def _edges(ledger: MemoryLedger, tenant: str, user: str) -> set[tuple[str, str]]:
    return {(e.relation, e.target_name) for e in ledger.graph(tenant, "me", user=user).edges}


def _say(ledger: MemoryLedger, tenant: str, text: str, scopes: Scopes) -> None:
    """The user in ``scopes`` says ``text``, and it is extracted and projected."""
    ledger.record_turn(tenant, "user", text, scopes=scopes)
    ledger.process()


def _retracted(ledger: MemoryLedger, tenant: str) -> list[MemoryRetracted]:
    with ledger.engine.connect() as conn:
        return [r.event for r in event_reads.read_tenant(conn, tenant) if isinstance(r.event, MemoryRetracted)]


@pytest.mark.parametrize("together", [True, False], ids=["in one batch", "after projection"])
@pytest.mark.parametrize(
    ("newer", "reason"),
    [
        ("I now work at Globex as a staff engineer.", REASON),
        ("I left Acme.", "the speaker said it no longer holds"),  # said of Acme itself
    ],
)
def test_a_new_employer_retracts_the_old_part_of(
    ledger: MemoryLedger, tenant: str, newer: str, reason: str, together: bool
) -> None:
    ledger.record_turn(tenant, "user", "I work at Acme as a backend engineer.", scopes=SAM)
    ledger.record_turn(tenant, "user", "I use Neovim.", scopes=SAM)
    if not together:
        ledger.process()
        assert ("PART_OF", "Acme") in _edges(ledger, tenant, "sam")
    _say(ledger, tenant, newer, SAM_LATER)

    edges = _edges(ledger, tenant, "sam")
    assert ("PART_OF", "Acme") not in edges
    assert ("USES", "Neovim") in edges  # not replaced
    [retracted] = _retracted(ledger, tenant)
    assert (retracted.item_kind, retracted.reason) == ("relationship", reason)
    block = ledger.context(tenant, "Where do I work these days?", scopes=SAM_LATER).text
    assert [line for line in block.splitlines() if "PART_OF" in line and "Acme" in line] == []
    assert "backend engineer" not in block  # the old fact, superseded


def test_a_new_preference_retracts_the_old_prefers(ledger: MemoryLedger, tenant: str) -> None:
    _say(ledger, tenant, "I prefer Emacs.", SAM)
    assert ("PREFERS", "Emacs") in _edges(ledger, tenant, "sam")
    _say(ledger, tenant, "I prefer Vim.", SAM_LATER)
    edges = _edges(ledger, tenant, "sam")
    assert ("PREFERS", "Emacs") not in edges and ("PREFERS", "Vim") in edges


def test_another_persons_edges_and_a_repeated_fact_stay(ledger: MemoryLedger, tenant: str) -> None:
    ledger.record_turn(tenant, "user", "I work at Acme.", scopes=RAJ)
    _say(ledger, tenant, "I work at Acme.", SAM)
    ledger.record_turn(tenant, "user", "I work at Globex.", scopes=SAM_LATER)
    _say(ledger, tenant, "I still work at Acme, yes.", RAJ)
    assert ("PART_OF", "Acme") in _edges(ledger, tenant, "raj")
    assert ("PART_OF", "Acme") not in _edges(ledger, tenant, "sam")
    assert len(_retracted(ledger, tenant)) == 1  # Sam's, once


def test_a_turn_without_a_user_retracts_nothing(ledger: MemoryLedger, tenant: str) -> None:
    nobody = Scopes(session="anon")
    _say(ledger, tenant, "I work at Acme.", nobody)
    _say(ledger, tenant, "I work at Globex.", nobody)
    assert _retracted(ledger, tenant) == []


@pytest.mark.parametrize(
    ("first", "then", "again", "edge"),
    [
        ("I prefer Emacs.", "I prefer Vim.", "I prefer Emacs.", ("PREFERS", "Emacs")),
        ("I work at Acme.", "I left Acme.", "I work at Acme again.", ("PART_OF", "Acme")),
    ],
)
def test_an_edge_said_again_after_it_was_replaced_comes_back(
    ledger: MemoryLedger, tenant: str, first: str, then: str, again: str, edge: tuple[str, str]
) -> None:
    for n, said in enumerate((first, then, again)):
        _say(ledger, tenant, said, Scopes(session=f"sam-{n}", user="sam"))
        assert (edge in _edges(ledger, tenant, "sam")) == (n != 1), said


def test_leaving_another_employer_keeps_the_edge_to_this_one(ledger: MemoryLedger, tenant: str) -> None:
    _say(ledger, tenant, "I work at Acme.", SAM)
    _say(ledger, tenant, "I left Globex.", SAM_LATER)
    assert ("PART_OF", "Acme") in _edges(ledger, tenant, "sam")
    assert not any("acme" in event.item_id for event in _retracted(ledger, tenant))


ATLAS = Scopes(session="sam-a1", user="sam", project="atlas")
ATLAS_LATER = Scopes(session="sam-a2", user="sam", project="atlas")
PHOENIX = Scopes(session="sam-p1", user="sam", project="phoenix")


def _edges_of(ledger: MemoryLedger, tenant: str, name: str) -> set[tuple[str, str]]:
    return {(e.relation, e.target_name) for e in ledger.graph(tenant, name).edges if e.source_name == name}


@pytest.mark.parametrize("together", [True, False], ids=["in one batch", "after projection"])
def test_a_projects_newer_fact_retracts_the_edge_to_what_it_replaced(
    ledger: MemoryLedger, tenant: str, together: bool
) -> None:
    """The fact on Atlas's database is replaced; the edge to the old database went with
    it only since this change (the block showed "Atlas USES MongoDB" beside the new fact)."""
    ledger.record_turn(tenant, "user", "Atlas uses MongoDB.", scopes=ATLAS)
    ledger.record_turn(tenant, "user", "Atlas uses Kubernetes.", scopes=ATLAS)  # another slot
    ledger.record_turn(tenant, "user", "Phoenix uses MongoDB.", scopes=PHOENIX)  # another project
    if not together:
        ledger.process()
        assert ("USES", "MongoDB") in _edges_of(ledger, tenant, "Atlas")
    _say(ledger, tenant, "Atlas now uses PostgreSQL instead of MongoDB.", ATLAS_LATER)

    atlas = _edges_of(ledger, tenant, "Atlas")
    assert ("USES", "MongoDB") not in atlas
    assert {("USES", "PostgreSQL"), ("USES", "Kubernetes")} <= atlas
    assert ("USES", "MongoDB") in _edges_of(ledger, tenant, "Phoenix")
    [retracted] = _retracted(ledger, tenant)
    assert (retracted.item_id, retracted.reason) == ("project:atlas|USES|tool:mongodb", REASON)
    block = ledger.context(tenant, "What database does Atlas use?", scopes=ATLAS_LATER).text
    assert "Atlas USES PostgreSQL" in block and "Atlas USES MongoDB" not in block


def test_a_project_fact_said_again_retracts_nothing(ledger: MemoryLedger, tenant: str) -> None:
    _say(ledger, tenant, "Atlas uses MongoDB.", ATLAS)
    _say(ledger, tenant, "Atlas still uses MongoDB.", ATLAS_LATER)
    assert ("USES", "MongoDB") in _edges_of(ledger, tenant, "Atlas")
    assert _retracted(ledger, tenant) == []


@pytest.mark.parametrize("together", [True, False], ids=["in one batch", "after projection"])
def test_two_project_facts_in_conflict_keep_both_edges(ledger: MemoryLedger, tenant: str, together: bool) -> None:
    """Said at the same moment, neither fact wins the slot (an open conflict), so neither
    edge is replaced, whether the older was in the batch or already projected."""
    at = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
    falcon = Scopes(session="sam-f1", user="sam", project="falcon")
    ledger.record_turn(tenant, "user", "Project Falcon uses Redis.", scopes=falcon, occurred_at=at)
    if not together:
        ledger.process()
    ledger.record_turn(tenant, "user", "Project Falcon uses Memcached.", scopes=falcon, occurred_at=at)
    ledger.process()
    assert {("USES", "Redis"), ("USES", "Memcached")} <= _edges_of(ledger, tenant, "Falcon")
    assert _retracted(ledger, tenant) == []


def test_a_persons_choice_between_two_facts_keeps_its_edge(ledger: MemoryLedger, tenant: str) -> None:
    """The fold keeps a fact a person chose whatever is said after; so does its edge."""
    at = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
    falcon = Scopes(session="sam-f1", user="sam", project="falcon")
    for said in ("Project Falcon uses Redis.", "Project Falcon uses Memcached."):
        ledger.record_turn(tenant, "user", said, scopes=falcon, occurred_at=at)
    ledger.process()
    with ledger.engine.connect() as conn:
        conflict = conn.execute(sa.select(conflicts.c.conflict_id).where(conflicts.c.tenant_id == tenant)).scalar_one()
        redis = conn.execute(
            sa.select(facts.c.memory_id).where(facts.c.tenant_id == tenant, facts.c.statement.contains("Redis"))
        ).scalar_one()
    ledger.resolve_conflict(tenant, conflict, redis, reason="Redis it is")
    _say(ledger, tenant, "Project Falcon now uses Hazelcast instead of Redis.", falcon)
    assert ("USES", "Redis") in _edges_of(ledger, tenant, "Falcon")
    assert _retracted(ledger, tenant) == []


def test_the_projects_fact_does_not_retract_the_persons_edge(ledger: MemoryLedger, tenant: str) -> None:
    """The new turn also says "I prefer PostgreSQL.": that edge is the person's, not the
    project's, and their preference for MongoDB, said twice, still wins its own slot."""
    ledger.record_turn(tenant, "user", "I prefer MongoDB.", scopes=ATLAS)
    ledger.record_turn(tenant, "user", "I prefer MongoDB.", scopes=ATLAS)
    _say(ledger, tenant, "Atlas uses MongoDB.", ATLAS)
    said = "Atlas now uses PostgreSQL instead of MongoDB. I prefer PostgreSQL."
    _say(ledger, tenant, said, ATLAS_LATER)
    assert ("PREFERS", "MongoDB") in _edges(ledger, tenant, "sam")
    assert ("USES", "MongoDB") not in _edges_of(ledger, tenant, "Atlas")


def test_another_tenants_batch_is_not_read_as_this_ones(database: TestDatabase) -> None:
    """One batch holds both tenants' turns; with plain (unhashed) user keys both have a
    "sam", and a relationship id names no tenant."""
    with scratch(database, "replaced-plain") as hashed:
        url = hashed.database.url.render_as_string(hide_password=False)
        with MemoryLedger.open(Settings(DATABASE_URL=url, hash_scope_ids=False)) as plain:
            ledger_a, ledger_b = f"a-{uuid.uuid4().hex[:6]}", f"b-{uuid.uuid4().hex[:6]}"
            plain.record_turn(ledger_a, "user", "I prefer Emacs.", scopes=SAM)
            plain.record_turn(ledger_b, "user", "I prefer Vim.", scopes=SAM)
            plain.process()
            assert ("PREFERS", "Emacs") in _edges(plain, ledger_a, "sam")
            assert _retracted(plain, ledger_a) == [] and _retracted(plain, ledger_b) == []


def test_a_persons_two_preferences_said_at_once_keep_both_edges(ledger: MemoryLedger, tenant: str) -> None:
    """As for a project: neither fact wins the slot, so neither edge is replaced."""
    at = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
    ledger.record_turns(
        tenant,
        [
            TurnInput(role="user", text="I prefer Emacs.", scopes=SAM, occurred_at=at),
            TurnInput(role="user", text="I prefer Vim.", scopes=SAM, occurred_at=at),
        ],
    )
    ledger.process()
    assert {("PREFERS", "Emacs"), ("PREFERS", "Vim")} <= _edges(ledger, tenant, "sam")
    assert _retracted(ledger, tenant) == []
