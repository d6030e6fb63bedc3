"""Fact counters: extraction limits the facts of a conversation as it limits its
entities and relationships (``Policy.max_facts``), and counts the ones it skipped.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    for column in ("facts", "skipped_facts"):
        op.add_column(
            "extraction_counters", sa.Column(column, sa.Integer(), nullable=False, server_default=sa.text("0"))
        )


def downgrade() -> None:
    for column in ("skipped_facts", "facts"):
        op.drop_column("extraction_counters", column)
