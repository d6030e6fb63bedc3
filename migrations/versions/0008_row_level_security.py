"""Row-level security: an application role fenced to the tenant set for its transaction.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-22

Creates the role ``memledger_app`` (LOGIN, NOSUPERUSER, NOBYPASSRLS, owner of
nothing) if the server has none, enables row-level security with the tenant fence
on every table that has a ``tenant_id`` (the ledger's and the read models' in
``proj_*`` schemas that exist already; later read-model copies are fenced when
``projectors.runner.create_tables`` makes them), and grants the role what the
request paths need and nothing more. See ``store.row_security``.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from memledger.store import row_security

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

# What the request paths do with the ledger's tables (anything not named: nothing).
# events: append and read (never UPDATE or DELETE; the position identity needs no
# sequence grant). projection_checkpoints: no tenant column; read for the cursors a
# served context records and for projection status. tenant_secrets: read the key
# that scope ids are hashed with, created on a tenant's first use. Not granted: event_chain, extraction_counters
# (sealer, worker and verify run as the owner) and embedding_cache (keyed by the
# hash of a text across tenants: only the embeddings projector reads it, so no
# tenant can ask whether another has embedded a text), alembic_version.
LEDGER_GRANTS = {
    "events": "SELECT, INSERT",
    "projection_checkpoints": "SELECT",
    "tenant_secrets": "SELECT, INSERT",
}

_PROJECTION_SCHEMAS = sa.text(r"SELECT nspname FROM pg_namespace WHERE nspname LIKE 'proj\_%' ORDER BY nspname")


def upgrade() -> None:
    tx = op.get_bind()
    row_security.ensure_app_role(tx)
    for table in row_security.tenant_tables(tx, "public"):
        row_security.fence_table(tx, "public", table)
    present = set(row_security.all_tables(tx, "public"))
    for table, privileges in LEDGER_GRANTS.items():
        if table in present:
            row_security.grant(tx, privileges, "public", table)
    for schema in tx.execute(_PROJECTION_SCHEMAS).scalars():
        row_security.fence_schema(tx, schema, row_security.READ_MODEL_PRIVILEGES)
    row_security.mark_leakproof(tx)  # so fenced full-text search keeps its GIN indexes


def downgrade() -> None:
    tx = op.get_bind()
    row_security.mark_leakproof(tx, leakproof=False)
    for schema in tx.execute(_PROJECTION_SCHEMAS).scalars():
        row_security.unfence_schema(tx, schema)
    for table in row_security.tenant_tables(tx, "public"):
        row_security.unfence_table(tx, "public", table)
    # text(): REVOKE takes no bind parameters; the role name is a constant.
    op.execute(f"REVOKE ALL ON ALL TABLES IN SCHEMA public FROM {row_security.APP_ROLE}")
    row_security.drop_app_role(tx)
