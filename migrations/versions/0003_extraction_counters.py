"""Extraction counters: per conversation, what was extracted and what was held back.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-21
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

_COUNTS = (
    "entities",
    "relationships",
    "skipped_entities",
    "skipped_relationships",
    "dropped_low_confidence",
    "refused_secrets",
)


def upgrade() -> None:
    op.create_table(
        "extraction_counters",
        sa.Column("tenant_id", sa.Text(), nullable=False),
        sa.Column("extractor", sa.Text(), nullable=False),
        sa.Column("conversation", sa.Text(), nullable=False),
        *(sa.Column(name, sa.Integer(), server_default=sa.text("0"), nullable=False) for name in _COUNTS),
        sa.Column("updated_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.PrimaryKeyConstraint("tenant_id", "extractor", "conversation", name="pk_extraction_counters"),
    )


def downgrade() -> None:
    op.drop_table("extraction_counters")
