"""What a context request keeps between requests (which tenant a key reaches, the
tenant's switches) never outlives a change: a revocation or a switch made in this
process is seen by the next request, one made by another process within the kept
answer's time, and an erasure leaves nothing kept that could serve the erased words."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from memledger.api.app import create_app
from memledger.library import MemoryLedger
from memledger.service import erasure, keys, tenant_settings
from memledger.service.record import TurnInput
from memledger.service.ttl_cache import TtlCache
from memledger.service.types import Scopes
from tests.conftest import TestDatabase
from tests.e2e.conftest import run_cli, scratch_ledger

SCOPES = {"session": "s1", "user": "ada"}
QUESTION = {"request": "Which tool does project Phoenix use?", **SCOPES}


@pytest.fixture(scope="module")
def ledger(database: TestDatabase) -> Iterator[MemoryLedger]:
    opened, drop = scratch_ledger(database, "caches")
    try:
        yield opened
    finally:
        drop()


@pytest.fixture
def tenant(ledger: MemoryLedger) -> str:
    """A tenant whose memory holds one fact about Phoenix, said by ada."""
    tenant = f"cache-{uuid.uuid4().hex[:8]}"
    said = TurnInput(role="user", text="Project Phoenix uses Zorblaxify.", scopes=Scopes(**SCOPES))
    ledger.record_turns(tenant, [said])
    ledger.process()
    return tenant


def _context(client: TestClient, key: str) -> tuple[int, dict[str, object]]:
    response = client.get("/v1/memory/context", params=QUESTION, headers={"Authorization": f"Bearer {key}"})
    return response.status_code, response.json()


def test_a_key_revoked_in_this_process_is_refused_by_the_next_request(ledger: MemoryLedger, tenant: str) -> None:
    key_id, key = ledger.create_key(tenant)
    with TestClient(create_app(ledger.database)) as client:
        for _ in range(2):  # the second is answered from what the first looked up
            assert _context(client, key)[0] == 200
        keys.revoke(ledger.engine, tenant, key_id)
        status, body = _context(client, key)
    assert status == 401, body


def test_a_key_revoked_by_another_process_stops_within_the_kept_time(
    ledger: MemoryLedger, tenant: str, database: TestDatabase, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept_s = 1.0
    monkeypatch.setattr(keys, "_holders", TtlCache(kept_s, 64))
    key_id, key = ledger.create_key(tenant)
    env = {**database.env, "DATABASE_URL": ledger.database.url.render_as_string(hide_password=False)}
    with TestClient(create_app(ledger.database)) as client:
        assert _context(client, key)[0] == 200
        revoked = run_cli(env, "keys", "revoke", "--tenant", tenant, key_id)  # another process
        assert revoked.returncode == 0, revoked.stderr
        done = time.monotonic()
        time.sleep(kept_s)
        status, body = _context(client, key)
    assert status == 401, (body, time.monotonic() - done)


def test_a_key_is_not_kept_when_its_revocation_races_the_lookup(ledger: MemoryLedger, tenant: str) -> None:
    key_id, key = ledger.create_key(tenant)
    engine = ledger.database.engine
    generation = keys._holders.generation()  # a lookup began before the revocation
    keys.revoke(ledger.engine, tenant, key_id)
    keys._holders.put((engine.pool, keys.key_hash(key)), (tenant, key_id), generation)  # it ends after
    assert keys.kept_holder(engine, key) is None
    assert keys.holder_kept(engine, key) is None


def test_switching_recall_off_is_seen_by_the_next_context(ledger: MemoryLedger, tenant: str) -> None:
    _, key = ledger.create_key(tenant)
    with TestClient(create_app(ledger.database)) as client:
        first = _context(client, key)[1]
        assert first["item_ids"], first
        ledger.settings(tenant, recall=False)
        off = _context(client, key)[1]
        ledger.settings(tenant, recall=True)
        on = _context(client, key)[1]
    assert off["item_ids"] == [] and "recall is switched off" in str(off["empty_reason"]), off
    assert on["item_ids"], on


def test_a_switch_changed_by_another_process_is_seen_within_the_kept_time(
    ledger: MemoryLedger, tenant: str, database: TestDatabase, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept_s = 1.0
    monkeypatch.setattr(tenant_settings, "_kept", TtlCache(kept_s, 64))
    _, key = ledger.create_key(tenant)
    env = {**database.env, "DATABASE_URL": ledger.database.url.render_as_string(hide_password=False)}
    with TestClient(create_app(ledger.database)) as client:
        assert _context(client, key)[1]["item_ids"]
        changed = run_cli(env, "settings", "--tenant", tenant, "--recall", "off")
        assert changed.returncode == 0, changed.stderr
        time.sleep(kept_s)
        off = _context(client, key)[1]
    assert off["item_ids"] == [] and "recall is switched off" in str(off["empty_reason"]), off


def test_erased_words_are_not_served_though_the_key_and_switches_are_kept(ledger: MemoryLedger, tenant: str) -> None:
    _, key = ledger.create_key(tenant)
    with TestClient(create_app(ledger.database)) as client:
        before = _context(client, key)[1]
        assert "Zorblaxify" in str(before["block"]), before
        erasure.erase(ledger.engine, tenant, "ada", reason="asked", vacuum_after=False)
        after = _context(client, key)[1]
    assert "Zorblaxify" not in str(after["block"]), after
    assert after["item_ids"] == [], after
