"""Versioned DDL of each read model, projections/<name>/v<N>.sql (shipped as memledger.projection_sql)."""
