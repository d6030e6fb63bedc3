"""What a projector is, and where its tables live.

A projector is a name, a version, the SQL file that creates its tables
(``projections/<name>/v<N>.sql``), the event tags it handles, and ``apply``,
which folds a batch of events into its tables inside the caller's transaction.

Each projection's tables live in a PostgreSQL schema of their own: the live copy
in ``proj_<name>``, a copy being rebuilt in ``proj_<name>_next``. Table objects
are declared against the live schema; a rebuild writes to the other copy through
SQLAlchemy's ``schema_translate_map``, so ``apply`` never knows which copy it fills.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Protocol

from sqlalchemy import MetaData
from sqlalchemy.engine import Connection

from memledger.events.envelope import Recorded

# Read-model tables: not part of the ledger's MetaData (alembic never sees them).
read_models = MetaData()

INDEX_MARKER = "-- @indexes"


class Projector(Protocol):
    """The contract every read-model module fulfils.

    Optional: ``prepare(engine, batch)``, slow work for the next batch done before
    its write transaction (``runner._prepare``), such as embedding texts; and
    ``refolding(tx, tenant_id)``, called before a tenant is refolded at an erasure
    record, returning what to call once it is (``runner.refold``)."""

    name: str
    version: int
    handles: frozenset[str]

    def apply(self, tx: Connection, batch: Sequence[Recorded]) -> None:
        """Fold ``batch`` (in ledger order, only handled tags) into the tables.

        Deterministic: the same events give the same rows, whatever the batch
        boundaries. Runs in the caller's transaction, which also advances the
        checkpoint; it never commits.
        """


def live_schema(name: str) -> str:
    """The schema holding the live copy of a projection."""
    return f"proj_{name}"


def next_schema(name: str) -> str:
    """The schema a rebuild fills beside the live copy."""
    return f"proj_{name}_next"


@dataclass(frozen=True)
class ProjectionSql:
    """A projection version's DDL, split where the secondary indexes start."""

    tables: str
    indexes: str


def load_sql(name: str, version: int) -> ProjectionSql:
    """``projections/<name>/v<version>.sql`` as shipped in the package."""
    path = resources.files("memledger.projection_sql") / name / f"v{version}.sql"
    text = path.read_text(encoding="utf-8")
    tables, _, indexes = text.partition(INDEX_MARKER)
    return ProjectionSql(tables=tables, indexes=indexes.split("\n", 1)[-1] if indexes else "")
