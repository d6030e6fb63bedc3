"""memledger: an event-sourced memory ledger for LLM agents, on PostgreSQL."""

__all__ = ["__version__"]

__version__ = "0.1.0"
