"""Projectors: fold the ledger into read models, checkpointed in the same transaction."""
