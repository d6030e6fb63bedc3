"""Tenant secrets: the per-tenant key that scope ids are hashed with.

Tenants that already hold scope-carrying events get a row with no secret: their
ids were stored as given, and must stay so, or the same raw id would land in
another scope after the upgrade (service/scope_ids.py).

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

# The events whose payloads carry scope keys or subjects.
_SCOPED_TYPES = ("turn.recorded", "fact.extracted", "memory.promoted", "context.served")


def upgrade() -> None:
    op.create_table(
        "tenant_secrets",
        sa.Column("tenant_id", sa.Text(), nullable=False),
        sa.Column("secret", sa.LargeBinary(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.PrimaryKeyConstraint("tenant_id", name="pk_tenant_secrets"),
    )
    events = sa.table("events", sa.column("tenant_id", sa.Text()), sa.column("event_type", sa.Text()))
    secrets = sa.table("tenant_secrets", sa.column("tenant_id", sa.Text()))
    existing = sa.select(events.c.tenant_id).where(events.c.event_type.in_(_SCOPED_TYPES)).distinct()
    op.execute(secrets.insert().from_select(["tenant_id"], existing))


def downgrade() -> None:
    op.drop_table("tenant_secrets")
