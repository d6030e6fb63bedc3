"""memledger: an event-sourced memory ledger for LLM agents, on PostgreSQL."""

from memledger.library import Change, MemoryLedger, TurnInput
from memledger.service.types import Scopes

__all__ = ["Change", "MemoryLedger", "Scopes", "TurnInput", "__version__"]

__version__ = "0.1.0"
