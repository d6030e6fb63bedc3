"""Erasable content: personal fields of events kept outside the chained bytes, so erasure can remove them.

Adds ``events.private`` (the private fields of an event and the salt of their
digest, which the payload keeps; see ``events.codec.split``), and changes the
append-only trigger so that the one update it lets through is setting
``private`` to NULL with every other column unchanged: erasure. Every other
UPDATE, every DELETE and TRUNCATE is still refused.

Events stored before this revision keep their text inline in the chained
payload; they cannot be erased without breaking the chain.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

# Comparing the rows as jsonb without ``private`` covers every other column,
# including any a later revision adds. The TRUNCATE trigger shares the function
# (TG_OP is 'TRUNCATE' there, so it always raises).
ALLOW_ERASURE = """
CREATE OR REPLACE FUNCTION events_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND NEW.private IS NULL
       AND (to_jsonb(NEW) - 'private') = (to_jsonb(OLD) - 'private') THEN
        RETURN NEW;  -- erasure: the event's private fields removed, nothing else touched
    END IF;
    RAISE EXCEPTION 'the ledger is append-only: % on events is refused', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END
$$;
"""

# As revision 0001 created it.
REFUSE_CHANGES = """
CREATE OR REPLACE FUNCTION events_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the ledger is append-only: % on events is refused', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END
$$;
"""

# Dropping the column would destroy every private field still held (and leave
# events that older code cannot read): refuse rather than lose people's words.
REFUSE_LOSING_CONTENT = """
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM events WHERE private IS NOT NULL) THEN
        RAISE EXCEPTION 'cannot downgrade below 0006: events hold private content that only events.private keeps'
            USING ERRCODE = 'object_in_use';
    END IF;
END
$$;
"""


def upgrade() -> None:
    op.add_column("events", sa.Column("private", postgresql.JSONB(), nullable=True))
    op.execute(ALLOW_ERASURE)


def downgrade() -> None:
    op.execute(REFUSE_LOSING_CONTENT)
    op.execute(REFUSE_CHANGES)
    op.drop_column("events", "private")
