"""What an agent asks for before a prompt, checked as it is made: a bad field is the
caller's mistake, raised at once, never an empty block that hides it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from memledger.errors import InvalidCommand
from memledger.events.catalogue import Scopes

DEFAULT_DEADLINE_MS = 750
MAX_DEADLINE_MS = 60_000


@dataclass(frozen=True)
class SelectRequest:
    """What an agent asks for before a prompt."""

    tenant_id: str
    scopes: Scopes
    request: str
    budget_chars: int = 5000
    min_confidence: float = 0.7
    as_of: datetime | int | None = None  # a time of recording, or a ledger position
    deadline_ms: int = DEFAULT_DEADLINE_MS

    def __post_init__(self) -> None:
        for name in ("budget_chars", "deadline_ms"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise InvalidCommand(f"{name} must be an int, not {value!r}")
        if isinstance(self.min_confidence, bool) or not isinstance(self.min_confidence, (int, float)):
            raise InvalidCommand(f"min_confidence must be a number from 0 to 1, not {self.min_confidence!r}")
        if not 0 <= self.min_confidence <= 1:
            raise InvalidCommand(f"min_confidence must be from 0 to 1, not {self.min_confidence}")
        # 0 would be no deadline at all (PostgreSQL's statement_timeout 0 is off)
        if not 1 <= self.deadline_ms <= MAX_DEADLINE_MS:
            raise InvalidCommand(f"deadline_ms must be 1 to {MAX_DEADLINE_MS}, not {self.deadline_ms}")
        _check_as_of(self.as_of)


def _check_as_of(as_of: object) -> None:
    """Refuse an ``as_of`` that is neither a timezone-aware time nor a ledger position:
    the caller's mistake, raised at once (not an empty block that hides it)."""
    if as_of is None:
        return
    if isinstance(as_of, datetime):
        if as_of.tzinfo is None or as_of.utcoffset() is None:
            raise InvalidCommand("as_of must be a timezone-aware time, not a naive one")
        return
    if isinstance(as_of, bool) or not isinstance(as_of, int):
        raise InvalidCommand(f"as_of must be a timezone-aware datetime or a ledger position (int), not {as_of!r}")
    if not 0 <= as_of < 2**63:  # a position is a bigint
        raise InvalidCommand(f"as_of must be a ledger position from 0 to 2**63 - 1, not {as_of}")
