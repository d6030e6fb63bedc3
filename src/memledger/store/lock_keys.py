"""Every advisory lock memledger takes, keyed in one place so that no two locks share a
key by accident. One-time set-up steps take fixed numbers; per-stream, per-tenant and
per-checkpoint locks hash a text key in PostgreSQL (``hashtextextended``), so every
process derives the same key without sharing state."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

# Set-up steps that processes starting together must take in turn.
MIGRATION = 7_221_004_517
INSTALL_PROJECTIONS = 7_221_004_518
APP_PASSWORD = 7_221_004_519
LEAKPROOF = 7_221_004_520

# Dropping and creating the re-extraction's shadow copies.
REEXTRACTION_SHADOWS = "memledger-reextraction-shadows"


def hashed(text: Any) -> sa.ColumnElement[int]:
    """The key of a text lock name (a SQL expression or a column of names)."""
    return sa.func.hashtextextended(text, 0)


def named(name: str) -> sa.ColumnElement[int]:
    """The key of the lock called ``name``: an extraction checkpoint's, the shadows'."""
    return hashed(sa.literal(name))


def stream(tenant: Any, stream_id: Any) -> sa.ColumnElement[int]:
    """The key that writers of one stream of one tenant queue on."""
    return hashed(tenant + "\x1f" + stream_id)


def erasure(tenant_id: str) -> str:
    """The name of a tenant's erasure lock."""
    return f"memledger-erase\x1f{tenant_id}"
