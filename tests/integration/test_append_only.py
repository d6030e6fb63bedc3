"""The ledger is append-only, enforced by PostgreSQL itself: even raw SQL that
goes around the event store cannot change or remove an event."""

from __future__ import annotations

from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from memledger.store import event_store
from memledger.store.schema import events
from tests.conftest import turn_event

# text(): these tests are about raw SQL that bypasses the event store entirely.
RAW_CHANGES = {
    "update-payload": sa.text("UPDATE events SET payload = '{\"tampered\": true}'::jsonb WHERE tenant_id = :tenant"),
    "update-tenant": sa.text("UPDATE events SET tenant_id = 'thief' WHERE tenant_id = :tenant"),
    "delete": sa.text("DELETE FROM events WHERE tenant_id = :tenant"),
    "truncate": sa.text("TRUNCATE events"),
    "truncate-cascade": sa.text("TRUNCATE TABLE events RESTART IDENTITY CASCADE"),
}


def _rows(engine: Engine, tenant: str) -> list[Any]:
    with engine.connect() as conn:
        return list(
            conn.execute(sa.select(events).where(events.c.tenant_id == tenant).order_by(events.c.position)).all()
        )


def _count(engine: Engine) -> int:
    with engine.connect() as conn:
        return int(conn.execute(sa.select(sa.func.count()).select_from(events)).scalar_one())


@pytest.mark.parametrize("statement", RAW_CHANGES.values(), ids=RAW_CHANGES.keys())
def test_raw_sql_cannot_change_or_remove_an_event(engine: Engine, tenant: str, statement: sa.TextClause) -> None:
    with engine.begin() as tx:
        event_store.append(tx, tenant, "conv", [turn_event("original")], 0)
    rows_before, total_before = _rows(engine, tenant), _count(engine)

    # pytest.raises sits inside the transaction, so if the statement ever did
    # succeed the failure would roll it back and spare the session database.
    with engine.begin() as tx, pytest.raises(sa.exc.DBAPIError) as info:
        tx.execute(statement, {"tenant": tenant})

    assert getattr(info.value.orig, "sqlstate", None) == "42501"  # insufficient_privilege
    assert "append-only" in str(info.value.orig)
    assert _rows(engine, tenant) == rows_before
    assert _count(engine) == total_before


def test_the_orm_free_core_update_is_refused_too(engine: Engine, tenant: str) -> None:
    with engine.begin() as tx:
        event_store.append(tx, tenant, "conv", [turn_event("original")], 0)
    rows_before = _rows(engine, tenant)

    with engine.begin() as tx, pytest.raises(sa.exc.DBAPIError, match="append-only"):
        tx.execute(events.update().where(events.c.tenant_id == tenant).values(event_type="forged"))

    assert _rows(engine, tenant) == rows_before


def test_appending_is_still_allowed(engine: Engine, tenant: str) -> None:
    with engine.begin() as tx:
        event_store.append(tx, tenant, "conv", [turn_event("a")], 0)
        event_store.append(tx, tenant, "conv", [turn_event("b")], 1)
    assert len(_rows(engine, tenant)) == 2
