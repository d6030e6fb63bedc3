"""The ledger's storage: database connection, schema and the event store."""
