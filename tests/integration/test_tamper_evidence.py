"""Tamper evidence: the hash chain names the first altered or deleted event, even when
the append-only trigger was bypassed by a superuser."""

from __future__ import annotations

import uuid

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from memledger.errors import NotFound
from memledger.service import integrity
from memledger.store import event_store
from tests.conftest import turn_event


def _append(engine: Engine, tenant: str, n: int) -> list[int]:
    with engine.begin() as tx:
        return list(event_store.append(tx, tenant, "conv", [turn_event(f"turn {i}") for i in range(n)], None).positions)


def _as_superuser(engine: Engine, statement: str, **params: object) -> None:
    # text(): the test plays an operator who bypasses the append-only trigger on purpose.
    with engine.begin() as tx:
        tx.execute(sa.text("ALTER TABLE events DISABLE TRIGGER USER"))
        tx.execute(sa.text(statement), params)
        tx.execute(sa.text("ALTER TABLE events ENABLE TRIGGER USER"))


def test_an_untouched_ledger_verifies(engine: Engine, tenant: str) -> None:
    _append(engine, tenant, 5)
    result = integrity.verify(engine, tenant)
    assert result.ok and result.events == 5


def test_verifying_a_tenant_that_has_no_events_is_not_found(engine: Engine) -> None:
    """A mistyped tenant is not a verified one ("0 events, ledger OK" before)."""
    with pytest.raises(NotFound, match="has no events to verify"):
        integrity.verify(engine, f"never-{uuid.uuid4().hex[:8]}")


def test_verify_names_the_event_a_superuser_altered(engine: Engine, tenant: str) -> None:
    positions = _append(engine, tenant, 6)
    integrity.seal(engine)
    _as_superuser(
        engine,
        "UPDATE events SET payload = jsonb_set(payload, '{text}', '\"forged\"') WHERE tenant_id = :t AND position = :p",
        t=tenant,
        p=positions[3],
    )
    result = integrity.verify(engine, tenant)
    assert not result.ok
    (finding,) = result.findings
    assert finding.position == positions[3]
    assert finding.problem.startswith("altered")


def test_verify_catches_a_deleted_event(engine: Engine, tenant: str) -> None:
    positions = _append(engine, tenant, 6)
    integrity.seal(engine)
    _as_superuser(engine, "DELETE FROM events WHERE tenant_id = :t AND position = :p", t=tenant, p=positions[2])
    result = integrity.verify(engine, tenant)
    (finding,) = result.findings
    assert finding.position == positions[2]
    assert finding.problem.startswith("deleted")


def test_verify_catches_an_event_inserted_behind_the_sealer(engine: Engine, tenant: str) -> None:
    positions = _append(engine, tenant, 3)
    integrity.seal(engine)
    _as_superuser(
        engine,
        "INSERT INTO events (tenant_id, position, stream_id, stream_version, event_id, event_type, schema_version,"
        " payload, occurred_at, tx_id) SELECT tenant_id, position - 1000000, stream_id, 99, 'forged', event_type,"
        " schema_version, payload, occurred_at, tx_id FROM events WHERE tenant_id = :t AND position = :p",
        t=tenant,
        p=positions[0],
    )
    result = integrity.verify(engine, tenant)
    assert not result.ok
    assert "behind the sealer" in result.findings[0].problem


def test_each_tenant_has_its_own_chain(engine: Engine, tenant: str) -> None:
    other = tenant + "-other"
    _append(engine, tenant, 2)
    positions = _append(engine, other, 2)
    integrity.seal(engine)
    _as_superuser(
        engine,
        'UPDATE events SET metadata = \'{"actor": "x"}\' WHERE tenant_id = :t AND position = :p',
        t=other,
        p=positions[0],
    )
    assert integrity.verify(engine, tenant).ok
    assert not integrity.verify(engine, other).ok
