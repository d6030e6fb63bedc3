"""Tenant ids hold only ASCII letters, digits and ``-_.:@`` (issue 26, item 8).

An invisible (U+200B ZERO WIDTH SPACE) or bidirectional (U+202E RIGHT-TO-LEFT
OVERRIDE) character made two tenant ids look alike in logs and commands, or one read
backwards. Such an id is refused by every entry point with ``InvalidIdentifier``
naming ``tenant_id`` and the character as U+XXXX, and nothing is written. Every
tenant id the tests, the demo and the benchmarks use stays valid, and other
identifiers (stream, turn and event ids) keep their wider rule.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator

import pytest
import sqlalchemy as sa

from memledger.errors import InvalidIdentifier
from memledger.library import MemoryLedger
from memledger.service import keys
from memledger.service.types import Scopes
from memledger.store import event_store
from memledger.store.identifiers import check_identifier
from memledger.store.schema import events
from tests.conftest import TestDatabase, turn_event
from tests.e2e.conftest import scratch

SCOPES = Scopes(session="s1", project="phoenix", user="ada", org="acme")

REFUSED = [
    pytest.param("acme\u200bcorp", "U+200B", id="zero-width-space"),
    pytest.param("acme\u202eproc", "U+202E", id="right-to-left-override"),
    pytest.param("\u200eacme", "U+200E", id="left-to-right-mark"),
    pytest.param("acme\u2066x", "U+2066", id="left-to-right-isolate"),
    pytest.param("acme\ufeff", "U+FEFF", id="byte-order-mark"),
    pytest.param("acme\u00adcorp", "U+00AD", id="soft-hyphen"),
    pytest.param("\u0430cme", "U+0430", id="cyrillic-look-alike"),
    pytest.param("acme corp", "U+0020", id="space"),
    pytest.param("acme/corp", "U+002F", id="slash"),
    pytest.param("café", "U+00E9", id="accented-letter"),
]

IN_USE = [
    "northwind",
    "tidewater-players",
    "hollis-creek-library",
    "tenant-0123456789",
    "eval-conv-d01-1a2b3c4d",
    "t",
    "acme",
    "tenant_a",
    "team.eu:prod@example.com",
    "T" * 256,
]


@pytest.fixture(scope="module")
def ledger(database: TestDatabase) -> Iterator[MemoryLedger]:
    with scratch(database, "tenant_ids") as opened:
        yield opened


def _count(ledger: MemoryLedger) -> int:
    with ledger.engine.connect() as conn:
        return int(conn.execute(sa.select(sa.func.count()).select_from(events)).scalar_one())


def _refused(ledger: MemoryLedger, code: str, write: Callable[[], object]) -> InvalidIdentifier:
    before = _count(ledger)
    with pytest.raises(InvalidIdentifier) as info:
        write()
    assert info.value.field == "tenant_id"
    assert "tenant_id" in str(info.value)
    assert code in str(info.value), str(info.value)
    assert _count(ledger) == before, "a refused tenant id wrote something"
    return info.value


@pytest.mark.parametrize(("tenant", "code"), REFUSED)
def test_check_identifier_refuses_a_tenant_id_outside_the_safe_set_naming_the_character(tenant: str, code: str) -> None:
    with pytest.raises(InvalidIdentifier) as info:
        check_identifier("tenant_id", tenant)
    assert info.value.field == "tenant_id"
    assert code in info.value.reason
    assert "ASCII letters, digits and -_.:@" in info.value.reason


@pytest.mark.parametrize(("tenant", "code"), REFUSED[:2])
def test_recording_a_turn_refuses_the_tenant_id_and_writes_nothing(
    ledger: MemoryLedger, tenant: str, code: str
) -> None:
    _refused(ledger, code, lambda: ledger.record_turn(tenant, "user", "I use Vim.", scopes=SCOPES))


@pytest.mark.parametrize(("tenant", "code"), REFUSED[:2])
def test_promoting_refuses_the_tenant_id_and_writes_nothing(ledger: MemoryLedger, tenant: str, code: str) -> None:
    promote = lambda: ledger.promote(  # noqa: E731
        tenant, kind="preference", scope="user", scopes=SCOPES, statement="Ada prefers tabs."
    )
    _refused(ledger, code, promote)


@pytest.mark.parametrize(("tenant", "code"), REFUSED[:2])
def test_issuing_an_api_key_refuses_the_tenant_id_and_writes_nothing(
    ledger: MemoryLedger, tenant: str, code: str
) -> None:
    """A key binds the HTTP API's callers to a tenant: no key, so no request, can ever
    reach a tenant whose id is not in the safe set."""
    _refused(ledger, code, lambda: keys.create(ledger.engine, tenant, label="test"))


@pytest.mark.parametrize(("tenant", "code"), REFUSED[:2])
def test_appending_to_the_store_refuses_the_tenant_id(ledger: MemoryLedger, tenant: str, code: str) -> None:
    def append() -> object:
        with ledger.engine.begin() as tx:
            return event_store.append(tx, tenant, "s", [turn_event()], 0)

    _refused(ledger, code, append)


@pytest.mark.parametrize("tenant", IN_USE)
def test_the_tenant_ids_in_use_stay_valid(ledger: MemoryLedger, tenant: str) -> None:
    unique = tenant if len(tenant) == 256 else f"{tenant}-{uuid.uuid4().hex[:6]}"
    assert check_identifier("tenant_id", unique) == unique
    position = ledger.record_turn(unique, "user", "I use Vim.", scopes=SCOPES, turn_id=f"t-{uuid.uuid4().hex[:6]}")
    assert position > 0


def test_other_identifiers_keep_their_wider_rule() -> None:
    for field in ("stream_id", "turn_id", "item_id", "events[0].event_id"):
        assert check_identifier(field, "sessi\u00f3n caf\u00e9\u200b") == "sessi\u00f3n caf\u00e9\u200b"
