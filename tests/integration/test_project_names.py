""" "Atlas uses MongoDB." said in project atlas is the project's fact, whether the tenant
stores its scope keys as keyed hashes (the default) or as given: the worker finds the
word of the text the stored key is the hash of."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from memledger.config import Settings
from memledger.events.catalogue import FactExtracted
from memledger.library import MemoryLedger
from memledger.service.types import Scopes
from memledger.store import event_reads
from tests.conftest import TestDatabase
from tests.e2e.conftest import scratch

ATLAS = Scopes(session="carol-1", project="atlas", user="carol")


@pytest.fixture(scope="module")
def ledger(database: TestDatabase) -> Iterator[MemoryLedger]:
    with scratch(database, "projnames") as opened:
        yield opened


def _facts(ledger: MemoryLedger, tenant: str) -> list[FactExtracted]:
    with ledger.engine.connect() as conn:
        return [r.event for r in event_reads.read_tenant(conn, tenant) if isinstance(r.event, FactExtracted)]


@pytest.mark.parametrize("hashed", [True, False], ids=["hashed keys", "raw keys"])
def test_the_projects_bare_name_makes_its_facts(ledger: MemoryLedger, hashed: bool) -> None:
    url = ledger.database.url.render_as_string(hide_password=False)
    with MemoryLedger.open(Settings(DATABASE_URL=url, hash_scope_ids=hashed)) as opened:
        tenant = f"projnames-{uuid.uuid4().hex[:8]}"
        opened.record_turn(tenant, "user", "Atlas uses MongoDB.", scopes=ATLAS)
        opened.record_turn(tenant, "user", "Atlas must support French.", scopes=ATLAS)
        opened.process()
        facts = {f.key: f for f in _facts(opened, tenant)}
        assert set(facts) == {"atlas: database", "constraint: support french"}
        assert {f.scope for f in facts.values()} == {"project"}
        assert all(f.scope_key.startswith("hid.project.") == hashed for f in facts.values())
        block = opened.context(tenant, "Which database does Atlas use?", scopes=ATLAS).text
        assert "Atlas uses MongoDB." in block


def test_a_capitalised_word_that_is_not_the_project_names_nothing(ledger: MemoryLedger) -> None:
    tenant = f"projnames-{uuid.uuid4().hex[:8]}"
    ledger.record_turn(tenant, "user", "Mercury uses MongoDB.", scopes=ATLAS)
    ledger.process()
    assert [f.key for f in _facts(ledger, tenant) if f.key.startswith("mercury")] == []
