"""Signed scope assertions: minted by the app for one tenant and user, until a time."""

from __future__ import annotations

import pytest

from memledger.errors import Refused
from memledger.service import scope_assertions as sa

SECRET = "deployment-secret"
NOW = 1_800_000_000


def _token(tenant: str = "acme", user: str = "alice", expires_at: int = NOW + 60) -> str:
    return sa.mint(sa.tenant_secret(SECRET, tenant), tenant, user, expires_at=expires_at)


def test_an_assertion_names_its_user_of_its_tenant_until_it_expires() -> None:
    sa.check(SECRET, "acme", ["alice"], _token(), now=NOW)
    refused = [
        ("acme", ["bob"], _token()),
        ("other", ["alice"], _token()),
        ("acme", ["alice"], _token(expires_at=NOW)),
        ("acme", ["alice"], _token(tenant="other")),
        ("acme", ["alice"], None),
        ("acme", ["alice"], _token()[:-1] + ("1" if _token().endswith("0") else "0")),
        ("acme", ["alice"], "v2" + _token()[2:]),
    ]
    for tenant, users, header in refused:
        with pytest.raises(Refused, match=sa.HEADER) as e:
            sa.check(SECRET, tenant, users, header, now=NOW)
        assert e.value.code == sa.REFUSED_CODE


def test_each_user_a_batch_names_needs_its_own_assertion() -> None:
    both = f"{_token()}, {_token(user='bob')}"
    sa.check(SECRET, "acme", ["alice", "bob", "alice"], both, now=NOW)
    with pytest.raises(Refused):
        sa.check(SECRET, "acme", ["alice", "carol"], both, now=NOW)


def test_a_request_naming_no_user_needs_none() -> None:
    sa.check(SECRET, "acme", [], None, now=NOW)


def test_each_tenant_has_its_own_secret() -> None:
    assert sa.tenant_secret(SECRET, "acme") != sa.tenant_secret(SECRET, "other")
    assert sa.tenant_secret(SECRET, "acme") != sa.tenant_secret("another deployment", "acme")
