"""Envelopes: what travels with an event into the ledger and out of it."""

from __future__ import annotations

from datetime import datetime
from typing import NamedTuple

import msgspec

from memledger.events.catalogue import Event


class Metadata(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, gc=False):
    """Who and what caused an event. Stored as the row's ``metadata`` jsonb.

    ``gc=False``: it holds strings only, so it can be in no reference cycle, and
    the garbage collector need not track the many a read makes."""

    causation_id: str | None = None
    correlation_id: str | None = None
    actor: str | None = None
    extractor: str | None = None
    extractor_version: str | None = None


class NewEvent(msgspec.Struct, frozen=True, kw_only=True):
    """An event about to be appended.

    ``event_id`` makes a retried append idempotent; give the same id on a retry.
    ``occurred_at`` is valid time (when it happened, from the caller); the ledger
    adds transaction time itself.
    """

    event: Event
    event_id: str
    occurred_at: datetime
    metadata: Metadata = Metadata()


class Cursor(NamedTuple):
    """A place in the ledger's one stable order: (writing transaction, position).

    The order is by transaction id first because a position alone can commit out
    of order (see ``store.event_reads.read_all``). ``Cursor(0, 0)`` is the start.
    """

    tx_id: int
    position: int

    def __str__(self) -> str:
        return f"{self.tx_id}:{self.position}"


START = Cursor(0, 0)


class Recorded(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """An event as the ledger holds it.

    ``erased``: its private fields were erased (they read as placeholders, see
    ``codec.decode_stored``); projections skip such an event. ``gc=False``: its
    event and metadata never refer back to it, so it can be in no reference
    cycle, and the garbage collector need not track the many a read makes.
    """

    tenant_id: str
    position: int
    tx_id: int
    stream_id: str
    stream_version: int
    event_id: str
    occurred_at: datetime
    recorded_at: datetime
    metadata: Metadata
    event: Event
    erased: bool = False

    @property
    def cursor(self) -> Cursor:
        """The cursor just at this event: reading ``after`` it returns what follows."""
        return Cursor(self.tx_id, self.position)
