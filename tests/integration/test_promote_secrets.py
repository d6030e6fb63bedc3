"""Promotion refuses credentials, as extraction does. Before, promotion skipped the
secret guard: "The API key is sk-proj-..." was stored at confidence 1.00 and served
in every later context of its scope. Now the service, and so the library, the HTTP
API (422) and the MCP tool, refuse it naming the field and the kind of credential,
never echoing the value, and nothing is written. And a turn holding a password
leaves nothing of it in the memory the library serves.
The credentials below are made up.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import anyio
import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient
from mcp.server.mcpserver.exceptions import ToolError

from memledger.api.app import create_app
from memledger.errors import InvalidCommand
from memledger.events.catalogue import FactExtracted
from memledger.events.envelope import NewEvent
from memledger.events.keys import item_stream
from memledger.library import MemoryLedger
from memledger.mcp_server import build_server
from memledger.service import memory, scope_ids
from memledger.service.types import Scopes
from memledger.store import db, event_store
from memledger.store.schema import events
from tests.conftest import TestDatabase
from tests.e2e.conftest import scratch

SCOPES = Scopes(session="s1", project="vault", user="sam")
KEY = "sk-proj-AbCdEfGhIjKlMnOpQrStUv"
STATEMENT = f"The API key is {KEY}"


@dataclass(frozen=True)
class Tenant:
    ledger: MemoryLedger
    tenant: str
    http: TestClient

    def written(self) -> int:
        """How many events the tenant has."""
        with self.ledger.engine.connect() as conn:
            count = sa.select(sa.func.count()).select_from(events).where(events.c.tenant_id == self.tenant)
            return int(conn.execute(count).scalar_one())


@pytest.fixture(scope="module")
def ledger(database: TestDatabase) -> Iterator[MemoryLedger]:
    with scratch(database, "promote_secrets") as opened:
        yield opened


@pytest.fixture
def vault(ledger: MemoryLedger) -> Iterator[Tenant]:
    tenant = f"promo-{uuid.uuid4().hex[:8]}"
    _, key = ledger.create_key(tenant, label="promote secrets")
    with TestClient(
        create_app(ledger.database), raise_server_exceptions=False, headers={"Authorization": f"Bearer {key}"}
    ) as http:
        yield Tenant(ledger=ledger, tenant=tenant, http=http)


def _promote(**given: Any) -> dict[str, Any]:
    return {"kind": "decision", "scope": "project", "scopes": SCOPES, **given}


@pytest.mark.parametrize(
    ("given", "field", "kind"),
    [
        ({"statement": STATEMENT}, "statement", "openai-style key"),
        ({"statement": "The staging password will be Zebra#99 from now on."}, "statement", "password"),
        ({"statement": "Vault storage is set up.", "key": f"storage: AccountKey={'Zm9v' * 8}"}, "key", "azure"),
    ],
    ids=["api key in the statement", "password in the statement", "storage key in the key"],
)
def test_the_service_refuses_to_promote_a_credential_and_writes_nothing(
    vault: Tenant, given: dict[str, Any], field: str, kind: str
) -> None:
    before = vault.written()
    with pytest.raises(InvalidCommand) as refusal:
        memory.promote(vault.ledger.engine, vault.tenant, **_promote(**given))
    message = str(refusal.value)
    assert message.startswith(f"{field} looks like it holds a credential ({kind}")
    assert "Zebra#99" not in message and KEY not in message and "Zm9v" not in message
    assert vault.written() == before


def test_the_library_refuses_it_and_serves_nothing(vault: Tenant) -> None:
    before = vault.written()
    with pytest.raises(InvalidCommand, match="statement looks like it holds a credential"):
        vault.ledger.promote(vault.tenant, **_promote(statement=STATEMENT))
    assert vault.written() == before
    block = vault.ledger.context(vault.tenant, "What is the API key?", scopes=SCOPES)
    assert "sk-proj" not in block.text


def test_http_refuses_it_with_422_and_mcp_with_a_tool_error(vault: Tenant) -> None:
    before = vault.written()
    body = {"kind": "decision", "scope": "project", "scopes": {"project": "vault"}, "statement": STATEMENT}
    response = vault.http.post("/v1/memory/promote", json=body)
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["code"] == "invalid_request"
    assert "statement looks like it holds a credential" in error["message"] and KEY not in error["message"]
    server = build_server(vault.ledger.database, tenant_id=vault.tenant)
    arguments = {"kind": "decision", "scope": "project", "project": "vault", "statement": STATEMENT}
    with pytest.raises(ToolError, match="statement looks like it holds a credential"):
        anyio.run(server.call_tool, "promote_memory", arguments)
    assert vault.written() == before


def test_a_stored_fact_holding_a_credential_is_not_promoted(vault: Tenant) -> None:
    """A fact stored before the guard knew its kind is refused when promoted by id."""
    fact = FactExtracted(
        memory_id="fact-00000000000000aa",
        scope="project",
        scope_key="vault",  # promotion by id finds the fact by its id alone
        key="storage account",
        statement=f"Vault storage uses AccountKey={'Zm9v' * 8}",
        category="technical_fact",
        confidence=0.9,
    )
    new = NewEvent(event=fact, event_id=f"old:{uuid.uuid4()}", occurred_at=datetime.now(UTC))
    with db.begin(vault.ledger.engine) as tx:
        event_store.append(tx, vault.tenant, item_stream(fact.memory_id), [new], None)
    vault.ledger.process()
    before = vault.written()
    with pytest.raises(InvalidCommand, match=r"statement looks like it holds a credential \(azure storage key\)"):
        vault.ledger.promote(vault.tenant, **_promote(memory_id=fact.memory_id))
    assert vault.written() == before


def test_a_clean_statement_is_still_promoted(vault: Tenant) -> None:
    promoted = vault.ledger.promote(vault.tenant, **_promote(statement="Vault rotates its API keys monthly."))
    assert promoted in vault.ledger.context(vault.tenant, "How often are API keys rotated?", scopes=SCOPES).item_ids


def test_a_turn_holding_a_password_gives_no_memory_of_it(vault: Tenant) -> None:
    """Before, the fact was refused but "the user DECIDED Tr0ub4dor&3x" was served."""
    vault.ledger.record_turn(vault.tenant, "user", "We decided the root password is Tr0ub4dor&3x.", scopes=SCOPES)
    vault.ledger.record_turn(vault.tenant, "user", "We decided to go with PostgreSQL.", scopes=SCOPES)
    vault.ledger.process()
    block = vault.ledger.context(vault.tenant, "What root password did we decide on?", scopes=SCOPES)
    found = vault.ledger.search(vault.tenant, "root password decided Tr0ub4dor", scopes=SCOPES)
    assert "PostgreSQL" in block.text  # the clean turn next to it is remembered
    assert "Tr0ub4dor" not in block.text
    assert not [item for item in found if "Tr0ub4dor" in item.text]  # nor the turn itself (search)
    assert [item for item in vault.ledger.search(vault.tenant, "PostgreSQL", scopes=SCOPES) if item.kind == "turn"]


# -- issue 26, item 3: a card number split by no-break spaces ------------------------------------

CARD = "4111\u00a01111\u00a01111\u00a01111"  # neutralisation shows it as "4111 1111 1111 1111"


def test_a_card_number_split_by_no_break_spaces_is_not_promoted(vault: Tenant) -> None:
    before = vault.written()
    with pytest.raises(InvalidCommand, match=r"statement looks like it holds a credential \(payment card number"):
        vault.ledger.promote(vault.tenant, **_promote(statement=f"Sam's card number is {CARD}."))
    assert vault.written() == before


def test_a_stored_fact_the_guard_refuses_once_rendered_is_never_shown(vault: Tenant) -> None:
    """A fact stored before the guard normalised separators: the block leaves it out."""
    project = scope_ids.stored_id(vault.ledger.engine, vault.tenant, "project", "vault")
    facts = [
        FactExtracted(
            memory_id=f"fact-00000000000000{suffix}",
            scope="project",
            scope_key=project,
            key=key,
            statement=statement,
            category="technical_fact",
            confidence=0.9,
        )
        for suffix, key, statement in [
            ("c1", "card number", f"Sam's company card number is {CARD}."),
            ("c2", "card bank", "Sam's company card is a Visa from Acme Bank."),
        ]
    ]
    with db.begin(vault.ledger.engine) as tx:
        for fact in facts:
            new = NewEvent(event=fact, event_id=f"old:{uuid.uuid4()}", occurred_at=datetime.now(UTC))
            event_store.append(tx, vault.tenant, item_stream(fact.memory_id), [new], None)
    vault.ledger.process()
    block = vault.ledger.context(vault.tenant, "What is Sam's company card number?", scopes=SCOPES)
    assert "Acme Bank" in block.text  # the clean fact beside it is served
    assert facts[0].memory_id not in block.item_ids
    for shown in ("4111 1111 1111 1111", CARD, "1111"):
        assert shown not in block.text
