"""Erasable content: personal fields of events kept outside the chained bytes, so erasure can remove them.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-22
"""

from __future__ import annotations

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass  # filled in by the issue that owns this revision


def downgrade() -> None:
    pass
