"""The api_keys projector: which key (by hash) reaches which tenant."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import msgspec
import sqlalchemy as sa
from sqlalchemy.engine import Connection

from memledger.events.catalogue import ApiKeyIssued, ApiKeyRevoked
from memledger.events.codec import tag_of
from memledger.events.envelope import Recorded
from memledger.projectors import bulk
from memledger.projectors.base import live_schema, read_models

NAME = "api_keys"
VERSION = 1
HANDLES = frozenset({tag_of(ApiKeyIssued), tag_of(ApiKeyRevoked)})

api_keys = sa.Table(
    "api_keys",
    read_models,
    sa.Column("tenant_id", sa.Text, primary_key=True),
    sa.Column("key_id", sa.Text, primary_key=True),
    sa.Column("key_sha256", sa.Text, nullable=False),
    sa.Column("label", sa.Text, nullable=False),
    sa.Column("issued_by", sa.Text),
    sa.Column("issued_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("revoked_at", sa.DateTime(timezone=True)),
    schema=live_schema(NAME),
)


class KeyRow(msgspec.Struct):
    """One row of ``api_keys``."""

    tenant_id: str
    key_id: str
    key_sha256: str
    label: str
    issued_by: str | None
    issued_at: datetime
    revoked_at: datetime | None


class ApiKeysProjector:
    """Projects key issue and revocation. A revoked key id stays revoked."""

    name = NAME
    version = VERSION
    handles = HANDLES

    def apply(self, tx: Connection, batch: Sequence[Recorded]) -> None:
        keys = {(r.tenant_id, r.event.key_id) for r in batch if isinstance(r.event, ApiKeyIssued | ApiKeyRevoked)}
        if not keys:
            return
        where = sa.tuple_(api_keys.c.tenant_id, api_keys.c.key_id).in_(keys)
        rows = {(r.tenant_id, r.key_id): r for r in bulk.load(tx, api_keys, KeyRow, where)}
        for rec in batch:
            event = rec.event
            if isinstance(event, ApiKeyIssued) and (rec.tenant_id, event.key_id) not in rows:
                rows[(rec.tenant_id, event.key_id)] = KeyRow(
                    rec.tenant_id,
                    event.key_id,
                    event.key_sha256,
                    event.label,
                    event.issued_by,
                    rec.recorded_at,
                    None,
                )
            elif isinstance(event, ApiKeyRevoked) and (row := rows.get((rec.tenant_id, event.key_id))):
                row.revoked_at = row.revoked_at or rec.recorded_at
        bulk.upsert(tx, api_keys, [rows[k] for k in sorted(rows)])


def holder_of(conn: Connection, key_sha256: str) -> tuple[str, str] | None:
    """The tenant and key id of a live (not revoked) key hash, or None."""
    stmt = sa.select(api_keys.c.tenant_id, api_keys.c.key_id).where(
        api_keys.c.key_sha256 == key_sha256, api_keys.c.revoked_at.is_(None)
    )
    row = conn.execute(stmt).first()
    return None if row is None else (str(row[0]), str(row[1]))


def list_keys(conn: Connection, tenant_id: str) -> list[KeyRow]:
    """The tenant's keys (hashes only), newest first."""
    where = api_keys.c.tenant_id == tenant_id
    return sorted(bulk.load(conn, api_keys, KeyRow, where), key=lambda r: r.issued_at, reverse=True)
