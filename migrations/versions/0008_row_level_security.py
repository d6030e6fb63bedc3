"""Row-level security: an application role fenced to the tenant set for its transaction.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-22
"""

from __future__ import annotations

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass  # filled in by the issue that owns this revision


def downgrade() -> None:
    pass
