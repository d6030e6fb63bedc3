"""The tenant_secrets table: each tenant's key for hashing scope ids, or none."""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql
from sqlalchemy.engine import Connection

from memledger.errors import LedgerError
from memledger.store.schema import tenant_secrets as t


@dataclass(frozen=True)
class TenantSecret:
    """A tenant's row: its secret, or None when its ids are stored as given."""

    tenant_id: str
    secret: bytes | None


def get(conn: Connection, tenant_id: str) -> TenantSecret | None:
    """The tenant's row, or None if it has none yet."""
    row = conn.execute(sa.select(t.c.secret).where(t.c.tenant_id == tenant_id)).first()
    return None if row is None else TenantSecret(tenant_id, None if row[0] is None else bytes(row[0]))


def get_or_create(tx: Connection, tenant_id: str, secret: bytes | None) -> TenantSecret:
    """The tenant's row, created with ``secret`` if it has none. Race-safe: of two
    transactions creating the same tenant's row, the second waits for the first and
    reads its row, so every process uses the same secret."""
    tx.execute(postgresql.insert(t).values(tenant_id=tenant_id, secret=secret).on_conflict_do_nothing())
    found = get(tx, tenant_id)
    if found is None:  # the row was just inserted, or a committed one conflicted: hidden?
        raise LedgerError(f"tenant_secrets shows no row for {tenant_id!r} just after inserting it")
    return found
