"""The ledger: one append-only events table.

Revision ID: 0001
Revises:
Create Date: 2026-11-21
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

from memledger.store.schema import Xid8

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

# The ledger is append-only, enforced by the database itself: no role that goes
# through these triggers can change or remove an event.
REFUSE_CHANGES = """
CREATE FUNCTION events_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the ledger is append-only: % on events is refused', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END
$$;
CREATE TRIGGER events_refuse_update_delete BEFORE UPDATE OR DELETE ON events
    FOR EACH ROW EXECUTE FUNCTION events_refuse_change();
CREATE TRIGGER events_refuse_truncate BEFORE TRUNCATE ON events
    FOR EACH STATEMENT EXECUTE FUNCTION events_refuse_change();
"""


def upgrade() -> None:
    op.execute("CREATE EXTENSION IF NOT EXISTS vector")
    op.create_table(
        "events",
        sa.Column("tenant_id", sa.Text(), nullable=False),
        sa.Column("position", sa.BigInteger(), sa.Identity(always=False), nullable=False),
        sa.Column("stream_id", sa.Text(), nullable=False),
        sa.Column("stream_version", sa.Integer(), nullable=False),
        sa.Column("event_id", sa.Text(), nullable=False),
        sa.Column("event_type", sa.Text(), nullable=False),
        sa.Column("schema_version", sa.SmallInteger(), nullable=False),
        sa.Column("payload", postgresql.JSONB(), nullable=False),
        sa.Column("metadata", postgresql.JSONB(), server_default=sa.text("'{}'::jsonb"), nullable=False),
        sa.Column("occurred_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("recorded_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("tx_id", Xid8(), server_default=sa.text("pg_current_xact_id()"), nullable=False),
        sa.PrimaryKeyConstraint("tenant_id", "position", name="pk_events"),
        sa.UniqueConstraint(
            "tenant_id", "stream_id", "stream_version", name="uq_events_tenant_id_stream_id_stream_version"
        ),
        sa.UniqueConstraint("tenant_id", "event_id", name="uq_events_tenant_id_event_id"),
    )
    op.create_index("ix_events_tx_id_position", "events", ["tx_id", "position"])
    op.create_index("ix_events_tenant_id_tx_id_position", "events", ["tenant_id", "tx_id", "position"])
    op.create_index("ix_events_position", "events", ["position"])
    op.execute(REFUSE_CHANGES)


def downgrade() -> None:
    op.execute("DROP TRIGGER events_refuse_truncate ON events")
    op.execute("DROP TRIGGER events_refuse_update_delete ON events")
    op.execute("DROP FUNCTION events_refuse_change()")
    op.drop_table("events")
