"""Tamper evidence: the hash chain names the first altered or deleted event, even when
the append-only trigger was bypassed by a superuser.

The tampering tests run on a database of this module's own: an event left altered (a
recording time BC, a moved transaction id) breaks every later reader of the whole
ledger, such as another module's projection catch-up.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from memledger.errors import NotFound
from memledger.service import integrity
from memledger.store import event_store
from tests.conftest import TestDatabase, turn_event
from tests.integration.test_projections_support import fresh_database


@pytest.fixture(scope="module")
def engine(database: TestDatabase) -> Iterator[Engine]:
    """A migrated database of this module's own."""
    with fresh_database(database, "tamper") as engine:
        yield engine


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
    assert finding.stopped, "found at a link: the walk stopped there"


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
    assert "behind the sealer" in result.findings[0].problem
    assert not result.findings[0].stopped, "found after the whole chain was walked"


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


# --- when an event was recorded, and the transaction that wrote it -----------------------
# ``context --as-of`` reads recorded_at, and the ledger's order is (tx_id, position): the
# chain covers both (link format 2, docs/adr/0007).

_WHERE = " WHERE tenant_id = :t AND position = :p"
RECORDED_AT_CHANGES = {
    "an hour earlier": "UPDATE events SET recorded_at = recorded_at - interval '1 hour'" + _WHERE,
    "a microsecond later": "UPDATE events SET recorded_at = recorded_at + interval '1 microsecond'" + _WHERE,
    # The same text as to_char prints it, but the year BC.
    "the same date BC": "UPDATE events SET recorded_at ="
    " ((recorded_at AT TIME ZONE 'UTC')::text || ' BC')::timestamp AT TIME ZONE 'UTC'" + _WHERE,
}


@pytest.mark.parametrize("statement", RECORDED_AT_CHANGES.values(), ids=RECORDED_AT_CHANGES.keys())
def test_verify_names_the_event_whose_recording_time_a_superuser_changed(
    engine: Engine, tenant: str, statement: str
) -> None:
    positions = _append(engine, tenant, 6)
    integrity.seal(engine)
    _as_superuser(engine, statement, t=tenant, p=positions[3])
    (finding,) = integrity.verify(engine, tenant).findings
    assert (finding.position, finding.problem) == (positions[3], "altered: its content no longer matches its hash")


def test_verify_names_the_event_whose_transaction_id_a_superuser_changed(engine: Engine, tenant: str) -> None:
    """The audit's reproduction: tx_id set to 100 verified OK."""
    positions = _append(engine, tenant, 6)
    integrity.seal(engine)
    _as_superuser(
        engine, "UPDATE events SET tx_id = '100' WHERE tenant_id = :t AND position = :p", t=tenant, p=positions[2]
    )
    (finding,) = integrity.verify(engine, tenant).findings
    assert finding.position == positions[2]
    assert finding.problem.startswith("altered")


def _burn_a_transaction_id(engine: Engine) -> str:
    with engine.begin() as tx:
        # text(): a committed transaction that takes an id and writes nothing.
        return str(tx.execute(sa.text("SELECT pg_current_xact_id()::text")).scalar_one())


def test_a_transaction_id_changed_within_the_ledger_order_is_still_caught(engine: Engine, tenant: str) -> None:
    """The hash covers tx_id itself: moving an event to a free id between its neighbours'
    keeps the order, and is named all the same."""
    first = _append(engine, tenant, 1)
    free = _burn_a_transaction_id(engine)
    middle = _append(engine, tenant, 1)
    _append(engine, tenant, 1)
    integrity.seal(engine)
    _as_superuser(
        engine,
        "UPDATE events SET tx_id = CAST(:x AS xid8) WHERE tenant_id = :t AND position = :p",
        x=free,
        t=tenant,
        p=middle[0],
    )
    (finding,) = integrity.verify(engine, tenant).findings
    assert (finding.position, finding.problem) == (middle[0], "altered: its content no longer matches its hash")
    assert first[0] < middle[0]


def test_verify_gives_the_same_answer_in_any_session_time_zone(database: TestDatabase, tenant: str) -> None:
    _append(database.engine, tenant, 3)
    integrity.seal(database.engine)
    elsewhere = sa.create_engine(database.url, connect_args={"options": "-c TimeZone=Pacific/Chatham"})
    try:
        with elsewhere.connect() as conn:  # the option took
            # text(): reads the session setting the engine was made with.
            assert conn.execute(sa.text("SHOW TimeZone")).scalar_one() == "Pacific/Chatham"
        result = integrity.verify(elsewhere, tenant)
    finally:
        elsewhere.dispose()
    assert result.ok and result.events == 3
