"""Embedding cache: vectors by model and sha256 of the text, kept across rebuilds.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from pgvector.sqlalchemy import Vector

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # The vector extension exists since 0001; the cache's column has no fixed
    # dimension, so one table serves models of any size.
    op.create_table(
        "embedding_cache",
        sa.Column("model", sa.Text(), nullable=False),
        sa.Column("text_sha256", sa.Text(), nullable=False),
        sa.Column("embedding", Vector(), nullable=False),
        sa.PrimaryKeyConstraint("model", "text_sha256", name="pk_embedding_cache"),
    )


def downgrade() -> None:
    op.drop_table("embedding_cache")
