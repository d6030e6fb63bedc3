"""The exception tree. Every error memledger raises is a ``LedgerError``."""

from __future__ import annotations

from dataclasses import dataclass


class LedgerError(Exception):
    """Root of every error memledger raises on purpose."""


class NotFound(LedgerError):
    """A stream, event, projection or item does not exist (for this tenant)."""


class InvalidCommand(LedgerError):
    """The caller asked for something malformed; nothing was written."""


@dataclass
class InvalidIdentifier(InvalidCommand):
    """A tenant or stream id is empty, too long or holds control characters."""

    field: str
    value: str
    reason: str

    def __str__(self) -> str:
        shown = self.value if len(self.value) <= 40 else self.value[:40] + "..."
        return f"invalid {self.field} {shown!r}: {self.reason}"


@dataclass
class InvalidField(InvalidCommand):
    """One field of a command is wrong (a time without a timezone, an id given twice, a
    statement holding a credential); ``field`` names it as the caller sent it
    (``turns.2.occurred_at``). Nothing was written."""

    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.field} {self.message}"


@dataclass
class PayloadTooLarge(InvalidCommand):
    """An event's encoded payload is above the configured limit."""

    event_type: str
    size: int
    limit: int

    def __str__(self) -> str:
        return f"{self.event_type} payload is {self.size} bytes, above the limit of {self.limit}"


@dataclass
class ConcurrencyConflict(LedgerError):
    """The stream's version was not the one the caller expected."""

    tenant_id: str
    stream_id: str
    expected: int | None
    actual: int

    def __str__(self) -> str:
        return (
            f"stream {self.stream_id!r} of tenant {self.tenant_id!r} is at version "
            f"{self.actual}, expected {self.expected}"
        )


@dataclass
class UnknownEventType(LedgerError):
    """An event tag (or a Python type) that the catalogue does not know."""

    event_type: str

    def __str__(self) -> str:
        return f"unknown event type {self.event_type!r}"


@dataclass
class EventDecodeError(LedgerError):
    """A payload that does not fit its event type; names the event and the field."""

    event_type: str
    field: str
    message: str

    def __str__(self) -> str:
        return f"invalid {self.event_type} event at {self.field}: {self.message}"


@dataclass
class ProjectionFailed(LedgerError):
    """A projector stopped at an event it could not apply."""

    name: str
    position: int
    message: str

    def __str__(self) -> str:
        return f"projection {self.name!r} failed at position {self.position}: {self.message}"


class ExtractionFailed(LedgerError):
    """An extractor could not turn a batch of turns into events."""


class DatabaseUnavailable(LedgerError):
    """PostgreSQL could not be reached, started or written to."""


@dataclass
class InvalidEvent(InvalidCommand):
    """An event built by a caller that breaks its type's rules; nothing was written."""

    event_type: str
    field: str
    message: str

    def __str__(self) -> str:
        return f"invalid {self.event_type} event at {self.field}: {self.message}"


class EmbeddingFailed(LedgerError):
    """The embedding model could not be loaded or called (a file failing its sha256
    check, a provider's error, an answer of the wrong shape)."""


@dataclass
class EmbeddingMismatch(InvalidCommand):
    """Vectors of two models (or two dimensions) would be compared: a query or an
    embedding made with one model against vectors stored by another."""

    tenant_id: str
    stored_model: str
    stored_dim: int
    model: str
    dim: int

    def __str__(self) -> str:
        return (
            f"the embeddings of tenant {self.tenant_id!r} were made by {self.stored_model!r} "
            f"({self.stored_dim} dimensions), not by {self.model!r} ({self.dim} dimensions): "
            "vectors of different models cannot be compared; rebuild the embeddings projection "
            "with the configured model (memledger projections rebuild embeddings)"
        )


@dataclass
class Refused(LedgerError):
    """The tenant's switches forbid this (e.g. capture is off); nothing was written."""

    code: str
    message: str

    def __str__(self) -> str:
        return self.message


class Unauthorized(LedgerError):
    """No credentials, or ones that are unknown or revoked."""
