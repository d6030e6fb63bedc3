"""The one MetaData of the ledger. Alembic autogenerates from it; nothing calls create_all.

Every primary and unique key starts with the tenant, so the ledger can later be
distributed by tenant and fenced by row-level security.
"""

from __future__ import annotations

from typing import Any

from pgvector.sqlalchemy import Vector
from sqlalchemy import (
    BigInteger,
    Column,
    DateTime,
    Identity,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    PrimaryKeyConstraint,
    SmallInteger,
    Table,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.types import UserDefinedType

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

metadata = MetaData(naming_convention=NAMING_CONVENTION)


class Xid8(UserDefinedType[int]):
    """PostgreSQL's 64-bit transaction id, ``xid8``. Read it as ``tx_id::text``."""

    cache_ok = True

    def get_col_spec(self, **kw: Any) -> str:
        return "xid8"


events = Table(
    "events",
    metadata,
    Column("tenant_id", Text, nullable=False),
    Column("position", BigInteger, Identity(always=False), nullable=False),
    Column("stream_id", Text, nullable=False),
    Column("stream_version", Integer, nullable=False),
    Column("event_id", Text, nullable=False),
    Column("event_type", Text, nullable=False),
    Column("schema_version", SmallInteger, nullable=False),
    Column("payload", JSONB, nullable=False),
    # The event's private fields (what a person said) and the salt of their digest
    # in the payload; NULL once erased (the one update the trigger allows), or for
    # an event with none. Outside the hash chain, which covers the digest instead.
    Column("private", JSONB, nullable=True),
    Column("metadata", JSONB, nullable=False, server_default=text("'{}'::jsonb")),
    Column("occurred_at", DateTime(timezone=True), nullable=False),
    Column("recorded_at", DateTime(timezone=True), nullable=False, server_default=text("now()")),
    # The writing transaction's id: gap-safe readers order by it (see event_reads.read_all).
    Column("tx_id", Xid8(), nullable=False, server_default=text("pg_current_xact_id()")),
    PrimaryKeyConstraint("tenant_id", "position"),
    UniqueConstraint("tenant_id", "stream_id", "stream_version"),
    UniqueConstraint("tenant_id", "event_id"),
    Index(None, "tx_id", "position"),
    Index(None, "tenant_id", "tx_id", "position"),
    Index(None, "position"),
)

# Control table of the projectors: where each projection (and each copy being
# rebuilt beside it) has applied the ledger up to. Migrated, never rebuilt.
projection_checkpoints = Table(
    "projection_checkpoints",
    metadata,
    Column("name", Text, nullable=False),
    Column("version", Integer, nullable=False),
    Column("db_schema", Text, nullable=False),
    Column("cursor_tx", Xid8(), nullable=False, server_default=text("'0'::xid8")),
    Column("cursor_position", BigInteger, nullable=False, server_default=text("0")),
    Column("applied_events", BigInteger, nullable=False, server_default=text("0")),
    Column("state", Text, nullable=False, server_default=text("'live'")),
    Column("error", Text),
    Column("error_position", BigInteger),
    Column("error_event_id", Text),
    Column("updated_at", DateTime(timezone=True), nullable=False, server_default=text("now()")),
    PrimaryKeyConstraint("name"),
)

# Control table of the extraction worker: what each conversation has produced
# and what the policy held back (limits, low confidence, secrets), per extractor.
extraction_counters = Table(
    "extraction_counters",
    metadata,
    Column("tenant_id", Text, nullable=False),
    Column("extractor", Text, nullable=False),
    Column("conversation", Text, nullable=False),
    Column("entities", Integer, nullable=False, server_default=text("0")),
    Column("relationships", Integer, nullable=False, server_default=text("0")),
    Column("skipped_entities", Integer, nullable=False, server_default=text("0")),
    Column("skipped_relationships", Integer, nullable=False, server_default=text("0")),
    Column("facts", Integer, nullable=False, server_default=text("0")),  # migration 0009
    Column("skipped_facts", Integer, nullable=False, server_default=text("0")),
    Column("dropped_low_confidence", Integer, nullable=False, server_default=text("0")),
    Column("refused_secrets", Integer, nullable=False, server_default=text("0")),
    Column("updated_at", DateTime(timezone=True), nullable=False, server_default=text("now()")),
    PrimaryKeyConstraint("tenant_id", "extractor", "conversation"),
)

# Control table of the embeddings projection: vectors by (model, sha256 of the
# text), so a rebuild of any projection never embeds a text it has seen (embedding
# runs at hundreds of texts per second). Shared by tenants: a vector says nothing
# a text's hash does not. Erasure deletes the entries of erased text. Migrated, never rebuilt.
embedding_cache = Table(
    "embedding_cache",
    metadata,
    Column("model", Text, nullable=False),
    Column("text_sha256", Text, nullable=False),
    Column("embedding", Vector(), nullable=False),
    PrimaryKeyConstraint("model", "text_sha256"),
)

# Tamper evidence: each tenant's events, in ledger order, form a hash chain; each
# link's hash covers the event's stored bytes and the previous link's hash. Written
# by the sealer as the ledger grows; never rebuilt (a rebuild would launder tampering).
event_chain = Table(
    "event_chain",
    metadata,
    Column("tenant_id", Text, nullable=False),
    Column("seq", BigInteger, nullable=False),
    Column("position", BigInteger, nullable=False),
    Column("event_id", Text, nullable=False),
    Column("hash", Text, nullable=False),
    PrimaryKeyConstraint("tenant_id", "seq"),
    UniqueConstraint("tenant_id", "position"),
)

# The per-tenant key that scope ids (session, project, user, org keys and subjects) are
# stored under as keyed hashes (service/scope_ids.py). Created on a tenant's first use;
# a NULL secret means the tenant's ids are stored as given (it predates hashing, or its
# deployment had hashing off when it was first seen). Migrated, never rebuilt: a new
# secret would move every raw id to another scope.
tenant_secrets = Table(
    "tenant_secrets",
    metadata,
    Column("tenant_id", Text, nullable=False),
    Column("secret", LargeBinary),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=text("now()")),
    PrimaryKeyConstraint("tenant_id"),
)
