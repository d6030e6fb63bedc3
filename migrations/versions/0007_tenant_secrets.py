"""Tenant secrets: the per-tenant key that scope ids are hashed with.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-22
"""

from __future__ import annotations

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass  # filled in by the issue that owns this revision


def downgrade() -> None:
    pass
