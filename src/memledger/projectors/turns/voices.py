"""Who said each turn, when, and in which scopes: the queries selection asks of turns
it cites (``selection.speakers``, ``selection.visibility``), answered as parsed values.

Read from the ledger's turn events, not the ``turns`` read model: turns are immutable
and precede what is drawn from them, so a selection as of a past moment finds what the
live one found, and a turn the projector has yet to apply is never taken for one the
ledger lacks (which would show an item to a request outside its scopes). The
speaker's name lives in the event's private part, which no read model keeps.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy.engine import Connection

from memledger.store import event_reads
from memledger.store.event_reads import Voice

__all__ = ["Voice", "scopes_of", "voices_of"]


def voices_of(conn: Connection, tenant_id: str, turn_ids: Iterable[str]) -> dict[str, Voice]:
    """The ``Voice`` (stored user id, name, time) of each of these turns, by turn id;
    turns the tenant lacks are left out. One statement, none for no turn."""
    return event_reads.turn_voices(conn, tenant_id, turn_ids)


def scopes_of(conn: Connection, tenant_id: str, turn_ids: Iterable[str]) -> dict[str, frozenset[tuple[str, str]]]:
    """The (scope, stored key) pairs each of these turns was recorded with, by turn id;
    turns the tenant lacks are left out. One statement, none for no turn."""
    return event_reads.turn_scopes(conn, tenant_id, turn_ids)
