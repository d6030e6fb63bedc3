"""Row-level security on the read models: each copy a projector creates is fenced.

A projection's tables are created at run time (the live copy, a copy being
rebuilt beside it, a shadow copy), not by a migration, so ``runner.create_tables``
calls ``fence`` on each new schema. Its tables get the tenant fence of the ledger
(``store.row_security.FENCE``) and the application role may only read them: read
models are written by their projectors, as the owner. A schema rename (the swap at
the end of a rebuild) keeps the policies and grants, which belong to the tables.
"""

from __future__ import annotations

from sqlalchemy.engine import Connection

from memledger.store import row_security


def fence(tx: Connection, schema: str) -> None:
    """Fence every tenant table of ``schema`` and let the application role read them.
    Idempotent; runs in the caller's transaction."""
    row_security.fence_schema(tx, schema, row_security.READ_MODEL_PRIVILEGES)
