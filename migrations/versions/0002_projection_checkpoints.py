"""Projection checkpoints: each projection's place in the ledger.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-21
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from memledger.store.schema import Xid8

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "projection_checkpoints",
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("db_schema", sa.Text(), nullable=False),
        sa.Column("cursor_tx", Xid8(), server_default=sa.text("'0'::xid8"), nullable=False),
        sa.Column("cursor_position", sa.BigInteger(), server_default=sa.text("0"), nullable=False),
        sa.Column("applied_events", sa.BigInteger(), server_default=sa.text("0"), nullable=False),
        sa.Column("state", sa.Text(), server_default=sa.text("'live'"), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("error_position", sa.BigInteger(), nullable=True),
        sa.Column("error_event_id", sa.Text(), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.PrimaryKeyConstraint("name", name="pk_projection_checkpoints"),
    )


def downgrade() -> None:
    # Read models live in their own schemas (proj_*); they go with their checkpoints.
    op.execute(
        "DO $$ DECLARE s text; BEGIN FOR s IN SELECT nspname FROM pg_namespace"
        " WHERE nspname LIKE 'proj\\_%' LOOP EXECUTE format('DROP SCHEMA %I CASCADE', s);"
        " END LOOP; END $$"
    )
    op.drop_table("projection_checkpoints")
