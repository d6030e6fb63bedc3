"""Tenant ids over the surfaces an operator uses (issue 26, item 8).

The HTTP API never takes a tenant id from a request: the caller's key names it. A key
is issued with ``memledger keys create --tenant T``, so that is where an id holding an
invisible (U+200B) or bidirectional (U+202E) character is refused: exit 2, a one-line
error naming ``tenant_id`` and the character, and no key, so no HTTP request can ever
reach such a tenant.
"""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from memledger.store.schema import events
from tests.e2e.conftest import ApiServer, Surfaces, issue_key_with_cli, run_cli


def _events_of(surfaces: Surfaces, tenant: str) -> int:
    with surfaces.ledger.engine.connect() as conn:
        query = sa.select(sa.func.count()).select_from(events).where(events.c.tenant_id == tenant)
        return int(conn.execute(query).scalar_one())


@pytest.mark.parametrize(
    ("tenant", "code"), [("acme\u200bcorp", "U+200B"), ("acme\u202eproc", "U+202E")], ids=["zwsp", "rlo"]
)
def test_keys_create_refuses_a_tenant_id_with_an_invisible_or_bidirectional_character(
    surfaces: Surfaces, server: ApiServer, tenant: str, code: str
) -> None:
    result = run_cli(surfaces.env, "keys", "create", "--tenant", tenant, "--json")
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert result.stdout == ""  # no key was shown
    assert "InvalidIdentifier" in result.stderr and "tenant_id" in result.stderr and code in result.stderr
    assert _events_of(surfaces, tenant) == 0
    unkeyed = server.client("mlk_not-a-key").get("/v1/events")  # and HTTP without a key reaches nothing
    assert unkeyed.status_code == 401


def test_keys_create_accepts_a_tenant_id_of_the_safe_set(surfaces: Surfaces, server: ApiServer) -> None:
    issued = issue_key_with_cli(surfaces.env, "team.eu:prod@example.com_1-a")
    assert issued["tenant_id"] == "team.eu:prod@example.com_1-a"
    assert server.client(issued["key"]).get("/v1/events").status_code == 200
