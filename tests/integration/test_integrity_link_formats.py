"""Link formats (docs/adr/0007): chains sealed before format 2, in format 1, still
verify after the upgrade, and what is sealed after it is sealed in format 2. Format 1
does not hash tx_id, but the chain's order still shows one changed out of order."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from memledger.service import integrity
from memledger.store import chain, event_store
from memledger.store.schema import event_chain
from tests.conftest import TestDatabase, turn_event
from tests.integration.test_projections_support import fresh_database


@pytest.fixture(scope="module")
def ledger(database: TestDatabase) -> Iterator[Engine]:
    """A database of this module's own: it seals in format 1, which no other chain may meet."""
    with fresh_database(database, "link_formats") as fresh:
        yield fresh


def _append(engine: Engine, tenant: str, n: int) -> list[int]:
    with engine.begin() as tx:
        return list(event_store.append(tx, tenant, "conv", [turn_event(f"turn {i}") for i in range(n)], None).positions)


def _seal_as_before_the_upgrade(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """Seal what is new as the release before format 2 did: with format 1 links."""
    with monkeypatch.context() as patched:
        patched.setattr(chain, "link", chain.link_v1)
        integrity.seal(engine)


def _formats(engine: Engine, tenant: str) -> list[int | None]:
    with engine.connect() as conn:
        stmt = sa.select(event_chain.c.hash).where(event_chain.c.tenant_id == tenant).order_by(event_chain.c.seq)
        return [chain.format_of(h) for h in conn.execute(stmt).scalars()]


def _superuser(engine: Engine, statement: str, **params: object) -> None:
    # text(): the test plays an operator who bypasses the append-only trigger on purpose.
    with engine.begin() as tx:
        tx.execute(sa.text("ALTER TABLE events DISABLE TRIGGER USER"))
        tx.execute(sa.text(statement), params)
        tx.execute(sa.text("ALTER TABLE events ENABLE TRIGGER USER"))


def test_a_chain_sealed_in_format_1_verifies_and_grows_in_format_2(
    ledger: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    tenant = f"old-{uuid.uuid4().hex[:8]}"
    _append(ledger, tenant, 3)
    _seal_as_before_the_upgrade(ledger, monkeypatch)
    assert integrity.verify(ledger, tenant).ok  # format 1 only

    _append(ledger, tenant, 2)
    _append(ledger, tenant, 1)
    result = integrity.verify(ledger, tenant)
    assert result.ok and result.events == 6
    assert _formats(ledger, tenant) == [1, 1, 1, chain.FORMAT, chain.FORMAT, chain.FORMAT]


def test_a_format_2_link_after_format_1_still_covers_the_recording_time(
    ledger: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    tenant = f"mixed-{uuid.uuid4().hex[:8]}"
    _append(ledger, tenant, 2)
    _seal_as_before_the_upgrade(ledger, monkeypatch)
    (newer,) = _append(ledger, tenant, 1)
    integrity.seal(ledger)
    _superuser(
        ledger,
        "UPDATE events SET recorded_at = recorded_at - interval '1 hour' WHERE tenant_id = :t AND position = :p",
        t=tenant,
        p=newer,
    )
    (finding,) = integrity.verify(ledger, tenant).findings
    assert (finding.position, finding.problem) == (newer, "altered: its content no longer matches its hash")


def test_a_format_1_event_moved_out_of_order_by_its_transaction_id_is_named(
    ledger: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Format 1 does not hash tx_id; the sealer links in the ledger's order, so an event
    whose tx_id now puts it before the event sealed ahead of it was changed."""
    tenant = f"moved-{uuid.uuid4().hex[:8]}"
    positions = _append(ledger, tenant, 4)
    _seal_as_before_the_upgrade(ledger, monkeypatch)
    _superuser(
        ledger, "UPDATE events SET tx_id = '100' WHERE tenant_id = :t AND position = :p", t=tenant, p=positions[2]
    )
    (finding,) = integrity.verify(ledger, tenant).findings
    assert finding.position == positions[2]
    assert finding.problem == "altered: its transaction id (100) puts it before the event sealed ahead of it"


def test_a_link_in_a_format_verify_does_not_know_is_named(ledger: Engine) -> None:
    tenant = f"unknown-{uuid.uuid4().hex[:8]}"
    positions = _append(ledger, tenant, 3)
    integrity.seal(ledger)
    with ledger.begin() as tx:
        stored = event_chain.c.hash
        where = (event_chain.c.tenant_id == tenant, event_chain.c.position == positions[1])
        tx.execute(event_chain.update().where(*where).values(hash=sa.func.replace(stored, "2:", "9:")))
    (finding,) = integrity.verify(ledger, tenant).findings
    assert finding.position == positions[1]
    assert finding.problem.startswith("unreadable: its link is in a format this release does not know")


def test_format_1_links_are_the_hashes_the_release_before_sealed() -> None:
    """A golden link, computed by the release before format 2: existing chains must
    keep verifying, so format 1 may never change."""
    event = chain.RawEvent(
        "t1",
        42,
        777,
        "conv",
        3,
        "evt-1",
        "turn.recorded",
        2,
        '{"text": "hi", "_private": "abc"}',
        '{"actor": "x"}',
        "2026-11-22T10:00:00.123456Z",
        occurred_epoch="1795341600.123456",
        recorded_epoch="1795341601.000001",
    )
    assert chain.link_v1(chain.GENESIS, event) == "48955cd609d4557f23087bb14a0018e22695e0adaf03864f47a2eea715f26b20"
    assert chain.relink(chain.GENESIS, event, chain.link(chain.GENESIS, event)) == chain.link(chain.GENESIS, event)
