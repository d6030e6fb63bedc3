"""Event chain: per-tenant hash chain over the ledger, for tamper evidence.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "event_chain",
        sa.Column("tenant_id", sa.Text(), nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.Column("position", sa.BigInteger(), nullable=False),
        sa.Column("event_id", sa.Text(), nullable=False),
        sa.Column("hash", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("tenant_id", "seq", name="pk_event_chain"),
        sa.UniqueConstraint("tenant_id", "position", name="uq_event_chain_tenant_id_position"),
    )


def downgrade() -> None:
    op.drop_table("event_chain")
