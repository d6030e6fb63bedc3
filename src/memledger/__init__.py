"""memledger: an event-sourced memory ledger for LLM agents, on PostgreSQL."""

from memledger.library import MemoryLedger
from memledger.service.types import Scopes

__all__ = ["MemoryLedger", "Scopes", "__version__"]

__version__ = "0.1.0"
