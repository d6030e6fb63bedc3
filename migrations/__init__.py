"""Alembic migrations of the ledger and its control tables (shipped as memledger.migrations)."""
